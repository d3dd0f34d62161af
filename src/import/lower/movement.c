/*
 * movement.c — lowering of rearrangements built from the core op set: flip,
 * roll, repeat/tile, tril/triu (select against a constant mask), unfold,
 * diagonal (advanced indexing with constant indices), pixel_shuffle /
 * pixel_unshuffle (reshape, permute, reshape), as_strided, col2im, sort /
 * argsort / topk, fill, copy, empty_strided.
 */
#include "import/lower/lower.h"

static rlx_status need_out(const rlx_aten_node *n, const rlx_tinfo **t) {
  *t = lw_out(n, 0);
  return *t ? RLX_OK : lw_fail(RLX_ERR_FORMAT, "the output type is not recorded");
}

static int32_t emit_permute(rlx_lower *lw, int32_t x, const int *perm) {
  rlx_params p;
  memset(&p, 0, sizeof p);
  int r = lw_val(lw, x)->shape.rank;
  for (int i = 0; i < RLX_MAX_RANK; i++) p.permute.perm[i] = i < r ? perm[i] : -1;
  return lw_emit(lw, RLX_OP_PERMUTE, &p, &x, 1);
}

static int32_t emit_slice(rlx_lower *lw, int32_t x, int axis, int64_t start, int64_t end) {
  rlx_params p = {.slice = {.axis = axis, .start = start, .end = end, .step = 1}};
  return lw_emit(lw, RLX_OP_SLICE, &p, &x, 1);
}

/* An int64 constant of the given shape filled by f(i, ctx) at flat index i;
 * the shape is checked (its sizes come from the file). */
static int32_t const_i64(rlx_lower *lw, const rlx_shape *s, int64_t (*f)(int64_t, const int64_t *),
                         const int64_t *ctx) {
  int64_t n;
  char b[128];
  if (!rlx_shape_valid(s, &n))
    return lw_fail(RLX_ERR_SHAPE, "an index table of shape %s is too large", rlx_shape_str(s, b, sizeof b)), -1;
  int64_t *d = rlx_aligned_alloc((size_t)(n ? n : 1) * sizeof(int64_t));
  if (!d) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory"), -1;
  for (int64_t i = 0; i < n; i++) d[i] = f(i, ctx);
  return rlx_graph_add_const_owned(lw->g, RLX_DTYPE_I64, s, d);
}

rlx_status rlx_lower_flip(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dims[RLX_MAX_RANK];
  int cnt;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_ints(lw, n, 1, "dims", dims, RLX_MAX_RANK, &cnt);
  if (st) return st;
  rlx_params p = {.flip = {.axes = 0}};
  for (int i = 0; i < cnt; i++) {
    int a;
    if ((st = lw_axis(dims[i], lw_val(lw, x)->shape.rank, "argument 'dims'", &a))) return st;
    if ((p.flip.axes >> a) & 1) return lw_fail(RLX_ERR_SHAPE, "'dims'[%d] repeats axis %d", i, a);
    if (lw_val(lw, x)->shape.rank) p.flip.axes |= 1u << a;
  }
  if (!p.flip.axes) return lw_bind(lw, n, x);
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_FLIP, &p, &x, 1));
}

/* roll(x, shifts, dims): per axis, concat(x[d-s:], x[:d-s]); no dims rolls the
 * flattened tensor. */
rlx_status rlx_lower_roll(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t shifts[RLX_MAX_RANK], dims[RLX_MAX_RANK];
  int ns, nd;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_ints(lw, n, 1, "shifts", shifts, RLX_MAX_RANK, &ns);
  if (!st) st = lw_ints(lw, n, 2, "dims", dims, RLX_MAX_RANK, &nd);
  if (st) return st;
  rlx_shape orig = lw_val(lw, x)->shape;
  if (nd == 0) { /* flatten, roll axis 0, restore */
    rlx_shape flat = {.rank = 1};
    if ((st = rlx_shape_numel_dim_lw(lw, &orig, &flat.dims[0]))) return st;
    x = lw_reshape(lw, x, &flat);
    dims[0] = 0, nd = 1;
  }
  if (ns != nd) return lw_fail(RLX_ERR_SHAPE, "roll: %d shifts for %d dims", ns, nd);
  for (int i = 0; i < nd && x >= 0; i++) {
    int a;
    if ((st = lw_axis(dims[i], lw_val(lw, x)->shape.rank, "argument 'dims'", &a))) return st;
    if (lw_val(lw, x)->shape.rank == 0) continue; /* a 0-d tensor rolls onto itself */
    int64_t d = lw_val(lw, x)->shape.dims[a];
    if (rlx_dim_is_sym(d)) { /* shift mod d, as dims: [d - s, d) then [0, d - s) */
      rlx_dim s, ds;
      rlx_symtab *t = lw_syms(lw);
      if (shifts[i] < -((int64_t)1 << 62)) return lw_fail(RLX_ERR_SHAPE, "roll: shift %lld", (long long)shifts[i]);
      if ((st = rlx_dim_mod(t, shifts[i], d, &s)) || (st = rlx_dim_sub(t, d, s, &ds))) return st;
      rlx_params p0 = {.slice = {.axis = a, .start = ds, .end = d, .step = 1}};
      rlx_params p1 = {.slice = {.axis = a, .start = 0, .end = ds, .step = 1}};
      int32_t parts[2] = {lw_emit(lw, RLX_OP_SLICE, &p0, &x, 1), lw_emit(lw, RLX_OP_SLICE, &p1, &x, 1)};
      if (parts[0] < 0 || parts[1] < 0) return rlx_last_status();
      rlx_params p = {.axis = {.axis = a}};
      x = lw_emit(lw, RLX_OP_CONCAT, &p, parts, 2);
      continue;
    }
    if (d == 0) continue;
    int64_t s = shifts[i] % d; /* d >= 1: no INT64_MIN % -1; |s| < d, so s + d cannot overflow */
    if (s < 0) s += d;
    if (!s) continue;
    int32_t parts[2] = {emit_slice(lw, x, a, d - s, d), emit_slice(lw, x, a, 0, d - s)};
    if (parts[0] < 0 || parts[1] < 0) return rlx_last_status();
    rlx_params p = {.axis = {.axis = a}};
    x = lw_emit(lw, RLX_OP_CONCAT, &p, parts, 2);
  }
  return lw_bind(lw, n, lw_reshape(lw, x, &orig));
}

