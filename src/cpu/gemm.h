/*
 * gemm.h — the fast f32 matrix multiply every heavy CPU kernel uses.
 *
 *   C[M, N] (row stride ldc) = A[M, K] (lda) @ B[K, N] (ldb)
 *   with trans_b, B is stored [N, K] (a linear layer's weight)
 *
 * Goto-style: C is cut into MC x NC tiles run in parallel on the pool; each
 * tile walks K in KC steps, packs its A rows into MR-row panels and its B
 * columns into NR-column panels (zero-padded), and calls the microkernel on
 * every MR x NR block. The microkernel is picked once from the CPU's
 * features (AVX-512, AVX2+FMA, scalar; RLX_ISA=scalar|avx2|avx512 forces
 * one for testing). Scratch: rlx_sgemm_scratch() bytes, given by the caller.
 */
#ifndef RLX_GEMM_H
#define RLX_GEMM_H

#include "runtime/threadpool.h"

/* A microkernel: c[0..m, 0..n] (+)= a_packed[MR x K] @ b_packed[K x NR].
 * a[k * MR + i], b[k * NR + j]; m <= MR, n <= NR; accumulate adds to c. */
typedef void (*rlx_sgemm_ukernel)(int64_t K, const float *a, const float *b, float *c, int64_t ldc,
                                  int m, int n, bool accumulate);

/* A skinny kernel, for products with few rows (a linear layer on one token):
 * c[0..m, 0..n] (+)= a[m x K] (row stride lda, unpacked) @ b_packed[K x NR],
 * m <= RLX_SGEMM_SKINNY_M. Streams B once for all m rows; packing A and
 * padding it to MR rows would waste most of the microkernel. */
#define RLX_SGEMM_SKINNY_M 4
typedef void (*rlx_sgemm_skinny)(int64_t K, const float *a, int64_t lda, const float *b, float *c, int64_t ldc,
                                 int m, int n, bool accumulate);

typedef struct rlx_sgemm_isa {
  const char *name;
  int mr, nr;
  rlx_sgemm_ukernel ukernel;
  rlx_sgemm_skinny skinny;
} rlx_sgemm_isa;

/* X(name, MR, NR) — one line per microkernel, best first; a second line
 * for an ISA is a narrower panel (rlx_sgemm_isa_for). */
#define RLX_SGEMM_ISA_LIST(X) \
  X(avx512, 12, 32)           \
  X(avx512, 12, 16)           \
  X(avx2, 6, 16)              \
  X(scalar, 4, 8)

#define RLX_X_(name, mr, nr)                                                                        \
  void rlx_f32_gemm_ukernel__##name##_##mr##x##nr(int64_t K, const float *a, const float *b,        \
                                                  float *c, int64_t ldc, int m, int n, bool accumulate); \
  void rlx_f32_gemm_skinny__##name##_##nr(int64_t K, const float *a, int64_t lda, const float *b, float *c, \
                                          int64_t ldc, int m, int n, bool accumulate);
RLX_SGEMM_ISA_LIST(RLX_X_)
#undef RLX_X_

/* The 12x32 and 12x16 AVX-512 blocks with A unpacked (rows of stride lda;
 * m <= 12): the driver's choice where a packed A block would serve few B
 * panels. */
void rlx_f32_gemm_ukernel_a__avx512_12x32(int64_t K, const float *a, int64_t lda, const float *b, float *c,
                                          int64_t ldc, int m, int n, bool accumulate);
void rlx_f32_gemm_ukernel_a__avx512_12x16(int64_t K, const float *a, int64_t lda, const float *b, float *c,
                                          int64_t ldc, int m, int n, bool accumulate);

/* The microkernel in use (chosen on first call). */
const rlx_sgemm_isa *rlx_sgemm_active(void);
/* Whether isa is one of the AVX-512 microkernels (so the CPU has AVX-512F): 12 rows, panels of at most 32
 * columns, the blocks the AVX-512 packers and transposes (gemm_avx512.c) are written for. */
