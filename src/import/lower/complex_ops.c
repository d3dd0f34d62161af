/*
 * complex_ops.c — complex arithmetic and shape ops over real pairs
 * (docs/design.md, "Complex numbers"; the representation is complex.c's).
 *
 *   (a + bi)(c + di) = (ac - bd) + (ad + bc)i
 *   (a + bi)/(c + di) = ((ac + bd) + (bc - ad)i) / (c^2 + d^2), c and d scaled first
 *   |a + bi| = hypot(a, b),  angle = atan2(b, a),  conj = a - bi
 *
 * A real operand of mul or div scales both parts (torch promotes it to a
 * complex with a zero imaginary part; for finite values the products are
 * the same numbers); of add and sub it is promoted. Shape ops act on the
 * complex axes and keep the trailing axis of 2 last.
 */
#include "import/lower/complex.h"

/* ---- elementwise ---- */

/* lw_binary that passes a failed operand (-1) on. */
static int32_t bin(rlx_lower *lw, rlx_binary_kind k, int32_t a, int32_t b) {
  return a < 0 || b < 0 ? -1 : lw_binary(lw, k, a, b);
}

/* An operand of arithmetic: complex pairs, a real tensor or a real scalar
 * (as a rank-0 constant of dtype comp). A complex Python scalar is refused. */
static rlx_status operand(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, rlx_dtype comp,
                          cx_val *x) {
  const rlx_arg *a = lw_resolve(lw, lw_arg(n, pos, name));
  if (a && a->kind == RLX_ARG_REF) return cx_tensor(lw, n, pos, name, x);
  if (a && a->kind == RLX_ARG_STR)
    return lw_fail(RLX_ERR_UNSUPPORTED, "argument '%s' is '%.60s'; rlx takes real Python scalars in complex "
                   "arithmetic, not complex ones", name, a->u.s);
  x->complex = false;
  x->v = lw_scalar_arg(lw, a, comp, name);
  return x->v < 0 ? rlx_last_status() : RLX_OK;
}

/* A real value as a part (its own rank-0 scalar stays rank 0: it broadcasts). */
static int32_t as_part(rlx_lower *lw, int32_t v, rlx_dtype comp) {
  v = lw_cast(lw, v, comp);
  return v < 0 || lw_val(lw, v)->shape.rank == 0 ? v : cx_column(lw, v);
}

static int32_t cmul(rlx_lower *lw, int32_t x, int32_t y) {
  int32_t a = cx_part(lw, x, 0), b = cx_part(lw, x, 1), c = cx_part(lw, y, 0), d = cx_part(lw, y, 1);
  if (a < 0 || b < 0 || c < 0 || d < 0) return -1;
  int32_t re = bin(lw, RLX_BINARY_SUB, bin(lw, RLX_BINARY_MUL, a, c), bin(lw, RLX_BINARY_MUL, b, d));
  int32_t im = bin(lw, RLX_BINARY_ADD, bin(lw, RLX_BINARY_MUL, a, d), bin(lw, RLX_BINARY_MUL, b, c));
  return cx_join(lw, re, im);
}

/* (a + bi) / (c + di) with c and d scaled by s = max(|c|, |d|), as torch's
 * vectorized complex division, so c^2 + d^2 cannot overflow or underflow:
 * c' = c / s, d' = d / s, den = c c' + d d', ((a c' + b d') + (b c' - a d')i) / den. */
