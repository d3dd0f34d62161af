/*
 * misc.c — lowering of ops that are compositions of rlx ops: ldexp, dist,
 * _trilinear (nn.functional.bilinear), resize (resize_, resize_as_). Each
 * follows torch's definition of the op (noted per handler), with its type
 * promotion and argument checks.
 */
#include <math.h>
#include <stdio.h>

#include "import/lower/lower.h"

static int32_t unary(rlx_lower *lw, rlx_unary_kind k, double a, int32_t x) {
  if (x < 0) return -1;
  rlx_params p = {.unary = {.kind = k, .a = a}};
  return lw_emit(lw, RLX_OP_UNARY, &p, &x, 1);
}

static int32_t reduce(rlx_lower *lw, rlx_reduce_kind k, uint32_t axes, bool keepdim, int32_t x) {
  if (x < 0) return -1;
  rlx_params p = {.reduce = {.kind = k, .axes = axes, .keepdim = keepdim}};
  return lw_emit(lw, RLX_OP_REDUCE, &p, &x, 1);
}

/* ldexp(self, other): torch's CPU kernel scales by 2^other exactly when
 * other is an integer or bool tensor (C's ldexp: 1e-30 * 2^200 is 1.6e30 in
 * float32), and computes self * pow(2.0, other) when other is float (there
 * 2^200 is inf in float32 first). The result dtype is the recorded one. */
rlx_status rlx_lower_ldexp(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, e;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_tensor(lw, n, 1, "other", &e);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t || !rlx_dtype_is_float(t->dtype))
    return lw_fail(RLX_ERR_FORMAT, "ldexp: the output's float dtype is not recorded");
  rlx_dtype et = lw_val(lw, e)->dtype;
  if (!rlx_dtype_is_float(et))
    return lw_bind(lw, n, lw_binary(lw, RLX_BINARY_LDEXP, lw_cast(lw, x, t->dtype), lw_cast(lw, e, t->dtype)));
  int32_t p = unary(lw, RLX_UNARY_RPOW_SCALAR, 2.0, e);
  if (p < 0) return rlx_last_status();
  return lw_bind(lw, n, lw_binary(lw, RLX_BINARY_MUL, lw_cast(lw, x, t->dtype), lw_cast(lw, p, t->dtype)));
}

/* dist(self, other, p) = vector norm of self - other over every element
 * (torch: at::norm(self - other, p)): p = inf is the largest |d|, -inf the
 * smallest, 0 the count of non-zeros, 2 sqrt(sum d^2), else (sum |d|^p)^(1/p). */
rlx_status rlx_lower_dist_norm(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, b;
  double p;
  rlx_status st = lw_tensor(lw, n, 0, "self", &a);
  if (!st) st = lw_tensor(lw, n, 1, "other", &b);
  if (!st) st = lw_float(lw, n, 2, "p", 2.0, &p);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t || !rlx_dtype_is_float(t->dtype))
    return lw_fail(RLX_ERR_UNSUPPORTED, "dist: norm(): input dtype should be floating point");
  int32_t d = lw_binary(lw, RLX_BINARY_SUB, lw_cast(lw, a, t->dtype), lw_cast(lw, b, t->dtype));
  if (d < 0) return rlx_last_status();
  rlx_shape flat = {.rank = 1, .dims = {rlx_shape_numel(&lw_val(lw, d)->shape)}};
  if ((d = lw_reshape(lw, d, &flat)) < 0) return rlx_last_status();
  uint32_t axes = 1;
  int32_t y;
  if (p == 2) {
    y = reduce(lw, RLX_REDUCE_NORM2, axes, false, d);
  } else if (isinf(p)) {
    y = reduce(lw, p > 0 ? RLX_REDUCE_MAX : RLX_REDUCE_MIN, axes, false, unary(lw, RLX_UNARY_ABS, 0, d));
  } else if (p == 0) {
    int32_t z = lw_scalar(lw, t->dtype, 0, 0);
    int32_t nz = z < 0 ? -1 : lw_cast(lw, lw_binary(lw, RLX_BINARY_NE, d, z), t->dtype);
    y = reduce(lw, RLX_REDUCE_SUM, axes, false, nz);
  } else {
    int32_t s = reduce(lw, RLX_REDUCE_SUM, axes, false, unary(lw, RLX_UNARY_POW_SCALAR, p, unary(lw, RLX_UNARY_ABS, 0, d)));
    y = p == 1 ? s : unary(lw, RLX_UNARY_POW_SCALAR, 1.0 / p, s);
  }
  return lw_bind(lw, n, y);
}

