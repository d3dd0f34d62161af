/*
 * gemm.c — the sgemm driver (see gemm.h): Goto-style blocking.
 *
 *   for each NC-column block of B, for each KC-row block:
 *     pack B[kc x nc] once into NR-column panels (in parallel, shared), or
 *       use the panels packed at compile time (constant weights);
 *     in parallel over tasks (mc-row block of A x a range of B panels):
 *       pack the A block into MR-row panels (per thread) and run the
 *       microkernel on every MR x NR block, accumulating over K blocks.
 *
 * Block sizes keep an A block (mc x KC, mc <= MC_MAX) in L2 and a B panel (KC x NR) in L1
 * while the microkernel streams; tasks are sized so every thread has work
 * even when M is a single block (conv layers with few output channels).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/gemm.h"
#include "cpu/tuning.h"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#define KC 256
#define MC_MAX 384 /* rows of an A block at most; a multiple of every MR */
#define NC 2048 /* a multiple of every NR */
/* The most of a task's packed B panels (bytes) that compute_block streams from L2 under each A row panel
 * (a_outer): a quarter of this Xeon host's 2 MiB L2, half of a 1 MiB one, leaving room for C's and the
 * residual's lines. */
#ifndef B_L2_BYTES
#define B_L2_BYTES (512 << 10)
#endif

static const rlx_sgemm_isa isas[] = {
#define RLX_X_(name, mr, nr) {#name, mr, nr, rlx_f32_gemm_ukernel__##name##_##mr##x##nr, rlx_f32_gemm_skinny__##name##_##nr},
    RLX_SGEMM_ISA_LIST(RLX_X_)
#undef RLX_X_
};

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

static bool cpu_has(const char *name) {
  if (!strcmp(name, "avx512")) return __builtin_cpu_supports("avx512f");
  if (!strcmp(name, "avx2")) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return true;
}

const rlx_sgemm_isa *rlx_sgemm_isa_named(const char *name) {
  for (size_t i = 0; i < RLX_COUNTOF(isas); i++)
    if (!strcmp(isas[i].name, name)) return cpu_has(name) ? &isas[i] : NULL;
  return NULL;
}

bool rlx_sgemm_isa_runs(const rlx_sgemm_isa *isa) { return cpu_has(isa->name); }

const rlx_sgemm_isa *rlx_sgemm_isa_at(int i) { return i >= 0 && i < (int)RLX_COUNTOF(isas) ? &isas[i] : NULL; }

/* A product's cost on a microkernel of panel width nr, in units of B
 * columns: its panels, each costing nr columns plus `fixed` (the host's
 * panel_cols, cpu/tuning.c: 16 on the Xeon, none on the AMD EPYC host, whose
 * FMAs bound the kernel) for the broadcasts of A and the stores that a
 * panel pays whatever its width; ties go to the widest. On the Xeon
 * host (one thread, B prepacked, 1x1-conv shapes with a residual) the 12x32
 * kernel over padded panels ran as fast as the 12x16 one or faster at N =
 * 24, 40, 48, 80 and 112 (196x112x672: 0.21-0.29 ms against 0.29-0.31),
 * and the same at N = 16: a 32-wide panel costs about 1.5 of a 16-wide one,
 * not 2, which padding by panel count alone (the rule before) assumed. */
static int64_t panel_cost(int64_t N, int nr, int fixed) { return (N + nr - 1) / nr * (nr + fixed); }

const rlx_sgemm_isa *rlx_sgemm_isa_for(int64_t N) {
  /* the host's fixed cost (cpu/tuning.h), read once: weights packed for a width must be read with it */
  static _Atomic int fixed_cols = -1;
  int fixed = fixed_cols;
  if (fixed < 0) fixed_cols = fixed = rlx_cpu_tuning_get()->panel_cols;
  const rlx_sgemm_isa *a = rlx_sgemm_active(), *best = a;
  for (size_t i = 0; i < RLX_COUNTOF(isas); i++)
    if (!strcmp(isas[i].name, a->name) && panel_cost(N, isas[i].nr, fixed) < panel_cost(N, best->nr, fixed))
      best = &isas[i];
  return best;
}

const rlx_sgemm_isa *rlx_sgemm_active(void) {
  static const rlx_sgemm_isa *_Atomic active; /* every thread computes the same answer */
  const rlx_sgemm_isa *a = active;
  if (a) return a;
  const char *force = getenv("RLX_ISA");
  const rlx_sgemm_isa *pick = force && *force ? rlx_sgemm_isa_named(force) : NULL;
  for (size_t i = 0; !pick && i < RLX_COUNTOF(isas); i++)
    if (cpu_has(isas[i].name)) pick = &isas[i];
  active = pick;
  return pick;
}

/* Scratch layout: the shared block (B packed once per K block; over prepacked B, the whole of A packed once
 * where it fits), then one A block per thread, then, where the caller sized the scratch with
 * rlx_sgemm_scratch_for, room for a whole A that passes the shared block: ViT's fc2 input (197 x 3072,
 * 2.4 MiB) had each of four tasks at two threads pack all of it (its matmuls 5% slower, docs/perf.md).
 * Sized per product, so only such products pay for it (a 4 MiB shared block for every sgemm had grown
 * every model's scratch by 6 MiB). */
static size_t shared_bytes(void) { return (size_t)KC * NC * sizeof(float); }
#define A_FILL_MAX (4 << 20)
static size_t a_block_bytes(void) { return (size_t)MC_MAX * KC * sizeof(float); }

/* Rows of an A block for M rows: M split evenly into as few blocks of at
 * most MC_MAX rows as it takes, rounded up to MR. Every block streams all
 * of B's panels, so a 197-row product (ViT) is one block, not 192 rows plus
 * a 5-row block that reads the weights a second time for 5 rows. */
static int64_t mc_for(const rlx_sgemm_isa *isa, int64_t M) {
  int64_t blocks = RLX_MAX(1, (M + MC_MAX - 1) / MC_MAX);
  return round_up((M + blocks - 1) / blocks, isa->mr);
}

size_t rlx_sgemm_scratch(int threads) {
  return shared_bytes() + a_block_bytes() * (size_t)(threads > 0 ? threads : 1) + 64;
}

/* A packed whole: MR-row panels (12 rows: a multiple of every MR). */
static size_t a_whole_bytes(int64_t M, int64_t K) { return (size_t)round_up(M, 12) * (size_t)K * sizeof(float); }

