"""Conformance: order statistics, scans with indices, searches in sorted data.

median / nanmedian (whole tensor and .dim), mode and kthvalue return an
element torch's CPU kernel picks; where several are equal (ties, repeated
NaN) the index is the one torch's algorithm leaves there (libstdc++'s
nth_element and sort, torch's quickselect), so most cases here have ties on
purpose: small-range integers, rows long enough to leave the insertion-sort
sizes (16 for sort, 3 for nth_element), all-NaN rows. Also NaN (median's
first NaN wins, nanmedian skips them, kthvalue ranks them last), +-inf,
empty tensors and axes, 0-d inputs, size-1 axes, negative dims, keepdim,
i64/i32/f16/bf16/f64, bool for mode.

cummax / cummin: ties give the latest index, a NaN sticks (and a later NaN
moves the index); logcumsumexp: +-inf, NaN, all -inf, large magnitudes.

searchsorted / bucketize: 1-D and batched sequences, right and side, sorter,
duplicates in the sequence, NaN values, out_int32, int/float promotion,
0-d values, empty values and sequences. isin: both of torch's algorithms
(the element-count heuristic), assume_unique with unique and with repeated
elements (torch's sort-based answer then differs from membership), invert,
NaN and -0, the scalar overloads. Cases named "dyn" export a dynamic axis.
"""

import pytest
import torch

from cases import (INF, NAN, aten, bf16, bools, case, case_id, distinct, f16, f32, f64, i32, i64,
                   ints, randn, seed, special, uniform)
from order_killers import NTH_DISTINCT, SORT_DISTINCT, SORT_TIES, heapsort_triples

seed("test_order_stat")

CASES = []


def _nan_rows(rows, cols, p=0.3, lo=0, hi=4):
    """Small integers as floats (ties) with NaN at random positions."""
    x = ints(lo, hi, rows, cols).to(f32)
    m = torch.rand(rows, cols, generator=torch.Generator().manual_seed(rows * 131 + cols)) < p
    x[m] = NAN
    return x


_ALL_NAN = torch.full((3, 7), NAN)

# -- median / nanmedian over the whole tensor
for _op in (aten.median.default, aten.nanmedian.default):
    CASES += [
        case(_op, "f32", lambda x, f=_op: f(x), randn(5, 7)),
        case(_op, "even-count-lower", lambda x, f=_op: f(x), distinct(4, 6)),
        case(_op, "permuted", lambda x, f=_op: f(x.t()), randn(6, 9)),
        case(_op, "i64-ties", lambda x, f=_op: f(x), ints(-3, 3, 8, 9)),
        case(_op, "i32", lambda x, f=_op: f(x), ints(-99, 99, 7, dtype=i32)),
        case(_op, "f16", lambda x, f=_op: f(x), randn(33, dtype=f16)),
        case(_op, "bf16", lambda x, f=_op: f(x), randn(4, 5, dtype=bf16)),
        case(_op, "f64", lambda x, f=_op: f(x), randn(3, 4, 5, dtype=f64)),
        case(_op, "special", lambda x, f=_op: f(x), special(5, 6)),
        case(_op, "inf-no-nan", lambda x, f=_op: f(x), torch.tensor([INF, -INF, 1.0, -INF])),
        case(_op, "nan-rows", lambda x, f=_op: f(x), _nan_rows(4, 9)),
        case(_op, "all-nan", lambda x, f=_op: f(x), _ALL_NAN),
        case(_op, "0d", lambda x, f=_op: f(x), torch.tensor(2.5)),
        case(_op, "empty-nan", lambda x, f=_op: f(x), randn(0, 3)),
        case(_op, "empty-i64", lambda x, f=_op: f(x), ints(0, 9, 3, 0)),
        case(_op, "empty-i32", lambda x, f=_op: f(x), ints(0, 9, 0, dtype=i32)),
        case(_op, "large", lambda x, f=_op: f(x), ints(-50, 50, 4001).to(f32)),
        case(_op, "dyn", lambda x, f=_op: f(x), randn(4, 7), dynamic=[(0, 0, "B")]),
    ]

