/*
 * pool_avx512.c — one row of a 2-D f32 pooling (pool.h) with AVX-512F, 16
 * output columns a vector. Each window column is a load of the input row
 * at a constant offset: at stride 1 one unaligned load, at stride 2 two
 * loads whose even elements one permute gathers, at any other stride a
 * gather. In the interior every lane is inside the row; a vector at the
 * row's edges masks its loads and its update to the lanes whose column is
 * inside the row (a masked load reads nothing of the lanes it leaves out,
 * so the addresses before the row's start are never touched), and an
 * average's divisor is then per lane. Max pooling's own passes: stride 2
 * over 2-3 columns (evens and odds split once), stride 1, and the flat
 * run of "same" pools over small planes (pool.h). Built with -mavx512f (this file
 * only); called only when the CPU has AVX-512F.
 */
#include <immintrin.h>

#include "cpu/pool.h"

#define AI static inline __attribute__((always_inline))
#define HSTRIDE RLX_POOL_HSTRIDE

/* Bit i of m at bit 2i (16 bits -> 32). */
AI uint32_t spread_even(uint32_t m) {
  m = (m | m << 8) & 0x00ff00ffu;
  m = (m | m << 4) & 0x0f0f0f0fu;
  m = (m | m << 2) & 0x33333333u;
  return (m | m << 1) & 0x55555555u;
}

/* p[i * s] for the lanes i of mask k (0 elsewhere); SW: 1, 2 or 0 (any stride, s). */
AI __m512 load_cols(const float *p, const int SW, int64_t s, __mmask16 k) {
  if (SW == 1) return _mm512_maskz_loadu_ps(k, p);
  if (SW == 2) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    uint32_t raw = spread_even(k);
    return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps((__mmask16)raw, p), even,
                                  _mm512_maskz_loadu_ps((__mmask16)(raw >> 16), p + 16));
  }
  const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                         _mm512_set1_epi32((int)s));
  return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, idx, p, 4);
}

/* load_cols with stride 2's spread mask made beforehand (raw = spread_even(k)). */
AI __m512 load_cols2(const float *p, const int SW, int64_t s, __mmask16 k, uint32_t raw) {
  if (SW != 2) return load_cols(p, SW, s, k);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps((__mmask16)raw, p), even,
                                _mm512_maskz_loadu_ps((__mmask16)(raw >> 16), p + 16));
}

/* The lanes of the vector at column ox (n of them) whose window column b is inside the row. */
AI __mmask16 inside(const rlx_pool_row *r, int64_t ox, int64_t b, __mmask16 lanes) {
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i col = _mm512_add_epi32(_mm512_set1_epi32((int)(ox * r->sw - r->pw + b * r->dw)),
                                 _mm512_mullo_epi32(iota, _mm512_set1_epi32((int)r->sw)));
  return lanes & _mm512_cmp_epi32_mask(col, _mm512_setzero_si512(), _MM_CMPINT_NLT) &
         _mm512_cmp_epi32_mask(col, _mm512_set1_epi32((int)r->W), _MM_CMPINT_LT);
}

/* The reference's max step (pool_ref, pool.h): b replaces a where b > a or b is NaN, unless a is NaN; only
 * in the lanes of k. */
AI __m512 max_step(__m512 a, __m512 b, __mmask16 k) {
  __mmask16 t = _mm512_cmp_ps_mask(b, a, _CMP_NLE_UQ) & ~_mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
  return _mm512_mask_mov_ps(a, t & k, b);
}

/* The window-row maxima of every input row (h[iy][ox]), row by row (a plane wider than L1 is read once), with
 * the edge masks of every column vector made once a plane where they fit HMAX_MASKS (else per row). EXACT:
 * the reference's max step; else vmaxps (b > a ? b : a, the step's result where neither is NaN), and returns
 * whether a NaN was read, for the caller to redo the plane. */