/* repeat(x, reps) / tile(x, reps): per axis with r > 1, insert a unit axis,
 * expand it to r, and merge it into the axis. */
rlx_status rlx_lower_repeat(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_dim reps[RLX_MAX_RANK]; /* a count may be a symbolic size (x.repeat(batch, 1, 1)) */
  int cnt;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_dims(lw, n, 1, lw_is(n, "tile") ? "dims" : "repeats", reps, RLX_MAX_RANK, &cnt);
  if (st) return st;
  rlx_shape s = lw_val(lw, x)->shape;
  if (lw_is(n, "tile") && cnt < s.rank) { /* tile pads the repeats with leading ones */
    memmove(reps + (s.rank - cnt), reps, sizeof(int64_t) * (size_t)cnt);
    for (int i = 0; i < s.rank - cnt; i++) reps[i] = 1;
    cnt = s.rank;
  }
  if (cnt < s.rank) return lw_fail(RLX_ERR_SHAPE, "repeat: %d repeats for a rank-%d tensor", cnt, s.rank);
  rlx_shape cur = {.rank = cnt}, full = {.rank = cnt}; /* x viewed with leading unit axes; the result */
  for (int i = 0; i < cnt; i++) {
    cur.dims[i] = i < cnt - s.rank ? 1 : s.dims[i - (cnt - s.rank)];
    if (!rlx_dim_is_sym(reps[i]) && reps[i] < 0)
      return lw_fail(RLX_ERR_SHAPE, "argument '%s'[%d] is %lld; repeats must be >= 0",
                     lw_is(n, "tile") ? "dims" : "repeats", i, (long long)reps[i]);
    if (rlx_dim_is_sym(cur.dims[i]) || rlx_dim_is_sym(reps[i])) { /* bounds checked with the graph's */
      rlx_status ms = rlx_dim_mul(lw_syms(lw), cur.dims[i], reps[i], &full.dims[i]);
      if (ms) return ms;
      continue;
    }
    bool ok = true;
    full.dims[i] = lw_mul64(cur.dims[i], reps[i], &ok);
    if (!ok) full.dims[i] = -1;
  }
  char b[128];
  if (!rlx_graph_shape_valid(lw->g, &full)) /* also bounds every partial result */
    return lw_fail(RLX_ERR_SHAPE, "argument '%s' makes the result %s too large", lw_is(n, "tile") ? "dims" : "repeats",
                   rlx_graph_shape_str(lw->g, &full, b, sizeof b));
  x = lw_reshape(lw, x, &cur);
  for (int a = 0; a < cnt && x >= 0; a++) {
    if (reps[a] == 1) continue;
    if (cnt + 1 > RLX_MAX_RANK) return lw_fail(RLX_ERR_UNSUPPORTED, "repeat of a rank-%d tensor", cnt);
    rlx_shape u = cur, e;
    memmove(u.dims + a + 1, u.dims + a, sizeof(int64_t) * (size_t)(cnt - a));
    u.dims[a] = 1, u.rank++;
    e = u;
    e.dims[a] = reps[a];
    rlx_params p = {.shape = {.shape = e}};
    int32_t y = lw_reshape(lw, x, &u);
    y = y < 0 ? -1 : lw_emit(lw, RLX_OP_EXPAND, &p, &y, 1);
    cur.dims[a] = full.dims[a];
    x = lw_reshape(lw, y, &cur);
  }
  return lw_bind(lw, n, x);
}

static int64_t tri_keep(int64_t i, const int64_t *c) { /* c: {N, k, lower} */
  int64_t r = i / c[0], col = i % c[0];
  return c[2] ? col - r <= c[1] : col - r >= c[1];
}

