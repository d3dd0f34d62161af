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

/* Every view-like op: the target shape is the one torch recorded. */
rlx_status rlx_lower_reshape(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t) return lw_fail(RLX_ERR_FORMAT, "the output shape is not recorded");
  if (lw_val(lw, x)->dtype != t->dtype)
    return lw_fail(RLX_ERR_SHAPE, "a view cannot change the dtype");
  return lw_bind(lw, n, lw_reshape(lw, x, &t->shape));
}

static rlx_status emit_permute(rlx_lower *lw, const rlx_aten_node *n, int32_t x, const int32_t *perm) {
  int r = lw_val(lw, x)->shape.rank;
  bool identity = true;
  for (int i = 0; i < r; i++) identity &= perm[i] == i;
  if (identity) return lw_bind(lw, n, x);
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
  for (int i = 0; i < r; i++) {
    int a;
    if ((st = lw_axis(dims[i], r, "argument 'dims'", &a))) return st;
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
  }
  if (r < 2) return lw_bind(lw, n, x);
  int a, b;
  if ((st = lw_axis(d0, r, "argument 'dim0'", &a)) || (st = lw_axis(d1, r, "argument 'dim1'", &b))) return st;
  perm[a] = b;
  perm[b] = a;
  return emit_permute(lw, n, x, perm);
}

rlx_status rlx_lower_expand(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t) return lw_fail(RLX_ERR_FORMAT, "the output shape is not recorded");
  if (rlx_shape_eq(&lw_val(lw, x)->shape, &t->shape)) return lw_bind(lw, n, x);
  rlx_params p = {.shape = {.shape = t->shape}};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_EXPAND, &p, &x, 1));
}

/* Emits x[start:end:step] along axis with Python slice normalization. */
static int32_t emit_slice(rlx_lower *lw, int32_t x, int axis, int64_t start, int64_t end, int64_t step) {
  int64_t d = lw_val(lw, x)->shape.dims[axis];
  if (start < 0) start += d;
  if (end < 0) end += d;
  start = RLX_MIN(RLX_MAX(start, 0), d);
  end = RLX_MIN(RLX_MAX(end, start), d);
  if (step > end - start) step = RLX_MAX(end - start, 1); /* same elements; no overflow later */
  if (start == 0 && end == d && step == 1) return x;
  rlx_params p = {.slice = {.axis = axis, .start = start, .end = end, .step = step}};
  return lw_emit(lw, RLX_OP_SLICE, &p, &x, 1);
}

rlx_status rlx_lower_slice(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dim, start, end, step = 1;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  int r = lw_val(lw, x)->shape.rank;
  if ((st = lw_int(lw, n, 1, "dim", 0, &dim))) return st;
  int a;
  if ((st = lw_axis(dim, r, "argument 'dim'", &a))) return st;
  if (lw_is(n, "narrow")) {
    int64_t len;
    if ((st = lw_int(lw, n, 2, "start", 0, &start)) || (st = lw_int(lw, n, 3, "length", 0, &len))) return st;
    int64_t d = lw_val(lw, x)->shape.dims[a], s0 = start < 0 ? start + d : start;
    if (s0 < 0 || s0 > d || len < 0 || len > d - s0) /* as torch; and start + len cannot overflow */
      return lw_fail(RLX_ERR_SHAPE, "narrow(start=%lld, length=%lld) is out of range for a dim of size %lld",
                     (long long)start, (long long)len, (long long)d);
    start = s0;
    end = start + len;
  } else {
    if ((st = lw_int(lw, n, 2, "start", 0, &start)) || (st = lw_int(lw, n, 3, "end", INT64_MAX, &end)) ||
        (st = lw_int(lw, n, 4, "step", 1, &step)))
      return st;
  }
  if (step < 1) return lw_fail(RLX_ERR_UNSUPPORTED, "slice step %lld must be positive", (long long)step);
  return lw_bind(lw, n, emit_slice(lw, x, a, start, end, step));
}

