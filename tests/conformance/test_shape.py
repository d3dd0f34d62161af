"""Conformance: shape and data-movement ops, padding, casts and copies.

Views (view, permute, expand, squeeze, slice, select, diagonal, as_strided,
unfold) are checked by value: rlx has no strides, so every case's output is the
view's logical contents.  Cases cover negative dims and indices, slice steps
and out-of-range bounds, zero-size dims, 0-dim tensors, inputs made
non-contiguous by a permute or a strided slice before the op, integer and bool
data, and type promotion where the op promotes (cat, copy).
"""

import pytest
import torch

from cases import (INF, NAN, aten, b8, bf16, bools, case, case_id, f16, f32, f64, i32, i64, ints,
                   randn, seed, special, u8, uniform)

seed("test_shape")

CASES = []
_contig = torch.contiguous_format

# -- view / reshape / _unsafe_view / flatten / unflatten
CASES += [
    case(aten.view.default, "infer-dim", lambda x: aten.view.default(x, [-1, 4]), randn(3, 2, 4)),
    case(aten.view.default, "after-permute-copy", lambda x: aten.view.default(
        aten.clone.default(x.permute(1, 0), memory_format=_contig), [10]), randn(5, 2)),
    case(aten.view.default, "0d-to-1", lambda x: aten.view.default(x, [1, 1]), randn()),
    case(aten.view.default, "empty", lambda x: aten.view.default(x, [3, 0, 2]), randn(0, 6)),
    case(aten.view.default, "i64", lambda x: aten.view.default(x, [2, 3, 2]), ints(-9, 9, 12)),
    case(aten.view.default, "bool", lambda x: aten.view.default(x, [-1]), bools(3, 4)),
    case(aten._unsafe_view.default, "f32", lambda x: aten._unsafe_view.default(x, [4, 3]),
         randn(12)),
    case(aten._unsafe_view.default, "i32", lambda x: aten._unsafe_view.default(x, [2, -1]),
         ints(0, 9, 3, 2, dtype=i32)),
    case(aten._unsafe_view.default, "empty", lambda x: aten._unsafe_view.default(x, [0]),
         randn(2, 0)),
    case(aten.reshape.default, "noncontig", lambda x: aten.reshape.default(x.t(), [-1]),
         randn(3, 4)),
    case(aten.reshape.default, "strided", lambda x: aten.reshape.default(x[:, ::2], [2, -1]),
         randn(4, 6)),
    case(aten.reshape.default, "bf16-empty", lambda x: aten.reshape.default(x, [0, 5]),
         randn(5, 0, dtype=bf16)),
    case(aten.flatten.using_ints, "middle", lambda x: aten.flatten.using_ints(x, 1, 2),
         randn(2, 3, 4, 5)),
    case(aten.flatten.using_ints, "neg-noncontig", lambda x: aten.flatten.using_ints(
        x.permute(2, 0, 1), -2, -1), randn(2, 3, 4)),
    case(aten.flatten.using_ints, "0d", lambda x: aten.flatten.using_ints(x), randn()),
    case(aten.unflatten.int, "infer", lambda x: aten.unflatten.int(x, 1, [2, -1]), randn(3, 8)),
    case(aten.unflatten.int, "neg-dim", lambda x: aten.unflatten.int(x, -1, [3, 1, 2]),
         ints(0, 9, 2, 6)),
    case(aten.unflatten.int, "empty", lambda x: aten.unflatten.int(x, 0, [0, 4]), randn(0, 2)),
]

# -- permute / transpose / t
_pm = aten.permute.default
CASES += [
    case(_pm, "3d", lambda x: _pm(x, [2, 0, 1]), randn(2, 3, 4)),
    case(_pm, "4d-neg-dims", lambda x: _pm(x, [-1, 0, -2, 1]), randn(2, 3, 4, 5)),
    case(_pm, "i64-twice", lambda x: _pm(_pm(x, [1, 0, 2]), [2, 1, 0]), ints(-9, 9, 2, 3, 4)),
    case(_pm, "bool", lambda x: _pm(x, [1, 0]), bools(3, 5)),
    case(_pm, "0d", lambda x: _pm(x, []), randn()),
    case(_pm, "empty", lambda x: _pm(x, [1, 0]), randn(0, 3)),
    case(_pm, "f16-strided", lambda x: _pm(x[::2], [1, 0]), randn(6, 3, dtype=f16)),
    case(aten.transpose.int, "neg", lambda x: aten.transpose.int(x, -1, 0), randn(2, 3, 4)),
    case(aten.transpose.int, "same-dim", lambda x: aten.transpose.int(x, 1, 1), randn(2, 3)),
    case(aten.transpose.int, "i32", lambda x: aten.transpose.int(x, 0, 1), ints(0, 9, 2, 3,
                                                                                 dtype=i32)),
    case(aten.t.default, "2d", lambda x: aten.t.default(x), randn(2, 3)),
    case(aten.t.default, "1d", lambda x: aten.t.default(x), randn(4)),
    case(aten.t.default, "bool", lambda x: aten.t.default(x), bools(3, 1)),
]

