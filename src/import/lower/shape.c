/*
 * shape.c — lowering of no-ops, aliases, dtype conversions and shape / data
 * movement ops (view family, permute, transpose, expand, slice, select, cat,
 * stack, split family, unbind, pads).
 */
#include "import/lower/lower.h"

rlx_status rlx_lower_noop(rlx_lower *lw, const rlx_aten_node *n) {
  (void)lw, (void)n;
  return RLX_OK;
}

rlx_status rlx_lower_alias(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  return st ? st : lw_bind(lw, n, x);
}

rlx_status rlx_lower_dropout(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  bool train;
  double prob;
  rlx_status st = lw_tensor(lw, n, 0, "input", &x);
  if (!st) st = lw_float(lw, n, 1, "p", 0.5, &prob);
  if (!st) st = lw_bool(lw, n, 2, "train", false, &train);
  if (st) return st;
  if (train && prob != 0) return lw_fail(RLX_ERR_UNSUPPORTED, "dropout in training mode is random; export the "
                            "model in eval() mode");
  if (n->out_kind == RLX_OUT_LIST) { /* native_dropout: (output, mask) */
    int32_t outs[2] = {x, -1};
    if (lw_out_used(lw, n, 1)) {
      const rlx_tinfo *t = lw_out(n, 1);
      if (!t) return lw_fail(RLX_ERR_FORMAT, "output 1 (the mask) is used but its type is not recorded");
      rlx_params p = {.full = {.dtype = RLX_DTYPE_BOOL, .shape = t->shape, .value = 1, .ivalue = 1}};
      outs[1] = lw_emit(lw, RLX_OP_FULL, &p, NULL, 0);
    }
    return lw_bind_multi(lw, n, outs, 2);
  }
  return lw_bind(lw, n, x);
}

rlx_status rlx_lower_to_copy(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t) return lw_fail(RLX_ERR_FORMAT, "the output type is not recorded");
  return lw_bind(lw, n, lw_cast(lw, x, t->dtype));
}

/* A size list argument of view / reshape / unflatten (a single int counts as
 * a list of one), checked as torch's infer_size: entries >= -1, at most one
 * -1, standing for numel / (the product of the others), which must be a
 * whole non-zero division. When every entry is known (symbolic entries
 * without a recorded value are not) the resulting dims must be the `want`
 * ones torch recorded. `what` names the argument. */
static rlx_status check_sizes(rlx_lower *lw, const rlx_arg *a, const char *what, int64_t numel,
                              const int64_t *want, int want_n) {
  a = lw_resolve(lw, a);
  if (!a || (a->kind != RLX_ARG_LIST && a->kind != RLX_ARG_INT)) return RLX_OK;
  int cnt = a->kind == RLX_ARG_INT ? 1 : a->u.list.n, infer = -1;
  bool known = true, ok = true;
  int64_t prod = 1, dims[RLX_MAX_RANK];
  for (int i = 0; i < cnt; i++) {
    const rlx_arg *e = a->kind == RLX_ARG_INT ? a : lw_resolve(lw, &a->u.list.items[i]);
    if (e->kind != RLX_ARG_INT) {
      known = false;
      continue;
    }
    int64_t v = e->u.i;
    if (v < -1) return lw_fail(RLX_ERR_SHAPE, "%s[%d] is %lld; a size must be >= -1", what, i, (long long)v);
    if (v == -1 && infer >= 0)
      return lw_fail(RLX_ERR_SHAPE, "%s has -1 at [%d] and [%d]; only one size can be inferred", what, infer, i);
    if (v == -1) infer = i;
    else prod = lw_mul64(prod, v, &ok);
    if (i < RLX_MAX_RANK) dims[i] = v;
  }
  if (!ok) return lw_fail(RLX_ERR_SHAPE, "the product of %s overflows", what);
  if (!known) return RLX_OK;
  if (infer >= 0 && prod == 0)
    return lw_fail(RLX_ERR_SHAPE, "%s: the -1 at [%d] is ambiguous next to a zero size (%lld elements)", what,
                   infer, (long long)numel);
  if (infer >= 0 ? numel % prod != 0 : numel != prod)
    return lw_fail(RLX_ERR_SHAPE, "%s does not fit %lld elements", what, (long long)numel);
  if (infer >= 0 && infer < RLX_MAX_RANK) dims[infer] = numel / prod;
  bool same = cnt == want_n;
  for (int i = 0; same && i < cnt; i++) same = dims[i] == want[i];
  if (!same) return lw_fail(RLX_ERR_SHAPE, "%s disagrees with the shape torch recorded", what);
  return RLX_OK;
}

/* Checks the dims arguments of unsqueeze / squeeze / flatten / unflatten /
 * view / reshape against the input shape xs and the recorded output rs. */
