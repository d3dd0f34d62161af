/*
 * gemm_avx512.c — the 12x32 sgemm microkernel for AVX-512F: 24 zmm
 * accumulators, two B vectors and a broadcast per row per k. Built with
 * -mavx512f -mfma (this file only); called only when the CPU has AVX-512F.
 */
#include <immintrin.h>

#include "cpu/act_avx512.h"
#include "cpu/gemm.h"

/* How far ahead (floats) of the k loop the packed A panel is prefetched. A
 * panel packed per task sits in L2 and needs none, but a prepacked one (the
 * weights of a channel-major conv, Winograd's transformed weights: 12 rows
 * streamed once per product) comes from memory, and the hardware prefetcher
 * does not keep up with it. Without this, resnet18's Winograd 7x7 layers ran
 * at a third of their rate on a Xeon (docs/perf.md); 96 k steps (4.5 KiB)
 * ahead covers a memory access at the 12x32 kernel's 12 cycles a step, and
 * 48 to 192 measured the same. */
#define A_AHEAD (12 * 96)

/* The post (gemm.h) on one vector of row i of the block: bias, residual,
 * activation, each the float operation rlx_sgemm_post_tile does, so the
 * two agree to the bit. cb: the column bias' vector; res: the residual's
 * row at this vector, read under mask k. */
static inline __attribute__((always_inline)) __m512 post_vec(const rlx_sgemm_post *p, const rlx_sgemm_act act,
                                                             __m512 v, __m512 cb, int64_t row, const float *res,
                                                             __mmask16 k) {
  if (p->col_bias) v = _mm512_add_ps(v, cb);
  else if (p->row_bias) v = _mm512_add_ps(v, _mm512_set1_ps(p->row_bias[row]));
  if (res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, res));
  return rlx_post_act16(act, p->lo, p->hi, v);
}

/* Row i's residual at column j0 + off, or NULL. */
#define RES_AT(i, off) (post->res ? post->res + (i0 + (i)) * post->ldr + j0 + (off) : NULL)

#define ROW(i) __m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = _mm512_setzero_ps();
#define FMA(i)                                            \
  x = _mm512_set1_ps(a[i]);                               \
  c##i##0 = _mm512_fmadd_ps(x, b0, c##i##0);              \
  c##i##1 = _mm512_fmadd_ps(x, b1, c##i##1);
/* The stores of row i (in kernels with post, i0, j0 and the column bias
 * vectors cb0, cb1 in scope; post NULL compiles to the plain store). */
