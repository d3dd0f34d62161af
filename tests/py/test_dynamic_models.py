"""Dynamic shapes end to end on real architectures (docs/design.md, "Shapes").

Each model is built from a small configuration with random weights (nothing
is downloaded), exported with dynamic axes and ``--reference-shapes``, and
then

  1. ``rlx verify`` must pass at the example and at every reference binding;
  2. ``rlx run`` at a sequence of bindings A, B, A, C (seeded, random within
     the symbols' bounds), on inputs made here, must match eager torch under
     the parity rule of docs/design.md (f32: cosine >= 0.99999 and max abs
     error <= 1e-4 + 1e-4 * max|torch|; integers equal);
  3. ``rlx bench --binding A --binding B --binding A --binding C`` must
     reshape between those bindings in one process.

A model that torch.export cannot export with those axes is skipped with
torch's own message; anything rlx refuses or computes wrongly fails.

The second half: bindings `rlx run` must refuse with exit status 2 and a
message naming the input, the axis, the symbol and its bounds (or the
relation the model needs) — under build/rlx and, when it exists,
build-asan/rlx (``RLX_ASAN_BIN`` overrides).

Run: python3 -m pytest -q tests/py/test_dynamic_models.py
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
import torch
from torch import nn
from torch.export import Dim
from torch.utils import _pytree as pytree

from conftest import REPO, run_rlx

import rlx  # noqa: E402  (conftest puts python/ on sys.path)
from rlx import _sym  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "zoo"))
import models as zoo  # noqa: E402  (calibrate_batchnorm, perturb_norms)

ASAN_BIN = Path(os.environ.get("RLX_ASAN_BIN", REPO / "build-asan" / "rlx"))
ASAN_ENV = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0",
            "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}


# --------------------------------------------------------------------------
# The parity rule (docs/design.md, "Checking parity"), for f32 outputs


def parity(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape, f"{what}: shape {got.shape}, torch {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, torch {want.dtype}"
    if not np.issubdtype(want.dtype, np.floating):
        assert np.array_equal(got, want), f"{what}: integer values differ"
        return
    assert want.dtype == np.float32, f"{what}: only f32 outputs are checked here"
    fin = np.isfinite(want)
    assert np.array_equal(np.isfinite(got), fin) and np.array_equal(got[~fin], want[~fin]), \
        f"{what}: non-finite values differ"
    g, w = got[fin].astype(np.float64), want[fin].astype(np.float64)
    if not w.size:
        return
    err = float(np.abs(g - w).max())
    tol = 1e-4 + 1e-4 * float(np.abs(w).max())
    ng, nw = np.linalg.norm(g), np.linalg.norm(w)
    cos = 1.0 if ng == nw == 0 else float(g @ w / (ng * nw)) if ng and nw else 0.0
    assert cos >= 0.99999 and err <= tol, \
        f"{what}: cosine {cos:.9f}, max abs err {err:.3e} (tolerance {tol:.3e})"


# --------------------------------------------------------------------------
# Cases


@dataclasses.dataclass
class Case:
    name: str
    build: Callable[[], tuple[nn.Module, tuple]]
    dynamic: Any                       # rlx specs or torch's dynamic_shapes
    kinds: dict[str, Any]              # input name -> "float" | "mask" | ("ids", vocab)
    decomposition: str = "high"
    reference_cap_mb: float = 16


def ids_and_mask(vocab, batch, seq, seed=1):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (batch, seq), generator=g)
    mask = torch.ones(batch, seq, dtype=torch.int64)
    if batch > 1:
        mask[1, seq - 3:] = 0  # right padding in the second row
    return ids, mask


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        from transformers import BertConfig, BertModel
        self.m = BertModel(BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                                      num_attention_heads=2, intermediate_size=64,
                                      max_position_embeddings=64))

    def forward(self, input_ids, attention_mask):
        o = self.m(input_ids=input_ids, attention_mask=attention_mask)
        return o.last_hidden_state, o.pooler_output


class GPT2(nn.Module):
    def __init__(self):
        super().__init__()
        from transformers import GPT2Config, GPT2LMHeadModel
        self.m = GPT2LMHeadModel(GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2,
                                            n_positions=64, use_cache=False))

    def forward(self, input_ids):
        return self.m(input_ids=input_ids, use_cache=False).logits


class Llama(nn.Module):
    def __init__(self):
        super().__init__()
        from transformers import LlamaConfig, LlamaForCausalLM
        self.m = LlamaForCausalLM(LlamaConfig(
            vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
            use_cache=False))

    def forward(self, input_ids, attention_mask):
        return self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


class ViT(nn.Module):
    """transformers' ViT at any image size: the position table is resized
    (bicubic) to the patch grid (interpolate_pos_encoding)."""

    def __init__(self):
        super().__init__()
        from transformers import ViTConfig, ViTModel
        self.m = ViTModel(ViTConfig(image_size=32, patch_size=8, hidden_size=32,
                                    num_hidden_layers=2, num_attention_heads=2,
                                    intermediate_size=64))

    def forward(self, pixel_values):
        o = self.m(pixel_values=pixel_values, interpolate_pos_encoding=True)
        return o.last_hidden_state, o.pooler_output


class Swin(nn.Module):
    def __init__(self, depths):
        super().__init__()
        from transformers import SwinConfig, SwinModel
        self.m = SwinModel(SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=depths,
                                      num_heads=[1, 2][:len(depths)], window_size=4))

    def forward(self, pixel_values):
        o = self.m(pixel_values=pixel_values)
        return o.last_hidden_state, o.pooler_output


class Wav2Vec2(nn.Module):
    def __init__(self):
        super().__init__()
        from transformers import Wav2Vec2Config, Wav2Vec2Model
        self.m = Wav2Vec2Model(Wav2Vec2Config(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
            conv_dim=(16, 16, 16), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
            num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4))

    def forward(self, input_values):
        return self.m(input_values=input_values).last_hidden_state


class WhisperEncoder(nn.Module):
    """WhisperModel's encoder. transformers requires exactly
    2 * max_source_positions frames (3000 in the real models, 100 here), so
    the batch is the dynamic axis."""

    def __init__(self):
        super().__init__()
        from transformers import WhisperConfig, WhisperModel
        cfg = WhisperConfig(d_model=32, encoder_layers=2, encoder_attention_heads=2,
                            decoder_layers=1, decoder_attention_heads=2, encoder_ffn_dim=64,
                            decoder_ffn_dim=64, num_mel_bins=80, max_source_positions=50)
        self.m = WhisperModel(cfg).get_encoder()

    def forward(self, input_features):
        return self.m(input_features=input_features).last_hidden_state


def _text(cls, batch=2, seq=8, mask=True):
    def build():
        ids, m = ids_and_mask(100, batch, seq)
        return cls(), ((ids, m) if mask else (ids,))
    return build


def _image(cls, shape, *args):
    def build():
        return cls(*args), (torch.randn(*shape, generator=torch.Generator().manual_seed(1)),)
    return build


def _torchvision(fn, **kw):
    def build():
        import torchvision
        model = getattr(torchvision.models, fn)(weights=None, **kw).eval()
        x = torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(1))
        with torch.no_grad():  # trained-looking norms and statistics (tests/zoo/models.py)
            zoo.perturb_norms(model)
            zoo.calibrate_batchnorm(model, (x,))
        return model, (x,)
    return build


IMAGE = ["x:0:batch:1:4", "x:2:H:33:96", "x:3:W:33:96"]
TEXT = ["input_ids:0:batch:1:8", "input_ids:1:seq:1:64", "attention_mask:0:batch",
        "attention_mask:1:seq"]
IDS = ("ids", 100)


def _swin_padded():
    # 16h + 8 px: the patch grid 4h + 2 always needs 2 rows of window padding;
    # torch specializes sizes that cross between padding and none
    h, w = Dim("h", min=2, max=4), Dim("w", min=2, max=4)
    return {"pixel_values": {2: 16 * h + 8, 3: 16 * w + 8}}


CASES = [
    Case("bert", _text(Bert), TEXT, {"input_ids": IDS, "attention_mask": "mask"}),
    Case("gpt2", _text(GPT2, batch=1, mask=False), ["input_ids:1:seq:1:64"],
         {"input_ids": IDS}),
    Case("llama", _text(Llama, batch=2), ["input_ids:0:batch:1:4", "input_ids:1:seq:1:64",
                                          "attention_mask:0:batch", "attention_mask:1:seq"],
         {"input_ids": IDS, "attention_mask": "mask"}),
    Case("vit-image-size", _image(ViT, (2, 3, 32, 48)),
         ["pixel_values:0:batch:1:4", "pixel_values:2:H:16:64", "pixel_values:3:W:16:64"],
         {"pixel_values": "float"}),
    # the "aten" decomposition keeps upsample_bicubic2d whole (see the "high" case)
    Case("vit-image-size-aten", _image(ViT, (2, 3, 32, 48)),
         ["pixel_values:0:batch:1:4", "pixel_values:2:H:16:64", "pixel_values:3:W:16:64"],
         {"pixel_values": "float"}, decomposition="aten"),
    # torch.export: image sizes a multiple of 32 (patch 4 x window 4 x merge 2)
    # need no padding; others specialize (H % 4 == 0 and the padding branches)
    Case("swin-image-size", _image(Swin, (2, 3, 64, 96), [2, 2]),
         {"pixel_values": {2: 32 * Dim("h", min=2, max=4), 3: 32 * Dim("w", min=2, max=4)}},
         {"pixel_values": "float"}),
    Case("swin-image-size-padded", _image(Swin, (2, 3, 40, 56), [2]), _swin_padded(),
         {"pixel_values": "float"}),
    Case("swin-batch", _image(Swin, (2, 3, 64, 64), [2, 2]), ["pixel_values:0:batch:1:4"],
         {"pixel_values": "float"}),
    Case("resnet50", _torchvision("resnet50", num_classes=10), IMAGE, {"x": "float"}),
    Case("mobilenet_v3_small", _torchvision("mobilenet_v3_small", num_classes=10), IMAGE,
         {"x": "float"}),
    # torch.export: the feature extractor's strides (5, 2, 2) need a multiple
    # of 20 samples (torch's suggested fix: samples = 20 * n20)
    Case("wav2vec2", _image(Wav2Vec2, (2, 2000)),
         {"input_values": {0: Dim("batch", min=1, max=4),
                           1: 20 * Dim("n20", min=20, max=400)}},
         {"input_values": "float"}),
    Case("whisper-encoder", _image(WhisperEncoder, (2, 80, 100)),
         ["input_features:0:batch:1:8"], {"input_features": "float"}),
]


# --------------------------------------------------------------------------
# Helpers


def export(case: Case, out: Path) -> dict:
    """The export, or a skip with torch's message when torch.export itself fails."""
    torch.manual_seed(0)
    model, inputs = case.build()
    model.eval()
    try:
        s = rlx.export_program(model, inputs, out, dynamic=case.dynamic, reference_shapes=True,
                               reference_shapes_cap_mb=case.reference_cap_mb,
                               decomposition=case.decomposition, check=True)
    except rlx.ExportError as e:
        msg = str(e)
        parts = msg.split("; torch.export (strict=True) failed: ")
        if msg.startswith("torch.export (strict=False) failed: ") and len(parts) == 2:
            pytest.skip(f"torch.export cannot export {case.name} with these dynamic axes: "
                        f"{parts[0]}")
        raise
    assert s["check"] == "passed", f"rlx refuses {case.name}: {s['check_message']}"
    return {"model": model, "summary": s,
            "ir": json.loads((out / "torch-ir.json").read_text())}