size_t rlx_sgemm_scratch_for(int threads, int64_t M, int64_t K) {
  size_t s = rlx_sgemm_scratch(threads), whole = M > RLX_SGEMM_SKINNY_M && K > 0 ? a_whole_bytes(M, K) : 0;
  return whole > shared_bytes() && whole <= A_FILL_MAX ? s + whole : s;
}

/* Rows [r0, r0 + 4) of one MR-row panel, 4 k at a time as 4x4 transposes
 * (SSE: every x86-64); returns how many k it did. */
static int64_t pack_a_quad(int mr, const float *A, int64_t lda, int64_t kc, float *ap) {
#if defined(__SSE2__)
  int64_t k = 0;
  for (; k + 4 <= kc; k += 4) {
    __m128 r0 = _mm_loadu_ps(A + k), r1 = _mm_loadu_ps(A + lda + k), r2 = _mm_loadu_ps(A + 2 * lda + k),
           r3 = _mm_loadu_ps(A + 3 * lda + k);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps(ap + k * mr, r0);
    _mm_storeu_ps(ap + (k + 1) * mr, r1);
    _mm_storeu_ps(ap + (k + 2) * mr, r2);
    _mm_storeu_ps(ap + (k + 3) * mr, r3);
  }
  return k;
#else
  (void)mr, (void)A, (void)lda, (void)kc, (void)ap;
  return 0;
#endif
}

/* A[mc x kc] (row stride lda) into MR-row panels: ap[panel][k][r], zero-padded. */
static void pack_a(int mr, const float *A, int64_t lda, int64_t mc, int64_t kc, float *ap) {
  for (int64_t i = 0; i < mc; i += mr, ap += kc * mr) {
    int rows = (int)RLX_MIN(mr, mc - i), r = 0;
    for (; r + 4 <= rows; r += 4) { /* four rows at a time, then the k tail */
      const float *a = A + (i + r) * lda;
      for (int64_t k = pack_a_quad(mr, a, lda, kc, ap + r); k < kc; k++)
        for (int q = 0; q < 4; q++) ap[k * mr + r + q] = a[q * lda + k];
    }
    for (int64_t k = 0; r < mr && k < kc; k++) {
      for (int q = r; q < rows; q++) ap[k * mr + q] = A[(i + q) * lda + k];
      for (int q = rows; q < mr; q++) ap[k * mr + q] = 0.0f;
    }
  }
}

/* Panel p (NR columns starting at column j of the block) of B[kc x nc]. */
static void pack_b_panel(int nr, const float *B, int64_t ldb, bool trans_b, int64_t kc, int64_t cols,
                         float *bp) {
  if (trans_b) { /* B^T's panel is A's layout: four columns (rows of B) at a time, as 4x4 transposes */
    int64_t c = 0;
    for (; c + 4 <= cols; c += 4) {
      const float *b = B + c * ldb;
      for (int64_t k = pack_a_quad(nr, b, ldb, kc, bp + c); k < kc; k++)
        for (int q = 0; q < 4; q++) bp[k * nr + c + q] = b[q * ldb + k];
    }
    for (int64_t k = 0; k < kc; k++) {
      for (int64_t j = c; j < cols; j++) bp[k * nr + j] = B[j * ldb + k];
      for (int64_t j = cols; j < nr; j++) bp[k * nr + j] = 0.0f;
    }
    return;
  }
  for (int64_t k = 0; k < kc; k++) {
    float *dst = bp + k * nr;
    if (!trans_b) memcpy(dst, B + k * ldb, sizeof(float) * (size_t)cols);
    else
      for (int64_t c = 0; c < cols; c++) dst[c] = B[c * ldb + k];
    for (int64_t c = cols; c < nr; c++) dst[c] = 0.0f;
  }
}

typedef struct gemm_job {
  const rlx_sgemm_isa *isa;
  int64_t M, N, K, lda, ldb, ldc;
  const float *A, *B;
  bool trans_b;
  float *C;
  rlx_sgemm_pack_fn pack_b;
  const void *pack_ctx;
  rlx_sgemm_pack_a_fn pack_a;
  const void *pack_a_ctx;
  rlx_sgemm_epilogue_fn epilogue;
  const void *epilogue_ctx;
  const rlx_sgemm_post *post;
  /* the current (jc, pc) block */
  int64_t mc; /* rows of an A block (mc_for) */
  int64_t j0, nc, p0, kc, panels, mtiles, chunk;
  int64_t pack_chunks; /* row chunks per panel when packing B */
  const float *bp; /* packed B block */
  float *bp_fill;  /* where pack tasks write it (NULL when prepacked) */
  const float *a_packed; /* the whole A packed at compile time, or NULL */
  const float *b_packed; /* the whole B packed at compile time, or NULL */
  char *a_bufs;
  char *b_bufs;          /* per-task packing: each worker's B panels (b_buf_bytes apart) */
  size_t b_buf_bytes;
  bool a_inplace; /* A unpacked, read by the ISA's in-place kernel (a_inplace_ok) */
  bool b_inplace; /* B unpacked, read by the ISA's in-place kernel (b_inplace_ok) */
  float *a_fill;  /* where pack_a_task writes the shared packed A */
  /* Task t is (row block, column chunk) t / ctiles, t % ctiles: the pool
   * deals each thread a contiguous range of tasks, so each thread writes
   * its own rows of C; by_cols numbers them column chunk first instead. */
  bool by_cols;
  int64_t ctiles; /* column chunks of the current column block */
} gemm_job;

/* Whether a task's A block may be read in place instead of packed: the
 * AVX-512 12x32 kernel, A given plainly, each A block serving at most
 * A_INPLACE_PANELS panels of B (packing it costs about as much as a
 * microkernel pass over 1 - 2 panels), and a row stride that does not put
 * the block's 12 rows in one L1 set (a multiple of 4 KiB). One thread,
 * 3136x96x384 B^T over packed weights: 81 -> 93 GFLOP/s; with 12 panels
 * (3136x384x96) packing still wins by a few percent. */
#define A_INPLACE_PANELS 4
typedef void (*a_ukernel)(int64_t K, const float *a, int64_t lda, const float *b, float *c, int64_t ldc, int m, int n,
                          bool accumulate);
