/*
 * reduce.c — lowering of reductions: sum, mean, prod, amax/amin, any/all,
 * var/std (every overload, correction or unbiased), logsumexp, nansum,
 * max/min (whole tensor, .dim with indices, and the binary .other form),
 * argmax/argmin, cumsum/cumprod, histc.
 */
#include "import/lower/lower.h"


/* Reads a dim argument (int, list, or None/empty = all axes) into a mask. */
static rlx_status axes_mask(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int rank, uint32_t *mask) {
  int64_t dims[RLX_MAX_RANK];
  int cnt;
  rlx_status st = lw_ints(lw, n, pos, name, dims, RLX_MAX_RANK, &cnt);
  if (st) return st;
  *mask = 0;
  if (cnt == 0) {
    *mask = rank ? (1u << rank) - 1 : 0;
    return RLX_OK;
  }
  for (int i = 0; i < cnt; i++) {
    int a;
    if ((st = lw_axis(dims[i], rank, "argument 'dim'", &a))) return st;
    if ((*mask >> a) & 1) /* torch: "dim 1 appears multiple times in the list of dims" */
      return lw_fail(RLX_ERR_SHAPE, "argument '%s'[%d] (%lld) names axis %d again", name, i, (long long)dims[i], a);
    if (rank) *mask |= 1u << a;
  }
  return RLX_OK;
}

static int32_t emit_reduce(rlx_lower *lw, int32_t x, rlx_reduce_kind k, uint32_t axes, bool keepdim,
                           double correction) {
  rlx_params p = {.reduce = {.kind = k, .axes = axes, .keepdim = keepdim, .correction = correction}};
  return lw_emit(lw, RLX_OP_REDUCE, &p, &x, 1);
}

rlx_status rlx_lower_reduce(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  const char *ov = lw_overload(n);
  const rlx_tinfo *t = lw_out(n, 0);
  rlx_reduce_kind k = lw_is(n, "sum") ? RLX_REDUCE_SUM : lw_is(n, "mean") ? RLX_REDUCE_MEAN
                      : lw_is(n, "prod") ? RLX_REDUCE_PROD : lw_is(n, "amax") ? RLX_REDUCE_MAX
                      : lw_is(n, "amin") ? RLX_REDUCE_MIN : lw_is(n, "any") ? RLX_REDUCE_ANY
                      : lw_is(n, "all") ? RLX_REDUCE_ALL : lw_is(n, "var") ? RLX_REDUCE_VAR
                      : lw_is(n, "std") ? RLX_REDUCE_STD : lw_is(n, "logsumexp") ? RLX_REDUCE_LOGSUMEXP
                      : RLX_REDUCE_NANSUM;
  int rank = lw_val(lw, x)->shape.rank;
  uint32_t axes;
  /* .default is the whole-tensor form, except nansum.default which takes dims */
  bool keepdim = false, whole = (!strcmp(ov, "default") || !strcmp(ov, "")) && k != RLX_REDUCE_NANSUM;
  double correction = 1.0;
  if ((k == RLX_REDUCE_SUM || k == RLX_REDUCE_MEAN || k == RLX_REDUCE_PROD || k == RLX_REDUCE_ANY ||
       k == RLX_REDUCE_ALL || k == RLX_REDUCE_NANSUM) && whole) {
    axes = rank ? (1u << rank) - 1 : 0; /* sum(x, dtype=None) and friends: every axis */
  } else if (k == RLX_REDUCE_VAR || k == RLX_REDUCE_STD) {
    /* var(x, unbiased), var.dim(x, dim, unbiased, keepdim), var.correction(x, dim, *, correction, keepdim) */
    bool unbiased = true;
    if (whole) {
      axes = rank ? (1u << rank) - 1 : 0;
      st = lw_bool(lw, n, 1, "unbiased", true, &unbiased);
    } else if (!(st = axes_mask(lw, n, 1, "dim", rank, &axes)) && !strcmp(ov, "dim")) {
      if (!(st = lw_bool(lw, n, 2, "unbiased", true, &unbiased))) st = lw_bool(lw, n, 3, "keepdim", false, &keepdim);
    } else if (!st) {
      if (!(st = lw_float(lw, n, -1, "correction", 1.0, &correction))) st = lw_bool(lw, n, -1, "keepdim", false, &keepdim);
    }
    if (whole || !strcmp(ov, "dim")) correction = unbiased ? 1.0 : 0.0;
  } else {
    st = axes_mask(lw, n, 1, "dim", rank, &axes);
    if (!st) st = lw_bool(lw, n, 2, "keepdim", false, &keepdim);
  }
  if (st) return st;
  int dt = -1; /* dtype= casts the input first */
  if ((k == RLX_REDUCE_SUM || k == RLX_REDUCE_MEAN || k == RLX_REDUCE_PROD || k == RLX_REDUCE_NANSUM) &&
      (st = lw_dtype(lw, n, -1, "dtype", -1, &dt)))
    return st;
  if (dt >= 0) x = lw_cast(lw, x, (rlx_dtype)dt);
  if ((k == RLX_REDUCE_LOGSUMEXP || k == RLX_REDUCE_MEAN || k == RLX_REDUCE_VAR || k == RLX_REDUCE_STD) && t &&
      rlx_dtype_is_float(t->dtype))
    x = lw_cast(lw, x, t->dtype); /* integer input: torch computes in the float result type */
  if (x < 0) return rlx_last_status();
  if (axes == 0 && rank > 0 && !whole && k != RLX_REDUCE_VAR && k != RLX_REDUCE_STD) /* dim=[] */
    axes = (1u << rank) - 1;
  int32_t y = emit_reduce(lw, x, k, axes, keepdim, correction);
  if (y >= 0 && t) y = lw_cast(lw, y, t->dtype);
  return lw_bind(lw, n, y);
}

