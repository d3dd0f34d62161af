/*
 * movement.c — data rearrangements with no arithmetic:
 *
 *   flip        reverse the axes in a mask
 *   as_strided  out[i0..ik] = x_storage[offset + sum(i_d * stride_d)], reading
 *               x's contiguous storage (what torch.as_strided sees for a
 *               contiguous tensor); every read is bounds-checked at infer time
 *   col2im      nn.Fold: [N, C*kh*kw, L] -> [N, C, H, W], summing overlaps
 */
#include "ops/ops_util.h"

/* ---- flip ---- */

static rlx_status flip_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  if (n->p.flip.axes >> x->shape.rank) RLX_INFER_FAIL("flip axes 0x%x exceed rank %d", n->p.flip.axes, x->shape.rank);
  os[0] = x->shape;
  od[0] = x->dtype;
  return RLX_OK;
}

static rlx_status flip_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                           void *scratch) {
  (void)scratch;
  rlx_shape s = rlx_view_shape(&in[0]);
  int64_t st[RLX_MAX_RANK], N = rlx_shape_numel(&s);
  rlx_shape_strides(&s, st);
  size_t es = rlx_dtype_size(in[0].dtype);
  for (int64_t i = 0; i < N; i++) {
    int64_t rem = i, off = 0;
    for (int d = s.rank - 1; d >= 0; d--) {
      int64_t c = rem % s.dims[d];
      rem /= s.dims[d];
      if ((n->p.flip.axes >> d) & 1) c = s.dims[d] - 1 - c;
      off += c * st[d];
    }
    memcpy((char *)out[0].data + (size_t)i * es, (const char *)in[0].data + (size_t)off * es, es);
  }
  return RLX_OK;
}

static void flip_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "axes=0x%x", n->p.flip.axes);
}

const rlx_op_vtable rlx_op_flip = {.infer = flip_infer, .ref = flip_ref, .print = flip_print, .symbolic = true};

/* ---- as_strided ---- */

static bool as_strided_symbolic(const rlx_shape *x, const rlx_as_strided_params *p) {
  bool sym = rlx_shape_is_symbolic(x) || rlx_dim_is_sym(p->offset);
  for (int d = 0; d < p->size.rank; d++) sym |= rlx_dim_is_sym(p->size.dims[d]) || rlx_dim_is_sym(p->stride[d]);
  return sym;
}

static rlx_status as_strided_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  const rlx_as_strided_params *p = &n->p.as_strided;
  if (p->size.rank < 0 || p->size.rank > RLX_MAX_RANK) RLX_INFER_FAIL("as_strided rank %d", p->size.rank);
  if (as_strided_symbolic(&x->shape, p)) {
    /* symbolic sizes, strides or offset: each must be a valid dim (>= 0 at
     * some binding); the read range is checked at each binding, where the
     * instance re-infers the node at concrete shapes (docs/design.md, "Shapes") */
    bool ok = rlx_dim_valid(&g->syms, p->offset) && rlx_dim_may_le(g, 0, p->offset);
    for (int d = 0; d < p->size.rank; d++)
      ok &= rlx_dim_valid(&g->syms, p->size.dims[d]) && rlx_dim_valid(&g->syms, p->stride[d]) &&
            rlx_dim_may_le(g, 0, p->size.dims[d]) && rlx_dim_may_le(g, 0, p->stride[d]);
    if (!ok) RLX_INFER_FAIL("as_strided: a size, stride or offset is negative at every binding");
    os[0] = p->size;
    od[0] = x->dtype;
    return RLX_OK;
  }
  int64_t total = rlx_shape_numel(&x->shape);
  if (p->offset < 0) RLX_INFER_FAIL("as_strided storage offset %lld is negative", (long long)p->offset);
  bool empty = false, ok = true;
  for (int d = 0; d < p->size.rank; d++) {
    if (p->size.dims[d] < 0) RLX_INFER_FAIL("as_strided size is negative");
    empty |= p->size.dims[d] == 0;
  }
  /* Every read is offset + sum(i_d * stride_d) with 0 <= i_d < size_d: its
   * extremes are the sums of the negative and of the positive spans. Each
   * term and each partial sum is overflow-checked, so the kernel's offsets
   * (which it computes the same way, in the same order) cannot overflow. */
  int64_t lo = p->offset, hi = p->offset;
  for (int d = 0; !empty && d < p->size.rank; d++) {
    int64_t span = rlx_mul64(p->size.dims[d] - 1, p->stride[d], &ok);
    if (span < 0) lo = rlx_add64(lo, span, &ok);
    else hi = rlx_add64(hi, span, &ok);
  }
  if (!ok) RLX_INFER_FAIL("as_strided: size and stride overflow when combined");
  if (!empty && (lo < 0 || hi >= total))
    RLX_INFER_FAIL("as_strided reads elements [%lld, %lld] of a %lld-element tensor", (long long)lo,
                   (long long)hi, (long long)total);
  os[0] = p->size;
  od[0] = x->dtype;
  return RLX_OK;
}

static rlx_status as_strided_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                                 void *scratch) {
  (void)scratch;
  const rlx_as_strided_params *p = &n->p.as_strided;
  size_t es = rlx_dtype_size(in[0].dtype);
  int64_t N = rlx_shape_numel(&p->size);
  for (int64_t i = 0; i < N; i++) {
    int64_t off = p->offset + rlx_strided_offset(&p->size, p->stride, i);
    memcpy((char *)out[0].data + (size_t)i * es, (const char *)in[0].data + (size_t)off * es, es);
  }
  return RLX_OK;
}

