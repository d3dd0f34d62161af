#!/usr/bin/env python3
"""PyTorch's OpInfo samples as a conformance source: export each, verify it with rlx.

    python3 tests/conformance/opinfo.py [--ops a,b,c | --all] [--samples N]
                                        [--json FILE] [--markdown FILE] [--ops-md docs/ops.md]

For every OpInfo in ``torch.testing._internal.common_methods_invocations.op_db``
(``--ops`` names them as ``name`` or ``name.variant``, e.g. ``max.reduction_with_dim``;
a bare name takes every variant), every dtype of float32, int64 and bool the
OpInfo lists for the CPU, its first N sample inputs (default 4).  Each sample
becomes one program: the tensors among its input, args and kwargs are the
program's inputs (as contiguous copies: a program's input is its values, not
a view into a larger storage), everything else is a constant baked into
``forward``.  The
program is run eagerly, exported with ``rlx.export_program(decomposition="high",
check=False)`` (no float64 reference) and checked with ``$RLX_BIN verify``
(default ``build/rlx``).  A verify that fails on tolerance is retried once with
the float64 reference written, so rlx's arbiter can judge it as it does in the
conformance suite.

Every case ends in exactly one status:

  pass    rlx ran the program and its outputs (values and dtypes) match torch
  fail    rlx ran it and disagrees with torch: a bug; the reason is verify's line
  error   rlx refused the program: an op rlx does not lower ("unsupported op X",
          found from ``rlx ops`` before running), or verify's error line
  skip    outside what an exported-program runtime can be held to, with the
          reason: the OpInfo is random, autograd-only, sparse or quantized; the
          sample has complex, sparse or non-strided tensors; eager torch rejects
          the sample; torch.export cannot export it (the exception's first
          line; data-dependent output shapes land here); the program has no
          tensor output, or a complex one

Singular vectors and eigenvectors are unique only up to sign (torch's
linalg.svd and linalg.eigh documentation), and rlx's signs are its own, not
LAPACK's.  So a case that fails only on outputs that are directly the U or Vh
of an SVD (``aten._linalg_svd`` outputs 0 and 2) or the eigenvectors of eigh
(``aten._linalg_eigh`` output 1) is judged again with each vector (column of
U and of the eigenvectors, row of Vh) negated where its dot product with
torch's is negative, at verify's bar (max |rlx - torch| <= 1e-4 + 1e-4 max
|torch| for f32, 1e-7 for f64; cosine >= 0.99999); it passes when every such
output is within it.  Outputs computed from those vectors (a reconstruction,
pinv, a polar factor) and every other output (values, pivots, Q and R of QR,
factors of LU and Cholesky) are compared as they are.

The pass rate that issue 11 holds rlx to is pass / (pass + fail + error): the
cases torch.export can export.  ``--json`` writes every case; ``--markdown``
writes the summary (totals, per-OpInfo counts, every non-pass case with its
reason); ``--ops-md`` replaces the "OpInfo coverage" section of docs/ops.md
(between its ``opinfo`` markers, which scripts/op_coverage.py carries over).
Exit status: 0 when no case fails or errors, 1 otherwise, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "python"))

import torch  # noqa: E402

DTYPES = (torch.float32, torch.int64, torch.bool)
EXPORT_TIMEOUT_S = 120
VERIFY_TIMEOUT_S = 120
MD_BEGIN = "<!-- opinfo:begin (tests/conformance/opinfo.py --ops-md) -->"
MD_END = "<!-- opinfo:end -->"

# OpInfos (by name prefix) outside rlx by nature, with the reason.
_RANDOM = "random: its values come from torch's generator state, which a runtime cannot reproduce"
STATIC_SKIPS = (
    (re.compile(r"^(sparse|_sparse|to_sparse|masked\._sparse)"),
     "sparse layouts: rlx tensors are dense"),
    (re.compile(r"quantiz|^_quant|fake_quant"), "quantized tensors: rlx has no quantized dtypes"),
    (re.compile(r"backward|^autograd"), "autograd-only: appears only in training graphs"),
    (re.compile(r"^(rand\w*|normal|bernoulli|multinomial|uniform|exponential|cauchy|"
                r"geometric|log_normal|poisson|nn\.functional\.(rrelu|gumbel_softmax))$"), _RANDOM),
    (re.compile(r"(^|_)empty"), "uninitialized memory: torch.empty's values are unspecified"),
    (re.compile(r"^(cuda|_cuda|nn\.functional\.scaled_dot_product_attention\.cuda)"), "CUDA-only"),
)


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def first_line(e: BaseException, n: int = 200) -> str:
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    return f"{type(e).__name__}: {(lines[0] if lines else '')[:n]}"


def opinfo_id(op) -> str:
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def static_skip(op) -> str | None:
    """Why an OpInfo is outside rlx whatever its samples, or None."""
    name = op.name
    for pat, why in STATIC_SKIPS:
        if pat.search(name):
            return why
    if getattr(op, "has_nondeterministic_output", False):
        return "nondeterministic output (the OpInfo says so)"
    return None


def rlx_registry(rlx: str) -> set[str]:
    """Base names rlx lowers (``aten.add``), from ``rlx ops``."""
    p = subprocess.run([rlx, "ops"], capture_output=True, text=True, check=True)
    return {ln.strip() for ln in p.stdout.splitlines() if re.fullmatch(r"  [\w.]+", ln)}


class SampleModule(torch.nn.Module):
    """``forward(*tensors)``: the OpInfo's op on the sample with its tensors replaced."""

    def __init__(self, fn, spec, kwspec):
        super().__init__()
        self.fn, self.spec, self.kwspec = fn, spec, kwspec

    def forward(self, *ts):
        return self.fn(*[_dec(e, ts) for e in self.spec],
                       **{k: _dec(e, ts) for k, e in self.kwspec.items()})


