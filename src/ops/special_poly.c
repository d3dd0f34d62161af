/*
 * special_poly.c — the orthogonal polynomials of torch.special: Chebyshev
 * T, U, V, W and their shifted forms, Hermite H (physicists') and He
 * (probabilists'), Laguerre L and Legendre P, each p(x, n) of a float x and
 * a degree n given as a float (torch promotes both to one float dtype and
 * truncates n to int64).
 *
 * Unlike the other special functions (special.h) these are not computed in
 * double and rounded: torch's result *is* its float computation — a
 * three-term recurrence whose rounding errors grow with n, trigonometric
 * closed forms for larger n inside (-1, 1), and exact special cases at n < 0
 * and the ends of the interval — and the float value of a degree-9 Legendre
 * polynomial near a root differs from the true value in most of its digits.
 * So rlx evaluates torch's algorithm in torch's type, branch for branch and
 * operation for operation (special_poly.inc), with the same libm, and gets
 * torch's bits.
 *
 * Bound: a recurrence runs up to n steps, stopping early only on NaN; torch
 * with n = 2^40 and x = 0.5 runs for hours. rlx stops an element after
 * RLX_POLY_MAX_STEPS steps and reports it (rlx_special_poly's *steps).
 */
#include <stdint.h>
#include <tgmath.h>

#include "ops/special.h"

#define T float
#define NAME(f) f##_f32
#define HLIMIT 128
#include "ops/special_poly.inc"
#undef T
#undef NAME
#undef HLIMIT

#define T double
#define NAME(f) f##_f64
#define HLIMIT 512
#include "ops/special_poly.inc"
#undef T
#undef NAME
#undef HLIMIT

bool rlx_binary_is_poly(rlx_binary_kind k) { return k >= RLX_BINARY_CHEBYSHEV_T && k <= RLX_BINARY_LEGENDRE_P; }

double rlx_special_poly(rlx_binary_kind k, double x, double n, bool f64, int64_t *steps) {
  *steps = 0;
  return f64 ? poly_f64(k, x, n, steps) : (double)poly_f32(k, (float)x, (float)n, steps);
}
