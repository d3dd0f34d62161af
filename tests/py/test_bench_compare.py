"""bench/compare.py's host check: bench/host_probe (built with rlx) and the
line the report prints under a multi-thread table (rendered from made-up
results, so the wording is checked against hand-counted rounds)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROBE = Path(os.environ.get("RLX_BIN", REPO / "build" / "rlx")).parent / "bench" / "host_probe"


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_compare():
    """bench/compare.py, its `import models` bound to bench/peers/models.py for the load (another test's
    `models`, tests/zoo's, may be imported already under that name)."""
    saved = sys.modules.get("models")
    sys.modules["models"] = load("rlx_bench_peer_models", REPO / "bench" / "peers" / "models.py")
    try:
        return load("rlx_bench_compare", REPO / "bench" / "compare.py")
    finally:
        if saved is not None:
            sys.modules["models"] = saved
        else:
            del sys.modules["models"]


def result(runtime, threads, medians, hosts=None):
    rounds = [{"median_ms": m} for m in medians]
    for r, h in zip(rounds, hosts or []):
        r["host"] = h
    return {"model": "squeezenet1_1", "runtime": runtime, "threads": threads, "rounds": rounds,
            "median_ms": sorted(medians)[len(medians) // 2], "spread_ms": [min(medians), max(medians)]}


META = {"command": "python3 bench/compare.py", "date": "today", "machine": "test", "threads": [2, 1],
        "runtimes": ["rlx", "ort"], "rounds": 3, "iters": 10, "warmup": 2, "large_iters": 2, "large_rounds": 3,
        "pause": 1.0, "versions": {}, "note": ""}


def test_host_note_counts_the_rounds_with_a_low_check():
    c = load_compare()
    results = [result("rlx", 2, [3.6, 6.2, 6.3], [[1.95, 1.10], [1.90, 2.00], [None, 1.55]]),
               result("ort", 2, [3.5, 3.6, 3.9], [[1.99, 2.01], [1.80, 1.70], [1.62, 1.97]]),
               result("rlx", 1, [6.6, 6.7, 6.5]), result("ort", 1, [6.8, 6.7, 6.9])]
    md = c.markdown(META, results)
    two, one = md.split("## 2 threads")[1].split("## 1 thread")
    line = [ln for ln in two.splitlines() if ln.startswith("Host check")]
    assert len(line) == 1, two
    assert "1.10-2.01x" in line[0]  # the range over every check at two threads (None left out)
    assert "below 1.60x" in line[0]
    assert "`squeezenet1_1` rlx 2 of 3" in line[0]  # 1.10 and 1.55; 1.62 and up are not low
    assert "ONNX Runtime" not in line[0]
    assert "Host check" not in one  # one thread: nothing to check
    assert "| `squeezenet1_1` | 6.2 | 3.6 | 0.58 |" in two  # the medians keep every round


def test_no_host_line_without_checks():
    c = load_compare()
    md = c.markdown(META, [result("rlx", 2, [3.6, 3.7, 3.8]), result("ort", 2, [3.5, 3.6, 3.9]),
                           result("rlx", 1, [6.6]), result("ort", 1, [6.8])])
    assert "Host check" not in md  # an old report re-rendered, or --no-host-check


def test_no_low_round_says_so():
    c = load_compare()
    lines = c.host_note([result("rlx", 2, [3.6], [[1.9, 2.0]]), result("ort", 2, [3.5], [[1.7, 1.8]])],
                        ["squeezenet1_1"], ["rlx", "ort"], 2)
    assert lines and "No check was below 1.60x." in lines[0]


@pytest.mark.skipif(not PROBE.exists(), reason=f"{PROBE} not built")
def test_host_probe_prints_a_speedup():
    r = subprocess.run([str(PROBE), "2", "2"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["threads"] == 2
    # two threads of the same loop: at most twice one thread's speed (with the timer's slack), and at
    # least not far below it even with both vCPUs on one core
    assert 0.5 < out["speedup"] < 2.3
    assert out["one_ms"] > 0 and out["all_ms"] > 0


@pytest.mark.skipif(not PROBE.exists(), reason=f"{PROBE} not built")
@pytest.mark.parametrize("args", [["1"], ["65"], ["2", "0"], ["2", "abc"]])
def test_host_probe_refuses_bad_arguments(args):
    r = subprocess.run([str(PROBE), *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "usage: host_probe" in r.stderr
