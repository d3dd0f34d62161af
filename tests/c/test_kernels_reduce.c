/*
 * test_kernels_reduce.c — the reference kernels of reductions (sum, mean,
 * max, min, var, std, over int, bool and NaN inputs; argmax / argmin) and of
 * the ops that reduce along an axis: softmax, the normalizations (layer, rms,
 * group, batch) and attention (masks, GQA shapes), with their shape-inference
 * errors. Expected values were computed by hand or, where noted, with
 * PyTorch 2.15 on the CPU (f32 unless said otherwise). test_kernels.c covers
 * the elementwise ops, test_kernels_nn.c matmul, conv and pooling, and
 * test_kernels_movement.c data movement, indexing and creation.
 */
#include "kernel_test.h"

#define INF INFINITY

static rlx_status reduce(krun *r, rlx_reduce_kind kind, uint32_t axes, bool keepdim,
                         double correction, tens x) {
  rlx_params p = {.reduce = {.kind = kind, .axes = axes, .keepdim = keepdim,
                             .correction = correction}};
  return krun_op(r, RLX_OP_REDUCE, &p, 1, &x, 1);
}

/* ==== reduce ==== */

/* x = ramp [2,3,4], x[i][j][k] = 12i + 4j + k. */
TEST(reduce_sum_mean_max_min) {
  double xb[24];
  krun r;
  /* over axis 1: 3 (12i + k) + 12 */
  CHECK_OK(reduce(&r, RLX_REDUCE_SUM, 1u << 1, false, 0, ramp(RLX_DTYPE_F32, SH(2, 3, 4), xb, 24)));
  CHECK_SHAPE(&r, 0, F32, 2, 4);
  CHECK_F(&r, 0, 0, 12, 15, 18, 21, 48, 51, 54, 57);
  krun_free(&r);
  /* over axes 0 and 2, keepdim: 60 + 32j */
  CHECK_OK(reduce(&r, RLX_REDUCE_SUM, 5, true, 0, ramp(RLX_DTYPE_F32, SH(2, 3, 4), xb, 24)));
  CHECK_SHAPE(&r, 0, F32, 1, 3, 1);
  CHECK_F(&r, 0, 0, 60, 92, 124);
  krun_free(&r);
  /* over every axis: rank 0, 0 + 1 + ... + 23 = 276 */
  CHECK_OK(reduce(&r, RLX_REDUCE_SUM, 7, false, 0, ramp(RLX_DTYPE_F32, SH(2, 3, 4), xb, 24)));
  CHECK_SHAPE0(&r, 0, F32);
  CHECK_F(&r, 0, 0, 276);
  krun_free(&r);
  /* mean over axis 2: 12i + 4j + 1.5 */
  CHECK_OK(
      reduce(&r, RLX_REDUCE_MEAN, 1u << 2, false, 0, ramp(RLX_DTYPE_F32, SH(2, 3, 4), xb, 24)));
  CHECK_SHAPE(&r, 0, F32, 2, 3);
  CHECK_F(&r, 0, 0, 1.5, 5.5, 9.5, 13.5, 17.5, 21.5);
  krun_free(&r);
  /* max / min over axes 0 and 1, keepdim: 20 + k and k */
  CHECK_OK(reduce(&r, RLX_REDUCE_MAX, 3, true, 0, ramp(RLX_DTYPE_F32, SH(2, 3, 4), xb, 24)));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 4);
  CHECK_F(&r, 0, 0, 20, 21, 22, 23);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_MIN, 3, false, 0, ramp(RLX_DTYPE_F32, SH(2, 3, 4), xb, 24)));
  CHECK_SHAPE(&r, 0, F32, 4);
  CHECK_F(&r, 0, 0, 0, 1, 2, 3);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_PROD, 2, false, 0, TF(F32, SH(2, 4), 1, 2, 3, 4, -1, 0.5, 2, -2)));
  CHECK_F(&r, 0, 0, 24, 2);
  krun_free(&r);
  /* integers keep their dtype for max/min */
  CHECK_OK(reduce(&r, RLX_REDUCE_MAX, 2, false, 0, TI(I64, SH(2, 2), 5, -3, INT64_MIN, INT64_MAX)));
  CHECK_SHAPE(&r, 0, I64, 2);
  CHECK_I(&r, 0, 5, INT64_MAX);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_MIN, 1, false, 0, TI(I32, SH(2, 2), 5, -3, 2, 9)));
  CHECK_SHAPE(&r, 0, I32, 2);
  CHECK_I(&r, 0, 2, -3);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_NORM2, 1, false, 0, TF(F32, SH(2), 3, -4)));
  CHECK_F(&r, 0, 0, 5);
  krun_free(&r);
}

