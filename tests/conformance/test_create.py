"""Conformance: tensor factories and fills (arange, full, scalar_tensor, empty, empty_permuted,
fill, zeros, ones and their *_like / new_* forms) and the symbolic-size op sym_size.int.

Factories take no tensor input, so most cases have none.  ``empty``,
``empty_strided`` and ``empty_permuted`` return uninitialized memory: their cases compare either a
zero-size result (nothing to compare but the shape) or the result after a fill
or copy, which is how exported graphs use them.  arange covers fractional and
negative steps (length ceil((end - start) / step), computed as torch does in
double) and the dtype torch infers (i64 for integer arguments, f32 otherwise).
``sym_size.int`` appears only in exports with a dynamic dimension, so its
cases export with one.
"""

import pytest
import torch

from cases import (INF, aten, b8, bf16, bools, case, case_id, f16, f32, f64, i32, i64, ints,
                   perm_index, randn, seed, special)

seed("test_create")

CASES = []

# -- arange
_ar = aten.arange.start_step
CASES += [
    case(_ar, "int-args-i64", lambda: _ar(2, 17, 3)),
    case(_ar, "float-step", lambda: _ar(0.0, 1.0, 0.1)),
    case(_ar, "negative-step", lambda: _ar(5, -4, -2)),
    case(_ar, "negative-float-step", lambda: _ar(1.5, -1.0, -0.25)),
    case(_ar, "dtype-f64", lambda: _ar(-1, 1, 0.3, dtype=f64)),
    case(_ar, "dtype-i32", lambda: _ar(0, 10, 2, dtype=i32)),
    case(_ar, "dtype-f16", lambda: _ar(0, 3, 0.5, dtype=f16)),
    case(_ar, "empty", lambda: _ar(3, 3, 1)),
    case(_ar, "float-args-int-dtype", lambda: _ar(0.5, 5.5, 1.5, dtype=i64)),
    case(aten.arange.default, "end-only", lambda: aten.arange.default(7)),
    case(aten.arange.default, "float-end", lambda: aten.arange.default(2.5)),
    case(aten.arange.default, "dtype-f32", lambda: aten.arange.default(5, dtype=f32)),
    case(aten.arange.start, "start-end", lambda: aten.arange.start(-3, 4)),
    case(aten.arange.start, "float", lambda: aten.arange.start(0.25, 3)),
    case(aten.arange.start, "bf16", lambda: aten.arange.start(0, 8, dtype=bf16)),
]

# -- full / full_like / scalar_tensor
CASES += [
    case(aten.full.default, "f32", lambda: aten.full.default([2, 3], 1.5)),
    case(aten.full.default, "int-value-i64", lambda: aten.full.default([4], 7)),
    case(aten.full.default, "bool", lambda: aten.full.default([2, 2], True)),
    case(aten.full.default, "neg-inf-f16", lambda: aten.full.default([3], -INF, dtype=f16)),
    case(aten.full.default, "empty", lambda: aten.full.default([0, 3], 2.0)),
    case(aten.full.default, "0d-dtype-i32", lambda: aten.full.default([], 3, dtype=i32)),
    case(aten.full_like.default, "noncontig", lambda x: aten.full_like.default(x.t(), 2.5),
         randn(2, 3)),
    case(aten.full_like.default, "dtype-override",
         lambda x: aten.full_like.default(x, 3, dtype=i64), randn(2, 3)),
    case(aten.full_like.default, "inf-i64-input-float-dtype", lambda x: aten.full_like.default(
        x, INF, dtype=f32), ints(0, 9, 3)),
    case(aten.full_like.default, "bool-empty", lambda x: aten.full_like.default(x, False),
         bools(0, 2)),
    case(aten.scalar_tensor.default, "float", lambda: aten.scalar_tensor.default(2.5)),
    case(aten.scalar_tensor.default, "dtype-i64", lambda: aten.scalar_tensor.default(-3,
                                                                                    dtype=i64)),
    case(aten.scalar_tensor.default, "bool", lambda: aten.scalar_tensor.default(1, dtype=b8)),
    case(aten.scalar_tensor.default, "neg-inf-f16", lambda: aten.scalar_tensor.default(
        -INF, dtype=f16)),
]

