/*
 * conv_group.c — the fast f32 channels-last grouped convolution (2-D, made
 * by the layout pass, docs/design.md "Layout"):
 *
 *   x [N, H, W, C], w [O, C/G, kh, kw], bias [O], residual/y [N, OH, OW, O]
 *   with 1 < G and not depthwise (G = C = O: conv_nhwc.c)
 *
 * Direct, vectorized over output channels: the weights are reordered at
 * compile time to [tap][Cg][Op] (Op: O rounded up to 16, zero past O), and
 * each output pixel's vector of 16 channels sums, per tap and input
 * channel of its group, one weight vector times that input value. No
 * im2col: the NCHW path ran one sgemm per group, each a parallel region of
 * its own with Og (4 to 48) rows and 9 * Cg-long im2col panels packed for
 * them (regnet_y_800mf's 144-channel 28x28 layers: 0.77 ms, 42 GFLOP/s).
 * AVX-512 runs conv_group_avx512.c's register-blocked rows; other CPUs the
 * same sums in the same order in plain loops. The residual and the
 * activation run over each finished row. Tasks are (image, output row,
 * channel range): rows, and channels too where rows are few.
 */
#include <math.h>
#include <string.h>

#include "cpu/conv_group.h"
#include "cpu/gemm.h"
#include "cpu/select.h"
#include "ops/ops_util.h"

typedef struct gconv_job {
  rlx_gconv_row r; /* the fields every row shares */
  const float *res;
  const rlx_epilogue *ep;
  int64_t N, H, OH, kh, sh, ph;
  int64_t chunks, chunk; /* channel ranges a row is cut into, of chunk channels (a multiple of 16) */
  bool avx512;
} gconv_job;

/* The row's sums without AVX-512: per pixel and group, the taps inside and the group's input channels in the
 * kernel's order, each added by fmaf to the group's output channels. */
static void row_portable(const rlx_gconv_row *r) {
  int64_t end = RLX_MIN(r->ob1, r->O);
  for (int64_t ox = 0; ox < r->OW; ox++) {
    float *y = r->y + ox * r->O;
    for (int64_t o = r->ob0; o < end; o++) y[o] = r->bias ? r->bias[o] : 0.0f;
    for (int64_t g = r->ob0 / r->Og; g * r->Og < end; g++) {
      int64_t o0 = RLX_MAX(g * r->Og, r->ob0), o1 = RLX_MIN((g + 1) * r->Og, end);
      for (int64_t ki = r->k0; ki < r->k1; ki++)
        for (int64_t kj = 0; kj < r->kw; kj++) {
          int64_t ix = ox * r->sw - r->pw + kj * r->dw;
          if (ix < 0 || ix >= r->W) continue;
          const float *xp = r->x + ((r->iy0 + ki * r->dh) * r->W + ix) * r->C + g * r->Cg;
          const float *wk = r->wt + (ki * r->kw + kj) * r->Cg * r->Op;
          for (int64_t c = 0; c < r->Cg; c++)
            for (int64_t o = o0; o < o1; o++) y[o] = fmaf(wk[c * r->Op + o], xp[c], y[o]);
        }
    }
  }
}

/* Whether the AVX-512 rows run a group of Cg input channels (the rest: row_portable). */
static bool avx512_rows(int64_t Cg) { return rlx_sgemm_isa_avx512(rlx_sgemm_active()) && Cg <= RLX_GCONV_CG_MAX; }

/* Output row oy's first input row iy0 and its kernel rows inside the image, [*k0, *k1). */
static int64_t kernel_rows(const gconv_job *j, int64_t oy, int64_t *k0, int64_t *k1) {
  int64_t iy0 = oy * j->sh - j->ph, dh = j->r.dh;
  *k0 = 0, *k1 = j->kh;
  while (*k0 < *k1 && iy0 + *k0 * dh < 0) ++*k0;
  while (*k1 > *k0 && iy0 + (*k1 - 1) * dh >= j->H) --*k1;
  return iy0;
}

