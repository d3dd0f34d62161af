"""Conformance: matrix products (grouped ones too), convolution, normalization, attention, dropout, distances.

Weights are passed as inputs (the conformance export has no parameters), so
each case is one op on example tensors.  Multi-output ops (native_layer_norm,
native_group_norm, the batch-norm family, sdpa variants) return every output
torch defines when the output is meaningful at inference (mean / rstd of layer
and group norm); outputs that are empty or training-only are left out.
Convolution covers stride, padding, dilation, groups (depthwise), 1d/2d/3d,
transposed with output_padding, an empty batch and a channels-last input
(permuted before the op).
"""

import pytest
import torch

from cases import (INF, aten, bf16, bools, case, case_id, f16, f64, i32, i64, ints, randn, seed,
                   special, uniform)

seed("test_nn")

CASES = []

# -- mm / bmm / addmm / baddbmm / matmul / linear
CASES += [
    case(aten.mm.default, "f32", lambda a, b: aten.mm.default(a, b), randn(5, 7), randn(7, 3)),
    case(aten.mm.default, "transposed-operands", lambda a, b: aten.mm.default(a.t(), b.t()),
         randn(7, 5), randn(3, 7)),
    case(aten.mm.default, "k-zero", lambda a, b: aten.mm.default(a, b), randn(4, 0), randn(0, 3)),
    case(aten.mm.default, "f64", lambda a, b: aten.mm.default(a, b), randn(6, 9, dtype=f64),
         randn(9, 2, dtype=f64)),
    case(aten.mm.default, "f16", lambda a, b: aten.mm.default(a, b), randn(4, 64, dtype=f16),
         randn(64, 5, dtype=f16)),
    case(aten.mm.default, "bf16", lambda a, b: aten.mm.default(a, b), randn(4, 64, dtype=bf16),
         randn(64, 5, dtype=bf16)),
    case(aten.mm.default, "i64", lambda a, b: aten.mm.default(a, b), ints(-9, 9, 3, 4),
         ints(-9, 9, 4, 2)),
    case(aten.mm.default, "long-k", lambda a, b: aten.mm.default(a, b), randn(3, 4096),
         randn(4096, 3)),
    case(aten.mm.default, "large-odd", lambda a, b: aten.mm.default(a, b), randn(67, 129),
         randn(129, 33)),
    case(aten.mm.default, "special", lambda a, b: aten.mm.default(a, b), special(3, 4),
         randn(4, 2)),
    case(aten.bmm.default, "f32", lambda a, b: aten.bmm.default(a, b), randn(3, 4, 5),
         randn(3, 5, 6)),
    case(aten.bmm.default, "noncontig", lambda a, b: aten.bmm.default(a.transpose(1, 2), b.permute(
        1, 0, 2)), randn(2, 5, 4), randn(5, 2, 3)),
    case(aten.bmm.default, "empty-batch", lambda a, b: aten.bmm.default(a, b), randn(0, 2, 3),
         randn(0, 3, 4)),
    case(aten.bmm.default, "f16", lambda a, b: aten.bmm.default(a, b), randn(2, 3, 32, dtype=f16),
         randn(2, 32, 3, dtype=f16)),
    case(aten.bmm.default, "i32", lambda a, b: aten.bmm.default(a, b), ints(-9, 9, 2, 3, 4,
                                                                             dtype=i32),
         ints(-9, 9, 2, 4, 2, dtype=i32)),
    case(aten.addmm.default, "bias-row", lambda c, a, b: aten.addmm.default(c, a, b), randn(6),
         randn(4, 5), randn(5, 6)),
    case(aten.addmm.default, "beta-alpha", lambda c, a, b: aten.addmm.default(c, a, b, beta=0.5,
                                                                             alpha=-2.0),
         randn(4, 6), randn(4, 5), randn(5, 6)),
    case(aten.addmm.default, "beta-zero-ignores-nan", lambda c, a, b: aten.addmm.default(
        c, a, b, beta=0), special(4, 3), randn(4, 5), randn(5, 3)),
    case(aten.addmm.default, "linear-weight-t", lambda c, a, w: aten.addmm.default(c, a, w.t()),
         randn(3), randn(2, 8), randn(3, 8)),
    case(aten.addmm.default, "f64-column-bias", lambda c, a, b: aten.addmm.default(c, a, b),
         randn(4, 1, dtype=f64), randn(4, 5, dtype=f64), randn(5, 3, dtype=f64)),
    case(aten.baddbmm.default, "beta-alpha", lambda c, a, b: aten.baddbmm.default(
        c, a, b, beta=0.25, alpha=3.0), randn(2, 3, 4), randn(2, 3, 5), randn(2, 5, 4)),
    case(aten.baddbmm.default, "broadcast-bias", lambda c, a, b: aten.baddbmm.default(c, a, b),
         randn(4), randn(2, 3, 5), randn(2, 5, 4)),
    case(aten.baddbmm.default, "f16", lambda c, a, b: aten.baddbmm.default(c, a, b),
         randn(2, 3, 4, dtype=f16), randn(2, 3, 5, dtype=f16), randn(2, 5, 4, dtype=f16)),
    case(aten.matmul.default, "vec-vec", lambda a, b: aten.matmul.default(a, b), randn(7),
         randn(7)),
    case(aten.matmul.default, "vec-mat", lambda a, b: aten.matmul.default(a, b), randn(4),
         randn(4, 3)),
    case(aten.matmul.default, "mat-vec", lambda a, b: aten.matmul.default(a, b), randn(3, 4),
         randn(4)),
    case(aten.matmul.default, "batch-broadcast", lambda a, b: aten.matmul.default(a, b),
         randn(2, 1, 3, 4), randn(5, 4, 2)),
    case(aten.matmul.default, "noncontig-i64", lambda a, b: aten.matmul.default(a.t(), b),
         ints(-9, 9, 4, 3), ints(-9, 9, 2, 4, 2)),
    case(aten.linear.default, "bias", lambda x, w, b: aten.linear.default(x, w, b), randn(2, 3, 8),
         randn(5, 8), randn(5)),
    case(aten.linear.default, "no-bias", lambda x, w: aten.linear.default(x, w), randn(4, 8),
         randn(5, 8)),
    case(aten.linear.default, "bf16-1d", lambda x, w, b: aten.linear.default(x, w, b),
         randn(16, dtype=bf16), randn(3, 16, dtype=bf16), randn(3, dtype=bf16)),
]

