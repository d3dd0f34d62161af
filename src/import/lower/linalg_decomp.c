/*
 * linalg_decomp.c — lowering of torch's linear algebra (the factorizations,
 * solves, decompositions and what is built on them) onto the linalg op
 * (src/ops/linalg.c) and existing ops:
 *
 *   LU:        linalg_lu_factor_ex, linalg_lu, lu_unpack, linalg_lu_solve,
 *              _linalg_det, _linalg_slogdet, linalg_inv_ex, _linalg_solve_ex
 *   Cholesky:  linalg_cholesky_ex, cholesky_solve, cholesky_inverse
 *   triangular: linalg_solve_triangular, triangular_solve
 *   QR:        geqrf, ormqr, linalg_householder_product, linalg_qr
 *   LDL:       linalg_ldl_factor_ex, linalg_ldl_solve
 *   spectral:  _linalg_eigh, _linalg_svd, linalg_pinv (every overload),
 *              linalg_matrix_sqrth, linalg_polar, linalg_matrix_exp
 *   checks:    _linalg_check_errors (the info's factorization node fails at
 *              run time when info is non-zero, as torch raises)
 *
 * Batch axes broadcast as torch broadcasts them (solves); each result is
 * bound against the shape and dtype torch recorded.
 */
#include <float.h>
#include <math.h>

#include "import/lower/lower.h"

/* One linalg node; outs[0..n_out-1] get its outputs. -1 on error. */
static int32_t emit_la(rlx_lower *lw, const rlx_linalg_params *lp, const int32_t *in, int n_in, int n_out,
                       int32_t *outs) {
  rlx_params p;
  memset(&p, 0, sizeof p);
  p.linalg = *lp;
  int32_t node = lw_emit_node(lw, RLX_OP_LINALG, &p, in, n_in, n_out);
  if (node < 0) return -1;
  for (int i = 0; i < n_out; i++) outs[i] = lw->g->nodes[node].out[i];
  return outs[0];
}

static rlx_status need_float(rlx_lower *lw, int32_t v, const char *what) {
  rlx_dtype t = lw_val(lw, v)->dtype;
  if (t != RLX_DTYPE_F32 && t != RLX_DTYPE_F64)
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s is %s; rlx's linear algebra is float32 and float64 (as torch's on the CPU)",
                   what, rlx_dtype_name(t));
  return RLX_OK;
}

/* A float batch of matrices whose two matrix sides are static (batch axes
 * may be symbolic: the identities, masks and scratch are sized by the sides). */
static rlx_status need_matrix(rlx_lower *lw, int32_t v, const char *what) {
  rlx_status st = need_float(lw, v, what);
  const rlx_shape *s = &lw_val(lw, v)->shape;
  if (!st && s->rank < 2) return lw_fail(RLX_ERR_SHAPE, "%s must have at least 2 dimensions, got %d", what, s->rank);
  if (!st && (rlx_dim_is_sym(s->dims[s->rank - 2]) || rlx_dim_is_sym(s->dims[s->rank - 1])))
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s has a symbolic matrix side; rlx's linear algebra takes symbolic batch "
                   "axes only", what);
  return st;
}

/* x with its last two axes swapped (mT). */
static int32_t mT(rlx_lower *lw, int32_t x) {
  if (x < 0) return -1;
  int r = lw_val(lw, x)->shape.rank;
  rlx_params p;
  memset(&p, 0, sizeof p);
  for (int i = 0; i < RLX_MAX_RANK; i++) p.permute.perm[i] = i < r ? i : -1;
  p.permute.perm[r - 2] = r - 1, p.permute.perm[r - 1] = r - 2;
  return lw_emit(lw, RLX_OP_PERMUTE, &p, &x, 1);
}

/* x [*b, tail...] expanded to batch [batch (brank axes), tail...] (its own
 * tail kept). */
static int32_t expand_batch(rlx_lower *lw, int32_t x, const rlx_shape *batch, int tail) {
  if (x < 0) return -1;
  const rlx_shape xs = lw_val(lw, x)->shape;
  rlx_shape s = *batch;
  for (int i = 0; i < tail; i++) s.dims[s.rank++] = xs.dims[xs.rank - tail + i];
  if (rlx_shape_eq(&s, &xs)) return x;
  rlx_params p;
  memset(&p, 0, sizeof p);
  p.shape.shape = s;
  return lw_emit(lw, RLX_OP_EXPAND, &p, &x, 1);
}

/* The broadcast of the batch axes of a (tail ta) and b (tail tb). */
static rlx_status batch_broadcast(rlx_lower *lw, int32_t a, int ta, int32_t b, int tb, rlx_shape *out) {
  rlx_shape sa = lw_val(lw, a)->shape, sb = lw_val(lw, b)->shape;
  sa.rank -= ta, sb.rank -= tb;
  int r = RLX_MAX(sa.rank, sb.rank);
  out->rank = r;
  for (int i = 0; i < r; i++) {
    int ia = sa.rank - r + i, ib = sb.rank - r + i;
    rlx_dim da = ia >= 0 ? sa.dims[ia] : 1, db = ib >= 0 ? sb.dims[ib] : 1;
    if (!lw_dims_agree(lw, da, db) && da != 1 && db != 1) {
      if (rlx_dim_is_sym(da) || rlx_dim_is_sym(db))
        return lw_fail(RLX_ERR_UNSUPPORTED, "batch axis %d: a symbolic size broadcast against another size", i);
      return lw_fail(RLX_ERR_SHAPE, "the batch dimensions do not broadcast (%lld vs %lld at batch axis %d)",
                     (long long)da, (long long)db, i);
    }
    out->dims[i] = da == 1 ? db : da;
  }
  return RLX_OK;
}

