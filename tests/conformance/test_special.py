"""Conformance: special functions (torch.special and their aten spellings).

Unary ops get, each where eager torch defines the op for the dtype:

  f32-permuted  values in the op's domain, non-contiguous through a permute
  f32-edges     0, -0, +-1, +-2, -2.5, +-0.5, +-1e-30, 30, 100, +-inf, NaN:
                the poles, zeros and limits torch defines
  f32-huge      +-1e10, +-1e30, +-3e38 (overflow, argument reduction)
  f64 / f64-edges / f64-huge   the same in double (huge: up to 1e300)
  f16 / bf16    through a strided slice
  i64           integers, promoted to float as torch does
  empty, 0d     a zero-size dim, a 0-dim tensor

Binary ops get grids of edge values against each other by broadcasting (a
column against a row), random values in the domain, dtype promotion and the
Python-scalar overloads. Ops whose results torch computes bit-exactly
(nextafter, gcd, lcm, frexp's exponent) also get cases whose outputs are
bools or integers, which rlx verify compares exactly. Cases named "fused"
are chains that rlx's elementwise fusion pass turns into one fused node.
"""

import pytest
import torch

from cases import (INF, NAN, aten, bf16, case, case_id, f16, f64, i32, i64, i8, ints, u8, randn, seed,
                   torch_accepts, uniform)

seed("test_special")

EDGES = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, -2.5, 0.5, -0.5, 1e-30, -1e-30, 30.0, 100.0, INF, -INF, NAN]
HUGE = [1e10, -1e10, 1e30, -1e30, 3e38, -3e38]
HUGE64 = [1e10, -1e10, 1e30, -1e30, 1e100, -1e100, 1e300, -1e300]

# op -> (domain lo, domain hi) for the random inputs
UNARY = {
    aten.lgamma.default: (-6, 12),
    aten.special_gammaln.default: (0.1, 20),
    aten.digamma.default: (-6, 12),
    aten.special_digamma.default: (0.1, 20),
    aten.special_psi.default: (-3.5, 8),
    aten.special_erfcx.default: (-5, 30),
    aten.special_ndtr.default: (-9, 6),
    aten.special_log_ndtr.default: (-40, 8),
    aten.special_ndtri.default: (0, 1),
    aten.i0.default: (-20, 20),
    aten.special_i0.default: (-30, 30),
    aten.special_i0e.default: (-40, 40),
    aten.special_i1.default: (-20, 20),
    aten.special_i1e.default: (-40, 40),
    aten.special_modified_bessel_i0.default: (-30, 30),
    aten.special_modified_bessel_i1.default: (-30, 30),
    aten.special_modified_bessel_k0.default: (0.01, 30),
    aten.special_modified_bessel_k1.default: (0.01, 30),
    aten.special_scaled_modified_bessel_k0.default: (0.01, 60),
    aten.special_scaled_modified_bessel_k1.default: (0.01, 60),
    aten.special_bessel_j0.default: (-40, 40),
    aten.special_bessel_j1.default: (-40, 40),
    aten.special_bessel_y0.default: (0.01, 40),
    aten.special_bessel_y1.default: (0.05, 40),
    aten.special_spherical_bessel_j0.default: (-30, 30),
    aten.special_entr.default: (-1, 5),
    aten.sinc.default: (-6, 6),
    aten.special_sinc.default: (-6, 6),
    aten.angle.default: (-5, 5),
}


# torch's own float64 Bessel J and Y are off by up to 8.6e-7 (absolute)
# just above x = 5, where its asymptotic form starts (measured against
# mpmath on a 0.01 grid over (0, 40): j0 3.7e-7, j1 4.6e-7, y0 2.0e-7,
# y1 8.6e-7 at x = 5.009; below 1e-8 elsewhere); rlx's, libm's, are exact to
# a few ulp. The f64 cases over that range compare with this bar instead of
# float64's 1e-7.
F64_ATOL = {op: 2e-6 for op in (aten.special_bessel_j0.default, aten.special_bessel_j1.default,
                                 aten.special_bessel_y0.default, aten.special_bessel_y1.default)}


