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
 * The transforms run a tile row at a time, vectorized over the tiles (the
 * compiler's AVX-512 code through target_clones): each input row is split
 * into its four column phases (x[4q + a]), so the six columns of tile tx are
 * phases 0..3 at q = tx and phases 0, 1 at q = tx + 1 — unit-stride streams;
 * the rows are transformed first (in place over the phases), then the
 * columns, written straight into V. The output transform is the same in
 * reverse, and bias, residual and activation are applied to each output row
 * as it is stored.
 *
 * NaN and Inf: in a tile, one non-finite input reaches all 16 outputs
 * through the transforms (Inf - Inf), where the reference conv makes it
 * reach only the windows that contain it. The split of the input rows notes
 * every tile row whose patch holds a non-finite value, and those output rows
 * are computed directly from the raw weights instead (slow, exact in where
 * NaN and Inf land). Non-finite weights are the chooser's to refuse (conv.c).
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
  *w = (wg4_geo){(c->OH + 3) / 4, (c->OW + 3) / 4, 0};
  w->T = w->TH * w->TW;
  return true;
}

static size_t align64(size_t bytes) { return (bytes + 63) & ~(size_t)63; }
static size_t v_bytes(const conv_geo *c, const wg4_geo *w) { return align64(sizeof(float) * (size_t)(XI * c->C * w->T)); }
static size_t m_bytes(const conv_geo *c, const wg4_geo *w) { return align64(sizeof(float) * (size_t)(XI * c->O * w->T)); }
static size_t flag_bytes(const wg4_geo *w) { return align64((size_t)w->TH); }
/* per worker: 6 input rows as 4 phases of TW + 1 and the same transformed, or 24 output-side rows of TW and 4
 * output rows of 4 TW */
static size_t row_bytes(const wg4_geo *w) {
  size_t in = (size_t)(48 * (w->TW + 1)), out = (size_t)(24 * w->TW + 16 * w->TW);
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
  int64_t q0[4], q1[4]; /* phase a: the q with an image column 4q + a - pw behind them, [q0, q1) */
} wg4_job;

/* t = B^T d for six streams (in place is fine: every d is read before any t is written). */
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

/* dst[q] = row[4q + off] for q in [q0, q1), zero elsewhere in [0, E); nonzero if a copied value is NaN or Inf. */
static inline unsigned split4(float *restrict dst, const float *restrict row, int64_t off, int64_t q0, int64_t q1,
                              int64_t E) {
  unsigned nf = 0;
  for (int64_t q = 0; q < q0; q++) dst[q] = 0.0f;
  for (int64_t q = q0; q < q1; q++) {
    float v = row[4 * q + off];
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    nf |= (~u & 0x7f800000u) == 0; /* exponent all ones */
    dst[q] = v;
  }
  for (int64_t q = q1; q < E; q++) dst[q] = 0.0f;
  return nf;
}

/* t = B^T d over n elements of six streams (the compiler vectorizes it: restrict says the streams do not overlap). */
static inline void bt6_streams(int64_t n, const float *restrict d0, const float *restrict d1, const float *restrict d2,
                               const float *restrict d3, const float *restrict d4, const float *restrict d5,
                               float *restrict t0, float *restrict t1, float *restrict t2, float *restrict t3,
                               float *restrict t4, float *restrict t5) {
  for (int64_t q = 0; q < n; q++)
    bt6(d0[q], d1[q], d2[q], d3[q], d4[q], d5[q], &t0[q], &t1[q], &t2[q], &t3[q], &t4[q], &t5[q]);
}