def satisfies(ir: dict, env: dict) -> bool:
    syms = {s["name"]: s for s in ir["symbols"]}
    return (all(syms[k]["min"] <= v <= syms[k]["max"] for k, v in env.items())
            and all(_sym.holds(g["lhs"], g["rel"], g["rhs"], env) for g in ir["guards"]))


def random_bindings(ir: dict, n: int, seed: int) -> list[dict]:
    """n distinct bindings of the program's symbols within their bounds and
    guards, none the example."""
    rng = random.Random(seed)
    syms = ir["symbols"]
    seen = [{s["name"]: s["hint"] for s in syms}]
    for _ in range(1000):
        if len(seen) == n + 1:
            break
        env = {s["name"]: rng.randint(s["min"], s["max"]) for s in syms}
        if env not in seen and satisfies(ir, env):
            seen.append(env)
    assert len(seen) == n + 1, f"no {n} distinct bindings found for {syms}"
    return seen[1:]


def make_input(kind, shape: list[int], rng: np.random.Generator) -> np.ndarray:
    if kind == "float":
        return rng.standard_normal(shape).astype(np.float32)
    if kind == "mask":  # right padding, every row keeps at least one position
        batch, seq = shape
        lens = rng.integers(1, seq + 1, size=batch)
        return (np.arange(seq)[None, :] < lens[:, None]).astype(np.int64)
    assert kind[0] == "ids"
    return rng.integers(0, kind[1], size=shape).astype(np.int64)