# -- grouped matmul: transformers' grouped_mm_fallback (a custom op; importing
# transformers.integrations.moe registers torch.ops.transformers) and aten._grouped_mm in the
# 2-D x 3-D form with offsets.  Offsets are inputs (rlx reads them at run time): uneven groups,
# an empty group, rows past the last offset (zero in the fallback; torch's _grouped_mm leaves
# them unset, so its cases cover every row), i32 and i64 offsets.
try:
    import transformers.integrations.moe  # noqa: F401
    _gmf = torch.ops.transformers.grouped_mm_fallback.default
except (ImportError, AttributeError):  # the cases below need transformers
    _gmf = None


def _offs(*v, dtype=i32):
    return torch.tensor(v, dtype=dtype)


if _gmf is not None:
    CASES += [
        case(_gmf, "uneven-empty-group-tail-rows", lambda x, w, o: _gmf(x, w, o), randn(10, 8),
             randn(3, 8, 5), _offs(3, 3, 8)),
        case(_gmf, "i64-offs-empty-first-group", lambda x, w, o: _gmf(x, w, o), randn(9, 6),
             randn(3, 6, 7), _offs(0, 4, 9, dtype=i64)),
        case(_gmf, "all-groups-empty", lambda x, w, o: _gmf(x, w, o), randn(4, 3), randn(2, 3, 5),
             _offs(0, 0)),
        case(_gmf, "moe-transposed-weight", lambda x, w, o: _gmf(x, w.transpose(-2, -1), o),
             randn(16, 32), randn(4, 24, 32), _offs(5, 6, 6, 13)),
        case(_gmf, "large-odd", lambda x, w, o: _gmf(x, w, o), randn(67, 129), randn(4, 129, 33),
             _offs(10, 30, 30, 60)),
        case(_gmf, "k-zero", lambda x, w, o: _gmf(x, w, o), randn(4, 0), randn(2, 0, 3),
             _offs(1, 3)),
        case(_gmf, "f64", lambda x, w, o: _gmf(x, w, o), randn(7, 5, dtype=f64),
             randn(2, 5, 3, dtype=f64), _offs(2, 6)),
        case(_gmf, "f16", lambda x, w, o: _gmf(x, w, o), randn(8, 64, dtype=f16),
             randn(2, 64, 5, dtype=f16), _offs(3, 7)),
        case(_gmf, "bf16", lambda x, w, o: _gmf(x, w, o), randn(8, 64, dtype=bf16),
             randn(2, 64, 5, dtype=bf16), _offs(5, 8, dtype=i64)),
    ]
