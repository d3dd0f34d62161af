/*
 * bench_gemm.c — rlx's sgemm against OpenBLAS (when built with it) on the
 * same matrices in the same run (rlx's repetitions, then OpenBLAS's, per
 * shape); prints median GFLOP/s and ratios.
 *
 *   bench_gemm [threads]     (OpenBLAS threads follow OPENBLAS_NUM_THREADS)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cpu/gemm.h"

#ifdef RLX_BENCH_OPENBLAS
#include <cblas.h>
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 0;
  rlx_threadpool *tp;
  if (rlx_threadpool_create(threads, &tp)) return 1;
  printf("rlx sgemm microkernel: %s, %d threads\n", rlx_sgemm_active()->name, rlx_threadpool_size(tp));
  int64_t shapes[][4] = {{1024, 1024, 1024, 0}, {64, 3136, 576, 0}, {512, 49, 4608, 0}, {128, 768, 768, 1},
                         {8, 3072, 768, 1}, {197, 2304, 768, 1}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
    int tb = (int)shapes[s][3];
    float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(K * N));
    float *C = malloc(sizeof(float) * (size_t)(M * N));
    for (int64_t i = 0; i < M * K; i++) A[i] = (float)(i % 7) * 0.1f;
    for (int64_t i = 0; i < K * N; i++) B[i] = (float)(i % 5) * 0.1f;
    void *scratch = aligned_alloc(64, rlx_sgemm_scratch(rlx_threadpool_size(tp)));
    double tr[15], to[15];
    int reps = 15;
    /* one library after the other (both keep spinning threads for a while
     * after a call, so interleaving single calls would measure contention) */
    for (int r = 0; r < reps; r++) {
      double t0 = now();
      rlx_sgemm(tp, M, N, K, A, K, B, tb ? K : N, tb, C, N, scratch);
      tr[r] = now() - t0;
    }
    for (int r = 0; r < reps; r++) {
#ifdef RLX_BENCH_OPENBLAS
      double t0 = now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, A,
                  (int)K, B, tb ? (int)K : (int)N, 0.0f, C, (int)N);
      to[r] = now() - t0;
#else
      to[r] = 0;
#endif
    }
    qsort(tr, (size_t)reps, sizeof(double), cmp);
    qsort(to, (size_t)reps, sizeof(double), cmp);
    double gf = 2.0 * (double)(M * N * K) * 1e-9;
    printf("M=%5lld N=%5lld K=%5lld %s  rlx %7.1f GFLOP/s", (long long)M, (long long)N, (long long)K,
           tb ? "B^T" : "B  ", gf / tr[reps / 2]);
    if (to[reps / 2] > 0) printf("  openblas %7.1f GFLOP/s  rlx/openblas %.2fx", gf / to[reps / 2], to[reps / 2] / tr[reps / 2]);
    printf("\n");
    free(A), free(B), free(C), free(scratch);
  }
  rlx_threadpool_destroy(tp);
  return 0;
}