/* The n x n identity of dtype t. */
static int32_t eye(rlx_lower *lw, rlx_dtype t, int64_t n) {
  rlx_shape s = {.rank = 2, .dims = {n, n}};
  size_t es = rlx_dtype_size(t), cells = (size_t)(n * n);
  uint8_t *d = rlx_aligned_alloc(cells ? cells * es : 1);
  if (!d) return lw_fail(RLX_ERR_OUT_OF_MEMORY, "out of memory for a %lld x %lld identity", (long long)n, (long long)n), -1;
  memset(d, 0, cells * es);
  for (int64_t i = 0; i < n; i++) rlx_store_f64(d, t, i * n + i, 1.0);
  return rlx_graph_add_const_owned(lw->g, t, &s, d);
}

/* The upper (lower) triangle of the last two axes of x, from diagonal 0. */
static int32_t triangle(rlx_lower *lw, int32_t x, bool upper) {
  if (x < 0) return -1;
  const rlx_shape xs = lw_val(lw, x)->shape;
  int64_t r = xs.dims[xs.rank - 2], c = xs.dims[xs.rank - 1];
  rlx_shape s = {.rank = 2, .dims = {r, c}};
  uint8_t *keep = rlx_aligned_alloc(r > 0 && c > 0 ? (size_t)(r * c) : 1);
  if (!keep) return lw_fail(RLX_ERR_OUT_OF_MEMORY, "out of memory for a triangle mask"), -1;
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++) keep[i * c + j] = upper ? j >= i : j <= i;
  int32_t in[3] = {rlx_graph_add_const_owned(lw->g, RLX_DTYPE_BOOL, &s, keep), x,
                   lw_scalar(lw, lw_val(lw, x)->dtype, 0, 0)};
  if (in[0] < 0 || in[2] < 0) return -1;
  return lw_emit(lw, RLX_OP_WHERE, NULL, in, 3);
}

/* x's rows [0, k) (axis -2). */
static int32_t first_rows(rlx_lower *lw, int32_t x, int64_t k) {
  if (x < 0) return -1;
  const rlx_shape xs = lw_val(lw, x)->shape;
  if (xs.dims[xs.rank - 2] == k) return x;
  rlx_params p = {.slice = {.axis = xs.rank - 2, .start = 0, .end = k, .step = 1}};
  return lw_emit(lw, RLX_OP_SLICE, &p, &x, 1);
}

static int32_t matmul(rlx_lower *lw, int32_t a, int32_t b) {
  if (a < 0 || b < 0) return -1;
  rlx_params p = {.matmul = {.alpha = 1, .beta = 1}};
  int32_t in[2] = {a, b};
  return lw_emit(lw, RLX_OP_MATMUL, &p, in, 2);
}

/* x [*, n] as [*, 1, n]: scales the columns of a matrix by broadcasting. */
static int32_t as_row(rlx_lower *lw, int32_t x) {
  if (x < 0) return -1;
  rlx_shape s = lw_val(lw, x)->shape;
  s.dims[s.rank] = s.dims[s.rank - 1];
  s.dims[s.rank - 1] = 1;
  s.rank++;
  return lw_reshape(lw, x, &s);
}

static rlx_status bind3(rlx_lower *lw, const rlx_aten_node *n, int32_t a, int32_t b, int32_t c, int32_t d, int cnt) {
  int32_t outs[4] = {a, b, c, d};
  for (int i = 0; i < cnt; i++)
    if (outs[i] < 0) return rlx_last_status();
  return lw_bind_multi(lw, n, outs, cnt);
}

/* ---- LU ---- */

/* linalg_lu_factor_ex(A, *, pivot=True, check_errors=False) -> (LU, pivots, info);
 * linalg_lu_factor(A, *, pivot=True) -> (LU, pivots), which raises as torch's does */
rlx_status rlx_lower_lu_factor(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, o[3];
  bool pivot, check, ex = !lw_is(n, "linalg_lu_factor");
  rlx_status st = lw_tensor(lw, n, 0, "A", &a);
  if (!st) st = lw_bool(lw, n, -1, "pivot", true, &pivot);
  if (!st) st = lw_bool(lw, n, -1, "check_errors", !ex, &check);
  if (!st) st = need_matrix(lw, a, "A");
  if (st) return st;
  if (!pivot) return lw_fail(RLX_ERR_UNSUPPORTED, "LU without pivoting (pivot=False); torch has it only on CUDA");
  rlx_linalg_params lp = {.kind = RLX_LINALG_LU_FACTOR, .check = check ? RLX_LINALG_CHECK_SINGULAR : 0};
  if (emit_la(lw, &lp, &a, 1, 3, o) < 0) return rlx_last_status();
  return bind3(lw, n, o[0], o[1], o[2], 0, ex ? 3 : 2);
}

