/*
 * conv.c — the fast f32 convolution (1-D and 2-D, not transposed):
 *
 *   out[b, g] [Og, OH*OW] = W_g [Og, Cg*kh*kw] @ cols [Cg*kh*kw, OH*OW]
 *
 * The weights are the sgemm's A operand, packed once at compile time. The
 * columns are never materialized: the sgemm's B packer reads each panel
 * straight from the image (implicit im2col), or from the input itself for a
 * 1x1 kernel with stride 1 and no padding. Bias, the fused residual and the
 * fused activation run in the sgemm's epilogue on each block while it is in
 * cache. Depthwise convolutions (one channel per group) run directly.
 */
#include <string.h>

#include "cpu/gemm.h"
#include "cpu/select.h"
#include "ops/ops_util.h"

typedef struct conv_geo {
  int64_t N, C, H, W, O, G, kh, kw, OH, OW, sh, sw, ph, pw, dh, dw;
} conv_geo;

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

static bool direct(const conv_geo *c) {
  return c->kh == 1 && c->kw == 1 && c->sh == 1 && c->sw == 1 && c->ph == 0 && c->pw == 0;
}

/* ---- implicit im2col: one B panel from the image ----
 *
 * A panel is at most a few dozen output pixels: it is first cut into
 * segments, one per output row it touches (pixel -> (oy, ox) divisions
 * once per panel, not per element); each row k of the panel (input channel,
 * kernel tap) then copies one input-row run per segment, with the zero
 * padding split off the ends so the copy itself has no bounds checks. */

typedef struct im2col_src {
  const conv_geo *c;
  const float *x; /* the group's first input channel */
} im2col_src;

typedef struct im2col_seg {
  int64_t oy, ox, run, off; /* output row, first column, length, offset in the panel row */
} im2col_seg;

#define IM2COL_SEGS 64

static inline void copy_run(float *restrict d, const float *restrict s, int64_t n) {
  for (int64_t e = 0; e < n; e++) d[e] = s[e];
}

static inline void zero_run(float *d, int64_t n) {
  for (int64_t e = 0; e < n; e++) d[e] = 0.0f;
}

RLX_VEC_CLONES static void pack_im2col_part(const im2col_src *s, int64_t k0, int64_t kc, int64_t j0, int64_t cols,
                                            int nr, float *dst) {
  const conv_geo *c = s->c;
  im2col_seg seg[IM2COL_SEGS];
  int nseg = 0;
  for (int64_t col = 0; col < cols; nseg++) {
    int64_t pix = j0 + col, oy = pix / c->OW, ox = pix % c->OW, run = RLX_MIN(cols - col, c->OW - ox);
    seg[nseg] = (im2col_seg){oy, ox, run, col};
    col += run;
  }
  int64_t khw = c->kh * c->kw, plane = c->H * c->W;
  int64_t ch = k0 / khw, ki = (k0 % khw) / c->kw, kj = k0 % c->kw;
  for (int64_t k = 0; k < kc; k++, dst += nr) {
    const float *xc = s->x + ch * plane;
    int64_t iy0 = ki * c->dh - c->ph, ix0 = kj * c->dw - c->pw;
    for (int q = 0; q < nseg; q++) {
      const im2col_seg *g = &seg[q];
      float *d = dst + g->off;
      int64_t iy = g->oy * c->sh + iy0, ix = g->ox * c->sw + ix0;
      if (iy < 0 || iy >= c->H) {
        zero_run(d, g->run);
        continue;
      }
      const float *row = xc + iy * c->W;
      if (c->sw == 1) {
        int64_t lo = RLX_MIN(RLX_MAX(-ix, 0), g->run), hi = RLX_MAX(RLX_MIN(c->W - ix, g->run), lo);
        zero_run(d, lo);
        if (hi > lo) copy_run(d + lo, row + ix + lo, hi - lo);
        zero_run(d + hi, g->run - hi);
      } else {
        for (int64_t e = 0; e < g->run; e++, ix += c->sw) d[e] = (ix >= 0 && ix < c->W) ? row[ix] : 0.0f;
      }
    }
    zero_run(dst + cols, nr - cols);
    if (++kj == c->kw) { /* the next tap, then the next kernel row, then the next channel */
      kj = 0;
      if (++ki == c->kh) ki = 0, ch++;
    }
  }
}

/* a panel has at most NR columns, so one segment table holds it */
#define RLX_X_(name, mr, nr) _Static_assert(nr <= IM2COL_SEGS, "im2col segment table smaller than the " #name " panel");
RLX_SGEMM_ISA_LIST(RLX_X_)
#undef RLX_X_

static void pack_im2col(const void *ctx, int64_t k0, int64_t kc, int64_t j0, int64_t cols, int nr, float *dst) {
  pack_im2col_part(ctx, k0, kc, j0, cols, nr, dst);
}

/* ---- the epilogue: bias per output channel, residual, activation ---- */