# -- expand / expand_as / broadcast_to
_ex = aten.expand.default
CASES += [
    case(_ex, "size-1-dims", lambda x: _ex(x, [3, 4]), randn(3, 1)),
    case(_ex, "new-leading-and-minus-1", lambda x: _ex(x, [2, -1, 5]), randn(3, 1)),
    case(_ex, "to-zero", lambda x: _ex(x, [0, 3]), randn(1, 3)),
    case(_ex, "noncontig", lambda x: _ex(x.t(), [2, 4, 3]), randn(3, 4)),
    case(_ex, "bool-0d", lambda x: _ex(x, [2, 2]), bools()),
    case(_ex, "i64", lambda x: _ex(x, [3, 2, 2]), ints(-9, 9, 2, 1)),
    case(aten.expand_as.default, "f32", lambda x, y: aten.expand_as.default(x, y), randn(4, 1),
         randn(2, 4, 3)),
    case(aten.broadcast_to.default, "f32", lambda x: aten.broadcast_to.default(x, [2, 3]),
         randn(3)),
    case(aten.broadcast_to.default, "i64-minus-1", lambda x: aten.broadcast_to.default(
        x, [4, -1, 3]), ints(-9, 9, 2, 1)),
    case(aten.broadcast_to.default, "bool-noncontig", lambda x: aten.broadcast_to.default(
        x.t(), [2, 3, 2]), bools(2, 3)),
    case(aten.expand_as.default, "i64-0d", lambda x, y: aten.expand_as.default(x, y),
         ints(-9, 9), randn(2, 3)),
    case(aten.expand_as.default, "bool-empty", lambda x, y: aten.expand_as.default(x, y),
         bools(1, 3), randn(0, 3)),
]

# -- squeeze / unsqueeze
CASES += [
    case(aten.squeeze.dim, "neg", lambda x: aten.squeeze.dim(x, -2), randn(3, 1, 4)),
    case(aten.squeeze.dim, "not-size-1-noop", lambda x: aten.squeeze.dim(x, 0), randn(3, 4)),
    case(aten.squeeze.dim, "0d", lambda x: aten.squeeze.dim(x, 0), randn()),
    case(aten.squeeze.dim, "i64-empty", lambda x: aten.squeeze.dim(x, 1), ints(0, 9, 0, 1)),
    case(aten.squeeze.dims, "several", lambda x: aten.squeeze.dims(x, [0, -1]), randn(1, 3, 1)),
    case(aten.squeeze.dims, "mixed-with-non-1", lambda x: aten.squeeze.dims(x, [0, 1, 3]),
         randn(1, 3, 4, 1)),
    case(aten.squeeze.dims, "bool-noncontig", lambda x: aten.squeeze.dims(x.t(), [1]),
         bools(1, 5)),
    case(aten.squeeze.default, "all", lambda x: aten.squeeze.default(x), randn(1, 3, 1, 2)),
    case(aten.squeeze.default, "to-0d-i64", lambda x: aten.squeeze.default(x), ints(0, 9, 1, 1)),
    case(aten.squeeze.default, "none-size-1-noncontig", lambda x: aten.squeeze.default(x.t()),
         bools(2, 3)),
    case(aten.unsqueeze.default, "neg-last", lambda x: aten.unsqueeze.default(x, -1), randn(2, 3)),
    case(aten.unsqueeze.default, "middle", lambda x: aten.unsqueeze.default(x, 1),
         ints(0, 9, 2, 3)),
    case(aten.unsqueeze.default, "0d", lambda x: aten.unsqueeze.default(x, 0), randn()),
    case(aten.unsqueeze.default, "empty-bool", lambda x: aten.unsqueeze.default(x, 0), bools(0, 2)),
]

