/*
 * create.c — lowering of tensor factories: full / zeros / ones / empty (and
 * their _like and new_ forms, and empty_permuted), scalar_tensor, arange.
 * Shapes and dtypes come from the recorded output; the values from the
 * arguments. empty* is zero-filled (torch leaves it uninitialized; any value
 * is correct). empty_permuted's physical layout does not matter: rlx tensors
 * are contiguous in their logical shape, which is all a consumer can see.
 */
#include "import/lower/lower.h"

rlx_status rlx_lower_full(rlx_lower *lw, const rlx_aten_node *n) {
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t) return lw_fail(RLX_ERR_FORMAT, "the output type is not recorded");
  rlx_params p = {.full = {.dtype = t->dtype, .shape = t->shape}};
  const rlx_arg *v = NULL;
  if (lw_is(n, "full") || lw_is(n, "full_like") || lw_is(n, "new_full")) v = lw_arg(n, lw_is(n, "full_like") ? 1 : 2, "fill_value");
  else if (lw_is(n, "scalar_tensor")) v = lw_arg(n, 0, "s");
  else if (lw_is(n, "ones") || lw_is(n, "ones_like") || lw_is(n, "new_ones")) p.full.value = 1, p.full.ivalue = 1;
  if (lw_is(n, "full")) v = lw_arg(n, 1, "fill_value");
  if (v) {
    if (v->kind == RLX_ARG_FLOAT) p.full.value = v->u.f, p.full.ivalue = (int64_t)v->u.f;
    else if (v->kind == RLX_ARG_INT) p.full.value = (double)v->u.i, p.full.ivalue = v->u.i;
    else if (v->kind == RLX_ARG_BOOL) p.full.value = v->u.b, p.full.ivalue = v->u.b;
    else return lw_fail(RLX_ERR_UNSUPPORTED, "the fill value must be a number%s",
                        v->kind == RLX_ARG_SYM ? " (symbolic values are not supported yet)" : "");
  }
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_FULL, &p, NULL, 0));
}

/* arange(end), arange.start(start, end), arange.start_step(start, end, step) */
rlx_status rlx_lower_arange(rlx_lower *lw, const rlx_aten_node *n) {
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t || t->shape.rank != 1) return lw_fail(RLX_ERR_FORMAT, "arange needs a recorded 1-D output");
  const char *ov = lw_overload(n);
  bool has_start = !strncmp(ov, "start", 5);
  rlx_params p = {.arange = {.dtype = t->dtype, .length = t->shape.dims[0], .step = 1, .istep = 1}};
  rlx_status st = RLX_OK;
  if (has_start) {
    if (!(st = lw_float(lw, n, 0, "start", 0.0, &p.arange.start)) && !strcmp(ov, "start_step"))
      st = lw_float(lw, n, 2, "step", 1.0, &p.arange.step);
    if (!st) st = lw_int(lw, n, 0, "start", 0, &p.arange.istart);
    if (!st && !strcmp(ov, "start_step")) st = lw_int(lw, n, 2, "step", 1, &p.arange.istep);
  }
  if (st) { /* float start/step: integer dtypes use them truncated, as torch */
    st = RLX_OK;
    p.arange.istart = (int64_t)p.arange.start;
    p.arange.istep = (int64_t)p.arange.step;
  }
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_ARANGE, &p, NULL, 0));
}
