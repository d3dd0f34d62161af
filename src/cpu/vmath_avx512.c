/*
 * vmath_avx512.c — SiLU and sigmoid for AVX-512F (built with -mavx512f
 * -mfma, this file only; called only when the CPU has AVX-512F, see
 * eltwise.c). The activation of most convs of EfficientNet-style networks:
 * the portable loop (vmath.h's exp_f32, clamps and selects) costs about
 * 2 cycles an element here, this about half.
 *
 * e^t for t = -x: t = n ln2 + r (n rounded, |r| <= ln2 / 2, ln2 in two
 * parts), e^r by a degree-6 polynomial (vmath.h's, about 2 ulp), 2^n applied
 * by scalef, which saturates to 0 and infinity by itself; t is clamped to
 * +-150 first so r stays small (e^150 is already infinite in float). Then
 * silu = x / (1 + e^t), sigmoid = 1 / (1 + e^t): NaN gives NaN (the clamps
 * keep it, as min/max return their second operand for NaN), silu(-inf) is
 * -inf / inf = NaN as in torch, silu(+inf) = inf, sigmoid(-inf) = 0.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

void rlx_silu_f32_avx512(const float *x, float *y, int64_t n, int sigmoid);

static inline __m512 exp_neg(__m512 v) {
  __m512 t = _mm512_sub_ps(_mm512_setzero_ps(), v);
  t = _mm512_min_ps(_mm512_set1_ps(150.0f), _mm512_max_ps(_mm512_set1_ps(-150.0f), t));
  __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(1.44269504089f)), _MM_FROUND_TO_NEAREST_INT);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), t);
  r = _mm512_fmadd_ps(k, _mm512_set1_ps(2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.98756915e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.39819995e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.33345191e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.16657959e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.66666655e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.00000012e-1f));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, k);
}

void rlx_silu_f32_avx512(const float *x, float *y, int64_t n, int sigmoid) {
  const __m512 one = _mm512_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 v = _mm512_loadu_ps(x + i);
    __m512 d = _mm512_add_ps(one, exp_neg(v));
    _mm512_storeu_ps(y + i, _mm512_div_ps(sigmoid ? one : v, d));
  }
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    __m512 d = _mm512_add_ps(one, exp_neg(v));
    _mm512_mask_storeu_ps(y + i, m, _mm512_div_ps(sigmoid ? one : v, d));
  }
}

/* GELU (erf form) as vmath.h's gelu_f32: erf by Abramowitz-Stegun 7.1.26
 * (absolute error below 1.5e-7), the e^(-z^2) by exp_neg above. NaN gives
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
  q = _mm512_mul_ps(_mm512_mul_ps(t, q), exp_neg(_mm512_mul_ps(az, az)));
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
