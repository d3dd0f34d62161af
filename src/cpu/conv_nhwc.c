/*
 * conv_nhwc.c — the fast f32 channels-last convolution (2-D, made by the
 * layout pass, docs/design.md "Layout"):
 *
 *   x [N, H, W, C], w [O, C/g, kh, kw], bias [O], residual/y [N, OH, OW, O]
 *
 * groups 1: one sgemm with a row per output pixel,
 *
 *   y [N*OH*OW, O] = cols [N*OH*OW, kh*kw*C] @ W^T [kh*kw*C, O]
 *
 * the weights reordered to (tap, channel) columns and packed once at
 * compile time as the sgemm's B (for the microkernel rlx_sgemm_isa_for
 * picks for O: 16 channels a 16-wide panel); a 1x1 kernel with stride 1 and no padding
 * reads the image itself as A (lda = C), any other packs its A panels
 * straight from the image (implicit im2col: a row is the C-long channel run
 * of each tap, zero outside the image). Bias, residual and activation run in
 * the sgemm's epilogue, per block of output pixels. A gated conv (fuse_gate:
 * x * gate, gate [N or 1, 1, 1, C]) packs every A panel, each element
 * multiplied by its channel's gate as it is packed (one f32 product, as the
 * binary mul computed it), so the gated image is never written.
 *
 * depthwise (C = O = groups): direct, vectorized over channels — each
 * output pixel accumulates, for a block of channels, one FMA per tap of
 * contiguous vectors of x and of the weights (reordered to [tap][C]).
 * Tasks are (output row, channel block), so a 7x7 image still splits.
 */
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "cpu/conv_dw.h"
#include "cpu/gemm.h"
#include "cpu/select.h"
#include "cpu/vmath.h"
#include "ops/ops_util.h"

typedef struct nhwc_geo {
  int64_t N, H, W, C, O, G, kh, kw, OH, OW, sh, sw, ph, pw, dh, dw;
} nhwc_geo;

static bool geo_of(const rlx_conv_params *p, const rlx_shape *x, const rlx_shape *w, const rlx_shape *y,
                   nhwc_geo *c) {
  if (p->nd != 2 || !p->channels_last || p->x_nchw || p->transposed || x->rank != 4 || w->rank != 4 || y->rank != 4) return false;
  *c = (nhwc_geo){x->dims[0], x->dims[1], x->dims[2], x->dims[3], y->dims[3], p->groups, w->dims[2], w->dims[3],
                  y->dims[1], y->dims[2], p->stride[0], p->stride[1], p->pad[0], p->pad[1], p->dilation[0],
                  p->dilation[1]};
  return true;
}

static bool pointwise(const nhwc_geo *c) {
  return c->kh == 1 && c->kw == 1 && c->sh == 1 && c->sw == 1 && c->ph == 0 && c->pw == 0;
}
static bool depthwise(const nhwc_geo *c) { return c->G > 1 && c->G == c->C && c->O == c->C; }

/* ---- groups 1: the sgemm ---- */

typedef struct nhwc_src {
  const nhwc_geo *c;
  const float *x;
  const float *gate; /* [N or 1][C]: x's channels scaled as packed; NULL: none */
  int64_t gate_step; /* C, or 0 for one gate for the whole batch */
} nhwc_src;

/* Rows [i0, i0 + rows) (output pixels) and columns [k0, k0 + kc) ((tap,
 * channel) pairs, channel fastest) of the implicit im2col matrix, as one
 * MR-row panel dst[k][r]. */
static void pack_rows(const void *ctx, int64_t i0, int rows, int64_t k0, int64_t kc, int mr, float *dst) {
  const nhwc_src *s = ctx;
  const nhwc_geo *c = s->c;
  for (int r = 0; r < rows; r++) {
    int64_t pix = i0 + r, ox = pix % c->OW, t = pix / c->OW, oy = t % c->OH, b = t / c->OH;
    int64_t iy0 = oy * c->sh - c->ph, ix0 = ox * c->sw - c->pw;
    const float *img = s->x + b * c->H * c->W * c->C;
    int64_t k = k0, end = k0 + kc;
    while (k < end) {
      int64_t tap = k / c->C, ch = k % c->C, run = RLX_MIN(c->C - ch, end - k);
      int64_t iy = iy0 + (tap / c->kw) * c->dh, ix = ix0 + (tap % c->kw) * c->dw;
      float *d = dst + (k - k0) * mr + r;
      if (iy < 0 || iy >= c->H || ix < 0 || ix >= c->W) {
        for (int64_t e = 0; e < run; e++) d[e * mr] = 0.0f;
      } else {
        const float *src = img + (iy * c->W + ix) * c->C + ch;
        if (s->gate) {
          const float *g = s->gate + b * s->gate_step + ch;
          for (int64_t e = 0; e < run; e++) d[e * mr] = src[e] * g[e];
        } else {
          for (int64_t e = 0; e < run; e++) d[e * mr] = src[e];
        }
      }
      k += run;
    }
  }
  for (int r = rows; r < mr; r++)
    for (int64_t k = 0; k < kc; k++) dst[k * mr + r] = 0.0f;
}

/* The same for a gated 1x1 stride-1 conv (its rows are the image's pixels,
 * a row's columns its C channels): rows of one image four at a time, each
 * 4x4 block scaled by its four channels' gates and transposed into the
 * panel (SSE, every x86-64), the rest one element at a time. */