#define STORE_FULL(i)                                                                        \
  do {                                                                                       \
    float *p = c + (i)*ldc;                                                                  \
    __m512 v0 = accumulate ? _mm512_add_ps(_mm512_loadu_ps(p), c##i##0) : c##i##0;           \
    __m512 v1 = accumulate ? _mm512_add_ps(_mm512_loadu_ps(p + 16), c##i##1) : c##i##1;      \
    if (post) {                                                                              \
      v0 = post_vec(post, act, v0, cb0, i0 + (i), RES_AT(i, 0), 0xffff);                     \
      v1 = post_vec(post, act, v1, cb1, i0 + (i), RES_AT(i, 16), 0xffff);                    \
    }                                                                                        \
    _mm512_storeu_ps(p, v0);                                                                 \
    _mm512_storeu_ps(p + 16, v1);                                                            \
  } while (0)
#define STORE_PART(i)                                                                               \
  if ((i) < m) {                                                                                    \
    float *p = c + (i)*ldc;                                                                         \
    __m512 v0 = c##i##0, v1 = c##i##1;                                                              \
    if (accumulate) {                                                                               \
      v0 = _mm512_add_ps(_mm512_maskz_loadu_ps(k0, p), v0);                                         \
      v1 = _mm512_add_ps(_mm512_maskz_loadu_ps(k1, p + 16), v1);                                    \
    }                                                                                               \
    if (post) {                                                                                     \
      v0 = post_vec(post, act, v0, cb0, i0 + (i), RES_AT(i, 0), k0);                                \
      v1 = post_vec(post, act, v1, cb1, i0 + (i), RES_AT(i, 16), k1);                               \
    }                                                                                               \
    _mm512_mask_storeu_ps(p, k0, v0);                                                               \
    _mm512_mask_storeu_ps(p + 16, k1, v1);                                                          \
  }
/* The column bias of a 32-wide block under its masks (zero without post). */
#define COL_BIAS2()                                                                          \
  __m512 cb0 = _mm512_setzero_ps(), cb1 = _mm512_setzero_ps();                               \
  if (post && post->col_bias) {                                                              \
    cb0 = _mm512_maskz_loadu_ps(k0, post->col_bias + j0);                                    \
    cb1 = _mm512_maskz_loadu_ps(k1, post->col_bias + j0 + 16);                               \
  }
#define MASKS2()                                                                                                  \
  __mmask16 k0 = (__mmask16)(n >= 16 ? 0xffff : (1u << n) - 1), k1 = (__mmask16)(n > 16 ? (1u << (n - 16)) - 1 : 0)

/* A post kernel's body once per activation. The inline bodies take the
 * activation as a constant, ACT (each public post kernel switches on it
 * once), and the post as pc, a local copy of *post: the compiler then keeps
 * its fields in registers across the stores to C, which it could not prove
 * leave a post read through a pointer alone, and applies the activation
 * without a switch per vector. Re-reading the post and switching per vector
 * cost 40% of a 12544x64x16 product (mobilenet_v3's 112x112 expansion with
 * ReLU: 0.51-0.53 ms with C in cache, 0.23-0.31 without the post; 0.36-0.38
 * now). */
#define POST_DISPATCH(CALL)                                                                         \
  do {                                                                                              \
    const rlx_sgemm_post pc = *post;                                                                \
    switch (pc.act) {                                                                               \
      case RLX_SGEMM_ACT_RELU: { const rlx_sgemm_act ACT = RLX_SGEMM_ACT_RELU; CALL; break; }           \
      case RLX_SGEMM_ACT_HARDTANH: { const rlx_sgemm_act ACT = RLX_SGEMM_ACT_HARDTANH; CALL; break; }   \
      case RLX_SGEMM_ACT_CLAMP: { const rlx_sgemm_act ACT = RLX_SGEMM_ACT_CLAMP; CALL; break; }         \
      case RLX_SGEMM_ACT_HARDSWISH: { const rlx_sgemm_act ACT = RLX_SGEMM_ACT_HARDSWISH; CALL; break; } \
      default: { const rlx_sgemm_act ACT = RLX_SGEMM_ACT_NONE; CALL; break; }                           \
    }                                                                                               \
  } while (0)

/* C's rows under the block, and with a post's residual its rows too, fetched into L2 as the k loop starts:
 * both are read only at the end (a cold C tile cost about 8%; a 1x1 conv with 64 input channels and a
 * residual, resnet's 64 -> 256 at 56x56, has 64 k steps to hide the residual's misses behind). W: 32 or 16
 * columns. */
static inline __attribute__((always_inline)) void fetch_block(const float *c, int64_t ldc, int m, const int W,
                                                              const rlx_sgemm_post *post, int64_t i0, int64_t j0) {
  for (int i = 0; i < m; i++) {
    _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T1);
    if (W == 32) _mm_prefetch((const char *)(c + i * ldc + 16), _MM_HINT_T1);
  }
  if (!post || !post->res) return;
  for (int i = 0; i < m; i++) {
    const float *r = post->res + (i0 + i) * post->ldr + j0;
    _mm_prefetch((const char *)r, _MM_HINT_T1);
    if (W == 32) _mm_prefetch((const char *)(r + 16), _MM_HINT_T1);
  }
}

/* The stores of the first m of R rows of a W-wide block (W = 32: acc[i][0..1]; 16: acc[i][0]), under the column
 * masks of n, with the post where there is one (ukernel_rows, k_a_rows). */
static inline __attribute__((always_inline)) void store_rows(const int R, const int W, __m512 acc[][2], float *c,
                                                             int64_t ldc, int m, int n, bool accumulate,
                                                             const rlx_sgemm_post *post, int64_t i0, int64_t j0,
                                                             const rlx_sgemm_act act) {
  MASKS2();
  COL_BIAS2()
#pragma GCC unroll 8
  for (int i = 0; i < R; i++) {
    if (i >= m) break;
    float *p = c + i * ldc;
    __m512 v0 = acc[i][0], v1 = W == 32 ? acc[i][1] : v0;
    if (accumulate) {
      v0 = _mm512_add_ps(_mm512_maskz_loadu_ps(k0, p), v0);
      if (W == 32) v1 = _mm512_add_ps(_mm512_maskz_loadu_ps(k1, p + 16), v1);
    }
    if (post) {
      v0 = post_vec(post, act, v0, cb0, i0 + i, RES_AT(i, 0), k0);
      if (W == 32) v1 = post_vec(post, act, v1, cb1, i0 + i, RES_AT(i, 16), k1);
    }
    _mm512_mask_storeu_ps(p, k0, v0);
    if (W == 32) _mm512_mask_storeu_ps(p + 16, k1, v1);
  }
}

/* B's two vectors at row b (W = 16: the first only). A B read in place (a row of the caller's matrix, not a
 * zero-padded panel) is loaded under the columns' masks: past the last column lies the next row or the
 * buffer's end. */
#define LOAD_B(b0, b1, b, W, inplace, l0, l1)                                                     \
  __m512 b0 = (inplace) ? _mm512_maskz_loadu_ps(l0, b) : _mm512_loadu_ps(b);                     \
  __m512 b1 = (W) == 32 ? ((inplace) ? _mm512_maskz_loadu_ps(l1, (b) + 16) : _mm512_loadu_ps((b) + 16)) : b0

/* The last row block of a product whose M is not a multiple of 12 (a conv
 * with 64 output channels ends in a block of 4, a 7x7 image's 49 pixels in
 * one of 1): R rows of the 12-row panel only (R = 1, 2, 4 or 8), so a block
 * of 4 costs a third of a full one, not all of it. W: the panel's width (32
 * or 16); b advances by bs a k step (W for a packed panel; inplace: B's row
 * stride, B read in place). */
static inline __attribute__((always_inline)) void ukernel_rows(const int R, const int W, int64_t K, const float *a,
                                                               const float *b, const int64_t bs, const bool inplace,
                                                               float *c, int64_t ldc, int m, int n, bool accumulate,
                                                               const rlx_sgemm_post *post, int64_t i0, int64_t j0,
                                                               const rlx_sgemm_act act) {
  __m512 acc[8][2];
  fetch_block(c, ldc, m, W, post, i0, j0);
  MASKS2();
#pragma GCC unroll 8
  for (int i = 0; i < R; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
#pragma GCC unroll 2
  for (int64_t k = 0; k < K; k++, a += 12, b += bs) {
    _mm_prefetch((const char *)(b + 16 * bs), _MM_HINT_T0);
    if (W == 32) _mm_prefetch((const char *)(b + 16 * bs + 16), _MM_HINT_T0);
    _mm_prefetch((const char *)(a + A_AHEAD), _MM_HINT_T0);
    LOAD_B(b0, b1, b, W, inplace, k0, k1);
#pragma GCC unroll 8
    for (int i = 0; i < R; i++) {
      __m512 x = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(x, b0, acc[i][0]);
      if (W == 32) acc[i][1] = _mm512_fmadd_ps(x, b1, acc[i][1]);
    }
  }
  store_rows(R, W, acc, c, ldc, m, n, accumulate, post, i0, j0, act);
}

/* A block of m <= 8 rows on ukernel_rows (true), or false: the full kernel's. */
static inline __attribute__((always_inline)) bool rows_tail(const int W, int64_t K, const float *a, const float *b,
                                                            const int64_t bs, const bool inplace, float *c,
                                                            int64_t ldc, int m, int n, bool accumulate,
                                                            const rlx_sgemm_post *post, int64_t i0, int64_t j0,
                                                            const rlx_sgemm_act act) {
  if (m > 8) return false;
  if (m == 1) ukernel_rows(1, W, K, a, b, bs, inplace, c, ldc, m, n, accumulate, post, i0, j0, act);
  else if (m == 2) ukernel_rows(2, W, K, a, b, bs, inplace, c, ldc, m, n, accumulate, post, i0, j0, act);
  else if (m <= 4) ukernel_rows(4, W, K, a, b, bs, inplace, c, ldc, m, n, accumulate, post, i0, j0, act);
  else ukernel_rows(8, W, K, a, b, bs, inplace, c, ldc, m, n, accumulate, post, i0, j0, act);
  return true;
}

/* bs, inplace: as ukernel_rows' (a packed panel: 32, false) */
static inline __attribute__((always_inline)) void k12x32(int64_t K, const float *a, const float *b, const int64_t bs,
                                                         const bool inplace, float *c, int64_t ldc, int m, int n,
                                                         bool accumulate, const rlx_sgemm_post *post, int64_t i0,
                                                         int64_t j0, const rlx_sgemm_act act) {
  /* 49 pixels (a 7x7 image) end in a block of 1 */
  if (rows_tail(32, K, a, b, bs, inplace, c, ldc, m, n, accumulate, post, i0, j0, act)) return;
  fetch_block(c, ldc, m, 32, post, i0, j0);
  MASKS2();
  ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7) ROW(8) ROW(9) ROW(10) ROW(11)
#pragma GCC unroll 4
  for (int64_t k = 0; k < K; k++, a += 12, b += bs) {
    /* B's panel comes from L3 on its first row block: stay 16 k ahead */
    _mm_prefetch((const char *)(b + 16 * bs), _MM_HINT_T0);
    _mm_prefetch((const char *)(b + 16 * bs + 16), _MM_HINT_T0);
    _mm_prefetch((const char *)(a + A_AHEAD), _MM_HINT_T0);
    LOAD_B(b0, b1, b, 32, inplace, k0, k1);
    __m512 x;
    FMA(0) FMA(1) FMA(2) FMA(3) FMA(4) FMA(5) FMA(6) FMA(7) FMA(8) FMA(9) FMA(10) FMA(11)
  }
  COL_BIAS2()
  if (m == 12 && n == 32) {
    STORE_FULL(0); STORE_FULL(1); STORE_FULL(2); STORE_FULL(3); STORE_FULL(4); STORE_FULL(5);
    STORE_FULL(6); STORE_FULL(7); STORE_FULL(8); STORE_FULL(9); STORE_FULL(10); STORE_FULL(11);
    return;
  }
  /* a partial block: masked stores, row by row, no spill */
  STORE_PART(0) STORE_PART(1) STORE_PART(2) STORE_PART(3) STORE_PART(4) STORE_PART(5)
  STORE_PART(6) STORE_PART(7) STORE_PART(8) STORE_PART(9) STORE_PART(10) STORE_PART(11)
}

void rlx_f32_gemm_ukernel__avx512_12x32(int64_t K, const float *a, const float *b, float *c, int64_t ldc,
                                        int m, int n, bool accumulate) {
  k12x32(K, a, b, 32, false, c, ldc, m, n, accumulate, NULL, 0, 0, RLX_SGEMM_ACT_NONE);
}

void rlx_f32_gemm_ukernel_post__avx512_12x32(int64_t K, const float *a, const float *b, float *c, int64_t ldc, int m,
                                             int n, bool accumulate, const rlx_sgemm_post *post, int64_t i0,
                                             int64_t j0) {
  POST_DISPATCH(k12x32(K, a, b, 32, false, c, ldc, m, n, accumulate, &pc, i0, j0, ACT));
}

void rlx_f32_gemm_ukernel_b__avx512_12x32(int64_t K, const float *a, const float *b, int64_t ldb, float *c,
                                          int64_t ldc, int m, int n, bool accumulate, const rlx_sgemm_post *post,
                                          int64_t i0, int64_t j0) {
  if (!post) k12x32(K, a, b, ldb, true, c, ldc, m, n, accumulate, NULL, 0, 0, RLX_SGEMM_ACT_NONE);
  else POST_DISPATCH(k12x32(K, a, b, ldb, true, c, ldc, m, n, accumulate, &pc, i0, j0, ACT));
}

/* The 12x32 block with A read in place (rows of stride lda, not packed):
 * for products where a packed A block would serve few B panels (a 1x1 conv
 * or a linear layer with few output columns), packing it costs more than
 * it saves. Rows past m alias row 0 (read, never stored). */
/* Its last row block below 9 rows: R of the 12 rows only (R = 1, 2, 4 or 8; a 7x7 image's 49 pixels end in
 * a block of 1, which the 12-row block computed twelve times over). W: the panel's width (32 or 16). */
static inline __attribute__((always_inline)) void k_a_rows(const int R, const int W, int64_t K, const float *a,
                                                           int64_t lda, const float *b, float *c, int64_t ldc, int m,
                                                           int n, bool accumulate, const rlx_sgemm_post *post,
                                                           int64_t i0, int64_t j0, const rlx_sgemm_act act) {
  const float *r[8];
  __m512 acc[8][2];
#pragma GCC unroll 8
  for (int i = 0; i < R; i++) r[i] = a + (i < m ? i : 0) * lda, acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  fetch_block(c, ldc, m, W, post, i0, j0);
#pragma GCC unroll 2
  for (int64_t k = 0; k < K; k++, b += W) {
    _mm_prefetch((const char *)(b + 16 * W), _MM_HINT_T0);
    if (W == 32) _mm_prefetch((const char *)(b + 528), _MM_HINT_T0);
    __m512 b0 = _mm512_loadu_ps(b), b1 = W == 32 ? _mm512_loadu_ps(b + 16) : b0;
#pragma GCC unroll 8
    for (int i = 0; i < R; i++) {
      __m512 x = _mm512_set1_ps(r[i][k]);
      acc[i][0] = _mm512_fmadd_ps(x, b0, acc[i][0]);
      if (W == 32) acc[i][1] = _mm512_fmadd_ps(x, b1, acc[i][1]);
    }
  }
  store_rows(R, W, acc, c, ldc, m, n, accumulate, post, i0, j0, act);
}

/* A block of m <= 8 rows on k_a_rows (true), or false: the full kernel's. */
static inline __attribute__((always_inline)) bool a_rows_tail(const int W, int64_t K, const float *a, int64_t lda,
                                                              const float *b, float *c, int64_t ldc, int m, int n,
                                                              bool accumulate, const rlx_sgemm_post *post,
                                                              int64_t i0, int64_t j0, const rlx_sgemm_act act) {
  if (m > 8) return false;
  if (m == 1) k_a_rows(1, W, K, a, lda, b, c, ldc, m, n, accumulate, post, i0, j0, act);
  else if (m == 2) k_a_rows(2, W, K, a, lda, b, c, ldc, m, n, accumulate, post, i0, j0, act);
  else if (m <= 4) k_a_rows(4, W, K, a, lda, b, c, ldc, m, n, accumulate, post, i0, j0, act);
  else k_a_rows(8, W, K, a, lda, b, c, ldc, m, n, accumulate, post, i0, j0, act);
  return true;
}

static inline __attribute__((always_inline)) void k12x32_a(int64_t K, const float *a, int64_t lda, const float *b,
                                                           float *c, int64_t ldc, int m, int n, bool accumulate,
                                                           const rlx_sgemm_post *post, int64_t i0, int64_t j0,
                                                           const rlx_sgemm_act act) {
  if (a_rows_tail(32, K, a, lda, b, c, ldc, m, n, accumulate, post, i0, j0, act)) return;
  const float *r[12];
  for (int i = 0; i < 12; i++) r[i] = a + (i < m ? i : 0) * lda;
  fetch_block(c, ldc, m, 32, post, i0, j0);
  ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7) ROW(8) ROW(9) ROW(10) ROW(11)
#define FMA_A(i)                                          \
  x = _mm512_set1_ps(r[i][k]);                            \
  c##i##0 = _mm512_fmadd_ps(x, b0, c##i##0);              \
  c##i##1 = _mm512_fmadd_ps(x, b1, c##i##1);
#pragma GCC unroll 4
  for (int64_t k = 0; k < K; k++, b += 32) {
    _mm_prefetch((const char *)(b + 512), _MM_HINT_T0);
    _mm_prefetch((const char *)(b + 528), _MM_HINT_T0);
    __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16), x;
    FMA_A(0) FMA_A(1) FMA_A(2) FMA_A(3) FMA_A(4) FMA_A(5) FMA_A(6) FMA_A(7) FMA_A(8) FMA_A(9) FMA_A(10) FMA_A(11)
  }
