/*
 * create.c — lowering of tensor factories: full / zeros / ones / empty (and
 * their _like and new_ forms, and empty_permuted), scalar_tensor, arange.
 * Shapes and dtypes come from the recorded output; the values from the
 * arguments. empty* is zero-filled (torch leaves it uninitialized; any value
 * is correct). empty_permuted's physical layout does not matter: rlx tensors
 * are contiguous in their logical shape, which is all a consumer can see.
 */
#include <math.h>
#include <stdio.h>

#include "import/lower/lower.h"

/* The size argument of a factory: entries >= 0 and, when all are known
 * (symbolic ones without a recorded value are not), the recorded shape. */
static rlx_status check_size(rlx_lower *lw, const rlx_aten_node *n, const rlx_shape *rs) {
  int pos = lw_is(n, "new_zeros") || lw_is(n, "new_ones") || lw_is(n, "new_empty") || lw_is(n, "new_full") ? 1
            : lw_is(n, "full") || lw_is(n, "zeros") || lw_is(n, "ones") || lw_is(n, "empty") ||
                      lw_is(n, "empty_permuted") ? 0 : -1;
  const rlx_arg *a = pos < 0 ? NULL : lw_resolve(lw, lw_arg(n, pos, "size"));
  if (!a || (a->kind != RLX_ARG_LIST && a->kind != RLX_ARG_INT)) return RLX_OK;
  int cnt = a->kind == RLX_ARG_INT ? 1 : a->u.list.n;
  bool known = true, same = cnt == rs->rank;
  for (int i = 0; i < cnt; i++) {
    const rlx_arg *e = a->kind == RLX_ARG_INT ? a : lw_resolve(lw, &a->u.list.items[i]);
    if (e->kind != RLX_ARG_INT) {
      known = false;
      continue;
    }
    if (e->u.i < 0)
      return lw_fail(RLX_ERR_SHAPE, "argument 'size'[%d] is %lld; a size must be >= 0", i, (long long)e->u.i);
    if (same && e->u.i != rs->dims[i]) same = false;
  }
  if (known && !same) return lw_fail(RLX_ERR_SHAPE, "argument 'size' disagrees with the shape torch recorded");
  return RLX_OK;
}

rlx_status rlx_lower_full(rlx_lower *lw, const rlx_aten_node *n) {
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t) return lw_fail(RLX_ERR_FORMAT, "the output type is not recorded");
  rlx_status st = check_size(lw, n, &t->shape);
  if (st) return st;
  rlx_params p = {.full = {.dtype = t->dtype, .shape = t->shape}};
  const rlx_arg *v = NULL;
  const char *what = "argument 'fill_value'";
  if (lw_is(n, "full") || lw_is(n, "full_like") || lw_is(n, "new_full")) v = lw_arg(n, lw_is(n, "full_like") ? 1 : 2, "fill_value");
  else if (lw_is(n, "scalar_tensor")) v = lw_arg(n, 0, "s"), what = "argument 's'";
  else if (lw_is(n, "ones") || lw_is(n, "ones_like") || lw_is(n, "new_ones")) p.full.value = 1, p.full.ivalue = 1;
  if (lw_is(n, "full")) v = lw_arg(n, 1, "fill_value");
  if (v && (st = lw_fill_value(lw, v, t->dtype, what, &p.full.value, &p.full.ivalue))) return st;
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_FULL, &p, NULL, 0));
}

/* A start/end/step argument of arange as a double *d and, for an integer
 * result, as the int64 torch computes with (a float truncated toward zero,
 * refused when out of range) in *i. */
static rlx_status range_arg(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, double def, bool is_int,
                            double *d, int64_t *i) {
  rlx_status st = lw_float(lw, n, pos, name, def, d);
  if (st) return st;
  if (!isfinite(*d)) /* torch: "unsupported range: nan -> 10", "step must be finite but got inf" */
    return lw_fail(RLX_ERR_SHAPE, "%s: argument '%s' is %g", strcmp(name, "step") ? "unsupported range" :
                   "step must be finite", name, *d);
  *i = 0;
  if (!is_int) return RLX_OK;
  const rlx_arg *a = lw_resolve(lw, lw_arg(n, pos, name));
  if (a && a->kind == RLX_ARG_INT) return *i = a->u.i, RLX_OK;
  char what[64];
  snprintf(what, sizeof what, "argument '%s'", name);
  return lw_f64_to(*d, RLX_DTYPE_I64, what, i);
}

/* The exact arange length of an int64 result from the int64 arguments:
 * (end - start + step - sign(step)) / step; -1 when that overflows. */
static int64_t range_length_i64(int64_t is, int64_t ie, int64_t ic) {
  bool ok = true;
  int64_t num = lw_add64(lw_sub64(ie, is, &ok), ic > 0 ? ic - 1 : ic + 1, &ok);
  if (!ok || (num == INT64_MIN && ic == -1)) return -1;
  return num / ic;
}

/* arange(end), arange.start(start, end), arange.start_step(start, end, step),
 * checked as torch checks them: finite arguments, a nonzero step whose sign
 * agrees with end - start, and the length ceil((end - start) / step) (in
 * double; torch computes an int64 result from the int64-truncated arguments,
 * exactly, which older versions also do for float arguments) must be the
 * recorded one. An integer result holds istart + i * istep. */
