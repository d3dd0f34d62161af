/*
 * linalg_factor.c — the triangular factorizations and their solves: LU with
 * partial pivoting, Cholesky, triangular solves, Bunch-Kaufman LDL^T
 * (contracts in linalg_algo.h). Unblocked, as LAPACK's level-2 routines
 * (getf2, potf2, sytf2) which LAPACK itself runs on small matrices, so the
 * pivots chosen are LAPACK's.
 */
#include <math.h>

#include "ops/linalg_algo.h"

#define A_(i, j) a[(i) * lda + (j)]

int la_getrf(double *a, int64_t m, int64_t n, int32_t *piv) {
  int64_t lda = n, k = m < n ? m : n;
  int info = 0;
  for (int64_t j = 0; j < k; j++) {
    int64_t p = j; /* idamax: the first entry of largest magnitude */
    double best = fabs(A_(j, j));
    for (int64_t i = j + 1; i < m; i++)
      if (fabs(A_(i, j)) > best) best = fabs(A_(i, j)), p = i;
    piv[j] = (int32_t)(p + 1);
    if (A_(p, j) != 0) {
      if (p != j)
        for (int64_t c = 0; c < n; c++) {
          double t = A_(j, c);
          A_(j, c) = A_(p, c), A_(p, c) = t;
        }
      double d = A_(j, j);
      for (int64_t i = j + 1; i < m; i++) A_(i, j) /= d;
    } else if (!info) {
      info = (int)(j + 1);
    }
    for (int64_t i = j + 1; i < m; i++) {
      double l = A_(i, j);
      if (l == 0) continue;
      for (int64_t c = j + 1; c < n; c++) A_(i, c) -= l * A_(j, c);
    }
  }
  return info;
}

static void swap_rows(double *b, int64_t k, int64_t r, int64_t s) {
  for (int64_t c = 0; c < k; c++) {
    double t = b[r * k + c];
    b[r * k + c] = b[s * k + c], b[s * k + c] = t;
  }
}

void la_trsm(const double *a, int64_t n, bool upper, bool trans, bool unit, double *b, int64_t k) {
  int64_t lda = n;
  /* op(A) is lower exactly when (lower, no trans) or (upper, trans): forward substitution */
  bool forward = upper == trans;
  for (int64_t s = 0; s < n; s++) {
    int64_t i = forward ? s : n - 1 - s;
    for (int64_t c = 0; c < k; c++) {
      double v = b[i * k + c];
      for (int64_t t = 0; t < s; t++) {
        int64_t j = forward ? t : n - 1 - t;
        v -= (trans ? A_(j, i) : A_(i, j)) * b[j * k + c];
      }
      b[i * k + c] = unit ? v : v / A_(i, i);
    }
  }
}

void la_getrs(const double *lu, const int32_t *piv, int64_t n, bool trans, double *b, int64_t k) {
  if (!trans) {
    for (int64_t j = 0; j < n; j++)
      if (piv[j] - 1 != j) swap_rows(b, k, j, piv[j] - 1);
    la_trsm(lu, n, false, false, true, b, k);
    la_trsm(lu, n, true, false, false, b, k);
  } else { /* A^T = U^T L^T P^T */
    la_trsm(lu, n, true, true, false, b, k);
    la_trsm(lu, n, false, true, true, b, k);
    for (int64_t j = n - 1; j >= 0; j--)
      if (piv[j] - 1 != j) swap_rows(b, k, j, piv[j] - 1);
  }
}

int la_potrf(double *a, int64_t n, bool upper) {
  int64_t lda = n;
  /* L[i][j] is A_(i, j) for lower, A_(j, i) for upper (U = L^T) */
#define L_(i, j) (*(upper ? &A_(j, i) : &A_(i, j)))
  for (int64_t j = 0; j < n; j++) {
    double d = L_(j, j);
    for (int64_t t = 0; t < j; t++) d -= L_(j, t) * L_(j, t);
    if (!(d > 0)) { /* also NaN */
      L_(j, j) = d;
      for (int64_t i = 0; i < n; i++)
        for (int64_t c = i + 1; c < n; c++) L_(i, c) = 0;
      return (int)(j + 1);
    }
    d = sqrt(d);
    L_(j, j) = d;
    for (int64_t i = j + 1; i < n; i++) {
      double v = L_(i, j);
      for (int64_t t = 0; t < j; t++) v -= L_(i, t) * L_(j, t);
      L_(i, j) = v / d;
    }
  }
  for (int64_t i = 0; i < n; i++)
    for (int64_t c = i + 1; c < n; c++) L_(i, c) = 0;
#undef L_
  return 0;
}

/* Swaps rows and columns r < s of the symmetric trailing matrix whose lower
 * triangle from row/column `from` on holds the data (dsytf2's interchange). */
static void sym_swap(double *a, int64_t lda, int64_t n, int64_t r, int64_t s) {
  for (int64_t i = s + 1; i < n; i++) {
    double t = A_(i, r);
    A_(i, r) = A_(i, s), A_(i, s) = t;
  }
  for (int64_t j = r + 1; j < s; j++) {
    double t = A_(j, r);
    A_(j, r) = A_(s, j), A_(s, j) = t;
  }
  double t = A_(r, r);
  A_(r, r) = A_(s, s), A_(s, s) = t;
}