static int32_t cdiv(rlx_lower *lw, int32_t x, int32_t y) {
  int32_t a = cx_part(lw, x, 0), b = cx_part(lw, x, 1), c = cx_part(lw, y, 0), d = cx_part(lw, y, 1);
  if (a < 0 || b < 0 || c < 0 || d < 0) return -1;
  rlx_params pa = {.unary = {.kind = RLX_UNARY_ABS}};
  int32_t ac = lw_emit(lw, RLX_OP_UNARY, &pa, &c, 1), ad = lw_emit(lw, RLX_OP_UNARY, &pa, &d, 1);
  int32_t s = bin(lw, RLX_BINARY_MAXIMUM, ac, ad);
  int32_t cs = bin(lw, RLX_BINARY_DIV, c, s), ds = bin(lw, RLX_BINARY_DIV, d, s);
  int32_t den = bin(lw, RLX_BINARY_ADD, bin(lw, RLX_BINARY_MUL, c, cs), bin(lw, RLX_BINARY_MUL, d, ds));
  int32_t re = bin(lw, RLX_BINARY_ADD, bin(lw, RLX_BINARY_MUL, a, cs), bin(lw, RLX_BINARY_MUL, b, ds));
  int32_t im = bin(lw, RLX_BINARY_SUB, bin(lw, RLX_BINARY_MUL, b, cs), bin(lw, RLX_BINARY_MUL, a, ds));
  return cx_join(lw, bin(lw, RLX_BINARY_DIV, re, den), bin(lw, RLX_BINARY_DIV, im, den));
}

rlx_status cx_lower_arith(rlx_lower *lw, const rlx_aten_node *n) {
  const rlx_tinfo *t;
  rlx_shape ps;
  rlx_status st = cx_out(n, &t, &ps);
  if (st) return st;
  if (!t->complex) return lw_fail(RLX_ERR_UNSUPPORTED, "complex arithmetic with a real result");
  rlx_dtype comp = t->dtype;
  cx_val x, y;
  if ((st = operand(lw, n, 0, "self", comp, &x)) || (st = operand(lw, n, 1, "other", comp, &y))) return st;
  bool rsub = lw_is(n, "rsub");
  if (rsub) { /* rsub(self, other, alpha) = other - alpha self */
    cx_val tmp = x;
    x = y, y = tmp;
  }
  if (lw_is(n, "add") || lw_is(n, "sub") || rsub) {
    const rlx_arg *al = lw_resolve(lw, lw_arg(n, 2, "alpha"));
    if (al && al->kind == RLX_ARG_STR) return lw_fail(RLX_ERR_UNSUPPORTED, "a complex 'alpha' is not supported");
    if (al) { /* y *= alpha (a real scalar) */
      int32_t s = lw_scalar_arg(lw, al, comp, "alpha");
      y.v = bin(lw, RLX_BINARY_MUL, lw_cast(lw, y.v, comp), s);
      if (y.v < 0) return rlx_last_status();
    }
    int32_t px = cx_pairs(lw, &x, comp), py = cx_pairs(lw, &y, comp);
    if (px < 0 || py < 0) return rlx_last_status();
    return lw_bind(lw, n, bin(lw, lw_is(n, "add") ? RLX_BINARY_ADD : RLX_BINARY_SUB, px, py));
  }
  bool div = lw_is(n, "div");
  if (div) {
    const rlx_arg *m = lw_arg(n, 2, "rounding_mode");
    if (m) return lw_fail(RLX_ERR_UNSUPPORTED, "div with a rounding mode is not defined for complex values");
  }
  if (x.complex && y.complex)
    return lw_bind(lw, n, div ? cdiv(lw, lw_cast(lw, x.v, comp), lw_cast(lw, y.v, comp))
                              : cmul(lw, lw_cast(lw, x.v, comp), lw_cast(lw, y.v, comp)));
  if (!x.complex && div) { /* real / complex */
    int32_t px = cx_pairs(lw, &x, comp);
    return lw_bind(lw, n, px < 0 ? -1 : cdiv(lw, px, lw_cast(lw, y.v, comp)));
  }
  const cx_val *z = x.complex ? &x : &y, *r = x.complex ? &y : &x; /* complex z times (or over) real r */
  int32_t col = as_part(lw, r->v, comp);
  if (col < 0) return rlx_last_status();
  return lw_bind(lw, n, bin(lw, div ? RLX_BINARY_DIV : RLX_BINARY_MUL, lw_cast(lw, z->v, comp), col));
}