/* V[xi][ch][ty*TW + tx] for one (channel, tile row). */
RLX_VEC_CLONES static void input_row(const wg4_job *j, int64_t ch, int64_t ty, float *buf) {
  const conv_geo *c = &j->c;
  int64_t TW = j->w.TW, E = TW + 1;
  float *p[6][4], *t[6][4]; /* row r, phase a: the input; its rows transformed */
  unsigned nf = 0;
  for (int r = 0; r < 6; r++) {
    for (int a = 0; a < 4; a++) p[r][a] = buf + (4 * r + a) * E, t[r][a] = buf + (24 + 4 * r + a) * E;
    int64_t iy = 4 * ty + r - c->ph;
    if (iy < 0 || iy >= c->H) {
      for (int a = 0; a < 4; a++)
        for (int64_t q = 0; q < E; q++) p[r][a][q] = 0.0f;
      continue;
    }
    const float *row = j->x + (ch * c->H + iy) * c->W;
    for (int a = 0; a < 4; a++) nf |= split4(p[r][a], row, a - c->pw, j->q0[a], j->q1[a], E);
  }
  if (nf) atomic_store_explicit(&j->bad[ty], 1, memory_order_relaxed);
  for (int a = 0; a < 4; a++) /* rows: B^T d, phase by phase */
    bt6_streams(E, p[0][a], p[1][a], p[2][a], p[3][a], p[4][a], p[5][a], t[0][a], t[1][a], t[2][a], t[3][a], t[4][a],
                t[5][a]);
  /* columns: tile tx's six are phases 0..3 at tx and phases 0, 1 at tx + 1 */
  size_t plane = (size_t)(c->C * j->w.T);
  for (int i = 0; i < 6; i++) {
    float *v0 = j->V + (size_t)(6 * i) * plane + ch * j->w.T + ty * TW;
    bt6_streams(TW, t[i][0], t[i][1], t[i][2], t[i][3], t[i][0] + 1, t[i][1] + 1, v0, v0 + plane, v0 + 2 * plane,
                v0 + 3 * plane, v0 + 4 * plane, v0 + 5 * plane);
  }
}

static void input_task(void *ctx, int64_t ch, int worker) {
  const wg4_job *j = ctx;
  float *buf = (float *)(j->rows + j->row_bytes * (size_t)worker);
  for (int64_t ty = 0; ty < j->w.TH; ty++) input_row(j, ch, ty, buf);
}

/* y[0, n) = v + b (+ res), then the activation. */
RLX_VEC_CLONES static void store_row(float *restrict y, const float *restrict v, const float *restrict res, float b,
                                     const rlx_epilogue *ep, int64_t n) {
  if (res)
    for (int64_t i = 0; i < n; i++) y[i] = v[i] + b + res[i];
  else
    for (int64_t i = 0; i < n; i++) y[i] = v[i] + b;
  if (ep->has_act) rlx_cpu_act_f32(&ep->act, y, n);
}

/* Output rows [4ty, 4ty + 4) of channel o computed directly (a patch held a NaN or an Inf). */
static void direct_rows(const wg4_job *j, int64_t o, int64_t ty, float *acc) {
  const conv_geo *c = &j->c;
  for (int64_t oy = 4 * ty; oy < RLX_MIN(4 * ty + 4, c->OH); oy++) {
    for (int64_t ox = 0; ox < c->OW; ox++) acc[ox] = 0.0f;
    for (int64_t ch = 0; ch < c->C; ch++)
      for (int64_t ki = 0; ki < 3; ki++) {
        int64_t iy = oy + ki - c->ph;
        if (iy < 0 || iy >= c->H) continue;
        const float *row = j->x + (ch * c->H + iy) * c->W, *w = j->wraw + ((o * c->C + ch) * 3 + ki) * 3;
        for (int64_t ox = 0; ox < c->OW; ox++)
          for (int64_t kj = 0; kj < 3; kj++) {
            int64_t ix = ox + kj - c->pw;
            if (ix >= 0 && ix < c->W) acc[ox] += w[kj] * row[ix];
          }
      }
    const float *rr = j->res ? j->res + (o * c->OH + oy) * c->OW : NULL;
    store_row(j->y + (o * c->OH + oy) * c->OW, acc, rr, j->bias ? j->bias[o] : 0.0f, j->ep, c->OW);
  }
}

/* s = A^T m over n elements of six streams. */
static inline void at4_streams(int64_t n, const float *restrict m0, const float *restrict m1, const float *restrict m2,
                               const float *restrict m3, const float *restrict m4, const float *restrict m5,
                               float *restrict s0, float *restrict s1, float *restrict s2, float *restrict s3) {
  for (int64_t q = 0; q < n; q++) at4(m0[q], m1[q], m2[q], m3[q], m4[q], m5[q], &s0[q], &s1[q], &s2[q], &s3[q]);
}

/* r[4q + b] = (A^T s)[b]: one output row from the six column streams. */
static inline void at4_interleave(int64_t n, const float *restrict s0, const float *restrict s1,
                                  const float *restrict s2, const float *restrict s3, const float *restrict s4,
                                  const float *restrict s5, float *restrict r) {
  for (int64_t q = 0; q < n; q++) at4(s0[q], s1[q], s2[q], s3[q], s4[q], s5[q], &r[4 * q], &r[4 * q + 1], &r[4 * q + 2], &r[4 * q + 3]);
}