static rlx_status check_view_args(rlx_lower *lw, const rlx_aten_node *n, const rlx_shape *xs, const rlx_shape *rs) {
  int r = xs->rank, r1 = RLX_MAX(r, 1);
  bool sym = rlx_shape_is_symbolic(xs) || rlx_shape_is_symbolic(rs);
  int64_t numel = sym ? 0 : rlx_shape_numel(xs), d;
  rlx_status st = RLX_OK;
  if (lw_is(n, "unsqueeze") || lw_is(n, "unsqueeze_copy"))
    return lw_int_in(lw, n, 1, "dim", 0, -(int64_t)r - 1, r, &d);
  if (lw_is(n, "squeeze") || lw_is(n, "squeeze_copy")) {
    int64_t dims[RLX_MAX_RANK];
    int cnt;
    if ((st = lw_ints(lw, n, 1, "dim", dims, RLX_MAX_RANK, &cnt))) return st;
    for (int i = 0; i < cnt && !st; i++) st = lw_check_range(dims[i], -r1, r1 - 1, "argument 'dim'");
    return st;
  }
  if (lw_is(n, "flatten")) {
    int64_t s, e;
    if ((st = lw_int_in(lw, n, 1, "start_dim", 0, -r1, r1 - 1, &s)) ||
        (st = lw_int_in(lw, n, 2, "end_dim", -1, -r1, r1 - 1, &e)))
      return st;
    if ((s < 0 ? s + r1 : s) > (e < 0 ? e + r1 : e))
      return lw_fail(RLX_ERR_SHAPE, "flatten: 'start_dim' %lld comes after 'end_dim' %lld", (long long)s,
                     (long long)e);
    return RLX_OK;
  }
  if (lw_is(n, "unflatten")) {
    if ((st = lw_int_in(lw, n, 1, "dim", 0, -r1, r1 - 1, &d))) return st;
    int a = r ? (int)(d < 0 ? d + r : d) : 0, k = rs->rank - r + 1; /* the recorded sizes start at a */
    if (k < 0 || a + k > rs->rank || sym) return RLX_OK; /* lw_bind reports the shape */
    return check_sizes(lw, lw_arg(n, 2, "sizes"), "argument 'sizes'", r ? xs->dims[a] : 1, rs->dims + a, k);
  }
  /* symbolic: the target is the recorded symbolic shape, and the reshape's
   * infer proves (or checks per binding) that the element counts agree */
  if (sym) return RLX_OK;
  if (lw_is(n, "view") || lw_is(n, "_unsafe_view") || lw_is(n, "view_copy") || lw_is(n, "_reshape_alias"))
    return check_sizes(lw, lw_arg(n, 1, "size"), "argument 'size'", numel, rs->dims, rs->rank);
  if (lw_is(n, "reshape"))
    return check_sizes(lw, lw_arg(n, 1, "shape"), "argument 'shape'", numel, rs->dims, rs->rank);
  return RLX_OK;
}

/* view.dtype(x, dtype): x's bytes as another dtype (a bitcast node, issue
 * 11); the shape is the recorded one, which the bitcast's infer checks
 * against the element sizes. */
static rlx_status lower_view_dtype(rlx_lower *lw, const rlx_aten_node *n, int32_t x, const rlx_tinfo *t) {
  int dt;
  rlx_status st = lw_dtype(lw, n, 1, "dtype", -1, &dt);
  if (st) return st;
  if (dt != (int)t->dtype)
    return lw_fail(RLX_ERR_FORMAT, "argument 'dtype' is %s but the output is recorded as %s",
                   dt < 0 ? "missing" : rlx_dtype_name((rlx_dtype)dt), rlx_dtype_name(t->dtype));
  if (lw_symbolic(lw, x)) return lw_fail(RLX_ERR_UNSUPPORTED, "view(dtype) of a tensor with a symbolic shape");
  if (lw_val(lw, x)->dtype == t->dtype) return lw_bind(lw, n, x);
  rlx_params p = {.bitcast = {.to = t->dtype, .shape = t->shape}};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_BITCAST, &p, &x, 1));
}

/* Every view-like op: the target shape is the one torch recorded, after the
 * size and dim arguments are checked as torch checks them. */
rlx_status rlx_lower_reshape(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t) return lw_fail(RLX_ERR_FORMAT, "the output shape is not recorded");
  if (lw_is(n, "view") && !strcmp(lw_overload(n), "dtype")) return lower_view_dtype(lw, n, x, t);
  if (lw_val(lw, x)->dtype != t->dtype)
    return lw_fail(RLX_ERR_SHAPE, "a view cannot change the dtype");
  const rlx_shape xs = lw_val(lw, x)->shape;
  if ((st = check_view_args(lw, n, &xs, &t->shape))) return st;
  return lw_bind(lw, n, lw_reshape(lw, x, &t->shape));
}

