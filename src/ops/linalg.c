/*
 * linalg.c — the linalg op: one kind per LAPACK-style routine (params.h,
 * rlx_linalg_kind), over the last two axes with equal batch axes in front:
 *
 *   LU_FACTOR   A [*, m, n]                  -> LU [*, m, n], pivots i32 [*, min], info i32 [*]
 *   LU_SOLVE    LU [*, n, n], pivots [*, n], B [*, n, k] (left) | [*, k, n] -> X like B
 *   LU_DET      LU [*, n, n], pivots [*, n]  -> det [*]  |  sign [*], logabsdet [*] (log)
 *   LU_UNPACK   LU [*, m, n], pivots [*, k]  -> P [*, m, m], L [*, m, k], U [*, k, n] ([0] when not unpacked)
 *   CHOLESKY    A [*, n, n]                  -> L (U) [*, n, n], info i32 [*]
 *   TRI_SOLVE   A [*, n, n], B like LU_SOLVE -> X like B
 *   GEQRF       A [*, m, n]                  -> QR [*, m, n], tau [*, min]
 *   ORGQR       A [*, m, n], tau [*, k]      -> Q [*, m, ncols]   (k <= ncols <= m, k <= n)
 *   ORMQR       A [*, q, k0], tau [*, k], C [*, m, n] -> like C     (q = m when left, else n)
 *   EIGH        A [*, n, n]                  -> w [*, n], V [*, n, n] ([0] without compute_uv)
 *   SVD         A [*, m, n]                  -> U [*, m, m|k], S [*, k], Vh [*, n|k, n] ([0] without)
 *   LDL_FACTOR  A [*, n, n]                  -> LD [*, n, n], pivots i32 [*, n], info i32 [*]
 *   LDL_SOLVE   LD [*, n, n], pivots [*, n], B [*, n, k] -> X like B
 *   MATRIX_EXP  A [*, n, n]                  -> exp(A)
 *
 * Floats are f32 or f64 (torch's CPU linalg has no f16/bf16); the kernel
 * loads one matrix at a time into double, runs linalg_algo.h's routine and
 * rounds the results once. Pivots read at run time are checked (a bad one
 * is RLX_ERR_RUNTIME naming it); a node with `check` fails on a non-zero
 * info as torch's _linalg_check_errors does. Matrices are at most
 * LINALG_MAX_DIM on a side: the scratch is a few square matrices of the
 * largest side.
 */
#include <math.h>

#include "ops/linalg_algo.h"
#include "ops/ops_util.h"

#define LINALG_MAX_DIM 4096

static const char *const kind_names[RLX_LINALG_KIND_COUNT] = {
    "lu_factor", "lu_solve", "lu_det", "lu_unpack", "cholesky", "tri_solve", "geqrf",
    "orgqr", "ormqr", "eigh", "svd", "ldl_factor", "ldl_solve", "matrix_exp"};

/* inputs, outputs (n_out may be below when optional: LU_DET takes 1 or 2) */
static const int8_t kind_in[RLX_LINALG_KIND_COUNT] = {1, 3, 2, 2, 1, 2, 1, 2, 3, 1, 1, 1, 3, 1};
static const int8_t kind_out[RLX_LINALG_KIND_COUNT] = {3, 1, 2, 3, 2, 1, 2, 1, 1, 2, 3, 3, 1, 1};
/* Which inputs are matrices (their last two axes): bit k for input k; the
 * others are vectors (pivots, tau) along their last axis. Every output's
 * matrix and vector sides are at most the largest matrix side of these. */
static const uint8_t kind_matrices[RLX_LINALG_KIND_COUNT] = {1, 5, 1, 1, 1, 3, 1, 1, 5, 1, 1, 1, 5, 1};

typedef struct mat_info {
  int brank;              /* batch axes */
  int64_t r, c;           /* the last two axes (c = 1, r = last for a vector) */
} mat_info;

static bool is_linalg_float(rlx_dtype t) { return t == RLX_DTYPE_F32 || t == RLX_DTYPE_F64; }

/* The batch and matrix (tail 2) or vector (tail 1) axes of v, checked
 * against the batch of ref (NULL: v is the reference). */
