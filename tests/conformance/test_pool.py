"""Conformance: pooling (max, average, adaptive) and fold / unfold (col2im / im2col).

Max pooling returns values and indices; indices are compared exactly, so the
inputs are tie-free (``distinct``).  Cases cover stride, padding, dilation,
ceil_mode (windows that run past the edge), count_include_pad,
divisor_override, non-square windows, unbatched inputs, channels-last inputs
permuted before the op, non-global adaptive pools (uneven and overlapping
windows), integer inputs where torch pools them, and NaN (it wins a max
window).
"""

import pytest
import torch

from cases import (NAN, aten, bf16, case, case_id, distinct, f16, f64, i64, randn, seed, special)

seed("test_pool")

CASES = []

# -- max_pool2d_with_indices (self, kernel, stride, padding, dilation, ceil_mode)
_mp2 = aten.max_pool2d_with_indices.default
CASES += [
    case(_mp2, "k2-s2", lambda x: _mp2(x, [2, 2], [2, 2]), distinct(2, 3, 6, 6)),
    case(_mp2, "k3-s2-p1", lambda x: _mp2(x, [3, 3], [2, 2], [1, 1]), distinct(1, 2, 7, 7)),
    case(_mp2, "dilation-2", lambda x: _mp2(x, [3, 3], [1, 1], [1, 1], [2, 2]),
         distinct(1, 2, 7, 8)),
    case(_mp2, "ceil-mode", lambda x: _mp2(x, [3, 3], [2, 2], [0, 0], [1, 1], True),
         distinct(1, 2, 8, 8)),
    case(_mp2, "ceil-mode-pad-dilation", lambda x: _mp2(x, [2, 3], [2, 3], [1, 1], [2, 1], True),
         distinct(2, 1, 9, 10)),
    # ceil_mode drops a last window that would start in the right padding
    case(_mp2, "ceil-mode-last-window-dropped", lambda x: _mp2(x, [2, 2], [2, 2], [1, 1], [1, 1],
                                                               True), distinct(1, 2, 5, 5)),
    case(_mp2, "non-square-default-stride", lambda x: _mp2(x, [2, 3]), distinct(1, 3, 6, 9)),
    case(_mp2, "unbatched", lambda x: _mp2(x, [2, 2], [1, 1]), distinct(3, 5, 5)),
    case(_mp2, "channels-last-input", lambda x: _mp2(x.permute(0, 3, 1, 2), [2, 2], [2, 2]),
         distinct(2, 6, 6, 3)),
    case(_mp2, "f16", lambda x: _mp2(x, [2, 2], [2, 2]), distinct(1, 2, 8, 8, dtype=f16, step=1.0)),
    case(_mp2, "i64", lambda x: _mp2(x, [3, 3], [2, 2], [1, 1]), distinct(1, 2, 5, 5, dtype=i64)),
    case(_mp2, "nan-wins", lambda x: _mp2(x, [2, 2], [2, 2]),
         torch.tensor([[[[1.0, NAN, 3.0, 4.0], [5.0, 6.0, -1.0, NAN], [0.0, 1.0, 2.0, 3.0],
                         [4.0, 5.0, 6.0, 7.0]]]])),
    case(_mp2, "f64-values-only", lambda x: _mp2(x, [2, 2], [1, 1], [1, 1])[0],
         distinct(1, 1, 4, 4, dtype=f64)),
]
_mp3 = aten.max_pool3d_with_indices.default
CASES += [
    case(_mp3, "k2-s2", lambda x: _mp3(x, [2, 2, 2], [2, 2, 2]), distinct(1, 2, 4, 4, 4)),
    case(_mp3, "k3-s1-p1-dilation", lambda x: _mp3(x, [3, 3, 3], [1, 1, 1], [1, 1, 1], [1, 2, 1]),
         distinct(1, 1, 4, 5, 4)),
    case(_mp3, "ceil-mode-unbatched", lambda x: _mp3(x, [2, 2, 2], [2, 2, 2], [0, 0, 0],
                                                     [1, 1, 1], True), distinct(2, 3, 5, 5)),
    case(_mp3, "non-cubic", lambda x: _mp3(x, [1, 2, 3], [1, 2, 2]), distinct(1, 2, 3, 4, 7)),
]
CASES += [
    case(aten.max_pool1d.default, "k3-s2-p1", lambda x: aten.max_pool1d.default(x, [3], [2], [1]),
         distinct(2, 3, 9)),
    case(aten.max_pool1d.default, "dilation-ceil", lambda x: aten.max_pool1d.default(
        x, [2], [2], [0], [2], True), distinct(1, 2, 10)),
    case(aten.max_pool1d.default, "unbatched", lambda x: aten.max_pool1d.default(x, [2]),
         distinct(3, 8)),
    case(aten.max_pool2d.default, "k3-s2-p1", lambda x: aten.max_pool2d.default(
        x, [3, 3], [2, 2], [1, 1]), distinct(1, 2, 7, 7)),
    case(aten.max_pool2d.default, "ceil-dilation", lambda x: aten.max_pool2d.default(
        x, [2, 2], [2, 2], [0, 0], [2, 2], True), distinct(1, 2, 9, 9)),
    case(aten.max_pool2d.default, "default-stride", lambda x: aten.max_pool2d.default(x, [2, 2]),
         distinct(2, 1, 6, 6)),
    case(aten.max_pool3d.default, "k2", lambda x: aten.max_pool3d.default(x, [2, 2, 2]),
         distinct(1, 1, 4, 4, 4)),
    case(aten.max_pool3d.default, "p1-s2", lambda x: aten.max_pool3d.default(
        x, [3, 3, 3], [2, 2, 2], [1, 1, 1]), distinct(1, 2, 5, 5, 5)),
    case(aten.max_pool3d.default, "ceil", lambda x: aten.max_pool3d.default(
        x, [2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 1, 1], True), distinct(1, 1, 3, 5, 5)),
]

