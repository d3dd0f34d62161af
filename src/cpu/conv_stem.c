/*
 * conv_stem.c — a network's first conv, on the image's few channels,
 * straight into channels-last (docs/design.md, "Layout"):
 *
 *   x [N, C, H, W], w [O, C, kh, kw], bias [O],
 *   residual/y [N, OH, OW, O]              (channels_last with x_nchw)
 *
 * With three input channels an im2col row is 27 floats (a 3x3 kernel) and
 * its channel runs are 3 wide: as an sgemm either layout spends more on
 * packing than on the product, and an NCHW result then costs a permute
 * into the channels-last network. Here each output pixel is a vector of
 * its O channels, accumulated over the C*kh*kw taps as one broadcast
 * input value times one vector of weights (reordered to [tap][O], O
 * padded to whole vectors): four pixels at a time, two vectors of
 * channels each, so a weight vector serves four FMAs. Pixels whose taps
 * all fall inside the image take that path; those on the left and right
 * borders skip the outside taps one by one. Any channel count and kernel
 * size runs (the layout pass makes it for C <= 4). Bias starts the sums; the
 * residual and the activation run over each finished row. Tasks are output
 * rows (threads get contiguous bands of the image, as the channels-last
 * nodes after it do).
 */
#include <string.h>

#include "cpu/select.h"
#include "ops/ops_util.h"

#define TAP_GROUP 256 /* taps per offset table; a bigger kernel adds its taps to the sums in groups */

typedef float v16 __attribute__((vector_size(64), aligned(4)));

typedef struct stem_job {
  const float *x, *wt, *bias, *res;
  float *y;
  const rlx_epilogue *ep;
  int64_t N, C, H, W, O, Op, kh, kw, OH, OW, sh, sw, ph, pw, dh, dw;
  void *scratch_rows; /* per worker, row_bytes: a row of Op-wide pixels (when O is not whole vectors) */
  size_t row_bytes;
} stem_job;

/* Pixels [ox0, ox0 + np) of one output row, every tap inside the image:
 * tap t reads img at the pixel's first column plus xoff[t], weights at
 * wt + tap[t] * Op. dst: the pixels' Op-wide rows. */
RLX_VEC_CLONES static void stem_inside(const stem_job *j, const float *img, int64_t ox0, int64_t np,
                                       const int64_t *xoff, const int64_t *tap, int nt, bool first, float *dst) {
  int64_t Op = j->Op, xs = j->sw;
  for (int64_t ob = 0; ob < Op; ob += 32) {
    bool two = ob + 16 < Op;
    v16 b0 = {0}, b1 = {0};
    if (first && j->bias) { /* later tap groups add to the sums in dst; bias rows are
                               only O long: the padded tail stays zero */
      float t0[16] = {0}, t1[16] = {0};
      memcpy(t0, j->bias + ob, sizeof(float) * (size_t)RLX_MIN(16, j->O - ob));
      if (two) memcpy(t1, j->bias + ob + 16, sizeof(float) * (size_t)RLX_MIN(16, j->O - ob - 16));
      b0 = *(const v16 *)t0, b1 = *(const v16 *)t1;
    }
    int64_t p = 0;
    if (!two) /* one vector of channels: eight pixels, so eight sums are in flight (an FMA's latency is 4 cycles, 2 issue a cycle) */
      for (; p + 8 <= np; p += 8) {
        const float *xp = img + ((ox0 + p) * xs - j->pw);
        float *d = dst + p * Op + ob;
        v16 a[8];
        for (int q = 0; q < 8; q++) a[q] = first ? b0 : *(v16 *)(d + q * Op);
        for (int t = 0; t < nt; t++) {
          const float *x = xp + xoff[t];
          v16 w0 = *(const v16 *)(j->wt + tap[t] * Op + ob);
          for (int q = 0; q < 8; q++) a[q] += x[q * xs] * w0;
        }
        for (int q = 0; q < 8; q++) *(v16 *)(d + q * Op) = a[q];
      }
    for (; p + 4 <= np; p += 4) {
      const float *xp = img + ((ox0 + p) * xs - j->pw);
      float *d = dst + p * Op + ob;
      v16 a00 = b0, a01 = b1, a10 = b0, a11 = b1, a20 = b0, a21 = b1, a30 = b0, a31 = b1;
      if (!first) {
        a00 = *(v16 *)d, a10 = *(v16 *)(d + Op), a20 = *(v16 *)(d + 2 * Op), a30 = *(v16 *)(d + 3 * Op);
        if (two) a01 = *(v16 *)(d + 16), a11 = *(v16 *)(d + Op + 16), a21 = *(v16 *)(d + 2 * Op + 16),
                 a31 = *(v16 *)(d + 3 * Op + 16);
      }
      for (int t = 0; t < nt; t++) {
        const float *q = xp + xoff[t], *w = j->wt + tap[t] * Op + ob;
        v16 w0 = *(const v16 *)w;
        float x0 = q[0], x1 = q[xs], x2 = q[2 * xs], x3 = q[3 * xs];
        a00 += x0 * w0, a10 += x1 * w0, a20 += x2 * w0, a30 += x3 * w0;
        if (two) {
          v16 w1 = *(const v16 *)(w + 16);
          a01 += x0 * w1, a11 += x1 * w1, a21 += x2 * w1, a31 += x3 * w1;
        }
      }
      *(v16 *)d = a00, *(v16 *)(d + Op) = a10, *(v16 *)(d + 2 * Op) = a20, *(v16 *)(d + 3 * Op) = a30;
      if (two)
        *(v16 *)(d + 16) = a01, *(v16 *)(d + Op + 16) = a11, *(v16 *)(d + 2 * Op + 16) = a21,
                   *(v16 *)(d + 3 * Op + 16) = a31;
    }
    for (; p < np; p++) {
      const float *xp = img + ((ox0 + p) * xs - j->pw);
      v16 a0 = b0, a1 = b1;
      if (!first) {
        a0 = *(v16 *)(dst + p * Op + ob);
        if (two) a1 = *(v16 *)(dst + p * Op + ob + 16);
      }
      for (int t = 0; t < nt; t++) {
        const float *w = j->wt + tap[t] * Op + ob;
        float xv = xp[xoff[t]];
        a0 += xv * *(const v16 *)w;
        if (two) a1 += xv * *(const v16 *)(w + 16);
      }
      *(v16 *)(dst + p * Op + ob) = a0;
      if (two) *(v16 *)(dst + p * Op + ob + 16) = a1;
    }
  }
}

