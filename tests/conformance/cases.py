"""Conformance cases: what a case is, and the seeded input makers the suite uses.

A case is one tiny program that calls one ATen overload (the op under test) on
example inputs.  ``conftest.py`` exports it with ``rlx.export_program``, checks
that the op really appears in the exported torch-ir.json, and runs
``rlx verify`` on it.  The ``test_*.py`` files only build lists of cases.

    case(aten.add.Tensor, "broadcast", lambda a, b: aten.add.Tensor(a, b),
         randn(3, 1, 5), randn(4, 5))

has the id ``add.Tensor-broadcast``.  Ids are unique across the suite.

Inputs are made at import time from one generator per test file
(``seed(name)``), so a case sees the same numbers on every run and machine.
The makers build what the cases need to be deterministic: ``distinct`` gives
tie-free values (for sort, topk, argmax, max pooling), ``perm_index`` gives
duplicate-free indices (for non-accumulating scatter and index_put), and
``special`` mixes +-inf, NaN and +-0 into finite values.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable

import torch

aten = torch.ops.aten

f32, f16, bf16, f64 = torch.float32, torch.float16, torch.bfloat16, torch.float64
i64, i32, i16, i8 = torch.int64, torch.int32, torch.int16, torch.int8
u8, b8 = torch.uint8, torch.bool
INF, NAN = float("inf"), float("nan")

DECOMPOSITIONS = ("aten", "high", "core")


def op_name(op: Any) -> str:
    """``aten.add.Tensor`` for an OpOverload (any namespace) or a string naming an aten one."""
    if isinstance(op, torch._ops.OpOverload):
        return str(op)
    name = str(op)
    return name if name.startswith("aten.") else f"aten.{name}"


@dataclass
class Case:
    """One exported program testing ``op``.

    ``expect`` lists the ops that must appear in torch-ir.json (default: the
    op under test).  ``refuses``, when set, is a documented limitation: the
    case passes when rlx refuses the program (exit 2) with that text in its
    error, rather than computing something different from torch.  ``atol``/``rtol`` loosen ``rlx verify`` for this case
    only; every use carries a comment saying why.  ``dynamic`` lists
    ``(input index, axis, symbol name)`` triples to export with dynamic shapes.
    """
    op: str
    name: str
    fn: Callable
    inputs: tuple
    decomposition: str = "aten"
    expect: tuple = ()
    atol: float | None = None
    rtol: float | None = None
    dynamic: list | None = None
    file: str = ""
    refuses: str | None = None

    @property
    def id(self) -> str:
        """``add.Tensor-broadcast``; a custom op keeps its namespace
        (``transformers.grouped_mm_fallback.default-uneven``)."""
        op = self.op[len("aten."):] if self.op.startswith("aten.") else self.op
        return f"{op}-{self.name}"

    def __repr__(self) -> str:  # pytest shows this on failure
        return f"Case({self.id})"


def case_id(c: Case) -> str:
    """The pytest id of a case (``ids=case_id`` in parametrize)."""
    return c.id


_ALL: dict[str, Case] = {}


def all_cases() -> dict[str, Case]:
    """Every case built so far (by id): the test modules imported in this run."""
    return _ALL


def case(op: Any, name: str, fn: Callable, *inputs: Any, decomposition: str = "aten",
         expect: tuple | list | None = None, atol: float | None = None,
         rtol: float | None = None, dynamic: list | None = None, refuses: str | None = None) -> Case:
    """Build and register one case; see ``Case``."""
    if decomposition not in DECOMPOSITIONS:
        raise ValueError(f"unknown decomposition {decomposition!r}")
    full = op_name(op)
    c = Case(full, name, fn, tuple(inputs), decomposition,
             tuple(op_name(e) for e in expect) if expect is not None else (full,),
             atol, rtol, dynamic, file=_current_file, refuses=refuses)
    if c.id in _ALL:
        raise ValueError(f"duplicate conformance case id {c.id!r}")
    _ALL[c.id] = c
    return c


# --------------------------------------------------------------------------
# Seeded input makers

_gen = torch.Generator().manual_seed(0)
_current_file = ""


def seed(name: str) -> None:
    """Restart the generator for the test file ``name`` (call once at its top)."""
    global _current_file
    _current_file = name
    _gen.manual_seed(int.from_bytes(hashlib.sha256(name.encode()).digest()[:6], "little"))


def _shape(shape: tuple) -> tuple:
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


def randn(*shape, dtype=f32, scale: float = 1.0) -> torch.Tensor:
    """Normal values (computed in f64, then rounded to ``dtype``)."""
    return (torch.randn(_shape(shape), generator=_gen, dtype=f64) * scale).to(dtype)


def uniform(lo: float, hi: float, *shape, dtype=f32) -> torch.Tensor:
    return (torch.rand(_shape(shape), generator=_gen, dtype=f64) * (hi - lo) + lo).to(dtype)


def nonzero(lo: float, hi: float, *shape, dtype=f32) -> torch.Tensor:
    """Values with |v| in [lo, hi) and a random sign (divisors, reciprocals)."""
    mag = uniform(lo, hi, *shape, dtype=f64)
    sign = torch.randint(0, 2, mag.shape, generator=_gen) * 2 - 1
    return (mag * sign).to(dtype)


def ints(lo: int, hi: int, *shape, dtype=i64) -> torch.Tensor:
    """Integers in [lo, hi)."""
    return torch.randint(lo, hi, _shape(shape), generator=_gen, dtype=i64).to(dtype)


def nonzero_ints(lo: int, hi: int, *shape, dtype=i64) -> torch.Tensor:
    """Integers with |v| in [lo, hi), lo >= 1, and a random sign."""
    mag = ints(lo, hi, *shape)
    sign = torch.randint(0, 2, mag.shape, generator=_gen) * 2 - 1
    return (mag * sign).to(dtype)


def bools(*shape, p: float = 0.5) -> torch.Tensor:
    return torch.rand(_shape(shape), generator=_gen) < p


def distinct(*shape, dtype=f32, step: float = 0.25) -> torch.Tensor:
    """Pairwise distinct values (no ties), shuffled: a permutation of a grid
    centred on zero with spacing ``step`` (1 for integer dtypes)."""
    shp = _shape(shape)
    n = 1
    for d in shp:
        n *= d
    p = torch.randperm(n, generator=_gen).to(f64) - n // 2
    if dtype.is_floating_point:
        p = p * step
    return p.reshape(shp).to(dtype)


def perm_index(n: int, k: int | None = None) -> torch.Tensor:
    """``k`` distinct indices into range(n) in random order (i64)."""
    return torch.randperm(n, generator=_gen)[: n if k is None else k]


def perm_along(shape: tuple, dim: int, n: int) -> torch.Tensor:
    """An i64 index of ``shape`` whose every line along ``dim`` holds distinct
    values in range(n) (duplicate-free scatter along ``dim``)."""
    dim %= len(shape)
    k = shape[dim]
    moved = list(shape)
    moved.pop(dim)
    lines = 1
    for d in moved:
        lines *= d
    rows = [torch.randperm(n, generator=_gen)[:k] for _ in range(max(lines, 1))][:lines]
    t = torch.stack(rows) if rows else torch.zeros(0, k, dtype=i64)
    return t.reshape(*moved, k).movedim(-1, dim).contiguous()


SPECIALS = (INF, -INF, NAN, 0.0, -0.0)


def special(*shape, dtype=f32, lo: float = -3.0, hi: float = 3.0) -> torch.Tensor:
    """Finite values in [lo, hi) with +inf, -inf, NaN, +0 and -0 at random
    positions (each at least once when the tensor has room)."""
    t = uniform(lo, hi, *shape, dtype=f64)
    flat = t.view(-1)
    pos = torch.randperm(flat.numel(), generator=_gen)
    for i, v in zip(pos.tolist(), SPECIALS):
        flat[i] = v
    return t.to(dtype)


def torch_accepts(fn: Callable, *inputs: Any) -> bool:
    """Whether eager torch runs ``fn(*inputs)`` (used to add a dtype variant of
    a case only where torch defines the op for that dtype)."""
    try:
        fn(*inputs)
        return True
    except (RuntimeError, NotImplementedError, TypeError, ValueError):
        return False
