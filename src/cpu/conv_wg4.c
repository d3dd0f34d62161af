/*
 * conv_wg4.c — Winograd F(4x4, 3x3): 3x3 convolutions with stride 1 (NCHW, f32).
 *
 * Each 4x4 output tile comes from a 6x6 input patch d:  Y = A^T [U . V] A,
 * U = G g G^T (the 3x3 kernel g, transformed once at compile time) and
 * V = B^T d B; summed over the input channels, the 36 products of a tile
 * become 36 GEMMs, one per transformed position xi (one parallel region):
 *
 *   M[xi] [O, T] = U[xi] [O, C] @ V[xi] [C, T]      (T = tiles of the image)
 *
 * 4x fewer multiplications than the direct product (36 per 16 outputs
 * against 144), 1.8x fewer than F(2x2, 3x3) — at the price of rounding. The
 * interpolation points are 0, 1, -1, 2, -1/2 (and infinity), not the usual
 * 0, +-1, +-2: with the same fp32 data that choice has 2.6x smaller worst
 * error (docs/perf.md gives the measurement; Barabasz et al., "Error
 * analysis and improving the accuracy of Winograd convolution", 2020). B^T
 * and A^T then hold only dyadic entries (0, +-1/8 .. 8), exact in float;
 * G's thirds and fifteenths are applied in double at packing time.
 *
 *   B^T = | 1  3/2   -2 -3/2    1  0 |   A^T = | 1  1  1  1     1  0 |
 *         | 0   -1 -5/2 -1/2    1  0 |         | 0  1 -1  2  -1/2  0 |
 *         | 0    1  1/2 -5/2    1  0 |         | 0  1  1  4   1/4  0 |
 *         | 0 -1/2   -1  1/2    1  0 |         | 0  1 -1  8  -1/8  1 |
 *         | 0    2   -1   -2    1  0 |
 *         | 0    1  3/2   -2 -3/2  1 |   G = rows (1,0,0) (-1,-1,-1)/3 (1,-1,1)/3
 *                                              (1,2,4)/15 (-16,8,-4)/15 (0,0,1)
 *
 * The transforms are vectorized over the tiles of a whole image, not of one
 * tile row (7 tiles on a 28x28 image, too few for a vector): a channel is
 * first copied into its 16 row-and-column phase planes (padding included),
 *
 *   Q[a][b][r][q] = x[4r + a - ph][4q + b - pw]     (0 outside the image)
 *
 * each (TH + 1) x (TW + 1), so that element (i, j) of tile (ty, tx) is
 * Q[i % 4][j % 4] at flat index f + (i / 4) * (TW + 1) + j / 4, f = ty *
 * (TW + 1) + tx: 36 unit-stride streams at constant offsets. The transform
 * runs over f in blocks of 16 (rows of B^T d, then columns) and writes
 * V[xi][ch][f]. The tiles are numbered f, so the column tx = TW of each
 * tile row is a junk tile: L = (TH - 1) * (TW + 1) + TW columns, a few more
 * than T. The GEMMs multiply the junk along (56x56 and 28x28 images), or
 * skip it where that saves an eighth of the padded columns or more
 * (`compact`: their B panels are packed from the real tiles only; a 14x14
 * image has 16 tiles, L = 19). The output transform is the same in
 * reverse, into 16 output phase planes that are interleaved into the
 * output rows, where bias, residual and activation are applied.
 *
 * NaN and Inf: in a tile, one non-finite input reaches all 16 outputs
 * through the transforms (Inf - Inf), where the reference conv makes it
 * reach only the windows that contain it. The copy into the phase planes
 * notes every tile row whose patch holds a non-finite value, and those
 * output rows are computed directly from the raw weights instead (slow,
 * exact in where NaN and Inf land). Non-finite weights are the chooser's to
 * refuse (conv.c).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/conv.h"
#include "cpu/gemm.h"
#include "cpu/select.h"
#include "ops/ops_util.h"

#define XI 36 /* transformed positions: 6 x 6 */