/* max/min: .default (whole tensor), .dim (values, indices), .other (binary). */
rlx_status rlx_lower_minmax(rlx_lower *lw, const rlx_aten_node *n) {
  bool is_max = lw_is(n, "max");
  const char *ov = lw_overload(n);
  int32_t x, o;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  if (!strcmp(ov, "other")) {
    if ((st = lw_tensor(lw, n, 1, "other", &o))) return st;
    const rlx_tinfo *t = lw_out(n, 0);
    rlx_dtype ct = t ? t->dtype : lw_val(lw, x)->dtype;
    return lw_bind(lw, n, lw_binary(lw, is_max ? RLX_BINARY_MAXIMUM : RLX_BINARY_MINIMUM,
                                    lw_cast(lw, x, ct), lw_cast(lw, o, ct)));
  }
  int rank = lw_val(lw, x)->shape.rank;
  rlx_reduce_kind k = is_max ? RLX_REDUCE_MAX : RLX_REDUCE_MIN;
  if (strcmp(ov, "dim")) return lw_bind(lw, n, emit_reduce(lw, x, k, rank ? (1u << rank) - 1 : 0, false, 0));
  int64_t dim;
  bool keepdim;
  if ((st = lw_int(lw, n, 1, "dim", 0, &dim)) || (st = lw_bool(lw, n, 2, "keepdim", false, &keepdim))) return st;
  int a;
  if ((st = lw_axis(dim, rank, "argument 'dim'", &a))) return st;
  int32_t outs[2];
  outs[0] = emit_reduce(lw, x, k, rank ? 1u << a : 0, keepdim, 0);
  outs[1] = -1;
  if (outs[0] >= 0 && lw_out_used(lw, n, 1)) {
    rlx_params p = {.arg_reduce = {.is_max = is_max, .axis = rank ? a : -1, .keepdim = keepdim}};
    outs[1] = lw_emit(lw, RLX_OP_ARG_REDUCE, &p, &x, 1);
  }
  if (outs[0] < 0 || (lw_out_used(lw, n, 1) && outs[1] < 0)) return rlx_last_status();
  return lw_bind_multi(lw, n, outs, 2);
}

