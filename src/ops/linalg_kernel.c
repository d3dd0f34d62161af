/*
 * linalg_kernel.c — the linalg op's reference kernel: per batch element,
 * load the matrices into double, run the routine of linalg_algo.h, store the
 * results (rounded once to the output dtype). Shapes were checked by infer
 * (linalg.c); run-time data (pivots) is checked here.
 *
 * Scratch (doubles, M the largest matrix side): three M x M matrices, work
 * of 3 M^2 + M, then the pivots (M int32) and a vector of M.
 */
#include <math.h>
#include <string.h>

#include "ops/linalg_algo.h"
#include "ops/ops_util.h"

typedef struct lk {
  double *m0, *m1, *m2, *work, *vec;
  int32_t *ipiv;
  int64_t batch;
} lk;

static void load(const rlx_tensor_view *v, int64_t off, int64_t cnt, double *dst) {
  for (int64_t i = 0; i < cnt; i++) dst[i] = rlx_load_f64(v->data, v->dtype, off + i);
}

static void store(rlx_tensor_view *v, int64_t off, int64_t cnt, const double *src) {
  for (int64_t i = 0; i < cnt; i++) rlx_store_f64(v->data, v->dtype, off + i, src[i]);
}

static void transpose(const double *src, int64_t r, int64_t c, double *dst) { /* src [r, c] -> dst [c, r] */
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++) dst[j * r + i] = src[i * c + j];
}

static int64_t dim(const rlx_tensor_view *v, int from_end) { return v->dims[v->rank - from_end]; }

/* LU pivots of batch element b, 1..rows each. */
static rlx_status load_lu_pivots(const rlx_tensor_view *v, int64_t b, int64_t k, int64_t rows, int32_t *piv) {
  const int32_t *src = (const int32_t *)v->data + b * k;
  for (int64_t j = 0; j < k; j++) {
    if (src[j] < 1 || src[j] > rows)
      return rlx_errorf(RLX_ERR_RUNTIME, "pivot %d at [%lld, %lld] is out of range for %lld rows (1-based)", src[j],
                        (long long)b, (long long)j, (long long)rows);
    piv[j] = src[j];
  }
  return RLX_OK;
}

/* Bunch-Kaufman pivots (sytrf's): k + 1 style for 1x1 blocks, a pair of equal
 * negatives for a 2x2 block. */
static rlx_status load_ldl_pivots(const rlx_tensor_view *v, int64_t b, int64_t n, int32_t *piv) {
  const int32_t *src = (const int32_t *)v->data + b * n;
  for (int64_t j = 0; j < n; j++) {
    int64_t p = src[j] < 0 ? -(int64_t)src[j] : src[j];
    bool ok = p >= 1 && p <= n;
    if (ok && src[j] < 0) {
      ok = j + 1 < n && src[j + 1] == src[j];
      if (ok) piv[j] = src[j], j++;
    }
    if (!ok)
      return rlx_errorf(RLX_ERR_RUNTIME, "LDL pivot %d at [%lld, %lld] is not a valid Bunch-Kaufman pivot for %lld rows",
                        src[j], (long long)b, (long long)j, (long long)n);
    piv[j] = src[j];
  }
  return RLX_OK;
}

static rlx_status check_info(const rlx_linalg_params *p, int info, int64_t b) {
  if (!info || p->check == RLX_LINALG_CHECK_NONE) return RLX_OK;
  if (p->check == RLX_LINALG_CHECK_NOT_PD)
    return rlx_errorf(RLX_ERR_RUNTIME, "the input is not positive-definite: the leading minor of order %d is not "
                      "(batch element %lld; torch raises here)", info, (long long)b);
  return rlx_errorf(RLX_ERR_RUNTIME, "the input matrix is singular: %s[%d, %d] is zero (batch element %lld; torch "
                    "raises here)", p->kind == RLX_LINALG_LDL_FACTOR ? "D" : "U", info, info, (long long)b);
}

static void store_info(rlx_tensor_view *v, int64_t b, int info) { ((int32_t *)v->data)[b] = info; }

/* B of batch element b into m (as [rows, k]), transposed when right. */
static void load_rhs(const rlx_tensor_view *v, int64_t b, bool right, double *m, double *tmp, int64_t *rows, int64_t *k) {
  int64_t r = dim(v, 2), c = dim(v, 1);
  if (!right) {
    load(v, b * r * c, r * c, m);
    *rows = r, *k = c;
    return;
  }
  load(v, b * r * c, r * c, tmp);
  transpose(tmp, r, c, m);
  *rows = c, *k = r;
}

static void store_rhs(rlx_tensor_view *v, int64_t b, bool right, const double *m, double *tmp) {
  int64_t r = dim(v, 2), c = dim(v, 1);
  if (!right) {
    store(v, b * r * c, r * c, m);
    return;
  }
  transpose(m, c, r, tmp);
  store(v, b * r * c, r * c, tmp);
}