bool rlx_conv_wg4_geo(const conv_geo *c, wg4_geo *w) {
  if (c->G != 1 || c->kh != 3 || c->kw != 3 || c->sh != 1 || c->sw != 1 || c->dh != 1 || c->dw != 1) return false;
  *w = (wg4_geo){.TH = (c->OH + 3) / 4, .TW = (c->OW + 3) / 4};
  w->T = w->TH * w->TW, w->L = (w->TH - 1) * (w->TW + 1) + w->TW;
  const rlx_sgemm_isa *it = rlx_sgemm_isa_for(w->T), *il = rlx_sgemm_isa_for(w->L);
  /* compact where it saves an eighth of the columns or more: its B packer copies short runs, slower than the
   * plain packer's whole panel rows (56x56: 208 columns against 224 is not worth it) */
  int64_t nt = (w->T + it->nr - 1) / it->nr * it->nr, nl = (w->L + il->nr - 1) / il->nr * il->nr;
  w->compact = 8 * nt <= 7 * nl;
  w->N = w->compact ? w->T : w->L, w->S = w->compact ? w->TW : w->TW + 1;
  return true;
}

#define FB 16 /* tiles per block of the transforms */

static size_t align64(size_t bytes) { return (bytes + 63) & ~(size_t)63; }
static size_t v_bytes(const conv_geo *c, const wg4_geo *w) { return align64(sizeof(float) * (size_t)(XI * c->C * w->L)); }
/* M has FB floats of slack: the output transform's last block reads (and drops) up to FB - 1 past its end */
static size_t m_bytes(const conv_geo *c, const wg4_geo *w) { return align64(sizeof(float) * (size_t)(XI * c->O * w->N + FB)); }
static size_t flag_bytes(const wg4_geo *w) { return align64((size_t)w->TH); }
static int64_t plane_floats(const wg4_geo *w) { return (w->TH + 1) * (w->TW + 1); }
/* per worker: the 16 input phase planes and a padded input row, or the 16 output phase planes and one output row */
static size_t row_bytes(const wg4_geo *w) {
  size_t in = (size_t)(16 * plane_floats(w) + FB + 4 * (w->TW + 1)), out = (size_t)(16 * (w->N + FB) + 4 * w->TW + 16);
  return align64(sizeof(float) * (in > out ? in : out));
}

size_t rlx_conv_wg4_scratch(const conv_geo *c, int threads) {
  wg4_geo w;
  if (!rlx_conv_wg4_geo(c, &w)) return SIZE_MAX;
  int t = threads > 0 ? threads : 1;
  return v_bytes(c, &w) + m_bytes(c, &w) + flag_bytes(&w) + row_bytes(&w) * (size_t)t + rlx_sgemm_scratch(t);
}

size_t rlx_conv_wg4_packed_bytes(const conv_geo *c) { return XI * rlx_sgemm_packed_a_size(c->O, c->C); }

bool rlx_conv_wg4_pack(const conv_geo *c, const float *g, void *dst) {
  static const double G[6][3] = {{1, 0, 0},
                                 {-1.0 / 3, -1.0 / 3, -1.0 / 3},
                                 {1.0 / 3, -1.0 / 3, 1.0 / 3},
                                 {1.0 / 15, 2.0 / 15, 4.0 / 15},
                                 {-16.0 / 15, 8.0 / 15, -4.0 / 15},
                                 {0, 0, 1}};
  size_t ua = rlx_sgemm_packed_a_size(c->O, c->C), oc = (size_t)(c->O * c->C);
  float *u = malloc(sizeof(float) * XI * oc);
  if (!u) return false;
  for (int64_t o = 0; o < c->O; o++)
    for (int64_t ch = 0; ch < c->C; ch++) {
      const float *w = g + (o * c->C + ch) * 9; /* [3, 3] */
      double t[6][3];                           /* G g */
      for (int a = 0; a < 6; a++)
        for (int q = 0; q < 3; q++) t[a][q] = G[a][0] * w[q] + G[a][1] * w[3 + q] + G[a][2] * w[6 + q];
      for (int a = 0; a < 6; a++)
        for (int e = 0; e < 6; e++) /* (G g) G^T */
          u[(size_t)(a * 6 + e) * oc + (size_t)(o * c->C + ch)] =
              (float)(t[a][0] * G[e][0] + t[a][1] * G[e][1] + t[a][2] * G[e][2]);
    }
  for (int xi = 0; xi < XI; xi++)
    rlx_sgemm_pack_a(c->O, c->C, u + (size_t)xi * oc, c->C, (float *)((char *)dst + ua * (size_t)xi));
  free(u);
  return true;
}