static rlx_status split(const rlx_value *v, int tail, const rlx_value *ref, int ref_tail, const char *what,
                        mat_info *mi) {
  if (v->shape.rank < tail)
    RLX_INFER_FAIL("linalg %s must have at least %d dimensions, got %d", what, tail, v->shape.rank);
  mi->brank = v->shape.rank - tail;
  mi->r = v->shape.dims[v->shape.rank - tail];
  mi->c = tail == 2 ? v->shape.dims[v->shape.rank - 1] : 1;
  if (ref) {
    int rb = ref->shape.rank - ref_tail;
    bool ok = rb == mi->brank;
    for (int i = 0; ok && i < rb; i++) ok = v->shape.dims[i] == ref->shape.dims[i];
    if (!ok) {
      char a[96], b[96];
      RLX_INFER_FAIL("linalg %s %s has other batch dimensions than the input %s", what,
                     rlx_shape_str(&v->shape, a, sizeof a), rlx_shape_str(&ref->shape, b, sizeof b));
    }
  }
  return RLX_OK;
}

/* The batch axes of ref followed by `tail` dims. */
static rlx_shape with_batch(const rlx_value *ref, int ref_tail, int tail, int64_t d0, int64_t d1) {
  rlx_shape s = {.rank = ref->shape.rank - ref_tail + tail};
  memcpy(s.dims, ref->shape.dims, sizeof(s.dims[0]) * (size_t)(ref->shape.rank - ref_tail));
  if (tail >= 1) s.dims[s.rank - tail] = d0;
  if (tail == 2) s.dims[s.rank - 1] = d1;
  return s;
}

static const rlx_shape empty_shape = {.rank = 1, .dims = {0}};

static rlx_status need(bool ok, const rlx_linalg_params *p, const char *fmt, int64_t a, int64_t b) {
  if (ok) return RLX_OK;
  char msg[160];
  snprintf(msg, sizeof msg, fmt, (long long)a, (long long)b);
  return rlx_errorf(RLX_ERR_SHAPE, "linalg %s: %s", kind_names[p->kind], msg);
}

/* LU_SOLVE, LDL_SOLVE, TRI_SOLVE: the matrix x (a), pivots y (b), B (c). */
static rlx_status infer_solve(const rlx_linalg_params *p, const rlx_value *x, const rlx_value *y, const rlx_value *z,
                              const mat_info *a, const mat_info *b, rlx_shape *os) {
  mat_info c;
  rlx_status st;
  rlx_dtype t = x->dtype;
  const rlx_value *bv = p->kind == RLX_LINALG_TRI_SOLVE ? y : z;
  if ((st = need(a->r == a->c, p, "the matrix must be square, got %lld x %lld", a->r, a->c))) return st;
  if (p->kind != RLX_LINALG_TRI_SOLVE && (st = need(b->r == a->r, p, "pivots has %lld entries for %lld rows", b->r, a->r)))
    return st;
  if (bv->dtype != t)
    return rlx_errorf(RLX_ERR_SHAPE, "linalg %s: B is %s, the matrix %s", kind_names[p->kind],
                      rlx_dtype_name(bv->dtype), rlx_dtype_name(t));
  if ((st = split(bv, 2, x, 2, "B", &c))) return st;
  int64_t side = p->left || p->kind == RLX_LINALG_LDL_SOLVE ? c.r : c.c;
  if ((st = need(side == a->r, p, "B has %lld rows (columns when right) for a matrix of %lld", side, a->r))) return st;
  os[0] = bv->shape;
  return RLX_OK;
}