static rlx_status emit_permute(rlx_lower *lw, const rlx_aten_node *n, int32_t x, const int32_t *perm) {
  int r = lw_val(lw, x)->shape.rank;
  bool identity = true;
  for (int i = 0; i < r; i++) identity &= perm[i] == i;
  if (identity) return lw_bind(lw, n, x);
  /* A permutation that keeps the order of the axes longer than 1 (moving
   * only axes of size 1: ViT's [1, L, E] -> [L, 1, E]) leaves every element
   * where it was: a reshape, which the memory plan makes an alias, not a
   * copy. A symbolic size is never taken for 1. */
  const rlx_shape *xs = &lw_val(lw, x)->shape;
  bool moves = false;
  for (int i = 0, last = -1; i < r; i++) {
    if (xs->dims[perm[i]] == 1) continue;
    moves |= perm[i] < last;
    last = perm[i];
  }
  if (!moves) {
    rlx_shape to = {.rank = r};
    for (int i = 0; i < r; i++) to.dims[i] = xs->dims[perm[i]];
    return lw_bind(lw, n, lw_reshape(lw, x, &to));
  }
  rlx_params p;
  memset(&p, 0, sizeof p);
  for (int i = 0; i < RLX_MAX_RANK; i++) p.permute.perm[i] = i < r ? perm[i] : -1;
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_PERMUTE, &p, &x, 1));
}

rlx_status rlx_lower_permute(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, perm[RLX_MAX_RANK];
  int64_t dims[RLX_MAX_RANK];
  int cnt;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_ints(lw, n, 1, "dims", dims, RLX_MAX_RANK, &cnt);
  if (st) return st;
  int r = lw_val(lw, x)->shape.rank;
  if (cnt != r) return lw_fail(RLX_ERR_SHAPE, "permute of a rank-%d tensor with %d dims", r, cnt);
  uint32_t seen = 0;
  for (int i = 0; i < r; i++) {
    int a;
    if ((st = lw_axis(dims[i], r, "argument 'dims'", &a))) return st;
    if ((seen >> a) & 1) return lw_fail(RLX_ERR_SHAPE, "'dims'[%d] repeats axis %d", i, a);
    seen |= 1u << a;
    perm[i] = a;
  }
  return emit_permute(lw, n, x, perm);
}

rlx_status rlx_lower_transpose(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, perm[RLX_MAX_RANK];
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  int r = lw_val(lw, x)->shape.rank;
  for (int i = 0; i < r; i++) perm[i] = i;
  int64_t d0 = r - 2, d1 = r - 1; /* t / numpy_T on rank 2 */
  if (lw_is(n, "transpose") || lw_is(n, "transpose_copy")) {
    if ((st = lw_int(lw, n, 1, "dim0", 0, &d0)) || (st = lw_int(lw, n, 2, "dim1", 1, &d1))) return st;
  } else if (lw_is(n, "numpy_T")) {
    for (int i = 0; i < r; i++) perm[i] = r - 1 - i;
    return emit_permute(lw, n, x, perm);
  } else if (r > 2) {
    return lw_fail(RLX_ERR_SHAPE, "t() needs a tensor of rank <= 2, got rank %d", r);
  }
  if (r < 2) return lw_bind(lw, n, x);
  int a, b;
  if ((st = lw_axis(d0, r, "argument 'dim0'", &a)) || (st = lw_axis(d1, r, "argument 'dim1'", &b))) return st;
  perm[a] = b;
  perm[b] = a;
  return emit_permute(lw, n, x, perm);
}

/* The size argument of expand / broadcast_to, checked as torch does: -1
 * keeps an existing dim (never a new leading one), other entries are >= 0;
 * when every entry is known it must give the recorded shape rs. */
static rlx_status check_expand_size(rlx_lower *lw, const rlx_aten_node *n, const rlx_shape *xs, const rlx_shape *rs) {
  const rlx_arg *a = lw_resolve(lw, lw_arg(n, 1, "size"));
  if (!a || a->kind != RLX_ARG_LIST) return RLX_OK;
  int cnt = a->u.list.n, lead = cnt - xs->rank;
  if (lead < 0)
    return lw_fail(RLX_ERR_SHAPE, "argument 'size' has %d entries for a rank-%d tensor", cnt, xs->rank);
  bool known = true, same = cnt == rs->rank;
  for (int i = 0; i < cnt; i++) {
    const rlx_arg *e = lw_resolve(lw, &a->u.list.items[i]);
    if (e->kind != RLX_ARG_INT) {
      known = false;
      continue;
    }
    int64_t v = e->u.i;
    if (v < -1 || (v == -1 && i < lead))
      return lw_fail(RLX_ERR_SHAPE, "argument 'size'[%d] is %lld; it must be >= 0%s", i, (long long)v,
                     i < lead ? " (a new leading dim cannot be -1)" : ", or -1 to keep the dim");
    if (same && (v == -1 ? xs->dims[i - lead] : v) != rs->dims[i]) same = false;
  }
  if (known && !same) return lw_fail(RLX_ERR_SHAPE, "argument 'size' disagrees with the shape torch recorded");
  return RLX_OK;
}

