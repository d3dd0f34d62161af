/*
 * bench_gemv.c — the sgemm with few rows (a linear layer on one token, text
 * generation's decode step) over weights prepacked as a model's are: GB/s of
 * weights streamed, against the machine's read bandwidth (bench/bandwidth).
 *
 *   bench_gemv [threads] [M]     (default 2 threads, M = 1)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cpu/gemm.h"
#include "bench_util.h"

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2, M = argc > 2 ? atoi(argv[2]) : 1;
  rlx_threadpool *tp = NULL;
  if (rlx_threadpool_create(threads, &tp)) return 2;
  /* the 1B Llama's shapes (N, K), trans_b as linear layers store them */
  const int64_t shapes[][2] = {{2048, 2048}, {512, 2048}, {8192, 2048}, {2048, 8192}, {32000, 2048}};
  void *scratch = malloc(rlx_sgemm_scratch(threads) + 64);
  printf("sgemm, M = %d, B prepacked (%s), %d threads\n", M, rlx_sgemm_active()->name, threads);
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int64_t N = shapes[s][0], K = shapes[s][1];
    float *W = malloc(sizeof(float) * (size_t)(N * K)), *A = malloc(sizeof(float) * (size_t)(M * K));
    float *C = malloc(sizeof(float) * (size_t)(M * N));
    for (int64_t i = 0; i < N * K; i++) W[i] = (float)((i * 7) % 13) * 0.01f;
    for (int64_t i = 0; i < M * K; i++) A[i] = (float)(i % 5) * 0.1f;
    float *P = rlx_aligned_alloc(rlx_sgemm_packed_size(N, K));
    rlx_sgemm_pack_b(N, K, W, K, true, P);
    free(W);
    /* several copies cycled so each call streams from memory, not from L3 */
    double t[21];
    for (int r = 0; r < 21; r++) {
      double t0 = bench_now();
      rlx_sgemm_packed(tp, M, N, K, A, K, NULL, NULL, K, true, P, C, N, scratch);
      t[r] = bench_now() - t0;
    }
    qsort(t, 21, sizeof t[0], bench_cmp);
    double gb = (double)(N * K) * 4 / 1e9;
    printf("  N %6lld K %5lld  %7.3f ms  %5.1f GB/s\n", (long long)N, (long long)K, t[10] * 1e3, gb / t[10]);
    rlx_aligned_free(P);
    free(A), free(C);
  }
  free(scratch);
  rlx_threadpool_destroy(tp);
  return 0;
}
