/*
 * test_gemm.c — every sgemm microkernel this CPU can run, through the driver,
 * against the reference GEMM: sizes 1, MR-1, MR, MR+1 (and the same for NR),
 * sizes that cross the KC/MC/NC block edges, trans_b, leading dimensions
 * larger than the width, and 1, 2 and 3 threads. Also the thread pool.
 */
#include <stdlib.h>

#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cpu/gemm.h"
#include "cpu/select.h"
#include "cpu/tuning.h"
#include "ops/gemm_ref.h"
#include "test.h"

static float frand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* One product's operands (A and B with padded rows, as given) and its reference R: made once a shape,
 * then run on each microkernel list and thread count (under the sanitizers the reference is most of the
 * test's time). */
typedef struct product {
  int64_t M, N, K, lda, ldb, ldc;
  bool trans_b;
  float *A, *B, *R;
} product;

static product product_make(int64_t M, int64_t N, int64_t K, bool trans_b, int64_t pad) {
  unsigned s = (unsigned)(M * 131 + N * 17 + K);
  product p = {M, N, K, K + pad, (trans_b ? K : N) + pad, N + pad, trans_b, NULL, NULL, NULL};
  p.A = malloc(sizeof(float) * (size_t)(M * p.lda + 1));
  p.B = malloc(sizeof(float) * (size_t)((trans_b ? N : K) * p.ldb + 1));
  p.R = malloc(sizeof(float) * (size_t)(M * N + 1));
  float *Bt = malloc(sizeof(float) * (size_t)(K * N + 1)), *Ac = malloc(sizeof(float) * (size_t)(M * K + 1));
  for (int64_t i = 0; i < M * p.lda; i++) p.A[i] = frand(&s);
  for (int64_t i = 0; i < (trans_b ? N : K) * p.ldb; i++) p.B[i] = frand(&s);
  for (int64_t k = 0; k < K; k++) /* the reference wants B as [K, N] */
    for (int64_t j = 0; j < N; j++) Bt[k * N + j] = trans_b ? p.B[j * p.ldb + k] : p.B[k * p.ldb + j];
  for (int64_t i = 0; i < M; i++)
    for (int64_t k = 0; k < K; k++) Ac[i * K + k] = p.A[i * p.lda + k];
  rlx_gemm_ref_f32(M, N, K, Ac, K, Bt, N, p.R, N);
  free(Bt), free(Ac);
  return p;
}

static void product_free(product *p) { free(p->A), free(p->B), free(p->R); }

/* C = A @ B (or A @ B^T) on `isa` against the reference; max relative difference. */
static double compare(const rlx_sgemm_isa *isa, rlx_threadpool *tp, const product *p) {
  int64_t M = p->M, N = p->N, ldc = p->ldc;
  float *C = malloc(sizeof(float) * (size_t)(M * ldc + 1));
  for (int64_t i = 0; i < M * ldc; i++) C[i] = 1e30f; /* must be overwritten */
  void *scratch = aligned_alloc(64, rlx_sgemm_scratch(rlx_threadpool_size(tp)));
  rlx_sgemm_with(isa, tp, M, N, p->K, p->A, p->lda, p->B, p->ldb, p->trans_b, C, ldc, scratch);
  double worst = 0;
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double d = fabs((double)C[i * ldc + j] - p->R[i * N + j]) / (1.0 + fabs(p->R[i * N + j]));
      if (!(d <= worst)) worst = d; /* NaN-safe */
    }
  free(C), free(scratch);
  return worst;
}

/* Whether the 12 x ldc block c, each element set to (i * ldc + j) % 5 before the kernel ran, holds under m
 * rows and n columns the sums of A's rows (stride lda) by B's columns (B's rows ldb apart) over K, added to
 * that start under accumulate, and the start elsewhere. The operands are small integers, so every sum is
 * exact in f32 whatever the order of its terms. */
static bool exact_block(const float *c, int ldc, int m, int n, bool acc, const float *A, int lda, const float *b,
                        int ldb, int K) {
  bool ok = true;
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < ldc; j++) {
      float want = (float)((i * ldc + j) % 5);
      if (i < m && j < n) {
        float s = 0.0f;
        for (int k = 0; k < K; k++) s += A[i * lda + k] * b[k * ldb + j];
        want = acc ? want + s : s;
      }
      if (c[i * ldc + j] != want) {
        if (ok) fprintf(stderr, "  C[%d][%d] = %g, want %g\n", i, j, c[i * ldc + j], want);
        ok = false;
      }
    }
  return ok;
}

/* The unpacked-A 12x32 and 12x16 kernels against the packed ones on every
 * (m, n) of a block, rows of an odd stride, with and without accumulation,
 * plain and with a post (bias, residual, hardswish): the same FMAs in the
 * same order, so the results are identical. */
