"""Conformance: reductions, arg-reductions, scans, histc and softmax.

Reductions are tested over several axes at once, negative axes, keepdim, the
empty axis list (which reduces everything), zero-size inputs (sum -> 0,
prod -> 1, mean -> NaN), integer and bool inputs (sum and prod of i32 and bool
give i64), the ``dtype=`` keyword, half precision (accumulated in f32 as torch
does), long rows (accumulation error) and +-inf / NaN (NaN propagates through
amax, max, argmax ...; inf - inf gives NaN in sums).  Arg-reductions and
max/min with indices use tie-free inputs (``distinct``).
"""

import pytest
import torch

from cases import (INF, NAN, aten, bf16, bools, case, case_id, distinct, f16, f32, f64, i32,
                   i64, ints, randn, seed, special, uniform)

seed("test_reduce")
# var/std over one element (or none) are NaN by design here; torch warns about it
pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning")

CASES = []

# -- sum / mean / nansum
_s = aten.sum.dim_IntList
CASES += [
    case(_s, "dims-neg-keepdim", lambda x: _s(x, [-1, 0], True), randn(3, 4, 5)),
    case(_s, "dim-1-permuted", lambda x: _s(x.permute(2, 0, 1), [1]), randn(3, 4, 5)),
    case(_s, "dims-empty-is-all", lambda x: _s(x, []), randn(3, 4)),
    case(_s, "dims-none", lambda x: _s(x, None), randn(3, 4)),
    case(_s, "i32-to-i64", lambda x: _s(x, [1]), ints(-99, 99, 4, 6, dtype=i32)),
    case(_s, "bool-to-i64", lambda x: _s(x, [0, 1]), bools(5, 6)),
    case(_s, "i64-large", lambda x: _s(x, [0]), ints(-2**40, 2**40, 64, 3)),
    case(_s, "dtype-f64", lambda x: _s(x, [1], dtype=f64), randn(4, 6)),
    case(_s, "i64-dtype-f32", lambda x: _s(x, [1], dtype=f32), ints(-9, 9, 4, 6)),
    case(_s, "f16", lambda x: _s(x, [-1]), randn(4, 300, dtype=f16)),
    case(_s, "bf16-keepdim", lambda x: _s(x, [0], True), randn(64, 5, dtype=bf16)),
    case(_s, "empty-axis", lambda x: _s(x, [1]), randn(3, 0, 4)),
    case(_s, "special", lambda x: _s(x, [1]), special(3, 6)),
    case(_s, "long-row", lambda x: _s(x, [-1]), randn(3, 8192)),
    case(_s, "middle-axis-large-odd", lambda x: _s(x, [1]), randn(7, 131, 37)),
    case(_s, "f64", lambda x: _s(x, [0, 2]), randn(3, 4, 5, dtype=f64)),
    case(aten.sum.default, "f32", lambda x: aten.sum.default(x), randn(3, 4, 5)),
    case(aten.sum.default, "bool", lambda x: aten.sum.default(x), bools(7, 3)),
    case(aten.sum.default, "i32-strided", lambda x: aten.sum.default(x[::2]),
         ints(-9, 9, 6, 4, dtype=i32)),
    case(aten.sum.default, "empty", lambda x: aten.sum.default(x), randn(0, 3)),
    case(aten.nansum.default, "nan", lambda x: aten.nansum.default(x, [1]), special(4, 6)),
    case(aten.nansum.default, "all-f16", lambda x: aten.nansum.default(x),
         special(4, 6, dtype=f16)),
    case(aten.nansum.default, "i64", lambda x: aten.nansum.default(x, [0]), ints(-9, 9, 4, 6)),
]
_m, _md = aten.mean.default, aten.mean.dim
CASES += [
    case(_m, "f32", lambda x: _m(x), randn(3, 4, 5)),
    case(_m, "permuted-f16", lambda x: _m(x.t()), randn(40, 30, dtype=f16)),
    case(_m, "empty-nan", lambda x: _m(x), randn(0, 3)),
    case(_m, "special", lambda x: _m(x), special(3, 4)),
    case(_m, "dtype-f64", lambda x: _m(x, dtype=f64), randn(5, 6)),
    case(_m, "bf16-0d", lambda x: _m(x), randn(dtype=bf16)),
    case(_md, "dims-neg-keepdim", lambda x: _md(x, [-1, -3], True), randn(3, 4, 5)),
    case(_md, "dim-0-noncontig", lambda x: _md(x[:, 1::2], [0]), randn(6, 8)),
    case(_md, "dims-empty-is-all", lambda x: _md(x, []), randn(3, 4)),
    case(_md, "dims-none", lambda x: _md(x, None, True), randn(3, 4)),
    case(_md, "f16-long", lambda x: _md(x, [1]), randn(3, 2048, dtype=f16)),
    case(_md, "bf16", lambda x: _md(x, [0]), randn(50, 3, dtype=bf16)),
    case(_md, "empty-axis-nan", lambda x: _md(x, [0]), randn(0, 4)),
    case(_md, "special", lambda x: _md(x, [1]), special(4, 6)),
    case(_md, "dtype-f64", lambda x: _md(x, [1], dtype=f64), randn(4, 6)),
    case(_md, "f64-spatial", lambda x: _md(x, [2, 3], True), randn(2, 3, 5, 5, dtype=f64)),
]

