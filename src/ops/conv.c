/*
 * conv.c — N-d convolution (1, 2 or 3 spatial dims) with stride, padding,
 * dilation and groups, and transposed convolution with output_padding.
 *
 *   x    [N, C, *S]
 *   w    [O, C/g, *k]           (transposed: [C, O/g, *k])
 *   bias [O]                    optional
 *   residual [N, O, *S']        optional (fusion): added after the bias,
 *                               then the fused activation (params ep)
 *   out  [N, O, *S']
 *   channels_last (2-D): x [N, H, W, C], residual and out [N, OH, OW, O]
 *   channels_last with x_nchw: x [N, C, H, W], residual and out [N, OH, OW, O]
 *   gate [N or 1, 1, 1, C]      optional (fuse_gate), channels-last and not
 *                               x_nchw only: the conv reads x * gate, each
 *                               product rounded to x's dtype
 *   pw [C, C0, 1, 1], pw_bias [C]   optional (fuse_expand), channels-last, not
 *                               x_nchw, no gate: x is [N, H, W, C0] and the
 *                               conv reads t = pre_ep(conv1x1(x, pw, pw_bias))
 *                               [N, H, W, C], the reference computing t whole
 *                               as the unfused 1x1 conv's reference does
 *   bn_mean, bn_var [C], bn_w [C]?, bn_b [C]?   optional (fuse_preact, inputs
 *                               7-10), channel-major, no gate or pw: the conv
 *                               reads t = pre_ep(batch_norm(x, ..., pre_eps)),
 *                               the reference computing t whole as the
 *                               unfused batch norm's reference does
 *
 * Reference kernel: im2col (or col2im for transposed) around the reference
 * GEMM, per batch item and group. Spatial dims are padded to 3 internally.
 */
#include "ops/gemm_ref.h"
#include "ops/ops_util.h"

/* Geometry padded to 3 spatial dims (leading dims of size 1). */
typedef struct conv_geom {
  int64_t N, C, O, G;
  int64_t in[3], k[3], out[3], s[3], p[3], d[3];
} conv_geom;

static void geom(const rlx_conv_params *p, const rlx_shape *x, const rlx_shape *w,
                 const rlx_shape *y, conv_geom *c) {
  int off = 3 - p->nd;
  c->N = x->dims[0];
  c->C = x->dims[1];
  c->O = y->dims[1];
  c->G = p->groups;
  for (int i = 0; i < 3; i++) {
    int j = i - off;
    bool real = j >= 0;
    c->in[i] = real ? x->dims[2 + j] : 1;
    c->k[i] = real ? w->dims[2 + j] : 1;
    c->out[i] = real ? y->dims[2 + j] : 1;
    c->s[i] = real ? p->stride[j] : 1;
    c->p[i] = real ? p->pad[j] : 0;
    c->d[i] = real ? p->dilation[j] : 1;
  }
}

/* [N, H, W, C] <-> [N, C, H, W] (channels-last convs; other ranks unchanged). */
static rlx_shape nchw_of(const rlx_shape *s) {
  rlx_shape r = *s;
  if (s->rank == 4) r.dims[1] = s->dims[3], r.dims[2] = s->dims[1], r.dims[3] = s->dims[2];
  return r;
}
static rlx_shape nhwc_of(const rlx_shape *s) {
  rlx_shape r = *s;
  if (s->rank == 4) r.dims[1] = s->dims[2], r.dims[2] = s->dims[3], r.dims[3] = s->dims[1];
  return r;
}

