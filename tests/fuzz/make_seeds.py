#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora under tests/fuzz/corpus/<target>/.

    python3 tests/fuzz/make_seeds.py [npy] [safetensors] [torch_ir] [torch_ir_dict]

npy and safetensors need numpy only; their seeds are small valid files: each
dtype, every .npy version (1.0, 2.0, 3.0), scalars, empty arrays, and for
safetensors a header-only file and an empty file.

torch_ir needs torch and the exporter (python/rlx): it exports conformance
cases (tests/conformance) with rlx.export_program and keeps each torch-ir.json,
compacted. One case is taken per lowering handler in
src/import/lower/aten_ops.def (the smallest by input bytes), plus the ops the
fuzzing brief names, so the seeds cover every op family; cases with
data are preferred to those with an empty tensor. Cases whose export
has weights are written with the fuzz target's weights prefix ("RLXW", u32
length, the weights.safetensors image; see fuzz_torch_ir.c), and a few small
nn modules with parameters (linear, conv + batch norm, layer norm, embedding)
are added the same way. Seeds are deterministic (the cases are seeded), but
the exporter's producer string names the torch version.

torch_ir_dict rewrites tests/fuzz/torch_ir.dict: the format's keys and tags,
dtype tokens, and every op of aten_ops.def (no torch needed).
"""

from __future__ import annotations

import json
import re
import struct
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CORPUS = HERE / "corpus"


def clean(d: Path) -> Path:
    """Empties d, keeping the hand-written regression seeds (regress-*: inputs
    that once crashed a target, kept so the fuzzers start from them)."""
    d.mkdir(parents=True, exist_ok=True)
    for f in d.iterdir():
        if not f.name.startswith("regress-"):
            f.unlink()
    return d


# ---------------------------------------------------------------- npy

NPY_DTYPES = ["<f4", "<f2", "<f8", "<i8", "<i4", "<i2", "|i1", "|u1", "|b1"]


def npy_bytes(arr: np.ndarray, version: tuple[int, int]) -> bytes:
    import io
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, version=version, allow_pickle=False)
    return buf.getvalue()


def make_npy() -> None:
    d = clean(CORPUS / "npy")
    rng = np.random.default_rng(0)
    shapes = [(), (0,), (3,), (2, 3), (1, 2, 1, 2)]
    for i, descr in enumerate(NPY_DTYPES):
        dt = np.dtype(descr)
        shape = shapes[i % len(shapes)]
        if dt.kind == "b":
            a = rng.integers(0, 2, size=shape).astype(dt)
        elif dt.kind == "f":
            a = rng.standard_normal(shape).astype(dt)
        else:
            a = rng.integers(-5, 5, size=shape).astype(dt) if dt.kind == "i" else rng.integers(0, 9, size=shape).astype(dt)
        name = descr.strip("<|")
        (d / f"{name}_v1.npy").write_bytes(npy_bytes(a, (1, 0)))
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    (d / "f4_v2.npy").write_bytes(npy_bytes(a, (2, 0)))
    (d / "f4_v3.npy").write_bytes(npy_bytes(a, (3, 0)))
    (d / "i8_empty_v2.npy").write_bytes(npy_bytes(np.zeros((2, 0, 3), dtype="<i8"), (2, 0)))
    (d / "u1_rank8_v1.npy").write_bytes(npy_bytes(np.ones((1, 2, 1, 1, 2, 1, 1, 2), dtype="|u1"), (1, 0)))
    (d / "f8_scalar_v3.npy").write_bytes(npy_bytes(np.array(2.5, dtype="<f8"), (3, 0)))


# ---------------------------------------------------------------- safetensors

ST_DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "F64": "<f8", "I64": "<i8", "I32": "<i4",
             "I16": "<i2", "I8": "|i1", "U8": "|u1", "BOOL": "|u1"}


def st_bytes(tensors: dict[str, tuple[str, tuple, bytes]], metadata: dict | None = None) -> bytes:
    header, data, at = {}, b"", 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [at, at + len(raw)]}
        data += raw
        at += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def make_safetensors() -> None:
    d = clean(CORPUS / "safetensors")
    rng = np.random.default_rng(1)
    shapes = [(2, 3), (4,), (), (1, 2, 2), (0, 3)]
    allt = {}
    for i, (st, npdt) in enumerate(ST_DTYPES.items()):
        shape = shapes[i % len(shapes)]
        n = int(np.prod(shape))
        raw = (rng.integers(0, 2, n) if st == "BOOL" else rng.integers(-3, 3, n)).astype(npdt).tobytes()
        one = {f"t_{st.lower()}": (st, shape, raw)}
        (d / f"{st.lower()}.safetensors").write_bytes(st_bytes(one))
        allt.update(one)
    (d / "all_dtypes.safetensors").write_bytes(st_bytes(allt, {"format": "pt"}))
    (d / "header_only.safetensors").write_bytes(st_bytes({}))
    (d / "metadata_only.safetensors").write_bytes(st_bytes({}, {"producer": "rlx", "k": "v"}))
    (d / "empty.safetensors").write_bytes(b"")
    two = {"a.weight": ("F32", (2, 2), np.ones(4, "<f4").tobytes()),
           "a.bias": ("F32", (2,), np.zeros(2, "<f4").tobytes()),
           "empty": ("F32", (0,), b"")}
    (d / "layer.safetensors").write_bytes(st_bytes(two))


# ---------------------------------------------------------------- torch-ir

# Ops the fuzzing brief asks the corpus to cover, whatever the handler choice.
WANTED = """add.Tensor view.default as_strided.default convolution.default pixel_shuffle.default
im2col.default full.default arange.start_step constant_pad_nd.default diagonal.default
avg_pool2d.default grid_sampler_2d.default _softmax.default unsqueeze.default split.Tensor
one_hot.default sum.dim_IntList eq.Scalar where.self""".split()


def handlers() -> dict[str, str]:
    """aten base name (or namespace.base) -> lowering handler, from aten_ops.def."""
    text = (REPO / "src/import/lower/aten_ops.def").read_text()
    out = {}
    for base, h in re.findall(r"^RLX_ATEN\((\w+),\s*(\w+)\)", text, re.M):
        out[base] = h
    for ns, base, h in re.findall(r"^RLX_LIB_OP\((\w+),\s*(\w+),\s*(\w+)\)", text, re.M):
        out[f"{ns}.{base}"] = h
    return out


def base_of(op: str) -> str:
    parts = op.split(".")
    return parts[1] if parts[0] == "aten" else ".".join(parts[:2])


def input_size(c) -> tuple[bool, int]:
    """Sort key: cases with data before those with an empty tensor, then by bytes."""
    import torch
    ts = [x for x in c.inputs if isinstance(x, torch.Tensor)]
    return (any(x.numel() == 0 for x in ts), sum(x.numel() * x.element_size() for x in ts))


def with_weights(ir_text: bytes, weights: bytes) -> bytes:
    """The fuzz target's input: an optional weights prefix, then the JSON."""
    if not weights:
        return ir_text
    return b"RLXW" + struct.pack("<I", len(weights)) + weights + ir_text


