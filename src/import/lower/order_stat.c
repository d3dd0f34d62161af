/*
 * order_stat.c — lowering of the order statistics and the scans with
 * indices: median and nanmedian (.default over the whole tensor, .dim with
 * values and indices), mode, kthvalue (order_stat op); cummax, cummin and
 * logcumsumexp (cumulative op).
 */
#include <math.h>

#include "import/lower/lower.h"

/* order_stat over axis a of x; n_out 2 gives (values, indices). */
static int32_t emit_order(rlx_lower *lw, int32_t x, rlx_order_stat_kind k, int a, bool keepdim, int64_t kth,
                          int n_out, int32_t outs[2]) {
  rlx_params p = {.order_stat = {.kind = k, .axis = a, .keepdim = keepdim, .k = kth}};
  int32_t node = lw_emit_node(lw, RLX_OP_ORDER_STAT, &p, &x, 1, n_out);
  if (node < 0) return -1;
  for (int i = 0; i < n_out; i++) outs[i] = lw->g->nodes[node].out[i];
  return outs[0];
}

/* median / nanmedian over every element (values only, 0-d): the flattened
 * tensor's statistic; an empty tensor gives NaN in the input's dtype
 * (float NaN converted as torch converts it: i64 and i32 get their minimum,
 * narrower integers 0). */
static rlx_status lower_whole_median(rlx_lower *lw, const rlx_aten_node *n, int32_t x, rlx_order_stat_kind k) {
  const rlx_value *xv = lw_val(lw, x);
  rlx_dtype t = xv->dtype;
  if (!rlx_shape_is_symbolic(&xv->shape) && rlx_shape_numel(&xv->shape) == 0) {
    int64_t iv = t == RLX_DTYPE_I64 ? INT64_MIN : t == RLX_DTYPE_I32 ? INT32_MIN : 0;
    if (t == RLX_DTYPE_BOOL) return lw_fail(RLX_ERR_UNSUPPORTED, "median of a bool tensor (torch refuses it)");
    return lw_bind(lw, n, lw_scalar(lw, t, NAN, iv));
  }
  if (xv->shape.rank != 1) {
    rlx_shape flat = {.rank = 1};
    rlx_status st = rlx_shape_numel_dim_lw(lw, &xv->shape, &flat.dims[0]);
    if (st) return st;
    if ((x = lw_reshape(lw, x, &flat)) < 0) return rlx_last_status();
  }
  int32_t outs[2];
  return lw_bind(lw, n, emit_order(lw, x, k, 0, false, 0, 1, outs));
}

/* median(x), median.dim(x, dim, keepdim), nanmedian likewise,
 * mode(x, dim=-1, keepdim), kthvalue(x, k, dim=-1, keepdim). */
rlx_status rlx_lower_order_stat(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  rlx_order_stat_kind k = lw_is(n, "kthvalue") ? RLX_ORDER_KTHVALUE : lw_is(n, "mode") ? RLX_ORDER_MODE
                          : lw_is(n, "nanmedian") ? RLX_ORDER_NANMEDIAN : RLX_ORDER_MEDIAN;
  bool is_median = k == RLX_ORDER_MEDIAN || k == RLX_ORDER_NANMEDIAN;
  if (is_median && strcmp(lw_overload(n), "dim")) return lower_whole_median(lw, n, x, k);
  int64_t dim = -1, kth = 0;
  bool keepdim = false;
  int pos = 1;
  if (k == RLX_ORDER_KTHVALUE && (st = lw_int(lw, n, pos++, "k", 1, &kth))) return st;
  if (!(st = lw_int(lw, n, pos, "dim", -1, &dim))) st = lw_bool(lw, n, pos + 1, "keepdim", false, &keepdim);
  if (st) return st;
  int r = lw_val(lw, x)->shape.rank, a;
  if ((st = lw_axis(dim, r, "argument 'dim'", &a))) return st;
  int32_t outs[2];
  if (emit_order(lw, x, k, r ? a : 0, keepdim && r, kth, 2, outs) < 0) return rlx_last_status();
  return lw_bind_multi(lw, n, outs, 2);
}

/* cummax(x, dim), cummin(x, dim): values and indices; logcumsumexp(x, dim). */
rlx_status rlx_lower_cumulative(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dim;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (st) return st;
  int a;
  if ((st = lw_axis(dim, lw_val(lw, x)->shape.rank, "argument 'dim'", &a))) return st;
  bool lse = lw_is(n, "logcumsumexp");
  rlx_params p = {.cumulative = {.kind = lse ? RLX_CUM_LOGSUMEXP : lw_is(n, "cummax") ? RLX_CUM_MAX : RLX_CUM_MIN,
                                 .axis = a}};
  int32_t node = lw_emit_node(lw, RLX_OP_CUMULATIVE, &p, &x, 1, lse ? 1 : 2);
  if (node < 0) return rlx_last_status();
  if (lse) return lw_bind(lw, n, lw->g->nodes[node].out[0]);
  int32_t outs[2] = {lw->g->nodes[node].out[0], lw->g->nodes[node].out[1]};
  return lw_bind_multi(lw, n, outs, 2);
}
