/*
 * test_kernels_nn.c — the reference kernels of matmul, conv (1/2/3-D, grouped,
 * dilated, transposed) and pooling (max/avg, padding, dilation, ceil_mode,
 * adaptive) on small vectors whose expected values were computed by hand or,
 * where noted, with PyTorch 2.15 on the CPU (f32 unless said otherwise). Each
 * run also exercises the op's shape inference; infer error cases end each group.
 */
#include "kernel_test.h"

#define INF INFINITY

/* ==== matmul ==== */

static rlx_params mm_params(bool trans_b, double alpha, double beta) {
  rlx_params p = {.matmul = {.trans_b = trans_b, .alpha = alpha, .beta = beta}};
  return p;
}

TEST(matmul_2d) {
  krun r;
  rlx_params p = mm_params(false, 1, 1);
  /* [[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]] = [[58,64],[139,154]] */
  CHECK_OK(krun_op(&r, RLX_OP_MATMUL, &p, 2,
                   (tens[]){TF(F32, SH(2, 3), 1, 2, 3, 4, 5, 6),
                            TF(F32, SH(3, 2), 7, 8, 9, 10, 11, 12)},
                   1));
  CHECK_SHAPE(&r, 0, F32, 2, 2);
  CHECK_F(&r, 0, 0, 58, 64, 139, 154);
  krun_free(&r);
  /* f64, with an absent bias given explicitly */
  CHECK_OK(krun_op(&r, RLX_OP_MATMUL, &p, 3,
                   (tens[]){TF(F64, SH(2, 3), 1, 2, 3, 4, 5, 6),
                            TF(F64, SH(3, 2), 7, 8, 9, 10, 11, 12), ABSENT},
                   1));
  CHECK_SHAPE(&r, 0, F64, 2, 2);
  CHECK_F(&r, 0, 0, 58, 64, 139, 154);
  krun_free(&r);
}

/* [2,1,3,4] @ [5,4,2] -> [2,5,3,2]; the expected values are the defining
 * sum, computed here in double (all values are small integers, exact). */
TEST(matmul_batched_broadcast) {
  double a[2 * 3 * 4], b[5 * 4 * 2];
  for (int i = 0; i < 24; i++) a[i] = i % 7 - 3;
  for (int i = 0; i < 40; i++) b[i] = (i * 5) % 11 - 5;
  tens ta = {RLX_DTYPE_F32, SH(2, 1, 3, 4), a, NULL, 24};
  tens tb = {RLX_DTYPE_F32, SH(5, 4, 2), b, NULL, 40};
  krun r;
  rlx_params p = mm_params(false, 1, 1);
  CHECK_OK(krun_op(&r, RLX_OP_MATMUL, &p, 2, (tens[]){ta, tb}, 1));
  CHECK_SHAPE(&r, 0, F32, 2, 5, 3, 2);
  double want[2 * 5 * 3 * 2];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 5; j++)
      for (int m = 0; m < 3; m++)
        for (int n = 0; n < 2; n++) {
          double s = 0;
          for (int k = 0; k < 4; k++) s += a[(i * 3 + m) * 4 + k] * b[(j * 4 + k) * 2 + n];
          want[((i * 5 + j) * 3 + m) * 2 + n] = s;
        }
  kt_check_f_(__FILE__, __LINE__, &r, 0, 0, want, 60);
  krun_free(&r);
}

/* trans_b (b is [N, K], a linear weight) with bias: F.linear(x, W, b). The
 * reference notes' vector x=[5,6], w=[[1,2],[3,4]], b=[10,20] -> [33,54] is
 * x @ w + b, i.e. a linear layer whose weight is w^T = [[1,3],[2,4]]; with
 * W = w itself F.linear gives [27, 59]. */
TEST(matmul_trans_b_bias) {
  krun r;
  rlx_params p = mm_params(false, 1, 1);
  CHECK_OK(krun_op(&r, RLX_OP_MATMUL, &p, 3,
                   (tens[]){TF(F32, SH(1, 2), 5, 6), TF(F32, SH(2, 2), 1, 2, 3, 4),
                            TF(F32, SH(2), 10, 20)},
                   1));
  CHECK_F(&r, 0, 0, 33, 54);
  krun_free(&r);
  p = mm_params(true, 1, 1);
  CHECK_OK(krun_op(&r, RLX_OP_MATMUL, &p, 3,
                   (tens[]){TF(F32, SH(1, 2), 5, 6), TF(F32, SH(2, 2), 1, 3, 2, 4),
                            TF(F32, SH(2), 10, 20)},
                   1));
  CHECK_SHAPE(&r, 0, F32, 1, 2);
  CHECK_F(&r, 0, 0, 33, 54);
  krun_free(&r);
  CHECK_OK(krun_op(&r, RLX_OP_MATMUL, &p, 3,
                   (tens[]){TF(F32, SH(1, 2), 5, 6), TF(F32, SH(2, 2), 1, 2, 3, 4),
                            TF(F32, SH(2), 10, 20)},
                   1));
  CHECK_F(&r, 0, 0, 27, 59);
  krun_free(&r);
  /* trans_b with a non-square weight and a batch: [2,1,3] x [2,3]^T -> [2,1,2] */
  CHECK_OK(krun_op(&r, RLX_OP_MATMUL, &p, 2,
                   (tens[]){TF(F32, SH(2, 1, 3), 1, 2, 3, -1, 0, 1),
                            TF(F32, SH(2, 3), 1, 0, 0, 1, 1, 1)},
                   1));
  CHECK_SHAPE(&r, 0, F32, 2, 1, 2);
  CHECK_F(&r, 0, 0, 1, 6, -1, 0);
  krun_free(&r);
}