# -- cat / stack (cat promotes; a 1-d empty tensor is skipped by cat)
_cat = aten.cat.default
CASES += [
    case(_cat, "dim-0", lambda a, b: _cat([a, b]), randn(2, 3), randn(4, 3)),
    case(_cat, "dim-neg-three", lambda a, b, c: _cat([a, b, c], -1), randn(2, 1), randn(2, 3),
         randn(2, 2)),
    case(_cat, "noncontig", lambda a, b: _cat([a.t(), b[:, ::2]], 1), randn(3, 2), randn(2, 4)),
    case(_cat, "promote-f32-f64", lambda a, b: _cat([a, b], 1), randn(2, 2), randn(2, 3,
                                                                                    dtype=f64)),
    case(_cat, "promote-i64-f16", lambda a, b: _cat([a, b]), ints(-9, 9, 2, 2), randn(1, 2,
                                                                                       dtype=f16)),
    case(_cat, "i32-bool", lambda a, b: _cat([a, b]), ints(-9, 9, 2, dtype=i32), bools(3)),
    case(_cat, "legacy-empty-1d-skipped", lambda a, b: _cat([a, b], 1), randn(0), randn(2, 3)),
    case(_cat, "zero-size-part", lambda a, b: _cat([a, b], 0), randn(0, 3), randn(2, 3)),
    case(_cat, "single", lambda a: _cat([a], 0), randn(2, 3)),
    case(aten.stack.default, "dim-0", lambda a, b: aten.stack.default([a, b]), randn(2, 3),
         randn(2, 3)),
    case(aten.stack.default, "dim-neg", lambda a, b: aten.stack.default([a, b], -1),
         ints(0, 9, 2, 3), ints(0, 9, 2, 3)),
    case(aten.stack.default, "noncontig-empty", lambda a, b: aten.stack.default([a.t(), b], 1),
         randn(0, 2), randn(2, 0)),
]

# -- split / chunk / unbind (all outputs compared)
_sws = aten.split_with_sizes.default
CASES += [
    case(_sws, "dim-0", lambda x: _sws(x, [1, 3, 2]), randn(6, 2)),
    case(_sws, "dim-neg-zero-part", lambda x: _sws(x, [2, 0, 3], -1), randn(2, 5)),
    case(_sws, "noncontig-i64", lambda x: _sws(x.t(), [2, 2], 1), ints(-9, 9, 4, 3)),
    case(_sws, "bool", lambda x: _sws(x, [1, 1], 0), bools(2, 3)),
    case(aten.split.Tensor, "uneven", lambda x: aten.split.Tensor(x, 2, 1), randn(3, 5)),
    case(aten.split.Tensor, "larger-than-dim", lambda x: aten.split.Tensor(x, 9), randn(3, 5)),
    case(aten.split.Tensor, "neg-dim", lambda x: aten.split.Tensor(x, 1, -1), randn(3, 2)),
    case(aten.chunk.default, "uneven", lambda x: aten.chunk.default(x, 3, 1), randn(2, 7)),
    case(aten.chunk.default, "neg-dim", lambda x: aten.chunk.default(x, 2, -2), randn(4, 3)),
    case(aten.chunk.default, "i64", lambda x: aten.chunk.default(x, 2), ints(0, 9, 4)),
    case(aten.unbind.int, "dim-0", lambda x: aten.unbind.int(x), randn(3, 2)),
    case(aten.unbind.int, "neg-dim", lambda x: aten.unbind.int(x, -1), randn(3, 2)),
    case(aten.unbind.int, "bool", lambda x: aten.unbind.int(x, 1), bools(2, 3)),
    case(aten.tensor_split.sections, "uneven", lambda x: aten.tensor_split.sections(x, 3, 1),
         randn(2, 7)),
    case(aten.tensor_split.sections, "more-sections-than-size", lambda x: aten.tensor_split.
         sections(x, 4, 0), ints(0, 9, 3, 2)),
    case(aten.tensor_split.sections, "neg-dim", lambda x: aten.tensor_split.sections(x, 2, -1),
         randn(2, 5)),
    case(aten.tensor_split.indices, "indices", lambda x: aten.tensor_split.indices(x, [1, 4], 0),
         randn(6, 2)),
    case(aten.tensor_split.indices, "past-end-and-repeat", lambda x: aten.tensor_split.indices(
        x, [2, 2, 9], 1), randn(2, 5)),
    case(aten.tensor_split.indices, "bool-neg-dim", lambda x: aten.tensor_split.indices(
        x, [1], -2), bools(3, 2)),
]