def unary_battery(op, lo, hi):
    f = op
    out = []
    if torch_accepts(f, uniform(lo, hi, 2)):
        out += [
            case(op, "f32-permuted", lambda x: f(x.permute(2, 0, 1)), uniform(lo, hi, 4, 5, 6)),
            case(op, "f32-edges", lambda x: f(x), torch.tensor(EDGES)),
            case(op, "f32-huge", lambda x: f(x), torch.tensor(HUGE)),
            case(op, "f64", lambda x: f(x), uniform(lo, hi, 7, 9, dtype=f64), atol=F64_ATOL.get(op)),
            case(op, "f64-edges", lambda x: f(x), torch.tensor(EDGES, dtype=f64)),
            case(op, "f64-huge", lambda x: f(x), torch.tensor(HUGE64, dtype=f64)),
            case(op, "empty", lambda x: f(x), uniform(lo, hi, 0, 3)),
            case(op, "0d", lambda x: f(x), uniform(lo, hi)),
        ]
    for dt, tag in ((f16, "f16"), (bf16, "bf16")):
        x = uniform(lo, hi, 6, 10, dtype=dt)
        if torch_accepts(f, x):
            out.append(case(op, f"{tag}-strided", lambda x: f(x[:, ::2]), x))
    x = ints(int(lo), int(hi) + 1, 3, 5)
    if torch_accepts(f, x):
        out.append(case(op, "i64", lambda x: f(x.t()), x))
    return out


CASES = []
for _op, (_lo, _hi) in UNARY.items():
    CASES += unary_battery(_op, _lo, _hi)

# Values right next to the poles and zeros, where torch's float results
# depend on how it forms pi x (sinc, polygamma) or on the rounding of
# cancelling terms.
_near_int = torch.tensor([-3.0, -2.9999998, -2.0000002, -1.0, -0.99999994, 1.0, 1.0000001, 2.0, 3.0, 1e6, 1e6 + 0.5])
CASES += [
    case(aten.sinc.default, "near-integers", lambda x: aten.sinc.default(x), _near_int),
    case(aten.sinc.default, "f16-edges", lambda x: aten.sinc.default(x), torch.tensor(EDGES).to(f16)),
    case(aten.digamma.default, "near-poles", lambda x: aten.digamma.default(x), _near_int),
    case(aten.lgamma.default, "near-poles-f64", lambda x: aten.lgamma.default(x), _near_int.to(f64)),
    # glibc's lgammaf, torch's float lgamma, overflows from 4.0371103e36 although lgamma stays finite to 4.085e36
    case(aten.lgamma.default, "f32-overflow-edge", lambda x: aten.lgamma.default(x),
         torch.tensor([4.03711e36, 4.0371103e36, 4.05e36, -4.05e36])),
    case(aten.special_ndtri.default, "tails", lambda x: aten.special_ndtri.default(x),
         torch.tensor([1e-38, 1e-30, 1e-10, 1e-3, 0.135, 0.5, 0.865, 0.999, 1 - 2**-24, -0.1, 1.1, 1.0, 0.0])),
    case(aten.special_ndtri.default, "f64-tails", lambda x: aten.special_ndtri.default(x),
         torch.tensor([1e-300, 1e-100, 1e-20, 1e-3, 0.135, 0.5, 0.865, 1 - 1e-15, 5e-324], dtype=f64)),
    case(aten.special_log_ndtr.default, "tails", lambda x: aten.special_log_ndtr.default(x),
         torch.tensor([-1e3, -100.0, -38.0, -10.0, -1.0, -0.999, 0.0, 5.0, 12.0, 40.0])),
    case(aten.special_erfcx.default, "large", lambda x: aten.special_erfcx.default(x),
         torch.tensor([-26.0, -9.0, 25.9, 26.1, 50.0, 1e4, 5e7, 1e20])),
    case(aten.i0.default, "f32-exp-overflow", lambda x: aten.i0.default(x),
         torch.tensor([88.0, 88.72283, 88.72284, 90.0, -90.0, 95.0])),
    case(aten.special_i1.default, "f32-exp-overflow", lambda x: aten.special_i1.default(x),
         torch.tensor([88.0, 88.72283, 88.72284, 90.0, -90.0, 95.0])),
    # large arguments: torch rounds the phase x - pi/4 to the input's precision
    case(aten.special_bessel_j0.default, "phase-f32", lambda x: aten.special_bessel_j0.default(x),
         torch.tensor([20.0, 123.456, 1e4 + 0.1, 3e6, 7e7, 1.5e9])),
    case(aten.special_bessel_y1.default, "phase-f64", lambda x: aten.special_bessel_y1.default(x),
         torch.tensor([20.0, 123.456, 1e4 + 0.1, 3e6, 7e7, 1.5e9, 1e15], dtype=f64)),
]

