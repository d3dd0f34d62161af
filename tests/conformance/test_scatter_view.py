"""Conformance: writes through views and the indexing forms rlx used to refuse.

index_copy, diagonal_scatter (offsets on both sides, other axis pairs, negative dims,
batch axes, an empty diagonal), as_strided_scatter (strides and offsets,
overlap-free views), put (negative indices, accumulate with duplicates,
index of any shape), index_reduce (prod, mean, amax, amin, with and without
include_self; repeated indices; ints with torch's floor-dividing mean; NaN),
addbmm (beta, alpha, beta = 0 ignoring NaN, a broadcast input); and the
refusals fixed: index_select on a 0-d input, masked_scatter with an input
that broadcasts up to the mask, index_put with a boolean mask and values
broadcast over the selected elements (the output shape is static).
"""

import pytest
import torch

from cases import (INF, NAN, aten, bools, case, case_id, f16, f64, i32, i64, ints, perm_index, randn,
                   seed, special)

seed("test_scatter_view")

CASES = []

# -- diagonal_scatter
_ds = aten.diagonal_scatter.default
CASES += [
    case(_ds, "main", lambda x, s: _ds(x, s), randn(4, 4), randn(4)),
    case(_ds, "rect-offset-pos", lambda x, s: _ds(x, s, 2), randn(3, 6), randn(3)),
    case(_ds, "rect-offset-neg", lambda x, s: _ds(x, s, -1), randn(5, 3), randn(3)),
    case(_ds, "dims-1-2-batch", lambda x, s: _ds(x, s, 0, 1, 2), randn(2, 3, 4), randn(2, 3)),
    case(_ds, "dims-neg-swapped", lambda x, s: _ds(x, s, 1, -1, 0), randn(4, 2, 5), randn(2, 3)),
    case(_ds, "i64", lambda x, s: _ds(x, s), ints(-9, 9, 3, 3), ints(-9, 9, 3)),
    case(_ds, "f16-special", lambda x, s: _ds(x, s), randn(3, 3, dtype=f16), special(3, dtype=f16)),
    case(_ds, "empty-diagonal", lambda x, s: _ds(x, s, 3), randn(2, 3), randn(0)),
    case(_ds, "offset-past-both-ends", lambda x, s: _ds(x, s, -5), randn(2, 3), randn(0)),
    case(_ds, "dyn-batch", lambda x, s: _ds(x, s, 0, 1, 2), randn(3, 4, 4), randn(3, 4),
         dynamic=[(0, 0, "B"), (1, 0, "B")]),
    case(_ds, "dyn-square", lambda x, s: _ds(x, s), randn(5, 5), randn(5),
         dynamic=[(0, 0, "N"), (0, 1, "N"), (1, 0, "N")]),
    # torch.export records no guard that N <= 4, where the diagonal (min(N, 4) long) is as long
    # as src (N): rlx refuses the program at load rather than at the bindings past 4
    case(_ds, "dyn-src-longer-than-diagonal-refused", lambda x, s: _ds(x, s, 2), randn(3, 6), randn(3),
         dynamic=[(0, 0, "N"), (1, 0, "N")], refuses="src does not have the diagonal's shape"),
]

# -- as_strided_scatter (views of the contiguous input)
_as = aten.as_strided_scatter.default
CASES += [
    case(_as, "transpose-view", lambda x, s: _as(x, s, (3, 2), (1, 3)), randn(2, 3), randn(3, 2)),
    case(_as, "strided-offset", lambda x, s: _as(x, s, (2, 2), (4, 2), 1), randn(3, 4), randn(2, 2)),
    case(_as, "every-other", lambda x, s: _as(x, s, (5,), (2,)), randn(10), randn(5)),
    case(_as, "i64-3d", lambda x, s: _as(x, s, (2, 2, 2), (12, 4, 1), 5), ints(-9, 9, 2, 3, 4),
         ints(-9, 9, 2, 2, 2)),
    case(_as, "empty", lambda x, s: _as(x, s, (0, 3), (3, 1)), randn(2, 3), randn(0, 3)),
]

