/*
 * conv_group_avx512.c — the grouped conv's rows (conv_group.h) with
 * AVX-512F: for P output pixels (8, then 4 and 1; the pixels whose taps
 * leave the image one at a time, skipping the columns outside) and one
 * vector of 16 output channels, P sums start at the bias, and each (tap,
 * input channel c) loads the weight vector once and FMAs it into every
 * pixel's sum with that pixel's input value for each lane's group. How the
 * lanes get their input depends on how the vector meets the groups:
 *
 *   one group (Og a multiple of 16: regnet's 16-, resnext's 16- and
 *     32-wide groups): a broadcast of x[..][g * Cg + c], two vectors of a
 *     32-wide group at a time on one broadcast;
 *   whole groups of Og dividing 16, their inputs at most 16 floats (Cg *
 *     16 / Og <= 16: resnext's 4- and 8-wide groups): the block's input
 *     channels loaded once per pixel and tap, then one permute per c puts
 *     channel (lane / Og) * Cg + c in each lane;
 *   Og 8 more than a multiple of 16 (regnet_x's 24-wide groups): a vector
 *     within one group as above; one straddling two groups at lane 8 takes
 *     a broadcast of each group's channel, merged under the lane mask; and
 *     where a pair of 24-wide groups is whole in the row's range, its three
 *     vectors go at once on the two broadcasts and their merge (3 FMAs a
 *     channel and pixel where vectors from each group's first channel took
 *     4, a quarter of the lanes idle);
 *   otherwise: vectors that start at each group's first channel, two at a
 *     time on one broadcast, the last of a group masked.
 *
 * Built with -mavx512f -mfma (this file only); called only when the CPU
 * has AVX-512F.
 */
#include <immintrin.h>

#include "cpu/conv_group.h"

#define AI static inline __attribute__((always_inline))

/* What a pixel outside the row reads: RLX_GCONV_CG_MAX channels of zeros (conv_group.c takes no bigger group). */
static const float zeros[RLX_GCONV_CG_MAX] __attribute__((aligned(64)));

enum { ONE_GROUP, PERMUTE, ALIGNED, STRADDLE, PAIR };

typedef struct blk {
  int64_t ch0;     /* the first input channel of the vector's first group */
  int64_t vec;     /* the vector's index among rlx_gconv_vectors (its weights' block) */
  __mmask16 store; /* the lanes written (below O; ALIGNED: inside the group) */
  __mmask16 in;    /* PERMUTE: the input channels loaded */
  __m512i idx;     /* PERMUTE: lane -> its group's channel 0 among those loaded */
  __mmask16 hi;    /* STRADDLE, PAIR: the lanes of the second group (its channels Cg floats on) */
} blk;

/* Input of pixel p for input channel c: xp points at the pixel's channel ch0 (its tap). */
AI __m512 lane_input(const blk *b, const int MODE, const float *xp, __m512 xin, int64_t c, int64_t Cg) {
  if (MODE == PERMUTE) return _mm512_permutexvar_ps(_mm512_add_epi32(b->idx, _mm512_set1_epi32((int)c)), xin);
  if (MODE == STRADDLE) return _mm512_mask_mov_ps(_mm512_set1_ps(xp[c]), b->hi, _mm512_set1_ps(xp[Cg + c]));
  return _mm512_set1_ps(xp[c]);
}

/* Pixels [ox, ox + P) of the row for NV vectors of output channels from ob (NV 2: ONE_GROUP, both in one
 * group; ALIGNED, the second the group's masked rest; NV 3: PAIR, a pair of 24-wide groups); CHK: some
 * pixel's taps leave the row, the columns outside read zeros. */