def export_seed(module, inputs, dynamic, decomposition: str, name: str, out: Path) -> bool:
    from rlx.export import export_program
    with tempfile.TemporaryDirectory() as tmp:
        try:
            export_program(module, inputs, tmp, model_name=name, decomposition=decomposition,
                           dynamic=dynamic, check=False, write_reference=False)
        except Exception as e:  # noqa: BLE001 - a case that does not export is skipped
            print(f"  skip {name}: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
            return False
        ir = json.loads((Path(tmp) / "torch-ir.json").read_text())
        w = (Path(tmp) / "weights.safetensors").read_bytes()
    text = json.dumps(ir, separators=(",", ":")).encode()
    if len(text) + len(w) > 64 << 10:
        print(f"  skip {name}: {len(text) + len(w)} bytes")
        return False
    (out / f"{name}.json").write_bytes(with_weights(text, w))
    return True


def make_torch_ir() -> None:
    import torch
    sys.path.insert(0, str(REPO / "python"))
    sys.path.insert(0, str(REPO / "tests/conformance"))
    import cases
    from conftest import CaseModule, _dynamic_shapes
    import importlib
    for f in sorted((REPO / "tests/conformance").glob("test_*.py")):
        importlib.import_module(f.stem)
    d = clean(CORPUS / "torch_ir")
    hmap = handlers()
    by_handler: dict[str, list] = {}
    chosen = {}
    for c in cases.all_cases().values():
        if c.refuses is not None:
            continue
        by_handler.setdefault(hmap.get(base_of(c.op), "?"), []).append(c)
        short = c.op[len("aten."):] if c.op.startswith("aten.") else c.op
        if short in WANTED and (short not in chosen or input_size(c) < input_size(chosen[short])):
            chosen[short] = c
    picks = {c.id: c for c in chosen.values()}
    for h, cs in sorted(by_handler.items()):
        if h == "?" or any(hmap.get(base_of(c.op)) == h for c in picks.values()):
            continue
        c = min(cs, key=lambda c: (input_size(c), c.id))
        picks[c.id] = c
    for c in cases.all_cases().values():  # one graph with a dynamic dim
        if c.dynamic and c.refuses is None:
            picks[c.id] = c
            break
    n = 0
    for cid, c in sorted(picks.items()):
        n += export_seed(CaseModule(c.fn), c.inputs, _dynamic_shapes(c), c.decomposition, cid, d)

    torch.manual_seed(0)
    nn = torch.nn
    mods = {
        "nn-linear": (nn.Sequential(nn.Linear(3, 2), nn.ReLU()), (torch.randn(2, 3),)),
        "nn-conv-bn": (nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU()),
                       (torch.randn(1, 2, 4, 4),)),
        "nn-layernorm": (nn.LayerNorm(4), (torch.randn(2, 4),)),
        "nn-embedding": (nn.Embedding(5, 3), (torch.tensor([[0, 4], [2, 1]]),)),
    }
    for name, (m, args) in mods.items():
        n += export_seed(m, args, None, "high", name, d)
    print(f"torch_ir: {n} seeds")


