/*
 * scatter.c — lowering of element-wise gather and the write-side indexing
 * ops: gather, scatter (.src, .value, .reduce, .value_reduce), scatter_add,
 * scatter_reduce, index_reduce, index_copy, index_put / _unsafe_index_put,
 * masked_scatter, select_scatter, slice_scatter, and _embedding_bag.
 */
#include "import/lower/lower.h"

static rlx_status need_index(rlx_lower *lw, int32_t v) {
  rlx_dtype t = lw_val(lw, v)->dtype;
  if (!rlx_dtype_is_int(t) || t == RLX_DTYPE_BOOL)
    return lw_fail(RLX_ERR_UNSUPPORTED, "index tensors must be integers, got %s", rlx_dtype_name(t));
  return RLX_OK;
}

rlx_status rlx_lower_gather(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, idx;
  int64_t dim;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (!st) st = lw_tensor(lw, n, 2, "index", &idx);
  if (!st) st = need_index(lw, idx);
  if (st) return st;
  int a;
  if ((st = lw_axis(dim, lw_val(lw, x)->shape.rank, "argument 'dim'", &a))) return st;
  rlx_params p = {.scatter = {.axis = a}};
  int32_t in[2] = {x, idx};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_GATHER_ELEMENTS, &p, in, 2));
}

static rlx_status reduce_name(const char *s, rlx_scatter_reduce *r) {
  static const struct {
    const char *name;
    rlx_scatter_reduce r;
  } map[] = {{"sum", RLX_SCATTER_ADD}, {"add", RLX_SCATTER_ADD},   {"prod", RLX_SCATTER_MUL},
             {"multiply", RLX_SCATTER_MUL}, {"mean", RLX_SCATTER_MEAN}, {"amax", RLX_SCATTER_AMAX},
             {"amin", RLX_SCATTER_AMIN}};
  for (size_t i = 0; i < RLX_COUNTOF(map); i++)
    if (!strcmp(s, map[i].name)) return *r = map[i].r, RLX_OK;
  return lw_fail(RLX_ERR_UNSUPPORTED, "scatter reduce '%s'", s);
}

/* scatter.src(x, dim, index, src), scatter.value(x, dim, index, value),
 * scatter.reduce(x, dim, index, src, reduce), scatter.value_reduce(...),
 * scatter_add(x, dim, index, src), scatter_reduce.two(x, dim, index, src,
 * reduce, *, include_self) */
rlx_status rlx_lower_scatter(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, idx, src;
  int64_t dim;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (!st) st = lw_tensor(lw, n, 2, "index", &idx);
  if (!st) st = need_index(lw, idx);
  if (st) return st;
  rlx_dtype t = lw_val(lw, x)->dtype;
  const rlx_arg *sa = lw_arg(n, 3, "src");
  if (!sa) sa = lw_arg(n, 3, "value");
  lw_operand op;
  if ((st = lw_operand_of(lw, sa, &op, &src))) return st;
  if (src < 0) { /* a scalar value: a constant tensor of the index's shape */
    rlx_params fp = {.shape = {.shape = lw_val(lw, idx)->shape}};
    int32_t s0 = lw_fill_scalar(lw, sa, t, "argument 'value'");
    src = s0 < 0 ? -1 : lw_emit(lw, RLX_OP_EXPAND, &fp, &s0, 1);
  } else {
    src = lw_cast(lw, src, t);
  }
  if (src < 0) return rlx_last_status();
  rlx_params p = {.scatter = {.reduce = RLX_SCATTER_NONE, .include_self = true}};
  if (lw_is(n, "scatter_add")) {
    p.scatter.reduce = RLX_SCATTER_ADD;
  } else if (lw_is(n, "scatter_reduce") || !strcmp(lw_overload(n), "reduce") ||
             !strcmp(lw_overload(n), "value_reduce")) {
    const rlx_arg *r = lw_arg(n, 4, "reduce");
    if (!r || r->kind != RLX_ARG_STR) return lw_fail(RLX_ERR_FORMAT, "scatter reduce mode is missing");
    if ((st = reduce_name(r->u.s, &p.scatter.reduce))) return st;
    if (lw_is(n, "scatter_reduce") && (st = lw_bool(lw, n, 5, "include_self", true, &p.scatter.include_self)))
      return st;
  }
  int a;
  if ((st = lw_axis(dim, lw_val(lw, x)->shape.rank, "argument 'dim'", &a))) return st;
  p.scatter.axis = a;
  int32_t in[3] = {x, idx, src};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_SCATTER, &p, in, 3));
}

