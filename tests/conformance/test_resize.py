"""Conformance: resizing (upsample nearest / linear / bicubic, antialiased or not),
grid_sample, and pixel shuffle.

Upsample ops are called both with an output size and with scale factors,
because torch maps output pixels to input pixels with the given scale when
there is one (``scale_factors``) and with in/out otherwise; scales that are
not integers (1.5, 0.6, 1/3) and downsampling are included.  grid_sampler_2d
gets every interpolation mode x padding mode x align_corners combination, with
grid points inside and outside [-1, 1].  uint8 images are resized as torch
resizes them (rounded, saturated).
"""

import itertools

import pytest

from cases import (aten, bf16, case, case_id, f16, f64, ints, randn, seed, special, u8,
                   uniform)

seed("test_resize")

CASES = []

# -- nearest (.vec takes output_size or scale_factors; .default takes size and optional scales)
_n2v, _n2 = aten.upsample_nearest2d.vec, aten.upsample_nearest2d.default
CASES += [
    case(_n2v, "scale-2", lambda x: _n2v(x, None, [2.0, 2.0]), randn(2, 3, 4, 5)),
    case(_n2v, "scale-1.5-0.6", lambda x: _n2v(x, None, [1.5, 0.6]), randn(1, 2, 5, 7)),
    case(_n2v, "size-odd-ratio", lambda x: _n2v(x, [8, 3], None), randn(1, 2, 5, 7)),
    case(_n2v, "scale-third-down", lambda x: _n2v(x, None, [1 / 3, 0.5]), randn(1, 1, 9, 8)),
    case(_n2v, "channels-last-input", lambda x: _n2v(x.permute(0, 3, 1, 2), [6, 6], None),
         randn(1, 4, 4, 3)),
    case(_n2v, "u8-scale", lambda x: _n2v(x, None, [2.0, 3.0]), ints(0, 256, 1, 2, 3, 3).to(u8)),
    case(_n2v, "u8", lambda x: _n2v(x, [5, 7], None), ints(0, 256, 1, 3, 4, 4).to(u8)),
    case(_n2v, "f16", lambda x: _n2v(x, None, [2.0, 2.0]), randn(1, 2, 3, 3, dtype=f16)),
    case(_n2v, "special", lambda x: _n2v(x, None, [2.0, 1.0]), special(1, 1, 3, 4)),
    case(_n2, "size", lambda x: _n2(x, [7, 9]), randn(1, 2, 4, 5)),
    case(_n2, "size-with-scales", lambda x: _n2(x, [6, 7], 1.5, 1.5), randn(1, 2, 4, 5)),
    case(_n2, "down", lambda x: _n2(x, [2, 3]), randn(2, 1, 5, 7)),
    case(aten.upsample_nearest1d.vec, "scale-2.5", lambda x: aten.upsample_nearest1d.vec(
        x, None, [2.5]), randn(2, 3, 4)),
    case(aten.upsample_nearest1d.vec, "size-down", lambda x: aten.upsample_nearest1d.vec(
        x, [3], None), randn(1, 2, 7)),
    case(aten.upsample_nearest1d.vec, "u8", lambda x: aten.upsample_nearest1d.vec(
        x, [5], None), ints(0, 256, 1, 1, 3).to(u8)),
    case(aten.upsample_nearest3d.vec, "scale-2", lambda x: aten.upsample_nearest3d.vec(
        x, None, [2.0, 2.0, 2.0]), randn(1, 2, 2, 3, 2)),
    case(aten.upsample_nearest3d.vec, "size-mixed", lambda x: aten.upsample_nearest3d.vec(
        x, [3, 2, 5], None), randn(1, 1, 2, 4, 3)),
    case(aten.upsample_nearest3d.vec, "scale-1.5", lambda x: aten.upsample_nearest3d.vec(
        x, None, [1.5, 1.5, 0.5]), randn(1, 1, 2, 2, 4)),
    case(aten._upsample_nearest_exact2d.vec, "scale-1.5", lambda x: aten._upsample_nearest_exact2d.
         vec(x, None, [1.5, 1.5]), randn(1, 2, 4, 5)),
    case(aten._upsample_nearest_exact2d.vec, "size-down", lambda x: aten._upsample_nearest_exact2d.
         vec(x, [3, 2], None), randn(1, 2, 7, 5)),
    case(aten._upsample_nearest_exact2d.vec, "u8", lambda x: aten._upsample_nearest_exact2d.vec(
        x, [5, 5], None), ints(0, 256, 1, 1, 3, 3).to(u8)),
]
CASES += [
    case(aten._upsample_nearest_exact1d.vec, "scale-1.5", lambda x: aten._upsample_nearest_exact1d.
         vec(x, None, [1.5]), randn(2, 3, 4)),
    case(aten._upsample_nearest_exact1d.vec, "size-down", lambda x: aten._upsample_nearest_exact1d.
         vec(x, [3], None), randn(1, 2, 7)),
    case(aten._upsample_nearest_exact1d.vec, "u8", lambda x: aten._upsample_nearest_exact1d.
         vec(x, [7], None), ints(0, 256, 1, 2, 3).to(u8)),
    case(aten._upsample_nearest_exact1d.default, "size", lambda x: aten._upsample_nearest_exact1d.
         default(x, [5]), randn(1, 2, 3)),
    case(aten._upsample_nearest_exact1d.default, "size-scale", lambda x: aten.
         _upsample_nearest_exact1d.default(x, [6], 1.5), randn(1, 2, 4)),
    case(aten._upsample_nearest_exact1d.default, "down", lambda x: aten.
         _upsample_nearest_exact1d.default(x, [2]), randn(2, 1, 5)),
    case(aten._upsample_nearest_exact3d.vec, "scale-2", lambda x: aten._upsample_nearest_exact3d.
         vec(x, None, [2.0, 1.5, 0.5]), randn(1, 1, 2, 2, 4)),
    case(aten._upsample_nearest_exact3d.vec, "size", lambda x: aten._upsample_nearest_exact3d.
         vec(x, [3, 2, 5], None), randn(1, 2, 2, 4, 3)),
    case(aten._upsample_nearest_exact3d.vec, "down", lambda x: aten._upsample_nearest_exact3d.
         vec(x, [2, 2, 1], None), randn(1, 1, 4, 5, 3)),
    case(aten._upsample_nearest_exact3d.default, "size", lambda x: aten._upsample_nearest_exact3d.
         default(x, [4, 4, 4]), randn(1, 1, 2, 3, 2)),
    case(aten._upsample_nearest_exact3d.default, "down", lambda x: aten._upsample_nearest_exact3d.
         default(x, [1, 2, 2]), randn(1, 2, 3, 5, 4)),
    case(aten._upsample_nearest_exact3d.default, "scales", lambda x: aten.
         _upsample_nearest_exact3d.default(x, [3, 3, 3], 1.5, 1.5, 1.5), randn(1, 1, 2, 2, 2)),
]

