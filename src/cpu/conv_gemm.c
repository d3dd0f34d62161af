/*
 * conv_gemm.c — the NCHW f32 convolutions that are one sgemm per image and
 * group (conv.c chooses among them; docs/design.md, "Convolution (NCHW)"):
 *
 *   channel-major  out[b, g] [Og, OH*OW] = W_g [Og, Cg*kh*kw] @ cols [Cg*kh*kw, OH*OW]
 *   pixel-major    C [OH*OW, Og] = cols^T @ W_g^T, written into out transposed
 *
 * Channel-major: the weights are the sgemm's A, packed once at compile time;
 * the columns are never materialized: the sgemm's B packer reads each panel
 * straight from the image (implicit im2col), or from the input itself for a
 * 1x1 kernel with stride 1 and no padding. Pixel-major (small images): the
 * same im2col panels are its A panels and the weights its B. Bias, the fused
 * residual and the fused activation run in the sgemm's epilogue on each
 * block while it is in cache.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/conv.h"
#include "cpu/gemm.h"
#include "cpu/select.h"
#include "cpu/tuning.h"
#include "ops/ops_util.h"

/* ---- implicit im2col: one B panel from the image ----
 *
 * A panel is at most a few dozen output pixels: it is first cut into
 * segments, one per output row it touches (pixel -> (oy, ox) divisions
 * once per panel, not per element); each row k of the panel (input channel,
 * kernel tap) then copies one input-row run per segment, with the zero
 * padding split off the ends so the copy itself has no bounds checks. */

#define IM2COL_TAPS_MAX 256