# -- put (flat positions; negative from the end)
_pt = aten.put.default
CASES += [
    case(_pt, "flat", lambda x, i, s: _pt(x, i, s), randn(3, 4), perm_index(12, 5), randn(5)),
    case(_pt, "negative-2d-index", lambda x, i, s: _pt(x, i, s), randn(4, 3),
         torch.tensor([[-1, 0], [5, -12]]), randn(2, 2)),
    case(_pt, "accumulate-duplicates", lambda x, i, s: _pt(x, i, s, True), randn(2, 5),
         torch.tensor([1, 1, 9, -1, 3, 1]), randn(6)),
    case(_pt, "i64-accumulate", lambda x, i, s: _pt(x, i, s, True), ints(-9, 9, 6), ints(0, 6, 10),
         ints(-9, 9, 10)),
    case(_pt, "0d-self", lambda x, i, s: _pt(x, i, s), torch.tensor(1.5), torch.tensor([0]), randn(1)),
    case(_pt, "empty-index", lambda x, i, s: _pt(x, i, s), randn(3), ints(0, 3, 0), randn(0)),
    case(_pt, "dyn", lambda x, i, s: _pt(x, i, s, True), randn(4, 3), ints(0, 12, 5), randn(5),
         dynamic=[(1, 0, "K"), (2, 0, "K")]),
]

# -- index_reduce
_ir = aten.index_reduce.default
for _red in ("prod", "mean", "amax", "amin"):
    for _self in (True, False):
        _t = "self" if _self else "noself"
        CASES += [
            case(_ir, f"{_red}-{_t}-dim-0", lambda x, i, s, r=_red, n=_self: _ir(x, 0, i, s, r, include_self=n),
                 randn(5, 3), torch.tensor([0, 4, 0, 2, 0, 4]), randn(6, 3)),
            case(_ir, f"{_red}-{_t}-dim-neg", lambda x, i, s, r=_red, n=_self: _ir(x, -1, i, s, r, include_self=n),
                 randn(2, 3, 4), torch.tensor([3, 3, 1]), randn(2, 3, 3)),
            case(_ir, f"{_red}-{_t}-i64", lambda x, i, s, r=_red, n=_self: _ir(x, 1, i, s, r, include_self=n),
                 ints(-7, 7, 3, 4), torch.tensor([1, 1, 2, 1, 0]), ints(-7, 7, 3, 5)),
        ]
    CASES += [
        case(_ir, f"{_red}-special", lambda x, i, s, r=_red: _ir(x, 0, i, s, r), special(4, 3),
             torch.tensor([1, 1, 3]), special(3, 3)),
        case(_ir, f"{_red}-f64-i32-index", lambda x, i, s, r=_red: _ir(x, 1, i, s, r), randn(3, 4, dtype=f64),
             ints(0, 4, 6, dtype=i32), randn(3, 6, dtype=f64)),
    ]

# -- index_copy
_ic = aten.index_copy.default
CASES += [
    case(_ic, "dim-0", lambda x, i, s: _ic(x, 0, i, s), randn(5, 3), perm_index(5, 3), randn(3, 3)),
    case(_ic, "dim-neg", lambda x, i, s: _ic(x, -1, i, s), randn(2, 3, 6), perm_index(6, 4), randn(2, 3, 4)),
    case(_ic, "i64-0d-index", lambda x, i, s: _ic(x, 1, i, s), ints(-9, 9, 3, 4), torch.tensor(2),
         ints(-9, 9, 3, 1)),
    case(_ic, "dyn", lambda x, i, s: _ic(x, 0, i, s), randn(6, 2), perm_index(6, 2), randn(2, 2),
         dynamic=[(0, 1, "C"), (2, 1, "C")]),
]

CASES.append(case(_ir, "amax-dyn", lambda x, i, s: _ir(x, 0, i, s, "amax"), randn(5, 3), ints(0, 5, 4), randn(4, 3),
                  dynamic=[(0, 1, "C"), (2, 1, "C")]))
for _red in ("prod", "mean"):
    CASES.append(case(_ir, f"{_red}-0d", lambda x, i, s, r=_red: _ir(x, 0, i, s, r), torch.tensor(1.5),
                      torch.tensor([0]), torch.tensor(-3.0)))