_gmm = aten._grouped_mm.default
CASES += [
    case(_gmm, "2d-3d-offs-empty-group", lambda x, w, o: _gmm(x, w, o), randn(12, 8),
         randn(3, 8, 16), _offs(3, 3, 12)),
    case(_gmm, "bf16", lambda x, w, o: _gmm(x, w, o), randn(16, 16, dtype=bf16),
         randn(2, 16, 8, dtype=bf16), _offs(5, 16)),
    case(_gmm, "3d-3d-batched-refused", lambda x, w: _gmm(x, w), randn(2, 4, 8), randn(2, 8, 16),
         refuses="grouped mm is supported as a 2-D input times a 3-D weight with offsets"),
]

# -- convolution: (input, weight, bias, stride, padding, dilation, transposed, output_padding,
#    groups)
_cv = aten.convolution.default


def conv(x, w, b=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False,
         output_padding=(0, 0), groups=1):
    return _cv(x, w, b, list(stride), list(padding), list(dilation), transposed,
               list(output_padding), groups)


CASES += [
    case(_cv, "2d-bias-stride-pad", lambda x, w, b: conv(x, w, b, (2, 2), (1, 1)),
         randn(2, 3, 9, 9), randn(4, 3, 3, 3), randn(4)),
    case(_cv, "2d-dilation-groups", lambda x, w: conv(x, w, None, (1, 1), (2, 2), (2, 2), groups=2),
         randn(1, 4, 8, 8), randn(6, 2, 3, 3)),
    case(_cv, "2d-depthwise", lambda x, w, b: conv(x, w, b, (1, 1), (1, 1), groups=5),
         randn(2, 5, 6, 6), randn(5, 1, 3, 3), randn(5)),
    case(_cv, "2d-asymmetric", lambda x, w: conv(x, w, None, (2, 1), (0, 2), (1, 3)),
         randn(1, 2, 7, 9), randn(3, 2, 2, 3)),
    case(_cv, "2d-1x1", lambda x, w: conv(x, w), randn(2, 8, 3, 3), randn(4, 8, 1, 1)),
    case(_cv, "2d-larger-odd", lambda x, w, b: conv(x, w, b, (1, 1), (1, 1)), randn(1, 13, 23, 19),
         randn(17, 13, 3, 3), randn(17)),
    case(_cv, "2d-channels-last-input", lambda x, w, b: conv(x.permute(0, 3, 1, 2), w, b, (1, 1),
                                                             (1, 1)),
         randn(2, 6, 6, 3), randn(4, 3, 3, 3), randn(4)),
    case(_cv, "2d-empty-batch", lambda x, w: conv(x, w), randn(0, 3, 5, 5), randn(2, 3, 3, 3)),
    case(_cv, "2d-f64", lambda x, w, b: conv(x, w, b, (1, 1), (1, 1)), randn(1, 2, 5, 5, dtype=f64),
         randn(3, 2, 3, 3, dtype=f64), randn(3, dtype=f64)),
    case(_cv, "2d-bf16", lambda x, w: conv(x, w), randn(1, 4, 6, 6, dtype=bf16),
         randn(2, 4, 3, 3, dtype=bf16)),
    case(_cv, "1d-dilation-pad", lambda x, w, b: _cv(x, w, b, [1], [3], [3], False, [0], 1),
         randn(2, 3, 12), randn(4, 3, 3), randn(4)),
    case(_cv, "1d-stride-groups", lambda x, w: _cv(x, w, None, [2], [0], [1], False, [0], 3),
         randn(1, 6, 11), randn(3, 2, 4)),
    case(_cv, "3d", lambda x, w, b: _cv(x, w, b, [1, 2, 1], [1, 0, 1], [1, 1, 2], False,
                                        [0, 0, 0], 1),
         randn(1, 2, 4, 5, 6), randn(3, 2, 3, 2, 3), randn(3)),
    case(_cv, "transposed-2d-stride-outpad", lambda x, w, b: conv(x, w, b, (2, 2), (1, 1), (1, 1),
                                                                  True, (1, 1)),
         randn(2, 4, 5, 5), randn(4, 3, 3, 3), randn(3)),
    case(_cv, "transposed-2d-dilation-groups", lambda x, w: conv(x, w, None, (2, 1), (0, 1),
                                                                 (2, 1), True, (1, 0), 2),
         randn(1, 4, 4, 5), randn(4, 3, 3, 2)),
    case(_cv, "transposed-1d", lambda x, w, b: _cv(x, w, b, [3], [1], [1], True, [2], 1),
         randn(2, 3, 7), randn(3, 2, 4), randn(2)),
    case(_cv, "transposed-1d-groups-dilation", lambda x, w: _cv(x, w, None, [1], [2], [2], True,
                                                                [0], 2),
         randn(1, 4, 9), randn(4, 1, 3)),
]
CASES += [
    case(aten.conv1d.default, "pad-dilation", lambda x, w, b: aten.conv1d.default(
        x, w, b, [1], [2], [2]), randn(2, 3, 10), randn(5, 3, 3), randn(5)),
    case(aten.conv1d.default, "stride-noncontig", lambda x, w: aten.conv1d.default(
        x.transpose(1, 2), w, None, [2]), randn(1, 9, 4), randn(2, 4, 3)),
    case(aten.conv1d.default, "groups", lambda x, w: aten.conv1d.default(x, w, None, [1], [1], [1],
                                                                         2),
         randn(1, 4, 6), randn(4, 2, 3)),
    case(aten.conv2d.default, "pad-stride", lambda x, w, b: aten.conv2d.default(
        x, w, b, [2, 1], [1, 0]), randn(1, 3, 7, 6), randn(2, 3, 3, 3), randn(2)),
    case(aten.conv2d.default, "dilation-groups", lambda x, w: aten.conv2d.default(
        x, w, None, [1, 1], [2, 2], [2, 2], 2), randn(1, 4, 6, 6), randn(4, 2, 3, 3)),
    case(aten.conv2d.default, "f16", lambda x, w: aten.conv2d.default(x, w),
         randn(1, 3, 5, 5, dtype=f16), randn(2, 3, 3, 3, dtype=f16)),
    case(aten.conv3d.default, "pad", lambda x, w: aten.conv3d.default(x, w, None, [1], [1]),
         randn(1, 2, 3, 4, 4), randn(2, 2, 3, 3, 3)),
    case(aten.conv3d.default, "stride-bias", lambda x, w, b: aten.conv3d.default(x, w, b, [2]),
         randn(1, 2, 5, 5, 5), randn(3, 2, 2, 2, 2), randn(3)),
    case(aten.conv3d.default, "dilation", lambda x, w: aten.conv3d.default(
        x, w, None, [1], [0], [2]), randn(1, 1, 5, 5, 5), randn(2, 1, 2, 2, 2)),
    case(aten.conv_transpose1d.default, "stride-outpad", lambda x, w, b: aten.conv_transpose1d.
         default(x, w, b, [2], [1], [1]), randn(2, 3, 6), randn(3, 4, 3), randn(4)),
    case(aten.conv_transpose1d.default, "groups-dilation", lambda x, w: aten.conv_transpose1d.
         default(x, w, None, [1], [0], [0], 2, [2]), randn(1, 4, 5), randn(4, 3, 3)),
    case(aten.conv_transpose1d.default, "basic", lambda x, w: aten.conv_transpose1d.default(x, w),
         randn(1, 2, 4), randn(2, 2, 2)),
    case(aten.conv_transpose2d.input, "stride-outpad", lambda x, w, b: aten.conv_transpose2d.input(
        x, w, b, [2, 2], [1, 1], [1, 0]), randn(1, 3, 4, 4), randn(3, 2, 3, 3), randn(2)),
    case(aten.conv_transpose2d.input, "groups-dilation", lambda x, w: aten.conv_transpose2d.input(
        x, w, None, [1, 2], [0, 1], [0, 1], 2, [2, 1]), randn(1, 4, 3, 3), randn(4, 1, 3, 3)),
    case(aten.conv_transpose2d.input, "noncontig", lambda x, w: aten.conv_transpose2d.input(
        x.permute(0, 3, 1, 2), w), randn(1, 3, 3, 2), randn(2, 2, 2, 2)),
]

