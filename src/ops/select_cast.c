/*
 * select_cast.c — `where` (three-way broadcast select) and `cast` (any dtype
 * to any dtype, with torch's conversion rules).
 */
#include "ops/ops_util.h"

static rlx_status where_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *c = rlx_in(g, n, 0), *a = rlx_in(g, n, 1), *b = rlx_in(g, n, 2);
  if (c->dtype != RLX_DTYPE_BOOL) RLX_INFER_FAIL("where condition must be bool, got %s",
                                                 rlx_dtype_name(c->dtype));
  if (a->dtype != b->dtype)
    RLX_INFER_FAIL("where branches have dtypes %s and %s", rlx_dtype_name(a->dtype),
                   rlx_dtype_name(b->dtype));
  rlx_shape ab;
  if (rlx_broadcast(&a->shape, &b->shape, &ab) || rlx_broadcast(&c->shape, &ab, &os[0]))
    return RLX_ERR_SHAPE;
  od[0] = a->dtype;
  return RLX_OK;
}

static rlx_status where_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                            void *scratch) {
  (void)n, (void)scratch;
  rlx_shape os = rlx_view_shape(&out[0]);
  int64_t st[3][RLX_MAX_RANK];
  for (int k = 0; k < 3; k++) {
    rlx_shape s = rlx_view_shape(&in[k]);
    rlx_broadcast_strides(&s, &os, st[k]);
  }
  size_t es = rlx_dtype_size(out[0].dtype);
  const uint8_t *c = in[0].data;
  const char *a = in[1].data, *b = in[2].data;
  char *y = out[0].data;
  int64_t N = rlx_shape_numel(&os);
  for (int64_t i = 0; i < N; i++) {
    bool pick = c[rlx_strided_offset(&os, st[0], i)] != 0;
    const char *src = pick ? a + es * (size_t)rlx_strided_offset(&os, st[1], i)
                           : b + es * (size_t)rlx_strided_offset(&os, st[2], i);
    memcpy(y + es * (size_t)i, src, es);
  }
  return RLX_OK;
}

const rlx_op_vtable rlx_op_where = {.infer = where_infer, .ref = where_ref, .symbolic = true};

static rlx_status cast_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  rlx_dtype t = n->p.cast.to;
  if (!rlx_dtype_valid(t)) RLX_INFER_FAIL("cast to invalid dtype %d", (int)t);
  os[0] = x->shape;
  od[0] = t;
  return RLX_OK;
}

static rlx_status cast_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                           void *scratch) {
  (void)n, (void)scratch;
  int64_t N = rlx_view_numel(&in[0]);
  rlx_dtype ti = in[0].dtype, to = out[0].dtype;
  if (ti == to) {
    memcpy(out[0].data, in[0].data, (size_t)N * rlx_dtype_size(ti));
  } else if (rlx_dtype_is_float(ti) && to != RLX_DTYPE_BOOL) {
    for (int64_t i = 0; i < N; i++) rlx_store_f64(out[0].data, to, i, rlx_load_f64(in[0].data, ti, i));
  } else if (rlx_dtype_is_float(ti)) { /* float -> bool: nonzero (NaN is true) */
    for (int64_t i = 0; i < N; i++)
      ((uint8_t *)out[0].data)[i] = rlx_load_f64(in[0].data, ti, i) != 0;
  } else if (ti == RLX_DTYPE_U64) { /* values above 2^63 are not int64s */
    for (int64_t i = 0; i < N; i++) rlx_store_u64(out[0].data, to, i, rlx_load_u64(in[0].data, ti, i));
  } else {
    for (int64_t i = 0; i < N; i++) rlx_store_i64(out[0].data, to, i, rlx_load_i64(in[0].data, ti, i));
  }
  return RLX_OK;
}

static void cast_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "to=%s", rlx_dtype_name(n->p.cast.to));
}

const rlx_op_vtable rlx_op_cast = {.infer = cast_infer, .ref = cast_ref, .print = cast_print, .symbolic = true};
