/*
 * histogram.c — lowering of torch.histogram and torch.histogramdd onto the
 * histogramdd op (src/ops/histogram.c):
 *
 *   histogram.bin_ct(self, bins=100, *, range, weight, density)   -> (hist, bin_edges)
 *   histogram.bins_tensor(self, bins, *, weight, density)         -> (hist, bin_edges)
 *   _histogramdd_bin_edges(self, bins[], *, range, weight, density) -> bin_edges[]
 *   _histogramdd_from_bin_cts(self, bins[], *, range, weight, density) -> hist
 *   _histogramdd_from_bin_tensors(self, bins[], *, weight, density) -> hist
 *
 * histogram flattens self to [M, 1] (and weight to [M]); histogramdd reads
 * self [..., D] as [M, D]. Given bin tensors are concatenated into the op's
 * edges input; its edges output is sliced back into one tensor per dim.
 */
#include "import/lower/lower.h"

/* range=[lo0, hi0, lo1, hi1, ...] for D dims, or absent. */
static rlx_status read_range(rlx_lower *lw, const rlx_aten_node *n, int D, rlx_histogramdd_params *p) {
  const rlx_arg *a = lw_resolve(lw, lw_arg(n, -1, "range"));
  if (!a) return RLX_OK;
  if (a->kind != RLX_ARG_LIST || a->u.list.n != 2 * D)
    return lw_fail(RLX_ERR_UNSUPPORTED, "argument 'range' must be a list of %d numbers", 2 * D);
  for (int i = 0; i < 2 * D; i++) {
    const rlx_arg *v = lw_resolve(lw, &a->u.list.items[i]);
    if (v->kind == RLX_ARG_FLOAT) p->range[i] = v->u.f;
    else if (v->kind == RLX_ARG_INT) p->range[i] = (double)v->u.i;
    else return lw_fail(RLX_ERR_UNSUPPORTED, "argument 'range'[%d] must be a number", i);
  }
  for (int d = 0; d < D; d++) /* torch checks these before it looks at the data */
    if (!(p->range[2 * d] <= p->range[2 * d + 1]))
      return lw_fail(RLX_ERR_SHAPE, "argument 'range': min should not exceed max, but got min %g max %g for "
                     "dimension %d", p->range[2 * d], p->range[2 * d + 1], d);
  p->has_range = true;
  return RLX_OK;
}