# -- empty / empty_strided (uninitialized: compare after a fill or copy, or a zero-size result)
_em, _es = aten.empty.memory_format, aten.empty_strided.default
CASES += [
    case(_em, "then-fill", lambda: aten.fill.Scalar(_em([2, 3]), 1.5),
         expect=[_em, aten.fill.Scalar]),
    case(_em, "then-copy", lambda x: aten.copy.default(_em([3, 4]), x), randn(3, 4),
         expect=[_em, aten.copy.default]),
    case(_em, "zero-size", lambda: _em([0, 3])),
    case(_em, "i64-then-fill", lambda: aten.fill.Scalar(_em([4], dtype=i64), 9)),
    case(_es, "then-fill", lambda: aten.fill.Scalar(_es([2, 3], [3, 1]), -2.0)),
    case(_es, "transposed-then-copy", lambda x: aten.copy.default(_es([3, 2], [1, 3]), x),
         randn(3, 2)),
    case(_es, "zero-size", lambda: _es([2, 0], [1, 1])),
    case(aten.empty_like.default, "then-fill", lambda x: aten.fill.Scalar(
        aten.empty_like.default(x), 3.0), randn(2, 2)),
    case(aten.empty_like.default, "zero-size", lambda x: aten.empty_like.default(x), randn(0, 3)),
    case(aten.empty_like.default, "i64-then-copy", lambda x, y: aten.copy.default(
        aten.empty_like.default(x), y), ints(0, 9, 3), ints(0, 9, 3)),
    case(aten.new_empty.default, "then-copy", lambda x, y: aten.copy.default(
        aten.new_empty.default(x, [2, 3]), y), randn(1), randn(2, 3)),
    case(aten.new_empty.default, "zero-size-i64", lambda x: aten.new_empty.default(x, [0, 2]),
         ints(0, 9, 2)),
    case(aten.new_empty.default, "dtype-then-fill", lambda x: aten.fill.Scalar(
        aten.new_empty.default(x, [3], dtype=i32), 4), randn(2)),
]

# -- empty_permuted (uninitialized, a logical shape stored in a permuted order: compare after a
# fill or copy, as exported graphs use it, e.g. transformers' MoE index_put into one)
_ep = aten.empty_permuted.default
CASES += [
    case(_ep, "then-fill", lambda: aten.fill.Scalar(_ep([2, 3, 4], [0, 2, 1]), 1.5),
         expect=[_ep, aten.fill.Scalar]),
    case(_ep, "transposed-then-copy", lambda x: aten.copy.default(_ep([3, 4], [1, 0]), x),
         randn(3, 4), expect=[_ep, aten.copy.default]),
    case(_ep, "i64-then-index-put", lambda i, v: aten.index_put.default(
        _ep([5], [0], dtype=i64), [i], v), perm_index(5), ints(0, 99, 5),
         expect=[_ep, aten.index_put.default]),
    case(_ep, "zero-size", lambda: _ep([0, 3], [1, 0])),
]

# -- fill
CASES += [
    case(aten.fill.Scalar, "f32-noncontig", lambda x: aten.fill.Scalar(x.t(), 0.25), randn(2, 3)),
    case(aten.fill.Scalar, "i64", lambda x: aten.fill.Scalar(x, -4), ints(0, 9, 3, 2)),
    case(aten.fill.Scalar, "bool", lambda x: aten.fill.Scalar(x, True), bools(4)),
    case(aten.fill.Scalar, "inf-f16", lambda x: aten.fill.Scalar(x, INF), randn(2, 2, dtype=f16)),
    case(aten.fill.Scalar, "float-into-i32-truncates", lambda x: aten.fill.Scalar(x, 2.7),
         ints(0, 9, 3, dtype=i32)),
    case(aten.fill.Scalar, "empty", lambda x: aten.fill.Scalar(x, 1.0), randn(0, 3)),
    case(aten.fill.Tensor, "0d-value", lambda x, v: aten.fill.Tensor(x, v), randn(2, 3), randn()),
    case(aten.fill.Tensor, "i64-from-f32-value", lambda x, v: aten.fill.Tensor(x, v),
         ints(0, 9, 3), torch.tensor(-2.5)),
    case(aten.fill.Tensor, "special", lambda x, v: aten.fill.Tensor(x, v), randn(2, 3),
         torch.tensor(-INF)),
]