rlx_status rlx_lower_expand(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t) return lw_fail(RLX_ERR_FORMAT, "the output shape is not recorded");
  if ((lw_is(n, "expand") || lw_is(n, "expand_copy") || lw_is(n, "broadcast_to")) && !lw_symbolic(lw, x) &&
      !rlx_shape_is_symbolic(&t->shape) && (st = check_expand_size(lw, n, &lw_val(lw, x)->shape, &t->shape)))
    return st;
  if (rlx_shape_eq(&lw_val(lw, x)->shape, &t->shape)) return lw_bind(lw, n, x);
  rlx_params p = {.shape = {.shape = t->shape}};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_EXPAND, &p, &x, 1));
}

/* Emits x[start:end:step] along axis with Python slice normalization. A
 * symbolic bound or dim is normalized with dim arithmetic: a negative
 * constant counts from the end, and both are clamped to [0, d]. */
rlx_status lw_slice_normalize(rlx_lower *lw, rlx_dim d, rlx_dim *start, rlx_dim *end, int64_t *step) {
  if (!rlx_dim_is_sym(*start) && !rlx_dim_is_sym(*end) && !rlx_dim_is_sym(d)) {
    if (*start < 0) *start += d;
    if (*end < 0) *end += d;
    *start = RLX_MIN(RLX_MAX(*start, 0), d);
    *end = RLX_MIN(RLX_MAX(*end, *start), d);
    if (*step > *end - *start) *step = RLX_MAX(*end - *start, 1); /* same elements; no overflow later */
    return RLX_OK;
  }
  rlx_symtab *t = lw_syms(lw);
  rlx_status st = RLX_OK;
  /* a constant past the end means the end; a negative constant counts from it */
  if (!rlx_dim_is_sym(*start) && *start < 0) st = rlx_dim_add(t, *start, d, start);
  if (!st && !rlx_dim_is_sym(*end) && *end < 0) st = rlx_dim_add(t, *end, d, end);
  if (!st && !rlx_dim_is_sym(*end) && *end >= ((int64_t)1 << 62)) *end = d;
  if (!st) st = rlx_dim_max(t, *start, 0, start);
  if (!st) st = rlx_dim_min(t, *start, d, start);
  if (!st) st = rlx_dim_max(t, *end, *start, end);
  if (!st) st = rlx_dim_min(t, *end, d, end);
  return st;
}

static int32_t emit_slice_dims(rlx_lower *lw, int32_t x, int axis, rlx_dim start, rlx_dim end, int64_t step) {
  rlx_dim d = lw_val(lw, x)->shape.dims[axis];
  if (lw_slice_normalize(lw, d, &start, &end, &step)) return -1;
  if (start == 0 && end == d && step == 1) return x;
  rlx_params p = {.slice = {.axis = axis, .start = start, .end = end, .step = step}};
  return lw_emit(lw, RLX_OP_SLICE, &p, &x, 1);
}

static int32_t emit_slice(rlx_lower *lw, int32_t x, int axis, int64_t start, int64_t end, int64_t step) {
  return emit_slice_dims(lw, x, axis, start, end, step);
}

/* A slice bound: an int (any int64: Python slices clamp, so one below -2^62
 * means the same as -2^62), or a symbolic size. */
rlx_status lw_slice_bound(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, rlx_dim def,
                          rlx_dim *out) {
  const rlx_arg *a = lw_resolve(lw, lw_arg(n, pos, name));
  if (a && a->kind == RLX_ARG_INT) return *out = RLX_MAX(a->u.i, -((int64_t)1 << 62)), RLX_OK;
  return lw_dim(lw, n, pos, name, def, out);
}

