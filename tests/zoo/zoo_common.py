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


def seeded(seed: int = 0) -> None:
    """Fix every generator a builder may use (model init and example inputs)."""
    import random

    import torch
    random.seed(seed)
    torch.manual_seed(seed)