rlx_status rlx_lower_histogram(rlx_lower *lw, const rlx_aten_node *n) {
  bool dd = !lw_is(n, "histogram"), from_tensors = lw_is(n, "_histogramdd_from_bin_tensors") ||
                                                   !strcmp(lw_overload(n), "bins_tensor");
  int32_t x, w = -1, bins_t[RLX_MAX_RANK];
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_opt_tensor(lw, n, -1, "weight", &w);
  rlx_histogramdd_params p = {.dims = 1, .edges_given = from_tensors};
  if (!st) st = lw_bool(lw, n, -1, "density", false, &p.density);
  if (st) return st;
  const rlx_value *xv = lw_val(lw, x);
  int r = xv->shape.rank, D = 1;
  if (dd) {
    if (r < 2) return lw_fail(RLX_ERR_SHAPE, "histogramdd: input should have at least 2 dimensions, got %d", r);
    int64_t Dd = xv->shape.dims[r - 1];
    if (Dd < 1 || Dd > RLX_MAX_RANK)
      return lw_fail(RLX_ERR_UNSUPPORTED, "histogramdd of %lld dimensions (rlx: 1..%d)", (long long)Dd, RLX_MAX_RANK);
    D = (int)Dd;
  }
  p.dims = D;
  int cnt = 0;
  if (from_tensors) {
    if (dd) st = lw_tensor_list(lw, n, 1, "bins", bins_t, RLX_MAX_RANK, &cnt);
    else st = lw_tensor(lw, n, 1, "bins", &bins_t[0]), cnt = 1;
    if (st) return st;
    if (cnt != D) return lw_fail(RLX_ERR_SHAPE, "argument 'bins' has %d tensors for %d dimensions", cnt, D);
    for (int d = 0; d < D; d++) {
      const rlx_value *b = lw_val(lw, bins_t[d]);
      if (b->shape.rank != 1 || b->shape.dims[0] < 1 || b->dtype != xv->dtype)
        return lw_fail(RLX_ERR_SHAPE, "argument 'bins'[%d] must be a non-empty 1-D %s tensor", d,
                       rlx_dtype_name(xv->dtype));
      p.bins[d] = b->shape.dims[0] - 1;
    }
  } else {
    if (dd) {
      if ((st = lw_ints(lw, n, 1, "bins", p.bins, RLX_MAX_RANK, &cnt))) return st;
      if (cnt != D) return lw_fail(RLX_ERR_SHAPE, "argument 'bins' has %d counts for %d dimensions", cnt, D);
    } else if ((st = lw_int(lw, n, 1, "bins", 100, &p.bins[0]))) {
      return st;
    }
    for (int d = 0; d < D; d++)
      if (p.bins[d] < 1 || p.bins[d] > RLX_MAX_NUMEL)
        return lw_fail(RLX_ERR_SHAPE, "argument 'bins': bins must be > 0, but got %lld for dimension %d",
                       (long long)p.bins[d], d);
    if ((st = read_range(lw, n, D, &p))) return st;
  }
  /* x as [M, D], weight as [M] */
  rlx_dim M = 1;
  for (int i = 0; i < (dd ? r - 1 : r); i++) M *= xv->shape.dims[i];
  rlx_shape xs = {2, {M, D}}, ws = {1, {M}};
  int32_t ins[3] = {lw_reshape(lw, x, &xs), -1, -1};
  if (ins[0] < 0) return rlx_last_status();
  if (w >= 0) {
    const rlx_value *wv = lw_val(lw, w);
    if (wv->dtype != xv->dtype || rlx_shape_numel(&wv->shape) != M)
      return lw_fail(RLX_ERR_SHAPE, "argument 'weight' must be %s with %lld elements (the input's shape %s)",
                     rlx_dtype_name(xv->dtype), (long long)M, dd ? "without its last dimension" : "");
    if ((ins[2] = lw_reshape(lw, w, &ws)) < 0) return rlx_last_status();
  }
  if (from_tensors) {
    rlx_params cp = {.axis = {.axis = 0}};
    if ((ins[1] = D == 1 ? bins_t[0] : lw_emit(lw, RLX_OP_CONCAT, &cp, bins_t, D)) < 0) return rlx_last_status();
  }
  bool want_edges = lw_is(n, "_histogramdd_bin_edges") || !dd;
  int32_t node = lw_emit_node(lw, RLX_OP_HISTOGRAMDD, &(rlx_params){.histogramdd = p}, ins, 3, want_edges ? 2 : 1);
  if (node < 0) return rlx_last_status();
  int32_t hist = lw->g->nodes[node].out[0];
  if (lw_is(n, "_histogramdd_from_bin_cts") || lw_is(n, "_histogramdd_from_bin_tensors")) return lw_bind(lw, n, hist);
  int32_t edges = lw->g->nodes[node].out[1], outs[RLX_MAX_RANK + 1];
  if (!dd) {
    outs[0] = hist, outs[1] = edges;
    return lw_bind_multi(lw, n, outs, 2);
  }
  for (int d = 0, o = 0; d < D; o += (int)(p.bins[d] + 1), d++) { /* one edges tensor per dim */
    rlx_params sp = {.slice = {.axis = 0, .start = o, .end = o + p.bins[d] + 1, .step = 1}};
    if ((outs[d] = lw_emit(lw, RLX_OP_SLICE, &sp, &edges, 1)) < 0) return rlx_last_status();
  }
  return lw_bind_multi(lw, n, outs, D);
}
