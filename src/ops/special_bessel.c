/*
 * special_bessel.c — Bessel functions in double: the modified ones I0, I1,
 * K0, K1 and their exponentially scaled forms, J0, J1, Y0, Y1 (libm's,
 * with torch's phase where it differs), and the spherical j0. special.h
 * states the contract.
 *
 * I_nu: the power series up to |x| = 20, Hankel's asymptotic series above
 * (whose smallest term, about e^-2x, is below 1e-17 there). K_nu: the series
 * in log(x/2) and I_nu up to x = 1, the trapezoidal rule on
 * K_nu(x) = int_0^inf e^(-x cosh t) cosh(nu t) dt up to x = 20 (the
 * integrand is entire and decays doubly exponentially, so the rule converges
 * geometrically in 1/h), the asymptotic series above.
 */
#include <float.h>
#include <math.h>

#include "ops/special.h"

#define EPS DBL_EPSILON
#define EULER_GAMMA 0.57721566490153286061
#define FLOAT_EXP_MAX 88.72283905206835 /* log(FLT_MAX): exp overflows float above it */

/* ---- I0, I1 ---- */

/* I_nu(x) for nu = 0, 1 and 0 <= x <= 20: (x/2)^nu sum_k (x^2/4)^k / (k! (k + nu)!). */
static double i_series(int nu, double x) {
  double z = 0.25 * x * x, term = nu ? 0.5 * x : 1, sum = term;
  for (int k = 1; k < 200 && term > EPS / 2 * sum; k++) {
    term *= z / ((double)k * (k + nu));
    sum += term;
  }
  return sum;
}

/* sum_k t_k, t_0 = 1, t_k = t_(k-1) sign ((2k-1)^2 - 4 nu^2) / (8 k x):
 * Hankel's expansion of sqrt(2 pi x) e^-x I_nu(x) (sign +1) and of
 * sqrt(2x / pi) e^x K_nu(x) (sign -1), for x >= 20. */
static double hankel(int nu, double x, double sign) {
  double mu = 4.0 * nu * nu, term = 1, sum = 1;
  for (int k = 1; k < 60; k++) {
    double next = term * sign * ((2.0 * k - 1) * (2.0 * k - 1) - mu) / (8.0 * k * x);
    if (fabs(next) >= fabs(term)) break; /* the series is asymptotic: stop at its smallest term */
    term = next;
    sum += term;
    if (fabs(term) <= EPS / 2 * fabs(sum)) break;
  }
  return sum;
}

/* e^-x I_nu(x) for finite x >= 0. */
static double i_scaled(int nu, double x) {
  if (x <= 20) return i_series(nu, x) * exp(-x);
  return hankel(nu, x, 1) / sqrt(2 * M_PI * x);
}

/* I_nu(x) for finite x >= 0; as torch, exp(x) overflowing float makes the
 * float result inf although I_nu(x) itself fits below x = 91.9. */
static double i_plain(int nu, double x, bool f64) {
  if (x <= 20) return i_series(nu, x);
  if (!f64 && x > FLOAT_EXP_MAX) return INFINITY;
  return exp(x) * (hankel(nu, x, 1) / sqrt(2 * M_PI * x)); /* inf above x = 709.8, as torch's double */
}

/* torch: I0 and I1 at +-inf are NaN (inf / inf in its formula); the scaled
 * forms are 0 there. I1 and I1e are odd, with I1(-0) = +0. */
double rlx_special_i0(double x, bool f64) { return isinf(x) ? NAN : isnan(x) ? x : i_plain(0, fabs(x), f64); }
double rlx_special_i0e(double x) { return isinf(x) ? 0.0 : isnan(x) ? x : i_scaled(0, fabs(x)); }

double rlx_special_i1(double x, bool f64) {
  if (isinf(x) || isnan(x)) return NAN;
  double v = i_plain(1, fabs(x), f64);
  return x < 0 ? -v : v;
}

double rlx_special_i1e(double x) {
  if (isnan(x)) return x;
  double v = isinf(x) ? 0.0 : i_scaled(1, fabs(x));
  return x < 0 ? -v : v;
}

/* ---- K0, K1 ---- */

/* K_nu(x) for 0 < x <= 1 (A&S 9.6.13, 9.6.11):
 * K0 = -(log(x/2) + gamma) I0(x) + sum_k H_k (x^2/4)^k / k!^2,
 * K1 = 1/x + log(x/2) I1(x) - (x/4) sum_k (psi(k+1) + psi(k+2)) (x^2/4)^k / (k! (k+1)!). */
static double k_series(int nu, double x) {
  double z = 0.25 * x * x, lg = log(0.5 * x);
  if (nu == 0) {
    double term = 1, h = 0, sum = 0;
    for (int k = 1; k < 100; k++) {
      term *= z / ((double)k * k);
      h += 1.0 / k;
      sum += term * h;
      if (term * h <= EPS / 2 * sum) break;
    }
    return -(lg + EULER_GAMMA) * i_series(0, x) + sum;
  }
  double term = 1, psi1 = -EULER_GAMMA, psi2 = 1 - EULER_GAMMA, sum = psi1 + psi2;
  for (int k = 1; k < 100; k++) {
    term *= z / ((double)k * (k + 1));
    psi1 += 1.0 / k;
    psi2 += 1.0 / (k + 1);
    double t = term * (psi1 + psi2);
    sum += t;
    if (fabs(t) <= EPS / 2 * fabs(sum)) break;
  }
  return 1 / x + lg * i_series(1, x) - 0.25 * x * sum;
}