/* Output channel o, tile row ty: Y = A^T m A, then bias, residual, activation. */
RLX_VEC_CLONES static void output_row(const wg4_job *j, int64_t o, int64_t ty, float *buf) {
  const conv_geo *c = &j->c;
  int64_t TW = j->w.TW;
  size_t plane = (size_t)(c->O * j->w.T);
  const float *m = j->M + o * j->w.T + ty * TW;
  float *s = buf, *out = buf + 24 * TW; /* s[a][jj] rows of TW; 4 output rows of 4 TW */
  for (int jj = 0; jj < 6; jj++) { /* rows: A^T m over i for each column jj */
    const float *m0 = m + (size_t)jj * plane;
    at4_streams(TW, m0, m0 + 6 * plane, m0 + 12 * plane, m0 + 18 * plane, m0 + 24 * plane, m0 + 30 * plane,
                s + jj * TW, s + (6 + jj) * TW, s + (12 + jj) * TW, s + (18 + jj) * TW);
  }
  for (int a = 0; a < 4; a++) { /* columns, interleaved into output row a */
    const float *t = s + a * 6 * TW;
    at4_interleave(TW, t, t + TW, t + 2 * TW, t + 3 * TW, t + 4 * TW, t + 5 * TW, out + a * 4 * TW);
  }
  float b = j->bias ? j->bias[o] : 0.0f;
  for (int a = 0; a < 4 && 4 * ty + a < c->OH; a++) {
    int64_t oy = 4 * ty + a;
    const float *rr = j->res ? j->res + (o * c->OH + oy) * c->OW : NULL;
    store_row(j->y + (o * c->OH + oy) * c->OW, out + a * 4 * TW, rr, b, j->ep, c->OW);
  }
}

static void output_task(void *ctx, int64_t o, int worker) {
  const wg4_job *j = ctx;
  float *buf = (float *)(j->rows + j->row_bytes * (size_t)worker);
  for (int64_t ty = 0; ty < j->w.TH; ty++) {
    if (atomic_load_explicit(&j->bad[ty], memory_order_relaxed)) direct_rows(j, o, ty, buf);
    else output_row(j, o, ty, buf);
  }
}

rlx_status rlx_conv_wg4_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  wg4_job j = {.ep = &n->p.conv.ep};
  if (!rlx_cpu_conv_geo(n, in, out, &j.c) || !rlx_conv_wg4_geo(&j.c, &j.w))
    return rlx_errorf(RLX_ERR_INTERNAL, "winograd F(4x4) conv geometry of node '%s'", n->label);
  const conv_geo *c = &j.c;
  int64_t E = j.w.TW + 1;
  for (int a = 0; a < 4; a++) { /* column 4q + a - pw inside [0, W) */
    int64_t lo = c->pw - a, hi = c->W - 1 + c->pw - a;
    j.q0[a] = RLX_MIN(lo > 0 ? (lo + 3) / 4 : 0, E);
    j.q1[a] = hi < 0 ? j.q0[a] : RLX_MAX(RLX_MIN(hi / 4 + 1, E), j.q0[a]);
  }
  char *s = x->scratch;
  j.V = (float *)s, s += v_bytes(c, &j.w);
  j.M = (float *)s, s += m_bytes(c, &j.w);
  j.bad = (_Atomic unsigned char *)s, s += flag_bytes(&j.w);
  j.rows = s, j.row_bytes = row_bytes(&j.w);
  s += j.row_bytes * (size_t)rlx_threadpool_size(x->tp);
  j.wraw = in[1].data;
  j.bias = in[2].data;
  size_t ua = rlx_sgemm_packed_a_size(c->O, c->C) / sizeof(float), vp = (size_t)(c->C * j.w.T),
         mp = (size_t)(c->O * j.w.T);
  rlx_sgemm_args a[XI];
  for (int xi = 0; xi < XI; xi++)
    a[xi] = (rlx_sgemm_args){.M = c->O, .N = j.w.T, .K = c->C, .a_packed = (const float *)x->packed + xi * ua,
                             .B = j.V + xi * vp, .ldb = j.w.T, .C = j.M + xi * mp, .ldc = j.w.T};
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