# -- polygamma(n, x) and mvlgamma(x, p): the order is a parameter
_pg, _spg = aten.polygamma.default, aten.special_polygamma.default
for _n in (0, 1, 2, 3, 6):
    CASES += [
        case(_pg, f"n{_n}-f32", lambda x, n=_n: _pg(n, x.t()), uniform(-6, 12, 5, 7)),
        case(_pg, f"n{_n}-f32-edges", lambda x, n=_n: _pg(n, x), torch.tensor(EDGES)),
        case(_pg, f"n{_n}-f64", lambda x, n=_n: _pg(n, x), uniform(-6, 12, 4, 6, dtype=f64)),
        case(_pg, f"n{_n}-f64-edges", lambda x, n=_n: _pg(n, x), torch.tensor(EDGES, dtype=f64)),
    ]
CASES += [
    case(_pg, "n1-huge", lambda x: _pg(1, x), torch.tensor(HUGE)),
    case(_pg, "n1-near-poles", lambda x: _pg(1, x), _near_int),
    case(_pg, "n2-near-poles-f64", lambda x: _pg(2, x), _near_int.to(f64)),
    # n! overflows float from n = 35: torch's float result is inf there
    case(_pg, "n40-f32-factorial-overflow", lambda x: _pg(40, x), torch.tensor([5.0, 20.0, 100.0, 0.5])),
    case(_pg, "n40-f64", lambda x: _pg(40, x), torch.tensor([5.0, 20.0, 100.0, 0.5], dtype=f64)),
    case(_pg, "n2-i64", lambda x: _pg(2, x), ints(1, 9, 2, 3)),
    case(_pg, "n1-bf16", lambda x: _pg(1, x), uniform(0.5, 8, 3, 4, dtype=bf16)),
    case(_spg, "n3-f32", lambda x: _spg(3, x), uniform(0.2, 9, 3, 5)),
]
_mv, _smv = aten.mvlgamma.default, aten.special_multigammaln.default
CASES += [
    case(_mv, "p1-f32", lambda x: _mv(x, 1), uniform(0.01, 10, 3, 4)),
    case(_mv, "p3-f32-permuted", lambda x: _mv(x.t(), 3), uniform(1.01, 12, 4, 3)),
    case(_mv, "p5-f64", lambda x: _mv(x, 5), uniform(2.01, 30, 6, dtype=f64)),
    case(_mv, "p2-edges", lambda x: _mv(x, 2), torch.tensor([0.50001, 1.0, 1e30, INF])),
    case(_mv, "p4-i64", lambda x: _mv(x, 4), ints(2, 9, 5)),
    case(_smv, "p2-f32", lambda x: _smv(x, 2), uniform(0.6, 9, 5)),
]

# -- frexp: mantissa in the input's dtype, exponent int32 (compared exactly)
_fx = aten.frexp.Tensor
_fx_edges = torch.tensor([0.0, -0.0, 1.0, -3.0, 0.75, 1e-45, 1e-40, 3e38, INF, -INF, NAN, 6.0e-8])
CASES += [
    case(_fx, "f32", lambda x: _fx(x), randn(4, 5, scale=1e3)),
    case(_fx, "f32-edges", lambda x: _fx(x), _fx_edges),
    case(_fx, "f64-edges", lambda x: _fx(x), torch.tensor([0.0, -0.0, 5e-324, 1e-310, 1.7e308, -2.5, INF, NAN], dtype=f64)),
    case(_fx, "f16-edges", lambda x: _fx(x), _fx_edges.to(f16)),
    case(_fx, "bf16", lambda x: _fx(x[::2]), randn(8, dtype=bf16, scale=100)),
    case(_fx, "exponent-only", lambda x: _fx(x)[1], randn(3, 4, scale=1e6)),
    case(_fx, "mantissa-only-permuted", lambda x: _fx(x.t())[0], randn(3, 4, scale=1e-6)),
    case(_fx, "recombined", lambda x: (lambda m, e: m * torch.pow(2.0, e))(*_fx(x)), randn(6, scale=50)),
]