# -- layer norm / group norm / rms norm
_ln = aten.native_layer_norm.default
CASES += [
    case(_ln, "last-axis-affine", lambda x, w, b: _ln(x, [6], w, b, 1e-5)[0], randn(2, 3, 6),
         randn(6), randn(6)),
    case(_ln, "two-axes-no-affine", lambda x: _ln(x, [3, 4], None, None, 1e-5)[0],
         randn(2, 3, 4)),
    case(_ln, "three-axes-weight-only", lambda x, w: _ln(x, [2, 3, 4], w, None, 1e-3)[0],
         randn(2, 2, 3, 4), randn(2, 3, 4)),
    case(_ln, "noncontig", lambda x, w, b: _ln(x.transpose(1, 2), [5], w, b, 1e-5)[0],
         randn(2, 5, 3), randn(5), randn(5)),
    case(_ln, "large-offset", lambda x: _ln(x, [64], None, None, 1e-5)[0], randn(3, 64) + 1000),
    case(_ln, "large-odd", lambda x, w, b: _ln(x, [517], w, b, 1e-5)[0], randn(9, 517),
         randn(517), randn(517)),
    case(_ln, "f16", lambda x, w, b: _ln(x, [32], w, b, 1e-5)[0], randn(4, 32, dtype=f16),
         randn(32, dtype=f16), randn(32, dtype=f16)),
    case(_ln, "bf16", lambda x: _ln(x, [16], None, None, 1e-5)[0], randn(3, 16, dtype=bf16)),
    case(_ln, "f64", lambda x: _ln(x, [5], None, None, 1e-6)[0], randn(3, 5, dtype=f64)),
    # mean and rstd (outputs 1 and 2) as well
    case(_ln, "with-stats", lambda x, w, b: _ln(x, [6], w, b, 1e-5), randn(2, 3, 6),
         randn(6), randn(6)),
    case(_ln, "with-stats-two-axes-f16", lambda x: _ln(x, [3, 4], None, None, 1e-5),
         randn(2, 3, 4, dtype=f16)),
    case(_ln, "empty-batch", lambda x: _ln(x, [4], None, None, 1e-5)[0], randn(0, 4)),
    case(_ln, "special", lambda x: _ln(x, [4], None, None, 1e-5)[0], special(4, 4)),
    case(aten.layer_norm.default, "affine", lambda x, w, b: aten.layer_norm.default(
        x, [8], w, b), randn(3, 8), randn(8), randn(8)),
    case(aten.layer_norm.default, "two-axes", lambda x: aten.layer_norm.default(x, [2, 5]),
         randn(3, 2, 5)),
    case(aten.layer_norm.default, "eps", lambda x: aten.layer_norm.default(x, [4], None, None,
                                                                           0.5), randn(3, 4)),
]
_gn = aten.native_group_norm.default
CASES += [
    case(_gn, "affine", lambda x, w, b: _gn(x, w, b, 2, 6, 16, 3, 1e-5)[0], randn(2, 6, 4, 4),
         randn(6), randn(6)),
    case(_gn, "one-group-no-affine", lambda x: _gn(x, None, None, 2, 4, 5, 1, 1e-5)[0],
         randn(2, 4, 5)),
    case(_gn, "group-per-channel", lambda x, w: _gn(x, w, None, 1, 4, 9, 4, 1e-5)[0],
         randn(1, 4, 3, 3), randn(4)),
    case(_gn, "noncontig", lambda x: _gn(x.permute(0, 3, 1, 2), None, None, 2, 4, 6, 2, 1e-5)[0],
         randn(2, 2, 3, 4)),
    case(_gn, "f16", lambda x: _gn(x, None, None, 2, 4, 16, 2, 1e-5)[0],
         randn(2, 4, 4, 4, dtype=f16)),
    # mean and rstd (outputs 1 and 2) as well
    case(_gn, "with-stats", lambda x, w, b: _gn(x, w, b, 2, 6, 16, 3, 1e-5), randn(2, 6, 4, 4),
         randn(6), randn(6)),
    case(aten.group_norm.default, "affine", lambda x, w, b: aten.group_norm.default(x, 2, w, b),
         randn(2, 4, 3, 3), randn(4), randn(4)),
    case(aten.group_norm.default, "3d-input", lambda x: aten.group_norm.default(x, 3),
         randn(2, 6, 5)),
    case(aten.group_norm.default, "5d-input", lambda x: aten.group_norm.default(x, 1),
         randn(1, 2, 2, 3, 3)),
]
_rms = aten.rms_norm.default
CASES += [
    case(_rms, "weight", lambda x, w: _rms(x, [8], w, 1e-6), randn(2, 3, 8), randn(8)),
    case(_rms, "two-axes-no-weight", lambda x: _rms(x, [3, 4]), randn(2, 3, 4)),
    case(_rms, "f16", lambda x, w: _rms(x, [16], w), randn(3, 16, dtype=f16), randn(16, dtype=f16)),
    case(_rms, "noncontig-eps", lambda x: _rms(x.t(), [3], None, 0.1), randn(3, 5)),
]