# -- zeros / ones and their *_like / new_* forms
CASES += [
    case(aten.zeros.default, "f32", lambda: aten.zeros.default([2, 3])),
    case(aten.zeros.default, "i64-empty", lambda: aten.zeros.default([0, 2], dtype=i64)),
    case(aten.zeros.default, "bool", lambda: aten.zeros.default([3], dtype=b8)),
    case(aten.ones.default, "f32", lambda: aten.ones.default([2, 3])),
    case(aten.ones.default, "i32", lambda: aten.ones.default([4], dtype=i32)),
    case(aten.ones.default, "bf16-0d", lambda: aten.ones.default([], dtype=bf16)),
    case(aten.zeros_like.default, "noncontig", lambda x: aten.zeros_like.default(x.t()),
         special(2, 3)),
    case(aten.zeros_like.default, "dtype", lambda x: aten.zeros_like.default(x, dtype=i64),
         randn(3)),
    case(aten.zeros_like.default, "bool", lambda x: aten.zeros_like.default(x), bools(2, 2)),
    case(aten.ones_like.default, "f16", lambda x: aten.ones_like.default(x),
         randn(2, 3, dtype=f16)),
    case(aten.ones_like.default, "i64-to-f32", lambda x: aten.ones_like.default(x, dtype=f32),
         ints(0, 9, 4)),
    case(aten.ones_like.default, "empty", lambda x: aten.ones_like.default(x), randn(0, 4)),
    case(aten.new_zeros.default, "f32", lambda x: aten.new_zeros.default(x, [2, 2]), randn(3)),
    case(aten.new_zeros.default, "i64", lambda x: aten.new_zeros.default(x, [3]), ints(0, 9, 1)),
    case(aten.new_zeros.default, "dtype", lambda x: aten.new_zeros.default(x, [2], dtype=b8),
         randn(1)),
    case(aten.new_ones.default, "f32", lambda x: aten.new_ones.default(x, [2, 2]), randn(3)),
    case(aten.new_ones.default, "i32", lambda x: aten.new_ones.default(x, [3]), ints(0, 9, 1,
                                                                                     dtype=i32)),
    case(aten.new_ones.default, "empty", lambda x: aten.new_ones.default(x, [0]), randn(3)),
    case(aten.new_full.default, "f32", lambda x: aten.new_full.default(x, [2, 2], 0.5), randn(3)),
    case(aten.new_full.default, "i64", lambda x: aten.new_full.default(x, [3], -7), ints(0, 9, 1)),
    case(aten.new_full.default, "neg-inf", lambda x: aten.new_full.default(x, [2], -INF),
         randn(1)),
]

# -- sym_size.int (dynamic batch: (input, axis, name))
_sz = aten.sym_size.int
CASES += [
    case(_sz, "reshape-by-batch", lambda x: x.reshape(_sz(x, 0) * 2, -1), randn(4, 2, 3),
         dynamic=[(0, 0, "B")]),
    case(_sz, "view-inner", lambda x: x.view(_sz(x, 0), _sz(x, 1) * 3), randn(3, 5, 3),
         dynamic=[(0, 0, "B"), (0, 1, "T")]),
    case(_sz, "factory-sized-by-input", lambda x: x + torch.ones(_sz(x, 1)), randn(2, 6),
         dynamic=[(0, 1, "T")]),
]

# -- _assert_scalar: a runtime check on a symbolic size (a no-op once the shape is bound)
_as = aten._assert_scalar.default
CASES += [
    case(_as, "batch-ge-2", lambda x: (_as(x.shape[0] >= 2, "B >= 2"), x + 1)[1], randn(4, 3),
         dynamic=[(0, 0, "B")]),
    case(_as, "bounded-i64", lambda x: (_as(x.shape[0] <= 65536, "B <= 65536"), x * 2)[1],
         ints(0, 9, 6, 2), dynamic=[(0, 0, "B")]),
    case(_as, "two-dims", lambda x: (_as(x.shape[0] <= x.shape[1] * 4, "B <= 4T"), x)[1],
         randn(3, 2), dynamic=[(0, 0, "B"), (0, 1, "T")]),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