#undef FMA_A
  MASKS2();
  COL_BIAS2()
  if (m == 12 && n == 32) {
    STORE_FULL(0); STORE_FULL(1); STORE_FULL(2); STORE_FULL(3); STORE_FULL(4); STORE_FULL(5);
    STORE_FULL(6); STORE_FULL(7); STORE_FULL(8); STORE_FULL(9); STORE_FULL(10); STORE_FULL(11);
    return;
  }
  STORE_PART(0) STORE_PART(1) STORE_PART(2) STORE_PART(3) STORE_PART(4) STORE_PART(5)
  STORE_PART(6) STORE_PART(7) STORE_PART(8) STORE_PART(9) STORE_PART(10) STORE_PART(11)
}

void rlx_f32_gemm_ukernel_a__avx512_12x32(int64_t K, const float *a, int64_t lda, const float *b, float *c,
                                          int64_t ldc, int m, int n, bool accumulate) {
  k12x32_a(K, a, lda, b, c, ldc, m, n, accumulate, NULL, 0, 0, RLX_SGEMM_ACT_NONE);
}

void rlx_f32_gemm_ukernel_a_post__avx512_12x32(int64_t K, const float *a, int64_t lda, const float *b, float *c,
                                               int64_t ldc, int m, int n, bool accumulate,
                                               const rlx_sgemm_post *post, int64_t i0, int64_t j0) {
  POST_DISPATCH(k12x32_a(K, a, lda, b, c, ldc, m, n, accumulate, &pc, i0, j0, ACT));
}

