"""rlx against its peers: each runtime in its own process, rounds interleaved.

    python3 bench/compare.py [--models a,b,...] [--threads 1,2] [--rounds 3] [--iters 5]
        [--runtimes rlx,eager,...] [--quick] [--write docs/bench.md]

Runtimes: rlx (`rlx bench`), PyTorch eager, torch.compile (inductor), ONNX
Runtime, OpenVINO and ExecuTorch with its XNNPACK delegate, each driven by a
worker script in bench/peers/ (run_<runtime>.py; the models are defined once
in bench/peers/models.py: batch 1, fp32, random weights, seed 0).

For each model, every runtime first prepares once in a process of its own
(export, conversion or lowering, cached under --work; a runtime that cannot
take the model is reported n/a with the reason, and the run goes on).  Then,
for each thread count, each round starts one fresh process per runtime, in
an order rotated every round, after --pause seconds idle; the process loads
the model, warms up and times --iters runs at that thread count, and prints
one JSON line.  A runtime's figure is the median of its per-round medians;
its spread, the lowest and highest per-round median.  At two threads and
more, the host check (bench/host_probe, built with rlx: an FMA loop timed on
one thread and on N at once) runs before and after every round, and the
report gives, per runtime, how many rounds it found the cores shared around
(N threads below 0.8 x N times one): a shared VM's vCPUs can run as one core
for seconds to minutes.  It is information, not a filter: on the 2-vCPU host
of docs/perf.md rounds with a check below the bar often ran as fast as any.
Ratios are peer / rlx:
above 1, rlx is faster.  One process per runtime keeps the worker threads a
runtime leaves spinning (OpenMP, ORT's pool, OpenVINO's TBB) from taking the
cores of the next.

--write FILE.md writes the report (command, date, machine, versions, tables,
spreads, n/a reasons), FILE.json (the raw per-round figures) and
FILE_ratios.png (a bar chart of the ratios) beside it.  --report FILE.json
re-renders the report from saved results without running anything.

Needs: torch, torchvision, transformers (python/requirements-test.txt), a
built rlx ($RLX_BIN or build/rlx); for the peers, scripts/bench_setup.sh
(onnxruntime, onnx, onnxscript, openvino, matplotlib, and ExecuTorch in a
venv of its own under --venv-dir).  Times on a shared machine are noisy:
compare the ratios, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PEERS = REPO / "bench" / "peers"
sys.path.insert(0, str(PEERS))
from models import LARGE, MODELS, describe  # noqa: E402  (imports only torch, lazily)

RUNTIMES = ["rlx", "eager", "compile", "ort", "openvino", "executorch"]
LABEL = {"rlx": "rlx", "eager": "PyTorch eager", "compile": "torch.compile",
         "ort": "ONNX Runtime", "openvino": "OpenVINO", "executorch": "ExecuTorch (XNNPACK)"}
QUICK_MODELS = ["resnet18", "bert_base"]


# --------------------------------------------------------------------------
# Running the workers


def worker_python(runtime: str, venv_dir: Path) -> tuple[str | None, str]:
    """The interpreter for ``runtime``'s worker, or None and why not."""
    if runtime != "executorch":
        return sys.executable, ""
    py = venv_dir / "executorch" / "bin" / "python"
    if not py.exists():
        return None, f"no ExecuTorch venv at {py.parent.parent} (run scripts/bench_setup.sh)"
    return str(py), ""


def run_worker(a, runtime: str, model: str, threads: int, iters: int, warmup: int,
               prepare: bool, log: Path) -> dict:
    """One worker process; its JSON result, or {"error": ...} if it printed none."""
    py, why = worker_python(runtime, Path(a.venv_dir))
    if py is None:
        return {"error": why}
    cmd = [py, str(PEERS / f"run_{runtime}.py"), "--model", model, "--threads", str(threads),
           "--iters", str(iters), "--warmup", str(warmup), "--work", a.work]
    if prepare:
        cmd.append("--prepare")
    timeout = a.prepare_timeout if prepare else a.timeout
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as err:
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout:.0f} s"}
    for line in reversed(r.stdout.splitlines()):
        try:
            res = json.loads(line)
        except ValueError:
            continue
        if isinstance(res, dict) and res.get("runtime") == runtime:
            return res
    tail = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()][-1:]
    how = f"killed by signal {-r.returncode}" if r.returncode < 0 else f"exit {r.returncode}"
    return {"error": f"worker {how}, no result" + (f": {tail[0][:200]}" if tail else "")}


