"""Dynamic exports (docs/design.md, "Shapes"): symbols, guards, sym_shapes and
reference data at more bindings. JSON and safetensors checks only; no rlx
binary needed.

Run: python3 -m pytest -q tests/py/test_dynamic_export.py
"""

import json
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from safetensors import safe_open
from torch import nn

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

import rlx  # noqa: E402
from rlx import _sym  # noqa: E402
from rlx import export as rx  # noqa: E402

Dim = torch.export.Dim
TOKENS = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
          "f64": torch.float64, "i64": torch.int64, "i32": torch.int32, "i16": torch.int16,
          "i8": torch.int8, "u8": torch.uint8, "bool": torch.bool}


@pytest.fixture(autouse=True)
def _no_real_rlx(monkeypatch):
    monkeypatch.delenv("RLX_BIN", raising=False)
    monkeypatch.setattr(rx, "find_rlx_binary", lambda: None)


def export(model, inputs, out, **kw):
    kw.setdefault("check", False)
    return rlx.export_program(model, inputs, out, **kw)


def load(out):
    ir = json.loads((Path(out) / "torch-ir.json").read_text())
    path = Path(out) / "reference.safetensors"
    with safe_open(str(path), "pt") as f:
        ref = {k: f.get_tensor(k) for k in f.keys()}
        meta = f.metadata()
    return ir, ref, meta


def tensor_entries(ir):
    for e in ir["inputs"]:
        yield e
    for n in ir["nodes"]:
        for o in n["out"] if isinstance(n["out"], list) else [n["out"]]:
            if isinstance(o, dict) and "shape" in o:
                yield o
    for e in ir["outputs"]:
        if "shape" in e:
            yield e


def shape_at(e, env):
    return [_sym.evaluate(d, env) for d in e["sym_shape"]] if "sym_shape" in e else e["shape"]


def check_program(ir):
    """The invariants of docs/design.md "Shapes" for one torch-ir.json."""
    syms = ir["symbols"]
    names = [s["name"] for s in syms]
    assert len(names) == len(set(names)) and syms
    for s in syms:
        assert set(s) == {"name", "min", "max", "hint"}
        assert 0 <= s["min"] <= s["hint"] <= s["max"] <= 1 << 48
        assert s["name"] not in _sym.KEYWORDS and _sym.NAME_RE.match(s["name"])
    hints = {s["name"]: s["hint"] for s in syms}
    used = set()
    n_sym = 0
    for e in tensor_entries(ir):
        if "sym_shape" in e:
            n_sym += 1
            assert len(e["sym_shape"]) == len(e["shape"])
            assert any(isinstance(d, str) for d in e["sym_shape"])
            for d in e["sym_shape"]:
                if isinstance(d, str):
                    used |= _sym.names_in(d)
            assert shape_at(e, hints) == e["shape"], e
    for n in ir["nodes"]:
        out = n["out"]
        if isinstance(out, dict) and "sym" in out:
            used |= _sym.names_in(out["sym"])
            assert _sym.evaluate(out["sym"], hints) == out["scalar"]["int"], n
        if isinstance(out, dict) and "sym_rel" in out:
            r = out["sym_rel"]
            assert _sym.holds(r["lhs"], r["rel"], r["rhs"], hints) == out["scalar"]["bool"]
    assert used <= set(names)
    assert set(names) <= used | {s for g in ir["guards"] for s in _sym.names_in(g["lhs"])}
    for g in ir["guards"]:
        assert set(g) == {"lhs", "rel", "rhs", "source"}
        assert _sym.holds(g["lhs"], g["rel"], g["rhs"], hints), g
    return n_sym