typedef struct wg4_job {
  conv_geo c;
  wg4_geo w;
  const float *x, *wraw, *bias, *res; /* the batch element's input / residual; the raw weights [O, C, 3, 3] */
  float *y, *V, *M;
  _Atomic unsigned char *bad; /* [TH]: the tile row's patch holds a NaN or an Inf */
  const rlx_epilogue *ep;
  char *rows;
  size_t row_bytes;
  int64_t off[XI];      /* element (i, j) of a tile: its phase plane and offset, from the first plane */
} wg4_job;

/* t = B^T d. */
static inline void bt6(float d0, float d1, float d2, float d3, float d4, float d5, float *t0, float *t1, float *t2,
                       float *t3, float *t4, float *t5) {
  *t0 = (d0 + d4) - 2.0f * d2 + 1.5f * (d1 - d3);
  *t1 = (d4 - d1) - 2.5f * d2 - 0.5f * d3;
  *t2 = (d4 + d1) + 0.5f * d2 - 2.5f * d3;
  *t3 = (d4 - d2) + 0.5f * (d3 - d1);
  *t4 = (d4 - d2) + 2.0f * (d1 - d3);
  *t5 = (d1 + d5) - 2.0f * d3 + 1.5f * (d2 - d4);
}

/* y = A^T s. */
static inline void at4(float s0, float s1, float s2, float s3, float s4, float s5, float *y0, float *y1, float *y2,
                       float *y3) {
  float p = s1 + s2, m = s1 - s2;
  *y0 = s0 + p + s3 + s4;
  *y1 = m + 2.0f * s3 - 0.5f * s4;
  *y2 = p + 4.0f * s3 + 0.25f * s4;
  *y3 = m + 8.0f * s3 - 0.125f * s4 + s5;
}

/* exponent all ones; static with its clones (a global target_clones function
 * would export its resolver from librlx: tests/abi.sh) */
RLX_VEC_CLONES static unsigned nonfinite_any(const float *restrict x, int64_t n) {
  unsigned nf = 0;
  for (int64_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &x[i], sizeof u);
    nf |= (~u & 0x7f800000u) == 0;
  }
  return nf;
}

unsigned rlx_conv_nonfinite(const float *x, int64_t n) { return nonfinite_any(x, n); }

/* p_b[q] = line[4q + b] for q < n: a line split into its four column phases. */
RLX_VEC_CLONES static void deinterleave4(const float *restrict line, float *restrict p0, float *restrict p1,
                                         float *restrict p2, float *restrict p3, int64_t n) {
  for (int64_t q = 0; q < n; q++)
    p0[q] = line[4 * q], p1[q] = line[4 * q + 1], p2[q] = line[4 * q + 2], p3[q] = line[4 * q + 3];
}

/* Q[a][b] (16 planes of (TH + 1) x (TW + 1)) from channel ch; line: 4 (TW + 1) floats. Marks the tile rows
 * whose patch holds a NaN or an Inf. */
static void phase_planes(const wg4_job *j, int64_t ch, float *Q, float *line) {
  const conv_geo *c = &j->c;
  int64_t TW1 = j->w.TW + 1, PQ = plane_floats(&j->w), LW = 4 * TW1;
  int64_t lo = RLX_MIN(c->pw, LW), n = RLX_MAX(0, RLX_MIN(c->W, LW - lo)); /* the image's columns in the line */
  memset(Q + 16 * PQ, 0, sizeof(float) * FB); /* the slack the last transform block reads (and drops) */
  for (int64_t i = 0; i < lo; i++) line[i] = 0.0f;
  for (int64_t i = lo + n; i < LW; i++) line[i] = 0.0f;
  for (int64_t r = 0; r <= j->w.TH; r++)
    for (int a = 0; a < 4; a++) {
      int64_t iy = 4 * r + a - c->ph;
      float *dst = Q + (4 * a) * PQ + r * TW1;
      if (iy < 0 || iy >= c->H) {
        for (int b = 0; b < 4; b++) memset(dst + b * PQ, 0, sizeof(float) * (size_t)TW1);
        continue;
      }
      const float *row = j->x + (ch * c->H + iy) * c->W;
      memcpy(line + lo, row, sizeof(float) * (size_t)n);
      deinterleave4(line, dst, dst + PQ, dst + 2 * PQ, dst + 3 * PQ, TW1);
      if (rlx_conv_nonfinite(row, c->W)) /* padded row 4r + a is row 4 (r - ty) + a of tile row ty's patches */
        for (int64_t ty = RLX_MAX(0, r - 1); ty <= RLX_MIN(j->w.TH - 1, r); ty++)
          if (4 * (r - ty) + a < 6) atomic_store_explicit(&j->bad[ty], 1, memory_order_relaxed);
    }
}

