"""End to end: the elementwise fusion pass on real models (docs/design.md,
"Passes and fusion", "Layout"). Each model is exported, its compiled graph
inspected (`rlx inspect`: which nodes were fused, which kernels were chosen)
and verified against eager torch with every pass on, then again with each
rewrite left out (RLX_SKIP_PASSES=fuse_eltwise, recognize, layout), which
must agree too.

- mobilenet_v3_small: torch decomposes hardswish into add, two clamps, mul
  and div, and hardsigmoid likewise; each is recognized as one unary and
  folded into its conv's epilogue (without the recognize pass, each is one
  fused node); the network runs channels-last from its stem (which reads
  the NCHW image and writes channels-last) to one permute at the end,
  depthwise convs on their NHWC kernel, and no node on a reference kernel.
- a small GPT-2: its tanh GELU (mul, pow, mul, add, mul, tanh, add, mul) is
  recognized as one gelu_tanh and folded into its addmm (behind the view);
  without the recognize pass it is one fused node per layer.
- a gated MLP, x * scale + tanh(silu(x W1) * (x W2) W3) / 2: silu and tanh
  go into their matmuls' epilogues, and the scaled residual (scale a
  broadcast [d] vector), the halving and the sum are one fused node.
"""

import json
import os
import re

import numpy as np
import pytest
import torch
from torch import nn
from torch.export import Dim

from conftest import run_rlx

import rlx  # noqa: E402  (conftest puts python/ on sys.path)


def kernels(inspect_out):
    """The 'kernels (N on the reference kernel)' histogram: (N, {name: count})."""
    m = re.search(r"^kernels \((\d+) on the reference kernel\) \(\d+ nodes, \d+ distinct\):\n((?:\s+\d+\s+.+\n)+)",
                  inspect_out, re.M)
    assert m, inspect_out[:2000]
    hist = {}
    for line in m.group(2).splitlines():
        count, name = line.strip().split(None, 1)
        hist[name] = int(count)
    return int(m.group(1)), hist


def rlx_ops(inspect_out):
    m = re.search(r"^rlx ops after passes \(\d+ nodes, \d+ distinct\):\n((?:\s+\d+\s+.+\n)+)", inspect_out, re.M)
    assert m, inspect_out[:2000]
    return {line.split()[1]: int(line.split()[0]) for line in m.group(1).splitlines()}


def export_check(rlx_bin, tmp_path, name, model, inputs, skips=(None, "fuse_eltwise")):
    out = tmp_path / name
    summary = rlx.export_program(model.eval(), inputs, out, check=True)
    assert summary["check"] == "passed", summary["check_message"]
    ins = run_rlx(rlx_bin, "inspect", out)
    assert ins.returncode == 0, ins.stderr
    for skip in skips:
        env = dict(os.environ)
        if skip:
            env["RLX_SKIP_PASSES"] = skip
        r = run_rlx(rlx_bin, "verify", out, "--json", out / "verify.json", env=env)
        assert r.returncode == 0 and "parity: PASS" in r.stdout, (skip, r.stdout + r.stderr)
        report = json.loads((out / "verify.json").read_text())
        assert report["pass"], report
    return ins.stdout


def test_mobilenet_v3_hardswish_fuses(rlx_bin, tmp_path):
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v3_small(weights=None)
    out = export_check(rlx_bin, tmp_path, "mnv3s", model, (torch.randn(1, 3, 96, 96),),
                       skips=(None, "fuse_eltwise", "recognize", "layout", "fuse_expand"))
    ops = rlx_ops(out)
    assert "unary" not in ops and "fused" not in ops, ops  # every activation in an epilogue
    assert ops.get("permute") == 1, ops  # the head's mean back (the stem writes channels-last)
    on_ref, hist = kernels(out)
    assert on_ref == 0, hist
    assert hist.get("f32_conv_stem_nhwc") == 1, hist
    # the register-blocked rows on AVX-512 (3, 5 and 7 wide), else the generic loop; all but the first
    # with the 1x1 expansion before them folded in (fuse_expand)
    fused = hist.get("f32_conv_nhwc_1x1_depthwise_rows", 0) + hist.get("f32_conv_nhwc_1x1_depthwise", 0)
    assert fused == 10, hist
    assert hist.get("f32_conv_nhwc_depthwise_rows", 0) + hist.get("f32_conv_nhwc_depthwise", 0) == 1, hist
    assert hist.get("f32_reduce_cols", 0) >= 9, hist  # the squeeze-excite means over H, W in NHWC
    env = dict(os.environ, RLX_SKIP_PASSES="recognize")
    ins = run_rlx(rlx_bin, "inspect", tmp_path / "mnv3s", env=env)
    assert ins.returncode == 0, ins.stderr
    assert rlx_ops(ins.stdout).get("fused", 0) >= 10, ins.stdout[:2000]  # each chain one fused node instead