TORCH_IR_TOKENS = ["format", "rlx-torch-ir", "version", "model_name", "producer", "decomposition",
                   "inputs", "weights", "nodes", "outputs", "id", "shape", "dtype", "dynamic", "key",
                   "kind", "param", "buffer", "constant", "op", "args", "kwargs", "out", "ref",
                   "const", "int", "float", "bool", "str", "none", "list", "sym", "inf", "-inf",
                   "nan", "_getitem", "f32", "f16", "bf16", "f64", "i64", "i32", "i16", "i8", "u8",
                   "dim", "keepdim", "memory_format", "device", "layout", "pin_memory", "cpu",
                   "high", "core", "aten"]
OVERLOADS = ["default", "Tensor", "Scalar", "int", "dim", "dims", "dim_IntList", "self", "start",
             "start_step", "using_ints", "vec", "correction", "two", "src", "value", "padding",
             "input", "memory_format", "Tensor_Scalar", "Tensor_Tensor", "Scalar_mode",
             "Tensor_mode", "indices", "sections", "stable", "decimals", "no_stats"]


def make_torch_ir_dict() -> None:
    lines = ["# libFuzzer dictionary for fuzz_torch_ir, written by tests/fuzz/make_seeds.py torch_ir_dict",
             "# (keys and tags of torch-ir.json, dtype tokens, the ops of src/import/lower/aten_ops.def)"]
    def esc(t: str) -> str:
        return t.replace("\\", "\\\\").replace('"', '\\"')
    toks = [f'"{t}"' for t in TORCH_IR_TOKENS]
    toks += [f'"{t}":' for t in ("ref", "int", "float", "bool", "str", "list", "none", "sym", "shape", "dtype")]
    toks += ['{"none":true}', '{"int":0}', '{"int":-1}', '{"float":"nan"}', '{"bool":true}',
             '{"list":[]}', '"shape":[]', '9223372036854775807', '-9223372036854775808', '1e308',
             '281474976710656']
    toks += [f'"{o}"' for o in OVERLOADS] + [f".{o}\"" for o in OVERLOADS]
    for base in sorted(handlers()):
        toks.append(f'"{base}.default"' if "." in base else f'"aten.{base}.default"')
        toks.append(f'"aten.{base}.' if "." not in base else f'"{base}.')
    lines += [f'"{esc(t)}"' for t in dict.fromkeys(toks)]
    (HERE / "torch_ir.dict").write_text("\n".join(lines) + "\n")
    print(f"torch_ir.dict: {len(lines) - 2} entries")


def main(argv: list[str]) -> int:
    which = argv or ["npy", "safetensors", "torch_ir", "torch_ir_dict"]
    for w in which:
        {"npy": make_npy, "safetensors": make_safetensors, "torch_ir": make_torch_ir,
         "torch_ir_dict": make_torch_ir_dict}[w]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