#define HMAX_MASKS 1024
AI bool hmax_plane(const float *x, float *h, const rlx_pool_plane *g, const int SW, const bool EXACT) {
  int64_t ox0 = (g->pw + g->sw - 1) / g->sw, last = g->W - 1 + g->pw - (g->kw - 1) * g->dw,
          ox1 = last < 0 ? 0 : last / g->sw + 1, nvec = (g->OW + 15) / 16;
  rlx_pool_row r = {.W = g->W, .sw = g->sw, .pw = g->pw, .kw = g->kw, .dw = g->dw}; /* for inside() */
  __mmask16 nan = 0, kt[HMAX_MASKS];
  uint32_t rt[HMAX_MASKS]; /* stride 2: the masks spread over the two loads */
  bool table = nvec * g->kw <= HMAX_MASKS;
  for (int64_t v = 0; table && v < nvec; v++) {
    int64_t ox = 16 * v, n = g->OW - ox < 16 ? g->OW - ox : 16;
    __mmask16 lanes = (__mmask16)(n == 16 ? 0xffff : (1u << n) - 1);
    for (int64_t b = 0; b < g->kw; b++) {
      __mmask16 k = ox < ox0 || ox + n > ox1 ? inside(&r, ox, b, lanes) : lanes;
      kt[v * g->kw + b] = k, rt[v * g->kw + b] = spread_even(k);
    }
  }
  for (int64_t iy = 0; iy < g->H; iy++) {
    const float *row = x + iy * g->W;
    for (int64_t v = 0; v < nvec; v++) {
      int64_t ox = 16 * v, n = g->OW - ox < 16 ? g->OW - ox : 16;
      __mmask16 lanes = (__mmask16)(n == 16 ? 0xffff : (1u << n) - 1);
      bool edge = ox < ox0 || ox + n > ox1;
      const float *p = row + ox * g->sw - g->pw;
      __m512 m = _mm512_set1_ps(-__builtin_inff());
      for (int64_t b = 0; b < g->kw; b++) {
        __mmask16 k = table ? kt[v * g->kw + b] : edge ? inside(&r, ox, b, lanes) : lanes;
        __m512 c = table ? load_cols2(p + b * g->dw, SW, g->sw, k, rt[v * g->kw + b]) : load_cols(p + b * g->dw, SW, g->sw, k);
        if (EXACT) {
          m = max_step(m, c, k);
        } else {
          m = _mm512_mask_max_ps(m, k, c, m); /* the lanes whose column is inside the row */
          nan |= _mm512_mask_cmp_ps_mask(k, c, c, _CMP_UNORD_Q);
        }
      }
      _mm512_store_ps(h + iy * HSTRIDE(g->OW) + ox, m); /* whole vectors: the loads in vmax_plane forward from them */
    }
  }
  return nan != 0;
}

/* 16 columns [c, c + 16) of a row of W, -inf in those outside it (a masked load reads nothing there). */
AI __m512 cols16(const float *row, int64_t c, int64_t W) {
  if (c >= 0 && c + 16 <= W) return _mm512_loadu_ps(row + c);
  int64_t lo = c < 0 ? -c : 0, hi = W - c < 16 ? W - c : 16;
  __mmask16 k = hi > lo ? (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1)) : 0;
  return _mm512_mask_loadu_ps(_mm512_set1_ps(-__builtin_inff()), k, row + c);
}

/* hmax at stride 2 over 2 or 3 adjacent columns (the 3x3 stride-2 pools of resnet, squeezenet, googlenet,
 * densenet; 2x2 stride 2): 32 input columns a vector, loaded once and split into their even and odd
 * columns (two permutes); the third column is the next vector's evens shifted in by one lane. Columns
 * outside the row read as -inf, which never replaces a maximum (b > a fails): the masked steps' results.
 * The steps in the window's column order (vmaxps, b > a ? b : a). Returns whether a NaN was read (any of the
 * row's loads: the caller then redoes the plane with the reference's step). */