PROBE = Path(os.environ.get("RLX_HOST_PROBE", REPO / "build" / "bench" / "host_probe"))


def host_check(a, threads: int) -> float | None:
    """bench/host_probe's speedup of N threads over one (N when N cores are
    free), or None where there is nothing to check or no probe built."""
    if threads < 2 or a.no_host_check or not PROBE.exists():
        return None
    try:
        r = subprocess.run([str(PROBE), str(threads), "5"], capture_output=True, text=True, timeout=30)
        return float(json.loads(r.stdout.strip().splitlines()[-1])["speedup"])
    except (OSError, ValueError, KeyError, IndexError, subprocess.TimeoutExpired):
        return None


def pause(a) -> None:
    if a.pause > 0:
        time.sleep(a.pause)


def bench_model(a, model: str, results: list, versions: dict) -> None:
    iters = min(a.iters, a.large_iters) if model in LARGE else a.iters
    warmup = min(a.warmup, 1) if model in LARGE else a.warmup
    rounds = (a.large_rounds or a.rounds) if model in LARGE else a.rounds
    logs = Path(a.work) / "logs"
    ready = []
    for rt in a.runtimes:  # one-time work, each in a process of its own
        t0 = time.perf_counter()
        res = run_worker(a, rt, model, max(a.threads), 0, 0, True, logs / f"{model}.{rt}.prepare.log")
        if res.get("version"):
            versions[rt] = res["version"]
        if "error" in res:
            print(f"  {model}: {LABEL[rt]} n/a: {res['error']}", flush=True)
            for t in a.threads:
                results.append({"model": model, "runtime": rt, "threads": t, "error": res["error"],
                                "rounds": []})
        else:
            ready.append(rt)
            print(f"  {model}: {LABEL[rt]} ready ({time.perf_counter() - t0:.0f} s)", flush=True)
    for t in a.threads:
        per = {rt: {"model": model, "runtime": rt, "threads": t, "iters": iters, "warmup": warmup,
                    "rounds": [], "errors": []} for rt in ready}
        for k in range(rounds):
            order = ready[k % len(ready):] + ready[:k % len(ready)] if ready else []
            for rt in order:
                pause(a)
                before = host_check(a, t)
                res = run_worker(a, rt, model, t, iters, warmup, False,
                                 logs / f"{model}.{rt}.t{t}.r{k}.log")
                if "error" in res:
                    per[rt]["errors"].append(res["error"])
                    continue
                rnd = {k2: res[k2] for k2 in ("median_ms", "min_ms", "max_ms", "p90_ms", "times_ms") if k2 in res}
                if before is not None:
                    rnd["host"] = [before, host_check(a, t)]
                per[rt]["rounds"].append(rnd)
                if res.get("note"):
                    per[rt]["note"] = res["note"]
                if res.get("version"):
                    versions[rt] = res["version"]
        for rt in ready:
            r = per[rt]
            if r["rounds"]:
                meds = [x["median_ms"] for x in r["rounds"]]
                r.update(median_ms=statistics.median(meds), spread_ms=[min(meds), max(meds)])
            else:
                r["error"] = r["errors"][0] if r["errors"] else "no result"
            results.append(r)
        print_row(model, t, results, a.runtimes)


# --------------------------------------------------------------------------
# Tables


def cell(results: list, model: str, rt: str, t: int) -> dict | None:
    for r in results:
        if r["model"] == model and r["runtime"] == rt and r["threads"] == t:
            return r
    return None


def fmt_ms(v: float) -> str:
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def ratio(results, model, rt, t) -> float | None:
    base, r = cell(results, model, "rlx", t), cell(results, model, rt, t)
    if not base or not r or "median_ms" not in base or "median_ms" not in r:
        return None
    return r["median_ms"] / base["median_ms"]


def print_row(model: str, t: int, results: list, runtimes: list) -> None:
    parts = [f"{model:<20} t={t}"]
    for rt in runtimes:
        r = cell(results, model, rt, t)
        if not r or "median_ms" not in r:
            parts.append(f"{rt} n/a")
            continue
        q = ratio(results, model, rt, t) if rt != "rlx" else None
        parts.append(f"{rt} {fmt_ms(r['median_ms'])} ms" + (f" ({q:.2f}x)" if q else ""))
    print("  ".join(parts), flush=True)