static int32_t lu_unpack(rlx_lower *lw, int32_t lu, int32_t piv, bool data, bool pivots, int32_t o[3]) {
  rlx_linalg_params lp = {.kind = RLX_LINALG_LU_UNPACK, .unpack_data = data, .unpack_pivots = pivots};
  int32_t in[2] = {lu, piv};
  return emit_la(lw, &lp, in, 2, 3, o);
}

/* linalg_lu(A, *, pivot=True) -> (P, L, U) */
rlx_status rlx_lower_linalg_lu(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, f[3], o[3];
  bool pivot;
  rlx_status st = lw_tensor(lw, n, 0, "A", &a);
  if (!st) st = lw_bool(lw, n, -1, "pivot", true, &pivot);
  if (!st) st = need_matrix(lw, a, "A");
  if (st) return st;
  if (!pivot) return lw_fail(RLX_ERR_UNSUPPORTED, "LU without pivoting (pivot=False); torch has it only on CUDA");
  rlx_linalg_params lp = {.kind = RLX_LINALG_LU_FACTOR};
  if (emit_la(lw, &lp, &a, 1, 3, f) < 0 || lu_unpack(lw, f[0], f[1], true, true, o) < 0) return rlx_last_status();
  return bind3(lw, n, o[0], o[1], o[2], 0, 3);
}

/* lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True) -> (P, L, U) */
rlx_status rlx_lower_lu_unpack(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t lu, piv, o[3];
  bool data, pivots;
  rlx_status st = lw_tensor(lw, n, 0, "LU_data", &lu);
  if (!st) st = lw_tensor(lw, n, 1, "LU_pivots", &piv);
  if (!st) st = lw_bool(lw, n, 2, "unpack_data", true, &data);
  if (!st) st = lw_bool(lw, n, 3, "unpack_pivots", true, &pivots);
  if (!st) st = need_matrix(lw, lu, "LU_data");
  if (st) return st;
  if (lu_unpack(lw, lu, piv, data, pivots, o) < 0) return rlx_last_status();
  return bind3(lw, n, o[0], o[1], o[2], 0, 3);
}

/* A solve node over the broadcast batch of the matrix operands (mat, and
 * pivots when piv >= 0) and b [*, n, k]. */
static int32_t solve_bcast(rlx_lower *lw, const rlx_linalg_params *lp, int32_t mat, int32_t piv, int32_t b) {
  rlx_shape batch;
  if (batch_broadcast(lw, mat, 2, b, 2, &batch)) return -1;
  int32_t in[3], o;
  int k = 0;
  in[k++] = expand_batch(lw, mat, &batch, 2);
  if (piv >= 0) in[k++] = expand_batch(lw, piv, &batch, 1);
  in[k++] = expand_batch(lw, b, &batch, 2);
  for (int i = 0; i < k; i++)
    if (in[i] < 0) return -1;
  return emit_la(lw, lp, in, k, 1, &o);
}

/* linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False) */
rlx_status rlx_lower_lu_solve(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t lu, piv, b;
  bool left, adjoint;
  rlx_status st = lw_tensor(lw, n, 0, "LU", &lu);
  if (!st) st = lw_tensor(lw, n, 1, "pivots", &piv);
  if (!st) st = lw_tensor(lw, n, 2, "B", &b);
  if (!st) st = lw_bool(lw, n, -1, "left", true, &left);
  if (!st) st = lw_bool(lw, n, -1, "adjoint", false, &adjoint);
  if (!st) st = need_matrix(lw, lu, "LU");
  if (!st) st = need_matrix(lw, b, "B");
  if (st) return st;
  rlx_linalg_params lp = {.kind = RLX_LINALG_LU_SOLVE, .left = left, .trans = adjoint};
  return lw_bind(lw, n, solve_bcast(lw, &lp, lu, piv, b));
}

/* _linalg_det(A) -> (det, LU, pivots); _linalg_slogdet(A) -> (sign, logabsdet, LU, pivots).
 * torch factors A^T (its row-major A read as column-major): the LU and pivots
 * returned are A^T's, and det(A^T) = det(A). */
rlx_status rlx_lower_det(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, f[3], d[2];
  rlx_status st = lw_tensor(lw, n, 0, "A", &a);
  if (!st) st = need_matrix(lw, a, "A");
  if (st) return st;
  bool slog = lw_is(n, "_linalg_slogdet");
  rlx_linalg_params lu = {.kind = RLX_LINALG_LU_FACTOR}, det = {.kind = RLX_LINALG_LU_DET, .log = slog};
  if ((a = mT(lw, a)) < 0 || emit_la(lw, &lu, &a, 1, 3, f) < 0 || emit_la(lw, &det, f, 2, slog ? 2 : 1, d) < 0) return rlx_last_status();
  return slog ? bind3(lw, n, d[0], d[1], f[0], f[1], 4) : bind3(lw, n, d[0], f[0], f[1], 0, 3);
}