# -- bilinear / linear / trilinear / bicubic (align_corners both ways)
_b2v, _b2 = aten.upsample_bilinear2d.vec, aten.upsample_bilinear2d.default
_c2v, _c2 = aten.upsample_bicubic2d.vec, aten.upsample_bicubic2d.default
for _op, _opd in ((_b2v, _b2), (_c2v, _c2)):
    for _ac in (False, True):
        _t = "align" if _ac else "noalign"
        CASES += [
            case(_op, f"{_t}-scale-2", lambda x, f=_op, a=_ac: f(x, None, a, [2.0, 2.0]),
                 randn(2, 3, 4, 5)),
            case(_op, f"{_t}-scale-1.7-0.6", lambda x, f=_op, a=_ac: f(x, None, a, [1.7, 0.6]),
                 randn(1, 2, 5, 8)),
            case(_op, f"{_t}-size", lambda x, f=_op, a=_ac: f(x, [7, 3], a, None),
                 randn(1, 2, 4, 6)),
            case(_op, f"{_t}-channels-last-input", lambda x, f=_op, a=_ac: f(
                x.permute(0, 3, 1, 2), [6, 5], a, None), randn(1, 4, 3, 2)),
            # torch resizes u8 images with 16-bit fixed-point weights; rlx refuses
            # rather than differ by one in some pixels (a documented limitation)
            case(_op, f"{_t}-u8", lambda x, f=_op, a=_ac: f(x, [6, 9], a, None),
                 ints(0, 256, 1, 3, 4, 5).to(u8), refuses="fixed-point"),
            case(_op, f"{_t}-f64-to-1x1", lambda x, f=_op, a=_ac: f(x, [1, 1], a, None),
                 randn(1, 1, 3, 4, dtype=f64)),
            case(_opd, f"{_t}-size", lambda x, f=_opd, a=_ac: f(x, [8, 5], a), randn(1, 2, 4, 4)),
            case(_opd, f"{_t}-size-scales", lambda x, f=_opd, a=_ac: f(x, [6, 5], a, 1.5, 1.25),
                 randn(1, 2, 4, 4)),
        ]