# -- batch norm family (inference and batch statistics)
_bnl, _bnn, _bnt = (aten._native_batch_norm_legit.default, aten._native_batch_norm_legit.no_stats,
                    aten._native_batch_norm_legit_no_training.default)
_C = 3
CASES += [
    case(_bnt, "affine", lambda x, w, b, m, v: _bnt(x, w, b, m, v, 0.1, 1e-5)[0],
         randn(2, _C, 4, 4), randn(_C), randn(_C), randn(_C), uniform(0.5, 2, _C)),
    case(_bnt, "no-affine-1d", lambda x, m, v: _bnt(x, None, None, m, v, 0.1, 1e-3)[0],
         randn(4, _C), randn(_C), uniform(0.5, 2, _C)),
    case(_bnt, "3d-noncontig", lambda x, m, v: _bnt(x.transpose(1, 2), None, None, m, v, 0.1,
                                                    1e-5)[0],
         randn(2, 5, _C), randn(_C), uniform(0.5, 2, _C)),
    case(_bnt, "f16-input-f32-stats", lambda x, w, b, m, v: _bnt(x, w, b, m, v, 0.1, 1e-5)[0],
         randn(2, _C, 3, dtype=f16), randn(_C), randn(_C), randn(_C), uniform(0.5, 2, _C)),
    case(_bnl, "eval", lambda x, w, b, m, v: _bnl(x, w, b, m, v, False, 0.1, 1e-5)[0],
         randn(2, _C, 3, 3), randn(_C), randn(_C), randn(_C), uniform(0.5, 2, _C)),
    case(_bnl, "training-batch-stats", lambda x, w, b, m, v: _bnl(x, w, b, m.clone(), v.clone(),
                                                                  True, 0.1, 1e-5),
         randn(4, _C, 3), randn(_C), randn(_C), randn(_C), uniform(0.5, 2, _C)),
    case(_bnl, "training-no-affine", lambda x, m, v: _bnl(x, None, None, m.clone(), v.clone(),
                                                          True, 0.1, 1e-5)[0],
         randn(3, _C, 2, 2), randn(_C), uniform(0.5, 2, _C)),
    case(_bnn, "training", lambda x, w, b: _bnn(x, w, b, True, 0.1, 1e-5), randn(4, _C, 5),
         randn(_C), randn(_C)),
    case(_bnn, "instance-norm-shape", lambda x: _bnn(x.reshape(1, 6, 9), None, None, True, 0.1,
                                                     1e-5)[0].reshape(2, 3, 3, 3),
         randn(2, 3, 3, 3)),
    case(_bnn, "no-affine-2d", lambda x: _bnn(x, None, None, True, 0.1, 1e-3)[0], randn(8, _C)),
    case(aten.native_batch_norm.default, "eval", lambda x, m, v: aten.native_batch_norm.default(
        x, None, None, m, v, False, 0.1, 1e-5)[0], randn(2, _C, 4), randn(_C), uniform(0.5, 2, _C)),
    case(aten.native_batch_norm.default, "eval-affine-4d", lambda x, w, b, m, v: aten.
         native_batch_norm.default(x, w, b, m, v, False, 0.1, 1e-5)[0], randn(2, _C, 3, 3),
         randn(_C), randn(_C), randn(_C), uniform(0.5, 2, _C)),
    case(aten.native_batch_norm.default, "eval-noncontig", lambda x, m, v: aten.native_batch_norm.
         default(x.transpose(1, 2), None, None, m, v, False, 0.1, 1e-3)[0], randn(2, 4, _C),
         randn(_C), uniform(0.5, 2, _C)),
    case(aten.batch_norm.default, "eval-affine", lambda x, w, b, m, v: aten.batch_norm.default(
        x, w, b, m, v, False, 0.1, 1e-5, False), randn(2, _C, 3, 3), randn(_C), randn(_C),
         randn(_C), uniform(0.5, 2, _C)),
    case(aten.batch_norm.default, "eval-1d", lambda x, m, v: aten.batch_norm.default(
        x, None, None, m, v, False, 0.1, 1e-5, False), randn(5, _C), randn(_C),
         uniform(0.5, 2, _C)),
    case(aten.batch_norm.default, "eval-5d", lambda x, m, v: aten.batch_norm.default(
        x, None, None, m, v, False, 0.1, 1e-5, False), randn(1, _C, 2, 2, 2), randn(_C),
         uniform(0.5, 2, _C)),
    case(aten.instance_norm.default, "affine", lambda x, w, b: aten.instance_norm.default(
        x, w, b, None, None, True, 0.1, 1e-5, False), randn(2, _C, 4, 4), randn(_C), randn(_C)),
    case(aten.instance_norm.default, "1d", lambda x: aten.instance_norm.default(
        x, None, None, None, None, True, 0.1, 1e-5, False), randn(2, _C, 7)),
    case(aten.instance_norm.default, "noncontig", lambda x: aten.instance_norm.default(
        x.permute(0, 3, 1, 2), None, None, None, None, True, 0.1, 1e-5, False), randn(1, 4, 4, _C)),
]