static rlx_status conv_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_conv_params *p = &n->p.conv;
  const rlx_value *x = rlx_in(g, n, 0), *w = rlx_in(g, n, 1), *b = rlx_in(g, n, 2);
  if (p->nd < 1 || p->nd > 3) RLX_INFER_FAIL("conv has %d spatial dims (1..3 supported)", p->nd);
  if (p->channels_last && (p->nd != 2 || p->transposed))
    RLX_INFER_FAIL("channels-last conv is 2-D and not transposed");
  if (p->x_nchw && !p->channels_last) RLX_INFER_FAIL("conv x_nchw is a channels-last conv's");
  const rlx_value *pw = rlx_in(g, n, 5), *pwb = rlx_in(g, n, 6);
  rlx_shape xin = x->shape; /* the conv's input: with pw, the pointwise conv's output */
  if (pwb && !pw) RLX_INFER_FAIL("conv has a pointwise bias (input 6) but no pointwise weight (input 5)");
  if (pw) {
    if (!p->channels_last || p->x_nchw || p->transposed || rlx_in(g, n, 4))
      RLX_INFER_FAIL("a conv's pointwise input is for a channels-last conv reading x as [N, H, W, C], without a gate");
    if (x->shape.rank != 4 || pw->dtype != x->dtype || pw->shape.rank != 4 || pw->shape.dims[1] != x->shape.dims[3] ||
        pw->shape.dims[2] != 1 || pw->shape.dims[3] != 1 || rlx_dim_is_sym(pw->shape.dims[0]))
      RLX_INFER_FAIL("conv pointwise weight must be [C, %lld, 1, 1] %s for x [N, H, W, %lld]",
                     (long long)(x->shape.rank == 4 ? x->shape.dims[3] : -1), rlx_dtype_name(x->dtype),
                     (long long)(x->shape.rank == 4 ? x->shape.dims[3] : -1));
    if (pwb && (pwb->dtype != x->dtype || pwb->shape.rank != 1 || pwb->shape.dims[0] != pw->shape.dims[0]))
      RLX_INFER_FAIL("conv pointwise bias must be [%lld] %s", (long long)pw->shape.dims[0], rlx_dtype_name(x->dtype));
    xin.dims[3] = pw->shape.dims[0];
    rlx_status st = rlx_epilogue_infer(NULL, &p->pre_ep, &xin, x->dtype);
    if (st) return st;
  }
  const rlx_value *bn[4] = {rlx_in(g, n, 7), rlx_in(g, n, 8), rlx_in(g, n, 9), rlx_in(g, n, 10)};
  bool has_bn = bn[0] || bn[1] || bn[2] || bn[3];
  if (has_bn) {
    if (!bn[0] || !bn[1]) RLX_INFER_FAIL("a conv's batch norm (inputs 7-10) needs its running mean and variance (7, 8)");
    if (p->channels_last || p->transposed || pw || rlx_in(g, n, 4))
      RLX_INFER_FAIL("a conv's batch norm input is for a channel-major conv without a gate or pointwise input");
    static const char *names[] = {"running mean", "running variance", "weight", "bias"};
    int64_t C = x->shape.rank >= 2 ? x->shape.dims[1] : -1;
    for (int k = 0; k < 4; k++)
      if (bn[k] && (bn[k]->dtype != x->dtype || bn[k]->shape.rank != 1 || bn[k]->shape.dims[0] != C))
        RLX_INFER_FAIL("conv batch norm %s (input %d) must be [%lld] %s", names[k], 7 + k, (long long)C,
                       rlx_dtype_name(x->dtype));
    if (!(p->pre_eps >= 0)) RLX_INFER_FAIL("conv batch norm eps %g must be 0 or more", p->pre_eps);
    rlx_status st = rlx_epilogue_infer(NULL, &p->pre_ep, &x->shape, x->dtype);
    if (st) return st;
  }
  if (p->pre_ep.has_act && !pw && !has_bn)
    RLX_INFER_FAIL("conv has a pre-activation but no pointwise weight (input 5) or batch norm (inputs 7-10)");
  rlx_shape xs = p->channels_last && !p->x_nchw ? nchw_of(&xin) : x->shape; /* the input as [N, C, *S] */
  if (xs.rank != p->nd + 2 || w->shape.rank != p->nd + 2)
    RLX_INFER_FAIL("conv%dd needs rank-%d input and weight, got ranks %d and %d", p->nd, p->nd + 2,
                   xs.rank, w->shape.rank);
  if (x->dtype != w->dtype || (x->dtype != RLX_DTYPE_F32 && x->dtype != RLX_DTYPE_F64))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "conv computes in f32 or f64, got %s and %s",
                      rlx_dtype_name(x->dtype), rlx_dtype_name(w->dtype));
  int64_t C = xs.dims[1], G = p->groups;
  if (G < 1 || C % G) RLX_INFER_FAIL("conv groups=%lld do not divide %lld input channels",
                                     (long long)G, (long long)C);
  int64_t O;
  if (!p->transposed) {
    O = w->shape.dims[0];
    if (O % G || w->shape.dims[1] * G != C)
      RLX_INFER_FAIL("conv weight %lldx%lld does not fit %lld channels in %lld groups",
                     (long long)w->shape.dims[0], (long long)w->shape.dims[1], (long long)C,
                     (long long)G);
  } else {
    if (w->shape.dims[0] != C) RLX_INFER_FAIL("transposed conv weight has %lld input channels, "
                                              "input has %lld", (long long)w->shape.dims[0],
                                              (long long)C);
    O = w->shape.dims[1] * G;
  }
  os[0].rank = xs.rank;
  os[0].dims[0] = xs.dims[0];
  os[0].dims[1] = O;
  if (rlx_dim_is_sym(C)) RLX_INFER_FAIL("conv needs a static channel count (axis 1 is symbolic)");
  for (int i = 0; i < p->nd; i++) {
    int64_t in = xs.dims[2 + i], k = w->shape.dims[2 + i];
    if (rlx_dim_is_sym(in)) { /* a symbolic size: the same formula on dims (bounds checked per binding) */
      if (!rlx_param_ok(p->stride[i], 1) || !rlx_param_ok(p->dilation[i], 1) || !rlx_param_ok(p->pad[i], 0) ||
          !rlx_param_ok(p->out_pad[i], 0))
        RLX_INFER_FAIL("conv axis %d: parameters out of range", i);
      rlx_symtab *t = rlx_graph_syms(g);
      int64_t span = p->dilation[i] * (k - 1), s = p->stride[i], pd = p->pad[i];
      rlx_dim o;
      rlx_status st;
      if (!p->transposed) {
        st = rlx_dim_add(t, in, 2 * pd - span - 1, &o);
        if (!st) st = rlx_dim_floordiv(t, o, s, &o);
        if (!st) st = rlx_dim_add(t, o, 1, &o);
      } else {
        st = rlx_dim_add(t, in, -1, &o);
        if (!st) st = rlx_dim_mul(t, o, s, &o);
        if (!st) st = rlx_dim_add(t, o, span - 2 * pd + p->out_pad[i] + 1, &o);
      }
      if (st) return st;
      os[0].dims[2 + i] = o;
      continue;
    }
    int64_t s = p->stride[i], pd = p->pad[i], d = p->dilation[i], o;
    if (!rlx_param_ok(s, 1) || !rlx_param_ok(d, 1) || !rlx_param_ok(pd, 0) ||
        !rlx_param_ok(p->out_pad[i], 0))
      RLX_INFER_FAIL("conv axis %d: stride %lld, dilation %lld, padding %lld, output padding %lld (stride and "
                     "dilation must be in [1, 2^31], paddings in [0, 2^31])", i, (long long)s, (long long)d,
                     (long long)pd, (long long)p->out_pad[i]);
    bool ok = true;
    int64_t span = rlx_mul64(d, k - 1, &ok), pad2 = rlx_mul64(2, pd, &ok);
    if (!p->transposed) { /* floor division: a window wider than the padded input gives 0 */
      int64_t num = rlx_add64(rlx_add64(in, pad2, &ok), -span - 1, &ok);
      o = num < 0 ? 0 : num / s + 1;
    } else {
      o = rlx_add64(rlx_mul64(in - 1, s, &ok), -pad2, &ok);
      o = rlx_add64(rlx_add64(o, span, &ok), rlx_add64(p->out_pad[i], 1, &ok), &ok);
    }
    if (!ok) RLX_INFER_FAIL("conv axis %d: parameters overflow", i);
    if (o < 1) RLX_INFER_FAIL("conv axis %d: output size %lld < 1", i, (long long)o);
    os[0].dims[2 + i] = o;
  }
  if (b && (b->shape.rank != 1 || b->shape.dims[0] != O || b->dtype != x->dtype))
    RLX_INFER_FAIL("conv bias must be [%lld] %s", (long long)O, rlx_dtype_name(x->dtype));
  const rlx_value *gt = rlx_in(g, n, 4);
  if (gt && (!p->channels_last || p->x_nchw || p->transposed))
    RLX_INFER_FAIL("a conv's gate input is for a channels-last conv reading x as [N, H, W, C]");
  if (gt && (gt->dtype != x->dtype || gt->shape.rank != 4 || gt->shape.dims[1] != 1 || gt->shape.dims[2] != 1 ||
             gt->shape.dims[3] != C || (gt->shape.dims[0] != 1 && gt->shape.dims[0] != xs.dims[0])))
    RLX_INFER_FAIL("conv gate must be [%lld or 1, 1, 1, %lld] %s", (long long)xs.dims[0], (long long)C,
                   rlx_dtype_name(x->dtype));
  od[0] = x->dtype;
  if (p->channels_last) os[0] = nhwc_of(&os[0]);
  return rlx_epilogue_infer(rlx_in(g, n, 3), &p->ep, &os[0], od[0]);
}