static void pack_gated_1x1(const void *ctx, int64_t i0, int rows, int64_t k0, int64_t kc, int mr, float *dst) {
  const nhwc_src *s = ctx;
  int64_t C = s->c->C, hw = s->c->H * s->c->W;
  for (int r = 0; r < rows;) {
    int64_t pix = i0 + r, img = pix / hw;
    int n = (int)RLX_MIN(rows - r, (img + 1) * hw - pix); /* rows left in this image */
    const float *g = s->gate + img * s->gate_step + k0, *a = s->x + pix * C + k0;
    float *d = dst + r;
    int q = 0;
#if defined(__SSE2__)
    for (; q + 4 <= n; q += 4) {
      const float *a0 = a + q * C;
      int64_t k = 0;
      for (; k + 4 <= kc; k += 4) {
        __m128 gv = _mm_loadu_ps(g + k);
        __m128 r0 = _mm_mul_ps(_mm_loadu_ps(a0 + k), gv), r1 = _mm_mul_ps(_mm_loadu_ps(a0 + C + k), gv),
               r2 = _mm_mul_ps(_mm_loadu_ps(a0 + 2 * C + k), gv), r3 = _mm_mul_ps(_mm_loadu_ps(a0 + 3 * C + k), gv);
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        _mm_storeu_ps(d + q + k * mr, r0);
        _mm_storeu_ps(d + q + (k + 1) * mr, r1);
        _mm_storeu_ps(d + q + (k + 2) * mr, r2);
        _mm_storeu_ps(d + q + (k + 3) * mr, r3);
      }
      for (; k < kc; k++)
        for (int e = 0; e < 4; e++) d[q + e + k * mr] = a0[e * C + k] * g[k];
    }
#endif
    for (; q < n; q++)
      for (int64_t k = 0; k < kc; k++) d[q + k * mr] = a[q * C + k] * g[k];
    r += n;
  }
  for (int r = rows; r < mr; r++)
    for (int64_t k = 0; k < kc; k++) dst[k * mr + r] = 0.0f;
}

typedef struct nhwc_ep {
  const rlx_epilogue *ep;
  const float *bias;     /* [O], or NULL */
  const float *residual; /* laid out like y, or NULL */
  const float *c0;       /* y's base, to locate the residual */
} nhwc_ep;

RLX_VEC_CLONES static void nhwc_epilogue(const void *ctx, float *c, int64_t ldc, int64_t i0, int64_t j0, int m, int n) {
  const nhwc_ep *e = ctx;
  (void)i0;
  if (e->bias)
    for (int r = 0; r < m; r++) {
      float *row = c + r * ldc;
      const float *b = e->bias + j0;
      for (int k = 0; k < n; k++) row[k] += b[k];
    }
  if (n == ldc) { /* the block has every output channel: its rows are one run */
    int64_t len = (int64_t)m * n;
    if (e->residual) {
      const float *res = e->residual + (c - e->c0);
      for (int64_t k = 0; k < len; k++) c[k] += res[k];
    }
    if (e->ep->has_act) rlx_cpu_act_f32(&e->ep->act, c, len);
    return;
  }
  for (int r = 0; r < m; r++) {
    float *row = c + r * ldc;
    if (e->residual) {
      const float *res = e->residual + (row - e->c0);
      for (int k = 0; k < n; k++) row[k] += res[k];
    }
    if (e->ep->has_act) rlx_cpu_act_f32(&e->ep->act, row, n);
  }
}

/* A gated 1x1 conv whose gated image (M pixels x C channels) takes at most
 * GATED_ROWS_MAX bytes writes it to scratch as plain rows (GATED_ROWS_TASK
 * floats a task) instead of packing through pack_gated_1x1: in L2 it costs
 * about what the transposing packer does, and the sgemm then runs exactly
 * as on the ungated image (A read in place where it would be, the skinny
 * kernel for a few pixels). Measured on EfficientNet-B0's 16 project convs
 * (profile sums, three runs each, one thread): 3.23-3.26 ms with this
 * bound, 3.26-3.33 packing them all, 3.29-3.40 writing rows for all;
 * unfused, the convs 2.91-2.97 ms and their muls 0.52-0.54. Two threads:
 * 1.98-2.05 ms against 1.80 + 0.34. */
#define GATED_ROWS_MAX ((int64_t)1 << 20)
#define GATED_ROWS_TASK 16384
static bool gated_rows_fit(int64_t M, int64_t C) { return M * C <= GATED_ROWS_MAX / (int64_t)sizeof(float); }

typedef struct gated_rows_job {
  const nhwc_src *s;
  float *rows;
  int64_t per; /* rows a task */
} gated_rows_job;

RLX_VEC_CLONES static void gate_row(float *restrict d, const float *restrict x, const float *restrict g, int64_t n) {
  for (int64_t k = 0; k < n; k++) d[k] = x[k] * g[k];
}

static void gated_rows_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const gated_rows_job *j = ctx;
  const nhwc_src *s = j->s;
  int64_t C = s->c->C, hw = s->c->H * s->c->W, M = s->c->N * hw;
  for (int64_t r = t * j->per, end = RLX_MIN(M, r + j->per); r < end; r++)
    gate_row(j->rows + r * C, s->x + r * C, s->gate + r / hw * s->gate_step, C);
}

/* The conv's sgemm scratch (ahead of a gated 1x1 conv's rows): its pixels' rows packed once where they pass
 * the shared block. */
static size_t gemm_sgemm_scratch(const nhwc_geo *c, int threads) {
  return rlx_sgemm_scratch_for(threads, c->N * c->OH * c->OW, c->kh * c->kw * c->C);
}

