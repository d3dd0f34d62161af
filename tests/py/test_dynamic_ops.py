"""Lowering handlers at symbolic shapes (docs/design.md, "Shapes"): small
modules whose ops see dynamic axes, exported with ``--reference-shapes`` and
verified by ``rlx verify`` at the example and at every reference binding
(min, middle, max, random). With ``--decomposition aten`` torch keeps
pixel_shuffle, one_hot, unbind, tile and unfold whole, so their rlx handlers
(not torch's decompositions) are what is checked; the test asserts they are
in the program.

Run: python3 -m pytest -q tests/py/test_dynamic_ops.py
"""

import json

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

from conftest import run_rlx

import rlx  # noqa: E402  (conftest puts python/ on sys.path)


class Moves(nn.Module):
    """pixel_shuffle / unshuffle, repeat, flip, unbind, unfold, one_hot, tile
    over symbolic batch, height, width and length."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 16, 3, padding=1)

    def forward(self, x, ids):
        y = self.conv(x)
        a = F.pixel_shuffle(y, 2)
        u = F.pixel_unshuffle(a, 2)
        r = u.repeat(1, 1, 2, 1)
        f = torch.flip(r, [2, 3])
        q0, q1 = f.reshape(f.shape[0], 2, 8, f.shape[2], f.shape[3]).unbind(1)
        s = (q0 - q1).sum(dim=(2, 3))
        w = x.unfold(3, 3, 2)
        oh = F.one_hot(ids, 10).float()
        t = oh.tile((1, 2, 1))
        return s, w.sum(dim=-1), t.sum(1)


class Windows(nn.Module):
    """roll, tril over a symbolic square, a narrow to a symbolic length and
    a full() of a symbolic size."""

    def forward(self, x):
        n = x.shape[1]
        m = torch.tril(x @ x.transpose(1, 2), diagonal=-1)
        r = torch.roll(m, shifts=3, dims=2)
        z = torch.full((x.shape[0], n), 0.5) + r.sum(2)
        return z.narrow(1, 0, n - 1)


class Writes(nn.Module):
    """The write-side ops on symbolic shapes: a KV-cache style slice write at
    a symbolic offset (slice_scatter), select_scatter at the last row,
    index_put with index tensors, index_copy, scatter_add and
    masked_scatter."""

    def forward(self, x, cache, idx):
        n = x.shape[1]
        c = cache.clone()
        c[:, cache.shape[1] - n:] = x                 # slice_scatter to [L - n, L)
        c[:, -1] = x[:, 0] * 2                       # select_scatter
        y = torch.zeros_like(x)
        y[:, idx] = x[:, :idx.shape[0]]              # index_put with a tensor index
        z = torch.zeros_like(cache).index_copy(1, idx, x[:, :idx.shape[0]])
        s = torch.zeros(x.shape[0], 4, x.shape[2]).scatter_add(1, (idx % 4).view(1, -1, 1).expand(
            x.shape[0], idx.shape[0], x.shape[2]), x[:, :idx.shape[0]])
        m = x.masked_scatter(x > 0, -x)
        return c, y, z, s, m


class Misc(nn.Module):
    """diagonal at offsets, cdist, pdist and histc with a symbolic number of
    rows (diagonal(g, -2) needs n >= 4: torch guards it)."""

    def forward(self, x):
        g = x @ x.t()
        d = torch.diagonal(g, 1).sum() + torch.diagonal(g, -2).sum()
        return d, torch.cdist(x, x[:3]), F.pdist(x), torch.histc(x, bins=7, min=-2, max=2)


class Bag(nn.Module):
    """embedding_bag over a symbolic number of indices."""

    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(20, 6, mode="mean")

    def forward(self, ids, offsets):
        return self.bag(ids, offsets)


def _export(tmp_path, model, inputs, dynamic_shapes, decomposition):
    out = tmp_path / decomposition
    rlx.export_program(model, inputs, out, dynamic=dynamic_shapes, decomposition=decomposition,
                       reference_shapes=True, check=True)
    return out


@pytest.mark.parametrize("decomposition", ["aten", "high"])
def test_moves_at_every_binding(tmp_path, rlx_bin, decomposition):
    torch.manual_seed(0)
    b, h, w, n = Dim("b", min=1, max=8), Dim("h", min=3, max=64), Dim("w", min=3, max=64), Dim("n", min=1, max=32)
    out = _export(tmp_path, Moves().eval(), (torch.randn(2, 4, 6, 8), torch.randint(0, 10, (2, 5))),
                  ({0: b, 2: h, 3: w}, {0: b, 1: n}), decomposition)
    ir = json.loads((out / "torch-ir.json").read_text())
    assert {s["name"] for s in ir["symbols"]} == {"b", "h", "w", "n"}
    ops = {nd["op"].split(".")[1] for nd in ir["nodes"] if nd["op"].startswith("aten.")}
    if decomposition == "aten":
        assert {"pixel_shuffle", "pixel_unshuffle", "one_hot", "unbind", "tile", "unfold", "flip",
                "repeat"} <= ops, ops
    r = run_rlx(rlx_bin, "verify", out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("binding ") >= 4 and "parity: PASS" in r.stdout, r.stdout


def test_windows_at_every_binding(tmp_path, rlx_bin):
    torch.manual_seed(0)
    out = _export(tmp_path, Windows().eval(), (torch.randn(2, 7, 5),), ({0: Dim("b", min=1, max=6),
                                                                         1: Dim("n", min=2, max=40)},), "high")
    r = run_rlx(rlx_bin, "inspect", out)  # params that hold sizes print them as expressions
    assert r.returncode == 0 and "-92233720" not in r.stdout and "n=n" in r.stdout, r.stdout
    r = run_rlx(rlx_bin, "verify", out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("binding ") >= 4 and "parity: PASS" in r.stdout, r.stdout


@pytest.mark.parametrize("decomposition", ["aten", "high"])
def test_writes_at_every_binding(tmp_path, rlx_bin, decomposition):
    torch.manual_seed(0)
    b, n, L = Dim("b", min=1, max=4), Dim("n", min=3, max=24), Dim("L", min=24, max=48)
    out = _export(tmp_path, Writes().eval(),
                  (torch.randn(2, 5, 3), torch.randn(2, 30, 3), torch.tensor([2, 0, 1])),
                  ({0: b, 1: n}, {0: b, 1: L}, None), decomposition)
    ir = json.loads((out / "torch-ir.json").read_text())
    ops = {nd["op"].split(".")[1] for nd in ir["nodes"] if nd["op"].startswith("aten.")}
    assert {"slice_scatter", "select_scatter", "index_put"} & ops, ops
    r = run_rlx(rlx_bin, "verify", out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("binding ") >= 4 and "parity: PASS" in r.stdout, r.stdout


def test_misc_at_every_binding(tmp_path, rlx_bin):
    torch.manual_seed(0)
    out = _export(tmp_path, Misc().eval(), (torch.randn(9, 5),), ({0: Dim("n", min=4, max=25)},), "aten")
    ir = json.loads((out / "torch-ir.json").read_text())
    ops = {nd["op"].split(".")[1] for nd in ir["nodes"] if nd["op"].startswith("aten.")}
    assert {"diagonal", "histc", "cdist", "pdist"} <= ops, ops
    r = run_rlx(rlx_bin, "verify", out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("binding ") >= 4 and "parity: PASS" in r.stdout, r.stdout


def test_embedding_bag_at_every_binding(tmp_path, rlx_bin):
    torch.manual_seed(0)
    out = _export(tmp_path, Bag().eval(), (torch.randint(0, 20, (12,)), torch.tensor([0, 4, 7])),
                  ({0: Dim("m", min=8, max=64)}, None), "high")
    ir = json.loads((out / "torch-ir.json").read_text())
    assert any("embedding_bag" in nd["op"] for nd in ir["nodes"])
    r = run_rlx(rlx_bin, "verify", out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("binding ") >= 4 and "parity: PASS" in r.stdout, r.stdout


def test_specialized_axis_is_an_error():
    """torch's strict tracer and run_decompositions specialize a requested
    dynamic axis silently when one of their guards fails over the range; the
    exporter checks the program it got and refuses, naming the axis, instead
    of writing a static program (here: an export that kept n static)."""
    from rlx import export as rx
    ep = torch.export.export(Misc().eval(), (torch.randn(9, 5),))
    with pytest.raises(rlx.ExportError, match=r"specialized n \(input 0, axis 0\) to the example value while "
                                              r"decomposing aten.foo"):
        rx._check_dims_kept(ep, ep, {(0, 0): Dim("n", min=3, max=25)}, [], "decomposing aten.foo")
    dyn = torch.export.export(Misc().eval(), (torch.randn(9, 5),), dynamic_shapes=({0: Dim("n", min=4, max=25)},))
    rx._check_dims_kept(dyn, dyn, {(0, 0): Dim("n", min=4, max=25)}, [], "exporting")  # kept: no error


class Patches(nn.Module):
    """A ViT-style patch embedding: the image side must be a multiple of 8."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2d(3, 16, 8, stride=8)

    def forward(self, x):
        if x.shape[2] % 8 or x.shape[3] % 8:
            raise ValueError("image size must be a multiple of the patch size")
        return self.proj(x).flatten(2).transpose(1, 2).softmax(-1)


