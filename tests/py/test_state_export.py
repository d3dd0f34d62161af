"""Programs with state and multi-output attention variants, exported and
verified by rlx: a mutated buffer is session state (docs/design.md, "State");
the flash attention variant's logsumexp is computed, not the decomposition's
wrong second output."""
import json

import torch
from torch import nn

from conftest import run_rlx

import rlx  # noqa: E402


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(1))

    def forward(self, x):
        self.count.add_(1)
        return x * self.count


def test_state_verifies(rlx_bin, tmp_path):
    rlx.export_program(Counter(), (torch.ones(3),), tmp_path, check=False)
    r = run_rlx(rlx_bin, "verify", tmp_path, "--repeat", "3")  # each reference run starts from the initial state
    assert r.returncode == 0, r.stdout + r.stderr


def test_flash_attention_logsumexp(rlx_bin, tmp_path):
    """aten._scaled_dot_product_flash_attention_for_cpu returns (output,
    logsumexp); torch's decomposition of it gives the attention weights as
    the second output instead, so the exporter keeps it whole and rlx
    computes both (causal, an additive mask, a scale)."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 5, 8, generator=g) for _ in range(3))
    fmask = torch.randn(1, 2, 5, 5, generator=g)
    cases = {"causal": dict(is_causal=True), "plain": dict(scale=0.3),
             "float_mask": dict(attn_mask=fmask)}  # (this variant takes only a mask of q's dtype)
    for name, kw in cases.items():
        class M(nn.Module):
            def forward(self, q, k, v):
                kk = dict(kw)
                causal = kk.pop("is_causal", False)
                out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, **kk)
                return out, lse

        d = tmp_path / name
        rlx.export_program(M(), (q, k, v), d, check=False)
        ir = json.loads((d / "torch-ir.json").read_text())
        assert ir["outputs"][1]["shape"] == [1, 2, 5], name  # logsumexp, not [1, 2, 5, 5] weights
        r = run_rlx(rlx_bin, "verify", d)
        assert r.returncode == 0, name + ": " + r.stdout + r.stderr