/* linalg_inv_ex(A, *, check_errors=False) -> (inverse, info) */
rlx_status rlx_lower_inv(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, f[3], x;
  bool check;
  rlx_status st = lw_tensor(lw, n, 0, "A", &a);
  if (!st) st = lw_bool(lw, n, -1, "check_errors", false, &check);
  if (!st) st = need_matrix(lw, a, "A");
  if (st) return st;
  const rlx_value *av = lw_val(lw, a);
  rlx_linalg_params lu = {.kind = RLX_LINALG_LU_FACTOR, .check = check ? RLX_LINALG_CHECK_SINGULAR : 0};
  rlx_linalg_params sv = {.kind = RLX_LINALG_LU_SOLVE, .left = true};
  if (emit_la(lw, &lu, &a, 1, 3, f) < 0) return rlx_last_status();
  int32_t id = eye(lw, av->dtype, av->shape.dims[av->shape.rank - 1]);
  if (id < 0 || (x = solve_bcast(lw, &sv, f[0], f[1], id)) < 0) return rlx_last_status();
  return bind3(lw, n, x, f[2], 0, 0, 2);
}

/* _linalg_solve_ex(A, B, *, left=True, check_errors=False) -> (result, LU, pivots, info).
 * B is a vector when 1-D or when its shape is A's without the last axis. */
rlx_status rlx_lower_solve(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, b, f[3], x;
  bool left, check;
  rlx_status st = lw_tensor(lw, n, 0, "A", &a);
  if (!st) st = lw_tensor(lw, n, 1, "B", &b);
  if (!st) st = lw_bool(lw, n, -1, "left", true, &left);
  if (!st) st = lw_bool(lw, n, -1, "check_errors", false, &check);
  if (!st) st = need_matrix(lw, a, "A");
  if (!st) st = need_float(lw, b, "B");
  if (st) return st;
  const rlx_shape as = lw_val(lw, a)->shape, bs = lw_val(lw, b)->shape;
  bool vec = bs.rank == 1;
  if (bs.rank == as.rank - 1) {
    vec = true;
    for (int i = 0; i < bs.rank; i++) vec = vec && lw_dims_agree(lw, bs.dims[i], as.dims[i]);
  }
  if (vec && !left) return lw_fail(RLX_ERR_SHAPE, "vector broadcasting of B is not supported for left=False (torch refuses it)");
  if (!vec && bs.rank < 2) return lw_fail(RLX_ERR_SHAPE, "B must be a vector or a batch of matrices");
  if (vec) {
    rlx_shape s = bs;
    s.dims[s.rank++] = 1;
    b = lw_reshape(lw, b, &s);
  }
  rlx_linalg_params lu = {.kind = RLX_LINALG_LU_FACTOR, .check = check ? RLX_LINALG_CHECK_SINGULAR : 0};
  rlx_linalg_params sv = {.kind = RLX_LINALG_LU_SOLVE, .left = left};
  if (b < 0 || emit_la(lw, &lu, &a, 1, 3, f) < 0 || (x = solve_bcast(lw, &sv, f[0], f[1], b)) < 0)
    return rlx_last_status();
  if (vec) {
    rlx_shape s = lw_val(lw, x)->shape;
    s.rank--;
    x = lw_reshape(lw, x, &s);
  }
  return bind3(lw, n, x, f[0], f[1], f[2], 4);
}

/* ---- Cholesky and triangular solves ---- */

/* linalg_cholesky_ex(A, *, upper=False, check_errors=False) -> (L, info) */
rlx_status rlx_lower_cholesky(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, o[2];
  bool upper, check;
  rlx_status st = lw_tensor(lw, n, 0, "self", &a);
  if (!st) st = lw_bool(lw, n, -1, "upper", false, &upper);
  if (!st) st = lw_bool(lw, n, -1, "check_errors", false, &check);
  if (!st) st = need_matrix(lw, a, "A");
  if (st) return st;
  rlx_linalg_params lp = {.kind = RLX_LINALG_CHOLESKY, .upper = upper, .check = check ? RLX_LINALG_CHECK_NOT_PD : 0};
  if (emit_la(lw, &lp, &a, 1, 2, o) < 0) return rlx_last_status();
  return bind3(lw, n, o[0], o[1], 0, 0, 2);
}

/* X with L L^T X = B (U^T U X = B when upper): two triangular solves. */
static int32_t cholesky_solve(rlx_lower *lw, int32_t b, int32_t l, bool upper) {
  rlx_linalg_params first = {.kind = RLX_LINALG_TRI_SOLVE, .upper = upper, .left = true, .trans = upper};
  rlx_linalg_params second = {.kind = RLX_LINALG_TRI_SOLVE, .upper = upper, .left = true, .trans = !upper};
  int32_t y = solve_bcast(lw, &first, l, -1, b);
  return y < 0 ? -1 : solve_bcast(lw, &second, l, -1, y);
}

/* cholesky_solve(self=B, input2=L, upper=False) */
rlx_status rlx_lower_cholesky_solve(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t b, l;
  bool upper;
  rlx_status st = lw_tensor(lw, n, 0, "self", &b);
  if (!st) st = lw_tensor(lw, n, 1, "input2", &l);
  if (!st) st = lw_bool(lw, n, 2, "upper", false, &upper);
  if (!st) st = need_matrix(lw, b, "B");
  if (!st) st = need_matrix(lw, l, "the Cholesky factor");
  return st ? st : lw_bind(lw, n, cholesky_solve(lw, b, l, upper));
}