AI bool hmax_plane_s2(const float *x, float *h, const rlx_pool_plane *g, const int KW) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  int64_t W = g->W, OW = g->OW;
  __mmask16 nan = 0;
  for (int64_t iy = 0; iy < g->H; iy++) {
    const float *row = x + iy * W;
    float *hr = h + iy * HSTRIDE(OW);
    __m512 a = cols16(row, -g->pw, W), b = cols16(row, 16 - g->pw, W);
    nan |= _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q);
    __m512 e = _mm512_permutex2var_ps(a, even, b), o = _mm512_permutex2var_ps(a, odd, b);
    for (int64_t ox = 0; ox < OW; ox += 16) {
      __m512 m = _mm512_max_ps(o, e); /* columns 0, 1: o > e ? o : e */
      if (KW == 3) {
        int64_t c = 2 * (ox + 16) - g->pw;
        __m512 a2 = cols16(row, c, W), b2 = cols16(row, c + 16, W);
        nan |= _mm512_cmp_ps_mask(a2, b2, _CMP_UNORD_Q);
        __m512 e2 = _mm512_permutex2var_ps(a2, even, b2);
        m = _mm512_max_ps(_mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(e2), _mm512_castps_si512(e), 1)), m);
        e = e2, o = _mm512_permutex2var_ps(a2, odd, b2);
      } else if (ox + 16 < OW) {
        int64_t c = 2 * (ox + 16) - g->pw;
        __m512 a2 = cols16(row, c, W), b2 = cols16(row, c + 16, W);
        nan |= _mm512_cmp_ps_mask(a2, b2, _CMP_UNORD_Q);
        e = _mm512_permutex2var_ps(a2, even, b2), o = _mm512_permutex2var_ps(a2, odd, b2);
      }
      _mm512_store_ps(hr + ox, m);
    }
  }
  return nan != 0;
}

/* One input row's maxima over KW (2 or 3) adjacent columns at stride 2 for the 16 output columns whose first
 * window column is c, 2c' + 0..31 loaded once (-inf outside the row, cols16) and split into their even and odd
 * columns; the third column is the evens shifted by a lane, lane 15's (column c + 32) a scalar where the
 * vector has 16 columns (FULL). The steps in the window's column order (vmaxps). nan: a NaN was read. */
AI __m512 hrow_s2(const float *row, int64_t c, int64_t W, const int KW, bool full, __mmask16 *nan) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  __m512 a = cols16(row, c, W), b = cols16(row, c + 16, W);
  *nan |= _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q);
  __m512 m = _mm512_max_ps(_mm512_permutex2var_ps(a, odd, b), _mm512_permutex2var_ps(a, even, b));
  if (KW == 3) {
    const __m512i next = _mm512_setr_epi32(2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 31);
    __m512 t = _mm512_permutex2var_ps(a, next, b);
    if (full) {
      float z = c + 32 < W ? row[c + 32] : -__builtin_inff(); /* c + 32 >= 0: pw <= 32 (the caller) */
      t = _mm512_mask_mov_ps(t, 0x8000, _mm512_set1_ps(z));
      *nan |= (__mmask16)(z != z);
    }
    m = _mm512_max_ps(t, m);
  }
  return m;
}

/* Max pooling at stride 2 both ways over KH x KW (2 or 3 each) windows, undilated, in one pass: each output
 * row's window rows maximized across (hrow_s2, 16 output columns a vector) and combined in row order straight
 * into y, the row two output rows share (KH 3) kept a vector per strip of 16 columns. Every step and its order
 * are the two passes' (hmax_plane_s2, vmax_plane) with vmaxps, without the round trip through h nor a pass per
 * input row: squeezenet's and googlenet's small planes had spent more on those than on the maxima. At most two
 * strips (OW <= 32) go down one strip at a time, the shared row in a register (max_plane_s2x2_strips); wider
 * planes (resnet's 112x112, at most RLX_POOL_S2_STRIPS strips) row by row across the strips, the input read
 * in order (max_plane_s2x2_rows). Both return whether a NaN was read (y is then unfinished: the caller redoes
 * the plane with the reference's step). */
