/*
 * special_gamma.c — the gamma family in double: lgamma, digamma, polygamma
 * (trigamma; the Hurwitz zeta for n >= 2), mvlgamma, and the regularized
 * incomplete gamma functions P(a, x) (igamma) and Q(a, x) (igammac).
 * special.h states the contract: torch's values at the edges, the function
 * elsewhere, float emulated only where torch's float result is a different
 * number rather than a rounding of the same one.
 */
#include <float.h>
#include <math.h>

#include "ops/special.h"

#define EPS DBL_EPSILON
#define EULER_GAMMA 0.57721566490153286061
#define MAX_ITER 100000 /* series and continued fractions; they converge long before (see igam) */

/* glibc's lgammaf, which torch's float lgamma is, returns inf from here up
 * although lgamma(x) stays below FLT_MAX to x = 4.085e36. */
#define LGAMMAF_INF 4.0371103180829464e36

double rlx_special_lgamma(double x, bool f64) {
  int sign; /* lgamma_r: lgamma's global `signgam` would be a data race between threads */
  if (!f64 && fabs(x) >= LGAMMAF_INF) return INFINITY;
  return lgamma_r(x, &sign);
}

/* ---- digamma, trigamma, polygamma ---- */

double rlx_special_digamma(double x) {
  if (x == 0) return copysign(INFINITY, -x); /* torch (and C's tgamma): -inf at +0, +inf at -0 */
  if (x < 0) {
    if (x == trunc(x)) return NAN; /* the poles, and -inf */
    /* reflection psi(x) = psi(1 - x) - pi cot(pi x); cot has period 1 in x,
     * so reduce exactly first: pi x itself would carry an error of
     * ulp(pi x), which near a pole is large next to tan(pi x) */
    return rlx_special_digamma(1.0 - x) - M_PI / tan(M_PI * (x - nearbyint(x)));
  }
  double acc = 0;
  for (; x < 10; x += 1) acc -= 1.0 / x; /* psi(x) = psi(x + 1) - 1/x; NaN skips */
  /* psi(x) ~ ln x - 1/(2x) - sum_k B_2k / (2k x^2k); at x >= 10 the first
   * omitted term is below 1e-17 */
  double z = 1.0 / (x * x);
  double s = z * (1.0 / 12 + z * (-1.0 / 120 + z * (1.0 / 252 + z * (-1.0 / 240 + z * (1.0 / 132 +
             z * (-691.0 / 32760 + z / 12))))));
  return acc + log(x) - 0.5 / x - s;
}

static double trigamma(double x, bool f64) {
  double refl = 0, sign = 1;
  if (x < 0.5) {
    /* psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x). torch forms pi x in the
     * input's precision, so at a pole (a non-positive integer) sin(pi x) is
     * the rounding error of pi x, not 0, and the result a large number that
     * depends on that precision (1.29e15 at -1 in float, 6.6e32 in double) */
    double pi = f64 ? M_PI : (double)(float)M_PI;
    double t = f64 ? M_PI * x : (double)((float)M_PI * (float)x);
    double s = sin(t);
    refl = pi * pi / (s * s);
    sign = -1;
    x = 1.0 - x;
  }
  double acc = 0;
  for (; x < 10; x += 1) acc += 1.0 / (x * x); /* psi1(x) = psi1(x + 1) + 1/x^2 */
  /* psi1(x) ~ (1 + 1/(2x) + sum_k B_2k / x^2k) / x */
  double z = 1.0 / (x * x);
  double s = (1.0 + 0.5 / x + z * (1.0 / 6 + z * (-1.0 / 30 + z * (1.0 / 42 + z * (-1.0 / 30 + z * (5.0 / 66 +
             z * (-691.0 / 2730 + z * (7.0 / 6 + z * (-3617.0 / 510))))))))) / x;
  return refl + sign * (acc + s);
}