/* The reference's scratch for a conv with params p on x, w, y of these
 * shapes (as the node has them: channels-last ones [N, H, W, C]). */
static size_t scratch_of(const rlx_conv_params *p, const rlx_shape *x, const rlx_shape *w, const rlx_shape *y,
                         int64_t es) {
  conv_geom c;
  bool cl = p->channels_last;
  rlx_shape xs = cl && !p->x_nchw ? nchw_of(x) : *x, ys = cl ? nchw_of(y) : *y;
  geom(p, &xs, w, &ys, &c);
  int64_t kp = c.k[0] * c.k[1] * c.k[2];
  /* channels-last: the input and the output in [N, C, *S] first */
  size_t planes = cl ? (size_t)((rlx_shape_numel(&xs) + rlx_shape_numel(&ys)) * es) : 0;
  if (!p->transposed) return planes + (size_t)((c.C / c.G) * kp * c.out[0] * c.out[1] * c.out[2] * es);
  int64_t og = c.O / c.G, cg = c.C / c.G, isp = c.in[0] * c.in[1] * c.in[2];
  return (size_t)((og * kp * cg + og * kp * isp) * es);
}

/* The pointwise conv that fuse_expand folded into a conv (inputs 5, 6): its params and t's shape. */
static rlx_conv_params pre_params(const rlx_conv_params *p) {
  return (rlx_conv_params){.nd = 2, .stride = {1, 1}, .dilation = {1, 1}, .groups = 1, .channels_last = true,
                           .ep = p->pre_ep};
}
static rlx_shape pre_out_shape(const rlx_shape *x, const rlx_shape *pw) {
  rlx_shape t = *x;
  t.dims[3] = pw->dims[0];
  return t;
}

