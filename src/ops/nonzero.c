/*
 * nonzero.c — nonzero_static: the indices of the nonzero elements of x, in
 * row-major order, as a fixed number of rows (torch.nonzero_static):
 *
 *   x [d0, ..., d(r-1)] (any dtype) -> y i64 [size, r]
 *
 * Row k holds the coordinates of the k-th nonzero element; when x has fewer
 * than `size` nonzero elements the remaining rows are `fill` in every
 * column, and when it has more, the first `size` are kept. An element is
 * nonzero as `x != 0`: NaN is, -0.0 is not. A 0-d x gives [size, 0].
 */
#include "ops/ops_util.h"

static rlx_status nonzero_static_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  const rlx_nonzero_static_params *p = &n->p.nonzero_static;
  if (p->size < 0) RLX_INFER_FAIL("nonzero_static: size %lld is negative", (long long)p->size);
  os[0].rank = 2;
  os[0].dims[0] = p->size;
  os[0].dims[1] = x->shape.rank;
  od[0] = RLX_DTYPE_I64;
  return RLX_OK;
}

static bool is_nonzero(const void *data, rlx_dtype t, int64_t i) {
  if (rlx_dtype_is_float(t)) return rlx_load_f64(data, t, i) != 0;
  return rlx_load_i64(data, t, i) != 0;
}

static rlx_status nonzero_static_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                                     void *scratch) {
  (void)scratch;
  const rlx_nonzero_static_params *p = &n->p.nonzero_static;
  const rlx_tensor_view *x = &in[0];
  int r = x->rank;
  int64_t N = rlx_view_numel(x), S = p->size, k = 0;
  int64_t *y = out[0].data; /* [S, r] */
  for (int64_t i = 0; i < N && k < S; i++) {
    if (!is_nonzero(x->data, x->dtype, i)) continue;
    int64_t q = i; /* unravel i, the last axis fastest (no dim is 0: i exists) */
    for (int d = r - 1; d >= 0; d--) {
      y[k * r + d] = q % x->dims[d];
      q /= x->dims[d];
    }
    k++;
  }
  for (int64_t j = k * r; j < S * r; j++) y[j] = p->fill;
  return RLX_OK;
}

static void nonzero_static_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "size=%lld fill=%lld", (long long)n->p.nonzero_static.size,
              (long long)n->p.nonzero_static.fill);
}

const rlx_op_vtable rlx_op_nonzero_static = {
    .infer = nonzero_static_infer, .ref = nonzero_static_ref, .print = nonzero_static_print};