double rlx_special_polygamma(double n, double x, bool f64) {
  if (n == 0) return rlx_special_digamma(x);
  if (n == 1) return trigamma(x, f64);
  /* (-1)^(n+1) n! zeta(n + 1, x), as torch: in float, n! overflows from
   * n = 35 and zeta underflows, and torch's float result with them */
  double fact = exp(rlx_special_lgamma(n + 1.0, true)), z = rlx_special_zeta(n + 1.0, x);
  if (!f64) fact = (float)fact, z = (float)z;
  return (fmod(n, 2.0) != 0 ? 1.0 : -1.0) * fact * z;
}

double rlx_special_mvlgamma(double x, double p, bool f64) {
  /* log(pi) p (p - 1) / 4 + sum_{j < p} lgamma(x - j / 2) */
  double s = log(M_PI) * p * (p - 1) / 4;
  for (double j = 0; j < p; j++) s += rlx_special_lgamma(x - j / 2, f64);
  return s;
}

/* ---- Hurwitz zeta ---- */

/* B_2j / (2j)!, j = 1..12: the Euler-Maclaurin correction terms. */
static const double bernoulli_over_factorial[12] = {
    8.3333333333333333e-2,  -1.3888888888888889e-3, 3.3068783068783069e-5,  -8.2671957671957672e-7,
    2.0876756987868099e-8,  -5.2841901386874932e-10, 1.3382536530684679e-11, -3.3896802963225827e-13,
    8.5860620562778446e-15, -2.1748686985580619e-16, 5.5090028283602295e-18, -1.3954464685812522e-19,
};

/* zeta(x, q) for finite x > 1 and finite q > 0: the first terms summed
 * directly (at least ten, and on until q + k >= 10), the rest by
 * Euler-Maclaurin from w = q + k. */
static double zeta_pos(double x, double q) {
  double s = 0, w = q, t;
  for (int k = 0;; k++, w = q + k) {
    t = pow(w, -x);
    s += t;
    if (t <= EPS / 2 * s) return s;
    if (k >= 9 && w >= 10) break;
  }
  /* sum_{j>=k} (q + j)^-x = w^(1-x) / (x-1) + t/2 + sum_j B_2j/(2j)! (x)_(2j-1) w^(-x-2j+1);
   * t is in s already, so half of it comes off */
  s += w * t / (x - 1) - 0.5 * t;
  double rising = x, wp = t / w, wi2 = 1.0 / (w * w);
  for (int j = 0; j < 12; j++) {
    double term = bernoulli_over_factorial[j] * rising * wp;
    s += term;
    if (fabs(term) <= EPS / 2 * s) break;
    rising *= (x + 2 * j + 1) * (x + 2 * j + 2);
    wp *= wi2;
  }
  return s;
}

double rlx_special_zeta(double x, double q) {
  /* torch's edge values (Cephes'), in its order: a NaN x with q a pole gives inf */
  if (x == 1) return INFINITY;
  if (x < 1) return NAN;
  if (q <= 0) {
    if (q == floor(q)) return INFINITY; /* a pole of every term's sum, and -inf */
    if (x != floor(x)) return NAN;      /* (q + k)^-x is not real */
  }
  if (isnan(x) || isnan(q) || q == INFINITY) return NAN;
  if (x == INFINITY) /* each term is 0, 1 or inf; torch's summation gives NaN for q > 1 */
    return q == 1 ? 1.0 : q > 1 ? NAN : INFINITY;
  if (q > 0) return zeta_pos(x, q);
  /* q < 0, not an integer, x an integer: with q = -(m + f), 0 < f < 1, the
   * terms q..q+m are -(f + m)..-f, so the sum is
   * zeta(x, 1 - f) + (-1)^x (zeta(x, f) - zeta(x, 1 - q)) */
  double f = -q - floor(-q), sgn = fmod(x, 2.0) == 0 ? 1.0 : -1.0;
  return zeta_pos(x, 1.0 - f) + sgn * (zeta_pos(x, f) - zeta_pos(x, 1.0 - q));
}

/* ---- incomplete gamma ---- */

/* log(1 + s) - s without the cancellation near 0: with u = s / (2 + s),
 * log(1 + s) = 2 atanh(u) and s - 2u = u s. */