def check_bindings(ir, ref, meta, model=None, examples=None):
    """Reference data at every recorded binding has the shapes the program's
    sym_shapes give there; with ``model``, the outputs are eager torch's."""
    bindings = ir.get("reference_bindings", [])
    assert json.loads(meta["reference_bindings"]) == bindings
    syms = {s["name"]: s for s in ir["symbols"]}
    hints = {k: s["hint"] for k, s in syms.items()}
    seen = [hints]
    for i, b in enumerate(bindings):
        assert b["k"] == i + 1 and set(b) == {"k", "values"}
        env = b["values"]
        assert set(env) == set(syms)
        for k, v in env.items():
            assert syms[k]["min"] <= v <= syms[k]["max"]
        assert env not in seen
        seen.append(env)
        for g in ir["guards"]:
            assert _sym.holds(g["lhs"], g["rel"], g["rhs"], env), (g, env)
        ins = []
        for e in ir["inputs"]:
            t = ref[f"b{b['k']}/in::{e['id']}"]
            assert list(t.shape) == shape_at(e, env) and t.dtype == TOKENS[e["dtype"]]
            ins.append(t)
        for j, e in enumerate(ir["outputs"]):
            t = ref[f"b{b['k']}/out::{j}"]
            assert list(t.shape) == shape_at(e, env) and t.dtype == TOKENS[e["dtype"]]
            if f"b{b['k']}/out64::{j}" in ref:
                assert ref[f"b{b['k']}/out64::{j}"].shape == t.shape
        if model is not None:
            with torch.no_grad():
                got = model(*ins)
            got = got if isinstance(got, (tuple, list)) else [got]
            for j, g in enumerate(got):
                torch.testing.assert_close(g, ref[f"b{b['k']}/out::{j}"])
    assert not [k for k in ref if k.startswith("b") and int(k[1:k.index("/")]) > len(bindings)]
    return bindings


def values(bindings):
    return [b["values"] for b in bindings]


# --------------------------------------------------------------------------
# Models


def test_mlp_dynamic_batch(tmp_path):
    m, x = rx.load_model(str(REPO / "tests" / "models" / "mlp.py"))
    s = export(m, x, tmp_path, dynamic=["x:0:batch:1:32"], reference_shapes=True)
    ir, ref, meta = load(tmp_path)
    assert ir["symbols"] == [{"name": "batch", "min": 1, "max": 32, "hint": 2}]
    assert ir["guards"] == []
    assert ir["inputs"][0]["sym_shape"] == ["batch", 4, 16]
    assert ir["outputs"][0]["sym_shape"] == ["batch", 4, 16]
    assert check_program(ir) == 6  # the input, four nodes, the output
    b = check_bindings(ir, ref, meta, model=m)
    assert values(b)[:3] == [{"batch": 1}, {"batch": 16}, {"batch": 32}]
    assert len(b) == 4 and 1 <= values(b)[3]["batch"] <= 32
    assert s["symbols"] == ir["symbols"] and s["reference_bindings"] == b
    # the example's reference is unchanged
    assert ref["in::x"].shape == (2, 4, 16) and "out64::0" in ref
    # deterministic, reference bindings included
    first = (tmp_path / "torch-ir.json").read_bytes()
    export(m, x, tmp_path, dynamic=["x:0:batch:1:32"], reference_shapes=True)
    assert (tmp_path / "torch-ir.json").read_bytes() == first
    assert torch.equal(load(tmp_path)[1]["b4/in::x"], ref["b4/in::x"])


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        from transformers import BertConfig, BertModel
        cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=64)
        self.m = BertModel(cfg)

    def forward(self, input_ids, attention_mask):
        o = self.m(input_ids=input_ids, attention_mask=attention_mask)
        return o.last_hidden_state, o.pooler_output


def test_bert_dynamic_batch_and_seq(tmp_path):
    torch.manual_seed(0)
    m = Bert().eval()
    ids = torch.randint(0, 100, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, 6:] = 0
    # seq must be bounded: the position table has 64 rows and torch refuses more
    s = export(m, (ids, mask), tmp_path, dynamic=["input_ids:0:batch", "input_ids:1:seq:1:64",
                                                  "attention_mask:0:batch", "attention_mask:1:seq"],
               reference_shapes=True, reference_shapes_cap_mb=8)
    ir, ref, meta = load(tmp_path)
    # batch: torch's range is [0, oo]; the exporter's default max, with a note
    assert ir["symbols"] == [{"name": "batch", "min": 0, "max": 4096, "hint": 2},
                             {"name": "seq", "min": 1, "max": 64, "hint": 8}]
    assert ir["guards"] == []
    assert any("'batch'" in n and "no upper bound" in n for n in s["notes"])
    assert [e["sym_shape"] for e in ir["inputs"]] == [["batch", "seq"], ["batch", "seq"]]
    assert [e["sym_shape"] for e in ir["outputs"]] == [["batch", "seq", 32], ["batch", 32]]
    sizes = {n["out"]["sym"] for n in ir["nodes"] if n["op"] == "aten.sym_size.int"}
    assert sizes == {"batch", "seq"}
    assert check_program(ir) > 50
    b = check_bindings(ir, ref, meta, model=m)
    # min: eager BERT fails at batch 0 (a reshape with -1 of an empty tensor), so 1
    assert values(b)[0] == {"batch": 1, "seq": 1}
    assert any("batch=0" in n and "eager torch fails" in n for n in s["notes"])
    assert len(b) == 4
    for v in values(b)[1:]:  # mid, max and random, shrunk to the 8 MiB cap
        assert v["batch"] > 1
    total = sum(t.numel() * t.element_size() for k, t in ref.items() if k.startswith("b"))
    assert total <= 8 * 1024 * 1024
    for bb in b:  # masks from the example's values, ids within the example's range
        k = bb["k"]
        assert set(ref[f"b{k}/in::attention_mask"].unique().tolist()) <= {0, 1}
        got = ref[f"b{k}/in::input_ids"]
        assert int(got.min()) >= int(ids.min()) and int(got.max()) <= int(ids.max())