# -- median.dim / nanmedian.dim: values and indices
for _op in (aten.median.dim, aten.nanmedian.dim):
    CASES += [
        case(_op, "dim-1", lambda x, f=_op: f(x, 1), randn(3, 7, 5)),
        case(_op, "dim-neg-keepdim", lambda x, f=_op: f(x, -1, True), randn(3, 4, 6)),
        case(_op, "dim-0-permuted", lambda x, f=_op: f(x.permute(2, 0, 1), 0), randn(3, 4, 5)),
        case(_op, "ties-i64", lambda x, f=_op: f(x, 1), ints(0, 3, 6, 11)),
        case(_op, "ties-f32-long", lambda x, f=_op: f(x, 0), ints(0, 4, 57, 5).to(f32)),
        case(_op, "i32", lambda x, f=_op: f(x, 0), ints(-9, 9, 5, 4, dtype=i32)),
        case(_op, "u8", lambda x, f=_op: f(x, 1), ints(0, 255, 3, 8, dtype=torch.uint8)),
        case(_op, "f16", lambda x, f=_op: f(x, 1), randn(4, 40, dtype=f16)),
        case(_op, "bf16-ties", lambda x, f=_op: f(x, 1), ints(0, 3, 4, 9).to(bf16)),
        case(_op, "f64", lambda x, f=_op: f(x, 2), randn(3, 4, 5, dtype=f64)),
        case(_op, "special", lambda x, f=_op: f(x, 1), special(4, 6)),
        case(_op, "nan-rows", lambda x, f=_op: f(x, 1), _nan_rows(6, 13)),
        case(_op, "nan-rows-long", lambda x, f=_op: f(x, 1), _nan_rows(5, 64, p=0.5)),
        case(_op, "all-nan-rows", lambda x, f=_op: f(x, 1), torch.full((5, 40), NAN)),
        case(_op, "all-nan-sizes", lambda x, f=_op: f(x, 0), torch.full((23, 3), NAN)),
        case(_op, "0d", lambda x, f=_op: f(x, 0), torch.tensor(-1.5)),
        case(_op, "0d-keepdim-neg", lambda x, f=_op: f(x, -1, True), torch.tensor(4.0)),
        case(_op, "size-1-axis", lambda x, f=_op: f(x, 1), randn(4, 1, 3)),
        case(_op, "empty-other-axis", lambda x, f=_op: f(x, 1), randn(0, 4)),
        case(_op, "dyn", lambda x, f=_op: f(x, 1), randn(5, 9), dynamic=[(0, 0, "B")]),
        case(_op, "dyn-reduced", lambda x, f=_op: f(x, 1, True), ints(0, 5, 3, 12).to(f32),
             dynamic=[(0, 1, "T")]),
        # a row on which libstdc++'s introselect falls back to heap selection (order_killers.py)
        case(_op, "heapselect", lambda x, f=_op: f(x, 1), torch.tensor([NTH_DISTINCT, SORT_TIES], dtype=f32)),
    ]

