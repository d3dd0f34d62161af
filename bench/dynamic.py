"""What a dynamic-shape export costs against static exports of the same model.

    python3 bench/dynamic.py [--threads 1,2] [--rounds R] [--iters N] [--models bert,resnet50]
                             [--work DIR] [--no-profile] [--reexport]

BERT-base (transformers BertModel, the bert-base config, random weights,
batch 1; inputs input_ids and attention_mask) is exported statically at seq
17, 128 and 384 and once with one dynamic seq axis 1..512 shared by both
inputs, torchvision resnet50 (random weights, 224x224) statically at batch 1
and 8 and once with a dynamic batch axis 1..8; each export is made once
and reused while its config hash matches (the case, get_model's code,
python/rlx's code, the library versions). Then, per thread count, R
rounds of `rlx bench` subprocesses, one process per measurement, interleaved
(static 17, dynamic 17, static 128, ... then the alternating run; the order
of static and dynamic flips every round), and prints as markdown tables:

1. per shape: static and dynamic median latency (median over rounds of each
   process's median) and dynamic / static (target: at most 1.05);
2. BERT with the binding changing every run (`--binding` 17, 128, 384
   alternating): its mean latency against the mean of the three static
   means (target: at most 1.10), and each binding's first-reshape planning
   time as `rlx bench` prints it (target: under 50 us);
3. the dynamic exports' arena at the bounds, as `rlx bench` prints it, next
   to the static exports' arenas.

Unless --no-profile, every shape whose dynamic / static is above 1.05 is
then run again under `rlx bench --profile` for both exports (up to 3
interleaved processes each), and the per-op times (medians) and the kernels
of the slowest nodes are printed side by side.

Every run of both exports names its shape (`--binding`, which with one
binding is `--shape`), so both pay the same
reshape call and run on the same generated inputs (the reference inputs
repeated over the shape). The thread pool is `--threads`; OPENBLAS_* and
the rest of the environment are passed through untouched. The machine may
be shared: a process during which other processes used more than
--max-others cores on average (/proc/stat's busy time less the child's own
CPU time) is run again, up to --retries times, and the counts are printed.
The rlx binary
is copied into the work directory first, so a rebuild during the run does
not change what is measured (printed: the git revision, whether src/,
include/ or tools/ have uncommitted changes, and the binary's build time).

This file is also the model file the exports are made from
(`python3 -m rlx.export bench/dynamic.py --set model=bert --set seq=17`).
Needs torch, transformers, torchvision and a built rlx ($RLX_BIN or
build/rlx).
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]

BERT_HINT = 128      # the dynamic BERT's example seq (kernels are chosen at the hint)
BERT_MAX = 512
RESNET_HINT = 4      # the dynamic resnet50's example batch (torch.export needs >= 2)
RESNET_MAX = 8
STATIC_TARGET, ALTERNATING_TARGET, PLAN_TARGET_US = 1.05, 1.10, 50.0


# --------------------------------------------------------------------------
# The models (rlx.export loads this file and calls get_model(**--set))


def get_model(model: str = "bert", seq: int = BERT_HINT, batch: int = 1):
    """(module, example inputs): BERT-base at (batch, seq) or resnet50 at (batch, 3, 224, 224)."""
    torch.manual_seed(0)
    if model == "bert":
        from transformers import BertConfig, BertModel

        class Bert(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = BertModel(BertConfig(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                              intermediate_size=3072, attn_implementation="sdpa"))

            def forward(self, input_ids, attention_mask):
                return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return Bert().eval(), (torch.randint(0, 30000, (batch, seq)), torch.ones(batch, seq, dtype=torch.int64))
    if model == "resnet50":
        import torchvision
        return torchvision.models.resnet50(weights=None).eval(), (torch.randn(batch, 3, 224, 224),)
    raise ValueError(f"unknown model '{model}'")


# --------------------------------------------------------------------------
# The exports


class Case:
    """One export: its model kwargs and dynamic axes; `shape` is its --shape at a given size."""

    def __init__(self, name, model, kwargs, dynamic=(), symbol=None):
        self.name, self.model, self.kwargs, self.dynamic, self.symbol = name, model, kwargs, list(dynamic), symbol

    def shape(self, size: int) -> str:
        return f"input_ids=1x{size}" if self.model == "bert" else f"x={size}x3x224x224"


def cases(models: list[str]) -> dict[str, dict]:
    """Per model: the static exports by size, the dynamic export, the sizes measured."""
    out = {}
    if "bert" in models:
        out["bert"] = dict(
            label="BERT-base, seq", sizes=[17, 128, 384],
            static={s: Case(f"bert_seq{s}", "bert", dict(model="bert", seq=s)) for s in (17, 128, 384)},
            dynamic=Case("bert_dyn", "bert", dict(model="bert", seq=BERT_HINT),
                         [f"input_ids:1:seq:1:{BERT_MAX}", f"attention_mask:1:seq:1:{BERT_MAX}"],
                         f"seq 1..{BERT_MAX}, hint {BERT_HINT}"))
    if "resnet50" in models:
        out["resnet50"] = dict(
            label="resnet50 224x224, batch", sizes=[1, 8],
            static={b: Case(f"resnet50_b{b}", "resnet50", dict(model="resnet50", batch=b)) for b in (1, 8)},
            dynamic=Case("resnet50_dyn", "resnet50", dict(model="resnet50", batch=RESNET_HINT),
                         [f"x:0:batch:1:{RESNET_MAX}"], f"batch 1..{RESNET_MAX}, hint {RESNET_HINT}"))
    return out


def versions() -> dict[str, str]:
    v = {"torch": torch.__version__}
    for mod in ("transformers", "torchvision"):
        try:
            v[mod] = __import__(mod).__version__
        except ImportError:
            v[mod] = "n/a"
    return v


def config_hash(case: Case) -> str:
    """What the export depends on: the case, the model code, the exporter's code, the library versions."""
    exporter = hashlib.sha256(b"".join(p.read_bytes() for p in sorted((REPO / "python" / "rlx").glob("*.py"))))
    cfg = dict(kwargs=case.kwargs, dynamic=case.dynamic, model_src=inspect.getsource(get_model),
               exporter=exporter.hexdigest(), versions=versions(), exporter_args=EXPORT_ARGS)
    return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]