CASES += [
    case(_b2v, "bf16", lambda x: _b2v(x, None, False, [2.0, 2.0]), randn(1, 2, 3, 3, dtype=bf16)),
    case(_b2v, "special", lambda x: _b2v(x, None, False, [2.0, 2.0]), special(1, 1, 3, 3)),
    case(_c2v, "f16", lambda x: _c2v(x, None, False, [2.0, 2.0]), randn(1, 2, 3, 3, dtype=f16)),
    case(aten.upsample_linear1d.vec, "noalign", lambda x: aten.upsample_linear1d.vec(
        x, None, False, [2.5]), randn(2, 3, 4)),
    case(aten.upsample_linear1d.vec, "align", lambda x: aten.upsample_linear1d.vec(
        x, [9], True, None), randn(1, 2, 4)),
    case(aten.upsample_linear1d.vec, "down", lambda x: aten.upsample_linear1d.vec(
        x, [3], False, None), randn(1, 2, 8)),
    case(aten.upsample_trilinear3d.vec, "noalign", lambda x: aten.upsample_trilinear3d.vec(
        x, None, False, [2.0, 1.5, 2.0]), randn(1, 2, 2, 3, 2)),
    case(aten.upsample_trilinear3d.vec, "align", lambda x: aten.upsample_trilinear3d.vec(
        x, [3, 3, 4], True, None), randn(1, 1, 2, 2, 3)),
    case(aten.upsample_trilinear3d.vec, "down", lambda x: aten.upsample_trilinear3d.vec(
        x, [2, 2, 2], False, None), randn(1, 1, 4, 5, 3)),
]

# -- antialiased bilinear / bicubic (what F.interpolate(..., antialias=True) exports)
for _op, _opd in ((aten._upsample_bilinear2d_aa.vec, aten._upsample_bilinear2d_aa.default),
                  (aten._upsample_bicubic2d_aa.vec, aten._upsample_bicubic2d_aa.default)):
    for _ac in (False, True):
        _t = "align" if _ac else "noalign"
        CASES += [
            case(_op, f"{_t}-down-half", lambda x, f=_op, a=_ac: f(x, None, a, [0.5, 0.5]),
                 randn(1, 2, 8, 8)),
            case(_op, f"{_t}-down-0.3-size", lambda x, f=_op, a=_ac: f(x, [3, 4], a, None),
                 randn(1, 2, 10, 13)),
            case(_op, f"{_t}-up-mixed", lambda x, f=_op, a=_ac: f(x, None, a, [1.5, 0.4]),
                 randn(1, 1, 4, 10)),
            case(_op, f"{_t}-u8-down", lambda x, f=_op, a=_ac: f(x, [4, 5], a, None),
                 ints(0, 256, 1, 3, 9, 11).to(u8), refuses="fixed-point"),
            case(_opd, f"{_t}-size", lambda x, f=_opd, a=_ac: f(x, [3, 5], a), randn(1, 2, 7, 9)),
        ]
    CASES.append(case(_op, "channels-last-input", lambda x, f=_op: f(
        x.permute(0, 3, 1, 2), [4, 4], False, None), randn(1, 9, 9, 3)))

