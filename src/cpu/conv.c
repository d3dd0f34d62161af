/*
 * conv.c — the fast f32 convolution (1-D and 2-D, not transposed): the
 * geometry, the choice of kernel (rlx_cpu_try_conv: a cost model among the
 * sgemm ways of conv_gemm.c and the Winograd F(2x2) here and F(4x4) of
 * conv_wg4.c), the stride phase planes, depthwise convolutions (one channel
 * per group, run directly) and Winograd F(2x2, 3x3).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/conv.h"
#include "cpu/gemm.h"
#include "cpu/select.h"
#include "cpu/tuning.h"
#include "ops/ops_util.h"

static bool geo_of(const rlx_conv_params *p, const rlx_shape *x, const rlx_shape *w, const rlx_shape *y,
                   conv_geo *c) {
  if (p->nd == 2) {
    *c = (conv_geo){x->dims[0], x->dims[1], x->dims[2], x->dims[3], y->dims[1], p->groups, w->dims[2], w->dims[3],
                    y->dims[2], y->dims[3], p->stride[0], p->stride[1], p->pad[0], p->pad[1], p->dilation[0],
                    p->dilation[1]};
    return true;
  }
  if (p->nd == 1) {
    *c = (conv_geo){x->dims[0], x->dims[1], 1, x->dims[2], y->dims[1], p->groups, 1, w->dims[2], 1, y->dims[2],
                    1, p->stride[0], 0, p->pad[0], 1, p->dilation[0]};
    return true;
  }
  return false;
}

bool rlx_cpu_conv_geo(const rlx_node *n, const rlx_tensor_view *in, const rlx_tensor_view *out, conv_geo *c) {
  rlx_shape xs = rlx_view_shape(&in[0]), ws = rlx_view_shape(&in[1]), ys = rlx_view_shape(&out[0]);
  return geo_of(&n->p.conv, &xs, &ws, &ys, c);
}

bool rlx_conv_direct(const conv_geo *c) {
  return c->kh == 1 && c->kw == 1 && c->sh == 1 && c->sw == 1 && c->ph == 0 && c->pw == 0;
}

/* ---- stride phase planes (depthwise and strided im2col) ---- */


#define DW_TAPS_MAX 64

/* Depthwise with equal strides only (the phase planes are square); others take the GEMM path. */
bool rlx_conv_phase_geo(const conv_geo *c, dw_geo *d) {
  if (c->sh != c->sw || c->sh < 1 || c->sh > 4) return false;
  int64_t s = c->sh;
  *d = (dw_geo){s, c->OH + (c->kh - 1) * c->dh / s, c->OW + (c->kw - 1) * c->dw / s, 0};
  d->L = (c->OH - 1) * d->QW + c->OW;
  return true;
}

/* One phase plane: dst[r][q] = x[(r*s + rp) - ph][(q*s + cp) - pw], zero outside. */
RLX_VEC_CLONES static void phase_plane(float *restrict dst, const float *restrict x, const conv_geo *c, const dw_geo *d,
                                    int64_t rp, int64_t cp) {
  int64_t s = d->s, QW = d->QW;
  /* the columns q whose source column lies inside the image: [q0, q1) */
  int64_t q0 = 0, q1 = QW;
  while (q0 < QW && q0 * s + cp - c->pw < 0) q0++;
  while (q1 > q0 && (q1 - 1) * s + cp - c->pw >= c->W) q1--;
  for (int64_t r = 0; r < d->QH; r++, dst += QW) {
    int64_t iy = r * s + rp - c->ph;
    if (iy < 0 || iy >= c->H || q0 >= q1) {
      for (int64_t q = 0; q < QW; q++) dst[q] = 0.0f;
      continue;
    }
    const float *row = x + iy * c->W + (q0 * s + cp - c->pw);
    for (int64_t q = 0; q < q0; q++) dst[q] = 0.0f;
    if (s == 1)
      for (int64_t q = 0; q < q1 - q0; q++) dst[q0 + q] = row[q];
    else if (s == 2)
      for (int64_t q = 0; q < q1 - q0; q++) dst[q0 + q] = row[2 * q];
    else
      for (int64_t q = 0; q < q1 - q0; q++) dst[q0 + q] = row[q * s];
    for (int64_t q = q1; q < QW; q++) dst[q] = 0.0f;
  }
}

/* (a plain function in front of the target clones, whose resolver would be exported from the library) */
void rlx_conv_phase_plane(float *restrict dst, const float *restrict x, const conv_geo *c, const dw_geo *d, int64_t rp,
                          int64_t cp) {
  phase_plane(dst, x, c, d, rp, cp);
}

/* ---- depthwise (one input and one output channel per group) ----
 *
 * A GEMM would have one row per group: direct convolution instead, one
 * (image, channel) plane per task. The plane is first copied (per worker)
 * into s*s zero-padded phase planes, s the stride:
 *
 *   Q[rp][cp][r][q] = x[r*s + rp - ph][q*s + cp - pw]   (0 outside the image)
 *
 * each QH x QW. Every tap (ki, kj) then reads one phase plane at a constant
 * flat offset from the output position, i = oy*QW + ox:
 *
 *   acc[i] = sum over taps w[ki][kj] * Q[ki*dh % s][kj*dw % s][i + (ki*dh/s)*QW + kj*dw/s]
 *
 * so the whole plane is one long unit-stride loop (vectorized, no bounds
 * checks, whatever the stride, dilation or image width). Columns ox >= OW
 * of acc are discarded when it is copied into the output, where bias,
 * residual and activation are applied. */