/* sum and prod of integers and bools give i64 (torch.sum); any/all give bool. */
TEST(reduce_int_bool) {
  krun r;
  CHECK_OK(reduce(&r, RLX_REDUCE_SUM, 1, false, 0, TI(I32, SH(2, 2), 1, 2, 3, INT32_MAX)));
  CHECK_SHAPE(&r, 0, I64, 2);
  CHECK_I(&r, 0, 4, 2147483649LL); /* no i32 wrap */
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_SUM, 1, false, 0, TI(BOOL, SH(4), 1, 0, 1, 1)));
  CHECK_SHAPE0(&r, 0, I64);
  CHECK_I(&r, 0, 3);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_PROD, 1, true, 0, TI(I8, SH(3), -2, 100, 3)));
  CHECK_SHAPE(&r, 0, I64, 1);
  CHECK_I(&r, 0, -600);
  krun_free(&r);
  /* any/all over rows; NaN is truthy */
  CHECK_OK(reduce(&r, RLX_REDUCE_ANY, 2, false, 0, TF(F32, SH(3, 2), 0, 0, 0, NAN, 1, 2)));
  CHECK_SHAPE(&r, 0, BOOL, 3);
  CHECK_I(&r, 0, 0, 1, 1);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_ALL, 2, false, 0, TF(F32, SH(3, 2), 0, 0, 0, NAN, 1, 2)));
  CHECK_SHAPE(&r, 0, BOOL, 3);
  CHECK_I(&r, 0, 0, 0, 1);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_ALL, 1, true, 0, TI(BOOL, SH(2, 2), 1, 0, 1, 1)));
  CHECK_SHAPE(&r, 0, BOOL, 1, 2);
  CHECK_I(&r, 0, 1, 0);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_ANY, 1, false, 0, TI(I64, SH(3), 0, 0, -5)));
  CHECK_SHAPE0(&r, 0, BOOL);
  CHECK_I(&r, 0, 1);
  krun_free(&r);
}

/* var/std of [1,2,3,4]: mean 2.5, sum of squares 5 -> var 5/4 (correction 0)
 * or 5/3 (correction 1). One element with correction 1 is NaN (torch). */