TEST(unpacked_a_kernel) {
  if (!rlx_sgemm_isa_named("avx512")) {
    printf("  avx512: not available on this CPU, skipped\n");
    return;
  }
  enum { K = 37, LDA = 41, LDC = 35 };
  float A[12 * LDA], Ap[12 * K], B[K * 32], C1[12 * LDC], C2[12 * LDC], bias[32], res[12 * LDC];
  for (int i = 0; i < 12 * LDA; i++) A[i] = (float)((i * 37) % 11) - 5.0f;
  for (int i = 0; i < K * 32; i++) B[i] = (float)((i * 13) % 7) - 3.0f;
  for (int i = 0; i < 32; i++) bias[i] = 0.25f * (float)(i % 9) - 1.0f;
  for (int i = 0; i < 12 * LDC; i++) res[i] = 0.5f * (float)(i % 13) - 3.0f;
  rlx_sgemm_post post = {.col_bias = bias, .res = res, .ldr = LDC, .act = RLX_SGEMM_ACT_HARDSWISH};
  for (int wide = 0; wide < 2; wide++) /* 12x16, 12x32 */
    for (int m = 1; m <= 12; m++)
      for (int n = 1; n <= (wide ? 32 : 16); n++)
        for (int acc = 0; acc < 2; acc++)
          for (int with_post = 0; with_post < 2; with_post++) {
            int nr = wide ? 32 : 16;
            const float *b = B; /* a K x nr panel */
            for (int k = 0; k < K; k++)
              for (int r = 0; r < 12; r++) Ap[k * 12 + r] = r < m ? A[r * LDA + k] : 0.0f;
            for (int i = 0; i < 12 * LDC; i++) C1[i] = C2[i] = (float)(i % 5);
            const rlx_sgemm_post *p = with_post ? &post : NULL;
            if (wide && p) {
              rlx_f32_gemm_ukernel_post__avx512_12x32(K, Ap, b, C1, LDC, m, n, acc, p, 0, 0);
              rlx_f32_gemm_ukernel_a_post__avx512_12x32(K, A, LDA, b, C2, LDC, m, n, acc, p, 0, 0);
            } else if (wide) {
              rlx_f32_gemm_ukernel__avx512_12x32(K, Ap, b, C1, LDC, m, n, acc);
              rlx_f32_gemm_ukernel_a__avx512_12x32(K, A, LDA, b, C2, LDC, m, n, acc);
            } else if (p) {
              rlx_f32_gemm_ukernel_post__avx512_12x16(K, Ap, b, C1, LDC, m, n, acc, p, 0, 0);
              rlx_f32_gemm_ukernel_a_post__avx512_12x16(K, A, LDA, b, C2, LDC, m, n, acc, p, 0, 0);
            } else {
              rlx_f32_gemm_ukernel__avx512_12x16(K, Ap, b, C1, LDC, m, n, acc);
              rlx_f32_gemm_ukernel_a__avx512_12x16(K, A, LDA, b, C2, LDC, m, n, acc);
            }
            if (memcmp(C1, C2, sizeof C1))
              fprintf(stderr, "  12x%d m=%d n=%d accumulate=%d post=%d: packed and in place differ\n", nr, m, n, acc,
                      with_post);
            CHECK(!memcmp(C1, C2, sizeof C1));
            /* the row-block tails of 1, 2, 4 and 8 rows compute and store only their rows */
            if (!p && !exact_block(C1, LDC, m, n, acc, A, LDA, b, nr, K)) {
              fprintf(stderr, "  (12x%d m=%d n=%d accumulate=%d)\n", nr, m, n, acc);
              CHECK(false);
            }
          }
}

/* The B-in-place 12x32 and 12x16 kernels (a channel-major conv's image read as B) against the packed ones on
 * every (m, n) of a block, with and without accumulation, plain and with each kind of post (row bias,
 * residual, ReLU; column bias, hardswish): B's rows of an odd stride, its last row's column n - 1 the last
 * float before a page the process may not read, so a load past the block's columns would fault. A zero-
 * padded packed panel and masked loads run the same FMAs in the same order: identical results. */
