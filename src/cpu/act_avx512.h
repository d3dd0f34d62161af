/*
 * act_avx512.h — activations on one AVX-512 vector: the sgemm's post,
 * applied in registers as its kernels store (gemm_avx512.c), and the
 * vector math of eltwise.c's SiLU and GELU loops (vmath_avx512.c), in one
 * place for any kernel that applies them in registers. Each is the float
 * operations, in their order, of the loop eltwise.c runs over a stored
 * tensor, so the two give the same bits.
 * Included only by files built with -mavx512f -mfma.
 */
#ifndef RLX_CPU_ACT_AVX512_H
#define RLX_CPU_ACT_AVX512_H

#include <immintrin.h>

#include "cpu/gemm.h"

/* e^-v: -v = n ln2 + r (n rounded, |r| <= ln2 / 2, ln2 in two parts), e^r
 * by a degree-6 polynomial (vmath.h's, about 2 ulp), 2^n applied by
 * scalef, which saturates to 0 and infinity by itself; -v is clamped to
 * +-150 first so r stays small (e^150 is already infinite in float). */
static inline __attribute__((always_inline)) __m512 rlx_exp_neg16(__m512 v) {
  __m512 t = _mm512_sub_ps(_mm512_setzero_ps(), v);
  t = _mm512_min_ps(_mm512_set1_ps(150.0f), _mm512_max_ps(_mm512_set1_ps(-150.0f), t));
  /* n = t log2(e) rounded to nearest even by adding and subtracting 1.5 * 2^23
   * (|t log2(e)| <= 217, far below 2^22: the sum's ulp is 1, so this is
   * roundscale's result exactly, in two additions that either vector port
   * takes instead of roundscale's two port-0 micro-ops: SiLU 6% faster in L1) */
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  __m512 k = _mm512_sub_ps(_mm512_add_ps(_mm512_mul_ps(t, _mm512_set1_ps(1.44269504089f)), magic), magic);
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

/* silu = x / (1 + e^-x), sigmoid = 1 / (1 + e^-x) (vmath_avx512.c): NaN
 * gives NaN (the clamps keep it, as min/max return their second operand
 * for NaN), silu(-inf) is -inf / inf = NaN as in torch, silu(+inf) = inf,
 * sigmoid(-inf) = 0. */
static inline __attribute__((always_inline)) __m512 rlx_silu16(__m512 v, int sigmoid) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(sigmoid ? one : v, _mm512_add_ps(one, rlx_exp_neg16(v)));
}

/* The sgemm post's activation (gemm.h rlx_sgemm_act; gemm.c post_act in scalar). */
static inline __attribute__((always_inline)) __m512 rlx_post_act16(rlx_sgemm_act act, float lo_, float hi_, __m512 v) {
  const __m512 zero = _mm512_setzero_ps();
  switch (act) {
    case RLX_SGEMM_ACT_RELU: /* NaN kept: "not less or equal" holds for it */
      return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, zero, _CMP_NLE_UQ), v);
    case RLX_SGEMM_ACT_HARDTANH: {
      __m512 lo = _mm512_set1_ps(lo_), hi = _mm512_set1_ps(hi_);
      __m512 y = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), hi);
      return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), lo);
    }
    case RLX_SGEMM_ACT_CLAMP: {
      __m512 lo = _mm512_set1_ps(lo_), hi = _mm512_set1_ps(hi_);
      __m512 y = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), lo);
      return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(y, hi, _CMP_GT_OQ), hi);
    }
    case RLX_SGEMM_ACT_HARDSWISH: {
      __m512 six = _mm512_set1_ps(6.0f), t = _mm512_add_ps(v, _mm512_set1_ps(3.0f));
      t = _mm512_mask_mov_ps(t, _mm512_cmp_ps_mask(t, zero, _CMP_LT_OQ), zero);
      t = _mm512_mask_mov_ps(t, _mm512_cmp_ps_mask(t, six, _CMP_GT_OQ), six);
      return _mm512_mul_ps(_mm512_mul_ps(v, t), _mm512_set1_ps(1.0f / 6.0f)); /* not / 6: eltwise.c */
    }
    default:
      return v;
  }
}

#endif
