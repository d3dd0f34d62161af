"""Reference data at more bindings of the shape symbols (--reference-shapes).

This module owns which bindings a dynamic export's reference.safetensors
covers besides the example, and the inputs made for them; _reference.py
runs eager torch on them and export.py writes ``b<k>/in::<id>``,
``b<k>/out::<i>`` and ``b<k>/out64::<i>`` (docs/design.md, "Shapes").

A spec is a comma-separated list of items (``DEFAULT_SPEC`` =
``min,mid,max,random``):

  ``min``     every symbol at its minimum; where eager torch fails there (a
              size-0 batch often does) or a guard forbids it, the next
              smallest values up to 2 are tried, then nearby values;
  ``max``     every symbol at its maximum;
  ``mid``     every symbol half-way between its minimum and the ``max``
              binding (its maximum when there is none);
  ``random``  uniform within the same bounds (a fixed seed: exports are
              reproducible); may be repeated;
  ``NAME=V[:NAME=V]...``  an explicit binding; unnamed symbols keep the hint.

Every binding satisfies the ranges and guards (a nearby binding is searched
when the first choice breaks a guard), differs from the example and from
the other bindings, and fits the size cap: its reference tensors within its
share of the budget left, and its largest intermediate value within the cap
(``max``, ``mid`` and ``random`` shrink toward the minimum until they fit;
the recorded values are the ones used).  Explicit bindings, ``min`` and
``max`` are chosen first, so a cap that shrinks ``max`` shrinks ``mid`` with
it; entries are numbered in the spec's order.

Inputs at a binding: an input with no symbolic axis is the example input
itself; floats are standard normal; integer and bool inputs are drawn from
the example's own values (with their frequencies) when it has at most
``SMALL_SET`` distinct values (attention masks, token types), else uniformly
within the example's [min, max] (token ids).  Inputs sharing a symbol share
its value, so an attention mask [B, S] matches the ids [B, S].
"""

from __future__ import annotations

import random
from typing import Any, Iterator

import torch

from . import _sym
from ._ir import ExportError

DEFAULT_SPEC = "min,mid,max,random"
KINDS = ("min", "mid", "max", "random")
SMALL_SET = 16
SEED = 0
_SHRINK_STEPS = 24   # f = 1, 2^-1/2, 1/2, ..., 2^-23/2 of the range
_REPAIR_TRIES = 256
DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i64": 8, "i32": 4, "i16": 2, "i8": 1,
               "u8": 1, "bool": 1, "u16": 2, "u32": 4, "u64": 8}


def parse_spec(spec: Any, symbols: list[dict]) -> list:
    """Items (a kind, or a dict name -> value) from a spec: True or "" for
    the default, a comma-separated string, or a list of strings and dicts."""
    if spec is True or spec == "" or spec is None:
        spec = DEFAULT_SPEC
    raw = spec.split(",") if isinstance(spec, str) else list(spec)
    names = {s["name"]: s for s in symbols}
    items: list = []
    for it in raw:
        if isinstance(it, str):
            it = it.strip()
            if it in KINDS:
                items.append(it)
                continue
            pairs = [p.partition("=") for p in it.split(":")]
            if not it or any(not sep for _, sep, _ in pairs):
                raise ExportError(f"--reference-shapes: '{it}' is none of {', '.join(KINDS)} "
                                  "and not NAME=V[:NAME=V]...")
            try:
                it = {k.strip(): int(v) for k, _, v in pairs}
            except ValueError:
                raise ExportError(f"--reference-shapes: '{it}': values must be integers") from None
        if not isinstance(it, dict):
            raise ExportError(f"reference_shapes: item {it!r} is not a string or a dict")
        for k, v in it.items():
            s = names.get(k)
            if s is None:
                raise ExportError(f"--reference-shapes: no symbol '{k}' "
                                  f"(symbols: {', '.join(names) or 'none'})")
            if not s["min"] <= int(v) <= s["max"]:
                raise ExportError(f"--reference-shapes: {k}={v} is outside [{s['min']}, "
                                  f"{s['max']}]")
        items.append(dict(it))
    return items


def _at(symbols: list[dict], f) -> dict[str, int]:
    return {s["name"]: f(s) for s in symbols}