# -- amax / amin (NaN propagates; several axes; ints and bools)
for _op in (aten.amax.default, aten.amin.default):
    CASES += [
        case(_op, "dims-neg-keepdim", lambda x, f=_op: f(x, [-1, 1], True), randn(3, 4, 5)),
        case(_op, "dim-0-permuted", lambda x, f=_op: f(x.permute(1, 0), [0]), randn(5, 4)),
        case(_op, "dims-empty-is-all", lambda x, f=_op: f(x, []), randn(3, 4)),
        case(_op, "i64", lambda x, f=_op: f(x, [1]), ints(-99, 99, 4, 6)),
        case(_op, "i32-keepdim", lambda x, f=_op: f(x, [0], True), ints(-99, 99, 4, 6, dtype=i32)),
        case(_op, "bool", lambda x, f=_op: f(x, [1]), bools(4, 6)),
        case(_op, "special", lambda x, f=_op: f(x, [1]), special(4, 6)),
        case(_op, "all-neg-inf-rows", lambda x, f=_op: f(x, [1]),
             torch.tensor([[-INF, -INF], [INF, INF], [-INF, 1.0]])),
        case(_op, "f16", lambda x, f=_op: f(x, [-1]), randn(4, 33, dtype=f16)),
        case(_op, "bf16-0d", lambda x, f=_op: f(x, []), randn(dtype=bf16)),
        case(_op, "empty-other-axis", lambda x, f=_op: f(x, [1]), randn(0, 4)),
    ]

# -- max / min: whole tensor, and .dim with values + indices (tie-free)
for _op, _od in ((aten.max.default, aten.max.dim), (aten.min.default, aten.min.dim)):
    CASES += [
        case(_op, "f32", lambda x, f=_op: f(x), randn(3, 4, 5)),
        case(_op, "i64-permuted", lambda x, f=_op: f(x.t()), ints(-999, 999, 5, 4)),
        case(_op, "special", lambda x, f=_op: f(x), special(4, 5)),
        case(_op, "bool", lambda x, f=_op: f(x), bools(3, 4)),
        case(_op, "f16", lambda x, f=_op: f(x), randn(7, 9, dtype=f16)),
        case(_od, "dim-1", lambda x, f=_od: f(x, 1), distinct(3, 4, 5)),
        case(_od, "dim-neg-keepdim", lambda x, f=_od: f(x, -1, True), distinct(3, 4, 5)),
        case(_od, "dim-0-noncontig", lambda x, f=_od: f(x.permute(2, 1, 0), 0), distinct(3, 4, 5)),
        case(_od, "i64", lambda x, f=_od: f(x, 0), distinct(6, 5, dtype=i64)),
        case(_od, "i32", lambda x, f=_od: f(x, 1), distinct(6, 5, dtype=i32)),
        case(_od, "f16", lambda x, f=_od: f(x, 1), distinct(4, 40, dtype=f16, step=1.0)),
        case(_od, "bf16", lambda x, f=_od: f(x, 0), distinct(8, 3, dtype=bf16, step=1.0)),
        case(_od, "f64-0d", lambda x, f=_od: f(x, 0), torch.tensor(1.5, dtype=f64)),
        case(_od, "nan-wins", lambda x, f=_od: f(x, 1),
             torch.tensor([[1.0, NAN, 3.0], [INF, -2.0, -INF], [-INF, 0.5, INF]])),
        case(_od, "empty-other-axis", lambda x, f=_od: f(x, 1), randn(0, 4)),
    ]