static rlx_status gemm_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  rlx_shape xs = rlx_view_shape(&in[0]), ws = rlx_view_shape(&in[1]), ys = rlx_view_shape(&out[0]);
  nhwc_geo c;
  if (!geo_of(&n->p.conv, &xs, &ws, &ys, &c)) return rlx_errorf(RLX_ERR_INTERNAL, "channels-last conv geometry");
  const rlx_epilogue *ep = &n->p.conv.ep;
  const float *res = n->n_in > 3 ? in[3].data : NULL;
  nhwc_ep e = {ep, in[2].data, res, out[0].data};
  const rlx_tensor_view *gate = n->n_in > 4 && in[4].data ? &in[4] : NULL;
  nhwc_src src = {&c, in[0].data, gate ? gate->data : NULL, gate && gate->dims[0] != 1 ? c.C : 0};
  rlx_sgemm_args a = {.isa = rlx_sgemm_isa_for(c.O), .M = c.N * c.OH * c.OW, .N = c.O, .K = c.kh * c.kw * c.C, .b_packed = x->packed,
                      .trans_b = true, .C = out[0].data, .ldc = c.O,
                      .scratch_bytes = gemm_sgemm_scratch(&c, rlx_threadpool_size(x->tp))};
  /* bias, residual and a simple activation in the microkernel's registers; others after each block */
  rlx_sgemm_post post;
  bool any = in[2].data || res || ep->has_act;
  if (any && rlx_cpu_sgemm_post(ep, &post)) {
    post.col_bias = in[2].data, post.res = res, post.ldr = c.O;
    a.post = &post;
  } else if (any) {
    a.epilogue = nhwc_epilogue, a.epilogue_ctx = &e;
  }
  gated_rows_job gr = {&src, NULL, 0};
  if (pointwise(&c) && gate && gated_rows_fit(a.M, c.C)) {
    /* the gated image fits in L2: written there as plain rows, the sgemm
     * reads them as it reads the ungated conv's A (in place or packed: the
     * same choice, the same sums) */
    uintptr_t at = (uintptr_t)x->scratch + a.scratch_bytes;
    gr.rows = (float *)((at + 63) & ~(uintptr_t)63);
    gr.per = RLX_MAX(1, GATED_ROWS_TASK / RLX_MAX(1, c.C));
    int64_t tasks = (a.M + gr.per - 1) / gr.per;
    rlx_parallel_for(tasks > 1 ? x->tp : NULL, tasks, gated_rows_task, &gr);
    a.A = gr.rows, a.lda = c.C;
  } else if (pointwise(&c) && gate) {
    a.pack_a = pack_gated_1x1, a.pack_a_ctx = &src;
  }
  else if (pointwise(&c)) a.A = in[0].data, a.lda = c.C;
  else a.pack_a = pack_rows, a.pack_a_ctx = &src;
  rlx_sgemm_ex(x->tp, &a, x->scratch);
  return RLX_OK;
}

/* ---- depthwise ---- */

#define DW_BLOCK 64 /* channels a task's accumulators hold */

typedef float v16 __attribute__((vector_size(64), aligned(4)));
typedef float v8 __attribute__((vector_size(32), aligned(4)));

typedef struct dw_job {
  nhwc_geo c;
  const float *x, *wt, *bias, *res; /* wt: the weights as [tap][C] (packed) */
  float *y;
  const rlx_epilogue *ep;
  int64_t cblocks, cblock; /* channel blocks per row, channels per block */
  bool rows;               /* the register-blocked rows (conv_dw_avx512.c) */
  int act;                 /* theirs in registers (conv_dw.h), or RLX_SGEMM_ACT_NONE */
  float lo, hi;
} dw_job;

/* For np output pixels p (x advancing xstep floats, y ystep floats per pixel):
 * y_p[0, nc) = sum over taps t < nt of w_t[0, nc) * x_t[0, nc) (+ bias),
 * with x_t = x + base + p * xstep + xoff[t] and w_t = wt + woff[t]: the
 * channels [c0, c0 + nc) of a run of pixels that see the same taps. Blocks
 * of 16 channels outside, pixels inside, so a 3x3 kernel's nine weight
 * vectors stay in registers along the run. */
