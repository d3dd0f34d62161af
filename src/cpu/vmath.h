/*
 * vmath.h — float math written so that loops over it vectorize (no library
 * calls, no branches the compiler cannot turn into selects): exp, tanh and
 * gelu for the fast kernels' activations, softmax and attention. Their accuracy
 * is stated per function; the reference kernels keep the C library's.
 */
#ifndef RLX_CPU_VMATH_H
#define RLX_CPU_VMATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* exp(x) in float without a library call, so loops over it vectorize:
 * x = n ln2 + r with |r| <= ln2 / 2, a degree-6 polynomial for e^r (relative
 * error about 2 ulp), 2^n built in the exponent bits. Results below the
 * smallest normal float (x < -87.34) are 0 rather than subnormal. */
static inline float exp_f32(float x) {
  /* 2^n stays a normal float; a NaN x takes the lower bound (the first
   * comparison is false), so the int conversion below is always defined */
  float xc = x > -86.5f ? x : -86.5f;
  xc = xc < 88.7f ? xc : 88.7f;
  float n = (xc * 1.44269504089f + 12582912.0f) - 12582912.0f; /* round to nearest */
  float r = (xc - n * 0.693359375f) + n * 2.12194440e-4f;      /* ln2 split in two for accuracy */
  float p = 1.98756915e-4f;
  p = p * r + 1.39819995e-3f;
  p = p * r + 8.33345191e-3f;
  p = p * r + 4.16657959e-2f;
  p = p * r + 1.66666655e-1f;
  p = p * r + 5.00000012e-1f;
  p = p * r * r + r + 1.0f;
  union { uint32_t u; float f; } s = {.u = (uint32_t)((int32_t)n + 126) << 23}; /* 2^(n-1) */
  float y = p * s.f * 2.0f;
  y = x > 88.7228f ? INFINITY : y;  /* overflow, +inf */
  y = x < -87.3365f ? 0.0f : y;     /* below the smallest normal result, -inf */
  return x != x ? x : y;           /* NaN */
}

/* tanh(x) in float without a library call: for |x| < 0.625 its odd Taylor
 * series through x^15 (truncation below 2e-7 relative there), above it
 * 1 - 2 / (e^(2|x|) + 1) with exp_f32 (no cancellation worse than a factor
 * of 0.8 at 0.625); the sign restored last. Relative error about 3 ulp; 1 for
 * large |x| (e^(2|x|) overflowing to inf gives exactly 1), NaN propagates. */
static inline float tanh_f32(float x) {
  float a = x < 0 ? -x : x, a2 = a * a;
  float p = -929569.0f / 638512875.0f;
  p = p * a2 + 21844.0f / 6081075.0f;
  p = p * a2 - 1382.0f / 155925.0f;
  p = p * a2 + 62.0f / 2835.0f;
  p = p * a2 - 17.0f / 315.0f;
  p = p * a2 + 2.0f / 15.0f;
  p = p * a2 - 1.0f / 3.0f;
  float small = a + a * a2 * p;
  float big = 1.0f - 2.0f / (exp_f32(2.0f * a) + 1.0f);
  float t = a < 0.625f ? small : big;
  return x != x ? x : copysignf(t, x); /* -0 stays -0 */
}

/* gelu(x) = x/2 (1 + erf(x / sqrt 2)), written with erfc(|z|) = q(t) e^(-z^2),
 * t = 1 / (1 + 0.3275911 |z|) (Abramowitz & Stegun 7.1.26, |error| <= 1.5e-7
 * on erf), so the negative side has no cancellation: 1 + erf(z) = q for z < 0
 * and 2 - q for z >= 0. Absolute error about 2e-7 |x|; NaN and +-inf come
 * out as the formula gives them in torch (NaN, inf, and NaN for -inf). */
static inline float gelu_f32(float x) {
  float z = x * 0.70710678118654752f, az = z < 0 ? -z : z;
  float t = 1.0f / (1.0f + 0.3275911f * az);
  float q = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  q *= exp_f32(-az * az);
  float y = 0.5f * x * (z < 0 ? q : 2.0f - q);
  return x != x ? x : y;
}

/* Row reductions written as 16 independent lanes, so they vectorize without
 * reassociation flags (each lane sums in order; the lanes are combined
 * last, in double). */
