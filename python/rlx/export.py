"""Export a PyTorch model to an rlx export directory.

    python3 -m rlx.export MODEL.py -o OUT [--decomposition aten|high|core]
        [--intermediates] [--intermediates-cap-mb N] [--no-reference]
        [--dynamic INPUT:AXIS:NAME[:MIN:MAX]]... [--default-max N]
        [--reference-shapes [SPEC]] [--reference-shapes-cap-mb N]
        [--set KEY=VALUE]... [--name NAME] [--no-check] [--quiet]

This module owns the command line, loading MODEL.py, running
``torch.export`` and the decompositions, writing the files
(torch-ir.json, weights.safetensors, reference.safetensors,
intermediates.safetensors) and the auto-decompose loop that re-exports when
the rlx binary reports ops it does not support.  The graph -> JSON
translation lives in ``_ir.py``, the shape symbols in ``_shapes.py`` and
``_sym.py``, the eager runs behind the reference data (at the example and,
with --reference-shapes, at more bindings of the shape symbols) in
``_reference.py``, the choice of those bindings in ``_refshapes.py``.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any, Iterable

import torch
from torch.utils import _pytree as pytree

from . import _ir, _refshapes, _shapes
from ._decomp import (DECOMPOSITIONS, decompose, decompose_candidates, find_rlx_binary,
                      force_ops, parse_unsupported, run_check)
from ._ir import ExportError
from ._reference import Float64, align_outputs, eager_outputs, flatten, reference_bindings


def producer() -> str:
    return f"rlx.export / torch {torch.__version__}"


def _log(quiet: bool, msg: str) -> None:
    if not quiet:
        print(msg, file=sys.stderr)


class _Progress:
    """Progress of a long export on stderr: each step as it starts, with the
    time since the export began (quiet: nothing)."""

    def __init__(self, quiet: bool):
        import time
        self.quiet, self.t0, self.time = quiet, time.perf_counter(), time.perf_counter

    def __call__(self, msg: str) -> None:
        if not self.quiet:
            print(f"rlx.export: [{self.time() - self.t0:6.1f} s] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Dynamic shapes


def parse_dynamic_spec(spec: str) -> tuple[str, int, str, int | None, int | None]:
    parts = spec.split(":")
    if len(parts) not in (3, 5):
        raise ExportError(f"--dynamic '{spec}': expected INPUT:AXIS:NAME or "
                          "INPUT:AXIS:NAME:MIN:MAX")
    try:
        axis = int(parts[1])
        lo = int(parts[3]) if len(parts) == 5 else None
        hi = int(parts[4]) if len(parts) == 5 else None
    except ValueError:
        raise ExportError(f"--dynamic '{spec}': AXIS, MIN and MAX must be integers") from None
    if not parts[0] or not (parts[2].isidentifier() or _derived(parts[2])):
        raise ExportError(f"--dynamic '{spec}': INPUT must be non-empty and NAME an identifier, or "
                          "K*NAME[+C] for an axis that is a multiple of the symbol NAME (MIN and MAX "
                          "then bound NAME)")
    return parts[0], axis, parts[2], lo, hi


def _derived(name: str) -> tuple[int, str, int] | None:
    """``K*NAME`` or ``K*NAME+C`` (K >= 1, C >= 0 integers): (K, NAME, C)."""
    import re
    m = re.fullmatch(r"\s*(\d+)\s*\*\s*([A-Za-z_]\w*)\s*(?:\+\s*(\d+))?\s*", name)
    if not m or int(m.group(1)) < 1:
        return None
    return int(m.group(1)), m.group(2), int(m.group(3) or 0)


def _is_spec_list(dynamic) -> bool:
    """Whether ``dynamic`` is a list of rlx specs (strings, or tuples
    (input, axis, name[, min, max])) rather than torch's dynamic_shapes."""
    if not isinstance(dynamic, (list, tuple)):
        return False
    return all(isinstance(s, str) or (
        isinstance(s, (list, tuple)) and len(s) in (3, 5) and isinstance(s[0], (str, int))
        and isinstance(s[1], int) and isinstance(s[2], str)) for s in dynamic)


