"""rlx against its peers on the same models, inputs and thread count.

    python3 bench/compare.py [--threads N] [--rounds R] [--iters N] [--models a,b,...]

For each model: export once with rlx.export (random weights, seed 0), then
run R rounds; in each round `rlx bench` (a subprocess), PyTorch eager and
ONNX Runtime (the model exported with torch.onnx.export) each time `iters`
runs on the same input, one after the other, so the three see the same
machine state; each batch starts after `--pause` seconds idle, since the
runtimes' worker threads keep spinning after their last task and would take
the cores from whichever runs next. Prints the median of the per-round medians and the ratios
peer / rlx (above 1: rlx is faster). Times on a shared machine are noisy:
compare the ratios, not the absolute numbers.

Needs: torch, torchvision, transformers (python/requirements-test.txt),
onnxruntime, onnx, onnxscript (python/requirements-bench.txt; without them,
or where the ONNX export fails, the ORT columns read n/a) and a built rlx
($RLX_BIN or build/rlx).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
import rlx  # noqa: E402


def resnet18():
    import torchvision
    return torchvision.models.resnet18(weights=None), (torch.randn(1, 3, 224, 224),)


def mobilenet_v2():
    import torchvision
    return torchvision.models.mobilenet_v2(weights=None), (torch.randn(1, 3, 224, 224),)


def bert_base_seq128():
    from transformers import BertConfig, BertModel

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = BertModel(BertConfig(attn_implementation="sdpa"))

        def forward(self, ids):
            return self.m(input_ids=ids).last_hidden_state
    return M(), (torch.randint(0, 30000, (1, 128)),)


def llama_small_seq64():
    from transformers import LlamaConfig, LlamaForCausalLM

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = LlamaForCausalLM(LlamaConfig(vocab_size=8000, hidden_size=512, intermediate_size=1408,
                                                  num_hidden_layers=4, num_attention_heads=8,
                                                  num_key_value_heads=4, attn_implementation="sdpa"))

        def forward(self, ids):
            return self.m(input_ids=ids, use_cache=False).logits
    return M(), (torch.randint(0, 8000, (1, 64)),)


def mlp_batch64():
    m = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(), torch.nn.Linear(2048, 512))
    return m, (torch.randn(64, 512),)


MODELS = {f.__name__: f for f in (resnet18, mobilenet_v2, bert_base_seq128, llama_small_seq64, mlp_batch64)}


def time_torch(model, inputs, iters):
    t = []
    with torch.no_grad():
        for _ in range(iters):
            t0 = time.perf_counter()
            model(*inputs)
            t.append(time.perf_counter() - t0)
    return statistics.median(t) * 1e3


def onnx_session(model, inputs, path, threads):
    import onnxruntime as ort
    if not path.exists():
        import contextlib
        import io
        errors = []
        for dynamo in (False, True):  # TorchScript exporter first; the dynamo one where it fails
            saved = [os.dup(1), os.dup(2)]  # the exporters print graphs from C++ on failure
            try:
                sys.stdout.flush(), sys.stderr.flush()
                with open(os.devnull, "w") as null:
                    os.dup2(null.fileno(), 1), os.dup2(null.fileno(), 2)
                with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()), \
                        contextlib.redirect_stderr(io.StringIO()):
                    torch.onnx.export(model, inputs, str(path), dynamo=dynamo, opset_version=17 if not dynamo else 18)
                break
            except Exception as e:  # noqa: BLE001
                errors.append(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
                path.unlink(missing_ok=True)
            finally:
                os.dup2(saved[0], 1), os.dup2(saved[1], 2)
                os.close(saved[0]), os.close(saved[1])
        else:
            raise RuntimeError("; ".join(errors))
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    feed = {i.name: x.numpy() for i, x in zip(sess.get_inputs(), inputs)}
    return sess, feed


def time_ort(sess, feed, iters):
    t = []
    for _ in range(iters):
        t0 = time.perf_counter()
        sess.run(None, feed)
        t.append(time.perf_counter() - t0)
    return statistics.median(t) * 1e3


def time_rlx(rlx_bin, d, threads, iters):
    r = subprocess.run([rlx_bin, "bench", str(d), "--threads", str(threads), "--iters", str(iters),
                        "--warmup", "2"], capture_output=True, text=True, check=True)
    m = re.search(r"median ([0-9.]+) (us|ms|s)", r.stdout)
    v = float(m.group(1))
    return {"us": v / 1e3, "ms": v, "s": v * 1e3}[m.group(2)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--pause", type=float, default=1.0,
                    help="seconds of idle before each timed batch (lets spinning worker threads settle)")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "rlx-bench"))
    a = ap.parse_args()
    rlx_bin = os.environ.get("RLX_BIN", str(REPO / "build" / "rlx"))
    torch.set_num_threads(a.threads)
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    print(f"threads {a.threads}, {a.rounds} rounds x {a.iters} runs; torch {torch.__version__}; rlx {rlx_bin}")
    print(f"{'model':<22} {'rlx ms':>9} {'torch ms':>9} {'torch/rlx':>10} {'ort ms':>9} {'ort/rlx':>8}")
    for name in a.models.split(","):
        torch.manual_seed(0)
        model, inputs = MODELS[name]()
        model.eval()
        d = work / name
        if not (d / "torch-ir.json").exists():
            rlx.export_program(model, inputs, d, check=True)
        try:  # ONNX export fails on some models (e.g. sdpa in bert); report n/a, keep going
            sess, feed = onnx_session(model, inputs, work / f"{name}.onnx", a.threads)
        except Exception as e:  # noqa: BLE001 - any exporter/runtime failure
            print(f"  ({name}: onnxruntime n/a: {type(e).__name__}: {str(e).splitlines()[0][:100]})")
            sess = None
        time_torch(model, inputs, 2)  # warm-up
        if sess is not None:
            time_ort(sess, feed, 2)
        r, t, o = [], [], []
        for _ in range(a.rounds):
            # a pause before each: the previous runtime's worker threads spin for a while after
            # their last task (OpenMP, ORT's pool) and would take cores from the next one
            time.sleep(a.pause)
            r.append(time_rlx(rlx_bin, d, a.threads, a.iters))
            time.sleep(a.pause)
            t.append(time_torch(model, inputs, a.iters))
            if sess is not None:
                time.sleep(a.pause)
                o.append(time_ort(sess, feed, a.iters))
        rm, tm = statistics.median(r), statistics.median(t)
        if o:
            om = statistics.median(o)
            ort_cols = f"{om:9.3f} {om / rm:7.2f}x"
        else:
            ort_cols = f"{'n/a':>9} {'n/a':>8}"
        print(f"{name:<22} {rm:9.3f} {tm:9.3f} {tm / rm:9.2f}x {ort_cols}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