class GPT2(nn.Module):
    def __init__(self):
        super().__init__()
        from transformers import GPT2Config, GPT2Model
        self.m = GPT2Model(GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2,
                                      n_positions=64))

    def forward(self, input_ids):
        return self.m(input_ids=input_ids, use_cache=False).last_hidden_state


def test_gpt2_dynamic_seq(tmp_path):
    torch.manual_seed(0)
    m = GPT2().eval()
    ids = torch.randint(0, 100, (1, 8))
    export(m, (ids,), tmp_path, dynamic=["input_ids:1:seq:1:64"], reference_shapes=True)
    ir, ref, meta = load(tmp_path)
    assert ir["symbols"] == [{"name": "seq", "min": 1, "max": 64, "hint": 8}]
    assert ir["guards"] == []
    exprs = {d for e in tensor_entries(ir) for d in e.get("sym_shape", []) if isinstance(d, str)}
    assert exprs == {"seq", "seq + 1"}  # the causal mask's cache positions
    assert {n["out"].get("sym") for n in ir["nodes"] if n["op"] == "sym_add"} == {"seq + 1"}
    check_program(ir)
    b = check_bindings(ir, ref, meta, model=m)
    assert values(b)[:3] == [{"seq": 1}, {"seq": 32}, {"seq": 64}]


def test_resnet18_dynamic_batch_and_image_size(tmp_path):
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(2, 3, 64, 64)
    # torch's own dynamic_shapes with Dim objects: their names name the symbols
    dyn = {"x": {0: Dim("batch", max=4), 2: Dim("H", min=33, max=160), 3: Dim("W", min=33, max=160)}}
    export(m, (x,), tmp_path, dynamic=dyn, reference_shapes="min,max")
    ir, ref, meta = load(tmp_path)
    assert ir["symbols"] == [{"name": "batch", "min": 0, "max": 4, "hint": 2},
                             {"name": "H", "min": 33, "max": 160, "hint": 64},
                             {"name": "W", "min": 33, "max": 160, "hint": 64}]
    assert ir["guards"] == []
    shapes = {tuple(e["sym_shape"]) for e in tensor_entries(ir) if "sym_shape" in e}
    # torch folds the conv arithmetic to one floordiv per stage
    assert ("batch", 512, "floordiv(H - 1, 32) + 1", "floordiv(W - 1, 32) + 1") in shapes
    assert ("batch", 1000) in shapes
    check_program(ir)
    b = check_bindings(ir, ref, meta, model=m)
    # an empty batch runs in eager torch and is in torch's range: the min binding
    assert values(b) == [{"batch": 0, "H": 33, "W": 33}, {"batch": 4, "H": 160, "W": 160}]


def test_resnet18_small_images_are_refused_by_torch(tmp_path):
    # torch assumes every stage is larger than 1x1 (1 + (H - 1) // 32 != 1):
    # H <= 32 cannot be in the range
    import torchvision
    m = torchvision.models.resnet18(weights=None).eval()
    with pytest.raises(rlx.ExportError, match="H"):
        export(m, (torch.randn(2, 3, 64, 64),), tmp_path, dynamic=["x:2:H:1:160"],
               write_reference=False)


# --------------------------------------------------------------------------
# Names, ranges and guards


class Slice(nn.Module):
    def forward(self, x, y):
        return x[:, :y.shape[1]] * 2


def test_guard_between_two_symbols(tmp_path):
    s = export(Slice(), (torch.randn(2, 10), torch.randn(2, 4)), tmp_path,
               dynamic=["x:1:s:1:100", "y:1:t:1:100"], reference_shapes=True)
    ir, ref, meta = load(tmp_path)
    assert [x["name"] for x in ir["symbols"]] == ["s", "t"]
    rels = {(g["lhs"], g["rel"], g["rhs"]) for g in ir["guards"]}
    # the slice is only the identity-free x[:, :t] torch traced when t <= s (and t != s)
    assert ("t", "<=", "s") in rels
    assert all(g["source"].startswith("torch guard") for g in ir["guards"])
    check_program(ir)
    b = check_bindings(ir, ref, meta, model=Slice())
    assert len(b) == 4 and all(v["t"] <= v["s"] for v in values(b))
    assert s["reference_bindings"] == b