def candidates(item: Any, symbols: list[dict], rng: random.Random) -> Iterator[dict]:
    """Bindings for one item, best first (before guards and size checks)."""
    if isinstance(item, dict):
        yield {s["name"]: int(item.get(s["name"], s["hint"])) for s in symbols}
        return
    if item == "min":
        for t in (0, 1, 2):
            yield _at(symbols, lambda s: min(max(s["min"], t), s["max"]))
        return
    for step in range(_SHRINK_STEPS):
        f = 0.5 ** (step / 2)
        if item == "mid":
            f *= 0.5
        if item == "random":
            yield _at(symbols, lambda s: rng.randint(s["min"], s["min"] + int((s["max"] - s["min"]) * f)))
        else:
            yield _at(symbols, lambda s: s["min"] + int((s["max"] - s["min"]) * f))


def satisfies(env: dict, symbols: list[dict], guards: list[dict]) -> bool:
    return (all(s["min"] <= env[s["name"]] <= s["max"] for s in symbols) and
            all(_sym.holds(g["lhs"], g["rel"], g["rhs"], env) for g in guards))


def repaired(env: dict, symbols: list[dict], guards: list[dict],
             rng: random.Random) -> dict | None:
    """``env`` if it satisfies the ranges and guards, else a nearby binding
    that does (random search at growing distances), else None."""
    if satisfies(env, symbols, guards):
        return env
    for i in range(_REPAIR_TRIES):
        r = 1 << (i // 16)
        near = {s["name"]: min(max(env[s["name"]] + rng.randint(-r, r), s["min"]), s["max"])
                for s in symbols}
        if satisfies(near, symbols, guards):
            return near
    return None


def _shape(e: dict, env: dict) -> list[int]:
    return [_sym.evaluate(d, env) for d in e["sym_shape"]] if "sym_shape" in e else list(e["shape"])


def _bytes(e: dict, env: dict) -> int:
    n = 1
    for d in _shape(e, env):
        n *= max(d, 0)
    return n * DTYPE_BYTES.get(e.get("dtype"), 8)


def estimate(ir: dict, env: dict, with64: bool) -> tuple[int, int]:
    """(bytes of the binding's reference tensors, bytes of its largest value)."""
    ref = sum(_bytes(e, env) for e in ir["inputs"])
    for e in ir["outputs"]:
        if "shape" in e:
            b = _bytes(e, env)
            ref += b * (3 if with64 and e["dtype"] in ("f32", "f16", "bf16") else 1)
    peak = 0
    for n in ir["nodes"]:
        for o in n["out"] if isinstance(n["out"], list) else [n["out"]]:
            if isinstance(o, dict) and "shape" in o:
                peak = max(peak, _bytes(o, env))
    return ref, peak


def output_shapes(ir: dict, env: dict) -> list[list[int] | None]:
    return [_shape(e, env) if "shape" in e else None for e in ir["outputs"]]


def make_inputs(ir: dict, examples: dict[str, torch.Tensor], env: dict,
                gen: torch.Generator) -> dict[str, torch.Tensor]:
    """Input id -> tensor at binding ``env`` (see the module docstring)."""
    out = {}
    for e in ir["inputs"]:
        ex = examples[e["id"]]
        if "sym_shape" not in e:
            out[e["id"]] = ex
            continue
        shape = _shape(e, env)
        if ex.is_floating_point():
            out[e["id"]] = torch.randn(shape, generator=gen).to(ex.dtype)
            continue
        flat = ex.reshape(-1)
        n = 1
        for d in shape:
            n *= d
        if flat.numel() == 0:
            t = torch.zeros(shape, dtype=ex.dtype)
        elif torch.unique(flat).numel() <= SMALL_SET or ex.dtype == torch.uint64:
            # (uint64: torch has no min/max for it, and its range is not int64's)
            t = flat[torch.randint(0, flat.numel(), (n,), generator=gen)].reshape(shape)
        else:
            wide = flat.to(torch.int64)  # uint16/uint32 have no min/max in torch either
            lo, hi = int(wide.min()), int(wide.max())
            t = torch.randint(lo, hi + 1, shape, generator=gen, dtype=torch.int64).to(ex.dtype)
        out[e["id"]] = t
    return out
