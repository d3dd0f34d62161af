/*
 * registry.c — the per-op table, generated from ops.def, and the kind-name
 * tables, generated from the lists in params.h; plus the helpers of ops_util.h.
 */
#include <stdarg.h>

#include "ops/ops_util.h"

const rlx_op_info rlx_op_table[RLX_OP_COUNT] = {
#define RLX_OP(e, nm, mi, ma, mo) [RLX_OP_##e] = {#nm, mi, ma, mo, &rlx_op_##nm},
#include "ir/ops.def"
#undef RLX_OP
};

#define RLX_X_(e, s) s,
const char *const rlx_unary_names[RLX_UNARY_COUNT] = {RLX_UNARY_LIST(RLX_X_)};
const char *const rlx_binary_names[RLX_BINARY_COUNT] = {RLX_BINARY_LIST(RLX_X_)};
const char *const rlx_reduce_names[RLX_REDUCE_COUNT] = {RLX_REDUCE_LIST(RLX_X_)};
#undef RLX_X_

rlx_status rlx_broadcast(const rlx_shape *a, const rlx_shape *b, rlx_shape *out) {
  int r = RLX_MAX(a->rank, b->rank);
  out->rank = r;
  for (int i = 0; i < r; i++) {
    int ia = a->rank - r + i, ib = b->rank - r + i;
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      char sa[96], sb[96];
      return rlx_errorf(RLX_ERR_SHAPE, "shapes %s and %s do not broadcast (axis %d: %lld vs %lld)",
                        rlx_shape_str(a, sa, sizeof sa), rlx_shape_str(b, sb, sizeof sb), i,
                        (long long)da, (long long)db);
    }
    out->dims[i] = da == 1 ? db : da;
  }
  return RLX_OK;
}

void rlx_broadcast_strides(const rlx_shape *in, const rlx_shape *out, int64_t st[RLX_MAX_RANK]) {
  int64_t own[RLX_MAX_RANK];
  rlx_shape_strides(in, own);
  for (int i = 0; i < out->rank; i++) {
    int j = in->rank - out->rank + i;
    st[i] = (j < 0 || in->dims[j] == 1) ? 0 : own[j];
  }
}

void rlx_bprintf(char *buf, size_t cap, const char *fmt, ...) {
  size_t n = strlen(buf);
  if (n + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, cap - n, fmt, ap);
  va_end(ap);
}

_Thread_local const rlx_symtab *rlx_print_syms; /* the graph rlx_node_params_str prints */

void rlx_bprint_dim(char *buf, size_t cap, rlx_dim d) {
  char e[160];
  if (!rlx_dim_is_sym(d)) rlx_bprintf(buf, cap, "%lld", (long long)d);
  else if (rlx_print_syms && rlx_dim_valid(rlx_print_syms, d)) rlx_bprintf(buf, cap, "%s", rlx_dim_str(rlx_print_syms, d, e, sizeof e));
  else rlx_bprintf(buf, cap, "<symbolic>");
}

void rlx_bprint_ints(char *buf, size_t cap, const char *name, const int64_t *v, int n) {
  rlx_bprintf(buf, cap, "%s%s=[", buf[0] ? " " : "", name);
  for (int i = 0; i < n; i++) {
    if (i) rlx_bprintf(buf, cap, ",");
    rlx_bprint_dim(buf, cap, v[i]);
  }
  rlx_bprintf(buf, cap, "]");
}

rlx_status rlx_epilogue_infer(const rlx_value *residual, const rlx_epilogue *ep, const rlx_shape *os, rlx_dtype od) {
  if (residual && (residual->dtype != od || !rlx_shape_eq(&residual->shape, os)))
    RLX_INFER_FAIL("the fused residual input must match the output's shape and dtype");
  if (ep->has_act && ((unsigned)ep->act.kind >= RLX_UNARY_COUNT || !rlx_dtype_is_float(od)))
    RLX_INFER_FAIL("invalid fused activation");
  return RLX_OK;
}

void rlx_epilogue_apply(const rlx_epilogue *ep, const rlx_tensor_view *residual, rlx_tensor_view *out) {
  if (!ep->has_act && !(residual && residual->data)) return;
  int64_t n = rlx_view_numel(out);
  bool f64 = out->dtype == RLX_DTYPE_F64;
  for (int64_t i = 0; i < n; i++) {
    double v = rlx_load_f64(out->data, out->dtype, i);
    if (residual && residual->data) v = (f64 ? v : (double)(float)v) + rlx_load_f64(residual->data, residual->dtype, i);
    if (ep->has_act) v = rlx_unary_apply(&ep->act, f64 ? v : (double)(float)v, f64);
    rlx_store_f64(out->data, out->dtype, i, v);
  }
}

void rlx_epilogue_print(const rlx_epilogue *ep, bool has_residual, char *buf, size_t cap) {
  if (has_residual) rlx_bprintf(buf, cap, "%s+residual", buf[0] ? " " : "");
  if (ep->has_act) rlx_bprintf(buf, cap, "%s+%s", buf[0] ? " " : "", rlx_unary_names[ep->act.kind]);
}

bool rlx_dim_may_le(const rlx_graph *g, rlx_dim a, rlx_dim b) {
  if (!rlx_dim_is_sym(a) && !rlx_dim_is_sym(b)) return a <= b;
  rlx_dim d;
  if (rlx_dim_sub(rlx_graph_syms(g), a, b, &d)) return true; /* too complex to decide here */
  int64_t lo, hi;
  rlx_dim_bounds(&g->syms, d, &lo, &hi);
  return lo <= 0;
}

rlx_status rlx_shape_numel_dim(const rlx_graph *g, const rlx_shape *s, rlx_dim *out) {
  rlx_dim n = 1;
  for (int i = 0; i < s->rank; i++) {
    rlx_status st = rlx_dim_mul(rlx_graph_syms(g), n, s->dims[i], &n);
    if (st) return st;
  }
  *out = n;
  return RLX_OK;
}