typedef struct dw_job {
  conv_geo c;
  dw_geo d;
  const float *x, *w, *bias, *res;
  float *y;
  const rlx_epilogue *ep;
  char *scratch;
  size_t worker_bytes;
  int64_t tap_off[DW_TAPS_MAX]; /* each tap's offset from Q (the first phase plane), when it has at most DW_TAPS_MAX taps */
} dw_job;

/* Offset of tap t from the first phase plane (a few divisions: computed once per node run when they fit). */
static int64_t dw_tap_offset(const conv_geo *c, const dw_geo *d, int64_t t) {
  int64_t s = d->s, ry = (t / c->kw) * c->dh, rx = (t % c->kw) * c->dw;
  return ((ry % s) * s + rx % s) * d->QH * d->QW + (ry / s) * d->QW + rx / s;
}

static size_t dw_worker_bytes(const conv_geo *c, const dw_geo *d) {
  size_t phases = (size_t)(d->s * d->s * d->QH * d->QW), acc = (size_t)(c->OH * d->QW);
  return ((phases + acc) * sizeof(float) + 63) & ~(size_t)63;
}

/* acc[i] = sum of the 9 taps of a 3x3 kernel (src[t] already offset). */
RLX_VEC_CLONES static void dw_taps9(float *restrict acc, int64_t L, const float *const src[9], const float *w) {
  const float *s0 = src[0], *s1 = src[1], *s2 = src[2], *s3 = src[3], *s4 = src[4], *s5 = src[5], *s6 = src[6],
              *s7 = src[7], *s8 = src[8];
  float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6], w7 = w[7], w8 = w[8];
  for (int64_t i = 0; i < L; i++)
    acc[i] = w0 * s0[i] + w1 * s1[i] + w2 * s2[i] + w3 * s3[i] + w4 * s4[i] + w5 * s5[i] + w6 * s6[i] +
             w7 * s7[i] + w8 * s8[i];
}

RLX_VEC_CLONES static void dw_tap(float *restrict acc, int64_t L, const float *restrict src, float w, bool first) {
  if (first)
    for (int64_t i = 0; i < L; i++) acc[i] = w * src[i];
  else
    for (int64_t i = 0; i < L; i++) acc[i] += w * src[i];
}

RLX_VEC_CLONES static void dw_store_row(float *restrict y, const float *restrict acc, const float *restrict res,
                                       float b, int64_t n) {
  if (res)
    for (int64_t i = 0; i < n; i++) y[i] = acc[i] + b + res[i];
  else
    for (int64_t i = 0; i < n; i++) y[i] = acc[i] + b;
}

/* y [rows, n] = acc (rows QW apart) + b (+ res [rows, n]). */
RLX_VEC_CLONES static void dw_store_rows(float *restrict y, const float *restrict acc, int64_t QW,
                                        const float *restrict res, float b, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r++, y += n, acc += QW) {
    if (res) {
      for (int64_t i = 0; i < n; i++) y[i] = acc[i] + b + res[i];
      res += n;
    } else {
      for (int64_t i = 0; i < n; i++) y[i] = acc[i] + b;
    }
  }
}

static void dw_plane(void *ctx, int64_t plane, int worker) {
  const dw_job *j = ctx;
  const conv_geo *c = &j->c;
  const dw_geo *d = &j->d;
  int64_t ch = plane % c->C, s = d->s, pq = d->QH * d->QW, khw = c->kh * c->kw;
  const float *x = j->x + plane * c->H * c->W, *w = j->w + ch * khw;
  float *y = j->y + plane * c->OH * c->OW;
  float *Q = (float *)(j->scratch + j->worker_bytes * (size_t)worker), *acc = Q + s * s * pq;
  for (int64_t rp = 0; rp < s; rp++)
    for (int64_t cp = 0; cp < s; cp++) rlx_conv_phase_plane(Q + (rp * s + cp) * pq, x, c, d, rp, cp);
  const float *src[9];
  for (int64_t t = 0; t < khw; t++) {
    const float *tap = Q + (khw <= DW_TAPS_MAX ? j->tap_off[t] : dw_tap_offset(c, d, t));
    if (khw == 9) src[t] = tap;
    else dw_tap(acc, d->L, tap, w[t], t == 0);
  }
  if (khw == 9) dw_taps9(acc, d->L, src, w);
  /* acc rows are QW apart: the OW valid columns of each, plus bias and residual */
  float b = j->bias ? j->bias[ch] : 0.0f;
  int64_t n = c->OH * c->OW;
  const float *res = j->res ? j->res + plane * n : NULL;
  dw_store_rows(y, acc, d->QW, res, b, c->OH, c->OW);
  if (j->ep->has_act) rlx_cpu_act_f32(&j->ep->act, y, n);
}

static rlx_status dw_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  rlx_shape xs = rlx_view_shape(&in[0]), ws = rlx_view_shape(&in[1]), ys = rlx_view_shape(&out[0]);
  dw_job j = {.x = in[0].data, .w = in[1].data, .bias = in[2].data, .y = out[0].data, .ep = &n->p.conv.ep,
              .scratch = x->scratch};
  if (!geo_of(&n->p.conv, &xs, &ws, &ys, &j.c) || !rlx_conv_phase_geo(&j.c, &j.d))
    return rlx_errorf(RLX_ERR_INTERNAL, "depthwise conv geometry");
  j.res = n->n_in > 3 ? in[3].data : NULL;
  j.worker_bytes = dw_worker_bytes(&j.c, &j.d);
  for (int64_t t = 0; t < j.c.kh * j.c.kw && t < DW_TAPS_MAX; t++) j.tap_off[t] = dw_tap_offset(&j.c, &j.d, t);
  rlx_parallel_for(x->tp, j.c.N * j.c.C, dw_plane, &j);
  return RLX_OK;
}

