/*
 * gemm_ref.h — the reference GEMM that matmul, conv and attention share.
 *
 *   C[M,N] = A[M,K] @ B[K,N]      (B row stride ldb; C overwritten)
 *
 * f32 accumulates in f32 (as torch's CPU BLAS does), f64 in f64. Loop order
 * i-k-j keeps the inner loop contiguous so the compiler can vectorize it.
 */
#ifndef RLX_GEMM_REF_H
#define RLX_GEMM_REF_H

#include "core/core.h"

void rlx_gemm_ref_f32(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                      const float *B, int64_t ldb, float *C, int64_t ldc);
void rlx_gemm_ref_f64(int64_t M, int64_t N, int64_t K, const double *A, int64_t lda,
                      const double *B, int64_t ldb, double *C, int64_t ldc);

#endif