rlx_status rlx_lower_argreduce(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dim;
  bool keepdim, whole = !lw_arg(n, 1, "dim"); /* dim=None: over the flattened tensor */
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (!st) st = lw_bool(lw, n, 2, "keepdim", false, &keepdim);
  if (st) return st;
  int rank = lw_val(lw, x)->shape.rank, a = -1;
  if (!whole && (st = lw_axis(dim, rank, "argument 'dim'", &a))) return st;
  if (rank == 0) a = -1;
  rlx_params p = {.arg_reduce = {.is_max = lw_is(n, "argmax"), .axis = a, .keepdim = keepdim && a >= 0}};
  if (whole && keepdim) p.arg_reduce.keepdim = true; /* all axes kept as 1 */
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_ARG_REDUCE, &p, &x, 1));
}

rlx_status rlx_lower_scan(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dim;
  int dt;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (!st) st = lw_dtype(lw, n, 2, "dtype", -1, &dt);
  if (st) return st;
  if (dt >= 0) x = lw_cast(lw, x, (rlx_dtype)dt);
  if (x < 0) return rlx_last_status();
  int a;
  if ((st = lw_axis(dim, lw_val(lw, x)->shape.rank, "argument 'dim'", &a))) return st;
  rlx_params p = {.scan = {.axis = a, .prod = lw_is(n, "cumprod")}};
  int32_t y = lw_emit(lw, RLX_OP_SCAN, &p, &x, 1);
  const rlx_tinfo *t = lw_out(n, 0);
  if (y >= 0 && t) y = lw_cast(lw, y, t->dtype);
  return lw_bind(lw, n, y);
}

/* var_mean / std_mean (x, dim, *, correction, keepdim) and their .dim /
 * .default forms: two reductions. */
rlx_status rlx_lower_var_mean(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  const char *ov = lw_overload(n);
  int rank = lw_val(lw, x)->shape.rank;
  uint32_t axes = rank ? (1u << rank) - 1 : 0;
  bool keepdim = false, unbiased = true;
  double correction = 1.0;
  if (!strcmp(ov, "default")) {
    st = lw_bool(lw, n, 1, "unbiased", true, &unbiased);
    correction = unbiased;
  } else if (!strcmp(ov, "dim")) {
    if (!(st = axes_mask(lw, n, 1, "dim", rank, &axes)) && !(st = lw_bool(lw, n, 2, "unbiased", true, &unbiased)))
      st = lw_bool(lw, n, 3, "keepdim", false, &keepdim);
    correction = unbiased;
  } else {
    if (!(st = axes_mask(lw, n, 1, "dim", rank, &axes)) && !(st = lw_float(lw, n, -1, "correction", 1.0, &correction)))
      st = lw_bool(lw, n, -1, "keepdim", false, &keepdim);
  }
  if (st) return st;
  int32_t outs[2] = {emit_reduce(lw, x, lw_is(n, "std_mean") ? RLX_REDUCE_STD : RLX_REDUCE_VAR, axes, keepdim, correction),
                     emit_reduce(lw, x, RLX_REDUCE_MEAN, axes, keepdim, 0)};
  if (outs[0] < 0 || outs[1] < 0) return rlx_last_status();
  return lw_bind_multi(lw, n, outs, 2);
}

/* histc(x, bins=100, min=0, max=0): min == max bins over the data's range,
 * which the kernel finds at run time. The histc op checks bins and the range. */
rlx_status rlx_lower_histc(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_params p = {.histc = {.bins = 100}};
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "bins", 100, &p.histc.bins);
  if (!st) st = lw_float(lw, n, 2, "min", 0.0, &p.histc.min);
  if (!st) st = lw_float(lw, n, 3, "max", 0.0, &p.histc.max);
  return st ? st : lw_bind(lw, n, lw_emit(lw, RLX_OP_HISTC, &p, &x, 1));
}

/* _is_all_true / _is_any_true: a bool tensor -> 0-d bool (torch's asserts, `if x.all()`). */
rlx_status rlx_lower_is_true(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  int rank = lw_val(lw, x)->shape.rank;
  rlx_reduce_kind k = lw_is(n, "_is_all_true") ? RLX_REDUCE_ALL : RLX_REDUCE_ANY;
  return lw_bind(lw, n, emit_reduce(lw, x, k, rank ? (1u << rank) - 1 : 0, false, 0));
}