/* ---- Winograd F(2x2, 3x3): 3x3 convolutions with stride 1 ----
 *
 * Each 2x2 output tile comes from a 4x4 input patch d:  Y = A^T [U . V] A,
 * with U = G g G^T (the 3x3 kernel g, transformed once at compile time) and
 * V = B^T d B; summed over input channels, the 16 products of a tile become
 * 16 GEMMs, one per transformed position xi:
 *
 *   M[xi] [O, T] = U[xi] [O, C] @ V[xi] [C, T]      (T = tiles of the image)
 *
 * 2.25x fewer multiplications than the direct product. G has entries 0, 1
 * and 1/2 and B, A only 0 and +-1, so the rounding stays that of a few extra
 * additions (checked against the reference kernel in the tests). The
 * transforms run a tile row at a time, vectorized over the tiles: an input
 * row is split into even and odd columns, which makes every tap of B^T d B
 * and A^T M A a unit-stride stream. */

typedef struct wg_geo {
  int64_t TH, TW, T, E; /* tile rows and columns, tiles, even/odd row length (TW + 1) */
} wg_geo;

/* Whether Winograd F(2x2, 3x3) computes this conv (any image size). */
static bool wg_geo_of(const conv_geo *c, wg_geo *w) {
  if (c->G != 1 || c->kh != 3 || c->kw != 3 || c->sh != 1 || c->sw != 1 || c->dh != 1 || c->dw != 1) return false;
  *w = (wg_geo){(c->OH + 1) / 2, (c->OW + 1) / 2, 0, 0};
  w->T = w->TH * w->TW, w->E = w->TW + 1;
  return true;
}

/* Whether it is worth choosing: small images make skinny GEMMs; few channels
 * leave the transforms dominant. */
static bool wg_worth(const conv_geo *c, const wg_geo *w) { return w->T >= 32 && c->C >= 16 && c->O >= 16; }

static size_t wg_align(size_t bytes) { return (bytes + 63) & ~(size_t)63; }
static size_t wg_v_bytes(const conv_geo *c, const wg_geo *w) { return wg_align(sizeof(float) * (size_t)(16 * c->C * w->T)); }
static size_t wg_m_bytes(const conv_geo *c, const wg_geo *w) { return wg_align(sizeof(float) * (size_t)(16 * c->O * w->T)); }
/* per worker: 4 input rows as even/odd halves, and 2 output rows of 2*TW */
static size_t wg_row_bytes(const wg_geo *w) { return wg_align(sizeof(float) * (size_t)(8 * w->E + 4 * w->TW)); }

typedef struct wg_job {
  conv_geo c;
  wg_geo w;
  const float *x, *wraw, *bias, *res; /* the batch element's input / residual */
  float *y, *V, *M;
  _Atomic unsigned char *bad; /* [TH]: the tile row's patch holds a NaN or an Inf (computed directly) */
  const rlx_epilogue *ep;
  char *rows;
  size_t row_bytes;
  int64_t q0[2], q1[2]; /* even / odd columns q with an image column behind them: [q0, q1) */
} wg_job;

/* dst[q] = row[2q + off] for q in [q0, q1), zero elsewhere in [0, E). */
static inline void wg_split(float *restrict dst, const float *restrict row, int64_t off, int64_t q0, int64_t q1,
                            int64_t E) {
  for (int64_t q = 0; q < q0; q++) dst[q] = 0.0f;
  for (int64_t q = q0; q < q1; q++) dst[q] = row[2 * q + off];
  for (int64_t q = q1; q < E; q++) dst[q] = 0.0f;
}

