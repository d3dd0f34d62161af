"""Tests of the Python exporter alone (rlx.export); no C build needed.

Run: python3 -m pytest -q tests/py/test_export.py
"""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from torch import nn

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "tests" / "models"
sys.path.insert(0, str(REPO / "python"))

import rlx  # noqa: E402
from rlx import _decomp, _ir  # noqa: E402
from rlx import export as rx  # noqa: E402

TOKENS = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
          "f64": torch.float64, "i64": torch.int64, "i32": torch.int32, "i16": torch.int16,
          "i8": torch.int8, "u8": torch.uint8, "bool": torch.bool}


@pytest.fixture(autouse=True)
def _no_real_rlx(monkeypatch):
    """Never run a real rlx binary from these tests (one may exist in build/)."""
    monkeypatch.delenv("RLX_BIN", raising=False)
    monkeypatch.setattr(rx, "find_rlx_binary", lambda: None)


def export(model, inputs, out, **kw):
    kw.setdefault("check", False)
    return rlx.export_program(model, inputs, out, **kw)


def load_ir(out) -> dict:
    # strict JSON: no NaN / Infinity literals
    def bad(c):
        raise AssertionError(f"non-standard JSON constant {c}")
    return json.loads((Path(out) / "torch-ir.json").read_text(), parse_constant=bad)


def load_st(path):
    path = Path(path)
    if path.stat().st_size == 0:
        return {}, None
    with safe_open(str(path), "pt") as f:
        return {k: f.get_tensor(k) for k in f.keys()}, f.metadata()


def model_file(name, **kw):
    return rx.load_model(str(MODELS / f"{name}.py"), kw)


def node_ops(ir):
    return [n["op"] for n in ir["nodes"]]


def walk_args(args):
    for a in args:
        yield a
        if "list" in a:
            yield from walk_args(a["list"])


# --------------------------------------------------------------------------
# Small models


class Scalars(nn.Module):
    """Non-finite float arguments, dtype arguments, None outputs and constants."""

    def forward(self, x):
        y = x.masked_fill(x > 0.5, float("-inf"))
        z = torch.clamp(x, min=float("-inf"), max=float("inf"))
        n = torch.full((2,), float("nan"), dtype=torch.float64)
        return y, z, n, None, 3, 2.5