rlx_status cx_lower_unary(rlx_lower *lw, const rlx_aten_node *n) {
  cx_val x;
  rlx_status st = cx_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  if (!x.complex || lw_is(n, "positive")) return lw_bind(lw, n, x.v); /* conj of a real tensor is itself */
  if (lw_is(n, "neg")) {
    rlx_params p = {.unary = {.kind = RLX_UNARY_NEG}};
    return lw_bind(lw, n, lw_emit(lw, RLX_OP_UNARY, &p, &x.v, 1));
  }
  int32_t im = cx_part(lw, x.v, 1);
  rlx_params p = {.unary = {.kind = RLX_UNARY_NEG}};
  return lw_bind(lw, n, im < 0 ? -1 : cx_join(lw, cx_part(lw, x.v, 0), lw_emit(lw, RLX_OP_UNARY, &p, &im, 1)));
}

rlx_status cx_lower_abs(rlx_lower *lw, const rlx_aten_node *n) {
  cx_val x;
  const rlx_tinfo *t;
  rlx_shape ps;
  rlx_status st = cx_tensor(lw, n, 0, "self", &x);
  if (!st) st = cx_out(n, &t, &ps);
  if (st) return st;
  if (t->complex) return lw_fail(RLX_ERR_UNSUPPORTED, "a complex result of %s", lw_is(n, "abs") ? "abs" : "angle");
  int32_t re = cx_part(lw, x.v, 0), im = cx_part(lw, x.v, 1);
  int32_t r = lw_is(n, "abs") ? bin(lw, RLX_BINARY_HYPOT, re, im) : bin(lw, RLX_BINARY_ATAN2, im, re);
  return lw_bind(lw, n, lw_cast(lw, lw_reshape(lw, r, &ps), t->dtype));
}

/* sum / mean over complex axes: both parts reduce alike (the trailing 2 is kept). */
rlx_status cx_lower_reduce(rlx_lower *lw, const rlx_aten_node *n) {
  cx_val x;
  const rlx_tinfo *t;
  rlx_shape ps;
  int64_t dims[RLX_MAX_RANK];
  int cnt = 0;
  bool keepdim = false;
  rlx_status st = cx_tensor(lw, n, 0, "self", &x);
  if (!st) st = cx_out(n, &t, &ps);
  bool full = !strcmp(lw_overload(n), "default"); /* sum(x) / mean(x, dtype=): every axis */
  if (!st && !full) st = lw_ints(lw, n, 1, "dim", dims, RLX_MAX_RANK, &cnt);
  if (!st && !full) st = lw_bool(lw, n, 2, "keepdim", false, &keepdim);
  if (st) return st;
  if (!t->complex) return lw_fail(RLX_ERR_UNSUPPORTED, "a real result of a complex %s", lw_is(n, "sum") ? "sum" : "mean");
  int r = cx_rank(lw, &x);
  uint32_t mask = 0;
  if (!cnt) mask = r ? (1u << r) - 1 : 0;
  for (int i = 0; i < cnt; i++) {
    int a;
    if ((st = lw_axis(dims[i], r, "argument 'dim'", &a))) return st;
    if (r) mask |= 1u << a;
  }
  int32_t v = cx_pairs(lw, &x, t->dtype);
  if (v < 0) return rlx_last_status();
  if (!mask) return lw_bind(lw, n, v);
  rlx_params p = {.reduce = {.kind = lw_is(n, "sum") ? RLX_REDUCE_SUM : RLX_REDUCE_MEAN, .axes = mask,
                             .keepdim = keepdim}};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_REDUCE, &p, &v, 1));
}

/* ---- shape ops ---- */

/* The view family: the pairs take the recorded shape + [2] (RESHAPE checks
 * the element count). */
rlx_status cx_lower_reshape(rlx_lower *lw, const rlx_aten_node *n) {
  cx_val x;
  const rlx_tinfo *t;
  rlx_shape ps;
  rlx_status st = cx_tensor(lw, n, 0, "self", &x);
  if (!st) st = cx_out(n, &t, &ps);
  if (st) return st;
  if (!x.complex || !t->complex || lw_val(lw, x.v)->dtype != t->dtype)
    return lw_fail(RLX_ERR_SHAPE, "a view cannot change the dtype");
  return lw_bind(lw, n, lw_reshape(lw, x.v, &ps));
}