RLX_VEC_CLONES static void dw_pixels(const float *x, int64_t base, int64_t xstep, int64_t np, const int64_t *xoff,
                                     const float *wt, const int64_t *woff, int nt, int64_t nc, const float *bias,
                                     float *y, int64_t ystep) {
  int64_t ch = 0;
  /* four pixels at a time: four independent sums (the FMA latency), one weight load for four */
  if (nt == 9)
    for (; ch + 16 <= nc; ch += 16) {
      v16 w[9], b = {0};
      for (int t = 0; t < 9; t++) w[t] = *(const v16 *)(wt + woff[t] + ch);
      if (bias) b = *(const v16 *)(bias + ch);
      const float *xp = x + base + ch;
      float *yp = y + ch;
      int64_t p = 0;
      for (; p + 4 <= np; p += 4, xp += 4 * xstep, yp += 4 * ystep) {
        v16 a0 = b, a1 = b, a2 = b, a3 = b;
        for (int t = 0; t < 9; t++) {
          const float *q = xp + xoff[t];
          a0 += w[t] * *(const v16 *)q;
          a1 += w[t] * *(const v16 *)(q + xstep);
          a2 += w[t] * *(const v16 *)(q + 2 * xstep);
          a3 += w[t] * *(const v16 *)(q + 3 * xstep);
        }
        *(v16 *)yp = a0, *(v16 *)(yp + ystep) = a1, *(v16 *)(yp + 2 * ystep) = a2, *(v16 *)(yp + 3 * ystep) = a3;
      }
      for (; p < np; p++, xp += xstep, yp += ystep) {
        v16 a = b;
        for (int t = 0; t < 9; t++) a += w[t] * *(const v16 *)(xp + xoff[t]);
        *(v16 *)yp = a;
      }
    }
  for (; ch + 16 <= nc; ch += 16) {
    v16 b = {0};
    if (bias) b = *(const v16 *)(bias + ch);
    const float *xp = x + base + ch;
    float *yp = y + ch;
    int64_t p = 0;
    for (; p + 4 <= np; p += 4, xp += 4 * xstep, yp += 4 * ystep) {
      v16 a0 = b, a1 = b, a2 = b, a3 = b;
      for (int t = 0; t < nt; t++) {
        v16 w = *(const v16 *)(wt + woff[t] + ch);
        const float *q = xp + xoff[t];
        a0 += w * *(const v16 *)q;
        a1 += w * *(const v16 *)(q + xstep);
        a2 += w * *(const v16 *)(q + 2 * xstep);
        a3 += w * *(const v16 *)(q + 3 * xstep);
      }
      *(v16 *)yp = a0, *(v16 *)(yp + ystep) = a1, *(v16 *)(yp + 2 * ystep) = a2, *(v16 *)(yp + 3 * ystep) = a3;
    }
    for (; p < np; p++, xp += xstep, yp += ystep) {
      v16 a = b;
      for (int t = 0; t < nt; t++) a += *(const v16 *)(wt + woff[t] + ch) * *(const v16 *)(xp + xoff[t]);
      *(v16 *)yp = a;
    }
  }
  for (; ch + 8 <= nc; ch += 8) {
    v8 b = {0};
    if (bias) b = *(const v8 *)(bias + ch);
    const float *xp = x + base + ch;
    float *yp = y + ch;
    for (int64_t p = 0; p < np; p++, xp += xstep, yp += ystep) {
      v8 a = {0};
      for (int t = 0; t < nt; t++) a += *(const v8 *)(wt + woff[t] + ch) * *(const v8 *)(xp + xoff[t]);
      *(v8 *)yp = bias ? a + b : a;
    }
  }
  for (; ch < nc; ch++) {
    const float *xp = x + base + ch;
    float *yp = y + ch;
    for (int64_t p = 0; p < np; p++, xp += xstep, yp += ystep) {
      float a = 0.0f;
      for (int t = 0; t < nt; t++) a += wt[woff[t] + ch] * xp[xoff[t]];
      *yp = bias ? a + bias[ch] : a;
    }
  }
}

RLX_VEC_CLONES static void add_to(float *restrict y, const float *restrict r, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] += r[i];
}

/* With a horizontal stride, more than one channel block and the kernel's
 * input rows (kh rows of the image, every channel) larger than DW_L1_ROWS
 * bytes, a run of output pixels goes DW_RUN pixels at a time, every
 * channel block of them before the next: their input lines stay in L1
 * across the blocks and are read in address order, rather than each
 * block's pass over the whole row fetching one line per input pixel from
 * L2 or L3 again. bench_dwconv, one thread, no activation: 64x112x112
 * stride 2 0.27-0.33 -> 0.22-0.26 ms, 96x112x112 stride 2 0.39-0.50 ->
 * 0.32-0.38; the stride-2 layers on smaller images within the spread. At
 * stride 1 (each line read by kw neighbours in the same pass) it was
 * slower: 72x56x56 0.18 -> 0.20, 144x56x56 0.31 -> 0.36. */
#define DW_RUN 8
#define DW_L1_ROWS (32 << 10)
#define DW_TAPS 64 /* taps with a precomputed offset table (more: one pixel at a time, table rebuilt) */

/* The kernel rows of output row oy inside the image: [*k0, *k1); returns oy's first input row. */
static int64_t dw_krows(const nhwc_geo *c, int64_t oy, int64_t *k0, int64_t *k1) {
  int64_t iy0 = oy * c->sh - c->ph;
  *k0 = 0, *k1 = c->kh;
  while (*k0 < *k1 && iy0 + *k0 * c->dh < 0) ++*k0;
  while (*k1 > *k0 && iy0 + (*k1 - 1) * c->dh >= c->H) --*k1;
  return iy0;
}

/* Output row oy of image b, channels [c0, c0 + nc), from the image's rows
 * held at rows (channel c0 of row row0: the whole image at row0 0, or
 * fuse_expand's band of rows). */
