"""Benchmark worker: ExecuTorch with its XNNPACK delegate.

Runs in its own venv (ExecuTorch pins its own torch; scripts/bench_setup.sh
makes it), with that venv's python: bench/compare.py picks it.
--prepare lowers the model once into DIR/executorch/MODEL/model.pte:
torch.export.export -> to_edge_transform_and_lower(partitioner=
[XnnpackPartitioner()]) -> to_executorch(); note.txt records how many
XNNPACK partitions it made and which ops stayed outside them (those run on
ExecuTorch's portable kernels).  A timed run loads the program with the
runtime's Python bindings (portable_lib) and sizes ExecuTorch's own thread
pool with _unsafe_reset_threadpool(N); torch's thread count is not what it
uses.  See common.py for the protocol.
"""

import collections
import sys

from common import Unsupported, main, time_runs


def version():
    from importlib.metadata import version as v
    return v("executorch")


def prepare(a, d):
    pte = d / "model.pte"
    if pte.exists():
        return
    import torch
    import models
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    torch.set_num_threads(a.threads)
    m, x = models.build(a.model), models.inputs(a.model)
    with torch.no_grad():
        ep = torch.export.export(m, x)
    edge = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
    left = collections.Counter()
    parts = 0
    for n in edge.exported_program().graph_module.graph.nodes:
        if n.op != "call_function":
            continue
        name = getattr(n.target, "__name__", str(n.target))
        if "executorch_call_delegate" in name:
            parts += 1
        elif name != "getitem":
            parts_of = name.split(".")  # aten.bmm.default -> bmm
            left[parts_of[1] if len(parts_of) > 1 and parts_of[0] == "aten" else parts_of[0]] += 1
    prog = edge.to_executorch()
    tmp = pte.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        prog.write_to_file(f)
    tmp.rename(pte)
    rest = ", ".join(f"{k} x{c}" for k, c in left.most_common(6))
    (d / "note.txt").write_text(f"XNNPACK partitions: {parts}" + (f"; outside: {rest}" if rest else ""))


def run(a, d):
    import models
    from executorch.extension.pybindings import portable_lib as et
    et._unsafe_reset_threadpool(a.threads)
    if et._threadpool_get_thread_count() != a.threads:
        raise Unsupported(f"thread pool has {et._threadpool_get_thread_count()} threads, "
                          f"not {a.threads}")
    mod = et._load_for_executorch(str(d / "model.pte"))
    x = list(models.inputs(a.model))
    note = (d / "note.txt").read_text() if (d / "note.txt").exists() else ""
    return {"times_ms": time_runs(lambda: mod.forward(x), a.iters, a.warmup), "note": note}


if __name__ == "__main__":
    sys.exit(main("executorch", version, prepare, run))