int la_sytrf(double *a, int64_t n, int32_t *piv) {
  int64_t lda = n;
  const double alpha = (1 + sqrt(17.0)) / 8;
  int info = 0;
  for (int64_t k = 0; k < n;) {
    int64_t kstep = 1, kp = k, imax = k;
    double absakk = fabs(A_(k, k)), colmax = 0;
    for (int64_t i = k + 1; i < n; i++)
      if (fabs(A_(i, k)) > colmax) colmax = fabs(A_(i, k)), imax = i;
    if ((absakk > colmax ? absakk : colmax) == 0 || absakk != absakk) {
      if (!info) info = (int)(k + 1);
      kp = k;
    } else {
      if (absakk < alpha * colmax) {
        double rowmax = 0; /* largest off-diagonal entry of row/column imax */
        for (int64_t j = k; j < imax; j++)
          if (fabs(A_(imax, j)) > rowmax) rowmax = fabs(A_(imax, j));
        for (int64_t j = imax + 1; j < n; j++)
          if (fabs(A_(j, imax)) > rowmax) rowmax = fabs(A_(j, imax));
        if (absakk >= alpha * colmax * (colmax / rowmax)) kp = k;
        else if (fabs(A_(imax, imax)) >= alpha * rowmax) kp = imax;
        else kp = imax, kstep = 2;
      }
      int64_t kk = k + kstep - 1;
      if (kp != kk) {
        sym_swap(a, lda, n, kk, kp);
        if (kstep == 2) {
          double t = A_(k + 1, k);
          A_(k + 1, k) = A_(kp, k), A_(kp, k) = t;
        }
      }
      if (kstep == 1) {
        double d11 = 1 / A_(k, k);
        for (int64_t j = k + 1; j < n; j++) {
          double x = A_(j, k);
          for (int64_t i = j; i < n; i++) A_(i, j) -= d11 * A_(i, k) * x;
        }
        for (int64_t i = k + 1; i < n; i++) A_(i, k) *= d11;
      } else if (k < n - 2) {
        double d21 = A_(k + 1, k), d11 = A_(k + 1, k + 1) / d21, d22 = A_(k, k) / d21;
        double t = 1 / (d11 * d22 - 1);
        d21 = t / d21;
        for (int64_t j = k + 2; j < n; j++) {
          double wk = d21 * (d11 * A_(j, k) - A_(j, k + 1));
          double wkp1 = d21 * (d22 * A_(j, k + 1) - A_(j, k));
          for (int64_t i = j; i < n; i++) A_(i, j) -= A_(i, k) * wk + A_(i, k + 1) * wkp1;
          A_(j, k) = wk, A_(j, k + 1) = wkp1;
        }
      }
    }
    if (kstep == 1) piv[k] = (int32_t)(kp + 1);
    else piv[k] = piv[k + 1] = (int32_t)-(kp + 1);
    k += kstep;
  }
  return info;
}

void la_sytrs(const double *ld, const int32_t *piv, int64_t n, double *b, int64_t k) {
  const double *a = ld;
  int64_t lda = n;
  for (int64_t i = 0; i < n;) { /* L D Y = P B */
    if (piv[i] > 0) {
      int64_t p = piv[i] - 1;
      if (p != i) swap_rows(b, k, i, p);
      for (int64_t r = i + 1; r < n; r++)
        for (int64_t c = 0; c < k; c++) b[r * k + c] -= A_(r, i) * b[i * k + c];
      for (int64_t c = 0; c < k; c++) b[i * k + c] /= A_(i, i);
      i++;
    } else {
      int64_t p = -piv[i] - 1;
      if (p != i + 1) swap_rows(b, k, i + 1, p);
      for (int64_t r = i + 2; r < n; r++)
        for (int64_t c = 0; c < k; c++) b[r * k + c] -= A_(r, i) * b[i * k + c] + A_(r, i + 1) * b[(i + 1) * k + c];
      double akm1k = A_(i + 1, i), akm1 = A_(i, i) / akm1k, ak = A_(i + 1, i + 1) / akm1k;
      double denom = akm1 * ak - 1;
      for (int64_t c = 0; c < k; c++) {
        double bkm1 = b[i * k + c] / akm1k, bk = b[(i + 1) * k + c] / akm1k;
        b[i * k + c] = (ak * bkm1 - bk) / denom;
        b[(i + 1) * k + c] = (akm1 * bk - bkm1) / denom;
      }
      i += 2;
    }
  }
  for (int64_t i = n - 1; i >= 0;) { /* L^T P^T X = Y */
    bool two = piv[i] < 0;
    for (int64_t row = i - (two ? 1 : 0); row <= i; row++)
      for (int64_t r = i + 1; r < n; r++)
        for (int64_t c = 0; c < k; c++) b[row * k + c] -= A_(r, row) * b[r * k + c];
    int64_t p = two ? -piv[i] - 1 : piv[i] - 1;
    if (p != i) swap_rows(b, k, i, p);
    i -= two ? 2 : 1;
  }
}