# -- avg_pool2d / avg_pool3d (self, kernel, stride, padding, ceil_mode, count_include_pad,
#    divisor_override)
_ap2 = aten.avg_pool2d.default
CASES += [
    case(_ap2, "k2-s2", lambda x: _ap2(x, [2, 2], [2, 2]), randn(2, 3, 6, 6)),
    case(_ap2, "pad-count-include", lambda x: _ap2(x, [3, 3], [2, 2], [1, 1]), randn(1, 2, 7, 7)),
    case(_ap2, "pad-count-exclude", lambda x: _ap2(x, [3, 3], [2, 2], [1, 1], False, False),
         randn(1, 2, 7, 7)),
    case(_ap2, "ceil-mode-include-pad", lambda x: _ap2(x, [3, 3], [2, 2], [1, 1], True, True),
         randn(1, 2, 8, 8)),
    case(_ap2, "ceil-mode-exclude-pad", lambda x: _ap2(x, [3, 2], [2, 2], [1, 0], True, False),
         randn(1, 2, 8, 7)),
    case(_ap2, "ceil-mode-last-window-dropped", lambda x: _ap2(x, [2, 2], [2, 2], [1, 1], True,
                                                               True), randn(1, 2, 5, 5)),
    case(_ap2, "ceil-include-pad-window-past-pad", lambda x: _ap2(x, [3, 3], [2, 2], [1, 1], True,
                                                                  True), randn(1, 1, 6, 6)),
    case(_ap2, "divisor-override", lambda x: _ap2(x, [2, 2], [1, 1], [1, 1], False, True, 3),
         randn(1, 2, 5, 5)),
    case(_ap2, "unbatched-non-square", lambda x: _ap2(x, [1, 3], [1, 2]), randn(3, 4, 9)),
    case(_ap2, "channels-last-input", lambda x: _ap2(x.permute(0, 3, 1, 2), [2, 2]),
         randn(2, 6, 6, 3)),
    case(_ap2, "f16", lambda x: _ap2(x, [2, 2]), randn(1, 2, 8, 8, dtype=f16)),
    case(_ap2, "bf16", lambda x: _ap2(x, [3, 3], [1, 1], [1, 1]), randn(1, 2, 5, 5, dtype=bf16)),
    case(_ap2, "i64", lambda x: _ap2(x, [2, 2]), distinct(1, 1, 4, 6, dtype=i64)),
    case(_ap2, "special", lambda x: _ap2(x, [2, 2]), special(1, 1, 4, 4)),
]
_ap3 = aten.avg_pool3d.default
CASES += [
    case(_ap3, "k2-s2", lambda x: _ap3(x, [2, 2, 2], [2, 2, 2]), randn(1, 2, 4, 4, 4)),
    case(_ap3, "pad-exclude-ceil", lambda x: _ap3(x, [3, 3, 3], [2, 2, 2], [1, 1, 1], True, False),
         randn(1, 1, 5, 6, 5)),
    case(_ap3, "divisor-override-unbatched", lambda x: _ap3(x, [2, 2, 2], [1, 1, 1], [0, 0, 0],
                                                            False, True, 5), randn(2, 3, 3, 3)),
    case(_ap3, "pad-include", lambda x: _ap3(x, [3, 1, 3], [1, 1, 2], [1, 0, 1]),
         randn(1, 2, 3, 4, 5)),
]
CASES += [
    case(aten.avg_pool1d.default, "k3-s2-p1", lambda x: aten.avg_pool1d.default(
        x, [3], [2], [1]), randn(2, 3, 9)),
    case(aten.avg_pool1d.default, "ceil-exclude", lambda x: aten.avg_pool1d.default(
        x, [3], [2], [1], True, False), randn(1, 2, 10)),
    case(aten.avg_pool1d.default, "unbatched", lambda x: aten.avg_pool1d.default(x, [2]),
         randn(3, 8)),
]

