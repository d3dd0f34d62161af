/*
 * special_airy.c — the Airy function Ai(x) in double (special.h states the
 * contract; torch's CPU airy_ai is the specification at the edges).
 *
 *   x <= 2       the Maclaurin series Ai = c1 f(x) - c2 g(x) (Bi = sqrt(3)
 *                (c1 f + c2 g)) in long double: for negative x its terms
 *                reach e^zeta times the result (zeta = 2/3 |x|^(3/2)), so
 *                down to x = -9.5 (e^19.5) the 64-bit mantissa keeps the
 *                double result within 1.5e-12 of the amplitude (measured
 *                against mpmath; 1e-14 outside [-9.5, -5])
 *   x < -9.5     the asymptotic expansion A (P(zeta) sin t - Q(zeta) cos t),
 *                t = zeta + pi/4, whose smallest term (about e^-2 zeta) is
 *                below 1e-16 there
 *   x > 2        Ai = (1/pi) sqrt(x/3) K_1/3(zeta), K by the trapezoidal
 *                rule on int_0^inf e^(-zeta cosh s) cosh(s/3) ds (entire,
 *                doubly exponentially decaying: the rule converges
 *                geometrically) up to zeta = 20, Hankel's expansion above,
 *                as K0 and K1 in special_bessel.c
 *
 * Where torch's result is another number, rlx follows it (special.h): below
 * x = -2.09 torch evaluates sin and cos of the phase t rounded to the
 * input's type, so rlx uses that phase too — in the asymptotic region
 * directly, in the series region as Ai cos d + Bi sin d, d = torch's phase
 * minus the exact one. Torch's float denominator 2 x^(1/4) exp(zeta)
 * overflows from x = 25.9, making its float result 0 where Ai is a float
 * subnormal; +-inf is NaN,
 * x > 103.892 is 0, and a phase that overflows (|x| above 3e25 in float) is
 * NaN, all as torch.
 */
#include <float.h>
#include <math.h>

#include "ops/special.h"

#define AI0 0.355028053887817239260063186004183176L   /* Ai(0) */
#define AIP0 0.258819403792806798405183560189203963L  /* -Ai'(0) */
#define SQRT3 1.73205080756887729352744634150587237L
#define PI_4L 0.785398163397448309615660845819875721L
#define INV_SQRT_PI 0.564189583547756286948079451560772586 /* 1 / sqrt(pi) */
#define SERIES_MIN (-9.5)
#define SERIES_MAX 2.0

/* Ai(x) and Bi(x) for SERIES_MIN <= x <= SERIES_MAX: f = sum a_k, a_k =
 * a_(k-1) x^3 / ((3k-1) 3k); g = sum b_k, b_k = b_(k-1) x^3 / (3k (3k+1)). */
static void airy_series(double xd, long double *ai, long double *bi) {
  long double x = xd, z = x * x * x, a = 1, b = x, f = 1, g = x, big = fabsl(f) + fabsl(g);
  for (int k = 1; k < 200; k++) {
    a *= z / ((3.0L * k - 1) * (3.0L * k));
    b *= z / ((3.0L * k) * (3.0L * k + 1));
    f += a;
    g += b;
    if (fabsl(f) + fabsl(g) > big) big = fabsl(f) + fabsl(g);
    if (fabsl(a) + fabsl(b) <= LDBL_EPSILON / 4 * big) break;
  }
  *ai = AI0 * f - AIP0 * g;
  *bi = SQRT3 * (AI0 * f + AIP0 * g);
}

/* P and Q of the expansion at x = -s, zeta = 2/3 s^(3/2) (DLMF 9.7.9):
 * u_k = u_(k-1) (6k-5)(6k-3)(6k-1) / (216 k (2k-1)); P = sum (-1)^k u_2k /
 * zeta^2k, Q = sum (-1)^k u_(2k+1) / zeta^(2k+1), stopped at the smallest term. */