/* One pixel on a border: the taps of columns inside the image only. */
RLX_VEC_CLONES static void stem_border(const stem_job *j, const float *img, int64_t iy0, int64_t ky0, int64_t ky1,
                                       int64_t ox, float *dst) {
  int64_t ix0 = ox * j->sw - j->pw, Op = j->Op;
  for (int64_t o = 0; o < Op; o++) dst[o] = j->bias && o < j->O ? j->bias[o] : 0.0f;
  for (int64_t c = 0; c < j->C; c++)
    for (int64_t ky = ky0; ky < ky1; ky++)
      for (int64_t kx = 0; kx < j->kw; kx++) {
        int64_t ix = ix0 + kx * j->dw;
        if (ix < 0 || ix >= j->W) continue;
        float xv = img[(c * j->H + iy0 + ky * j->dh) * j->W + ix];
        const float *w = j->wt + ((c * j->kh + ky) * j->kw + kx) * Op;
        for (int64_t o = 0; o < Op; o += 16) *(v16 *)(dst + o) += xv * *(const v16 *)(w + o);
      }
}

RLX_VEC_CLONES static void add_to(float *restrict y, const float *restrict r, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] += r[i];
}

static void stem_task(void *ctx, int64_t t, int worker) {
  const stem_job *j = ctx;
  int64_t b = t / j->OH, oy = t % j->OH, iy0 = oy * j->sh - j->ph;
  int64_t ky0 = 0, ky1 = j->kh; /* the kernel rows inside the image */
  while (ky0 < ky1 && iy0 + ky0 * j->dh < 0) ky0++;
  while (ky1 > ky0 && iy0 + (ky1 - 1) * j->dh >= j->H) ky1--;
  const float *img = j->x + b * j->C * j->H * j->W;
  float *yrow = j->y + (b * j->OH + oy) * j->OW * j->O;
  /* the row in Op-wide pixels: in place when O is whole vectors, else in this worker's scratch row */
  float *dst = j->O == j->Op ? yrow : (float *)((char *)j->scratch_rows + (size_t)worker * j->row_bytes);
  /* the output columns whose taps are all inside: [lo, hi) */
  int64_t lo = (j->pw + j->sw - 1) / j->sw, hi = (j->W - 1 - (j->kw - 1) * j->dw + j->pw) / j->sw + 1;
  if (j->W - 1 - (j->kw - 1) * j->dw + j->pw < 0) hi = 0;
  lo = RLX_MIN(lo, j->OW), hi = RLX_MAX(lo, RLX_MIN(hi, j->OW));
  for (int64_t ox = 0; ox < lo; ox++) stem_border(j, img, iy0, ky0, ky1, ox, dst + ox * j->Op);
  /* the taps of the rows inside, in groups of a table's size */
  int64_t xoff[TAP_GROUP], tap[TAP_GROUP];
  int nt = 0;
  bool first = true;
  for (int64_t c = 0; c < j->C; c++)
    for (int64_t ky = ky0; ky < ky1; ky++)
      for (int64_t kx = 0; kx < j->kw; kx++) {
        xoff[nt] = (c * j->H + iy0 + ky * j->dh) * j->W + kx * j->dw;
        tap[nt] = (c * j->kh + ky) * j->kw + kx;
        if (++nt < TAP_GROUP && !(c == j->C - 1 && ky == ky1 - 1 && kx == j->kw - 1)) continue;
        if (hi > lo) stem_inside(j, img, lo, hi - lo, xoff, tap, nt, first, dst + lo * j->Op);
        nt = 0, first = false;
      }
  if (first && hi > lo) stem_inside(j, img, lo, hi - lo, xoff, tap, 0, true, dst + lo * j->Op); /* no rows inside */
  for (int64_t ox = hi; ox < j->OW; ox++) stem_border(j, img, iy0, ky0, ky1, ox, dst + ox * j->Op);
  if (dst != yrow)
    for (int64_t ox = 0; ox < j->OW; ox++) memcpy(yrow + ox * j->O, dst + ox * j->Op, sizeof(float) * (size_t)j->O);
  int64_t n = j->OW * j->O;
  if (j->res) add_to(yrow, j->res + (b * j->OH + oy) * n, n);
  if (j->ep->has_act) rlx_cpu_act_f32(&j->ep->act, yrow, n);
}