typedef struct im2col_src {
  const conv_geo *c;
  const float *x; /* the group's first input channel */
  /* strided convolutions: the group's channels as stride phase planes (padding included), and
   * each tap's offset in a channel's planes; NULL: read x with bounds checks */
  const float *phases;
  const dw_geo *d;
  int64_t chan_floats; /* floats per channel in phases */
  int64_t tap_off[IM2COL_TAPS_MAX];
  bool avx512; /* channel-major from phases: rlx_f32_pack_taps_b__avx512 */
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

/* The runs are short (a 7-wide image row, a panel's 12 pixels): GCC would turn copy_run and zero_run into
 * memmove / memset calls, one per run (4.5% of a resnet50 run, docs/perf.md "Pixel-major convolutions").
 * Clang (the sanitizer builds) has no such optimize attribute. */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_LIBCALL_LOOPS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define NO_LIBCALL_LOOPS
#endif

NO_LIBCALL_LOOPS RLX_VEC_CLONES static void pack_im2col_part(const im2col_src *s, int64_t k0, int64_t kc, int64_t j0,
                                                             int64_t cols, int nr, float *dst) {
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
  if (s->phases) { /* every row a set of plain runs: the padding is in the planes */
    int64_t t = k0 % khw, QW = s->d->QW;
    const float *chan = s->phases + ch * s->chan_floats;
    for (int64_t k = 0; k < kc; k++, dst += nr) {
      const float *base = chan + s->tap_off[t];
      for (int q = 0; q < nseg; q++) copy_run(dst + seg[q].off, base + seg[q].oy * QW + seg[q].ox, seg[q].run);
      zero_run(dst + cols, nr - cols);
      if (++t == khw) t = 0, chan += s->chan_floats;
    }
    return;
  }
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
  const im2col_src *s = ctx;
  if (s->avx512) { /* a few masked loads per row from the planes (padding included); nr <= 32 (gemm.h) */
    const conv_geo *c = s->c;
    int64_t khw = c->kh * c->kw;
    int32_t poff[32];
    int64_t oy = j0 / c->OW, ox = j0 % c->OW; /* one division a panel, not two a column (8% of a stem conv) */
    for (int64_t j = 0; j < cols; j++) {
      poff[j] = (int32_t)(oy * s->d->QW + ox);
      if (++ox == c->OW) ox = 0, oy++;
    }
    rlx_f32_pack_taps_b__avx512(s->phases + k0 / khw * s->chan_floats, s->chan_floats, s->tap_off, khw, k0 % khw, kc,
                                poff, (int)cols, nr, dst);
    return;
  }
  pack_im2col_part(ctx, k0, kc, j0, cols, nr, dst);
}

/* ---- strided convolutions: im2col from stride phase planes ----
 *
 * With stride s > 1 the image columns a kernel tap reads are s apart. The
 * group's channels are first copied into the phase planes the taps use
 * (dw_phase: padding included), so every im2col row is a few plain runs, as
 * for stride 1, with no bounds checks. */

typedef struct phase_job {
  const conv_geo *c;
  dw_geo d;
  const float *x;
  float *dst;
  int64_t planes;       /* phases in use */
  int8_t used[16];      /* phase (rp*s + cp) -> its slot among the planes in use, or -1 */
} phase_job;

/* Whether the channel-major way packs its B panels with rlx_f32_pack_taps_b__avx512 (the AVX-512 microkernel). */
bool rlx_conv_planes_avx512(void) { return rlx_sgemm_isa_avx512(rlx_sgemm_active()); }

/* Whether the conv reads phase planes: the channel-major way for strides above 1, and for stride 1 where the
 * AVX-512 packer reads them (one plane, the image zero-padded: a panel row is a few masked loads, where the
 * bounds-checked copy from the image cost a third of a 16-channel 3x3 conv); the pixel-major way for stride 1
 * too, where its reads then need no bounds checks. */
static bool phased(const conv_geo *c, dw_geo *d, bool pixel) {
  return (pixel || c->sh > 1 || rlx_conv_planes_avx512()) && c->kh * c->kw <= IM2COL_TAPS_MAX && !rlx_conv_direct(c) &&
         rlx_conv_phase_geo(c, d);
}

/* Marks the phases some tap reads; returns how many. */
static int64_t phase_planes_used(const conv_geo *c, const dw_geo *d, int8_t used[16]) {
  int64_t s = d->s, n = 0;
  for (int i = 0; i < 16; i++) used[i] = -1;
  for (int64_t ki = 0; ki < c->kh; ki++)
    for (int64_t kj = 0; kj < c->kw; kj++) {
      int64_t ph = ((ki * c->dh) % s) * s + (kj * c->dw) % s;
      if (used[ph] < 0) used[ph] = (int8_t)n++;
    }
  return n;
}

static void phase_taps(const conv_geo *c, const dw_geo *d, const int8_t used[16], int64_t *tap_off) {
  int64_t s = d->s, pq = d->QH * d->QW;
  for (int64_t t = 0; t < c->kh * c->kw; t++) {
    int64_t ry = (t / c->kw) * c->dh, rx = (t % c->kw) * c->dw;
    tap_off[t] = used[(ry % s) * s + rx % s] * pq + (ry / s) * d->QW + rx / s;
  }
}

static size_t phases_bytes(const conv_geo *c, bool pixel) {
  dw_geo d;
  if (!phased(c, &d, pixel)) return 0;
  int8_t used[16];
  int64_t n = phase_planes_used(c, &d, used);
  return ((size_t)((c->C / c->G) * n * d.QH * d.QW) * sizeof(float) + 63) & ~(size_t)63;
}

static void phase_task(void *ctx, int64_t ch, int worker) {
  (void)worker;
  const phase_job *j = ctx;
  const conv_geo *c = j->c;
  int64_t s = j->d.s, pq = j->d.QH * j->d.QW;
  for (int64_t ph = 0; ph < s * s; ph++)
    if (j->used[ph] >= 0)
      rlx_conv_phase_plane(j->dst + (ch * j->planes + j->used[ph]) * pq, j->x + ch * c->H * c->W, c, &j->d, ph / s, ph % s);
}

/* Sets up the phase planes of a run (in the scratch's first phases_bytes) and src to read them; false when the
 * conv reads the image itself. */
static bool planes_setup(const conv_geo *c, bool pixel, char *scratch, phase_job *pj, im2col_src *src) {
  if (!phased(c, &pj->d, pixel)) return false;
  pj->planes = phase_planes_used(c, &pj->d, pj->used);
  src->d = &pj->d, src->chan_floats = pj->planes * pj->d.QH * pj->d.QW;
  src->phases = pj->dst = (float *)scratch;
  phase_taps(c, &pj->d, pj->used, src->tap_off);
  return true;
}

/* ---- a folded batch norm (fuse_preact): the image normalized as packed ----
 *
 * A 1x1 conv reading act(batch_norm(x)) reads x and normalizes each element
 * as its sgemm packs it: (x - mean) * s + b, s = float(w / sqrt(var + eps)
 * in double), then relu, the float operations of the fast batch norm
 * (cpu/norm.c batch_task), so the packed panels hold the bits the unfused
 * batch norm would have written. The per-channel mean, s and b are computed
 * once per run into the scratch's first bn_table_bytes. */

typedef struct bn_src {
  const float *x;         /* the image's first channel */
  int64_t isp;            /* floats per channel plane */
  const float *m, *s, *b; /* per channel */
  bool relu;
  bool avx512; /* rlx_f32_pack_bn__avx512 (the active microkernel's ISA), else bn_run */
} bn_src;

size_t rlx_conv_bn_table_bytes(int64_t C) { return ((size_t)(3 * C) * sizeof(float) + 63) & ~(size_t)63; }

static void bn_table(const rlx_node *n, const rlx_tensor_view *in, int64_t C, float *tab, bn_src *src) {
  const float *mean = in[7].data, *var = in[8].data, *w = in[9].data, *b = in[10].data;
  for (int64_t c = 0; c < C; c++) {
    double inv = 1.0 / sqrt((double)var[c] + n->p.conv.pre_eps);
    tab[c] = mean[c], tab[C + c] = (float)(inv * (w ? (double)w[c] : 1.0)), tab[2 * C + c] = b ? b[c] : 0.0f;
  }
  src->m = tab, src->s = tab + C, src->b = tab + 2 * C, src->relu = n->p.conv.pre_ep.has_act;
  src->avx512 = rlx_sgemm_isa_avx512(rlx_sgemm_active());
}

RLX_VEC_CLONES static void bn_run(float *restrict d, const float *restrict x, int64_t n, float m, float s, float b,
                                  bool relu) {
  if (relu)
    for (int64_t e = 0; e < n; e++) {
      float v = (x[e] - m) * s + b;
      d[e] = v > 0.0f || v != v ? v : 0.0f; /* relu as eltwise.c: NaN kept, -0 to +0 */
    }
  else
    for (int64_t e = 0; e < n; e++) d[e] = (x[e] - m) * s + b;
}

/* bn_run in place over a pixel's row of n channels, each with its own m, s, b (the same float operations). */
RLX_VEC_CLONES static void bn_chans(float *restrict d, int64_t n, const float *m, const float *s, const float *b,
                                    bool relu) {
  if (relu)
    for (int64_t e = 0; e < n; e++) {
      float v = (d[e] - m[e]) * s[e] + b[e];
      d[e] = v > 0.0f || v != v ? v : 0.0f;
    }
  else
    for (int64_t e = 0; e < n; e++) d[e] = (d[e] - m[e]) * s[e] + b[e];
}

/* Channel-major: B rows [k0, k0 + kc) (channels), columns [j0, j0 + cols) (pixels). */
static void pack_bn_b(const void *ctx, int64_t k0, int64_t kc, int64_t j0, int64_t cols, int nr, float *dst) {
  const bn_src *s = ctx;
  if (s->avx512) { /* nr <= 32: an AVX-512 microkernel's panel (gemm.h) */
    rlx_f32_pack_bn__avx512(s->x + k0 * s->isp + j0, s->isp, kc, (int)cols, nr, s->m + k0, s->s + k0, s->b + k0,
                            s->relu, dst);
    return;
  }
  for (int64_t k = k0; k < k0 + kc; k++, dst += nr) {
    bn_run(dst, s->x + k * s->isp + j0, cols, s->m[k], s->s[k], s->b[k], s->relu);
    zero_run(dst + cols, nr - cols);
  }
}

/* Pixel-major: A rows [i0, i0 + rows) (pixels), columns [k0, k0 + kc) (channels): dst[k][pixel]. */
static void pack_bn_a(const void *ctx, int64_t i0, int rows, int64_t k0, int64_t kc, int mr, float *dst) {
  pack_bn_b(ctx, k0, kc, i0, rows, mr, dst);
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

/* The channel-major product's microkernel: the panel width that pads the image's pixels least (the weights,
 * its A, are packed the same for every width). squeezenet's classifier, 1000 x 169 x 512 at one thread: 16-wide
 * panels (176 columns) 1.57 ms, 32-wide (192) 1.72 (docs/perf.md). */
static const rlx_sgemm_isa *cm_isa(const conv_geo *c) { return rlx_sgemm_isa_for(c->OH * c->OW); }

rlx_status rlx_conv_gemm_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  conv_geo c;
  if (!rlx_cpu_conv_geo(n, in, out, &c)) return rlx_errorf(RLX_ERR_INTERNAL, "conv geometry");
  int64_t Cg = c.C / c.G, Og = c.O / c.G, Kd = Cg * c.kh * c.kw, osp = c.OH * c.OW, isp = c.H * c.W;
  const float *wp = x->packed;
  size_t wgroup = rlx_sgemm_packed_a_size(Og, Kd) / sizeof(float);
  const rlx_epilogue *ep = &n->p.conv.ep;
  bool need_ep = in[2].data || (n->n_in > 3 && in[3].data) || ep->has_act;
  bool bn = n->n_in > 7 && in[7].data; /* fuse_preact's: a 1x1 conv of one group (rlx_cpu_try_conv) */
  bn_src bs = {.isp = isp};
  char *scratch = x->scratch;
  if (bn) bn_table(n, in, c.C, (float *)scratch, &bs), scratch += rlx_conv_bn_table_bytes(c.C);
  im2col_src src = {.c = &c};
  phase_job pj = {.c = &c};
  planes_setup(&c, false, scratch, &pj, &src); /* the planes go first in the scratch, the sgemm's after them */
  src.avx512 = src.phases && rlx_conv_planes_avx512();
  char *gemm_scratch = scratch + phases_bytes(&c, false);
  for (int64_t b = 0; b < c.N; b++)
    for (int64_t gi = 0; gi < c.G; gi++) {
      const float *xg = (const float *)in[0].data + (b * c.C + gi * Cg) * isp;
      float *C = (float *)out[0].data + (b * c.O + gi * Og) * osp;
      src.x = xg;
      if (src.phases) {
        pj.x = xg;
        rlx_parallel_for(Cg * pj.planes >= 8 ? x->tp : NULL, Cg, phase_task, &pj);
      }
      conv_ep e = {ep, in[2].data ? (const float *)in[2].data + gi * Og : NULL,
                   n->n_in > 3 && in[3].data ? (const float *)in[3].data + (b * c.O + gi * Og) * osp : NULL, C};
      rlx_sgemm_args a = {.isa = cm_isa(&c), .M = Og, .N = osp, .K = Kd, .a_packed = wp + gi * wgroup, .C = C,
                          .ldc = osp, .by_cols = true};
      /* bias, residual and a simple activation in the microkernel's registers; others after each block */
      rlx_sgemm_post post;
      if (need_ep && rlx_cpu_sgemm_post(ep, &post)) {
        post.row_bias = e.bias, post.res = e.residual, post.ldr = osp;
        a.post = &post;
      } else if (need_ep) {
        a.epilogue = conv_epilogue, a.epilogue_ctx = &e;
      }
      bs.x = xg;
      if (bn) a.pack_b = pack_bn_b, a.pack_ctx = &bs;
      else if (rlx_conv_direct(&c)) a.B = xg, a.ldb = osp;
      else a.pack_b = pack_im2col, a.pack_ctx = &src;
      rlx_sgemm_ex(x->tp, &a, gemm_scratch);
    }
  return RLX_OK;
}

/* ---- pixel-major: a row per output pixel, a column per output channel ----
 *
 *   C [OH*OW, Og] = cols^T [OH*OW, Cg*kh*kw] @ W_g^T
 *
 * The same product transposed, for small images: OH*OW (49 on a 7x7
 * layer) pads to the 12-row blocks (52) where as columns it pads to the
 * 32-wide panels (64), and the output channels fill whole panels. The A
 * panels are the im2col panels (pack_im2col_part writes dst[k][pixel], the
 * layout of an A panel as of a B one); the weights are B, packed at compile
 * time. C lands in scratch and the epilogue writes each finished block into
 * the NCHW output transposed, with bias, residual and activation. */

typedef struct pix_ep {
  const rlx_epilogue *ep;
  const float *bias;     /* the group's first channel, or NULL */
  const float *residual; /* NCHW like y, or NULL */
  float *y;              /* the image's group's first output channel */
  int64_t osp;
} pix_ep;

RLX_VEC_CLONES static void pix_epilogue(const void *ctx, float *c, int64_t ldc, int64_t i0, int64_t j0, int m, int n) {
  const pix_ep *e = ctx;
  int64_t off = j0 * e->osp + i0;
  if (e->residual) rlx_f32_transpose(e->residual + off, e->osp, n, m, c, ldc, true);
  for (int r = 0; r < m; r++) {
    float *row = c + r * ldc;
    if (e->bias)
      for (int k = 0; k < n; k++) row[k] += e->bias[j0 + k];
    if (e->ep->has_act) rlx_cpu_act_f32(&e->ep->act, row, n);
  }
  rlx_f32_transpose(c, ldc, m, n, e->y + off, e->osp, false);
}

typedef struct pix_src {
  im2col_src s; /* s.phases: the phase planes, or the image of a 1x1 stride-1 conv (s.d its one plane) */
  bool avx512;  /* rlx_f32_pack_taps__avx512 over the planes, else pack_im2col_part */
} pix_src;

/* A panel of rows [i0, i0 + rows) (output pixels) over K columns [k0, k0 + kc): the im2col panel, as an A panel
 * is laid out like a B one (dst[k][pixel]); with AVX-512 a few masked loads per k (its image-row runs). */
static void pack_pix_a(const void *ctx, int64_t i0, int rows, int64_t k0, int64_t kc, int mr, float *dst) {
  const pix_src *p = ctx;
  if (!p->avx512) {
    pack_im2col_part(&p->s, k0, kc, i0, rows, mr, dst);
    return;
  }
  const conv_geo *c = p->s.c;
  int64_t khw = c->kh * c->kw;
  int32_t poff[16];
  for (int r = 0; r < rows; r++) poff[r] = (int32_t)((i0 + r) / c->OW * p->s.d->QW + (i0 + r) % c->OW);
  rlx_f32_pack_taps__avx512(p->s.phases + k0 / khw * p->s.chan_floats, p->s.chan_floats, p->s.tap_off, khw, k0 % khw,
                            kc, poff, rows, mr, dst);
}

static const rlx_sgemm_isa *pix_isa(const conv_geo *c) { return rlx_sgemm_isa_for(c->O / c->G); }
/* C [OH*OW, Og]; then, for a 1x1 stride-1 conv on an image of at most RLX_SGEMM_SKINNY_M pixels (a
 * squeeze-excite block's 1x1 image), A itself [OH*OW, Cg], transposed from the image so the sgemm's skinny
 * kernel streams the weights once for all rows instead of padding them to a block. */
static bool pix_skinny(const conv_geo *c) { return rlx_conv_direct(c) && c->OH * c->OW <= RLX_SGEMM_SKINNY_M; }
static size_t pix_c_bytes(const conv_geo *c) {
  size_t a = pix_skinny(c) ? (size_t)(c->OH * c->OW * (c->C / c->G)) : 0;
  return ((size_t)(c->OH * c->OW * (c->O / c->G)) * sizeof(float) + 63) / 64 * 64 + (a * sizeof(float) + 63) / 64 * 64;
}

/* The pixel-major product's sgemm scratch: A (the im2col rows) packed once where it passes the shared block. */
static size_t pix_sgemm_scratch(const conv_geo *c, int threads) {
  return rlx_sgemm_scratch_for(threads, c->OH * c->OW, (c->C / c->G) * c->kh * c->kw);
}

rlx_status rlx_conv_pix_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  conv_geo c;
  if (!rlx_cpu_conv_geo(n, in, out, &c)) return rlx_errorf(RLX_ERR_INTERNAL, "conv geometry");
  int64_t Cg = c.C / c.G, Og = c.O / c.G, Kd = Cg * c.kh * c.kw, osp = c.OH * c.OW, isp = c.H * c.W;
  const rlx_sgemm_isa *isa = pix_isa(&c);
  size_t wgroup = rlx_sgemm_packed_size_for(isa, Og, Kd) / sizeof(float);
  pix_src ps = {.s = {.c = &c}};
  im2col_src *src = &ps.s;
  phase_job pj = {.c = &c};
  bool bn = n->n_in > 7 && in[7].data; /* fuse_preact's: a 1x1 conv of one group (rlx_cpu_try_conv) */
  bn_src bs = {.isp = isp};
  char *scratch = x->scratch;
  if (bn) bn_table(n, in, c.C, (float *)scratch, &bs), scratch += rlx_conv_bn_table_bytes(c.C);
  dw_geo whole = {1, c.H, c.W, 0}; /* a 1x1 stride-1 conv: the image is its one plane */
  bool planes = planes_setup(&c, true, scratch, &pj, src);
  if (!planes && rlx_conv_direct(&c)) src->d = &whole, src->chan_floats = isp; /* tap_off[0] = 0 */
  ps.avx512 = src->d && rlx_sgemm_isa_avx512(isa);
  float *cbuf = (float *)(scratch + phases_bytes(&c, true));
  char *gemm_scratch = (char *)cbuf + pix_c_bytes(&c);
  for (int64_t b = 0; b < c.N; b++)
    for (int64_t gi = 0; gi < c.G; gi++) {
      const float *xg = (const float *)in[0].data + (b * c.C + gi * Cg) * isp;
      src->x = xg;
      if (planes) {
        pj.x = xg;
        rlx_parallel_for(Cg * pj.planes >= 8 ? x->tp : NULL, Cg, phase_task, &pj);
      } else if (src->d) {
        src->phases = xg;
      }
      pix_ep e = {&n->p.conv.ep, in[2].data ? (const float *)in[2].data + gi * Og : NULL,
                  n->n_in > 3 && in[3].data ? (const float *)in[3].data + (b * c.O + gi * Og) * osp : NULL,
                  (float *)out[0].data + (b * c.O + gi * Og) * osp, osp};
      rlx_sgemm_args a = {.isa = isa, .M = osp, .N = Og, .K = Kd, .pack_a = pack_pix_a, .pack_a_ctx = &ps,
                          .b_packed = (const float *)x->packed + gi * wgroup, .C = cbuf, .ldc = Og,
                          .epilogue = pix_epilogue, .epilogue_ctx = &e,
                          .scratch_bytes = pix_sgemm_scratch(&c, rlx_threadpool_size(x->tp))};
      bs.x = xg;
      if (bn) a.pack_a = pack_bn_a, a.pack_a_ctx = &bs;
      if (pix_skinny(&c)) {
        float *at = cbuf + (osp * Og + 15) / 16 * 16; /* pix_c_bytes' second part */
        rlx_f32_transpose(xg, osp, Cg, osp, at, Cg, false);
        if (bn) /* each pixel's row normalized in place */
          for (int64_t p = 0; p < osp; p++) bn_chans(at + p * Cg, Cg, bs.m, bs.s, bs.b, bs.relu);
        a.pack_a = NULL, a.A = at, a.lda = Cg;
      }
      rlx_sgemm_ex(x->tp, &a, gemm_scratch);
    }
  return RLX_OK;
}