/* V[xi][ch][ty*TW + tx] for one (channel, tile row). */
RLX_VEC_CLONES static void wg_input_row(const wg_job *j, int64_t ch, int64_t ty, float *buf) {
  const conv_geo *c = &j->c;
  const wg_geo *w = &j->w;
  int64_t E = w->E, TW = w->TW;
  float *ev[4], *od[4];
  for (int r = 0; r < 4; r++) { /* input row 2ty + r - ph, columns 2q - pw (even) and 2q + 1 - pw (odd) */
    ev[r] = buf + (2 * r) * E, od[r] = buf + (2 * r + 1) * E;
    int64_t iy = 2 * ty + r - c->ph;
    if (iy < 0 || iy >= c->H) {
      for (int64_t q = 0; q < E; q++) ev[r][q] = od[r][q] = 0.0f;
      continue;
    }
    const float *row = j->x + (ch * c->H + iy) * c->W;
    if (rlx_conv_nonfinite(row, c->W)) atomic_store_explicit(&j->bad[ty], 1, memory_order_relaxed);
    wg_split(ev[r], row, -c->pw, j->q0[0], j->q1[0], E);
    wg_split(od[r], row, 1 - c->pw, j->q0[1], j->q1[1], E);
  }
  /* rows: B^T d, in place over the even and the odd halves (t0 = d0 - d2, t1 = d1 + d2, t2 = d2 - d1, t3 = d1 - d3) */
  for (int h = 0; h < 2; h++) {
    float *d0 = h ? od[0] : ev[0], *d1 = h ? od[1] : ev[1], *d2 = h ? od[2] : ev[2], *d3 = h ? od[3] : ev[3];
    for (int64_t q = 0; q < E; q++) {
      float a0 = d0[q], a1 = d1[q], a2 = d2[q], a3 = d3[q];
      d0[q] = a0 - a2, d1[q] = a1 + a2, d2[q] = a2 - a1, d3[q] = a1 - a3;
    }
  }
  /* columns: (t B) per tile tx from columns 2tx .. 2tx + 3 = e[tx], o[tx], e[tx + 1], o[tx + 1] */
  size_t plane = (size_t)(c->C * w->T);
  for (int i = 0; i < 4; i++) {
    const float *e = ev[i], *o = od[i];
    float *v0 = j->V + (size_t)(4 * i) * plane + ch * w->T + ty * TW, *v1 = v0 + plane, *v2 = v1 + plane,
          *v3 = v2 + plane;
    for (int64_t tx = 0; tx < TW; tx++) {
      v0[tx] = e[tx] - e[tx + 1];
      v1[tx] = o[tx] + e[tx + 1];
      v2[tx] = e[tx + 1] - o[tx];
      v3[tx] = o[tx] - o[tx + 1];
    }
  }
}

static void wg_input_task(void *ctx, int64_t ch, int worker) {
  const wg_job *j = ctx;
  float *buf = (float *)(j->rows + j->row_bytes * (size_t)worker);
  for (int64_t ty = 0; ty < j->w.TH; ty++) wg_input_row(j, ch, ty, buf);
}

/* Output channel o, tile row ty: Y = A^T m A, then bias, residual, activation. */
RLX_VEC_CLONES static void wg_output_row(const wg_job *j, int64_t o, int64_t ty, float *buf) {
  const conv_geo *c = &j->c;
  const wg_geo *w = &j->w;
  int64_t TW = w->TW;
  size_t plane = (size_t)(c->O * w->T);
  const float *m = j->M + o * w->T + ty * TW;
  float *out[2] = {buf, buf + 2 * TW};
  for (int64_t tx = 0; tx < TW; tx++) {
    float r0[4], r1[4];
    for (int k = 0; k < 4; k++) { /* A^T m: column k of the 4x4 */
      float m0 = m[(size_t)k * plane + tx], m1 = m[(size_t)(4 + k) * plane + tx], m2 = m[(size_t)(8 + k) * plane + tx],
            m3 = m[(size_t)(12 + k) * plane + tx];
      r0[k] = m0 + m1 + m2, r1[k] = m1 - m2 - m3;
    }
    out[0][2 * tx] = r0[0] + r0[1] + r0[2], out[0][2 * tx + 1] = r0[1] - r0[2] - r0[3];
    out[1][2 * tx] = r1[0] + r1[1] + r1[2], out[1][2 * tx + 1] = r1[1] - r1[2] - r1[3];
  }
  float b = j->bias ? j->bias[o] : 0.0f;
  for (int i = 0; i < 2 && 2 * ty + i < c->OH; i++) {
    int64_t oy = 2 * ty + i;
    float *yr = j->y + (o * c->OH + oy) * c->OW;
    const float *rr = j->res ? j->res + (o * c->OH + oy) * c->OW : NULL;
    dw_store_row(yr, out[i], rr, b, c->OW);
    if (j->ep->has_act) rlx_cpu_act_f32(&j->ep->act, yr, c->OW);
  }
}

static void wg_output_task(void *ctx, int64_t o, int worker) {
  const wg_job *j = ctx;
  float *buf = (float *)(j->rows + j->row_bytes * (size_t)worker);
  for (int64_t ty = 0; ty < j->w.TH; ty++)
    if (atomic_load_explicit(&j->bad[ty], memory_order_relaxed))
      rlx_conv3x3_direct_rows(&j->c, j->x, j->wraw, j->bias, j->res, j->ep, j->y, o, 2 * ty, 2 * ty + 2, buf);
    else wg_output_row(j, o, ty, buf);
}