typedef struct conv_ep {
  const rlx_epilogue *ep;
  const float *bias;     /* the group's first channel, or NULL */
  const float *residual; /* laid out like C, or NULL */
  const float *c0;       /* C's base, to locate the residual */
} conv_ep;

RLX_VEC_CLONES static void conv_epilogue(const void *ctx, float *c, int64_t ldc, int64_t i0, int64_t j0, int m, int n) {
  const conv_ep *e = ctx;
  for (int r = 0; r < m; r++) {
    float *row = c + r * ldc;
    if (e->bias) {
      float b = e->bias[i0 + r];
      for (int k = 0; k < n; k++) row[k] += b;
    }
    if (e->residual) {
      const float *res = e->residual + (row - e->c0);
      for (int k = 0; k < n; k++) row[k] += res[k];
    }
    if (e->ep->has_act) rlx_cpu_act_f32(&e->ep->act, row, n);
  }
  (void)j0;
}

static rlx_status conv_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  rlx_shape xs = rlx_view_shape(&in[0]), ws = rlx_view_shape(&in[1]), ys = rlx_view_shape(&out[0]);
  conv_geo c;
  if (!geo_of(&n->p.conv, &xs, &ws, &ys, &c)) return rlx_errorf(RLX_ERR_INTERNAL, "conv geometry");
  int64_t Cg = c.C / c.G, Og = c.O / c.G, Kd = Cg * c.kh * c.kw, osp = c.OH * c.OW, isp = c.H * c.W;
  const float *wp = x->packed;
  size_t wgroup = rlx_sgemm_packed_a_size(Og, Kd) / sizeof(float);
  const rlx_epilogue *ep = &n->p.conv.ep;
  bool need_ep = in[2].data || (n->n_in > 3 && in[3].data) || ep->has_act;
  for (int64_t b = 0; b < c.N; b++)
    for (int64_t gi = 0; gi < c.G; gi++) {
      const float *xg = (const float *)in[0].data + (b * c.C + gi * Cg) * isp;
      float *C = (float *)out[0].data + (b * c.O + gi * Og) * osp;
      im2col_src src = {&c, xg};
      conv_ep e = {ep, in[2].data ? (const float *)in[2].data + gi * Og : NULL,
                   n->n_in > 3 && in[3].data ? (const float *)in[3].data + (b * c.O + gi * Og) * osp : NULL, C};
      rlx_sgemm_args a = {.M = Og, .N = osp, .K = Kd, .a_packed = wp + gi * wgroup, .C = C, .ldc = osp,
                          .epilogue = need_ep ? conv_epilogue : NULL, .epilogue_ctx = &e};
      if (direct(&c)) a.B = xg, a.ldb = osp;
      else a.pack_b = pack_im2col, a.pack_ctx = &src;
      rlx_sgemm_ex(x->tp, &a, x->scratch);
    }
  return RLX_OK;
}

/* ---- depthwise (one input and one output channel per group) ----
 *
 * A GEMM would have one row per group: direct convolution instead, one
 * (image, channel) plane per task. The plane is first copied into a
 * zero-padded buffer (per worker) holding exactly the rows and columns the
 * kernel reads, so the loops over output columns have no bounds checks and
 * vectorize; 3-wide kernels (the common 3x3) have their taps unrolled. */

typedef struct dw_job {
  conv_geo c;
  const float *x, *w, *bias, *res;
  float *y;
  const rlx_epilogue *ep;
  char *scratch;
  size_t plane_bytes; /* per worker */
  int64_t ph_rows, pw_cols; /* the padded plane */
} dw_job;

static int64_t dw_rows(const conv_geo *c) { return (c->OH - 1) * c->sh + (c->kh - 1) * c->dh + 1; }
static int64_t dw_cols(const conv_geo *c) { return (c->OW - 1) * c->sw + (c->kw - 1) * c->dw + 1; }
static size_t dw_plane_bytes(const conv_geo *c) {
  return ((size_t)(dw_rows(c) * dw_cols(c)) * sizeof(float) + 63) & ~(size_t)63;
}

/* yr[ox] = sum over the kernel row's three taps, added to yr (stride 1 or 2). */
RLX_VEC_CLONES static void dw_row3(float *yr, const float *src, int64_t OW, int64_t sw, float w0, float w1,
                                   float w2) {
  if (sw == 1)
    for (int64_t ox = 0; ox < OW; ox++) yr[ox] += w0 * src[ox] + w1 * src[ox + 1] + w2 * src[ox + 2];
  else
    for (int64_t ox = 0; ox < OW; ox++)
      yr[ox] += w0 * src[ox * sw] + w1 * src[ox * sw + 1] + w2 * src[ox * sw + 2];
}