#define RLX_POOL_S2_STRIPS 8
AI bool max_plane_s2x2_rows(const float *x, float *y, const rlx_pool_plane *g, const int KH, const int KW) {
  int64_t H = g->H, W = g->W, OW = g->OW, kept = -1;
  __mmask16 nan = 0;
  __m512 keep[RLX_POOL_S2_STRIPS];
  for (int64_t oy = 0; oy < g->OH; oy++) {
    int64_t iy0 = 2 * oy - g->ph;
    for (int64_t ox = 0, v = 0; ox < OW; ox += 16, v++) {
      int64_t n = OW - ox < 16 ? OW - ox : 16, c = 2 * ox - g->pw;
      __m512 m = _mm512_set1_ps(-__builtin_inff()); /* vmax_plane's steps: max(row, m) for the rows inside */
#pragma GCC unroll 3
      for (int a = 0; a < KH; a++) {
        int64_t iy = iy0 + a;
        if (iy < 0 || iy >= H) continue;
        __m512 r = iy == kept ? keep[v] : hrow_s2(x + iy * W, c, W, KW, n == 16, &nan);
        m = _mm512_max_ps(r, m);
        if (KH == 3 && a == 2) keep[v] = r;
      }
      _mm512_mask_storeu_ps(y + oy * OW + ox, (__mmask16)(n == 16 ? 0xffff : (1u << n) - 1), m);
    }
    if (KH == 3) kept = iy0 + 2;
  }
  return nan != 0;
}

/* (the same, one strip at a time) */
AI bool max_plane_s2x2_strips(const float *x, float *y, const rlx_pool_plane *g, const int KH, const int KW) {
  int64_t H = g->H, W = g->W, OW = g->OW;
  __mmask16 nan = 0;
  for (int64_t ox = 0; ox < OW; ox += 16) {
    int64_t n = OW - ox < 16 ? OW - ox : 16, c = 2 * ox - g->pw, kept = -1;
    __mmask16 lanes = (__mmask16)(n == 16 ? 0xffff : (1u << n) - 1);
    __m512 keep = _mm512_setzero_ps();
    for (int64_t oy = 0; oy < g->OH; oy++) {
      int64_t iy0 = 2 * oy - g->ph;
      __m512 m = _mm512_set1_ps(-__builtin_inff()); /* vmax_plane's steps: max(row, m) for the rows inside */
#pragma GCC unroll 3
      for (int a = 0; a < KH; a++) {
        int64_t iy = iy0 + a;
        if (iy < 0 || iy >= H) continue;
        __m512 r = iy == kept ? keep : hrow_s2(x + iy * W, c, W, KW, n == 16, &nan);
        m = _mm512_max_ps(r, m);
        if (KH == 3 && a == 2) keep = r, kept = iy;
      }
      _mm512_mask_storeu_ps(y + oy * OW + ox, lanes, m);
    }
  }
  return nan != 0;
}

/* One input row's maxima over 3 adjacent columns at stride 1 for the 16 output columns whose first window
 * column is c (-inf outside the row, cols16), in column order (vmaxps); the first and the last load cover
 * every column read, one compare for NaN. */
AI __m512 hrow_s1(const float *row, int64_t c, int64_t W, __mmask16 *nan) {
  __m512 first = cols16(row, c, W), last = cols16(row, c + 2, W);
  *nan |= _mm512_cmp_ps_mask(first, last, _CMP_UNORD_Q);
  return _mm512_max_ps(last, _mm512_max_ps(cols16(row, c + 1, W), first));
}

/* Max pooling 3x3 at stride 1, undilated, in one pass, over planes the flat run does not take (more than
 * RLX_POOL_FLAT_MAX elements, or not "same") up to 64 output columns (wider: not measured, the two passes):
 * down each strip of 16 output columns, each input row maximized across once (hrow_s1) and kept in a register
 * while the three output rows that read it are combined in row order straight into y. The steps and their
 * order are the two passes' with vmaxps. Returns whether a NaN was read (y is then unfinished). */