def markdown(meta: dict, results: list) -> str:
    runtimes, threads = meta["runtimes"], meta["threads"]
    models = list(dict.fromkeys(r["model"] for r in results))
    peers = [rt for rt in runtimes if rt != "rlx"]
    v = meta["versions"]
    out = ["# rlx against its peers", "",
           "Generated by `bench/compare.py`; do not edit by hand. Each runtime runs in its own "
           "process, one fresh process per runtime and round, the order rotated every round, after "
           f"{meta['pause']:g} s idle. A figure is the median over {meta['rounds']} round(s) of each "
           f"round's median of {meta['iters']} timed runs (after {meta['warmup']} warm-up runs; "
           f"{', '.join(sorted(LARGE))}: {meta.get('large_rounds', meta['rounds'])} round(s) of "
           f"{meta['large_iters']} runs after 1). Ratios are "
           "peer / rlx: **above 1, rlx is faster**. Batch 1, fp32, random weights (seed 0), "
           "the same inputs for every runtime.", "",
           f"- command: `{meta['command']}`",
           f"- date: {meta['date']}",
           f"- machine: {meta['machine']}",
           "- versions: " + ", ".join(f"{LABEL[rt]} {v[rt]}" for rt in runtimes if rt in v), ""]
    if meta.get("note"):
        out += [f"**Note.** {meta['note']}", ""]
    out += ["Settings: PyTorch eager with `torch.set_num_threads(N)`, `set_flush_denormal(True)`, "
            "`inference_mode()`; torch.compile inductor default mode, compile time excluded; "
            "ONNX Runtime from `torch.onnx.export`, `intra_op_num_threads=N`, one inter-op thread, "
            "sequential, all graph optimizations; OpenVINO CPU, `INFERENCE_PRECISION_HINT=f32`, "
            "`PERFORMANCE_HINT=LATENCY`, `INFERENCE_NUM_THREADS=N`; ExecuTorch "
            "`to_edge_transform_and_lower` with `XnnpackPartitioner`, pool set with "
            "`_unsafe_reset_threadpool(N)`; rlx `rlx bench --threads N`.", ""]
    out += ["Models: " + "; ".join(f"`{m}`: {describe(m)[1]}" for m in models), ""]
    out += ["![peer / rlx ratios](bench_ratios.png)", ""]
    for t in threads:
        out += [f"## {t} thread{'s' if t > 1 else ''}", ""]
        head = "| model | rlx ms | " + " | ".join(f"{LABEL[p]} ms | ×" for p in peers) + " |"
        out += [head, "|---|---:|" + "---:|---:|" * len(peers)]
        for m in models:
            row = [f"`{m}`"]
            base = cell(results, m, "rlx", t)
            row.append(fmt_ms(base["median_ms"]) if base and "median_ms" in base else "n/a")
            for p in peers:
                r = cell(results, m, p, t)
                if not r or "median_ms" not in r:
                    row += ["n/a", ""]
                    continue
                q = ratio(results, m, p, t)
                row += [fmt_ms(r["median_ms"]), f"{q:.2f}" if q else ""]
            out.append("| " + " | ".join(row) + " |")
        out += ["", "Spread (lowest – highest per-round median, ms):", "",
                "| model | " + " | ".join(LABEL[rt] for rt in runtimes) + " |",
                "|---|" + "---:|" * len(runtimes)]
        for m in models:
            row = [f"`{m}`"]
            for rt in runtimes:
                r = cell(results, m, rt, t)
                row.append(f"{fmt_ms(r['spread_ms'][0])}–{fmt_ms(r['spread_ms'][1])}"
                           if r and "spread_ms" in r else "n/a")
            out.append("| " + " | ".join(row) + " |")
        out.append("")
        out += host_note(results, models, runtimes, t)
    na = {}
    for r in results:
        if "median_ms" not in r:
            na.setdefault((r["model"], r["runtime"], r.get("error", "no result")), []).append(r["threads"])
    if na:
        out += ["## n/a", ""]
        for (m, rt, why), ts in na.items():
            tt = "" if len(ts) == len(threads) else f" ({', '.join(map(str, ts))} thread)"
            out.append(f"- `{m}`, {LABEL[rt]}{tt}: {why}")
        out.append("")
    notes = {(r["model"], r["runtime"]): r["note"] for r in results if r.get("note")}
    if notes:
        out += ["## Notes", "", "How each peer got the model (ONNX exporter, OpenVINO front end, "
                "ExecuTorch partitions and the ops left outside them) and, for rlx, the nodes "
                "`rlx bench --profile` shows on the reference kernel, with their share of a run:", ""]
        for (m, rt), n in notes.items():
            out.append(f"- `{m}`, {LABEL[rt]}: {n}")
        out.append("")
    return "\n".join(out)