typedef void (*a_post_ukernel)(int64_t K, const float *a, int64_t lda, const float *b, float *c, int64_t ldc, int m,
                               int n, bool accumulate, const rlx_sgemm_post *post, int64_t i0, int64_t j0);
/* The ISA's microkernels with A in place (plain, with the post), or false. The 12x16 one: one thread,
 * 12544x16x16 with a residual (mobilenet_v3's second 1x1 conv) spent a third of its time packing A. */
static bool a_inplace_kernels(const rlx_sgemm_isa *isa, a_ukernel *plain, a_post_ukernel *post) {
  if (isa->ukernel == rlx_f32_gemm_ukernel__avx512_12x32) {
    *plain = rlx_f32_gemm_ukernel_a__avx512_12x32, *post = rlx_f32_gemm_ukernel_a_post__avx512_12x32;
    return true;
  }
  if (isa->ukernel == rlx_f32_gemm_ukernel__avx512_12x16) {
    *plain = rlx_f32_gemm_ukernel_a__avx512_12x16, *post = rlx_f32_gemm_ukernel_a_post__avx512_12x16;
    return true;
  }
  return false;
}
static bool a_inplace_ok(const rlx_sgemm_isa *isa, const rlx_sgemm_args *a, int64_t chunk) {
  a_ukernel plain;
  a_post_ukernel post;
  return a_inplace_kernels(isa, &plain, &post) && !a->a_packed && !a->pack_a && a->A && a->M > RLX_SGEMM_SKINNY_M &&
         chunk <= A_INPLACE_PANELS && a->lda % 1024 != 0;
}

/* Whether B may be read in place instead of packed: the AVX-512 kernels, B given plainly (not transposed),
 * at most B_INPLACE_ROWS rows of A (so each B panel serves at most B_INPLACE_ROWS / 12 row blocks, the
 * first reading it from L2 or L3, the others from L1), and a row stride that does not put a panel's rows
 * in one L1 set. A channel-major 1x1 conv with few output channels (squeezenet's squeeze layers, 16 from
 * 64 or 128 at 55x55) spent 30% of its time packing B (docs/perf.md). */
#define B_INPLACE_ROWS 64
typedef void (*b_ukernel)(int64_t K, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, int m, int n,
                          bool accumulate, const rlx_sgemm_post *post, int64_t i0, int64_t j0);
static b_ukernel b_inplace_kernel(const rlx_sgemm_isa *isa) {
  if (isa->ukernel == rlx_f32_gemm_ukernel__avx512_12x32) return rlx_f32_gemm_ukernel_b__avx512_12x32;
  if (isa->ukernel == rlx_f32_gemm_ukernel__avx512_12x16) return rlx_f32_gemm_ukernel_b__avx512_12x16;
  return NULL;
}
static bool b_inplace_ok(const rlx_sgemm_isa *isa, const rlx_sgemm_args *a) {
  return b_inplace_kernel(isa) && a->B && !a->trans_b && !a->pack_b && !a->b_packed && a->M > RLX_SGEMM_SKINNY_M &&
         a->M <= B_INPLACE_ROWS && a->ldb % 1024 != 0;
}

/* Offset (floats) of block (ic, pc) in a fully prepacked A. */
static int64_t packed_a_offset(const rlx_sgemm_isa *isa, int64_t M, int64_t K, int64_t i0, int64_t p0) {
  int64_t mc = RLX_MIN(mc_for(isa, M), M - i0);
  return i0 * K + p0 * round_up(mc, isa->mr); /* full blocks before i0 hold mc_for(M) * K floats each */
}

/* Offset (floats) of block (jc, pc) in a fully prepacked B. */
static int64_t packed_offset(const rlx_sgemm_isa *isa, int64_t N, int64_t K, int64_t j0, int64_t p0) {
  int64_t nc = RLX_MIN(NC, N - j0);
  return j0 * K + p0 * round_up(nc, isa->nr); /* full blocks before j0 hold NC * K floats each */
}

bool rlx_sgemm_isa_avx512(const rlx_sgemm_isa *isa) {
  return isa->ukernel == rlx_f32_gemm_ukernel__avx512_12x32 || isa->ukernel == rlx_f32_gemm_ukernel__avx512_12x16;
}

/* Task t packs rows [r0, r0 + rows) of panel t / pack_chunks: with few panels
 * (a conv with a small image) the rows are split too, so every thread packs. */
/* Rows [k0, k0 + rows) of panel p of the current column block into dst. */
static void pack_panel_rows(const gemm_job *j, int64_t p, int64_t k0, int64_t rows, float *dst) {
  int nr = j->isa->nr;
  int64_t col = j->j0 + p * nr, cols = RLX_MIN(nr, j->N - col);
  if (j->pack_b) {
    j->pack_b(j->pack_ctx, k0, rows, col, cols, nr, dst);
    return;
  }
  const float *src = j->trans_b ? j->B + col * j->ldb + k0 : j->B + k0 * j->ldb + col;
  if (!j->trans_b && rlx_sgemm_isa_avx512(j->isa)) rlx_f32_pack_rows__avx512(src, j->ldb, rows, (int)cols, nr, dst);
  else pack_b_panel(nr, src, j->ldb, j->trans_b, rows, cols, dst);
}

static void pack_b_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const gemm_job *j = ctx;
  int nr = j->isa->nr;
  int64_t p = t / j->pack_chunks, step = (j->kc + j->pack_chunks - 1) / j->pack_chunks;
  int64_t r0 = (t % j->pack_chunks) * step, rows = RLX_MIN(step, j->kc - r0);
  if (rows <= 0) return;
  pack_panel_rows(j, p, j->p0 + r0, rows, j->bp_fill + p * j->kc * nr + r0 * nr);
}

/* The epilogue (and with_post, the post) on rows [i0, i0 + m) over the columns of panels [pa, pb), one
 * call per MR rows: long rows amortize the call, and the task's C block is
 * still in L2. */