def test_assert_scalar_becomes_a_guard(tmp_path):
    class M(nn.Module):
        def forward(self, x):
            torch.ops.aten._assert_scalar.default(x.shape[0] <= x.shape[1] * 4, "B <= 4T")
            return x + 1

    export(M(), (torch.randn(3, 2),), tmp_path, dynamic=["x:0:B:2:64", "x:1:T:2:64"],
           reference_shapes=True)
    ir, ref, meta = load(tmp_path)
    asserts = [n for n in ir["nodes"] if n["op"] == "aten._assert_scalar.default"]
    assert len(asserts) == 1  # kept in the graph as before
    cond = asserts[0]["args"][0]["sym"]
    node = next(n for n in ir["nodes"] if n["id"] == cond)
    assert node["out"] == {"scalar": {"bool": True},
                           "sym_rel": {"lhs": "B", "rel": "<=", "rhs": "4*T"}}
    g = [g for g in ir["guards"] if (g["lhs"], g["rel"], g["rhs"]) == ("B", "<=", "4*T")]
    assert len(g) == 1 and g[0]["source"].startswith(f"node '{asserts[0]['id']}'")
    check_program(ir)
    check_bindings(ir, ref, meta)


def test_dim_names_from_torch_dynamic_shapes(tmp_path):
    class M(nn.Module):
        def forward(self, x, y):
            return x + y[:, 1:], x.shape[1] * 3

    s = Dim("L", max=100)
    export(M(), (torch.randn(2, 10), torch.randn(2, 11)), tmp_path,
           dynamic={"x": {1: s}, "y": {1: s + 1}}, write_reference=False)
    ir = json.loads((tmp_path / "torch-ir.json").read_text())
    assert ir["symbols"] == [{"name": "L", "min": 0, "max": 100, "hint": 10}]
    assert [e["sym_shape"] for e in ir["inputs"]] == [[2, "L"], [2, "L + 1"]]
    assert any(n["out"].get("sym") == "3*L" for n in ir["nodes"] if isinstance(n["out"], dict))
    check_program(ir)

    # a tuple per input; a derived dim names its root; Dim.AUTO keeps torch's name
    b = Dim("_b", min=1, max=14)
    export(M(), (torch.randn(8, 10), torch.randn(8, 11)), tmp_path / "t",
           dynamic=({0: 4 * b, 1: Dim.AUTO}, {0: 4 * b, 1: Dim.AUTO}), write_reference=False)
    ir = json.loads((tmp_path / "t" / "torch-ir.json").read_text())
    names = [x["name"] for x in ir["symbols"]]
    assert names[0] == "_b" and ir["symbols"][0]["hint"] == 2
    assert ir["inputs"][0]["sym_shape"][0] == "4*_b"
    assert len(names) == 2 and names[1].startswith("s")
    check_program(ir)

    # *args models take a dict keyed by the var-positional name (tests/conformance does this)
    class Star(nn.Module):
        def forward(self, *xs):
            return xs[0] * 2

    export(Star(), (torch.randn(3, 2),), tmp_path / "star",
           dynamic={"xs": ({0: Dim("B", min=2, max=8)},)}, write_reference=False)
    ir = json.loads((tmp_path / "star" / "torch-ir.json").read_text())
    assert ir["symbols"] == [{"name": "B", "min": 2, "max": 8, "hint": 3}]


def test_default_max_and_cap(tmp_path):
    m, x = rx.load_model(str(REPO / "tests" / "models" / "mlp.py"))
    s = export(m, x, tmp_path, dynamic=["x:0:batch"], default_max=100)
    ir = json.loads((tmp_path / "torch-ir.json").read_text())
    assert ir["symbols"] == [{"name": "batch", "min": 0, "max": 100, "hint": 2}]
    assert "reference_bindings" not in ir
    assert len(s["notes"]) == 1 and "--dynamic INPUT:AXIS:batch:MIN:MAX" in s["notes"][0]
    # an upper bound beyond 2^48 is lowered to it
    export(m, x, tmp_path / "big", dynamic=["x:0:batch:1:" + str(1 << 60)], write_reference=False)
    ir = json.loads((tmp_path / "big" / "torch-ir.json").read_text())
    assert ir["symbols"][0]["max"] == 1 << 48


