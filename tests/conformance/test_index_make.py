"""Conformance: ops that make index tensors — nonzero_static, tril_indices,
triu_indices.

nonzero_static keeps the first ``size`` nonzero positions in row-major order
and pads with ``fill_value`` rows: cases with fewer, exactly as many and more
nonzero elements than ``size``, NaN (nonzero) and -0.0 (zero), every dtype
kind, 0-d, empty and size-0 outputs.  tril/triu_indices are constants of
their arguments: offsets inside, at and past the matrix's edges, wide and
tall matrices, empty results and int32 indices.
"""

import pytest
import torch

from cases import INF, NAN, aten, bools, case, case_id, f16, f64, i32, ints, randn, seed, u8

seed("test_index_make")

CASES = []

_nz = aten.nonzero_static.default
_sparse = ints(0, 2, 4, 5) * ints(-3, 4, 4, 5)
CASES += [
    case(_nz, "fewer-than-size", lambda x: _nz(x, size=30), _sparse),
    case(_nz, "more-than-size", lambda x: _nz(x, size=3), _sparse),
    case(_nz, "fill-value", lambda x: _nz(x, size=25, fill_value=-7), _sparse),
    case(_nz, "size-0", lambda x: _nz(x, size=0), _sparse),
    case(_nz, "f32-nan-negzero", lambda x: _nz(x, size=8),
         torch.tensor([[0.0, NAN, -0.0], [INF, 0.0, 1e-30]])),
    case(_nz, "bool-3d", lambda x: _nz(x, size=20, fill_value=0), bools(2, 3, 4)),
    case(_nz, "1d-u8", lambda x: _nz(x, size=6), ints(0, 2, 9, dtype=u8)),
    case(_nz, "f16", lambda x: _nz(x, size=5), (ints(0, 2, 3, 4) * 1.5).to(f16)),
    case(_nz, "f64-noncontig", lambda x: _nz(x.t(), size=10), (ints(0, 2, 3, 5)).to(f64)),
    case(_nz, "i32-all-zero", lambda x: _nz(x, size=3, fill_value=9), torch.zeros(2, 2, dtype=i32)),
    case(_nz, "0d", lambda x: _nz(x, size=2), torch.tensor(3.0)),
    case(_nz, "empty", lambda x: _nz(x, size=4), randn(0, 3)),
]

_tl, _tu = aten.tril_indices.default, aten.triu_indices.default
for _op, _nm in ((_tl, "tril"), (_tu, "triu")):
    CASES += [
        case(_op, "square", lambda f=_op: f(4, 4)),
        case(_op, "wide-offset-1", lambda f=_op: f(3, 6, 1)),
        case(_op, "tall-offset-neg", lambda f=_op: f(7, 3, -2)),
        case(_op, "offset-past-right", lambda f=_op: f(3, 4, 9)),
        case(_op, "offset-past-left", lambda f=_op: f(3, 4, -9)),
        case(_op, "empty-rows", lambda f=_op: f(0, 5)),
        case(_op, "empty-cols", lambda f=_op: f(4, 0, 1)),
        case(_op, "i32", lambda f=_op: f(5, 5, -1, dtype=i32)),
        case(_op, "one-row", lambda f=_op: f(1, 8, 2)),
    ]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