AI bool max_plane_s1_3x3(const float *x, float *y, const rlx_pool_plane *g) {
  int64_t H = g->H, W = g->W, OW = g->OW;
  __mmask16 nan = 0;
  for (int64_t ox = 0; ox < OW; ox += 16) {
    int64_t n = OW - ox < 16 ? OW - ox : 16, c = ox - g->pw, t = -g->ph; /* t: output row 0's first window row */
    __mmask16 lanes = (__mmask16)(n == 16 ? 0xffff : (1u << n) - 1);
    /* the output row's first two window rows (in0, in1: inside the image) */
    bool in0 = t >= 0 && t < H, in1 = t + 1 >= 0 && t + 1 < H;
    __m512 r0 = in0 ? hrow_s1(x + t * W, c, W, &nan) : _mm512_setzero_ps();
    __m512 r1 = in1 ? hrow_s1(x + (t + 1) * W, c, W, &nan) : _mm512_setzero_ps();
    for (int64_t oy = 0; oy < g->OH; oy++) {
      int64_t i2 = oy - g->ph + 2;
      bool in2 = i2 >= 0 && i2 < H;
      __m512 r2 = in2 ? hrow_s1(x + i2 * W, c, W, &nan) : _mm512_setzero_ps();
      __m512 m = _mm512_set1_ps(-__builtin_inff()); /* vmax_plane's steps: max(row, m) for the rows inside */
      if (in0) m = _mm512_max_ps(r0, m);
      if (in1) m = _mm512_max_ps(r1, m);
      if (in2) m = _mm512_max_ps(r2, m);
      _mm512_mask_storeu_ps(y + oy * OW + ox, lanes, m);
      r0 = r1, in0 = in1, r1 = r2, in1 = in2;
    }
  }
  return nan != 0;
}

/* hmax at stride 1 over kw <= 16 adjacent columns (googlenet's 3x3 branch pools, SPP's 5x5): a load of 16
 * columns at each window column, -inf outside the row (cols16). The loads at the first and the last window
 * column cover every column a vector reads: one compare for NaN. KW: 3, or 0 for g->kw. */
AI bool hmax_plane_s1(const float *x, float *h, const rlx_pool_plane *g, const int KW) {
  int64_t W = g->W, OW = g->OW, kw = KW ? KW : g->kw;
  __mmask16 nan = 0;
  for (int64_t iy = 0; iy < g->H; iy++) {
    const float *row = x + iy * W;
    for (int64_t ox = 0; ox < OW; ox += 16) {
      int64_t c = ox - g->pw;
      __m512 first = cols16(row, c, W), m = first, last = first;
      for (int64_t b = 1; b < kw; b++) m = _mm512_max_ps(last = cols16(row, c + b, W), m);
      nan |= _mm512_cmp_ps_mask(first, last, _CMP_UNORD_Q);
      _mm512_store_ps(h + iy * HSTRIDE(OW) + ox, m);
    }
  }
  return nan != 0;
}

/* Every output row: its window's rows of h combined in order. */
AI void vmax_plane(const float *h, float *y, const rlx_pool_plane *g, const bool EXACT) {
  for (int64_t oy = 0; oy < g->OH; oy++, y += g->OW) {
    const float *rows[RLX_POOL_ROWS_MAX];
    int nrows = 0;
    for (int64_t a = 0, iy = oy * g->sh - g->ph; a < g->kh; a++, iy += g->dh)
      if (iy >= 0 && iy < g->H) rows[nrows++] = h + iy * HSTRIDE(g->OW);
    for (int64_t i = 0; i < g->OW; i += 16) {
      __mmask16 lanes = (__mmask16)(g->OW - i >= 16 ? 0xffff : (1u << (g->OW - i)) - 1);
      __m512 m = _mm512_set1_ps(-__builtin_inff());
      for (int a = 0; a < nrows; a++) {
        __m512 v = _mm512_load_ps(rows[a] + i);
        m = EXACT ? max_step(m, v, lanes) : _mm512_max_ps(v, m);
      }
      _mm512_mask_storeu_ps(y + i, lanes, m);
    }
  }
}