HOST_BAR = 0.8  # a host check below this x N times one thread's speed: the cores were shared


def host_note(results: list, models: list, runtimes: list, t: int) -> list:
    """The host check's line under a multi-thread table: its range, and per runtime the rounds it found the
    cores shared around (information: these rounds are in the medians)."""
    checks = [p for r in results if r["threads"] == t for x in r.get("rounds", []) for p in x.get("host", [])
              if p is not None]
    if not checks:
        return []
    shared = []
    for m in models:
        for rt in runtimes:
            r = cell(results, m, rt, t)
            rounds = r.get("rounds", []) if r else []
            low = [x for x in rounds if any(p is not None and p < HOST_BAR * t for p in x.get("host", []))]
            if low:
                shared.append(f"`{m}` {LABEL[rt]} {len(low)} of {len(rounds)}")
    line = (f"Host check (`bench/host_probe`, before and after each round): {t} threads of an FMA loop ran "
            f"{min(checks):.2f}-{max(checks):.2f}x one thread's speed ({t:.2f}x: {t} free cores). ")
    line += ((f"Rounds with a check below {HOST_BAR * t:.2f}x (the cores shared at some point; in the "
              "medians all the same): " + "; ".join(shared) + ".") if shared else
             f"No check was below {HOST_BAR * t:.2f}x.")
    return [line, ""]


