/*
 * softmax.c — softmax and log_softmax along one axis. Computed in double with
 * the row max subtracted; one rounding to the output dtype. A softmax that
 * fuse_softmax made (over the last axis) first takes x * scale or x / scale
 * and adds a broadcast mask, each rounded as the binary nodes it replaced.
 */
#include <math.h>

#include "ops/ops_util.h"

static rlx_status softmax_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0), *m = rlx_in(g, n, 1);
  const rlx_softmax_params *p = &n->p.softmax;
  int ax = p->axis;
  if (ax < 0 || ax >= RLX_MAX(x->shape.rank, 1)) RLX_INFER_FAIL("softmax axis %d out of range", ax);
  if (!rlx_dtype_is_float(x->dtype))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "softmax needs a float input, got %s",
                      rlx_dtype_name(x->dtype));
  if ((unsigned)p->pre > RLX_SOFTMAX_PRE_DIV) RLX_INFER_FAIL("softmax: invalid fused scale kind %d", (int)p->pre);
  if ((p->pre || m) && ax != x->shape.rank - 1) RLX_INFER_FAIL("softmax: a fused scale or mask needs the last axis");
  if (m) { /* the mask broadcasts to x, never x to the mask */
    if (m->dtype != x->dtype) RLX_INFER_FAIL("softmax mask is %s, the input %s", rlx_dtype_name(m->dtype), rlx_dtype_name(x->dtype));
    if (m->shape.rank > x->shape.rank) RLX_INFER_FAIL("softmax mask has rank %d > the input's %d", m->shape.rank, x->shape.rank);
    for (int i = 0; i < m->shape.rank; i++) {
      int64_t md = m->shape.dims[i], xd = x->shape.dims[x->shape.rank - m->shape.rank + i];
      if (md != 1 && md != xd) RLX_INFER_FAIL("softmax mask axis %d (%lld) does not broadcast to the input's %lld", i,
                                             (long long)md, (long long)xd);
    }
  }
  os[0] = x->shape;
  od[0] = x->dtype;
  return RLX_OK;
}

/* v rounded to dtype t (the binary nodes a fused softmax replaces each round once). */
static double round_to(rlx_dtype t, double v) {
  if (t == RLX_DTYPE_F64) return v;
  if (t == RLX_DTYPE_F32) return (double)(float)v;
  unsigned char b[8];
  rlx_store_f64(b, t, 0, v);
  return rlx_load_f64(b, t, 0);
}

/* The softmax's input element i: x[i], then op scale, then + mask. */
static double pre_value(const rlx_node *n, const rlx_tensor_view *in, const rlx_shape *full, const int64_t *mst,
                        int64_t i) {
  rlx_dtype t = in[0].dtype;
  double v = rlx_load_f64(in[0].data, t, i);
  if (n->p.softmax.pre == RLX_SOFTMAX_PRE_MUL) v = round_to(t, v * n->p.softmax.scale);
  else if (n->p.softmax.pre == RLX_SOFTMAX_PRE_DIV) v = round_to(t, v / n->p.softmax.scale);
  if (n->n_in > 1 && in[1].data) v = round_to(t, v + rlx_load_f64(in[1].data, t, rlx_strided_offset(full, mst, i)));
  return v;
}

static rlx_status softmax_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                              void *scratch) {
  (void)scratch;
  int ax = n->p.softmax.axis;
  bool lg = n->p.softmax.log;
  int64_t D = in[0].rank ? in[0].dims[ax] : 1;
  int64_t inner = in[0].rank ? rlx_dims_prod(in[0].dims, ax + 1, in[0].rank) : 1;
  int64_t outer = in[0].rank ? rlx_dims_prod(in[0].dims, 0, ax) : 1;
  rlx_dtype t = in[0].dtype;
  rlx_shape full = rlx_view_shape(&in[0]);
  int64_t mst[RLX_MAX_RANK] = {0};
  if (n->n_in > 1 && in[1].data) {
    rlx_shape ms = rlx_view_shape(&in[1]);
    rlx_broadcast_strides(&ms, &full, mst);
  }
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * D * inner + i;
      double m = -INFINITY, s = 0;
      for (int64_t d = 0; d < D; d++) {
        double v = pre_value(n, in, &full, mst, base + d * inner);
        if (v > m || v != v) m = v;
      }
      for (int64_t d = 0; d < D; d++) s += exp(pre_value(n, in, &full, mst, base + d * inner) - m);
      for (int64_t d = 0; d < D; d++) {
        double v = pre_value(n, in, &full, mst, base + d * inner) - m;
        rlx_store_f64(out[0].data, t, base + d * inner, lg ? v - log(s) : exp(v) / s);
      }
    }
  return RLX_OK;
}

static void softmax_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_softmax_params *p = &n->p.softmax;
  rlx_bprintf(buf, cap, "%saxis=%d", p->log ? "log " : "", p->axis);
  if (p->pre) rlx_bprintf(buf, cap, " %s%g", p->pre == RLX_SOFTMAX_PRE_MUL ? "*" : "/", p->scale);
  if (n->n_in > 1 && n->in[1] >= 0) rlx_bprintf(buf, cap, " +mask");
}

const rlx_op_vtable rlx_op_softmax = {
    .infer = softmax_infer, .ref = softmax_ref, .print = softmax_print, .symbolic = true};