rlx_status rlx_lower_tril(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t k;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "diagonal", 0, &k);
  if (st) return st;
  const rlx_value *xv = lw_val(lw, x);
  if (xv->shape.rank < 2) return lw_fail(RLX_ERR_SHAPE, "tril/triu need rank >= 2");
  rlx_shape ms = {.rank = 2, .dims = {xv->shape.dims[xv->shape.rank - 2], xv->shape.dims[xv->shape.rank - 1]}};
  if (rlx_dim_is_sym(ms.dims[0]) || rlx_dim_is_sym(ms.dims[1])) { /* the mask from aranges: col - row vs k */
    if (k > RLX_MAX_NUMEL || k < -RLX_MAX_NUMEL) k = k > 0 ? RLX_MAX_NUMEL : -RLX_MAX_NUMEL; /* same mask */
    rlx_params pr = {.arange = {.dtype = RLX_DTYPE_I64, .length = ms.dims[0], .step = 1, .istep = 1}};
    rlx_params pc = {.arange = {.dtype = RLX_DTYPE_I64, .length = ms.dims[1], .step = 1, .istep = 1}};
    rlx_shape rs = {.rank = 2, .dims = {ms.dims[0], 1}}, cs = {.rank = 2, .dims = {1, ms.dims[1]}};
    int32_t row = lw_reshape(lw, lw_emit(lw, RLX_OP_ARANGE, &pr, NULL, 0), &rs);
    int32_t col = lw_reshape(lw, lw_emit(lw, RLX_OP_ARANGE, &pc, NULL, 0), &cs);
    int32_t diff = row < 0 || col < 0 ? -1 : lw_binary(lw, RLX_BINARY_SUB, col, row);
    int32_t kk = lw_scalar(lw, RLX_DTYPE_I64, (double)k, k);
    int32_t keep = diff < 0 || kk < 0 ? -1 : lw_binary(lw, lw_is(n, "tril") ? RLX_BINARY_LE : RLX_BINARY_GE, diff, kk);
    int32_t in[3] = {keep, x, lw_scalar(lw, xv->dtype, 0, 0)};
    if (keep < 0 || in[2] < 0) return rlx_last_status();
    return lw_bind(lw, n, lw_emit(lw, RLX_OP_WHERE, NULL, in, 3));
  }
  int64_t ctx[3] = {ms.dims[1], k, lw_is(n, "tril")};
  int32_t mask = lw_cast(lw, const_i64(lw, &ms, tri_keep, ctx), RLX_DTYPE_BOOL);
  int32_t in[3] = {mask, x, lw_scalar(lw, xv->dtype, 0, 0)};
  if (mask < 0 || in[2] < 0) return rlx_last_status();
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_WHERE, NULL, in, 3));
}

static int64_t unfold_idx(int64_t i, const int64_t *c) { /* c: {size, step} */
  return (i / c[0]) * c[1] + i % c[0];
}

/* x.unfold(dim, size, step): gather windows [n, size] along dim, then move
 * the window axis last. */
rlx_status rlx_lower_unfold(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dim, size, step;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "dimension", 0, &dim);
  if (!st) st = lw_int(lw, n, 2, "size", 1, &size);
  if (!st) st = lw_int(lw, n, 3, "step", 1, &step);
  if (st) return st;
  const rlx_value *xv = lw_val(lw, x);
  int r = xv->shape.rank, a;
  if ((st = lw_axis(dim, r, "argument 'dimension'", &a))) return st;
  int64_t D = r ? xv->shape.dims[a] : 1;
  if (rlx_dim_is_sym(D)) { /* windows w*step + [0, size) for w < (D - size) // step + 1, from aranges */
    if (size < 0 || step < 1 || size > RLX_MAX_NUMEL || step > RLX_MAX_NUMEL || r + 1 > RLX_MAX_RANK)
      return lw_fail(RLX_ERR_SHAPE, "unfold size %lld step %lld", (long long)size, (long long)step);
    rlx_symtab *t = lw_syms(lw);
    rlx_dim nw;
    if ((st = rlx_dim_sub(t, D, size, &nw)) || (st = rlx_dim_floordiv(t, nw, step, &nw)) ||
        (st = rlx_dim_add(t, nw, 1, &nw)))
      return st;
    if ((st = rlx_graph_add_guard(lw->g, D, RLX_REL_GE, size, "unfold: the dim holds one window")))
      return st;
    rlx_params pw = {.arange = {.dtype = RLX_DTYPE_I64, .length = nw, .step = (double)step, .istep = step}};
    rlx_params po = {.arange = {.dtype = RLX_DTYPE_I64, .length = size, .step = 1, .istep = 1}};
    rlx_shape ws = {.rank = 2, .dims = {nw, 1}}, os = {.rank = 2, .dims = {1, size}};
    int32_t w = lw_reshape(lw, lw_emit(lw, RLX_OP_ARANGE, &pw, NULL, 0), &ws);
    int32_t o = lw_reshape(lw, lw_emit(lw, RLX_OP_ARANGE, &po, NULL, 0), &os);
    int32_t idx = w < 0 || o < 0 ? -1 : lw_binary(lw, RLX_BINARY_ADD, w, o);
    rlx_params gp = {.gather = {.axis = a}};
    int32_t in[2] = {x, idx};
    int32_t y = idx < 0 ? -1 : lw_emit(lw, RLX_OP_GATHER, &gp, in, 2);
    int perm[RLX_MAX_RANK], k = 0;
    for (int i = 0; i <= r; i++)
      if (i != a + 1) perm[k++] = i;
    perm[k] = a + 1;
    return lw_bind(lw, n, y < 0 ? -1 : emit_permute(lw, y, perm));
  }
  if (size < 0 || step < 1 || size > D) return lw_fail(RLX_ERR_SHAPE, "unfold size %lld step %lld of %lld",
                                                      (long long)size, (long long)step, (long long)D);
  if (r == 0) { /* torch: a 0-d tensor unfolds into one window of size 1 */
    rlx_shape one = {.rank = 1, .dims = {1}};
    return lw_bind(lw, n, lw_reshape(lw, x, &one));
  }
  if (r + 1 > RLX_MAX_RANK) return lw_fail(RLX_ERR_UNSUPPORTED, "unfold of a rank-%d tensor", r);
  rlx_shape is = {.rank = 2, .dims = {(D - size) / step + 1, size}};
  if (!rlx_shape_valid(&is, NULL)) /* the window index table */
    return lw_fail(RLX_ERR_SHAPE, "unfold: arguments 'size' %lld and 'step' %lld make %lld windows, too many elements",
                   (long long)size, (long long)step, (long long)is.dims[0]);
  int64_t ctx[2] = {size, step};
  int32_t idx = const_i64(lw, &is, unfold_idx, ctx);
  rlx_params gp = {.gather = {.axis = a}};
  int32_t in[2] = {x, idx};
  int32_t y = idx < 0 ? -1 : lw_emit(lw, RLX_OP_GATHER, &gp, in, 2);
  int perm[RLX_MAX_RANK], k = 0;
  for (int i = 0; i <= r; i++)
    if (i != a + 1) perm[k++] = i;
  perm[k] = a + 1;
  return lw_bind(lw, n, y < 0 ? -1 : emit_permute(lw, y, perm));
}