rlx_status rlx_lower_slice(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dim, step = 1;
  rlx_dim start, end;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  int r = lw_val(lw, x)->shape.rank;
  if ((st = lw_int(lw, n, 1, "dim", 0, &dim))) return st;
  if (r == 0) return lw_fail(RLX_ERR_SHAPE, "cannot slice a 0-d tensor");
  int a;
  if ((st = lw_axis(dim, r, "argument 'dim'", &a))) return st;
  rlx_dim d = lw_val(lw, x)->shape.dims[a];
  if (lw_is(n, "narrow") || lw_is(n, "narrow_copy")) {
    rlx_dim len;
    if ((st = lw_dim(lw, n, 2, "start", 0, &start)) || (st = lw_dim(lw, n, 3, "length", 0, &len))) return st;
    if (!rlx_dim_is_sym(start) && !rlx_dim_is_sym(len) && !rlx_dim_is_sym(d)) {
      int64_t s0 = start < 0 ? start + d : start;
      if (s0 < 0 || s0 > d || len < 0 || len > d - s0) /* as torch; and start + len cannot overflow */
        return lw_fail(RLX_ERR_SHAPE, "narrow(start=%lld, length=%lld) is out of range for a dim of size %lld",
                       (long long)start, (long long)len, (long long)d);
      start = s0;
      end = start + len;
    } else { /* narrow(start, length) of a symbolic size: [start, start + length), checked per binding */
      if (!rlx_dim_is_sym(start) && start < 0 && (st = rlx_dim_add(lw_syms(lw), start, d, &start))) return st;
      if ((st = rlx_dim_add(lw_syms(lw), start, len, &end))) return st;
      rlx_params p = {.slice = {.axis = a, .start = start, .end = end, .step = 1}};
      return lw_bind(lw, n, lw_emit(lw, RLX_OP_SLICE, &p, &x, 1));
    }
  } else {
    if ((st = lw_slice_bound(lw, n, 2, "start", 0, &start)) || (st = lw_slice_bound(lw, n, 3, "end", INT64_MAX, &end)) ||
        (st = lw_int(lw, n, 4, "step", 1, &step)))
      return st;
  }
  if (step < 1) return lw_fail(RLX_ERR_UNSUPPORTED, "slice step %lld must be positive", (long long)step);
  return lw_bind(lw, n, emit_slice_dims(lw, x, a, start, end, step));
}

rlx_status rlx_lower_select(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dim, idx;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (!st) st = lw_int(lw, n, 2, "index", 0, &idx);
  if (st) return st;
  const rlx_value *xv = lw_val(lw, x);
  if (xv->shape.rank == 0) return lw_fail(RLX_ERR_SHAPE, "select of a 0-d tensor");
  int a;
  if ((st = lw_axis(dim, xv->shape.rank, "argument 'dim'", &a))) return st;
  rlx_dim d = xv->shape.dims[a], i0 = idx, i1;
  if (!rlx_dim_is_sym(d) && (idx < -d || idx >= d))
    return lw_fail(RLX_ERR_SHAPE, "select index %lld is out of range for a dim of size %lld",
                   (long long)idx, (long long)d);
  rlx_shape s = xv->shape;
  for (int i = a; i < s.rank - 1; i++) s.dims[i] = s.dims[i + 1];
  s.rank--;
  if (rlx_dim_is_sym(d)) { /* x[..., -1] of a symbolic dim: [d - 1, d); bounds checked per binding */
    if (idx < 0 && (st = rlx_dim_add(lw_syms(lw), idx, d, &i0))) return st;
    if ((st = rlx_dim_add(lw_syms(lw), i0, 1, &i1))) return st;
    rlx_params p = {.slice = {.axis = a, .start = i0, .end = i1, .step = 1}};
    return lw_bind(lw, n, lw_reshape(lw, lw_emit(lw, RLX_OP_SLICE, &p, &x, 1), &s));
  }
  if (idx < 0) idx += d;
  return lw_bind(lw, n, lw_reshape(lw, emit_slice(lw, x, a, idx, idx + 1, 1), &s));
}

#define MAX_CAT 4096

rlx_status rlx_lower_cat(rlx_lower *lw, const rlx_aten_node *n) {
  static _Thread_local int32_t xs[MAX_CAT];
  int cnt;
  int64_t dim;
  rlx_status st = lw_tensor_list(lw, n, 0, "tensors", xs, MAX_CAT, &cnt);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t) return lw_fail(RLX_ERR_FORMAT, "the output type is not recorded");
  int kept = 0;
  for (int i = 0; i < cnt; i++) {
    if (xs[i] < 0) return lw_fail(RLX_ERR_FORMAT, "cat of a None tensor");
    const rlx_value *v = lw_val(lw, xs[i]);
    if (v->shape.rank == 1 && v->shape.dims[0] == 0 && t->shape.rank != 1) continue; /* legacy empty */
    xs[kept++] = lw_cast(lw, xs[i], t->dtype);
    if (xs[kept - 1] < 0) return rlx_last_status();
  }
  if (!kept) return lw_fail(RLX_ERR_SHAPE, "cat of only empty tensors");
  if (kept == 1) return lw_bind(lw, n, xs[0]);
  int a;
  if ((st = lw_axis(dim, lw_val(lw, xs[0])->shape.rank, "argument 'dim'", &a))) return st;
  rlx_params p = {.axis = {.axis = a}};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_CONCAT, &p, xs, kept));
}