TEST(reduce_var_std) {
  krun r;
  CHECK_OK(reduce(&r, RLX_REDUCE_VAR, 1, false, 0, TF(F32, SH(4), 1, 2, 3, 4)));
  CHECK_F(&r, 0, 1e-7, 1.25);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_VAR, 1, false, 1, TF(F32, SH(4), 1, 2, 3, 4)));
  CHECK_F(&r, 0, 1e-7, 5.0 / 3.0);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_STD, 1, false, 0, TF(F32, SH(4), 1, 2, 3, 4)));
  CHECK_F(&r, 0, 1e-7, sqrt(1.25));
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_STD, 1, false, 1, TF(F32, SH(4), 1, 2, 3, 4)));
  CHECK_F(&r, 0, 1e-7, sqrt(5.0 / 3.0));
  krun_free(&r);
  /* rows of [[1,2,4],[3,5,10]], correction 1 (torch.var): 7/3 and 13 */
  CHECK_OK(reduce(&r, RLX_REDUCE_VAR, 2, false, 1, TF(F32, SH(2, 3), 1, 2, 4, 3, 5, 10)));
  CHECK_F(&r, 0, 1e-7, 7.0 / 3.0, 13);
  krun_free(&r);
  /* columns, correction 0, keepdim (torch.std): |a - b| / 2 */
  CHECK_OK(reduce(&r, RLX_REDUCE_STD, 1, true, 0, TF(F32, SH(2, 3), 1, 2, 4, 3, 5, 10)));
  CHECK_SHAPE(&r, 0, F32, 1, 3);
  CHECK_F(&r, 0, 1e-7, 1, 1.5, 3);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_VAR, 1, false, 1, TF(F32, SH(1), 3)));
  CHECK_F(&r, 0, 0, NAN);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_STD, 1, false, 1, TF(F64, SH(1), 3)));
  CHECK_F(&r, 0, 0, NAN);
  krun_free(&r);
}

/* logsumexp (torch): an all -inf row is -inf, +inf stays inf, no overflow
 * for large values; nansum skips NaN; max/min of a row with NaN is NaN. */
TEST(reduce_nan_inf) {
  krun r;
  CHECK_OK(reduce(&r, RLX_REDUCE_LOGSUMEXP, 2, false, 0,
                  TF(F32, SH(4, 2), -INF, -INF, 1, 2, INF, 1, 1000, 1000)));
  CHECK_F(&r, 0, 1e-7, -INF, 2.31326175, INF, 1000.69318);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_NANSUM, 1, false, 0, TF(F32, SH(3), 1, NAN, 2)));
  CHECK_F(&r, 0, 0, 3);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_SUM, 1, false, 0, TF(F32, SH(3), 1, NAN, 2)));
  CHECK_F(&r, 0, 0, NAN);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_MAX, 1, false, 0, TF(F32, SH(3), 1, NAN, 3)));
  CHECK_F(&r, 0, 0, NAN);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_MIN, 1, false, 0, TF(F32, SH(3), NAN, -1, 3)));
  CHECK_F(&r, 0, 0, NAN);
  krun_free(&r);
  CHECK_OK(reduce(&r, RLX_REDUCE_MAX, 1, false, 0, TF(F32, SH(2), -INF, -INF)));
  CHECK_F(&r, 0, 0, -INF);
  krun_free(&r);
}

TEST(reduce_infer_errors) {
  krun r;
  CHECK_ERR(reduce(&r, RLX_REDUCE_MEAN, 1, false, 0, TI(I64, SH(2), 1, 2)), RLX_ERR_UNSUPPORTED,
            "mean needs a float");
  krun_free(&r);
  CHECK_ERR(reduce(&r, RLX_REDUCE_SUM, 4, false, 0, TF(F32, SH(2, 1), 1, 2)), RLX_ERR_SHAPE,
            "exceeds rank");
  krun_free(&r);
  CHECK_ERR(reduce(&r, RLX_REDUCE_MAX, 2, false, 0, (tens){RLX_DTYPE_F32, SH(2, 0), NULL,
                                                            (const int64_t[]){0}, 0}),
            RLX_ERR_SHAPE, "empty axis");
  krun_free(&r);
}

static rlx_status argred(krun *r, bool is_max, int axis, bool keepdim, tens x) {
  rlx_params p = {.arg_reduce = {.is_max = is_max, .axis = axis, .keepdim = keepdim}};
  return krun_op(r, RLX_OP_ARG_REDUCE, &p, 1, &x, 1);
}

/* argmax/argmin (torch): the first of equal values, the first NaN wins;
 * axis -1 means the flattened tensor. */
