"""Conformance: complex numbers (docs/design.md, "Complex numbers").

rlx programs take and return real tensors, so each case builds its complex
values inside the program (view_as_complex of [..., 2] inputs, polar,
complex, a cast, an FFT of a real input) and returns real ones
(view_as_real, abs, angle, .real, irfft). Covered: view_as_complex /
view_as_real, polar and complex with broadcasting, complex64 and
complex128; mul, add (alpha), sub, div with complex, real-tensor and
Python-scalar operands, neg, conj, abs, angle, real and imag, casts into
and out of complex; the view family, permute, transpose, slice (steps),
select, cat and stack (with a real member), expand, sum and mean; and the
Fourier transforms: torch.fft's fft_* ops (kept whole by the aten
decomposition) and the primitives _fft_r2c / _fft_c2c / _fft_c2r (what
high and core leave), at lengths 1, 2, 7, 8, 12, 100 and 128 (the fft
kernel's direct, radix-2 and Bluestein paths), odd and even, every norm,
n and s larger and smaller than the input, dims other than the last, and
several dims at once.
"""

import pytest
import torch

from cases import aten, case as _case, case_id, f64, randn, seed, uniform


def case(op, name, *args, **kwargs):
    """A conformance case whose id says it is complex: ids are global across
    the suite, and test_binary.py already has e.g. mul.Tensor-empty."""
    return _case(op, "complex-" + name, *args, **kwargs)


seed("test_complex")

CASES = []
fft = torch.fft
vc, vr = torch.view_as_complex, torch.view_as_real
_vc, _vr = aten.view_as_complex.default, aten.view_as_real.default
C64, C128 = torch.complex64, torch.complex128

# -- the views, polar, complex
CASES += [
    case(_vc, "roundtrip", lambda x: vr(vc(x)) * 2, randn(2, 3, 2), expect=[_vc, _vr]),
    case(_vc, "rank1-f64", lambda x: vr(vc(x)) + 1, randn(5, 2, dtype=f64), expect=[_vc, _vr]),
    case(aten.polar.default, "broadcast", lambda a, t: vr(torch.polar(a, t)), uniform(0.5, 2, 3, 1), randn(4)),
    case(aten.polar.default, "f64", lambda a, t: vr(torch.polar(a, t)), uniform(0.5, 2, 6, dtype=f64),
         uniform(-4, 4, 6, dtype=f64)),
    case(aten.polar.default, "core", lambda a, t: vr(torch.polar(a, t)), uniform(0, 3, 2, 5), randn(2, 5),
         decomposition="core"),
    case(aten.polar.default, "rotary", lambda t: vr(torch.polar(torch.ones_like(t), t)), randn(16, 4)),
    case(aten.complex.default, "broadcast", lambda a, b: vr(torch.complex(a, b)), randn(3, 4), randn(4)),
]