def test_derived_axis_spec(tmp_path, rlx_bin):
    """--dynamic x:2:8*hp:2:12 makes the height 8*hp, hp in [2, 12]; a height
    that is no multiple of 8 is refused by rlx run naming the form."""
    import numpy as np
    from rlx import export as rx
    assert rx.parse_dynamic_spec("x:2:8*hp:2:12") == ("x", 2, "8*hp", 2, 12)
    with pytest.raises(rlx.ExportError, match="another range"):
        rx.dynamic_shapes_spec(Patches(), (torch.randn(1, 3, 32, 32),), ["x:2:8*hp:2:12", "x:3:8*hp:2:10"])
    torch.manual_seed(0)
    out = tmp_path / "p"
    rlx.export_program(Patches().eval(), (torch.randn(2, 3, 32, 48),), out, reference_shapes=True,
                       dynamic=["x:0:b:1:3", "x:2:8*hp:2:12", "x:3:8*wp:2:12"], check=True)
    ir = json.loads((out / "torch-ir.json").read_text())
    assert ir["inputs"][0]["sym_shape"] == ["b", 3, "8*hp", "8*wp"], ir["inputs"][0]
    r = run_rlx(rlx_bin, "verify", out)
    assert r.returncode == 0 and r.stdout.count("binding ") >= 4, r.stdout + r.stderr
    np.save(tmp_path / "x.npy", np.zeros((1, 3, 36, 48), np.float32))
    r = run_rlx(rlx_bin, "run", out, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "o")
    assert r.returncode == 2 and "is 36, which is not 8*hp for any hp in [2, 12]" in r.stderr, r.stderr