/* Skinny: m <= 4 rows of A against one 32-column panel; two k steps per
 * iteration into separate accumulators to hide the FMA latency. */
void rlx_f32_gemm_skinny__avx512_32(int64_t K, const float *a, int64_t lda, const float *b, float *c, int64_t ldc,
                                     int m, int n, bool accumulate) {
  __m512 acc[4][2][2];
  for (int i = 0; i < 4; i++)
    for (int h = 0; h < 2; h++) acc[i][h][0] = acc[i][h][1] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 1 < K; k += 2, b += 64) {
    __m512 b00 = _mm512_loadu_ps(b), b01 = _mm512_loadu_ps(b + 16);
    __m512 b10 = _mm512_loadu_ps(b + 32), b11 = _mm512_loadu_ps(b + 48);
    for (int i = 0; i < m; i++) {
      __m512 x0 = _mm512_set1_ps(a[i * lda + k]), x1 = _mm512_set1_ps(a[i * lda + k + 1]);
      acc[i][0][0] = _mm512_fmadd_ps(x0, b00, acc[i][0][0]);
      acc[i][0][1] = _mm512_fmadd_ps(x0, b01, acc[i][0][1]);
      acc[i][1][0] = _mm512_fmadd_ps(x1, b10, acc[i][1][0]);
      acc[i][1][1] = _mm512_fmadd_ps(x1, b11, acc[i][1][1]);
    }
  }
  if (k < K) {
    __m512 b00 = _mm512_loadu_ps(b), b01 = _mm512_loadu_ps(b + 16);
    for (int i = 0; i < m; i++) {
      __m512 x0 = _mm512_set1_ps(a[i * lda + k]);
      acc[i][0][0] = _mm512_fmadd_ps(x0, b00, acc[i][0][0]);
      acc[i][0][1] = _mm512_fmadd_ps(x0, b01, acc[i][0][1]);
    }
  }
  for (int i = 0; i < m; i++) {
    float tmp[32];
    _mm512_storeu_ps(tmp, _mm512_add_ps(acc[i][0][0], acc[i][1][0]));
    _mm512_storeu_ps(tmp + 16, _mm512_add_ps(acc[i][0][1], acc[i][1][1]));
    float *ci = c + i * ldc;
    for (int j = 0; j < n; j++) ci[j] = accumulate ? ci[j] + tmp[j] : tmp[j];
  }
}