TEST(arg_reduce) {
  krun r;
  CHECK_OK(argred(&r, true, -1, false, TF(F32, SH(4), 1, NAN, 3, NAN)));
  CHECK_SHAPE0(&r, 0, I64);
  CHECK_I(&r, 0, 1);
  krun_free(&r);
  CHECK_OK(argred(&r, false, -1, false, TF(F32, SH(4), 1, 0, 0, NAN)));
  CHECK_I(&r, 0, 3);
  krun_free(&r);
  CHECK_OK(argred(&r, false, -1, false, TF(F32, SH(3), 1, 0, 0)));
  CHECK_I(&r, 0, 1);
  krun_free(&r);
  CHECK_OK(argred(&r, true, -1, false, TF(F32, SH(2), 5, 5)));
  CHECK_I(&r, 0, 0);
  krun_free(&r);
#define X TF(F32, SH(2, 3), 1, 7, 7, 9, 2, 9)
  CHECK_OK(argred(&r, true, 1, false, X));
  CHECK_SHAPE(&r, 0, I64, 2);
  CHECK_I(&r, 0, 1, 0);
  krun_free(&r);
  CHECK_OK(argred(&r, true, 0, false, X));
  CHECK_SHAPE(&r, 0, I64, 3);
  CHECK_I(&r, 0, 1, 0, 1);
  krun_free(&r);
  CHECK_OK(argred(&r, false, 1, true, X));
  CHECK_SHAPE(&r, 0, I64, 2, 1);
  CHECK_I(&r, 0, 0, 1);
  krun_free(&r);
  CHECK_OK(argred(&r, true, -1, false, X)); /* flattened: the first 9, flat index 3 */
  CHECK_SHAPE0(&r, 0, I64);
  CHECK_I(&r, 0, 3);
  krun_free(&r);
  CHECK_OK(argred(&r, true, -1, true, X));
  CHECK_SHAPE(&r, 0, I64, 1, 1);
  CHECK_I(&r, 0, 3);
  krun_free(&r);
#undef X
  /* int64 beyond 2^53 compares exactly (torch.argmax) */
  CHECK_OK(argred(&r, true, 0, false, TI(I64, SH(2), 9007199254740992LL, 9007199254740993LL)));
  CHECK_I(&r, 0, 1);
  krun_free(&r);
  CHECK_OK(argred(&r, false, 0, false, TI(I64, SH(2), 9007199254740993LL, 9007199254740992LL)));
  CHECK_I(&r, 0, 1);
  krun_free(&r);
  CHECK_ERR(argred(&r, true, 2, false, TF(F32, SH(2, 1), 1, 2)), RLX_ERR_SHAPE, "out of range");
  krun_free(&r);
}

/* ==== softmax ==== */

/* Along the middle axis of [2,3,2] (torch.softmax / log_softmax, dim=1); the
 * column of all -inf gives NaN, as torch. */
TEST(softmax) {
  krun r;
#define X TF(F32, SH(2, 3, 2), 1, 2, 3, -1, 0, 5, -INF, 1, -INF, 1, -INF, 1)
  rlx_params p = {.softmax = {.axis = 1}};
  CHECK_OK(krun_op(&r, RLX_OP_SOFTMAX, &p, 1, (tens[]){X}, 1));
  CHECK_SHAPE(&r, 0, F32, 2, 3, 2);
  CHECK_F(&r, 0, 1e-6, 0.114195198, 0.0473141558, 0.843794703, 0.0023556333, 0.0420100652,
          0.950330257, NAN, 1 / 3.0, NAN, 1 / 3.0, NAN, 1 / 3.0);
  krun_free(&r);
  p.softmax.log = true;
  CHECK_OK(krun_op(&r, RLX_OP_SOFTMAX, &p, 1, (tens[]){X}, 1));
  CHECK_F(&r, 0, 1e-6, -2.16984606, -3.05094576, -0.169846043, -6.05094576, -3.16984606,
          -0.0509457104, NAN, -1.09861231, NAN, -1.09861231, NAN, -1.09861231);
  krun_free(&r);
#undef X
  /* large values do not overflow (the row max is subtracted) */
  p = (rlx_params){.softmax = {.axis = 0}};
  CHECK_OK(krun_op(&r, RLX_OP_SOFTMAX, &p, 1, (tens[]){TF(F32, SH(2), 1000, 1000)}, 1));
  CHECK_F(&r, 0, 0, 0.5, 0.5);
  krun_free(&r);
  CHECK_ERR(krun_op(&r, RLX_OP_SOFTMAX, &p, 1, (tens[]){TI(I64, SH(2), 1, 2)}, 1),
            RLX_ERR_UNSUPPORTED, "float");
  krun_free(&r);
  p.softmax.axis = 1;
  CHECK_ERR(krun_op(&r, RLX_OP_SOFTMAX, &p, 1, (tens[]){TF(F32, SH(2), 1, 2)}, 1), RLX_ERR_SHAPE,
            "axis 1");
  krun_free(&r);
}