# -- arithmetic
_z, _w = randn(2, 3, 4, 2), randn(3, 1, 2)
CASES += [
    case(aten.mul.Tensor, "complex-broadcast", lambda x, y: vr(vc(x) * vc(y)), _z, _w),
    case(aten.mul.Tensor, "complex-rotary", lambda x, f: vr(vc(x) * vc(f)[None, :, None, :]).flatten(3),
         randn(2, 5, 3, 4, 2), randn(5, 4, 2)),
    case(aten.mul.Tensor, "complex-real", lambda x, y: vr(vc(x) * y), _z, randn(4)),
    case(aten.mul.Tensor, "real-complex", lambda x, y: vr(y * vc(x)), _z, randn(3, 4)),
    case(aten.mul.Tensor, "scalar", lambda x: vr(vc(x) * 2.5), _z),
    case(aten.mul.Tensor, "c64-f64-promotes", lambda x, y: vr(vc(x) * y), _z, randn(4, dtype=f64)),
    case(aten.mul.Tensor, "core", lambda x, y: vr(vc(x) * vc(y)), _z, _w, decomposition="core"),
    case(aten.add.Tensor, "complex", lambda x, y: vr(vc(x) + vc(y)), _z, _w),
    case(aten.add.Tensor, "alpha", lambda x, y: vr(torch.add(vc(x), vc(y), alpha=-2.5)), _z, _w),
    case(aten.add.Tensor, "complex-real", lambda x, y: vr(vc(x) + y), _z, randn(3, 4)),
    case(aten.add.Tensor, "scalar", lambda x: vr(vc(x) + 1.5), _z),
    case(aten.sub.Tensor, "complex", lambda x, y: vr(vc(x) - vc(y)), _z, _w),
    case(aten.sub.Tensor, "real-complex-alpha", lambda x, y: vr(torch.sub(y, vc(x), alpha=3)), _z, randn(4)),
    case(aten.div.Tensor, "complex", lambda x, y: vr(vc(x) / vc(y)), _z, uniform(0.5, 2, 3, 1, 2)),
    case(aten.div.Tensor, "complex-real", lambda x, y: vr(vc(x) / y), _z, uniform(1, 2, 4)),
    case(aten.div.Tensor, "real-complex", lambda x, y: vr(y / vc(x)), uniform(0.5, 2, 3, 4, 2), randn(4)),
    case(aten.div.Tensor, "scalar", lambda x: vr(vc(x) / 4.0), _z),
    case(aten.div.Tensor, "huge-and-tiny", lambda x, y: vr(vc(x) / vc(y)), randn(2, 3, 2),
         torch.tensor([[3e30, -2e30], [1e-30, 4e-30], [-1e25, 7.0]])),
    case(aten.mul.Tensor, "0d-times-1d", lambda x, y: vr(vc(x) * vc(y)), randn(2), randn(5, 2)),
    case(aten.mul.Tensor, "empty", lambda x, y: vr(vc(x) * vc(y)), randn(0, 4, 2), randn(4, 2)),
    case(aten.fft_fft.default, "empty-batch", lambda x: vr(fft.fft(vc(x))), randn(0, 6, 2)),
    case(aten.neg.default, "complex", lambda x: vr(-vc(x)), _z),
    case(aten._conj.default, "resolved", lambda x: vr(vc(x).conj().resolve_conj()), _z,
         expect=[aten._conj.default, aten.resolve_conj.default]),
    case(aten._conj.default, "times", lambda x, y: vr(vc(x) * vc(y).conj()), _z, _w),
    case(aten.conj_physical.default, "complex", lambda x: vr(torch.conj_physical(vc(x))), _z),
    case(aten.abs.default, "complex", lambda x: torch.abs(vc(x)), _z),
    case(aten.abs.default, "complex-f64", lambda x: torch.abs(vc(x)), randn(7, 2, dtype=f64)),
    case(aten.angle.default, "complex", lambda x: torch.angle(vc(x)), _z),
    case(aten.real.default, "complex", lambda x: vc(x).real * 3, _z),
    case(aten.imag.default, "complex", lambda x: vc(x).imag * 3, _z),
    case(_vr, "real-part-high", lambda x: vc(x).real * 3, _z, decomposition="high", expect=[_vr, aten.select.int]),
    case(_vr, "imag-part-high", lambda x: vc(x).imag * 3, _z, decomposition="high", expect=[_vr, aten.select.int]),
    case(aten.to.dtype, "real-to-complex", lambda x: vr(x.to(C64)), randn(3, 4)),
    case(aten.to.dtype, "c64-to-c128", lambda x: vr(vc(x).to(C128)), _z),
    case(aten.to.dtype, "f64-to-c64", lambda x: vr(x.to(C64)), randn(5, dtype=f64)),
    case(aten._to_copy.default, "real-to-complex", lambda x: vr(x.to(C64)), randn(3, 4), decomposition="core"),
    case(aten._to_copy.default, "c64-to-c128", lambda x: vr(vc(x).to(C128)), _z, decomposition="core"),
]

