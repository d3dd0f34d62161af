/*
 * cumulative.c — scans along one axis beyond cumsum/cumprod (index.c's scan):
 *
 *   cummax / cummin   x [*A, D, *B] -> values [*A, D, *B], indices i64 [*A, D, *B]
 *   logcumsumexp      x [*A, D, *B] -> y [*A, D, *B]             (floats only)
 *
 * As torch's CPU kernels (ReduceOpsKernel.cpp): cummax takes a new element
 * when it is NaN or (the running value is not NaN and) it is >= the running
 * value, so ties and repeated NaNs give the latest index and a NaN, once
 * seen, stays. logcumsumexp accumulates in double, each step torch's
 * _log_add_exp_helper: log1p(exp(min - max)) + max, except that two equal
 * infinities give the new element (-inf stays -inf, +inf stays +inf);
 * f16 and bf16 accumulate in float, as torch's acc_type.
 */
#include <math.h>

#include "ops/ops_util.h"

static const char *const kind_names[] = {"cummax", "cummin", "logcumsumexp"};

static rlx_status cum_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_cumulative_params *p = &n->p.cumulative;
  const rlx_value *x = rlx_in(g, n, 0);
  if ((unsigned)p->kind > RLX_CUM_LOGSUMEXP) RLX_INFER_FAIL("invalid cumulative kind %d", (int)p->kind);
  if (p->axis < 0 || p->axis >= RLX_MAX(x->shape.rank, 1))
    RLX_INFER_FAIL("%s axis %d out of range", kind_names[p->kind], p->axis);
  bool lse = p->kind == RLX_CUM_LOGSUMEXP;
  if (lse && !rlx_dtype_is_float(x->dtype))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "logcumsumexp needs a float input, got %s", rlx_dtype_name(x->dtype));
  if (lse && n->n_out != 1) RLX_INFER_FAIL("logcumsumexp has one output");
  os[0] = x->shape;
  od[0] = x->dtype;
  if (n->n_out == 2) os[1] = x->shape, od[1] = RLX_DTYPE_I64;
  return RLX_OK;
}

/* torch's _log_add_exp_helper(x, y): y is the running value. */
static double log_add_exp(double x, double y) {
  double lo = y != y ? y : (y < x ? y : x), hi = y != y ? y : (x < y ? y : x); /* std::min/max(x, y) */
  if (lo != hi || isfinite(lo)) return log1p(exp(lo - hi)) + hi;
  return x;
}

/* The same in float: torch accumulates f16 and bf16 in float. */
static float log_add_expf(float x, float y) {
  float lo = y != y ? y : (y < x ? y : x), hi = y != y ? y : (x < y ? y : x);
  if (lo != hi || isfinite(lo)) return log1pf(expf(lo - hi)) + hi;
  return x;
}

static rlx_status cum_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, void *scratch) {
  (void)scratch;
  const rlx_cumulative_params *p = &n->p.cumulative;
  int ax = p->axis;
  int64_t D = in[0].rank ? in[0].dims[ax] : 1;
  int64_t outer = in[0].rank ? rlx_dims_prod(in[0].dims, 0, ax) : 1;
  int64_t inner = in[0].rank ? rlx_dims_prod(in[0].dims, ax + 1, in[0].rank) : 1;
  rlx_dtype t = in[0].dtype;
  bool fl = rlx_dtype_is_float(t), mx = p->kind == RLX_CUM_MAX;
  size_t es = rlx_dtype_size(t);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * D * inner + i;
      if (p->kind == RLX_CUM_LOGSUMEXP) {
        bool half = t == RLX_DTYPE_F16 || t == RLX_DTYPE_BF16;
        double acc = -INFINITY;
        for (int64_t d = 0; d < D; d++) {
          double v = rlx_load_f64(in[0].data, t, base + d * inner);
          acc = half ? log_add_expf((float)v, (float)acc) : log_add_exp(v, acc);
          rlx_store_f64(out[0].data, t, base + d * inner, acc);
        }
        continue;
      }
      int64_t best = 0;
      double bf = D ? (fl ? rlx_load_f64(in[0].data, t, base) : 0) : 0;
      int64_t bi = D ? (fl ? 0 : rlx_load_i64(in[0].data, t, base)) : 0;
      for (int64_t d = 0; d < D; d++) {
        int64_t off = base + d * inner;
        bool take;
        if (fl) {
          double v = rlx_load_f64(in[0].data, t, off);
          take = v != v || (bf == bf && (mx ? v >= bf : v <= bf));
          if (take) bf = v;
        } else {
          int64_t v = rlx_load_i64(in[0].data, t, off);
          take = mx ? v >= bi : v <= bi;
          if (take) bi = v;
        }
        if (take) best = d;
        memcpy((char *)out[0].data + (size_t)off * es, (const char *)in[0].data + (size_t)(base + best * inner) * es,
               es);
        if (n->n_out == 2) ((int64_t *)out[1].data)[off] = best;
      }
    }
  return RLX_OK;
}

static void cum_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "%s axis=%d", kind_names[n->p.cumulative.kind], n->p.cumulative.axis);
}

const rlx_op_vtable rlx_op_cumulative = {.infer = cum_infer, .ref = cum_ref, .print = cum_print, .symbolic = true};