/* ==== normalization ==== */

/* F.layer_norm, eps 1e-5 */
TEST(layer_norm) {
  krun r;
  rlx_params p = {.norm = {.n_axes = 1, .eps = 1e-5}};
#define X TF(F32, SH(2, 3), 1, 2, 3, 2, 2, 5)
  CHECK_OK(krun_op(&r, RLX_OP_LAYER_NORM, &p, 3,
                   (tens[]){X, TF(F32, SH(3), 1, 2, -1), TF(F32, SH(3), 0, 1, 0.5)}, 1));
  CHECK_SHAPE(&r, 0, F32, 2, 3);
  CHECK_F(&r, 0, 1e-6, -1.22473562, 1, -0.724735618, -0.707104981, -0.414209962, -0.914209962);
  krun_free(&r);
  CHECK_OK(krun_op(&r, RLX_OP_LAYER_NORM, &p, 3, (tens[]){X, ABSENT, ABSENT}, 1));
  CHECK_F(&r, 0, 1e-6, -1.22473562, 0, 1.22473562, -0.707104981, -0.707104981, 1.41420996);
  krun_free(&r);
  CHECK_OK(krun_op(&r, RLX_OP_LAYER_NORM, &p, 1, (tens[]){X}, 1)); /* optional inputs left off */
  CHECK_F(&r, 0, 1e-6, -1.22473562, 0, 1.22473562, -0.707104981, -0.707104981, 1.41420996);
  krun_free(&r);
#undef X
  /* over the 2 trailing axes of x = ramp^2 [2,2,2], weight [2,2], no bias */
  p.norm.n_axes = 2;
  CHECK_OK(krun_op(&r, RLX_OP_LAYER_NORM, &p, 3,
                   (tens[]){TF(F32, SH(2, 2, 2), 0, 1, 4, 9, 16, 25, 36, 49),
                            TF(F32, SH(2, 2), 1, 2, 3, 4), ABSENT},
                   1));
  CHECK_SHAPE(&r, 0, F32, 2, 2, 2);
  CHECK_F(&r, 0, 1e-6, -0.999999642, -1.42857087, 0.428571284, 6.28571177, -1.25618327,
          -1.05357313, 1.09409511, 5.67308617);
  krun_free(&r);
  CHECK_ERR(krun_op(&r, RLX_OP_LAYER_NORM, &p, 2,
                    (tens[]){TF(F32, SH(2, 2, 2), 0, 1, 4, 9, 16, 25, 36, 49),
                             TF(F32, SH(2), 1, 2)},
                    1),
            RLX_ERR_SHAPE, "weight");
  krun_free(&r);
  p.norm.n_axes = 3;
  CHECK_ERR(krun_op(&r, RLX_OP_LAYER_NORM, &p, 1, (tens[]){TF(F32, SH(2, 2), 0, 1, 4, 9)}, 1),
            RLX_ERR_SHAPE, "trailing axes");
  krun_free(&r);
}