RLX_VEC_CLONES static void dw_plane(void *ctx, int64_t plane, int worker) {
  const dw_job *j = ctx;
  const conv_geo *c = &j->c;
  int64_t ch = plane % c->C, PW = j->pw_cols;
  const float *x = j->x + plane * c->H * c->W, *w = j->w + ch * c->kh * c->kw;
  float *y = j->y + plane * c->OH * c->OW, *P = (float *)(j->scratch + j->plane_bytes * (size_t)worker);
  /* P[py][px] = x[py - ph][px - pw], zero outside the image */
  int64_t x0 = RLX_MIN(c->pw, PW), cnt = RLX_MAX(0, RLX_MIN(c->W, PW - x0));
  for (int64_t py = 0; py < j->ph_rows; py++) {
    float *pr = P + py * PW;
    int64_t iy = py - c->ph;
    if (iy < 0 || iy >= c->H) {
      memset(pr, 0, sizeof(float) * (size_t)PW);
      continue;
    }
    memset(pr, 0, sizeof(float) * (size_t)x0);
    memcpy(pr + x0, x + iy * c->W, sizeof(float) * (size_t)cnt);
    memset(pr + x0 + cnt, 0, sizeof(float) * (size_t)(PW - x0 - cnt));
  }
  float b = j->bias ? j->bias[ch] : 0.0f;
  for (int64_t oy = 0; oy < c->OH; oy++) {
    float *yr = y + oy * c->OW;
    for (int64_t ox = 0; ox < c->OW; ox++) yr[ox] = 0.0f;
    for (int64_t ki = 0; ki < c->kh; ki++) {
      const float *src = P + (oy * c->sh + ki * c->dh) * PW;
      const float *wr = w + ki * c->kw;
      if (c->kw == 3 && c->dw == 1) {
        dw_row3(yr, src, c->OW, c->sw, wr[0], wr[1], wr[2]);
        continue;
      }
      for (int64_t kj = 0; kj < c->kw; kj++) {
        float wv = wr[kj];
        const float *s = src + kj * c->dw;
        for (int64_t ox = 0; ox < c->OW; ox++) yr[ox] += wv * s[ox * c->sw];
      }
    }
    if (j->bias)
      for (int64_t ox = 0; ox < c->OW; ox++) yr[ox] += b;
    if (j->res) {
      const float *rr = j->res + plane * c->OH * c->OW + oy * c->OW;
      for (int64_t ox = 0; ox < c->OW; ox++) yr[ox] += rr[ox];
    }
    if (j->ep->has_act) rlx_cpu_act_f32(&j->ep->act, yr, c->OW);
  }
}

static rlx_status dw_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  rlx_shape xs = rlx_view_shape(&in[0]), ws = rlx_view_shape(&in[1]), ys = rlx_view_shape(&out[0]);
  dw_job j = {.x = in[0].data, .w = in[1].data, .bias = in[2].data, .y = out[0].data, .ep = &n->p.conv.ep,
              .scratch = x->scratch};
  if (!geo_of(&n->p.conv, &xs, &ws, &ys, &j.c)) return rlx_errorf(RLX_ERR_INTERNAL, "conv geometry");
  j.res = n->n_in > 3 ? in[3].data : NULL;
  j.ph_rows = dw_rows(&j.c), j.pw_cols = dw_cols(&j.c);
  j.plane_bytes = dw_plane_bytes(&j.c);
  rlx_parallel_for(x->tp, j.c.N * j.c.C, dw_plane, &j);
  return RLX_OK;
}

rlx_status rlx_cpu_try_conv(const rlx_graph *g, const rlx_node *n, int threads, rlx_kernel *k) {
  const rlx_conv_params *p = &n->p.conv;
  const rlx_value *xv = rlx_in(g, n, 0), *wv = rlx_in(g, n, 1), *yv = &g->values[n->out[0]];
  conv_geo c;
  if (p->transposed || xv->dtype != RLX_DTYPE_F32 || wv->dtype != RLX_DTYPE_F32 ||
      (wv->kind != RLX_VALUE_WEIGHT && wv->kind != RLX_VALUE_CONST) || !geo_of(p, &xv->shape, &wv->shape, &yv->shape, &c))
    return RLX_OK;
  if (c.G == c.C && c.O == c.C && c.G > 1) { /* depthwise */
    k->fast = dw_run, k->ref = NULL, k->name = "f32_conv_depthwise";
    k->scratch = dw_plane_bytes(&c) * (size_t)(threads > 0 ? threads : 1);
    return RLX_OK;
  }
  int64_t Og = c.O / c.G, Kd = (c.C / c.G) * c.kh * c.kw;
  size_t wgroup = rlx_sgemm_packed_a_size(Og, Kd);
  if (!(k->packed = rlx_aligned_alloc(wgroup * (size_t)c.G)))
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory packing the weights of node '%s'", n->label);
  for (int64_t gi = 0; gi < c.G; gi++) /* weights [O, Cg, kh, kw] = per group a row-major [Og, Kd] */
    rlx_sgemm_pack_a(Og, Kd, (const float *)wv->data + gi * Og * Kd, Kd, (float *)((char *)k->packed + wgroup * (size_t)gi));
  k->fast = conv_run, k->ref = NULL;
  k->name = direct(&c) ? "f32_conv_1x1_sgemm" : "f32_conv_implicit_sgemm";
  k->scratch = rlx_sgemm_scratch(threads);
  return RLX_OK;
}