static void dw_row_of(const dw_job *j, int64_t b, int64_t oy, int64_t c0, int64_t nc, const float *rows,
                      int64_t row0) {
  const nhwc_geo *c = &j->c;
  int64_t k0, k1, iy0 = dw_krows(c, oy, &k0, &k1);
  const float *img = rows; /* offsets below are from row0 */
  iy0 -= row0;
  const float *wt = j->wt + c0, *bias = j->bias ? j->bias + c0 : NULL;
  float *yrow = j->y + (b * c->OH + oy) * c->OW * c->C + c0;
  if (j->rows) {
    int64_t at = (b * c->OH + oy) * c->OW * c->C + c0;
    rlx_dw_row r = {.x = img, .wt = wt, .bias = bias, .res = j->res ? j->res + at : NULL, .y = yrow,
                    .C = c->C, .W = c->W, .OW = c->OW, .nc = nc, .iy0 = iy0, .dh = c->dh, .k0 = k0, .k1 = k1,
                    .kw = (int)c->kw, .sw = (int)c->sw, .pw = (int)c->pw, .act = j->act, .lo = j->lo, .hi = j->hi};
    rlx_dw_row_avx512(&r);
    if (j->ep->has_act && j->act == RLX_SGEMM_ACT_NONE) { /* an activation the rows do not have */
      if (nc == c->C) rlx_cpu_act_f32(&j->ep->act, yrow, c->OW * c->C);
      else
        for (int64_t ox = 0; ox < c->OW; ox++) rlx_cpu_act_f32(&j->ep->act, yrow + ox * c->C, nc);
    }
    return;
  }
  int64_t xoff[DW_TAPS], woff[DW_TAPS];
  /* the pixels whose every kernel column is inside the image: [in0, in1) */
  int64_t in0 = (c->pw + c->sw - 1) / c->sw, last = c->W - 1 - (c->kw - 1) * c->dw + c->pw;
  int64_t in1 = last < 0 ? 0 : RLX_MIN(c->OW, last / c->sw + 1);
  if (in1 < in0) in1 = in0;
  int64_t run = c->sw > 1 && nc > 16 && c->kh * c->W * c->C * (int64_t)sizeof(float) > DW_L1_ROWS ? DW_RUN : c->OW;
  for (int64_t ox = 0; ox < c->OW;) {
    /* the kernel columns inside the image at ox: [l0, l1); then the run of pixels that share them (the
     * interior run, or one border pixel) */
    int64_t ix0 = ox * c->sw - c->pw, l0 = 0, l1 = c->kw;
    while (l0 < l1 && ix0 + l0 * c->dw < 0) l0++;
    while (l1 > l0 && ix0 + (l1 - 1) * c->dw >= c->W) l1--;
    int64_t end = ox >= in0 && ox < in1 ? in1 : ox + 1;
    float *y = yrow + ox * c->C;
    int64_t np = end - ox;
    if ((k1 - k0) * (l1 - l0) <= DW_TAPS) {
      int nt = 0;
      for (int64_t ki = k0; ki < k1; ki++)
        for (int64_t kj = l0; kj < l1; kj++, nt++) {
          xoff[nt] = ((iy0 + ki * c->dh) * c->W + kj * c->dw) * c->C;
          woff[nt] = (ki * c->kw + kj) * c->C;
        }
      for (int64_t p0 = 0; p0 < np; p0 += run)
        dw_pixels(img, (ix0 + p0 * c->sw) * c->C, c->sw * c->C, RLX_MIN(run, np - p0), xoff, wt, woff, nt, nc,
                  bias, y + p0 * c->C, c->C);
    } else { /* a big kernel: per pixel, the taps in table-sized groups, summed */
      float part[DW_BLOCK];
      for (int64_t p = 0; p < np; p++, y += c->C) {
        int64_t base = (ix0 + p * c->sw) * c->C;
        for (int64_t e = 0; e < nc; e++) y[e] = 0.0f;
        int n = 0;
        for (int64_t ki = k0; ki < k1; ki++)
          for (int64_t kj = l0; kj < l1; kj++) {
            xoff[n] = ((iy0 + ki * c->dh) * c->W + kj * c->dw) * c->C, woff[n] = (ki * c->kw + kj) * c->C;
            if (++n < DW_TAPS && !(ki == k1 - 1 && kj == l1 - 1)) continue;
            for (int64_t q = 0; q < nc; q += DW_BLOCK) {
              int64_t m = RLX_MIN(DW_BLOCK, nc - q);
              dw_pixels(img + q, base, 0, 1, xoff, wt + q, woff, n, m, NULL, part, 0);
              for (int64_t e = 0; e < m; e++) y[q + e] += part[e];
            }
            n = 0;
          }
        if (bias) add_to(y, bias, nc);
      }
    }
    ox = end;
  }
  /* residual and activation over the row: one run when the task has every channel */
  if (!j->res && !j->ep->has_act) return;
  int64_t at = (b * c->OH + oy) * c->OW * c->C + c0;
  if (nc == c->C) {
    int64_t n = c->OW * c->C;
    if (j->res) add_to(yrow, j->res + at, n);
    if (j->ep->has_act) rlx_cpu_act_f32(&j->ep->act, yrow, n);
    return;
  }
  for (int64_t ox = 0; ox < c->OW; ox++) {
    float *y = yrow + ox * c->C;
    if (j->res) add_to(y, j->res + at + ox * c->C, nc);
    if (j->ep->has_act) rlx_cpu_act_f32(&j->ep->act, y, nc);
  }
}

static void dw_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const dw_job *j = ctx;
  const nhwc_geo *c = &j->c;
  int64_t row = t / j->cblocks, c0 = (t % j->cblocks) * j->cblock, nc = RLX_MIN(j->cblock, c->C - c0);
  int64_t b = row / c->OH;
  dw_row_of(j, b, row % c->OH, c0, nc, j->x + b * c->H * c->W * c->C + c0, 0);
}

/* The job of a depthwise conv reading xs-shaped rows (the node's x, or with fuse_expand its pointwise output):
 * weights [tap][C] at wt. */
static bool dw_job_init(const rlx_node *n, const rlx_shape *xs, const rlx_tensor_view *in, rlx_tensor_view *out,
                        const float *wt, dw_job *j) {
  rlx_shape ws = rlx_view_shape(&in[1]), ys = rlx_view_shape(&out[0]);
  *j = (dw_job){.x = in[0].data, .wt = wt, .bias = in[2].data, .res = n->n_in > 3 ? in[3].data : NULL,
                .y = out[0].data, .ep = &n->p.conv.ep};
  if (!geo_of(&n->p.conv, xs, &ws, &ys, &j->c)) return false;
  j->rows = rlx_dw_rows_take(j->c.kw, j->c.sw, j->c.dw), j->act = RLX_SGEMM_ACT_NONE;
  if (j->rows && j->ep->has_act) {
    rlx_sgemm_post post;
    rlx_unary_kind k = j->ep->act.kind;
    if (rlx_cpu_sgemm_post(j->ep, &post)) j->act = (int)post.act, j->lo = post.lo, j->hi = post.hi;
    else if ((k == RLX_UNARY_SILU || k == RLX_UNARY_SIGMOID) && rlx_cpu_avx512_math()) /* eltwise.c's vector math */
      j->act = k == RLX_UNARY_SILU ? RLX_DW_ACT_SILU : RLX_DW_ACT_SIGMOID;
  }
  return true;
}