static void epilogue_span(const gemm_job *j, int64_t pa, int64_t pb, int64_t i0, int64_t m, bool with_post) {
  int mr = j->isa->mr;
  int64_t col = j->j0 + pa * j->isa->nr, end = RLX_MIN(j->j0 + pb * j->isa->nr, j->N);
  for (int64_t ir = 0; ir < m; ir += mr) {
    float *c = j->C + (i0 + ir) * j->ldc + col;
    int rows = (int)RLX_MIN(mr, m - ir);
    if (j->epilogue) j->epilogue(j->epilogue_ctx, c, j->ldc, i0 + ir, col, rows, (int)(end - col));
    if (with_post && j->post) rlx_sgemm_post_tile(j->post, c, j->ldc, i0 + ir, col, rows, (int)(end - col));
  }
}

/* c[i][j] = act((c[i][j] + bias) + res[i][j]) in scalar float: the
 * operations, in the order, of the AVX-512 kernels' post_vec. */
static float post_act(const rlx_sgemm_post *p, float x) {
  switch (p->act) {
    case RLX_SGEMM_ACT_RELU:
      return x > 0.0f ? x : (x == x ? 0.0f : x);
    case RLX_SGEMM_ACT_HARDTANH:
      return x < p->lo ? p->lo : x > p->hi ? p->hi : x;
    case RLX_SGEMM_ACT_CLAMP: {
      float v = x < p->lo ? p->lo : x;
      return v > p->hi ? p->hi : v;
    }
    case RLX_SGEMM_ACT_HARDSWISH: {
      float v = x + 3.0f;
      v = v < 0.0f ? 0.0f : v;
      v = v > 6.0f ? 6.0f : v;
      return x * v * (1.0f / 6.0f); /* as eltwise.c */
    }
    default:
      return x;
  }
}

void rlx_sgemm_post_tile(const rlx_sgemm_post *p, float *c, int64_t ldc, int64_t i0, int64_t j0, int m, int n) {
  for (int r = 0; r < m; r++) {
    float *row = c + r * ldc;
    const float *res = p->res ? p->res + (i0 + r) * p->ldr + j0 : NULL;
    for (int k = 0; k < n; k++) {
      float v = row[k];
      if (p->col_bias) v += p->col_bias[j0 + k];
      else if (p->row_bias) v += p->row_bias[i0 + r];
      if (res) v += res[k];
      row[k] = post_act(p, v);
    }
  }
}

/* The microkernel storing with the post, where the ISA has one (NULL: the
 * post runs on the stored block). */
typedef void (*post_ukernel)(int64_t K, const float *a, const float *b, float *c, int64_t ldc, int m, int n,
                             bool accumulate, const rlx_sgemm_post *post, int64_t i0, int64_t j0);
static post_ukernel post_kernel_of(const rlx_sgemm_isa *isa) {
  if (isa->ukernel == rlx_f32_gemm_ukernel__avx512_12x32) return rlx_f32_gemm_ukernel_post__avx512_12x32;
  if (isa->ukernel == rlx_f32_gemm_ukernel__avx512_12x16) return rlx_f32_gemm_ukernel_post__avx512_12x16;
  return NULL;
}

/* Task t's part of K block [p0, p0 + kc): its mc rows of A against its
 * panels [pa, pb) of B, panel p at bp + (p - pbase) * kc * NR. */
static void compute_block(const gemm_job *j, int64_t t, int worker, int64_t p0, int64_t kc, const float *bp,
                          int64_t pbase) {
  const rlx_sgemm_isa *isa = j->isa;
  int64_t mt = j->by_cols ? t % j->mtiles : t / j->ctiles, ct = j->by_cols ? t / j->mtiles : t % j->ctiles;
  int64_t i0 = mt * j->mc, mc = RLX_MIN(j->mc, j->M - i0);
  int64_t pa = ct * j->chunk, pb = RLX_MIN(pa + j->chunk, j->panels);
  if (pa >= pb) return;
  bool last = p0 + kc >= j->K;
  if (!j->a_packed && !j->pack_a && j->M <= RLX_SGEMM_SKINNY_M) { /* few rows: stream B once, A unpacked */
    for (int64_t p = pa; p < pb; p++) {
      int64_t col = j->j0 + p * isa->nr;
      float *c = j->C + col;
      int nn = (int)RLX_MIN(isa->nr, j->N - col);
      isa->skinny(kc, j->A + p0, j->lda, bp + (p - pbase) * kc * isa->nr, c, j->ldc, (int)j->M, nn, p0 > 0);
    }
    if (last && (j->epilogue || j->post)) epilogue_span(j, pa, pb, 0, j->M, true);
    return;
  }
  if (j->a_inplace) { /* A read in place: few panels would reuse a packed block */
    a_ukernel plain = NULL;
    a_post_ukernel with_post = NULL;
    a_inplace_kernels(isa, &plain, &with_post); /* true: a_inplace_ok held */
    for (int64_t p = pa; p < pb; p++) {
      int64_t col = j->j0 + p * isa->nr;
      const float *b = bp + (p - pbase) * kc * isa->nr;
      for (int64_t ir = 0; ir < mc; ir += isa->mr) {
        const float *a = j->A + (i0 + ir) * j->lda + p0;
        float *c = j->C + (i0 + ir) * j->ldc + col;
        int m = (int)RLX_MIN(isa->mr, mc - ir), nn = (int)RLX_MIN(isa->nr, j->N - col);
        if (last && j->post)
          with_post(kc, a, j->lda, b, c, j->ldc, m, nn, p0 > 0, j->post, i0 + ir, col);
        else
          plain(kc, a, j->lda, b, c, j->ldc, m, nn, p0 > 0);
      }
    }
    if (last && j->epilogue) epilogue_span(j, pa, pb, i0, mc, false);
    return;
  }
  const float *ap;
  if (j->a_packed) {
    ap = j->a_packed + packed_a_offset(isa, j->M, j->K, i0, p0);
  } else {
    float *buf = (float *)(j->a_bufs + a_block_bytes() * (size_t)worker);
    if (j->pack_a)
      for (int64_t i = 0; i < mc; i += isa->mr)
        j->pack_a(j->pack_a_ctx, i0 + i, (int)RLX_MIN(isa->mr, mc - i), p0, kc, isa->mr, buf + i * kc);
    else
      pack_a(isa->mr, j->A + i0 * j->lda + p0, j->lda, mc, kc, buf);
    ap = buf;
  }
  post_ukernel pk = last && j->post ? post_kernel_of(isa) : NULL;
  /* Which operand stays in L1 while the other streams from L2: a B panel over the block's row panels (the
   * Goto order), or, where the task's B panels fit in L2 together, an A row panel over them. The second
   * writes C row by row, left to right, where the first writes a column of 12 x NR blocks, one per row
   * panel, each row of it in another page: a channel-major 1x1 conv (C, the NCHW output, and the
   * residual rows thousands of floats long) ran 6% faster in resnet50 at one thread (docs/perf.md). */
  int64_t rpanels = (mc + isa->mr - 1) / isa->mr, bpanels = pb - pa, blocks = rpanels * bpanels;
  bool a_outer = rpanels > 1 && (size_t)bpanels * (size_t)kc * (size_t)isa->nr * sizeof(float) <= B_L2_BYTES;
  for (int64_t q = 0; q < blocks; q++) {
    int64_t r = a_outer ? q / bpanels : q % rpanels, p = pa + (a_outer ? q % bpanels : q / rpanels);
    int64_t col = j->j0 + p * isa->nr, ir = r * isa->mr;
    float *c = j->C + (i0 + ir) * j->ldc + col;
    int m = (int)RLX_MIN(isa->mr, mc - ir), nn = (int)RLX_MIN(isa->nr, j->N - col);
    const float *a = ap + r * kc * isa->mr;
    if (j->b_inplace) {
      b_inplace_kernel(isa)(kc, a, j->B + p0 * j->ldb + col, j->ldb, c, j->ldc, m, nn, p0 > 0, last ? j->post : NULL,
                            i0 + ir, col);
      continue;
    }
    const float *b = bp + (p - pbase) * kc * isa->nr;
    if (pk) {
      pk(kc, a, b, c, j->ldc, m, nn, p0 > 0, j->post, i0 + ir, col);
      continue;
    }
    isa->ukernel(kc, a, b, c, j->ldc, m, nn, p0 > 0);
    if (last && j->post) rlx_sgemm_post_tile(j->post, c, j->ldc, i0 + ir, col, m, nn); /* in L1 still */
  }
  if (last && j->epilogue) epilogue_span(j, pa, pb, i0, mc, false);
}

