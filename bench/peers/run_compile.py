"""Benchmark worker: torch.compile (inductor, default mode).

Compilation happens in the warm-up runs (the first call compiles; its time is
not counted); --prepare compiles once so a model inductor cannot compile is
reported before the rounds, and fills inductor's on-disk cache for them.
Same thread and denormal settings as run_eager.py.  See common.py.
"""

import sys

from common import main, time_runs


def version():
    import torch
    return f"{torch.__version__} inductor"


def _compiled(a):
    import torch
    import models
    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)
    torch.set_flush_denormal(True)
    m, x = models.build(a.model), models.inputs(a.model)
    c = torch.compile(m, backend="inductor")
    with torch.inference_mode():
        c(*x)  # compiles
    return c, x


def prepare(a, d):
    if a.prepare:
        _compiled(a)


def run(a, d):
    import torch
    c, x = _compiled(a)
    with torch.inference_mode():
        return {"times_ms": time_runs(lambda: c(*x), a.iters, a.warmup)}


if __name__ == "__main__":
    sys.exit(main("compile", version, prepare, run))
