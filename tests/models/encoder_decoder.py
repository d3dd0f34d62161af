"""(c) Encoder-decoder: encoder self-attention, decoder causal self-attention
and cross-attention over the encoder's memory."""
import torch
from torch import nn
import torch.nn.functional as F


class Attn(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d, bias=False)

    def forward(self, x, mem, causal=False):
        B, T, C = x.shape
        S = mem.shape[1]
        q = self.q(x).view(B, T, self.h, -1).transpose(1, 2)
        k = self.k(mem).view(B, S, self.h, -1).transpose(1, 2)
        v = self.v(mem).view(B, S, self.h, -1).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return self.o(a.transpose(1, 2).reshape(B, T, C))


class EncDec(nn.Module):
    def __init__(self, d=32, h=4):
        super().__init__()
        self.enc_ln = nn.LayerNorm(d)
        self.enc_attn = Attn(d, h)
        self.enc_ff = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
        self.dec_ln1 = nn.LayerNorm(d)
        self.dec_self = Attn(d, h)
        self.dec_ln2 = nn.LayerNorm(d)
        self.dec_cross = Attn(d, h)
        self.dec_ln3 = nn.LayerNorm(d)
        self.dec_ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, src, tgt):
        h = self.enc_ln(src)
        mem = src + self.enc_attn(h, h)
        mem = mem + self.enc_ff(mem)
        h = self.dec_ln1(tgt)
        y = tgt + self.dec_self(h, h, causal=True)
        y = y + self.dec_cross(self.dec_ln2(y), mem)
        return y + self.dec_ff(self.dec_ln3(y))


def get_model(seed=0, src_len=5, tgt_len=3, d=32, h=4):
    torch.manual_seed(seed)
    return EncDec(d, h).eval(), (torch.randn(1, src_len, d), torch.randn(1, tgt_len, d))