/* V[xi][f0 .. f0 + n) (row stride vs) from the 36 streams of the phase planes (offsets off). */
RLX_VEC_CLONES static void input_block(const float *restrict Q, const int64_t *off, int64_t f0, int n,
                                       float *restrict V, size_t vs) {
  float t[6][6][FB]; /* t[i][j]: rows of B^T d, column j */
  for (int jj = 0; jj < 6; jj++) {
    const float *d0 = Q + off[jj] + f0, *d1 = Q + off[6 + jj] + f0, *d2 = Q + off[12 + jj] + f0,
                *d3 = Q + off[18 + jj] + f0, *d4 = Q + off[24 + jj] + f0, *d5 = Q + off[30 + jj] + f0;
    for (int k = 0; k < FB; k++)
      bt6(d0[k], d1[k], d2[k], d3[k], d4[k], d5[k], &t[0][jj][k], &t[1][jj][k], &t[2][jj][k], &t[3][jj][k],
          &t[4][jj][k], &t[5][jj][k]);
  }
  for (int i = 0; i < 6; i++) {
    float v[6][FB];
    for (int k = 0; k < FB; k++)
      bt6(t[i][0][k], t[i][1][k], t[i][2][k], t[i][3][k], t[i][4][k], t[i][5][k], &v[0][k], &v[1][k], &v[2][k],
          &v[3][k], &v[4][k], &v[5][k]);
    for (int jj = 0; jj < 6; jj++) /* a whole block's copy has a constant size: inlined as vector moves */
      if (n == FB) memcpy(V + (size_t)(6 * i + jj) * vs + f0, v[jj], sizeof v[jj]);
      else memcpy(V + (size_t)(6 * i + jj) * vs + f0, v[jj], sizeof(float) * (size_t)n);
  }
}

static void input_task(void *ctx, int64_t ch, int worker) {
  const wg4_job *j = ctx;
  float *Q = (float *)(j->rows + j->row_bytes * (size_t)worker);
  phase_planes(j, ch, Q, Q + 16 * plane_floats(&j->w) + FB);
  int64_t L = j->w.L;
  size_t vs = (size_t)(j->c.C * L);
  float *V = j->V + ch * L;
  int64_t f = 0; /* the last block reads up to FB - 1 floats past the planes: row_bytes leaves room */
  for (; f + FB <= L; f += FB) input_block(Q, j->off, f, FB, V, vs);
  if (f < L) input_block(Q, j->off, f, (int)(L - f), V, vs);
}

/* Output phase planes P[a][b][f0 .. f0 + n) (row stride ps) from M[xi][f0 ..] (row stride ms). */
RLX_VEC_CLONES static void output_block(const float *restrict M, size_t ms, int64_t f0, int n, float *restrict P,
                                        size_t ps) {
  float s[4][6][FB]; /* s[a][j]: rows of A^T m, column j */
  for (int jj = 0; jj < 6; jj++) {
    const float *m0 = M + (size_t)jj * ms + f0, *m1 = m0 + 6 * ms, *m2 = m1 + 6 * ms, *m3 = m2 + 6 * ms,
                *m4 = m3 + 6 * ms, *m5 = m4 + 6 * ms;
    for (int k = 0; k < FB; k++)
      at4(m0[k], m1[k], m2[k], m3[k], m4[k], m5[k], &s[0][jj][k], &s[1][jj][k], &s[2][jj][k], &s[3][jj][k]);
  }
  for (int a = 0; a < 4; a++) {
    float y[4][FB];
    for (int k = 0; k < FB; k++)
      at4(s[a][0][k], s[a][1][k], s[a][2][k], s[a][3][k], s[a][4][k], s[a][5][k], &y[0][k], &y[1][k], &y[2][k],
          &y[3][k]);
    for (int b = 0; b < 4; b++)
      if (n == FB) memcpy(P + (size_t)(4 * a + b) * ps + f0, y[b], sizeof y[b]);
      else memcpy(P + (size_t)(4 * a + b) * ps + f0, y[b], sizeof(float) * (size_t)n);
  }
}

/* relu as eltwise.c computes it (NaN kept), for store_row's loops */
static inline float relu_f32(float t) { return t > 0.0f ? t : (t == t ? 0.0f : t); }