# -- argmax / argmin (tie-free; dim None flattens)
for _op in (aten.argmax.default, aten.argmin.default):
    CASES += [
        case(_op, "flat", lambda x, f=_op: f(x), distinct(3, 4, 5)),
        case(_op, "dim-neg-keepdim", lambda x, f=_op: f(x, -1, True), distinct(3, 4, 5)),
        case(_op, "dim-0-permuted", lambda x, f=_op: f(x.permute(1, 0), 0), distinct(5, 4)),
        case(_op, "flat-noncontig-keepdim", lambda x, f=_op: f(x.t(), None, True), distinct(5, 4)),
        case(_op, "i64", lambda x, f=_op: f(x, 1), distinct(4, 6, dtype=i64)),
        case(_op, "i32", lambda x, f=_op: f(x, 0), distinct(4, 6, dtype=i32)),
        case(_op, "f16", lambda x, f=_op: f(x, 1), distinct(3, 50, dtype=f16, step=1.0)),
        case(_op, "bf16", lambda x, f=_op: f(x), distinct(5, 5, dtype=bf16, step=1.0)),
        case(_op, "nan-wins", lambda x, f=_op: f(x, 1),
             torch.tensor([[1.0, NAN, 3.0], [INF, -2.0, -INF], [-INF, 0.5, INF]])),
        case(_op, "f64-dim-1-size-1", lambda x, f=_op: f(x, 1), randn(4, 1, dtype=f64)),
        # ties: torch documents that the first extreme index is returned
        case(_op, "ties-first-index", lambda x, f=_op: f(x, 1), ints(0, 3, 4, 9)),
        case(_op, "ties-first-index-flat-f32", lambda x, f=_op: f(x),
             torch.tensor([[1.0, -0.0, 3.0, 0.0], [3.0, -2.0, -2.0, 0.0]])),
    ]

# -- _is_all_true / _is_any_true: a bool tensor to a 0-d bool
for _op in (aten._is_all_true.default, aten._is_any_true.default):
    CASES += [
        case(_op, "mostly-true", lambda x, f=_op: f(x), bools(3, 4, p=0.9)),
        case(_op, "all-true-permuted", lambda x, f=_op: f(x.t()), torch.ones(4, 3, dtype=torch.bool)),
        case(_op, "scalar-false", lambda x, f=_op: f(x), torch.tensor(False)),
        case(_op, "empty", lambda x, f=_op: f(x), bools(0, 4)),
    ]