rlx_status rlx_lower_stack(rlx_lower *lw, const rlx_aten_node *n) {
  static _Thread_local int32_t xs[MAX_CAT];
  int cnt;
  int64_t dim;
  rlx_status st = lw_tensor_list(lw, n, 0, "tensors", xs, MAX_CAT, &cnt);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t || !cnt) return lw_fail(RLX_ERR_FORMAT, "stack needs tensors and a recorded output");
  int a;
  if ((st = lw_axis(dim, t->shape.rank, "argument 'dim'", &a))) return st;
  if (t->shape.dims[a] != cnt)
    return lw_fail(RLX_ERR_SHAPE, "stack of %d tensors recorded with %lld along dim %d", cnt,
                   (long long)t->shape.dims[a], a);
  for (int i = 0; i < cnt; i++) { /* torch: every tensor has the shape of the result without dim a */
    if (xs[i] < 0) return lw_fail(RLX_ERR_FORMAT, "stack of a None tensor");
    const rlx_shape *is = &lw_val(lw, xs[i])->shape;
    bool same = is->rank == t->shape.rank - 1;
    for (int k = 0; same && k < is->rank; k++) same = is->dims[k] == t->shape.dims[k < a ? k : k + 1];
    if (!same) {
      char b1[128], b2[128];
      return lw_fail(RLX_ERR_SHAPE, "stack: tensor %d is %s, which the recorded result %s without dim %d is not",
                     i, rlx_shape_str(is, b1, sizeof b1), rlx_shape_str(&t->shape, b2, sizeof b2), a);
    }
  }
  for (int i = 0; i < cnt; i++) {
    rlx_shape s = t->shape;
    s.dims[a] = 1;
    xs[i] = lw_reshape(lw, lw_cast(lw, xs[i], t->dtype), &s);
    if (xs[i] < 0) return rlx_last_status();
  }
  if (cnt == 1) return lw_bind(lw, n, xs[0]);
  rlx_params p = {.axis = {.axis = a}};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_CONCAT, &p, xs, cnt));
}

/* The split arguments, checked as torch checks them: split's size >= 0
 * (0 only for an empty dim), split_with_sizes' sizes >= 0, chunk's count and
 * tensor_split's section count >= 1. */
static rlx_status check_split_args(rlx_lower *lw, const rlx_aten_node *n, int64_t d) {
  int64_t v;
  rlx_status st = RLX_OK;
  if (lw_is(n, "chunk")) return lw_int_in(lw, n, 1, "chunks", 1, 1, INT64_MAX, &v);
  if (lw_is(n, "tensor_split")) {
    const rlx_arg *a = lw_resolve(lw, lw_arg(n, 1, "sections"));
    return a && a->kind == RLX_ARG_INT ? lw_check_range(a->u.i, 1, INT64_MAX, "argument 'sections'") : RLX_OK;
  }
  const rlx_arg *a = lw_resolve(lw, lw_arg(n, 1, "split_size"));
  if (!a) a = lw_resolve(lw, lw_arg(n, 1, "split_sizes"));
  if (a && a->kind == RLX_ARG_INT) {
    if ((st = lw_check_range(a->u.i, 0, INT64_MAX, "argument 'split_size'"))) return st;
    if (a->u.i == 0 && d > 0) return lw_fail(RLX_ERR_SHAPE, "argument 'split_size' is 0 for a dim of size %lld",
                                             (long long)d);
  } else if (a && a->kind == RLX_ARG_LIST) {
    for (int i = 0; i < a->u.list.n; i++) {
      const rlx_arg *e = lw_resolve(lw, &a->u.list.items[i]);
      if (e->kind == RLX_ARG_INT && e->u.i < 0)
        return lw_fail(RLX_ERR_SHAPE, "argument 'split_sizes'[%d] is %lld; sizes must be >= 0", i,
                       (long long)e->u.i);
    }
  }
  return RLX_OK;
}

/* A split of a symbolic dim: each piece is the recorded (symbolic) length,
 * starting where the previous ended; the lengths must add up to the dim. */
static rlx_status split_symbolic(rlx_lower *lw, const rlx_aten_node *n, int32_t x, int a) {
  if (lw_is(n, "tensor_split") && !strcmp(lw_overload(n), "indices"))
    return lw_fail(RLX_ERR_UNSUPPORTED, "tensor_split by indices of a symbolic dim");
  int32_t *outs = rlx_pool_alloc(&lw->g->pool, sizeof(int32_t) * (size_t)(n->n_outs + 1));
  if (!outs) return RLX_ERR_OUT_OF_MEMORY;
  rlx_symtab *t = lw_syms(lw);
  rlx_dim off = 0, d = lw_val(lw, x)->shape.dims[a];
  for (int k = 0; k < n->n_outs; k++) {
    const rlx_tinfo *ti = lw_out(n, k);
    if (!ti || ti->shape.rank != lw_val(lw, x)->shape.rank)
      return lw_fail(RLX_ERR_FORMAT, "split output %d has no usable recorded shape", k);
    rlx_dim end;
    rlx_status st = rlx_dim_add(t, off, ti->shape.dims[a], &end);
    if (st) return st;
    rlx_params p = {.slice = {.axis = a, .start = off, .end = end, .step = 1}};
    outs[k] = off == 0 && end == d ? x : lw_emit(lw, RLX_OP_SLICE, &p, &x, 1);
    if (outs[k] < 0) return rlx_last_status();
    off = end;
  }
  if (!lw_dims_agree(lw, off, d)) {
    char e1[128], e2[128];
    return lw_fail(RLX_ERR_SHAPE, "the split sizes sum to %s but the dim is %s", rlx_dim_str(t, off, e1, sizeof e1),
                   rlx_dim_str(t, d, e2, sizeof e2));
  }
  return lw_bind_multi(lw, n, outs, n->n_outs);
}

