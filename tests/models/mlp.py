"""(a) MLP: layer_norm -> linear -> gelu -> linear."""
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, d=16, h=32):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, h)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(h, d)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(self.ln(x))))


def get_model(seed=0, batch=2, seq=4, d=16, h=32):
    torch.manual_seed(seed)
    return MLP(d, h).eval(), (torch.randn(batch, seq, d),)