EXPORT_ARGS = ["--reference64-cap-mb", "0", "--quiet"]


def export(case: Case, work: Path, force: bool) -> Path:
    """The case's export directory, exported by `python3 -m rlx.export` unless its hash matches."""
    d = work / case.name
    stamp, h = d / "bench-config.txt", config_hash(case)
    if not force and (d / "torch-ir.json").exists() and stamp.exists() and stamp.read_text().strip() == h:
        return d
    shutil.rmtree(d, ignore_errors=True)
    cmd = [sys.executable, "-m", "rlx.export", str(Path(__file__).resolve()), "-o", str(d), "--name", case.model]
    for k, v in case.kwargs.items():
        cmd += ["--set", f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}"]
    for spec in case.dynamic:
        cmd += ["--dynamic", spec]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(REPO / "python"), os.environ.get("PYTHONPATH")) if p))
    print(f"  exporting {case.name} ...", end="", flush=True)
    t0 = time.time()
    r = subprocess.run(cmd + EXPORT_ARGS, capture_output=True, text=True, env=env)
    if r.returncode:
        shutil.rmtree(d, ignore_errors=True)
        raise RuntimeError(f"export of {case.name} failed: {(r.stderr or r.stdout).strip()[-2000:]}")
    stamp.write_text(h + "\n")
    print(f" {time.time() - t0:.0f} s", flush=True)
    return d


# --------------------------------------------------------------------------
# rlx bench


def ms(value: str, unit: str) -> float:
    return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


