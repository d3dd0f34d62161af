"""transformers' FNetModel with a tiny random config: token mixing by a 2-D
Fourier transform over (sequence, hidden), keeping the real part
(``torch.fft.fftn(x, dim=(1, 2)).real``), then the usual feed-forward.
int64 token ids in, the last hidden state out."""
import torch
from torch import nn


class LastHidden(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids):
        return self.m(input_ids=ids).last_hidden_state


def get_model(seed=0, batch=1, seq=8, vocab=50, hidden=32, layers=2, intermediate=64):
    from transformers import FNetConfig, FNetModel
    torch.manual_seed(seed)
    cfg = FNetConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,
                     intermediate_size=intermediate, max_position_embeddings=max(seq, 32))
    m = FNetModel(cfg).eval()
    ids = torch.randint(0, vocab, (batch, seq), dtype=torch.int64)
    return LastHidden(m).eval(), (ids,)