def test_gpt2_gelu_is_one_node_per_layer(rlx_bin, tmp_path):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, n_positions=64, vocab_size=300, use_cache=False)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = transformers.GPT2Model(cfg)

        def forward(self, ids):
            return self.m(ids, use_cache=False).last_hidden_state

    out = export_check(rlx_bin, tmp_path, "gpt2", M(), (torch.randint(0, 300, (1, 24)),),
                       skips=(None, "fuse_eltwise", "recognize"))
    # the 8-op tanh GELU is recognized and goes into its addmm's epilogue (behind the view)
    mm = [line for line in out.splitlines() if re.match(r"\s+\d+\s+\S+\s+matmul\s", line) and "+gelu_tanh" in line]
    assert len(mm) == 2, out[:4000]  # one per layer
    assert not [line for line in out.splitlines() if re.match(r"\s+\d+\s+\S+\s+fused\s", line) and "tanh(" in line]
    # its constant causal mask (a bool triangle) is recognized as the causal flag
    attn = [line for line in out.splitlines() if re.match(r"\s+\d+\s+\S+\s+attention\s", line)]
    assert len(attn) == 2 and all(" causal " in line and line.rstrip().endswith("- -> f32[1, 24, 4, 16]") for line in attn), attn
    # and reads q, k, v and writes its output with the heads inside the rows: no head-split permute is left
    assert all("heads-in-rows=qkvo" in line for line in attn), attn
    assert "permute" not in rlx_ops(out), rlx_ops(out)
    on_ref, hist = kernels(out)
    assert "slice_runs" in hist, hist  # the qkv split
    assert on_ref <= 1, hist  # at most the embedding's gather
    # without the recognize pass, the chain is one fused node per layer
    env = dict(os.environ, RLX_SKIP_PASSES="recognize")
    ins = run_rlx(rlx_bin, "inspect", tmp_path / "gpt2", env=env)
    fused = [line for line in ins.stdout.splitlines() if re.match(r"\s+\d+\s+\S+\s+fused\s", line)]
    gelu = [line for line in fused if "pow_scalar(" in line and "tanh(" in line]
    assert len(gelu) == 2, "\n".join(fused)
    assert all(line.count("(") >= 8 for line in gelu), gelu


class GatedMLP(torch.nn.Module):
    def __init__(self, d=48, h=80):
        super().__init__()
        self.w1 = torch.nn.Linear(d, h, bias=False)
        self.w2 = torch.nn.Linear(d, h, bias=False)
        self.w3 = torch.nn.Linear(h, d, bias=False)
        self.scale = torch.nn.Parameter(torch.randn(d))

    def forward(self, x):
        y = self.w3(torch.nn.functional.silu(self.w1(x)) * self.w2(x))
        return x * self.scale + torch.tanh(y) * 0.5


def test_gated_mlp_fuses(rlx_bin, tmp_path):
    torch.manual_seed(0)
    out = export_check(rlx_bin, tmp_path, "gmlp", GatedMLP(), (torch.randn(3, 7, 48),))
    lines = out.splitlines()
    fused = [line for line in lines if re.match(r"\s+\d+\s+\S+\s+fused\s", line)]
    assert len(fused) == 1, "\n".join(fused)
    assert re.search(r"fused +mul\(i\d,i\d\) mul\(i\d,i\d\) add\(s0,s1\) .*scale:f32\[48\]", fused[0]), fused[0]
    assert any(re.search(r"matmul +trans_b \+silu", line) for line in lines), out
    assert any(re.search(r"matmul +trans_b \+tanh", line) for line in lines), out
    on_ref, hist = kernels(out)
    assert on_ref == 0, hist