#define RLX_VLANES 16

/* max of x[0..n), NaN if any element is NaN, -inf for n = 0: torch's max
 * semantics. GCC vectorizes no form of this loop that keeps the NaN rule
 * (and its vector extensions are lowered before target_clones makes the
 * AVX-512 clone), so AVX-512 CPUs take vmath_avx512.c's. */
#if defined(__x86_64__) && defined(__GNUC__)
bool rlx_cpu_avx512_math(void);                     /* eltwise.c */
float rlx_vmax_f32_avx512(const float *x, int64_t n); /* vmath_avx512.c */
#endif
static inline float vmax_f32(const float *x, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (n >= 16 && rlx_cpu_avx512_math()) return rlx_vmax_f32_avx512(x, n);
#endif
  float r = -INFINITY;
  for (int64_t i = 0; i < n; i++) r = (x[i] > r || x[i] != x[i]) ? x[i] : r;
  return r;
}

/* sum of x[0..n): 16 float lanes, combined in double. */
static inline double vsum_f32(const float *x, int64_t n) {
  float s[RLX_VLANES] = {0};
  int64_t i = 0;
  for (; i + RLX_VLANES <= n; i += RLX_VLANES)
    for (int l = 0; l < RLX_VLANES; l++) s[l] += x[i + l];
  double r = 0;
  for (; i < n; i++) r += x[i];
  for (int l = 0; l < RLX_VLANES; l++) r += s[l];
  return r;
}

/* sum of exp_f32(x[i] - m) over x[0..n), as vsum_f32 (the same lanes, so
 * the same sum as vsum_f32 over the stored exponentials). */
static inline double vsum_exp_f32(const float *x, int64_t n, float m) {
  float s[RLX_VLANES] = {0};
  int64_t i = 0;
  for (; i + RLX_VLANES <= n; i += RLX_VLANES)
    for (int l = 0; l < RLX_VLANES; l++) s[l] += exp_f32(x[i + l] - m);
  double r = 0;
  for (; i < n; i++) r += exp_f32(x[i] - m);
  for (int l = 0; l < RLX_VLANES; l++) r += s[l];
  return r;
}

/* y[i] = exp(scale * (x[i] - m)) over x[0..n) and their sum, as vsum_f32
 * sums (16 float lanes, combined in double): a softmax's exponentials in
 * one pass (y may be x). AVX-512 CPUs take vmath_avx512.c's, whose e^x is
 * the same polynomial with its 2^n applied by scalef (results below the
 * smallest normal float are subnormal there, 0 here). */
#if defined(__x86_64__) && defined(__GNUC__)
double rlx_exp_sum_f32_avx512(const float *x, float *y, int64_t n, float m, float scale); /* vmath_avx512.c */
#endif
static inline double vexp_sum_f32(const float *x, float *y, int64_t n, float m, float scale) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (rlx_cpu_avx512_math()) return rlx_exp_sum_f32_avx512(x, y, n, m, scale);
#endif
  float s[RLX_VLANES] = {0};
  int64_t i = 0;
  for (; i + RLX_VLANES <= n; i += RLX_VLANES)
    for (int l = 0; l < RLX_VLANES; l++) {
      float e = exp_f32(scale == 1.0f ? x[i + l] - m : scale * (x[i + l] - m));
      y[i + l] = e;
      s[l] += e;
    }
  double r = 0;
  for (; i < n; i++) {
    float e = exp_f32(scale == 1.0f ? x[i] - m : scale * (x[i] - m));
    y[i] = e;
    r += e;
  }
  for (int l = 0; l < RLX_VLANES; l++) r += s[l];
  return r;
}

/* sum of (x[i] - m)^2 over x[0..n), as vsum_f32. */
static inline double vsumsq_dev_f32(const float *x, int64_t n, float m) {
  float s[RLX_VLANES] = {0};
  int64_t i = 0;
  for (; i + RLX_VLANES <= n; i += RLX_VLANES)
    for (int l = 0; l < RLX_VLANES; l++) {
      float d = x[i + l] - m;
      s[l] += d * d;
    }
  double r = 0;
  for (; i < n; i++) r += ((double)x[i] - m) * ((double)x[i] - m);
  for (int l = 0; l < RLX_VLANES; l++) r += s[l];
  return r;
}

#endif