TEST(inplace_b_kernel) {
  if (!rlx_sgemm_isa_named("avx512")) {
    printf("  avx512: not available on this CPU, skipped\n");
    return;
  }
  enum { K = 37, LDB = 45, LDC = 35 };
  size_t page = (size_t)sysconf(_SC_PAGESIZE), span = (K * LDB * sizeof(float) + page - 1) / page * page;
  char *map = mmap(NULL, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(map != MAP_FAILED);
  if (map == MAP_FAILED) return;
  CHECK(mprotect(map + span, page, PROT_NONE) == 0);
  float *end = (float *)(map + span); /* the first float that faults */
  for (float *f = (float *)map; f < end; f++) *f = (float)((f - (float *)map) * 13 % 7) - 3.0f;
  float A[12 * K], Ap[12 * K], panel[K * 32], C1[12 * LDC], C2[12 * LDC], bias[32], res[12 * LDC];
  for (int i = 0; i < 12 * K; i++) A[i] = (float)((i * 37) % 11) - 5.0f;
  for (int i = 0; i < 32; i++) bias[i] = 0.25f * (float)(i % 9) - 1.0f;
  for (int i = 0; i < 12 * LDC; i++) res[i] = 0.5f * (float)(i % 13) - 3.0f;
  rlx_sgemm_post posts[2] = {{.row_bias = bias, .res = res, .ldr = LDC, .act = RLX_SGEMM_ACT_RELU},
                             {.col_bias = bias, .act = RLX_SGEMM_ACT_HARDSWISH}};
  for (int wide = 0; wide < 2; wide++) /* 12x16, 12x32 */
    for (int m = 1; m <= 12; m++)
      for (int n = 1; n <= (wide ? 32 : 16); n++) {
        int nr = wide ? 32 : 16;
        const float *b = end - ((K - 1) * LDB + n); /* row k at b + k * LDB; the last ends at the guard */
        for (int k = 0; k < K; k++)
          for (int j = 0; j < nr; j++) panel[k * nr + j] = j < n ? b[k * LDB + j] : 0.0f;
        for (int k = 0; k < K; k++)
          for (int r = 0; r < 12; r++) Ap[k * 12 + r] = r < m ? A[r * K + k] : 0.0f;
        for (int acc = 0; acc < 2; acc++)
          for (int with_post = 0; with_post < 3; with_post++) {
            const rlx_sgemm_post *p = with_post ? &posts[with_post - 1] : NULL;
            for (int i = 0; i < 12 * LDC; i++) C1[i] = C2[i] = (float)(i % 5);
            if (wide && p) rlx_f32_gemm_ukernel_post__avx512_12x32(K, Ap, panel, C1, LDC, m, n, acc, p, 0, 0);
            else if (wide) rlx_f32_gemm_ukernel__avx512_12x32(K, Ap, panel, C1, LDC, m, n, acc);
            else if (p) rlx_f32_gemm_ukernel_post__avx512_12x16(K, Ap, panel, C1, LDC, m, n, acc, p, 0, 0);
            else rlx_f32_gemm_ukernel__avx512_12x16(K, Ap, panel, C1, LDC, m, n, acc);
            if (wide) rlx_f32_gemm_ukernel_b__avx512_12x32(K, Ap, b, LDB, C2, LDC, m, n, acc, p, 0, 0);
            else rlx_f32_gemm_ukernel_b__avx512_12x16(K, Ap, b, LDB, C2, LDC, m, n, acc, p, 0, 0);
            if (memcmp(C1, C2, sizeof C1))
              fprintf(stderr, "  12x%d m=%d n=%d accumulate=%d post=%d: packed and in-place B differ\n", nr, m, n,
                      acc, with_post);
            CHECK(!memcmp(C1, C2, sizeof C1));
            if (!p && !exact_block(C2, LDC, m, n, acc, A, K, b, LDB, K)) { /* and both are right */
              fprintf(stderr, "  (B in place, 12x%d m=%d n=%d accumulate=%d)\n", nr, m, n, acc);
              CHECK(false);
            }
          }
      }
  munmap(map, span + page);
}

/* Through the driver, B plain (the products that read it in place: at most 64 rows of A; and past that, and
 * a row stride of 1024 floats, which pack it), at 1-3 threads, against the reference. */
TEST(inplace_b_driver) {
  int64_t ms[] = {5, 16, 24, 40, 64, 65};
  int64_t ns[] = {3, 33, 169, 700};
  int64_t ks[] = {7, 300};
  for (size_t a = 0; a < RLX_COUNTOF(ms); a++)
    for (size_t b = 0; b < RLX_COUNTOF(ns); b++)
      for (size_t c = 0; c < RLX_COUNTOF(ks); c++) {
        product p = product_make(ms[a], ns[b], ks[c], false, b == 3 ? 1024 - ns[b] : 5);
        for (int t = 1; t <= 3; t++) {
          rlx_threadpool *tp;
          CHECK_OK(rlx_threadpool_create(t, &tp));
          double d = compare(rlx_sgemm_isa_for(ns[b]), tp, &p);
          if (!(d < 1e-5))
            fprintf(stderr, "  M=%lld N=%lld K=%lld threads=%d: rel diff %g\n", (long long)ms[a], (long long)ns[b],
                    (long long)ks[c], t, d);
          CHECK(d < 1e-5);
          rlx_threadpool_destroy(tp);
        }
        product_free(&p);
      }
}

/* A prepacked and B plain, split by columns (a channel-major conv: the weights by the image), at 1-3 threads,
 * against the reference: shapes whose few panels the driver deals in chunks chosen for the busiest thread
 * (balance_cols: 144 columns are 9 panels, 5 and 4 at two threads), every element written once. */
TEST(prepacked_a_by_cols) {
  struct { int64_t M, N, K; } shapes[] = {{192, 144, 77}, {32, 169, 20}, {64, 25, 30}, {384, 144, 50},
                                         {100, 49, 33},  {13, 700, 9},  {1000, 169, 16}};
  for (size_t si = 0; si < RLX_COUNTOF(shapes); si++) {
    int64_t M = shapes[si].M, N = shapes[si].N, K = shapes[si].K;
    product p = product_make(M, N, K, false, 3);
    const rlx_sgemm_isa *isa = rlx_sgemm_isa_for(N);
    float *Ac = malloc(sizeof(float) * (size_t)(M * K)), *C = malloc(sizeof(float) * (size_t)(M * N));
    for (int64_t i = 0; i < M; i++)
      for (int64_t k = 0; k < K; k++) Ac[i * K + k] = p.A[i * p.lda + k];
    float *Ap = rlx_aligned_alloc(rlx_sgemm_packed_a_size(M, K));
    rlx_sgemm_pack_a(M, K, Ac, K, Ap); /* 12-row panels: every kernel's */
    for (int t = 1; t <= 3; t++) {
      rlx_threadpool *tp;
      CHECK_OK(rlx_threadpool_create(t, &tp));
      void *scratch = aligned_alloc(64, rlx_sgemm_scratch(t));
      for (int64_t i = 0; i < M * N; i++) C[i] = 1e30f; /* must be overwritten */
      rlx_sgemm_args a = {.isa = isa, .M = M, .N = N, .K = K, .a_packed = Ap, .B = p.B, .ldb = p.ldb, .C = C,
                          .ldc = N, .by_cols = true};
      rlx_sgemm_ex(tp, &a, scratch);
      double worst = 0;
      for (int64_t i = 0; i < M * N; i++) {
        double d = fabs((double)C[i] - p.R[i]) / (1.0 + fabs(p.R[i]));
        if (!(d <= worst)) worst = d;
      }
      if (!(worst < 1e-5))
        fprintf(stderr, "  M=%lld N=%lld K=%lld threads=%d: rel diff %g\n", (long long)M, (long long)N, (long long)K,
                t, worst);
      CHECK(worst < 1e-5);
      free(scratch);
      rlx_threadpool_destroy(tp);
    }
    rlx_aligned_free(Ap), free(Ac), free(C);
    product_free(&p);
  }
}

TEST(microkernels_all_sizes) {
  /* every microkernel of the list (MR x NR: 12x32, 12x16, 6x16, 4x8), narrow panels too, on the same
   * shapes: M 1..4 (the skinny kernel), MR - 1, MR, MR + 1 and more than two blocks of each; N NR - 1,
   * NR, NR + 1 of each and more than three panels */
  int64_t ms[] = {1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 16, 27, 197};
  int64_t ns[] = {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 101, 800};
  int64_t ks[] = {1, 7, 256, 300};
  for (size_t a = 0; a < RLX_COUNTOF(ms); a++)
    for (size_t b = 0; b < RLX_COUNTOF(ns); b++)
      for (size_t c = 0; c < RLX_COUNTOF(ks); c++)
        for (int tb = 0; tb < 2; tb++) {
          product p = product_make(ms[a], ns[b], ks[c], tb, tb ? 3 : 0);
          for (int n = 0; rlx_sgemm_isa_at(n); n++) {
            const rlx_sgemm_isa *isa = rlx_sgemm_isa_at(n);
            if (!rlx_sgemm_isa_runs(isa)) continue;
            double d = compare(isa, NULL, &p);
            if (!(d < 1e-5)) {
              fprintf(stderr, "  %s %dx%d M=%lld N=%lld K=%lld trans_b=%d: rel diff %g\n", isa->name, isa->mr, isa->nr,
                      (long long)ms[a], (long long)ns[b], (long long)ks[c], tb, d);
              CHECK(d < 1e-5);
            }
          }
          product_free(&p);
        }
  for (int n = 0; rlx_sgemm_isa_at(n); n++)
    if (!rlx_sgemm_isa_runs(rlx_sgemm_isa_at(n)))
      printf("  %s %dx%d: not available on this CPU, skipped\n", rlx_sgemm_isa_at(n)->name, rlx_sgemm_isa_at(n)->mr,
             rlx_sgemm_isa_at(n)->nr);
}

TEST(threads_and_large) {
  /* f32 sums of ~1000 products in a different order: rounding of order K * eps */
  product p1 = product_make(400, 1000, 600, false, 0), p2 = product_make(513, 49, 1152, true, 1);
  for (int t = 1; t <= 3; t++) {
    rlx_threadpool *tp;
    CHECK_OK(rlx_threadpool_create(t, &tp));
    CHECK(rlx_threadpool_size(tp) == t);
    double d1 = compare(rlx_sgemm_active(), tp, &p1);
    double d2 = compare(rlx_sgemm_active(), tp, &p2);
    if (!(d1 < 1e-4 && d2 < 1e-4)) fprintf(stderr, "  threads=%d: rel diffs %g %g\n", t, d1, d2);
    CHECK(d1 < 1e-4);
    CHECK(d2 < 1e-4);
    rlx_threadpool_destroy(tp);
  }
  product_free(&p1), product_free(&p2);
}

/* The threads' split of C by rows (the default) or by columns, one product and a batch of five (one parallel
 * region), against the reference: the numbering of tasks changes, the products do not. */
TEST(split_by_rows_or_cols) {
  enum { P = 5 };
  int64_t shapes[][3] = {{200, 300, 70}, {64, 100, 50}, {7, 1000, 33}, {1000, 20, 9}};
  for (int t = 1; t <= 3; t++) {
    rlx_threadpool *tp;
    CHECK_OK(rlx_threadpool_create(t, &tp));
    void *scratch = aligned_alloc(64, rlx_sgemm_scratch(t));
    for (size_t sh = 0; sh < RLX_COUNTOF(shapes); sh++)
      for (int by_cols = 0; by_cols < 2; by_cols++) {
        int64_t M = shapes[sh][0], N = shapes[sh][1], K = shapes[sh][2];
        unsigned sd = (unsigned)(M + N * 5 + K * 11 + by_cols);
        float *A = malloc(sizeof(float) * (size_t)(P * M * K)), *B = malloc(sizeof(float) * (size_t)(P * K * N));
        float *C = malloc(sizeof(float) * (size_t)(P * M * N)), *R = malloc(sizeof(float) * (size_t)(M * N));
        for (int64_t i = 0; i < P * M * K; i++) A[i] = frand(&sd);
        for (int64_t i = 0; i < P * K * N; i++) B[i] = frand(&sd);
        for (int batch = 0; batch < 2; batch++) {
          for (int64_t i = 0; i < P * M * N; i++) C[i] = 1e30f;
          rlx_sgemm_args a[P];
          for (int p = 0; p < P; p++)
            a[p] = (rlx_sgemm_args){.M = M, .N = N, .K = K, .A = A + p * M * K, .lda = K, .B = B + p * K * N, .ldb = N,
                                    .C = C + p * M * N, .ldc = N, .by_cols = by_cols};
          if (batch) rlx_sgemm_ex_batch(tp, a, P, scratch);
          else
            for (int p = 0; p < P; p++) rlx_sgemm_ex(tp, &a[p], scratch);
          double worst = 0;
          for (int p = 0; p < P; p++) {
            rlx_gemm_ref_f32(M, N, K, A + p * M * K, K, B + p * K * N, N, R, N);
            for (int64_t i = 0; i < M * N; i++) {
              double d = fabs((double)C[p * M * N + i] - R[i]) / (1.0 + fabs(R[i]));
              if (!(d <= worst)) worst = d;
            }
          }
          if (!(worst < 1e-5))
            fprintf(stderr, "  M=%lld N=%lld K=%lld threads=%d by_cols=%d batch=%d: rel diff %g\n", (long long)M,
                    (long long)N, (long long)K, t, by_cols, batch, worst);
          CHECK(worst < 1e-5);
        }
        free(A), free(B), free(C), free(R);
      }
    free(scratch);
    rlx_threadpool_destroy(tp);
  }
}

/* The epilogue of the prepacked tests: c[i][j] += 1000 * (j0 + j) + i0 + i, so
 * a block given the wrong rows or columns shows. */
static void mark_epilogue(const void *ctx, float *c, int64_t ldc, int64_t i0, int64_t j0, int m, int n) {
  (void)ctx;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) c[i * ldc + j] += (float)(1000 * (j0 + j) + i0 + i);
}