# -- binary: grids of edge values, random values, promotion, scalar overloads
_grid = torch.tensor([0.0, -0.0, 0.5, 1.0, 2.0, -1.0, -1.5, 1e-30, 30.0, 1e10, INF, -INF, NAN])


def grid(dtype=torch.float32):
    g = _grid.to(dtype)
    return g[:, None], g[None, :]


_ig, _igc = aten.igamma.default, aten.igammac.default
for _op in (_ig, _igc, aten.special_gammainc.default, aten.special_gammaincc.default):
    CASES += [
        case(_op, "f32", lambda a, x, f=_op: f(a, x), uniform(0.01, 20, 6, 7), uniform(0, 25, 6, 7)),
        case(_op, "f32-edges-grid", lambda a, x, f=_op: f(a, x), *grid()),
        case(_op, "f64-edges-grid", lambda a, x, f=_op: f(a, x), *grid(f64)),
    ]
CASES += [
    case(_ig, "f64-large-a", lambda a, x: _ig(a, x), torch.tensor([50.0, 500.0, 5e4, 2e6, 1e8, 1e12], dtype=f64)[:, None],
         torch.tensor([0.9, 0.99, 1.0, 1.001, 1.1], dtype=f64)[None, :] * torch.tensor([50.0, 500.0, 5e4, 2e6, 1e8, 1e12], dtype=f64)[:, None]),
    case(_igc, "f32-large-a", lambda a, x: _igc(a, x), torch.tensor([30.0, 300.0, 3e4, 3e6, 3e9])[:, None],
         torch.tensor([0.8, 0.999, 1.0, 1.01, 1.3])[None, :] * torch.tensor([30.0, 300.0, 3e4, 3e6, 3e9])[:, None]),
    case(_ig, "small-a", lambda a, x: _ig(a, x), torch.tensor([1e-6, 1e-3, 0.1, 0.9]), torch.tensor([0.01, 0.5, 1.5, 3.0])),
    case(_igc, "small-a-f64", lambda a, x: _igc(a, x), torch.tensor([1e-3, 0.1, 0.9], dtype=f64)[:, None],
         torch.tensor([1e-3, 0.01, 0.5, 1.5, 3.0], dtype=f64)[None, :]),
    case(_ig, "bf16", lambda a, x: _ig(a, x), uniform(0.1, 5, 4, dtype=bf16), uniform(0, 6, 3, 1, dtype=bf16)),
    case(_igc, "f16-int-promoted", lambda a, x: _igc(a, x), uniform(0.1, 5, 5, dtype=f16), ints(0, 6, 5)),
]

_zeta = aten.special_zeta
CASES += [
    case(_zeta.default, "f32", lambda x, q: _zeta.default(x, q), uniform(1.01, 30, 5, 6), uniform(0.01, 40, 5, 6)),
    case(_zeta.default, "f32-edges-grid", lambda x, q: _zeta.default(x, q), *grid()),
    case(_zeta.default, "f64-edges-grid", lambda x, q: _zeta.default(x, q), *grid(f64)),
    case(_zeta.default, "negative-q", lambda x, q: _zeta.default(x, q), torch.tensor([2.0, 3.0, 4.0, 2.5])[:, None],
         torch.tensor([-0.5, -1.5, -2.25, -10.75, -0.001])[None, :]),
    case(_zeta.default, "f64-large", lambda x, q: _zeta.default(x, q), torch.tensor([1.0001, 2.0, 40.0, 300.0], dtype=f64)[:, None],
         torch.tensor([1e-5, 1.0, 7.5, 1e5, 1e30], dtype=f64)[None, :]),
    case(_zeta.default, "i64-promoted", lambda x, q: _zeta.default(x, q), ints(2, 6, 4), ints(1, 5, 4)),
    case(_zeta.other_scalar, "q-scalar", lambda x: _zeta.other_scalar(x, 2.5), uniform(1.5, 9, 5)),
    case(_zeta.self_scalar, "x-scalar", lambda q: _zeta.self_scalar(3.0, q), uniform(0.1, 9, 5)),
]