# -- grid_sampler_2d: mode (0 bilinear, 1 nearest, 2 bicubic) x padding (0 zeros, 1 border,
#    2 reflection) x align_corners
_gs = aten.grid_sampler_2d.default
_modes, _pads = ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection")
for (_m, _mn), (_p, _pn), _ac in itertools.product(enumerate(_modes), enumerate(_pads),
                                                  (False, True)):
    CASES.append(case(_gs, f"{_mn}-{_pn}-{'align' if _ac else 'noalign'}",
                      lambda x, g, m=_m, p=_p, a=_ac: _gs(x, g, m, p, a),
                      randn(2, 3, 5, 6), uniform(-1.3, 1.3, 2, 4, 7, 2)))
CASES += [
    case(_gs, "bilinear-far-outside", lambda x, g: _gs(x, g, 0, 2, False), randn(1, 2, 4, 4),
         uniform(-4, 4, 1, 5, 5, 2)),
    case(_gs, "bicubic-border-f64", lambda x, g: _gs(x, g, 2, 1, True), randn(1, 2, 4, 5,
                                                                              dtype=f64),
         uniform(-1.2, 1.2, 1, 3, 3, 2, dtype=f64)),
    case(_gs, "channels-last-input", lambda x, g: _gs(x.permute(0, 3, 1, 2), g, 0, 0, False),
         randn(1, 5, 5, 3), uniform(-1, 1, 1, 4, 4, 2)),
    case(_gs, "nearest-reflection-f16", lambda x, g: _gs(x, g, 1, 2, False), randn(
        1, 2, 4, 4, dtype=f16), uniform(-1.5, 1.5, 1, 3, 3, 2, dtype=f16)),
    case(aten.grid_sampler.default, "bilinear-zeros", lambda x, g: aten.grid_sampler.default(
        x, g, 0, 0, False), randn(1, 2, 4, 5), uniform(-1.2, 1.2, 1, 3, 3, 2)),
    case(aten.grid_sampler.default, "nearest-border-align", lambda x, g: aten.grid_sampler.
         default(x, g, 1, 1, True), randn(1, 2, 4, 5), uniform(-1.2, 1.2, 1, 3, 3, 2)),
    case(aten.grid_sampler.default, "bicubic-reflection", lambda x, g: aten.grid_sampler.default(
        x, g, 2, 2, False), randn(1, 2, 4, 5), uniform(-1.2, 1.2, 1, 3, 3, 2)),
]

# -- pixel shuffle / unshuffle
_ps, _pu = aten.pixel_shuffle.default, aten.pixel_unshuffle.default
CASES += [
    case(_ps, "r2", lambda x: _ps(x, 2), randn(2, 8, 3, 4)),
    case(_ps, "r3-unbatched", lambda x: _ps(x, 3), randn(9, 2, 2)),
    case(_ps, "i64-extra-batch", lambda x: _ps(x, 2), ints(-9, 9, 2, 2, 4, 2, 2)),
    case(_ps, "noncontig", lambda x: _ps(x.permute(0, 3, 1, 2), 2), randn(1, 3, 3, 4)),
    case(_pu, "r2", lambda x: _pu(x, 2), randn(2, 2, 4, 6)),
    case(_pu, "r3-unbatched", lambda x: _pu(x, 3), randn(1, 6, 3)),
    case(_pu, "i64-extra-batch", lambda x: _pu(x, 2), ints(-9, 9, 2, 1, 1, 4, 4)),
    case(_pu, "bf16", lambda x: _pu(x, 2), randn(1, 2, 4, 4, dtype=bf16)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