/* The 12x16 microkernel: one B vector per k and 12 accumulators. For
 * products whose N leaves half a 32-column panel empty (N <= 16: a
 * channels-last conv with 16 output channels, Winograd's 16 tiles of a
 * 14x14 image; rlx_sgemm_isa_for). */
#define ROW1(i) __m512 c##i = _mm512_setzero_ps();
#define FMA1(i) c##i = _mm512_fmadd_ps(_mm512_set1_ps(a[i]), b0, c##i);
#define STORE1(i)                                                                                 \
  if ((i) < m) {                                                                                  \
    float *p = c + (i)*ldc;                                                                       \
    __m512 v = accumulate ? _mm512_add_ps(_mm512_maskz_loadu_ps(k0, p), c##i) : c##i;             \
    if (post) v = post_vec(post, act, v, cb0, i0 + (i), RES_AT(i, 0), k0);                        \
    _mm512_mask_storeu_ps(p, k0, v);                                                              \
  }

/* bs, inplace: as ukernel_rows' (a packed panel: 16, false) */
static inline __attribute__((always_inline)) void k12x16(int64_t K, const float *a, const float *b, const int64_t bs,
                                                         const bool inplace, float *c, int64_t ldc, int m, int n,
                                                         bool accumulate, const rlx_sgemm_post *post, int64_t i0,
                                                         int64_t j0, const rlx_sgemm_act act) {
  if (rows_tail(16, K, a, b, bs, inplace, c, ldc, m, n, accumulate, post, i0, j0, act)) return;
  fetch_block(c, ldc, m, 16, post, i0, j0);
  __mmask16 k0 = (__mmask16)(n >= 16 ? 0xffff : (1u << n) - 1);
  ROW1(0) ROW1(1) ROW1(2) ROW1(3) ROW1(4) ROW1(5) ROW1(6) ROW1(7) ROW1(8) ROW1(9) ROW1(10) ROW1(11)
#pragma GCC unroll 4
  for (int64_t k = 0; k < K; k++, a += 12, b += bs) {
    _mm_prefetch((const char *)(b + 16 * bs), _MM_HINT_T0);
    _mm_prefetch((const char *)(a + A_AHEAD), _MM_HINT_T0);
    __m512 b0 = inplace ? _mm512_maskz_loadu_ps(k0, b) : _mm512_loadu_ps(b);
    FMA1(0) FMA1(1) FMA1(2) FMA1(3) FMA1(4) FMA1(5) FMA1(6) FMA1(7) FMA1(8) FMA1(9) FMA1(10) FMA1(11)
  }
  __m512 cb0 = post && post->col_bias ? _mm512_maskz_loadu_ps(k0, post->col_bias + j0) : _mm512_setzero_ps();
  STORE1(0) STORE1(1) STORE1(2) STORE1(3) STORE1(4) STORE1(5)
  STORE1(6) STORE1(7) STORE1(8) STORE1(9) STORE1(10) STORE1(11)
}

void rlx_f32_gemm_ukernel__avx512_12x16(int64_t K, const float *a, const float *b, float *c, int64_t ldc, int m,
                                        int n, bool accumulate) {
  k12x16(K, a, b, 16, false, c, ldc, m, n, accumulate, NULL, 0, 0, RLX_SGEMM_ACT_NONE);
}

void rlx_f32_gemm_ukernel_post__avx512_12x16(int64_t K, const float *a, const float *b, float *c, int64_t ldc, int m,
                                             int n, bool accumulate, const rlx_sgemm_post *post, int64_t i0,
                                             int64_t j0) {
  POST_DISPATCH(k12x16(K, a, b, 16, false, c, ldc, m, n, accumulate, &pc, i0, j0, ACT));
}

void rlx_f32_gemm_ukernel_b__avx512_12x16(int64_t K, const float *a, const float *b, int64_t ldb, float *c,
                                          int64_t ldc, int m, int n, bool accumulate, const rlx_sgemm_post *post,
                                          int64_t i0, int64_t j0) {
  if (!post) k12x16(K, a, b, ldb, true, c, ldc, m, n, accumulate, NULL, 0, 0, RLX_SGEMM_ACT_NONE);
  else POST_DISPATCH(k12x16(K, a, b, ldb, true, c, ldc, m, n, accumulate, &pc, i0, j0, ACT));
}

/* The 12x16 block with A read in place (rows of stride lda), as k12x32_a
 * for the 12x32 one: a channels-last 1x1 conv with 16 output channels and
 * few input channels (mobilenet_v3's 16 -> 16 at 112x112, efficientnet's
 * 32 -> 16) packed each 12-row block of A for one panel. Rows past m alias
 * row 0 (read, never stored). */
static inline __attribute__((always_inline)) void k12x16_a(int64_t K, const float *a, int64_t lda, const float *b,
                                                           float *c, int64_t ldc, int m, int n, bool accumulate,
                                                           const rlx_sgemm_post *post, int64_t i0, int64_t j0,
                                                           const rlx_sgemm_act act) {
  if (a_rows_tail(16, K, a, lda, b, c, ldc, m, n, accumulate, post, i0, j0, act)) return;
  const float *r[12];
  for (int i = 0; i < 12; i++) r[i] = a + (i < m ? i : 0) * lda;
  fetch_block(c, ldc, m, 16, post, i0, j0);
  ROW1(0) ROW1(1) ROW1(2) ROW1(3) ROW1(4) ROW1(5) ROW1(6) ROW1(7) ROW1(8) ROW1(9) ROW1(10) ROW1(11)
#define FMA1_A(i) c##i = _mm512_fmadd_ps(_mm512_set1_ps(r[i][k]), b0, c##i);
#pragma GCC unroll 4
  for (int64_t k = 0; k < K; k++, b += 16) {
    _mm_prefetch((const char *)(b + 256), _MM_HINT_T0);
    __m512 b0 = _mm512_loadu_ps(b);
    FMA1_A(0) FMA1_A(1) FMA1_A(2) FMA1_A(3) FMA1_A(4) FMA1_A(5) FMA1_A(6) FMA1_A(7) FMA1_A(8) FMA1_A(9) FMA1_A(10)
    FMA1_A(11)
  }
#undef FMA1_A
  __mmask16 k0 = (__mmask16)(n >= 16 ? 0xffff : (1u << n) - 1);
  __m512 cb0 = post && post->col_bias ? _mm512_maskz_loadu_ps(k0, post->col_bias + j0) : _mm512_setzero_ps();
  STORE1(0) STORE1(1) STORE1(2) STORE1(3) STORE1(4) STORE1(5)
  STORE1(6) STORE1(7) STORE1(8) STORE1(9) STORE1(10) STORE1(11)
}

void rlx_f32_gemm_ukernel_a__avx512_12x16(int64_t K, const float *a, int64_t lda, const float *b, float *c,
                                          int64_t ldc, int m, int n, bool accumulate) {
  k12x16_a(K, a, lda, b, c, ldc, m, n, accumulate, NULL, 0, 0, RLX_SGEMM_ACT_NONE);
}

void rlx_f32_gemm_ukernel_a_post__avx512_12x16(int64_t K, const float *a, int64_t lda, const float *b, float *c,
                                               int64_t ldc, int m, int n, bool accumulate,
                                               const rlx_sgemm_post *post, int64_t i0, int64_t j0) {
  POST_DISPATCH(k12x16_a(K, a, lda, b, c, ldc, m, n, accumulate, &pc, i0, j0, ACT));
}

/* Skinny with one 16-column panel: m <= 4 rows, two k steps per iteration. */
void rlx_f32_gemm_skinny__avx512_16(int64_t K, const float *a, int64_t lda, const float *b, float *c, int64_t ldc,
                                     int m, int n, bool accumulate) {
  __m512 acc[4][2];
  for (int i = 0; i < 4; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 1 < K; k += 2, b += 32) {
    __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
    for (int i = 0; i < m; i++) {
      acc[i][0] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * lda + k]), b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * lda + k + 1]), b1, acc[i][1]);
    }
  }
  if (k < K) {
    __m512 b0 = _mm512_loadu_ps(b);
    for (int i = 0; i < m; i++) acc[i][0] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * lda + k]), b0, acc[i][0]);
  }
  __mmask16 k0 = (__mmask16)(n >= 16 ? 0xffff : (1u << n) - 1);
  for (int i = 0; i < m; i++) {
    __m512 v = _mm512_add_ps(acc[i][0], acc[i][1]);
    float *ci = c + i * ldc;
    _mm512_mask_storeu_ps(ci, k0, accumulate ? _mm512_add_ps(_mm512_maskz_loadu_ps(k0, ci), v) : v);
  }
}