static rlx_status infer_kind(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_linalg_params *p = &n->p.linalg;
  const rlx_value *x = rlx_in(g, n, 0), *y = rlx_in(g, n, 1), *z = rlx_in(g, n, 2);
  mat_info a = {0}, b = {0}, c = {0};
  rlx_status st = split(x, 2, NULL, 0, "input", &a);
  if (st) return st;
  rlx_dtype t = x->dtype;
  int64_t k = RLX_MIN(a.r, a.c);
  for (int i = 0; i < n->n_out; i++) od[i] = t;
  bool piv_in = p->kind == RLX_LINALG_LU_SOLVE || p->kind == RLX_LINALG_LU_DET || p->kind == RLX_LINALG_LU_UNPACK ||
                p->kind == RLX_LINALG_LDL_SOLVE;
  if (piv_in) {
    if (y->dtype != RLX_DTYPE_I32)
      return rlx_errorf(RLX_ERR_SHAPE, "linalg %s: pivots must be int32, got %s", kind_names[p->kind],
                        rlx_dtype_name(y->dtype));
    if ((st = split(y, 1, x, 2, "pivots", &b))) return st;
  }
  switch (p->kind) {
    case RLX_LINALG_LU_FACTOR:
    case RLX_LINALG_LDL_FACTOR:
    case RLX_LINALG_CHOLESKY:
      if (p->kind != RLX_LINALG_LU_FACTOR && (st = need(a.r == a.c, p, "the input must be square, got %lld x %lld", a.r, a.c)))
        return st;
      os[0] = x->shape;
      if (p->kind == RLX_LINALG_CHOLESKY) {
        os[1] = with_batch(x, 2, 0, 0, 0), od[1] = RLX_DTYPE_I32;
        return RLX_OK;
      }
      os[1] = with_batch(x, 2, 1, k, 0), od[1] = RLX_DTYPE_I32;
      os[2] = with_batch(x, 2, 0, 0, 0), od[2] = RLX_DTYPE_I32;
      return RLX_OK;
    case RLX_LINALG_LU_SOLVE:
    case RLX_LINALG_LDL_SOLVE:
    case RLX_LINALG_TRI_SOLVE:
      return infer_solve(p, x, y, z, &a, &b, os);
    case RLX_LINALG_LU_DET:
      if ((st = need(a.r == a.c && b.r == a.r, p, "needs a square LU and its pivots, got %lld x %lld", a.r, a.c)))
        return st;
      os[0] = with_batch(x, 2, 0, 0, 0);
      if (n->n_out == 2) os[1] = os[0];
      return RLX_OK;
    case RLX_LINALG_LU_UNPACK:
      if ((st = need(b.r == k, p, "pivots has %lld entries, the LU's min(m, n) is %lld", b.r, k))) return st;
      os[0] = p->unpack_pivots ? with_batch(x, 2, 2, a.r, a.r) : empty_shape;
      os[1] = p->unpack_data ? with_batch(x, 2, 2, a.r, k) : empty_shape;
      os[2] = p->unpack_data ? with_batch(x, 2, 2, k, a.c) : empty_shape;
      return RLX_OK;
    case RLX_LINALG_GEQRF:
      os[0] = x->shape;
      os[1] = with_batch(x, 2, 1, k, 0);
      return RLX_OK;
    case RLX_LINALG_ORGQR: {
      if (y->dtype != t) return rlx_errorf(RLX_ERR_SHAPE, "linalg orgqr: tau must have the input's dtype");
      if ((st = split(y, 1, x, 2, "tau", &b))) return st;
      int64_t nq = p->ncols ? p->ncols : a.c;
      if ((st = need(b.r <= a.c && b.r <= nq, p, "tau has %lld entries for %lld reflector columns", b.r, RLX_MIN(a.c, nq))))
        return st;
      if ((st = need(nq <= a.r && a.c <= a.r, p, "Q with %lld columns needs at least as many rows, got %lld", RLX_MAX(nq, a.c), a.r)))
        return st;
      os[0] = with_batch(x, 2, 2, a.r, nq);
      return RLX_OK;
    }
    case RLX_LINALG_ORMQR:
      if (y->dtype != t || z->dtype != t) return rlx_errorf(RLX_ERR_SHAPE, "linalg ormqr: tau and C must have the input's dtype");
      if ((st = split(y, 1, x, 2, "tau", &b)) || (st = split(z, 2, x, 2, "C", &c))) return st;
      if ((st = need(a.r == (p->left ? c.r : c.c), p, "the reflectors have %lld rows, C's side %lld", a.r, p->left ? c.r : c.c)))
        return st;
      if ((st = need(b.r <= a.c && b.r <= a.r, p, "tau has %lld entries for %lld reflectors", b.r, RLX_MIN(a.r, a.c)))) return st;
      os[0] = z->shape;
      return RLX_OK;
    case RLX_LINALG_EIGH:
      if ((st = need(a.r == a.c, p, "the input must be square, got %lld x %lld", a.r, a.c))) return st;
      os[0] = with_batch(x, 2, 1, a.r, 0);
      os[1] = p->compute_uv ? x->shape : empty_shape;
      return RLX_OK;
    case RLX_LINALG_SVD:
      os[0] = p->compute_uv ? with_batch(x, 2, 2, a.r, p->full ? a.r : k) : empty_shape;
      os[1] = with_batch(x, 2, 1, k, 0);
      os[2] = p->compute_uv ? with_batch(x, 2, 2, p->full ? a.c : k, a.c) : empty_shape;
      return RLX_OK;
    case RLX_LINALG_MATRIX_EXP:
      if ((st = need(a.r == a.c, p, "the input must be square, got %lld x %lld", a.r, a.c))) return st;
      os[0] = x->shape;
      return RLX_OK;
    case RLX_LINALG_KIND_COUNT:
      break;
  }
  RLX_INFER_FAIL("invalid linalg kind %d", (int)p->kind);
}

