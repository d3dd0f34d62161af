/*
 * special.h — the special functions behind the unary and binary reference
 * kernels (unary.c, binary.c): the gamma family (special_gamma.c), the error
 * function family (special_erf.c), the Bessel functions (special_bessel.c),
 * the Airy function (special_airy.c) and the orthogonal polynomials
 * (special_poly.c, which reproduce torch's float algorithm instead: see
 * there). Internal to src/ops/.
 *
 * Torch's CPU implementations are the specification: every function returns
 * what torch returns at the edges (poles, zeros, infinities, NaN, the
 * boundaries of the domain), and in the interior the function's value,
 * computed in double. `f64` false means the input came from a dtype below
 * f64, which torch evaluates in float: the few steps where that changes the
 * result by more than a rounding are then done as torch does them in float —
 * the argument of a periodic function (sin(pi x) in trigamma, the phase
 * x - pi/4 of the Bessel functions of the first and second kind) and an
 * intermediate that overflows float (exp(|x|) in i0 and i1, n! and the
 * Hurwitz zeta in polygamma, lgamma near FLT_MAX). Everything else torch computes in float is
 * computed here in double and rounded once, so rlx is at least as accurate
 * as torch there; docs/ops.md lists where the two differ by more than a few
 * ulp.
 */
#ifndef RLX_OPS_SPECIAL_H
#define RLX_OPS_SPECIAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/params.h"

/* ---- gamma family (special_gamma.c) ---- */
double rlx_special_lgamma(double x, bool f64);
double rlx_special_digamma(double x);
/* polygamma(n, x) for n >= 0 (n = 0: digamma, n = 1: trigamma). */
double rlx_special_polygamma(double n, double x, bool f64);
/* The multivariate log-gamma of order p >= 1 (no domain check: the kernel
 * refuses x <= (p - 1) / 2 as torch does). */
double rlx_special_mvlgamma(double x, double p, bool f64);
/* Hurwitz zeta(x, q) = sum over k >= 0 of (q + k)^-x. */
double rlx_special_zeta(double x, double q);
/* The regularized lower (P) and upper (Q) incomplete gamma functions. */
double rlx_special_igamma(double a, double x);
double rlx_special_igammac(double a, double x);

/* ---- error function family (special_erf.c) ---- */
double rlx_special_erfinv(double y);
double rlx_special_erfcx(double x);
double rlx_special_ndtr(double x);
double rlx_special_log_ndtr(double x);
double rlx_special_ndtri(double p);

/* ---- Bessel functions (special_bessel.c) ---- */
double rlx_special_i0(double x, bool f64);
double rlx_special_i0e(double x);
double rlx_special_i1(double x, bool f64);
double rlx_special_i1e(double x);
double rlx_special_k0(double x);
double rlx_special_k0e(double x);
double rlx_special_k1(double x);
double rlx_special_k1e(double x);
double rlx_special_j0(double x, bool f64);
double rlx_special_j1(double x, bool f64);
double rlx_special_y0(double x, bool f64);
double rlx_special_y1(double x, bool f64);
double rlx_special_spherical_j0(double x);

/* ---- Airy function (special_airy.c) ---- */
double rlx_special_airy_ai(double x, bool f64);

/* ---- orthogonal polynomials (special_poly.c) ----
 * p_n(x) for the binary kinds chebyshev_polynomial_t .. legendre_polynomial_p,
 * computed as torch computes it in float (f64 false) or double: the same
 * bits, not a rounding of the exact value (special_poly.c). *steps is the
 * number of recurrence steps taken; above RLX_POLY_MAX_STEPS the element
 * was not finished and the result is meaningless. */
#define RLX_POLY_MAX_STEPS (1LL << 24)
bool rlx_binary_is_poly(rlx_binary_kind k);
double rlx_special_poly(rlx_binary_kind k, double x, double n, bool f64, int64_t *steps);

#endif /* RLX_OPS_SPECIAL_H */
