"""The eager runs behind the reference data: outputs, float64 twins, more bindings.

This module owns what eager torch computes for reference.safetensors besides
the example inputs: the model's outputs at the example (``eager_outputs``,
buffers restored afterwards), the same outputs from the model's float64 copy
(``Float64``, the arbiter `rlx verify` consults when rlx and float32 torch
disagree), their alignment with the program's numbered outputs
(``align_outputs``: the None outputs the program omits are dropped), and the
runs at more bindings of the shape symbols (``reference_bindings``: the
``reference_bindings`` entries and the ``b<k>/...`` tensors, within the size
cap).  Which bindings those are, and the inputs made for them, is
``_refshapes.py``'s; export.py writes the files.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import torch
from torch.utils import _pytree as pytree

from . import _refshapes
from ._ir import ExportError


def flatten(x: Any) -> list[Any]:
    """A pytree's leaves, None leaves kept (eager outputs as torch returns them)."""
    return pytree.tree_flatten(x, is_leaf=lambda v: v is None)[0]


def eager_outputs(model: torch.nn.Module, args: tuple) -> Any:
    """``model(*args)`` with the module's buffers restored afterwards.

    The exported program shares its weight tensors with the module, so a
    forward that mutates a buffer (a step counter, a cache) would otherwise
    change weights.safetensors after the fact and break parity."""
    saved = [(b, b.detach().clone()) for b in model.buffers()]
    try:
        out = model(*args)
        out = pytree.tree_map_only(torch.Tensor, lambda t: t.detach().clone(), out)
    finally:
        for b, v in saved:
            b.copy_(v)
    return out


class Float64:
    """The model's float64 copy, made once on first use, and its outputs.

    `rlx verify` consults these only when rlx and eager torch disagree by more
    than the float32 tolerance: on deep, badly conditioned networks eager
    float32 is itself that far from the exact result, and the float64 run says
    which side is off. Skipped for models whose float64 copy would exceed
    cap_mb, and for models that do not run in float64."""

    def __init__(self, model: torch.nn.Module, cap_mb: float):
        self.model, self.cap_mb, self.m64, self.failed = model, cap_mb, None, False

    def available(self) -> bool:
        if self.failed or self.cap_mb <= 0:
            return False
        if self.m64 is None:
            nbytes = sum(t.numel() * 8 for t in list(self.model.parameters()) +
                         list(self.model.buffers()) if t.is_floating_point())
            if nbytes > self.cap_mb * 1024 * 1024:
                self.failed = True
                return False
            try:
                self.m64 = copy.deepcopy(self.model).double()
            except Exception:  # noqa: BLE001 - a model that will not convert gets no arbiter
                self.failed = True
                return False
        return True

    def outputs(self, args: tuple, eager_out: Any) -> list | None:
        """One entry per output leaf (None where an output is not a float32/16
        tensor); None when nothing can be had."""
        leaves = flatten(eager_out)
        wanted = [isinstance(v, torch.Tensor) and v.dtype in (torch.float32, torch.float16,
                                                               torch.bfloat16) for v in leaves]
        if not any(wanted) or not self.available():
            return None
        try:
            a64 = pytree.tree_map_only(torch.Tensor,
                                       lambda t: t.double() if t.is_floating_point() else t, args)
            out = flatten(eager_outputs(self.m64, a64))
        except Exception:  # noqa: BLE001 - a model that will not run in f64 simply gets no arbiter
            return None
        if len(out) != len(leaves):
            return None
        return [o if w and isinstance(o, torch.Tensor) and o.dtype == torch.float64 and
                o.shape == v.shape else None for o, v, w in zip(out, leaves, wanted)]



def align_outputs(leaves: list, ir: dict, out64: list | None) -> tuple[list, list | None]:
    """Eager output leaves (and their float64 twins) numbered as the program's
    outputs: the None outputs the program omits are dropped."""
    omitted = set(ir.get("omitted_outputs", []))
    if omitted:
        if len(leaves) != len(ir["outputs"]) + len(omitted) or any(leaves[i] is not None for i in omitted):
            raise ExportError("eager outputs and the exported graph's None outputs do not line up")
        if out64:
            out64 = [v for i, v in enumerate(out64) if i not in omitted]
        leaves = [v for i, v in enumerate(leaves) if i not in omitted]
    if len(leaves) != len(ir["outputs"]):
        raise ExportError(f"eager model returned {len(leaves)} values but the exported graph "
                          f"has {len(ir['outputs'])} outputs")
    return leaves, out64


def _fmt_binding(env: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in env.items())


def _over(env: dict, nbytes: int, limit: int, cap_mb: float) -> str:
    mib = 1024 * 1024
    return (f"{_fmt_binding(env)} needs {nbytes / mib:.1f} MiB, over {limit / mib:.1f} MiB "
            f"(its share of --reference-shapes-cap-mb {cap_mb:g})")