static size_t conv_scratch(const rlx_graph *g, const rlx_node *n) {
  const rlx_value *x = rlx_in(g, n, 0), *w = rlx_in(g, n, 1), *y = &g->values[n->out[0]], *pw = rlx_in(g, n, 5);
  int64_t es = (int64_t)rlx_dtype_size(x->dtype);
  if (rlx_in(g, n, 7)) /* t whole, then the conv's own */
    return (size_t)(rlx_shape_numel(&x->shape) * es) + scratch_of(&n->p.conv, &x->shape, &w->shape, &y->shape, es);
  if (!pw) return scratch_of(&n->p.conv, &x->shape, &w->shape, &y->shape, es);
  /* t whole, then the larger of the two convs' scratch */
  rlx_conv_params pp = pre_params(&n->p.conv);
  rlx_shape ts = pre_out_shape(&x->shape, &pw->shape);
  size_t a = scratch_of(&pp, &x->shape, &pw->shape, &ts, es), b = scratch_of(&n->p.conv, &ts, &w->shape, &y->shape, es);
  return (size_t)(rlx_shape_numel(&ts) * es) + RLX_MAX(a, b);
}

/* dst[n][b][a] = src[n][a][b] for n < N (a, b the two inner blocks). */
static void swap_inner(void *dst, const void *src, int64_t N, int64_t A, int64_t B, bool f64) {
  for (int64_t i = 0; i < N; i++)
    for (int64_t a = 0; a < A; a++)
      for (int64_t b = 0; b < B; b++) {
        int64_t si = (i * A + a) * B + b, di = (i * B + b) * A + a;
        if (f64) ((double *)dst)[di] = ((const double *)src)[si];
        else ((float *)dst)[di] = ((const float *)src)[si];
      }
}

static inline void copy_el(void *dst, int64_t di, const void *src, int64_t si, bool f64) {
  if (f64) ((double *)dst)[di] = ((const double *)src)[si];
  else ((float *)dst)[di] = ((const float *)src)[si];
}

static inline void gemm(bool f64, int64_t M, int64_t N, int64_t K, const void *A, int64_t lda,
                        const void *B, int64_t ldb, void *C, int64_t ldc) {
  if (f64) rlx_gemm_ref_f64(M, N, K, A, lda, B, ldb, C, ldc);
  else rlx_gemm_ref_f32(M, N, K, A, lda, B, ldb, C, ldc);
}