def cpu_busy_s() -> float:
    """Seconds of CPU time the whole machine has spent busy (all cores; /proc/stat), 0 where unknown."""
    try:
        f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0.0
    idle = f[3] + (f[4] if len(f) > 4 else 0)  # idle, iowait; guest time is already in user
    return (sum(f[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def children_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def rlx_bench(rlx_bin: str, d: Path, shapes: list[str], threads: int, iters: int, warmup: int,
              profile: bool = False) -> dict:
    """One `rlx bench` process: latency (ms), per-binding planning (ms), arena (MiB) and,
    with profile, per-op ms and the slowest nodes' kernels; raises with stderr on failure."""
    cmd = [rlx_bin, "bench", str(d), "--threads", str(threads), "--iters", str(iters), "--warmup", str(warmup)]
    for s in shapes:
        cmd += ["--binding", s]
    if profile:
        cmd.append("--profile")
    busy0, own0, t0 = cpu_busy_s(), children_cpu_s(), time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    others = max(0.0, (cpu_busy_s() - busy0) - (children_cpu_s() - own0)) / wall if wall > 0 else 0.0
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {(r.stderr or r.stdout).strip()[-600:]}")
    out = r.stdout
    lat = re.search(r"latency[^:]*: min (\S+) (\S+)  median (\S+) (\S+)  p90 (\S+) (\S+)  mean (\S+) (\S+)", out)
    mem = re.search(r"memory: arena ([0-9.]+) MiB( at the bounds)? \(this binding: activations ([0-9.]+) MiB, "
                    r"scratch ([0-9.]+) MiB\)", out)
    if not lat or not mem:
        raise RuntimeError(f"{' '.join(cmd)}: unexpected output:\n{out[-600:]}")
    res = dict(min=ms(*lat.group(1, 2)), median=ms(*lat.group(3, 4)), p90=ms(*lat.group(5, 6)),
               mean=ms(*lat.group(7, 8)), arena=float(mem.group(1)), at_bounds=bool(mem.group(2)),
               activations=float(mem.group(3)), scratch=float(mem.group(4)), others=others,
               plan=[ms(v, u) for v, u in re.findall(r"^binding \d+:.*\(planned in ([0-9.]+) (us|ms|s)\)$", out, re.M)])
    if profile:
        res["ops"] = {op: float(t) for op, t in re.findall(r"^  (\S+)\s+\d+ nodes\s+([0-9.]+) ms", out, re.M)}
        res["slowest"] = re.findall(r"^\s+([0-9.]+) ms  (\S+)\s+(\S+)\s+(\S+)", out.split("slowest nodes:")[-1], re.M)
    return res


# --------------------------------------------------------------------------
# Measurement and tables


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def fmt(x: float, digits: int = 2) -> str:
    return "n/a" if x != x else f"{x:.{digits}f}"


def ratio_cell(r: float, per_round: list[float], target: float) -> str:
    spread = f" ({min(per_round):.2f}–{max(per_round):.2f})" if len(per_round) > 1 else ""
    flag = " **above**" if r == r and r > target else ""
    return f"{fmt(r)}×{spread}{flag}"


def measure(groups: dict, dirs: dict, rlx_bin: str, threads: int, a) -> dict:
    """R interleaved rounds; returns per (model, size) the static and dynamic runs, per model the
    alternating runs (BERT), each a list over rounds, and the failures."""
    runs: dict = {"static": {}, "dynamic": {}, "alt": {}, "errors": [], "measured": 0, "disturbed": 0,
                  "kept_disturbed": 0}

    def one(key, kind, d, shapes, iters, warmup, **extra):
        try:
            for attempt in range(a.retries + 1):  # again while other processes took CPU time
                time.sleep(a.pause if not attempt else a.retry_pause)
                r = rlx_bench(rlx_bin, d, shapes, threads, iters, warmup)
                if r["others"] <= a.max_others:
                    break
                runs["disturbed"] += 1
            runs["measured"] += 1
            runs["kept_disturbed"] += r["others"] > a.max_others
            runs[kind].setdefault(key, []).append(dict(r, **extra))
        except RuntimeError as e:
            runs["errors"].append(f"threads {threads}, {kind} {key}: {e}")

    for rnd in range(a.rounds):
        print(f"  threads {threads}, round {rnd + 1}/{a.rounds} (load average {os.getloadavg()[0]:.2f})", flush=True)
        for m, g in groups.items():
            dyn = g["dynamic"]
            for s in g["sizes"]:
                pair = [("static", dirs[g["static"][s].name]), ("dynamic", dirs[dyn.name])]
                for kind, d in (pair if rnd % 2 == 0 else pair[::-1]):
                    if d is not None:
                        one((m, s), kind, d, [dyn.shape(s)], a.iters, a.warmup)
            if m == "bert" and dirs[dyn.name] is not None:  # a new binding every run; 3 | warmup, 3 | iters
                n = len(g["sizes"])
                order = g["sizes"][rnd % n:] + g["sizes"][:rnd % n]  # each size planned first in some round
                one(m, "alt", dirs[dyn.name], [dyn.shape(s) for s in order], a.iters * n, n, order=order)
    return runs


def report(groups: dict, runs_by_threads: dict) -> list[tuple]:
    """Prints the three tables; returns the (model, size, threads) above the static target."""
    above = []
    print("\n**A run at a binding against a static export at the same shape** (median ms over rounds; "
          f"dynamic / static, target ≤ {STATIC_TARGET}; in parentheses the range of the per-round ratios)\n")
    print("| model, shape | threads | static ms | dynamic ms | dynamic / static | same, of the minima |")
    print("|---|---:|---:|---:|---|---:|")
    for m, g in groups.items():
        for s in g["sizes"]:
            for th, runs in runs_by_threads.items():
                st, dy = runs["static"].get((m, s), []), runs["dynamic"].get((m, s), [])
                sm, dm = med([r["median"] for r in st]), med([r["median"] for r in dy])
                per = [y["median"] / x["median"] for x, y in zip(st, dy)]
                mins = med([r["min"] for r in dy]) / med([r["min"] for r in st])
                if dm / sm > STATIC_TARGET:
                    above.append((m, s, th))
                print(f"| {g['label']} {s} | {th} | {fmt(sm)} | {fmt(dm)} | "
                      f"{ratio_cell(dm / sm, per, STATIC_TARGET)} | {fmt(mins)}× |")
    if "bert" in groups:
        g = groups["bert"]
        sizes = g["sizes"]
        print(f"\n**BERT, the binding changing every run** (seq {', '.join(map(str, sizes))} alternating; "
              f"mean ms over the runs, median over rounds; target ≤ {ALTERNATING_TARGET}; planning: each "
              f"binding's first reshape, µs, median over rounds, target < {PLAN_TARGET_US:.0f})\n")
        print("| threads | alternating mean ms | mean of static means ms | alternating / static | "
              "alternating / dynamic at fixed shapes | planning µs (" + " / ".join(f"seq {s}" for s in sizes)
              + ") | planning µs, first binding of the process / later ones |")
        print("|---:|---:|---:|---|---:|---:|---:|")
        for th, runs in runs_by_threads.items():
            alt = runs["alt"].get("bert", [])
            am = med([r["mean"] for r in alt])
            sm = statistics.fmean([med([r["mean"] for r in runs["static"].get(("bert", s), [])]) for s in sizes])
            dm = statistics.fmean([med([r["mean"] for r in runs["dynamic"].get(("bert", s), [])]) for s in sizes])
            per = []
            for k, r in enumerate(alt):  # the same round's static means
                st = [runs["static"].get(("bert", s), []) for s in sizes]
                if all(len(x) > k for x in st):
                    per.append(r["mean"] / statistics.fmean([x[k]["mean"] for x in st]))
            by_size = [dict(zip(r["order"], r["plan"])) for r in alt]
            plan = " / ".join(fmt(med([p[s] * 1e3 for p in by_size if s in p]), 1) for s in sizes)
            first = fmt(med([r["plan"][0] * 1e3 for r in alt if r["plan"]]), 1)
            later = fmt(med([p * 1e3 for r in alt for p in r["plan"][1:]]), 1)
            print(f"| {th} | {fmt(am)} | {fmt(sm)} | {ratio_cell(am / sm, per, ALTERNATING_TARGET)} | "
                  f"{fmt(am / dm)}× | {plan} | {first} / {later} |")
    print("\n**Memory** (`rlx bench`'s arena: the dynamic export's at the bounds, each static export's at its "
          "shape; MiB)\n")
    print("| model | dynamic export | threads | arena at the bounds | static arenas | dynamic export's plan at "
          "each shape (activations + scratch) |")
    print("|---|---|---:|---:|---|---|")
    for m, g in groups.items():
        for th, runs in runs_by_threads.items():  # kernel scratch depends on the thread count
            arena = med([r["arena"] for s in g["sizes"] for r in runs["dynamic"].get((m, s), [])])
            st = ", ".join(f"{s}: {fmt(med([r['arena'] for r in runs['static'].get((m, s), [])]))}"
                           for s in g["sizes"])
            per = ", ".join(f"{s}: " + fmt(med([r["activations"] + r["scratch"]
                                                for r in runs["dynamic"].get((m, s), [])])) for s in g["sizes"])
            print(f"| {m} | {g['dynamic'].symbol} | {th} | {fmt(arena)} | {st} | {per} |")
    return above


def profile_diff(groups: dict, dirs: dict, rlx_bin: str, which: list[tuple], a) -> None:
    """Per-op times and the slowest nodes' kernels of both exports where dynamic / static is above target."""
    for m, s, th in which:
        g = groups[m]
        sd, dd = dirs[g["static"][s].name], dirs[g["dynamic"].name]
        if sd is None or dd is None:
            continue
        got: dict = {sd: [], dd: []}
        try:
            for _ in range(min(a.rounds, 3)):  # interleaved, per-op medians
                for d in (sd, dd):
                    time.sleep(a.pause)
                    got[d].append(rlx_bench(rlx_bin, d, [g["dynamic"].shape(s)], th, a.iters, a.warmup, profile=True))
        except RuntimeError as e:
            print(f"\nprofile {m} {s} threads {th}: {e}")
            continue
        p_st, p_dy = ({"ops": {op: med([r["ops"].get(op, 0.0) for r in got[d]]) for op in got[d][0]["ops"]},
                       "slowest": got[d][-1]["slowest"]} for d in (sd, dd))
        print(f"\n**Profile, {g['label']} {s}, threads {th}** (`rlx bench --profile`, ms per run, median of "
              f"{len(got[sd])} interleaved processes)\n")
        print("| rlx op | static ms | dynamic ms | dynamic − static |")
        print("|---|---:|---:|---:|")
        ops = sorted(set(p_st["ops"]) | set(p_dy["ops"]), key=lambda o: -p_dy["ops"].get(o, 0.0))
        for op in ops:
            x, y = p_st["ops"].get(op, 0.0), p_dy["ops"].get(op, 0.0)
            print(f"| {op} | {x:.3f} | {y:.3f} | {y - x:+.3f} |")
        kst = {label: kern for _, label, _, kern in p_st["slowest"]}
        print("\nslowest nodes of the dynamic export (ms, node, op, kernel; the static export's kernel where it "
              "differs):")
        for t, label, op, kern in p_dy["slowest"]:
            other = kst.get(label)
            note = f"   static: {other}" if other and other != kern else ""
            print(f"    {t:>8} ms  {label:<30} {op:<10} {kern}{note}")


def git_rev() -> str:
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "src", "include", "tools"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" (src/include/tools modified)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10, help="timed runs per process (per binding when alternating)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--pause", type=float, default=0.5, help="seconds idle before each process")
    ap.add_argument("--max-others", type=float, default=0.1,
                    help="a process during which other processes used more than this many cores on average "
                         "is run again (the machine is shared)")
    ap.add_argument("--retries", type=int, default=4, help="runs again of a disturbed process, at most")
    ap.add_argument("--retry-pause", type=float, default=10.0, help="seconds idle before a run again")
    ap.add_argument("--models", default="bert,resnet50")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "rlx-bench-dynamic"),
                    help="export cache (outside the repository)")
    ap.add_argument("--reexport", action="store_true", help="export again even where the config hash matches")
    ap.add_argument("--no-profile", action="store_true", help="skip the profiles of shapes above target")
    a = ap.parse_args()
    rlx_src = os.environ.get("RLX_BIN", str(REPO / "build" / "rlx"))
    threads = [int(t) for t in a.threads.split(",")]
    groups = cases(a.models.split(","))
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    rlx_bin = str(work / "rlx")  # a copy: a rebuild during the run must not change the binary measured
    shutil.copy2(rlx_src, rlx_bin)
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(os.stat(rlx_src).st_mtime))
    v = versions()
    print(f"rlx {git_rev()}, binary {rlx_src} built {built}; torch {v['torch']}, transformers "
          f"{v['transformers']}, torchvision {v['torchvision']}; python {sys.version.split()[0]}")
    print(f"machine: {os.cpu_count()} cores, {cpu_name()}; load average {os.getloadavg()[0]:.2f} at start")
    print(f"threads {a.threads}; {a.rounds} rounds; {a.warmup} warm-up + {a.iters} timed runs per process; "
          f"exports in {work}")
    dirs = {}
    for g in groups.values():
        for c in list(g["static"].values()) + [g["dynamic"]]:
            try:
                dirs[c.name] = export(c, work, a.reexport)
            except RuntimeError as e:
                print(f"  {e}")
                dirs[c.name] = None
    runs_by_threads = {th: measure(groups, dirs, rlx_bin, th, a) for th in threads}
    above = report(groups, runs_by_threads)
    for th, r in runs_by_threads.items():
        print(f"\nthreads {th}: {r['measured']} processes measured; {r['disturbed']} runs repeated because other "
              f"processes used more than {a.max_others} cores during them; {r['kept_disturbed']} kept disturbed "
              f"after {a.retries} repeats")
    errors = [e for r in runs_by_threads.values() for e in r["errors"]]
    if errors:
        print("\nfailures:")
        for e in errors:
            print(f"  {e}")
    if above and not a.no_profile:
        profile_diff(groups, dirs, rlx_bin, above, a)
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    return 1 if errors or any(d is None for d in dirs.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