/* LU_SOLVE, LDL_SOLVE, TRI_SOLVE on batch element b (a: its matrix). */
static rlx_status run_solve(const rlx_linalg_params *p, const rlx_tensor_view *in, rlx_tensor_view *out, lk *w,
                            int64_t b, const double *a, int64_t n) {
  int64_t rows, cols;
  rlx_status st;
  const rlx_tensor_view *bv = &in[p->kind == RLX_LINALG_TRI_SOLVE ? 1 : 2];
  bool right = p->kind != RLX_LINALG_LDL_SOLVE && !p->left;
  load_rhs(bv, b, right, w->m1, w->m2, &rows, &cols); /* B [rows = n, cols] */
  /* X op(A) = B is op(A)^T X^T = B^T */
  bool trans = p->trans != right;
  if (p->kind == RLX_LINALG_LU_SOLVE) {
    if ((st = load_lu_pivots(&in[1], b, n, n, w->ipiv))) return st;
    la_getrs(a, w->ipiv, n, trans, w->m1, cols);
  } else if (p->kind == RLX_LINALG_LDL_SOLVE) {
    if ((st = load_ldl_pivots(&in[1], b, n, w->ipiv))) return st;
    la_sytrs(a, w->ipiv, n, w->m1, cols);
  } else {
    la_trsm(a, n, p->upper, trans, p->unit, w->m1, cols);
  }
  store_rhs(&out[0], b, right, w->m1, w->m2);
  return RLX_OK;
}

/* LU_DET: det, or sign and logabsdet, from the LU diagonal and the pivots' parity. */
static rlx_status run_det(const rlx_tensor_view *in, rlx_tensor_view *out, int n_out, lk *w, int64_t b,
                          const double *a, int64_t n) {
  rlx_status st;
  if ((st = load_lu_pivots(&in[1], b, n, n, w->ipiv))) return st;
  double prod = 1, sign = 1, logabs = 0;
  for (int64_t j = 0; j < n; j++) {
    double d = a[j * n + j];
    if (w->ipiv[j] != j + 1) prod = -prod, sign = -sign;
    prod *= d;
    sign *= d > 0 ? 1 : d < 0 ? -1 : d; /* 0 stays 0, NaN stays NaN */
    logabs += log(fabs(d));
  }
  if (n_out == 1) {
    store(&out[0], b, 1, &prod);
  } else {
    store(&out[0], b, 1, &sign);
    store(&out[1], b, 1, &logabs);
  }
  return RLX_OK;
}

/* LU_UNPACK: P from the row swaps, L (unit lower) and U from the LU. */
static rlx_status run_unpack(const rlx_linalg_params *p, const rlx_tensor_view *in, rlx_tensor_view *out, lk *w,
                             int64_t b, const double *a, int64_t m, int64_t n, int64_t k) {
  rlx_status st;
  if ((st = load_lu_pivots(&in[1], b, k, m, w->ipiv))) return st;
  if (p->unpack_pivots) { /* P^T A = L U with P^T's row i being row perm[i] of A */
    int32_t *perm = (int32_t *)w->work;
    for (int64_t i = 0; i < m; i++) perm[i] = (int32_t)i;
    for (int64_t j = 0; j < k; j++) {
      int32_t t = perm[j];
      perm[j] = perm[w->ipiv[j] - 1], perm[w->ipiv[j] - 1] = t;
    }
    memset(w->m1, 0, sizeof(double) * (size_t)(m * m));
    for (int64_t i = 0; i < m; i++) w->m1[perm[i] * m + i] = 1;
    store(&out[0], b * m * m, m * m, w->m1);
  }
  if (p->unpack_data) {
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < k; j++) w->m1[i * k + j] = i > j ? a[i * n + j] : i == j;
    for (int64_t i = 0; i < k; i++)
      for (int64_t j = 0; j < n; j++) w->m2[i * n + j] = i <= j ? a[i * n + j] : 0;
    store(&out[1], b * m * k, m * k, w->m1);
    store(&out[2], b * k * n, k * n, w->m2);
  }
  return RLX_OK;
}