/* dst[j * ldd + r] (+)= src[r * lds + j] for r < rows, j < cols: 16x16
 * tiles transposed in registers (unpack pairs of rows, then pairs of
 * pairs, then 128-bit lanes across the four groups), stored with the
 * row mask. The pixel-major conv's epilogue (conv_gemm.c), which turns its
 * [pixels, channels] blocks into NCHW. */
void rlx_f32_transpose__avx512(const float *src, int64_t lds, int64_t rows, int64_t cols, float *dst, int64_t ldd,
                               bool add) {
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    int64_t rn = rows - r0 < 16 ? rows - r0 : 16;
    __mmask16 km = (__mmask16)(rn == 16 ? 0xffff : (1u << rn) - 1);
    for (int64_t j0 = 0; j0 < cols; j0 += 16) {
      int64_t jn = cols - j0 < 16 ? cols - j0 : 16;
      __mmask16 kn = (__mmask16)(jn == 16 ? 0xffff : (1u << jn) - 1);
      __m512 r[16], a[16], b[16];
      for (int i = 0; i < 16; i++)
        r[i] = i < rn ? _mm512_maskz_loadu_ps(kn, src + (r0 + i) * lds + j0) : _mm512_setzero_ps();
      for (int i = 0; i < 8; i++) {
        a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
      }
      for (int i = 0; i < 4; i++) {
        __m512d a0 = _mm512_castps_pd(a[4 * i]), a1 = _mm512_castps_pd(a[4 * i + 1]);
        __m512d a2 = _mm512_castps_pd(a[4 * i + 2]), a3 = _mm512_castps_pd(a[4 * i + 3]);
        b[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
        b[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
        b[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
        b[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
      }
      for (int k = 0; k < 4; k++) { /* b[4g + k], 128-bit lane L: column 4L + k of rows 4g .. 4g + 3 */
        __m512 c0 = _mm512_shuffle_f32x4(b[k], b[4 + k], 0x88), c1 = _mm512_shuffle_f32x4(b[k], b[4 + k], 0xdd);
        __m512 d0 = _mm512_shuffle_f32x4(b[8 + k], b[12 + k], 0x88), d1 = _mm512_shuffle_f32x4(b[8 + k], b[12 + k], 0xdd);
        __m512 t[4] = {_mm512_shuffle_f32x4(c0, d0, 0x88), _mm512_shuffle_f32x4(c1, d1, 0x88),
                       _mm512_shuffle_f32x4(c0, d0, 0xdd), _mm512_shuffle_f32x4(c1, d1, 0xdd)};
        for (int L = 0; L < 4; L++) {
          int64_t j = 4 * L + k;
          if (j >= jn) continue;
          float *p = dst + (j0 + j) * ldd + r0;
          __m512 v = add ? _mm512_add_ps(_mm512_maskz_loadu_ps(km, p), t[L]) : t[L];
          _mm512_mask_storeu_ps(p, km, v);
        }
      }
    }
  }
}

/* An A panel gathered from tap planes: dst[k * mr + r] = chan_k[tap_off[t_k] + poff[r]] for r < rows (0 up to
 * mr <= 16), k < kc, starting at tap t of the channel at chan; t wraps at taps, moving chan on by chan_floats.
 * The pixel-major conv's im2col rows (conv_gemm.c): 12 pixels are a few runs of consecutive offsets (image
 * rows), so each k is one masked load per run, shifted so lane r reads its own offset (the masked-off lanes
 * of a shifted load do not fault), instead of a 12-lane gather. */
void rlx_f32_pack_taps__avx512(const float *chan, int64_t chan_floats, const int64_t *tap_off, int64_t taps, int64_t t,
                               int64_t kc, const int32_t *poff, int rows, int mr, float *dst) {
  __mmask16 km = (__mmask16)((1u << mr) - 1), seg_mask[16];
  int64_t seg_off[16];
  int nseg = 0;
  for (int r = 0; r < rows;) {
    int e = r + 1;
    while (e < rows && poff[e] == poff[e - 1] + 1) e++;
    seg_mask[nseg] = (__mmask16)(((1u << e) - 1) & ~((1u << r) - 1));
    seg_off[nseg++] = (int64_t)poff[r] - r;
    r = e;
  }
  for (int64_t k = 0; k < kc; k++, dst += mr) {
    const float *base = chan + tap_off[t];
    __m512 v = _mm512_setzero_ps();
    for (int q = 0; q < nseg; q++) v = _mm512_mask_loadu_ps(v, seg_mask[q], base + seg_off[q]);
    _mm512_mask_storeu_ps(dst, km, v);
    if (++t == taps) t = 0, chan += chan_floats;
  }
}

/* A 1x1 conv's panel with its batch norm folded (conv_gemm.c, fuse_preact): dst[k * nr + j] =
 * act((x[k * ldx + j] - m[k]) * s[k] + b[k]) for j < cols, 0 up to nr (<= 32), the three operations rounded
 * one by one as the fast batch norm computes them (no FMA); relu keeps NaN and makes -0 +0 (not-le-unordered). */
void rlx_f32_pack_bn__avx512(const float *x, int64_t ldx, int64_t kc, int cols, int nr, const float *m, const float *s,
                             const float *b, bool relu, float *dst) {
  __mmask16 l0 = (__mmask16)(cols >= 16 ? 0xffffu : (1u << cols) - 1),
            l1 = (__mmask16)(cols <= 16 ? 0u : cols >= 32 ? 0xffffu : (1u << (cols - 16)) - 1);
  __mmask16 s0 = (__mmask16)(nr >= 16 ? 0xffffu : (1u << nr) - 1),
            s1 = (__mmask16)(nr <= 16 ? 0u : nr >= 32 ? 0xffffu : (1u << (nr - 16)) - 1);
  __m512 zero = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; k++, x += ldx, dst += nr) {
    __m512 vm = _mm512_set1_ps(m[k]), vs = _mm512_set1_ps(s[k]), vb = _mm512_set1_ps(b[k]);
    __m512 v0 = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(l0, x), vm), vs), vb);
    __mmask16 k0 = l0, k1 = l1;
    if (relu) k0 &= _mm512_cmp_ps_mask(v0, zero, _CMP_NLE_UQ);
    _mm512_mask_storeu_ps(dst, s0, _mm512_maskz_mov_ps(k0, v0));
    if (s1) {
      __m512 v1 = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(l1, x + 16), vm), vs), vb);
      if (relu) k1 &= _mm512_cmp_ps_mask(v1, zero, _CMP_NLE_UQ);
      _mm512_mask_storeu_ps(dst + 16, s1, _mm512_maskz_mov_ps(k1, v1));
    }
  }
}

