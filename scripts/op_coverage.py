#!/usr/bin/env python3
"""Core ATen coverage of rlx, from the registry, the installed torch and the conformance suite.

    python3 scripts/op_coverage.py [--rlx PATH] [--results FILE] [--write docs/ops.md] [--quiet]

Sources:
  * the Core ATen overload list: every OpOverload of ``torch.ops.aten`` tagged
    ``torch.Tag.core`` in the installed torch;
  * the ops rlx lowers: ``$RLX_BIN ops`` (lines ``  <namespace>.<base>``, e.g.
    ``aten.add`` or a library's custom op ``transformers.grouped_mm_fallback``;
    default binary ``build/rlx``);
  * the conformance results: ``tests/conformance/results.json`` (written by
    ``python3 -m pytest tests/conformance``).

Status of a Core ATen overload:
  supported    rlx's registry has its base name and all of its conformance cases pass
  failing      rlx's registry has it, and some of its cases fail or error
  untested     rlx's registry has it, but the suite has no case for it
  unsupported  rlx's registry does not have its base name
  excluded     left out by design; ``EXCLUDED`` below gives the reason

Prints ``core aten coverage: N/M (P%)`` (N supported, M all Core ATen
overloads) and a per-op table; ``--write`` also writes the Markdown report,
keeping the file's "OpInfo coverage" section (``tests/conformance/opinfo.py
--ops-md`` writes that one).
Exit status: 0, or 2 when the rlx binary or torch cannot be used.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_RESULTS = REPO / "tests" / "conformance" / "results.json"

_BACKWARD = ("gradient op: it appears only in training (autograd) graphs, and rlx runs "
             "inference graphs")
_NEVER_EXPORTED = "never appears in a torch.export graph: "

# Core ATen overloads rlx leaves out by design, with the reason.
EXCLUDED = {
    "aten._adaptive_avg_pool2d_backward.default": _BACKWARD,
    "aten.avg_pool2d_backward.default": _BACKWARD,
    "aten.convolution_backward.default": _BACKWARD,
    "aten.embedding_dense_backward.default": _BACKWARD,
    "aten.max_pool2d_with_indices_backward.default": _BACKWARD,
    "aten.native_group_norm_backward.default": _BACKWARD,
    "aten.native_layer_norm_backward.default": _BACKWARD,
    "aten.rand.default": ("random numbers: the values come from torch's generator state, which "
                          "a runtime cannot reproduce, so no output can match torch"),
    "aten.randn.default": ("random numbers: the values come from torch's generator state, "
                           "which a runtime cannot reproduce, so no output can match torch"),
    "aten.randperm.default": ("random permutation: the values come from torch's generator "
                              "state, which a runtime cannot reproduce"),
    "aten.nonzero.default": ("data-dependent output shape (one row per non-zero element); "
                             "rlx plans every shape before running"),
    "aten._local_scalar_dense.default": ("Tensor.item(): a data-dependent host scalar (an "
                                         "unbacked SymInt in export); rlx graphs have no host "
                                         "values whose value is known only at run time"),
    "aten.sym_numel.default": _NEVER_EXPORTED + "numel() is traced as a product of "
                              "sym_size.int values (tested with sym_size.int)",
    "aten.sym_stride.int": _NEVER_EXPORTED + "exported inputs are contiguous, so a stride is "
                           "traced as a product of sym_size.int values or a constant",
    "aten.sym_storage_offset.default": _NEVER_EXPORTED + "exported inputs have storage offset "
                                       "0, so it is traced as the constant 0",
}

# Notes on ops outside Core ATen that rlx lowers but the suite cannot test on a CPU.
NONCORE_NOTES = {
    "aten._scaled_dot_product_efficient_attention": "CUDA-only in torch: eager CPU torch cannot "
                                                     "compute a reference",
    "aten._scaled_dot_product_flash_attention": "CUDA-only in torch: eager CPU torch cannot "
                                                "compute a reference",
    "aten.sym_constrain_range": "torch.export turns it into a range on the symbol; it stays in a "
                                "graph only for data-dependent (unbacked) sizes",
    "aten.sym_constrain_range_for_size": "torch.export turns it into a range on the symbol; it "
                                         "stays in a graph only for data-dependent (unbacked) "
                                         "sizes",
}

# Where rlx's results knowingly differ from eager torch's by more than a few
# ulp, by base name (src/ops/special.h; figures from tests/py/test_special_ulp.py
# and a 3500-point comparison per op: float32 ulps unless noted). In each case
# rlx is the closer to the function's value.
DEVIATIONS = {
    "aten.special_ndtr": "torch computes (1 + erf(x/sqrt 2))/2, which in float32 cancels below x = -2 and is 0 "
                         "below -5.9 (in float64 below -8.3); rlx returns Phi(x) within 0.5 ulp",
    "aten.digamma": "next to its roots torch's float32 is off by up to 474 ulp; rlx within 0.5 ulp of the value",
    "aten.polygamma": "torch's float64 trigamma truncates its series (5e-10 relative at x = 1); rlx is exact to "
                      "a few ulp (float32 results agree within 4 ulp)",
    "aten.special_erfcx": "below x = -1 torch squares x in the input's precision (52 ulp at x = -8.3 in float32, "
                          "500 float64 ulp near -26); rlx squares exactly",
    "aten.igamma": "torch's float32 evaluation errs by up to 1.2e3 ulp (p99 583), its float64 by up to 1.3e7 "
                   "float64 ulp, and it returns 0 for results below its underflow guard; rlx within 0.5 float32 "
                   "ulp of the value (float64: p99 49, max 75 ulp)",
    "aten.igammac": "torch's float32 errs by up to 7.2e4 ulp (p99 3.3e4); its float64 loses tiny a "
                    "(igammac(1e-30, 0.5) is 1.1e-30, not 5.6e-31); rlx within 0.5 float32 ulp of the value "
                    "(float64: p99 29, max 136 ulp)",
    "aten.special_bessel_j0": "torch's float64 J0/J1/Y0/Y1 err by up to 8.6e-7 (absolute) above x = 5 and its "
                              "float32 near their zeros; rlx takes libm's values with torch's phase rounding "
                              "(float32: within 4 ulp of the amplitude of torch's)",
    "aten.special_bessel_j1": "as special_bessel_j0", "aten.special_bessel_y0": "as special_bessel_j0",
    "aten.special_bessel_y1": "as special_bessel_j0",
    "aten.special_log_ndtr": "above x = 8 torch's float32 erfc underflows (160 ulp); rlx within 0.5 ulp",
    # which element among equal ones: torch's CPU kernels call the C++ library's std::sort and
    # std::nth_element, whose choice the standard leaves open; rlx follows libstdc++ (src/ops/order_algo.h)
    "aten.mode": "the index among equal values is the one libstdc++'s std::sort leaves last (torch's Linux "
                 "builds); a torch built on another C++ library may return another index of the same value",
    "aten.nanmedian": "an all-NaN row's index is the one libstdc++'s std::nth_element leaves first (torch's "
                      "Linux builds); a torch built on another C++ library may return another NaN's index",
    "aten.as_strided_scatter": "the view reads the input's contiguous storage (torch reads a view's base storage)",
    "aten.put": "repeated indices without accumulate: the last write wins (torch leaves it unspecified)",
    "aten.index_copy": "repeated indices: the last write wins (torch leaves it unspecified)",
    # linear algebra (linalg block; docs/design.md "Linear algebra")
    "aten._linalg_svd": "U and Vh are unique only up to each vector's sign (torch's documentation); rlx's "
                        "one-sided Jacobi picks its own signs, not LAPACK's, and the completed columns of a "
                        "full U (past the rank) are another orthonormal basis of the same space. The OpInfo "
                        "runner and the conformance cases compare these vectors up to sign",
    "aten._linalg_eigh": "the eigenvectors are unique only up to sign (within a repeated eigenvalue, up to a "
                         "rotation); rlx's Jacobi signs are its own, compared up to sign",
    "aten.linalg_matrix_exp": "scaling and squaring of the Taylor series in float64 (torch: degree-18 "
                              "polynomials in the input's dtype); float32 results are the exact value rounded",
    # issue 11: tie order of sort/topk, unsigned casts, histogram sums
    "aten.sort": "stable=False: the index among equal values is libstdc++'s std::sort's (fbgemm's stable radix "
                 "sort for 1-D ascending ints of 32768+ elements), as torch's Linux builds without x86-simd-sort",
    "aten.argsort": "as aten.sort",
    "aten.topk": "the index among equal values is libstdc++'s std::partial_sort's (k * 64 <= n) or "
                 "std::nth_element's then std::sort's, as torch's Linux builds",
    "aten.histogram": "weights add row by row in the dtype: torch's per-thread partial sums round a weighted f32 "
                      "histogram of many rows differently (within the f32 bar)",
    # special functions and miscellaneous ops (issue 11, branch specials)
    "aten.special_airy_ai": "below x = -2.09 torch's asymptotic rational form is off by up to 6.3e-6 of the "
                            "amplitude near x = -2.1 (float32 and float64), and its float32 exp of a rounded zeta "
                            "loses 2.6e-6 relative at x = 25; rlx's float64 is within 1.5e-12 of the amplitude "
                            "(mpmath), keeping torch's rounded phase",
    "aten.segment_reduce": "segments outside the axis (offsets, or lengths with unsafe=True) are a run-time error "
                           "where torch reads out of bounds",
    "aten.resize": "growing a tensor is refused: torch leaves the new elements uninitialized",
    **{f"aten.special_{p}": "an element whose recurrence runs past 2^24 steps without reaching NaN (Legendre with "
                            "|x| < 1 and n > 2^24, where torch runs n steps) is a run-time error; otherwise "
                            "torch's bits"
       for p in ("legendre_polynomial_p", "laguerre_polynomial_l", "chebyshev_polynomial_t",
                 "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                 "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                 "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w")},
}

STATUSES = ("supported", "failing", "untested", "unsupported", "excluded")


def base_name(overload: str) -> str:
    """``aten.add.Tensor`` -> ``aten.add`` (namespace and base name, no overload)."""
    return ".".join(overload.split(".")[:2])


def core_overloads() -> list[str]:
    import torch
    out = []
    for name in dir(torch.ops.aten):
        packet = getattr(torch.ops.aten, name)
        if not hasattr(packet, "overloads"):
            continue
        for ov in packet.overloads():
            op = getattr(packet, ov)
            if torch.Tag.core in op.tags:
                out.append(str(op))
    return sorted(out)


def rlx_registry(rlx: str) -> set[str]:
    """Op names (``aten.add``, ``transformers.grouped_mm_fallback``) from ``rlx ops``."""
    try:
        p = subprocess.run([rlx, "ops"], capture_output=True, encoding="utf-8", timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SystemExit(f"op_coverage: cannot run '{rlx} ops': {e}")
    if p.returncode != 0:
        raise SystemExit(f"op_coverage: '{rlx} ops' failed (exit {p.returncode}): "
                         f"{p.stderr.strip()}")
    names = set(re.findall(r"^ {2}([A-Za-z_][A-Za-z0-9_]*\.[A-Za-z0-9_]+)\s*$", p.stdout, re.M))
    if not any(n.startswith("aten.") for n in names):
        raise SystemExit(f"op_coverage: '{rlx} ops' listed no aten ops")
    return names


def load_results(path: Path) -> dict[str, list[dict]]:
    """overload -> its case entries."""
    by_op: dict[str, list[dict]] = defaultdict(list)
    if not path.is_file():
        print(f"op_coverage: note: {path} not found; run python3 -m pytest tests/conformance "
              "first (every registered op counts as untested)", file=sys.stderr)
        return by_op
    for e in json.loads(path.read_text()):
        by_op[e["overload"]].append(e)
    return by_op


def classify(overload: str, registry: set[str], results: dict[str, list[dict]]) -> dict:
    cases = results.get(overload, [])
    passed = sum(e["status"] == "pass" for e in cases)
    row = {"overload": overload, "passed": passed, "total": len(cases),
           "failures": [e for e in cases if e["status"] != "pass"], "reason": ""}
    if overload in EXCLUDED:
        row["status"], row["reason"] = "excluded", EXCLUDED[overload]
    elif base_name(overload) not in registry:
        row["status"] = "unsupported"
    elif not cases:
        row["status"] = "untested"
    elif passed == len(cases):
        row["status"], row["reason"] = "supported", DEVIATIONS.get(base_name(overload), "")
    else:
        row["status"] = "failing"
    return row


def coverage_line(rows: list[dict]) -> str:
    n = sum(r["status"] == "supported" for r in rows)
    m = len(rows)
    return f"core aten coverage: {n}/{m} ({100.0 * n / m:.1f}%)"


# --------------------------------------------------------------------------
# Output


def _short(msg: str, n: int = 160) -> str:
    msg = " ".join(msg.split())
    return msg if len(msg) <= n else msg[: n - 3] + "..."


def print_table(rows: list[dict], extra: list[dict]) -> None:
    w = max(len(r["overload"]) for r in rows + extra)
    print(f"{'overload':<{w}}  {'status':<11}  cases")
    for r in rows:
        cases = f"{r['passed']}/{r['total']}" if r["total"] else "-"
        note = f"  ({_short(r['reason'], 70)})" if r["reason"] else ""
        print(f"{r['overload']:<{w}}  {r['status']:<11}  {cases}{note}")
    if extra:
        print("\nops outside core aten:")
        for r in extra:
            cases = f"{r['passed']}/{r['total']}" if r["total"] else "-"
            note = f"  ({_short(r['reason'], 70)})" if r["reason"] else ""
            print(f"{r['overload']:<{w}}  {r['status']:<11}  {cases}{note}")


def noncore_rows(core: list[str], registry: set[str], results: dict[str, list[dict]]) -> list[dict]:
    """Rows for ops outside Core ATen: each non-core overload the suite tests (supported or
    not), and each registered base name that has neither a core overload nor a case."""
    core_set, core_bases = set(core), {base_name(o) for o in core}
    rows, seen = [], set()
    for ov in sorted(results):
        if ov in core_set:
            continue
        rows.append(classify(ov, registry, results))
        seen.add(base_name(ov))
    for b in sorted(registry - core_bases - seen):
        rows.append({"overload": b, "status": "untested", "passed": 0, "total": 0,
                     "failures": [], "reason": NONCORE_NOTES.get(b, "")})
    return sorted(rows, key=lambda r: r["overload"])


def markdown(rows: list[dict], extra: list[dict], torch_version: str, results_path: Path) -> str:
    counts = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
    total_cases = sum(r["total"] for r in rows + extra)
    total_pass = sum(r["passed"] for r in rows + extra)
    try:
        shown = results_path.relative_to(REPO)
    except ValueError:
        shown = results_path
    out = [
        "# rlx operator coverage",
        "",
        "<!-- Generated by scripts/op_coverage.py --write docs/ops.md; do not edit by hand. -->",
        "",
        f"Core ATen is the set of `torch.ops.aten` overloads tagged `core` in torch "
        f"{torch_version}: {len(rows)} overloads.  An overload is **supported** when rlx's "
        "lowering registry (`rlx ops`) has it and every one of its conformance cases "
        "(`tests/conformance`, each an exported program compared with eager torch by "
        "`rlx verify`) passes; **failing** when some case fails; **untested** when it has no "
        "case; **unsupported** when the registry lacks it; **excluded** when rlx leaves it out "
        "by design (the reason is given).",
        "",
        f"**{coverage_line(rows)}**",
        "",
        "| status | overloads |",
        "|---|---|",
        *[f"| {s} | {counts[s]} |" for s in STATUSES],
        "",
        f"Conformance cases: {total_pass} of {total_cases} pass (from `{shown}`).",
        "",
        "## Core ATen overloads",
        "",
        "| overload | status | cases passing | notes |",
        "|---|---|---|---|",
    ]
    for r in rows:
        cases = f"{r['passed']}/{r['total']}" if r["total"] else "—"
        note = r["reason"]
        if r["failures"]:
            note = f"{len(r['failures'])} failing, see below"
        out.append(f"| `{r['overload']}` | {r['status']} | {cases} | {note} |")
    out += [
        "",
        "## Ops outside Core ATen",
        "",
        "Overloads outside Core ATen appear in `aten` and `high` exports (the exporter keeps "
        "some high-level ops whole), as do libraries' custom ops (`torch.library`, e.g. "
        "`transformers.grouped_mm_fallback`).  Listed: every such overload the conformance "
        "suite tests, and every other base name rlx's registry lowers (shown without an "
        "overload: it has no conformance case yet).",
        "",
        "| op | status | cases passing | notes |",
        "|---|---|---|---|",
    ]
    for r in extra:
        cases = f"{r['passed']}/{r['total']}" if r["total"] else "—"
        note = f"{len(r['failures'])} failing, see below" if r["failures"] else r["reason"]
        out.append(f"| `{r['overload']}` | {r['status']} | {cases} | {note} |")
    failing = [r for r in rows + extra if r["failures"]]
    if failing:
        out += ["", "## Failing conformance cases", ""]
        for r in failing:
            out.append(f"- `{r['overload']}`")
            for e in sorted(r["failures"], key=lambda e: e["case"]):
                out.append(f"  - `{e['case']}` ({e['status']}): {_short(e['message'], 220)}")
    return "\n".join(out) + "\n"


OPINFO_BEGIN = "<!-- opinfo:begin"
OPINFO_END = "<!-- opinfo:end -->"


def opinfo_section(path: Path) -> str:
    """The "OpInfo coverage" section of the existing report (written by
    ``tests/conformance/opinfo.py --ops-md``, between its markers), to carry
    over into the regenerated one; "" when there is none."""
    try:
        text = path.read_text()
    except OSError:
        return ""
    start, end = text.find(OPINFO_BEGIN), text.find(OPINFO_END)
    if start < 0 or end < start:
        return ""
    return "\n" + text[start:end + len(OPINFO_END)] + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rlx", default=os.environ.get("RLX_BIN", str(REPO / "build" / "rlx")),
                    help="the rlx binary (default $RLX_BIN or build/rlx)")
    ap.add_argument("--results", type=Path, default=DEFAULT_RESULTS,
                    help="conformance results (default tests/conformance/results.json)")
    ap.add_argument("--write", type=Path, metavar="FILE", help="write the Markdown report")
    ap.add_argument("--quiet", action="store_true", help="print only the coverage line")
    a = ap.parse_args(argv)

    try:
        import torch
    except ImportError as e:
        print(f"op_coverage: cannot import torch: {e}", file=sys.stderr)
        return 2
    if not Path(a.rlx).is_file():
        print(f"op_coverage: rlx binary not found at {a.rlx} (build it or pass --rlx)",
              file=sys.stderr)
        return 2
    core = core_overloads()
    unknown = sorted(set(EXCLUDED) - set(core))
    if unknown:
        print(f"op_coverage: note: excluded ops no longer in Core ATen: {', '.join(unknown)}",
              file=sys.stderr)
    registry = rlx_registry(a.rlx)
    results = load_results(a.results)
    rows = [classify(o, registry, results) for o in core]
    extra = noncore_rows(core, registry, results)

    if not a.quiet:
        print_table(rows, extra)
        print()
    print(coverage_line(rows))
    if a.write:
        a.write.parent.mkdir(parents=True, exist_ok=True)
        kept = opinfo_section(a.write)
        a.write.write_text(markdown(rows, extra, torch.__version__.split("+")[0],
                                    a.results.resolve()) + kept)
        if not a.quiet:
            print(f"wrote {a.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