# -- slice / narrow / select
_sl = aten.slice.Tensor
CASES += [
    case(_sl, "step-2", lambda x: _sl(x, 1, 0, 9, 2), randn(3, 9)),
    case(_sl, "step-3-neg-start", lambda x: _sl(x, 0, -7, None, 3), randn(10, 2)),
    case(_sl, "neg-bounds", lambda x: _sl(x, -1, -4, -1), randn(2, 6)),
    case(_sl, "end-past-size", lambda x: _sl(x, 0, 2, 2**62), randn(5, 3)),
    case(_sl, "start-past-end-empty", lambda x: _sl(x, 1, 4, 2), randn(3, 5)),
    case(_sl, "start-before-begin", lambda x: _sl(x, 0, -100, 2), ints(-9, 9, 4)),
    case(_sl, "noncontig-i64", lambda x: _sl(x.t(), 0, 1, 3), ints(-9, 9, 3, 4)),
    case(_sl, "bool-step", lambda x: _sl(x, 0, 1, None, 2), bools(7, 2)),
    case(_sl, "empty-input", lambda x: _sl(x, 1, 0, 2), randn(0, 3)),
    case(_sl, "f16-slice-of-slice", lambda x: _sl(_sl(x, 1, 1, None, 2), 1, 1, None, 2),
         randn(2, 11, dtype=f16)),
    case(aten.narrow.default, "middle", lambda x: aten.narrow.default(x, 1, 1, 3), randn(2, 5)),
    case(aten.narrow.default, "neg-dim-neg-start", lambda x: aten.narrow.default(x, -1, -3, 2),
         ints(0, 9, 2, 5)),
    case(aten.narrow.default, "empty-length", lambda x: aten.narrow.default(x, 0, 1, 0),
         randn(3, 2)),
]
_se = aten.select.int
CASES += [
    case(_se, "neg-index", lambda x: _se(x, 0, -1), randn(4, 3)),
    case(_se, "neg-dim", lambda x: _se(x, -1, 2), randn(2, 3, 4)),
    case(_se, "1d-to-0d", lambda x: _se(x, 0, 3), randn(5)),
    case(_se, "noncontig-i64", lambda x: _se(x.permute(1, 0, 2), 1, -2), ints(-9, 9, 3, 4, 2)),
    case(_se, "bool", lambda x: _se(x, 1, 0), bools(3, 2)),
    case(_se, "empty-other-dim", lambda x: _se(x, 1, 1), randn(0, 3)),
]

# -- flip / roll / repeat / tile
_fl = aten.flip.default
CASES += [
    case(_fl, "one-dim", lambda x: _fl(x, [0]), randn(4, 3)),
    case(_fl, "neg-dims", lambda x: _fl(x, [-1, -3]), randn(2, 3, 4)),
    case(_fl, "no-dims", lambda x: _fl(x, []), randn(2, 3)),
    case(_fl, "noncontig-i64", lambda x: _fl(x.t(), [1]), ints(-9, 9, 3, 5)),
    case(_fl, "bool", lambda x: _fl(x, [0, 1]), bools(3, 2)),
    case(_fl, "empty", lambda x: _fl(x, [0]), randn(0, 2)),
]
_ro = aten.roll.default
CASES += [
    case(_ro, "one-dim", lambda x: _ro(x, [1], [1]), randn(3, 5)),
    case(_ro, "two-dims-neg", lambda x: _ro(x, [-2, 7], [0, -1]), randn(4, 5)),
    case(_ro, "flat", lambda x: _ro(x, [3]), randn(3, 4)),
    case(_ro, "noncontig-i64", lambda x: _ro(x.t(), [2], [0]), ints(-9, 9, 3, 4)),
    case(_ro, "shift-larger-than-size", lambda x: _ro(x, [13], [1]), bools(2, 5)),
    case(_ro, "empty", lambda x: _ro(x, [1], [1]), randn(0, 3)),
]
_rp = aten.repeat.default
CASES += [
    case(_rp, "2d", lambda x: _rp(x, [2, 3]), randn(2, 3)),
    case(_rp, "new-leading-dims", lambda x: _rp(x, [2, 1, 2]), randn(3)),
    case(_rp, "zero-repeat", lambda x: _rp(x, [0, 2]), randn(2, 3)),
    case(_rp, "noncontig-i64", lambda x: _rp(x.t(), [1, 2]), ints(-9, 9, 2, 3)),
    case(_rp, "bool", lambda x: _rp(x, [3, 1]), bools(1, 4)),
    case(_rp, "0d", lambda x: _rp(x, [3]), randn()),
    case(aten.tile.default, "fewer-dims", lambda x: aten.tile.default(x, [2]), randn(2, 3)),
    case(aten.tile.default, "more-dims", lambda x: aten.tile.default(x, [2, 1, 2]), randn(2, 3)),
    case(aten.tile.default, "i32", lambda x: aten.tile.default(x, [1, 3]), ints(0, 9, 2, 2,
                                                                              dtype=i32)),
]