/* split / split_with_sizes / chunk / tensor_split: piece sizes come from the
 * recorded output shapes, which must tile the dim; each piece is a slice.
 * tensor_split with indices starts piece k at indices[k-1] (clamped), so its
 * pieces may overlap. */
rlx_status rlx_lower_split(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dim;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 2, "dim", 0, &dim);
  if (st) return st;
  if (n->out_kind != RLX_OUT_LIST) return lw_fail(RLX_ERR_FORMAT, "split must record a list of outputs");
  const rlx_shape xs = lw_val(lw, x)->shape;
  if (xs.rank == 0) return lw_fail(RLX_ERR_SHAPE, "cannot split a 0-d tensor");
  int a;
  if ((st = lw_axis(dim, xs.rank, "argument 'dim'", &a))) return st;
  int64_t d = xs.dims[a];
  if (rlx_dim_is_sym(d) || n->n_outs < 1) return split_symbolic(lw, n, x, a);
  if ((st = check_split_args(lw, n, d))) return st;
  const rlx_arg *ix = NULL;
  if (lw_is(n, "tensor_split") && !strcmp(lw_overload(n), "indices")) {
    ix = lw_resolve(lw, lw_arg(n, 1, "indices"));
    if (!ix || ix->kind != RLX_ARG_LIST || ix->u.list.n + 1 != n->n_outs)
      return lw_fail(RLX_ERR_FORMAT, "tensor_split needs a list of indices, one fewer than its %d outputs",
                     n->n_outs);
  }
  int32_t *outs = rlx_pool_alloc(&lw->g->pool, sizeof(int32_t) * (size_t)(n->n_outs + 1));
  if (!outs) return RLX_ERR_OUT_OF_MEMORY;
  int64_t off = 0;
  bool ok = true;
  for (int k = 0; k < n->n_outs; k++) {
    const rlx_tinfo *t = lw_out(n, k);
    if (!t || t->shape.rank != xs.rank)
      return lw_fail(RLX_ERR_FORMAT, "split output %d has no usable recorded shape", k);
    int64_t len = t->shape.dims[a];
    if (ix && k > 0) { /* a Python slice start: negative counts from the end, then clamped */
      const rlx_arg *e = lw_resolve(lw, &ix->u.list.items[k - 1]);
      if (e->kind != RLX_ARG_INT) return lw_fail(RLX_ERR_UNSUPPORTED, "argument 'indices'[%d] must be an int", k - 1);
      off = e->u.i < 0 ? e->u.i + d : e->u.i;
      off = RLX_MIN(RLX_MAX(off, 0), d);
    }
    int64_t end = lw_add64(off, len, &ok);
    if (!ok || end > d)
      return lw_fail(RLX_ERR_SHAPE, "split output %d ([%lld, %lld + %lld)) runs past the dim of size %lld", k,
                     (long long)off, (long long)off, (long long)len, (long long)d);
    outs[k] = emit_slice(lw, x, a, off, end, 1);
    if (outs[k] < 0) return rlx_last_status();
    off = end;
  }
  if (!ix && off != d)
    return lw_fail(RLX_ERR_SHAPE, "the split sizes sum to %lld but the dim has size %lld", (long long)off,
                   (long long)d);
  return lw_bind_multi(lw, n, outs, n->n_outs);
}

rlx_status rlx_lower_unbind(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dim;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (st) return st;
  const rlx_value *xv = lw_val(lw, x);
  if (xv->shape.rank == 0) return lw_fail(RLX_ERR_SHAPE, "cannot unbind a 0-d tensor");
  int a;
  if ((st = lw_axis(dim, xv->shape.rank, "argument 'dim'", &a))) return st;
  int64_t d = xv->shape.dims[a];
  if (rlx_dim_is_sym(d)) {
    char b[160];
    return lw_fail(RLX_ERR_UNSUPPORTED, "unbind along axis %d of %s: the number of outputs would follow a shape "
                   "symbol; export that axis static", a, rlx_graph_shape_str(lw->g, &xv->shape, b, sizeof b));
  }
  if (n->out_kind != RLX_OUT_LIST || n->n_outs != d) /* also bounds d */
    return lw_fail(RLX_ERR_FORMAT, "unbind of a dim of size %lld must record %lld outputs", (long long)d,
                   (long long)d);
  int32_t *outs = rlx_pool_alloc(&lw->g->pool, sizeof(int32_t) * (size_t)(d + 1));
  if (!outs) return RLX_ERR_OUT_OF_MEMORY;
  rlx_shape s = xv->shape;
  for (int i = a; i < s.rank - 1; i++) s.dims[i] = s.dims[i + 1];
  s.rank--;
  for (int64_t k = 0; k < d; k++) {
    outs[k] = lw_reshape(lw, emit_slice(lw, x, a, k, k + 1, 1), &s);
    if (outs[k] < 0) return rlx_last_status();
  }
  return lw_bind_multi(lw, n, outs, (int)d);
}