/* dst[k * nr + j] = x[k * ldx + j] for j < cols, 0 up to nr (<= 32): a B panel of a row-major B (the
 * channel-major 1x1 conv's image), two masked vectors a row where memcpy took a call per row. */
void rlx_f32_pack_rows__avx512(const float *x, int64_t ldx, int64_t kc, int cols, int nr, float *dst) {
  __mmask16 l0 = (__mmask16)(cols >= 16 ? 0xffffu : (1u << cols) - 1),
            l1 = (__mmask16)(cols <= 16 ? 0u : cols >= 32 ? 0xffffu : (1u << (cols - 16)) - 1);
  __mmask16 s0 = (__mmask16)(nr >= 16 ? 0xffffu : (1u << nr) - 1),
            s1 = (__mmask16)(nr <= 16 ? 0u : nr >= 32 ? 0xffffu : (1u << (nr - 16)) - 1);
  for (int64_t k = 0; k < kc; k++, x += ldx, dst += nr) {
    _mm512_mask_storeu_ps(dst, s0, _mm512_maskz_loadu_ps(l0, x));
    if (s1) _mm512_mask_storeu_ps(dst + 16, s1, _mm512_maskz_loadu_ps(l1, x + 16));
  }
}

/* The channel-major conv's im2col B panel from planes (conv_gemm.c): dst[k * nr + j] = chan_k[tap_off[t_k] +
 * poff[j]] for j < cols (<= 32), zero up to nr (<= 32), the tap advancing from t and wrapping at taps onto the
 * next channel; each 16-column half a few masked loads, one per run of consecutive offsets, as
 * rlx_f32_pack_taps__avx512 does for an A panel. */