rlx_status cx_lower_expand(rlx_lower *lw, const rlx_aten_node *n) {
  cx_val x;
  const rlx_tinfo *t;
  rlx_shape ps;
  rlx_status st = cx_tensor(lw, n, 0, "self", &x);
  if (!st) st = cx_out(n, &t, &ps);
  if (st) return st;
  if (!x.complex || !t->complex) return lw_fail(RLX_ERR_SHAPE, "expand cannot change the dtype");
  int32_t v = x.v;
  const rlx_shape *xs = &lw_val(lw, v)->shape;
  if (xs->rank < ps.rank) { /* leading new axes: expand broadcasts from the right, as torch */
    rlx_shape s = {.rank = ps.rank};
    for (int i = 0; i < ps.rank; i++) s.dims[i] = i < ps.rank - xs->rank ? 1 : xs->dims[i - (ps.rank - xs->rank)];
    v = lw_reshape(lw, v, &s);
  }
  if (v < 0 || rlx_shape_eq(&lw_val(lw, v)->shape, &ps)) return lw_bind(lw, n, v);
  rlx_params p = {.shape = {.shape = ps}};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_EXPAND, &p, &v, 1));
}

rlx_status cx_lower_permute(rlx_lower *lw, const rlx_aten_node *n) {
  cx_val x;
  rlx_status st = cx_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  int r = cx_rank(lw, &x);
  int32_t perm[RLX_MAX_RANK];
  for (int i = 0; i < r; i++) perm[i] = i;
  if (lw_is(n, "permute") || lw_is(n, "permute_copy")) {
    int64_t dims[RLX_MAX_RANK];
    int cnt;
    if ((st = lw_ints(lw, n, 1, "dims", dims, RLX_MAX_RANK, &cnt))) return st;
    if (cnt != r) return lw_fail(RLX_ERR_SHAPE, "permute of a rank-%d tensor with %d dims", r, cnt);
    uint32_t seen = 0;
    for (int i = 0; i < r; i++) {
      int a;
      if ((st = lw_axis(dims[i], r, "argument 'dims'", &a))) return st;
      if ((seen >> a) & 1) return lw_fail(RLX_ERR_SHAPE, "'dims'[%d] repeats axis %d", i, a);
      seen |= 1u << a;
      perm[i] = a;
    }
  } else if (r >= 2 || lw_is(n, "transpose") || lw_is(n, "transpose_copy")) {
    int64_t d0 = 0, d1 = 1;
    if ((lw_is(n, "t") || lw_is(n, "t_copy")) && r > 2)
      return lw_fail(RLX_ERR_SHAPE, "t() needs a tensor of rank <= 2, got rank %d", r);
    if (!lw_is(n, "t") && !lw_is(n, "t_copy") &&
        ((st = lw_int(lw, n, 1, "dim0", 0, &d0)) || (st = lw_int(lw, n, 2, "dim1", 1, &d1))))
      return st;
    int a = 0, b = 0;
    if (r < 2) return lw_bind(lw, n, x.v);
    if ((st = lw_axis(d0, r, "argument 'dim0'", &a)) || (st = lw_axis(d1, r, "argument 'dim1'", &b))) return st;
    perm[a] = b, perm[b] = a;
  }
  bool identity = true;
  for (int i = 0; i < r; i++) identity &= perm[i] == i;
  if (identity) return lw_bind(lw, n, x.v);
  rlx_params p;
  memset(&p, 0, sizeof p);
  for (int i = 0; i < RLX_MAX_RANK; i++) p.permute.perm[i] = i < r ? perm[i] : i == r ? r : -1;
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_PERMUTE, &p, &x.v, 1));
}

/* slice(self, dim, start, end, step), narrow(self, dim, start, length),
 * select(self, dim, index): a slice of the pairs along the same axis. */