static double log1pmx(double s) {
  if (fabs(s) >= 0.5) return log1p(s) - s;
  double u = s / (2 + s), u2 = u * u, term = u2, sum = 1.0 / 3;
  for (int k = 5; k < 80; k += 2) {
    double d = term / k;
    sum += d;
    if (d < EPS * sum) break;
    term *= u2;
  }
  return -u * s + 2 * u * u2 * sum;
}

/* lgamma(a) - (a - 1/2) log a + a - log(2 pi) / 2, for a >= 10: Stirling's series. */
static double stirling_error(double a) {
  double z = 1.0 / (a * a);
  return (1.0 / 12 + z * (-1.0 / 360 + z * (1.0 / 1260 + z * (-1.0 / 1680 + z * (1.0 / 1188 +
          z * (-691.0 / 360360 + z * (1.0 / 156 + z * (-3617.0 / 122400)))))))) / a;
}

/* lgamma(1 + a) for |a| < 1, exact near a = 0 (1 + a would round a away):
 * -gamma a + sum_{k>=2} (-1)^k zeta(k) a^k / k below |a| = 0.2. */
static const double zeta_int[25] = { /* zeta(2), ..., zeta(26) */
    1.6449340668482264, 1.2020569031595943, 1.0823232337111382, 1.0369277551433699, 1.0173430619844491,
    1.0083492773819228, 1.0040773561979443, 1.0020083928260822, 1.0009945751278181, 1.0004941886041195,
    1.0002460865533080, 1.0001227133475785, 1.0000612481350587, 1.0000305882363070, 1.0000152822594087,
    1.0000076371976379, 1.0000038172932650, 1.0000019082127166, 1.0000009539620339, 1.0000004769329868,
    1.0000002384505027, 1.0000001192199260, 1.0000000596081891, 1.0000000298035035, 1.0000000149015548,
};

static double lgamma1p(double a) {
  if (fabs(a) >= 0.2) return rlx_special_lgamma(1.0 + a, true);
  double s = 0, p = -a;
  for (int k = 2; k <= 26; k++) {
    p *= -a;
    s += zeta_int[k - 2] * p / k;
  }
  return -EULER_GAMMA * a + s;
}

/* x^a e^-x / Gamma(a + d), d = 0 or 1: the factor in front of the
 * continued fraction (d = 0) and of the series (d = 1, which stays right for
 * an a so small that Gamma(a) overflows). */
static double igam_prefactor(double a, double x, int d) {
  if (a < 10)
    return x < 700 ? pow(x, a) * exp(-x) / tgamma(a + d) : exp(a * log(x) - x - rlx_special_lgamma(a + d, true));
  /* sqrt(a / 2pi) exp(a (log(x/a) - (x-a)/a) - stirling_error(a)): the
   * a log a and the a of x^a e^-x and of Stirling's formula cancel exactly.
   * Far from x = a, log(x/a) is better taken directly: through 1 + s it
   * would carry the rounding of s = (x-a)/a magnified by a / x. */
  double s = (x - a) / a, r = x / a;
  double lm = fabs(s) < 0.5 ? log1pmx(s) : (r > DBL_MIN ? log(r) : log(x) - log(a)) - s;
  double f = sqrt(a / (2 * M_PI)) * exp(a * lm - stirling_error(a));
  return d ? f / a : f;
}

/* P(a, x) = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a + 1)...(a + n)): all
 * terms positive; converges fast for x < a + 1 (in about 9 sqrt(a) terms
 * where x is close to a). */
static double igam_series(double a, double x) {
  double f = igam_prefactor(a, x, 1);
  if (f == 0) return 0;
  double sum = 1, term = 1, r = a;
  for (int n = 0; n < MAX_ITER; n++) {
    r += 1;
    term *= x / r;
    sum += term;
    if (term <= EPS / 2 * sum) break;
  }
  return f * sum;
}