bool rlx_sgemm_isa_avx512(const rlx_sgemm_isa *isa);
/* The microkernel named `name` if this CPU can run it, else NULL (tests). */
const rlx_sgemm_isa *rlx_sgemm_isa_named(const char *name);
/* Entry i of the list (NULL past its end), whether or not the CPU runs it (tests). */
const rlx_sgemm_isa *rlx_sgemm_isa_at(int i);
/* Whether this CPU can run the microkernel (tests). */
bool rlx_sgemm_isa_runs(const rlx_sgemm_isa *isa);
/* The active ISA's microkernel for N columns: the fewest panels, each weighed
 * as its width plus a fixed part (gemm.c panel_cost; ties: the widest). */
const rlx_sgemm_isa *rlx_sgemm_isa_for(int64_t N);

size_t rlx_sgemm_scratch(int threads);
/* The scratch of one product of M rows by K at `threads`: rlx_sgemm_scratch(threads), and room to pack
 * the whole of A once over prepacked B where it passes the shared block (up to 4 MiB). Handed to the
 * sgemm with its size in rlx_sgemm_args.scratch_bytes. */
size_t rlx_sgemm_scratch_for(int threads, int64_t M, int64_t K);
void rlx_sgemm(rlx_threadpool *tp, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
               const float *B, int64_t ldb, bool trans_b, float *C, int64_t ldc, void *scratch);
/* Pluggable pieces of a multiplication (rlx_sgemm_ex):
 *  - a B packer writes the panel of columns [j0, j0 + cols) and rows
 *    [k0, k0 + kc) of B as dst[k][c] (c < nr, zero-padded to nr): conv packs
 *    straight from the image (implicit im2col) instead of a column buffer;
 *  - an epilogue runs on each finished block of C (up to MR rows by a
 *    task's columns, one call each) while it is in cache: bias, residual,
 *    activation. */
typedef void (*rlx_sgemm_pack_fn)(const void *ctx, int64_t k0, int64_t kc, int64_t j0, int64_t cols, int nr,
                                  float *dst);
/* An A packer writes rows [i0, i0 + rows) (rows <= mr) and columns [k0, k0 +
 * kc) of A as one MR-row panel dst[k][r] (r < mr, zero-padded to mr): a
 * channels-last conv packs its image rows (implicit im2col). */
typedef void (*rlx_sgemm_pack_a_fn)(const void *ctx, int64_t i0, int rows, int64_t k0, int64_t kc, int mr,
                                    float *dst);
typedef void (*rlx_sgemm_epilogue_fn)(const void *ctx, float *c, int64_t ldc, int64_t i0, int64_t j0, int m, int n);

/* An epilogue simple enough for the microkernel to apply in registers as it
 * stores C's last K block (rlx_sgemm_args.post), so it costs no pass over
 * C: c[i][j] = act((c[i][j] + bias) + res[i * ldr + j]), bias being
 * col_bias[j] (a linear layer's, a channels-last conv's) or row_bias[i] (a
 * channel-major conv's), each term optional. The float operations, in
 * their order, of the callback epilogues it replaces (conv_nhwc.c,
 * matmul.c, conv_gemm.c: bias, then residual, then the activation as
 * eltwise.c computes it), so the two give the same bits. The AVX-512
 * kernels apply it in registers; the other ISAs and the skinny path on
 * each finished tile (rlx_sgemm_post_tile). docs/design.md, "Epilogues". */
typedef enum rlx_sgemm_act {
  RLX_SGEMM_ACT_NONE,
  RLX_SGEMM_ACT_RELU,      /* x > 0 or NaN ? x : 0 */
  RLX_SGEMM_ACT_HARDTANH,  /* x < lo ? lo : x > hi ? hi : x */
  RLX_SGEMM_ACT_CLAMP,     /* v = x < lo ? lo : x; v > hi ? hi : v */
  RLX_SGEMM_ACT_HARDSWISH, /* x * min(max(x + 3, 0), 6) * (1 / 6), as compares */
} rlx_sgemm_act;

typedef struct rlx_sgemm_post {
  const float *col_bias; /* [N], or NULL */
  const float *row_bias; /* [M], or NULL (not with col_bias) */
  const float *res;      /* [M, N] with row stride ldr, or NULL; never C itself */
  int64_t ldr;
  rlx_sgemm_act act;
  float lo, hi;
} rlx_sgemm_post;