def dynamic_shapes_spec(model: torch.nn.Module, args: tuple, dynamic) -> Any:
    """``dynamic_shapes`` for torch.export from a list of specs (strings
    ``INPUT:AXIS:NAME[:MIN:MAX]`` or tuples of the same fields).  Anything
    else (a dict, a tuple of per-input dicts of ``torch.export.Dim``) is taken
    to be torch's own ``dynamic_shapes`` and passed through unchanged."""
    if not dynamic:
        return None
    if not _is_spec_list(dynamic):
        return dynamic
    try:
        sig = [p for p in inspect.signature(model.forward).parameters.values()
               if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):
        sig = []
    params = [p.name for p in sig]
    var = next((i for i, p in enumerate(sig) if p.kind == p.VAR_POSITIONAL), None)
    names = params[:var] if var is not None else params  # inputs in *args go by position only
    parsed = []
    ranges: dict[str, dict] = {}  # symbol -> its explicit range; every mention must agree
    for spec in dynamic:
        inp, axis, name, lo, hi = parse_dynamic_spec(spec) if isinstance(spec, str) else (
            tuple(spec) + (None, None))[:5]
        der = _derived(name) or (1, name, 0)
        kw = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
        if kw and ranges.get(der[1]) and kw != ranges[der[1]]:
            raise ExportError(f"--dynamic '{spec}': symbol '{der[1]}' was given another range before "
                              f"([{ranges[der[1]].get('min')}, {ranges[der[1]].get('max')}])")
        if kw or der[1] not in ranges:
            ranges[der[1]] = kw
        parsed.append((spec, inp, axis, der))
    dims = {base: torch.export.Dim(base, **kw) for base, kw in ranges.items()}
    per_input: list[dict | None] = [None] * len(args)
    for spec, inp, axis, (k, base, c) in parsed:
        if isinstance(inp, int) or str(inp).isdigit():
            pos = int(inp)
        elif inp in names[:len(args)]:
            pos = names.index(inp)
        else:
            raise ExportError(f"--dynamic: no positional input named '{inp}' (inputs: "
                              f"{', '.join(names[:len(args)]) or 'none'}"
                              f"{'; those in *' + params[var] + ' go by position: 0, 1, ...' if var is not None else ''})")
        if not 0 <= pos < len(args) or not isinstance(args[pos], torch.Tensor):
            raise ExportError(f"--dynamic: input '{inp}' is not a tensor example input")
        rank = args[pos].dim()
        if not -rank <= axis < rank:
            raise ExportError(f"--dynamic: axis {axis} out of range for input '{inp}' "
                              f"(rank {rank})")
        d = dims[base]
        if k != 1:
            d = d * k
        if c:
            d = d + c
        per_input[pos] = per_input[pos] or {}
        per_input[pos][axis % rank] = d
    if var is not None:  # forward(x, *args): torch wants the extra inputs keyed by the *args name
        named = {p: per_input[i] for i, p in enumerate(params[:var])}
        named[params[var]] = tuple(per_input[var:])
        return named
    return tuple(per_input)


# --------------------------------------------------------------------------
# Files


def _as_stored(t: torch.Tensor) -> torch.Tensor:
    """A tensor as safetensors stores it: a complex one as its real pairs
    (view_as_real: the component dtype, shape + [2]; docs/design.md,
    "Complex numbers")."""
    t = t.detach().cpu()
    if t.is_complex():
        t = torch.view_as_real(t.resolve_conj().resolve_neg())
    return t.contiguous().clone()