AI void max_plane(const float *x, float *h, float *y, const rlx_pool_plane *g, const int SW) {
  if (hmax_plane(x, h, g, SW, false)) hmax_plane(x, h, g, SW, true), vmax_plane(h, y, g, true);
  else vmax_plane(h, y, g, false); /* no NaN in the plane: h holds none either */
}

void rlx_pool_max_plane_avx512(const float *x, float *h, float *y, const rlx_pool_plane *g) {
  if (g->sh == 2 && g->sw == 2 && g->dh == 1 && g->dw == 1 && g->kh == g->kw && (g->kw == 2 || g->kw == 3) &&
      g->pw <= 32 && g->OW <= 16 * RLX_POOL_S2_STRIPS) {
    bool nan = g->OW <= 32 ? (g->kw == 3 ? max_plane_s2x2_strips(x, y, g, 3, 3) : max_plane_s2x2_strips(x, y, g, 2, 2))
                           : (g->kw == 3 ? max_plane_s2x2_rows(x, y, g, 3, 3) : max_plane_s2x2_rows(x, y, g, 2, 2));
    if (nan)
      hmax_plane(x, h, g, 2, true), vmax_plane(h, y, g, true);
  } else if (g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 && g->kh == 3 && g->kw == 3 && g->OW <= 64) {
    if (max_plane_s1_3x3(x, y, g)) hmax_plane(x, h, g, 1, true), vmax_plane(h, y, g, true);
  } else if (g->sw == 2 && g->dw == 1 && (g->kw == 2 || g->kw == 3)) {
    if (g->kw == 3 ? hmax_plane_s2(x, h, g, 3) : hmax_plane_s2(x, h, g, 2))
      hmax_plane(x, h, g, 2, true), vmax_plane(h, y, g, true);
    else
      vmax_plane(h, y, g, false);
  } else if (g->sw == 1 && g->dw == 1 && g->kw <= 16) {
    if (g->kw == 3 ? hmax_plane_s1(x, h, g, 3) : hmax_plane_s1(x, h, g, 0))
      hmax_plane(x, h, g, 1, true), vmax_plane(h, y, g, true);
    else
      vmax_plane(h, y, g, false);
  } else if (g->sw == 1) max_plane(x, h, y, g, 1);
  else if (g->sw == 2) max_plane(x, h, y, g, 2);
  else max_plane(x, h, y, g, 0);
}

/* acc (lo: lanes 0-7, hi: 8-15) += v's lanes, in double. */
AI void add_pd(__m512d *lo, __m512d *hi, __m512 v) {
  *lo = _mm512_add_pd(*lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
  *hi = _mm512_add_pd(*hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
}

/* The sums over their divisors d (int32 lanes), rounded to float; NaN where d is 0 (the reference's rule). */
AI __m512 avg_of(__m512d lo, __m512d hi, __m512i d) {
  __m512d dlo = _mm512_cvtepi32_pd(_mm512_castsi512_si256(d)), dhi = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(d, 1));
  __m256 ylo = _mm512_cvtpd_ps(_mm512_div_pd(lo, dlo)), yhi = _mm512_cvtpd_ps(_mm512_div_pd(hi, dhi));
  __m512 y = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(ylo)), _mm256_castps_pd(yhi), 1));
  return _mm512_mask_mov_ps(y, _mm512_cmp_epi32_mask(d, _mm512_setzero_si512(), _MM_CMPINT_EQ),
                            _mm512_set1_ps(__builtin_nanf("")));
}

/* Average over the vector at column ox; the lanes outside the row add 0.0, which leaves a sum that started at
 * +0.0 unchanged (it is never -0.0). The window's column masks depend on b only: made once, outside the rows. */