static rlx_status stem_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  rlx_shape xs = rlx_view_shape(&in[0]), ws = rlx_view_shape(&in[1]), ys = rlx_view_shape(&out[0]);
  const rlx_conv_params *p = &n->p.conv;
  stem_job j = {.x = in[0].data, .wt = x->packed, .bias = in[2].data, .res = n->n_in > 3 ? in[3].data : NULL,
                .y = out[0].data, .ep = &p->ep, .N = xs.dims[0], .C = xs.dims[1], .H = xs.dims[2], .W = xs.dims[3],
                .O = ws.dims[0], .kh = ws.dims[2], .kw = ws.dims[3], .OH = ys.dims[1], .OW = ys.dims[2],
                .sh = p->stride[0], .sw = p->stride[1], .ph = p->pad[0], .pw = p->pad[1], .dh = p->dilation[0],
                .dw = p->dilation[1], .scratch_rows = x->scratch};
  j.Op = (j.O + 15) / 16 * 16;
  j.row_bytes = (size_t)(j.OW * j.Op) * sizeof(float);
  int64_t rows = j.N * j.OH;
  if (rows == 0 || j.OW == 0 || j.O == 0) return RLX_OK;
  int64_t work = rows * j.OW * j.Op * j.C * j.kh * j.kw;
  rlx_parallel_for(work >= 65536 ? x->tp : NULL, rows, stem_task, &j);
  return RLX_OK;
}

static size_t stem_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  const rlx_value *w = rlx_in(g, n, 1), *y = &g->values[n->out[0]];
  int64_t O = w->shape.dims[0], Op = (O + 15) / 16 * 16;
  return O == Op ? 0 : (size_t)threads * (size_t)(y->shape.dims[2] * Op) * sizeof(float);
}

rlx_status rlx_cpu_try_conv_stem(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads,
                                 rlx_kernel *k) {
  (void)sym;
  const rlx_conv_params *p = &n->p.conv;
  const rlx_value *xv = rlx_in(g, n, 0), *wv = rlx_in(g, n, 1);
  if (!p->channels_last || !p->x_nchw || p->transposed || p->nd != 2 || p->groups != 1 ||
      xv->dtype != RLX_DTYPE_F32 || wv->dtype != RLX_DTYPE_F32 || xv->shape.rank != 4 || wv->shape.rank != 4 ||
      (wv->kind != RLX_VALUE_WEIGHT && wv->kind != RLX_VALUE_CONST))
    return RLX_OK;
  int64_t O = wv->shape.dims[0], C = wv->shape.dims[1], kh = wv->shape.dims[2], kw = wv->shape.dims[3];
  int64_t taps = C * kh * kw, Op = (O + 15) / 16 * 16;
  if (O < 1 || taps < 1) return RLX_OK;
  /* [O, C, kh, kw] -> [C, kh, kw][Op], the padded channels zero */
  float *wt = rlx_aligned_alloc(sizeof(float) * (size_t)(taps * Op));
  if (!wt) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory packing the weights of node '%s'", n->label);
  const float *w = wv->data;
  for (int64_t t = 0; t < taps; t++)
    for (int64_t o = 0; o < Op; o++) wt[t * Op + o] = o < O ? w[o * taps + t] : 0.0f;
  k->packed = wt;
  k->run = stem_run, k->fast = true, k->name = "f32_conv_stem_nhwc";
  k->scratch_for = stem_scratch_for;
  k->scratch = stem_scratch_for(g, n, threads);
  return RLX_OK;
}