/* y[0, n) = v + b (+ res), then the activation: a ReLU (the common case) in
 * the same loop, any other as a second pass over the row (rlx_cpu_act_f32).
 * The rows are an image's width: the second pass and its call cost 2-3% of
 * squeezenet1_1's Winograd convs (docs/perf.md). */
RLX_VEC_CLONES static void store_row(float *restrict y, const float *restrict v, const float *restrict res, float b,
                                     const rlx_epilogue *ep, int64_t n) {
  bool relu = ep->has_act && ep->act.kind == RLX_UNARY_RELU;
  if (res && relu)
    for (int64_t i = 0; i < n; i++) y[i] = relu_f32(v[i] + b + res[i]);
  else if (res)
    for (int64_t i = 0; i < n; i++) y[i] = v[i] + b + res[i];
  else if (relu)
    for (int64_t i = 0; i < n; i++) y[i] = relu_f32(v[i] + b);
  else
    for (int64_t i = 0; i < n; i++) y[i] = v[i] + b;
  if (ep->has_act && !relu) rlx_cpu_act_f32(&ep->act, y, n);
}

/* row[4q + b] = p[b][q] for q < n: four phase rows interleaved. */
RLX_VEC_CLONES static void interleave4(float *restrict row, const float *restrict p0, const float *restrict p1,
                                       const float *restrict p2, const float *restrict p3, int64_t n) {
  for (int64_t q = 0; q < n; q++)
    row[4 * q] = p0[q], row[4 * q + 1] = p1[q], row[4 * q + 2] = p2[q], row[4 * q + 3] = p3[q];
}

void rlx_conv3x3_direct_rows(const conv_geo *c, const float *x, const float *w, const float *bias, const float *res,
                             const rlx_epilogue *ep, float *y, int64_t o, int64_t oy0, int64_t oy1, float *acc) {
  for (int64_t oy = oy0; oy < RLX_MIN(oy1, c->OH); oy++) {
    for (int64_t ox = 0; ox < c->OW; ox++) acc[ox] = 0.0f;
    for (int64_t ch = 0; ch < c->C; ch++)
      for (int64_t ki = 0; ki < 3; ki++) {
        int64_t iy = oy + ki - c->ph;
        if (iy < 0 || iy >= c->H) continue;
        const float *row = x + (ch * c->H + iy) * c->W, *wr = w + ((o * c->C + ch) * 3 + ki) * 3;
        for (int64_t ox = 0; ox < c->OW; ox++)
          for (int64_t kj = 0; kj < 3; kj++) {
            int64_t ix = ox + kj - c->pw;
            if (ix >= 0 && ix < c->W) acc[ox] += wr[kj] * row[ix];
          }
      }
    store_row(y + (o * c->OH + oy) * c->OW, acc, res ? res + (o * c->OH + oy) * c->OW : NULL, bias ? bias[o] : 0.0f,
              ep, c->OW);
  }
}

/* Output channel o: Y = A^T m A over all tiles, then per output row bias, residual, activation. */
static void output_task(void *ctx, int64_t o, int worker) {
  const wg4_job *j = ctx;
  const conv_geo *c = &j->c;
  int64_t N = j->w.N;
  float *P = (float *)(j->rows + j->row_bytes * (size_t)worker), *row = P + 16 * (N + FB);
  size_t ms = (size_t)(c->O * N), ps = (size_t)(N + FB);
  const float *M = j->M + o * N;
  int64_t f = 0;
  for (; f + FB <= N; f += FB) output_block(M, ms, f, FB, P, ps);
  if (f < N) output_block(M, ms, f, (int)(N - f), P, ps);
  float b = j->bias ? j->bias[o] : 0.0f;
  for (int64_t ty = 0; ty < j->w.TH; ty++) {
    if (atomic_load_explicit(&j->bad[ty], memory_order_relaxed)) {
      rlx_conv3x3_direct_rows(c, j->x, j->wraw, j->bias, j->res, j->ep, j->y, o, 4 * ty, 4 * ty + 4, row);
      continue;
    }
    for (int a = 0; a < 4 && 4 * ty + a < c->OH; a++) {
      int64_t oy = 4 * ty, f0 = ty * j->w.S;
      const float *pa = P + (size_t)(4 * a) * ps + f0;
      interleave4(row, pa, pa + ps, pa + 2 * ps, pa + 3 * ps, j->w.TW);
      const float *rr = j->res ? j->res + (o * c->OH + oy + a) * c->OW : NULL;
      store_row(j->y + (o * c->OH + oy + a) * c->OW, row, rr, b, j->ep, c->OW);
    }
  }
}