def test_interpolate_scale_is_integer_arithmetic(tmp_path):
    class Up(nn.Module):
        def forward(self, x):
            return F.interpolate(x, scale_factor=1.5, mode="bilinear")

    export(Up(), (torch.randn(1, 2, 8, 8),), tmp_path, dynamic=["x:2:H:2:64", "x:3:W:2:64"],
           reference_shapes="min,max,H=7:W=9")
    ir, ref, meta = load(tmp_path)
    assert ir["outputs"][0]["sym_shape"] == [1, 2, "floordiv(3*H, 2)", "floordiv(3*W, 2)"]
    check_program(ir)
    b = check_bindings(ir, ref, meta, model=Up())
    assert values(b) == [{"H": 2, "W": 2}, {"H": 64, "W": 64}, {"H": 7, "W": 9}]


def test_float_of_a_size_is_an_error(tmp_path):
    class M(nn.Module):
        def forward(self, x):
            return x * (x.shape[-1] ** 0.5)

    with pytest.raises(rlx.ExportError, match=r"node '.*' \(sym_(float|pow)\).*rlx sizes are integers"):
        export(M(), (torch.randn(2, 10),), tmp_path, dynamic=["x:1:n:1:64"])


def test_reference_shapes_spec_errors_and_static_models(tmp_path):
    m, x = rx.load_model(str(REPO / "tests" / "models" / "mlp.py"))
    with pytest.raises(rlx.ExportError, match="no symbol 'seq'"):
        export(m, x, tmp_path, dynamic=["x:0:batch:1:8"], reference_shapes="seq=3")
    with pytest.raises(rlx.ExportError, match=r"outside \[1, 8\]"):
        export(m, x, tmp_path, dynamic=["x:0:batch:1:8"], reference_shapes="batch=9")
    with pytest.raises(rlx.ExportError, match="none of min, mid, max, random"):
        export(m, x, tmp_path, dynamic=["x:0:batch:1:8"], reference_shapes="biggest")
    # a binding that repeats the example is skipped, with a note
    s = export(m, x, tmp_path, dynamic=["x:0:batch:1:8"], reference_shapes="batch=2,batch=5")
    assert values(s["reference_bindings"]) == [{"batch": 5}]
    assert any("'batch=2' skipped" in n for n in s["notes"])
    # a static program: no symbols, nothing extra, a note
    s = export(m, x, tmp_path / "static", reference_shapes=True)
    ir, ref, meta = load(tmp_path / "static")
    assert "symbols" not in ir and "reference_bindings" not in ir
    assert not [k for k in ref if k.startswith("b")]
    assert any("no shape symbols" in n for n in s["notes"])


def test_cap_shrinks_and_skips(tmp_path):
    m, x = rx.load_model(str(REPO / "tests" / "models" / "mlp.py"))
    # each batch row costs 4*16*4 bytes in, out and 2x for out64: 1 KiB; with a
    # 4 KiB cap the bindings shrink until they fit
    s = export(m, x, tmp_path, dynamic=["x:0:batch:1:4096"], reference_shapes="max,max",
               reference_shapes_cap_mb=4 / 1024)
    ir, ref, meta = load(tmp_path)
    b = check_bindings(ir, ref, meta, model=m)
    assert values(b)[0]["batch"] < 4096
    assert any("'max'" in n and "MiB" in n for n in s["notes"])
    total = sum(t.numel() * t.element_size() for k, t in ref.items() if k.startswith("b"))
    assert total <= 4 * 1024


def test_cli_reference_shapes(tmp_path, capsys):
    out = tmp_path / "o"
    rc = rx.main([str(REPO / "tests" / "models" / "mlp.py"), "-o", str(out), "--no-check",
                  "--dynamic", "x:0:batch:1:16", "--dynamic", "x:1:seq", "--default-max", "32",
                  "--reference-shapes", "min,batch=3:seq=5"])
    assert rc == 0
    err = capsys.readouterr()
    assert "symbol 'seq'" in err.err and "max 32" in err.err
    assert "symbols: batch in [1, 16] (example 2), seq in [0, 32] (example 4)" in err.out
    ir, ref, meta = load(out)
    b = check_bindings(ir, ref, meta)
    assert values(b) == [{"batch": 1, "seq": 0}, {"batch": 3, "seq": 5}]
    assert "reference bindings: batch=1, seq=0; batch=3, seq=5" in err.out