/* The post on the finished block c[0..m, 0..n] at row i0, column j0 of C. */
void rlx_sgemm_post_tile(const rlx_sgemm_post *p, float *c, int64_t ldc, int64_t i0, int64_t j0, int m, int n);
/* The 12x32 / 12x16 AVX-512 microkernels (packed A; A in place), storing with the post applied; i0, j0: the
 * block's place in C. */
void rlx_f32_gemm_ukernel_post__avx512_12x32(int64_t K, const float *a, const float *b, float *c, int64_t ldc, int m,
                                             int n, bool accumulate, const rlx_sgemm_post *post, int64_t i0,
                                             int64_t j0);
void rlx_f32_gemm_ukernel_post__avx512_12x16(int64_t K, const float *a, const float *b, float *c, int64_t ldc, int m,
                                             int n, bool accumulate, const rlx_sgemm_post *post, int64_t i0,
                                             int64_t j0);
void rlx_f32_gemm_ukernel_a_post__avx512_12x32(int64_t K, const float *a, int64_t lda, const float *b, float *c,
                                               int64_t ldc, int m, int n, bool accumulate,
                                               const rlx_sgemm_post *post, int64_t i0, int64_t j0);
void rlx_f32_gemm_ukernel_a_post__avx512_12x16(int64_t K, const float *a, int64_t lda, const float *b, float *c,
                                               int64_t ldc, int m, int n, bool accumulate,
                                               const rlx_sgemm_post *post, int64_t i0, int64_t j0);
/* The 12x32 and 12x16 AVX-512 blocks (A packed) with B read in place: rows of stride ldb, the columns past
 * n not read (masked loads); post NULL, or applied as the _post kernels apply it. The driver's choice where
 * a packed B panel would serve few row blocks (gemm.c, b_inplace_ok). */
void rlx_f32_gemm_ukernel_b__avx512_12x32(int64_t K, const float *a, const float *b, int64_t ldb, float *c,
                                          int64_t ldc, int m, int n, bool accumulate, const rlx_sgemm_post *post,
                                          int64_t i0, int64_t j0);
void rlx_f32_gemm_ukernel_b__avx512_12x16(int64_t K, const float *a, const float *b, int64_t ldb, float *c,
                                          int64_t ldc, int m, int n, bool accumulate, const rlx_sgemm_post *post,
                                          int64_t i0, int64_t j0);

typedef struct rlx_sgemm_args {
  const rlx_sgemm_isa *isa; /* the microkernel (NULL: rlx_sgemm_active()); B packed for it */
  int64_t M, N, K;
  const float *A;        /* [M, K] row stride lda, or NULL with a_packed */
  int64_t lda;
  const float *a_packed; /* from rlx_sgemm_pack_a, or NULL */
  rlx_sgemm_pack_a_fn pack_a; /* or A packed by this, panel by panel */
  const void *pack_a_ctx;
  const float *B;        /* [K, N] (trans_b: [N, K]) row stride ldb; or b_packed; or pack_b */
  int64_t ldb;
  bool trans_b;
  const float *b_packed; /* from rlx_sgemm_pack_b, or NULL */
  rlx_sgemm_pack_fn pack_b;
  const void *pack_ctx;
  float *C;
  int64_t ldc;
  rlx_sgemm_epilogue_fn epilogue;
  const void *epilogue_ctx;
  const rlx_sgemm_post *post; /* or the epilogue applied in registers (not both) */
  /* Which of C's dimensions the threads split first: its rows (the default:
   * pixels of a channels-last or pixel-major conv, tokens of a linear), or,
   * with by_cols, its columns (the pixels of a channel-major conv). Each
   * thread then writes the same part of the activation that it writes in
   * the nodes before and after, and reads it from its own cache
   * (threadpool.h). */
  bool by_cols;
  /* The scratch's size where the caller took rlx_sgemm_scratch_for (0: rlx_sgemm_scratch's). */
  size_t scratch_bytes;
} rlx_sgemm_args;