/* The depthwise rows of j over the pool. */
static void dw_parallel(dw_job *j, rlx_threadpool *tp) {
  int64_t rows = j->c.N * j->c.OH;
  if (rows == 0 || j->c.OW == 0 || j->c.C == 0) return;
  /* whole rows when there are plenty; else channel blocks too, so every thread has several tasks */
  int threads = rlx_threadpool_size(tp);
  j->cblock = rows >= 8 * threads ? j->c.C : DW_BLOCK;
  j->cblocks = (j->c.C + j->cblock - 1) / j->cblock;
  int64_t work = rows * j->c.OW * j->c.C * j->c.kh * j->c.kw;
  rlx_parallel_for(work >= 16384 ? tp : NULL, rows * j->cblocks, dw_task, j);
}

static rlx_status dw_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  rlx_shape xs = rlx_view_shape(&in[0]);
  dw_job j;
  if (!dw_job_init(n, &xs, in, out, x->packed, &j)) return rlx_errorf(RLX_ERR_INTERNAL, "channels-last conv geometry");
  dw_parallel(&j, x->tp);
  return RLX_OK;
}

/* ---- a 1x1 conv folded into the depthwise conv (fuse_expand) ----
 *
 * y = dw(pre_ep(conv1x1(x, pw, pw_bias))): each task takes a contiguous run
 * of output rows and keeps the expanded rows t its next output row reads in
 * a buffer of `cap` rows (EXPAND_BAND_BYTES, so t stays in L2 with the
 * input and output rows around it); when the next row needs rows past the
 * buffer, those no longer read move to its start and the 1x1 conv's sgemm
 * fills the rest (single-threaded, A read in place: the unfused conv's
 * sums), then the depthwise rows read the band as they read an image. A
 * task's first rows are computed by it even where the previous task's
 * last ones were the same: kh - sh rows per task at most. Where those
 * would be more than an eighth of t's rows (small images over several
 * threads: mobilenet_v3's 14x14 5x5 layers at two threads ran 15-20%
 * slower banded than unfused), t is made whole first instead, by the
 * sgemm over the pool, into scratch: the unfused pair without its node
 * boundary (expand_banded). */
#define EXPAND_BAND_BYTES ((int64_t)512 << 10)

typedef struct expand_job {
  dw_job dw;       /* the depthwise conv over t's rows */
  const float *x;  /* [N, H, W, C0] */
  int64_t C0;
  const void *pw_packed; /* the 1x1 conv's weights as the sgemm's B */
  const float *pw_bias;
  const rlx_epilogue *pre;
  const rlx_sgemm_isa *isa;
  int64_t cap, R, tasks; /* rows of t a buffer holds; output rows N * OH, dealt in `tasks` runs */
  char *scratch;         /* per worker: the sgemm's scratch, then the buffer */
  size_t sgemm_bytes, per_worker;
} expand_job;

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

static int64_t expand_cap(const nhwc_geo *c) {
  int64_t span = (c->kh - 1) * c->dh + 1, row = RLX_MAX(1, c->W * c->C * (int64_t)sizeof(float));
  return RLX_MAX(1, RLX_MIN(c->H, RLX_MAX(span + c->sh, EXPAND_BAND_BYTES / row)));
}

/* Whether the tasks run bands (else t is made whole first): the rows they compute twice at most an eighth. */
static bool expand_banded(const nhwc_geo *c, int64_t tasks) {
  int64_t span = (c->kh - 1) * c->dh + 1, twice = tasks > 1 ? (tasks - 1) * RLX_MAX(0, span - c->sh) : 0;
  return twice * 8 <= c->N * c->H;
}

static size_t expand_scratch(const nhwc_geo *c, int threads) {
  int64_t tasks = RLX_MAX(1, RLX_MIN(c->N * c->OH, threads));
  if (!expand_banded(c, tasks))
    return 64 + round64(sizeof(float) * (size_t)(c->N * c->H * c->W * c->C)) + rlx_sgemm_scratch(threads);
  return 64 + (round64(rlx_sgemm_scratch(1)) + round64(sizeof(float) * (size_t)(expand_cap(c) * c->W * c->C))) *
                  (size_t)tasks;
}

/* t's rows [r0, r1) of image b into dst: the unfused 1x1 conv (gemm_run) on those pixels. */
static void expand_rows(const expand_job *e, rlx_threadpool *tp, int64_t b, int64_t r0, int64_t r1, float *dst,
                        void *gs) {
  const nhwc_geo *c = &e->dw.c;
  rlx_sgemm_args a = {.isa = e->isa, .M = (r1 - r0) * c->W, .N = c->C, .K = e->C0,
                      .A = e->x + (b * c->H + r0) * c->W * e->C0, .lda = e->C0, .b_packed = e->pw_packed,
                      .trans_b = true, .C = dst, .ldc = c->C};
  rlx_sgemm_post post;
  nhwc_ep ep = {e->pre, e->pw_bias, NULL, dst};
  bool any = e->pw_bias || e->pre->has_act;
  if (any && rlx_cpu_sgemm_post(e->pre, &post)) {
    post.col_bias = e->pw_bias, post.res = NULL, post.ldr = c->C;
    a.post = &post;
  } else if (any) {
    a.epilogue = nhwc_epilogue, a.epilogue_ctx = &ep;
  }
  rlx_sgemm_ex(tp, &a, gs);
}