# -- adaptive pools (non-global: uneven and overlapping windows)
_aa2, _aa3 = aten._adaptive_avg_pool2d.default, aten._adaptive_avg_pool3d.default
CASES += [
    case(_aa2, "uneven", lambda x: _aa2(x, [3, 4]), randn(2, 3, 5, 7)),
    case(_aa2, "global", lambda x: _aa2(x, [1, 1]), randn(2, 3, 5, 7)),
    case(_aa2, "upsample-overlap", lambda x: _aa2(x, [5, 4]), randn(1, 2, 3, 3)),
    case(_aa2, "unbatched", lambda x: _aa2(x, [2, 3]), randn(3, 6, 7)),
    case(_aa2, "channels-last-input", lambda x: _aa2(x.permute(0, 3, 1, 2), [2, 2]),
         randn(1, 5, 5, 3)),
    case(_aa2, "f16", lambda x: _aa2(x, [3, 3]), randn(1, 2, 7, 7, dtype=f16)),
    case(_aa3, "uneven", lambda x: _aa3(x, [2, 3, 2]), randn(1, 2, 5, 7, 3)),
    case(_aa3, "global", lambda x: _aa3(x, [1, 1, 1]), randn(2, 2, 3, 3, 3)),
    case(_aa3, "unbatched-upsample", lambda x: _aa3(x, [3, 2, 4]), randn(2, 2, 2, 3)),
    case(aten.adaptive_avg_pool2d.default, "uneven", lambda x: aten.adaptive_avg_pool2d.default(
        x, [4, 3]), randn(1, 2, 9, 5)),
    case(aten.adaptive_avg_pool2d.default, "global", lambda x: aten.adaptive_avg_pool2d.default(
        x, [1, 1]), randn(2, 3, 4, 4)),
    case(aten.adaptive_avg_pool2d.default, "unbatched", lambda x: aten.adaptive_avg_pool2d.default(
        x, [2, 2]), randn(3, 5, 5)),
    case(aten.adaptive_avg_pool3d.default, "uneven", lambda x: aten.adaptive_avg_pool3d.default(
        x, [2, 3, 2]), randn(1, 2, 5, 7, 3)),
    case(aten.adaptive_avg_pool3d.default, "global", lambda x: aten.adaptive_avg_pool3d.default(
        x, [1, 1, 1]), randn(2, 2, 3, 3, 3)),
    case(aten.adaptive_avg_pool3d.default, "unbatched", lambda x: aten.adaptive_avg_pool3d.default(
        x, [3, 2, 4]), randn(2, 2, 2, 3)),
    case(aten.adaptive_avg_pool1d.default, "uneven", lambda x: aten.adaptive_avg_pool1d.default(
        x, [4]), randn(2, 3, 10)),
    case(aten.adaptive_avg_pool1d.default, "global", lambda x: aten.adaptive_avg_pool1d.default(
        x, [1]), randn(2, 3, 7)),
    case(aten.adaptive_avg_pool1d.default, "overlap", lambda x: aten.adaptive_avg_pool1d.default(
        x, [5]), randn(1, 2, 3)),
]
for _op, _shape, _outs in (
    (aten.adaptive_max_pool1d.default, (2, 3, 10), ([4], [1], [3])),
    (aten.adaptive_max_pool2d.default, (1, 2, 7, 9), ([3, 4], [1, 1], [2, 5])),
    (aten.adaptive_max_pool3d.default, (1, 2, 5, 4, 6), ([2, 3, 4], [1, 1, 1], [3, 2, 2])),
):
    CASES += [
        case(_op, "uneven", lambda x, f=_op, o=_outs[0]: f(x, o), distinct(*_shape)),
        case(_op, "global", lambda x, f=_op, o=_outs[1]: f(x, o), distinct(*_shape)),
        case(_op, "unbatched", lambda x, f=_op, o=_outs[2]: f(x, o), distinct(*_shape[1:])),
    ]

# -- col2im (fold) and im2col (unfold): (output_size, kernel, dilation, padding, stride)
_c2i, _i2c = aten.col2im.default, aten.im2col.default
CASES += [
    case(_c2i, "k2-s1", lambda x: _c2i(x, [4, 5], [2, 2], [1, 1], [0, 0], [1, 1]),
         randn(2, 3 * 4, 12)),
    case(_c2i, "stride-pad-dilation", lambda x: _c2i(x, [6, 6], [3, 2], [2, 1], [1, 2], [2, 3]),
         randn(1, 2 * 6, 6)),
    case(_c2i, "unbatched", lambda x: _c2i(x, [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]),
         randn(4, 4)),
    case(_c2i, "non-overlapping", lambda x: _c2i(x, [4, 6], [2, 3], [1, 1], [0, 0], [2, 3]),
         randn(1, 6, 4)),
    case(_i2c, "k2-s1", lambda x: _i2c(x, [2, 2], [1, 1], [0, 0], [1, 1]), randn(2, 3, 4, 5)),
    case(_i2c, "stride-pad-dilation", lambda x: _i2c(x, [3, 2], [2, 1], [1, 2], [2, 3]),
         randn(1, 2, 6, 6)),
    case(_i2c, "unbatched-noncontig", lambda x: _i2c(x.permute(2, 0, 1), [2, 2], [1, 1], [0, 0],
                                                     [1, 1]), randn(3, 3, 2)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