/* index_reduce(self, dim, index [L], source, reduce, *, include_self=True):
 * scatter_reduce along dim with the index broadcast over source's shape
 * (prod, mean, amax, amin; mean counts self when include_self). */
rlx_status rlx_lower_index_reduce(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, idx, src;
  int64_t dim;
  rlx_params p = {.scatter = {.include_self = true}};
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (!st) st = lw_tensor(lw, n, 2, "index", &idx);
  if (!st) st = need_index(lw, idx);
  if (!st) st = lw_tensor(lw, n, 3, "source", &src);
  if (!st) st = lw_bool(lw, n, -1, "include_self", true, &p.scatter.include_self);
  if (st) return st;
  const rlx_arg *r = lw_arg(n, 4, "reduce");
  if (!r || r->kind != RLX_ARG_STR) return lw_fail(RLX_ERR_FORMAT, "index_reduce reduce mode is missing");
  if ((st = reduce_name(r->u.s, &p.scatter.reduce))) return st;
  if (p.scatter.reduce == RLX_SCATTER_ADD) /* torch: "reduce argument must be either prod, mean, amax or amin" */
    return lw_fail(RLX_ERR_UNSUPPORTED, "index_reduce reduce '%s'", r->u.s);
  int a;
  if ((st = lw_axis(dim, lw_val(lw, x)->shape.rank, "argument 'dim'", &a))) return st;
  const rlx_shape x0 = lw_val(lw, x)->shape;
  rlx_shape one = {.rank = 1, .dims = {1}};
  if (x0.rank == 0 && lw_val(lw, src)->shape.rank == 0) { /* a 0-d input: as a 1-element vector */
    x = lw_reshape(lw, x, &one), src = lw_reshape(lw, src, &one), a = 0;
    if (x < 0 || src < 0) return rlx_last_status();
  }
  const rlx_shape xs = lw_val(lw, x)->shape, ss = lw_val(lw, src)->shape, is = lw_val(lw, idx)->shape;
  if (xs.rank == 0 || ss.rank != xs.rank || is.rank > 1)
    return lw_fail(RLX_ERR_SHAPE, "index_reduce needs a 1-D index and a source of the input's rank (ranks: input %d, "
                   "index %d, source %d)", xs.rank, is.rank, ss.rank);
  rlx_shape line = {.rank = xs.rank};
  for (int i = 0; i < xs.rank; i++) line.dims[i] = i == a ? ss.dims[a] : 1;
  rlx_params ep = {.shape = {.shape = ss}};
  int32_t il = lw_reshape(lw, idx, &line);
  int32_t in[3] = {x, il < 0 ? -1 : lw_emit(lw, RLX_OP_EXPAND, &ep, &il, 1), lw_cast(lw, src, lw_val(lw, x)->dtype)};
  if (in[1] < 0 || in[2] < 0) return rlx_last_status();
  p.scatter.axis = a;
  return lw_bind(lw, n, lw_reshape(lw, lw_emit(lw, RLX_OP_SCATTER, &p, in, 3), &x0));
}

/* index_copy(self, dim, index [L], source): self with its slices index[j]
 * along dim replaced by source's slice j; an index_put on that axis. */
rlx_status rlx_lower_index_copy(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, idx, src;
  int64_t dim;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (!st) st = lw_tensor(lw, n, 2, "index", &idx);
  if (!st) st = need_index(lw, idx);
  if (!st) st = lw_tensor(lw, n, 3, "source", &src);
  if (st) return st;
  int r = lw_val(lw, x)->shape.rank, a;
  if ((st = lw_axis(dim, r, "argument 'dim'", &a))) return st;
  if (r == 0 || lw_val(lw, idx)->shape.rank > 1) /* torch: "index_copy_(): Index should have dimension 1 or 0" */
    return lw_fail(RLX_ERR_SHAPE, "index_copy needs an input of rank >= 1 and an index of rank <= 1");
  rlx_shape one = {.rank = 1, .dims = {1}};
  if (lw_val(lw, idx)->shape.rank == 0) idx = lw_reshape(lw, idx, &one);
  rlx_params p = {.index_put = {.indexed = 1u << a}};
  int32_t in[3] = {x, lw_cast(lw, src, lw_val(lw, x)->dtype), idx};
  if (in[1] < 0 || in[2] < 0) return rlx_last_status();
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_INDEX_PUT, &p, in, 3));
}