# -- shape ops
CASES += [
    case(aten.view.default, "complex", lambda x: vr(vc(x).view(3, 8)), _z),
    case(aten.reshape.default, "complex-f64", lambda x: vr(vc(x).reshape(-1)), randn(2, 3, 2, dtype=f64),
         decomposition="high", expect=[aten.view.default]),
    case(aten.permute.default, "complex", lambda x: vr(vc(x).permute(2, 0, 1)), _z),
    case(aten.transpose.int, "complex", lambda x: vr(vc(x).transpose(0, 2)), _z),
    case(aten.t.default, "complex", lambda x: vr(vc(x).t()), randn(3, 4, 2)),
    case(aten.slice.Tensor, "complex", lambda x: vr(vc(x)[:, 1:3]), _z),
    case(aten.slice.Tensor, "step-negative-start", lambda x: vr(vc(x)[..., -3::2]), _z),
    case(aten.select.int, "complex", lambda x: vr(vc(x)[1, -1]), _z),
    case(aten.cat.default, "complex", lambda x, y: vr(torch.cat([vc(x), vc(y)], dim=1)), randn(2, 3, 2),
         randn(2, 5, 2)),
    case(aten.cat.default, "with-real", lambda x, y: vr(torch.cat([vc(x), y], dim=0)), randn(2, 3, 2),
         randn(4, 3)),
    case(aten.stack.default, "complex", lambda x, y: vr(torch.stack([vc(x), vc(y)], dim=-1)), randn(2, 3, 2),
         randn(2, 3, 2)),
    case(aten.unsqueeze.default, "complex", lambda x: vr(vc(x).unsqueeze(1)), _z),
    case(aten.squeeze.dim, "complex", lambda x: vr(vc(x).squeeze(1)), randn(3, 1, 4, 2)),
    case(aten.pad.default, "complex", lambda x: vr(torch.nn.functional.pad(vc(x), (1, 2, 0, 1))), _z),
    case(aten.pad.default, "complex-value-crop", lambda x: vr(torch.nn.functional.pad(vc(x), (-1, 2), value=1.5)),
         _z),
    case(aten.constant_pad_nd.default, "complex-value", lambda x: vr(torch.nn.functional.pad(vc(x), (0, 1, 2, 0),
         value=-2.0)), _z, decomposition="core"),
    case(aten.expand.default, "complex", lambda x: vr(vc(x).expand(2, 3, 4)), randn(3, 1, 2)),
    case(aten.sum.dim_IntList, "complex", lambda x: vr(vc(x).sum(1)), _z),
    case(aten.sum.default, "complex", lambda x: vr(vc(x).sum()), _z),
    case(aten.mean.dim, "complex-keepdim", lambda x: vr(vc(x).mean((0, 2), keepdim=True)), _z),
]

# -- torch.fft's ops (aten keeps them whole)
for _n in (1, 2, 7, 8, 12, 100, 128):
    CASES += [
        case(aten.fft_fft.default, f"real-n{_n}", lambda x: vr(fft.fft(x)), randn(3, _n)),
        case(aten.fft_fft.default, f"complex-n{_n}", lambda x: vr(fft.fft(vc(x))), randn(2, _n, 2)),
        case(aten.fft_rfft.default, f"n{_n}", lambda x: vr(fft.rfft(x)), randn(3, _n)),
        case(aten.fft_ifft.default, f"n{_n}", lambda x: vr(fft.ifft(vc(x))), randn(2, _n, 2)),
    ]
for _l in (2, 5, 8, 51, 65):  # irfft's default n = 2 (L - 1): 2, 8, 14, 100, 128
    CASES += [case(aten.fft_irfft.default, f"L{_l}", lambda x: fft.irfft(vc(x)), randn(3, _l, 2))]
for _norm in ("forward", "ortho", "backward"):
    CASES += [
        case(aten.fft_fft.default, f"norm-{_norm}", lambda x, m=_norm: vr(fft.fft(vc(x), norm=m)), randn(3, 12, 2)),
        case(aten.fft_ifft.default, f"norm-{_norm}", lambda x, m=_norm: vr(fft.ifft(vc(x), norm=m)), randn(3, 7, 2)),
        case(aten.fft_rfft.default, f"norm-{_norm}", lambda x, m=_norm: vr(fft.rfft(x, norm=m)), randn(3, 9)),
        case(aten.fft_irfft.default, f"norm-{_norm}", lambda x, m=_norm: fft.irfft(vc(x), n=9, norm=m),
             randn(3, 5, 2)),
        case(aten.fft_hfft.default, f"norm-{_norm}", lambda x, m=_norm: fft.hfft(vc(x), norm=m), randn(3, 6, 2)),
        case(aten.fft_ihfft.default, f"norm-{_norm}", lambda x, m=_norm: vr(fft.ihfft(x, norm=m).resolve_conj()),
             randn(3, 10)),
        case(aten.fft_fftn.default, f"norm-{_norm}", lambda x, m=_norm: vr(fft.fftn(x, norm=m)), randn(3, 4, 5)),
        case(aten.fft_irfftn.default, f"norm-{_norm}", lambda x, m=_norm: fft.irfftn(vc(x), norm=m),
             randn(3, 4, 5, 2)),
    ]