# -- dropout at inference (train=False, or p=0) is the identity with an all-true mask
_nd = aten.native_dropout.default
CASES += [
    case(_nd, "eval", lambda x: _nd(x, 0.5, False), randn(3, 4)),
    case(_nd, "eval-noncontig-f16", lambda x: _nd(x.t(), 0.1, False), randn(4, 3, dtype=f16)),
    case(_nd, "eval-special", lambda x: _nd(x, 0.9, False), special(3, 4)),
    case(_nd, "train-p0", lambda x: _nd(x, 0.0, True), randn(3, 4)),
    case(aten.dropout.default, "eval", lambda x: aten.dropout.default(x, 0.5, False), randn(3, 4)),
    case(aten.dropout.default, "p0-train", lambda x: aten.dropout.default(x, 0.0, True),
         randn(3, 4)),
    case(aten.dropout.default, "eval-bf16", lambda x: aten.dropout.default(x, 0.3, False),
         randn(3, 4, dtype=bf16)),
]

# -- scaled dot-product attention (masks, causal, scale, grouped-query heads)
_sd = aten.scaled_dot_product_attention.default


def qkv(b, h, lq, lk, e, hk=None, dtype=torch.float32):
    return randn(b, h, lq, e, dtype=dtype), randn(b, hk or h, lk, e, dtype=dtype), \
        randn(b, hk or h, lk, e, dtype=dtype)


