/*
 * conv_dw_avx512.c — the channels-last depthwise rows of conv_dw.h with
 * AVX-512F: for a block of P output pixels (8, then 4, 2, 1 at the row's
 * end) and one vector of 16 channels (a masked one for the tail), P
 * accumulators start at the bias; for each kernel row the kw weight
 * vectors are loaded once and the block's input pixels once each, in
 * column order, every one FMA'd into the accumulators of the pixels whose
 * taps it is — (P - 1) * sw + kw loads for P * kw FMAs, where a pixel at a
 * time loads a weight and an input for every FMA. Blocks with a pixel
 * whose taps leave the image skip the columns outside, as the generic
 * loop skips its taps there (the reference multiplies the padding's
 * zeros: the two differ only where such a weight is infinite or NaN,
 * docs/design.md "Layout"). Then residual
 * and activation in registers, and one store per pixel. Pixel blocks
 * outside, channels inside: a block's input lines (kh x (P - 1) * sw + kw
 * pixels of every channel) stay in L1 across its channel vectors.
 * Built with -mavx512f -mfma (this file only); called only when the CPU
 * has AVX-512F (rlx_dw_rows_take).
 */
#include <immintrin.h>

#include "cpu/act_avx512.h"
#include "cpu/conv_dw.h"

#define AI static inline __attribute__((always_inline))

AI __m512 dw_act(const rlx_dw_row *r, __m512 v) {
  switch (r->act) {
    case RLX_DW_ACT_SILU: return rlx_silu16(v, 0);
    case RLX_DW_ACT_SIGMOID: return rlx_silu16(v, 1);
    case RLX_SGEMM_ACT_NONE: return v;
    default: return rlx_post_act16((rlx_sgemm_act)r->act, r->lo, r->hi, v);
  }
}

/* Pixels [ox, ox + P) of the row, channels [c, c + 16) under mask m. KW, SW, P and CHK (some tap of the block
 * may leave the image) are constants where it is called, so the loops unroll and acc and w live in registers. */
AI void dw_block(const rlx_dw_row *r, const int KW, const int SW, const int P, const bool CHK, int64_t ox, int64_t c,
                 __mmask16 m) {
  __m512 acc[8], w[7];
  const __m512 b = r->bias ? _mm512_maskz_loadu_ps(m, r->bias + c) : _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int p = 0; p < P; p++) acc[p] = b;
  const int64_t C = r->C, ix0 = ox * SW - r->pw;
  for (int64_t ki = r->k0; ki < r->k1; ki++) {
    const float *xr = r->x + (r->iy0 + ki * r->dh) * r->W * C + c, *wr = r->wt + ki * KW * C + c;
#pragma GCC unroll 7
    for (int kj = 0; kj < KW; kj++) w[kj] = _mm512_maskz_loadu_ps(m, wr + kj * C);
#pragma GCC unroll 32
    for (int j = 0; j < (P - 1) * SW + KW; j++) {
      const int64_t ix = ix0 + j;
      if (CHK && (uint64_t)ix >= (uint64_t)r->W) continue;
      const __m512 xv = _mm512_maskz_loadu_ps(m, xr + ix * C);
#pragma GCC unroll 8
      for (int p = 0; p < P; p++) {
        const int kj = j - SW * p;
        if (kj >= 0 && kj < KW) acc[p] = _mm512_fmadd_ps(w[kj], xv, acc[p]);
      }
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; p++) {
    __m512 v = acc[p];
    if (r->res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, r->res + (ox + p) * C + c));
    _mm512_mask_storeu_ps(r->y + (ox + p) * C + c, m, dw_act(r, v));
  }
}

AI void dw_pixels(const rlx_dw_row *r, const int KW, const int SW, const int P, const bool CHK, int64_t ox) {
  int64_t c = 0;
  for (; c + 16 <= r->nc; c += 16) dw_block(r, KW, SW, P, CHK, ox, c, (__mmask16)0xFFFF);
  if (c < r->nc) dw_block(r, KW, SW, P, CHK, ox, c, (__mmask16)((1u << (r->nc - c)) - 1));
}

/* The row: blocks of 8 pixels, then 4, 2, 1; a block checks its columns against the image unless every pixel in
 * it is inside [in0, in1), the pixels whose kw taps all are. */
AI void dw_row(const rlx_dw_row *r, const int KW, const int SW) {
  const int64_t OW = r->OW, in0 = (r->pw + SW - 1) / SW, last = r->W - KW + r->pw;
  int64_t in1 = last < 0 ? 0 : (last / SW + 1 < OW ? last / SW + 1 : OW);
  if (in1 < in0) in1 = in0;
  int64_t ox = 0;
  for (; ox + 8 <= OW; ox += 8) {
    if (ox >= in0 && ox + 8 <= in1) dw_pixels(r, KW, SW, 8, false, ox);
    else dw_pixels(r, KW, SW, 8, true, ox);
  }
  if (ox + 4 <= OW) {
    if (ox >= in0 && ox + 4 <= in1) dw_pixels(r, KW, SW, 4, false, ox);
    else dw_pixels(r, KW, SW, 4, true, ox);
    ox += 4;
  }
  if (ox + 2 <= OW) {
    if (ox >= in0 && ox + 2 <= in1) dw_pixels(r, KW, SW, 2, false, ox);
    else dw_pixels(r, KW, SW, 2, true, ox);
    ox += 2;
  }
  if (ox < OW) {
    if (ox >= in0 && ox + 1 <= in1) dw_pixels(r, KW, SW, 1, false, ox);
    else dw_pixels(r, KW, SW, 1, true, ox);
  }
}

#define DW_ROW(KW, SW) \
  static void dw_row_##KW##_##SW(const rlx_dw_row *r) { dw_row(r, KW, SW); }
DW_ROW(3, 1)
DW_ROW(3, 2)
DW_ROW(5, 1)
DW_ROW(5, 2)
DW_ROW(7, 1)
DW_ROW(7, 2)
#undef DW_ROW

void rlx_dw_row_avx512(const rlx_dw_row *r) {
  switch (r->kw * 4 + r->sw) {
    case 3 * 4 + 1: dw_row_3_1(r); break;
    case 3 * 4 + 2: dw_row_3_2(r); break;
    case 5 * 4 + 1: dw_row_5_1(r); break;
    case 5 * 4 + 2: dw_row_5_2(r); break;
    case 7 * 4 + 1: dw_row_7_1(r); break;
    case 7 * 4 + 2: dw_row_7_2(r); break;
    default: break; /* rlx_dw_rows_take said no */
  }
}