# -- any / all (non-zero is true, NaN is true; empty -> any False, all True)
for _a, _ad, _ads in ((aten.any.default, aten.any.dim, aten.any.dims),
                      (aten.all.default, aten.all.dim, aten.all.dims)):
    CASES += [
        case(_a, "bool", lambda x, f=_a: f(x), bools(3, 4, p=0.1)),
        case(_a, "bool-mostly-true", lambda x, f=_a: f(x), bools(3, 4, p=0.9)),
        case(_a, "f32-special", lambda x, f=_a: f(x), special(3, 4)),
        case(_a, "i64-zeros", lambda x, f=_a: f(x), torch.zeros(3, 4, dtype=i64)),
        case(_a, "empty", lambda x, f=_a: f(x), bools(0, 4)),
        case(_ad, "dim-neg-keepdim", lambda x, f=_ad: f(x, -1, True), bools(3, 4, 5)),
        case(_ad, "dim-0-permuted", lambda x, f=_ad: f(x.t(), 0), bools(5, 4)),
        case(_ad, "f32", lambda x, f=_ad: f(x, 1), randn(3, 4) * bools(3, 4)),
        case(_ad, "i32", lambda x, f=_ad: f(x, 0), ints(-1, 2, 6, 3, dtype=i32)),
        case(_ad, "empty-axis", lambda x, f=_ad: f(x, 1), bools(3, 0)),
        case(_ads, "two-dims", lambda x, f=_ads: f(x, [0, -1]), bools(3, 4, 5, p=0.2)),
        case(_ads, "keepdim-f16", lambda x, f=_ads: f(x, [1], True), randn(3, 4, dtype=f16) * bools(
            3, 4, p=0.2)),
        case(_ads, "none-is-all", lambda x, f=_ads: f(x, None), bools(3, 4, p=0.9)),
        case(_ads, "u8", lambda x, f=_ads: f(x, [1]), ints(0, 2, 3, 4).to(torch.uint8)),
    ]

# -- prod
_p, _pd = aten.prod.default, aten.prod.dim_int
CASES += [
    case(_p, "f32", lambda x: _p(x), uniform(0.7, 1.4, 4, 5)),
    case(_p, "i64", lambda x: _p(x), ints(-3, 4, 6)),
    case(_p, "i32-to-i64", lambda x: _p(x), ints(1, 4, 2, 5, dtype=i32)),
    case(_p, "bool-to-i64", lambda x: _p(x), bools(3, p=0.8)),
    case(_p, "empty-one", lambda x: _p(x), randn(0, 3)),
    case(_p, "special", lambda x: _p(x), special(2, 3)),
    case(_p, "dtype-f64", lambda x: _p(x, dtype=f64), uniform(0.7, 1.4, 4, 5)),
    case(_pd, "dim-1", lambda x: _pd(x, 1), uniform(0.5, 1.5, 3, 4, 5)),
    case(_pd, "dim-neg-keepdim-permuted", lambda x: _pd(x.permute(2, 0, 1), -1, True),
         uniform(0.5, 1.5, 3, 4, 5)),
    case(_pd, "i64", lambda x: _pd(x, 0), ints(-5, 6, 4, 6)),
    case(_pd, "i32-to-i64", lambda x: _pd(x, 1), ints(-5, 6, 4, 6, dtype=i32)),
    case(_pd, "f16", lambda x: _pd(x, 1), uniform(0.8, 1.2, 3, 20, dtype=f16)),
    case(_pd, "empty-axis-one", lambda x: _pd(x, 1), randn(3, 0)),
    case(_pd, "special", lambda x: _pd(x, 1), special(4, 5)),
    case(_pd, "dtype-f32-from-i64", lambda x: _pd(x, 0, dtype=f32), ints(-3, 4, 4, 6)),
]