/* diagonal(x, offset, dim1, dim2): advanced indexing with constant index
 * vectors on dim1 and dim2, then the diagonal axis moved last. */
static int64_t iota_plus(int64_t i, const int64_t *c) { return i + c[0]; }

rlx_status rlx_lower_diagonal(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t off, d1, d2;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "offset", 0, &off);
  if (!st) st = lw_int(lw, n, 2, "dim1", 0, &d1);
  if (!st) st = lw_int(lw, n, 3, "dim2", 1, &d2);
  if (st) return st;
  const rlx_value *xv = lw_val(lw, x);
  int r = xv->shape.rank, a1, a2;
  if ((st = lw_axis(d1, r, "argument 'dim1'", &a1)) || (st = lw_axis(d2, r, "argument 'dim2'", &a2))) return st;
  if (a1 == a2) return lw_fail(RLX_ERR_SHAPE, "diagonal dims must differ");
  int64_t D1 = xv->shape.dims[a1], D2 = xv->shape.dims[a2];
  int32_t i1, i2;
  if (rlx_dim_is_sym(D1) || rlx_dim_is_sym(D2)) { /* the index vectors from aranges of the symbolic length */
    rlx_symtab *t = lw_syms(lw);
    off = RLX_MIN(RLX_MAX(off, -RLX_MAX_NUMEL), RLX_MAX_NUMEL); /* past either edge it is empty anyway */
    rlx_dim L;
    if ((st = off >= 0 ? rlx_dim_sub(t, D2, off, &L) : rlx_dim_add(t, D1, off, &L)) ||
        (st = rlx_dim_min(t, L, off >= 0 ? D1 : D2, &L)) || (st = rlx_dim_max(t, L, 0, &L)))
      return st;
    int64_t o1 = off >= 0 ? 0 : -off, o2 = off >= 0 ? off : 0;
    rlx_params p1 = {.arange = {.dtype = RLX_DTYPE_I64, .length = L, .start = (double)o1, .step = 1, .istart = o1,
                                .istep = 1}};
    rlx_params p2 = p1;
    p2.arange.start = (double)o2, p2.arange.istart = o2;
    i1 = lw_emit(lw, RLX_OP_ARANGE, &p1, NULL, 0), i2 = lw_emit(lw, RLX_OP_ARANGE, &p2, NULL, 0);
  } else {
    off = RLX_MIN(RLX_MAX(off, -D1), D2); /* past either edge the diagonal is empty; then -off cannot overflow */
    int64_t L = off >= 0 ? RLX_MAX(0, RLX_MIN(D1, D2 - off)) : RLX_MAX(0, RLX_MIN(D1 + off, D2));
    rlx_shape ls = {.rank = 1, .dims = {L}};
    int64_t o1 = off >= 0 ? 0 : -off, o2 = off >= 0 ? off : 0;
    i1 = const_i64(lw, &ls, iota_plus, &o1), i2 = const_i64(lw, &ls, iota_plus, &o2);
  }
  if (i1 < 0 || i2 < 0) return rlx_last_status();
  int lo = RLX_MIN(a1, a2), hi = RLX_MAX(a1, a2);
  int32_t in[3] = {x, a1 < a2 ? i1 : i2, a1 < a2 ? i2 : i1};
  rlx_params p = {.index = {.indexed = (1u << lo) | (1u << hi)}};
  int32_t y = lw_emit(lw, RLX_OP_INDEX, &p, in, 3);
  if (y < 0) return rlx_last_status();
  /* the diagonal axis sits at `lo` when the two axes are adjacent, else first */
  int at = hi == lo + 1 ? lo : 0, perm[RLX_MAX_RANK], k = 0, ry = lw_val(lw, y)->shape.rank;
  for (int i = 0; i < ry; i++)
    if (i != at) perm[k++] = i;
  perm[k] = at;
  bool identity = at == ry - 1;
  return lw_bind(lw, n, identity ? y : emit_permute(lw, y, perm));
}