/* The direct sgemm path's weights: per group a row-major [Og, Kd], packed as
 * the sgemm's A, at dst (gemm_packed_bytes). */
size_t rlx_conv_gemm_packed_bytes(const conv_geo *c) {
  return rlx_sgemm_packed_a_size(c->O / c->G, (c->C / c->G) * c->kh * c->kw) * (size_t)c->G;
}
void rlx_conv_gemm_pack(const conv_geo *c, const float *w, void *dst) {
  int64_t Og = c->O / c->G, Kd = (c->C / c->G) * c->kh * c->kw;
  size_t wgroup = rlx_sgemm_packed_a_size(Og, Kd);
  for (int64_t gi = 0; gi < c->G; gi++) /* weights [O, Cg, kh, kw] */
    rlx_sgemm_pack_a(Og, Kd, w + gi * Og * Kd, Kd, (float *)((char *)dst + wgroup * (size_t)gi));
}
size_t rlx_conv_pix_packed_bytes(const conv_geo *c) {
  return rlx_sgemm_packed_size_for(pix_isa(c), c->O / c->G, (c->C / c->G) * c->kh * c->kw) * (size_t)c->G;
}
void rlx_conv_pix_pack(const conv_geo *c, const float *w, void *dst) {
  int64_t Og = c->O / c->G, Kd = (c->C / c->G) * c->kh * c->kw;
  size_t wgroup = rlx_sgemm_packed_size_for(pix_isa(c), Og, Kd);
  for (int64_t gi = 0; gi < c->G; gi++)
    rlx_sgemm_pack_b_for(pix_isa(c), Og, Kd, w + gi * Og * Kd, Kd, true, (float *)((char *)dst + wgroup * (size_t)gi));
}
/* Rows a product of M rows costs in the microkernel: whole MR-row blocks, but the AVX-512 12-row kernel
 * runs a last block of up to 4 or 8 rows on that many (gemm_avx512.c, ukernel_rows). */