# -- mode: ties everywhere; the index is the one libstdc++'s sort leaves last
_mo = aten.mode.default
CASES += [
    case(_mo, "ties-short", lambda x: _mo(x, 1), ints(0, 3, 4, 7)),
    case(_mo, "ties-16", lambda x: _mo(x, 1), ints(0, 4, 5, 16)),
    case(_mo, "ties-17", lambda x: _mo(x, 1), ints(0, 4, 5, 17)),
    case(_mo, "ties-long", lambda x: _mo(x, -1), ints(0, 6, 7, 300)),
    case(_mo, "ties-f32-dim-0", lambda x: _mo(x, 0), ints(-2, 3, 90, 4).to(f32)),
    case(_mo, "equal-frequency-smallest", lambda x: _mo(x, 1),
         torch.tensor([[3, 1, 3, 1, 2], [5, 5, 4, 4, 9]])),
    case(_mo, "distinct", lambda x: _mo(x, 1), distinct(3, 20)),
    case(_mo, "keepdim", lambda x: _mo(x, 1, True), ints(0, 3, 3, 5, 4)),
    case(_mo, "default-dim", lambda x: _mo(x), ints(0, 5, 3, 25)),
    case(_mo, "permuted", lambda x: _mo(x.t(), 1), ints(0, 3, 40, 6)),
    case(_mo, "bool", lambda x: _mo(x, 1), bools(4, 33)),
    case(_mo, "i32", lambda x: _mo(x, 0), ints(0, 3, 19, 3, dtype=i32)),
    case(_mo, "i8", lambda x: _mo(x, 1), ints(-2, 2, 3, 50, dtype=torch.int8)),
    case(_mo, "f16", lambda x: _mo(x, 1), ints(0, 4, 3, 30).to(f16)),
    case(_mo, "f64-inf", lambda x: _mo(x, 1),
         torch.tensor([[INF, -INF, INF, 0.0], [-INF, -INF, 1.0, 1.0]], dtype=f64)),
    case(_mo, "signed-zero", lambda x: _mo(x, 1), torch.tensor([[0.0, -0.0, 1.0, -0.0, 1.0]])),
    case(_mo, "0d", lambda x: _mo(x, 0), torch.tensor(7.0)),
    case(_mo, "size-1-axis", lambda x: _mo(x, 0), randn(1, 5)),
    case(_mo, "empty-other-axis", lambda x: _mo(x, 1), ints(0, 3, 0, 4)),
    case(_mo, "dyn", lambda x: _mo(x, 1), ints(0, 3, 4, 21), dynamic=[(0, 0, "B")]),
    # NaN under std::sort's `<` is not a strict weak order; torch's answer is still what
    # libstdc++'s steps give, and rlx takes the same steps
    case(_mo, "nan-short", lambda x: _mo(x, 1), _nan_rows(8, 7, p=0.5, hi=2)),
    case(_mo, "nan-long", lambda x: _mo(x, 1), _nan_rows(4, 300, p=0.3, hi=5)),
    case(_mo, "nan-mostly", lambda x: _mo(x, 1), _nan_rows(6, 40, p=0.9, hi=2)),
    case(_mo, "all-nan", lambda x: _mo(x, 1), torch.full((3, 30), NAN)),
    # rows on which libstdc++'s introsort falls back to heapsort (order_killers.py)
    case(_mo, "heapsort-distinct", lambda x: _mo(x, 1), torch.tensor([SORT_DISTINCT])),
    case(_mo, "heapsort-ties", lambda x: _mo(x, -1), torch.tensor([SORT_TIES, SORT_DISTINCT])),
    case(_mo, "heapsort-ties-f32-dim-0", lambda x: _mo(x, 0), torch.tensor([SORT_TIES], dtype=f32).t()),
    case(_mo, "heapsort-mode-in-heap", lambda x: _mo(x, 1), torch.tensor(heapsort_triples())),
]

# -- kthvalue: torch's quickselect; NaN ranks above every number
_kv = aten.kthvalue.default
CASES += [
    case(_kv, "k-mid", lambda x: _kv(x, 3, 1), randn(4, 7)),
    case(_kv, "k-1", lambda x: _kv(x, 1, 0), randn(6, 5)),
    case(_kv, "k-last-neg-dim", lambda x: _kv(x, 6, -1), randn(3, 4, 6)),
    case(_kv, "keepdim", lambda x: _kv(x, 2, 1, True), randn(3, 5, 2)),
    case(_kv, "default-dim", lambda x: _kv(x, 4), randn(3, 9)),
    case(_kv, "ties-i64", lambda x: _kv(x, 5, 1), ints(0, 3, 6, 12)),
    case(_kv, "ties-f32-long", lambda x: _kv(x, 50, 1), ints(0, 5, 4, 101).to(f32)),
    case(_kv, "ties-f32-k-1", lambda x: _kv(x, 1, 1), ints(0, 2, 4, 33).to(f32)),
    case(_kv, "nan-largest", lambda x: _kv(x, 13, 1), _nan_rows(5, 13)),
    case(_kv, "nan-middle", lambda x: _kv(x, 6, 1), _nan_rows(5, 13, p=0.5)),
    case(_kv, "special", lambda x: _kv(x, 3, 1), special(4, 6)),
    case(_kv, "i32", lambda x: _kv(x, 2, 0), ints(-9, 9, 5, 4, dtype=i32)),
    case(_kv, "f16", lambda x: _kv(x, 10, 1), randn(3, 40, dtype=f16)),
    case(_kv, "bf16", lambda x: _kv(x, 2, 0), randn(5, 3, dtype=bf16)),
    case(_kv, "f64-permuted", lambda x: _kv(x.t(), 2, 1), randn(5, 4, dtype=f64)),
    case(_kv, "0d", lambda x: _kv(x, 1, 0), torch.tensor(3.0)),
    case(_kv, "size-1-axis", lambda x: _kv(x, 1, 1), randn(3, 1)),
    case(_kv, "empty-other-axis", lambda x: _kv(x, 2, 1), randn(0, 4)),
    case(_kv, "dyn", lambda x: _kv(x, 2, 1), randn(4, 6), dynamic=[(0, 0, "B")]),
]