/* cholesky_inverse(L, upper=False) = (L L^T)^-1 */
rlx_status rlx_lower_cholesky_inverse(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t l;
  bool upper;
  rlx_status st = lw_tensor(lw, n, 0, "self", &l);
  if (!st) st = lw_bool(lw, n, 1, "upper", false, &upper);
  if (!st) st = need_matrix(lw, l, "the Cholesky factor");
  if (st) return st;
  const rlx_value *lv = lw_val(lw, l);
  int32_t id = eye(lw, lv->dtype, lv->shape.dims[lv->shape.rank - 1]);
  return id < 0 ? rlx_last_status() : lw_bind(lw, n, cholesky_solve(lw, id, l, upper));
}

/* linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False);
 * triangular_solve(self=B, A, upper=True, transpose=False, unitriangular=False)
 * -> (solution, A broadcast to the batch) */
rlx_status rlx_lower_solve_triangular(rlx_lower *lw, const rlx_aten_node *n) {
  bool legacy = lw_is(n, "triangular_solve");
  int32_t a, b;
  bool upper, left = true, trans = false, unit;
  rlx_status st = lw_tensor(lw, n, legacy ? 1 : 0, "A", &a);
  if (!st) st = lw_tensor(lw, n, legacy ? 0 : 1, legacy ? "self" : "B", &b);
  if (!st) st = lw_bool(lw, n, 2, "upper", true, &upper);
  if (!st && legacy) st = lw_bool(lw, n, 3, "transpose", false, &trans);
  if (!st && !legacy) st = lw_bool(lw, n, -1, "left", true, &left);
  if (!st) st = lw_bool(lw, n, legacy ? 4 : -1, "unitriangular", false, &unit);
  if (!st) st = need_matrix(lw, a, "A");
  if (!st) st = need_matrix(lw, b, "B");
  if (st) return st;
  rlx_linalg_params lp = {.kind = RLX_LINALG_TRI_SOLVE, .upper = upper, .left = left, .trans = trans, .unit = unit};
  int32_t x = solve_bcast(lw, &lp, a, -1, b);
  if (!legacy) return lw_bind(lw, n, x);
  rlx_shape batch;
  if (x < 0 || batch_broadcast(lw, a, 2, b, 2, &batch)) return rlx_last_status();
  return bind3(lw, n, x, expand_batch(lw, a, &batch, 2), 0, 0, 2);
}

/* ---- QR ---- */

/* geqrf(A) -> (QR, tau) */
rlx_status rlx_lower_geqrf(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, o[2];
  rlx_status st = lw_tensor(lw, n, 0, "self", &a);
  if (!st) st = need_matrix(lw, a, "A");
  if (st) return st;
  rlx_linalg_params lp = {.kind = RLX_LINALG_GEQRF};
  if (emit_la(lw, &lp, &a, 1, 2, o) < 0) return rlx_last_status();
  return bind3(lw, n, o[0], o[1], 0, 0, 2);
}

static rlx_status same_batch3(rlx_lower *lw, int32_t *a, int32_t *tau, int32_t *c) {
  rlx_shape batch, b2;
  rlx_status st = batch_broadcast(lw, *a, 2, *tau, 1, &batch);
  if (!st && c) st = batch_broadcast(lw, *a, 2, *c, 2, &b2);
  if (st) return st;
  if (c && !rlx_shape_eq(&batch, &b2)) return lw_fail(RLX_ERR_SHAPE, "the batch dimensions of the reflectors, tau and C differ");
  *a = expand_batch(lw, *a, &batch, 2), *tau = expand_batch(lw, *tau, &batch, 1);
  if (c) *c = expand_batch(lw, *c, &batch, 2);
  return *a < 0 || *tau < 0 || (c && *c < 0) ? rlx_last_status() : RLX_OK;
}

/* linalg_householder_product(input, tau) */
rlx_status rlx_lower_householder_product(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, tau, q;
  rlx_status st = lw_tensor(lw, n, 0, "input", &a);
  if (!st) st = lw_tensor(lw, n, 1, "tau", &tau);
  if (!st) st = need_matrix(lw, a, "input");
  if (!st) st = need_float(lw, tau, "tau");
  if (!st) st = same_batch3(lw, &a, &tau, NULL);
  if (st) return st;
  rlx_linalg_params lp = {.kind = RLX_LINALG_ORGQR};
  int32_t in[2] = {a, tau};
  return lw_bind(lw, n, emit_la(lw, &lp, in, 2, 1, &q));
}

/* ormqr(self, input2=tau, input3=C, left=True, transpose=False) */
rlx_status rlx_lower_ormqr(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, tau, c, y;
  bool left, trans;
  rlx_status st = lw_tensor(lw, n, 0, "self", &a);
  if (!st) st = lw_tensor(lw, n, 1, "input2", &tau);
  if (!st) st = lw_tensor(lw, n, 2, "input3", &c);
  if (!st) st = lw_bool(lw, n, 3, "left", true, &left);
  if (!st) st = lw_bool(lw, n, 4, "transpose", false, &trans);
  if (!st) st = need_matrix(lw, a, "input");
  if (!st) st = need_matrix(lw, c, "other");
  if (!st) st = need_float(lw, tau, "tau");
  if (!st) st = same_batch3(lw, &a, &tau, &c);
  if (st) return st;
  rlx_linalg_params lp = {.kind = RLX_LINALG_ORMQR, .left = left, .trans = trans};
  int32_t in[3] = {a, tau, c};
  return lw_bind(lw, n, emit_la(lw, &lp, in, 3, 1, &y));
}