static int64_t rows_cost(int64_t M, const rlx_sgemm_isa *isa) {
  if (rlx_sgemm_isa_avx512(isa)) return M / 12 * 12 + (M % 12 + 3) / 4 * 4;
  return (M + isa->mr - 1) / isa->mr * isa->mr;
}
/* Whether the pixel-major product pads enough less to pay for its
 * transposed epilogue and its A rows (RLX_CONV_PIX=0 / 1 forces it off /
 * on). The padded tiles of the two products (the 12x16 kernel at ~0.87 of
 * the 12x32's rate) against measured bars (bench/bench_conv, resnet50 in
 * the model; docs/perf.md, "Pixel-major convolutions"): a 1x1 conv gains at
 * 7x7 (52 rows against 64 columns, 0.81) and 14x14 (196 against 224, 0.875:
 * 3-9% in the model) and loses at 28x28 (0.98) and 56x56 (1.0), where its A
 * rows, packed from NCHW, cost more than the other way's B panels; a conv
 * packed from phase planes both ways gains from the same ratios. */
#define PIX_BAR_DIRECT 0.90
#define PIX_BAR_IM2COL 0.92
/* The pixel-major product's own passes (A's rows transposed from NCHW, C transposed back in its epilogue)
 * cost about PIX_K0 more steps of K per output element, which the padding ratio above weighs only at
 * resnet's larger K. bench/bench_conv, 1 and 2 threads: squeezenet's 13x13 1x1 convs (169 rows against
 * 192 columns, 0.896 of the padding) ran pixel-major 23-28% slower than channel-major at K = 64 (64 ->
 * 256) and tied at K = 512. The layers it turns channel-major, summed, minima of interleaved runs of the
 * models (docs/perf.md): squeezenet's ten at 13x13 1.57 -> 1.31 ms (two threads) and 1.64 -> 1.46 (one),
 * resnet50's six 256 -> 1024 at 14x14 3.15 -> 2.97 (two), googlenet's eighteen 2.66 -> 2.37 (two; one a
 * tie), densenet121's six at K = 256-416 0.64 -> 0.56 (two) and 0.83 -> 0.78 (one) and its four at K =
 * 448-544 a tie, resnet18's one. */