class NormAct(torch.nn.Module):
    """A UNet-style resblock head (GroupNorm + SiLU, conv) and a transformer
    feed-forward head (LayerNorm + GELU), each activation behind its norm."""

    def __init__(self, c=32, d=40):
        super().__init__()
        self.gn = torch.nn.GroupNorm(8, c)
        self.conv = torch.nn.Conv2d(c, c, 3, padding=1)
        self.ln = torch.nn.LayerNorm(d)
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x, t):
        h = self.conv(torch.nn.functional.silu(self.gn(x)))
        u = self.lin(torch.nn.functional.gelu(self.ln(t)))
        return h, u


def test_norm_activation_fuses(rlx_bin, tmp_path):
    """The activation after a norm goes into the norm's epilogue (fuse_epilogue);
    parity with and without the pass."""
    torch.manual_seed(0)
    model = NormAct()
    with torch.no_grad():  # an affine part that is not the identity
        model.gn.weight.uniform_(0.5, 1.5), model.gn.bias.uniform_(-0.5, 0.5)
        model.ln.weight.uniform_(0.5, 1.5), model.ln.bias.uniform_(-0.5, 0.5)
    out = export_check(rlx_bin, tmp_path, "normact", model, (torch.randn(2, 32, 12, 12), torch.randn(3, 5, 40)),
                       skips=(None, "fuse_epilogue"))
    lines = out.splitlines()
    assert any(re.search(r"group_norm +groups=8 eps=1e-05 \+silu", line) for line in lines), out[:4000]
    assert any(re.search(r"layer_norm +axes=1 eps=1e-05 \+gelu", line) for line in lines), out[:4000]
    assert "unary" not in rlx_ops(out), out[:4000]
    on_ref, hist = kernels(out)
    assert on_ref == 0, hist