static void airy_pq(double zeta, double *P, double *Q) {
  double u = 1, term = 1, p = 1, q = 0;
  for (int k = 1; k < 100; k++) {
    u *= (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / (216.0 * k * (2.0 * k - 1));
    double next = u / pow(zeta, k);
    if (next >= term) break;
    term = next;
    int r = k % 4; /* k = 2m: (-1)^m into P; k = 2m+1: (-1)^m into Q */
    double signed_term = (r == 0 || r == 1) ? term : -term;
    if (k % 2 == 0) p += signed_term;
    else q += signed_term;
    if (term <= DBL_EPSILON / 4) break;
  }
  *P = p;
  *Q = q;
}

/* e^zeta K_1/3(zeta) for zeta >= 1.8. Up to zeta = 20: the trapezoidal rule
 * with step h on int_0^inf e^(-2 zeta sinh^2(s/2)) cosh(s/3) ds, out to where
 * the integrand is below e^-40 (its width, about 1/sqrt(zeta), stays well
 * above h). Above: Hankel's expansion sqrt(pi / (2 zeta)) sum_k t_k, t_k =
 * -t_(k-1) ((2k-1)^2 - 4/9) / (8 k zeta), whose smallest term is below
 * 1e-17 there. */
static double k13_scaled(double zeta) {
  if (zeta > 20) {
    double term = 1, sum = 1;
    for (int k = 1; k < 60; k++) {
      double next = -term * ((2.0 * k - 1) * (2.0 * k - 1) - 4.0 / 9.0) / (8.0 * k * zeta);
      if (fabs(next) >= fabs(term)) break;
      term = next;
      sum += term;
      if (fabs(term) <= DBL_EPSILON / 4 * fabs(sum)) break;
    }
    return sum * sqrt(M_PI / (2 * zeta));
  }
  const double h = 0.125;
  double sum = 0.5; /* the integrand at s = 0 is 1, counted half */
  for (int i = 1; i < 800; i++) {
    double s = i * h, sh = sinh(0.5 * s), e = 2 * zeta * sh * sh;
    if (e > 40 + s / 3) break;
    sum += exp(-e) * cosh(s / 3);
  }
  return h * sum;
}

/* torch's phase -2 x sqrt(-x) / 3 + pi/4, in the input's type. */
static double torch_phase(double x, bool f64) {
  if (f64) return -2.0 * x * sqrt(-x) / 3.0 + 0.25 * M_PI;
  float xf = (float)x;
  return (double)(-2.0f * xf * sqrtf(-xf) / 3.0f + 0.25f * (float)M_PI);
}

double rlx_special_airy_ai(double x, bool f64) {
  if (isinf(x)) return NAN;
  if (isnan(x)) return x;
  if (f64 ? x > 103.892 : (float)x > 103.892f) return 0.0;
  bool phase = f64 ? x < -2.09 : (float)x < -2.09f;
  if (x > SERIES_MAX) {
    if (!f64) { /* torch's float denominator 2 x^(1/4) exp(zeta) */
      float xf = (float)x, zf = 2.0f * xf * sqrtf(xf) / 3.0f;
      if (isinf(2.0f * sqrtf(sqrtf(xf)) * expf(zf))) return 0.0;
    }
    double zeta = 2.0 / 3.0 * x * sqrt(x);
    return M_1_PI * sqrt(x / 3) * exp(-zeta) * k13_scaled(zeta);
  }
  double t = phase ? torch_phase(x, f64) : 0;
  if (isinf(t)) return NAN; /* torch: sin(inf) */
  if (x < SERIES_MIN) {
    double s = -x, zeta = 2.0 / 3.0 * s * sqrt(s), P, Q;
    airy_pq(zeta, &P, &Q);
    return INV_SQRT_PI / sqrt(sqrt(s)) * (P * sin(t) - Q * cos(t));
  }
  long double ai, bi;
  airy_series(x, &ai, &bi);
  if (!phase) return (double)ai;
  long double s = -x, d = (long double)t - (2.0L / 3.0L * s * sqrtl(s) + PI_4L);
  return (double)(ai * cosl(d) + bi * sinl(d));
}
