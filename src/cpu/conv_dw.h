/*
 * conv_dw.h — the register-blocked channels-last depthwise rows
 * (conv_dw_avx512.c), called by conv_nhwc.c's depthwise kernel for the
 * geometries it has: kernel width 3, 5 or 7, horizontal stride 1 or 2, no
 * horizontal dilation (any kernel height, vertical stride and dilation:
 * the caller picks the input rows). docs/design.md, "Layout".
 */
#ifndef RLX_CPU_CONV_DW_H
#define RLX_CPU_CONV_DW_H

#include <stdbool.h>
#include <stdint.h>

/* Activations the rows apply in registers (the sgemm post's, gemm.h
 * rlx_sgemm_act, then these); RLX_DW_ACT_NONE leaves any other to the caller. */
enum { RLX_DW_ACT_SILU = 16, RLX_DW_ACT_SIGMOID = 17 };

/* One task's part of one output row: pixels [0, OW) of it, channels
 * [0, nc) from the pointers (which the caller set to the task's first
 * channel), every channel C floats apart from the next pixel's.
 *   y[ox][c] = act(bias[c] + sum over kernel rows ki in [k0, k1) and
 *              columns kj < kw inside the image of
 *              w[ki * kw + kj][c] * x[iy0 + ki * dh][ox * sw - pw + kj][c]
 *              (+ res[ox][c]))
 * each pixel's products added in (ki, kj) order by FMA onto the bias. */
typedef struct rlx_dw_row {
  const float *x;    /* the image [H][W][C] */
  const float *wt;   /* the weights [kh * kw][C] */
  const float *bias; /* [C], or NULL */
  const float *res;  /* the residual's row [OW][C], or NULL */
  float *y;          /* the output row [OW][C] */
  int64_t C, W, OW, nc;
  int64_t iy0, dh, k0, k1;
  int kw, sw, pw;
  int act; /* rlx_sgemm_act or RLX_DW_ACT_*; lo, hi its bounds */
  float lo, hi;
} rlx_dw_row;

/* Whether the rows compute this geometry on this CPU (AVX-512F, and the
 * sgemm's microkernel not forced to another ISA by RLX_ISA). */
bool rlx_dw_rows_take(int64_t kw, int64_t sw, int64_t dw);
void rlx_dw_row_avx512(const rlx_dw_row *r);

#endif