static rlx_status wg_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  rlx_shape xs = rlx_view_shape(&in[0]), ws = rlx_view_shape(&in[1]), ys = rlx_view_shape(&out[0]);
  wg_job j = {.ep = &n->p.conv.ep};
  if (!geo_of(&n->p.conv, &xs, &ws, &ys, &j.c) || !wg_geo_of(&j.c, &j.w))
    return rlx_errorf(RLX_ERR_INTERNAL, "winograd conv geometry");
  const conv_geo *c = &j.c;
  for (int h = 0; h < 2; h++) { /* column 2q + h - pw inside [0, W) */
    int64_t lo = c->pw - h, hi = c->W - 1 + c->pw - h; /* 2q in [lo, hi] */
    j.q0[h] = RLX_MIN(RLX_MAX(lo > 0 ? (lo + 1) / 2 : 0, 0), j.w.E);
    j.q1[h] = hi < 0 ? j.q0[h] : RLX_MAX(RLX_MIN(hi / 2 + 1, j.w.E), j.q0[h]);
  }
  char *s = x->scratch;
  j.V = (float *)s, s += wg_v_bytes(c, &j.w);
  j.M = (float *)s, s += wg_m_bytes(c, &j.w);
  j.bad = (_Atomic unsigned char *)s, s += wg_align((size_t)j.w.TH);
  j.rows = s, j.row_bytes = wg_row_bytes(&j.w);
  s += j.row_bytes * (size_t)rlx_threadpool_size(x->tp);
  size_t ua = rlx_sgemm_packed_a_size(c->O, c->C) / sizeof(float), vp = (size_t)(c->C * j.w.T),
         mp = (size_t)(c->O * j.w.T);
  for (int64_t b = 0; b < c->N; b++) {
    j.x = (const float *)in[0].data + b * c->C * c->H * c->W;
    j.y = (float *)out[0].data + b * c->O * c->OH * c->OW;
    j.wraw = in[1].data, j.bias = in[2].data;
    j.res = n->n_in > 3 && in[3].data ? (const float *)in[3].data + b * c->O * c->OH * c->OW : NULL;
    for (int64_t ty = 0; ty < j.w.TH; ty++) atomic_store_explicit(&j.bad[ty], 0, memory_order_relaxed);
    rlx_parallel_for(x->tp, c->C, wg_input_task, &j);
    rlx_sgemm_args a[16]; /* one parallel region for the 16 products, on the panel width that pads T least */
    for (int xi = 0; xi < 16; xi++)
      a[xi] = (rlx_sgemm_args){.isa = rlx_sgemm_isa_for(j.w.T), .M = c->O, .N = j.w.T, .K = c->C, .a_packed = (const float *)x->packed + xi * ua,
                               .B = j.V + xi * vp, .ldb = j.w.T, .C = j.M + xi * mp, .ldc = j.w.T};
    rlx_sgemm_ex_batch(x->tp, a, 16, s);
    rlx_parallel_for(x->tp, c->O, wg_output_task, &j);
  }
  return RLX_OK;
}

/* U[xi] = (G g G^T)[xi] for every (o, c), each [O, C] packed as the sgemm's
 * A, at dst (wg_packed_bytes). Returns false when out of memory. */
static bool wg_pack_into(const conv_geo *c, const float *g, void *dst) {
  static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  size_t ua = rlx_sgemm_packed_a_size(c->O, c->C);
  float *u = malloc(sizeof(float) * (size_t)(16 * c->O * c->C));
  if (!u) return false;
  for (int64_t o = 0; o < c->O; o++)
    for (int64_t ch = 0; ch < c->C; ch++) {
      const float *w = g + (o * c->C + ch) * 9;
      double t[4][3]; /* G g */
      for (int a = 0; a < 4; a++)
        for (int q = 0; q < 3; q++) t[a][q] = G[a][0] * w[q] + G[a][1] * w[3 + q] + G[a][2] * w[6 + q];
      for (int a = 0; a < 4; a++)
        for (int e = 0; e < 4; e++) /* (G g) G^T */
          u[((size_t)(a * 4 + e) * (size_t)c->O + (size_t)o) * (size_t)c->C + (size_t)ch] =
              (float)(t[a][0] * G[e][0] + t[a][1] * G[e][1] + t[a][2] * G[e][2]);
    }
  for (int xi = 0; xi < 16; xi++)
    rlx_sgemm_pack_a(c->O, c->C, u + (size_t)xi * (size_t)(c->O * c->C), c->C, (float *)((char *)dst + ua * (size_t)xi));
  free(u);
  return true;
}

/* The geometry of node n of a concrete graph, or false. */
static bool node_geo(const rlx_graph *g, const rlx_node *n, conv_geo *c) {
  return geo_of(&n->p.conv, &rlx_in(g, n, 0)->shape, &rlx_in(g, n, 1)->shape, &g->values[n->out[0]].shape, c);
}

static size_t dw_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  conv_geo c;
  dw_geo d;
  if (!node_geo(g, n, &c) || !rlx_conv_phase_geo(&c, &d)) return SIZE_MAX;
  return dw_worker_bytes(&c, &d) * (size_t)(threads > 0 ? threads : 1);
}

static size_t wg_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  conv_geo c;
  wg_geo wg;
  if (!node_geo(g, n, &c) || !wg_geo_of(&c, &wg)) return SIZE_MAX;
  int t = threads > 0 ? threads : 1;
  return wg_v_bytes(&c, &wg) + wg_m_bytes(&c, &wg) + wg_align((size_t)wg.TH) + wg_row_bytes(&wg) * (size_t)t +
         rlx_sgemm_scratch(t);
}

/* A folded batch norm's table (fuse_preact), ahead of the sgemm ways' scratch. */
static size_t bn_scratch(const rlx_node *n, const conv_geo *c) {
  return n->n_in > 7 && n->in[7] >= 0 ? rlx_conv_bn_table_bytes(c->C) : 0;
}

static size_t gemm_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  conv_geo c;
  if (!node_geo(g, n, &c)) return SIZE_MAX;
  return rlx_conv_gemm_scratch(&c, threads) + bn_scratch(n, &c);
}

static size_t wg_packed_bytes(const conv_geo *c) { return 16 * rlx_sgemm_packed_a_size(c->O, c->C); }

static size_t pix_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  conv_geo c;
  if (!node_geo(g, n, &c)) return SIZE_MAX;
  return rlx_conv_pix_scratch(&c, threads) + bn_scratch(n, &c);
}

/* ---- a dynamic 3x3 conv whose image size decides: Winograd where the
 * binding's tile count makes it worth it, the direct sgemm elsewhere. Both
 * packings are kept, Winograd's first (docs/design.md, "Shapes"). ---- */