/* Task t packs block (t / kblocks, t % kblocks) of A into the shared
 * buffer j->a_fill, laid out as rlx_sgemm_pack_a lays out a whole A. */
static void pack_a_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const gemm_job *j = ctx;
  int64_t kblocks = (j->K + KC - 1) / KC, i0 = t / kblocks * j->mc, p0 = t % kblocks * KC;
  int64_t mc = RLX_MIN(j->mc, j->M - i0), kc = RLX_MIN(KC, j->K - p0);
  float *dst = j->a_fill + packed_a_offset(j->isa, j->M, j->K, i0, p0);
  int mr = j->isa->mr;
  if (j->pack_a)
    for (int64_t i = 0; i < mc; i += mr) j->pack_a(j->pack_a_ctx, i0 + i, (int)RLX_MIN(mr, mc - i), p0, kc, mr, dst + i * kc);
  else
    pack_a(mr, j->A + i0 * j->lda + p0, j->lda, mc, kc, dst);
}

static void compute_task(void *ctx, int64_t t, int worker) {
  const gemm_job *j = ctx;
  compute_block(j, t, worker, j->p0, j->kc, j->bp, 0);
}

/* Per-task: the whole K loop inside one task, B packed prepacked or by the
 * task itself (its own panels, into its worker's buffer), so a product is
 * one parallel region instead of two per K block. */
static void full_k_task(void *ctx, int64_t t, int worker) {
  const gemm_job *j = ctx;
  const rlx_sgemm_isa *isa = j->isa;
  int64_t ct = j->by_cols ? t / j->mtiles : t % j->ctiles, pa = ct * j->chunk, pb = RLX_MIN(pa + j->chunk, j->panels);
  if (pa >= pb) return;
  for (int64_t p0 = 0; p0 < j->K; p0 += KC) {
    int64_t kc = RLX_MIN(KC, j->K - p0);
    if (j->b_packed) {
      compute_block(j, t, worker, p0, kc, j->b_packed + packed_offset(isa, j->N, j->K, j->j0, p0), 0);
      continue;
    }
    if (j->b_inplace) {
      compute_block(j, t, worker, p0, kc, NULL, pa);
      continue;
    }
    float *buf = (float *)(j->b_bufs + j->b_buf_bytes * (size_t)worker);
    for (int64_t p = pa; p < pb; p++) pack_panel_rows(j, p, p0, kc, buf + (p - pa) * kc * isa->nr);
    compute_block(j, t, worker, p0, kc, buf, pa);
  }
}

/* Few rows over a prepacked B (a linear layer on one token): the product
 * is a stream of the weights, so the whole of N is one parallel region
 * (column blocks do not cut it into regions, each a barrier where the
 * memory pipeline drains); task t takes panels [t * chunk, ...) of every
 * column block in turn and walks K in KC steps, so its C stays in L1. */
static void skinny_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const gemm_job *j = ctx;
  const rlx_sgemm_isa *isa = j->isa;
  int64_t per_block = NC / isa->nr, total = (j->N + isa->nr - 1) / isa->nr;
  int64_t pa = t * j->chunk, pb = RLX_MIN(pa + j->chunk, total);
  if (pa >= pb) return;
  for (int64_t p0 = 0; p0 < j->K; p0 += KC) {
    int64_t kc = RLX_MIN(KC, j->K - p0);
    for (int64_t p = pa; p < pb; p++) {
      int64_t j0 = p / per_block * NC, col = p * isa->nr;
      const float *bp = j->b_packed + packed_offset(isa, j->N, j->K, j0, p0) + (p - j0 / isa->nr) * kc * isa->nr;
      isa->skinny(kc, j->A + p0, j->lda, bp, j->C + col, j->ldc, (int)j->M, (int)RLX_MIN(isa->nr, j->N - col), p0 > 0);
    }
  }
  if (j->epilogue || j->post) {
    int64_t c0 = pa * isa->nr, c1 = RLX_MIN(pb * isa->nr, j->N);
    for (int64_t c = c0; c < c1; c += 1 << 20) { /* n is an int */
      int n = (int)RLX_MIN(1 << 20, c1 - c);
      if (j->epilogue) j->epilogue(j->epilogue_ctx, j->C + c, j->ldc, 0, c, (int)j->M, n);
      if (j->post) rlx_sgemm_post_tile(j->post, j->C + c, j->ldc, 0, c, (int)j->M, n);
    }
  }
}