/* F.rms_norm, eps 1e-6: x / sqrt(mean(x^2) + eps) * w; row [1,2] has
 * mean square 2.5, row [3,-4] 12.5. */
TEST(rms_norm) {
  krun r;
  rlx_params p = {.norm = {.n_axes = 1, .eps = 1e-6}};
  CHECK_OK(krun_op(&r, RLX_OP_RMS_NORM, &p, 2,
                   (tens[]){TF(F32, SH(2, 2), 1, 2, 3, -4), TF(F32, SH(2), 1, 0.5)}, 1));
  CHECK_SHAPE(&r, 0, F32, 2, 2);
  CHECK_F(&r, 0, 1e-6, 0.632455409, 0.632455409, 0.848528087, -0.565685391);
  krun_free(&r);
  CHECK_OK(
      krun_op(&r, RLX_OP_RMS_NORM, &p, 2, (tens[]){TF(F32, SH(2, 2), 1, 2, 3, -4), ABSENT}, 1));
  CHECK_F(&r, 0, 1e-6, 0.632455409, 1.26491082, 0.848528087, -1.13137078);
  krun_free(&r);
}

/* F.group_norm, eps 1e-5. One group over [1,2,3,4]: mean 2.5, variance 1.25
 * -> [-1.5, -0.5, 0.5, 1.5] / sqrt(1.25 + 1e-5). */
TEST(group_norm) {
  krun r;
  rlx_params p = {.norm = {.groups = 1, .eps = 1e-5}};
  CHECK_OK(krun_op(&r, RLX_OP_GROUP_NORM, &p, 1, (tens[]){TF(F32, SH(1, 4, 1), 1, 2, 3, 4)}, 1));
  CHECK_SHAPE(&r, 0, F32, 1, 4, 1);
  double s = sqrt(1.25 + 1e-5);
  CHECK_F(&r, 0, 1e-6, -1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s);
  krun_free(&r);
  /* 2 groups of 2 channels x 2 positions, with weight and bias */
  p.norm.groups = 2;
  CHECK_OK(krun_op(&r, RLX_OP_GROUP_NORM, &p, 3,
                   (tens[]){TF(F32, SH(1, 4, 2), 1, 2, 3, 4, 0, 0, 1, 5),
                            TF(F32, SH(4), 1, 2, 3, 4), TF(F32, SH(4), 0, 0, 1, 1)},
                   1));
  CHECK_F(&r, 0, 1e-6, -1.34163535, -0.447211742, 0.894423723, 2.68327093, -1.18281817,
          -1.18281817, 0.0298585892, 7.79098988);
  krun_free(&r);
  p.norm.groups = 3;
  CHECK_ERR(krun_op(&r, RLX_OP_GROUP_NORM, &p, 1, (tens[]){TF(F32, SH(1, 4, 1), 1, 2, 3, 4)}, 1),
            RLX_ERR_SHAPE, "3 groups do not divide 4");
  krun_free(&r);
}

/* batch_norm with running statistics, eps 0: (x - mean) / sqrt(var) * w + b
 * with mean [1,-1], var [4, 0.25], w [2,1], b [0,1]. */