/* out = alpha * (a @ b) + beta * bias (torch.addmm(bias, a, b, beta=, alpha=)) */
TEST(matmul_alpha_beta) {
  krun r;
  rlx_params p = mm_params(false, 2, 0.5);
  CHECK_OK(krun_op(&r, RLX_OP_MATMUL, &p, 3,
                   (tens[]){TF(F64, SH(2, 3), 1, 2, 3, 4, 5, 6),
                            TF(F64, SH(3, 2), 7, 8, 9, 10, 11, 12), TF(F64, SH(2, 1), 100, -100)},
                   1));
  CHECK_F(&r, 0, 0, 166, 178, 228, 258);
  krun_free(&r);
  p = mm_params(false, -1, 1); /* alpha alone, no bias */
  CHECK_OK(krun_op(&r, RLX_OP_MATMUL, &p, 2,
                   (tens[]){TF(F32, SH(1, 1), 3), TF(F32, SH(1, 2), 1, -2)}, 1));
  CHECK_F(&r, 0, 0, -3, 6);
  krun_free(&r);
}

TEST(matmul_infer_errors) {
  krun r;
  rlx_params p = mm_params(false, 1, 1);
  CHECK_ERR(krun_op(&r, RLX_OP_MATMUL, &p, 2,
                    (tens[]){TF(F32, SH(2, 3), 1, 2, 3, 4, 5, 6),
                             TF(F32, SH(4, 2), 1, 2, 3, 4, 5, 6, 7, 8)},
                    1),
            RLX_ERR_SHAPE, "inner dims differ");
  krun_free(&r);
  CHECK_ERR(krun_op(&r, RLX_OP_MATMUL, &p, 2,
                    (tens[]){TI(BOOL, SH(1, 1), 1), TI(BOOL, SH(1, 1), 1)}, 1),
            RLX_ERR_UNSUPPORTED, "f32, f64 or an integer dtype");
  krun_free(&r);
  /* integer matmul is exact and wraps like torch's: [[3e9, 1]] @ [[3], [5]] */
  CHECK_OK(krun_op(&r, RLX_OP_MATMUL, &p, 2,
                   (tens[]){TI(I64, SH(1, 2), 3000000000LL, 1), TI(I64, SH(2, 1), 3, 5)}, 1));
  CHECK_I(&r, 0, 9000000005LL);
  krun_free(&r);
  CHECK_ERR(
      krun_op(&r, RLX_OP_MATMUL, &p, 2, (tens[]){TF(F32, SH(2), 1, 2), TF(F32, SH(2, 1), 1, 2)}, 1),
      RLX_ERR_SHAPE, "rank >= 2");
  krun_free(&r);
  CHECK_ERR(krun_op(&r, RLX_OP_MATMUL, &p, 2,
                    (tens[]){TF(F32, SH(2, 1, 1), 1, 2), TF(F32, SH(3, 1, 1), 1, 2, 3)}, 1),
            RLX_ERR_SHAPE, "broadcast");
  krun_free(&r);
  CHECK_ERR(
      krun_op(&r, RLX_OP_MATMUL, &p, 3,
              (tens[]){TF(F32, SH(1, 1), 1), TF(F32, SH(1, 2), 1, 2), TF(F32, SH(3), 1, 2, 3)}, 1),
      RLX_ERR_SHAPE, "bias");
  krun_free(&r);
}

/* ==== conv ==== */

/* Conv params: nd spatial dims, the same stride/pad/dilation on each. */
static rlx_params conv_params(int nd, int64_t stride, int64_t pad, int64_t dil, int64_t groups) {
  rlx_params p = {.conv = {.nd = nd, .groups = groups}};
  for (int i = 0; i < nd; i++) {
    p.conv.stride[i] = stride;
    p.conv.pad[i] = pad;
    p.conv.dilation[i] = dil;
  }
  return p;
}

/* 3x3 ones kernel, padding 1 on the 4x4 ramp: each output is the sum of the
 * input's 3x3 neighbourhood, e.g. out[0,0] = 0+1+4+5 = 10, out[1,1] = 45. */