/* arange with a symbolic bound (arange(seq), arange(past, past + seq)):
 * an integral start and end (dims) and a constant integer step; the length
 * ceil((end - start) / step) must agree with the recorded one. */
static rlx_status arange_symbolic(rlx_lower *lw, const rlx_aten_node *n, const rlx_tinfo *t, bool has_start,
                                  bool has_step) {
  rlx_dim start = 0, end, len;
  int64_t step = 1;
  rlx_status st = has_start ? lw_dim(lw, n, 0, "start", 0, &start) : RLX_OK;
  if (!st) st = lw_dim(lw, n, has_start ? 1 : 0, "end", 0, &end);
  if (!st && has_step) st = lw_int(lw, n, 2, "step", 1, &step);
  if (st) return st;
  if (step == 0 || step > RLX_MAX_NUMEL || step < -RLX_MAX_NUMEL)
    return lw_fail(RLX_ERR_SHAPE, "arange with a symbolic bound: step %lld", (long long)step);
  rlx_symtab *sy = lw_syms(lw);
  if (step > 0) st = rlx_dim_sub(sy, end, start, &len);
  else st = rlx_dim_sub(sy, start, end, &len);
  if (!st) st = rlx_dim_add(sy, len, (step > 0 ? step : -step) - 1, &len);
  if (!st) st = rlx_dim_floordiv(sy, len, step > 0 ? step : -step, &len);
  if (st) return st;
  if (!lw_dims_agree(lw, len, t->shape.dims[0])) {
    char e1[128], e2[128];
    return lw_fail(RLX_ERR_SHAPE, "arange has %s elements but torch recorded %s", rlx_dim_str(sy, len, e1, sizeof e1),
                   rlx_dim_str(sy, t->shape.dims[0], e2, sizeof e2));
  }
  rlx_params p = {.arange = {.dtype = t->dtype, .length = t->shape.dims[0], .istart = start, .istep = step,
                             .start = rlx_dim_is_sym(start) ? 0 : (double)start, .step = (double)step}};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_ARANGE, &p, NULL, 0));
}

rlx_status rlx_lower_arange(rlx_lower *lw, const rlx_aten_node *n) {
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t || t->shape.rank != 1) return lw_fail(RLX_ERR_FORMAT, "arange needs a recorded 1-D output");
  const char *ov = lw_overload(n);
  bool has_start = !strncmp(ov, "start", 5), has_step = !strcmp(ov, "start_step");
  rlx_dtype dt = t->dtype;
  if (dt == RLX_DTYPE_BOOL) return lw_fail(RLX_ERR_UNSUPPORTED, "arange of bool");
  bool is_int = !rlx_dtype_is_float(dt);
  const rlx_arg *sa = lw_resolve(lw, lw_arg(n, 0, has_start ? "start" : "end"));
  const rlx_arg *ea = has_start ? lw_resolve(lw, lw_arg(n, 1, "end")) : NULL;
  if (rlx_dim_is_sym(t->shape.dims[0]) || (sa && sa->kind == RLX_ARG_SYM) || (ea && ea->kind == RLX_ARG_SYM))
    return arange_symbolic(lw, n, t, has_start, has_step);
  int64_t len = t->shape.dims[0], iend;
  double end;
  rlx_params p = {.arange = {.dtype = dt, .length = len, .step = 1, .istep = 1}};
  rlx_arange_params *a = &p.arange;
  rlx_status st = RLX_OK;
  if (has_start) st = range_arg(lw, n, 0, "start", 0.0, is_int, &a->start, &a->istart);
  if (!st) st = range_arg(lw, n, has_start ? 1 : 0, "end", 0.0, is_int, &end, &iend);
  if (!st && has_step) st = range_arg(lw, n, 2, "step", 1.0, is_int, &a->step, &a->istep);
  if (st) return st;
  if (a->step == 0) return lw_fail(RLX_ERR_SHAPE, "step must be nonzero: argument 'step' is 0");
  if (a->step > 0 ? end < a->start : end > a->start)
    return lw_fail(RLX_ERR_SHAPE, "arange(%g, %g, %g): upper bound and lower bound inconsistent with the step sign",
                   a->start, end, a->step);
  double want = ceil((end - a->start) / a->step);
  int64_t want_i = dt == RLX_DTYPE_I64 && a->istep ? range_length_i64(a->istart, iend, a->istep) : -1;
  if (!((want >= 0 && want <= (double)RLX_MAX_NUMEL && (int64_t)want == len) || (want_i >= 0 && want_i == len)))
    return lw_fail(RLX_ERR_SHAPE, "arange(%g, %g, %g) has %.17g elements but torch recorded %lld", a->start, end,
                   a->step, want, (long long)len);
  if (is_int && len > 0) { /* the kernel computes istart + i * istep: the last one must fit */
    bool ok = true;
    lw_add64(a->istart, lw_mul64(len - 1, a->istep, &ok), &ok);
    if (!ok) return lw_fail(RLX_ERR_SHAPE, "arange: the values overflow int64");
  }
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_ARANGE, &p, NULL, 0));
}