class Star(nn.Module):
    def forward(self, x, *rest):
        return x * 2 + rest[0] - rest[1].sum(1, keepdim=True)


def test_var_positional_inputs(tmp_path, rlx_bin):
    """--dynamic on inputs that arrive through forward(x, *rest): torch wants
    those keyed by the *rest name; a name that is not a parameter is refused
    with the positions to use."""
    from rlx import export as rx
    args = (torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 5))
    ds = rx.dynamic_shapes_spec(Star(), args, ["x:0:b:1:8", "1:0:b", "2:0:b", "2:1:n:1:9"])
    assert set(ds) == {"x", "rest"} and len(ds["rest"]) == 2
    with pytest.raises(rlx.ExportError, match=r"those in \*rest go by position"):
        rx.dynamic_shapes_spec(Star(), args, ["rest:0:b"])
    out = tmp_path / "star"
    rlx.export_program(Star().eval(), args, out, dynamic=["x:0:b:1:8", "1:0:b", "2:0:b", "2:1:n:1:9"],
                       reference_shapes=True, check=True)
    ir = json.loads((out / "torch-ir.json").read_text())
    assert [s["name"] for s in ir["symbols"]] == ["b", "n"], ir["symbols"]
    r = run_rlx(rlx_bin, "verify", out)
    assert r.returncode == 0 and r.stdout.count("binding ") >= 4, r.stdout + r.stderr