def inputs_at(case: Case, ir: dict, env: dict, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for e in ir["inputs"]:
        shape = [_sym.evaluate(d, env) for d in e.get("sym_shape", e["shape"])]
        out[e["id"]] = make_input(case.kinds[e["id"]], shape, rng)
    return out


def eager(model: nn.Module, ins: dict[str, np.ndarray]) -> list[np.ndarray]:
    with torch.no_grad():
        got = model(*[torch.from_numpy(v) for v in ins.values()])
    return [t.numpy() for t in pytree.tree_flatten(got)[0] if t is not None]


def binding_arg(ins: dict[str, np.ndarray]) -> str:
    return ",".join(f"{k}={'x'.join(map(str, v.shape))}" for k, v in ins.items())


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


# --------------------------------------------------------------------------
# The models


@pytest.fixture
def rlx_env(rlx_bin, monkeypatch):
    monkeypatch.setenv("RLX_BIN", str(rlx_bin))  # the exporter's support check
    return rlx_bin


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_dynamic_model(rlx_env, tmp_path, case):
    rlx_bin = rlx_env
    out = tmp_path / case.name
    ex = export(case, out)
    ir, model, s = ex["ir"], ex["model"], ex["summary"]
    assert ir["symbols"] and len(s["reference_bindings"]) >= 3, s["reference_bindings"]

    # 1. the example and every reference binding, in one process
    r = run_rlx(rlx_bin, "verify", out, "--json", out / "verify.json")
    assert r.returncode == 0 and "parity: PASS" in r.stdout, r.stdout + r.stderr
    rep = json.loads((out / "verify.json").read_text())
    assert [b["k"] for b in rep["bindings"]] == [b["k"] for b in s["reference_bindings"]]
    for b in rep["bindings"]:
        want = next(x["values"] for x in s["reference_bindings"] if x["k"] == b["k"])
        assert b["values"] == want and b["pass"], b

    # 2. rlx run at A, B, A, C (fresh inputs each time) against eager torch
    a, b, c = random_bindings(ir, 3, seed_of(case.name))
    sequence = [a, b, a, c]
    for step, env in enumerate(sequence):
        ins = inputs_at(case, ir, env, seed_of(case.name) + step)
        args = []
        for k, v in ins.items():
            np.save(tmp_path / f"{k}_{step}.npy", v)
            args += ["--input", f"{k}={tmp_path / f'{k}_{step}.npy'}"]
        od = tmp_path / f"run{step}"
        r = run_rlx(rlx_bin, "run", out, *args, "--output-dir", od)
        assert r.returncode == 0, f"rlx run at {env}: {r.stdout}{r.stderr}"
        want = eager(model, ins)
        assert len(want) == len(ir["outputs"])
        for i, w in enumerate(want):
            if np.issubdtype(w.dtype, np.floating):  # parity must not be vacuous
                assert np.abs(w).max() > 1e-3, f"out[{i}] at {env} is ~0 in eager torch"
            parity(np.load(od / f"out_{i}.npy"), w, f"{case.name} out[{i}] at {env}")

    # 3. the same bindings, one process, reshaping between them
    bargs = []
    for step, env in enumerate(sequence):
        bargs += ["--binding", binding_arg(inputs_at(case, ir, env, step))]
    r = run_rlx(rlx_bin, "bench", out, *bargs, "--iters", "1", "--warmup", "0")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("planned in") == len(sequence), r.stdout


def test_verify_json_keeps_binding_index_and_symbols_apart(rlx_bin, tmp_path):
    """`rlx verify --json`: each binding's index ("k") and pass flag are not
    overwritten by a symbol of the same name."""
    m, x = rlx.export.load_model(str(REPO / "tests" / "models" / "mlp.py"))
    out = tmp_path / "mlp"
    rlx.export_program(m, x, out, dynamic=["x:0:k:1:8", "x:1:pass:1:8"],
                       reference_shapes="k=3:pass=5,k=1:pass=1", check=False)
    r = run_rlx(rlx_bin, "verify", out, "--json", out / "v.json")
    assert r.returncode == 0 and "binding 1: k=3, pass=5" in r.stdout, r.stdout + r.stderr
    text = (out / "v.json").read_text()
    b = json.loads(text)["bindings"]
    assert [x["k"] for x in b] == [1, 2] and all(x["pass"] is True for x in b), text
    assert [x["values"] for x in b] == [{"k": 3, "pass": 5}, {"k": 1, "pass": 1}], text


# --------------------------------------------------------------------------
# Bindings rlx must refuse


class Pool(nn.Module):
    """x [batch, seq, 16] f32 and mask [batch, seq] -> [batch, 8]: a static axis beside two
    shared symbols."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 8)

    def forward(self, x, mask):
        return (self.lin(x) * mask.unsqueeze(-1)).sum(1)


class Slice(nn.Module):
    """x[:, :y.shape[1]]: torch guards t <= s (and s != t: the slice is not the identity)."""

    def forward(self, x, y):
        return x[:, :y.shape[1]] * 2


class Shift(nn.Module):
    """y's axis 1 is x's plus one (a derived Dim)."""

    def forward(self, x, y):
        return x + y[:, 1:]


@pytest.fixture(scope="module")
def bad_exports(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad")
    torch.manual_seed(0)
    ids, mask = ids_and_mask(100, 2, 8)
    rlx.export_program(Bert().eval(), (ids, mask), root / "bert", dynamic=TEXT, check=False)
    rlx.export_program(Pool(), (torch.randn(2, 6, 16), torch.ones(2, 6)), root / "pool",
                       dynamic=["x:0:batch:1:8", "x:1:seq:2:32", "mask:0:batch", "mask:1:seq"],
                       check=False)
    rlx.export_program(Slice(), (torch.randn(2, 10), torch.randn(2, 4)), root / "slice",
                       dynamic=["x:1:s:1:100", "y:1:t:1:100"], check=False)
    L = Dim("L", min=1, max=50)
    rlx.export_program(Shift(), (torch.randn(2, 10), torch.randn(2, 11)), root / "shift",
                       dynamic={"x": {1: L}, "y": {1: L + 1}}, check=False)
    return root


def _ids(*shape, dtype=np.int64):
    return np.random.default_rng(0).integers(0, 100, size=shape).astype(dtype)


def _ones(*shape, dtype=np.int64):
    return np.ones(shape, dtype)


def _f(*shape, dtype=np.float32):
    return np.random.default_rng(0).standard_normal(shape).astype(dtype)


# (id, model, inputs, what the message must say)
BAD = [
    ("seq-above-max", "bert", {"input_ids": _ids(1, 65), "attention_mask": _ones(1, 65)},
     "input 'input_ids' axis 1: seq = 65 is outside its bounds [1, 64]"),
    ("seq-below-min", "bert", {"input_ids": _ids(1, 0), "attention_mask": _ones(1, 0)},
     "input 'input_ids' axis 1: seq = 0 is outside its bounds [1, 64]"),
    ("batch-above-max", "bert", {"input_ids": _ids(9, 4), "attention_mask": _ones(9, 4)},
     "input 'input_ids' axis 0: batch = 9 is outside its bounds [1, 8]"),
    ("seq-below-min-pool", "pool", {"x": _f(2, 1, 16), "mask": _f(2, 1)},
     "input 'x' axis 1: seq = 1 is outside its bounds [2, 32]"),
    ("symbol-mismatch-ids-mask", "bert", {"input_ids": _ids(1, 10), "attention_mask": _ones(1, 12)},
     "input 'attention_mask' axis 1 is 12, but input 'input_ids' axis 1 gave seq = 10: "
     "the model needs them equal"),
    ("symbol-mismatch-batch", "pool", {"x": _f(2, 6, 16), "mask": _f(3, 6)},
     "input 'mask' axis 0 is 3, but input 'x' axis 0 gave batch = 2: the model needs them equal"),
    ("rank-low", "bert", {"input_ids": _ids(3), "attention_mask": _ones(1, 10)},
     "input 'input_ids' is i64 [batch, seq]; the view given is i64 [3]"),
    ("rank-high", "bert", {"input_ids": _ids(1, 10, 1), "attention_mask": _ones(1, 10)},
     "input 'input_ids' is i64 [batch, seq]; the view given is i64 [1, 10, 1]"),
    ("dtype-float-ids", "bert", {"input_ids": _ids(1, 10, dtype=np.float32),
                                 "attention_mask": _ones(1, 10)},
     "input 'input_ids' is i64 [batch, seq]; the view given is f32 [1, 10]"),
    ("dtype-i32-ids", "bert", {"input_ids": _ids(1, 10, dtype=np.int32),
                               "attention_mask": _ones(1, 10)},
     "input 'input_ids' is i64 [batch, seq]; the view given is i32 [1, 10]"),
    ("dtype-f64-mask", "pool", {"x": _f(2, 6, 16), "mask": _f(2, 6, dtype=np.float64)},
     "input 'mask' is f32 [batch, seq]; the view given is f64 [2, 6]"),
    ("static-axis", "pool", {"x": _f(2, 6, 17), "mask": _f(2, 6)},
     "input 'x' axis 2 is 17; the model was exported with a static 16 there"),
    ("guard-le", "slice", {"x": _f(2, 5), "y": _f(2, 7)},
     "these input shapes break t <= s (7 <= 5), which the model assumes"),
    ("guard-ne", "slice", {"x": _f(2, 5), "y": _f(2, 5)},
     "these input shapes break s != t (5 != 5), which the model assumes"),
    ("derived-dim", "shift", {"x": _f(2, 7), "y": _f(2, 7)},
     "input 'y' axis 1 is 7; the model needs L + 1 = 8 there"),
    ("derived-dim-above-max", "shift", {"x": _f(2, 51), "y": _f(2, 52)},
     "input 'x' axis 1: L = 51 is outside its bounds [1, 50]"),
]


def binaries():
    yield pytest.param("release", id="release")
    yield pytest.param("asan", id="asan", marks=pytest.mark.skipif(
        not ASAN_BIN.is_file(), reason=f"no ASan build at {ASAN_BIN} "
        "(cmake -B build-asan -DCMAKE_BUILD_TYPE=Debug -DRLX_SANITIZE=ON)"))


def _run(which, rlx_bin, *args):
    if which == "asan":
        env = {**os.environ, **ASAN_ENV}
        return subprocess.run([str(ASAN_BIN), *map(str, args)], capture_output=True, text=True,
                              timeout=600, env=env)
    return run_rlx(rlx_bin, *args)


def _clean(r, which):
    if which == "asan":
        assert "AddressSanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr
        assert "LeakSanitizer" not in r.stderr, r.stderr


@pytest.mark.parametrize("which", list(binaries()))
@pytest.mark.parametrize("case,model,inputs,want", BAD, ids=[b[0] for b in BAD])
def test_bad_binding_is_refused(rlx_bin, bad_exports, tmp_path, which, case, model, inputs, want):
    args = []
    for k, v in inputs.items():
        np.save(tmp_path / f"{k}.npy", v)
        args += ["--input", f"{k}={tmp_path / f'{k}.npy'}"]
    r = _run(which, rlx_bin, "run", bad_exports / model, *args, "--output-dir", tmp_path / "o")
    _clean(r, which)
    assert r.returncode == 2, r.stdout + r.stderr
    assert want in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()  # nothing written


@pytest.mark.parametrize("which", list(binaries()))
def test_good_bindings_after_bad_ones(rlx_bin, bad_exports, tmp_path, which):
    """The same exports run at allowed bindings (so the refusals above are about the
    bindings), verify passes, and bench reshapes across bindings, under each binary."""
    for step, (shape, seq) in enumerate([((1, 1), 1), ((8, 64), 64), ((3, 17), 17)]):
        np.save(tmp_path / "ids.npy", _ids(*shape))
        np.save(tmp_path / "mask.npy", _ones(*shape))
        r = _run(which, rlx_bin, "run", bad_exports / "bert", "--input",
                 f"input_ids={tmp_path / 'ids.npy'}", "--input",
                 f"attention_mask={tmp_path / 'mask.npy'}", "--output-dir", tmp_path / f"o{step}")
        _clean(r, which)
        assert r.returncode == 0, r.stdout + r.stderr
        assert np.load(tmp_path / f"o{step}" / "out_0.npy").shape == (*shape, 32)
    for model in ("bert", "pool", "slice", "shift"):
        r = _run(which, rlx_bin, "verify", bad_exports / model)
        _clean(r, which)
        assert r.returncode == 0 and "parity: PASS" in r.stdout, r.stdout + r.stderr
    r = _run(which, rlx_bin, "bench", bad_exports / "bert", "--binding", "input_ids=1x3",
             "--binding", "input_ids=8x64", "--binding", "input_ids=1x3", "--iters", "1",
             "--warmup", "0")
    _clean(r, which)
    assert r.returncode == 0, r.stdout + r.stderr
    # bench refuses a bad binding as run does
    r = _run(which, rlx_bin, "bench", bad_exports / "bert", "--binding", "input_ids=1x65",
             "--iters", "1", "--warmup", "0")
    _clean(r, which)
    assert r.returncode == 2 and "seq = 65 is outside its bounds [1, 64]" in r.stderr, r.stderr
