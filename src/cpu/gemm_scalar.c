/*
 * gemm_scalar.c — the portable 4x8 sgemm microkernel (any CPU).
 */
#include "cpu/gemm.h"

void rlx_f32_gemm_ukernel__scalar_4x8(int64_t K, const float *a, const float *b, float *c, int64_t ldc,
                                      int m, int n, bool accumulate) {
  float acc[4][8] = {{0}};
  for (int64_t k = 0; k < K; k++)
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 8; j++) acc[i][j] += a[k * 4 + i] * b[k * 8 + j];
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];
}

void rlx_f32_gemm_skinny__scalar_8(int64_t K, const float *a, int64_t lda, const float *b, float *c, int64_t ldc,
                                   int m, int n, bool accumulate) {
  float acc[4][8] = {{0}};
  for (int64_t k = 0; k < K; k++)
    for (int i = 0; i < m; i++)
      for (int j = 0; j < 8; j++) acc[i][j] += a[i * lda + k] * b[k * 8 + j];
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];
}
