"""The model zoo: real architectures with random weights, for `run_zoo.py` and `test_zoo.py`.

Each entry is a `ZooModel`: a name, where the architecture comes from (torchvision,
transformers, timm, torch.nn), a builder returning `(model.eval(), example_inputs)` made
under a fixed seed, and `fast` (the CI subset).  Nothing is downloaded: every model is built
from its configuration with random weights.  The entries live in `zoo_vision.py`
(torchvision, timm), `zoo_hf.py` (transformers) and `zoo_misc.py` (torch.nn, and deployment
variants: half precision, static KV cache); this module collects them in one registry,
ordered by source.

`build(name)` also makes the random weights look trained enough for parity to mean
something: all-zero layers are re-initialized, normalization layers get non-trivial affine
parameters, and BatchNorm statistics are calibrated on random inputs (see the functions).

Sizes: torchvision classification nets keep their real structure (images 128 px unless the
architecture needs more); transformers use small configurations (hidden 64-128, 2 layers,
short sequences) so that reference C kernels on two cores stay within ~20 s per model.
"""

from __future__ import annotations

import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from zoo_common import ZooModel, seeded  # noqa: E402  (re-exported)

__all__ = ["ZooModel", "seeded", "MODELS", "BY_NAME", "subset", "build", "reinit_zero_weights",
           "perturb_norms", "calibrate_batchnorm"]


def _load() -> list[ZooModel]:
    import zoo_hf
    import zoo_misc
    import zoo_vision
    order = {"torchvision": 0, "timm": 1, "transformers": 2, "torch.nn": 3}
    base = zoo_vision.MODELS + zoo_vision.MORE + zoo_hf.MODELS + zoo_hf.MORE + zoo_misc.MODELS
    models = sorted(base, key=lambda m: order[m.source]) + zoo_misc.VARIANTS
    names = [m.name for m in models]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, f"duplicate zoo names: {sorted(dup)}"
    return models


MODELS: list[ZooModel] = _load()
BY_NAME: dict[str, ZooModel] = {m.name: m for m in MODELS}


def subset(which: str) -> list[ZooModel]:
    """`fast` (the CI subset) or `full` (every model), in registry order."""
    if which == "fast":
        return [m for m in MODELS if m.fast]
    if which == "full":
        return list(MODELS)
    raise ValueError(f"unknown subset '{which}' (fast|full)")


def reinit_zero_weights(model, seed: int = 6) -> None:
    """Re-initialize all-zero Linear/Conv weights with N(0, 1/fan_in).

    Some architectures zero-initialize a layer so that training starts from identity or zero
    (torchvision's ViT head): with random weights elsewhere that makes the output constant
    and the parity check vacuous."""
    import torch
    g = torch.Generator().manual_seed(seed)
    for mod in model.modules():
        if isinstance(mod, (torch.nn.Linear, torch.nn.modules.conv._ConvNd)):
            w = mod.weight
            if w.is_floating_point() and w.numel() and not w.any():
                fan_in = w[0].numel()
                w.copy_(torch.randn(w.shape, generator=g) / fan_in ** 0.5)


def perturb_norms(model, seed: int = 7) -> None:
    """Give every normalization layer non-trivial affine parameters.

    Fresh norm layers have weight 1 and bias 0 (or an offset form with weight 0), which a
    runtime could ignore and still pass.  Trained models never look like that, so the zoo
    adds noise to them: weight += U(-0.3, 0.3), bias += N(0, 0.1)."""
    import torch
    g = torch.Generator().manual_seed(seed)
    for mod in model.modules():
        if "norm" not in type(mod).__name__.lower():
            continue
        w, b = getattr(mod, "weight", None), getattr(mod, "bias", None)
        if isinstance(w, torch.nn.Parameter) and w.is_floating_point():
            w.add_((torch.rand(w.shape, generator=g) - 0.5).mul_(0.6).to(w.dtype))
        if isinstance(b, torch.nn.Parameter) and b.is_floating_point():
            b.add_(torch.randn(b.shape, generator=g).mul_(0.1).to(b.dtype))


def _calibration_inputs(inputs: tuple, batch: int, seed: int) -> tuple:
    import torch
    g = torch.Generator().manual_seed(seed)
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() >= 2:
            out.append(torch.randn((batch, *x.shape[1:]), generator=g, dtype=x.dtype))
        else:
            out.append(x)
    return tuple(out)


def calibrate_batchnorm(model, inputs: tuple, batch: int = 4, seed: int = 8) -> bool:
    """Set BatchNorm running statistics from a training-mode pass over random inputs shaped
    like the example inputs (batch 4), as a trained network's statistics match its data.

    Without this, default statistics (mean 0, var 1) under random weights let activations
    vanish or explode through deep nets (mobilenet_v3_small's logits are ~1e-9), and the
    parity check then compares noise-level numbers.  Returns whether the model has any."""
    import torch
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return False
    saved = [(m, m.momentum) for m in bns]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None              # cumulative average over the calibration pass
    model.train()
    try:
        model(*_calibration_inputs(inputs, batch, seed))
    finally:
        for m, mom in saved:
            m.momentum = mom
        model.eval()
    return True


def build(name: str) -> tuple[Any, tuple]:
    """(model in eval mode, example inputs as a tuple) for a registry entry: the entry's
    builder, then `reinit_zero_weights`, `perturb_norms` and `calibrate_batchnorm` (all
    seeded)."""
    import torch
    m = BY_NAME[name]
    with torch.no_grad():
        model, inputs = m.build()
        if not isinstance(inputs, tuple):
            inputs = (inputs,)
        reinit_zero_weights(model)
        perturb_norms(model)
        calibrate_batchnorm(model, inputs)
    return model.eval(), inputs