/* x with size-1 axes inserted at the positions set in `mask` (of `total`). */
static int32_t unsqueeze_mask(rlx_lower *lw, int32_t x, uint32_t mask, int total) {
  const rlx_shape *s = &lw_val(lw, x)->shape;
  rlx_shape o = {.rank = total};
  for (int i = 0, j = 0; i < total; i++) o.dims[i] = (mask >> i & 1) ? 1 : s->dims[j++];
  return lw_reshape(lw, x, &o);
}

static rlx_status dim_mask(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int total,
                           uint32_t *mask) {
  int64_t d[RLX_MAX_RANK];
  int cnt;
  rlx_status st = lw_ints(lw, n, pos, name, d, RLX_MAX_RANK, &cnt);
  if (st) return st;
  char what[48];
  snprintf(what, sizeof what, "argument '%s'", name);
  *mask = 0;
  for (int i = 0; i < cnt; i++) {
    int a;
    if ((st = lw_axis(d[i], total, what, &a))) return st;
    if (*mask >> a & 1) return lw_fail(RLX_ERR_SHAPE, "_trilinear: %s names dim %d twice", what, a);
    *mask |= 1u << a;
  }
  return RLX_OK;
}

/* _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim):
 * each input with size-1 dims inserted at its expand list, the three
 * multiplied (broadcasting) and summed over sumdim, which leaves the output.
 * bilinear's form (expand {1,3}, {0}, {1,2}, sum {2,3}: x1 [B, I], W [O, I, J],
 * x2 [B, J]) is one matmul, t = x2 @ W^T as [B, O*I], then sum_i t x1; others
 * materialize the broadcast product. unroll_dim only changes torch's loop order. */