/* Q(a, x) for a < 1 and x < 2 (DLMF 8.7.3):
 * 1 - x^a / Gamma(a + 1) - x^a / Gamma(a) sum_{k>=1} (-x)^k / (k! (a + k)),
 * without the cancellation of 1 - P where P is close to 1. */
static double igamc_series(double a, double x) {
  double sum = 0, fac = 1;
  for (int k = 1; k < MAX_ITER; k++) {
    fac *= -x / k;
    double term = fac / (a + k);
    sum += term;
    if (fabs(term) <= EPS / 2 * fabs(sum)) break;
  }
  return -expm1(a * log(x) - lgamma1p(a)) - pow(x, a) / tgamma(a) * sum;
}

/* Q(a, x) = x^a e^-x / Gamma(a) / (x + 1 - a - 1(1 - a) / (x + 3 - a - 2(2 - a) / (x + 5 - a - ...))),
 * by the modified Lentz method; for x >= a + 1. */
static double igamc_fraction(double a, double x) {
  double f = igam_prefactor(a, x, 0);
  if (f == 0) return 0;
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < MAX_ITER; i++) {
    double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1) <= EPS) break;
  }
  return f * h;
}

/* Temme's uniform expansion for large a near x (DLMF 8.12.3-8.12.4) with
 * its first two coefficients: Q = erfc(eta sqrt(a/2)) / 2 + R, P = erfc(-eta
 * sqrt(a/2)) / 2 - R, R = e^(-a eta^2 / 2) / sqrt(2 pi a) (c0 + c1 / a).
 * Used above a = 1e6, where the next term is below 2e-18. */
static double igam_temme(double a, double x, bool upper) {
  double s = (x - a) / a, eta = copysign(sqrt(-2 * log1pmx(s)), s), c0, c1;
  if (fabs(eta) < 0.01) { /* the closed forms cancel here: their Taylor series */
    c0 = -1.0 / 3 + eta * (1.0 / 12 + eta * (-2.0 / 135 + eta * (1.0 / 864 + eta / 2835)));
    c1 = -1.0 / 540 + eta * (-1.0 / 288 + eta / 378);
  } else {
    c0 = 1 / s - 1 / eta;
    c1 = 1 / (eta * eta * eta) - 1 / (s * s * s) - 1 / (s * s) - 1 / (12 * s);
  }
  double r = exp(-0.5 * a * eta * eta) / sqrt(2 * M_PI * a) * (c0 + c1 / a);
  double e = 0.5 * erfc((upper ? 1 : -1) * eta * sqrt(a / 2));
  return upper ? e + r : e - r;
}

/* P (upper false) or Q for finite a > 0, x > 0: each from the expansion that
 * converges fast and does not cancel. */
static double igam(double a, double x, bool upper) {
  if (a > 1e6 && fabs(x - a) < 0.3 * a) return igam_temme(a, x, upper);
  if (x < a + 1) {
    if (!upper) return igam_series(a, x);
    return a < 1 ? igamc_series(a, x) : 1 - igam_series(a, x); /* P(a >= 1, x < a + 1) < 0.87 */
  }
  double q = igamc_fraction(a, x);
  return upper ? q : 1 - q;
}

double rlx_special_igamma(double a, double x) {
  /* torch's (SciPy's) edge values, in its order: igamma(NaN, 0) is 0 */
  if (x < 0 || a < 0) return NAN;
  if (a == 0) return x > 0 ? 1.0 : NAN;
  if (x == 0) return 0.0;
  if (isinf(a)) return isinf(x) ? NAN : 0.0;
  if (isinf(x)) return 1.0;
  if (isnan(a) || isnan(x)) return NAN;
  return igam(a, x, false);
}

double rlx_special_igammac(double a, double x) {
  if (x < 0 || a < 0) return NAN;
  if (a == 0) return x > 0 ? 0.0 : NAN;
  if (x == 0) return 1.0;
  if (isinf(a)) return isinf(x) ? NAN : 1.0;
  if (isinf(x)) return 0.0;
  if (isnan(a) || isnan(x)) return NAN;
  return igam(a, x, true);
}