CASES += [
    case(aten.fft_fft.default, "n-pad", lambda x: vr(fft.fft(x, n=16)), randn(3, 10)),
    case(aten.fft_fft.default, "n-trim", lambda x: vr(fft.fft(vc(x), n=5)), randn(3, 12, 2)),
    case(aten.fft_fft.default, "dim0", lambda x: vr(fft.fft(x, dim=0)), randn(6, 3, 2)),
    case(aten.fft_fft.default, "dim1-of-3", lambda x: vr(fft.fft(vc(x), dim=1)), randn(2, 7, 3, 2)),
    case(aten.fft_fft.default, "f64", lambda x: vr(fft.fft(x)), randn(4, 12, dtype=f64)),
    case(aten.fft_rfft.default, "n-pad-odd", lambda x: vr(fft.rfft(x, n=15)), randn(2, 6)),
    case(aten.fft_rfft.default, "n-trim", lambda x: vr(fft.rfft(x, n=4)), randn(2, 11)),
    case(aten.fft_rfft.default, "dim0-f64", lambda x: vr(fft.rfft(x, dim=0)), randn(10, 3, dtype=f64)),
    case(aten.fft_irfft.default, "n-odd", lambda x: fft.irfft(vc(x), n=7), randn(2, 4, 2)),
    case(aten.fft_irfft.default, "n-larger", lambda x: fft.irfft(vc(x), n=20), randn(2, 5, 2)),
    case(aten.fft_irfft.default, "n-smaller", lambda x: fft.irfft(vc(x), n=4), randn(2, 8, 2)),
    case(aten.fft_irfft.default, "n1", lambda x: fft.irfft(vc(x), n=1), randn(2, 3, 2)),
    case(aten.fft_irfft.default, "dim0-f64", lambda x: fft.irfft(vc(x), dim=0), randn(6, 3, 2, dtype=f64)),
    case(aten.fft_irfft.default, "real-input", lambda x: fft.irfft(x, n=10), randn(3, 6)),
    case(aten.fft_rfft.default, "roundtrip", lambda x: fft.irfft(fft.rfft(x), n=13), randn(2, 13),
         expect=[aten.fft_rfft.default, aten.fft_irfft.default]),
    case(aten.fft_hfft.default, "n-odd", lambda x: fft.hfft(vc(x), n=9), randn(2, 5, 2)),
    case(aten.fft_ihfft.default, "n-pad", lambda x: vr(fft.ihfft(x, n=12).resolve_conj()), randn(2, 7)),
    case(aten.fft_fftn.default, "s-and-dim", lambda x: vr(fft.fftn(vc(x), s=(6, 3), dim=(0, 2))), randn(4, 3, 5, 2)),
    case(aten.fft_fftn.default, "s-only", lambda x: vr(fft.fftn(x, s=(3, 8))), randn(2, 4, 5)),
    case(aten.fft_fftn.default, "fnet", lambda x: fft.fftn(x, dim=(1, 2)).real, randn(2, 12, 20),
         expect=[aten.fft_fftn.default, aten.real.default]),
    case(aten.fft_fft.default, "fnet-nested", lambda x: fft.fft(fft.fft(x, dim=-1), dim=-2).real, randn(2, 7, 16),
         expect=[aten.fft_fft.default, aten.real.default]),
    case(aten.fft_ifftn.default, "all-dims", lambda x: vr(fft.ifftn(vc(x))), randn(3, 4, 5, 2)),
    case(aten.fft_fft2.default, "default", lambda x: vr(fft.fft2(x)), randn(2, 5, 6)),
    case(aten.fft_ifft2.default, "s", lambda x: vr(fft.ifft2(vc(x), s=(4, 9))), randn(2, 5, 6, 2)),
    case(aten.fft_rfftn.default, "all-dims", lambda x: vr(fft.rfftn(x)), randn(3, 4, 7)),
    case(aten.fft_rfft2.default, "ortho", lambda x: vr(fft.rfft2(x, norm="ortho")), randn(2, 6, 9)),
    case(aten.fft_irfftn.default, "s", lambda x: fft.irfftn(vc(x), s=(5, 7)), randn(2, 4, 4, 2)),
    case(aten.fft_irfft2.default, "default", lambda x: fft.irfft2(vc(x)), randn(2, 6, 5, 2)),
    case(aten.fft_hfftn.default, "default", lambda x: fft.hfftn(vc(x)), randn(3, 4, 5, 2)),
    case(aten.fft_hfft2.default, "s-ortho", lambda x: fft.hfft2(vc(x), s=(5, 7), norm="ortho"), randn(2, 4, 4, 2)),
    case(aten.fft_ihfftn.default, "default", lambda x: vr(fft.ihfftn(x).resolve_conj()), randn(3, 4, 6)),
    case(aten.fft_ihfft2.default, "forward", lambda x: vr(fft.ihfft2(x, norm="forward").resolve_conj()),
         randn(2, 5, 7)),
    # an FFT of constants: the fold pass runs the kernel at compile time
    case(aten.fft_rfft.default, "folded-constant", lambda x: x + vr(fft.rfft(torch.arange(10.0).cos())),
         randn(6, 2)),
]