AI void block(const rlx_gconv_row *r, const blk *b, const int MODE, const int P, const int NV, const bool CHK,
              int64_t ox, int64_t ob) {
  __m512 acc[8][3];
#pragma GCC unroll 3
  for (int v = 0; v < NV; v++) {
    __mmask16 k = v == NV - 1 ? b->store : 0xffff;
    const __m512 bias = r->bias ? _mm512_maskz_loadu_ps(k, r->bias + ob + 16 * v) : _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int p = 0; p < P; p++) acc[p][v] = bias;
  }
  const int64_t C = r->C, Cg = r->Cg, vstride = r->taps * Cg * 16; /* floats a vector's weights */
  for (int64_t ki = r->k0; ki < r->k1; ki++) {
    const float *xr = r->x + (r->iy0 + ki * r->dh) * r->W * C + b->ch0;
    for (int64_t kj = 0; kj < r->kw; kj++) {
      const int64_t ix0 = ox * r->sw - r->pw + kj * r->dw;
      const float *xp[8];
      __m512 xin[8];
      bool in[8];
      (void)in;
#pragma GCC unroll 8
      for (int p = 0; p < P; p++) {
        in[p] = !CHK || (uint64_t)(ix0 + p * r->sw) < (uint64_t)r->W;
        /* a pixel outside the row reads zeros where its group's channels would be, as the reference
         * multiplies the padding's zeros (an Inf or NaN weight there gives NaN in both) */
        xp[p] = in[p] ? xr + (ix0 + p * r->sw) * C : zeros;
        if (MODE == PERMUTE) xin[p] = _mm512_maskz_loadu_ps(b->in, xp[p]);
      }
      const float *wk = r->wt + b->vec * vstride + (ki * r->kw + kj) * Cg * 16;
#pragma GCC unroll 4
      for (int64_t c = 0; c < Cg; c++) {
        /* an ALIGNED vector may start less than 16 before Op: its lanes past the group are not loaded */
        __m512 w[3];
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++)
          w[v] = _mm512_load_ps(wk + v * vstride + c * 16); /* zero past the group (ALIGNED) */
#pragma GCC unroll 8
        for (int p = 0; p < P; p++) {
          if (MODE == PAIR) { /* the first group's vector, the straddling one, the second group's */
            const __m512 x0 = _mm512_set1_ps(xp[p][c]), x1 = _mm512_set1_ps(xp[p][Cg + c]);
            acc[p][0] = _mm512_fmadd_ps(x0, w[0], acc[p][0]);
            acc[p][1] = _mm512_fmadd_ps(_mm512_mask_mov_ps(x0, b->hi, x1), w[1], acc[p][1]);
            acc[p][2] = _mm512_fmadd_ps(x1, w[2], acc[p][2]);
            continue;
          }
          const __m512 xv = lane_input(b, MODE, xp[p], MODE == PERMUTE ? xin[p] : w[0], c, Cg);
#pragma GCC unroll 2
          for (int v = 0; v < NV; v++) acc[p][v] = _mm512_fmadd_ps(xv, w[v], acc[p][v]);
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; p++)
#pragma GCC unroll 3
    for (int v = 0; v < NV; v++)
      _mm512_mask_storeu_ps(r->y + (ox + p) * r->O + ob + 16 * v, v == NV - 1 ? b->store : 0xffff, acc[p][v]);
}

/* The prefetch of the next row's new input (rlx_gconv_row.pf), from p to end, spread over the row's work:
 * after a block of `units` (16-channel vectors times pixels) the lines due by then, `lines` of them over
 * `total` units (acc carries the remainder), so the row's last block has asked for all of them whatever
 * mix of one-, two- and three-vector blocks it took. */
typedef struct pf_cursor {
  const char *p, *end;
  int64_t lines, total, acc;
} pf_cursor;

AI void pf_step(pf_cursor *f, int64_t units) {
  if (f->p >= f->end) return;
  f->acc += units * f->lines;
  int64_t n = f->acc / f->total;
  f->acc -= n * f->total;
  for (; n > 0 && f->p < f->end; n--, f->p += 64) _mm_prefetch(f->p, _MM_HINT_T1);
}

static int64_t pf_fetched(const pf_cursor *f, const rlx_gconv_row *r) {
  return f->end ? (f->p - (const char *)r->pf) / 64 : 0;
}

/* Blocks of P pixels over the row [0, OW) (OW >= P), the last one ending at OW (it may redo a few pixels of
 * the one before: each block writes its sums, it adds nothing); CHK for the blocks that reach outside
 * [lo, hi), the pixels whose taps are all inside. */
AI void blocks_of(const rlx_gconv_row *r, const blk *b, const int MODE, const int P, const int NV, int64_t ob,
                  int64_t lo, int64_t hi, pf_cursor *pf) {
  for (int64_t ox = 0;; ox += P) {
    if (ox + P > r->OW) ox = r->OW - P;
    if (ox < lo || ox + P > hi) block(r, b, MODE, P, NV, true, ox, ob);
    else block(r, b, MODE, P, NV, false, ox, ob);
    pf_step(pf, P * NV);
    if (ox + P >= r->OW) break;
  }
}

/* The pixels a block takes for NV vectors (vector_row's choice). */
static int block_pixels(int64_t OW, int NV) { return NV == 3 && OW >= 4 ? 4 : OW >= 8 ? 8 : OW >= 4 ? 4 : 1; }

AI void vector_row(const rlx_gconv_row *r, const blk *b, const int MODE, const int NV, int64_t ob, int64_t lo,
                   int64_t hi, pf_cursor *pf) {
  switch (block_pixels(r->OW, NV)) {
    case 4: blocks_of(r, b, MODE, 4, NV, ob, lo, hi, pf); break; /* NV 3: 12 sums in flight */
    case 8: blocks_of(r, b, MODE, 8, NV, ob, lo, hi, pf); break;
    default: blocks_of(r, b, MODE, 1, NV, ob, lo, hi, pf); break;
  }
}

int64_t rlx_gconv_row_avx512(const rlx_gconv_row *r) {
  /* the output pixels whose taps are all inside the row: [lo, hi) */
  int64_t span = (r->kw - 1) * r->dw, lo = (r->pw + r->sw - 1) / r->sw;
  int64_t hi = r->W - 1 - span + r->pw < 0 ? 0 : (r->W - 1 - span + r->pw) / r->sw + 1;
  lo = lo < r->OW ? lo : r->OW;
  hi = hi < r->OW ? hi : r->OW;
  if (hi < lo) hi = lo;
  /* the next row's input, spread over this row's units: its 16-channel vectors (a group's own vectors where
   * they start at its first channel) times OW pixels */
  pf_cursor pf = {NULL, NULL, 0, 1, 0};
  int64_t ob1 = r->ob1 < r->O ? r->ob1 : r->O, vecs = (ob1 - r->ob0 + 15) / 16;
  if (r->Og % 16 != 0 && !rlx_gconv_by_vectors(r->Og, r->Cg))
    vecs = (ob1 - r->ob0 + r->Og - 1) / r->Og * ((r->Og + 15) / 16);
  if (r->pf && vecs > 0 && r->OW > 0) {
    pf.p = (const char *)r->pf, pf.end = (const char *)(r->pf + r->pf_floats);
    pf.lines = (pf.end - pf.p + 63) / 64, pf.total = vecs * r->OW;
  }
  if (r->Og % 16 != 0 && !rlx_gconv_by_vectors(r->Og, r->Cg)) { /* vectors from each group's first channel */
    for (int64_t g = r->ob0 / r->Og; g * r->Og < r->ob1 && g * r->Og < r->O; g++)
      for (int64_t ob = g * r->Og, end = (g + 1) * r->Og; ob < end;) {
        /* two vectors while the group has more than 16 channels left (one broadcast for both), the last
         * masked to the group */
        int nv = end - ob > 16 ? 2 : 1;
        int64_t n = end - ob - 16 * (nv - 1);
        n = n < 16 ? n : 16;
        blk b = {.store = (__mmask16)(n == 16 ? 0xffff : (1u << n) - 1), .ch0 = g * r->Cg,
                 .vec = g * ((r->Og + 15) / 16) + (ob - g * r->Og) / 16};
        if (nv == 2) vector_row(r, &b, ALIGNED, 2, ob, lo, hi, &pf);
        else vector_row(r, &b, ALIGNED, 1, ob, lo, hi, &pf);
        ob += 16 * (nv - 1) + n;
      }
    return pf_fetched(&pf, r);
  }
  for (int64_t ob = r->ob0; ob < r->ob1 && ob < r->O; ob += 16) {
    int64_t n = r->O - ob < 16 ? r->O - ob : 16;
    blk b = {.store = (__mmask16)(n == 16 ? 0xffff : (1u << n) - 1), .vec = ob / 16};
    int64_t g0 = ob / r->Og, g1 = (ob + n - 1) / r->Og;
    b.ch0 = g0 * r->Cg;
    if (r->Og == 24 && ob % 48 == 0 && ob + 48 <= r->O && ob + 48 <= r->ob1) { /* a pair of whole groups */
      b.hi = 0xff00;
      vector_row(r, &b, PAIR, 3, ob, lo, hi, &pf);
      ob += 32;
      continue;
    }
    if (g0 != g1 && 16 % r->Og != 0) { /* across two groups at lane 8 (Og 8 more than a multiple of 16) */
      b.hi = (__mmask16)(0xffffu << ((g1 * r->Og - ob) & 15));
      vector_row(r, &b, STRADDLE, 1, ob, lo, hi, &pf);
      continue;
    }
    if (g0 == g1) {
      /* two vectors of one group at once where it has them (32-wide groups): twice the sums in flight, one
       * broadcast for both */
      if (n == 16 && ob + 32 <= r->O && (ob + 31) / r->Og == g0 && ob + 32 <= r->ob1) {
        vector_row(r, &b, ONE_GROUP, 2, ob, lo, hi, &pf);
        ob += 16;
      } else {
        vector_row(r, &b, ONE_GROUP, 1, ob, lo, hi, &pf);
      }
      continue;
    }
    int64_t nin = (g1 - g0 + 1) * r->Cg; /* whole groups (rlx_gconv_by_vectors): at most 16 channels */
    b.in = (__mmask16)(nin >= 16 ? 0xffff : (1u << nin) - 1);
    int idx[16];
    for (int l = 0; l < 16; l++) idx[l] = (int)((l / r->Og) * r->Cg);
    b.idx = _mm512_loadu_si512(idx);
    vector_row(r, &b, PERMUTE, 1, ob, lo, hi, &pf);
  }
  return pf_fetched(&pf, r);
}