class Weights(nn.Module):
    """f64 parameter, tied weights, i64 buffer, non-persistent buffer, lifted constant."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 10, bias=False)
        self.head.weight = self.emb.weight
        self.scale = nn.Parameter(torch.linspace(0.5, 2.0, 4, dtype=torch.float64))
        self.register_buffer("steps", torch.tensor(3))
        self.register_buffer("np_buf", torch.arange(4.0), persistent=False)
        self.const = torch.tensor([1.0, 2.0, 3.0, 4.0])

    def forward(self, ids):
        h = self.emb(ids) + self.np_buf + self.const
        h = (h.double() * self.scale).float()
        return self.head(h) + self.steps, ids.argmax(-1), (ids > 4)


class Roll(nn.Module):
    def forward(self, x):
        return torch.roll(x, 1, 0) * 2


class Complex(nn.Module):
    """A complex output: rlx computes with complex values inside a program
    (docs/design.md, "Complex numbers") but returns only real tensors."""
    def forward(self, x):
        return torch.fft.rfft(x)


# --------------------------------------------------------------------------
# Schema


def test_schema_and_summary(tmp_path):
    m, x = model_file("mlp")
    s = export(m, x, tmp_path)
    ir = load_ir(tmp_path)
    assert list(ir) == ["format", "version", "model_name", "producer", "decomposition",
                        "inputs", "weights", "nodes", "outputs"]
    assert ir["format"] == "rlx-torch-ir" and ir["version"] == 1
    assert ir["model_name"] == "mlp"
    assert ir["producer"] == f"rlx.export / torch {torch.__version__}"
    assert ir["decomposition"] == "high"
    assert ir["inputs"] == [{"id": "x", "shape": [2, 4, 16], "dtype": "f32"}]
    for w in ir["weights"]:
        assert set(w) == {"id", "key", "shape", "dtype", "kind"} and w["kind"] == "param"
    ids = [n["id"] for n in ir["nodes"]]
    assert len(ids) == len(set(ids))
    for n in ir["nodes"]:
        assert set(n) == {"id", "op", "args", "kwargs", "out"}
    assert node_ops(ir) == ["aten.layer_norm.default", "aten.linear.default",
                            "aten.gelu.default", "aten.linear.default"]
    ln = ir["nodes"][0]
    assert ln["args"] == [{"ref": "x"}, {"list": [{"int": 16}]}, {"ref": "p_ln_weight"},
                          {"ref": "p_ln_bias"}, {"float": 1e-05}, {"bool": False}]
    assert ln["out"] == {"shape": [2, 4, 16], "dtype": "f32"}
    assert ir["outputs"] == [{"ref": ids[-1], "shape": [2, 4, 16], "dtype": "f32"}]
    # every ref names an input, a weight or an earlier node
    known = {i["id"] for i in ir["inputs"]} | {w["id"] for w in ir["weights"]}
    for n in ir["nodes"]:
        for a in walk_args(n["args"] + list(n["kwargs"].values())):
            if "ref" in a:
                assert a["ref"] in known
        known.add(n["id"])
    # summary
    assert (s["num_inputs"], s["num_weights"], s["num_nodes"], s["num_outputs"]) == (1, 6, 4, 1)
    assert s["op_histogram"][0] == ("aten.linear.default", 2)
    assert s["auto_decomposed_ops"] == [] and s["decompose_rounds"] == 0
    assert s["check"] == "disabled"
    assert set(s["paths"]) == {"ir", "weights", "reference"}
    # deterministic
    first = (tmp_path / "torch-ir.json").read_bytes()
    export(m, x, tmp_path)
    assert (tmp_path / "torch-ir.json").read_bytes() == first


def test_encode_arg_unit():
    enc = _ir.encode_arg
    assert enc(True) == {"bool": True} and enc(False) == {"bool": False}
    assert enc(3) == {"int": 3} and enc(-1) == {"int": -1}
    assert enc(0.5) == {"float": 0.5}
    assert enc(float("inf")) == {"float": "inf"}
    assert enc(float("-inf")) == {"float": "-inf"}
    assert enc(float("nan")) == {"float": "nan"}
    assert enc("mean") == {"str": "mean"}
    assert enc(None) == {"none": True}
    assert enc(torch.float32) == {"dtype": "f32"} and enc(torch.bool) == {"dtype": "bool"}
    assert enc(torch.bfloat16) == {"dtype": "bf16"} and enc(torch.uint8) == {"dtype": "u8"}
    assert enc([1, (True, None)]) == {"list": [{"int": 1}, {"list": [{"bool": True},
                                                                      {"none": True}]}]}
    assert enc(torch.device("cpu")) == {"str": "cpu"}
    assert enc(torch.strided) == {"str": "torch.strided"}
    assert enc(torch.contiguous_format) == {"str": "torch.contiguous_format"}
    g = torch.fx.Graph()
    t, s = g.placeholder("t"), g.placeholder("s")
    t.meta["val"], s.meta["val"] = torch.zeros(2), 4
    assert enc([t, s]) == {"list": [{"ref": "t"}, {"sym": "s"}]}
    assert enc(torch.complex64) == {"dtype": "c64"} and enc(torch.complex128) == {"dtype": "c128"}
    with pytest.raises(rlx.ExportError, match="complex32"):
        enc(torch.complex32)


def test_encode_out_unit():
    assert _ir.encode_out(torch.zeros(2, 3, dtype=torch.int32), "n") == {"shape": [2, 3],
                                                                          "dtype": "i32"}
    assert _ir.encode_out([torch.zeros(1), None], "n") == [{"shape": [1], "dtype": "f32"}, None]
    assert _ir.encode_out(7, "n") == {"scalar": {"int": 7}}
    assert _ir.encode_out(None, "n") is None
    assert _ir.encode_out(torch.zeros(1, dtype=torch.complex64), "n") == {"shape": [1], "dtype": "c64"}
    with pytest.raises(rlx.ExportError, match="node 'bad'.*complex32"):
        _ir.encode_out(torch.zeros(1, dtype=torch.complex32), "node 'bad'")


def test_arg_encoding_end_to_end_and_constant_outputs(tmp_path):
    x = torch.rand(3, 4)
    export(Scalars(), (x,), tmp_path, decomposition="aten")
    ir = load_ir(tmp_path)
    args = [a for n in ir["nodes"] for a in walk_args(n["args"] + list(n["kwargs"].values()))]
    assert {"float": "-inf"} in args and {"float": "inf"} in args and {"float": "nan"} in args
    full = next(n for n in ir["nodes"] if n["op"] == "aten.full.default")
    assert full["kwargs"]["dtype"] == {"dtype": "f64"}
    assert full["out"] == {"shape": [2], "dtype": "f64"}
    outs = ir["outputs"]
    # the None output is left out of the program (and listed); the numbers stay
    assert [o.get("const") for o in outs[3:]] == [{"int": 3}, {"float": 2.5}]
    assert ir["omitted_outputs"] == [3]
    assert [o["dtype"] for o in outs[:3]] == ["f32", "f32", "f64"]
    ref, meta = load_st(tmp_path / "reference.safetensors")
    assert sorted(k for k in ref if not k.startswith("out64::")) == ["in::x", "out::0", "out::1", "out::2"]  # constants use up 3..4
    # the float64 arbiter: for the float32 outputs only (out::2 is float64 already)
    assert sorted(k for k in ref if k.startswith("out64::")) == ["out64::0", "out64::1"]
    assert meta["producer"].startswith("rlx.export / torch") and meta["torch"] == torch.__version__
    eager = Scalars()(x)
    for i in range(3):
        assert ref[f"out::{i}"].dtype == eager[i].dtype
        assert torch.equal(ref[f"out::{i}"].nan_to_num(), eager[i].nan_to_num())


def test_multi_output_and_getitem(tmp_path):
    m, x = model_file("cnn", batch=1, size=16)
    export(m, x, tmp_path)
    ir = load_ir(tmp_path)
    by_id = {n["id"]: n for n in ir["nodes"]}
    pool = next(n for n in ir["nodes"] if n["op"] == "aten.max_pool2d_with_indices.default")
    assert isinstance(pool["out"], list) and [o["dtype"] for o in pool["out"]] == ["f32", "i64"]
    bn = next(n for n in ir["nodes"]
              if n["op"] == "aten._native_batch_norm_legit_no_training.default")
    assert len(bn["out"]) == 3
    gets = [n for n in ir["nodes"] if n["op"] == "_getitem"]
    assert gets
    for g in gets:
        parent, idx = g["args"][0]["ref"], g["args"][1]["int"]
        assert isinstance(by_id[parent]["out"], list)
        assert g["out"] == by_id[parent]["out"][idx]
    # split: one _getitem per chunk
    m, x = model_file("transformer_block")
    export(m, x, tmp_path / "tb", decomposition="aten")
    ir = load_ir(tmp_path / "tb")
    split = next(n for n in ir["nodes"] if n["op"] == "aten.split.Tensor")
    assert split["out"] == [{"shape": [2, 8, 32], "dtype": "f32"}] * 3
    assert sum(1 for n in ir["nodes"] if n["op"] == "_getitem"
               and n["args"][0] == {"ref": split["id"]}) == 3


def test_weights_native_dtype_and_kinds(tmp_path):
    m = Weights()
    ids = torch.randint(0, 10, (2, 3))
    s = export(m, (ids,), tmp_path)
    ir = load_ir(tmp_path)
    w = {d["key"]: d for d in ir["weights"]}
    assert w["scale"]["dtype"] == "f64" and w["scale"]["kind"] == "param"
    assert w["steps"] == {"id": "b_steps", "key": "steps", "shape": [], "dtype": "i64",
                          "kind": "buffer"}
    assert w["np_buf"]["kind"] == "buffer"      # non-persistent: lives in ep.constants
    assert w["const"]["kind"] == "const" and w["const"]["id"] == "c_const"
    st, _ = load_st(tmp_path / "weights.safetensors")
    assert set(st) == set(w)
    sd = dict(m.state_dict(), np_buf=m.np_buf, const=m.const)
    for key, d in w.items():
        assert st[key].dtype == TOKENS[d["dtype"]] == sd[key].dtype
        assert list(st[key].shape) == d["shape"]
        assert torch.equal(st[key], sd[key])
    # reference: i64 input kept as i64; outputs in their native dtype
    ref, _ = load_st(tmp_path / "reference.safetensors")
    assert ref["in::ids"].dtype == torch.int64 and torch.equal(ref["in::ids"], ids)
    eager = m(ids)
    assert [ref[f"out::{i}"].dtype for i in range(3)] == [torch.float32, torch.int64, torch.bool]
    for i in range(3):
        assert torch.equal(ref[f"out::{i}"], eager[i])
    assert [o["dtype"] for o in ir["outputs"]] == ["f32", "i64", "bool"]
    assert s["num_weights"] == len(w)


class Counter(nn.Module):
    """Mutates a buffer in forward."""

    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(1))

    def forward(self, x):
        self.count.add_(1)
        return x * self.count


@pytest.mark.parametrize("mode", ["aten", "high"])
def test_buffer_mutation_keeps_files_consistent(tmp_path, mode):
    m = Counter()
    s = export(m, (torch.ones(3),), tmp_path, decomposition=mode, intermediates=True)
    w, _ = load_st(tmp_path / "weights.safetensors")
    ref, _ = load_st(tmp_path / "reference.safetensors")
    inter, _ = load_st(tmp_path / "intermediates.safetensors")
    ir = load_ir(tmp_path)
    # the mutated buffer is session state (docs/design.md "State"), starting at zeros:
    # nothing to store for it, and the eager reference is one run from that state
    st = ir.get("state", [])
    if mode == "high":  # functional: the update is a BUFFER_MUTATION output, so the buffer is state
        assert [(e["key"], e["init"]) for e in st] == [("count", "zeros")], st
        assert "count" not in w and not [x for x in ir["weights"] if x["key"] == "count"]
        assert s["dropped_outputs"] == []  # the update is the state's, not dropped
    else:  # aten mode keeps the in-place add_ in the graph, on the buffer as a weight
        assert torch.equal(w["count"], torch.zeros(1)) and not st
    assert torch.equal(ref["out::0"], torch.ones(3))      # eager result from that state
    assert torch.equal(inter[ir["outputs"][0]["ref"]], torch.ones(3))
    assert torch.equal(m.count, torch.zeros(1))            # the user's module is untouched
    assert len(ir["outputs"]) == 1


def test_state_with_an_initial_value(tmp_path):
    """A mutated buffer that does not start at zeros is stored in weights.safetensors."""
    class Acc(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("acc", torch.full((2,), 0.5))

        def forward(self, x):
            self.acc.mul_(2.0)
            return x + self.acc

    export(Acc(), (torch.ones(2),), tmp_path)
    ir = load_ir(tmp_path)
    w, _ = load_st(tmp_path / "weights.safetensors")
    assert [(e["key"], e["init"]) for e in ir["state"]] == [("acc", "weights")]
    assert torch.equal(w["acc"], torch.full((2,), 0.5))


def test_no_weights_gives_empty_file(tmp_path):
    export(Roll(), (torch.randn(3, 2),), tmp_path, intermediates=True)
    assert (tmp_path / "reference.safetensors").exists()
    export(Roll(), (torch.randn(3, 2),), tmp_path, write_reference=False)
    assert (tmp_path / "weights.safetensors").stat().st_size == 0
    # files this export did not write are not left over from the earlier one
    assert not (tmp_path / "reference.safetensors").exists()
    assert not (tmp_path / "intermediates.safetensors").exists()


def test_example_input_structure(tmp_path):
    class M(nn.Module):
        def forward(self, x, mask=None, ys=(), k=2):
            return x * k + ys[0] + ys[1]

    ins = (torch.ones(3), None, [torch.ones(3), torch.full((3,), 2.0)], 3)
    export(M(), ins, tmp_path)
    ir = load_ir(tmp_path)
    assert [i["id"] for i in ir["inputs"]] == ["x", "ys_0", "ys_1"]  # None dropped, int unused
    ref, _ = load_st(tmp_path / "reference.safetensors")
    assert sorted(ref) == ["in::x", "in::ys_0", "in::ys_1", "out64::0", "out::0"]
    assert torch.equal(ref["in::ys_1"], ins[2][1]) and torch.equal(ref["out::0"], M()(*ins))


def test_reference_noncontiguous_input(tmp_path):
    x = torch.randn(4, 3).t()  # non-contiguous
    export(Roll(), x, tmp_path)  # a single tensor is accepted as example_inputs
    ref, _ = load_st(tmp_path / "reference.safetensors")
    assert torch.equal(ref["in::x"], x) and torch.equal(ref["out::0"], Roll()(x))


def test_unsupported_dtype_is_a_clear_error(tmp_path):
    with pytest.raises(rlx.ExportError, match=r"output 0 \('fft_rfft'\) is complex64: .*return "
                       r"torch.view_as_real\(y\)"):
        export(Complex(), (torch.randn(8),), tmp_path, decomposition="aten")


# --------------------------------------------------------------------------
# Decomposition


def test_decomposition_modes(tmp_path):
    m, x = model_file("mlp")
    ops = {}
    for mode in ("aten", "high", "core"):
        export(m, x, tmp_path / mode, decomposition=mode)
        ir = load_ir(tmp_path / mode)
        assert ir["decomposition"] == mode
        ops[mode] = set(node_ops(ir))
    assert {"aten.linear.default", "aten.layer_norm.default"} <= ops["aten"]
    assert {"aten.linear.default", "aten.layer_norm.default", "aten.gelu.default"} <= ops["high"]
    assert "aten.linear.default" not in ops["core"]
    assert {"aten.addmm.default", "aten.native_layer_norm.default"} <= ops["core"]
    # force_decompose on top of high
    s = export(m, x, tmp_path / "forced", force_decompose=["aten.gelu.default"])
    assert "aten.gelu.default" not in node_ops(load_ir(tmp_path / "forced"))
    assert s["auto_decomposed_ops"] == []
    with pytest.raises(rlx.ExportError, match="decomposition"):
        export(m, x, tmp_path / "bad", decomposition="fancy")


def test_high_table_preserves_ops():
    table = _decomp.decomposition_table("high")
    for name in ("scaled_dot_product_attention", "layer_norm", "linear", "conv2d", "rms_norm",
                 "log_softmax", "softmax"):
        packet = getattr(torch.ops.aten, name)
        for ov in packet.overloads():
            assert getattr(packet, ov) not in table, f"{name}.{ov} should be preserved"
    assert torch.ops.aten.roll.default in table
    assert _decomp.decomposition_table("aten") is None
    assert _decomp.decomposition_table("core") is None
    forced = _decomp.decomposition_table("aten", ["aten.roll.default"])
    assert list(forced) == [torch.ops.aten.roll.default]


# --------------------------------------------------------------------------
# Intermediates


def test_intermediates(tmp_path):
    m, x = model_file("transformer_block", mask="bool")
    s = export(m, x, tmp_path, intermediates=True)
    ir = load_ir(tmp_path)
    inter, meta = load_st(tmp_path / "intermediates.safetensors")
    single = [n["id"] for n in ir["nodes"] if isinstance(n["out"], dict) and "shape" in n["out"]]
    assert sorted(inter) == sorted(single)
    assert meta["sampled"] == "false" and meta["kept"] == meta["total"] == str(len(single))
    for n in ir["nodes"]:
        if n["id"] in inter:
            assert list(inter[n["id"]].shape) == n["out"]["shape"]
            assert inter[n["id"]].dtype == TOKENS[n["out"]["dtype"]]
    ref, _ = load_st(tmp_path / "reference.safetensors")
    out = ir["outputs"][0]["ref"]
    torch.testing.assert_close(inter[out], ref["out::0"])
    assert s["intermediates"]["kept"] == len(single)

    # a cap far below the total: an evenly spaced subset, the output always kept
    export(m, x, tmp_path / "cap", intermediates=True, intermediates_cap_mb=0.02)
    inter2, meta2 = load_st(tmp_path / "cap" / "intermediates.safetensors")
    assert meta2["sampled"] == "true" and meta2["total"] == str(len(single))
    assert int(meta2["kept"]) == len(inter2) < len(single)
    assert out in inter2
    assert sum(t.numel() * t.element_size() for t in inter2.values()) <= 0.02 * 1024 * 1024


# --------------------------------------------------------------------------
# Dynamic shapes


def test_dynamic_shapes(tmp_path):
    m, x = model_file("transformer_block", mask="bool")
    export(m, x, tmp_path, dynamic=["x:0:batch:1:64", "x:1:seq", "mask:0:batch",
                                    "mask:2:seq", "mask:3:seq"])
    ir = load_ir(tmp_path)
    assert ir["inputs"][0] == {"id": "x", "shape": [2, 8, 32], "dtype": "f32",
                               "sym_shape": ["batch", "seq", 32], "dynamic": [0, 1, -1]}
    assert ir["inputs"][1]["dynamic"] == [0, -1, 1, 1]
    sizes = [n for n in ir["nodes"] if n["op"] == "aten.sym_size.int"]
    assert sizes and all("scalar" in n["out"] for n in sizes)
    syms = {a["sym"] for n in ir["nodes"] for a in walk_args(n["args"]) if "sym" in a}
    assert syms and syms <= {n["id"] for n in ir["nodes"]}
    with pytest.raises(rlx.ExportError, match="no positional input named 'y'"):
        export(m, x, tmp_path / "bad", dynamic=["y:0:b"])
    with pytest.raises(rlx.ExportError, match="INPUT:AXIS:NAME"):
        rx.parse_dynamic_spec("x:0")


# --------------------------------------------------------------------------
# Model files and the command line


def test_parse_set():
    assert rx.parse_set(["mask=causal", "batch=3", "f=0.5", "t=(1, 2)", "s='x y'"]) == {
        "mask": "causal", "batch": 3, "f": 0.5, "t": (1, 2), "s": "x y"}
    with pytest.raises(rlx.ExportError):
        rx.parse_set(["novalue"])


def test_cli_set_and_name(tmp_path, capsys):
    rc = rx.main([str(MODELS / "transformer_block.py"), "-o", str(tmp_path), "--set",
                  "mask=bool", "--set", "seq=6", "--name", "tb", "--no-check"])
    assert rc == 0
    ir = load_ir(tmp_path)
    assert ir["model_name"] == "tb"
    assert [(i["id"], i["shape"], i["dtype"]) for i in ir["inputs"]] == [
        ("x", [2, 6, 32], "f32"), ("mask", [2, 1, 6, 6], "bool")]
    out = capsys.readouterr().out
    assert "tb (high)" in out and "aten.linear.default 5" in out and "torch-ir.json" in out


def test_module_level_model_file(tmp_path, capsys):
    helper = tmp_path / "helper_mod_for_rlx.py"
    helper.write_text("import torch\nclass M(torch.nn.Module):\n"
                      "    def forward(self, x):\n        return x.sum(0) * 2\n")
    f = tmp_path / "m.py"
    f.write_text("import torch\nfrom helper_mod_for_rlx import M\n"  # imports its sibling
                 "model = M()\nexample_inputs = torch.ones(2, 3)\n")
    assert rx.main([str(f), "-o", str(tmp_path / "o"), "--quiet", "--no-check"]) == 0
    assert capsys.readouterr().out == ""
    ir = load_ir(tmp_path / "o")
    assert ir["model_name"] == "m" and ir["inputs"][0]["shape"] == [2, 3]


def test_cli_errors(tmp_path, capsys):
    rc = rx.main([str(tmp_path / "missing.py"), "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("rlx.export: error: model file not found")
    assert "Traceback" not in err
    (tmp_path / "empty.py").write_text("x = 1\n")
    rc = rx.main([str(tmp_path / "empty.py"), "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and "defines neither get_model() nor module-level" in err
    (tmp_path / "cplx.py").write_text(
        "import torch\nclass Complex(torch.nn.Module):\n    def forward(self, x):\n"
        "        return torch.fft.rfft(x)\n"
        "model = Complex()\nexample_inputs = (torch.randn(8),)\n")
    rc = rx.main([str(tmp_path / "cplx.py"), "-o", str(tmp_path / "o"), "--decomposition",
                  "aten", "--no-check"])
    err = capsys.readouterr().err
    # the steps' progress lines ("rlx.export: [  0.0 s] ...") come first, then the error
    last = err.strip().splitlines()[-1]
    assert rc == 2 and last.startswith("rlx.export: error:") and "complex64" in last
    assert all(line.startswith("rlx.export: [") for line in err.strip().splitlines()[:-1])


def test_cli_subprocess_exit_code(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    env.pop("RLX_DEBUG", None)
    p = subprocess.run([sys.executable, "-m", "rlx.export", str(tmp_path / "nope.py"), "-o",
                        str(tmp_path / "o")], capture_output=True, text=True, env=env)
    assert p.returncode == 2
    assert p.stderr.strip() == f"rlx.export: error: model file not found: {tmp_path / 'nope.py'}"


# --------------------------------------------------------------------------
# Auto-decompose loop


MSG_ASCII = ("rlx: loading out/\nerror: aten->rlx registry does not yet support 2 op(s): "
             "aten.roll.default (nodes: roll), aten.erfinv.default (nodes: erfinv)\n")
MSG_UNICODE = ("error: aten\u2192rlx registry does not yet support 3 op(s):\n"
               "  aten.roll.default (nodes: roll, roll_1);\n  aten.bogus_op.default\n"
               "  aten.erfinv (nodes: erfinv).")


def test_parse_unsupported():
    assert rx.parse_unsupported(MSG_ASCII) == ["aten.roll.default", "aten.erfinv.default"]
    assert rx.parse_unsupported(MSG_UNICODE) == ["aten.roll.default", "aten.bogus_op.default",
                                                 "aten.erfinv"]
    # names before the marker, or after the paragraph that lists them, are not candidates
    assert rx.parse_unsupported(MSG_ASCII + "\nhint: aten.add.Tensor is fine\n") == [
        "aten.roll.default", "aten.erfinv.default"]
    assert rx.parse_unsupported("aten.add.Tensor failed; nothing unsupported") == []
    assert rx.parse_unsupported("") == []
    # a library's custom op is named too (it cannot be decomposed, but the user must see it)
    msg = ("error: aten->rlx registry does not yet support 2 op(s): aten.histc.default "
           "(nodes: histc), transformers.grouped_mm_fallback.default (nodes: grouped_mm_fallback, "
           "grouped_mm_fallback_1, ...)\n")
    assert rx.parse_unsupported(msg) == ["aten.histc.default",
                                         "transformers.grouped_mm_fallback.default"]
    assert rx.decompose_candidates(rx.parse_unsupported(msg)) == []


def test_decompose_candidates():
    assert rx.decompose_candidates(rx.parse_unsupported(MSG_ASCII)) == [
        "aten.erfinv.default", "aten.roll.default"]
    # base names match any overload torch can decompose; unknown ops are dropped
    c = rx.decompose_candidates(["aten.roll", "aten.bogus_op.default", "aten.nope",
                                 "aten.erfinv", "prims.add.default"])
    assert "aten.roll.default" in c and "aten.erfinv.default" in c
    assert all(n.startswith(("aten.roll.", "aten.erfinv.")) for n in c)
    assert rx.decompose_candidates(["aten.add.NotAnOverload"]) == []


def _fake_rlx(tmp_path, body):
    p = tmp_path / "fake-rlx"
    p.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    p.chmod(p.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return p


def _use_fake(monkeypatch, path):
    monkeypatch.setattr(rx, "find_rlx_binary", _decomp.find_rlx_binary)
    monkeypatch.setenv("RLX_BIN", str(path))


def test_auto_decompose_loop(tmp_path, monkeypatch):
    log = tmp_path / "calls.log"
    # fails (naming roll) while the graph still has a roll node, then succeeds
    fake = _fake_rlx(tmp_path, f"""echo "$@" >> {log}
