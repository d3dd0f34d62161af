"""Benchmark worker: rlx (`rlx bench`, the binary at $RLX_BIN or build/rlx).

--prepare exports the model once with rlx.export (random weights, seed 0,
`rlx inspect --check`) into DIR/rlx/MODEL; a timed run is one `rlx bench`
there, whose min / median / p90 / mean it reports (rlx bench prints no
per-run times).  --prepare also profiles the model once (`rlx bench
--profile`) and keeps the nodes that ran on the reference kernel, with their
share of the run, for the report's notes (docs/bench.md lists any that
remain).  See common.py for the protocol.
"""

import os
import re
import subprocess
import sys
import time

from common import REPO, Unsupported, main

RLX_BIN = os.environ.get("RLX_BIN", str(REPO / "build" / "rlx"))
UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def version():
    r = subprocess.run([RLX_BIN, "--version"], capture_output=True, text=True)
    v = (r.stdout.strip() or r.stderr.strip()).replace("rlx ", "")
    g = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(RLX_BIN)))
    head = f"checkout {g.stdout.strip()}, " if g.returncode == 0 else ""
    return f"{v} ({head}binary built {built})"


def prepare(a, d):
    if not ((d / "torch-ir.json").exists() and (d / "weights.safetensors").exists()):
        export(a, d)
    (d / "reference_nodes.txt").write_text(reference_nodes(a, d))


# a --profile line: "  0.012 ms  LABEL  OP  KERNEL  -> [shape]  params"
PROFILE_LINE = re.compile(r"^\s+([0-9.]+) (us|ms|s)\s+(\S+)\s+(\S+)\s+(.+?)\s+-> (\[[^\]]*\])")


def reference_nodes(a, d):
    """One line: the nodes `rlx bench --profile` shows on the reference
    kernel, each with its time and share of a run, or that there are none."""
    r = subprocess.run([RLX_BIN, "bench", str(d), "--threads", str(a.threads), "--iters", "3", "--warmup", "1",
                        "--profile", "--top", "1000000"], capture_output=True, text=True)
    if r.returncode != 0:
        raise Unsupported(f"rlx bench --profile exit {r.returncode}: {(r.stderr.strip() or '?').splitlines()[-1][:200]}")
    total = re.search(r"cpu time per run \(all threads\): min \S+ \S+\s+median ([0-9.]+) (us|ms|s)", r.stdout)
    total_ms = float(total.group(1)) * UNIT[total.group(2)] if total else None
    found = []
    for line in r.stdout.splitlines():
        m = PROFILE_LINE.match(line)
        if m and m.group(5).startswith("reference"):
            ms = float(m.group(1)) * UNIT[m.group(2)]
            share = f", {100 * ms / total_ms:.2f}% of the run" if total_ms else ""
            found.append(f"{m.group(3)} ({m.group(4)} {m.group(6)}, {ms:.3f} ms{share})")
    if not found:
        return "rlx bench --profile: no node on the reference kernel"
    return f"rlx bench --profile: {len(found)} node(s) on the reference kernel: " + "; ".join(found)


def export(a, d):
    sys.path.insert(0, str(REPO / "python"))
    import models
    import rlx
    import torch
    torch.set_num_threads(a.threads)
    s = rlx.export_program(models.build(a.model), models.inputs(a.model), d, check=True)
    if s.get("check") not in (None, "passed"):
        raise Unsupported(f"rlx refuses: {s.get('check_message') or s.get('unsupported_ops')}")


def run(a, d):
    cmd = [RLX_BIN, "bench", str(d), "--threads", str(a.threads), "--iters", str(a.iters),
           "--warmup", str(a.warmup)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise Unsupported(f"rlx bench exit {r.returncode}: "
                          f"{(r.stderr.strip() or r.stdout.strip()).splitlines()[-1][:200]}")
    out = {}
    for key, k in (("min", "min_ms"), ("median", "median_ms"), ("p90", "p90_ms"), ("mean", "mean_ms")):
        m = re.search(rf"\b{key} ([0-9.]+) (us|ms|s)\b", r.stdout)
        if m:
            out[k] = float(m.group(1)) * UNIT[m.group(2)]
    if "median_ms" not in out:
        raise Unsupported(f"no median in rlx bench output: {r.stdout[:200]!r}")
    ref = d / "reference_nodes.txt"
    if ref.exists():
        out["note"] = ref.read_text().strip()
    return out


if __name__ == "__main__":
    sys.exit(main("rlx", version, prepare, run))