# -- cummax / cummin
for _op in (aten.cummax.default, aten.cummin.default):
    CASES += [
        case(_op, "dim-1", lambda x, f=_op: f(x, 1), randn(3, 8)),
        case(_op, "dim-neg", lambda x, f=_op: f(x, -1), randn(2, 3, 7)),
        case(_op, "dim-0-permuted", lambda x, f=_op: f(x.t(), 0), randn(5, 6)),
        case(_op, "ties-latest-index", lambda x, f=_op: f(x, 1), ints(0, 3, 4, 12)),
        case(_op, "nan-sticks", lambda x, f=_op: f(x, 1),
             torch.tensor([[1.0, NAN, 5.0, NAN, -1.0], [NAN, 2.0, 3.0, 0.0, NAN]])),
        case(_op, "special", lambda x, f=_op: f(x, 1), special(4, 9)),
        case(_op, "i64", lambda x, f=_op: f(x, 0), ints(-2**40, 2**40, 6, 3)),
        case(_op, "i32", lambda x, f=_op: f(x, 1), ints(-9, 9, 3, 6, dtype=i32)),
        case(_op, "bool", lambda x, f=_op: f(x, 1), bools(3, 9)),
        case(_op, "f16", lambda x, f=_op: f(x, 1), randn(3, 20, dtype=f16)),
        case(_op, "bf16", lambda x, f=_op: f(x, 0), ints(0, 3, 9, 2).to(bf16)),
        case(_op, "f64", lambda x, f=_op: f(x, 2), randn(2, 3, 4, dtype=f64)),
        case(_op, "0d", lambda x, f=_op: f(x, 0), torch.tensor(1.5)),
        case(_op, "empty-axis", lambda x, f=_op: f(x, 1), randn(3, 0)),
        case(_op, "size-1-axis", lambda x, f=_op: f(x, 0), randn(1, 4)),
        case(_op, "dyn", lambda x, f=_op: f(x, 1), randn(3, 10), dynamic=[(0, 1, "T")]),
    ]

# -- logcumsumexp (in double; f16/bf16 accumulate in float)
_lc = aten.logcumsumexp.default
CASES += [
    case(_lc, "dim-1", lambda x: _lc(x, 1), randn(3, 9, scale=5)),
    case(_lc, "dim-neg-permuted", lambda x: _lc(x.permute(2, 1, 0), -1), randn(3, 4, 5)),
    case(_lc, "special", lambda x: _lc(x, 1), special(5, 8)),
    case(_lc, "infinities", lambda x: _lc(x, 1),
         torch.tensor([[-INF, -INF, 0.0, -INF], [INF, 1.0, INF, -INF], [-INF, INF, -INF, 2.0],
                       [1.0, NAN, 2.0, -INF]])),
    case(_lc, "all-neg-inf", lambda x: _lc(x, 0), torch.full((4, 2), -INF)),
    case(_lc, "large", lambda x: _lc(x, 1), randn(2, 50, scale=1e4)),
    case(_lc, "long-row", lambda x: _lc(x, -1), randn(2, 3000)),
    case(_lc, "f64", lambda x: _lc(x, 0), randn(6, 3, dtype=f64)),
    case(_lc, "f16", lambda x: _lc(x, 1), randn(3, 40, dtype=f16)),
    case(_lc, "bf16", lambda x: _lc(x, 1), randn(3, 10, dtype=bf16)),
    case(_lc, "0d", lambda x: _lc(x, 0), torch.tensor(0.25)),
    case(_lc, "empty-axis", lambda x: _lc(x, 1), randn(2, 0)),
    case(_lc, "dyn", lambda x: _lc(x, 0), randn(5, 3), dynamic=[(0, 0, "B")]),
]