/* linalg_qr(A, mode="reduced") -> (Q, R); mode "complete" gives Q [*, m, m],
 * "r" an empty Q. */
rlx_status rlx_lower_qr(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, f[2], q;
  rlx_status st = lw_tensor(lw, n, 0, "A", &a);
  if (!st) st = need_matrix(lw, a, "A");
  if (st) return st;
  const rlx_arg *m = lw_resolve(lw, lw_arg(n, 1, "mode"));
  const char *mode = m && m->kind == RLX_ARG_STR ? m->u.s : "reduced";
  bool complete = !strcmp(mode, "complete"), ronly = !strcmp(mode, "r");
  if (!complete && !ronly && strcmp(mode, "reduced"))
    return lw_fail(RLX_ERR_SHAPE, "qr received unrecognized mode '%s' but expected one of 'reduced' (default), 'r', or "
                   "'complete'", mode);
  const rlx_shape as = lw_val(lw, a)->shape;
  int64_t rows = as.dims[as.rank - 2], cols = as.dims[as.rank - 1], k = RLX_MIN(rows, cols);
  rlx_linalg_params lp = {.kind = RLX_LINALG_GEQRF};
  if (emit_la(lw, &lp, &a, 1, 2, f) < 0) return rlx_last_status();
  int32_t r = triangle(lw, first_rows(lw, f[0], complete ? rows : k), true);
  if (ronly) {
    static const double nothing = 0; /* an empty Q: no element is read */
    rlx_shape e = {.rank = 1, .dims = {0}};
    q = rlx_graph_add_const(lw->g, lw_val(lw, a)->dtype, &e, &nothing);
  } else {
    rlx_linalg_params og = {.kind = RLX_LINALG_ORGQR, .ncols = complete ? rows : k};
    int32_t in[2] = {f[0], f[1]};
    if (cols > k) { /* wide: the reflectors are the first k columns */
      rlx_params sp = {.slice = {.axis = as.rank - 1, .start = 0, .end = k, .step = 1}};
      in[0] = lw_emit(lw, RLX_OP_SLICE, &sp, &f[0], 1);
    }
    q = in[0] < 0 ? -1 : emit_la(lw, &og, in, 2, 1, &q);
  }
  return bind3(lw, n, q, r, 0, 0, 2);
}

/* ---- LDL ---- */

/* linalg_ldl_factor_ex(A, *, hermitian=False, check_errors=False) -> (LD, pivots, info);
 * linalg_ldl_factor(A, *, hermitian=False) -> (LD, pivots), which raises as torch's does */
rlx_status rlx_lower_ldl_factor(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, o[3];
  bool check, ex = !lw_is(n, "linalg_ldl_factor");
  rlx_status st = lw_tensor(lw, n, 0, "self", &a);
  if (!st) st = lw_bool(lw, n, -1, "check_errors", !ex, &check);
  if (!st) st = need_matrix(lw, a, "A");
  if (st) return st; /* hermitian is the same factorization for real matrices */
  rlx_linalg_params lp = {.kind = RLX_LINALG_LDL_FACTOR, .check = check ? RLX_LINALG_CHECK_SINGULAR : 0};
  if (emit_la(lw, &lp, &a, 1, 3, o) < 0) return rlx_last_status();
  return bind3(lw, n, o[0], o[1], o[2], 0, ex ? 3 : 2);
}

/* linalg_ldl_solve(LD, pivots, B, *, hermitian=False) */
rlx_status rlx_lower_ldl_solve(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t ld, piv, b;
  rlx_status st = lw_tensor(lw, n, 0, "LD", &ld);
  if (!st) st = lw_tensor(lw, n, 1, "pivots", &piv);
  if (!st) st = lw_tensor(lw, n, 2, "B", &b);
  if (!st) st = need_matrix(lw, ld, "LD");
  if (!st) st = need_matrix(lw, b, "B");
  if (st) return st;
  rlx_linalg_params lp = {.kind = RLX_LINALG_LDL_SOLVE, .left = true};
  return lw_bind(lw, n, solve_bcast(lw, &lp, ld, piv, b));
}

/* ---- spectral ---- */

static int32_t eigh(rlx_lower *lw, int32_t a, bool upper, bool vecs, int32_t o[2]) {
  rlx_linalg_params lp = {.kind = RLX_LINALG_EIGH, .upper = upper, .compute_uv = vecs};
  return emit_la(lw, &lp, &a, 1, 2, o);
}

static int32_t svd(rlx_lower *lw, int32_t a, bool full, bool uv, int32_t o[3]) {
  rlx_linalg_params lp = {.kind = RLX_LINALG_SVD, .full = full, .compute_uv = uv};
  return emit_la(lw, &lp, &a, 1, 3, o);
}