rlx_status rlx_lower_pixel_shuffle(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t r;
  const rlx_tinfo *t;
  bool up = lw_is(n, "pixel_shuffle");
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, up ? "upscale_factor" : "downscale_factor", 1, &r);
  if (!st) st = need_out(n, &t);
  if (st) return st;
  const rlx_shape *xs = &lw_val(lw, x)->shape;
  const char *name = up ? "upscale_factor" : "downscale_factor";
  if (xs->rank < 3) return lw_fail(RLX_ERR_SHAPE, "pixel_shuffle needs rank >= 3");
  int64_t C = xs->dims[xs->rank - 3], H = xs->dims[xs->rank - 2], W = xs->dims[xs->rank - 1];
  bool ok = true;
  int64_t rr = lw_mul64(r, r, &ok);
  if (r < 1 || !ok) return lw_fail(RLX_ERR_SHAPE, "argument '%s' is %lld; it must be >= 1 (and its square fit int64)",
                                   name, (long long)r);
  rlx_shape lead = {.rank = xs->rank - 3};
  memcpy(lead.dims, xs->dims, sizeof(int64_t) * (size_t)lead.rank);
  rlx_dim B;
  if ((st = rlx_shape_numel_dim_lw(lw, &lead, &B))) return st;
  if (rlx_dim_is_sym(C) || rlx_dim_is_sym(H) || rlx_dim_is_sym(W)) { /* divisibility becomes a guard per binding */
    rlx_symtab *sy = lw_syms(lw);
    rlx_dim q[3], m;
    const rlx_dim num[3] = {up ? C : H, up ? 0 : W, 0};
    const int64_t den[2] = {up ? rr : r, r};
    for (int i = 0; i < (up ? 1 : 2); i++) {
      if ((st = rlx_dim_floordiv(sy, num[i], den[i], &q[i])) || (st = rlx_dim_mod(sy, num[i], den[i], &m)) ||
          (st = rlx_graph_add_guard(lw->g, m, RLX_REL_EQ, 0, up ? "pixel_shuffle: channels divisible by the "
                                    "factor squared" : "pixel_unshuffle: H and W divisible by the factor")))
        return st;
    }
    rlx_shape s6 = up ? (rlx_shape){.rank = 6, .dims = {B, q[0], r, r, H, W}}
                      : (rlx_shape){.rank = 6, .dims = {B, C, q[0], r, q[1], r}};
    static const int pu[6] = {0, 1, 4, 2, 5, 3}, pd[6] = {0, 1, 3, 5, 2, 4};
    int32_t y = lw_reshape(lw, x, &s6);
    y = y < 0 ? -1 : emit_permute(lw, y, up ? pu : pd);
    return lw_bind(lw, n, lw_reshape(lw, y, &t->shape));
  }
  if (up ? C % rr : H % r || W % r)
    return lw_fail(RLX_ERR_SHAPE, "%s: argument '%s' %lld does not divide the input [.., %lld, %lld, %lld]",
                   up ? "pixel_shuffle needs channels divisible by its square" : "pixel_unshuffle needs H and W "
                   "divisible by it", name, (long long)r, (long long)C, (long long)H, (long long)W);
  rlx_shape s6;
  int perm[6];
  if (up) { /* [B, C r r, H, W] -> [B, C, r, r, H, W] -> [B, C, H, r, W, r] */
    s6 = (rlx_shape){.rank = 6, .dims = {B, C / rr, r, r, H, W}};
    int p[6] = {0, 1, 4, 2, 5, 3};
    memcpy(perm, p, sizeof p);
  } else { /* [B, C, H r, W r] -> [B, C, H, r, W, r] -> [B, C, r, r, H, W] */
    s6 = (rlx_shape){.rank = 6, .dims = {B, C, H / r, r, W / r, r}};
    int p[6] = {0, 1, 3, 5, 2, 4};
    memcpy(perm, p, sizeof p);
  }
  int32_t y = lw_reshape(lw, x, &s6);
  y = y < 0 ? -1 : emit_permute(lw, y, perm);
  return lw_bind(lw, n, lw_reshape(lw, y, &t->shape));
}

rlx_status rlx_lower_as_strided(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_dim size[RLX_MAX_RANK], stride[RLX_MAX_RANK], off;
  int ns, nt;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_dims(lw, n, 1, "size", size, RLX_MAX_RANK, &ns);
  if (!st) st = lw_dims(lw, n, 2, "stride", stride, RLX_MAX_RANK, &nt);
  if (!st) st = lw_dim(lw, n, 3, "storage_offset", 0, &off);
  if (st) return st;
  if (ns != nt) return lw_fail(RLX_ERR_SHAPE, "as_strided: %d sizes and %d strides", ns, nt);
  for (int i = 0; i < ns; i++) { /* torch: sizes >= 0, no negative strides; the op checks the span */
    if (!rlx_dim_is_sym(size[i]) && size[i] < 0)
      return lw_fail(RLX_ERR_SHAPE, "argument 'size'[%d] is %lld; it must be >= 0", i, (long long)size[i]);
    if (!rlx_dim_is_sym(stride[i]) && stride[i] < 0)
      return lw_fail(RLX_ERR_SHAPE, "argument 'stride'[%d] is %lld; it must be >= 0", i, (long long)stride[i]);
  }
  if (!rlx_dim_is_sym(off) && off < 0)
    return lw_fail(RLX_ERR_SHAPE, "argument 'storage_offset' is %lld; it must be >= 0", (long long)off);
  rlx_params p;
  memset(&p, 0, sizeof p);
  p.as_strided.size.rank = ns;
  memcpy(p.as_strided.size.dims, size, sizeof(int64_t) * (size_t)ns);
  memcpy(p.as_strided.stride, stride, sizeof(int64_t) * (size_t)ns);
  p.as_strided.offset = off;
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_AS_STRIDED, &p, &x, 1));
}