AI void vec_avg(const rlx_pool_row *r, const int SW, const bool EDGE, int64_t ox, __mmask16 lanes) {
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
  __mmask16 in[RLX_POOL_COLS_MAX];
  for (int64_t b = 0; b < r->kw; b++) in[b] = EDGE ? inside(r, ox, b, lanes) : lanes;
  for (int a = 0; a < r->nrows; a++) {
    const float *p = r->x + r->rows[a] + ox * r->sw - r->pw;
    for (int64_t b = 0; b < r->kw; b++) add_pd(&lo, &hi, load_cols(p + b * r->dw, SW, r->sw, in[b]));
  }
  /* the divisor per lane: window [x0, x0 + kw) clipped to the padded row (count_include_pad) or the row */
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i d;
  if (r->divisor) d = _mm512_set1_epi32((int)r->divisor);
  else {
    __m512i x0 = _mm512_sub_epi32(_mm512_mullo_epi32(_mm512_add_epi32(_mm512_set1_epi32((int)ox), iota),
                                                     _mm512_set1_epi32((int)r->sw)),
                                  _mm512_set1_epi32((int)r->pw)),
            end = _mm512_add_epi32(x0, _mm512_set1_epi32((int)r->kw));
    if (r->include_pad)
      d = _mm512_mullo_epi32(_mm512_set1_epi32((int)r->hrows),
                             _mm512_sub_epi32(_mm512_min_epi32(end, _mm512_set1_epi32((int)(r->W + r->pw))), x0));
    else
      d = _mm512_mullo_epi32(_mm512_set1_epi32(r->nrows),
                             _mm512_max_epi32(_mm512_sub_epi32(_mm512_min_epi32(end, _mm512_set1_epi32((int)r->W)),
                                                               _mm512_max_epi32(x0, _mm512_setzero_si512())),
                                              _mm512_setzero_si512()));
  }
  _mm512_mask_storeu_ps(r->y + ox, lanes, avg_of(lo, hi, d));
}

void rlx_pool_avg_flat_avx512(const float *x, float *y, int64_t n, const rlx_pool_flat *f, int64_t divisor) {
  const __m512i one = _mm512_set1_epi32(1);
  int64_t nvec = (n + 15) / 16, kh = f->kh, kw = f->kw, W = f->W;
  for (int64_t u = 0, q = 0; u < nvec; u++, q = q + 1 == f->period ? 0 : q + 1) {
    __mmask16 tail = (__mmask16)(n - 16 * u >= 16 ? 0xffff : (1u << (n - 16 * u)) - 1);
    const float *p = x + 16 * u - f->ph * W - f->pw;
    const uint16_t *hm = f->hmask + q * kw, *vm = f->vmask + q * kh;
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
    for (int64_t a = 0; a < kh; a++) {
      __mmask16 ra = (__mmask16)(vm[a] & tail);
      for (int64_t b = 0; b < kw; b++) add_pd(&lo, &hi, _mm512_maskz_loadu_ps((__mmask16)(ra & hm[b]), p + a * W + b));
    }
    __m512i d = _mm512_set1_epi32((int)divisor);
    if (!divisor) { /* rows inside times columns inside */
      __m512i rows = _mm512_setzero_si512(), cols = _mm512_setzero_si512();
      for (int64_t a = 0; a < kh; a++) rows = _mm512_mask_add_epi32(rows, vm[a], rows, one);
      for (int64_t b = 0; b < kw; b++) cols = _mm512_mask_add_epi32(cols, hm[b], cols, one);
      d = _mm512_mullo_epi32(rows, cols);
    }
    _mm512_mask_storeu_ps(y + 16 * u, tail, avg_of(lo, hi, d));
  }
}

AI void row(const rlx_pool_row *r, const int SW) {
  for (int64_t ox = 0; ox < r->OW; ox += 16) {
    int64_t n = r->OW - ox < 16 ? r->OW - ox : 16;
    __mmask16 lanes = (__mmask16)(n == 16 ? 0xffff : (1u << n) - 1);
    if (ox < r->ox0 || ox + n > r->ox1) vec_avg(r, SW, true, ox, lanes);
    else vec_avg(r, SW, false, ox, lanes);
  }
}

void rlx_pool_row_avx512(const rlx_pool_row *r) {
  if (r->sw == 1) row(r, 1);
  else if (r->sw == 2) row(r, 2);
  else row(r, 0);
}

