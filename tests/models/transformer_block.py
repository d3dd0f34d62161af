"""(b) Pre-LN transformer block: SDPA (unmasked, causal, bool mask or float
mask) and a SwiGLU feed-forward."""
import torch
from torch import nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d=32, heads=4, ff=64, mask="none"):
        super().__init__()
        self.h, self.mask = heads, mask
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.w_gate = nn.Linear(d, ff, bias=False)
        self.w_up = nn.Linear(d, ff, bias=False)
        self.w_down = nn.Linear(ff, d, bias=False)

    def forward(self, x, mask=None):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
        q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
        if self.mask == "causal":
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        elif mask is not None:
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        else:
            a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, C))
        h = self.ln2(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


def get_model(seed=0, mask="none", batch=2, seq=8, d=32, heads=4):
    torch.manual_seed(seed)
    m = Block(d, heads, 2 * d, mask).eval()
    x = torch.randn(batch, seq, d)
    if mask == "bool":
        # key padding mask: the last two keys of batch item 1 are hidden
        mk = torch.ones(batch, 1, seq, seq, dtype=torch.bool)
        mk[1, :, :, -2:] = False
        return m, (x, mk)
    if mask == "float":
        mk = torch.randn(batch, heads, seq, seq)
        mk[0, :, :, -1] = float("-inf")
        return m, (x, mk)
    return m, (x,)