/* constant_pad_nd(x, pad, value), pad(x, pad, mode, value), and the
 * reflection/replication pads. `pad` lists (lo, hi) pairs from the last axis. */
rlx_status rlx_lower_pad(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t pads[2 * RLX_MAX_RANK];
  int cnt;
  const char *name = lw_is(n, "constant_pad_nd") || lw_is(n, "pad") ? "pad" : "padding";
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_dims(lw, n, 1, name, pads, 2 * RLX_MAX_RANK, &cnt);
  if (st) return st;
  const rlx_shape xs = lw_val(lw, x)->shape;
  int r = xs.rank;
  if (cnt % 2 || cnt / 2 > r) return lw_fail(RLX_ERR_SHAPE, "%d pad values for a rank-%d tensor", cnt, r);
  rlx_params p;
  memset(&p, 0, sizeof p);
  p.pad.mode = RLX_PAD_CONSTANT;
  int value_pos = -1;
  if (lw_is(n, "constant_pad_nd")) {
    value_pos = 2;
  } else if (lw_is(n, "pad")) {
    const rlx_arg *m = lw_arg(n, 2, "mode");
    const char *mode = m && m->kind == RLX_ARG_STR ? m->u.s : "constant";
    if (!strcmp(mode, "reflect")) p.pad.mode = RLX_PAD_REFLECT;
    else if (!strcmp(mode, "replicate")) p.pad.mode = RLX_PAD_REPLICATE;
    else if (!strcmp(mode, "circular")) p.pad.mode = RLX_PAD_CIRCULAR;
    else if (strcmp(mode, "constant")) return lw_fail(RLX_ERR_UNSUPPORTED, "pad mode '%s'", mode);
    value_pos = 3;
  } else {
    p.pad.mode = lw_is(n, "reflection_pad1d") || lw_is(n, "reflection_pad2d") ||
                 lw_is(n, "reflection_pad3d") ? RLX_PAD_REFLECT : RLX_PAD_REPLICATE;
  }
  const rlx_arg *va = value_pos >= 0 ? lw_arg(n, value_pos, "value") : NULL;
  if (va) { /* the fill value, converted to the tensor's dtype as torch's fill_ */
    rlx_dtype t = lw_val(lw, x)->dtype;
    int64_t iv;
    if ((st = lw_fill_value(lw, va, t, "argument 'value'", &p.pad.value, &iv))) return st;
    if (!rlx_dtype_is_float(t) && (iv > ((int64_t)1 << 53) || iv < -((int64_t)1 << 53)))
      return lw_fail(RLX_ERR_UNSUPPORTED, "argument 'value' (%lld): rlx pads %s tensors with values up to 2^53 "
                     "in magnitude", (long long)iv, rlx_dtype_name(t));
  }
  for (int i = 0; i < cnt / 2; i++) {
    int ax = r - 1 - i;
    int64_t d = xs.dims[ax], lo = pads[2 * i], hi = pads[2 * i + 1];
    if (rlx_dim_is_sym(d) || rlx_dim_is_sym(lo) || rlx_dim_is_sym(hi)) { /* checked per binding */
      p.pad.lo[ax] = lo;
      p.pad.hi[ax] = hi;
      continue;
    }
    bool ok = true;
    int64_t size = lw_add64(lw_add64(d, lo, &ok), hi, &ok);
    /* as torch: negative pads crop at most the whole dim, and the result is
     * not negative; positive ones are bounded by the element limit */
    if (lo < -d || hi < -d || !ok || size < 0 || size > RLX_MAX_NUMEL)
      return lw_fail(RLX_ERR_SHAPE, "'%s'[%d, %d] = (%lld, %lld) on axis %d of size %lld gives a size out of "
                     "[0, 2^48]", name, 2 * i, 2 * i + 1, (long long)lo, (long long)hi, ax, (long long)d);
    p.pad.lo[ax] = lo;
    p.pad.hi[ax] = hi;
  }
  bool none = true; /* no padding at all (swin's windows when the image divides into them): x itself */
  for (int i = 0; i < RLX_MAX_RANK; i++) none = none && p.pad.lo[i] == 0 && p.pad.hi[i] == 0;
  if (none) return lw_bind(lw, n, x);
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_PAD, &p, &x, 1));
}