# -- searchsorted.Tensor
_ss = aten.searchsorted.Tensor
_seq = torch.sort(randn(9)).values
_dup = torch.tensor([0.0, 1.0, 1.0, 1.0, 2.0, 3.0, 3.0])
_bseq = torch.sort(randn(3, 4, 6), dim=-1).values
CASES += [
    case(_ss, "1d-seq-nd-values", lambda s, v: _ss(s, v), _seq, randn(3, 5)),
    case(_ss, "right", lambda s, v: _ss(s, v, right=True), _dup, uniform(-1, 4, 12).round()),
    case(_ss, "side-right", lambda s, v: _ss(s, v, side="right"), _dup, uniform(-1, 4, 12).round()),
    case(_ss, "side-left", lambda s, v: _ss(s, v, side="left"), _dup, uniform(-1, 4, 12).round()),
    case(_ss, "batched", lambda s, v: _ss(s, v), _bseq, randn(3, 4, 5)),
    case(_ss, "batched-right-i32", lambda s, v: _ss(s, v, out_int32=True, right=True),
         ints(0, 6, 2, 9).sort(-1).values, ints(-1, 7, 2, 4)),
    case(_ss, "nan-values", lambda s, v: _ss(s, v), _seq, special(4, 5)),
    case(_ss, "nan-values-right", lambda s, v: _ss(s, v, right=True), _seq, special(4, 5)),
    case(_ss, "inf-in-seq", lambda s, v: _ss(s, v), torch.tensor([-INF, -1.0, 0.0, INF]), special(3, 4)),
    case(_ss, "i64", lambda s, v: _ss(s, v), torch.tensor([-5, 0, 0, 7, 2**40]), ints(-9, 9, 10)),
    case(_ss, "int-seq-float-values", lambda s, v: _ss(s, v), torch.tensor([1, 2, 3, 5]), uniform(0, 6, 8)),
    case(_ss, "float-seq-int-values", lambda s, v: _ss(s, v), torch.tensor([0.5, 1.5, 2.5]), ints(0, 4, 7)),
    case(_ss, "f16", lambda s, v: _ss(s, v), torch.sort(randn(7, dtype=f16)).values, randn(9, dtype=f16)),
    case(_ss, "0d-value", lambda s, v: _ss(s, v), _seq, torch.tensor(0.1)),
    case(_ss, "empty-values", lambda s, v: _ss(s, v), _seq, randn(0, 3)),
    case(_ss, "empty-seq", lambda s, v: _ss(s, v), randn(0), randn(4)),
    case(_ss, "size-1-seq", lambda s, v: _ss(s, v, right=True), torch.tensor([0.0]), special(6)),
    case(_ss, "unsorted-seq", lambda s, v: _ss(s, v), randn(9), randn(7)),
    case(_ss, "dyn", lambda s, v: _ss(s, v), _seq, randn(4, 5), dynamic=[(1, 0, "B")]),
]
# sorter: argsort of an unsorted sequence (1-D and batched, with duplicates)
_us = ints(0, 5, 10).to(f32)
_ubs = randn(2, 7)
CASES += [
    case(_ss, "sorter-1d", lambda s, v: _ss(s, v, sorter=torch.argsort(s, stable=True)), _us,
         uniform(-1, 6, 9).round()),
    case(_ss, "sorter-1d-right", lambda s, v: _ss(s, v, right=True, sorter=torch.argsort(s, stable=True)),
         _us, uniform(-1, 6, 9).round()),
    case(_ss, "sorter-batched", lambda s, v: _ss(s, v, sorter=torch.argsort(s, dim=-1)), _ubs, randn(2, 5)),
]

