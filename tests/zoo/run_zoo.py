#!/usr/bin/env python3
"""Run the model zoo: export every model, `rlx verify` it, tabulate the results.

    python3 tests/zoo/run_zoo.py [--subset fast|full] [--only NAME ...] [--work DIR]
                                 [--write docs/zoo.md] [--localize] [--keep] [--list]
                                 [--decomposition high|core|aten] [--no-dynamic]

For each model (tests/zoo/models.py), in a child process of its own (forked from a server
that imports torch & co. once) so that a crash or a large model cannot take the run down
with it or keep its memory:
  1. build it (random weights, fixed seed) and export it with `rlx.export_program`
     (decomposition "high" unless --decomposition says otherwise; `check=True`: ops rlx
     reports unsupported are decomposed by torch where torch can, and reported otherwise);
     eager PyTorch's own error (float32 against float64) is measured beside it;
  2. `rlx verify DIR --json FILE`;
  3. with --localize, for a model that fails parity (or whose rlx run errors), re-export it
     with intermediates and save `rlx verify --localize`'s report;
  4. unless --no-dynamic, the dynamic-batch pass: export again with one shape symbol `batch`
     in [1, 4] on every input's batch axis (axis 0 unless the entry's `batch_axes` says
     otherwise; an example batch of 1 is widened to 2, since torch.export specializes a size-1
     axis) and reference data also at batch 1, then `rlx verify` (both batch sizes).
     Its outcome: pass, fail (rlx refuses, errs or fails parity at some batch), not exportable
     (torch.export itself cannot export a dynamic batch; torch's reason), or not tried (the
     static export did not reach verify).
The result of each model is one of
  pass    rlx verify: parity PASS
  fail    parity FAIL (cosine / max error out of tolerance), or ops rlx does not support
  error   torch.export or the exporter raised, rlx exited with an error, crashed or timed
          out, or the eager output is degenerate (constant or ~0: parity would be vacuous)
with the reason.  --write writes a Markdown table and a JSON file beside it (zoo_report.py
writes them, and the progress lines).  The exit status is 0 only if every model passed and
no dynamic-batch pass failed.  Exports go under --work (default /tmp/rlx-zoo), one folder
per model; those of passing models (and their dynamic exports that pass or cannot be made)
are deleted unless --keep.

Environment: RLX_BIN (default build/rlx) is the rlx binary used for both the exporter's
support check and verify.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEFAULT_WORK = Path(os.environ.get("TMPDIR", "/tmp")) / "rlx-zoo"
EXPORT_TIMEOUT_S = 900
VERIFY_TIMEOUT_S = 900
DEGENERATE_ABSMAX = 1e-3   # an output this small is within verify's atol (1e-4) of zero
DYN_BATCH_MAX = 4          # the dynamic-batch pass: batch in [1, DYN_BATCH_MAX]
DYN_EXAMPLE_BATCH = 2      # an example batch of 1 is widened to this
DYN_BINDING = "batch=1"    # the reference binding verified beside the example
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from zoo_report import Progress, dyn_counts, write_chart, write_json, write_markdown  # noqa: E402
from zoo_report import result_line  # noqa: E402,F401  (re-exported for test_zoo.py)


def rlx_binary() -> Path:
    return Path(os.environ.get("RLX_BIN", REPO / "build" / "rlx"))


_UNSUPPORTED_RE = re.compile(r"does not yet support(.*?)(?:\n[ \t]*\n|\Z)", re.S)
_OP_RE = re.compile(r"([A-Za-z_][\w]*\.[\w.]+) \(nodes?:")


def parse_unsupported(text: str) -> list[str]:
    """Op names (aten or not, e.g. a library's custom op) rlx reports as unsupported."""
    names: list[str] = []
    for m in _UNSUPPORTED_RE.finditer(text):
        for name in _OP_RE.findall(m.group(1)):
            if name not in names:
                names.append(name)
    return names


# ------------------------------------------------------------------------------------------
# The worker: build + export one model (runs in its own process)


def _count_params(model) -> int:
    seen, n = set(), 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            n += p.numel()
    return n


def _f64_error(model, inputs, ref_outs) -> float | None:
    """max |torch f32 - torch f64| over the outputs: how far eager PyTorch itself is from
    exact arithmetic on this model (None if the model does not run in float64)."""
    import copy

    import torch
    from torch.utils import _pytree as pytree
    try:
        m64 = copy.deepcopy(model).double()
        args = tuple(x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                     for x in inputs)
        with torch.no_grad():
            out = pytree.tree_flatten(m64(*args))[0]
        del m64
        errs = [float((o.double() - r.double()).abs().max()) for o, r in zip(out, ref_outs)
                if isinstance(o, torch.Tensor) and o.is_floating_point() and o.numel()]
        return max(errs) if errs else None
    except Exception:  # noqa: BLE001 - optional figure
        return None


def batch_axes(entry, inputs: tuple) -> list[int | None]:
    """The batch axis of each example input: the entry's `batch_axes`, else axis 0 of every
    tensor input of rank >= 1."""
    import torch
    if entry.batch_axes is not None:
        assert len(entry.batch_axes) == len(inputs), (entry.name, entry.batch_axes)
        return list(entry.batch_axes)
    return [0 if isinstance(x, torch.Tensor) and x.dim() >= 1 else None for x in inputs]


def widen_batch(inputs: tuple, axes: list[int | None], seed: int = 11) -> tuple:
    """The example inputs with batch DYN_EXAMPLE_BATCH where it is 1 (torch.export
    specializes a size-1 axis to a constant). New float rows are random with the example's
    mean and spread, so that rows differ; integer and bool rows (ids, masks) repeat the
    example's."""
    import torch
    g = torch.Generator().manual_seed(seed)
    sizes = {x.shape[a] for x, a in zip(inputs, axes) if a is not None}
    if sizes != {1}:
        return inputs
    out = []
    for x, a in zip(inputs, axes):
        if a is None:
            out.append(x)
            continue
        n = DYN_EXAMPLE_BATCH - 1
        if x.is_floating_point():
            ref = x.double()
            std = float(ref.std()) if x.numel() > 1 else 1.0
            shape = list(x.shape)
            shape[a] = n
            more = (torch.randn(shape, generator=g, dtype=torch.float64) * (std or 1.0)
                    + float(ref.mean())).to(x.dtype)
        else:
            more = torch.cat([x] * n, dim=a)
        out.append(torch.cat([x, more], dim=a))
    return tuple(out)


def dynamic_batch_shapes(model, inputs: tuple, axes: list[int | None]):
    """torch's dynamic_shapes: one Dim `batch` in [1, DYN_BATCH_MAX] on every batch axis; a
    `forward(*args)` model (the transformers wrappers) takes it keyed by the var-positional
    name."""
    import inspect

    import torch
    top = max([DYN_BATCH_MAX] + [x.shape[a] for x, a in zip(inputs, axes) if a is not None])
    dim = torch.export.Dim("batch", min=1, max=top)
    per = tuple({a: dim} if a is not None else None for a in axes)
    params = list(inspect.signature(model.forward).parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var = [p for p in params if p.kind == p.VAR_POSITIONAL]
    if var and not positional:
        return {var[0].name: per}
    return per


def worker(name: str, out_dir: Path, result_path: Path, intermediates: bool,
           log_path: Path | None = None, rlx_bin: str | None = None,
           decomposition: str = "high", dynamic: bool = False) -> int:
    """Build and export `name` into out_dir; write what happened to result_path (JSON).
    Runs in a child process of its own (see `_export`)."""
    if log_path is not None:  # the child's own output goes to a log, not the progress bar
        fd = os.open(str(log_path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    if rlx_bin:
        os.environ["RLX_BIN"] = rlx_bin
    res: dict = {"name": name}
    try:
        for p in (str(REPO / "python"), str(HERE)):
            if p not in sys.path:
                sys.path.insert(0, p)
        import torch

        import models
        import rlx
        torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
        t0 = time.perf_counter()
        model, inputs = models.build(name)
        res["build_s"] = time.perf_counter() - t0
        res["params"] = _count_params(model)
        kw: dict = {}
        if dynamic:
            axes = batch_axes(models.BY_NAME[name], inputs)
            inputs = widen_batch(inputs, axes)
            kw = dict(dynamic=dynamic_batch_shapes(model, inputs, axes),
                      reference_shapes=DYN_BINDING)
            res["example_batch"] = sorted({x.shape[a] for x, a in zip(inputs, axes)
                                           if a is not None})
        t0 = time.perf_counter()
        try:
            s = rlx.export_program(model, inputs, out_dir, model_name=name,
                                   decomposition=decomposition, check=True,
                                   intermediates=intermediates, quiet=True, **kw)
        except Exception as e:  # noqa: BLE001 - recorded, not raised
            res["export_s"] = time.perf_counter() - t0
            msg = f"{type(e).__name__}: {e}" if not isinstance(e, rlx.ExportError) else str(e)
            res["stage"] = "torch.export" if "torch.export failed" in msg else "export"
            res["error"] = msg
            res["traceback"] = traceback.format_exc()[-4000:]
            result_path.write_text(json.dumps(res, indent=1))
            return 0
        res["export_s"] = time.perf_counter() - t0
        hist = s["op_histogram"]
        res.update(aten_nodes=s["num_nodes"], op_histogram=hist,
                   ops=sorted(op for op, _ in hist if op != "_getitem"),
                   check=s["check"], check_message=s["check_message"],
                   auto_decomposed=s["auto_decomposed_ops"], intermediates=s["intermediates"],
                   num_outputs=s["num_outputs"], symbols=s["symbols"],
                   reference_bindings=s["reference_bindings"])
        ref = Path(s["paths"].get("reference", ""))
        if ref.is_file():
            from safetensors.torch import load_file
            tensors = load_file(str(ref))
            outs = [tensors[f"out::{i}"] for i in range(s["num_outputs"])
                    if f"out::{i}" in tensors]
            res["out_absmax"] = [float(v.abs().max()) if v.numel() else 0.0 for v in outs]
            res["out_std"] = [float(v.double().std()) if v.numel() > 1 else 0.0 for v in outs]
            if not intermediates and not dynamic:
                res["torch_err"] = _f64_error(model, inputs, outs)
        if s["check"] == "failed":
            res["stage"] = "check"
            res["unsupported"] = parse_unsupported(s["check_message"])
        else:
            res["stage"] = "exported"
    except Exception as e:  # noqa: BLE001 - e.g. the builder itself failed
        res["stage"] = "build"
        res["error"] = f"{type(e).__name__}: {e}"
        res["traceback"] = traceback.format_exc()[-4000:]
    result_path.write_text(json.dumps(res, indent=1))
    return 0


# ------------------------------------------------------------------------------------------
# The driver


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def _first_line(text: str, limit: int = 300) -> str:
    for line in text.strip().splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[:limit - 3] + "..."
    return ""


PRELOAD = ["torch", "torchvision", "transformers", "transformers.modeling_utils", "timm",
           "safetensors.torch", "rlx", "rlx.export", "models"]
_CTX = None


def _context():
    """A forkserver whose server process has torch, transformers, timm... imported once:
    each model then runs in a fresh fork of it (its memory goes when it exits, a crash stays
    in it) without paying seconds of imports per model."""
    global _CTX
    if _CTX is None:
        import multiprocessing as mp
        for p in (str(REPO / "python"), str(HERE)):
            if p not in sys.path:
                sys.path.insert(0, p)
        if "forkserver" in mp.get_all_start_methods():
            _CTX = mp.get_context("forkserver")
            _CTX.set_forkserver_preload(PRELOAD)
        else:
            _CTX = mp.get_context("spawn")
    return _CTX


def _export(name: str, out_dir: Path, result_path: Path, intermediates: bool,
            rlx_bin: Path, decomposition: str, dynamic: bool = False) -> dict:
    """Run the worker for one model in a child process; its result, or why there is none."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    result_path.unlink(missing_ok=True)
    log_path = result_path.with_suffix(".log")
    t0 = time.perf_counter()
    p = _context().Process(target=worker, args=(name, out_dir, result_path, intermediates,
                                                log_path, str(rlx_bin), decomposition, dynamic),
                                daemon=True)
    p.start()
    p.join(EXPORT_TIMEOUT_S)
    if p.is_alive():
        p.kill()
        p.join()
        return {"stage": "timeout", "error": f"export timed out after {EXPORT_TIMEOUT_S} s",
                "export_s": time.perf_counter() - t0}
    if result_path.is_file():
        return json.loads(result_path.read_text())
    log = log_path.read_text(errors="replace")[-4000:] if log_path.is_file() else ""
    rc = p.exitcode
    why = (f"exporter process died ({_signal_name(rc)})" if rc is not None and rc < 0
           else f"exporter process exited {rc}")
    last = [ln for ln in log.strip().splitlines() if ln.strip()][-1:] or [""]
    return {"stage": "crash", "error": f"{why}: {last[0][:300]}",
            "export_s": time.perf_counter() - t0, "log": log}


def _verify(rlx_bin: Path, out_dir: Path, json_path: Path, extra=()) -> dict:
    json_path.unlink(missing_ok=True)
    cmd = [str(rlx_bin), "verify", str(out_dir), "--json", str(json_path), *extra]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                           timeout=VERIFY_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"rc": None, "verify_s": time.perf_counter() - t0, "stdout": "",
                "stderr": f"rlx verify timed out after {VERIFY_TIMEOUT_S} s"}
    r = {"rc": p.returncode, "verify_s": time.perf_counter() - t0, "stdout": p.stdout,
         "stderr": p.stderr}
    if json_path.is_file():
        try:
            r["json"] = json.loads(json_path.read_text())
        except json.JSONDecodeError as e:
            r["json_error"] = str(e)
    return r


def _localize(name: str, work: Path, rlx_bin: Path, decomposition: str) -> dict:
    """Re-export with intermediates, run `rlx verify --localize`; the report, summarized."""
    mdir = work / name
    loc_dir = mdir / "localize"
    ex = _export(name, loc_dir, mdir / "localize-export.json", True, rlx_bin, decomposition)
    if ex.get("stage") != "exported":
        return {"error": f"re-export with intermediates failed: {ex.get('error', ex.get('stage'))}"}
    v = _verify(rlx_bin, loc_dir, mdir / "localize.json", ["--localize"])
    text = v["stdout"] + ("\n" + v["stderr"] if v["stderr"] else "")
    (mdir / "localize.txt").write_text(text)
    out: dict = {"report": str(mdir / "localize.txt"), "intermediates": ex.get("intermediates")}
    j = v.get("json") or {}
    loc = j.get("localize") or {}
    out["culprits"] = loc.get("culprits", [])
    out["n_propagators"] = len(loc.get("propagators", []))
    out["compared"] = loc.get("compared")
    if "kernel_at_fault" in j:
        out["kernel_at_fault"] = j["kernel_at_fault"]
    lines = [ln.strip() for ln in v["stdout"].splitlines()
             if ln.strip().startswith(("culprit:", "output", "kernel at fault", "the reference",
                                       "every compared"))]
    out["summary"] = " | ".join(lines[:6]) or _first_line(text)
    return out


_TORCH_FAILED = ("torch.export (strict=", "run_decompositions (strict=")


def _torch_reason(msg: str) -> str:
    """torch's own words from an exporter error that both export attempts failed in torch:
    the first attempt's first line and the first constraint it lists."""
    first = msg.split("; torch.export (strict=True) failed: ")[0]
    first = first.split("; run_decompositions (strict=True export) failed: ")[0]
    first = re.sub(r"^(torch\.export|run_decompositions) \(strict=\w+( export)?\) failed: ", "",
                   first)
    lines = [ln.strip() for ln in first.splitlines() if ln.strip()]
    bullets = [ln for ln in lines[1:] if ln.startswith("- ")]
    text = (lines[0] if lines else "") + (" " + bullets[0] if bullets else "")
    return text if len(text) <= 400 else text[:397] + "..."


def dynamic_pass(name: str, work: Path, rlx_bin: Path, decomposition: str = "high") -> dict:
    """The dynamic-batch pass for one model (module docstring, step 4): its record."""
    mdir = work / name
    mdir.mkdir(parents=True, exist_ok=True)
    ex = _export(name, mdir / "dynamic", mdir / "dynamic-export.json", False, rlx_bin,
                 decomposition, dynamic=True)
    d: dict = {"status": "fail", "reason": "", "detail": "", "export_s": ex.get("export_s"),
               "example_batch": ex.get("example_batch"),
               "bindings": [b["values"] for b in ex.get("reference_bindings", [])]}
    stage, err = ex.get("stage"), ex.get("error", "")
    if stage in ("torch.export", "export") and err.startswith(_TORCH_FAILED):
        d.update(status="not exportable", reason="torch.export", detail=_torch_reason(err))
        return d
    if stage in ("build", "torch.export", "export", "crash", "timeout"):
        d.update(reason={"build": "builder exception", "crash": "exporter crash",
                         "timeout": "export timeout"}.get(stage, "exporter exception"),
                 detail=_first_line(err, 600))
        return d
    if stage == "check":
        d["reason"] = "rlx refuses"
        d["detail"] = (", ".join(ex["unsupported"]) if ex.get("unsupported")
                       else _first_line(ex.get("check_message", ""), 600))
        return d
    if [s["name"] for s in ex.get("symbols", [])] != ["batch"] or not d["bindings"]:
        d.update(reason="exporter", detail=f"symbols {ex.get('symbols')}, reference bindings "
                                           f"{d['bindings']}: expected batch and one binding")
        return d
    v = _verify(rlx_bin, mdir / "dynamic", mdir / "dynamic-verify.json")
    d["verify_s"] = v["verify_s"]
    j = v.get("json") or {}
    checked = [b for b in j.get("bindings", [])]
    if v["rc"] == 0 and len(checked) == len(d["bindings"]) and all(b["pass"] for b in checked):
        d["status"] = "pass"
        d["batches"] = d["example_batch"] + [b["values"]["batch"] for b in checked]
    elif v["rc"] == 1:
        d["reason"] = "parity"
        bad = [("example", o) for o in j.get("outputs", []) if not o.get("pass", True)]
        for b in checked:
            bad += [(f"batch={b.get('batch')}", o) for o in b["outputs"] if not o.get("pass")]
        d["detail"] = "; ".join(
            f"{at} out[{o.get('index')}] cosine={o.get('cosine')} "
            f"max_abs_err={o.get('max_abs_err')}" for at, o in bad[:4])
    elif v["rc"] is None:
        d.update(reason="verify timeout", detail=v["stderr"])
    elif v["rc"] < 0:
        d.update(reason="rlx crash", detail=f"rlx verify died ({_signal_name(v['rc'])})")
    elif v["rc"] == 0:
        d.update(reason="verify", detail=f"{len(checked)} bindings checked, expected "
                                         f"{len(d['bindings'])}")
    else:
        d.update(reason="rlx error", detail=_first_line(v["stderr"] or v["stdout"], 600))
    return d


def run_model(name: str, work: Path, rlx_bin: Path, localize: bool = False,
              keep: bool = True, decomposition: str = "high", on_phase=None,
              dynamic: bool = True) -> dict:
    """Export and verify one zoo model; the result record (see the module docstring).
    `on_phase(text)`, if given, is told when each stage starts (for a progress display);
    `dynamic`: also run the dynamic-batch pass (`rec["dynamic"]`)."""
    phase = on_phase or (lambda text: None)
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    import models
    m = models.BY_NAME[name]
    rec: dict = {"name": name, "source": m.source, "note": m.note, "fast": m.fast,
                 "decomposition": decomposition, "status": "error", "reason": "", "detail": ""}
    mdir = work / name
    mdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    phase("export")
    ex = _export(name, mdir / "export", mdir / "export.json", False, rlx_bin, decomposition)
    for k in ("params", "aten_nodes", "ops", "op_histogram", "auto_decomposed", "export_s",
              "build_s", "num_outputs", "out_absmax", "out_std", "torch_err"):
        if k in ex:
            rec[k] = ex[k]
    stage = ex.get("stage")
    if stage in ("build", "torch.export", "export", "crash", "timeout"):
        rec["reason"] = {"build": "builder exception", "torch.export": "torch.export exception",
                         "export": "exporter exception", "crash": "exporter crash",
                         "timeout": "export timeout"}[stage]
        rec["detail"] = ex.get("error", "")
    elif stage == "check":
        rec["status"] = "fail"
        if ex.get("unsupported"):
            rec["reason"] = "unsupported ops"
            rec["unsupported"] = ex["unsupported"]
            rec["detail"] = ", ".join(ex["unsupported"])
        else:
            rec["reason"] = "rlx inspect --check failed"
            rec["detail"] = _first_line(ex.get("check_message", ""), 600)
    else:
        phase("verify")
        v = _verify(rlx_bin, mdir / "export", mdir / "verify.json")
        rec["verify_s"] = v["verify_s"]
        j = v.get("json") or {}
        outs = j.get("outputs") or []
        cos = [o["cosine"] for o in outs if o.get("cosine") is not None]
        err = [o["max_abs_err"] for o in outs if o.get("max_abs_err") is not None]
        if cos:
            rec["min_cosine"] = min(cos)
        if err:
            rec["max_abs_err"] = max(err)
        if j:
            rec["outputs"] = outs
            rec["run_ms"] = j.get("run_ms")
            rec["rlx_nodes"] = j.get("rlx_nodes")
        flat = [i for i, (sd, mx) in enumerate(zip(ex.get("out_std") or [],
                                                   ex.get("out_absmax") or []))
                if sd == 0.0 or mx < DEGENERATE_ABSMAX]
        if v["rc"] == 0 and flat:
            # A constant reference output (e.g. a zero-initialized head) makes parity vacuous:
            # that is a zoo bug, reported as an error rather than counted as a pass.
            rec["reason"] = "degenerate reference"
            rec["detail"] = (f"output(s) {flat} are constant or below {DEGENERATE_ABSMAX:g} in "
                             "eager PyTorch: the absolute tolerance alone would pass them")
        elif v["rc"] == 0:
            rec["status"] = "pass"
        elif v["rc"] == 1:
            rec["status"] = "fail"
            rec["reason"] = "parity"
            bad = [o for o in outs if not o.get("pass", True)]
            rec["detail"] = "; ".join(
                f"out[{o.get('index')}] cosine={o.get('cosine')} max_abs_err={o.get('max_abs_err')}"
                f" mismatches={o.get('mismatches')}/{o.get('numel')}" for o in bad[:4])
        elif v["rc"] is None:
            rec["reason"] = "verify timeout"
            rec["detail"] = v["stderr"]
        elif v["rc"] < 0:
            rec["reason"] = "rlx crash"
            rec["detail"] = f"rlx verify died ({_signal_name(v['rc'])})"
        else:
            rec["reason"] = "rlx error"
            rec["detail"] = _first_line(v["stderr"] or v["stdout"], 600)
        if localize and rec["status"] != "pass" and rec["reason"] in ("parity", "rlx error"):
            phase("localize")
            rec["localize"] = _localize(name, work, rlx_bin, decomposition)
        if dynamic:
            phase("dynamic batch")
            rec["dynamic"] = dynamic_pass(name, work, rlx_bin, decomposition)
    if dynamic and "dynamic" not in rec:
        rec["dynamic"] = {"status": "not tried", "reason": "the static export did not reach "
                                                           "verify", "detail": ""}
    rec["total_s"] = time.perf_counter() - t0
    if not keep and rec["status"] == "pass":
        shutil.rmtree(mdir / "export", ignore_errors=True)
    if not keep and rec.get("dynamic", {}).get("status") in ("pass", "not exportable"):
        shutil.rmtree(mdir / "dynamic", ignore_errors=True)
    (mdir / "result.json").write_text(json.dumps(rec, indent=1))
    return rec


# ------------------------------------------------------------------------------------------
# Command line


def _git_rev() -> str:
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "src",
                                "tools", "include", "python"], capture_output=True, text=True,
                               timeout=10).stdout.strip()
        return rev + ("+local changes" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--subset", choices=("fast", "full"), default="full")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="run only these models")
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK,
                    help=f"where exports and reports go (default {DEFAULT_WORK})")
    ap.add_argument("--write", type=Path, metavar="MD",
                    help="write this Markdown table and a .json beside it")
    ap.add_argument("--localize", action="store_true",
                    help="for failing models, re-export with intermediates and localize")
    ap.add_argument("--keep", action="store_true", help="keep the exports of passing models")
    ap.add_argument("--decomposition", choices=("high", "core", "aten"), default="high",
                    help="rlx.export decomposition mode (default high)")
    ap.add_argument("--no-dynamic", action="store_true",
                    help="leave out the dynamic-batch pass (step 4)")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    ap.add_argument("--replot", type=Path, metavar="JSON",
                    help="only draw the parity chart (JSON.png) of an earlier report, then exit")
    a = ap.parse_args(argv)
    if a.replot:
        d = json.loads(a.replot.read_text())
        why = write_chart(a.replot.with_suffix(".png"), d["models"], d)
        print(why or f"wrote {a.replot.with_suffix('.png')}")
        return 0 if not why else 2
    sys.path.insert(0, str(HERE))
    import models
    chosen = models.subset(a.subset)
    if a.only:
        unknown = [n for n in a.only if n not in models.BY_NAME]
        if unknown:
            print(f"run_zoo: unknown model(s): {', '.join(unknown)} (see --list)", file=sys.stderr)
            return 2
        chosen = [models.BY_NAME[n] for n in a.only]
    if a.list:
        for m in chosen:
            print(f"{m.name:<30} {m.source:<12} {'fast' if m.fast else '    '}  {m.note}")
        return 0
    rlx_bin = rlx_binary()
    if not (rlx_bin.is_file() and os.access(rlx_bin, os.X_OK)):
        print(f"run_zoo: rlx binary not found at {rlx_bin} (build, or set RLX_BIN)",
              file=sys.stderr)
        return 2
    a.work.mkdir(parents=True, exist_ok=True)

    rev = _git_rev()  # the checkout the run starts from (commits made during a long run do not count)
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(rlx_bin.stat().st_mtime))
    t0 = time.perf_counter()
    prog = Progress(len(chosen))
    recs = []
    for m in chosen:
        prog.start(m.name)
        try:
            rec = run_model(m.name, a.work, rlx_bin, localize=a.localize, keep=a.keep,
                            decomposition=a.decomposition, dynamic=not a.no_dynamic,
                            on_phase=lambda text, n=m.name: prog.start(n, text))
        except Exception as e:  # noqa: BLE001 - one model's driver failure is its result
            rec = {"name": m.name, "source": m.source, "note": m.note, "fast": m.fast,
                   "status": "error", "reason": "runner exception",
                   "detail": f"{type(e).__name__}: {e}"}
        recs.append(rec)
        prog.finish(rec)
    prog.close()
    total = time.perf_counter() - t0
    n_pass = sum(r["status"] == "pass" for r in recs)
    print(f"{n_pass}/{len(recs)} models pass ({total:.0f} s)")
    dc = dyn_counts(recs)
    if not a.no_dynamic:
        print(f"dynamic batch: {dc['pass']} pass, {dc['fail']} fail (rlx), "
              f"{dc['not exportable']} not exportable (torch.export), {dc['not tried']} not tried")

    if a.write:
        import torch
        cmd = "python3 tests/zoo/run_zoo.py " + " ".join(shlex.quote(x) for x in (
            argv if argv is not None else sys.argv[1:]))
        meta = {"command": cmd.strip(), "date": datetime.date.today().isoformat(),
                "rlx_rev": f"{rev}, binary built {built}", "torch": f"torch {torch.__version__}",
                "subset": "only" if a.only else a.subset, "decomposition": a.decomposition,
                "total_s": total, "dynamic": None if a.no_dynamic else dc}
        write_markdown(a.write, recs, meta, DYN_EXAMPLE_BATCH)
        write_json(a.write.with_suffix(".json"), recs, meta)
        why = write_chart(a.write.with_suffix(".png"), recs, meta)
        print(f"wrote {a.write}, {a.write.with_suffix('.json')}"
              + (f" ({why})" if why else f" and {a.write.with_suffix('.png')}"))
    return 0 if n_pass == len(recs) and not dc["fail"] else 1


if __name__ == "__main__":
    sys.exit(main())