# -- tril / triu (offsets, batches, non-square)
for _op in (aten.tril.default, aten.triu.default):
    CASES += [
        case(_op, "square", lambda x, f=_op: f(x), randn(4, 4)),
        case(_op, "offset-pos-wide", lambda x, f=_op: f(x, 2), randn(3, 6)),
        case(_op, "offset-neg-tall-batched", lambda x, f=_op: f(x, -1), randn(2, 5, 3)),
        case(_op, "noncontig-i64", lambda x, f=_op: f(x.transpose(-1, -2), 1), ints(-9, 9, 2, 4,
                                                                                     3)),
        case(_op, "bool", lambda x, f=_op: f(x), bools(3, 3)),
        case(_op, "special", lambda x, f=_op: f(x), special(4, 4)),
        case(_op, "empty", lambda x, f=_op: f(x), randn(0, 3, 3)),
    ]

# -- unfold (sliding windows as a new last dim)
_uf = aten.unfold.default
CASES += [
    case(_uf, "overlap", lambda x: _uf(x, 1, 3, 1), randn(2, 6)),
    case(_uf, "step-gt-size", lambda x: _uf(x, 0, 2, 3), randn(8, 2)),
    case(_uf, "neg-dim-noncontig", lambda x: _uf(x.t(), -1, 2, 2), randn(5, 3)),
    case(_uf, "i64-whole", lambda x: _uf(x, 0, 4, 1), ints(-9, 9, 4)),
    case(_uf, "0d", lambda x: _uf(x, 0, 1, 1), randn()),
]

# -- diagonal
_dg = aten.diagonal.default
CASES += [
    case(_dg, "main", lambda x: _dg(x), randn(4, 4)),
    case(_dg, "offset-pos-wide", lambda x: _dg(x, 2), randn(3, 6)),
    case(_dg, "offset-neg-dims-1-2", lambda x: _dg(x, -1, 1, 2), randn(2, 4, 3)),
    case(_dg, "neg-dims-reversed", lambda x: _dg(x, 0, -1, 0), ints(-9, 9, 3, 2, 3)),
    case(_dg, "offset-out-of-range", lambda x: _dg(x, 5), randn(3, 3)),
]

# -- as_strided on a contiguous value (its storage is its logical layout)
_as = aten.as_strided.default
CASES += [
    case(_as, "window", lambda x: _as(x, [3, 3], [5, 1], 2), randn(4, 5)),
    case(_as, "overlapping", lambda x: _as(x, [3, 3], [1, 1]), randn(4, 5)),
    case(_as, "zero-stride", lambda x: _as(x, [2, 4], [0, 1], 1), randn(6)),
    case(_as, "of-computed-i64", lambda x: _as(x * 2, [2, 2], [1, 3]), ints(-9, 9, 3, 3)),
]

# -- constant / reflection / replication padding (negative pads crop)
_cp = aten.constant_pad_nd.default
CASES += [
    case(_cp, "last-dim", lambda x: _cp(x, [1, 2]), randn(2, 3)),
    case(_cp, "two-dims-value", lambda x: _cp(x, [1, 0, 2, 1], 1.5), randn(2, 3, 4)),
    case(_cp, "negative-crop", lambda x: _cp(x, [-1, -2]), randn(2, 5)),
    case(_cp, "mixed-signs", lambda x: _cp(x, [2, -1, -1, 3]), randn(3, 4)),
    case(_cp, "neg-inf-value", lambda x: _cp(x, [1, 1, 1, 1], -INF), randn(1, 2, 3)),
    case(_cp, "i64-value", lambda x: _cp(x, [0, 2], 7), ints(-9, 9, 2, 2)),
    case(_cp, "bool", lambda x: _cp(x, [1, 1], True), bools(2, 2)),
    case(_cp, "noncontig-f16", lambda x: _cp(x.t(), [1, 1]), randn(3, 2, dtype=f16)),
    case(_cp, "three-dims", lambda x: _cp(x, [1, 1, 0, 1, 2, 0]), randn(1, 2, 2, 2)),
    case(_cp, "empty-grows", lambda x: _cp(x, [0, 0, 1, 1]), randn(0, 3)),
]
for _op, _dims, _pads in (
    (aten.reflection_pad1d.default, 1, ([2, 1], [0, 3], [-1, 2])),
    (aten.reflection_pad2d.default, 2, ([1, 2, 2, 1], [0, 0, 3, 3], [1, -1, 0, 2])),
    (aten.reflection_pad3d.default, 3, ([1, 1, 1, 1, 1, 1], [2, 0, 0, 1, 1, 2],
                                        [1, 1, 0, 0, 1, 1])),
    (aten.replication_pad1d.default, 1, ([2, 1], [0, 5], [-1, 2])),
    (aten.replication_pad2d.default, 2, ([1, 2, 2, 1], [0, 0, 4, 4], [1, -1, 0, 2])),
    (aten.replication_pad3d.default, 3, ([1, 1, 1, 1, 1, 1], [3, 0, 0, 2, 1, 2],
                                         [1, 1, 0, 0, 1, 1])),
):
    _shape = (2, 3) + (4,) * _dims
    CASES += [
        case(_op, "batched", lambda x, f=_op, p=_pads[0]: f(x, p), randn(*_shape)),
        case(_op, "unbatched", lambda x, f=_op, p=_pads[1]: f(x, p), randn(*_shape[1:])),
        case(_op, "noncontig-neg-pad", lambda x, f=_op, p=_pads[2], d=_dims: f(
            x.transpose(-1, -2) if d > 1 else x[..., ::2], p), randn(*_shape[:-1], _shape[-1] * 2
                                                                      if _dims == 1 else 4)),
        case(_op, "f64-special", lambda x, f=_op, p=_pads[0]: f(x, p), special(*_shape,
                                                                                dtype=f64)),
        case(_op, "bf16", lambda x, f=_op, p=_pads[0]: f(x, p), randn(*_shape, dtype=bf16)),
    ]