#define PIX_K0 16.0
/* On one thread, a 1x1 conv whose weights pass the host's pix_one_thread_w bytes (cpu/tuning.c) stays
 * channel-major whatever the padding. On the Xeon host, 512 KiB: resnet50 at one thread, both ways per node
 * (docs/perf.md), the pixel-major 1x1s with 1-4 MiB of weights ran 1.06-1.2x the channel-major time (256 ->
 * 1024 at 14x14, 512 -> 2048 at 7x7, the strided downsamples) or tied, where densenet's, 128 output channels
 * from 256-1024 (128-512 KiB), won or tied. At two threads the pixel-major way won on all of them (0.76-1.0x
 * but one): its rows split evenly where 196 or 49 columns do not. The 3x3s keep the padding's choice. */
bool rlx_conv_pix_pick(const conv_geo *c, int threads) {
  const char *force = getenv("RLX_CONV_PIX");
  if (force) return strcmp(force, "0") != 0;
  int64_t Og = c->O / c->G, osp = c->OH * c->OW;
  size_t wbytes = (size_t)Og * (size_t)(c->C / c->G) * sizeof(float);
  if (threads <= 1 && c->kh * c->kw == 1 && wbytes > rlx_cpu_tuning_get()->pix_one_thread_w) return false;
  /* the bars were measured against the channel-major way on the widest panels, and stay so: with its own
   * width (cm_isa) a 14x14 image's 1024 -> 256 at two threads stayed channel-major, 0.62 ms against the
   * pixel-major 0.55 */
  const rlx_sgemm_isa *pi = pix_isa(c), *ci = rlx_sgemm_active();
  double std = (double)rows_cost(Og, ci) * (double)((osp + ci->nr - 1) / ci->nr * ci->nr);
  double pix = (double)rows_cost(osp, pi) * (double)((Og + pi->nr - 1) / pi->nr * pi->nr) / (pi->nr < ci->nr ? 0.87 : 1.0);
  double Kd = (double)((c->C / c->G) * c->kh * c->kw);
  return pix * (1.0 + PIX_K0 / Kd) < (rlx_conv_direct(c) ? PIX_BAR_DIRECT : PIX_BAR_IM2COL) * std;
}
const char *rlx_conv_gemm_name(const conv_geo *c) {
  dw_geo pd;
  return rlx_conv_direct(c)                   ? "f32_conv_1x1_sgemm"
         : c->sh > 1 && phased(c, &pd, false) ? "f32_conv_phased_sgemm" /* stride phases; stride 1: one plane */
                                              : "f32_conv_implicit_sgemm";
}

size_t rlx_conv_gemm_scratch(const conv_geo *c, int threads) { return phases_bytes(c, false) + rlx_sgemm_scratch(threads); }

size_t rlx_conv_pix_scratch(const conv_geo *c, int threads) {
  return phases_bytes(c, true) + pix_c_bytes(c) + pix_sgemm_scratch(c, threads);
}