# -- var / std / var_mean: correction 0/1/2, unbiased flag, one-element (NaN) groups
_v, _vc = aten.var.dim, aten.var.correction
CASES += [
    case(_v, "unbiased", lambda x: _v(x, [1]), randn(3, 7)),
    case(_v, "biased-keepdim-dims", lambda x: _v(x, [0, -1], False, True), randn(3, 4, 5)),
    case(_v, "none-is-all", lambda x: _v(x, None), randn(3, 4)),
    case(_v, "noncontig", lambda x: _v(x.t(), [0]), randn(3, 8)),
    case(_v, "one-element-nan", lambda x: _v(x, [1]), randn(3, 1)),
    case(_v, "f16-offset", lambda x: _v(x, [1]), randn(4, 200, dtype=f16) + 10),
    case(_v, "special", lambda x: _v(x, [1]), special(4, 6)),
    case(_vc, "correction-0", lambda x: _vc(x, [1], correction=0), randn(3, 7)),
    case(_vc, "correction-2-keepdim", lambda x: _vc(x, [-1], correction=2, keepdim=True),
         randn(3, 4, 5)),
    case(_vc, "default-all", lambda x: _vc(x), randn(5, 6)),
    case(_vc, "f64-dims", lambda x: _vc(x, [0, 2], correction=1), randn(3, 4, 5, dtype=f64)),
    case(_vc, "bf16", lambda x: _vc(x, [0]), randn(40, 3, dtype=bf16)),
    case(_vc, "large-mean", lambda x: _vc(x, [1]), randn(2, 1000) + 1000),
    case(_vc, "empty-axis-nan", lambda x: _vc(x, [1]), randn(3, 0)),
    case(aten.std.correction, "correction-1", lambda x: aten.std.correction(x, [1], correction=1),
         randn(3, 7)),
    case(aten.std.correction, "correction-0-keepdim",
         lambda x: aten.std.correction(x, [0, 1], correction=0, keepdim=True), randn(3, 4, 5)),
    case(aten.std.correction, "all-f16", lambda x: aten.std.correction(x), randn(30, 6, dtype=f16)),
    case(aten.std.dim, "unbiased", lambda x: aten.std.dim(x, [-1]), randn(3, 7)),
    case(aten.std.dim, "biased-noncontig", lambda x: aten.std.dim(x.t(), [1], False), randn(7, 3)),
    case(aten.std.dim, "special", lambda x: aten.std.dim(x, [1]), special(4, 6)),
    case(aten.var_mean.correction, "dim-1",
         lambda x: aten.var_mean.correction(x, [1], correction=1), randn(3, 7)),
    case(aten.var_mean.correction, "keepdim-correction-0",
         lambda x: aten.var_mean.correction(x, [-1, -2], correction=0, keepdim=True),
         randn(2, 3, 4)),
    case(aten.var_mean.correction, "all-f64",
         lambda x: aten.var_mean.correction(x), randn(4, 5, dtype=f64)),
    case(aten.var_mean.dim, "unbiased", lambda x: aten.var_mean.dim(x, [0]), randn(6, 3)),
    case(aten.var_mean.dim, "biased-keepdim", lambda x: aten.var_mean.dim(x, [1], False, True),
         randn(6, 3)),
    case(aten.var_mean.dim, "f16", lambda x: aten.var_mean.dim(x, [1]), randn(4, 64, dtype=f16)),
    case(aten.std_mean.correction, "dim-1", lambda x: aten.std_mean.correction(x, [1]),
         randn(3, 7)),
    case(aten.std_mean.correction, "correction-0-keepdim", lambda x: aten.std_mean.correction(
        x, [0], correction=0, keepdim=True), randn(5, 3)),
    case(aten.std_mean.correction, "f64-none", lambda x: aten.std_mean.correction(x),
         randn(4, 5, dtype=f64)),
    case(aten.std_mean.dim, "biased", lambda x: aten.std_mean.dim(x, [-1], False), randn(3, 7)),
    case(aten.std_mean.dim, "unbiased-keepdim", lambda x: aten.std_mean.dim(x, [0, 1], True, True),
         randn(3, 4, 2)),
    case(aten.std_mean.dim, "noncontig-f16", lambda x: aten.std_mean.dim(x.t(), [1]),
         randn(30, 3, dtype=f16)),
    case(aten.std_mean.default, "all", lambda x: aten.std_mean.default(x), randn(4, 5)),
    case(aten.std_mean.default, "biased", lambda x: aten.std_mean.default(x, False), randn(6)),
    case(aten.std_mean.default, "special", lambda x: aten.std_mean.default(x), special(3, 3)),
]