# -- casts (_to_copy, and the "to" spellings that stay in "aten" exports)
_tc = aten._to_copy.default
CASES += [
    case(_tc, "f32-to-i64-truncates", lambda x: _tc(x, dtype=i64), uniform(-50, 50, 4, 5)),
    case(_tc, "f32-to-i32-noncontig", lambda x: _tc(x.t(), dtype=i32), uniform(-50, 50, 4, 5)),
    case(_tc, "f32-to-bool", lambda x: _tc(x, dtype=b8), torch.tensor([0.0, -0.0, 0.5, -2.0, INF,
                                                                       NAN])),
    case(_tc, "bool-to-f32", lambda x: _tc(x, dtype=f32), bools(3, 4)),
    case(_tc, "i64-to-f16", lambda x: _tc(x, dtype=f16), ints(-3000, 3000, 4, 5)),
    case(_tc, "f32-to-f16-rounding", lambda x: _tc(x, dtype=f16), torch.tensor(
        [2.5, -2.5, 1e6, 65519.0, 70000.0, 1.0009765625, 1.00146484375, 6e-8, -INF, NAN])),
    case(_tc, "f32-to-bf16-rounding", lambda x: _tc(x, dtype=bf16), torch.tensor(
        [1.00390625, 1.01171875, 3e38, -1e-40, INF, NAN, 1.0 + 2**-8 + 2**-20])),
    case(_tc, "f64-to-f32", lambda x: _tc(x, dtype=f32), special(3, 4, dtype=f64) * 1e20),
    case(_tc, "f16-to-f32", lambda x: _tc(x, dtype=f32), special(3, 4, dtype=f16)),
    case(_tc, "bf16-to-f64", lambda x: _tc(x, dtype=f64), randn(3, 4, dtype=bf16)),
    case(_tc, "i64-to-i32-wraps", lambda x: _tc(x, dtype=i32), torch.tensor([2**31, -2**31 - 1,
                                                                             2**40 + 5, -7])),
    case(_tc, "i32-to-i64", lambda x: _tc(x, dtype=i64), ints(-9, 9, 5, dtype=i32)),
    case(_tc, "u8-to-f32", lambda x: _tc(x, dtype=f32), ints(0, 256, 8).to(u8)),
    case(_tc, "i64-to-u8-wraps", lambda x: _tc(x, dtype=u8), torch.tensor([-1, 256, 300, 5])),
    case(_tc, "i64-to-bool", lambda x: _tc(x, dtype=b8), ints(-2, 3, 9)),
    case(_tc, "no-dtype-copy", lambda x: _tc(x), randn(2, 3)),
    case(_tc, "empty", lambda x: _tc(x, dtype=i64), randn(0, 3)),
    case(aten.to.dtype, "f32-to-i64", lambda x: aten.to.dtype(x, i64), uniform(-9, 9, 5)),
    case(aten.to.dtype, "i64-to-f32", lambda x: aten.to.dtype(x, f32), ints(-9, 9, 5)),
    case(aten.to.dtype, "bool-to-i32", lambda x: aten.to.dtype(x, i32), bools(5)),
    case(aten.type_as.default, "i64-as-f16", lambda x, y: aten.type_as.default(x, y),
         ints(-9, 9, 4), randn(1, dtype=f16)),
    case(aten.type_as.default, "f32-as-i32", lambda x, y: aten.type_as.default(x, y),
         uniform(-9, 9, 4), ints(0, 9, 2, dtype=i32)),
    case(aten.type_as.default, "bool-as-f32-noncontig", lambda x, y: aten.type_as.default(x.t(), y),
         bools(2, 3), randn(1)),
]