/* x[mask] = vals (or += with accumulate), the mask covering x's leading
 * axes: torch broadcasts vals to [count of trues, *x's trailing axes]. When
 * vals has no axis for the count (or a 1 there), every selected position
 * gets the same trailing values, so the output is where(mask, vals, x)
 * (x + vals for accumulate: positions of a mask are distinct), a static
 * shape; vals with one row per true element are data-dependent. */
static rlx_status lower_mask_put(rlx_lower *lw, const rlx_aten_node *n, int32_t x, int32_t mask, int32_t vals,
                                 bool acc) {
  const rlx_value *xv = lw_val(lw, x), *m = lw_val(lw, mask);
  rlx_shape vs = lw_val(lw, vals)->shape;
  if (!rlx_shape_is_symbolic(&vs) && rlx_shape_numel(&vs) == 1) vs.rank = 0; /* one value fills, of any rank */
  int k = m->shape.rank, T = xv->shape.rank - k;
  if (T < 0) return lw_fail(RLX_ERR_SHAPE, "index_put: a rank-%d mask for a rank-%d tensor", k, xv->shape.rank);
  if (vs.rank > T + 1 || (vs.rank == T + 1 && vs.dims[0] != 1))
    return lw_fail(RLX_ERR_UNSUPPORTED, "index_put with a boolean mask and one value per true element (a "
                   "data-dependent count); values that broadcast over the selected elements are supported");
  rlx_shape ms = xv->shape, bs = {.rank = xv->shape.rank};
  for (int i = k; i < ms.rank; i++) ms.dims[i] = 1; /* mask covers the leading axes */
  int drop = vs.rank == T + 1; /* the count axis, of size 1 */
  for (int i = 0; i < bs.rank; i++) {
    int j = i - (bs.rank - (vs.rank - drop)) + drop; /* right-aligned within the trailing axes */
    bs.dims[i] = i >= k && j >= drop ? vs.dims[j] : 1;
  }
  int32_t w[3] = {lw_reshape(lw, mask, &ms), lw_reshape(lw, vals, &bs), x};
  if (w[0] < 0 || w[1] < 0) return rlx_last_status();
  if (acc && (w[1] = lw_binary(lw, RLX_BINARY_ADD, x, w[1])) < 0) return rlx_last_status();
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_WHERE, NULL, w, 3));
}

/* index_put(x, indices, values, accumulate). A single boolean mask with
 * values that broadcast over the selected elements is a select
 * (lower_mask_put); one value per true element is data-dependent and
 * rejected. */
rlx_status rlx_lower_index_put(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, vals, list[RLX_MAX_RANK], in[RLX_MAX_RANK + 2];
  int cnt;
  bool acc;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_tensor_list(lw, n, 1, "indices", list, RLX_MAX_RANK, &cnt);
  if (!st) st = lw_tensor(lw, n, 2, "values", &vals);
  if (!st) st = lw_bool(lw, n, 3, "accumulate", false, &acc);
  if (st) return st;
  const rlx_value *xv = lw_val(lw, x);
  vals = lw_cast(lw, vals, xv->dtype);
  if (vals < 0) return rlx_last_status();
  if (cnt == 1 && list[0] >= 0 && lw_val(lw, list[0])->dtype == RLX_DTYPE_BOOL)
    return lower_mask_put(lw, n, x, list[0], vals, acc);
  uint32_t mask = 0;
  int k = 0;
  in[k++] = x;
  in[k++] = vals;
  for (int i = 0; i < cnt; i++) {
    if (list[i] < 0) continue;
    if ((st = need_index(lw, list[i]))) return st;
    mask |= 1u << i;
    in[k++] = list[i];
  }
  if (k == 2) return lw_fail(RLX_ERR_UNSUPPORTED, "index_put without index tensors");
  rlx_params p = {.index_put = {.indexed = mask, .accumulate = acc}};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_INDEX_PUT, &p, in, k));
}

rlx_status rlx_lower_masked_scatter(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, m, s;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_tensor(lw, n, 1, "mask", &m);
  if (!st) st = lw_tensor(lw, n, 2, "source", &s);
  if (st) return st;
  int32_t in[3] = {x, lw_cast(lw, m, RLX_DTYPE_BOOL), lw_cast(lw, s, lw_val(lw, x)->dtype)};
  if (in[1] < 0 || in[2] < 0) return rlx_last_status();
  const rlx_tinfo *t = lw_out(n, 0); /* the output is x broadcast with the mask (torch's expand_outplace) */
  if (t && !rlx_shape_eq(&t->shape, &lw_val(lw, x)->shape)) {
    rlx_params p = {.shape = {.shape = t->shape}};
    if ((in[0] = lw_emit(lw, RLX_OP_EXPAND, &p, &x, 1)) < 0) return rlx_last_status();
  }
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_MASKED_SCATTER, NULL, in, 3));
}

