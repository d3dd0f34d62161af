"""What every benchmark worker in bench/peers/ shares: the command line, the
timing loop and the one JSON line it prints.

A worker is run as

    python3 bench/peers/run_<runtime>.py --model NAME --threads N --iters K --work DIR
        [--warmup W] [--prepare]

and prints exactly one JSON line on stdout (anything the runtime or an
exporter prints is sent to stderr):

    {"runtime": ..., "model": ..., "threads": N, "version": "...",
     "times_ms": [...], "median_ms": ..., "min_ms": ..., "max_ms": ...}

or, where the runtime cannot run the model, ``{"runtime": ..., "error": "..."}``
with exit status 0: a failure is a result, not a crash.  ``--prepare`` only
does the one-time work (export, conversion, lowering, cached under
DIR/RUNTIME/MODEL, which counts as done once its .prepared marker is written) and
prints ``{"runtime": ..., "prepared": true, "version": ...}``; the timed runs
then load what it left.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))


class Unsupported(Exception):
    """The runtime cannot run this model; the message says why (one line)."""


def one_line(e: BaseException, limit: int = 300) -> str:
    text = str(e).strip()
    for line in text.splitlines():  # the first line that says something
        if line.strip():
            text = line.strip()
            break
    text = f"{type(e).__name__}: {text}" if not isinstance(e, Unsupported) else text
    return text[:limit]


def time_runs(fn: Callable[[], object], iters: int, warmup: int) -> list[float]:
    """Call ``fn`` ``warmup`` times untimed, then ``iters`` times; the times in ms."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--work", default="/tmp/rlx-bench")
    ap.add_argument("--prepare", action="store_true",
                    help="only export/convert/lower into --work, time nothing")
    return ap.parse_args(argv)


def main(runtime: str, version: Callable[[], str],
         prepare: Callable[[argparse.Namespace, Path], None],
         run: Callable[[argparse.Namespace, Path], dict]) -> int:
    """Drive one worker: ``prepare(args, dir)`` caches the one-time work in
    ``dir`` (idempotent), ``run(args, dir)`` returns a dict with ``times_ms``
    (or ``median_ms`` and friends where the runtime reports only those)."""
    args = parse()
    # keep stray OpenMP / BLAS pools to the thread count we measure at
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever the runtime prints goes to stderr; stdout is ours
    sys.stdout = sys.stderr
    res: dict = {"runtime": runtime, "model": args.model, "threads": args.threads}
    try:
        res["version"] = version()
        d = Path(args.work) / runtime / args.model
        d.mkdir(parents=True, exist_ok=True)
        done = d / ".prepared"  # written last: a half-written cache is never used
        if not done.exists():
            for f in d.iterdir():
                if f.is_file():
                    f.unlink()
        if args.prepare or not done.exists():
            prepare(args, d)
            done.touch()
        if args.prepare:
            res["prepared"] = True
        else:
            r = run(args, d)
            t = r.get("times_ms")
            if t:
                r.setdefault("median_ms", statistics.median(t))
                r.setdefault("min_ms", min(t))
                r.setdefault("max_ms", max(t))
            res.update(r)
    except Exception as e:  # noqa: BLE001 - any runtime failure is reported as n/a
        traceback.print_exc()
        res["error"] = one_line(e)
    out.write(json.dumps(res) + "\n")
    out.flush()
    return 0


def quiet_fds():
    """A context manager sending fds 1 and 2 to /dev/null (exporters print graphs from C++)."""
    import contextlib

    @contextlib.contextmanager
    def cm():
        saved = [os.dup(1), os.dup(2)]
        sys.stderr.flush()
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1), os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)
            os.close(saved[0]), os.close(saved[1])
    return cm()