/* B packed at compile time (linear layers): few rows (the skinny path, one
 * region over every column block), more rows, N across the NC = 2048 column
 * blocks, small products whose tasks are regridded to deal evenly, with an
 * epilogue, on 1..3 threads. */
TEST(prepacked_b) {
  /* 49, 196 rows by 96 to 320 columns: the small products balance() regrids on 2 and 3 threads (row
   * blocks of fewer rows, one-panel chunks) */
  int64_t ms[] = {1, 2, 4, 5, 13, 49, 196}, ns[] = {1, 31, 96, 192, 320, 2047, 2049, 4500}, ks[] = {1, 300, 600};
  rlx_threadpool *tps[3];
  void *scratch[3];
  for (int t = 1; t <= 3; t++) {
    CHECK_OK(rlx_threadpool_create(t, &tps[t - 1]));
    scratch[t - 1] = aligned_alloc(64, rlx_sgemm_scratch(t));
  }
  for (size_t a = 0; a < RLX_COUNTOF(ms); a++)
    for (size_t b = 0; b < RLX_COUNTOF(ns); b++)
      for (size_t c = 0; c < RLX_COUNTOF(ks); c++) {
        int64_t M = ms[a], N = ns[b], K = ks[c];
        unsigned sd = (unsigned)(M * 7 + N * 3 + K);
        float *A = malloc(sizeof(float) * (size_t)(M * K)), *W = malloc(sizeof(float) * (size_t)(N * K));
        float *Bt = malloc(sizeof(float) * (size_t)(K * N)), *C = malloc(sizeof(float) * (size_t)(M * N));
        float *R = malloc(sizeof(float) * (size_t)(M * N));
        for (int64_t i = 0; i < M * K; i++) A[i] = frand(&sd);
        for (int64_t i = 0; i < N * K; i++) W[i] = frand(&sd); /* [N, K], trans_b */
        for (int64_t k = 0; k < K; k++)
          for (int64_t j = 0; j < N; j++) Bt[k * N + j] = W[j * K + k];
        rlx_gemm_ref_f32(M, N, K, A, K, Bt, N, R, N); /* once a shape: under ThreadSanitizer it is most of the time */
        float *P = rlx_aligned_alloc(rlx_sgemm_packed_size(N, K));
        rlx_sgemm_pack_b(N, K, W, K, true, P);
        for (int t = 1; t <= 3; t++) {
          rlx_sgemm_args ga = {.M = M, .N = N, .K = K, .A = A, .lda = K, .ldb = K, .trans_b = true, .b_packed = P,
                               .C = C, .ldc = N, .epilogue = mark_epilogue};
          memset(C, 0xff, sizeof(float) * (size_t)(M * N)); /* NaN: a tile left unwritten fails */
          rlx_sgemm_ex(tps[t - 1], &ga, scratch[t - 1]);
          double worst = 0;
          for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
              double want = R[i * N + j] + (double)(1000 * j + i);
              double d = fabs((double)C[i * N + j] - want) / (1.0 + fabs(want));
              if (!(d <= worst)) worst = d;
            }
          if (!(worst < 1e-5))
            fprintf(stderr, "  prepacked M=%lld N=%lld K=%lld threads=%d: rel diff %g\n", (long long)M, (long long)N,
                    (long long)K, t, worst);
          CHECK(worst < 1e-5);
        }
        rlx_aligned_free(P);
        free(A), free(W), free(Bt), free(C), free(R);
      }
  for (int t = 1; t <= 3; t++) free(scratch[t - 1]), rlx_threadpool_destroy(tps[t - 1]);
}