def chart(meta: dict, results: list, path: Path) -> str | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError as e:
        return f"no chart: {e}"
    threads = meta["threads"]
    peers = [rt for rt in meta["runtimes"] if rt != "rlx"]
    models = list(dict.fromkeys(r["model"] for r in results))
    fig, axes = plt.subplots(len(threads), 1, figsize=(max(8, 1.3 * len(models)), 3.6 * len(threads)),
                             squeeze=False)
    w = 0.8 / max(1, len(peers))
    ticks = [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 7, 10, 20]
    for ax, t in zip(axes[:, 0], threads):
        seen = [1.0]
        for i, p in enumerate(peers):
            xs, ys = [], []
            for j, m in enumerate(models):
                q = ratio(results, m, p, t)
                if q:
                    xs.append(j - 0.4 + w * (i + 0.5))
                    ys.append(q)
            bars = ax.bar(xs, ys, w, label=LABEL[p], color=f"C{i}")
            ax.bar_label(bars, fmt="%.2f", fontsize=6, rotation=90, padding=2)
            seen += ys
        ax.axhline(1.0, color="black", linewidth=1)
        ax.set_yscale("log")
        lo, hi = min(seen) / 1.3, max(seen) * 1.8
        ax.set_ylim(lo, hi)
        ax.set_yticks([v for v in ticks if lo <= v <= hi])
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xticks(range(len(models)))
        ax.set_xticklabels(models, rotation=20, ha="right")
        ax.set_ylabel("peer time / rlx time")
        ax.set_title(f"{t} thread{'s' if t > 1 else ''}: peer / rlx, above 1 = rlx faster",
                     fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(peers), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def machine() -> str:
    name, cpus = platform.processor() or platform.machine(), os.cpu_count()
    try:
        info = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        f = dict(ln.split(":", 1) for ln in info.splitlines() if ":" in ln)
        name = f.get("Model name", name).strip()
        cpus = f.get("CPU(s)", cpus)
        cpus = f"{str(cpus).strip()} CPUs, {f.get('Thread(s) per core', '?').strip()} thread(s) per core"
    except OSError:
        cpus = f"{cpus} CPUs"
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
        cpus += f", {mem:.0f} GiB"
    except (ValueError, OSError):
        pass
    flags = ""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        have = [x for x in ("avx2", "avx512f", "avx512_bf16", "avx512_vnni") if f" {x}" in cpuinfo]
        flags = f" ({', '.join(have)})" if have else ""
    except OSError:
        pass
    return f"{name}{flags}, {cpus}"


def write_report(meta: dict, results: list, md: Path) -> None:
    md.parent.mkdir(parents=True, exist_ok=True)
    js = md.with_suffix(".json")
    js.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    png = md.with_name(md.stem + "_ratios.png")
    why = chart(meta, results, png)
    text = markdown(meta, results).replace("(bench_ratios.png)", f"({png.name})")
    if why:
        text = text.replace(f"![peer / rlx ratios]({png.name})", f"({why})")
    md.write_text(text)
    print(f"wrote {md}, {js}, {png if not why else why}")


# --------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="models: " + ", ".join(MODELS) + ", or any torchvision classifier by its name")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--runtimes", default=",".join(RUNTIMES))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=5, help="timed runs per process")
    ap.add_argument("--warmup", type=int, default=2, help="untimed runs per process first")
    ap.add_argument("--large-iters", type=int, default=2,
                    help=f"timed runs per process for {', '.join(sorted(LARGE))} (1 warm-up)")
    ap.add_argument("--large-rounds", type=int, default=0,
                    help=f"rounds for {', '.join(sorted(LARGE))} (default: --rounds)")
    ap.add_argument("--pause", type=float, default=1.0, help="seconds idle before each process")
    ap.add_argument("--quick", action="store_true",
                    help=f"smoke test: 1 round, 3 runs, {' and '.join(QUICK_MODELS)}")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "rlx-bench"),
                    help="exports, converted models and logs (cached between runs)")
    ap.add_argument("--venv-dir", default=os.environ.get("RLX_BENCH_VENVS", "/tmp/rlx-bench-venvs"),
                    help="where scripts/bench_setup.sh put the ExecuTorch venv")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds per timed process")
    ap.add_argument("--prepare-timeout", type=float, default=3600, help="seconds per prepare process")
    ap.add_argument("--write", metavar="FILE.md", help="write the report (and .json, _ratios.png)")
    ap.add_argument("--report", metavar="FILE.json", help="only re-render --write from saved results")
    ap.add_argument("--note", help="a remark for the report (e.g. on the machine's load)")
    ap.add_argument("--no-host-check", action="store_true", help="no host check around the rounds")
    a = ap.parse_args()

    if a.report:
        saved = json.loads(Path(a.report).read_text())
        if a.note is not None:
            saved["meta"]["note"] = a.note
        write_report(saved["meta"], saved["results"], Path(a.write or Path(a.report).with_suffix(".md")))
        return 0
    if a.quick:
        a.rounds, a.iters = 1, 3
        if a.models == ",".join(MODELS):
            a.models = ",".join(QUICK_MODELS)
    a.threads = [int(t) for t in a.threads.split(",")]
    a.runtimes = [r for r in a.runtimes.split(",") if r]
    a.models = [m for m in a.models.split(",") if m]
    for m in a.models:
        try:
            describe(m)
        except KeyError as e:
            ap.error(str(e.args[0]))
    for r in a.runtimes:
        if r not in RUNTIMES:
            ap.error(f"unknown runtime '{r}' (known: {', '.join(RUNTIMES)})")
    if "rlx" in a.runtimes:  # rlx first: the ratios are against it
        a.runtimes.remove("rlx")
        a.runtimes.insert(0, "rlx")
    Path(a.work).mkdir(parents=True, exist_ok=True)

    meta = {"command": "python3 bench/compare.py " + " ".join(shlex.quote(x) for x in sys.argv[1:]),
            "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
            "machine": machine(), "threads": a.threads, "runtimes": a.runtimes,
            "rounds": a.rounds, "iters": a.iters, "warmup": a.warmup, "large_iters": a.large_iters,
            "large_rounds": a.large_rounds or a.rounds,
            "pause": a.pause, "versions": {}, "note": a.note or ""}
    if max(a.threads) > 1 and not a.no_host_check and not PROBE.exists():
        print(f"note: no host check: {PROBE} is not built (cmake --build build --target host_probe)", flush=True)
    print(f"{meta['machine']}; threads {a.threads}; {a.rounds} rounds x {a.iters} runs; "
          f"work {a.work}", flush=True)
    results: list = []
    t0 = time.perf_counter()
    for m in a.models:
        bench_model(a, m, results, meta["versions"])
        if a.write:  # keep what is measured so far
            meta["elapsed_s"] = round(time.perf_counter() - t0)
            write_report(meta, results, Path(a.write))
    print("versions: " + ", ".join(f"{LABEL[k]} {v}" for k, v in meta["versions"].items()))
    print(f"done in {time.perf_counter() - t0:.0f} s")
    print()
    print(markdown(meta, results).split("![peer / rlx ratios]")[1].split("\n", 1)[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