def reference_bindings(model, args, ir: dict, io, user_leaves: list, *, spec, cap_mb: float,
                       f64: Float64, notes: list[str]) -> tuple[list[dict], dict]:
    """``reference_bindings`` entries and the ``b<k>/...`` tensors for the
    bindings ``spec`` asks for (see ``_refshapes``): each one eager torch runs
    at, whose outputs have the shapes the program's sym_shapes give, and that
    fits its share of ``cap_mb`` (what earlier bindings left, divided evenly
    among the bindings still to come).  Explicit bindings, ``min`` and
    ``max`` are chosen first; ``mid`` and ``random`` then lie within
    [min, the max binding chosen], so min <= mid <= max also when the cap
    shrinks the max.  Entries are numbered in the spec's order."""
    symbols, guards = ir["symbols"], ir["guards"]
    items = _refshapes.parse_spec(spec, symbols)
    hints = {s["name"]: s["hint"] for s in symbols}
    leaf_of = {n.name: i for i, n in enumerate(io.user_inputs)}
    examples = {e["id"]: user_leaves[leaf_of[e["id"]]] for e in ir["inputs"]}
    _, flat_spec = pytree.tree_flatten(args)
    cap = int(cap_mb * 1024 * 1024)
    budget = cap
    seen = {tuple(hints.values())}
    rank = {"min": 1, "max": 2, "mid": 3, "random": 4}
    order = sorted(range(len(items)), key=lambda i: (rank.get(items[i], 0)
                                                     if isinstance(items[i], str) else 0, i))
    chosen: dict[int, tuple[dict, dict]] = {}
    upper: dict[str, int] = {}
    for n_done, idx in enumerate(order):
        item = items[idx]
        label = item if isinstance(item, str) else _fmt_binding(item)
        rng = random.Random(_refshapes.SEED + idx)
        share = budget // (len(items) - n_done)  # what is left, shared by the bindings to come
        within = [dict(x, max=upper.get(x["name"], x["max"])) for x in symbols] \
            if item in ("mid", "random") else symbols
        why: list[str] = []
        failures = 0
        for cand in _refshapes.candidates(item, within, rng):
            env = _refshapes.repaired(cand, symbols, guards, rng)
            if env is None:
                why.append(f"no binding near {_fmt_binding(cand)} satisfies the guards")
                continue
            if tuple(env.values()) in seen:
                continue
            size, peak = _refshapes.estimate(ir, env, f64.available())
            if size > share or peak > cap:
                why.append(_over(env, max(size, peak), share if size > share else cap, cap_mb))
                continue
            gen = torch.Generator().manual_seed(_refshapes.SEED + 1000 * (idx + 1))
            ins = _refshapes.make_inputs(ir, examples, env, gen)
            leaves = list(user_leaves)
            for i, t in ins.items():
                leaves[leaf_of[i]] = t
            args_k = pytree.tree_unflatten(leaves, flat_spec)
            try:
                out = eager_outputs(model, args_k)
            except Exception as e:  # noqa: BLE001 - the binding is skipped, with the reason
                why.append(f"eager torch fails at {_fmt_binding(env)}: {type(e).__name__}: "
                           f"{str(e).splitlines()[0][:160] if str(e) else ''}")
                failures += 1
                if failures >= 3:
                    break
                continue
            outs, _ = align_outputs(flatten(out), ir, None)
            want = _refshapes.output_shapes(ir, env)
            bad = [i for i, (v, w) in enumerate(zip(outs, want))
                   if isinstance(v, torch.Tensor) and w is not None and list(v.shape) != w]
            if bad:
                i = bad[0]
                why.append(f"at {_fmt_binding(env)} eager output {i} has shape "
                           f"{list(outs[i].shape)} but the program says {want[i]} (torch "
                           f"specialized the trace to the example sizes)")
                continue
            _, o64 = align_outputs(flatten(out), ir, f64.outputs(args_k, out))
            new = {f"in::{i}": t for i, t in ins.items()}
            for i, v in enumerate(outs):
                if isinstance(v, torch.Tensor):
                    new[f"out::{i}"] = v
                if o64 and o64[i] is not None:
                    new[f"out64::{i}"] = o64[i]
            nbytes = sum(t.numel() * t.element_size() for t in new.values())
            if nbytes > share:
                why.append(_over(env, nbytes, share, cap_mb))
                continue
            budget -= nbytes
            seen.add(tuple(env.values()))
            chosen[idx] = (env, new)
            if item == "max":
                upper = dict(env)
            if why:
                notes.append(f"reference binding '{label}' is {_fmt_binding(env)}: "
                             + "; ".join(why[:2]))
            break
        if idx not in chosen:
            notes.append(f"reference binding '{label}' skipped: " +
                         ("; ".join(why[-2:]) if why else "it would repeat the example or "
                          "an earlier binding"))
    entries: list[dict] = []
    tensors: dict[str, torch.Tensor] = {}
    for idx in sorted(chosen):
        env, new = chosen[idx]
        k = len(entries) + 1
        entries.append({"k": k, "values": env})
        tensors.update({f"b{k}/{key}": t for key, t in new.items()})
    return entries, tensors