if grep -q '"aten.roll.default"' "$2/torch-ir.json"; then
  echo "error: aten\u2192rlx registry does not yet support 1 op(s): \\
aten.roll.default (nodes: roll)" >&2
  exit 1
fi
echo "ok"
""")
    _use_fake(monkeypatch, fake)
    out = tmp_path / "out"
    s = export(Roll(), (torch.randn(4, 3),), out, decomposition="aten", check=True)
    assert s["check"] == "passed" and s["rlx_bin"] == str(fake)
    assert s["auto_decomposed_ops"] == ["aten.roll.default"] and s["decompose_rounds"] == 1
    assert log.read_text().splitlines() == [f"inspect {out} --check"] * 2
    ops = node_ops(load_ir(out))
    assert "aten.roll.default" not in ops and "aten.index_select.default" in ops
    ref, _ = load_st(out / "reference.safetensors")
    assert ref["out::0"].shape == (4, 3)


def test_auto_decompose_gives_up(tmp_path, monkeypatch, capsys):
    fake = _fake_rlx(tmp_path, "echo 'error: aten->rlx registry does not yet support 2 op(s): "
                               "aten.unknown_thing.default (nodes: u), mylib.frob.default "
                               "(nodes: frob)' >&2\nexit 1\n")
    _use_fake(monkeypatch, fake)
    s = export(Roll(), (torch.randn(4, 3),), tmp_path / "o", decomposition="aten", check=True)
    assert s["check"] == "failed" and "unknown_thing" in s["check_message"]
    assert s["unsupported_ops"] == ["aten.unknown_thing.default", "mylib.frob.default"]
    assert s["decompose_rounds"] == 0 and (tmp_path / "o" / "torch-ir.json").exists()
    # from the command line: the rlx message and exit code 1
    f = tmp_path / "roll.py"
    f.write_text("import torch\nclass Roll(torch.nn.Module):\n    def forward(self, x):\n"
                 "        return torch.roll(x, 1, 0)\n"
                 "model = Roll()\nexample_inputs = (torch.randn(4, 3),)\n")
    rc = rx.main([str(f), "-o", str(tmp_path / "o2"), "--decomposition", "aten"])
    err = capsys.readouterr().err
    assert rc == 1 and "aten.unknown_thing.default" in err
    assert "(unsupported ops: aten.unknown_thing.default, mylib.frob.default)" in err


def test_check_rounds_are_capped(tmp_path, monkeypatch):
    # always names roll (even after it is gone): one re-export, then nothing new to add
    fake = _fake_rlx(tmp_path, "echo 'does not yet support: aten.roll.default' >&2\nexit 3\n")
    _use_fake(monkeypatch, fake)
    s = export(Roll(), (torch.randn(4, 3),), tmp_path / "o", decomposition="aten", check=True,
               write_reference=False, max_decompose_rounds=4)
    assert s["check"] == "failed" and s["decompose_rounds"] == 1
    s = export(Roll(), (torch.randn(4, 3),), tmp_path / "o", decomposition="aten", check=True,
               write_reference=False, max_decompose_rounds=0)
    assert s["check"] == "failed" and s["decompose_rounds"] == 0
    assert s["auto_decomposed_ops"] == []


def test_missing_binary_skips_check(tmp_path, monkeypatch):
    monkeypatch.setattr(rx, "find_rlx_binary", lambda: None)
    s = export(Roll(), (torch.randn(4, 3),), tmp_path, check=True)
    assert s["check"] == "skipped" and s["rlx_bin"] is None
    monkeypatch.setattr(rx, "find_rlx_binary", _decomp.find_rlx_binary)
    monkeypatch.setenv("RLX_BIN", str(tmp_path / "does-not-exist"))
    with pytest.raises(rlx.ExportError, match="RLX_BIN"):
        export(Roll(), (torch.randn(4, 3),), tmp_path, check=True)


def test_version():
    assert rlx.__version__ == "0.1.0"


def test_data_dependent_size_is_a_clear_error(tmp_path):
    class M(nn.Module):
        def forward(self, x):
            return x[x > 0].sum(0, keepdim=True) * 2

    with pytest.raises(rx.ExportError, match=r"node '.*' \(aten\.index\.Tensor\) has a data-dependent size"):
        export(M(), (torch.randn(5, 3),), tmp_path)


def test_effect_tokens_are_removed(tmp_path):
    """torch.linalg.inv, cholesky, solve, ... raise on a failed factorization
    through aten._linalg_check_errors, an effectful op that torch.export threads
    through a token: an extra graph input (and output) the example inputs do not
    have.  The exported program has no token; the check is a plain node on the
    info tensor, and the program's one input is the matrix."""
    class Inv(nn.Module):
        def forward(self, a):
            return torch.linalg.inv(a), torch.linalg.cholesky(a @ a.mT + torch.eye(3))

    export(Inv(), (torch.randn(3, 3),), tmp_path, decomposition="high")
    ir = load_ir(tmp_path)
    assert [e["id"] for e in ir["inputs"]] == ["a"]
    checks = [n for n in ir["nodes"] if n["op"] == "aten._linalg_check_errors.default"]
    assert len(checks) == 2
    assert {n["args"][1]["str"] for n in checks} == {"linalg.inv", "linalg.cholesky"}
    assert len(ir["outputs"]) == 2
    refs, _ = load_st(tmp_path / "reference.safetensors")
    assert {"in::a", "out::0", "out::1"} <= set(refs)