rlx_status rlx_lower_col2im(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_params p;
  memset(&p, 0, sizeof p);
  rlx_col2im_params *c = &p.col2im;
  int64_t *fields[5] = {c->out, c->kernel, c->dilation, c->pad, c->stride};
  static const char *names[5] = {"output_size", "kernel_size", "dilation", "padding", "stride"};
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  for (int i = 0; !st && i < 5; i++) {
    int64_t v[2];
    int cnt;
    if ((st = lw_ints(lw, n, 1 + i, names[i], v, 2, &cnt))) break;
    if (cnt < 1) return lw_fail(RLX_ERR_FORMAT, "col2im: '%s' is missing", names[i]);
    fields[i][0] = v[0], fields[i][1] = cnt == 2 ? v[1] : v[0];
    if ((st = lw_check_params(fields[i], 2, i == 3 ? 0 : 1, names[i]))) return st;
  }
  if (st) return st;
  int32_t y = lw_emit(lw, RLX_OP_COL2IM, &p, &x, 1);
  return lw_bind(lw, n, y);
}

/* The aten node (earlier in the file) whose output is ref `name`, or NULL. */
static const rlx_aten_node *aten_producer(rlx_lower *lw, const char *name) {
  for (const rlx_aten_node *p = lw->cur; p > lw->ir->nodes;) {
    p--;
    if (!strcmp(p->id, name)) return p;
  }
  return NULL;
}

/* Whether eager torch's sort sees stride 0 along axis a of its input: the
 * input is aten.expand's output, broadcast along that axis (from size 1 or
 * a new axis), seen through permute / t / transpose views. torch's sort
 * kernel returns such a tensor as it is, indices 0, 1, 2, ...
 * (SortingKernel.cpp: "check if stride is zero"). A copy in between (clone,
 * contiguous) makes the strides dense again and stops the walk. */
static bool sort_input_stride0(rlx_lower *lw, const rlx_aten_node *n, int a) {
  const rlx_arg *arg = lw_arg(n, 0, "self");
  for (int hop = 0; hop < 16 && arg && arg->kind == RLX_ARG_REF; hop++) {
    const rlx_aten_node *p = aten_producer(lw, arg->u.s);
    const rlx_tinfo *t = p ? lw_out(p, 0) : NULL;
    if (!t || a < 0 || a >= t->shape.rank) return false;
    int r = t->shape.rank;
    const rlx_arg *src = lw_arg(p, 0, "self");
    if (lw_is(p, "expand")) {
      int32_t v = -1;
      if (!src || src->kind != RLX_ARG_REF || lw_ref(lw, src->u.s, &v)) return false;
      const rlx_value *in = lw_val(lw, v);
      int off = r - in->shape.rank;
      return t->shape.dims[a] != 1 && (a < off || in->shape.dims[a - off] == 1);
    }
    if (lw_is(p, "permute")) {
      int64_t perm[RLX_MAX_RANK];
      int cnt;
      if (lw_ints(lw, p, 1, "dims", perm, RLX_MAX_RANK, &cnt) || cnt != r) return false;
      int64_t q = perm[a] < 0 ? perm[a] + r : perm[a];
      if (q < 0 || q >= r) return false;
      a = (int)q;
    } else if (lw_is(p, "t")) {
      if (r == 2) a = 1 - a;
    } else if (lw_is(p, "transpose")) {
      int64_t d0, d1;
      if (lw_int(lw, p, 1, "dim0", 0, &d0) || lw_int(lw, p, 2, "dim1", 0, &d1)) return false;
      d0 = d0 < 0 ? d0 + r : d0, d1 = d1 < 0 ? d1 + r : d1;
      if (a == d0) a = (int)d1;
      else if (a == d1) a = (int)d0;
    } else {
      return false;
    }
    arg = src;
  }
  return false;
}

/* sort(x, dim, descending), sort.stable(x, *, stable, dim, descending),
 * argsort(x, dim, descending), argsort.stable(x, *, stable, dim,
 * descending), topk(x, k, dim, largest, sorted). stable=False (and None)
 * runs torch's unstable algorithm, whose tie order the indices show, except
 * on an axis torch sees with stride 0. */