TEST(batch_norm) {
  krun r;
  rlx_params p = {.norm = {.eps = 0}};
  tens mean = TF(F32, SH(2), 1, -1), var = TF(F32, SH(2), 4, 0.25);
  CHECK_OK(krun_op(&r, RLX_OP_BATCH_NORM, &p, 5,
                   (tens[]){TF(F32, SH(2, 2, 1), 1, 2, 3, -1), mean, var, TF(F32, SH(2), 2, 1),
                            TF(F32, SH(2), 0, 1)},
                   1));
  CHECK_SHAPE(&r, 0, F32, 2, 2, 1);
  CHECK_F(&r, 0, 1e-7, 0, 7, 2, 1);
  krun_free(&r);
  /* no weight or bias; eps 1e-5 (F.batch_norm(training=False)) */
  p.norm.eps = 1e-5;
  CHECK_OK(krun_op(&r, RLX_OP_BATCH_NORM, &p, 3, (tens[]){TF(F32, SH(1, 2), 3, 0), mean, var}, 1));
  CHECK_F(&r, 0, 1e-6, 2 / sqrt(4 + 1e-5), 1 / sqrt(0.25 + 1e-5));
  krun_free(&r);
  CHECK_ERR(krun_op(&r, RLX_OP_BATCH_NORM, &p, 3,
                    (tens[]){TF(F32, SH(1, 2), 3, 0), TF(F32, SH(3), 1, 2, 3), var}, 1),
            RLX_ERR_SHAPE, "running_mean");
  krun_free(&r);
  CHECK_ERR(krun_op(&r, RLX_OP_BATCH_NORM, &p, 3, (tens[]){TI(I64, SH(1, 1), 3), TI(I64, SH(1), 1),
                                                            TI(I64, SH(1), 1)},
                    1),
            RLX_ERR_UNSUPPORTED, "float");
  krun_free(&r);
}

/* ==== attention ==== */

static rlx_status attn(krun *r, bool causal, double scale, tens q, tens k, tens v, tens mask) {
  rlx_params p = {.attention = {.causal = causal, .scale = scale}};
  return krun_op(r, RLX_OP_ATTENTION, &p, 4, (tens[]){q, k, v, mask}, 1);
}

/* L = S = 2, E = 1: q = [1,2], k = [1,-1], v = [10,20]. Scores row 0:
 * [1,-1] -> weights sigmoid(2) = 0.8808, 0.1192 -> 11.19203; row 1: [2,-2]
 * -> 10.17986 (F.scaled_dot_product_attention for each case). */
TEST(attention_basic) {
  krun r;
#define Q TF(F32, SH(1, 1, 2, 1), 1, 2)
#define K TF(F32, SH(1, 1, 2, 1), 1, -1)
#define V TF(F32, SH(1, 1, 2, 1), 10, 20)
  CHECK_OK(attn(&r, false, 0, Q, K, V, ABSENT));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 2, 1);
  CHECK_F(&r, 0, 1e-6, 11.192028, 10.179862);
  krun_free(&r);
  /* causal: query 0 sees key 0 only */
  CHECK_OK(attn(&r, true, 0, Q, K, V, ABSENT));
  CHECK_F(&r, 0, 1e-6, 10, 10.179862);
  krun_free(&r);
  /* scale 0.5: row 0 scores [0.5, -0.5] -> 10 + 10 sigmoid(-1) */
  CHECK_OK(attn(&r, false, 0.5, Q, K, V, ABSENT));
  CHECK_F(&r, 0, 1e-6, 12.689415, 11.192028);
  krun_free(&r);
  /* additive float mask [[0,1],[0,0]]: row 0 scores [1, 0] */
  CHECK_OK(attn(&r, false, 0, Q, K, V, TF(F32, SH(2, 2), 0, 1, 0, 0)));
  CHECK_F(&r, 0, 1e-6, 12.689415, 10.179862);
  krun_free(&r);
}

/* Masks that remove every key of a row give zeros (torch's _safe_softmax). */
TEST(attention_masks) {
  krun r;
  /* bool mask (true = attend): row 0 fully masked, row 1 sees key 1 only */
  CHECK_OK(attn(&r, false, 0, Q, K, V, TI(BOOL, SH(2, 2), 0, 0, 1, 0)));
  CHECK_F(&r, 0, 0, 0, 10);
  krun_free(&r);
  /* float mask with -inf */
  CHECK_OK(attn(&r, false, 0, Q, K, V, TF(F32, SH(1, 1, 2, 2), -INF, -INF, 0.5, -INF)));
  CHECK_F(&r, 0, 0, 0, 10);
  krun_free(&r);
  /* a bool mask combined with causal: row 1 keeps key 0 only */
  CHECK_OK(attn(&r, true, 0, Q, K, V, TI(BOOL, SH(1, 2), 1, 0)));
  CHECK_F(&r, 0, 0, 10, 10);
  krun_free(&r);
}

