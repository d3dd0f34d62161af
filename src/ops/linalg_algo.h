/*
 * linalg_algo.h — the numerical routines behind the linalg op (linalg.c):
 * plain C on one matrix at a time, in double, row-major with the matrix's
 * own column count as leading dimension. They follow LAPACK's conventions
 * where torch exposes them (pivot choice and numbering, Householder
 * reflector signs, Bunch-Kaufman pivots), so factors match torch's, not just
 * their products. No allocation: the callers pass work space.
 *
 * Internal to src/ops/ (and tests/c/test_linalg.c).
 */
#ifndef RLX_LINALG_ALGO_H
#define RLX_LINALG_ALGO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/graph.h"

/* LU with partial pivoting (getrf): a [m, n] becomes L (unit, below the
 * diagonal) and U; row j was swapped with row piv[j] - 1 (piv [min(m, n)],
 * 1-based; the pivot is the first entry of largest magnitude). Returns info:
 * 0, or the 1-based index of the first zero pivot (the factorization goes
 * on, as LAPACK's). */
int la_getrf(double *a, int64_t m, int64_t n, int32_t *piv);

/* Solves op(A) X = B for A = P L U from la_getrf (lu [n, n], piv [n]);
 * b [n, k] is overwritten with X. op(A) = A^T when trans. */
void la_getrs(const double *lu, const int32_t *piv, int64_t n, bool trans, double *b, int64_t k);

/* Cholesky (potf2): reads the lower (upper) triangle of a [n, n]; writes L
 * (U = L^T when upper) and zeroes the other triangle. Returns info: 0, or
 * the order of the first leading minor that is not positive-definite (its
 * diagonal entry then holds the non-positive pivot, the later columns are
 * left as read). */
int la_potrf(double *a, int64_t n, bool upper);

/* Solves op(A) X = B for triangular a [n, n] (the upper or lower triangle;
 * unit: the diagonal is taken as 1); b [n, k] becomes X. */
void la_trsm(const double *a, int64_t n, bool upper, bool trans, bool unit, double *b, int64_t k);

/* Householder QR (geqr2): a [m, n] becomes R (on and above the diagonal)
 * and the reflectors' vectors below it; tau [min(m, n)]. Reflector i is
 * H = I - tau v v^T, v = (1, a[i+1.., i]), chosen as LAPACK's dlarfg:
 * beta = -sign(alpha) |(alpha, x)|, tau = (beta - alpha) / beta. */
void la_geqrf(double *a, int64_t m, int64_t n, double *tau);

/* Q = H_0 H_1 ... H_{k-1} restricted to its first nq columns (orgqr):
 * reflector i is column i of a [m, lda] below the diagonal (unit diagonal
 * implied); q [m, nq], k <= nq <= m. */
void la_orgqr(const double *a, int64_t m, int64_t lda, const double *tau, int64_t k, double *q, int64_t nq);

/* c [m, n] = op(Q) c (left) or c op(Q) (right), Q = H_0 ... H_{k-1} from
 * the reflectors in a [q, lda] (q = m when left, n otherwise); op(Q) = Q^T
 * when trans (ormqr). */
void la_ormqr(const double *a, int64_t lda, const double *tau, int64_t k, double *c, int64_t m, int64_t n,
              bool left, bool trans);

/* Symmetric eigendecomposition by cyclic Jacobi: a [n, n] symmetric (both
 * triangles filled) is destroyed; w [n] ascending, v [n, n] the eigenvectors
 * as columns (their signs are rlx's own), or NULL. */
void la_syevj(double *a, int64_t n, double *w, double *v);

/* SVD by one-sided Jacobi: a [m, n] -> s [min(m, n)] descending; with u and
 * vt, u [m, ucols] (ucols m when full, else min) and vt [vrows, n] (vrows n
 * when full, else min); u and vt NULL for the values alone. work: m n +
 * m^2 + n^2 + max(m, n) doubles. */
void la_gesvd(const double *a, int64_t m, int64_t n, bool full, double *s, double *u, double *vt, double *work);

/* Bunch-Kaufman LDL^T of the lower triangle of a [n, n] (sytf2, uplo 'L'):
 * a becomes D and the multipliers; piv [n] as LAPACK's (k + 1 for a 1x1
 * block, -(p + 1) on both rows of a 2x2 block). Returns info: 0, or the
 * 1-based index of the first zero diagonal block. */
int la_sytrf(double *a, int64_t n, int32_t *piv);

/* Solves A X = B from la_sytrf (ld [n, n], piv [n]); b [n, k] becomes X. */
void la_sytrs(const double *ld, const int32_t *piv, int64_t n, double *b, int64_t k);

/* exp(a) for a [n, n] into out [n, n] by scaling and squaring of the Taylor
 * series (to double precision); work: 3 n^2 doubles. A non-finite input
 * gives NaN everywhere. */
void la_expm(const double *a, int64_t n, double *out, double *work);

/* The linalg op's reference kernel (linalg_kernel.c); shapes were checked
 * by its infer (linalg.c). */
/* The largest matrix side M of a linalg node, from the dims of its (up to
 * 3) inputs (linalg.c; static: only batch axes may be symbolic). Every
 * output side is at most M. The kernel's scratch is six M x M matrices and
 * a few vectors (linalg_kernel.c lays them out). */
int64_t rlx_linalg_max_side(const rlx_node *n, const int64_t *const dims[3], const int ranks[3]);
static inline size_t rlx_linalg_scratch_doubles(int64_t m) { return (size_t)(6 * m * m + 4 * m + 8); }
rlx_status rlx_linalg_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, void *scratch);

#endif /* RLX_LINALG_ALGO_H */
