"""A Llama decoder written the way Meta's original llama repository writes it:
rotary embeddings as complex numbers (``freqs_cis = torch.polar(ones, freqs)``,
``view_as_complex`` of the query/key pairs, a complex multiply, then
``view_as_real(...).flatten(3)``), RMSNorm, grouped-query attention with
repeat_kv and a causal mask, a SwiGLU feed-forward. Random weights; int64
token ids in, logits out.

``freqs``: "const" keeps ``freqs_cis`` as a plain tensor attribute, as Meta's
code does (torch.export lifts it to a complex constant, which the exporter
stores as real pairs); "buffer" registers it as a complex buffer; "polar"
computes it in forward from a real buffer of angles (a ``polar`` node).
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: dim // 2].float() / dim))
    angles = torch.outer(torch.arange(end).float(), freqs)  # [end, dim/2]
    return angles, torch.polar(torch.ones_like(angles), angles)


def reshape_for_broadcast(freqs_cis, x):
    """freqs_cis [T, D/2] -> [1, T, 1, D/2] against x [B, T, H, D/2]."""
    shape = [d if i in (1, x.ndim - 1) else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def repeat_kv(x, n_rep):
    """[B, T, KVH, D] -> [B, T, KVH * n_rep, D]"""
    if n_rep == 1:
        return x
    b, t, h, d = x.shape
    return x[:, :, :, None, :].expand(b, t, h, n_rep, d).reshape(b, t, h * n_rep, d)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x):
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


class Attention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, dim // n_heads
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)

    def forward(self, x, freqs_cis, mask):
        b, t, _ = x.shape
        xq = self.wq(x).view(b, t, self.n_heads, self.head_dim)
        xk = self.wk(x).view(b, t, self.n_kv_heads, self.head_dim)
        xv = self.wv(x).view(b, t, self.n_kv_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
        rep = self.n_heads // self.n_kv_heads
        keys, values = repeat_kv(xk, rep), repeat_kv(xv, rep)
        xq, keys, values = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim) + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        out = torch.matmul(scores, values).transpose(1, 2).contiguous().view(b, t, -1)
        return self.wo(out)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden, multiple_of=16):
        super().__init__()
        hidden = int(2 * hidden / 3)
        hidden = multiple_of * ((hidden + multiple_of - 1) // multiple_of)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads):
        super().__init__()
        self.attention = Attention(dim, n_heads, n_kv_heads)
        self.feed_forward = FeedForward(dim, 4 * dim)
        self.attention_norm, self.ffn_norm = RMSNorm(dim), RMSNorm(dim)

    def forward(self, x, freqs_cis, mask):
        h = x + self.attention(self.attention_norm(x), freqs_cis, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, vocab, dim, n_layers, n_heads, n_kv_heads, max_seq, freqs):
        super().__init__()
        self.freqs = freqs
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(TransformerBlock(dim, n_heads, n_kv_heads) for _ in range(n_layers))
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        angles, freqs_cis = precompute_freqs_cis(dim // n_heads, 2 * max_seq)
        if freqs == "const":
            self.freqs_cis = freqs_cis  # a plain attribute, as in Meta's code
        elif freqs == "buffer":
            self.register_buffer("freqs_cis", freqs_cis)
        else:
            self.register_buffer("angles", angles)

    def forward(self, tokens):
        t = tokens.shape[1]
        h = self.tok_embeddings(tokens)
        if self.freqs == "polar":
            a = self.angles[:t]
            freqs_cis = torch.polar(torch.ones_like(a), a)
        else:
            freqs_cis = self.freqs_cis[:t]
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        for layer in self.layers:
            h = layer(h, freqs_cis, mask)
        return self.output(self.norm(h)).float()


def get_model(seed=0, batch=2, seq=8, vocab=64, dim=32, layers=2, heads=4, kv_heads=2, freqs="const"):
    torch.manual_seed(seed)
    m = Transformer(vocab, dim, layers, heads, kv_heads, max(seq, 8), freqs).eval()
    tokens = torch.randint(0, vocab, (batch, seq), dtype=torch.int64)
    return m, (tokens,)