/* _linalg_eigh(A, UPLO="L", compute_v=True) -> (eigenvalues, eigenvectors) */
rlx_status rlx_lower_eigh(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, o[2];
  bool vecs;
  rlx_status st = lw_tensor(lw, n, 0, "A", &a);
  if (!st) st = lw_bool(lw, n, 2, "compute_v", true, &vecs);
  if (!st) st = need_matrix(lw, a, "A");
  if (st) return st;
  const rlx_arg *u = lw_resolve(lw, lw_arg(n, 1, "UPLO"));
  const char *uplo = u && u->kind == RLX_ARG_STR ? u->u.s : "L";
  if (strcmp(uplo, "L") && strcmp(uplo, "U") && strcmp(uplo, "l") && strcmp(uplo, "u"))
    return lw_fail(RLX_ERR_SHAPE, "UPLO must be 'L' or 'U', got '%s'", uplo);
  if (eigh(lw, a, uplo[0] == 'U' || uplo[0] == 'u', vecs, o) < 0) return rlx_last_status();
  return bind3(lw, n, o[0], o[1], 0, 0, 2);
}

/* _linalg_svd(A, full_matrices=False, compute_uv=True, *, driver=None) -> (U, S, Vh) */
rlx_status rlx_lower_svd(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, o[3];
  bool full, uv;
  rlx_status st = lw_tensor(lw, n, 0, "A", &a);
  if (!st) st = lw_bool(lw, n, 1, "full_matrices", false, &full);
  if (!st) st = lw_bool(lw, n, 2, "compute_uv", true, &uv);
  if (!st) st = need_matrix(lw, a, "A");
  if (st) return st;
  if (svd(lw, a, full, uv, o) < 0) return rlx_last_status();
  return bind3(lw, n, o[0], o[1], o[2], 0, 3);
}

/* A scalar or tensor tolerance argument of pinv as a tensor of dtype t
 * (-2: absent). */
static int32_t tol_arg(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, rlx_dtype t) {
  const rlx_arg *a = lw_resolve(lw, lw_arg(n, pos, name));
  if (!a || a->kind == RLX_ARG_NONE) return -2;
  if (a->kind == RLX_ARG_REF) {
    int32_t v;
    if (lw_tensor(lw, n, pos, name, &v)) return -1;
    return lw_cast(lw, v, t);
  }
  return lw_scalar_arg(lw, a, t, name);
}

/* linalg_pinv(A, atol?, rtol?, hermitian) and its rcond overloads, as torch:
 * tol = max(atol, rtol * the largest singular value); atol defaults to 0,
 * rtol to eps * max(m, n) unless atol is given and positive (then 0);
 * pinv = V diag(1/s where s > tol, else 0) U^T (eigh with |w| when hermitian). */
rlx_status rlx_lower_pinv(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a;
  bool herm;
  const char *ov = lw_overload(n);
  bool rcond = !strcmp(ov, "default") || !strcmp(ov, "rcond_tensor");
  rlx_status st = lw_tensor(lw, n, 0, "self", &a);
  if (!st) st = lw_bool(lw, n, rcond ? 2 : -1, "hermitian", false, &herm);
  if (!st) st = need_matrix(lw, a, "A");
  if (st) return st;
  const rlx_shape as = lw_val(lw, a)->shape;
  rlx_dtype t = lw_val(lw, a)->dtype;
  int64_t rows = as.dims[as.rank - 2], cols = as.dims[as.rank - 1];
  int32_t atol = rcond ? -2 : tol_arg(lw, n, -1, "atol", t);
  int32_t rtol = rcond ? tol_arg(lw, n, 1, "rcond", t) : tol_arg(lw, n, -1, "rtol", t);
  if (atol == -1 || rtol == -1) return rlx_last_status();
  if (rows == 0 || cols == 0) { /* torch: an empty [*, n, m] */
    const rlx_tinfo *ti = lw_out(n, 0);
    if (!ti) return lw_fail(RLX_ERR_SHAPE, "pinv of an empty matrix has no recorded output");
    int32_t z = lw_scalar(lw, t, 0, 0);
    rlx_params p = {.shape = {.shape = ti->shape}};
    return lw_bind(lw, n, z < 0 ? -1 : lw_emit(lw, RLX_OP_EXPAND, &p, &z, 1));
  }
  double eps = (t == RLX_DTYPE_F64 ? DBL_EPSILON : FLT_EPSILON) * (double)RLX_MAX(rows, cols);
  int32_t zero = lw_scalar(lw, t, 0, 0);
  if (rtol == -2) {
    int32_t def = lw_scalar(lw, t, eps, 0);
    if (atol == -2) rtol = def;
    else { /* where(atol > 0, 0, eps * max(m, n)) */
      int32_t in[3] = {lw_binary(lw, RLX_BINARY_GT, atol, zero), zero, def};
      rtol = in[0] < 0 ? -1 : lw_emit(lw, RLX_OP_WHERE, NULL, in, 3);
    }
  }
  if (atol == -2) atol = zero;
  int32_t o[3], s, vecs, uT;
  if (herm) {
    if (eigh(lw, a, false, true, o) < 0) return rlx_last_status();
    rlx_params ap = {.unary = {.kind = RLX_UNARY_ABS}};
    s = lw_emit(lw, RLX_OP_UNARY, &ap, &o[0], 1), vecs = o[1], uT = mT(lw, o[1]);
  } else {
    if (svd(lw, a, false, true, o) < 0) return rlx_last_status();
    s = o[1], vecs = mT(lw, o[2]), uT = mT(lw, o[0]);
  }
  /* tol [*, 1] = max(atol[..., None], rtol[..., None] * max(s)) */
  rlx_params mx = {.reduce = {.kind = RLX_REDUCE_MAX, .axes = 1u << (lw_val(lw, s)->shape.rank - 1), .keepdim = true}};
  int32_t smax = s < 0 ? -1 : lw_emit(lw, RLX_OP_REDUCE, &mx, &s, 1);
  if (smax < 0 || atol < 0 || rtol < 0) return rlx_last_status();
  if (lw_val(lw, atol)->shape.rank) atol = as_row(lw, atol), atol = mT(lw, atol);
  if (lw_val(lw, rtol)->shape.rank) rtol = as_row(lw, rtol), rtol = mT(lw, rtol);
  int32_t tol = lw_binary(lw, RLX_BINARY_MAXIMUM, atol, lw_binary(lw, RLX_BINARY_MUL, rtol, smax));
  int32_t sv = herm ? o[0] : s; /* eigh keeps the sign: 1 / w */
  int32_t in[3] = {lw_binary(lw, RLX_BINARY_GT, s, tol), lw_binary(lw, RLX_BINARY_DIV, lw_scalar(lw, t, 1, 0), sv), zero};
  if (in[0] < 0 || in[1] < 0) return rlx_last_status();
  int32_t sinv = lw_emit(lw, RLX_OP_WHERE, NULL, in, 3);
  return lw_bind(lw, n, matmul(lw, lw_binary(lw, RLX_BINARY_MUL, vecs, as_row(lw, sinv)), uT));
}