/* col[(c,kd,kh,kw), (od,oh,ow)] for input channels [c0, c0+cg) of image x. */
static void im2col(const conv_geom *c, const void *x, int64_t c0, int64_t cg, void *col, bool f64) {
  int64_t osp = c->out[0] * c->out[1] * c->out[2], r = 0;
  for (int64_t ch = 0; ch < cg; ch++)
    for (int64_t kd = 0; kd < c->k[0]; kd++)
      for (int64_t kh = 0; kh < c->k[1]; kh++)
        for (int64_t kw = 0; kw < c->k[2]; kw++, r++) {
          int64_t j = 0;
          for (int64_t od = 0; od < c->out[0]; od++) {
            int64_t id = od * c->s[0] - c->p[0] + kd * c->d[0];
            for (int64_t oh = 0; oh < c->out[1]; oh++) {
              int64_t ih = oh * c->s[1] - c->p[1] + kh * c->d[1];
              for (int64_t ow = 0; ow < c->out[2]; ow++, j++) {
                int64_t iw = ow * c->s[2] - c->p[2] + kw * c->d[2];
                bool in = id >= 0 && id < c->in[0] && ih >= 0 && ih < c->in[1] && iw >= 0 &&
                          iw < c->in[2];
                if (in) copy_el(col, r * osp + j, x, (((c0 + ch) * c->in[0] + id) * c->in[1] + ih) *
                                                         c->in[2] + iw, f64);
                else if (f64) ((double *)col)[r * osp + j] = 0;
                else ((float *)col)[r * osp + j] = 0;
              }
            }
          }
        }
}

static void conv_forward(const conv_geom *c, const void *x, const void *w, void *y, void *col,
                         bool f64) {
  int64_t es = f64 ? 8 : 4, cg = c->C / c->G, og = c->O / c->G;
  int64_t kp = c->k[0] * c->k[1] * c->k[2], isp = c->in[0] * c->in[1] * c->in[2];
  int64_t osp = c->out[0] * c->out[1] * c->out[2];
  for (int64_t b = 0; b < c->N; b++)
    for (int64_t gi = 0; gi < c->G; gi++) {
      const char *xb = (const char *)x + es * (b * c->C * isp);
      im2col(c, xb, gi * cg, cg, col, f64);
      gemm(f64, og, osp, cg * kp, (const char *)w + es * (gi * og * cg * kp), cg * kp, col, osp,
           (char *)y + es * ((b * c->O + gi * og) * osp), osp);
    }
}

/* Transposed: cols[(o,kd,kh,kw), i] = sum_c w[c, o, k] x[c, i]; then each
 * column entry is added at output position i*s - p + k*d. */
static void conv_transposed(const conv_geom *c, const void *x, const void *w, void *y,
                            void *scratch, bool f64) {
  int64_t es = f64 ? 8 : 4, cg = c->C / c->G, og = c->O / c->G;
  int64_t kp = c->k[0] * c->k[1] * c->k[2], isp = c->in[0] * c->in[1] * c->in[2];
  int64_t osp = c->out[0] * c->out[1] * c->out[2], rows = og * kp;
  char *wt = scratch, *cols = (char *)scratch + es * rows * cg;
  memset(y, 0, (size_t)(es * c->N * c->O * osp));
  for (int64_t gi = 0; gi < c->G; gi++) {
    /* wt[rows, cg] = transpose of this group's w[cg, rows] */
    for (int64_t ch = 0; ch < cg; ch++)
      for (int64_t r = 0; r < rows; r++)
        copy_el(wt, r * cg + ch, w, (gi * cg + ch) * rows + r, f64);
    for (int64_t b = 0; b < c->N; b++) {
      gemm(f64, rows, isp, cg, wt, cg, (const char *)x + es * ((b * c->C + gi * cg) * isp), isp,
           cols, isp);
      for (int64_t r = 0; r < rows; r++) {
        int64_t o = r / kp, kk = r % kp;
        int64_t kd = kk / (c->k[1] * c->k[2]), kh = (kk / c->k[2]) % c->k[1], kw = kk % c->k[2];
        int64_t ybase = (b * c->O + gi * og + o) * osp;
        for (int64_t i = 0; i < isp; i++) {
          int64_t id = i / (c->in[1] * c->in[2]), ih = (i / c->in[2]) % c->in[1], iw = i % c->in[2];
          int64_t zd = id * c->s[0] - c->p[0] + kd * c->d[0];
          int64_t zh = ih * c->s[1] - c->p[1] + kh * c->d[1];
          int64_t zw = iw * c->s[2] - c->p[2] + kw * c->d[2];
          if (zd < 0 || zd >= c->out[0] || zh < 0 || zh >= c->out[1] || zw < 0 || zw >= c->out[2])
            continue;
          int64_t yi = ybase + (zd * c->out[1] + zh) * c->out[2] + zw;
          if (f64) ((double *)y)[yi] += ((double *)cols)[r * isp + i];
          else ((float *)y)[yi] += ((float *)cols)[r * isp + i];
        }
      }
    }
  }
}

