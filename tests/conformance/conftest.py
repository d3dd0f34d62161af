"""The conformance suite's machinery: export a case, verify it with rlx, record the result.

Run: ``python3 -m pytest -q tests/conformance`` (``RLX_BIN`` names the binary),
then ``python3 scripts/op_coverage.py --write docs/ops.md``.  Each case's export
stays under pytest's temporary folder
(``/tmp/pytest-of-$USER/pytest-current/conformance0/<case id>``), so a failing
case can be re-run by hand with ``rlx verify DIR``.

Every test in this folder is ``test_case(case, conformance)`` over a list of
``cases.Case``.  The ``conformance`` fixture:

1. exports the case with ``rlx.export_program(..., check=False)`` (eager torch
   computes the reference outputs),
2. asserts that every expected op (by default the op under test) appears in
   the exported torch-ir.json, so a case cannot silently test something else,
3. runs ``$RLX_BIN verify OUT --json OUT/v.json`` (default ``build/rlx``),
   which compares integers and bools exactly, floats by cosine and max abs
   error, and non-finite values exactly,
4. checks that rlx's output dtypes are torch's (verify compares values only),
5. records ``{overload, case, status, message}`` for the results file.

Status is ``pass``; ``fail`` when rlx ran and its numbers (or dtypes) differ
from torch; ``error`` when rlx could not load, lower or run the program (e.g.
"aten->rlx registry does not yet support ...") or the export itself failed.

Results are written at the end of the session to ``results.json`` next to this
file (``$RLX_CONFORMANCE_RESULTS`` overrides the path): a JSON list sorted by
overload and case id, one entry per line.  A run of part of the suite
(``-k``, one file) merges into the existing file: entries of cases that did
not run are kept unless their test file ran and no longer defines them.
Under pytest-xdist the controller merges what the workers report and prunes
nothing.  ``scripts/op_coverage.py`` reads the file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(HERE))

from cases import Case, all_cases  # noqa: E402
from rlx.export import export_program  # noqa: E402

RESULTS_PATH = Path(os.environ.get("RLX_CONFORMANCE_RESULTS", HERE / "results.json"))
VERIFY_TIMEOUT_S = 120
_PROP = "rlx_conformance"


def rlx_binary() -> Path:
    return Path(os.environ.get("RLX_BIN", REPO / "build" / "rlx"))


@pytest.fixture(scope="session")
def rlx_bin() -> Path:
    path = rlx_binary()
    if not path.is_file():
        pytest.fail(f"rlx binary not found at {path}: build first (cmake -B build && "
                    "cmake --build build) or set RLX_BIN", pytrace=False)
    return path


@pytest.fixture(scope="session")
def conformance_dir(tmp_path_factory) -> Path:
    """Where the exports go: pytest keeps the last few runs' folders, so a
    failing case can be re-run by hand (``rlx verify DIR``)."""
    return tmp_path_factory.mktemp("conformance")


# --------------------------------------------------------------------------
# Export + verify


class CaseModule(torch.nn.Module):
    """``forward(*xs)`` calls the case's function."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def _dynamic_shapes(c: Case):
    """torch's ``dynamic_shapes`` for the case's (input, axis, name) triples."""
    if not c.dynamic:
        return None
    dims: dict[str, torch.export.Dim] = {}
    per = [None] * len(c.inputs)
    for i, axis, name in c.dynamic:
        dims.setdefault(name, torch.export.Dim(name, min=2, max=1 << 16))
        per[i] = {**(per[i] or {}), axis: dims[name]}
    return {"xs": tuple(per)}


def _first_lines(text: str, n: int = 3) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-n:])