/* select_scatter(x, src, dim, index), slice_scatter(x, src, dim, start, end, step) */
rlx_status rlx_lower_slice_scatter(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, src;
  int64_t dim, step = 1;
  rlx_dim start, end;
  bool select = lw_is(n, "select_scatter");
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_tensor(lw, n, 1, "src", &src);
  if (!st) st = lw_int(lw, n, 2, "dim", 0, &dim);
  if (st) return st;
  const rlx_value *xv = lw_val(lw, x);
  if (xv->shape.rank == 0)
    return lw_fail(RLX_ERR_SHAPE, "%s of a 0-d tensor", select ? "select_scatter" : "slice_scatter");
  int a;
  if ((st = lw_axis(dim, xv->shape.rank, "argument 'dim'", &a))) return st;
  rlx_dim D = xv->shape.dims[a];
  if (select) {
    if ((st = lw_dim(lw, n, 3, "index", 0, &start))) return st;
    if (!rlx_dim_is_sym(start) && !rlx_dim_is_sym(D) && (start < -D || start >= D))
      return lw_fail(RLX_ERR_SHAPE, "select_scatter index %lld out of range", (long long)start);
    if (!rlx_dim_is_sym(start) && start < -RLX_MAX_NUMEL)
      return lw_fail(RLX_ERR_SHAPE, "select_scatter index %lld out of range", (long long)start);
    /* a negative constant counts from the end; bounds of a symbolic one are checked per binding */
    if (!rlx_dim_is_sym(start) && start < 0 && (st = rlx_dim_add(lw_syms(lw), start, D, &start))) return st;
    if ((st = rlx_dim_add(lw_syms(lw), start, 1, &end))) return st;
    rlx_shape s = xv->shape;
    s.dims[a] = 1;
    src = lw_reshape(lw, src, &s);
  } else {
    if ((st = lw_slice_bound(lw, n, 3, "start", 0, &start)) || (st = lw_slice_bound(lw, n, 4, "end", INT64_MAX, &end)) ||
        (st = lw_int_in(lw, n, 5, "step", 1, 1, INT64_MAX, &step)) || (st = lw_slice_normalize(lw, D, &start, &end, &step)))
      return st;
  }
  rlx_params p = {.slice = {.axis = a, .start = start, .end = end, .step = step}};
  int32_t in[2] = {x, lw_cast(lw, src, xv->dtype)};
  if (in[1] < 0) return rlx_last_status();
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_SLICE_SCATTER, &p, in, 2));
}

/* _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
 * per_sample_weights, include_last_offset, padding_idx) -> (output, offset2bag,
 * bag_size, max_indices); rlx computes the output. */
rlx_status rlx_lower_embedding_bag(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t w, ix, off, psw;
  int64_t mode, pad;
  rlx_params p;
  memset(&p, 0, sizeof p);
  rlx_status st = lw_tensor(lw, n, 0, "weight", &w);
  if (!st) st = lw_tensor(lw, n, 1, "indices", &ix);
  if (!st) st = lw_tensor(lw, n, 2, "offsets", &off);
  if (!st) st = lw_int(lw, n, 4, "mode", 0, &mode);
  if (!st) st = lw_opt_tensor(lw, n, 6, "per_sample_weights", &psw);
  if (!st) st = lw_bool(lw, n, 7, "include_last_offset", false, &p.embedding_bag.include_last_offset);
  if (!st) st = lw_int(lw, n, 8, "padding_idx", -1, &pad);
  if (!st) st = lw_check_range(mode, 0, 2, "argument 'mode' (0 sum, 1 mean, 2 max)");
  if (!st && lw_val(lw, w)->shape.rank >= 1) /* -1: none; torch's front-end makes a negative index positive */
    st = lw_check_range(pad, -1, lw_val(lw, w)->shape.dims[0] - 1, "argument 'padding_idx'");
  if (st) return st;
  p.embedding_bag.mode = (int)mode;
  p.embedding_bag.padding_idx = pad;
  int32_t in[4] = {w, ix, off, psw};
  int32_t y = lw_emit(lw, RLX_OP_EMBEDDING_BAG, &p, in, psw >= 0 ? 4 : 3);
  if (n->out_kind != RLX_OUT_LIST) return lw_bind(lw, n, y);
  if (y < 0) return rlx_last_status();
  int32_t outs[4] = {y, -1, -1, -1};
  return lw_bind_multi(lw, n, outs, RLX_MIN(n->n_outs, 4));
}