def _save(tensors: dict[str, torch.Tensor], path: Path, metadata: dict | None = None) -> None:
    from safetensors.torch import save_file
    if not tensors:
        if metadata:
            save_file({}, str(path), metadata=metadata)
        else:
            path.write_bytes(b"")
        return
    save_file({k: _as_stored(v) for k, v in tensors.items()},
              str(path), metadata=metadata)


def write_intermediates(values: dict[str, torch.Tensor], keep_always: set[str], path: Path,
                        cap_bytes: int) -> dict:
    names = list(values)
    size = {n: values[n].numel() * values[n].element_size() for n in names}
    kept = names
    if sum(size.values()) > cap_bytes:
        # Keep the nodes that feed outputs, and as many others as fit, evenly
        # spaced in topological order (largest count that fits, by bisection).
        must = [n for n in names if n in keep_always]
        rest = [n for n in names if n not in keep_always]
        budget = cap_bytes - sum(size[n] for n in must)

        def spaced(k: int) -> list[str]:
            if k <= 0:
                return []
            if k == 1:
                return [rest[0]]
            return [rest[i] for i in sorted({round(i * (len(rest) - 1) / (k - 1))
                                             for i in range(k)})]

        lo, hi = 0, len(rest)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if sum(size[n] for n in spaced(mid)) <= budget:
                lo = mid
            else:
                hi = mid - 1
        keep = set(must) | set(spaced(lo))
        kept = [n for n in names if n in keep]
    meta = {"producer": producer(), "torch": torch.__version__,
            "sampled": "true" if len(kept) < len(names) else "false",
            "kept": str(len(kept)), "total": str(len(names))}
    _save({n: values[n] for n in kept}, path, meta)
    return {"kept": len(kept), "total": len(names), "bytes": sum(size[n] for n in kept)}


# --------------------------------------------------------------------------
# The exporter


def _as_tuple(example_inputs: Any) -> tuple:
    if isinstance(example_inputs, torch.Tensor):
        return (example_inputs,)
    if isinstance(example_inputs, list):
        return tuple(example_inputs)
    if not isinstance(example_inputs, tuple):
        raise ExportError(f"example_inputs must be a tensor or a tuple, not "
                          f"{type(example_inputs).__name__}")
    return example_inputs