static bool auto_wg_at(const conv_geo *c) {
  wg_geo w;
  return wg_geo_of(c, &w) && wg_worth(c, &w);
}

static rlx_status auto_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  rlx_shape xs = rlx_view_shape(&in[0]), ws = rlx_view_shape(&in[1]), ys = rlx_view_shape(&out[0]);
  conv_geo c;
  if (!geo_of(&n->p.conv, &xs, &ws, &ys, &c)) return rlx_errorf(RLX_ERR_INTERNAL, "conv geometry");
  if (auto_wg_at(&c)) return wg_run(n, in, out, x);
  rlx_exec g = *x;
  g.packed = (const char *)x->packed + wg_packed_bytes(&c);
  return rlx_conv_gemm_run(n, in, out, &g);
}

static size_t auto_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  conv_geo c;
  if (!node_geo(g, n, &c)) return SIZE_MAX;
  return auto_wg_at(&c) ? wg_scratch_for(g, n, threads) : gemm_scratch_for(g, n, threads);
}

static const char *auto_name_for(const rlx_graph *g, const rlx_node *n) {
  conv_geo c;
  if (!node_geo(g, n, &c)) return "f32_conv_winograd_or_sgemm";
  return auto_wg_at(&c) ? "f32_conv_winograd_2x2_3x3" : rlx_conv_gemm_name(&c);
}

/* Whether Winograd is worth it at the smallest and at the largest output
 * image a dynamic conv sees (the output's spatial dims at their bounds). */
static void wg_worth_range(const rlx_graph *sym, const rlx_node *n, const conv_geo *c, bool *at_lo, bool *at_hi) {
  const rlx_shape *ys = &sym->values[n->out[0]].shape;
  int64_t lo[2] = {1, 1}, hi[2] = {1, 1};
  for (int a = 0; a < n->p.conv.nd; a++)
    rlx_dim_bounds(&sym->syms, ys->dims[ys->rank - n->p.conv.nd + a], &lo[2 - n->p.conv.nd + a],
                   &hi[2 - n->p.conv.nd + a]);
  conv_geo cl = *c, ch = *c;
  cl.OH = lo[0], cl.OW = lo[1], ch.OH = hi[0], ch.OW = hi[1];
  *at_lo = auto_wg_at(&cl), *at_hi = auto_wg_at(&ch);
}

static size_t wg4_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  conv_geo c;
  if (!node_geo(g, n, &c)) return SIZE_MAX;
  return rlx_conv_wg4_scratch(&c, threads);
}

/* ---- which way a 3x3 stride-1 conv runs: a cost model ----
 *
 * Each way's time is estimated as the larger of its multiplications (the
 * flops on the microkernel's padded tiles at the sgemm's rate) and its
 * weight stream (at batch 1 a layer's weights come from memory: a network's
 * weights do not fit the caches, and Winograd's are 16/9 or 36/9 times the
 * direct ones), plus its passes over memory (the im2col packing; Winograd's
 * transformed input V and products M) at a cost per element. The rates were
 * measured on the 2-core machine of docs/perf.md (bench/bench_conv,
 * bench/bandwidth); the choice depends only on their ratios. It picks
 * F(4x4) on resnet's 56x56, 28x28 and 14x14 layers, F(2x2) on 7x7 (where
 * F(4x4)'s weights, 4x the direct ones, take longer to read than to use). */

typedef enum conv_way { PICK_GEMM, PICK_WG2, PICK_WG4 } conv_way;

#define COST_GFLOPS 95.0      /* the sgemm, one thread, on padded tiles */
#define COST_GBS_1 12.9       /* memory read bandwidth, one thread */
#define COST_GBS_2 17.0       /* two or more */
#define COST_IM2COL_NS 0.25   /* per element packed (one thread), bounds-checked from the image */
#define COST_PLANES_NS 0.03   /* the same with AVX-512 from the zero-padded plane (rlx_conv_planes_avx512) */
/* The ns per element of V and M (one thread) are the host's (cpu/tuning.c). On the Xeon host they were
 * refitted on 2026-12-05 (docs/perf.md "Convolutions from a padded plane"): every 3x3 stride-1 conv of seven
 * models (squeezenet, resnet18/34/50, densenet121, googlenet, vgg11; 37 layer shapes) timed each way at 1 and
 * 2 threads. A surcharge for F(4x4) on compact 13x13 and 14x14 tiles (2.5x, from that fit) was dropped on
 * 2026-12-07 (docs/perf.md, "F(4x4) on compact tiles"): per-node A/B in the models on the Xeon host ran those
 * layers faster on F(4x4) (resnet18's, googlenet's) or within the noise (resnet50's, squeezenet's). */