static bool same_bits(float a, float b) { return (a != a && b != b) || memcmp(&a, &b, sizeof a) == 0; }

/* Over prepacked B, the whole of A is packed once. Where it passes the shared block (197 x 3072, ViT's fc2:
 * 2.4 MiB) only a scratch sized by rlx_sgemm_scratch_for has room for it, past the A blocks: there the
 * sgemm packs it (its bytes past rlx_sgemm_scratch are written, from a scratch of exactly that size,
 * unaligned: ASan sees any overrun) and gives the bits of the product without it. Other products ask no
 * more scratch than rlx_sgemm_scratch. */
TEST(whole_a_past_shared_block) {
  /* 197 x 2688 packs to 2.1 MB, just past the 2 MiB block; 12 panels of B (N = 384) deal four even
   * tasks to two threads, so balance() keeps the usual grid and A is packed once */
  struct { int64_t M, N, K; bool more; } shapes[] = {
      {197, 384, 2688, true}, {197, 40, 2688, true}, {197, 384, 2048, false}, {400, 96, 3000, false}, {3, 768, 9000, false}};
  rlx_threadpool *tps[3];
  for (int t = 1; t <= 3; t++) CHECK_OK(rlx_threadpool_create(t, &tps[t - 1]));
  for (size_t si = 0; si < RLX_COUNTOF(shapes); si++) {
    int64_t M = shapes[si].M, N = shapes[si].N, K = shapes[si].K;
    unsigned sd = (unsigned)(M * 5 + N + K);
    float *A = malloc(sizeof(float) * (size_t)(M * K)), *W = malloc(sizeof(float) * (size_t)(N * K));
    float *C1 = malloc(sizeof(float) * (size_t)(M * N)), *C2 = malloc(sizeof(float) * (size_t)(M * N));
    double *R = malloc(sizeof(double) * (size_t)(M * N));
    for (int64_t i = 0; i < M * K; i++) A[i] = frand(&sd);
    for (int64_t i = 0; i < N * K; i++) W[i] = frand(&sd);
    for (int64_t i = 0; i < M; i++) /* exact enough: in double */
      for (int64_t j = 0; j < N; j++) {
        double acc = 0;
        for (int64_t k = 0; k < K; k++) acc += (double)A[i * K + k] * W[j * K + k];
        R[i * N + j] = acc;
      }
    float *P = rlx_aligned_alloc(rlx_sgemm_packed_size(N, K));
    rlx_sgemm_pack_b(N, K, W, K, true, P);
    for (int t = 1; t <= 3; t++) {
      size_t base = rlx_sgemm_scratch(t), more = rlx_sgemm_scratch_for(t, M, K);
      CHECK(shapes[si].more ? more > base : more == base);
      char *s1 = malloc(base), *s2 = malloc(more + 1);
      memset(s2, 0xff, more + 1);
      rlx_sgemm_args a = {.M = M, .N = N, .K = K, .A = A, .lda = K, .ldb = K, .trans_b = true, .b_packed = P, .C = C1,
                          .ldc = N};
      rlx_sgemm_ex(tps[t - 1], &a, s1);
      a.C = C2, a.scratch_bytes = more;
      rlx_sgemm_ex(tps[t - 1], &a, s2 + 1); /* unaligned: the sgemm aligns it, within the 64 bytes it asks for that */
      bool written = false;
      for (size_t b = base; b < more; b++) written |= (unsigned char)s2[1 + b] != 0xff;
      /* at two threads, 12 panels of B are too many to read a 197-row A in place: packed once */
      if (shapes[si].more && t == 2 && N == 384) CHECK(written);
      double worst = 0;
      for (int64_t i = 0; i < M * N; i++) {
        CHECK(same_bits(C1[i], C2[i]));
        double d = fabs((double)C2[i] - R[i]) / (1.0 + fabs(R[i]));
        if (!(d <= worst)) worst = d;
      }
      /* float sums of 2048-9000 products in [-1, 1): 1.1e-5 to 3.4e-5 of (1 + |sum|) measured against the
       * double sums (a plain float loop: 7.7e-5); a lost or doubled K block is off by whole units */
      if (!(worst < 1e-4)) fprintf(stderr, "  M=%lld N=%lld K=%lld t=%d: %g\n", (long long)M, (long long)N, (long long)K, t, worst);
      CHECK(worst < 1e-4);
      free(s1), free(s2);
    }
    rlx_aligned_free(P);
    free(A), free(W), free(C1), free(C2), free(R);
  }
  for (int t = 1; t <= 3; t++) rlx_threadpool_destroy(tps[t - 1]);
}