# -- alias / clone / copy / contiguous / detach
CASES += [
    case(aten.alias.default, "f32", lambda x: aten.alias.default(x) * 2, randn(2, 3),
         expect=[aten.alias.default]),
    case(aten.alias.default, "i64-noncontig", lambda x: aten.alias.default(x.t()),
         ints(0, 9, 2, 3)),
    case(aten.alias.default, "bool", lambda x: aten.alias.default(x), bools(3)),
    case(aten.clone.default, "noncontig", lambda x: aten.clone.default(x.t()), randn(2, 3)),
    case(aten.clone.default, "contiguous-format-strided", lambda x: aten.clone.default(
        x[:, ::2], memory_format=_contig), ints(0, 9, 2, 6)),
    case(aten.clone.default, "special-f16", lambda x: aten.clone.default(x), special(3, 3,
                                                                                    dtype=f16)),
    case(aten.copy.default, "broadcast-src", lambda x, s: aten.copy.default(x, s), randn(3, 4),
         randn(4)),
    case(aten.copy.default, "f64-src-into-f32", lambda x, s: aten.copy.default(x, s), randn(3, 4),
         randn(3, 4, dtype=f64)),
    case(aten.copy.default, "f32-src-into-i64", lambda x, s: aten.copy.default(x, s),
         ints(0, 9, 3, 4), uniform(-9, 9, 3, 4)),
    case(aten.copy.default, "noncontig-self", lambda x, s: aten.copy.default(x.t(), s), randn(4, 3),
         randn(3, 4)),
    case(aten.copy.default, "bool-src-into-f16", lambda x, s: aten.copy.default(x, s),
         randn(2, 3, dtype=f16), bools(2, 3)),
    case(aten.contiguous.default, "noncontig", lambda x: aten.contiguous.default(x.t()),
         randn(2, 3)),
    case(aten.contiguous.default, "strided-i64", lambda x: aten.contiguous.default(x[::2]),
         ints(0, 9, 6, 2)),
    case(aten.contiguous.default, "bool", lambda x: aten.contiguous.default(x), bools(3)),
    case(aten.detach.default, "f32", lambda x: aten.detach.default(x) + 1, randn(2, 3)),
    case(aten.detach.default, "i64-noncontig", lambda x: aten.detach.default(x.t()),
         ints(0, 9, 2, 3)),
    case(aten.detach.default, "special-f16", lambda x: aten.detach.default(x),
         special(2, 3, dtype=f16)),
    case(aten.lift_fresh_copy.default, "i64", lambda x: aten.lift_fresh_copy.default(x),
         ints(0, 9, 3)),
    case(aten.lift_fresh_copy.default, "f32", lambda x: aten.lift_fresh_copy.default(x) * 3,
         randn(2, 2)),
    case(aten.lift_fresh_copy.default, "bool", lambda x: aten.lift_fresh_copy.default(x),
         bools(4)),
]


# -- *_copy variants (functional copies of views) and other spellings that stay whole
_x3 = (2, 3, 4)
for _op, _fn, _shape in (
    (aten.alias_copy.default, lambda f, x: f(x), _x3),
    (aten.detach_copy.default, lambda f, x: f(x), _x3),
    (aten.view_copy.default, lambda f, x: f(x, [4, -1]), _x3),
    (aten.permute_copy.default, lambda f, x: f(x, [2, 0, 1]), _x3),
    (aten.transpose_copy.int, lambda f, x: f(x, -1, 0), _x3),
    (aten.t_copy.default, lambda f, x: f(x), (3, 4)),
    (aten.expand_copy.default, lambda f, x: f(x, [2, 2, 3, 4]), _x3),
    (aten.squeeze_copy.dim, lambda f, x: f(x, 1), (2, 1, 4)),
    (aten.unsqueeze_copy.default, lambda f, x: f(x, -2), _x3),
    (aten.select_copy.int, lambda f, x: f(x, 1, -1), _x3),
    (aten.slice_copy.Tensor, lambda f, x: f(x, 2, -3, None, 2), _x3),
    (aten.diagonal_copy.default, lambda f, x: f(x, 1, 1, 2), _x3),
    (aten.unfold_copy.default, lambda f, x: f(x, 2, 2, 1), _x3),
    (aten.as_strided_copy.default, lambda f, x: f(x, [3, 3], [4, 1], 1), _x3),
    (aten.split_copy.Tensor, lambda f, x: f(x, 3, -1), _x3),
    (aten.split_with_sizes_copy.default, lambda f, x: f(x, [1, 2], 1), _x3),
    (aten.unbind_copy.int, lambda f, x: f(x, 1), _x3),
):
    CASES += [
        case(_op, "f32", lambda x, f=_op, g=_fn: g(f, x), randn(*_shape)),
        case(_op, "i64", lambda x, f=_op, g=_fn: g(f, x), ints(-9, 9, *_shape)),
        case(_op, "bool", lambda x, f=_op, g=_fn: g(f, x), bools(*_shape)),
    ]
