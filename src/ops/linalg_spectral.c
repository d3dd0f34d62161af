/*
 * linalg_spectral.c — Householder QR (geqrf, orgqr, ormqr), the symmetric
 * eigensolver and the SVD (Jacobi rotations, sorted as LAPACK sorts), and the
 * matrix exponential (contracts in linalg_algo.h).
 *
 * Jacobi rather than LAPACK's tridiagonal / bidiagonal QR: a page of code,
 * accurate to a few ulp of double in every singular value and eigenvalue,
 * and the float results the op stores are rounded from those. Singular
 * vectors and eigenvectors are unique only up to sign (and within repeated
 * values); rlx's signs are its own, not LAPACK's.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ops/linalg_algo.h"

#define JACOBI_SWEEPS 100

/* v = (1, a[(i+1).., i]) in column i of a [m, lda]; applies H = I - tau v v^T
 * to the rows i.. of c [.., ldc], columns c0..c1-1, from the left. */
static void reflect_left(const double *a, int64_t lda, int64_t m, int64_t i, double tau, double *c, int64_t ldc,
                         int64_t c0, int64_t c1) {
  if (tau == 0) return;
  for (int64_t j = c0; j < c1; j++) {
    double w = c[i * ldc + j];
    for (int64_t r = i + 1; r < m; r++) w += a[r * lda + i] * c[r * ldc + j];
    w *= tau;
    c[i * ldc + j] -= w;
    for (int64_t r = i + 1; r < m; r++) c[r * ldc + j] -= w * a[r * lda + i];
  }
}

/* The same from the right: columns i..n-1 of every row of c [rows, n]. */
static void reflect_right(const double *a, int64_t lda, int64_t n, int64_t i, double tau, double *c, int64_t rows) {
  if (tau == 0) return;
  for (int64_t r = 0; r < rows; r++) {
    double *row = c + r * n;
    double w = row[i];
    for (int64_t t = i + 1; t < n; t++) w += row[t] * a[t * lda + i];
    w *= tau;
    row[i] -= w;
    for (int64_t t = i + 1; t < n; t++) row[t] -= w * a[t * lda + i];
  }
}

void la_geqrf(double *a, int64_t m, int64_t n, double *tau) {
  int64_t k = m < n ? m : n;
  for (int64_t i = 0; i < k; i++) {
    double alpha = a[i * n + i], xnorm = 0;
    for (int64_t r = i + 1; r < m; r++) xnorm = hypot(xnorm, a[r * n + i]);
    if (xnorm == 0) { /* dlarfg: H = I */
      tau[i] = 0;
      continue;
    }
    double beta = -copysign(hypot(alpha, xnorm), alpha);
    tau[i] = (beta - alpha) / beta;
    double scale = 1 / (alpha - beta);
    for (int64_t r = i + 1; r < m; r++) a[r * n + i] *= scale;
    a[i * n + i] = beta;
    reflect_left(a, n, m, i, tau[i], a, n, i + 1, n);
  }
}

void la_orgqr(const double *a, int64_t m, int64_t lda, const double *tau, int64_t k, double *q, int64_t nq) {
  memset(q, 0, sizeof(double) * (size_t)(m * nq));
  for (int64_t i = 0; i < m && i < nq; i++) q[i * nq + i] = 1;
  for (int64_t i = k - 1; i >= 0; i--) reflect_left(a, lda, m, i, tau[i], q, nq, i, nq);
}

void la_ormqr(const double *a, int64_t lda, const double *tau, int64_t k, double *c, int64_t m, int64_t n,
              bool left, bool trans) {
  bool forward = left == trans; /* Q^T C = H_{k-1}..H_0 C and C Q = C H_0..H_{k-1} start at H_0 */
  for (int64_t s = 0; s < k; s++) {
    int64_t i = forward ? s : k - 1 - s;
    if (left) reflect_left(a, lda, m, i, tau[i], c, n, 0, n);
    else reflect_right(a, lda, n, i, tau[i], c, m);
  }
}

/* A Jacobi rotation (c, s) that zeroes the off-diagonal of [[app, apq], [apq, aqq]]. */
static void jacobi_rotation(double app, double aqq, double apq, double *c, double *s) {
  double theta = (aqq - app) / (2 * apq);
  double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(1 + theta * theta));
  if (!isfinite(theta)) t = 0.5 / theta; /* |theta| beyond 1e154: t ~ 1 / (2 theta) */
  *c = 1 / sqrt(1 + t * t);
  *s = t * *c;
}

