"""What every zoo entry is made of: `ZooModel` and the seeding helper (see models.py)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable


@dataclasses.dataclass(frozen=True)
class ZooModel:
    name: str
    source: str                       # torchvision | transformers | timm | torch.nn
    build: Callable[[], tuple[Any, tuple]]
    fast: bool = False                # in the CI subset
    note: str = ""                    # configuration, substitutions
    # the batch axis of each example input for run_zoo's dynamic-batch pass (None: the input
    # has none); None here means axis 0 of every tensor input
    batch_axes: tuple | None = None


def seeded(seed: int = 0) -> None:
    """Fix every generator a builder may use (model init and example inputs)."""
    import random

    import torch
    random.seed(seed)
    torch.manual_seed(seed)
