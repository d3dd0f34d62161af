/*
 * special_erf.c — the error function family in double: erfinv, erfcx
 * (exp(x^2) erfc(x)), the normal distribution ndtr, its logarithm
 * log_ndtr and its inverse ndtri. special.h states the contract.
 */
#include <float.h>
#include <math.h>

#include "ops/special.h"

#define EPS DBL_EPSILON
#define INV_SQRT_2PI 0.39894228040143267794 /* 1 / sqrt(2 pi) */

/* exp(s x^2), s = 1 or -1/2, with x^2 split exactly into hi + lo: exp of
 * the rounded square alone would be off by up to x^2 ulp (700 near x = 26). */
static double exp_sq(double x, double s) {
  double hi = x * x;
  if (!(hi <= 1e300)) return exp(s * hi); /* over/underflows anyway; also +-inf and NaN */
  double lo = fma(x, x, -hi);
  return exp(s * hi) * (1 + s * lo);
}

/* erfinv by a rational first guess refined with two Newton steps. */
double rlx_special_erfinv(double y) {
  if (y <= -1) return y == -1 ? -INFINITY : NAN;
  if (y >= 1) return y == 1 ? INFINITY : NAN;
  double w = -log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08;
    x = 3.43273939e-07 + x * w; x = -3.5233877e-06 + x * w; x = -4.39150654e-06 + x * w;
    x = 0.00021858087 + x * w; x = -0.00125372503 + x * w; x = -0.00417768164 + x * w;
    x = 0.246640727 + x * w; x = 1.50140941 + x * w;
  } else {
    w = sqrt(w) - 3.0;
    x = -0.000200214257;
    x = 0.000100950558 + x * w; x = 0.00134934322 + x * w; x = -0.00367342844 + x * w;
    x = 0.00573950773 + x * w; x = -0.0076224613 + x * w; x = 0.00943887047 + x * w;
    x = 1.00167406 + x * w; x = 2.83297682 + x * w;
  }
  x *= y;
  for (int i = 0; i < 2; i++) x -= (erf(x) - y) / (2.0 / sqrt(M_PI) * exp(-x * x));
  return x;
}

double rlx_special_erfcx(double x) {
  if (isnan(x)) return x;
  if (x < 0) /* erfcx(x) = 2 exp(x^2) - erfcx(-x); torch returns inf below -26.7, where it overflows anyway */
    return x < -26.7 ? INFINITY : 2 * exp_sq(x, 1) - rlx_special_erfcx(-x);
  if (x < 26) return exp_sq(x, 1) * erfc(x);
  /* erfc underflows from here: the asymptotic series
   * 1/(x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k, below 1e-20 within 12
   * terms at x >= 26 (2x^2 overflowing to inf leaves its first term, and
   * erfcx(inf) = 0) */
  double z = 1 / (2 * x * x), term = 1, sum = 1;
  for (int k = 1; k < 30; k++) {
    term *= -(2 * k - 1) * z;
    sum += term;
    if (fabs(term) <= EPS * sum) break;
  }
  return 0.5 * M_2_SQRTPI / x * sum;
}

/* Phi(x) = erfc(-x / sqrt 2) / 2; below -1 as erfcx(-x / sqrt 2) e^(-x^2/2) / 2,
 * whose exponent is exact (erfc's argument x / sqrt 2 carries a rounding
 * error that its steep tail magnifies). torch computes (1 + erf(x / sqrt 2)) / 2,
 * which in float is 0 below x = -5.9. */
double rlx_special_ndtr(double x) {
  if (x < -1) return 0.5 * rlx_special_erfcx(-x * M_SQRT1_2) * exp_sq(x, -0.5);
  return 0.5 * erfc(-x * M_SQRT1_2);
}

double rlx_special_log_ndtr(double x) {
  if (x < -1) return log(0.5 * rlx_special_erfcx(-x * M_SQRT1_2)) - 0.5 * x * x;
  return log1p(-0.5 * erfc(x * M_SQRT1_2));
}

/* phi(x) / Phi(x), the derivative of log Phi(x). */
static double inv_mills(double x) {
  if (x < -1) return M_SQRT2 / sqrt(M_PI) / rlx_special_erfcx(-x * M_SQRT1_2);
  return INV_SQRT_2PI * exp_sq(x, -0.5) / rlx_special_ndtr(x);
}

/* ndtri(q) for 0 < q <= 1/2. */
static double ndtri_lower(double q) {
  if (q > 0.135) { /* sqrt 2 erfinv(2q - 1), then a Newton step on Phi itself */
    double x = M_SQRT2 * rlx_special_erfinv(2 * q - 1);
    return x - (0.5 * erf(x * M_SQRT1_2) - (q - 0.5)) / (INV_SQRT_2PI * exp_sq(x, -0.5));
  }
  /* Newton on log Phi(x) = log q: log Phi is concave and increasing, so the
   * iteration converges from anywhere, quadratically; the start is the
   * tail's asymptotic solution */
  double lq = log(q), l = -2 * lq;
  double x = -sqrt(l - log(l) - log(2 * M_PI));
  for (int i = 0; i < 60; i++) {
    double step = (rlx_special_log_ndtr(x) - lq) / inv_mills(x);
    x -= step;
    if (fabs(step) <= 2 * EPS * fabs(x)) break;
  }
  return x;
}

double rlx_special_ndtri(double p) {
  if (p == 0) return -INFINITY;
  if (p == 1) return INFINITY;
  if (!(p > 0 && p < 1)) return NAN; /* outside [0, 1], and NaN */
  return p > 0.5 ? -ndtri_lower(1.0 - p) : ndtri_lower(p); /* 1 - p is exact there */
}