def _write_round(ep, args, eager_out, out_dir: Path, *, model_name, decomposition,
                 write_reference, intermediates, intermediates_cap_mb, out64=None, dims=None,
                 default_max=None, notes=None, bindings=None) -> dict:
    """Write one round's files; ``bindings(ir, io, user_leaves)`` gives the
    reference data at more bindings of the shape symbols (``reference_bindings``
    entries and tensors), None for none."""
    io = _ir.classify_placeholders(ep)
    ir = _ir.build_ir(ep, model_name=model_name, decomposition=decomposition,
                      producer=producer(), io=io, dims=dims, default_max=default_max,
                      notes=notes)
    # A None among the model's outputs (e.g. a pooler a config disables) carries
    # no data: it is left out of the program, which numbers only real outputs;
    # the IR lists where the Nones were ("omitted_outputs", eager positions).
    keep = [i for i, o in enumerate(ir["outputs"]) if o.get("const") != {"none": True}]
    if len(keep) != len(ir["outputs"]):
        ir["omitted_outputs"] = [i for i in range(len(ir["outputs"])) if i not in keep]
        ir["outputs"] = [ir["outputs"][i] for i in keep]
        if not ir["outputs"]:
            raise ExportError("the model returns only None")
    user_leaves = pytree.tree_flatten(args)[0]  # as torch.export flattens them (None drops)
    if len(user_leaves) != len(io.user_inputs):
        raise ExportError(f"the graph has {len(io.user_inputs)} user inputs but the example "
                          f"inputs flatten to {len(user_leaves)} values")
    extra_refs: dict[str, torch.Tensor] = {}
    if write_reference and bindings is not None and ir.get("symbols"):
        entries, extra_refs = bindings(ir, io, user_leaves)
        if entries:
            ir["reference_bindings"] = entries
    paths = {"ir": out_dir / "torch-ir.json", "weights": out_dir / "weights.safetensors"}
    paths["ir"].write_text(_ir.dumps(ir))
    # states start at zeros unless the file holds their initial value
    _save({w.key: w.tensor for w in io.weights + [s for s in io.states if s.tensor.any()]},
          paths["weights"])

    if write_reference:
        ref = {}
        input_ids = {e["id"] for e in ir["inputs"]}
        for node, val in zip(io.user_inputs, user_leaves):
            if node.name in input_ids and isinstance(val, torch.Tensor):
                ref[f"in::{node.name}"] = val
        leaves, out64 = align_outputs(flatten(eager_out), ir, out64)
        for i, v in enumerate(leaves):
            if isinstance(v, torch.Tensor):
                ref[f"out::{i}"] = v
            if out64 and out64[i] is not None:
                ref[f"out64::{i}"] = out64[i]
        ref.update(extra_refs)
        meta = {"producer": producer(), "torch": torch.__version__}
        if "reference_bindings" in ir:
            meta["reference_bindings"] = json.dumps(ir["reference_bindings"])
        paths["reference"] = out_dir / "reference.safetensors"
        _save(ref, paths["reference"], meta)
    else:  # never leave a stale reference from an earlier export beside a new graph
        (out_dir / "reference.safetensors").unlink(missing_ok=True)

    inter = None
    if intermediates:
        values = _ir.run_graph_recording(ep, _ir.flat_graph_args(ep, io, user_leaves))
        feeds = {o["ref"] for o in ir["outputs"] if "ref" in o}
        paths["intermediates"] = out_dir / "intermediates.safetensors"
        inter = write_intermediates(values, feeds, paths["intermediates"],
                                    int(intermediates_cap_mb * 1024 * 1024))
    else:
        (out_dir / "intermediates.safetensors").unlink(missing_ok=True)
    return {"ir": ir, "paths": {k: str(v) for k, v in paths.items()}, "intermediates": inter}


@contextlib.contextmanager
def _traceable_nn():
    """torch.nn code that branches on tensor values, made traceable.

    nn.Transformer / TransformerEncoder / TransformerDecoder, given a mask and
    no `is_causal` hint, compare the mask's values with a causal mask to pick
    a faster kernel (`_detect_is_causal_mask`), a data-dependent branch that
    torch.export refuses. During export the check answers "not known to be
    causal": the mask is then applied as given, which is the same computation
    (torch documents `is_causal=False` with a causal mask as merely slower)."""
    from torch.nn.modules import transformer as tr
    orig = getattr(tr, "_detect_is_causal_mask", None)
    if orig is None:
        yield
        return

    def detect(mask, is_causal=None, size=None):
        return bool(is_causal) if is_causal is not None else False

    tr._detect_is_causal_mask = detect
    try:
        yield
    finally:
        tr._detect_is_causal_mask = orig


def _specialized_dims(ep, dims) -> list[str]:
    """The requested dynamic axes (``dims``: (flat user input, axis) -> Dim)
    that ``ep`` recorded as plain integers, as "NAME (input i, axis a)"."""
    if not dims:
        return []
    user = set(ep.graph_signature.user_inputs)
    users = [n for n in ep.graph.nodes if n.op == "placeholder" and n.name in user]
    lost = []
    for (i, axis), d in sorted(dims.items()):
        val = users[i].meta.get("val") if i < len(users) else None
        shape = getattr(val, "shape", None)
        if shape is None or axis >= len(shape):
            continue
        size = shape[axis]
        if isinstance(size, int) or (isinstance(size, torch.SymInt) and size.node.expr.is_number):
            lost.append(f"{getattr(d, '__name__', str(d))} (input {i}, axis {axis})")
    return lost