static rlx_status run_one(const rlx_linalg_params *p, const rlx_tensor_view *in, rlx_tensor_view *out, int n_out,
                          lk *w, int64_t b) {
  int64_t m = dim(&in[0], 2), n = dim(&in[0], 1), k = RLX_MIN(m, n);
  double *a = w->m0;
  load(&in[0], b * m * n, m * n, a);
  switch (p->kind) {
    case RLX_LINALG_LU_FACTOR: {
      int info = la_getrf(a, m, n, w->ipiv);
      store(&out[0], b * m * n, m * n, a);
      memcpy((int32_t *)out[1].data + b * k, w->ipiv, sizeof(int32_t) * (size_t)k);
      store_info(&out[2], b, info);
      return check_info(p, info, b);
    }
    case RLX_LINALG_CHOLESKY: {
      int info = la_potrf(a, n, p->upper);
      store(&out[0], b * n * n, n * n, a);
      store_info(&out[1], b, info);
      return check_info(p, info, b);
    }
    case RLX_LINALG_LDL_FACTOR: {
      int info = la_sytrf(a, n, w->ipiv);
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) a[i * n + j] = 0;
      store(&out[0], b * n * n, n * n, a);
      memcpy((int32_t *)out[1].data + b * n, w->ipiv, sizeof(int32_t) * (size_t)n);
      store_info(&out[2], b, info);
      return check_info(p, info, b);
    }
    case RLX_LINALG_LU_SOLVE:
    case RLX_LINALG_LDL_SOLVE:
    case RLX_LINALG_TRI_SOLVE:
      return run_solve(p, in, out, w, b, a, n);
    case RLX_LINALG_LU_DET:
      return run_det(in, out, n_out, w, b, a, n);
    case RLX_LINALG_LU_UNPACK:
      return run_unpack(p, in, out, w, b, a, m, n, k);
    case RLX_LINALG_GEQRF:
      la_geqrf(a, m, n, w->vec);
      store(&out[0], b * m * n, m * n, a);
      store(&out[1], b * k, k, w->vec);
      return RLX_OK;
    case RLX_LINALG_ORGQR: {
      int64_t kt = dim(&in[1], 1), nq = dim(&out[0], 1);
      load(&in[1], b * kt, kt, w->vec);
      la_orgqr(a, m, n, w->vec, kt, w->m1, nq);
      store(&out[0], b * m * nq, m * nq, w->m1);
      return RLX_OK;
    }
    case RLX_LINALG_ORMQR: {
      int64_t kt = dim(&in[1], 1), cm = dim(&in[2], 2), cn = dim(&in[2], 1);
      load(&in[1], b * kt, kt, w->vec);
      load(&in[2], b * cm * cn, cm * cn, w->m1);
      la_ormqr(a, n, w->vec, kt, w->m1, cm, cn, p->left, p->trans);
      store(&out[0], b * cm * cn, cm * cn, w->m1);
      return RLX_OK;
    }
    case RLX_LINALG_EIGH:
      for (int64_t i = 0; i < n; i++) /* the triangle UPLO names, mirrored */
        for (int64_t j = 0; j < i; j++) {
          if (p->upper) a[i * n + j] = a[j * n + i];
          else a[j * n + i] = a[i * n + j];
        }
      la_syevj(a, n, w->vec, p->compute_uv ? w->m1 : NULL);
      store(&out[0], b * n, n, w->vec);
      if (p->compute_uv) store(&out[1], b * n * n, n * n, w->m1);
      return RLX_OK;
    case RLX_LINALG_SVD: {
      la_gesvd(a, m, n, p->full, w->vec, p->compute_uv ? w->m1 : NULL, p->compute_uv ? w->m2 : NULL, w->work);
      store(&out[1], b * k, k, w->vec);
      if (p->compute_uv) {
        int64_t uc = dim(&out[0], 1), vr = dim(&out[2], 2);
        store(&out[0], b * m * uc, m * uc, w->m1);
        store(&out[2], b * vr * n, vr * n, w->m2);
      }
      return RLX_OK;
    }
    case RLX_LINALG_MATRIX_EXP:
      la_expm(a, n, w->m1, w->work);
      store(&out[0], b * n * n, n * n, w->m1);
      return RLX_OK;
    case RLX_LINALG_KIND_COUNT:
      break;
  }
  return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "invalid linalg kind %d", (int)p->kind);
}

rlx_status rlx_linalg_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, void *scratch) {
  const rlx_linalg_params *p = &n->p.linalg;
  const int64_t *dims[3] = {0};
  int ranks[3] = {0};
  for (int i = 0; i < n->n_in && i < 3; i++) dims[i] = in[i].dims, ranks[i] = in[i].rank;
  int64_t M = rlx_linalg_max_side(n, dims, ranks); /* the scratch holds rlx_linalg_scratch_doubles(M) */
  double *s = scratch;
  lk w = {.m0 = s, .m1 = s + M * M, .m2 = s + 2 * M * M, .work = s + 3 * M * M,
          .ipiv = (int32_t *)(s + 6 * M * M + M), .vec = s + 6 * M * M + 2 * M};
  int64_t batch = rlx_dims_prod(in[0].dims, 0, in[0].rank - 2);
  for (int64_t b = 0; b < batch; b++) {
    rlx_status st = run_one(p, in, out, n->n_out, &w, b);
    if (st) return st;
  }
  return RLX_OK;
}