/* linalg_matrix_sqrth(A) = V diag(sqrt(w)) V^T from eigh of the lower triangle */
rlx_status rlx_lower_matrix_sqrth(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, o[2];
  rlx_status st = lw_tensor(lw, n, 0, "self", &a);
  if (!st) st = need_matrix(lw, a, "A");
  if (st) return st;
  if (eigh(lw, a, false, true, o) < 0) return rlx_last_status();
  rlx_params sq = {.unary = {.kind = RLX_UNARY_SQRT}};
  int32_t r = lw_emit(lw, RLX_OP_UNARY, &sq, &o[0], 1);
  return lw_bind(lw, n, matmul(lw, lw_binary(lw, RLX_BINARY_MUL, o[1], as_row(lw, r)), mT(lw, o[1])));
}

/* linalg_polar(A) -> (U = W Vh, H = V diag(s) Vh) from the reduced SVD A = W S Vh */
rlx_status rlx_lower_polar(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, o[3];
  rlx_status st = lw_tensor(lw, n, 0, "A", &a);
  if (!st) st = need_matrix(lw, a, "A");
  if (st) return st;
  const rlx_shape as = lw_val(lw, a)->shape;
  if (as.dims[as.rank - 2] < as.dims[as.rank - 1])
    return lw_fail(RLX_ERR_SHAPE, "linalg.polar: input must have at least as many rows as columns, got %lld by %lld",
                   (long long)as.dims[as.rank - 2], (long long)as.dims[as.rank - 1]);
  if (svd(lw, a, false, true, o) < 0) return rlx_last_status();
  int32_t u = matmul(lw, o[0], o[2]);
  int32_t h = matmul(lw, lw_binary(lw, RLX_BINARY_MUL, mT(lw, o[2]), as_row(lw, o[1])), o[2]);
  return bind3(lw, n, u, h, 0, 0, 2);
}

/* linalg_matrix_exp(A) */
rlx_status rlx_lower_matrix_exp(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, y;
  rlx_status st = lw_tensor(lw, n, 0, "self", &a);
  if (!st) st = need_matrix(lw, a, "A");
  if (st) return st;
  rlx_linalg_params lp = {.kind = RLX_LINALG_MATRIX_EXP};
  return lw_bind(lw, n, emit_la(lw, &lp, &a, 1, 1, &y));
}

/* _linalg_check_errors(info, api_name, *, is_matrix): the factorization that
 * made info fails at run time on a non-zero entry (torch raises there). */
rlx_status rlx_lower_check_errors(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t info;
  rlx_status st = lw_tensor(lw, n, 0, "info", &info);
  if (st) return st;
  const rlx_value *v = lw_val(lw, info);
  rlx_node *p = v->kind == RLX_VALUE_NODE && v->producer >= 0 ? &lw->g->nodes[v->producer] : NULL;
  if (!p || p->op != RLX_OP_LINALG || p->out[p->n_out - 1] != info ||
      (p->p.linalg.kind != RLX_LINALG_LU_FACTOR && p->p.linalg.kind != RLX_LINALG_CHOLESKY &&
       p->p.linalg.kind != RLX_LINALG_LDL_FACTOR))
    return lw_fail(RLX_ERR_UNSUPPORTED, "rlx checks the info of an LU, Cholesky or LDL factorization; this info "
                   "tensor comes from elsewhere");
  p->p.linalg.check = p->p.linalg.kind == RLX_LINALG_CHOLESKY ? RLX_LINALG_CHECK_NOT_PD : RLX_LINALG_CHECK_SINGULAR;
  return RLX_OK;
}

/* mT(x), mH(x), adjoint(x): the last two axes swapped (real dtypes: no conjugate) */
rlx_status rlx_lower_mT(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  if (lw_val(lw, x)->shape.rank < 2)
    return lw_fail(RLX_ERR_SHAPE, "tensor.mT is only supported on matrices or batches of matrices, got %d-D",
                   lw_val(lw, x)->shape.rank);
  return lw_bind(lw, n, mT(lw, x));
}