/* The busiest thread's work, in MR x NR tiles, when R row tiles go in row blocks of rt tiles and P panels
 * in column chunks of pc, the tasks dealt over the threads (plus a tile a task for its start). */
static int64_t makespan(int64_t R, int64_t P, int64_t rt, int64_t pc, int threads) {
  int64_t tasks = (R + rt - 1) / rt * ((P + pc - 1) / pc);
  return (tasks + threads - 1) / threads * (rt * pc + 1);
}

/* A small product over prepacked B (a 1x1 conv on a 14x14 or 7x7 image: 196 rows by 96 columns is one row
 * block and three panels, three tasks for two threads) whose tasks would not deal evenly: the grid of row
 * blocks (rows a multiple of MR, at most MC_MAX) and column chunks whose busiest thread has the least
 * work, where that is a tenth less than the usual grid's; *mc and *chunk are left alone otherwise.
 * mnasnet's 14x14 and 7x7 projections at two threads had run 1.15-1.3x faster than at one. */
static void balance(const rlx_sgemm_isa *isa, int64_t M, int64_t N, int threads, int64_t *mc, int64_t *chunk) {
  int64_t R = (M + isa->mr - 1) / isa->mr, P = (N + isa->nr - 1) / isa->nr, rt0 = *mc / isa->mr;
  int64_t want = RLX_MAX(1, (2 * threads + (M + *mc - 1) / *mc - 1) / ((M + *mc - 1) / *mc));
  int64_t pc0 = RLX_MAX(1, (P + want - 1) / want);
  if ((R + rt0 - 1) / rt0 * ((P + pc0 - 1) / pc0) >= 4 * threads) return; /* enough tasks to deal */
  int64_t best = makespan(R, P, rt0, pc0, threads), cur = best, brt = rt0, bpc = pc0;
  for (int64_t rt = RLX_MIN(rt0, MC_MAX / isa->mr); rt >= 1; rt--) {
    if ((R + rt - 1) / rt > 4 * threads) break; /* ever smaller blocks: enough */
    for (int64_t pc = 1; pc <= P; pc++) {
      int64_t m = makespan(R, P, rt, pc, threads);
      if (m < best) best = m, brt = rt, bpc = pc;
    }
  }
  if (10 * best <= 9 * cur) *mc = brt * isa->mr, *chunk = bpc;
}

/* Over a prepacked A (a channel-major conv's weights), the column chunk whose busiest thread has the least
 * work, where that is a tenth less than `chunk`'s; the row blocks stay (each task packs its own B panels,
 * so more row blocks would pack them more times). inception_v3's 12x12 convs at two threads: 144 pixels
 * are 9 panels, dealt as 3 tasks of 3, 6 panels for one thread; 5 and 4 now. */
static int64_t balance_cols(const rlx_sgemm_isa *isa, int64_t M, int64_t mc, int64_t panels, int threads,
                            int64_t chunk) {
  int64_t R = (M + isa->mr - 1) / isa->mr, rt = mc / isa->mr;
  int64_t cur = makespan(R, panels, rt, chunk, threads), best = cur, bpc = chunk;
  for (int64_t pc = 1; pc <= panels; pc++) {
    int64_t m = makespan(R, panels, rt, pc, threads);
    if (m < best) best = m, bpc = pc;
  }
  return 10 * best <= 9 * cur ? bpc : chunk;
}