def _check_dims_kept(base, ep, dims, errors, what) -> None:
    """Raises when torch specialized a requested dynamic axis (the strict
    tracer and run_decompositions do that, silently, when one of their guards
    does not hold over the whole range)."""
    lost = _specialized_dims(base, dims) or _specialized_dims(ep, dims)
    if lost:
        why = f"; torch's own message: {errors[0]}" if errors else ""
        raise ExportError(
            f"torch specialized {', '.join(lost)} to the example value while {what}: a shape guard on it "
            f"does not hold over the requested range{why}. Narrow the range (or leave the axis static)")


def export_program(model: torch.nn.Module, example_inputs: Any, out_dir, *,
                   model_name: str | None = None, decomposition: str = "high",
                   write_reference: bool = True, intermediates: bool = False,
                   intermediates_cap_mb: float = 256, dynamic=None, check: bool = True,
                   max_decompose_rounds: int = 4, force_decompose: Iterable = (),
                   reference64_cap_mb: float = 2048, reference_shapes=None,
                   reference_shapes_cap_mb: float = 64, default_max: int | None = None,
                   quiet: bool = True) -> dict:
    """Export ``model`` on ``example_inputs`` into ``out_dir``; returns a summary dict.

    With ``write_reference``, reference.safetensors holds the example inputs
    (``in::<id>``), eager torch's outputs (``out::<i>``) and, for models whose
    float64 copy fits in ``reference64_cap_mb`` (0 disables), the same outputs
    computed in float64 (``out64::<i>``), the arbiter `rlx verify` consults
    when rlx and torch disagree by more than float32 tolerance.

    ``dynamic``: rlx specs (``"INPUT:AXIS:NAME[:MIN:MAX]"`` strings or
    tuples of those fields) or torch's own ``dynamic_shapes``; the Dim names
    name the program's shape symbols.  A symbol torch leaves unbounded gets
    max ``default_max`` (``_shapes.DEFAULT_MAX``, 4096).
    ``reference_shapes``: also store reference data at more bindings of the
    symbols — True for the default spec ``min,mid,max,random``, a spec
    string, or a list of kinds and dicts name -> value (``_refshapes``) — as
    ``b<k>/in::<id>``, ``b<k>/out::<i>``, ``b<k>/out64::<i>``, all of them
    within ``reference_shapes_cap_mb``.  What the user should know (unbounded
    symbols, bindings moved or skipped) is in the summary's ``notes``."""
    if decomposition not in DECOMPOSITIONS:
        raise ExportError(f"unknown decomposition '{decomposition}' "
                          f"(choose from {', '.join(DECOMPOSITIONS)})")
    args = _as_tuple(example_inputs)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model_name = model_name or type(model).__name__.lower()
    model.eval()

    notes: list[str] = []
    progress = _Progress(quiet)
    nparams = sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers()))
    with torch.no_grad():
        dyn = dynamic_shapes_spec(model, args, dynamic)
        dims = _shapes.dim_specs(model, args, dyn)
        forced = sorted({str(op) for op in force_ops(force_decompose)})
        # non-strict tracing first (it follows Python as eager does); some
        # modules only trace with TorchDynamo (strict), e.g. transformers'
        # static-cache wrappers, so a failure at either step retries strict
        errors, base, ep, strict = [], None, None, False
        for strict in (False, True):
            progress(f"torch.export (strict={strict}) of {model_name}, {nparams / 2**20:.1f} MiB of weights")
            try:
                with _traceable_nn():
                    base = torch.export.export(model, args, dynamic_shapes=dyn, strict=strict)
            except Exception as e:  # noqa: BLE001 - reported below with the other attempt
                errors.append(f"torch.export (strict={strict}) failed: {type(e).__name__}: {e}")
                continue
            try:
                progress(f"run_decompositions ({decomposition})")
                ep = decompose(base, decomposition, forced)
                break
            except Exception as e:  # noqa: BLE001
                errors.append(f"run_decompositions (strict={strict} export) failed: "
                              f"{type(e).__name__}: {e}")
        if ep is None:
            raise ExportError("; ".join(errors))
        _check_dims_kept(base, ep, dims, errors, "exporting")
        if strict:
            _log(quiet, f"rlx.export: note: exported with strict=True after: {errors[0]}")
        if write_reference:
            progress("eager reference run")
        eager_out = eager_outputs(model, args) if write_reference else None
        f64 = Float64(model, reference64_cap_mb)
        if write_reference and f64.available():
            progress("float64 reference run (the arbiter)")
        out64 = f64.outputs(args, eager_out) if write_reference else None
        if reference_shapes in (None, False):
            f64.m64 = None  # only the example needs it: free the copy now

        memo: dict[str, Any] = {}

        def bindings(ir, io, user_leaves):
            # computed once per symbol table: decomposition rounds keep it
            key = json.dumps([ir["symbols"], ir["guards"], ir["inputs"], ir["outputs"]])
            if key not in memo:
                memo.clear()
                memo[key] = reference_bindings(model, args, ir, io, user_leaves,
                                               spec=reference_shapes,
                                               cap_mb=reference_shapes_cap_mb, f64=f64,
                                               notes=notes)
            return memo[key]

        kw = dict(model_name=model_name, decomposition=decomposition,
                  write_reference=write_reference, intermediates=intermediates,
                  intermediates_cap_mb=intermediates_cap_mb, out64=out64, dims=dims,
                  default_max=default_max, notes=notes,
                  bindings=bindings if reference_shapes not in (None, False) else None)
        progress(f"writing {out_dir}")
        written = _write_round(ep, args, eager_out, out_dir, **kw)
        if reference_shapes not in (None, False) and "symbols" not in written["ir"]:
            notes.append("reference_shapes: the program has no shape symbols; only the example "
                         "is stored")
        if reference_shapes not in (None, False) and not write_reference:
            notes.append("reference_shapes: no reference is written (write_reference=False)")

        auto: list[str] = []
        rounds = 0
        check_state, check_msg, rlx_bin = "disabled", "", None
        if check:
            rlx_bin = find_rlx_binary()
            if rlx_bin is None:
                check_state = "skipped"
                check_msg = "no rlx binary found ($RLX_BIN, build/rlx, PATH)"
                _log(quiet, f"rlx.export: note: {check_msg}; skipping the support check")
        while rlx_bin is not None:
            progress("rlx inspect --check (can rlx lower every op?)")
            rc, msg = run_check(rlx_bin, out_dir)
            check_msg = msg
            if rc == 0:
                check_state = "passed"
                break
            check_state = "failed"
            if rounds >= max_decompose_rounds:
                break
            cands = [c for c in decompose_candidates(parse_unsupported(msg))
                     if c not in forced and c not in auto]
            if not cands:
                break
            added, new_ep = [], None
            try:
                new_ep = decompose(base, decomposition, forced + auto + cands)
                added = cands
            except Exception:
                for c in cands:  # one at a time, sorted; keep those that still export
                    try:
                        new_ep = decompose(base, decomposition, forced + auto + added + [c])
                        added.append(c)
                    except Exception:
                        pass
            if not added:
                break
            _check_dims_kept(base, new_ep, dims, errors, f"decomposing {', '.join(added)}")
            auto += added
            rounds += 1
            _log(quiet, f"rlx.export: round {rounds}: decomposing {', '.join(added)}")
            ep = new_ep
            written = _write_round(ep, args, eager_out, out_dir, **kw)

    progress("done")
    ir = written["ir"]
    notes = list(dict.fromkeys(notes))  # each decomposition round repeats the IR's notes
    for n in notes:
        _log(quiet, f"rlx.export: note: {n}")
    return {
        "model_name": model_name,
        "decomposition": decomposition,
        "out_dir": str(out_dir),
        "paths": written["paths"],
        "num_inputs": len(ir["inputs"]),
        "num_weights": len(ir["weights"]),
        "num_nodes": len(ir["nodes"]),
        "num_outputs": len(ir["outputs"]),
        "op_histogram": _ir.op_histogram(ir),
        "intermediates": written["intermediates"],
        "dropped_outputs": _ir.dropped_outputs(ep),
        "auto_decomposed_ops": sorted(auto),
        "decompose_rounds": rounds,
        "strict": strict,
        "check": check_state,
        "check_message": check_msg,
        "unsupported_ops": parse_unsupported(check_msg) if check_state == "failed" else [],
        "rlx_bin": rlx_bin,
        "symbols": ir.get("symbols", []),
        "reference_bindings": ir.get("reference_bindings", []),
        "notes": notes,
    }