/* e^x K_nu(x) for 1 < x <= 20: the trapezoidal rule with step h on
 * int_0^inf e^(-2x sinh^2(t/2)) cosh(nu t) dt (x (cosh t - 1) written
 * without cancellation), out to where the integrand is below e^-40. */
static double k_trapezoid(int nu, double x) {
  const double h = 0.125;
  double sum = 0.5; /* the integrand at t = 0 is 1, counted half */
  for (int i = 1; i < 400; i++) {
    double t = i * h, s = sinh(0.5 * t), e = 2 * x * s * s;
    if (e > 40 + nu * t) break;
    sum += exp(-e) * (nu ? cosh(t) : 1.0);
  }
  return h * sum;
}

/* e^x K_nu(x) for finite x > 0. */
static double k_scaled(int nu, double x) {
  if (x <= 1) return k_series(nu, x) * exp(x);
  if (x <= 20) return k_trapezoid(nu, x);
  return hankel(nu, x, -1) * sqrt(M_PI / (2 * x));
}

/* torch: inf at 0, NaN below it, 0 at inf. */
static double k_edge(double x, bool *done) {
  *done = true;
  if (x == 0) return INFINITY;
  if (x < 0 || isnan(x)) return NAN;
  if (isinf(x)) return 0.0;
  *done = false;
  return 0;
}

double rlx_special_k0(double x) {
  bool done;
  double e = k_edge(x, &done);
  if (done) return e;
  return x <= 1 ? k_series(0, x) : k_scaled(0, x) * exp(-x);
}

double rlx_special_k1(double x) {
  bool done;
  double e = k_edge(x, &done);
  if (done) return e;
  return x <= 1 ? k_series(1, x) : k_scaled(1, x) * exp(-x);
}

double rlx_special_k0e(double x) {
  bool done;
  double e = k_edge(x, &done);
  return done ? e : k_scaled(0, x);
}

double rlx_special_k1e(double x) {
  bool done;
  double e = k_edge(x, &done);
  return done ? e : k_scaled(1, x);
}

/* ---- J0, J1, Y0, Y1 ----
 *
 * Above x = 5 torch evaluates A(x) (P(x) cos(x - c) - Q(x) sin(x - c)) (J) and
 * A(x) (P(x) sin(x - c) + Q(x) cos(x - c)) (Y), c = pi/4 (order 0) or 3pi/4
 * (order 1), with the phase x - c rounded to the input's precision. With
 * d = that rounded phase minus the exact one, its results are
 * J cos d - Y sin d and Y cos d + J sin d, computed here from libm's exact J
 * and Y: in float, d is up to half an ulp of x, which is already several ulp
 * of the result at x = 20 and decides it entirely above x = 2^26 (where
 * x - c rounds to x). */

/* d for the phase constant c (the double nearest pi/4 or 3pi/4), c_lo =
 * the exact constant minus c. */
static double phase_error(double x, double c, double c_lo, bool f64) {
  if (f64) {
    double s = x - c, err = (x - s) - c; /* x - c = s + err exactly (|x| > |c|) */
    return c_lo - err;
  }
  float s = (float)x - (float)c;
  return ((double)s - x) + c + c_lo; /* (s - x) + c is exact: the two nearly cancel */
}

#define PI_4_LO 3.061616997868383e-17  /* pi/4 - M_PI_4 */
#define PI3_4_LO 9.184850993605148e-17 /* 3pi/4 - (double)(3pi/4) */

static double bessel_first(double j, double y, double x, int order, bool f64) {
  double d = order ? phase_error(x, 3 * M_PI_4, PI3_4_LO, f64) : phase_error(x, M_PI_4, PI_4_LO, f64);
  return j * cos(d) - y * sin(d);
}

static double bessel_second(double j, double y, double x, int order, bool f64) {
  double d = order ? phase_error(x, 3 * M_PI_4, PI3_4_LO, f64) : phase_error(x, M_PI_4, PI_4_LO, f64);
  return y * cos(d) + j * sin(d);
}

/* torch: J0, J1, Y0 and Y1 are NaN at +-inf (its asymptotic form there is
 * inf * 0); J0 is even, J1 odd; Y0 and Y1 are -inf at 0 and NaN below. */
double rlx_special_j0(double x, bool f64) {
  if (isnan(x) || isinf(x)) return NAN;
  x = fabs(x);
  return x <= 5 ? j0(x) : bessel_first(j0(x), y0(x), x, 0, f64);
}

double rlx_special_j1(double x, bool f64) {
  if (isnan(x) || isinf(x)) return NAN;
  double ax = fabs(x), v = ax <= 5 ? j1(ax) : bessel_first(j1(ax), y1(ax), ax, 1, f64);
  return signbit(x) ? -v : v; /* J1(-0) = -0 */
}

double rlx_special_y0(double x, bool f64) {
  if (x == 0) return -INFINITY;
  if (x < 0 || isnan(x) || isinf(x)) return NAN;
  return x <= 5 ? y0(x) : bessel_second(j0(x), y0(x), x, 0, f64);
}

double rlx_special_y1(double x, bool f64) {
  if (x == 0) return -INFINITY;
  if (x < 0 || isnan(x) || isinf(x)) return NAN;
  return x <= 5 ? y1(x) : bessel_second(j1(x), y1(x), x, 1, f64);
}

/* sin(x) / x: 1 at 0, 0 at +-inf (torch). */
double rlx_special_spherical_j0(double x) {
  if (isinf(x)) return 0.0;
  if (x == 0) return 1.0;
  return sin(x) / x;
}