void la_syevj(double *a, int64_t n, double *w, double *v) {
  if (v) {
    memset(v, 0, sizeof(double) * (size_t)(n * n));
    for (int64_t i = 0; i < n; i++) v[i * n + i] = 1;
  }
  for (int sweep = 0; sweep < JACOBI_SWEEPS; sweep++) {
    bool rotated = false;
    for (int64_t p = 0; p < n; p++)
      for (int64_t q = p + 1; q < n; q++) {
        double apq = a[p * n + q], app = a[p * n + p], aqq = a[q * n + q];
        if (apq == 0 || fabs(apq) <= DBL_EPSILON * 0.5 * sqrt(fabs(app * aqq))) continue;
        if (!isfinite(apq)) continue;
        double c, s;
        jacobi_rotation(app, aqq, apq, &c, &s);
        rotated = true;
        for (int64_t k = 0; k < n; k++) { /* columns p, q */
          double kp = a[k * n + p], kq = a[k * n + q];
          a[k * n + p] = c * kp - s * kq, a[k * n + q] = s * kp + c * kq;
        }
        for (int64_t k = 0; k < n; k++) { /* rows p, q */
          double pk = a[p * n + k], qk = a[q * n + k];
          a[p * n + k] = c * pk - s * qk, a[q * n + k] = s * pk + c * qk;
        }
        if (v)
          for (int64_t k = 0; k < n; k++) {
            double kp = v[k * n + p], kq = v[k * n + q];
            v[k * n + p] = c * kp - s * kq, v[k * n + q] = s * kp + c * kq;
          }
      }
    if (!rotated) break;
  }
  for (int64_t i = 0; i < n; i++) w[i] = a[i * n + i];
  for (int64_t i = 1; i < n; i++) /* insertion sort, ascending, the vectors along */
    for (int64_t j = i; j > 0 && w[j] < w[j - 1]; j--) {
      double t = w[j];
      w[j] = w[j - 1], w[j - 1] = t;
      for (int64_t k = 0; v && k < n; k++) {
        t = v[k * n + j];
        v[k * n + j] = v[k * n + j - 1], v[k * n + j - 1] = t;
      }
    }
}

/* Columns good..want-1 of u [r, ldu] made orthonormal to the columns before
 * them: each the unit vector e_i with the largest residual after two passes
 * of Gram-Schmidt. tmp [r]. */
static void complete_basis(double *u, int64_t r, int64_t ldu, int64_t good, int64_t want, double *tmp) {
  for (int64_t j = good; j < want; j++) {
    double best = -1;
    int64_t bi = 0;
    for (int pass = 0; pass < 2; pass++) { /* pass 0 picks e_i, pass 1 builds it */
      for (int64_t e = 0; e < r; e++) {
        if (pass == 1 && e != bi) continue;
        for (int64_t t = 0; t < r; t++) tmp[t] = t == e;
        for (int gs = 0; gs < 2; gs++)
          for (int64_t c = 0; c < j; c++) {
            double d = 0;
            for (int64_t t = 0; t < r; t++) d += u[t * ldu + c] * tmp[t];
            for (int64_t t = 0; t < r; t++) tmp[t] -= d * u[t * ldu + c];
          }
        double nrm = 0;
        for (int64_t t = 0; t < r; t++) nrm = hypot(nrm, tmp[t]);
        if (pass == 0 && nrm > best) best = nrm, bi = e;
        if (pass == 1)
          for (int64_t t = 0; t < r; t++) u[t * ldu + j] = tmp[t] / nrm;
      }
    }
  }
}

/* One-sided Jacobi on the tall t [r, c] (r >= c, destroyed): s [c]
 * descending, and with vecs, uf [r, r] (its first c columns the left
 * vectors, the rest completed when ufull) and v [c, c]. */
