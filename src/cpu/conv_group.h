/*
 * conv_group.h — the channels-last grouped convolution's rows (conv_group.c
 * drives them; conv_group_avx512.c, the AVX-512 block kernels): a conv with
 * 1 < groups < channels, Cg = C / groups input and Og = O / groups output
 * channels a group (regnet's and resnext's 3x3 convs). docs/design.md,
 * "Layout".
 */
#ifndef RLX_CPU_CONV_GROUP_H
#define RLX_CPU_CONV_GROUP_H

#include <stdbool.h>
#include <stdint.h>

/* Output channels [ob0, ob1) (multiples of 16 or of Og:
 * rlx_gconv_by_vectors; ob1 may pass O) of output pixels [0, OW) of one output row:
 *   y[ox][o] = bias[o] + sum over kernel rows ki in [k0, k1), columns
 *              kj < kw inside the image and c < Cg of
 *              wt[(ki * kw + kj) * Cg + c][o] * x[iy0 + ki * dh][ox * sw - pw + kj * dw][g(o) * Cg + c]
 * g(o) = o / Og, the weights reordered to [tap][Cg][Op] (Op: O rounded up
 * to 16, zero past O) for the portable rows; the AVX-512 rows' are blocked
 * by the 16-channel vectors they compute (rlx_gconv_vectors), each vector's
 * [tap][Cg][16] contiguous, zero past its group or O (a row strided by Op
 * had put a vector's 9 * Cg weight lines 4 KB apart at O = 1024: one L1
 * set); each output's products added in (ki, kj, c) order
 * by FMA onto the bias (or 0). The AVX-512 rows also add the products of
 * the columns outside [0, W) with zero inputs, as the reference does (they
 * differ from the portable rows only where such a weight is Inf or NaN). */
/* Input channels a group may have (the rows read a zero vector that long for the padding). */
#define RLX_GCONV_CG_MAX 1024

typedef struct rlx_gconv_row {
  const float *x;    /* the image [H][W][C] */
  const float *wt;   /* portable: [kh * kw][Cg][Op]; AVX-512: [vector][kh * kw][Cg][16] */
  const float *bias; /* [O], or NULL */
  float *y;          /* the output row [OW][O] */
  int64_t C, W, O, Op, Cg, Og, OW;
  int64_t iy0, dh, k0, k1;
  int64_t kw, sw, pw, dw;
  int64_t ob0, ob1;
  int64_t taps; /* kh * kw */
  /* input the caller's next row reads and this one does not (its new image rows), fetched into L2 a slice
   * after each block of pixels (AVX-512 rows only), or NULL */
  const float *pf;
  int64_t pf_floats;
} rlx_gconv_row;

/* Returns the cache lines of pf it fetched (all of them: each row's last block asks for the rest). */
int64_t rlx_gconv_row_avx512(const rlx_gconv_row *r);

/* Whether the AVX-512 rows take 16-channel vectors from channel 0, so a row's channel range is cut at
 * multiples of 16: each vector within one group (Og a multiple of 16); whole groups of Og dividing 16 whose
 * inputs fit one vector; or, Og 8 more than a multiple of 16 (regnet_x's 24-wide groups), within one group
 * or straddling two at lane 8 (2 Cg within the zeros the padding reads). Otherwise vectors start at each
 * group's first channel and it is cut at groups. */
static inline bool rlx_gconv_by_vectors(int64_t Og, int64_t Cg) {
  return Og % 16 == 0 || (16 % Og == 0 && Cg * (16 / Og) <= 16) || (Og % 16 == 8 && Og > 16 && 2 * Cg <= RLX_GCONV_CG_MAX);
}

/* The AVX-512 rows' vectors: by_vectors, channels [16 v, 16 v + 16) for v < Op / 16; otherwise each group's
 * channels from its first in vectors of 16 (the last masked to the group), ceil(Og / 16) a group. */
static inline int64_t rlx_gconv_vectors(int64_t O, int64_t Og, int64_t Cg) {
  return rlx_gconv_by_vectors(Og, Cg) ? (O + 15) / 16 : O / Og * ((Og + 15) / 16);
}

#endif