CASES += [
    case(_sd, "plain", lambda q, k, v: _sd(q, k, v), *qkv(2, 3, 5, 7, 8)),
    case(_sd, "causal", lambda q, k, v: _sd(q, k, v, is_causal=True), *qkv(1, 2, 6, 6, 4)),
    case(_sd, "causal-lq-lt-lk", lambda q, k, v: _sd(q, k, v, is_causal=True), *qkv(1, 2, 3, 6, 4)),
    case(_sd, "scale", lambda q, k, v: _sd(q, k, v, scale=0.05), *qkv(1, 2, 4, 5, 8)),
    case(_sd, "bool-mask-broadcast", lambda q, k, v, m: _sd(q, k, v, m),
         *qkv(2, 2, 4, 5, 4), torch.cat([torch.ones(4, 1, dtype=torch.bool), bools(4, 4)], 1)),
    case(_sd, "float-mask-neg-inf", lambda q, k, v, m: _sd(q, k, v, m), *qkv(1, 2, 3, 4, 4),
         torch.tensor([[0.0, -INF, 0.5, -1.0], [-INF, 0.0, 0.0, 0.0], [1.0, 2.0, -INF, 0.0]])),
    case(_sd, "gqa", lambda q, k, v: _sd(q, k, v, enable_gqa=True), *qkv(1, 4, 3, 5, 8, hk=2)),
    case(_sd, "gqa-causal-scale", lambda q, k, v: _sd(q, k, v, is_causal=True, scale=0.3,
                                                      enable_gqa=True), *qkv(2, 6, 4, 4, 4, hk=3)),
    case(_sd, "bhld-from-blhd", lambda q, k, v: _sd(q.transpose(1, 2), k.transpose(1, 2),
                                                    v.transpose(1, 2)),
         randn(2, 5, 3, 4), randn(2, 6, 3, 4), randn(2, 6, 3, 4)),
    case(_sd, "3d-inputs", lambda q, k, v: _sd(q, k, v), randn(2, 3, 4), randn(2, 5, 4),
         randn(2, 5, 6)),
    case(_sd, "f16", lambda q, k, v: _sd(q, k, v), *qkv(1, 2, 4, 4, 16, dtype=f16)),
    case(_sd, "f64-causal", lambda q, k, v: _sd(q, k, v, is_causal=True), *qkv(1, 1, 4, 4, 4,
                                                                               dtype=f64)),
    case(aten._scaled_dot_product_flash_attention_for_cpu.default, "causal-scale",
         lambda q, k, v: aten._scaled_dot_product_flash_attention_for_cpu.default(
             q, k, v, 0.0, True, scale=0.2)[0], *qkv(1, 2, 4, 4, 8)),
    case(aten._scaled_dot_product_flash_attention_for_cpu.default, "mask",
         lambda q, k, v, m: aten._scaled_dot_product_flash_attention_for_cpu.default(
             q, k, v, 0.0, False, attn_mask=m)[0], *qkv(1, 2, 3, 5, 8), randn(3, 5)),
    case(aten._scaled_dot_product_flash_attention_for_cpu.default, "plain",
         lambda q, k, v: aten._scaled_dot_product_flash_attention_for_cpu.default(
             q, k, v)[0], *qkv(2, 1, 3, 6, 4)),
    case(aten._scaled_dot_product_attention_math.default, "causal",
         lambda q, k, v: aten._scaled_dot_product_attention_math.default(q, k, v, None, 0.0,
                                                                         True)[0],
         *qkv(1, 2, 4, 4, 8)),
    case(aten._scaled_dot_product_attention_math.default, "mask-scale",
         lambda q, k, v, m: aten._scaled_dot_product_attention_math.default(
             q, k, v, m, scale=0.5)[0], *qkv(1, 2, 3, 5, 8), randn(3, 5)),
    case(aten._scaled_dot_product_attention_math.default, "gqa",
         lambda q, k, v: aten._scaled_dot_product_attention_math.default(
             q, k, v, enable_gqa=True)[0], *qkv(1, 4, 3, 5, 8, hk=1)),
]