CASES += [
    case(aten.view_as.default, "f32", lambda x, y: aten.view_as.default(x, y), randn(6),
         randn(2, 3)),
    case(aten.view_as.default, "i64", lambda x, y: aten.view_as.default(x, y), ints(0, 9, 2, 2),
         randn(4)),
    case(aten.view_as.default, "empty", lambda x, y: aten.view_as.default(x, y), randn(0),
         randn(0, 3)),
    case(aten._reshape_alias.default, "f32", lambda x: aten._reshape_alias.default(x, [3, 2],
                                                                                  [2, 1]),
         randn(6)),
    case(aten._reshape_alias.default, "i64", lambda x: aten._reshape_alias.default(x, [2, 2, 2],
                                                                                  [4, 2, 1]),
         ints(0, 9, 8)),
    case(aten._reshape_alias.default, "bool", lambda x: aten._reshape_alias.default(x, [4],
                                                                                   [1]),
         bools(2, 2)),
    case(aten.numpy_T.default, "3d", lambda x: aten.numpy_T.default(x), randn(2, 3, 4)),
    case(aten.numpy_T.default, "2d-i64", lambda x: aten.numpy_T.default(x), ints(0, 9, 2, 3)),
    case(aten.numpy_T.default, "1d", lambda x: aten.numpy_T.default(x), randn(3)),
    case(aten.concat.default, "dim-neg", lambda a, b: aten.concat.default([a, b], -1), randn(2, 2),
         randn(2, 3)),
    case(aten.concat.default, "promote", lambda a, b: aten.concat.default([a, b]), ints(0, 9, 1, 2),
         randn(2, 2)),
    case(aten.concat.default, "noncontig", lambda a, b: aten.concat.default([a.t(), b]),
         randn(2, 3), randn(1, 2)),
]
_pad = aten.pad.default
CASES += [
    case(_pad, "constant-value", lambda x: _pad(x, [1, 2, 0, 1], "constant", 0.5), randn(2, 3, 4)),
    case(_pad, "constant-negative", lambda x: _pad(x, [-1, 2]), randn(2, 5)),
    case(_pad, "reflect", lambda x: _pad(x, [2, 1, 1, 2], "reflect"), randn(1, 2, 4, 4)),
    case(_pad, "replicate", lambda x: _pad(x, [3, 0], "replicate"), randn(1, 2, 4)),
    case(_pad, "circular", lambda x: _pad(x, [1, 2, 2, 1], "circular"), randn(1, 2, 4, 5)),
    case(_pad, "circular-1d-noncontig", lambda x: _pad(x.transpose(1, 2), [2, 2], "circular"),
         randn(1, 5, 3)),
    case(_pad, "constant-i64", lambda x: _pad(x, [1, 1], "constant", 3.0), ints(0, 9, 2, 2)),
]

# -- export-time assertions: no-ops for rlx, the model's value passes through
CASES += [
    case(aten._assert_async.msg, "all-positive", lambda x: (
        aten._assert_async.msg(aten.all.default(x > -100), "x > -100"), x * 2)[1], randn(3)),
    case(aten._assert_async.msg, "i64", lambda x: (
        aten._assert_async.msg(aten.any.default(x >= 0), "some >= 0"), x + 1)[1],
         ints(0, 9, 4)),
    case(aten._assert_async.msg, "bool", lambda x: (
        aten._assert_async.msg(aten.any.default(x | True), "any"), x)[1], bools(3)),
    case(aten._assert_async.default, "bool", lambda x: (
        aten._assert_async.default(aten.any.default(x | True)), x)[1], bools(3)),
    case(aten._assert_async.default, "f32", lambda x: (
        aten._assert_async.default(aten.all.default(x == x)), x + 1)[1], randn(3)),
    case(aten._assert_async.default, "i64", lambda x: (
        aten._assert_async.default(aten.all.default(x >= 0)), x)[1], ints(0, 9, 3)),
    case(aten._assert_tensor_metadata.default, "dtype", lambda x: (
        aten._assert_tensor_metadata.default(x, dtype=torch.float32), x + 1)[1], randn(2, 3)),
    case(aten._assert_tensor_metadata.default, "size", lambda x: (
        aten._assert_tensor_metadata.default(x, [3]), x * x)[1], ints(0, 9, 3)),
    case(aten._assert_tensor_metadata.default, "none", lambda x: (
        aten._assert_tensor_metadata.default(x), x)[1], bools(2)),
]

@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