rlx_status cx_lower_slice(rlx_lower *lw, const rlx_aten_node *n) {
  cx_val x;
  const rlx_tinfo *t;
  rlx_shape ps;
  int64_t dim, step = 1;
  rlx_status st = cx_tensor(lw, n, 0, "self", &x);
  if (!st) st = cx_out(n, &t, &ps);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (st) return st;
  int r = cx_rank(lw, &x), a = 0;
  if (r == 0) return lw_fail(RLX_ERR_SHAPE, "cannot slice a 0-d tensor");
  if ((st = lw_axis(dim, r, "argument 'dim'", &a))) return st;
  rlx_dim d = lw_val(lw, x.v)->shape.dims[a], start = 0, end = 0;
  if (lw_is(n, "select") || lw_is(n, "select_copy")) {
    int64_t idx;
    if ((st = lw_int(lw, n, 2, "index", 0, &idx))) return st;
    if (rlx_dim_is_sym(d)) return lw_fail(RLX_ERR_UNSUPPORTED, "select along a symbolic complex axis");
    if (idx < -d || idx >= d)
      return lw_fail(RLX_ERR_SHAPE, "select index %lld is out of range for a dim of size %lld", (long long)idx,
                     (long long)d);
    start = idx < 0 ? idx + d : idx, end = start + 1;
  } else if (lw_is(n, "narrow")) {
    int64_t s0, len;
    if ((st = lw_int(lw, n, 2, "start", 0, &s0)) || (st = lw_int(lw, n, 3, "length", 0, &len))) return st;
    if (rlx_dim_is_sym(d)) return lw_fail(RLX_ERR_UNSUPPORTED, "narrow along a symbolic complex axis");
    if (s0 < 0) s0 += d;
    if (s0 < 0 || s0 > d || len < 0 || len > d - s0)
      return lw_fail(RLX_ERR_SHAPE, "narrow(start=%lld, length=%lld) is out of range for a dim of size %lld",
                     (long long)s0, (long long)len, (long long)d);
    start = s0, end = s0 + len;
  } else {
    if ((st = lw_slice_bound(lw, n, 2, "start", 0, &start)) || (st = lw_slice_bound(lw, n, 3, "end", INT64_MAX, &end)) ||
        (st = lw_int(lw, n, 4, "step", 1, &step)))
      return st;
    if (step < 1) return lw_fail(RLX_ERR_UNSUPPORTED, "slice step %lld must be positive", (long long)step);
    if ((st = lw_slice_normalize(lw, d, &start, &end, &step))) return st;
  }
  int32_t v = x.v;
  if (start != 0 || end != d || step != 1) {
    rlx_params p = {.slice = {.axis = a, .start = start, .end = end, .step = step}};
    v = lw_emit(lw, RLX_OP_SLICE, &p, &x.v, 1);
  }
  return lw_bind(lw, n, lw_reshape(lw, v, &ps));
}

#define CX_MAX_CAT 4096

/* cat / stack: every tensor as pairs of the result's dtype (a real one gets
 * a zero imaginary part), joined along the complex axis. */
