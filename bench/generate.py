"""Text-generation speed: rlx against llama.cpp and transformers (issue 12).

    python3 bench/generate.py [--threads 2] [--prompt 128] [--new 128] [--rounds 2]
                              [--runtimes rlx,llamacpp,transformers] [--work /tmp/rlx-bench/gen]
                              [--write docs/bench_generate.md]

The model: a Llama-style decoder of about 1B parameters (bench/peers/
models.py's llama_1b, as a LlamaForCausalLM), random weights (seed 0), f32,
with a Llama-2-style tokenizer trained here (nothing is downloaded; llama.cpp's
converter needs one). Each runtime runs in its own process, rounds
interleaved (the order rotated every round), and reports the prefill time of
a --prompt-token prompt and the decode time of --new greedy tokens after it:

  rlx           `rlx generate` of the rlx.export_llm export (its own timing)

Every runtime first runs one untimed prefill and decode step (weights and
buffers touched), then times a new context.
  llamacpp      llama-cpp-python on the same weights converted to GGUF f32 with
                llama.cpp's own convert_hf_to_gguf.py (from the llama-cpp-python
                sdist: --llama-cpp-src), n_threads = n_threads_batch = --threads
  transformers  eager torch, a prefill forward then one forward per token with
                its DynamicCache (what generate() does), set_flush_denormal(True)

The decode bound is the measured read bandwidth (bench/bandwidth, built with
the project) divided by the bytes of weights one token reads (every weight
but the embedding table, plus one embedding row). Figures are medians over
the rounds; nothing here asserts anything.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

CONFIG = dict(vocab_size=32000, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
              num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=2048,
              bos_token_id=1, eos_token_id=2)
RLX_BIN = os.environ.get("RLX_BIN", str(REPO / "build" / "rlx"))


def build_model():
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(**CONFIG)).eval()


def train_tokenizer(vocab: int):
    """A Llama-2-style tokenizer (SentencePiece-style BPE with byte fallback)
    trained on a synthetic corpus rich enough to reach `vocab` tokens."""
    import random

    from tokenizers import Tokenizer, decoders, models, normalizers, trainers
    rng = random.Random(0)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(60000)]
    lines = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(40000)]
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    special = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)]
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=vocab, special_tokens=special,
                                                       show_progress=False))
    return tok


def prepare(work: Path, llama_cpp_src: Path | None) -> dict:
    """The HF checkpoint, the rlx export and the GGUF, cached in work/."""
    import torch
    info_path = work / "model.json"
    if info_path.exists():
        return json.loads(info_path.read_text())
    work.mkdir(parents=True, exist_ok=True)
    lm = build_model()
    hf = work / "hf"
    from transformers import PreTrainedTokenizerFast
    if not (hf / "tokenizer.json").exists():  # each step is cached: a failed later one does not redo it
        tok = train_tokenizer(CONFIG["vocab_size"])
        if tok.get_vocab_size() != CONFIG["vocab_size"]:
            raise SystemExit(f"the trained tokenizer has {tok.get_vocab_size()} tokens, not {CONFIG['vocab_size']}")
        hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>")
        lm.save_pretrained(hf)
        hf_tok.save_pretrained(hf)
        print(f"bench/generate: saved the checkpoint to {hf}", file=sys.stderr)
    if not (work / "rlx" / "generation.json").exists():
        from rlx.export_llm import export_llm
        hf_tok = PreTrainedTokenizerFast.from_pretrained(hf)
        s = export_llm(lm, work / "rlx", tokenizer=hf_tok, max_seq=1024, check=False)
        print(f"bench/generate: exported {s['num_nodes']} nodes to {work / 'rlx'}", file=sys.stderr)
    gguf = None
    if llama_cpp_src and (work / "model-f32.gguf").exists():
        gguf = work / "model-f32.gguf"
    elif llama_cpp_src:
        gguf = work / "model-f32.gguf"
        conv = llama_cpp_src / "convert_hf_to_gguf.py"
        env = dict(os.environ, PYTHONPATH=f"{llama_cpp_src / 'gguf-py'}:{os.environ.get('PYTHONPATH', '')}")
        r = subprocess.run([sys.executable, str(conv), str(hf), "--outtype", "f32", "--outfile", str(gguf)],
                           capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise SystemExit(f"convert_hf_to_gguf.py failed:\n{r.stderr[-2000:]}")
    weights_read = sum(p.numel() * p.element_size() for n, p in lm.named_parameters()
                       if "embed_tokens" not in n) + CONFIG["hidden_size"] * 4
    info = {"params": sum(p.numel() for p in lm.parameters()), "weights_read_per_token": weights_read,
            "gguf": str(gguf) if gguf else None}
    info_path.write_text(json.dumps(info))
    del lm, torch
    return info


def prompt_ids(n: int) -> list[int]:
    import random
    rng = random.Random(1)
    return [1] + [rng.randrange(3, CONFIG["vocab_size"]) for _ in range(n - 1)]


# --------------------------------------------------------------------------
# Workers: one process each, one JSON line on stdout


def worker_rlx(a) -> dict:
    ids = prompt_ids(a.prompt)
    r = subprocess.run([RLX_BIN, "generate", str(Path(a.work) / "rlx"), "--prompt-ids", ",".join(map(str, ids)),
                        "--max-new-tokens", str(a.new), "--no-stop", "--quiet", "--threads", str(a.threads),
                        "--warmup", "1"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": r.stderr.strip()[-300:]}
    import re
    m = re.search(r"prefill (\d+) tokens in ([0-9.]+) ms .*decode (\d+) tokens in ([0-9.]+) ms", r.stderr)
    out = [int(x) for x in r.stdout.split("ids:")[1].strip().split(",")]
    return {"prefill_ms": float(m.group(2)), "decode_ms": float(m.group(4)), "decode_tokens": int(m.group(3)),
            "ids": out}


def worker_llamacpp(a) -> dict:
    import llama_cpp
    info = json.loads((Path(a.work) / "model.json").read_text())
    if not info.get("gguf"):
        return {"error": "no GGUF (give --llama-cpp-src)"}
    llm = llama_cpp.Llama(model_path=info["gguf"], n_ctx=a.prompt + a.new + 8, n_batch=a.prompt,
                          n_ubatch=a.prompt, n_threads=a.threads, n_threads_batch=a.threads, verbose=False,
                          logits_all=False)
    ids = prompt_ids(a.prompt)
    llm.eval(ids)  # warm-up, as for every runtime: a prefill and a decode step, then a new context
    llm.eval([ids[0]])
    llm.reset()
    t0 = time.perf_counter()
    llm.eval(ids)
    t1 = time.perf_counter()
    import numpy as np
    vocab = llm.n_vocab()

    def last():  # the logits llama.cpp computed for the batch's last token
        return int(np.argmax(np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(vocab,))))
    out = [last()]
    tok = out[0]
    for _ in range(a.new - 1):
        llm.eval([tok])
        tok = last()
        out.append(tok)
    t2 = time.perf_counter()
    return {"prefill_ms": (t1 - t0) * 1e3, "decode_ms": (t2 - t1) * 1e3, "decode_tokens": a.new - 1, "ids": out,
            "version": llama_cpp.__version__}


def worker_transformers(a) -> dict:
    import torch
    import transformers
    torch.set_num_threads(a.threads)
    torch.set_flush_denormal(True)
    from transformers import DynamicCache, LlamaForCausalLM
    lm = LlamaForCausalLM.from_pretrained(Path(a.work) / "hf", torch_dtype=torch.float32).eval()
    ids = torch.tensor([prompt_ids(a.prompt)])
    with torch.inference_mode():
        cache = DynamicCache(config=lm.config)  # warm-up: a prefill and a decode step
        lm(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
        lm(input_ids=ids[:, :1], past_key_values=cache, use_cache=True)
        cache = DynamicCache(config=lm.config)
        t0 = time.perf_counter()
        o = lm(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
        t1 = time.perf_counter()
        out = [int(o.logits[0, -1].argmax())]
        for _ in range(a.new - 1):
            o = lm(input_ids=torch.tensor([[out[-1]]]), past_key_values=cache, use_cache=True)
            out.append(int(o.logits[0, -1].argmax()))
        t2 = time.perf_counter()
    return {"prefill_ms": (t1 - t0) * 1e3, "decode_ms": (t2 - t1) * 1e3, "decode_tokens": a.new - 1, "ids": out,
            "version": f"transformers {transformers.__version__}, torch {torch.__version__}"}


WORKERS = {"rlx": worker_rlx, "llamacpp": worker_llamacpp, "transformers": worker_transformers}
NAMES = {"rlx": "rlx", "llamacpp": "llama.cpp (llama-cpp-python)", "transformers": "transformers (eager torch)"}


def run_worker(name: str, a) -> dict:
    cmd = [sys.executable, __file__, "--worker", name, "--work", a.work, "--threads", str(a.threads),
           "--prompt", str(a.prompt), "--new", str(a.new)]
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
    if not lines:
        return {"error": (r.stderr.strip() or "no output")[-300:]}
    return json.loads(lines[-1])


def bandwidth(threads: int) -> float | None:
    exe = Path(RLX_BIN).parent / "bench" / "bandwidth"
    if not exe.exists():
        return None
    r = subprocess.run([str(exe), str(threads), "2048"], capture_output=True, text=True)
    try:
        return float(r.stdout.split("read bandwidth:")[1].split("GB/s")[0])
    except (IndexError, ValueError):
        return None


def chart(path: Path, rows: list, bound: float | None, a) -> str | None:
    """Bars of prefill and decode tokens/s per runtime (PNG), the decode bound
    as a line. None, or why there is no chart."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001 - optional
        return f"no chart: {e}"
    ok = [(NAMES[r].split(" (")[0], p, d) for r, p, d, e in rows if not e]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.4), dpi=110)
    for ax, k, title in ((ax1, 1, f"prefill, {a.prompt}-token prompt"), (ax2, 2, f"decode, {a.new} tokens")):
        vals = [x[k] for x in ok]
        bars = ax.bar([x[0] for x in ok], vals, color=["#1f77b4" if x[0] == "rlx" else "#999999" for x in ok])
        for b, v in zip(bars, vals):
            ax.text(b.get_x() + b.get_width() / 2, v, f"{v:.1f}", ha="center", va="bottom", fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.set_ylabel("tokens / s")
    if bound:
        ax2.axhline(bound, color="black", linestyle="--", linewidth=0.8)
        ax2.text(len(ok) - 0.5, bound, " bandwidth bound (median)", va="bottom", ha="right", fontsize=7)
    fig.suptitle(f"1B Llama, f32, {a.threads} threads: median of {a.rounds} rounds", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", choices=list(WORKERS))
    ap.add_argument("--work", default="/tmp/rlx-bench/gen")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--new", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--runtimes", default="rlx,llamacpp,transformers")
    ap.add_argument("--llama-cpp-src", type=Path, default=None,
                    help="llama.cpp sources with convert_hf_to_gguf.py and gguf-py (the llama-cpp-python "
                         "sdist's vendor/llama.cpp)")
    ap.add_argument("--write", type=Path, default=None, help="write the report (markdown) here")
    ap.add_argument("--note", default="")
    a = ap.parse_args()
    if a.worker:
        try:
            res = WORKERS[a.worker](a)
        except Exception as e:  # noqa: BLE001 - a failure is a result
            res = {"error": f"{type(e).__name__}: {e}"[:300]}
        print(json.dumps(res))
        return 0
    info = prepare(Path(a.work), a.llama_cpp_src)
    if a.rounds < 1:
        print(f"bench/generate: prepared in {a.work}", file=sys.stderr)
        return 0
    runtimes = a.runtimes.split(",")
    results: dict[str, list[dict]] = {r: [] for r in runtimes}
    bw = []
    for k in range(a.rounds):
        order = runtimes[k % len(runtimes):] + runtimes[:k % len(runtimes)]
        for r in order:
            time.sleep(1)
            b = bandwidth(a.threads)  # just before each run: the host's other tenants move it a lot
            if b:
                bw.append(b)
            res = run_worker(r, a)
            res["bandwidth_gbs"] = b
            results[r].append(res)
            msg = res.get("error") or (f"prefill {res['prefill_ms']:.0f} ms, decode "
                                       f"{res['decode_tokens'] * 1e3 / res['decode_ms']:.2f} tok/s")
            print(f"round {k + 1}: {r}: {msg}", file=sys.stderr)
    bw_gbs = max(bw) if bw else None
    rows = []
    for r in runtimes:
        ok = [x for x in results[r] if "error" not in x]
        if not ok:
            rows.append((r, None, None, results[r][0].get("error", "?")))
            continue
        pre = statistics.median(a.prompt * 1e3 / x["prefill_ms"] for x in ok)
        dec = statistics.median(x["decode_tokens"] * 1e3 / x["decode_ms"] for x in ok)
        rows.append((r, pre, dec, None))
    ref = dict((r, (p, d)) for r, p, d, e in rows if not e)
    lines = [f"# Text generation: rlx against llama.cpp and transformers", "",
             "Generated by `bench/generate.py`; do not edit by hand. "
             f"Each runtime in its own process, {a.rounds} rounds interleaved; medians over the rounds.", "",
             f"- command: `python3 bench/generate.py --threads {a.threads} --prompt {a.prompt} --new {a.new} "
             f"--rounds {a.rounds} --runtimes {a.runtimes}" + (" --llama-cpp-src SRC" if a.llama_cpp_src else "")
             + (f" --write {a.write}`" if a.write else "`"),
             f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
             f"- model: Llama-style decoder, {info['params'] / 1e9:.2f}B parameters (hidden 2048, MLP 8192, 16 "
             "layers, 32 heads, 8 KV heads, vocab 32000), random weights, f32; greedy; "
             f"prompt {a.prompt} tokens, {a.new} new tokens; {a.threads} threads",
             ]
    if a.note:
        lines += ["", f"**Note.** {a.note}"]
    lines += ["", "| runtime | prefill tok/s | rlx × | decode tok/s | rlx × |", "|---|---:|---:|---:|---:|"]
    rp, rd = ref.get("rlx", (None, None))
    for r, p, d, e in rows:
        if e:
            lines.append(f"| {NAMES[r]} | n/a | | n/a | | ")
            continue
        lines.append(f"| {NAMES[r]} | {p:.1f} | {rp / p if rp else float('nan'):.2f} | {d:.2f} | "
                     f"{rd / d if rd else float('nan'):.2f} |")
    lines += ["", "Per round (prefill tok/s / decode tok/s), in the order run:", ""]
    for r in runtimes:
        per = [f"{a.prompt * 1e3 / x['prefill_ms']:.1f} / {x['decode_tokens'] * 1e3 / x['decode_ms']:.2f}"
               if "error" not in x else "error" for x in results[r]]
        lines.append(f"- {NAMES[r]}: " + ", ".join(per))
    errs = [(r, e) for r, p, d, e in rows if e]
    for r, e in errs:
        lines.append(f"\n{NAMES[r]}: {e}")
    if bw:
        per_tok = info["weights_read_per_token"]
        lines += ["", f"Decode bound: the read bandwidth measured just before each run (`bench/bandwidth`, "
                  f"{a.threads} threads; {min(bw):.1f}-{max(bw):.1f} GB/s over this run: the host's other tenants "
                  f"move it) / {per_tok / 1e9:.2f} GB of weights read per token. Each run's decode rate as a "
                  "fraction of its own bound, median over the rounds:"]
        for r, p, d, e in rows:
            fr = [x["decode_tokens"] * 1e3 / x["decode_ms"] / (x["bandwidth_gbs"] * 1e9 / per_tok)
                  for x in results[r] if "error" not in x and x.get("bandwidth_gbs")]
            if fr:
                lines.append(f"- {NAMES[r]}: {100 * statistics.median(fr):.0f}% "
                             f"(rounds: {', '.join(f'{100 * f:.0f}%' for f in fr)})")
    same = {}
    base = next((x["ids"] for x in results.get("rlx", []) if "ids" in x), None)
    for r in runtimes:
        ids = next((x["ids"] for x in results[r] if "ids" in x), None)
        if base and ids and r != "rlx":
            k = next((i for i, (u, v) in enumerate(zip(base, ids)) if u != v), min(len(base), len(ids)))
            same[r] = k
    if same:
        lines += ["", "Greedy tokens identical to rlx's for the first N of them (f32 rounding may break a "
                  "near-tie and the texts part there): " + ", ".join(f"{NAMES[r]} {k}" for r, k in same.items())]
    if a.write:
        bound = None
        if bw:
            bound = statistics.median(bw) * 1e9 / info["weights_read_per_token"]
        why = chart(a.write.with_suffix(".png"), rows, bound, a)
        at = next(i for i, l in enumerate(lines) if l.startswith("- model:")) + 1
        if not why:
            lines[at:at] = ["", f"![prefill and decode]({a.write.with_suffix('.png').name})"]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.write:
        a.write.write_text(text)
        (a.write.with_suffix(".json")).write_text(json.dumps({"results": results, "bandwidth_gbs": bw_gbs,
                                                              "info": info}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