TEST(attention_gqa_shapes) {
  krun r;
  /* Hq = 2, Hk = 1: both query heads use the one k/v head */
  CHECK_OK(attn(&r, false, 0, TF(F32, SH(1, 2, 2, 1), 1, 2, -1, 0.5), K, V, ABSENT));
  CHECK_SHAPE(&r, 0, F32, 1, 2, 2, 1);
  CHECK_F(&r, 0, 1e-6, 11.192028, 10.179862, 18.80797, 12.689415);
  krun_free(&r);
#undef Q
#undef K
#undef V
  /* L = 3, S = 2, E = 2, Ev = 3, scale 1/sqrt(2); a [1,2] all-true mask,
   * then causal (top-left: query 0 sees key 0) */
#define Q TF(F32, SH(1, 1, 3, 2), 1, 0, 0, 1, 1, 1)
#define K TF(F32, SH(1, 1, 2, 2), 1, 2, 0, -1)
#define V TF(F32, SH(1, 1, 2, 3), 1, 2, 3, -1, 0, 4)
  CHECK_OK(attn(&r, false, 0, Q, K, V, TI(BOOL, SH(1, 2), 1, 1)));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 3, 3);
  CHECK_F(&r, 0, 1e-6, 0.339523107, 1.33952308, 3.33023834, 0.785916388, 1.78591633, 3.1070416,
          0.888385534, 1.88838553, 3.05580711);
  krun_free(&r);
  CHECK_OK(attn(&r, true, 0, Q, K, V, ABSENT));
  CHECK_F(&r, 0, 1e-6, 1, 2, 3, 0.785916388, 1.78591633, 3.1070416, 0.888385534, 1.88838553,
          3.05580711);
  krun_free(&r);
  /* f64 through the same path */
  CHECK_OK(attn(&r, false, 0, TF(F64, SH(1, 2, 1), 1, 2), TF(F64, SH(1, 2, 1), 1, -1),
                TF(F64, SH(1, 2, 1), 10, 20), ABSENT));
  CHECK_SHAPE(&r, 0, F64, 1, 2, 1);
  CHECK_F(&r, 0, 1e-12, 10 + 10 / (1 + exp(2.0)), 10 + 10 / (1 + exp(4.0)));
  krun_free(&r);
  /* infer errors */
  CHECK_ERR(attn(&r, false, 0, TF(F32, SH(1, 3, 1, 1), 1, 2, 3), TF(F32, SH(1, 2, 1, 1), 1, 2),
                 TF(F32, SH(1, 2, 1, 1), 1, 2), ABSENT),
            RLX_ERR_SHAPE, "multiple of kv heads");
  krun_free(&r);
  CHECK_ERR(attn(&r, false, 0, Q, TF(F32, SH(1, 1, 2, 1), 1, 2), V, ABSENT), RLX_ERR_SHAPE,
            "head dims differ");
  krun_free(&r);
  CHECK_ERR(attn(&r, false, 0, Q, K, V, TI(BOOL, SH(3), 1, 1, 1)), RLX_ERR_SHAPE, "mask");
  krun_free(&r);
  CHECK_ERR(attn(&r, false, 0, Q, K, V, TI(I64, SH(1, 2), 1, 1)), RLX_ERR_SHAPE, "mask");
  krun_free(&r);
#undef Q
#undef K
#undef V
}

TEST_MAIN(reduce_sum_mean_max_min, reduce_int_bool, reduce_var_std, reduce_nan_inf,
          reduce_infer_errors, arg_reduce, softmax, layer_norm, rms_norm, group_norm, batch_norm,
          attention_basic, attention_masks, attention_gqa_shapes)