rlx_status cx_lower_cat(rlx_lower *lw, const rlx_aten_node *n) {
  static _Thread_local int32_t xs[CX_MAX_CAT];
  const rlx_tinfo *t;
  rlx_shape ps;
  int64_t dim;
  int cnt = 0;
  rlx_status st = lw_tensor_list(lw, n, 0, "tensors", xs, CX_MAX_CAT, &cnt);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (!st) st = cx_out(n, &t, &ps);
  if (st) return st;
  const rlx_arg *list = lw_arg(n, 0, "tensors");
  bool stack = lw_is(n, "stack");
  int a, kept = 0;
  if ((st = lw_axis(dim, t->shape.rank, "argument 'dim'", &a))) return st;
  for (int i = 0; i < cnt; i++) {
    if (xs[i] < 0) return lw_fail(RLX_ERR_FORMAT, "%s of a None tensor", stack ? "stack" : "cat");
    cx_val x = {xs[i], lw_ref_is_complex(lw, list->u.list.items[i].u.s)};
    const rlx_shape *s = &lw_val(lw, x.v)->shape;
    if (!stack && !x.complex && s->rank == 1 && s->dims[0] == 0 && t->shape.rank != 1) continue; /* legacy empty */
    int32_t v = cx_pairs(lw, &x, t->dtype);
    if (stack) { /* each is the result without axis a */
      rlx_shape u = ps;
      u.dims[a] = 1;
      v = lw_reshape(lw, v, &u);
    }
    if (v < 0) return rlx_last_status();
    xs[kept++] = v;
  }
  if (!kept) return lw_fail(RLX_ERR_SHAPE, "%s of no tensors", stack ? "stack" : "cat");
  if (kept == 1) return lw_bind(lw, n, xs[0]);
  rlx_params p = {.axis = {.axis = a}};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_CONCAT, &p, xs, kept));
}

/* constant_pad_nd(self, pad, value) / pad(self, pad, "constant", value):
 * the pairs are padded along the complex axes with value + 0i. */
rlx_status cx_lower_pad(rlx_lower *lw, const rlx_aten_node *n) {
  cx_val x;
  int64_t pads[2 * RLX_MAX_RANK];
  int cnt;
  rlx_status st = cx_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_ints(lw, n, 1, "pad", pads, 2 * RLX_MAX_RANK, &cnt);
  if (st) return st;
  int value_pos = 2;
  if (lw_is(n, "pad")) {
    const rlx_arg *m = lw_arg(n, 2, "mode");
    if (m && (m->kind != RLX_ARG_STR || strcmp(m->u.s, "constant")))
      return lw_fail(RLX_ERR_UNSUPPORTED, "complex values are padded with a constant only");
    value_pos = 3;
  }
  const rlx_arg *va = lw_resolve(lw, lw_arg(n, value_pos, "value"));
  if (va && va->kind == RLX_ARG_STR) return lw_fail(RLX_ERR_UNSUPPORTED, "a complex pad value is not supported");
  double value = 0;
  if (va && (st = lw_float(lw, n, value_pos, "value", 0, &value))) return st;
  const rlx_shape xs = lw_val(lw, x.v)->shape;
  int r = cx_rank(lw, &x);
  if (cnt % 2 || cnt / 2 > r) return lw_fail(RLX_ERR_SHAPE, "%d pad values for a rank-%d tensor", cnt, r);
  rlx_params p;
  memset(&p, 0, sizeof p);
  p.pad.mode = RLX_PAD_CONSTANT;
  for (int i = 0; i < cnt / 2; i++) {
    int ax = r - 1 - i;
    int64_t d = xs.dims[ax], lo = pads[2 * i], hi = pads[2 * i + 1];
    bool ok = true;
    int64_t size = lw_add64(lw_add64(d, lo, &ok), hi, &ok);
    if (lo < -d || hi < -d || !ok || size < 0 || size > RLX_MAX_NUMEL)
      return lw_fail(RLX_ERR_SHAPE, "padding (%lld, %lld) of a dim of size %lld", (long long)lo, (long long)hi,
                     (long long)d);
    p.pad.lo[ax] = lo, p.pad.hi[ax] = hi;
  }
  int32_t v = x.complex ? x.v : cx_pairs(lw, &x, lw_val(lw, x.v)->dtype);
  if (v < 0) return rlx_last_status();
  if (value == 0) return lw_bind(lw, n, lw_emit(lw, RLX_OP_PAD, &p, &v, 1));
  int32_t re = cx_part(lw, v, 0), im = cx_part(lw, v, 1);
  if (re < 0 || im < 0) return rlx_last_status();
  int32_t pim = lw_emit(lw, RLX_OP_PAD, &p, &im, 1);
  p.pad.value = value;
  return lw_bind(lw, n, pim < 0 ? -1 : cx_join(lw, lw_emit(lw, RLX_OP_PAD, &p, &re, 1), pim));
}