static void as_strided_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_as_strided_params *p = &n->p.as_strided;
  rlx_bprint_ints(buf, cap, "size", p->size.dims, p->size.rank);
  rlx_bprint_ints(buf, cap, "stride", p->stride, p->size.rank);
  rlx_bprintf(buf, cap, " offset=");
  rlx_bprint_dim(buf, cap, p->offset);
}

static void as_strided_concretize(rlx_params *p, const int64_t *ev) {
  rlx_as_strided_params *a = &p->as_strided;
  a->offset = rlx_dim_value(a->offset, ev);
  for (int d = 0; d < a->size.rank; d++)
    a->size.dims[d] = rlx_dim_value(a->size.dims[d], ev), a->stride[d] = rlx_dim_value(a->stride[d], ev);
}

const rlx_op_vtable rlx_op_as_strided = {.infer = as_strided_infer, .ref = as_strided_ref, .print = as_strided_print,
                                         .symbolic = true, .concretize = as_strided_concretize};

/* ---- col2im ---- */

static int64_t blocks(const rlx_col2im_params *p, int d) {
  return (p->out[d] + 2 * p->pad[d] - p->dilation[d] * (p->kernel[d] - 1) - 1) / p->stride[d] + 1;
}

static rlx_status col2im_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  const rlx_col2im_params *p = &n->p.col2im;
  int r = x->shape.rank;
  if (r != 2 && r != 3) RLX_INFER_FAIL("col2im needs [N, C*kh*kw, L] or [C*kh*kw, L]");
  for (int d = 0; d < 2; d++)
    if (!rlx_param_ok(p->kernel[d], 1) || !rlx_param_ok(p->stride[d], 1) || !rlx_param_ok(p->dilation[d], 1) ||
        !rlx_param_ok(p->pad[d], 0) || !rlx_param_ok(p->out[d], 1))
      RLX_INFER_FAIL("col2im axis %d: output %lld, kernel %lld, stride %lld, dilation %lld, padding %lld "
                     "(each must be in [1, 2^31], padding in [0, 2^31])", d, (long long)p->out[d],
                     (long long)p->kernel[d], (long long)p->stride[d], (long long)p->dilation[d],
                     (long long)p->pad[d]);
  bool ok = true;
  int64_t bh = blocks(p, 0), bw = blocks(p, 1); /* params <= 2^31: no overflow inside */
  if (bh < 1 || bw < 1) RLX_INFER_FAIL("col2im: the kernel does not fit the padded output");
  int64_t kk = p->kernel[0] * p->kernel[1], L = rlx_mul64(bh, bw, &ok);
  int64_t ck = x->shape.dims[r - 2];
  if (!ok) RLX_INFER_FAIL("col2im: block count overflows");
  if (ck % kk || x->shape.dims[r - 1] != L)
    RLX_INFER_FAIL("col2im input [.., %lld, %lld] needs C*%lld rows and %lld blocks", (long long)ck,
                   (long long)x->shape.dims[r - 1], (long long)kk, (long long)L);
  if (!rlx_dtype_is_float(x->dtype)) return rlx_errorf(RLX_ERR_UNSUPPORTED, "col2im needs a float input");
  os[0].rank = r + 1;
  if (r == 3) os[0].dims[0] = x->shape.dims[0];
  os[0].dims[r - 2] = ck / kk;
  os[0].dims[r - 1] = p->out[0];
  os[0].dims[r] = p->out[1];
  od[0] = x->dtype;
  return RLX_OK;
}

static rlx_status col2im_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                             void *scratch) {
  (void)scratch;
  const rlx_col2im_params *p = &n->p.col2im;
  int r = in[0].rank;
  int64_t N = r == 3 ? in[0].dims[0] : 1, kh = p->kernel[0], kw = p->kernel[1];
  int64_t C = in[0].dims[r - 2] / (kh * kw), H = p->out[0], W = p->out[1];
  int64_t bh = blocks(p, 0), bw = blocks(p, 1), L = bh * bw;
  rlx_dtype t = in[0].dtype;
  for (int64_t i = 0; i < N * C * H * W; i++) rlx_store_f64(out[0].data, t, i, 0.0);
  for (int64_t b = 0; b < N; b++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t ki = 0; ki < kh; ki++)
        for (int64_t kj = 0; kj < kw; kj++) {
          int64_t row = (c * kh + ki) * kw + kj;
          for (int64_t l = 0; l < L; l++) {
            int64_t y = (l / bw) * p->stride[0] - p->pad[0] + ki * p->dilation[0];
            int64_t x = (l % bw) * p->stride[1] - p->pad[1] + kj * p->dilation[1];
            if (y < 0 || y >= H || x < 0 || x >= W) continue;
            int64_t o = ((b * C + c) * H + y) * W + x;
            double v = rlx_load_f64(in[0].data, t, (b * C * kh * kw + row) * L + l);
            rlx_store_f64(out[0].data, t, o, rlx_load_f64(out[0].data, t, o) + v);
          }
        }
  return RLX_OK;
}

static void col2im_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_col2im_params *p = &n->p.col2im;
  rlx_bprint_ints(buf, cap, "out", p->out, 2);
  rlx_bprint_ints(buf, cap, "kernel", p->kernel, 2);
  rlx_bprint_ints(buf, cap, "dilation", p->dilation, 2);
  rlx_bprint_ints(buf, cap, "pad", p->pad, 2);
  rlx_bprint_ints(buf, cap, "stride", p->stride, 2);
}

const rlx_op_vtable rlx_op_col2im = {.infer = col2im_infer, .ref = col2im_ref, .print = col2im_print};