static void expand_task(void *ctx, int64_t t, int worker) {
  const expand_job *e = ctx;
  const nhwc_geo *c = &e->dw.c;
  char *mine = e->scratch + (size_t)worker * e->per_worker;
  float *buf = (float *)(mine + e->sgemm_bytes);
  int64_t WC = c->W * c->C, r0 = t * e->R / e->tasks, r1 = (t + 1) * e->R / e->tasks;
  int64_t img = -1, lo = 0, hi = 0; /* buf holds t's rows [lo, hi) of image img */
  for (int64_t row = r0; row < r1; row++) {
    int64_t b = row / c->OH, oy = row % c->OH, k0, k1, iy0 = dw_krows(c, oy, &k0, &k1);
    if (b != img) img = b, lo = hi = 0;
    int64_t need_lo = iy0 + k0 * c->dh, need_hi = iy0 + (k1 - 1) * c->dh + 1; /* rising with oy */
    if (k1 > k0 && need_hi > hi) {
      if (need_lo > lo) { /* drop the rows no later output row reads */
        int64_t keep = hi > need_lo ? hi - need_lo : 0;
        if (keep) memmove(buf, buf + (need_lo - lo) * WC, sizeof(float) * (size_t)(keep * WC));
        lo = need_lo, hi = lo + keep;
      }
      /* up to the last row this run reads in this image, as many as the buffer holds */
      int64_t last = RLX_MIN(r1, (b + 1) * c->OH) - 1 - b * c->OH, lk0, lk1, liy0 = dw_krows(c, last, &lk0, &lk1);
      int64_t end = RLX_MAX(need_hi, lk1 > lk0 ? liy0 + (lk1 - 1) * c->dh + 1 : 0);
      end = RLX_MIN(end, lo + e->cap);
      expand_rows(e, NULL, b, hi, end, buf + (hi - lo) * WC, mine);
      hi = end;
    }
    dw_row_of(&e->dw, b, oy, 0, c->C, buf, lo);
  }
}

static rlx_status expand_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  rlx_shape xs = rlx_view_shape(&in[0]), ts = xs;
  ts.dims[3] = in[5].dims[0];
  expand_job e = {.x = in[0].data, .C0 = xs.dims[3], .pw_bias = in[6].data, .pre = &n->p.conv.pre_ep};
  if (!dw_job_init(n, &ts, in, out, x->packed, &e.dw)) return rlx_errorf(RLX_ERR_INTERNAL, "channels-last conv geometry");
  const nhwc_geo *c = &e.dw.c;
  e.pw_packed = (const char *)x->packed + round64(sizeof(float) * (size_t)(c->kh * c->kw * c->C));
  e.isa = rlx_sgemm_isa_for(c->C);
  e.R = c->N * c->OH;
  if (e.R == 0 || c->OW == 0 || c->C == 0) return RLX_OK;
  e.tasks = RLX_MIN(e.R, rlx_threadpool_size(x->tp));
  e.scratch = (char *)(((uintptr_t)x->scratch + 63) & ~(uintptr_t)63);
  if (!expand_banded(c, e.tasks)) { /* t whole, then the rows over it */
    float *t = (float *)e.scratch;
    size_t t_bytes = round64(sizeof(float) * (size_t)(c->N * c->H * c->W * c->C));
    for (int64_t b = 0; b < c->N; b++)
      expand_rows(&e, x->tp, b, 0, c->H, t + b * c->H * c->W * c->C, e.scratch + t_bytes);
    e.dw.x = t;
    dw_parallel(&e.dw, x->tp);
    return RLX_OK;
  }
  e.cap = expand_cap(c);
  e.sgemm_bytes = round64(rlx_sgemm_scratch(1));
  e.per_worker = e.sgemm_bytes + round64(sizeof(float) * (size_t)(e.cap * c->W * c->C));
  rlx_parallel_for(e.tasks > 1 ? x->tp : NULL, e.tasks, expand_task, &e);
  return RLX_OK;
}

/* The geometry of a fuse_expand conv: the depthwise conv on t [N, H, W, C]. */
static bool expand_geo(const rlx_graph *g, const rlx_node *n, nhwc_geo *c) {
  const rlx_value *xv = rlx_in(g, n, 0), *pw = rlx_in(g, n, 5);
  rlx_shape ts = xv->shape;
  if (ts.rank != 4 || pw->shape.rank != 4) return false;
  ts.dims[3] = pw->shape.dims[0];
  return geo_of(&n->p.conv, &ts, &rlx_in(g, n, 1)->shape, &g->values[n->out[0]].shape, c);
}

static size_t expand_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  nhwc_geo c;
  return expand_geo(g, n, &c) ? expand_scratch(&c, threads) : 0;
}

static bool is_const_f32(const rlx_value *v) {
  return v && v->dtype == RLX_DTYPE_F32 && (v->kind == RLX_VALUE_WEIGHT || v->kind == RLX_VALUE_CONST);
}