class EagerAttention(torch.nn.Module):
    """Attention written out as older transformers wrote it: scores scaled by a
    constant, an additive mask, softmax, then the values."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.h, self.dk = heads, d // heads
        self.qkv = torch.nn.Linear(d, 3 * d)

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.h, self.dk).permute(2, 0, 3, 1, 4)
        s = torch.matmul(q, k.transpose(-1, -2)) / (self.dk ** 0.5) + mask
        return torch.matmul(torch.softmax(s, dim=-1), v).transpose(1, 2).reshape(b, t, d)


def test_softmax_scale_mask_fuses(rlx_bin, tmp_path):
    """fuse_softmax folds the scale and the additive mask into the softmax;
    parity with and without the pass."""
    torch.manual_seed(0)
    t = 21
    mask = torch.zeros(1, 1, t, t).masked_fill(torch.ones(t, t).triu(1).bool(), float("-inf"))
    out = export_check(rlx_bin, tmp_path, "eagerattn", EagerAttention(), (torch.randn(2, t, 32), mask),
                       skips=(None, "fuse_softmax"))
    sm = [line for line in out.splitlines() if re.match(r"\s+\d+\s+\S+\s+softmax\s", line)]
    assert len(sm) == 1 and re.search(r"softmax +axis=3 /2\.82843 \+mask", sm[0]), "\n".join(sm) or out[:4000]
    ops = rlx_ops(out)
    assert "fused" not in ops and "binary" not in ops, ops


def test_permute_of_unit_axes_is_a_view(rlx_bin, tmp_path):
    """A permute that moves only axes of size 1 (ViT's [1, L, E] -> [L, 1, E])
    is lowered to a reshape, which the memory plan aliases: no copy. One that
    reorders longer axes stays a permute. Also with L symbolic (a symbolic
    size is never taken for 1)."""

    class M(nn.Module):
        def forward(self, x, w):
            a = x.permute(1, 0, 2) * 2.0          # [1, L, 8] -> [L, 1, 8]: a view
            b = w.permute(1, 0, 2)                # [2, L, 8] -> [L, 2, 8]: a copy
            c = x.unsqueeze(3).permute(0, 3, 1, 2)  # [1, L, 8, 1] -> [1, 1, L, 8]: a view
            return a, b + 1.0, c - 1.0

    torch.manual_seed(0)
    inputs = (torch.randn(1, 5, 8), torch.randn(2, 5, 8))
    for dyn in (None, {"x": {1: Dim("L", min=2, max=16)}, "w": {1: Dim("L", min=2, max=16)}}):
        name = "static" if dyn is None else "dynamic"
        out = tmp_path / name
        summary = rlx.export_program(M().eval(), inputs, out, check=True, dynamic=dyn)
        assert summary["check"] == "passed", summary["check_message"]
        ins = run_rlx(rlx_bin, "inspect", out)
        assert ins.returncode == 0, ins.stderr
        ops = rlx_ops(ins.stdout)
        assert ops.get("permute") == 1, (name, ops)
        r = run_rlx(rlx_bin, "verify", out)
        assert r.returncode == 0 and "parity: PASS" in r.stdout, (name, r.stdout + r.stderr)


def test_squeeze_excite_gate_fuses(rlx_bin, tmp_path):
    """EfficientNet's squeeze-excite blocks: the gate's mul (x * sigmoid(...),
    [1, C, 1, 1] times [1, C, H, W]) goes into the 1x1 conv that reads the
    product (fuse_gate, after layout): no binary node is left, all 16 project
    convs run the gated kernel, and parity holds with the pass and without it
    (and without layout, which leaves the convs NCHW and the muls in place)."""
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = torchvision.models.efficientnet_b0(weights=None)
    out = export_check(rlx_bin, tmp_path, "effb0", model, (torch.randn(1, 3, 64, 64),),
                       skips=(None, "fuse_gate", "layout"))
    ops = rlx_ops(out)
    assert "binary" not in ops, ops
    on_ref, hist = kernels(out)
    assert on_ref == 0, hist
    assert hist.get("f32_conv_nhwc_1x1_gated_sgemm") == 16, hist
    env = dict(os.environ, RLX_SKIP_PASSES="fuse_gate")
    ins = run_rlx(rlx_bin, "inspect", tmp_path / "effb0", env=env)
    assert ins.returncode == 0, ins.stderr
    assert rlx_ops(ins.stdout).get("binary") == 16, ins.stdout[:2000]


def test_expand_depthwise_fuses(rlx_bin, tmp_path):
    """An inverted-residual block's 1x1 expansion folds into the depthwise
    conv after it (fuse_expand): one conv node for the pair, the fused
    kernel, parity with the pass and without it; with the image size
    symbolic (the kernel's bands and scratch per binding, checked at several
    sizes) and with a batch of 2."""

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.expand, self.dw = nn.Conv2d(8, 48, 1), nn.Conv2d(48, 48, 5, stride=2, padding=2, groups=48)
            self.proj = nn.Conv2d(48, 8, 1)

        def forward(self, x):
            y = torch.nn.functional.hardswish(self.dw(torch.nn.functional.relu6(self.expand(x))))
            return self.proj(y)

    torch.manual_seed(0)
    for name, x, dyn in (("dynamic", torch.randn(1, 8, 37, 29), {"x": {2: Dim("H", min=3, max=96), 3: Dim("W", min=3, max=96)}}),
                         ("batch2", torch.randn(2, 8, 20, 20), None)):
        out = tmp_path / name
        block = Block().eval()
        summary = rlx.export_program(block, (x,), out, check=True, dynamic=dyn)
        assert summary["check"] == "passed", summary["check_message"]
        ins = run_rlx(rlx_bin, "inspect", out)
        assert ins.returncode == 0, ins.stderr
        assert rlx_ops(ins.stdout).get("conv") == 2, (name, ins.stdout[:3000])
        hist = kernels(ins.stdout)[1]
        assert hist.get("f32_conv_nhwc_1x1_depthwise_rows", 0) + hist.get("f32_conv_nhwc_1x1_depthwise", 0) == 1, hist
        for skip in (None, "fuse_expand"):
            env = dict(os.environ, **({"RLX_SKIP_PASSES": skip} if skip else {}))
            r = run_rlx(rlx_bin, "verify", out, "--threads", "2", env=env)
            assert r.returncode == 0 and "parity: PASS" in r.stdout, (name, skip, r.stdout + r.stderr)
        if dyn:  # other sizes (bands over 96 rows, an image smaller than the kernel) against eager torch
            for i, shape in enumerate(((1, 8, 96, 96), (1, 8, 3, 5), (1, 8, 64, 17))):
                xi = torch.randn(*shape)
                np.save(tmp_path / f"x{i}.npy", xi.numpy())
                with torch.no_grad():
                    want = block(xi).numpy()
                r = run_rlx(rlx_bin, "run", out, "--input", f"x={tmp_path / f'x{i}.npy'}", "--output-dir",
                            tmp_path / f"o{i}", "--threads", "2")
                assert r.returncode == 0, (shape, r.stdout + r.stderr)
                got = np.load(next((tmp_path / f"o{i}").glob("*.npy")))
                assert got.shape == want.shape and np.abs(got - want).max() <= 1e-4 + 1e-4 * np.abs(want).max(), shape


def test_squeeze_excite_gate_symbolic_size(rlx_bin, tmp_path):
    """The same fusion with the image size symbolic (the gate's [1, 1, 1, C]
    and the conv's scratch per binding), and a batch of 2 with a gate per
    image."""

    class SE(nn.Module):
        def __init__(self):
            super().__init__()
            self.dw = nn.Conv2d(24, 24, 3, padding=1, groups=24)
            self.fc1, self.fc2 = nn.Conv2d(24, 6, 1), nn.Conv2d(6, 24, 1)
            self.proj = nn.Conv2d(24, 16, 1)

        def forward(self, x):
            y = torch.nn.functional.silu(self.dw(x))
            s = torch.sigmoid(self.fc2(torch.nn.functional.silu(self.fc1(y.mean((2, 3), keepdim=True)))))
            return self.proj(y * s)

    torch.manual_seed(0)
    for name, x, dyn in (("dynamic", torch.randn(1, 24, 13, 11), {"x": {2: Dim("H", min=2, max=64), 3: Dim("W", min=2, max=64)}}),
                         ("batch2", torch.randn(2, 24, 9, 9), None)):
        out = tmp_path / name
        summary = rlx.export_program(SE().eval(), (x,), out, check=True, dynamic=dyn)
        assert summary["check"] == "passed", summary["check_message"]
        ins = run_rlx(rlx_bin, "inspect", out)
        assert ins.returncode == 0, ins.stderr
        assert "binary" not in rlx_ops(ins.stdout), (name, ins.stdout[:3000])
        assert kernels(ins.stdout)[1].get("f32_conv_nhwc_1x1_gated_sgemm") == 1, (name, ins.stdout[:3000])
        r = run_rlx(rlx_bin, "verify", out)
        assert r.returncode == 0 and "parity: PASS" in r.stdout, (name, r.stdout + r.stderr)


def test_densenet_preact_batch_norms_fold(rlx_bin, tmp_path):
    """A DenseNet's pre-activation batch norms (norm -> relu -> 1x1 conv, on
    each block's concatenation) fold into the 1x1 conv that reads them
    (fuse_preact): every layer's norm1 and every transition's norm, leaving
    only the final norm5 (read by the pooling head); parity with the pass
    and without it, at one and two threads (the channel-major and the
    pixel-major packers), with the batch symbolic (a batch of 3 checked
    against eager torch)."""
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = torchvision.models.DenseNet(growth_rate=8, block_config=(2, 3, 2), num_init_features=16, bn_size=2).eval()
    out = tmp_path / "densenet"
    summary = rlx.export_program(model, (torch.randn(2, 3, 64, 64),), out, check=True,
                                 dynamic={"x": {0: Dim("N", min=1, max=4)}})
    assert summary["check"] == "passed", summary["check_message"]
    ins = run_rlx(rlx_bin, "inspect", out)
    assert ins.returncode == 0, ins.stderr
    assert rlx_ops(ins.stdout).get("batch_norm") == 1, ins.stdout[:3000]
    on_ref, hist = kernels(ins.stdout)
    assert on_ref == 0, hist
    assert hist.get("f32_conv_1x1_bn_sgemm", 0) + hist.get("f32_conv_pixel_bn_sgemm", 0) == 7 + 2, hist
    for skip in (None, "fuse_preact"):
        for threads in ("1", "2"):
            env = dict(os.environ, **({"RLX_SKIP_PASSES": skip} if skip else {}))
            r = run_rlx(rlx_bin, "verify", out, "--threads", threads, env=env)
            assert r.returncode == 0 and "parity: PASS" in r.stdout, (skip, threads, r.stdout + r.stderr)
    x = torch.randn(3, 3, 64, 64)
    np.save(tmp_path / "x.npy", x.numpy())
    with torch.no_grad():
        want = model(x).numpy()
    r = run_rlx(rlx_bin, "run", out, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "o",
                "--threads", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    got = np.load(next((tmp_path / "o").glob("*.npy")))
    assert got.shape == want.shape and np.abs(got - want).max() <= 1e-4 + 1e-4 * np.abs(want).max()


def test_concats_in_place(rlx_bin, tmp_path):
    """Concats run in place (src/plan/memplan.c): a dense block whose convs
    write straight into their slice of the block's concatenation, the
    earlier concat a prefix of the later one, a reshape of a slice as a
    graph output; no concat runs a kernel at batch 1. With the image size
    symbolic, checked against eager torch at several sizes (each binding
    plans its own offsets), and at a batch of 2, where the slices are not
    contiguous and the concats copy."""

    class Dense(nn.Module):
        def __init__(self):
            super().__init__()
            self.c0 = nn.Conv2d(3, 8, 3, padding=1)
            self.l1, self.l2 = nn.Conv2d(8, 4, 3, padding=1), nn.Conv2d(12, 4, 3, padding=1)
            self.out = nn.Conv2d(16, 6, 1)

        def forward(self, x):
            x0 = torch.relu(self.c0(x))
            n1 = self.l1(x0)
            n2 = self.l2(torch.cat([x0, n1], 1))
            return self.out(torch.cat([x0, n1, n2], 1)), n1.flatten(1)

    torch.manual_seed(0)
    block = Dense().eval()
    for name, x, dyn in (("dynamic", torch.randn(1, 3, 20, 24), {"x": {2: Dim("H", min=2, max=64), 3: Dim("W", min=2, max=64)}}),
                         ("batch2", torch.randn(2, 3, 9, 7), None)):
        out = tmp_path / name
        summary = rlx.export_program(block, (x,), out, check=True, dynamic=dyn)
        assert summary["check"] == "passed", summary["check_message"]
        prof = run_rlx(rlx_bin, "bench", out, "--iters", "2", "--profile", "--top", "50")
        assert prof.returncode == 0, prof.stderr
        cats = [line for line in prof.stdout.splitlines() if re.search(r"\bconcat\s", line) and "->" in line]
        assert len(cats) == 2, prof.stdout
        in_place = name == "dynamic"
        assert all(("(view, no kernel)" in line) == in_place for line in cats), (name, cats)
        for threads in ("1", "2"):
            r = run_rlx(rlx_bin, "verify", out, "--threads", threads)
            assert r.returncode == 0 and "parity: PASS" in r.stdout, (name, threads, r.stdout + r.stderr)
        if dyn:
            for i, shape in enumerate(((1, 3, 64, 64), (1, 3, 2, 5), (1, 3, 33, 17))):
                xi = torch.randn(*shape)
                np.save(tmp_path / f"x{i}.npy", xi.numpy())
                with torch.no_grad():
                    want = [t.numpy() for t in block(xi)]
                r = run_rlx(rlx_bin, "run", out, "--input", f"x={tmp_path / f'x{i}.npy'}", "--output-dir",
                            tmp_path / f"o{i}", "--threads", "2")
                assert r.returncode == 0, (shape, r.stdout + r.stderr)
                got = [np.load(f) for f in sorted((tmp_path / f"o{i}").glob("*.npy"))]
                assert len(got) == 2, got
                for g, w in zip(got, want):
                    assert g.shape == w.shape and np.abs(g - w).max() <= 1e-4 + 1e-4 * np.abs(w).max(), shape