# --------------------------------------------------------------------------
# Command line


def parse_set(items: Iterable[str]) -> dict[str, Any]:
    kw: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.isidentifier():
            raise ExportError(f"--set '{item}': expected KEY=VALUE")
        try:
            kw[key] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            kw[key] = raw
    return kw


def load_model(path: str, kwargs: dict[str, Any] | None = None) -> tuple[torch.nn.Module, Any]:
    """(model, example_inputs) from a model file."""
    p = Path(path)
    if not p.is_file():
        raise ExportError(f"model file not found: {path}")
    folder = str(p.resolve().parent)
    spec = importlib.util.spec_from_file_location(f"rlx_model_{p.stem}", str(p))
    if spec is None or spec.loader is None:
        raise ExportError(f"cannot load model file {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, folder)
    sys.modules[spec.name] = mod  # dataclasses, pickling etc. look the module up
    try:
        spec.loader.exec_module(mod)
        if callable(getattr(mod, "get_model", None)):
            got = mod.get_model(**(kwargs or {}))
            if not (isinstance(got, (tuple, list)) and len(got) == 2):
                raise ExportError(f"{path}: get_model() must return (model, example_inputs)")
            model, inputs = got
        elif hasattr(mod, "model") and hasattr(mod, "example_inputs"):
            if kwargs:
                raise ExportError(f"{path}: --set needs a get_model(**kwargs) function")
            model, inputs = mod.model, mod.example_inputs
        else:
            raise ExportError(f"{path} defines neither get_model() nor module-level "
                              "'model' and 'example_inputs'")
    finally:
        try:
            sys.path.remove(folder)
        except ValueError:
            pass
    if not isinstance(model, torch.nn.Module):
        raise ExportError(f"{path}: model is a {type(model).__name__}, not a torch.nn.Module")
    return model, inputs


def format_summary(s: dict, top: int = 12) -> str:
    lines = [f"rlx.export: {s['model_name']} ({s['decomposition']}): {s['num_inputs']} inputs, "
             f"{s['num_weights']} weights, {s['num_nodes']} nodes, {s['num_outputs']} outputs"]
    hist = s["op_histogram"]
    shown = ", ".join(f"{op} {n}" for op, n in hist[:top])
    more = f", ... ({len(hist) - top} more)" if len(hist) > top else ""
    lines.append(f"  ops: {shown}{more}")
    for k, v in s["paths"].items():
        lines.append(f"  wrote {v}")
    if s["intermediates"] and s["intermediates"]["kept"] < s["intermediates"]["total"]:
        i = s["intermediates"]
        lines.append(f"  intermediates sampled: {i['kept']} of {i['total']} nodes")
    if s["dropped_outputs"]:
        lines.append(f"  dropped non-user outputs: {', '.join(s['dropped_outputs'])}")
    if s["auto_decomposed_ops"]:
        lines.append(f"  auto-decomposed ({s['decompose_rounds']} rounds): "
                     f"{', '.join(s['auto_decomposed_ops'])}")
    if s["symbols"]:
        lines.append("  symbols: " + ", ".join(f"{x['name']} in [{x['min']}, {x['max']}] "
                                               f"(example {x['hint']})" for x in s["symbols"]))
    if s["reference_bindings"]:
        lines.append("  reference bindings: " + "; ".join(
            ", ".join(f"{k}={v}" for k, v in b["values"].items()) for b in s["reference_bindings"]))
    lines.append(f"  check: {s['check']}" + (f" ({s['rlx_bin']})" if s["rlx_bin"] else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m rlx.export",
                                 description="Export a PyTorch model for rlx.")
    ap.add_argument("model", help="model file defining get_model() or model + example_inputs")
    ap.add_argument("-o", "--out", required=True, help="output directory")
    ap.add_argument("--decomposition", choices=DECOMPOSITIONS, default="high")
    ap.add_argument("--intermediates", action="store_true",
                    help="also write every node's eager value")
    ap.add_argument("--intermediates-cap-mb", type=float, default=256, metavar="N")
    ap.add_argument("--no-reference", action="store_true", help="skip reference.safetensors")
    ap.add_argument("--reference64-cap-mb", type=float, default=2048, metavar="N",
                    help="also store float64 outputs when the model's float64 copy fits in N MiB "
                         "(0: never)")
    ap.add_argument("--dynamic", action="append", default=[], metavar="INPUT:AXIS:NAME[:MIN:MAX]",
                    help="make an input axis a shape symbol NAME (inclusive range MIN..MAX); "
                         "NAME may be K*SYM[+C], an axis that is K times the symbol SYM (plus C), "
                         "e.g. x:2:16*hp:4:14 for image heights 64..224 in steps of 16")
    ap.add_argument("--default-max", type=int, default=_shapes.DEFAULT_MAX, metavar="N",
                    help="max of a symbol given no MAX and left unbounded by torch "
                         f"(default {_shapes.DEFAULT_MAX})")
    ap.add_argument("--reference-shapes", nargs="?", const=True, default=None, metavar="SPEC",
                    help="also store reference data at more bindings of the shape symbols: "
                         "comma-separated min, mid, max, random, NAME=V[:NAME=V] "
                         f"(default {_refshapes.DEFAULT_SPEC})")
    ap.add_argument("--reference-shapes-cap-mb", type=float, default=64, metavar="N",
                    help="bound on the reference data at those bindings, and on any one value "
                         "computed for them (default 64)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="keyword argument for get_model()")
    ap.add_argument("--name", help="model name (default: lower-cased class name)")
    ap.add_argument("--no-check", action="store_true", help="do not run `rlx inspect --check`")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    try:
        model, inputs = load_model(a.model, parse_set(a.set))
        s = export_program(model, inputs, a.out, model_name=a.name,
                           decomposition=a.decomposition, write_reference=not a.no_reference,
                           intermediates=a.intermediates,
                           intermediates_cap_mb=a.intermediates_cap_mb, dynamic=a.dynamic,
                           check=not a.no_check, reference64_cap_mb=a.reference64_cap_mb,
                           reference_shapes=a.reference_shapes,
                           reference_shapes_cap_mb=a.reference_shapes_cap_mb,
                           default_max=a.default_max, quiet=a.quiet)
    except Exception as e:  # noqa: BLE001 - every failure becomes one clear line
        if os.environ.get("RLX_DEBUG") == "1":
            raise
        msg = str(e) if isinstance(e, ExportError) else f"{type(e).__name__}: {e}"
        print(f"rlx.export: error: {msg}", file=sys.stderr)
        return 2
    if not a.quiet:
        print(format_summary(s))
    if s["check"] == "failed":
        ops = s["unsupported_ops"]
        head = f" (unsupported ops: {', '.join(ops)})" if ops else ""
        print(f"rlx.export: rlx inspect --check failed{head}:\n{s['check_message']}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