static void run(const rlx_sgemm_isa *isa, rlx_threadpool *tp, const rlx_sgemm_args *a, void *scratch) {
  int64_t M = a->M, N = a->N, K = a->K;
  const float *prepacked = a->b_packed;
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (int64_t i = 0; i < M; i++) {
      memset(a->C + i * a->ldc, 0, sizeof(float) * (size_t)N);
      if (a->epilogue) a->epilogue(a->epilogue_ctx, a->C + i * a->ldc, a->ldc, i, 0, 1, (int)RLX_MIN(N, 1 << 30));
      if (a->post) rlx_sgemm_post_tile(a->post, a->C + i * a->ldc, a->ldc, i, 0, 1, (int)RLX_MIN(N, 1 << 30));
    }
    return;
  }
  char *base = (char *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
  gemm_job j = {.isa = isa, .M = M, .N = N, .K = K, .lda = a->lda, .ldb = a->ldb, .ldc = a->ldc, .A = a->A,
                .B = a->B, .trans_b = a->trans_b, .C = a->C, .pack_b = a->pack_b, .pack_ctx = a->pack_ctx,
                .epilogue = a->epilogue, .epilogue_ctx = a->epilogue_ctx, .post = a->post, .a_packed = a->a_packed,
                .pack_a = a->pack_a, .pack_a_ctx = a->pack_a_ctx, .b_packed = prepacked,
                .a_bufs = base + shared_bytes(), .b_bufs = base, .by_cols = a->by_cols};
  int threads = rlx_threadpool_size(tp);
  j.mc = mc_for(isa, M);
  int64_t fixed_chunk = 0; /* balance's column chunk, or 0 */
  if (threads > 1 && prepacked && !a->a_packed && N <= NC && M > RLX_SGEMM_SKINNY_M) {
    int64_t mc = j.mc, chunk = 0;
    balance(isa, M, N, threads, &mc, &chunk);
    if (chunk) j.mc = mc, fixed_chunk = chunk;
  }
  j.mtiles = (M + j.mc - 1) / j.mc;
  if (prepacked && !a->a_packed && !a->pack_a && M <= RLX_SGEMM_SKINNY_M) {
    int64_t total = (N + isa->nr - 1) / isa->nr, tasks = RLX_MIN(total, 4 * (int64_t)threads);
    j.chunk = (total + tasks - 1) / tasks;
    rlx_parallel_for(tp, (total + j.chunk - 1) / j.chunk, skinny_task, &j);
    return;
  }
  /* Per-task K loops (one region per column block) when B is prepacked, or
   * when A has one row block, or few and B few columns (a conv on a 7x7
   * image): each task then packs its own B panels into its worker's share
   * of the B block's scratch. Otherwise B is packed once per K block,
   * shared, two regions each. */
  int64_t max_chunk = NC / isa->nr / threads;
  /* per task, (mtiles - 1) * K * N more elements are packed (about half a
   * nanosecond each, over the threads); shared, each K block costs two
   * barriers (a few microseconds): per task when that trade wins */
  j.b_inplace = b_inplace_ok(isa, a); /* then no B is packed: per task */
  bool per_task = prepacked || j.b_inplace ||
                  (max_chunk >= 1 && (j.mtiles == 1 || (j.mtiles <= 4 && (j.mtiles - 1) * N <= 80 * threads)));
  /* Over prepacked B (linear layers), tasks that share rows of A would each
   * pack them (at 2 threads BERT's 128-row products ran 4 tasks, A packed 4
   * times), and so would every column block: pack the whole of A once, in
   * parallel, into the B block's scratch (unused over prepacked B) where it
   * fits. Not where A in place serves (few panels a task). */
  int64_t all_panels = (N + isa->nr - 1) / isa->nr;
  /* The same for A packed by a callback (a conv's im2col rows) where tasks would share row blocks: fewer row
   * blocks than two per thread split the columns (resnet's 7x7 convs, pixel-major, packed their 4608 x 49
   * im2col rows twice at one thread), as does more than one column block. */
  bool plain_a = !a->pack_a && a->A && M > RLX_SGEMM_SKINNY_M && (threads > 1 || N > NC) &&
                 all_panels > A_INPLACE_PANELS * (int64_t)threads;
  bool callback_a = a->pack_a && (j.mtiles < 2 * (int64_t)threads || N > NC) && all_panels > 1;
  /* where the whole A goes: the shared block, or past the A blocks where the caller's scratch has room */
  size_t whole = (size_t)round_up(M, isa->mr) * (size_t)K * sizeof(float);
  float *fill = whole <= shared_bytes()                                          ? (float *)base
                : a->scratch_bytes >= rlx_sgemm_scratch(threads) + whole ? (float *)(j.a_bufs + a_block_bytes() * (size_t)threads)
                                                                         : NULL;
  if (prepacked && !a->a_packed && (callback_a || plain_a) && !fixed_chunk && fill) { /* (mc_for's blocks) */
    j.a_fill = fill;
    int64_t tasks = j.mtiles * ((K + KC - 1) / KC);
    rlx_parallel_for(tasks > 1 ? tp : NULL, tasks, pack_a_task, &j);
    j.a_packed = j.a_fill;
  }
  j.b_buf_bytes = (size_t)RLX_MAX(max_chunk, 1) * KC * (size_t)isa->nr * sizeof(float);
  for (j.j0 = 0; j.j0 < N; j.j0 += NC) {
    j.nc = RLX_MIN(NC, N - j.j0);
    j.panels = (j.nc + isa->nr - 1) / isa->nr;
    /* split the panels so there are at least 2 tasks per thread when possible */
    int64_t want = RLX_MAX(1, (2 * threads + j.mtiles - 1) / j.mtiles);
    j.chunk = fixed_chunk ? fixed_chunk : RLX_MAX(1, (j.panels + want - 1) / want);
    if (a->a_packed && threads > 1) j.chunk = balance_cols(isa, M, j.mc, j.panels, threads, j.chunk);
    if (per_task && !prepacked) j.chunk = RLX_MIN(j.chunk, max_chunk);
    int64_t ctiles = (j.panels + j.chunk - 1) / j.chunk;
    j.ctiles = ctiles;
    j.a_inplace = !j.a_packed && !j.b_inplace && a_inplace_ok(isa, a, j.chunk);
    if (per_task) {
      rlx_parallel_for(tp, j.mtiles * ctiles, full_k_task, &j);
      continue;
    }
    for (j.p0 = 0; j.p0 < K; j.p0 += KC) {
      j.kc = RLX_MIN(KC, K - j.p0);
      if (prepacked) {
        j.bp = prepacked + packed_offset(isa, N, K, j.j0, j.p0);
      } else {
        j.bp = j.bp_fill = (float *)base;
        /* at least two pack tasks per thread: split panels into row chunks (32 rows or more) */
        j.pack_chunks = RLX_MAX(1, RLX_MIN((2 * threads + j.panels - 1) / j.panels, j.kc / 32));
        int64_t tasks = j.panels * j.pack_chunks;
        bool par = threads > 1 && tasks >= 2 && j.panels * j.kc * isa->nr >= 8192;
        rlx_parallel_for(par ? tp : NULL, tasks, pack_b_task, &j);
      }
      rlx_parallel_for(tp, j.mtiles * ctiles, compute_task, &j);
    }
  }
}

void rlx_sgemm_with(const rlx_sgemm_isa *isa, rlx_threadpool *tp, int64_t M, int64_t N, int64_t K,
                    const float *A, int64_t lda, const float *B, int64_t ldb, bool trans_b, float *C,
                    int64_t ldc, void *scratch) {
  rlx_sgemm_args a = {.M = M, .N = N, .K = K, .A = A, .lda = lda, .B = B, .ldb = ldb, .trans_b = trans_b,
                      .C = C, .ldc = ldc};
  run(isa, tp, &a, scratch);
}

void rlx_sgemm(rlx_threadpool *tp, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
               const float *B, int64_t ldb, bool trans_b, float *C, int64_t ldc, void *scratch) {
  rlx_sgemm_with(rlx_sgemm_active(), tp, M, N, K, A, lda, B, ldb, trans_b, C, ldc, scratch);
}

void rlx_sgemm_ex(rlx_threadpool *tp, const rlx_sgemm_args *a, void *scratch) {
  run(a->isa ? a->isa : rlx_sgemm_active(), tp, a, scratch);
}

#define BATCH_MAX 64

typedef struct batch_job {
  gemm_job jobs[BATCH_MAX];
  int64_t per; /* tasks per product */
  int count;   /* products */
} batch_job;

/* t = (row block * count + product) * ctiles + column chunk (by_cols: (column chunk * count + product) * mtiles +
 * row block): each thread's share is the same rows (columns) of every product, as one product's is. */
static void batch_task(void *ctx, int64_t t, int worker) {
  const batch_job *b = ctx;
  const gemm_job *j = &b->jobs[0];
  int64_t inner = j->by_cols ? j->mtiles : j->ctiles, q = t / inner, prod = q % b->count, outer = q / b->count;
  full_k_task((void *)&b->jobs[prod], outer * inner + t % inner, worker);
}