# -- cumsum / cumprod
_cs, _cp = aten.cumsum.default, aten.cumprod.default
CASES += [
    case(_cs, "dim-1", lambda x: _cs(x, 1), randn(3, 4, 5)),
    case(_cs, "dim-neg-permuted", lambda x: _cs(x.permute(2, 0, 1), -1), randn(3, 4, 5)),
    case(_cs, "dim-0", lambda x: _cs(x, 0), randn(6, 3)),
    case(_cs, "i32-to-i64", lambda x: _cs(x, 1), ints(-9, 9, 3, 7, dtype=i32)),
    case(_cs, "bool-to-i64", lambda x: _cs(x, 0), bools(7, 3)),
    case(_cs, "i64-dtype-f32", lambda x: _cs(x, 1, dtype=f32), ints(-9, 9, 3, 7)),
    case(_cs, "f16-long", lambda x: _cs(x, 1), randn(2, 500, dtype=f16)),
    case(_cs, "bf16", lambda x: _cs(x, 1), randn(2, 40, dtype=bf16)),
    case(_cs, "special", lambda x: _cs(x, 1), special(4, 6)),
    case(_cs, "empty", lambda x: _cs(x, 0), randn(0, 3)),
    case(_cs, "0d", lambda x: _cs(x, 0), randn()),
    case(_cs, "long-row", lambda x: _cs(x, 1), randn(2, 4096)),
    case(_cp, "dim-1", lambda x: _cp(x, 1), uniform(0.5, 1.5, 3, 6)),
    case(_cp, "dim-neg-noncontig", lambda x: _cp(x.t(), -1), uniform(0.5, 1.5, 6, 3)),
    case(_cp, "i64", lambda x: _cp(x, 0), ints(-3, 4, 8, 3)),
    case(_cp, "i32-to-i64", lambda x: _cp(x, 1), ints(-3, 4, 3, 8, dtype=i32)),
    case(_cp, "special", lambda x: _cp(x, 1), special(3, 6)),
    case(_cp, "f16", lambda x: _cp(x, 1), uniform(0.9, 1.1, 3, 30, dtype=f16)),
    case(_cp, "empty", lambda x: _cp(x, 1), randn(3, 0)),
    case(_cp, "zeros-in-row", lambda x: _cp(x, 1), torch.tensor([[1.0, 2.0, 0.0, 3.0, -1.0]])),
]

# -- histc: counts of elements in equal-width bins.  Elements exactly on a bin edge, and one
# float step either side, are where the order of rounding in torch's bin computation
# ((x - min) * bins / (max - min) in the input dtype) decides the bin; NaN and elements outside
# an explicit range are not counted; min == max bins over the data's own range.


def _on_edges(lo, hi, bins, dtype=f32):
    e = torch.linspace(lo, hi, bins + 1, dtype=f64).to(f32)
    near = torch.cat([e, torch.nextafter(e, e + 1), torch.nextafter(e, e - 1)])
    tenths = (torch.arange(0, 11, dtype=f64) / 10 * (hi - lo) + lo).to(f32)
    return torch.cat([near, tenths]).to(dtype)


_h = aten.histc.default
_expert_ids = ints(0, 4, 64).to(f32)  # transformers' MoE: tokens per expert
CASES += [
    case(_h, "default-args-data-range", lambda x: _h(x), randn(300)),
    case(_h, "data-range-bins-7-2d", lambda x: _h(x, 7), uniform(-2, 5, 6, 9)),
    case(_h, "min-eq-max-nonzero-is-data-range", lambda x: _h(x, 4, 2.0, 2.0), randn(50)),
    case(_h, "explicit-range-values-outside", lambda x: _h(x, 5, -1.0, 1.0), randn(400)),
    case(_h, "moe-expert-counts", lambda x: _h(x, 4, 0, 3), _expert_ids),
    case(_h, "moe-expert-counts-out-of-range-ids", lambda x: _h(x, 4, 0, 3),
         torch.tensor([0.0, 3.0, 4.0, -1.0, 2.0, 3.0, 5.0])),
    case(_h, "edges-unit", lambda x: _h(x, 10, 0.0, 1.0), _on_edges(0.0, 1.0, 10)),
    case(_h, "edges-odd-range", lambda x: _h(x, 7, -1.3, 2.9), _on_edges(-1.3, 2.9, 7)),
    case(_h, "edges-data-range", lambda x: _h(x, 9), _on_edges(-0.7, 3.1, 9)),
    case(_h, "edges-f64", lambda x: _h(x, 7, -1.3, 2.9), _on_edges(-1.3, 2.9, 7, f64)),
    case(_h, "edges-f16", lambda x: _h(x, 7, -1.3, 2.9), _on_edges(-1.3, 2.9, 7, f16)),
    case(_h, "edges-bf16", lambda x: _h(x, 7, -1.3, 2.9), _on_edges(-1.3, 2.9, 7, bf16)),
    case(_h, "f16-data-range", lambda x: _h(x, 13), randn(200, dtype=f16)),
    case(_h, "all-at-max", lambda x: _h(x, 3, 0.0, 2.0), torch.full((5,), 2.0)),
    case(_h, "constant-data-widens-range", lambda x: _h(x, 4), torch.full((6,), 2.5)),
    case(_h, "special-explicit-range", lambda x: _h(x, 6, -3.0, 3.0), special(40)),
    case(_h, "one-bin", lambda x: _h(x, 1, -1.0, 1.0), randn(20)),
    case(_h, "empty", lambda x: _h(x, 3), randn(0)),
    case(_h, "empty-explicit-range", lambda x: _h(x, 3, 0.0, 1.0), randn(0, 4)),
]