static int64_t round_up64(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* ns for `count` products [M, N] x [N, K] on the panel width that pads N least, streaming wbytes of weights */
static double product_ns(int64_t M, int64_t N, int64_t K, int64_t count, double wbytes, int threads) {
  const rlx_sgemm_isa *isa = rlx_sgemm_isa_for(N);
  double t = threads > 1 ? threads * 0.95 : 1.0, gbs = threads > 1 ? COST_GBS_2 : COST_GBS_1;
  double flops = 2.0 * (double)count * (double)round_up64(M, isa->mr) * (double)round_up64(N, isa->nr) * (double)K;
  return RLX_MAX(flops / (COST_GFLOPS * t), wbytes / gbs);
}

static double way_ns(conv_way way, const conv_geo *c, int threads) {
  const rlx_cpu_tuning *tune = rlx_cpu_tuning_get();
  double t = threads > 1 ? threads : 1, O = (double)c->O, C = (double)c->C;
  wg_geo w2 = {0};
  wg4_geo w4 = {0};
  switch (way) {
  case PICK_WG2:
    wg_geo_of(c, &w2);
    return product_ns(c->O, w2.T, c->C, 16 * c->N, 64 * O * C, threads) +
           tune->wg2_ns * 16 * (double)(c->N * w2.T) * (O + C) / t;
  case PICK_WG4:
    rlx_conv_wg4_geo(c, &w4);
    return product_ns(c->O, w4.N, c->C, 36 * c->N, 144 * O * C, threads) +
           tune->wg4_ns * 36 * (double)(c->N * w4.L) * (O + C) / t;
  case PICK_GEMM:
    break;
  }
  int64_t K = 9 * c->C, N = c->OH * c->OW;
  double pack_ns = rlx_conv_planes_avx512() ? COST_PLANES_NS : COST_IM2COL_NS;
  return product_ns(c->O, N, K, c->N, 36 * O * C, threads) +
         pack_ns * (double)(K * N * c->N) * (double)((c->O + 383) / 384) / t; /* once per A row block */
}

static bool all_finite(const float *w, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (!isfinite(w[i])) return false;
  return true;
}

/* The cheapest way for a 3x3 stride-1 conv. Winograd only with finite
 * weights: its weight transform would turn an Inf into NaN over whole tiles
 * (0 * Inf). RLX_WINOGRAD=0, 2 or 4 forces the sgemm or that tile size (to
 * measure the choice). */
/* F(4x4) rounds worse than F(2x2) and the direct sum (docs/perf.md): in the
 * zoo's inception_v4 its 32-channel stem convs put the output 0.0033 from
 * float64 where eager torch is 0.0011 and the bar 0.0022 (an early layer's
 * error runs through the 74 convs after it); without them 0.0018, and
 * resnets, whose F(4x4) layers all have 64 channels or more, are unchanged.
 * So a conv of fewer than WG4_MIN_C input channels takes F(4x4) only where
 * at most WG4_NARROW_AFTER convs and matmuls follow it on any path to the
 * outputs: squeezenet's (15 or fewer after them; error 2.4e-7 -> 1.8e-7
 * with all of them on F(4x4)) and googlenet's (17; 1.3e-5 -> 1.4e-5) do,
 * inception_v3's stem (46; 9.2e-4 -> 1.5e-3, bar 2.2e-3) and inception_v4's
 * (74) do not. Measured rules, not bounds: RLX_WINOGRAD=4 still forces it. */
#define WG4_MIN_C 64
#define WG4_NARROW_AFTER 32

/* The most convs and matmuls on any path from node n's outputs to the graph's outputs (n not counted): one
 * reverse pass over the nodes after n (the graph is in topological order). */
static int32_t layers_after(const rlx_graph *g, const rlx_node *n) {
  int32_t *depth = calloc((size_t)g->n_values, sizeof *depth), after = 0, self = (int32_t)(n - g->nodes);
  if (!depth) return INT32_MAX; /* the caller then takes the careful way */
  for (int32_t i = g->n_nodes - 1; i >= self; i--) {
    const rlx_node *m = &g->nodes[i];
    int32_t d = 0;
    for (int32_t o = 0; o < m->n_out; o++) d = RLX_MAX(d, depth[m->out[o]]);
    if (i == self) {
      after = d;
      break;
    }
    d += m->op == RLX_OP_CONV || m->op == RLX_OP_MATMUL;
    for (int32_t j = 0; j < m->n_in; j++)
      if (m->in[j] >= 0) depth[m->in[j]] = RLX_MAX(depth[m->in[j]], d);
  }
  free(depth);
  return after;
}

static conv_way conv_pick(const rlx_graph *g, const rlx_node *n, const conv_geo *c, const float *w, int threads) {
  wg4_geo w4;
  const char *force = getenv("RLX_WINOGRAD");
  if ((force && !strcmp(force, "0")) || !all_finite(w, c->O * c->C * 9)) return PICK_GEMM;
  if (force && !strcmp(force, "2")) return PICK_WG2;
  bool wg4 = rlx_conv_wg4_geo(c, &w4);
  if (force && !strcmp(force, "4") && wg4) return PICK_WG4;
  wg4 = wg4 && (c->C >= WG4_MIN_C || layers_after(g, n) <= WG4_NARROW_AFTER);
  conv_way best = PICK_GEMM;
  double ns = way_ns(PICK_GEMM, c, threads);
  for (conv_way v = PICK_WG2; v <= PICK_WG4; v++) {
    if (v == PICK_WG4 && !wg4) continue;
    double t = way_ns(v, c, threads);
    if (t < ns) best = v, ns = t;
  }
  return best;
}

/* Whether a dynamic conv's output image has one size at every binding (a symbolic batch only). */
static bool spatial_fixed(const rlx_graph *sym, const rlx_node *n) {
  const rlx_shape *ys = &sym->values[n->out[0]].shape;
  for (int a = 0; a < n->p.conv.nd; a++) {
    int64_t lo, hi;
    rlx_dim_bounds(&sym->syms, ys->dims[ys->rank - n->p.conv.nd + a], &lo, &hi);
    if (lo != hi) return false;
  }
  return true;
}

static rlx_status pack_oom(const rlx_node *n) {
  return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory packing the weights of node '%s'", n->label);
}

rlx_status rlx_cpu_try_conv(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k) {
  const rlx_conv_params *p = &n->p.conv;
  const rlx_value *xv = rlx_in(g, n, 0), *wv = rlx_in(g, n, 1), *yv = &g->values[n->out[0]];
  conv_geo c;
  if (p->transposed || p->channels_last || xv->dtype != RLX_DTYPE_F32 || wv->dtype != RLX_DTYPE_F32 ||
      (wv->kind != RLX_VALUE_WEIGHT && wv->kind != RLX_VALUE_CONST) || !geo_of(p, &xv->shape, &wv->shape, &yv->shape, &c))
    return RLX_OK;
  if (rlx_in(g, n, 7)) { /* fuse_preact's batch norm: the two sgemm ways of a 1x1 conv normalize as they pack */
    const rlx_epilogue *pre = &p->pre_ep;
    if (c.G != 1 || !rlx_conv_direct(&c) || (pre->has_act && pre->act.kind != RLX_UNARY_RELU)) return RLX_OK;
    for (int i = 7; i < 11; i++)
      if (rlx_in(g, n, i) && rlx_in(g, n, i)->dtype != RLX_DTYPE_F32) return RLX_OK;
  }
  dw_geo d;
  if (c.G == c.C && c.O == c.C && c.G > 1 && rlx_conv_phase_geo(&c, &d)) { /* depthwise */
    k->run = dw_run, k->fast = true, k->name = "f32_conv_depthwise";
    k->scratch_for = dw_scratch_for;
    k->scratch = dw_scratch_for(g, n, threads);
    return RLX_OK;
  }
  wg_geo wg;
  bool wg_ok = wg_geo_of(&c, &wg) && !getenv("RLX_NO_WINOGRAD") && all_finite(wv->data, c.O * c.C * 9);
  bool wg_lo = wg_ok && wg_worth(&c, &wg), wg_hi = wg_lo; /* static: the one shape */
  if (wg_ok && sym) wg_worth_range(sym, n, &c, &wg_lo, &wg_hi);
  conv_way way = PICK_GEMM;
  if (wg_ok && (!sym || spatial_fixed(sym, n))) { /* one image size: the cost model picks */
    way = conv_pick(g, n, &c, wv->data, threads);
    wg_lo = wg_hi = way == PICK_WG2;
  }
  if (way == PICK_WG4) {
    if (!(k->packed = rlx_aligned_alloc(rlx_conv_wg4_packed_bytes(&c)))) return pack_oom(n);
    if (!rlx_conv_wg4_pack(&c, wv->data, k->packed)) return pack_oom(n);
    k->run = rlx_conv_wg4_run, k->fast = true, k->name = "f32_conv_winograd_4x4_3x3";
    k->scratch_for = wg4_scratch_for;
    k->scratch = wg4_scratch_for(g, n, threads);
    return RLX_OK;
  }
  if (wg_lo != wg_hi) { /* the bindings disagree: keep both */
    if (!(k->packed = rlx_aligned_alloc(wg_packed_bytes(&c) + rlx_conv_gemm_packed_bytes(&c))))
      return pack_oom(n);
    if (!wg_pack_into(&c, wv->data, k->packed)) return pack_oom(n);
    rlx_conv_gemm_pack(&c, wv->data, (char *)k->packed + wg_packed_bytes(&c));
    k->run = auto_run, k->fast = true, k->name = "f32_conv_winograd_or_sgemm";
    k->scratch_for = auto_scratch_for, k->name_for = auto_name_for;
    k->scratch = auto_scratch_for(g, n, threads);
    return RLX_OK;
  }
  if (wg_lo) {
    if (!(k->packed = rlx_aligned_alloc(wg_packed_bytes(&c))))
      return pack_oom(n);
    if (!wg_pack_into(&c, wv->data, k->packed)) return pack_oom(n);
    k->run = wg_run, k->fast = true, k->name = "f32_conv_winograd_2x2_3x3";
    k->scratch_for = wg_scratch_for;
    k->scratch = wg_scratch_for(g, n, threads);
    return RLX_OK;
  }
  if ((!sym || spatial_fixed(sym, n)) && rlx_conv_pix_pick(&c, threads)) {
    if (!(k->packed = rlx_aligned_alloc(rlx_conv_pix_packed_bytes(&c)))) return pack_oom(n);
    rlx_conv_pix_pack(&c, wv->data, k->packed);
    k->run = rlx_conv_pix_run, k->fast = true;
    k->name = rlx_in(g, n, 7) ? "f32_conv_pixel_bn_sgemm" : "f32_conv_pixel_sgemm";
    k->scratch_for = pix_scratch_for;
    k->scratch = pix_scratch_for(g, n, threads);
    return RLX_OK;
  }
  if (!(k->packed = rlx_aligned_alloc(rlx_conv_gemm_packed_bytes(&c)))) return pack_oom(n);
  rlx_conv_gemm_pack(&c, wv->data, k->packed);
  k->run = rlx_conv_gemm_run, k->fast = true;
  k->name = rlx_in(g, n, 7) ? "f32_conv_1x1_bn_sgemm" : rlx_conv_gemm_name(&c);
  k->scratch_for = gemm_scratch_for;
  k->scratch = gemm_scratch_for(g, n, threads);
  return RLX_OK;
}