/* The B packer of a compact product: panel columns [j0, j0 + cols) are real tiles, read from V[xi] [C, L]
 * (tile t at t + t / TW) as one run per tile row they touch. */
typedef struct compact_src {
  const float *v;
  int64_t L, TW;
} compact_src;

RLX_VEC_CLONES static void pack_compact(const void *ctx, int64_t k0, int64_t kc, int64_t j0, int64_t cols, int nr, float *dst) {
  const compact_src *p = ctx;
  int64_t at[64], from[64], len[64], nseg = 0; /* cols <= nr <= 32: at most 33 runs */
  for (int64_t t = j0; t < j0 + cols && nseg < 64; nseg++) {
    int64_t tx = t % p->TW, n = RLX_MIN(p->TW - tx, j0 + cols - t);
    at[nseg] = t - j0, from[nseg] = t + t / p->TW, len[nseg] = n;
    t += n;
  }
  for (int64_t k = 0; k < kc; k++, dst += nr) {
    const float *row = p->v + (k0 + k) * p->L;
    for (int64_t q = 0; q < nseg; q++)
      for (int64_t e = 0; e < len[q]; e++) dst[at[q] + e] = row[from[q] + e];
    for (int64_t e = cols; e < nr; e++) dst[e] = 0.0f;
  }
}

rlx_status rlx_conv_wg4_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  wg4_job j = {.ep = &n->p.conv.ep};
  if (!rlx_cpu_conv_geo(n, in, out, &j.c) || !rlx_conv_wg4_geo(&j.c, &j.w))
    return rlx_errorf(RLX_ERR_INTERNAL, "winograd F(4x4) conv geometry of node '%s'", n->label);
  const conv_geo *c = &j.c;
  int64_t TW1 = j.w.TW + 1, PQ = plane_floats(&j.w), L = j.w.L;
  for (int i = 0; i < 6; i++)
    for (int jj = 0; jj < 6; jj++) j.off[6 * i + jj] = (4 * (i % 4) + jj % 4) * PQ + (i / 4) * TW1 + jj / 4;
  char *s = x->scratch;
  j.V = (float *)s, s += v_bytes(c, &j.w);
  j.M = (float *)s, s += m_bytes(c, &j.w);
  j.bad = (_Atomic unsigned char *)s, s += flag_bytes(&j.w);
  j.rows = s, j.row_bytes = row_bytes(&j.w);
  s += j.row_bytes * (size_t)rlx_threadpool_size(x->tp);
  j.wraw = in[1].data;
  j.bias = in[2].data;
  int64_t N = j.w.N;
  size_t ua = rlx_sgemm_packed_a_size(c->O, c->C) / sizeof(float), vp = (size_t)(c->C * L), mp = (size_t)(c->O * N);
  rlx_sgemm_args a[XI]; /* on the panel width that pads N least (the packed U is for the active MR: the same) */
  compact_src cs[XI];
  for (int xi = 0; xi < XI; xi++) {
    a[xi] = (rlx_sgemm_args){.isa = rlx_sgemm_isa_for(N), .M = c->O, .N = N, .K = c->C,
                             .a_packed = (const float *)x->packed + xi * ua, .B = j.V + xi * vp, .ldb = L,
                             .C = j.M + xi * mp, .ldc = N};
    cs[xi] = (compact_src){j.V + xi * vp, L, j.w.TW};
    if (j.w.compact) a[xi].B = NULL, a[xi].pack_b = pack_compact, a[xi].pack_ctx = &cs[xi];
  }
  for (int64_t b = 0; b < c->N; b++) {
    j.x = (const float *)in[0].data + b * c->C * c->H * c->W;
    j.y = (float *)out[0].data + b * c->O * c->OH * c->OW;
    j.res = n->n_in > 3 && in[3].data ? (const float *)in[3].data + b * c->O * c->OH * c->OW : NULL;
    for (int64_t ty = 0; ty < j.w.TH; ty++) atomic_store_explicit(&j.bad[ty], 0, memory_order_relaxed);
    rlx_parallel_for(x->tp, c->C, input_task, &j);
    rlx_sgemm_ex_batch(x->tp, a, XI, s); /* one parallel region for the 36 products */
    rlx_parallel_for(x->tp, c->O, output_task, &j);
  }
  return RLX_OK;
}