static void svd_tall(double *t, int64_t r, int64_t c, double *s, double *uf, bool ufull, double *v, bool vecs,
                     double *tmp) {
  for (int64_t i = 0; vecs && i < c * c; i++) v[i] = i % (c + 1) == 0;
  for (int sweep = 0; sweep < JACOBI_SWEEPS; sweep++) {
    bool rotated = false;
    for (int64_t p = 0; p < c; p++)
      for (int64_t q = p + 1; q < c; q++) {
        double al = 0, be = 0, ga = 0;
        for (int64_t k = 0; k < r; k++) {
          double x = t[k * c + p], y = t[k * c + q];
          al += x * x, be += y * y, ga += x * y;
        }
        if (ga == 0 || !isfinite(ga) || fabs(ga) <= DBL_EPSILON * sqrt(al * be)) continue;
        double cs, sn;
        jacobi_rotation(al, be, ga, &cs, &sn);
        rotated = true;
        for (int64_t k = 0; k < r; k++) {
          double x = t[k * c + p], y = t[k * c + q];
          t[k * c + p] = cs * x - sn * y, t[k * c + q] = sn * x + cs * y;
        }
        for (int64_t k = 0; vecs && k < c; k++) {
          double x = v[k * c + p], y = v[k * c + q];
          v[k * c + p] = cs * x - sn * y, v[k * c + q] = sn * x + cs * y;
        }
      }
    if (!rotated) break;
  }
  for (int64_t j = 0; j < c; j++) {
    double nrm = 0;
    for (int64_t k = 0; k < r; k++) nrm = hypot(nrm, t[k * c + j]);
    s[j] = nrm;
  }
  for (int64_t i = 1; i < c; i++) /* insertion sort, descending (stable), columns along */
    for (int64_t j = i; j > 0 && s[j] > s[j - 1]; j--) {
      double x = s[j];
      s[j] = s[j - 1], s[j - 1] = x;
      for (int64_t k = 0; k < r; k++) x = t[k * c + j], t[k * c + j] = t[k * c + j - 1], t[k * c + j - 1] = x;
      for (int64_t k = 0; vecs && k < c; k++) x = v[k * c + j], v[k * c + j] = v[k * c + j - 1], v[k * c + j - 1] = x;
    }
  if (!vecs) return;
  int64_t good = 0;
  for (int64_t j = 0; j < c; j++) {
    if (s[j] > 0 && good == j) good++;
    for (int64_t k = 0; k < r; k++) uf[k * r + j] = s[j] > 0 ? t[k * c + j] / s[j] : 0;
  }
  complete_basis(uf, r, r, good, ufull ? r : c, tmp);
}

void la_gesvd(const double *a, int64_t m, int64_t n, bool full, double *s, double *u, double *vt, double *work) {
  bool tall = m >= n, vecs = u && vt;
  int64_t r = tall ? m : n, c = tall ? n : m;
  double *t = work, *uf = t + r * c, *v = uf + r * r, *tmp = v + c * c;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      if (tall) t[i * c + j] = a[i * n + j];
      else t[j * c + i] = a[i * n + j];
    }
  svd_tall(t, r, c, s, uf, full, v, vecs, tmp);
  if (!vecs) return;
  int64_t k = c, ucols = full ? m : k, vrows = full ? n : k;
  if (tall) { /* A = Uf S V^T: u = Uf[:, :ucols], vt = V^T */
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < ucols; j++) u[i * ucols + j] = uf[i * r + j];
    for (int64_t i = 0; i < vrows; i++)
      for (int64_t j = 0; j < n; j++) vt[i * n + j] = v[j * c + i];
  } else { /* A^T = Uf S V^T: A = V S Uf^T, u = V, vt = Uf^T[:vrows] */
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < ucols; j++) u[i * ucols + j] = v[i * c + j];
    for (int64_t i = 0; i < vrows; i++)
      for (int64_t j = 0; j < n; j++) vt[i * n + j] = uf[j * r + i];
  }
}

static void matmul_sq(const double *x, const double *y, double *z, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      double acc = 0;
      for (int64_t t = 0; t < n; t++) acc += x[i * n + t] * y[t * n + j];
      z[i * n + j] = acc;
    }
}

void la_expm(const double *a, int64_t n, double *out, double *work) {
  int64_t nn = n * n;
  double norm = 0;
  for (int64_t j = 0; j < n; j++) {
    double col = 0;
    for (int64_t i = 0; i < n; i++) col += fabs(a[i * n + j]);
    if (!(col <= norm)) norm = col; /* NaN sticks */
  }
  if (!isfinite(norm)) {
    for (int64_t i = 0; i < nn; i++) out[i] = NAN;
    return;
  }
  int sq = 0;
  double scale = 1;
  while (norm * scale > 0.5) scale *= 0.5, sq++;
  double *x = work, *term = x + nn, *tmp = term + nn;
  for (int64_t i = 0; i < nn; i++) {
    x[i] = a[i] * scale;
    term[i] = out[i] = i % (n + 1) == 0;
  }
  for (int k = 1; k <= 40; k++) { /* ||X|| <= 1/2: 1/2^k / k! is below 1e-17 well before 40 */
    matmul_sq(term, x, tmp, n);
    double big = 0;
    for (int64_t i = 0; i < nn; i++) {
      term[i] = tmp[i] / k;
      out[i] += term[i];
      if (fabs(term[i]) > big) big = fabs(term[i]);
    }
    if (big == 0 || big < 1e-18) break;
  }
  for (int s = 0; s < sq; s++) {
    matmul_sq(out, out, tmp, n);
    memcpy(out, tmp, sizeof(double) * (size_t)nn);
  }
}