static void gconv_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const gconv_job *j = ctx;
  int64_t row = t / j->chunks, b = row / j->OH, oy = row % j->OH;
  rlx_gconv_row r = j->r;
  r.x += b * j->H * r.W * r.C;
  r.y += (b * j->OH + oy) * r.OW * r.O;
  r.ob0 = t % j->chunks * j->chunk, r.ob1 = RLX_MIN(r.ob0 + j->chunk, r.O);
  r.iy0 = kernel_rows(j, oy, &r.k0, &r.k1);
  /* A thread takes its rows in order (rlx_parallel_for's shares): after a row's last channel range, the
   * image rows the next output row reads and this one does not are fetched along it. Read cold, one
   * strided line a pixel and group, the rows had cost more than the sums (regnet_y_800mf's 112x112 stride-2
   * layer, its 3.2 MB input just written by the 1x1 conv before it: 0.58 ms with the input in cache, 1.41
   * from memory, 0.60 fetched ahead; docs/perf.md). */
  if (t % j->chunks == j->chunks - 1 && oy + 1 < j->OH && r.k1 > r.k0) {
    int64_t n0, n1, niy0 = kernel_rows(j, oy + 1, &n0, &n1);
    int64_t lo = RLX_MAX(niy0 + n0 * r.dh, r.iy0 + (r.k1 - 1) * r.dh + 1), hi = niy0 + (n1 - 1) * r.dh;
    if (n1 > n0 && lo <= hi) r.pf = r.x + lo * r.W * r.C, r.pf_floats = (hi - lo + 1) * r.W * r.C;
  }
  if (j->avx512) rlx_gconv_row_avx512(&r);
  else row_portable(&r);
  int64_t o0 = r.ob0, n = RLX_MIN(r.ob1, r.O) - o0;
  if (n <= 0 || (!j->res && !j->ep->has_act)) return;
  const float *res = j->res ? j->res + (b * j->OH + oy) * r.OW * r.O : NULL;
  if (n == r.O) { /* the whole row at once */
    int64_t len = r.OW * r.O;
    if (res)
      for (int64_t i = 0; i < len; i++) r.y[i] += res[i];
    if (j->ep->has_act) rlx_cpu_act_f32(&j->ep->act, r.y, len);
    return;
  }
  for (int64_t ox = 0; ox < r.OW; ox++) {
    float *y = r.y + ox * r.O + o0;
    if (res)
      for (int64_t i = 0; i < n; i++) y[i] += res[ox * r.O + o0 + i];
    if (j->ep->has_act) rlx_cpu_act_f32(&j->ep->act, y, n);
  }
}

static rlx_status gconv_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  const rlx_conv_params *p = &n->p.conv;
  const rlx_tensor_view *xv = &in[0], *wv = &in[1], *yv = &out[0];
  gconv_job j = {.r = {.x = xv->data, .wt = x->packed, .bias = in[2].data, .y = yv->data, .C = xv->dims[3],
                       .W = xv->dims[2], .O = yv->dims[3], .OW = yv->dims[2], .dh = p->dilation[0],
                       .kw = wv->dims[3], .sw = p->stride[1], .pw = p->pad[1], .dw = p->dilation[1]},
                 .res = n->n_in > 3 ? in[3].data : NULL, .ep = &p->ep, .N = xv->dims[0], .H = xv->dims[1],
                 .OH = yv->dims[1], .kh = wv->dims[2], .sh = p->stride[0], .ph = p->pad[0],
};
  j.r.taps = wv->dims[2] * wv->dims[3];
  j.r.Op = (j.r.O + 15) / 16 * 16;
  j.r.Cg = j.r.C / p->groups, j.r.Og = j.r.O / p->groups;
  j.avx512 = avx512_rows(j.r.Cg);
  int64_t rows = j.N * j.OH;
  if (rows == 0 || j.r.OW == 0 || j.r.O == 0) return RLX_OK;
  /* rows, and the channels cut where there are fewer than 4 rows a thread (a 7x7 image) */
  int threads = x->tp ? rlx_threadpool_size(x->tp) : 1;
  int64_t unit = !j.avx512 || rlx_gconv_by_vectors(j.r.Og, j.r.Cg) ? 16 : j.r.Og; /* where a row may be cut */
  int64_t units = (j.r.O + unit - 1) / unit, want = (4 * (int64_t)threads + rows - 1) / rows;
  j.chunks = RLX_MAX(1, RLX_MIN(units, want));
  j.chunk = (units + j.chunks - 1) / j.chunks * unit;
  j.chunks = (j.r.O + j.chunk - 1) / j.chunk;
  int64_t work = rows * j.r.OW * j.r.O * j.r.Cg * j.kh * j.r.kw;
  rlx_parallel_for(work >= 65536 ? x->tp : NULL, rows * j.chunks, gconv_task, &j);
  return RLX_OK;
}