/* [C, 1, kh, kw] -> [tap][C], then the 1x1 weights [C, C0] packed as the sgemm's B. */
static rlx_status try_expand(const rlx_graph *g, const rlx_node *n, int threads, rlx_kernel *k) {
  const rlx_value *wv = rlx_in(g, n, 1), *pw = rlx_in(g, n, 5), *pb = rlx_in(g, n, 6);
  nhwc_geo c;
  if (!is_const_f32(pw) || (pb && pb->dtype != RLX_DTYPE_F32) || rlx_in(g, n, 4) || !expand_geo(g, n, &c) ||
      !depthwise(&c))
    return RLX_OK;
  int64_t taps = c.kh * c.kw, C0 = pw->shape.dims[1];
  const rlx_sgemm_isa *isa = rlx_sgemm_isa_for(c.C);
  size_t dw_bytes = round64(sizeof(float) * (size_t)(taps * c.C));
  char *packed = rlx_aligned_alloc(dw_bytes + rlx_sgemm_packed_size_for(isa, c.C, C0));
  if (!packed) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory packing the weights of node '%s'", n->label);
  float *wt = (float *)packed;
  const float *w = wv->data;
  for (int64_t ch = 0; ch < c.C; ch++)
    for (int64_t t = 0; t < taps; t++) wt[t * c.C + ch] = w[ch * taps + t];
  rlx_sgemm_pack_b_for(isa, c.C, C0, pw->data, C0, true, (float *)(packed + dw_bytes));
  k->packed = packed;
  k->run = expand_run, k->fast = true;
  k->name = rlx_dw_rows_take(c.kw, c.sw, c.dw) ? "f32_conv_nhwc_1x1_depthwise_rows" : "f32_conv_nhwc_1x1_depthwise";
  k->scratch_for = expand_scratch_for;
  k->scratch = expand_scratch_for(g, n, threads);
  return RLX_OK;
}

/* ---- selection ---- */

bool rlx_dw_rows_take(int64_t kw, int64_t sw, int64_t dw) {
  return (kw == 3 || kw == 5 || kw == 7) && (sw == 1 || sw == 2) && dw == 1 &&
         rlx_sgemm_isa_avx512(rlx_sgemm_active());
}

static size_t gemm_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  nhwc_geo c;
  if (!geo_of(&n->p.conv, &rlx_in(g, n, 0)->shape, &rlx_in(g, n, 1)->shape, &g->values[n->out[0]].shape, &c))
    return SIZE_MAX;
  size_t bytes = gemm_sgemm_scratch(&c, threads);
  if (rlx_in(g, n, 4) && pointwise(&c) && gated_rows_fit(c.N * c.H * c.W, c.C)) /* a gated 1x1 conv's rows (gemm_run) */
    bytes += 64 + sizeof(float) * (size_t)(c.N * c.H * c.W * c.C);
  return bytes;
}

rlx_status rlx_cpu_try_conv_nhwc(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads,
                                 rlx_kernel *k) {
  (void)sym;
  const rlx_conv_params *p = &n->p.conv;
  const rlx_value *xv = rlx_in(g, n, 0), *wv = rlx_in(g, n, 1), *yv = &g->values[n->out[0]];
  nhwc_geo c;
  if (p->channels_last && rlx_in(g, n, 5)) /* fuse_expand's */
    return xv->dtype == RLX_DTYPE_F32 && is_const_f32(wv) ? try_expand(g, n, threads, k) : RLX_OK;
  if (!p->channels_last || xv->dtype != RLX_DTYPE_F32 || wv->dtype != RLX_DTYPE_F32 ||
      (wv->kind != RLX_VALUE_WEIGHT && wv->kind != RLX_VALUE_CONST) || !geo_of(p, &xv->shape, &wv->shape, &yv->shape, &c))
    return RLX_OK;
  const float *w = wv->data;
  int64_t taps = c.kh * c.kw;
  bool gated = rlx_in(g, n, 4) != NULL;
  if (depthwise(&c) && !gated) { /* [C, 1, kh, kw] -> [tap][C] */
    float *wt = rlx_aligned_alloc(sizeof(float) * (size_t)(taps * c.C));
    if (!wt) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory packing the weights of node '%s'", n->label);
    for (int64_t ch = 0; ch < c.C; ch++)
      for (int64_t t = 0; t < taps; t++) wt[t * c.C + ch] = w[ch * taps + t];
    k->packed = wt;
    k->run = dw_run, k->fast = true, k->scratch = 0;
    k->name = rlx_dw_rows_take(c.kw, c.sw, c.dw) ? "f32_conv_nhwc_depthwise_rows" : "f32_conv_nhwc_depthwise";
    return RLX_OK;
  }
  if (c.G != 1) return RLX_OK;
  /* [O, C, kh, kw] -> [O][tap][C] (W^T's rows), packed as the sgemm's B */
  int64_t Kd = taps * c.C;
  float *wt = rlx_aligned_alloc(sizeof(float) * (size_t)RLX_MAX(1, c.O * Kd));
  const rlx_sgemm_isa *isa = rlx_sgemm_isa_for(c.O); /* 16 output channels: a 16-wide panel, not half a 32 */
  void *packed = rlx_aligned_alloc(rlx_sgemm_packed_size_for(isa, c.O, Kd));
  if (!wt || !packed) {
    rlx_aligned_free(wt), rlx_aligned_free(packed);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory packing the weights of node '%s'", n->label);
  }
  for (int64_t o = 0; o < c.O; o++)
    for (int64_t ch = 0; ch < c.C; ch++)
      for (int64_t t = 0; t < taps; t++) wt[(o * taps + t) * c.C + ch] = w[(o * c.C + ch) * taps + t];
  rlx_sgemm_pack_b_for(isa, c.O, Kd, wt, Kd, true, packed);
  rlx_aligned_free(wt);
  k->packed = packed;
  k->run = gemm_run, k->fast = true;
  k->name = pointwise(&c) ? gated ? "f32_conv_nhwc_1x1_gated_sgemm" : "f32_conv_nhwc_1x1_sgemm"
           : gated        ? "f32_conv_nhwc_gated_sgemm"
                          : "f32_conv_nhwc_sgemm";
  k->scratch_for = gemm_scratch_for;
  k->scratch = gemm_scratch_for(g, n, threads);
  return RLX_OK;
}
