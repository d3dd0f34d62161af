/*
 * bench_gemm.c — rlx's sgemm against OpenBLAS (when built with it) on the
 * same matrices in the same run (rlx's repetitions, then OpenBLAS's, per
 * shape); prints median GFLOP/s, ratios, and each as a fraction of the FMA
 * peak measured first on the same threads (12 independent FMA chains per
 * thread, the widest vectors the CPU has: the peak of this machine as it is
 * now, not its data sheet's — a VM may run 512-bit FMAs at half rate).
 * "B prepacked" times the same product over B packed once beforehand, as
 * a model's weights are at compile time (the figure that matters for
 * linear layers); the first figure packs B on every call, as for an
 * activation. "cold" times it over COLD_BYTES of packed copies of B, one
 * after the other, so that every call reads its weights from memory, as a
 * model's layers do (each layer's weights evicted by the others' since its
 * last run): the gap between the two is what the weights' trip from
 * memory costs. The prepacked products take the scratch a model's matmul
 * gives them (rlx_sgemm_scratch_for: ViT's fc2 packs its A once).
 *
 *   bench_gemm [threads]     (OpenBLAS threads follow OPENBLAS_NUM_THREADS)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"
#include "cpu/gemm.h"

#ifdef RLX_BENCH_OPENBLAS
#include <cblas.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx512f,fma"))) static float fma_loop512(long n) {
  __m512 a[12], x = _mm512_set1_ps(0.9999f), y = _mm512_set1_ps(1e-5f);
  for (int i = 0; i < 12; i++) a[i] = _mm512_set1_ps((float)i * 1e-3f);
  for (long k = 0; k < n; k++)
    for (int i = 0; i < 12; i++) a[i] = _mm512_fmadd_ps(a[i], x, y);
  float s = 0;
  for (int i = 0; i < 12; i++) s += _mm512_reduce_add_ps(a[i]);
  return s;
}
__attribute__((target("avx2,fma"))) static float fma_loop256(long n) {
  __m256 a[12], x = _mm256_set1_ps(0.9999f), y = _mm256_set1_ps(1e-5f);
  for (int i = 0; i < 12; i++) a[i] = _mm256_set1_ps((float)i * 1e-3f);
  for (long k = 0; k < n; k++)
    for (int i = 0; i < 12; i++) a[i] = _mm256_fmadd_ps(a[i], x, y);
  float s = 0, t[8];
  for (int i = 0; i < 12; i++) {
    _mm256_storeu_ps(t, a[i]);
    s += t[0];
  }
  return s;
}
#endif

#define PEAK_ITERS 20000000L
#define COLD_BYTES ((size_t)384 << 20) /* more than this host's L3 (lscpu) */
static volatile float sink;
static void peak_task(void *ctx, int64_t t, int worker) {
  (void)t, (void)worker;
  int wide = *(const int *)ctx;
#if defined(__x86_64__) && defined(__GNUC__)
  sink = wide == 16 ? fma_loop512(PEAK_ITERS) : fma_loop256(PEAK_ITERS);
#else
  (void)wide;
#endif
}

