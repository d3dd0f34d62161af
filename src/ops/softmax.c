/*
 * softmax.c — softmax and log_softmax along one axis. Computed in double with
 * the row max subtracted; one rounding to the output dtype.
 */
#include <math.h>

#include "ops/ops_util.h"

static rlx_status softmax_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  int ax = n->p.softmax.axis;
  if (ax < 0 || ax >= RLX_MAX(x->shape.rank, 1)) RLX_INFER_FAIL("softmax axis %d out of range", ax);
  if (!rlx_dtype_is_float(x->dtype))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "softmax needs a float input, got %s",
                      rlx_dtype_name(x->dtype));
  os[0] = x->shape;
  od[0] = x->dtype;
  return RLX_OK;
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
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * D * inner + i;
      double m = -INFINITY, s = 0;
      for (int64_t d = 0; d < D; d++) {
        double v = rlx_load_f64(in[0].data, t, base + d * inner);
        if (v > m || v != v) m = v;
      }
      for (int64_t d = 0; d < D; d++) s += exp(rlx_load_f64(in[0].data, t, base + d * inner) - m);
      for (int64_t d = 0; d < D; d++) {
        double v = rlx_load_f64(in[0].data, t, base + d * inner) - m;
        rlx_store_f64(out[0].data, t, base + d * inner, lg ? v - log(s) : exp(v) / s);
      }
    }
  return RLX_OK;
}

static void softmax_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "%saxis=%d", n->p.softmax.log ? "log " : "", n->p.softmax.axis);
}

const rlx_op_vtable rlx_op_softmax = {
    .infer = softmax_infer, .ref = softmax_ref, .print = softmax_print, .symbolic = true};