# -- pairwise distances
_cd, _pd = aten._cdist_forward.default, aten._pdist_forward.default
CASES += [
    case(_cd, "p2", lambda a, b: _cd(a, b, 2.0, None), randn(5, 3), randn(4, 3)),
    case(_cd, "p1-batched", lambda a, b: _cd(a, b, 1.0, None), randn(2, 5, 3), randn(2, 4, 3)),
    case(_cd, "pinf", lambda a, b: _cd(a, b, INF, None), randn(5, 3), randn(4, 3)),
    case(_cd, "p0", lambda a, b: _cd(a, b, 0.0, None), ints(0, 2, 5, 3).float(),
         ints(0, 2, 4, 3).float()),
    case(_cd, "p3-noncontig", lambda a, b: _cd(a.t(), b, 3.0, None), randn(3, 5), randn(4, 3)),
    case(_cd, "p2-mm-mode", lambda a, b: _cd(a, b, 2.0, 1), randn(30, 8), randn(26, 8)),
    case(_cd, "f64-broadcast-batch", lambda a, b: _cd(a, b, 2.0, None), randn(1, 4, 3, dtype=f64),
         randn(3, 2, 3, dtype=f64)),
    case(_pd, "p2", lambda a: _pd(a, 2.0), randn(5, 3)),
    case(_pd, "p1", lambda a: _pd(a, 1.0), randn(6, 4)),
    case(_pd, "pinf-transposed", lambda a: _pd(aten.clone.default(
        a.t(), memory_format=torch.contiguous_format), INF), randn(3, 5)),
    case(_pd, "p0-5", lambda a: _pd(a, 0.5), randn(4, 3)),
    case(_pd, "one-row-empty", lambda a: _pd(a, 2.0), randn(1, 3)),
    case(aten.cdist.default, "p2", lambda a, b: aten.cdist.default(a, b), randn(2, 5, 3),
         randn(2, 4, 3)),
    case(aten.cdist.default, "p1", lambda a, b: aten.cdist.default(a, b, 1.0), randn(5, 3),
         randn(4, 3)),
    case(aten.cdist.default, "pinf-noncontig", lambda a, b: aten.cdist.default(a.t(), b, INF),
         randn(3, 5), randn(4, 3)),
    case(aten.pdist.default, "p2", lambda a: aten.pdist.default(a), randn(5, 3)),
    case(aten.pdist.default, "p1", lambda a: aten.pdist.default(a, 1.0), randn(4, 6)),
    case(aten.pdist.default, "p3", lambda a: aten.pdist.default(a, 3.0), randn(3, 2)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
