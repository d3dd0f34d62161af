"""Benchmark worker: PyTorch eager.

torch.set_num_threads(N) (one inter-op thread), torch.set_flush_denormal(True)
so random weights do not run into denormals, torch.inference_mode().
See common.py for the protocol.
"""

import sys

from common import main


def version():
    import torch
    return torch.__version__


def prepare(a, d):
    pass


def run(a, d):
    import torch
    import models
    from common import time_runs
    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)
    torch.set_flush_denormal(True)
    m, x = models.build(a.model), models.inputs(a.model)
    with torch.inference_mode():
        return {"times_ms": time_runs(lambda: m(*x), a.iters, a.warmup)}


if __name__ == "__main__":
    sys.exit(main("eager", version, prepare, run))