static rlx_status linalg_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_linalg_params *p = &n->p.linalg;
  if ((unsigned)p->kind >= RLX_LINALG_KIND_COUNT) RLX_INFER_FAIL("invalid linalg kind %d", (int)p->kind);
  int want_out = kind_out[p->kind];
  if (n->n_in != kind_in[p->kind] || (n->n_out != want_out && !(p->kind == RLX_LINALG_LU_DET && n->n_out == 1)))
    RLX_INFER_FAIL("linalg %s takes %d inputs and gives %d outputs, got %d and %d", kind_names[p->kind],
                   kind_in[p->kind], want_out, n->n_in, n->n_out);
  for (int i = 0; i < n->n_in; i++)
    if (!rlx_in(g, n, i)) RLX_INFER_FAIL("linalg %s: input %d is missing", kind_names[p->kind], i);
  const rlx_value *x = rlx_in(g, n, 0);
  if (!is_linalg_float(x->dtype))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "linalg %s of a %s tensor (rlx's linear algebra is float32 and float64)",
                      kind_names[p->kind], rlx_dtype_name(x->dtype));
  if (p->ncols < 0 || p->ncols > LINALG_MAX_DIM) RLX_INFER_FAIL("linalg orgqr: ncols %lld out of range", (long long)p->ncols);
  /* batch axes may be symbolic (each matrix is one kernel step); matrix and
   * vector sides must be static: they size the scratch */
  for (int i = 0; i < n->n_in; i++) {
    const rlx_shape *s = &rlx_in(g, n, i)->shape;
    int tail = (kind_matrices[p->kind] >> i & 1) ? 2 : 1;
    for (int d = RLX_MAX(s->rank - tail, 0); d < s->rank; d++) {
      if (rlx_dim_is_sym(s->dims[d]))
        return rlx_errorf(RLX_ERR_UNSUPPORTED, "linalg %s: input %d has a symbolic matrix side (axis %d); only "
                          "batch axes may be symbolic", kind_names[p->kind], i, d);
      if (s->dims[d] > LINALG_MAX_DIM)
        return rlx_errorf(RLX_ERR_UNSUPPORTED, "linalg %s: a matrix side of %lld is above rlx's limit of %d",
                          kind_names[p->kind], (long long)s->dims[d], LINALG_MAX_DIM);
    }
  }
  return infer_kind(g, n, os, od);
}

int64_t rlx_linalg_max_side(const rlx_node *n, const int64_t *const dims[3], const int ranks[3]) {
  int64_t m = 1;
  for (int i = 0; i < n->n_in && i < 3; i++)
    if (kind_matrices[n->p.linalg.kind] >> i & 1)
      for (int d = RLX_MAX(ranks[i] - 2, 0); d < ranks[i]; d++) m = RLX_MAX(m, dims[i][d]);
  return m;
}

/* Scratch: six square matrices of the largest matrix side and a few vectors
 * (linalg_kernel.c lays it out), in doubles. */
static size_t linalg_scratch(const rlx_graph *g, const rlx_node *n) {
  const int64_t *dims[3] = {0};
  int ranks[3] = {0};
  for (int i = 0; i < n->n_in && i < 3; i++) dims[i] = rlx_in(g, n, i)->shape.dims, ranks[i] = rlx_in(g, n, i)->shape.rank;
  return rlx_linalg_scratch_doubles(rlx_linalg_max_side(n, dims, ranks)) * sizeof(double);
}

static void linalg_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_linalg_params *p = &n->p.linalg;
  rlx_bprintf(buf, cap, "%s", (unsigned)p->kind < RLX_LINALG_KIND_COUNT ? kind_names[p->kind] : "?");
  if (p->upper) rlx_bprintf(buf, cap, " upper");
  if (p->kind == RLX_LINALG_LU_SOLVE || p->kind == RLX_LINALG_TRI_SOLVE || p->kind == RLX_LINALG_ORMQR)
    rlx_bprintf(buf, cap, p->left ? " left" : " right");
  if (p->trans) rlx_bprintf(buf, cap, " trans");
  if (p->unit) rlx_bprintf(buf, cap, " unit");
  if (p->full) rlx_bprintf(buf, cap, " full");
  if ((p->kind == RLX_LINALG_SVD || p->kind == RLX_LINALG_EIGH) && !p->compute_uv) rlx_bprintf(buf, cap, " values");
  if (p->log) rlx_bprintf(buf, cap, " log");
  if (p->ncols) rlx_bprintf(buf, cap, " ncols=%lld", (long long)p->ncols);
  if (p->check) rlx_bprintf(buf, cap, " check");
}

const rlx_op_vtable rlx_op_linalg = {
    .infer = linalg_infer, .ref = rlx_linalg_ref, .scratch = linalg_scratch, .print = linalg_print, .symbolic = true};