void rlx_f32_pack_taps_b__avx512(const float *chan, int64_t chan_floats, const int64_t *tap_off, int64_t taps,
                                 int64_t t, int64_t kc, const int32_t *poff, int cols, int nr, float *dst) {
  __mmask16 seg_mask[2][16];
  int64_t seg_off[2][16];
  int nseg[2] = {0, 0};
  for (int h = 0; h < 2; h++) {
    int lo = 16 * h, hi = cols < lo + 16 ? cols : lo + 16;
    for (int r = lo; r < hi;) {
      int e = r + 1;
      while (e < hi && poff[e] == poff[e - 1] + 1) e++;
      seg_mask[h][nseg[h]] = (__mmask16)(((1u << (e - lo)) - 1) & ~((1u << (r - lo)) - 1));
      seg_off[h][nseg[h]++] = (int64_t)poff[r] - (r - lo);
      r = e;
    }
  }
  __mmask16 s0 = (__mmask16)(nr >= 16 ? 0xffffu : (1u << nr) - 1),
            s1 = (__mmask16)(nr <= 16 ? 0u : nr >= 32 ? 0xffffu : (1u << (nr - 16)) - 1);
  for (int64_t k = 0; k < kc; k++, dst += nr) {
    const float *base = chan + tap_off[t];
    __m512 v = _mm512_setzero_ps();
    for (int q = 0; q < nseg[0]; q++) v = _mm512_mask_loadu_ps(v, seg_mask[0][q], base + seg_off[0][q]);
    _mm512_mask_storeu_ps(dst, s0, v);
    if (s1) {
      v = _mm512_setzero_ps();
      for (int q = 0; q < nseg[1]; q++) v = _mm512_mask_loadu_ps(v, seg_mask[1][q], base + seg_off[1][q]);
      _mm512_mask_storeu_ps(dst + 16, s1, v);
    }
    if (++t == taps) t = 0, chan += chan_floats;
  }
}