void rlx_sgemm_ex(rlx_threadpool *tp, const rlx_sgemm_args *a, void *scratch);
/* `count` products of one shape (M, N, K, microkernel; B prepacked in all
 * or none) as one parallel region where they fit one (N within a column
 * block, B prepacked or A at most 4 row blocks; count <= 64), else one by
 * one: Winograd's 16 products of a conv. The same scratch as one product. */
void rlx_sgemm_ex_batch(rlx_threadpool *tp, const rlx_sgemm_args *a, int count, void *scratch);

/* Constant operands (weights) packed once, at compile time, for the active
 * microkernel, then multiplied without packing: B into rlx_sgemm_packed_size
 * bytes, A into rlx_sgemm_packed_a_size bytes. rlx_sgemm_packed takes either
 * packed operand (NULL: pack on the fly from the plain one). */
size_t rlx_sgemm_packed_size(int64_t N, int64_t K);
void rlx_sgemm_pack_b(int64_t N, int64_t K, const float *B, int64_t ldb, bool trans_b, float *packed);
/* The same for a given microkernel (rlx_sgemm_args.isa). */
size_t rlx_sgemm_packed_size_for(const rlx_sgemm_isa *isa, int64_t N, int64_t K);
void rlx_sgemm_pack_b_for(const rlx_sgemm_isa *isa, int64_t N, int64_t K, const float *B, int64_t ldb, bool trans_b,
                          float *packed);
size_t rlx_sgemm_packed_a_size(int64_t M, int64_t K);
void rlx_sgemm_pack_a(int64_t M, int64_t K, const float *A, int64_t lda, float *packed);
void rlx_sgemm_packed(rlx_threadpool *tp, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                      const float *a_packed, const float *B, int64_t ldb, bool trans_b, const float *b_packed,
                      float *C, int64_t ldc, void *scratch);

/* The same with an explicit microkernel (tests and benchmarks). */
void rlx_sgemm_with(const rlx_sgemm_isa *isa, rlx_threadpool *tp, int64_t M, int64_t N, int64_t K,
                    const float *A, int64_t lda, const float *B, int64_t ldb, bool trans_b, float *C,
                    int64_t ldc, void *scratch);

/* dst[j * ldd + r] (+)= src[r * lds + j] for r < rows, j < cols (add: accumulate): a
 * [rows, cols] block written transposed; AVX-512 register tiles where the CPU
 * has them. */
void rlx_f32_transpose(const float *src, int64_t lds, int64_t rows, int64_t cols, float *dst, int64_t ldd, bool add);
void rlx_f32_transpose__avx512(const float *src, int64_t lds, int64_t rows, int64_t cols, float *dst, int64_t ldd,
                               bool add);

/* dst[k * mr + r] = chan_k[tap_off[t_k] + poff[r]] (r < rows, zero to mr <= 16): an A panel gathered from tap
 * planes, the tap advancing from t and wrapping at taps onto the next channel (chan_floats on). AVX-512 only. */
void rlx_f32_pack_taps__avx512(const float *chan, int64_t chan_floats, const int64_t *tap_off, int64_t taps, int64_t t,
                               int64_t kc, const int32_t *poff, int rows, int mr, float *dst);

/* dst[k * nr + j] = x[k * ldx + j] (j < cols; zero up to nr <= 32): a B panel of a row-major B. AVX-512 only. */
void rlx_f32_pack_rows__avx512(const float *x, int64_t ldx, int64_t kc, int cols, int nr, float *dst);
/* dst[k * nr + j] = act((x[k * ldx + j] - m[k]) * s[k] + b[k]) (j < cols; zero up to nr <= 32; act: relu or
 * none): a 1x1 conv's B (or A) panel with its batch norm folded in (conv_gemm.c). AVX-512 only. */
void rlx_f32_pack_bn__avx512(const float *x, int64_t ldx, int64_t kc, int cols, int nr, const float *m, const float *s,
                             const float *b, bool relu, float *dst);

/* The same for a B panel of up to 32 columns (the channel-major conv's im2col panel; poff per column, nr <= 32).
 * AVX-512 only. */
void rlx_f32_pack_taps_b__avx512(const float *chan, int64_t chan_floats, const int64_t *tap_off, int64_t taps,
                                 int64_t t, int64_t kc, const int32_t *poff, int cols, int nr, float *dst);

#endif