/* The flat run's two passes; KW, KH: the window (3 for googlenet's and inception's 3x3s, the loops unrolled), or
 * 0 for f's. */
AI bool max_flat(const float *x, float *h, float *y, int64_t n, const rlx_pool_flat *f, const int KH, const int KW) {
  const __m512 ninf = _mm512_set1_ps(-__builtin_inff());
  __mmask16 nan = 0;
  int64_t nvec = (n + 15) / 16, kh = KH ? KH : f->kh, kw = KW ? KW : f->kw, W = f->W;
  for (int64_t u = 0, q = 0; u < nvec; u++, q = q + 1 == f->period ? 0 : q + 1) {
    __mmask16 tail = (__mmask16)(n - 16 * u >= 16 ? 0xffff : (1u << (n - 16 * u)) - 1);
    const float *p = x + 16 * u - f->pw;
    const uint16_t *hm = f->hmask + q * kw;
    __m512 m = ninf;
#pragma GCC unroll 3
    for (int64_t b = 0; b < kw; b++) {
      __m512 v = _mm512_mask_loadu_ps(ninf, (__mmask16)(hm[b] & tail), p + b);
      if (b == f->pw) nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q); /* every element once */
      m = _mm512_max_ps(v, m);
    }
    _mm512_store_ps(h + 16 * u, m);
  }
  if (nan) return true;
  for (int64_t u = 0, q = 0; u < nvec; u++, q = q + 1 == f->period ? 0 : q + 1) {
    __mmask16 tail = (__mmask16)(n - 16 * u >= 16 ? 0xffff : (1u << (n - 16 * u)) - 1);
    const float *p = h + 16 * u - f->ph * W;
    const uint16_t *vm = f->vmask + q * kh;
    __m512 m = ninf;
#pragma GCC unroll 3
    for (int64_t a = 0; a < kh; a++) m = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, (__mmask16)(vm[a] & tail), p + a * W), m);
    _mm512_mask_storeu_ps(y + 16 * u, tail, m);
  }
  return false;
}

bool rlx_pool_max_flat_avx512(const float *x, float *h, float *y, int64_t n, const rlx_pool_flat *f) {
  if (f->kh == 3 && f->kw == 3) return max_flat(x, h, y, n, f, 3, 3);
  return max_flat(x, h, y, n, f, 0, 0);
}

bool rlx_pool_max_nhwc_row_avx512(const float *img, float *y, const rlx_pool_nhwc_row *r) {
  const __m512 ninf = _mm512_set1_ps(-__builtin_inff());
  __mmask16 nan = 0;
  for (int64_t ox = 0; ox < r->OW; ox++, y += r->C) {
    int64_t x0 = ox * r->sw - r->pw;
    for (int64_t c0 = 0; c0 < r->C; c0 += 64) {
      int64_t nc = r->C - c0 < 64 ? r->C - c0 : 64;
      __mmask16 k[4];
      __m512 m[4];
      for (int v = 0; v < 4; v++) {
        int64_t left = nc - 16 * v;
        k[v] = (__mmask16)(left >= 16 ? 0xffff : left > 0 ? (1u << left) - 1 : 0);
        m[v] = ninf;
      }
      for (int a = 0; a < r->nrows; a++) {
        const float *row = img + r->rows[a] + c0;
        for (int64_t e = 0; e < r->kw; e++) {
          int64_t ix = x0 + e * r->dw;
          if (ix < 0 || ix >= r->W) continue;
          const float *p = row + ix * r->C;
#pragma GCC unroll 4
          for (int v = 0; v < 4; v++) {
            if (!k[v]) break;
            __m512 x = _mm512_maskz_loadu_ps(k[v], p + 16 * v);
            nan |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
            m[v] = _mm512_max_ps(x, m[v]); /* x > m ? x : m */
          }
        }
      }
      for (int v = 0; v < 4 && k[v]; v++) _mm512_mask_storeu_ps(y + c0 + 16 * v, k[v], m[v]);
    }
  }
  return nan != 0;
}
