/*
 * vmath_avx512.c — SiLU and sigmoid for AVX-512F (built with -mavx512f
 * -mfma, this file only; called only when the CPU has AVX-512F, see
 * eltwise.c). The activation of most convs of EfficientNet-style networks:
 * the portable loop (vmath.h's exp_f32, clamps and selects) costs about
 * 2 cycles an element here, this about half.
 *
 * The vector math itself (e^-x, silu, sigmoid) is act_avx512.h's, which the
 * kernels that apply an activation in registers share.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "cpu/act_avx512.h"

void rlx_silu_f32_avx512(const float *x, float *y, int64_t n, int sigmoid);

void rlx_silu_f32_avx512(const float *x, float *y, int64_t n, int sigmoid) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, rlx_silu16(_mm512_loadu_ps(x + i), sigmoid));
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, rlx_silu16(_mm512_maskz_loadu_ps(m, x + i), sigmoid));
  }
}

/* GELU (erf form) as vmath.h's gelu_f32: erf by Abramowitz-Stegun 7.1.26
 * (absolute error below 1.5e-7), the e^(-z^2) by rlx_exp_neg16 (act_avx512.h). NaN gives
 * NaN; the infinities give inf and -0 as x * Phi(x) does. */
void rlx_gelu_f32_avx512(const float *x, float *y, int64_t n);

static inline __m512 gelu16(__m512 v) {
  const __m512 one = _mm512_set1_ps(1.0f);
  __m512 z = _mm512_mul_ps(v, _mm512_set1_ps(0.70710678118654752f));
  __m512 az = _mm512_abs_ps(z);
  __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), az, one));
  __m512 q = _mm512_fmadd_ps(t, _mm512_set1_ps(1.061405429f), _mm512_set1_ps(-1.453152027f));
  q = _mm512_fmadd_ps(t, q, _mm512_set1_ps(1.421413741f));
  q = _mm512_fmadd_ps(t, q, _mm512_set1_ps(-0.284496736f));
  q = _mm512_fmadd_ps(t, q, _mm512_set1_ps(0.254829592f));
  q = _mm512_mul_ps(_mm512_mul_ps(t, q), rlx_exp_neg16(_mm512_mul_ps(az, az)));
  __mmask16 neg = _mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_LT_OQ);
  __m512 phi2 = _mm512_mask_blend_ps(neg, _mm512_sub_ps(_mm512_set1_ps(2.0f), q), q); /* 2 Phi(x) */
  __m512 r = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v), phi2);
  __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  return _mm512_mask_blend_ps(nan, r, v);
}

void rlx_gelu_f32_avx512(const float *x, float *y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, gelu16(_mm512_loadu_ps(x + i)));
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, gelu16(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

/* max of x[0..n) (n >= 0), NaN if any element is NaN (vmath.h's vmax_f32):
 * max_ps returns its second operand when either is NaN, so the NaNs are
 * counted apart. */
float rlx_vmax_f32_avx512(const float *x, int64_t n) {
  __m512 m = _mm512_set1_ps(-INFINITY);
  __mmask16 nan = 0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 v = _mm512_loadu_ps(x + i);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    m = _mm512_max_ps(v, m);
  }
  if (i < n) {
    __mmask16 k = (__mmask16)((1u << (n - i)) - 1);
    __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, x + i);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    m = _mm512_max_ps(v, m);
  }
  return nan ? NAN : _mm512_reduce_max_ps(m);
}

/* y[i] = e^(scale (x[i] - m)) over x[0..n), returning their sum (vmath.h's
 * vexp_sum_f32): the softmax's exponentials and their sum in one pass, a
 * masked vector for the tail. e^(scale (x - m)) is rlx_exp_neg16 of
 * scale (m - x), m - x being exactly -(x - m); x = -inf gives 0, NaN NaN.
 * The lanes are summed in float and combined in double, as vsum_f32 does. */
double rlx_exp_sum_f32_avx512(const float *x, float *y, int64_t n, float m, float scale);

/* e^-d for one vector of d = scale (m - x) >= 0 (or NaN). Where d > 87, e^-d
 * is below 1.7e-38 and the lane is 0: its argument is clamped to 87 first,
 * so scalef never makes a result under FLT_MIN. An underflowing scalef takes
 * a microcode assist on Intel cores (tens to hundreds of cycles a vector),
 * and a masked softmax has many such lanes (-inf: a causal mask's half of
 * every row): 12 causal heads of 128 x 128 ran 1.08-1.13 ms against 0.45
 * unmasked on the Xeon host. A NaN keeps the comparison false and stays NaN
 * (min returns its second operand for NaN). */
static inline __attribute__((always_inline)) __m512 exp_neg_or_0(__m512 d) {
  const __m512 lim = _mm512_set1_ps(87.0f);
  __mmask16 tiny = _mm512_cmp_ps_mask(d, lim, _CMP_GT_OQ);
  return _mm512_mask_mov_ps(rlx_exp_neg16(_mm512_min_ps(lim, d)), tiny, _mm512_setzero_ps());
}

static inline __attribute__((always_inline)) double exp_sum(const float *x, float *y, int64_t n, float m,
                                                            float scale, const int unit) {
  const __m512 vm = _mm512_set1_ps(m), vs = _mm512_set1_ps(scale);
  __m512 acc = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 d = _mm512_sub_ps(vm, _mm512_loadu_ps(x + i));
    __m512 e = exp_neg_or_0(unit ? d : _mm512_mul_ps(d, vs));
    _mm512_storeu_ps(y + i, e);
    acc = _mm512_add_ps(acc, e);
  }
  if (i < n) {
    __mmask16 k = (__mmask16)((1u << (n - i)) - 1);
    __m512 d = _mm512_sub_ps(vm, _mm512_maskz_loadu_ps(k, x + i));
    __m512 e = exp_neg_or_0(unit ? d : _mm512_mul_ps(d, vs));
    _mm512_mask_storeu_ps(y + i, k, e);
    acc = _mm512_mask_add_ps(acc, k, acc, e);
  }
  float lanes[16];
  _mm512_storeu_ps(lanes, acc);
  double r = 0;
  for (int l = 0; l < 16; l++) r += lanes[l];
  return r;
}

double rlx_exp_sum_f32_avx512(const float *x, float *y, int64_t n, float m, float scale) {
  return scale == 1.0f ? exp_sum(x, y, n, m, scale, 1) : exp_sum(x, y, n, m, scale, 0);
}