# -- bucketize (boundaries 1-D)
_bt, _bs = aten.bucketize.Tensor, aten.bucketize.Scalar
_bounds = torch.tensor([-1.0, 0.0, 0.0, 0.5, 2.0])
CASES += [
    case(_bt, "f32", lambda x, b: _bt(x, b), randn(4, 6), _bounds),
    case(_bt, "right", lambda x, b: _bt(x, b, right=True), uniform(-2, 3, 20).round(), _bounds),
    case(_bt, "i32-out", lambda x, b: _bt(x, b, out_int32=True), randn(3, 3), _bounds),
    case(_bt, "int-bounds-float-input", lambda x, b: _bt(x, b), uniform(0, 10, 9), torch.tensor([2, 4, 8])),
    case(_bt, "special", lambda x, b: _bt(x, b), special(3, 5), _bounds),
    case(_bt, "0d", lambda x, b: _bt(x, b), torch.tensor(0.25), _bounds),
    case(_bt, "empty", lambda x, b: _bt(x, b), randn(0, 2), _bounds),
    case(_bs, "scalar", lambda b: _bs(0.25, b), _bounds),
    case(_bs, "scalar-right-int", lambda b: _bs(0, b, right=True), _bounds),
    case(_bs, "scalar-i64-bounds", lambda b: _bs(3, b), torch.tensor([1, 3, 3, 9])),
]

# -- isin
_it, _is, _si = aten.isin.Tensor_Tensor, aten.isin.Scalar_Tensor, aten.isin.Tensor_Scalar
_dups = ints(0, 6, 30)  # repeated elements: assume_unique=True is a broken promise
CASES += [
    case(_it, "small-default-path", lambda x, t: _it(x, t), ints(0, 10, 4, 6), torch.tensor([3, 7, 7])),
    case(_it, "sorting-path", lambda x, t: _it(x, t), ints(0, 40, 5, 6), ints(0, 40, 25)),
    case(_it, "invert", lambda x, t: _it(x, t, invert=True), ints(0, 10, 4, 6), ints(0, 10, 5)),
    case(_it, "invert-sorting-path", lambda x, t: _it(x, t, invert=True), ints(0, 40, 30), ints(0, 40, 30)),
    case(_it, "assume-unique-unique", lambda x, t: _it(x, t, assume_unique=True),
         torch.randperm(30)[:12], torch.randperm(30)[:20]),
    case(_it, "assume-unique-broken", lambda x, t: _it(x, t, assume_unique=True), _dups, ints(0, 8, 20)),
    case(_it, "assume-unique-broken-invert", lambda x, t: _it(x, t, assume_unique=True, invert=True),
         _dups, ints(0, 8, 20)),
    case(_it, "assume-unique-small", lambda x, t: _it(x, t, assume_unique=True), _dups, torch.tensor([1, 1, 2])),
    case(_it, "nan-zero", lambda x, t: _it(x, t), torch.tensor([0.0, NAN, -0.0, 1.0, INF]),
         torch.tensor([-0.0, NAN, INF])),
    case(_it, "nan-zero-sorting", lambda x, t: _it(x, t, assume_unique=True),
         torch.tensor([0.0, NAN, 1.0, INF]), torch.tensor([-0.0, NAN, INF, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0])),
    case(_it, "f32", lambda x, t: _it(x, t), uniform(0, 5, 3, 7).round(), uniform(0, 5, 4).round()),
    case(_it, "int-float-promotion", lambda x, t: _it(x, t), ints(0, 5, 8), torch.tensor([1.0, 2.5, 3.0])),
    case(_it, "i32-i64", lambda x, t: _it(x, t), ints(0, 5, 8, dtype=i32), torch.tensor([1, 4])),
    case(_it, "f16", lambda x, t: _it(x, t), uniform(0, 4, 9).round().to(f16), torch.tensor([1.0, 2.0], dtype=f16)),
    case(_it, "0d-elements", lambda x, t: _it(x, t), torch.tensor(3), torch.tensor([1, 3])),
    case(_it, "empty-elements", lambda x, t: _it(x, t), ints(0, 5, 0, 3), torch.tensor([1, 3])),
    case(_it, "empty-tests", lambda x, t: _it(x, t, invert=True), ints(0, 5, 4), ints(0, 5, 0)),
    case(_it, "dyn", lambda x, t: _it(x, t), ints(0, 10, 6, 4), ints(0, 10, 3), dynamic=[(0, 0, "B")]),
    case(_si, "int", lambda x: _si(x, 2), ints(0, 4, 3, 4)),
    case(_si, "float-on-int", lambda x: _si(x, 2.5), ints(0, 4, 3, 4)),
    case(_si, "invert-f32", lambda x: _si(x, 1.0, invert=True), uniform(0, 3, 8).round()),
    case(_si, "nan", lambda x: _si(x, NAN), special(6)),
    case(_is, "in", lambda t: _is(3, t), torch.tensor([1, 3, 5])),
    case(_is, "not-in-invert", lambda t: _is(2, t, invert=True), torch.tensor([1, 3, 5])),
    case(_is, "float-sorting-path", lambda t: _is(0.5, t), uniform(0, 1, 40)),
]