/* The callback the post replaces, as conv_nhwc.c / conv_gemm.c / matmul.c
 * compute it: bias, residual, then the activation through eltwise.c. */
typedef struct cb_ep {
  const rlx_unary_params *act; /* or NULL */
  const float *col_bias, *row_bias, *res;
  int64_t ldr;
} cb_ep;

static void callback_epilogue(const void *ctx, float *c, int64_t ldc, int64_t i0, int64_t j0, int m, int n) {
  const cb_ep *e = ctx;
  for (int r = 0; r < m; r++) {
    float *row = c + r * ldc;
    for (int k = 0; k < n; k++) {
      if (e->col_bias) row[k] += e->col_bias[j0 + k];
      else if (e->row_bias) row[k] += e->row_bias[i0 + r];
      if (e->res) row[k] += e->res[(i0 + r) * e->ldr + j0 + k];
    }
    if (e->act) rlx_cpu_act_f32(e->act, row, n);
  }
}


/* The in-register post (every ISA's kernels, the A-in-place and skinny
 * paths, prepacked A and B, K across the KC = 256 block, 1 and 2 threads)
 * gives the bits of the callback epilogue it replaces, for each activation
 * it takes, with a column or a row bias, a residual, and NaN, +-Inf and
 * values at the activations' corners (0, -3, 3, 6) in the output. */