TEST(conv2d_pad) {
  double xb[16];
  krun r;
  rlx_params p = conv_params(2, 1, 1, 1, 1);
  CHECK_OK(krun_op(&r, RLX_OP_CONV, &p, 2,
                   (tens[]){ramp(RLX_DTYPE_F32, SH(1, 1, 4, 4), xb, 16),
                            TF(F32, SH(1, 1, 3, 3), 1, 1, 1, 1, 1, 1, 1, 1, 1)},
                   1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 4, 4);
  CHECK_F(&r, 0, 0, 10, 18, 24, 18, 27, 45, 54, 39, 51, 81, 90, 63, 42, 66, 72, 50);
  krun_free(&r);
  /* f64, 2 in / 2 out channels, bias [1, -1]; w = ramp - 8 (torch F.conv2d) */
  double wb[16];
  for (int i = 0; i < 16; i++) wb[i] = i - 8;
  double xb2[18];
  p = conv_params(2, 1, 0, 1, 1);
  CHECK_OK(krun_op(&r, RLX_OP_CONV, &p, 3,
                   (tens[]){ramp(RLX_DTYPE_F64, SH(1, 2, 3, 3), xb2, 18),
                            (tens){RLX_DTYPE_F64, SH(2, 2, 2, 2), wb, NULL, 16},
                            TF(F64, SH(2), 1, -1)},
                   1));
  CHECK_SHAPE(&r, 0, F64, 1, 2, 2, 2);
  CHECK_F(&r, 0, 0, -147, -183, -255, -291, 267, 295, 351, 379);
  krun_free(&r);
}

/* stride 2, pad 1 on the 5x5 ramp with a 3x3 ramp kernel (torch F.conv2d). */
TEST(conv2d_stride) {
  double xb[25], wb[9];
  krun r;
  rlx_params p = conv_params(2, 2, 1, 1, 1);
  CHECK_OK(krun_op(&r, RLX_OP_CONV, &p, 2,
                   (tens[]){ramp(RLX_DTYPE_F32, SH(1, 1, 5, 5), xb, 25),
                            ramp(RLX_DTYPE_F32, SH(1, 1, 3, 3), wb, 9)},
                   1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 3, 3);
  CHECK_F(&r, 0, 0, 88, 175, 136, 345, 528, 345, 232, 319, 184);
  krun_free(&r);
}

/* dilation 2, w = [[1,2],[3,4]] on x[r][c] = 5r + c: out[i][j] = x[i][j] +
 * 2 x[i][j+2] + 3 x[i+2][j] + 4 x[i+2][j+2] = 50i + 10j + 82. */
TEST(conv2d_dilation) {
  double xb[25];
  krun r;
  rlx_params p = conv_params(2, 1, 0, 2, 1);
  CHECK_OK(krun_op(&r, RLX_OP_CONV, &p, 2,
                   (tens[]){ramp(RLX_DTYPE_F32, SH(1, 1, 5, 5), xb, 25),
                            TF(F32, SH(1, 1, 2, 2), 1, 2, 3, 4)},
                   1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 3, 3);
  CHECK_F(&r, 0, 0, 82, 92, 102, 132, 142, 152, 182, 192, 202);
  krun_free(&r);
}

/* depthwise (groups = channels = 2), x = ramp [1,2,3,3]: channel 0 with a
 * ones 2x2 kernel sums windows of 0..8 -> [8,12,20,24]; channel 1 with
 * [[1,0],[0,-1]] gives x[i][j] - x[i+1][j+1] = -4 everywhere. */
TEST(conv2d_depthwise) {
  double xb[18];
  krun r;
  rlx_params p = conv_params(2, 1, 0, 1, 2);
  CHECK_OK(krun_op(&r, RLX_OP_CONV, &p, 2,
                   (tens[]){ramp(RLX_DTYPE_F32, SH(1, 2, 3, 3), xb, 18),
                            TF(F32, SH(2, 1, 2, 2), 1, 1, 1, 1, 1, 0, 0, -1)},
                   1));
  CHECK_SHAPE(&r, 0, F32, 1, 2, 2, 2);
  CHECK_F(&r, 0, 0, 8, 12, 20, 24, -4, -4, -4, -4);
  krun_free(&r);
}

/* 1-D, pad 1, bias 0.5: channel 0 [1,2,3,4,5] * [1,0,-1] -> [-2,-2,-2,-2,4];
 * channel 1 [0,1,0,-1,0] * [2,2,2] -> [2,2,0,-2,-2]; sum + 0.5. */
TEST(conv1d_bias) {
  krun r;
  rlx_params p = conv_params(1, 1, 1, 1, 1);
  CHECK_OK(krun_op(&r, RLX_OP_CONV, &p, 3,
                   (tens[]){TF(F32, SH(1, 2, 5), 1, 2, 3, 4, 5, 0, 1, 0, -1, 0),
                            TF(F32, SH(1, 2, 3), 1, 0, -1, 2, 2, 2), TF(F32, SH(1), 0.5)},
                   1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 5);
  CHECK_F(&r, 0, 0, 0.5, 0.5, -1.5, -3.5, 2.5);
  krun_free(&r);
  /* batch of 2: the second item is the first doubled (conv is linear; the
   * bias is not doubled) */
  CHECK_OK(krun_op(
      &r, RLX_OP_CONV, &p, 3,
      (tens[]){TF(F32, SH(2, 2, 5), 1, 2, 3, 4, 5, 0, 1, 0, -1, 0, 2, 4, 6, 8, 10, 0, 2, 0, -2, 0),
               TF(F32, SH(1, 2, 3), 1, 0, -1, 2, 2, 2), TF(F32, SH(1), 0.5)},
      1));
  CHECK_SHAPE(&r, 0, F32, 2, 1, 5);
  CHECK_F(&r, 0, 0, 0.5, 0.5, -1.5, -3.5, 2.5, 0.5, 0.5, -3.5, -7.5, 4.5);
  krun_free(&r);
}

/* 3-D, ones 2x2x2 kernel on x = 9d + 3h + w (the 3x3x3 ramp): each output is
 * 8 x[d][h][w] + 4 (9 + 3 + 1) = 8 x + 52. */
TEST(conv3d) {
  double xb[27];
  krun r;
  rlx_params p = conv_params(3, 1, 0, 1, 1);
  CHECK_OK(krun_op(&r, RLX_OP_CONV, &p, 2,
                   (tens[]){ramp(RLX_DTYPE_F32, SH(1, 1, 3, 3, 3), xb, 27),
                            TF(F32, SH(1, 1, 2, 2, 2), 1, 1, 1, 1, 1, 1, 1, 1)},
                   1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 2, 2, 2);
  CHECK_F(&r, 0, 0, 52, 60, 76, 84, 124, 132, 148, 156);
  krun_free(&r);
}

/* Transposed 1-D: x = [1,2,3], ones kernel of 3, stride 2: x[i] is added at
 * 2i, 2i+1, 2i+2 -> [1,1,3,2,5,3,3] plus one output_padding zero. With
 * padding 1 the first and last positions are cropped. */
TEST(conv_transposed_1d) {
  krun r;
  rlx_params p = conv_params(1, 2, 0, 1, 1);
  p.conv.transposed = true;
  p.conv.out_pad[0] = 1;
  CHECK_OK(krun_op(&r, RLX_OP_CONV, &p, 2,
                   (tens[]){TF(F32, SH(1, 1, 3), 1, 2, 3), TF(F32, SH(1, 1, 3), 1, 1, 1)}, 1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 8);
  CHECK_F(&r, 0, 0, 1, 1, 3, 2, 5, 3, 3, 0);
  krun_free(&r);
  p.conv.pad[0] = 1;
  CHECK_OK(krun_op(&r, RLX_OP_CONV, &p, 2,
                   (tens[]){TF(F32, SH(1, 1, 3), 1, 2, 3), TF(F32, SH(1, 1, 3), 1, 1, 1)}, 1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 6);
  CHECK_F(&r, 0, 0, 1, 3, 2, 5, 3, 3);
  krun_free(&r);
}

/* Transposed 2-D, stride 3, output_padding 1: each x[i][j] stamps x * w at
 * (3i, 3j); row and column 2 are gaps, row and column 5 the output padding. */
TEST(conv_transposed_2d) {
  krun r;
  rlx_params p = conv_params(2, 3, 0, 1, 1);
  p.conv.transposed = true;
  p.conv.out_pad[0] = p.conv.out_pad[1] = 1;
  CHECK_OK(krun_op(&r, RLX_OP_CONV, &p, 2,
                   (tens[]){TF(F32, SH(1, 1, 2, 2), 1, 2, 3, 4),
                            TF(F32, SH(1, 1, 2, 2), 1, 10, 100, 1000)},
                   1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 6, 6);
  CHECK_F(&r, 0, 0,
          1, 10, 0, 2, 20, 0,
          100, 1000, 0, 200, 2000, 0,
          0, 0, 0, 0, 0, 0,
          3, 30, 0, 4, 40, 0,
          300, 3000, 0, 400, 4000, 0,
          0, 0, 0, 0, 0, 0);
  krun_free(&r);
  /* groups 2, stride 2, padding 1, output_padding 1, bias; x = ramp
   * [1,2,2,2], w = ramp - 5 [2,2,2,2] (torch F.conv_transpose2d) */
  double xb[8], wb[16];
  for (int i = 0; i < 16; i++) wb[i] = i - 5;
  p = conv_params(2, 2, 1, 1, 2);
  p.conv.transposed = true;
  p.conv.out_pad[0] = p.conv.out_pad[1] = 1;
  CHECK_OK(krun_op(&r, RLX_OP_CONV, &p, 3,
                   (tens[]){ramp(RLX_DTYPE_F32, SH(1, 2, 2, 2), xb, 8),
                            (tens){RLX_DTYPE_F32, SH(2, 2, 2, 2), wb, NULL, 16},
                            TF(F32, SH(4), 1, 2, 3, 4)},
                   1));
  CHECK_SHAPE(&r, 0, F32, 1, 4, 3, 3);
  CHECK_F(&r, 0, 0,
          1, -2, -1, -7, -14, -11, -3, -8, -5,
          2, 3, 4, 2, -1, 2, 6, 5, 8,
          27, 28, 33, 27, 24, 31, 39, 38, 45,
          44, 49, 54, 52, 53, 60, 64, 67, 74);
  krun_free(&r);
  /* groups 2 and dilation 2, no bias (torch F.conv_transpose2d) */
  p = conv_params(2, 1, 0, 2, 2);
  p.conv.transposed = true;
  CHECK_OK(krun_op(&r, RLX_OP_CONV, &p, 2,
                   (tens[]){ramp(RLX_DTYPE_F32, SH(1, 2, 2, 2), xb, 8),
                            (tens){RLX_DTYPE_F32, SH(2, 2, 2, 2), wb, NULL, 16}},
                   1));
  CHECK_SHAPE(&r, 0, F32, 1, 4, 4, 4);
  CHECK_F(&r, 0, 0,
          0, -5, 0, -4, -10, -15, -8, -12, 0, -3, 0, -2, -6, -9, -4, -6,
          0, -1, 0, 0, -2, -3, 0, 0, 0, 1, 0, 2, 2, 3, 4, 6,
          12, 15, 16, 20, 18, 21, 24, 28, 20, 25, 24, 30, 30, 35, 36, 42,
          28, 35, 32, 40, 42, 49, 48, 56, 36, 45, 40, 50, 54, 63, 60, 70);
  krun_free(&r);
}

TEST(conv_infer_errors) {
  double xb[48], wb[18];
  krun r;
  rlx_params p = conv_params(2, 1, 0, 1, 2);
  /* 3 input channels in 2 groups */
  CHECK_ERR(krun_op(&r, RLX_OP_CONV, &p, 2,
                    (tens[]){ramp(RLX_DTYPE_F32, SH(1, 3, 4, 4), xb, 48),
                             ramp(RLX_DTYPE_F32, SH(2, 1, 3, 3), wb, 18)},
                    1),
            RLX_ERR_SHAPE, "groups=2 do not divide 3");
  krun_free(&r);
  /* weight in-channels * groups != input channels */
  CHECK_ERR(krun_op(&r, RLX_OP_CONV, &p, 2,
                    (tens[]){ramp(RLX_DTYPE_F32, SH(1, 2, 4, 6), xb, 48),
                             ramp(RLX_DTYPE_F32, SH(1, 2, 3, 3), wb, 18)},
                    1),
            RLX_ERR_SHAPE, "does not fit");
  krun_free(&r);
  /* a rank-3 input to a 2-D conv */
  p = conv_params(2, 1, 0, 1, 1);
  CHECK_ERR(krun_op(&r, RLX_OP_CONV, &p, 2,
                    (tens[]){ramp(RLX_DTYPE_F32, SH(1, 4, 12), xb, 48),
                             ramp(RLX_DTYPE_F32, SH(2, 1, 3, 3), wb, 18)},
                    1),
            RLX_ERR_SHAPE, "rank");
  krun_free(&r);
  /* a kernel larger than the input */
  CHECK_ERR(krun_op(&r, RLX_OP_CONV, &p, 2,
                    (tens[]){ramp(RLX_DTYPE_F32, SH(1, 1, 2, 2), xb, 4),
                             ramp(RLX_DTYPE_F32, SH(2, 1, 3, 3), wb, 18)},
                    1),
            RLX_ERR_SHAPE, "output size");
  krun_free(&r);
  /* the same with stride 2: (2 - 3) / 2 must round down (torch rejects it) */
  rlx_params p1 = conv_params(1, 2, 0, 1, 1);
  CHECK_ERR(krun_op(&r, RLX_OP_CONV, &p1, 2,
                    (tens[]){TF(F32, SH(1, 1, 2), 1, 2), TF(F32, SH(1, 1, 3), 1, 1, 1)}, 1),
            RLX_ERR_SHAPE, "output size");
  krun_free(&r);
  /* bias of the wrong length, integer input */
  CHECK_ERR(krun_op(&r, RLX_OP_CONV, &p, 3,
                    (tens[]){ramp(RLX_DTYPE_F32, SH(1, 1, 3, 3), xb, 9),
                             ramp(RLX_DTYPE_F32, SH(2, 1, 3, 3), wb, 18), TF(F32, SH(3), 1, 2, 3)},
                    1),
            RLX_ERR_SHAPE, "bias");
  krun_free(&r);
  CHECK_ERR(krun_op(&r, RLX_OP_CONV, &p, 2,
                    (tens[]){ramp(RLX_DTYPE_I64, SH(1, 1, 3, 3), xb, 9),
                             ramp(RLX_DTYPE_I64, SH(2, 1, 3, 3), wb, 18)},
                    1),
            RLX_ERR_UNSUPPORTED, "f32 or f64");
  krun_free(&r);
}

/* ==== pooling ==== */

static rlx_params pool_params(rlx_pool_kind kind, int nd, int64_t k, int64_t s, int64_t pad,
                              int64_t dil) {
  rlx_params p = {.pool = {.kind = kind, .nd = nd}};
  for (int i = 0; i < nd; i++) {
    p.pool.kernel[i] = k;
    p.pool.stride[i] = s;
    p.pool.pad[i] = pad;
    p.pool.dilation[i] = dil;
  }
  return p;
}

static rlx_status pool(krun *r, const rlx_params *p, tens x, int n_out) {
  return krun_op(r, RLX_OP_POOL, p, 1, &x, n_out);
}

#define X44 TF(F32, SH(1, 1, 4, 4), 1, 5, 2, 0, 3, -1, 4, 8, 9, 7, 6, 6, 2, 0, -3, 1)

/* 2x2 stride 2 on X44: maxima 5, 8, 9, 6 at flat plane indices 1, 7, 8, 10
 * (the first of the two 6s, as torch). */
TEST(pool_max_basic) {
  krun r;
  rlx_params p = pool_params(RLX_POOL_MAX, 2, 2, 2, 0, 1);
  CHECK_OK(pool(&r, &p, X44, 2));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 2, 2);
  CHECK_SHAPE(&r, 1, I64, 1, 1, 2, 2);
  CHECK_F(&r, 0, 0, 5, 8, 9, 6);
  CHECK_I(&r, 1, 1, 7, 8, 10);
  krun_free(&r);
  /* dilation 2, kernel 2, stride 1: max of x[i][j], x[i][j+2], x[i+2][j],
   * x[i+2][j+2] -> 9 (8), 7 (9), 4 (6), 8 (7) */
  p = pool_params(RLX_POOL_MAX, 2, 2, 1, 0, 2);
  CHECK_OK(pool(&r, &p, X44, 2));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 2, 2);
  CHECK_F(&r, 0, 0, 9, 7, 4, 8);
  CHECK_I(&r, 1, 8, 9, 6, 7);
  krun_free(&r);
  /* i64 input, one output only, leading dims [2] (no batch axis) */
  p = pool_params(RLX_POOL_MAX, 1, 2, 2, 0, 1);
  CHECK_OK(pool(&r, &p, TI(I64, SH(2, 4), 1, 9, -3, -2, 5, 4, 7, 8), 1));
  CHECK_SHAPE(&r, 0, I64, 2, 2);
  CHECK_I(&r, 0, 9, -2, 5, 8);
  krun_free(&r);
}

/* kernel 3, stride 2, padding 1 on x = -(1..9): padding counts as -inf, so
 * the corner window gives -1 (not 0). */
TEST(pool_max_padding_nan) {
  krun r;
  rlx_params p = pool_params(RLX_POOL_MAX, 2, 3, 2, 1, 1);
  CHECK_OK(pool(&r, &p, TF(F32, SH(1, 1, 3, 3), -1, -2, -3, -4, -5, -6, -7, -8, -9), 2));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 2, 2);
  CHECK_F(&r, 0, 0, -1, -2, -4, -5);
  CHECK_I(&r, 1, 0, 1, 3, 4);
  krun_free(&r);
  /* NaN wins a window and keeps its index; a window of -inf gives -inf at
   * its first index (torch F.max_pool1d(return_indices=True)) */
  p = pool_params(RLX_POOL_MAX, 1, 3, 3, 0, 1);
  CHECK_OK(pool(&r, &p, TF(F32, SH(1, 6), 1, NAN, 5, -INF, -INF, -INF), 2));
  CHECK_F(&r, 0, 0, NAN, -INF);
  CHECK_I(&r, 1, 1, 3);
  krun_free(&r);
}

/* ceil_mode: on the 5x5 ramp with kernel 2 stride 2 the last window holds
 * one row/column: out = x at rows/cols {1, 3, 4}. */
TEST(pool_max_ceil_mode) {
  double xb[25];
  tens x55 = ramp(RLX_DTYPE_F32, SH(1, 1, 5, 5), xb, 25);
  krun r;
  rlx_params p = pool_params(RLX_POOL_MAX, 2, 2, 2, 0, 1);
  p.pool.ceil_mode = true;
  CHECK_OK(pool(&r, &p, x55, 2));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 3, 3);
  CHECK_F(&r, 0, 0, 6, 8, 9, 16, 18, 19, 21, 23, 24);
  CHECK_I(&r, 1, 6, 8, 9, 16, 18, 19, 21, 23, 24);
  krun_free(&r);
  p.pool.ceil_mode = false;
  CHECK_OK(pool(&r, &p, x55, 1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 2, 2);
  CHECK_F(&r, 0, 0, 6, 8, 16, 18);
  krun_free(&r);
  /* 1-D, in 3, kernel 2, stride 2, pad 1, ceil: a third window would start
   * in the right padding, so torch drops it: 2 outputs [1, 3] */
  p = pool_params(RLX_POOL_MAX, 1, 2, 2, 1, 1);
  p.pool.ceil_mode = true;
  CHECK_OK(pool(&r, &p, TF(F32, SH(1, 1, 3), 1, 2, 3), 1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 2);
  CHECK_F(&r, 0, 0, 1, 3);
  krun_free(&r);
}

/* avg, kernel 3, stride 2, pad 1 on the 4x4 ramp. Window sums: 10 (4 real
 * cells), 24 (6), 51 (6), 90 (9). */
TEST(pool_avg_padding) {
  double xb[16];
  tens x44 = ramp(RLX_DTYPE_F32, SH(1, 1, 4, 4), xb, 16);
  krun r;
  rlx_params p = pool_params(RLX_POOL_AVG, 2, 3, 2, 1, 1);
  p.pool.count_include_pad = true;
  CHECK_OK(pool(&r, &p, x44, 1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 2, 2);
  CHECK_F(&r, 0, 1e-7, 10 / 9.0, 24 / 9.0, 51 / 9.0, 10);
  krun_free(&r);
  p.pool.count_include_pad = false;
  CHECK_OK(pool(&r, &p, x44, 1));
  CHECK_F(&r, 0, 1e-7, 2.5, 4, 8.5, 10);
  krun_free(&r);
  p.pool.divisor_override = 2;
  CHECK_OK(pool(&r, &p, x44, 1));
  CHECK_F(&r, 0, 1e-7, 5, 12, 25.5, 45);
  krun_free(&r);
}

/* avg with ceil_mode: the partial last windows (torch F.avg_pool2d). With
 * count_include_pad the divisor counts padding but not the part of a window
 * past the padded input. */
TEST(pool_avg_ceil_mode) {
  double xb[16], xb5[25];
  tens x44 = ramp(RLX_DTYPE_F32, SH(1, 1, 4, 4), xb, 16);
  tens x55 = ramp(RLX_DTYPE_F32, SH(1, 1, 5, 5), xb5, 25);
  krun r;
  rlx_params p = pool_params(RLX_POOL_AVG, 2, 3, 2, 1, 1);
  p.pool.ceil_mode = true;
  p.pool.count_include_pad = true;
  CHECK_OK(pool(&r, &p, x44, 1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 3, 3);
  CHECK_F(&r, 0, 1e-7, 1.11111116, 2.66666675, 1.66666663, 5.66666651, 10, 5.5, 4.16666651, 7,
          3.75);
  krun_free(&r);
  p.pool.count_include_pad = false;
  CHECK_OK(pool(&r, &p, x44, 1));
  CHECK_F(&r, 0, 1e-7, 2.5, 4, 5, 8.5, 10, 11, 12.5, 14, 15);
  krun_free(&r);
  p = pool_params(RLX_POOL_AVG, 2, 2, 2, 0, 1);
  p.pool.ceil_mode = true;
  p.pool.count_include_pad = true;
  CHECK_OK(pool(&r, &p, x55, 1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 3, 3);
  CHECK_F(&r, 0, 1e-7, 3, 5, 6.5, 13, 15, 16.5, 20.5, 22.5, 24);
  krun_free(&r);
}

/* 1-D pools on [1,3,2,5,4,0]: max k2 s2 -> [3,5,4]; avg k3 s1 -> window
 * means [2, 10/3, 11/3, 3]. */
TEST(pool_1d) {
  krun r;
  rlx_params p = pool_params(RLX_POOL_MAX, 1, 2, 2, 0, 1);
  CHECK_OK(pool(&r, &p, TF(F32, SH(1, 1, 6), 1, 3, 2, 5, 4, 0), 2));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 3);
  CHECK_F(&r, 0, 0, 3, 5, 4);
  CHECK_I(&r, 1, 1, 3, 4);
  krun_free(&r);
  p = pool_params(RLX_POOL_AVG, 1, 3, 1, 0, 1);
  p.pool.count_include_pad = true;
  CHECK_OK(pool(&r, &p, TF(F32, SH(1, 1, 6), 1, 3, 2, 5, 4, 0), 1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 4);
  CHECK_F(&r, 0, 1e-7, 2, 10 / 3.0, 11 / 3.0, 3);
  krun_free(&r);
}

/* Adaptive pooling: window i spans [floor(i*in/out), ceil((i+1)*in/out)). */
TEST(pool_adaptive) {
  krun r;
  /* 5 -> 3: windows [0,2), [1,4), [3,5) */
  rlx_params p = {.adaptive_pool = {.kind = RLX_POOL_AVG, .nd = 1, .out = {3}}};
  CHECK_OK(krun_op(&r, RLX_OP_ADAPTIVE_POOL, &p, 1, (tens[]){TF(F32, SH(1, 1, 5), 1, 2, 3, 4, 5)},
                   1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 3);
  CHECK_F(&r, 0, 1e-7, 1.5, 3, 4.5);
  krun_free(&r);
  /* [1,4,5] ramp -> (3, 2) (torch F.adaptive_avg_pool2d) */
  double xb[20];
  p = (rlx_params){.adaptive_pool = {.kind = RLX_POOL_AVG, .nd = 2, .out = {3, 2}}};
  CHECK_OK(krun_op(&r, RLX_OP_ADAPTIVE_POOL, &p, 1,
                   (tens[]){ramp(RLX_DTYPE_F32, SH(1, 4, 5), xb, 20)}, 1));
  CHECK_SHAPE(&r, 0, F32, 1, 3, 2);
  CHECK_F(&r, 0, 1e-7, 3.5, 5.5, 8.5, 10.5, 13.5, 15.5);
  krun_free(&r);
  /* adaptive max with indices, [3,5] -> (2,3): row windows [0,2), [1,3);
   * column windows [0,2), [1,4), [3,5) (torch F.adaptive_max_pool2d) */
  p = (rlx_params){.adaptive_pool = {.kind = RLX_POOL_MAX, .nd = 2, .out = {2, 3}}};
  CHECK_OK(krun_op(&r, RLX_OP_ADAPTIVE_POOL, &p, 1,
                   (tens[]){TF(F32, SH(1, 1, 3, 5), 1, 5, 2, 0, 3, 3, -1, 4, 8, 2, 9, 7, 6, 6, 1)},
                   2));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 2, 3);
  CHECK_SHAPE(&r, 1, I64, 1, 1, 2, 3);
  CHECK_F(&r, 0, 0, 5, 8, 8, 9, 8, 8);
  CHECK_I(&r, 1, 1, 8, 8, 10, 8, 8);
  krun_free(&r);
}

TEST(pool_infer_errors) {
  krun r;
  rlx_params p = pool_params(RLX_POOL_MAX, 2, 3, 1, 2, 1); /* pad 2 > kernel 3 / 2 */
  CHECK_ERR(pool(&r, &p, X44, 1), RLX_ERR_SHAPE, "at most half");
  krun_free(&r);
  p = pool_params(RLX_POOL_MAX, 2, 5, 1, 0, 1); /* kernel larger than the input */
  CHECK_ERR(pool(&r, &p, X44, 1), RLX_ERR_SHAPE, "output size");
  krun_free(&r);
  p = pool_params(RLX_POOL_AVG, 2, 2, 2, 0, 1); /* avg pooling has no indices */
  CHECK_ERR(pool(&r, &p, X44, 2), RLX_ERR_SHAPE, "indices");
  krun_free(&r);
  CHECK_ERR(pool(&r, &p, TI(BOOL, SH(1, 2, 2), 1, 0, 1, 0), 1),
            RLX_ERR_UNSUPPORTED, "bool");
  krun_free(&r);
  /* integer averages truncate toward zero, as torch: (-3 + 2 + 0 + 0) / 4 -> 0, (-7 - 2) / 4 -> -2 */
  CHECK_OK(pool(&r, &p, TI(I64, SH(1, 2, 4), -3, 2, -7, -2, 0, 0, 0, 0), 1));
  CHECK_I(&r, 0, 0, -2);
  krun_free(&r);
  p = pool_params(RLX_POOL_MAX, 3, 1, 1, 0, 1); /* 3 spatial dims of a rank-3 input */
  CHECK_ERR(pool(&r, &p, TF(F32, SH(1, 2, 2), 1, 2, 3, 4), 1),
            RLX_ERR_SHAPE, "rank-3");
  krun_free(&r);
  rlx_params ap = {.adaptive_pool = {.kind = RLX_POOL_AVG, .nd = 1, .out = {0}}};
  CHECK_ERR(krun_op(&r, RLX_OP_ADAPTIVE_POOL, &ap, 1, (tens[]){TF(F32, SH(1, 2), 1, 2)}, 1),
            RLX_ERR_SHAPE, "output size");
  krun_free(&r);
}

TEST_MAIN(matmul_2d, matmul_batched_broadcast, matmul_trans_b_bias, matmul_alpha_beta,
          matmul_infer_errors, conv2d_pad, conv2d_stride, conv2d_dilation, conv2d_depthwise,
          conv1d_bias, conv3d, conv_transposed_1d, conv_transposed_2d, conv_infer_errors,
          pool_max_basic, pool_max_padding_nan, pool_max_ceil_mode, pool_avg_padding,
          pool_avg_ceil_mode, pool_1d, pool_adaptive, pool_infer_errors)