rlx_status rlx_lower_sort(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dim = -1, k = -1;
  bool desc = false, stable = false, sorted = true;
  bool stable_ov = !strcmp(lw_overload(n), "stable"), topk = lw_is(n, "topk");
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  if (topk) {
    if (!(st = lw_int(lw, n, 1, "k", 1, &k)) && !(st = lw_int(lw, n, 2, "dim", -1, &dim)) &&
        !(st = lw_bool(lw, n, 3, "largest", true, &desc)))
      st = lw_bool(lw, n, 4, "sorted", true, &sorted);
  } else if (stable_ov) { /* (self, *, stable, dim, descending); stable may be None */
    if (!(st = lw_int(lw, n, -1, "dim", -1, &dim)) && !(st = lw_bool(lw, n, -1, "descending", false, &desc)))
      st = lw_bool(lw, n, -1, "stable", false, &stable);
  } else {
    if (!(st = lw_int(lw, n, 1, "dim", -1, &dim))) st = lw_bool(lw, n, 2, "descending", false, &desc);
  }
  if (st) return st;
  int r = lw_val(lw, x)->shape.rank, a;
  if ((st = lw_axis(dim, r, "argument 'dim'", &a))) return st;
  bool want_values = !lw_is(n, "argsort");
  rlx_params p = {.sort = {.axis = a, .descending = desc, .algo = stable ? RLX_SORT_STABLE : RLX_SORT_TORCH}};
  if (topk) p.sort.algo = RLX_SORT_TOPK, p.sort.topk_k = k, p.sort.topk_sorted = sorted;
  /* a broadcast axis holds equal values, which torch leaves in input order */
  else if (sort_input_stride0(lw, n, a)) p.sort.algo = RLX_SORT_STABLE;
  int32_t k_node = lw_emit_node(lw, RLX_OP_SORT, &p, &x, 1, 2);
  if (k_node < 0) return rlx_last_status();
  int32_t outs[2] = {lw->g->nodes[k_node].out[0], lw->g->nodes[k_node].out[1]};
  if (topk) {
    int64_t D = r ? lw_val(lw, x)->shape.dims[a] : 1;
    if (rlx_dim_is_sym(D)) { /* the first k of a symbolic dim; k <= D is checked per binding */
      if (k < 0) return lw_fail(RLX_ERR_SHAPE, "topk k=%lld", (long long)k);
      rlx_params sp = {.slice = {.axis = a, .start = 0, .end = k, .step = 1}};
      for (int i = 0; i < 2; i++)
        if ((outs[i] = lw_emit(lw, RLX_OP_SLICE, &sp, &outs[i], 1)) < 0) return rlx_last_status();
      return want_values ? lw_bind_multi(lw, n, outs, 2) : lw_bind(lw, n, outs[1]);
    }
    if (k < 0 || k > D) return lw_fail(RLX_ERR_SHAPE, "topk k=%lld for a dim of size %lld", (long long)k, (long long)D);
    if (r && k < D)
      for (int i = 0; i < 2; i++)
        if ((outs[i] = emit_slice(lw, outs[i], a, 0, k)) < 0) return rlx_last_status();
  }
  if (!want_values) return lw_bind(lw, n, outs[1]);
  return lw_bind_multi(lw, n, outs, 2);
}

/* fill.Scalar(x, v), fill.Tensor(x, v), copy(x, src): x's shape and dtype
 * with the other operand's values; empty_strided: zeros. */
rlx_status rlx_lower_fill(rlx_lower *lw, const rlx_aten_node *n) {
  const rlx_tinfo *t;
  rlx_status st = need_out(n, &t);
  if (st) return st;
  if (lw_is(n, "empty_strided")) {
    rlx_params p = {.full = {.dtype = t->dtype, .shape = t->shape}};
    return lw_bind(lw, n, lw_emit(lw, RLX_OP_FULL, &p, NULL, 0));
  }
  const rlx_arg *v = lw_arg(n, 1, lw_is(n, "copy") ? "src" : "value");
  lw_operand op;
  int32_t vv;
  if ((st = lw_operand_of(lw, v, &op, &vv))) return st;
  int32_t y = vv >= 0 ? lw_cast(lw, vv, t->dtype) : lw_fill_scalar(lw, v, t->dtype, "argument 'value'");
  if (y < 0) return rlx_last_status();
  if (!rlx_shape_eq(&lw_val(lw, y)->shape, &t->shape)) {
    rlx_params p = {.shape = {.shape = t->shape}};
    y = lw_emit(lw, RLX_OP_EXPAND, &p, &y, 1);
  }
  return lw_bind(lw, n, y);
}

/* one_hot(x, num_classes): eq(c[..., None], arange(C)) as int64, where
 * c = arange(C)[x] is a gather that refuses, at run time, an index outside
 * [0, C) as torch does. num_classes = -1 (C from the data) uses the C torch
 * recorded for the example input. */