/* x [N, C, HW] (the transposed copy) times the gate [N or 1, 1, 1, C], each
 * product rounded to the dtype as the binary mul's reference rounds it. */
static void gate_planes(void *x, const rlx_shape *xs, const rlx_tensor_view *gate, bool f64) {
  int64_t N = xs->dims[0], C = xs->dims[1], hw = xs->dims[2] * xs->dims[3];
  for (int64_t b = 0; b < N; b++)
    for (int64_t ch = 0; ch < C; ch++) {
      int64_t gi = (gate->dims[0] == 1 ? 0 : b) * C + ch, base = (b * C + ch) * hw;
      if (f64) {
        double s = ((const double *)gate->data)[gi], *p = (double *)x + base;
        for (int64_t i = 0; i < hw; i++) p[i] = p[i] * s;
      } else {
        float s = ((const float *)gate->data)[gi], *p = (float *)x + base;
        for (int64_t i = 0; i < hw; i++) p[i] = (float)((double)p[i] * (double)s);
      }
    }
}

static rlx_status conv_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, void *scratch);

/* A conv with a pointwise conv folded in (fuse_expand): t = the 1x1 conv's
 * reference on x into scratch, then this conv's on t — the unfused graph's
 * two reference runs, so the same bits. */
static rlx_status conv_ref_expand(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, void *scratch) {
  rlx_node pn = *n, dn = *n;
  pn.p.conv = pre_params(&n->p.conv), pn.n_in = 3;
  dn.p.conv.pre_ep = (rlx_epilogue){0}, dn.n_in = 4;
  rlx_tensor_view t = in[0], pin[11] = {in[0], in[5], in[6]}, din[11] = {0}; /* absent inputs zeroed */
  t.dims[3] = in[5].dims[0];
  t.data = scratch;
  void *rest = (char *)scratch + rlx_view_numel(&t) * (int64_t)rlx_dtype_size(t.dtype);
  rlx_status st = conv_ref(&pn, pin, &t, rest);
  if (st) return st;
  for (int k = 0; k < 5; k++) din[k] = in[k];
  din[0] = t, din[4] = (rlx_tensor_view){0};
  return conv_ref(&dn, din, out, rest);
}

/* A conv with a batch norm folded in (fuse_preact): t = the batch norm's
 * reference on x into scratch, then this conv's on t, as the unfused graph
 * runs them. */
static rlx_status conv_ref_bn(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, void *scratch) {
  rlx_node bn = {.op = RLX_OP_BATCH_NORM, .n_in = 5, .p.norm = {.eps = n->p.conv.pre_eps, .ep = n->p.conv.pre_ep}};
  rlx_node dn = *n;
  dn.p.conv.pre_ep = (rlx_epilogue){0}, dn.n_in = 4;
  rlx_tensor_view t = in[0], bin[5] = {in[0], in[7], in[8], in[9], in[10]}, din[11] = {0}; /* inputs 4-10 absent */
  t.data = scratch;
  rlx_status st = rlx_op_batch_norm.ref(&bn, bin, &t, NULL);
  if (st) return st;
  for (int k = 0; k < 4; k++) din[k] = in[k];
  din[0] = t;
  return conv_ref(&dn, din, out, (char *)scratch + rlx_view_numel(&t) * (int64_t)rlx_dtype_size(t.dtype));
}