TEST(post_matches_callback) {
  rlx_unary_params acts[] = {{.kind = RLX_UNARY_RELU},
                             {.kind = RLX_UNARY_HARDTANH, .a = 0, .b = 6},
                             {.kind = RLX_UNARY_HARDTANH, .a = -1.5, .b = 0.25},
                             {.kind = RLX_UNARY_CLAMP, .a = -0.5, .b = NAN},
                             {.kind = RLX_UNARY_CLAMP, .a = 1, .b = -1}, /* min > max: every element max */
                             {.kind = RLX_UNARY_HARDSWISH}};
  struct { int64_t M, N, K; } shapes[] = {{1, 17, 5},   {3, 64, 16},   {5, 33, 1},     {12, 32, 16}, {13, 100, 257},
                                         {37, 16, 40}, {40, 15, 300}, {100, 64, 16}, {9, 2100, 8}};
  int checked = 0;
  for (int ii = 0; rlx_sgemm_isa_at(ii); ii++) {
    const rlx_sgemm_isa *isa = rlx_sgemm_isa_at(ii);
    if (!rlx_sgemm_isa_runs(isa)) continue; /* this CPU cannot run it */
    for (int threads = 1; threads <= 2; threads++) {
      rlx_threadpool *tp;
      CHECK_OK(rlx_threadpool_create(threads, &tp));
      void *scratch = aligned_alloc(64, rlx_sgemm_scratch(threads));
      for (size_t si = 0; si < RLX_COUNTOF(shapes); si++)
        for (int act = -1; act < (int)RLX_COUNTOF(acts); act++)
          for (int mode = 0; mode < 4; mode++) { /* 0 B per call, 1 B prepacked, 2 A prepacked, 3 A in place */
            int64_t M = shapes[si].M, N = shapes[si].N, K = shapes[si].K;
            unsigned sd = (unsigned)(M * 31 + N * 7 + K + act * 5 + mode);
            float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(N * K));
            float *bias = malloc(sizeof(float) * (size_t)(M > N ? M : N)), *res = malloc(sizeof(float) * (size_t)(M * N));
            float *C1 = malloc(sizeof(float) * (size_t)(M * N)), *C2 = malloc(sizeof(float) * (size_t)(M * N));
            for (int64_t i = 0; i < M * K; i++) A[i] = frand(&sd);
            for (int64_t i = 0; i < N * K; i++) B[i] = frand(&sd); /* [N, K]: trans_b */
            for (int64_t i = 0; i < (M > N ? M : N); i++) bias[i] = 4.0f * frand(&sd);
            for (int64_t i = 0; i < M * N; i++) res[i] = 3.0f * frand(&sd);
            float corner[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, -3.0f, 3.0f, 6.0f, -6.0f};
            for (size_t q = 0; q < RLX_COUNTOF(corner) && q < (size_t)(M * N); q++)
              res[(q * 7919) % (size_t)(M * N)] = corner[q]; /* with the sum of a small product: near the corner */
            if (M * K > 2) A[K + 1 < M * K ? K + 1 : 0] = NAN; /* one row of C all NaN */
            bool row = mode == 2, with_res = (act + mode) % 2 == 0;
            rlx_sgemm_post post;
            rlx_epilogue ep = {.has_act = act >= 0, .act = act >= 0 ? acts[act] : (rlx_unary_params){0}};
            CHECK(rlx_cpu_sgemm_post(&ep, &post));
            post.col_bias = row ? NULL : bias, post.row_bias = row ? bias : NULL;
            post.res = with_res ? res : NULL, post.ldr = N;
            cb_ep e = {act >= 0 ? &acts[act] : NULL, post.col_bias, post.row_bias, post.res, N};
            float *Bp = NULL, *Ap = NULL;
            rlx_sgemm_args a = {.isa = isa, .M = M, .N = N, .K = K, .A = A, .lda = K, .B = B, .ldb = K, .trans_b = true,
                                .ldc = N};
            if (mode == 1 || mode == 3) { /* 3: few panels (N <= 128) over a plain A read in place (AVX-512) */
              Bp = rlx_aligned_alloc(rlx_sgemm_packed_size_for(isa, N, K));
              rlx_sgemm_pack_b_for(isa, N, K, B, K, true, Bp);
              a.b_packed = Bp;
            }
            if (mode == 2) {
              if (isa != rlx_sgemm_active()) goto next; /* rlx_sgemm_pack_a packs for the active kernel */
              Ap = rlx_aligned_alloc(rlx_sgemm_packed_a_size(M, K));
              rlx_sgemm_pack_a(M, K, A, K, Ap);
              a.A = NULL, a.a_packed = Ap, a.by_cols = true;
            }
            a.C = C1, a.post = &post;
            rlx_sgemm_ex(tp, &a, scratch);
            a.C = C2, a.post = NULL, a.epilogue = callback_epilogue, a.epilogue_ctx = &e;
            rlx_sgemm_ex(tp, &a, scratch);
            int64_t bad = -1;
            for (int64_t i = 0; i < M * N && bad < 0; i++)
              if (!same_bits(C1[i], C2[i])) bad = i;
            if (bad >= 0)
              fprintf(stderr, "  post %s M=%lld N=%lld K=%lld act=%d mode=%d threads=%d: [%lld] %a, callback %a\n",
                      isa->name, (long long)M, (long long)N, (long long)K, act, mode, threads, (long long)bad,
                      C1[bad], C2[bad]);
            CHECK(bad < 0);
            checked++;
          next:
            rlx_aligned_free(Bp), rlx_aligned_free(Ap);
            free(A), free(B), free(bias), free(res), free(C1), free(C2);
          }
      free(scratch);
      rlx_threadpool_destroy(tp);
    }
  }
  CHECK(checked > 0);
}