rlx_status rlx_lower_one_hot(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t nc;
  const rlx_tinfo *t;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "num_classes", -1, &nc);
  if (!st) st = need_out(n, &t);
  if (st) return st;
  const rlx_value *xv = lw_val(lw, x);
  if (xv->dtype != RLX_DTYPE_I64) return lw_fail(RLX_ERR_UNSUPPORTED, "one_hot needs int64 indices");
  if (t->shape.rank != xv->shape.rank + 1) return lw_fail(RLX_ERR_SHAPE, "one_hot output rank");
  int64_t C = t->shape.dims[t->shape.rank - 1];
  if (rlx_dim_is_sym(C)) return lw_fail(RLX_ERR_UNSUPPORTED, "one_hot with a symbolic number of classes");
  if (nc != -1 && nc < 1)
    return lw_fail(RLX_ERR_SHAPE, "argument 'num_classes' is %lld; it must be >= 1, or -1 to infer it",
                   (long long)nc);
  if (nc != -1 && nc != C)
    return lw_fail(RLX_ERR_SHAPE, "argument 'num_classes' is %lld but torch recorded %lld classes", (long long)nc,
                   (long long)C);
  rlx_params ap = {.arange = {.dtype = RLX_DTYPE_I64, .length = C, .istart = 0, .istep = 1, .step = 1}};
  rlx_params gp = {.gather = {.axis = 0, .wrap_negative = false}};
  rlx_shape xs = xv->shape;
  xs.dims[xs.rank++] = 1;
  int32_t ar = lw_emit(lw, RLX_OP_ARANGE, &ap, NULL, 0), in[2] = {ar, x};
  int32_t c = ar < 0 ? -1 : lw_emit(lw, RLX_OP_GATHER, &gp, in, 2);
  int32_t cr = c < 0 ? -1 : lw_reshape(lw, c, &xs);
  int32_t eq = cr < 0 ? -1 : lw_binary(lw, RLX_BINARY_EQ, cr, ar);
  return lw_bind(lw, n, lw_cast(lw, eq, t->dtype));
}

static int64_t im2col_idx(int64_t i, const int64_t *c) {
  /* c: {kh, kw, dh, dw, sh, sw, bh, bw, Wp}; i over [kh*kw, bh*bw] */
  int64_t L = c[6] * c[7], r = i / L, l = i % L;
  int64_t ki = r / c[1], kj = r % c[1], y = (l / c[7]) * c[4] + ki * c[2], x = (l % c[7]) * c[5] + kj * c[3];
  return y * c[8] + x;
}

/* im2col(x, kernel_size, dilation, padding, stride) (nn.Unfold):
 * zero-pad, flatten the plane, gather the window positions, merge axes. */
rlx_status rlx_lower_im2col(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t v[4][2];
  static const char *names[4] = {"kernel_size", "dilation", "padding", "stride"};
  const rlx_tinfo *t;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  for (int i = 0; !st && i < 4; i++) {
    int cnt;
    if ((st = lw_ints(lw, n, 1 + i, names[i], v[i], 2, &cnt))) break;
    if (cnt < 1) return lw_fail(RLX_ERR_FORMAT, "im2col: '%s' is missing", names[i]);
    if (cnt == 1) v[i][1] = v[i][0];
    if ((st = lw_check_params(v[i], 2, i == 2 ? 0 : 1, names[i]))) return st; /* padding may be 0 */
  }
  if (!st) st = need_out(n, &t);
  if (st) return st;
  rlx_shape xs = lw_val(lw, x)->shape;
  bool batched = xs.rank == 4;
  if (xs.rank != 3 && xs.rank != 4) return lw_fail(RLX_ERR_SHAPE, "im2col needs [N, C, H, W] or [C, H, W]");
  int64_t N = batched ? xs.dims[0] : 1, C = xs.dims[xs.rank - 3];
  /* params <= 2^31: 2 * pad and dilation * (kernel - 1) cannot overflow; the dims can be large */
  bool ok = true;
  int64_t Hp = lw_add64(xs.dims[xs.rank - 2], 2 * v[2][0], &ok), Wp = lw_add64(xs.dims[xs.rank - 1], 2 * v[2][1], &ok);
  int64_t plane = lw_mul64(Hp, Wp, &ok);
  if (!ok || plane > RLX_MAX_NUMEL) return lw_fail(RLX_ERR_SHAPE, "im2col: the padded plane is too large");
  int64_t span_h = v[1][0] * (v[0][0] - 1) + 1, span_w = v[1][1] * (v[0][1] - 1) + 1; /* dilated kernel */
  if (span_h > Hp || span_w > Wp) return lw_fail(RLX_ERR_SHAPE, "im2col: the kernel does not fit the padded input");
  int64_t bh = (Hp - span_h) / v[3][0] + 1, bw = (Wp - span_w) / v[3][1] + 1;
  rlx_params pp;
  memset(&pp, 0, sizeof pp);
  pp.pad.lo[xs.rank - 2] = pp.pad.hi[xs.rank - 2] = v[2][0];
  pp.pad.lo[xs.rank - 1] = pp.pad.hi[xs.rank - 1] = v[2][1];
  int32_t y = (v[2][0] || v[2][1]) ? lw_emit(lw, RLX_OP_PAD, &pp, &x, 1) : x;
  rlx_shape flat = {.rank = 3, .dims = {N, C, plane}};
  y = lw_reshape(lw, y, &flat);
  rlx_shape is = {.rank = 2, .dims = {v[0][0] * v[0][1], bh * bw}};
  int64_t ctx[9] = {v[0][0], v[0][1], v[1][0], v[1][1], v[3][0], v[3][1], bh, bw, Wp};
  int32_t idx = const_i64(lw, &is, im2col_idx, ctx);
  rlx_params gp = {.gather = {.axis = 2}};
  int32_t in[2] = {y, idx};
  y = y < 0 || idx < 0 ? -1 : lw_emit(lw, RLX_OP_GATHER, &gp, in, 2); /* [N, C, k, L] */
  return lw_bind(lw, n, lw_reshape(lw, y, &t->shape));
}