def run_case(c: Case, rlx_bin: Path, out_dir: Path) -> tuple[str, str]:
    """(status, message) for one case; see the module docstring."""
    try:
        export_program(CaseModule(c.fn), c.inputs, out_dir, model_name=c.id,
                       decomposition=c.decomposition, dynamic=_dynamic_shapes(c), check=False)
    except Exception as e:  # noqa: BLE001 - reported as the case's error
        return "error", f"export failed: {type(e).__name__}: {str(e).splitlines()[0][:300]}"
    ir = json.loads((out_dir / "torch-ir.json").read_text())
    present = {n["op"] for n in ir["nodes"]}
    missing = [e for e in c.expect if e not in present]
    if missing:
        return "error", (f"test bug: {', '.join(missing)} not in the exported graph "
                         f"(ops: {', '.join(sorted(present)) or 'none'})")

    args = [str(rlx_bin), "verify", str(out_dir), "--json", str(out_dir / "v.json")]
    if c.atol is not None:
        args += ["--atol", repr(c.atol)]
    if c.rtol is not None:
        args += ["--rtol", repr(c.rtol)]
    try:
        p = subprocess.run(args, capture_output=True, encoding="utf-8", errors="replace",
                           timeout=VERIFY_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "error", f"rlx verify timed out after {VERIFY_TIMEOUT_S} s"
    if c.refuses is not None:
        if p.returncode == 2 and c.refuses in p.stderr:
            return "pass", f"refused as documented: {_first_lines(p.stderr, 1)}"
        return "fail", f"expected rlx to refuse with '{c.refuses}', got exit {p.returncode}"
    if p.returncode == 2:
        return "error", _first_lines(p.stderr or p.stdout, 2)
    if p.returncode < 0 or p.returncode not in (0, 1):
        return "error", f"rlx verify crashed (exit {p.returncode}): {_first_lines(p.stderr, 2)}"
    try:
        report = json.loads((out_dir / "v.json").read_text())
    except (OSError, ValueError) as e:
        return "error", f"rlx verify wrote no readable JSON report: {e}"

    problems = []
    want = [o.get("dtype") for o in ir["outputs"]]
    for o in report.get("outputs", []):
        i = o["index"]
        if not o["pass"]:
            problems.append(f"out[{i}] {o['dtype']}: {o.get('reason', 'FAIL')}")
        if i < len(want) and want[i] and o["dtype"] != want[i]:
            problems.append(f"out[{i}]: rlx returns {o['dtype']}, torch {want[i]}")
    if p.returncode == 1 or not report.get("pass", False):
        return "fail", "; ".join(problems) or _first_lines(p.stdout, 3)
    if problems:
        return "fail", "; ".join(problems)
    return "pass", ""


@pytest.fixture
def conformance(request, rlx_bin, conformance_dir):
    """Run one case; record it; fail the test unless rlx matches torch."""
    def check(c: Case) -> None:
        status, message = run_case(c, rlx_bin, conformance_dir / c.id)
        request.node.user_properties.append(
            (_PROP, {"overload": c.op, "case": c.id, "status": status, "message": message,
                     "file": c.file}))
        if status != "pass":
            pytest.fail(f"[{status}] {c.id}: {message}", pytrace=False)
    return check


# --------------------------------------------------------------------------
# The results recorder

_results: dict[str, dict] = {}


def pytest_runtest_logreport(report):
    for key, value in report.user_properties:
        if key == _PROP:
            _results[value["case"]] = value


def _load_results(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    if not isinstance(data, list):
        return []
    return [e for e in data if isinstance(e, dict) and "case" in e]


def dump_results(entries: list[dict]) -> str:
    """One entry per line, sorted by (overload, case): diffs and merges stay small."""
    entries = sorted(entries, key=lambda e: (e["overload"], e["case"]))
    keys = ("overload", "case", "status", "message", "file")
    body = ",\n".join(json.dumps({k: e.get(k, "") for k in keys}, ensure_ascii=False)
                      for e in entries)
    return "[\n" + body + "\n]\n" if entries else "[]\n"


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput") or not _results:
        return  # an xdist worker (the controller writes), or nothing ran
    known = all_cases()
    ran_files = {c.file for c in known.values()}
    merged = {}
    for e in _load_results(RESULTS_PATH):
        stale = e.get("file") in ran_files and e["case"] not in known
        if not stale:
            merged[e["case"]] = e
    merged.update(_results)
    RESULTS_PATH.write_text(dump_results(list(merged.values())))