_xl, _sxl, _x1p = aten.xlogy, aten.special_xlogy, aten.special_xlog1py
CASES += [
    case(_xl.Tensor, "f32", lambda x, y: _xl.Tensor(x, y), randn(4, 5), uniform(0, 5, 4, 5)),
    case(_xl.Tensor, "f32-edges-grid", lambda x, y: _xl.Tensor(x, y), *grid()),
    case(_xl.Tensor, "f64-edges-grid", lambda x, y: _xl.Tensor(x, y), *grid(f64)),
    case(_xl.Tensor, "i64-promoted", lambda x, y: _xl.Tensor(x, y), ints(-3, 4, 3, 4), ints(0, 5, 4)),
    case(_xl.Tensor, "f16-broadcast", lambda x, y: _xl.Tensor(x, y), uniform(-2, 2, 3, 1, dtype=f16),
         uniform(0, 4, 5, dtype=f16)),
    case(_xl.Scalar_Other, "y-scalar", lambda x: _xl.Scalar_Other(x, 3.0), randn(5)),
    case(_xl.Scalar_Self, "x-scalar", lambda y: _xl.Scalar_Self(2, y), uniform(0, 5, 5)),
    case(_sxl.default, "f32", lambda x, y: _sxl.default(x, y), randn(3, 4), uniform(0, 5, 3, 4)),
    case(_sxl.other_scalar, "y-scalar", lambda x: _sxl.other_scalar(x, 0.0), randn(5)),
    case(_x1p.default, "f32", lambda x, y: _x1p.default(x, y), randn(4, 5), uniform(-1, 5, 4, 5)),
    case(_x1p.default, "f32-edges-grid", lambda x, y: _x1p.default(x, y), *grid()),
    case(_x1p.default, "f64-edges-grid", lambda x, y: _x1p.default(x, y), *grid(f64)),
    case(_x1p.default, "bf16", lambda x, y: _x1p.default(x, y), randn(6, dtype=bf16), uniform(-0.9, 3, 6, dtype=bf16)),
    case(_x1p.self_scalar, "x-scalar", lambda y: _x1p.self_scalar(1.5, y), uniform(-0.9, 5, 5)),
]

# -- nextafter: one step in the input's own format. Besides the values, each
# case checks bits: stepping back lands exactly on x, and the step is
# nonzero where x != y (bools, compared exactly).
_na = aten.nextafter.default


def _na_exact(x, y):
    z = _na(x, y)
    return z, _na(z, x) == x, (z != x) == (x != y)


_na_x = torch.tensor([0.0, -0.0, 1.0, 1.0, -1.0, 1e-45, -1e-45, 3.4028235e38, INF, -INF, NAN, 1.0, 0.1, 2.0**-126])
_na_y = torch.tensor([-0.0, 0.0, 2.0, 0.0, -INF, 0.0, 1.0, INF, 0.0, 0.0, 1.0, NAN, 0.1, 0.0])
CASES += [
    case(_na, "f32", lambda x, y: _na_exact(x, y), randn(4, 6), randn(4, 6)),
    case(_na, "f32-edges", lambda x, y: _na(x, y), _na_x, _na_y),
    case(_na, "f32-edges-exact", lambda x, y: _na_exact(x, y)[1:], _na_x[[2, 3, 4, 5, 6, 7, 8, 12, 13]],
         _na_y[[2, 3, 4, 5, 6, 7, 8, 12, 13]]),
    case(_na, "f32-broadcast", lambda x, y: _na_exact(x, y), randn(3, 1), randn(5)),
    case(_na, "f64", lambda x, y: _na_exact(x, y), randn(4, 5, dtype=f64), randn(4, 5, dtype=f64)),
    case(_na, "f64-edges", lambda x, y: _na(x, y), torch.tensor([0.0, 5e-324, 1.7976931348623157e308, INF, 1.0, NAN], dtype=f64),
         torch.tensor([-1.0, 0.0, INF, -INF, 1.0, 0.0], dtype=f64)),
    case(_na, "f16", lambda x, y: _na_exact(x, y), randn(3, 4, dtype=f16), randn(3, 4, dtype=f16)),
    case(_na, "f16-edges", lambda x, y: _na(x, y), torch.tensor([0.0, 65504.0, INF, 6e-8, 1.0, -0.0], dtype=f16),
         torch.tensor([1.0, INF, 0.0, 0.0, -2.0, 0.0], dtype=f16)),
    case(_na, "bf16", lambda x, y: _na_exact(x, y), randn(3, 4, dtype=bf16), randn(3, 4, dtype=bf16)),
    case(_na, "fused", lambda x, y: (_na(x, y) - x) * 3.0 + y, randn(4, 8), randn(4, 8)),
]