# -- addbmm
_ab = aten.addbmm.default
CASES += [
    case(_ab, "default", lambda x, a, b: _ab(x, a, b), randn(3, 5), randn(4, 3, 6), randn(4, 6, 5)),
    case(_ab, "beta-alpha", lambda x, a, b: _ab(x, a, b, beta=0.5, alpha=-2.0), randn(3, 5), randn(2, 3, 4),
         randn(2, 4, 5)),
    case(_ab, "beta-0-ignores-nan", lambda x, a, b: _ab(x, a, b, beta=0), torch.full((2, 3), NAN), randn(3, 2, 4),
         randn(3, 4, 3)),
    case(_ab, "broadcast-input", lambda x, a, b: _ab(x, a, b), randn(5), randn(3, 2, 4), randn(3, 4, 5)),
    case(_ab, "f64", lambda x, a, b: _ab(x, a, b), randn(2, 2, dtype=f64), randn(5, 2, 3, dtype=f64),
         randn(5, 3, 2, dtype=f64)),
    case(_ab, "one-batch", lambda x, a, b: _ab(x, a, b), randn(4, 4), randn(1, 4, 7), randn(1, 7, 4)),
    case(_ab, "dyn", lambda x, a, b: _ab(x, a, b), randn(3, 5), randn(4, 3, 6), randn(4, 6, 5),
         dynamic=[(1, 0, "B"), (2, 0, "B")]),
]

# -- the refusals fixed
_is, _ms, _ip = aten.index_select.default, aten.masked_scatter.default, aten.index_put.default
CASES += [
    case(_is, "0d-input", lambda x, i: _is(x, 0, i), torch.tensor(2.5), torch.tensor([0])),
    case(_is, "0d-input-0d-index-neg-dim", lambda x, i: _is(x, -1, i), ints(-9, 9, 1).reshape(()),
         torch.tensor(0)),
    case(_ms, "input-broadcasts-to-mask", lambda x, m, s: _ms(x, m, s), randn(3), bools(2, 3), randn(6)),
    case(_ms, "input-and-mask-broadcast", lambda x, m, s: _ms(x, m, s), randn(2, 1), bools(4), randn(9)),
    case(_ms, "input-broadcasts-dyn", lambda x, m, s: _ms(x, m, s), randn(3), bools(4, 3), randn(12),
         dynamic=[(1, 0, "B")]),
    case(_ip, "bool-mask-broadcast-row", lambda x, m, v: _ip(x, [m], v), randn(3, 4), bools(3),
         randn(4)),
    case(_ip, "bool-mask-broadcast-row-1", lambda x, m, v: _ip(x, [m], v), randn(3, 4), bools(3),
         randn(1, 4)),
    case(_ip, "bool-mask-broadcast-dyn", lambda x, m, v: _ip(x, [m], v), randn(5, 4), bools(5), randn(4),
         dynamic=[(0, 0, "B"), (1, 0, "B")]),
    case(_ip, "bool-mask-one-value-any-rank", lambda x, m, v: _ip(x, [m], v), randn(3, 4), bools(3),
         randn(1, 1, 1)),
    case(_ip, "bool-mask-full-0d-value", lambda x, m, v: _ip(x, [m], v), randn(3, 4), bools(3, 4),
         torch.tensor(2.0)),
    case(_ip, "bool-mask-accumulate", lambda x, m, v: _ip(x, [m], v, True), randn(4, 2, 3), bools(4),
         randn(2, 1)),
    case(_ip, "bool-mask-i64-trailing-broadcast", lambda x, m, v: _ip(x, [m], v), ints(-9, 9, 2, 3, 4),
         bools(2, 3), ints(-9, 9, 4)),
    # one value per true element: which value lands where depends on the data (documented refusal)
    case(_ip, "bool-mask-per-element-refused", lambda x, m, v: _ip(x, [m], v), randn(4, 2),
         torch.tensor([True, False, True, True]), randn(3, 2), refuses="data-dependent count"),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
