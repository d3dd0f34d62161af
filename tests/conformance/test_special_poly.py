"""Conformance: torch.special's orthogonal polynomials p(x, n) and the Airy function Ai.

Each polynomial (Chebyshev T U V W, shifted Chebyshev T U V W, Hermite H and
He, Laguerre L, Legendre P) gets:

  f32-int-n      x in the interval of orthogonality (a little past its ends),
                 int64 degrees -2..30 broadcast against it (a column against
                 a row): the recurrence, the closed forms torch uses for
                 larger n inside the interval, n < 0
  f32-wide       |x| up to 4 (the recurrence outside the interval), float n
                 with fractions (torch truncates)
  f32-edges      x in {0, +-0.5, +-1, 2, +-inf, NaN} against n in {-1, 0, 1,
                 2, 5, 7, 9, 12, 130, NaN, inf}: the ends, which the closed
                 forms special-case, Hermite's degree limit (128 in float)
  f64 / f64-edges  the same in double (Hermite's limit is 512)
  x-scalar / n-scalar   the Scalar overloads
  i64 / bool     integer and bool x and n, promoted to float32 as torch does
  empty          a zero-size dim

tests/py/test_special_poly.py holds the polynomials to torch's bits over a
large grid; this file checks the lowering of every overload and dtype.
"""

import pytest
import torch

from cases import INF, NAN, aten, case, case_id, f64, ints, seed, uniform

seed("test_special_poly")

# op -> (x lo, x hi) of its interval of orthogonality, widened a little
POLYS = {
    aten.special_chebyshev_polynomial_t: (-1.1, 1.1),
    aten.special_chebyshev_polynomial_u: (-1.1, 1.1),
    aten.special_chebyshev_polynomial_v: (-1.1, 1.1),
    aten.special_chebyshev_polynomial_w: (-1.1, 1.1),
    aten.special_shifted_chebyshev_polynomial_t: (-0.05, 1.05),
    aten.special_shifted_chebyshev_polynomial_u: (-0.05, 1.05),
    aten.special_shifted_chebyshev_polynomial_v: (-0.05, 1.05),
    aten.special_shifted_chebyshev_polynomial_w: (-0.05, 1.05),
    aten.special_hermite_polynomial_h: (-3, 3),
    aten.special_hermite_polynomial_he: (-4, 4),
    aten.special_laguerre_polynomial_l: (0, 12),
    aten.special_legendre_polynomial_p: (-1.1, 1.1),
}
X_EDGES = torch.tensor([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, INF, -INF, NAN])
N_EDGES = torch.tensor([-1.0, 0.0, 1.0, 2.0, 5.0, 7.0, 9.0, 12.0, 130.0, NAN, INF])

CASES = []
for _op, (_lo, _hi) in POLYS.items():
    _d = _op.default
    CASES += [
        case(_d, "f32-int-n", lambda x, n, f=_d: f(x, n), uniform(_lo, _hi, 7, 1), ints(-2, 31, 1, 9)),
        case(_d, "f32-wide", lambda x, n, f=_d: f(x, n), uniform(-4, 4, 5, 6), uniform(-1, 14, 5, 6)),
        case(_d, "f32-edges", lambda x, n, f=_d: f(x, n), X_EDGES[:, None], N_EDGES[None, :]),
        case(_d, "f64", lambda x, n, f=_d: f(x, n), uniform(_lo, _hi, 6, 1, dtype=f64), ints(-1, 40, 8).to(f64)),
        case(_d, "f64-edges", lambda x, n, f=_d: f(x, n), X_EDGES[:, None].to(f64),
             torch.tensor([-1.0, 0.0, 2.0, 9.0, 130.0, 513.0, NAN], dtype=f64)[None, :]),
        case(_op.x_scalar, "x-scalar", lambda n, f=_op.x_scalar: f(0.75, n), ints(0, 12, 10)),
        case(_op.n_scalar, "n-scalar", lambda x, f=_op.n_scalar: f(x, 11), uniform(_lo, _hi, 3, 4)),
        case(_op.n_scalar, "n-scalar-f64", lambda x, f=_op.n_scalar: f(x, 3.5), uniform(_lo, _hi, 5, dtype=f64)),
        case(_d, "i64", lambda x, n, f=_d: f(x, n), ints(-3, 4, 4, 3), ints(0, 6, 4, 3)),
        case(_d, "bool", lambda x, n, f=_d: f(x, n), ints(0, 2, 6).bool(), ints(0, 2, 6).bool()),
        case(_d, "empty", lambda x, n, f=_d: f(x, n), uniform(_lo, _hi, 0, 3), ints(0, 5, 3)),
    ]

# Ai: the Maclaurin region, both asymptotic regions (torch's phase below
# -2.09), the float underflow of torch's exp(zeta) near x = 26, the edges.
_ai = aten.special_airy_ai.default
CASES += [
    case(_ai, "f32-permuted", lambda x: _ai(x.permute(1, 0)), uniform(-12, 12, 9, 7)),
    case(_ai, "f32-negative-large", lambda x: _ai(x), uniform(-400, -9, 40)),
    case(_ai, "f32-edges", lambda x: _ai(x), torch.tensor([0.0, -0.0, 2.09, -2.09, 2.0, -9.5, 25.0, 26.0, 103.0,
                                                              104.0, 1e-30, -1e30, 3e38, INF, -INF, NAN])),
    case(_ai, "f64", lambda x: _ai(x), uniform(-30, 40, 6, 8, dtype=f64)),
    case(_ai, "f64-edges", lambda x: _ai(x), torch.tensor([0.0, 2.09, -2.09, 103.0, 103.9, -1e6, -1e250, INF, NAN],
                                                            dtype=f64)),
    case(_ai, "i64", lambda x: _ai(x), ints(-6, 6, 3, 4)),
    case(_ai, "empty", lambda x: _ai(x), uniform(-3, 3, 2, 0)),
    case(_ai, "fused", lambda x: _ai(x * 2.0) - x, uniform(-5, 5, 6, 11)),
    case(_ai, "dynamic", lambda x: _ai(x), uniform(-5, 5, 6, 3), dynamic=[(0, 0, "B")]),
    case(aten.special_legendre_polynomial_p.default, "dynamic",
         lambda x, n: aten.special_legendre_polynomial_p.default(x, n), uniform(-1, 1, 5, 1), ints(0, 12, 1, 4),
         dynamic=[(0, 0, "B")]),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