rlx_status rlx_lower_trilinear(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t in[3];
  static const char *const names[3] = {"i1", "i2", "i3"}, *const ex[3] = {"expand1", "expand2", "expand3"};
  for (int k = 0; k < 3; k++) {
    rlx_status st = lw_tensor(lw, n, k, names[k], &in[k]);
    if (st) return st;
  }
  if (lw_symbolic(lw, in[0]) || lw_symbolic(lw, in[1]) || lw_symbolic(lw, in[2]))
    return lw_fail(RLX_ERR_UNSUPPORTED, "_trilinear at symbolic shapes");
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t) return lw_fail(RLX_ERR_FORMAT, "_trilinear: the output type is not recorded");
  uint32_t m[3], sum;
  rlx_status st;
  int total = 0;
  for (int k = 0; k < 3; k++) {
    int64_t d[RLX_MAX_RANK];
    int cnt;
    if ((st = lw_ints(lw, n, 3 + k, ex[k], d, RLX_MAX_RANK, &cnt))) return st;
    int tk = lw_val(lw, in[k])->shape.rank + cnt;
    if (k && tk != total)
      return lw_fail(RLX_ERR_SHAPE, "_trilinear: %s with its %d expanded dims has rank %d, not %d", names[k], cnt,
                     tk, total);
    total = tk;
  }
  if (total > RLX_MAX_RANK) return lw_fail(RLX_ERR_SHAPE, "_trilinear: rank %d exceeds %d", total, RLX_MAX_RANK);
  for (int k = 0; k < 3; k++)
    if ((st = dim_mask(lw, n, 3 + k, ex[k], total, &m[k]))) return st;
  if ((st = dim_mask(lw, n, 6, "sumdim", total, &sum))) return st;
  rlx_dtype ct = t->dtype;
  for (int k = 0; k < 3; k++)
    if ((in[k] = lw_cast(lw, in[k], ct)) < 0) return rlx_last_status();
  const rlx_shape x1 = lw_val(lw, in[0])->shape, w = lw_val(lw, in[1])->shape, x2 = lw_val(lw, in[2])->shape;
  int32_t y;
  if (total == 4 && m[0] == 0xA && m[1] == 0x1 && m[2] == 0x6 && sum == 0xC && x1.rank == 2 && w.rank == 3 &&
      x2.rank == 2 && x1.dims[0] == x2.dims[0] && x1.dims[1] == w.dims[1] && x2.dims[1] == w.dims[2]) {
    int64_t B = x1.dims[0], I = x1.dims[1], O = w.dims[0], J = w.dims[2];
    rlx_shape w2 = {.rank = 2, .dims = {O * I, J}}, t3 = {.rank = 3, .dims = {B, O, I}},
              x13 = {.rank = 3, .dims = {B, 1, I}};
    rlx_params p = {.matmul = {.trans_b = true, .alpha = 1, .beta = 1}};
    int32_t mm[2] = {in[2], lw_reshape(lw, in[1], &w2)};
    int32_t tt = mm[1] < 0 ? -1 : lw_reshape(lw, lw_emit(lw, RLX_OP_MATMUL, &p, mm, 2), &t3);
    int32_t pr = tt < 0 ? -1 : lw_binary(lw, RLX_BINARY_MUL, tt, lw_reshape(lw, in[0], &x13));
    y = reduce(lw, RLX_REDUCE_SUM, 1u << 2, false, pr);
  } else {
    int32_t u[3];
    for (int k = 0; k < 3; k++)
      if ((u[k] = unsqueeze_mask(lw, in[k], m[k], total)) < 0) return rlx_last_status();
    int32_t pr = lw_binary(lw, RLX_BINARY_MUL, u[0], u[1]);
    pr = pr < 0 ? -1 : lw_binary(lw, RLX_BINARY_MUL, pr, u[2]);
    y = sum ? reduce(lw, RLX_REDUCE_SUM, sum, false, pr) : pr;
  }
  return lw_bind(lw, n, y < 0 ? -1 : lw_reshape(lw, y, &t->shape));
}

/* resize(self, size): the first numel(size) elements of self in row-major
 * order, in the new shape. torch leaves the elements past self's storage
 * uninitialized, so a resize that grows the tensor has no defined value:
 * rlx refuses it. */
rlx_status rlx_lower_resize_storage(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t) return lw_fail(RLX_ERR_FORMAT, "resize: the output type is not recorded");
  if (lw_symbolic(lw, x) || rlx_shape_is_symbolic(&t->shape))
    return lw_fail(RLX_ERR_UNSUPPORTED, "resize at symbolic shapes");
  int64_t have = rlx_shape_numel(&lw_val(lw, x)->shape), want = rlx_shape_numel(&t->shape);
  if (want > have)
    return lw_fail(RLX_ERR_UNSUPPORTED, "resize from %lld to %lld elements: torch leaves the new elements "
                   "uninitialized, so the result has no defined value", (long long)have, (long long)want);
  rlx_shape flat = {.rank = 1, .dims = {have}};
  int32_t f = lw_reshape(lw, x, &flat);
  if (f >= 0 && want < have) {
    rlx_params p = {.slice = {.axis = 0, .start = 0, .end = want, .step = 1}};
    f = lw_emit(lw, RLX_OP_SLICE, &p, &f, 1);
  }
  return lw_bind(lw, n, f < 0 ? -1 : lw_reshape(lw, f, &t->shape));
}

/* segment_reduce(data, reduce, *, lengths, indices, offsets, axis, unsafe,
 * initial) onto the segment_reduce op over offsets: torch's offsets as they
 * are, or lengths made offsets (0, then their running sum along the last
 * dim); without unsafe, lengths must add up to the axis (checked at run
 * time, as torch checks it). indices is not implemented in torch either. */