# -- the primitives (high and core decompose torch.fft's ops into them)
_r2c, _c2c, _c2r = aten._fft_r2c.default, aten._fft_c2c.default, aten._fft_c2r.default
for _d in ("high", "core"):
    CASES += [
        case(_r2c, f"{_d}-rfft-n100", lambda x: vr(fft.rfft(x)), randn(3, 100), decomposition=_d),
        case(_r2c, f"{_d}-fft-of-real", lambda x: vr(fft.fft(x)), randn(3, 12), decomposition=_d),
        case(_c2c, f"{_d}-fft-n128", lambda x: vr(fft.fft(vc(x))), randn(2, 128, 2), decomposition=_d),
        case(_c2c, f"{_d}-ifft-ortho-n7", lambda x: vr(fft.ifft(vc(x), norm="ortho")), randn(2, 7, 2),
             decomposition=_d),
        case(_c2r, f"{_d}-irfft-n-trim", lambda x: fft.irfft(vc(x), n=6), randn(2, 8, 2), decomposition=_d),
        case(_c2r, f"{_d}-irfft-n-pad-forward", lambda x: fft.irfft(vc(x), n=11, norm="forward"), randn(2, 3, 2),
             decomposition=_d),
    ]
CASES += [
    case(_r2c, "core-rfft2", lambda x: vr(fft.rfft2(x)), randn(2, 6, 9), decomposition="core"),
    case(_r2c, "core-rfftn-forward", lambda x: vr(fft.rfftn(x, norm="forward")), randn(3, 4, 5), decomposition="core"),
    case(_c2c, "core-fft2-ortho", lambda x: vr(fft.fft2(vc(x), norm="ortho")), randn(3, 5, 4, 2), decomposition="core"),
    case(_c2c, "core-fftn-real-input", lambda x: vr(fft.fftn(x)), randn(3, 4, 6), decomposition="core"),
    case(_c2r, "core-irfft2", lambda x: fft.irfft2(vc(x)), randn(2, 6, 5, 2), decomposition="core"),
    case(_c2r, "core-irfftn-s-f64", lambda x: fft.irfftn(vc(x), s=(3, 8)), randn(3, 4, 5, 2, dtype=f64),
         decomposition="core"),
    case(_c2r, "core-hfft", lambda x: fft.hfft(vc(x)), randn(2, 6, 2), decomposition="core"),
    case(_r2c, "core-ihfft", lambda x: vr(fft.ihfft(x).resolve_conj()), randn(2, 9),
         decomposition="core"),
    case(_c2c, "core-fnet", lambda x: fft.fftn(x, dim=(1, 2)).real, randn(1, 8, 32), decomposition="core",
         expect=[_c2c, _vr]),
    # a c2c of a real tensor cast to complex starts with a full r2c of the real values
    case(_c2c, "core-promoted-f64-inverse", lambda x: vr(fft.ifftn(x.to(C64), dim=(0, 2))), randn(3, 4, 10, dtype=f64),
         decomposition="core", expect=[_c2c, aten._to_copy.default]),
    case(_c2c, "core-promoted-also-read", lambda x: (lambda z: vr(fft.fft(z, dim=0) + z))(x.to(C64)), randn(5, 3),
         decomposition="core", expect=[_c2c, aten._to_copy.default]),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