rlx_status rlx_cpu_try_conv_group(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads,
                                  rlx_kernel *k) {
  (void)sym, (void)threads;
  const rlx_conv_params *p = &n->p.conv;
  const rlx_value *xv = rlx_in(g, n, 0), *wv = rlx_in(g, n, 1), *yv = &g->values[n->out[0]];
  if (!p->channels_last || p->x_nchw || p->transposed || p->nd != 2 || p->groups <= 1 || n->n_in > 4 ||
      xv->dtype != RLX_DTYPE_F32 || wv->dtype != RLX_DTYPE_F32 || xv->shape.rank != 4 || wv->shape.rank != 4 ||
      yv->shape.rank != 4 || (wv->kind != RLX_VALUE_WEIGHT && wv->kind != RLX_VALUE_CONST) ||
      rlx_dim_is_sym(xv->shape.dims[3]))
    return RLX_OK;
  int64_t C = xv->shape.dims[3], O = wv->shape.dims[0], G = p->groups;
  if (G == C && O == C) return RLX_OK; /* depthwise: conv_nhwc.c */
  if (C % G || O % G || wv->shape.dims[1] != C / G) return RLX_OK;
  int64_t Cg = C / G, Og = O / G, taps = wv->shape.dims[2] * wv->shape.dims[3], Op = (O + 15) / 16 * 16;
  bool avx512 = avx512_rows(Cg);
  int64_t vecs = rlx_gconv_vectors(O, Og, Cg), floats = avx512 ? vecs * 16 * taps * Cg : taps * Cg * Op;
  float *wt = rlx_aligned_alloc(sizeof(float) * (size_t)RLX_MAX(1, floats));
  if (!wt) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory packing the weights of node '%s'", n->label);
  const float *w = wv->data; /* [O][Cg][taps] */
  if (avx512) { /* -> [vector][taps][Cg][16] */
    bool by_vectors = rlx_gconv_by_vectors(Og, Cg);
    int64_t per_group = (Og + 15) / 16;
    for (int64_t v = 0; v < vecs; v++) {
      int64_t o0 = by_vectors ? 16 * v : v / per_group * Og + v % per_group * 16;
      int64_t o1 = by_vectors ? RLX_MIN(O, o0 + 16) : RLX_MIN((v / per_group + 1) * Og, o0 + 16);
      for (int64_t t = 0; t < taps; t++)
        for (int64_t c = 0; c < Cg; c++)
          for (int64_t l = 0; l < 16; l++)
            wt[((v * taps + t) * Cg + c) * 16 + l] = o0 + l < o1 ? w[((o0 + l) * Cg + c) * taps + t] : 0.0f;
    }
  } else { /* -> [taps][Cg][Op] */
    for (int64_t t = 0; t < taps; t++)
      for (int64_t c = 0; c < Cg; c++)
        for (int64_t o = 0; o < Op; o++) wt[(t * Cg + c) * Op + o] = o < O ? w[(o * Cg + c) * taps + t] : 0.0f;
  }
  k->packed = wt;
  k->run = gconv_run, k->fast = true, k->scratch = 0;
  k->name = avx512 ? "f32_conv_nhwc_grouped_avx512" : "f32_conv_nhwc_grouped";
  return RLX_OK;
}