/* GFLOP/s of FMAs on every thread of the pool at once (0: not measurable). */
static double fma_peak(rlx_threadpool *tp, int *lanes) {
#if defined(__x86_64__) && defined(__GNUC__)
  int wide = __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("avx2") ? 8 : 0;
  *lanes = wide;
  if (!wide) return 0;
  int threads = rlx_threadpool_size(tp);
  double best = 0;
  for (int r = 0; r < 3; r++) {
    double t0 = bench_now();
    rlx_parallel_for(tp, threads, peak_task, &wide);
    double gf = 2.0 * wide * 12.0 * (double)PEAK_ITERS * threads / (bench_now() - t0) * 1e-9;
    if (gf > best) best = gf;
  }
  return best;
#else
  *lanes = 0;
  (void)tp;
  return 0;
#endif
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 0;
  rlx_threadpool *tp;
  if (rlx_threadpool_create(threads, &tp)) return 1;
  if (rlx_threadpool_size(tp) == 1) bench_clock = CLOCK_THREAD_CPUTIME_ID;
  printf("rlx sgemm microkernel: %s, %d threads (%s)\n", rlx_sgemm_active()->name, rlx_threadpool_size(tp),
         bench_clock == CLOCK_MONOTONIC ? "wall time" : "thread CPU time");
  int lanes;
  double peak = fma_peak(tp, &lanes);
  if (peak > 0) printf("FMA peak measured on these threads (%d-lane vectors): %.1f GFLOP/s\n", lanes, peak);
  /* 1024^3, a resnet 3x3 as implicit GEMM, its 7x7 one, linears (B^T: BERT's, 8 tokens, ViT's), squeezenet's squeeze
   * layer, 128 -> 16 channels at 55x55 (with M <= 64 the first figure reads B in place, gemm.c) */
  int64_t shapes[][4] = {{1024, 1024, 1024, 0}, {64, 3136, 576, 0}, {512, 49, 4608, 0}, {128, 768, 768, 1},
                         {8, 3072, 768, 1}, {197, 2304, 768, 1}, {197, 3072, 768, 1}, {197, 768, 3072, 1},
                         {16, 3025, 128, 0}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
    int tb = (int)shapes[s][3];
    float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(K * N));
    float *C = malloc(sizeof(float) * (size_t)(M * N));
    for (int64_t i = 0; i < M * K; i++) A[i] = (float)(i % 7) * 0.1f;
    for (int64_t i = 0; i < K * N; i++) B[i] = (float)(i % 5) * 0.1f;
    size_t scratch_bytes = rlx_sgemm_scratch_for(rlx_threadpool_size(tp), M, K);
    void *scratch = aligned_alloc(64, (scratch_bytes + 63) / 64 * 64);
    double tr[15], to[15];
    int reps = 15;
    /* one library after the other (both keep spinning threads for a while
     * after a call, so interleaving single calls would measure contention) */
    for (int r = 0; r < reps; r++) {
      double t0 = bench_now();
      rlx_sgemm(tp, M, N, K, A, K, B, tb ? K : N, tb, C, N, scratch);
      tr[r] = bench_now() - t0;
    }
    for (int r = 0; r < reps; r++) {
#ifdef RLX_BENCH_OPENBLAS
      double t0 = bench_now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, A,
                  (int)K, B, tb ? (int)K : (int)N, 0.0f, C, (int)N);
      to[r] = bench_now() - t0;
#else
      to[r] = 0;
#endif
    }
    /* B packed once beforehand, as a model's weights are at compile time */
    double tp_[15], tc[15];
    size_t pbytes = (rlx_sgemm_packed_size(N, K) + 63) / 64 * 64;
    int copies = (int)((COLD_BYTES + pbytes - 1) / pbytes);
    copies = copies < 2 ? 2 : copies;
    char *P = aligned_alloc(64, pbytes * (size_t)copies);
    for (int i = 0; i < copies; i++) rlx_sgemm_pack_b(N, K, B, tb ? K : N, tb, (float *)(P + pbytes * (size_t)i));
    rlx_sgemm_args ga = {.M = M, .N = N, .K = K, .A = A, .lda = K, .b_packed = (const float *)P, .C = C, .ldc = N,
                         .scratch_bytes = scratch_bytes};
    for (int r = 0; r < reps; r++) {
      double t0 = bench_now();
      rlx_sgemm_ex(tp, &ga, scratch);
      tp_[r] = bench_now() - t0;
    }
    for (int r = 0; r < reps; r++) { /* each call a copy not read since copies - 1 calls */
      ga.b_packed = (const float *)(P + pbytes * (size_t)((r + 1) % copies));
      double t0 = bench_now();
      rlx_sgemm_ex(tp, &ga, scratch);
      tc[r] = bench_now() - t0;
    }
    free(P);
    qsort(tr, (size_t)reps, sizeof(double), bench_cmp);
    qsort(to, (size_t)reps, sizeof(double), bench_cmp);
    qsort(tp_, (size_t)reps, sizeof(double), bench_cmp);
    qsort(tc, (size_t)reps, sizeof(double), bench_cmp);
    double gf = 2.0 * (double)(M * N * K) * 1e-9;
    printf("M=%5lld N=%5lld K=%5lld %s  rlx %7.1f GFLOP/s", (long long)M, (long long)N, (long long)K,
           tb ? "B^T" : "B  ", gf / tr[reps / 2]);
    if (peak > 0) printf(" (%3.0f%% of peak, best %3.0f%%)", 100 * gf / tr[reps / 2] / peak, 100 * gf / tr[0] / peak);
    printf("  B prepacked %7.1f", gf / tp_[reps / 2]);
    if (peak > 0) printf(" (%3.0f%%)", 100 * gf / tp_[reps / 2] / peak);
    printf("  cold %7.1f", gf / tc[reps / 2]);
    if (to[reps / 2] > 0) printf("  openblas %7.1f GFLOP/s  rlx/openblas %.2fx", gf / to[reps / 2], to[reps / 2] / tr[reps / 2]);
    printf("\n");
    free(A), free(B), free(C), free(scratch);
  }
  rlx_threadpool_destroy(tp);
  return 0;
}