void rlx_sgemm_ex_batch(rlx_threadpool *tp, const rlx_sgemm_args *a, int count, void *scratch) {
  const rlx_sgemm_isa *isa = a->isa ? a->isa : rlx_sgemm_active();
  int threads = rlx_threadpool_size(tp);
  int64_t M = a->M, N = a->N, K = a->K, mc = M > 0 ? mc_for(isa, M) : 1, mtiles = (M + mc - 1) / mc;
  int64_t max_chunk = NC / isa->nr / threads;
  bool same = count >= 1 && count <= BATCH_MAX && M > 0 && N > 0 && K > 0 && N <= NC && max_chunk >= 1;
  for (int i = 1; same && i < count; i++)
    same = a[i].M == M && a[i].N == N && a[i].K == K && (a[i].isa ? a[i].isa : rlx_sgemm_active()) == isa &&
           (a[i].b_packed != NULL) == (a->b_packed != NULL) && a[i].by_cols == a->by_cols;
  if (!same || !(a->b_packed || mtiles <= 4)) { /* not one region's worth: one by one */
    for (int i = 0; i < count; i++) rlx_sgemm_ex(tp, &a[i], scratch);
    return;
  }
  static _Thread_local batch_job b; /* big: not on the stack */
  char *base = (char *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
  int64_t panels = (N + isa->nr - 1) / isa->nr;
  /* tasks: every product's, so few per product are fine */
  int64_t want = RLX_MAX(1, (2 * threads + mtiles * count - 1) / (mtiles * count));
  int64_t chunk = RLX_MAX(1, (panels + want - 1) / want);
  if (!a->b_packed) chunk = RLX_MIN(chunk, max_chunk);
  int64_t ctiles = (panels + chunk - 1) / chunk;
  for (int i = 0; i < count; i++) {
    const rlx_sgemm_args *x = &a[i];
    b.jobs[i] = (gemm_job){.isa = isa, .M = M, .N = N, .K = K, .lda = x->lda, .ldb = x->ldb, .ldc = x->ldc, .A = x->A,
                           .B = x->B, .trans_b = x->trans_b, .C = x->C, .pack_b = x->pack_b, .pack_ctx = x->pack_ctx,
                           .epilogue = x->epilogue, .epilogue_ctx = x->epilogue_ctx, .post = x->post,
                           .a_packed = x->a_packed,
                           .pack_a = x->pack_a, .pack_a_ctx = x->pack_a_ctx, .b_packed = x->b_packed,
                           .a_bufs = base + shared_bytes(), .b_bufs = base, .mc = mc, .mtiles = mtiles, .j0 = 0, .nc = N,
                           .panels = panels, .chunk = chunk, .ctiles = ctiles, .by_cols = a->by_cols,
                           .b_buf_bytes = (size_t)max_chunk * KC * (size_t)isa->nr * sizeof(float)};
  }
  b.per = mtiles * ctiles, b.count = count;
  rlx_parallel_for(tp, b.per * count, batch_task, &b);
}

size_t rlx_sgemm_packed_size(int64_t N, int64_t K) { return rlx_sgemm_packed_size_for(rlx_sgemm_active(), N, K); }

size_t rlx_sgemm_packed_size_for(const rlx_sgemm_isa *isa, int64_t N, int64_t K) {
  return (size_t)(round_up(N, isa->nr) * K) * sizeof(float);
}

void rlx_sgemm_pack_b(int64_t N, int64_t K, const float *B, int64_t ldb, bool trans_b, float *packed) {
  rlx_sgemm_pack_b_for(rlx_sgemm_active(), N, K, B, ldb, trans_b, packed);
}

void rlx_sgemm_pack_b_for(const rlx_sgemm_isa *isa, int64_t N, int64_t K, const float *B, int64_t ldb, bool trans_b,
                          float *packed) {
  for (int64_t j0 = 0; j0 < N; j0 += NC)
    for (int64_t p0 = 0; p0 < K; p0 += KC) {
      int64_t nc = RLX_MIN(NC, N - j0), kc = RLX_MIN(KC, K - p0);
      float *dst = packed + packed_offset(isa, N, K, j0, p0);
      for (int64_t j = 0; j < nc; j += isa->nr) {
        const float *src = trans_b ? B + (j0 + j) * ldb + p0 : B + p0 * ldb + j0 + j;
        pack_b_panel(isa->nr, src, ldb, trans_b, kc, RLX_MIN(isa->nr, nc - j), dst + (j / isa->nr) * kc * isa->nr);
      }
    }
}

size_t rlx_sgemm_packed_a_size(int64_t M, int64_t K) {
  const rlx_sgemm_isa *isa = rlx_sgemm_active();
  return (size_t)(round_up(M, isa->mr) * K) * sizeof(float);
}

void rlx_sgemm_pack_a(int64_t M, int64_t K, const float *A, int64_t lda, float *packed) {
  const rlx_sgemm_isa *isa = rlx_sgemm_active();
  int64_t mc = mc_for(isa, M);
  for (int64_t i0 = 0; i0 < M; i0 += mc)
    for (int64_t p0 = 0; p0 < K; p0 += KC)
      pack_a(isa->mr, A + i0 * lda + p0, lda, RLX_MIN(mc, M - i0), RLX_MIN(KC, K - p0),
             packed + packed_a_offset(isa, M, K, i0, p0));
}

void rlx_sgemm_packed(rlx_threadpool *tp, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                      const float *a_packed, const float *B, int64_t ldb, bool trans_b, const float *b_packed,
                      float *C, int64_t ldc, void *scratch) {
  rlx_sgemm_args a = {.M = M, .N = N, .K = K, .A = A, .lda = lda, .a_packed = a_packed, .B = B, .ldb = ldb,
                      .trans_b = trans_b, .b_packed = b_packed, .C = C, .ldc = ldc};
  run(rlx_sgemm_active(), tp, &a, scratch);
}

void rlx_f32_transpose(const float *src, int64_t lds, int64_t rows, int64_t cols, float *dst, int64_t ldd, bool add) {
  if (rlx_sgemm_isa_avx512(rlx_sgemm_active())) {
    rlx_f32_transpose__avx512(src, lds, rows, cols, dst, ldd, add);
    return;
  }
  for (int64_t j = 0; j < cols; j++)
    for (int64_t r = 0; r < rows; r++) dst[j * ldd + r] = (add ? dst[j * ldd + r] : 0.0f) + src[r * lds + j];
}