static rlx_status conv_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                           void *scratch) {
  if (n->n_in > 5 && in[5].data) return conv_ref_expand(n, in, out, scratch);
  if (n->n_in > 7 && in[7].data) return conv_ref_bn(n, in, out, scratch);
  rlx_shape xs = rlx_view_shape(&in[0]), ws = rlx_view_shape(&in[1]), ys = rlx_view_shape(&out[0]);
  bool f64 = in[0].dtype == RLX_DTYPE_F64, cl = n->p.conv.channels_last;
  const void *x = in[0].data;
  void *y = out[0].data;
  if (cl) { /* the NCHW computation on transposed copies (scratch: x, y, then the columns) */
    bool x_nchw = n->p.conv.x_nchw;
    if (!x_nchw) xs = nchw_of(&xs);
    ys = nchw_of(&ys);
    int64_t es = f64 ? 8 : 4;
    void *xt = scratch;
    y = (char *)scratch + es * rlx_shape_numel(&xs);
    scratch = (char *)y + es * rlx_shape_numel(&ys);
    if (!x_nchw) {
      swap_inner(xt, x, xs.dims[0], xs.dims[2] * xs.dims[3], xs.dims[1], f64);
      if (n->n_in > 4 && in[4].data) gate_planes(xt, &xs, &in[4], f64);
      x = xt;
    }
  }
  conv_geom c;
  geom(&n->p.conv, &xs, &ws, &ys, &c);
  if (n->p.conv.transposed) conv_transposed(&c, x, in[1].data, y, scratch, f64);
  else conv_forward(&c, x, in[1].data, y, scratch, f64);
  if (in[2].data) {
    int64_t osp = c.out[0] * c.out[1] * c.out[2];
    for (int64_t b = 0; b < c.N; b++)
      for (int64_t o = 0; o < c.O; o++) {
        int64_t base = (b * c.O + o) * osp;
        if (f64) {
          double bv = ((const double *)in[2].data)[o];
          for (int64_t i = 0; i < osp; i++) ((double *)y)[base + i] += bv;
        } else {
          float bv = ((const float *)in[2].data)[o];
          for (int64_t i = 0; i < osp; i++) ((float *)y)[base + i] += bv;
        }
      }
  }
  if (cl) swap_inner(out[0].data, y, ys.dims[0], ys.dims[1], ys.dims[2] * ys.dims[3], f64);
  rlx_epilogue_apply(&n->p.conv.ep, &in[3], &out[0]);
  return RLX_OK;
}

static void conv_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_conv_params *p = &n->p.conv;
  rlx_bprintf(buf, cap, "%s%dd", p->transposed ? "transposed " : "", p->nd);
  rlx_bprint_ints(buf, cap, "stride", p->stride, p->nd);
  rlx_bprint_ints(buf, cap, "pad", p->pad, p->nd);
  rlx_bprint_ints(buf, cap, "dilation", p->dilation, p->nd);
  if (p->transposed) rlx_bprint_ints(buf, cap, "out_pad", p->out_pad, p->nd);
  if (p->groups != 1) rlx_bprintf(buf, cap, " groups=%lld", (long long)p->groups);
  if (p->channels_last) rlx_bprintf(buf, cap, p->x_nchw ? " channels_last x_nchw" : " channels_last");
  if (n->n_in > 4 && n->in[4] >= 0) rlx_bprintf(buf, cap, " +gate");
  if (n->n_in > 5 && n->in[5] >= 0) /* fuse_expand: the pointwise conv before, with its activation */
    rlx_bprintf(buf, cap, " +pointwise%s%s%s", p->pre_ep.has_act ? "(" : "",
                p->pre_ep.has_act ? rlx_unary_names[p->pre_ep.act.kind] : "", p->pre_ep.has_act ? ")" : "");
  if (n->n_in > 7 && n->in[7] >= 0) /* fuse_preact: the batch norm before, with its activation */
    rlx_bprintf(buf, cap, " +batch_norm(eps=%g%s%s)", p->pre_eps, p->pre_ep.has_act ? ", " : "",
                p->pre_ep.has_act ? rlx_unary_names[p->pre_ep.act.kind] : "");
  rlx_epilogue_print(&p->ep, n->n_in > 3 && n->in[3] >= 0, buf, cap);
}

const rlx_op_vtable rlx_op_conv = {.infer = conv_infer, .ref = conv_ref, .scratch = conv_scratch,
                                   .print = conv_print, .symbolic = true};
