"""(f) transformers.LlamaForCausalLM with a tiny config, int64 token ids in,
logits out."""
import torch
from torch import nn


class LogitsOnly(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids):
        return self.m(input_ids=ids, use_cache=False).logits


def get_model(seed=0, batch=1, seq=8, vocab=64, hidden=32, layers=2, heads=4, kv_heads=2):
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden,
                      num_hidden_layers=layers, num_attention_heads=heads,
                      num_key_value_heads=kv_heads, max_position_embeddings=64,
                      attn_implementation="sdpa")
    m = LlamaForCausalLM(cfg).eval()
    ids = torch.randint(0, vocab, (batch, seq), dtype=torch.int64)
    return LogitsOnly(m).eval(), (ids,)