# -- softmax / log_softmax / logsumexp (rows of -inf give NaN, as in torch)
_masked = torch.tensor([[0.5, -INF, 1.0, -INF], [-INF, -INF, -INF, -INF], [INF, 0.0, 1.0, 2.0],
                        [NAN, 0.0, 1.0, 2.0]])
for _op in (aten._softmax.default, aten._log_softmax.default):
    CASES += [
        case(_op, "dim-neg", lambda x, f=_op: f(x, -1, False), randn(3, 4, 5, scale=3)),
        case(_op, "dim-0-permuted", lambda x, f=_op: f(x.permute(1, 0, 2), 0, False),
             randn(3, 4, 5)),
        case(_op, "dim-1-large-values", lambda x, f=_op: f(x, 1, False), randn(4, 10, scale=50)),
        case(_op, "masked-rows", lambda x, f=_op: f(x, 1, False), _masked),
        case(_op, "f16", lambda x, f=_op: f(x, -1, False), randn(3, 40, dtype=f16, scale=3)),
        case(_op, "bf16", lambda x, f=_op: f(x, 0, False), randn(20, 3, dtype=bf16)),
        case(_op, "f64", lambda x, f=_op: f(x, 1, False), randn(3, 7, dtype=f64)),
        case(_op, "empty", lambda x, f=_op: f(x, 1, False), randn(0, 5)),
        case(_op, "size-1-axis", lambda x, f=_op: f(x, 1, False), randn(4, 1)),
        case(_op, "long-row", lambda x, f=_op: f(x, 1, False), randn(2, 5000, scale=4)),
        case(_op, "middle-axis-large-odd", lambda x, f=_op: f(x, 1, False), randn(5, 67, 33)),
    ]
for _op in (aten.softmax.int, aten.log_softmax.int):
    CASES += [
        case(_op, "dim-neg", lambda x, f=_op: f(x, -1), randn(3, 4, 5)),
        case(_op, "dtype-f64", lambda x, f=_op: f(x, 1, f64), randn(3, 4)),
        case(_op, "f16-to-f32", lambda x, f=_op: f(x, 0, f32), randn(6, 4, dtype=f16)),
        case(_op, "masked", lambda x, f=_op: f(x, 1), _masked),
    ]
_lse = aten.logsumexp.default
CASES += [
    case(_lse, "dim-1", lambda x: _lse(x, [1]), randn(3, 6, scale=10)),
    case(_lse, "dims-keepdim-permuted", lambda x: _lse(x.permute(2, 1, 0), [0, -1], True),
         randn(3, 4, 5)),
    case(_lse, "masked", lambda x: _lse(x, [1]), _masked),
    case(_lse, "f16", lambda x: _lse(x, [0]), randn(30, 3, dtype=f16)),
    case(_lse, "empty-axis", lambda x: _lse(x, [1]), randn(3, 0)),
    case(_lse, "i64-promotes", lambda x: _lse(x, [1]), ints(-5, 5, 3, 4)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