def _enc(a, tens: list):
    """A sample argument as a spec: ("T", i) for tensor input i, lists of specs, constants."""
    if isinstance(a, torch.Tensor):
        tens.append(a)
        return ("T", len(tens) - 1)
    if isinstance(a, (list, tuple)) and any(isinstance(b, torch.Tensor) for b in a):
        return ("L", type(a), [_enc(b, tens) for b in a])
    return ("C", a)


def _dec(e, ts):
    if e[0] == "T":
        return ts[e[1]]
    if e[0] == "L":
        return e[1](_dec(b, ts) for b in e[2])
    return e[1]


def _tensors(x) -> list:
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for b in x for t in _tensors(b)]
    if isinstance(x, dict):
        return [t for b in x.values() for t in _tensors(b)]
    return []


def _sample_skip(tens: list) -> str | None:
    for t in tens:
        if t.layout != torch.strided:
            return f"{t.layout} input: rlx tensors are dense"
        if t.is_complex():
            return ("complex input: rlx programs take real tensors (complex values exist only "
                    "inside one)")
        if t.is_quantized:
            return "quantized input"
    return None


def _verify(rlx: str, d: Path) -> tuple[int, str, dict | None]:
    try:
        p = subprocess.run([rlx, "verify", str(d), "--json", str(d / "v.json")],
                           capture_output=True, encoding="utf-8", errors="replace",
                           timeout=VERIFY_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return 2, f"rlx verify timed out after {VERIFY_TIMEOUT_S} s", None
    text = " | ".join(ln.strip() for ln in (p.stderr or p.stdout).strip().splitlines()[-2:])
    try:
        report = json.loads((d / "v.json").read_text())
    except (OSError, ValueError):
        report = None
    return p.returncode, text, report


def _judge(rc: int, text: str, report: dict | None, ir: dict) -> tuple[str, str]:
    if rc == 2:
        return "error", text
    if rc not in (0, 1):
        return "error", f"rlx verify crashed (exit {rc}): {text}"
    if report is None:
        return "error", "rlx verify wrote no readable JSON report"
    want = [o.get("dtype") for o in ir.get("outputs", [])]
    problems = []
    for o in report.get("outputs", []):
        i = o["index"]
        if not o["pass"]:
            problems.append(f"out[{i}] {o['dtype']}: {o.get('reason', 'FAIL')}")
        if i < len(want) and want[i] and o["dtype"] != want[i]:
            problems.append(f"out[{i}]: rlx returns {o['dtype']}, torch {want[i]}")
    if rc == 1 or not report.get("pass", False) or problems:
        return "fail", "; ".join(problems) or text
    return "pass", ""


def _export(m, tens, d: Path, ref64: bool):
    from rlx.export import export_program
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(EXPORT_TIMEOUT_S)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            export_program(m, tuple(tens), d, model_name="opinfo", decomposition="high",
                           check=False, reference64_cap_mb=64 if ref64 else 0)
    finally:
        signal.alarm(0)


def run_sample(op, sample, rlx: str, registry: set[str], workdir: Path) -> tuple[str, str, list]:
    """(status, reason, exported ops) for one sample input of ``op``."""
    tens: list = []
    spec = [_enc(a, tens) for a in (sample.input, *sample.args)]
    kwspec = {k: _enc(v, tens) for k, v in sample.kwargs.items()}
    why = _sample_skip(tens)
    if why:
        return "skip", why, []
    # a program's input is its values, not a view into a larger storage: torch
    # must not see storage the exported program cannot (as_strided.partial_views)
    tens = [t.clone(memory_format=torch.contiguous_format) for t in tens]
    m = SampleModule(op.op, spec, kwspec)
    try:
        with torch.no_grad():
            out = m(*tens)
    except Exception as e:  # noqa: BLE001 - the sample's own failure
        return "skip", f"eager torch rejects the sample: {first_line(e)}", []
    outs = _tensors(out)
    if not outs:
        return "skip", f"no tensor output (returns {type(out).__name__})", []
    if any(t.is_complex() for t in outs):
        return "skip", ("complex output: rlx programs return real tensors (complex values exist "
                        "only inside one)"), []
    if any(t.layout != torch.strided for t in outs):
        return "skip", "sparse output", []
    d = Path(tempfile.mkdtemp(prefix="oi_", dir=workdir))
    try:
        _export(m, tens, d, ref64=False)
    except _Timeout:
        return "skip", f"torch.export did not finish in {EXPORT_TIMEOUT_S} s", []
    except Exception as e:  # noqa: BLE001 - classified below
        return _export_failure(e) + ([],)
    ir = json.loads((d / "torch-ir.json").read_text())
    ops = sorted({n["op"] for n in ir["nodes"]})
    random = [o for o in ops if _is_random(o)]
    if random:
        return "skip", f"{_RANDOM} ({', '.join(random)})", ops
    missing = [o for o in ops if "." in o and o.rsplit(".", 1)[0] not in registry]
    if missing:
        return "error", f"unsupported op {', '.join(missing)}", ops
    rc, text, report = _verify(rlx, d)
    status, reason = _judge(rc, text, report, ir)
    if status == "fail":  # let rlx's float64 arbiter judge a tolerance miss
        _export(m, tens, d, ref64=True)
        rc, text, report = _verify(rlx, d)
        status, reason = _judge(rc, text, report, ir)
    if status == "fail":
        status, reason = _judge_sign_aligned(rlx, d, ir, report, status, reason)
    return status, reason, ops


# Outputs unique only up to the sign of each vector (torch's documentation of
# linalg.svd and linalg.eigh says so): (aten op, output index) -> whether the
# vectors are the columns (U, eigenvectors) or the rows (Vh).
SIGN_AMBIGUOUS = {("aten._linalg_svd", 0): "columns", ("aten._linalg_svd", 2): "rows",
                  ("aten._linalg_eigh", 1): "columns"}


def sign_ambiguous_outputs(ir: dict) -> dict[int, str]:
    """Program output index -> "columns" | "rows" for the outputs that are
    directly a sign-ambiguous output of an SVD or eigh node (through its
    _getitem); anything computed from them is compared as it is."""
    nodes = {n["id"]: n for n in ir["nodes"]}
    found = {}
    for i, o in enumerate(ir.get("outputs", [])):
        g = nodes.get(o.get("ref"))
        if not g or g["op"] != "_getitem" or len(g["args"]) != 2:
            continue
        src = nodes.get(g["args"][0].get("ref"))
        if src:
            what = SIGN_AMBIGUOUS.get((src["op"].rsplit(".", 1)[0], g["args"][1].get("int")))
            if what:
                found[i] = what
    return found


def align_signs(got, want, what: str):
    """got with each vector (column or row of the last two axes) negated where
    that brings it closer to want's."""
    if what == "rows":
        return align_signs(got.swapaxes(-1, -2), want.swapaxes(-1, -2), "columns").swapaxes(-1, -2)
    dots = (got * want).sum(axis=-2, keepdims=True)
    return got * (1 - 2 * (dots < 0))


def _judge_sign_aligned(rlx: str, d: Path, ir: dict, report, status: str, reason: str):
    """A failing case whose failing outputs are all sign-ambiguous vectors,
    judged again with each vector's sign aligned to torch's (verify's f32/f64
    bar: max |rlx - torch| <= 1e-4 (1e-7 for f64) + that times max |torch|,
    cosine >= 0.99999); every other output must already have passed."""
    import numpy as np
    from safetensors.numpy import load_file
    amb = sign_ambiguous_outputs(ir)
    failing = [o["index"] for o in (report or {}).get("outputs", []) if not o["pass"]]
    if not amb or not failing or any(i not in amb for i in failing):
        return status, reason
    out = d / "rlx_out"
    p = subprocess.run([rlx, "run", str(d), "--output-dir", str(out)], capture_output=True, text=True,
                       timeout=VERIFY_TIMEOUT_S)
    if p.returncode:
        return status, reason
    ref = load_file(str(d / "reference.safetensors"))
    for i in failing:
        want = ref[f"out::{i}"].astype(np.float64)
        got = align_signs(np.load(out / f"out_{i}.npy").astype(np.float64), want, amb[i])
        tol = 1e-7 if ir["outputs"][i]["dtype"] == "f64" else 1e-4
        scale = float(np.abs(want).max()) if want.size else 0.0
        err = float(np.abs(got - want).max()) if want.size else 0.0
        den = float(np.linalg.norm(got) * np.linalg.norm(want))
        cos = float((got * want).sum() / den) if den else 1.0
        if not (err <= tol + tol * scale and cos >= 0.99999):
            return status, reason + f" (also with each vector's sign aligned: max_abs={err:.3g} cosine={cos:.9f})"
    return "pass", ""


def _export_failure(e: Exception) -> tuple[str, str]:
    """torch.export's refusal and a data-dependent shape are skips; any other
    failure of rlx's exporter is rlx's error."""
    msg = str(e).strip()
    line = (msg.splitlines() or [""])[0]
    if re.search(r"data-dependent|GuardOnDataDependent|unbacked|depends on tensor data", msg):
        return "skip", f"data-dependent output shape: {line[:200]}"
    if re.search(r"dtype torch\.complex\w* is not supported by rlx", line):
        return "skip", f"complex dtype inside the program: {line[:200]}"
    if msg.startswith(("torch.export (strict=", "run_decompositions (")):
        m = re.match(r"(torch\.export|run_decompositions) \(strict=\w+( export)?\) failed: (.*)",
                     line)
        detail = m.group(3) if m else line
        return "skip", f"torch.export cannot export it: {detail[:200]}"
    return "error", f"rlx exporter: {first_line(e)}"


def _rejudge(r: dict) -> dict:
    """A case of an earlier --json run under today's rules, where its reason
    alone decides (an exporter refusal of a complex dtype or of a value read
    from tensor data is now a skip)."""
    if r["status"] == "error" and r["reason"].startswith("rlx exporter: ExportError: "):
        detail = r["reason"][len("rlx exporter: ExportError: "):]
        status, reason = _export_failure(Exception(detail))
        if status == "skip":
            return {**r, "status": status, "reason": reason}
    return r


def _is_random(overload: str) -> bool:
    ns, _, rest = overload.partition(".")
    base, _, ov = rest.rpartition(".")
    try:
        packet = getattr(getattr(torch.ops, ns), base)
        return torch.Tag.nondeterministic_seeded in getattr(packet, ov or "default").tags
    except (AttributeError, RuntimeError):
        return False


def select(op_db, names: list[str] | None) -> list:
    if names is None:
        return list(op_db)
    want = set(names)
    chosen = [op for op in op_db if op.name in want or opinfo_id(op) in want]
    unknown = want - {op.name for op in chosen} - {opinfo_id(op) for op in chosen}
    if unknown:
        raise SystemExit(f"opinfo.py: no OpInfo named {', '.join(sorted(unknown))}")
    return chosen


def cases_of(op, samples: int):
    """(dtype name, index, sample, None) for the first ``samples`` samples of
    ``op`` per dtype, or (dtype name, -1, None, reason) where there are none."""
    why = static_skip(op)
    if why:
        yield "-", -1, None, why
        return
    dtypes = [dt for dt in DTYPES if dt in op.supported_dtypes("cpu")]
    if not dtypes:
        yield "-", -1, None, "no float32, int64 or bool dtype on the CPU"
    for dt in dtypes:
        dname = str(dt).replace("torch.", "")
        try:
            torch.manual_seed(0)
            batch = []
            for s in op.sample_inputs("cpu", dt, requires_grad=False):
                batch.append(s)
                if len(batch) == samples:
                    break
        except Exception as e:  # noqa: BLE001
            yield dname, -1, None, f"the OpInfo cannot make samples: {first_line(e)}"
            continue
        for k, s in enumerate(batch):
            yield dname, k, s, None


def run(ops: list, samples: int, rlx: str, log=print, partial: Path | None = None) -> list[dict]:
    """Every case of ``ops`` (see the module docstring), one dict per case;
    with ``partial``, the cases so far are rewritten there after each OpInfo."""
    registry = rlx_registry(rlx)
    results = []
    with tempfile.TemporaryDirectory(prefix="rlx_opinfo_") as tmp:
        for op in ops:
            oid = opinfo_id(op)
            n0 = len(results)
            for dname, k, sample, why in cases_of(op, samples):
                if sample is None:
                    results.append({"opinfo": oid, "dtype": dname, "sample": k,
                                    "status": "skip", "reason": why, "ops": []})
                    continue
                case_dir = Path(tmp) / f"c{len(results)}"
                case_dir.mkdir()
                try:
                    status, reason, exported = run_sample(op, sample, rlx, registry, case_dir)
                except Exception as e:  # noqa: BLE001 - the runner must not stop
                    status, reason, exported = "error", f"runner: {first_line(e)}", []
                shutil.rmtree(case_dir, ignore_errors=True)
                results.append({"opinfo": oid, "dtype": dname, "sample": k,
                                "status": status, "reason": reason, "ops": exported})
            c = Counter(r["status"] for r in results[n0:])
            log(f"{oid}: " + " ".join(f"{k} {c[k]}" for k in ("pass", "fail", "error", "skip")
                                      if c[k]))
            for r in results[n0:]:
                if r["status"] in ("fail", "error"):
                    log(f"  {r['status']} {oid}/{r['dtype']}/{r['sample']}: {r['reason']}")
            if partial:
                partial.write_text(json.dumps({"partial": True, "cases": results}) + "\n")
    return results


def totals(results: list[dict]) -> dict:
    c = Counter(r["status"] for r in results)
    exportable = c["pass"] + c["fail"] + c["error"]
    unsupported = sum(r["status"] == "error" and r["reason"].startswith("unsupported op")
                      for r in results)
    lowered = exportable - unsupported

    def rate(n):
        return round(100.0 * c["pass"] / n, 2) if n else None
    return {"pass": c["pass"], "fail": c["fail"], "error": c["error"], "skip": c["skip"],
            "cases": len(results), "opinfos": len({r["opinfo"] for r in results}),
            "exportable": exportable, "pass_rate": rate(exportable),
            "unsupported_op": unsupported, "pass_rate_lowered": rate(lowered)}


def _skip_kind(reason: str) -> str:
    """A skip reason without its per-case detail, for the summary."""
    for prefix in ("eager torch rejects the sample", "torch.export cannot export it",
                   "the OpInfo cannot make samples", "random", "no tensor output",
                   "data-dependent output shape", "complex dtype inside the program"):
        if reason.startswith(prefix):
            if prefix == "torch.export cannot export it":
                return f"{prefix} ({reason.split(': ')[1]})"
            return prefix
    return reason


def markdown(results: list[dict], command: str, heading: str = "##", full: bool = True,
             date: str | None = None) -> str:
    """The summary: totals, failures (each case), errors (grouped by reason),
    skip reasons; with ``full``, also per-OpInfo counts and every skipped case."""
    t = totals(results)
    date = date or _now()
    lines = [
        f"{heading} OpInfo coverage", "",
        f"PyTorch's OpInfo samples (`op_db` of torch {torch.__version__.split('+')[0]}), run by "
        f"`{command}` on {date}: {t['opinfos']} OpInfos, {t['cases']} cases.  A case is one "
        "sample input of one OpInfo at one dtype (float32, int64, bool), exported with "
        "`decomposition=\"high\"` and checked by `rlx verify`; tests/conformance/opinfo.py "
        "says how each status is decided (singular vectors and eigenvectors, unique only up to "
        "sign, are compared with each vector's sign aligned to torch's), and tests/conformance/test_opinfo.py runs a fixed "
        "subset in the test suite.", "",
        "| pass | fail | error | skipped | exportable (pass+fail+error) "
        "| pass rate over exportable |",
        "|---|---|---|---|---|---|",
        f"| {t['pass']} | {t['fail']} | {t['error']} | {t['skip']} | {t['exportable']} | "
        f"{t['pass_rate']}% |", "",
        f"Of the exportable cases, {t['unsupported_op']} contain an op rlx does not lower "
        f"(`rlx ops`); over the other {t['exportable'] - t['unsupported_op']}, the pass rate is "
        f"{t['pass_rate_lowered']}%.", "",
    ]
    fails = [r for r in results if r["status"] == "fail"]
    lines += [f"{heading}# Failures: rlx disagrees with torch ({len(fails)})", ""]
    if fails:
        lines += ["| case | reason |", "|---|---|"]
        lines += [f"| `{r['opinfo']}/{r['dtype']}/{r['sample']}` | {_md(r['reason'])} |"
                  for r in fails]
    else:
        lines.append("None.")
    errors = defaultdict(list)
    for r in results:
        if r["status"] == "error":
            errors[r["reason"]].append(r)
    n_err = sum(len(v) for v in errors.values())
    lines += ["", f"{heading}# Errors: rlx refuses the program ({n_err})", ""]
    if errors:
        lines += ["| reason | cases | OpInfos |", "|---|---|---|"]
        for reason, rs in sorted(errors.items(), key=lambda kv: -len(kv[1])):
            names = ", ".join(f"`{n}`" for n in sorted({r["opinfo"] for r in rs}))
            lines.append(f"| {_md(reason)} | {len(rs)} | {names} |")
    else:
        lines.append("None.")
    kinds = Counter(_skip_kind(r["reason"]) for r in results if r["status"] == "skip")
    lines += ["", f"{heading}# Skip reasons ({t['skip']} cases)", "", "| reason | cases |",
              "|---|---|"]
    lines += [f"| {_md(k)} | {n} |" for k, n in kinds.most_common()]
    if not full:
        return "\n".join(lines) + "\n"
    per = defaultdict(Counter)
    for r in results:
        per[r["opinfo"]][r["status"]] += 1
    lines += ["", f"{heading}# Per OpInfo", "", "| OpInfo | pass | fail | error | skip |",
              "|---|---|---|---|---|"]
    lines += [f"| `{k}` | {c['pass']} | {c['fail']} | {c['error']} | {c['skip']} |"
              for k, c in sorted(per.items())]
    skipped = [r for r in results if r["status"] == "skip"]
    lines += ["", f"{heading}# Skipped cases", "", "| case | reason |", "|---|---|"]
    lines += [f"| `{r['opinfo']}/{r['dtype']}/{r['sample']}` | {_md(r['reason'])} |"
              for r in skipped]
    return "\n".join(lines) + "\n"


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _md(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")[:300]


def write_ops_md(path: Path, section: str) -> None:
    """Put ``section`` between the markers in ``path`` (appended when absent)."""
    text = path.read_text() if path.exists() else ""
    block = f"{MD_BEGIN}\n\n{section}\n{MD_END}\n"
    if MD_BEGIN in text and MD_END in text:
        head, rest = text.split(MD_BEGIN, 1)
        text = head + block + rest.split(MD_END, 1)[1].lstrip("\n")
    else:
        text = text.rstrip("\n") + "\n\n" + block
    path.write_text(text)


def _command(args: list[str]) -> str:
    """The command line that made a run, less its output files."""
    return "python3 tests/conformance/opinfo.py " + " ".join(
        x for x in args if not x.startswith(("--json", "--markdown", "--ops-md"))
        and not x.endswith((".json", ".md")))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--ops", help="comma-separated OpInfo names (name or name.variant)")
    g.add_argument("--all", action="store_true", help="every OpInfo in op_db")
    g.add_argument("--from-json", type=Path, metavar="FILE", nargs="+",
                   help="run nothing: write --markdown / --ops-md from earlier --json runs "
                        "(an OpInfo in a later file replaces its cases in earlier ones)")
    ap.add_argument("--first", type=int, metavar="K", help="with --all: only the first K OpInfos")
    ap.add_argument("--samples", type=int, default=4, help="samples per OpInfo and dtype")
    ap.add_argument("--json", type=Path, help="write every case here")
    ap.add_argument("--markdown", type=Path, help="write the summary here")
    ap.add_argument("--ops-md", type=Path, help="replace the OpInfo section of this file")
    ap.add_argument("--rlx", default=os.environ.get("RLX_BIN", str(REPO / "build" / "rlx")))
    a = ap.parse_args(argv)
    if a.from_json:
        runs = [json.loads(f.read_text()) for f in a.from_json]
        results = []
        for data in runs:
            later = {r["opinfo"] for r in data["cases"]}
            results = [r for r in results if r["opinfo"] not in later] + data["cases"]
        results = [_rejudge(r) for r in results]
        t = totals(results)
        t["seconds"] = sum(d.get("totals", {}).get("seconds", 0) for d in runs)
        # every run's date, in order: the report's cases come from all of them
        t["date"] = "; then ".join(
            d.get("totals", {}).get("date") or datetime.datetime.fromtimestamp(
                f.stat().st_mtime, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            for d, f in zip(runs, a.from_json))
        command = "; then ".join(_command(d.get("command", "(partial run)").split()[2:])
                                 for d in runs)
    else:
        from torch.testing._internal.common_methods_invocations import op_db
        ops = select(op_db, None if a.all else [s for s in a.ops.split(",") if s])
        if a.first:
            ops = ops[:a.first]
        t0 = time.time()
        results = run(ops, a.samples, a.rlx, log=lambda m: print(m, flush=True),
                      partial=a.json)
        t = totals(results)
        t["seconds"] = round(time.time() - t0, 1)
        t["date"] = _now()
        command = _command(argv if argv is not None else sys.argv[1:])
    print(json.dumps(t))
    if a.json and not a.from_json:
        a.json.write_text(json.dumps({"totals": t, "command": command, "cases": results},
                                     indent=1) + "\n")
    if a.markdown:
        a.markdown.write_text(markdown(results, command, "#", date=t.get("date")))
    if a.ops_md:
        write_ops_md(a.ops_md, markdown(results, command, full=False,
                                                date=t.get("date")))
    return 1 if t["fail"] or t["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