rlx_status rlx_lower_select(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dim, idx;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (!st) st = lw_int(lw, n, 2, "index", 0, &idx);
  if (st) return st;
  const rlx_value *xv = lw_val(lw, x);
  int a;
  if ((st = lw_axis(dim, xv->shape.rank, "argument 'dim'", &a))) return st;
  int64_t d = xv->shape.dims[a];
  if (idx < -d || idx >= d)
    return lw_fail(RLX_ERR_SHAPE, "select index %lld is out of range for a dim of size %lld",
                   (long long)idx, (long long)d);
  if (idx < 0) idx += d;
  rlx_shape s = xv->shape;
  for (int i = a; i < s.rank - 1; i++) s.dims[i] = s.dims[i + 1];
  s.rank--;
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

/* split / split_with_sizes / chunk / tensor_split: piece sizes come from the
 * recorded output shapes; each piece is a slice. */
rlx_status rlx_lower_split(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dim;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 2, "dim", 0, &dim);
  if (st) return st;
  if (n->out_kind != RLX_OUT_LIST) return lw_fail(RLX_ERR_FORMAT, "split must record a list of outputs");
  int a;
  if ((st = lw_axis(dim, lw_val(lw, x)->shape.rank, "argument 'dim'", &a))) return st;
  int32_t *outs = rlx_pool_alloc(&lw->g->pool, sizeof(int32_t) * (size_t)(n->n_outs + 1));
  if (!outs) return RLX_ERR_OUT_OF_MEMORY;
  int64_t off = 0;
  for (int k = 0; k < n->n_outs; k++) {
    const rlx_tinfo *t = lw_out(n, k);
    if (!t || t->shape.rank != lw_val(lw, x)->shape.rank)
      return lw_fail(RLX_ERR_FORMAT, "split output %d has no usable recorded shape", k);
    int64_t len = t->shape.dims[a];
    outs[k] = emit_slice(lw, x, a, off, off + len, 1);
    if (outs[k] < 0) return rlx_last_status();
    off += len;
  }
  return lw_bind_multi(lw, n, outs, n->n_outs);
}

rlx_status rlx_lower_unbind(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dim;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (st) return st;
  const rlx_value *xv = lw_val(lw, x);
  int a;
  if ((st = lw_axis(dim, xv->shape.rank, "argument 'dim'", &a))) return st;
  int64_t d = xv->shape.dims[a];
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
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_ints(lw, n, 1, lw_is(n, "constant_pad_nd") || lw_is(n, "pad") ? "pad" : "padding",
                        pads, 2 * RLX_MAX_RANK, &cnt);
  if (st) return st;
  int r = lw_val(lw, x)->shape.rank;
  if (cnt % 2 || cnt / 2 > r) return lw_fail(RLX_ERR_SHAPE, "%d pad values for a rank-%d tensor", cnt, r);
  rlx_params p;
  memset(&p, 0, sizeof p);
  p.pad.mode = RLX_PAD_CONSTANT;
  if (lw_is(n, "constant_pad_nd")) {
    if ((st = lw_float(lw, n, 2, "value", 0.0, &p.pad.value))) return st;
  } else if (lw_is(n, "pad")) {
    const rlx_arg *m = lw_arg(n, 2, "mode");
    const char *mode = m && m->kind == RLX_ARG_STR ? m->u.s : "constant";
    if (!strcmp(mode, "reflect")) p.pad.mode = RLX_PAD_REFLECT;
    else if (!strcmp(mode, "replicate")) p.pad.mode = RLX_PAD_REPLICATE;
    else if (!strcmp(mode, "circular")) p.pad.mode = RLX_PAD_CIRCULAR;
    else if (strcmp(mode, "constant")) return lw_fail(RLX_ERR_UNSUPPORTED, "pad mode '%s'", mode);
    if ((st = lw_float(lw, n, 3, "value", 0.0, &p.pad.value))) return st;
  } else {
    p.pad.mode = lw_is(n, "reflection_pad1d") || lw_is(n, "reflection_pad2d") ||
                 lw_is(n, "reflection_pad3d") ? RLX_PAD_REFLECT : RLX_PAD_REPLICATE;
  }
  for (int i = 0; i < cnt / 2; i++) {
    p.pad.lo[r - 1 - i] = pads[2 * i];
    p.pad.hi[r - 1 - i] = pads[2 * i + 1];
  }
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_PAD, &p, &x, 1));
}