static void add_index(void *ctx, int64_t i, int worker) {
  (void)worker;
  __atomic_add_fetch((int64_t *)ctx, i + 1, __ATOMIC_RELAXED);
}

TEST(pool_runs_every_index_once) {
  rlx_threadpool *tp;
  CHECK_OK(rlx_threadpool_create(3, &tp));
  for (int rep = 0; rep < 200; rep++) { /* many regions: wake-up and join are reliable */
    int64_t sum = 0, n = rep % 17 + 1;
    rlx_parallel_for(tp, n, add_index, &sum);
    CHECK(sum == n * (n + 1) / 2);
  }
  rlx_threadpool_destroy(tp);
  rlx_threadpool_destroy(NULL);
  int64_t sum = 0;
  rlx_parallel_for(NULL, 10, add_index, &sum);
  CHECK(sum == 55);
}

/* Which worker ran which index, in what order; the tasks' cost grows with i so shares finish unevenly and
 * threads take from each other's. */
typedef struct dealt_log {
  int64_t n;
  int runs[1000];
  int64_t seq[4][1000];
  int len[4];
  double spent[4]; /* each worker's busy work, kept so it is not optimized away */
} dealt_log;

static void log_index(void *ctx, int64_t i, int worker) {
  dealt_log *d = ctx;
  __atomic_add_fetch(&d->runs[i], 1, __ATOMIC_RELAXED);
  d->seq[worker][d->len[worker]++] = i; /* each worker appends to its own row only */
  double x = 0;
  for (int64_t k = 0; k < 200 * (i % 7 + 1) * (i < d->n / 3 ? 4 : 1); k++) x += (double)k;
  d->spent[worker] += x;
}

/* Tasks are dealt, not drawn (threadpool.h): worker t runs its share [n*t/T, n*(t+1)/T) from the front, in
 * order, and takes the others' from the back; every index runs once. */
TEST(pool_deals_contiguous_shares) {
  static dealt_log d;
  for (int threads = 2; threads <= 4; threads++) {
    rlx_threadpool *tp;
    CHECK_OK(rlx_threadpool_create(threads, &tp));
    for (int rep = 0; rep < 40; rep++) {
      memset(&d, 0, sizeof d);
      d.n = 1 + (rep * 97) % 1000;
      rlx_parallel_for(tp, d.n, log_index, &d);
      for (int64_t i = 0; i < d.n; i++) CHECK(d.runs[i] == 1);
      for (int w = 0; w < threads; w++) {
        int64_t own_next = d.n * w / threads, back[4];
        for (int v = 0; v < threads; v++) back[v] = d.n * (v + 1) / threads;
        for (int k = 0; k < d.len[w]; k++) {
          int64_t i = d.seq[w][k];
          int v = 0;
          while (!(i >= d.n * v / threads && i < d.n * (v + 1) / threads)) v++;
          if (v == w) {
            CHECK(i == own_next); /* its own share: from the front, one after the other */
            own_next++;
          } else {
            CHECK(i < back[v]); /* another's: from the back */
            back[v] = i;
          }
        }
      }
    }
    rlx_threadpool_destroy(tp);
  }
}

/* The panel width rlx_sgemm_isa_for takes for N columns under the host's tuning row (cpu/tuning.c): on the
 * AMD row (a panel's fixed cost 4 columns) 16 wide where 32 would pad much (40, 48, 80, 112, 72 channels),
 * 32 where the two pad alike or not at all (24, 1024, 1000 classes, 1040); on the Xeon row (16) 32 wide from
 * 24 columns up, 16 at 16 and below. The products each width computes are the same sums (the k loop does
 * not depend on it): microkernels_all_sizes. */
TEST(panel_width) {
  const rlx_sgemm_isa *a = rlx_sgemm_active();
  if (strcmp(a->name, "avx512")) {
    printf("  panel_width: the active kernel is %s (one panel width), skipped\n", a->name);
    return;
  }
  const rlx_cpu_tuning *t = rlx_cpu_tuning_get();
  struct { int64_t N; int amd, xeon; } want[] = {
      {16, 16, 16}, {24, 32, 32}, {40, 16, 32}, {48, 16, 32}, {72, 16, 32}, {80, 16, 32}, {112, 16, 32},
      {144, 16, 32}, {160, 32, 32}, {1000, 16, 32}, {1024, 32, 32}, {1040, 16, 32}, {8, 16, 16},
  };
  bool amd = !strcmp(t->name, "amd-avx512");
  CHECK(amd || !strcmp(t->name, "xeon"));
  for (size_t i = 0; i < RLX_COUNTOF(want); i++) {
    int got = rlx_sgemm_isa_for(want[i].N)->nr, w = amd ? want[i].amd : want[i].xeon;
    if (got != w) fprintf(stderr, "  N=%lld on the %s row: %d wide, want %d\n", (long long)want[i].N, t->name, got, w);
    CHECK(got == w);
  }
}

TEST_MAIN(unpacked_a_kernel, inplace_b_kernel, inplace_b_driver, prepacked_a_by_cols, microkernels_all_sizes,
          threads_and_large, split_by_rows_or_cols, prepacked_b, whole_a_past_shared_block, post_matches_callback,
          pool_runs_every_index_once, pool_deals_contiguous_shares, panel_width)
