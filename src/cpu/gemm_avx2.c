/*
 * gemm_avx2.c — the 6x16 sgemm microkernel for AVX2 + FMA: 12 ymm
 * accumulators, two B vectors and a broadcast per k. Built with -mavx2 -mfma
 * (this file only); called only when the CPU has both.
 */
#include <immintrin.h>

#include "cpu/gemm.h"

void rlx_f32_gemm_ukernel__avx2_6x16(int64_t K, const float *a, const float *b, float *c, int64_t ldc,
                                     int m, int n, bool accumulate) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t k = 0; k < K; k++, a += 6, b += 16) {
    __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), x;
    x = _mm256_broadcast_ss(a + 0), c00 = _mm256_fmadd_ps(x, b0, c00), c01 = _mm256_fmadd_ps(x, b1, c01);
    x = _mm256_broadcast_ss(a + 1), c10 = _mm256_fmadd_ps(x, b0, c10), c11 = _mm256_fmadd_ps(x, b1, c11);
    x = _mm256_broadcast_ss(a + 2), c20 = _mm256_fmadd_ps(x, b0, c20), c21 = _mm256_fmadd_ps(x, b1, c21);
    x = _mm256_broadcast_ss(a + 3), c30 = _mm256_fmadd_ps(x, b0, c30), c31 = _mm256_fmadd_ps(x, b1, c31);
    x = _mm256_broadcast_ss(a + 4), c40 = _mm256_fmadd_ps(x, b0, c40), c41 = _mm256_fmadd_ps(x, b1, c41);
    x = _mm256_broadcast_ss(a + 5), c50 = _mm256_fmadd_ps(x, b0, c50), c51 = _mm256_fmadd_ps(x, b1, c51);
  }
  __m256 acc[6][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  if (m == 6 && n == 16) {
    for (int i = 0; i < 6; i++)
      for (int h = 0; h < 2; h++) {
        float *p = c + i * ldc + h * 8;
        __m256 v = accumulate ? _mm256_add_ps(_mm256_loadu_ps(p), acc[i][h]) : acc[i][h];
        _mm256_storeu_ps(p, v);
      }
    return;
  }
  float tmp[6][16];
  for (int i = 0; i < 6; i++) _mm256_storeu_ps(tmp[i], acc[i][0]), _mm256_storeu_ps(tmp[i] + 8, acc[i][1]);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) c[i * ldc + j] = accumulate ? c[i * ldc + j] + tmp[i][j] : tmp[i][j];
}

/* Skinny: m <= 4 rows of A against one 16-column panel (see gemm.h). */
void rlx_f32_gemm_skinny__avx2_16(int64_t K, const float *a, int64_t lda, const float *b, float *c, int64_t ldc,
                                   int m, int n, bool accumulate) {
  __m256 acc[4][2][2];
  for (int i = 0; i < 4; i++)
    for (int h = 0; h < 2; h++) acc[i][h][0] = acc[i][h][1] = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 1 < K; k += 2, b += 32) {
    __m256 b00 = _mm256_loadu_ps(b), b01 = _mm256_loadu_ps(b + 8);
    __m256 b10 = _mm256_loadu_ps(b + 16), b11 = _mm256_loadu_ps(b + 24);
    for (int i = 0; i < m; i++) {
      __m256 x0 = _mm256_set1_ps(a[i * lda + k]), x1 = _mm256_set1_ps(a[i * lda + k + 1]);
      acc[i][0][0] = _mm256_fmadd_ps(x0, b00, acc[i][0][0]);
      acc[i][0][1] = _mm256_fmadd_ps(x0, b01, acc[i][0][1]);
      acc[i][1][0] = _mm256_fmadd_ps(x1, b10, acc[i][1][0]);
      acc[i][1][1] = _mm256_fmadd_ps(x1, b11, acc[i][1][1]);
    }
  }
  if (k < K) {
    __m256 b00 = _mm256_loadu_ps(b), b01 = _mm256_loadu_ps(b + 8);
    for (int i = 0; i < m; i++) {
      __m256 x0 = _mm256_set1_ps(a[i * lda + k]);
      acc[i][0][0] = _mm256_fmadd_ps(x0, b00, acc[i][0][0]);
      acc[i][0][1] = _mm256_fmadd_ps(x0, b01, acc[i][0][1]);
    }
  }
  for (int i = 0; i < m; i++) {
    float tmp[16];
    _mm256_storeu_ps(tmp, _mm256_add_ps(acc[i][0][0], acc[i][1][0]));
    _mm256_storeu_ps(tmp + 8, _mm256_add_ps(acc[i][0][1], acc[i][1][1]));
    float *ci = c + i * ldc;
    for (int j = 0; j < n; j++) ci[j] = accumulate ? ci[j] + tmp[j] : tmp[j];
  }
}