# -- gcd / lcm: integer dtypes only; torch's own wrapping at the extremes
_gcd, _lcm = aten.gcd.default, aten.lcm.default
# gcd(-2^63, 7) is -1 in torch's arithmetic, and torch's lcm then divides
# -2^63 by -1, which traps: lcm leaves that pair out
_i64_ext = (torch.tensor([-2**63, -2**63, 2**40, 2**31 - 1, 0, 0, -12, 7, -2**63], dtype=i64),
            torch.tensor([6, 0, 3**30, 2**31 - 3, 0, -5, 18, -7, 7], dtype=i64))
for _op in (_gcd, _lcm):
    _ext = _i64_ext if _op is _gcd else (_i64_ext[0][:-1], _i64_ext[1][:-1])
    CASES += [
        case(_op, "i64", lambda a, b, f=_op: f(a, b), ints(-60, 60, 4, 5), ints(-60, 60, 4, 5)),
        case(_op, "i64-extremes", lambda a, b, f=_op: f(a, b), *_ext),
        case(_op, "i32-broadcast", lambda a, b, f=_op: f(a, b), ints(-1000, 1000, 3, 1, dtype=i32),
             ints(-1000, 1000, 4, dtype=i32)),
        case(_op, "i32-extremes", lambda a, b, f=_op: f(a, b), torch.tensor([2**31 - 1, -2**31, -2**31, 0], dtype=i32),
             torch.tensor([2**31 - 3, 1, 0, -2**31], dtype=i32)),
        case(_op, "i8-wraps", lambda a, b, f=_op: f(a, b), torch.tensor([-128, -128, 100, 127, 0, 12], dtype=i8),
             torch.tensor([0, 64, 3, 126, 0, -18], dtype=i8)),
        case(_op, "u8", lambda a, b, f=_op: f(a, b), torch.tensor([200, 0, 7, 255, 36], dtype=u8),
             torch.tensor([150, 0, 11, 254, 48], dtype=u8)),
        case(_op, "promoted-i32-i64", lambda a, b, f=_op: f(a, b), ints(1, 50, 4, dtype=i32), ints(1, 50, 4)),
        case(_op, "empty", lambda a, b, f=_op: f(a, b), ints(0, 9, 0, 3), ints(0, 9, 3)),
    ]

# -- chains that rlx fuses into one elementwise node (f32)
CASES += [
    case(aten.lgamma.default, "fused", lambda x: aten.lgamma.default(x) * 2.0 + 1.0, uniform(-4, 6, 16, 33)),
    case(aten.special_i0e.default, "fused", lambda x, y: aten.special_i0e.default(x * y) - y,
         randn(8, 20), randn(8, 20)),
    case(aten.special_bessel_j1.default, "fused", lambda x: aten.special_bessel_j1.default(x + 1.0) * x,
         uniform(-30, 300, 5, 40)),
    case(aten.special_polygamma.default, "fused", lambda x: aten.special_polygamma.default(1, x * 0.5) + x,
         uniform(-5, 5, 6, 17)),
    case(aten.igamma.default, "fused", lambda a, x: aten.igamma.default(a + 1.0, x) * a,
         uniform(0, 5, 6, 9), uniform(0, 9, 6, 9)),
    case(aten.special_xlog1py.default, "fused", lambda x, y: aten.special_xlog1py.default(x, y * y) + x,
         randn(7, 11), randn(7, 11)),
    case(aten.sinc.default, "fused", lambda x: aten.sinc.default(x * 3.0) - x, uniform(-4, 4, 9, 9)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