rlx_status rlx_lower_segment_reduce(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, lengths, offsets;
  int64_t axis;
  bool unsafe;
  rlx_status st = lw_tensor(lw, n, 0, "data", &x);
  if (!st) st = lw_opt_tensor(lw, n, 2, "lengths", &lengths);
  if (!st) st = lw_opt_tensor(lw, n, 4, "offsets", &offsets);
  if (!st) st = lw_int(lw, n, 5, "axis", 0, &axis);
  if (!st) st = lw_bool(lw, n, 6, "unsafe", false, &unsafe);
  if (st) return st;
  const rlx_arg *ra = lw_arg(n, 1, "reduce"), *ia = lw_arg(n, 3, "indices"), *init = lw_arg(n, 7, "initial");
  if (!ra || ra->kind != RLX_ARG_STR) return lw_fail(RLX_ERR_INVALID_ARGUMENT, "segment_reduce: argument 'reduce' must be a string");
  static const struct { const char *name; rlx_reduce_kind kind; } kinds[] = {
      {"sum", RLX_REDUCE_SUM}, {"mean", RLX_REDUCE_MEAN}, {"max", RLX_REDUCE_MAX},
      {"min", RLX_REDUCE_MIN}, {"prod", RLX_REDUCE_PROD}};
  rlx_params p = {.segment_reduce = {.kind = RLX_REDUCE_COUNT}};
  for (size_t i = 0; i < RLX_COUNTOF(kinds); i++)
    if (!strcmp(ra->u.s, kinds[i].name)) p.segment_reduce.kind = kinds[i].kind;
  if (p.segment_reduce.kind == RLX_REDUCE_COUNT)
    return lw_fail(RLX_ERR_UNSUPPORTED, "segment_reduce: reduction '%s' is not sum, mean, max, min or prod", ra->u.s);
  if (ia) return lw_fail(RLX_ERR_UNSUPPORTED, "segment_reduce(): indices based reduction is not supported yet (torch)");
  if ((lengths >= 0) == (offsets >= 0))
    return lw_fail(RLX_ERR_INVALID_ARGUMENT, "segment_reduce: exactly one of lengths and offsets must be given");
  int rank = lw_val(lw, x)->shape.rank, a;
  if ((st = lw_axis(axis, rank, "argument 'axis'", &a))) return st;
  p.segment_reduce.axis = a;
  if (init) {
    p.segment_reduce.has_initial = true;
    if ((st = lw_float(lw, n, 7, "initial", 0, &p.segment_reduce.initial))) return st;
  }
  int32_t off;
  if (offsets >= 0) {
    off = lw_cast(lw, offsets, RLX_DTYPE_I64);
  } else {
    const rlx_shape ls = lw_val(lw, lengths)->shape;
    if (ls.rank != a + 1)
      return lw_fail(RLX_ERR_SHAPE, "segment_reduce: lengths has rank %d; it must be axis + 1 = %d", ls.rank, a + 1);
    rlx_params sp = {.scan = {.axis = a}};
    int32_t l64 = lw_cast(lw, lengths, RLX_DTYPE_I64);
    int32_t cs = l64 < 0 ? -1 : lw_emit(lw, RLX_OP_SCAN, &sp, &l64, 1);
    rlx_params zp = {.full = {.dtype = RLX_DTYPE_I64, .shape = ls}};
    zp.full.shape.dims[a] = 1;
    int32_t parts[2] = {lw_emit(lw, RLX_OP_FULL, &zp, NULL, 0), cs};
    rlx_params cp = {.axis = {.axis = a}};
    off = parts[0] < 0 || cs < 0 ? -1 : lw_emit(lw, RLX_OP_CONCAT, &cp, parts, 2);
    p.segment_reduce.check_sum = !unsafe;
  }
  if (off < 0) return rlx_last_status();
  int32_t in[2] = {x, off};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_SEGMENT_REDUCE, &p, in, 2));
}
