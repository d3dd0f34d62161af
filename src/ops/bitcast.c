/*
 * bitcast.c — the bytes of x read as another dtype (torch's
 * Tensor.view(dtype)):
 *
 *   x [*A, n] (dtype s bytes) -> y [*A, n * s / t] (dtype t bytes)
 *
 * Same-size dtypes keep the shape (a 0-d tensor only allows those); a
 * wider dtype joins t / s consecutive elements of the last dim (n must be
 * divisible), a narrower one splits each element into s / t, in the
 * machine's byte order (little-endian, as torch on x86 and ARM). rlx
 * values are contiguous, so this is a copy of the bytes.
 */
#include "ops/ops_util.h"

static rlx_status bitcast_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  const rlx_bitcast_params *p = &n->p.bitcast;
  if (!rlx_dtype_valid(p->to)) RLX_INFER_FAIL("bitcast to invalid dtype %d", (int)p->to);
  size_t s = rlx_dtype_size(x->dtype), t = rlx_dtype_size(p->to);
  const rlx_shape *xs = &x->shape, *ys = &p->shape;
  bool ok = xs->rank == ys->rank;
  for (int i = 0; ok && i + 1 < xs->rank; i++) ok = xs->dims[i] == ys->dims[i];
  if (ok && xs->rank == 0) ok = s == t;
  if (ok && xs->rank > 0) {
    int64_t nx = xs->dims[xs->rank - 1], ny = ys->dims[ys->rank - 1];
    ok = s >= t ? ny == nx * (int64_t)(s / t) : (nx % (int64_t)(t / s) == 0 && ny == nx / (int64_t)(t / s));
  }
  if (!ok) {
    char a[96], b[96];
    RLX_INFER_FAIL("bitcast of %s %s to %s cannot have shape %s (the last dim scales by the element sizes)",
                   rlx_dtype_name(x->dtype), rlx_shape_str(xs, a, sizeof a), rlx_dtype_name(p->to),
                   rlx_shape_str(ys, b, sizeof b));
  }
  os[0] = *ys;
  od[0] = p->to;
  return RLX_OK;
}

static rlx_status bitcast_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, void *scratch) {
  (void)n, (void)scratch;
  size_t bytes = (size_t)rlx_view_numel(&in[0]) * rlx_dtype_size(in[0].dtype);
  if (bytes) memcpy(out[0].data, in[0].data, bytes);
  return RLX_OK;
}

static void bitcast_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "to=%s", rlx_dtype_name(n->p.bitcast.to));
}

const rlx_op_vtable rlx_op_bitcast = {.infer = bitcast_infer, .ref = bitcast_ref, .print = bitcast_print};