# -- every op on constants: rlx's fold pass evaluates them at compile time (with their scratch)
def _folded(x):
    c = torch.arange(24, dtype=f32).reshape(4, 6) % 5
    s = torch.sort(c[0]).values
    y = aten.mode.default(c, 1)[0] + aten.kthvalue.default(c, 2, 1)[0] + aten.median.dim(c, 1)[0]
    y = y + aten.cummax.default(c, 1)[0][:, -1] + aten.logcumsumexp.default(c, 1)[:, -1]
    y = y + aten.searchsorted.Tensor(s, c[:, :1].contiguous()).reshape(4).to(f32)
    return x + y + aten.isin.Tensor_Tensor(c, s[:2].contiguous()).sum(1).to(f32)


CASES.append(case(aten.mode.default, "constant-folded", _folded, randn(4),
                  expect=[aten.mode.default, aten.kthvalue.default, aten.median.dim, aten.cummax.default,
                          aten.logcumsumexp.default, aten.searchsorted.Tensor, aten.isin.Tensor_Tensor]))

# -- the decompositions torch.export applies by default ("high"/"core")
CASES += [
    case(_it, "core-small", lambda x, t: torch.isin(x, t), ints(0, 10, 4, 6), torch.tensor([3, 7]),
         decomposition="core", expect=[aten.eq.Tensor, aten.any.dims]),
    case(_it, "core-sorting", lambda x, t: torch.isin(x, t), ints(0, 40, 50), ints(0, 40, 30),
         decomposition="core", expect=[aten.sort.default, aten.searchsorted.Tensor]),
    case(_it, "high-invert-sorting", lambda x, t: torch.isin(x, t, invert=True), ints(0, 40, 50),
         ints(0, 40, 30), decomposition="high", expect=[aten.searchsorted.Tensor]),
    case(_it, "high-assume-unique-sorting", lambda x, t: torch.isin(x, t, assume_unique=True),
         torch.randperm(60)[:40], torch.randperm(60)[:30], decomposition="high",
         expect=[aten.sort.stable, aten.index_put.default]),
    case(_si, "core", lambda x: torch.isin(x, 2), ints(0, 4, 3, 4), decomposition="core",
         expect=[aten.eq.Scalar]),
    case(_is, "core-small", lambda t: torch.isin(3, t), torch.tensor([1, 3, 5]), decomposition="core",
         expect=[aten.eq.Tensor]),
    case(_is, "core-sorting", lambda t: torch.isin(3, t), ints(0, 6, 40), decomposition="core",
         expect=[aten.searchsorted.Tensor]),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
