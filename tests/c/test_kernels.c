/*
 * test_kernels.c — the reference kernels of the elementwise ops (unary,
 * binary, where, cast) on small vectors whose
 * expected values were computed by hand or, where noted, with PyTorch 2.15
 * on the CPU (torch.nn.functional; f32 unless said otherwise). Each run also
 * exercises the op's shape inference; infer error cases are at the end of
 * each group. test_kernels_nn.c, test_kernels_reduce.c and
 * test_kernels_movement.c cover the other ops.
 */
#include "kernel_test.h"

#define INF INFINITY

/* Runs unary `kind` with scalars a, b, c on one tensor; returns the status. */
static rlx_status unary(krun *r, rlx_unary_kind kind, double a, double b, double c, tens x) {
  rlx_params p = {.unary = {.kind = kind, .a = a, .b = b, .c = c}};
  return krun_op(r, RLX_OP_UNARY, &p, 1, &x, 1);
}

static rlx_status binary(krun *r, rlx_binary_kind kind, tens a, tens b) {
  rlx_params p = {.binary = {.kind = kind}};
  return krun_op(r, RLX_OP_BINARY, &p, 2, (tens[]){a, b}, 1);
}

/* ==== unary ==== */

/* torch: F.gelu, F.gelu(approximate="tanh"), F.silu, torch.sigmoid, relu */
TEST(unary_activations) {
  krun r;
#define X5 TF(F32, SH(5), -2, -0.5, 0, 0.5, 2)
  CHECK_OK(unary(&r, RLX_UNARY_GELU, 0, 0, 0, X5));
  CHECK_SHAPE(&r, 0, F32, 5);
  CHECK_F(&r, 0, 1e-6, -0.0455002785, -0.154268771, 0, 0.345731229, 1.95449972);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_GELU_TANH, 0, 0, 0, X5));
  CHECK_F(&r, 0, 1e-6, -0.0454022884, -0.154285997, 0, 0.345714003, 1.95459771);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_SILU, 0, 0, 0, X5));
  CHECK_F(&r, 0, 1e-6, -0.238405839, -0.188770339, 0, 0.311229676, 1.76159406);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_SIGMOID, 0, 0, 0, X5));
  CHECK_F(&r, 0, 1e-6, 0.119202919, 0.377540678, 0.5, 0.622459352, 0.880797029);
  krun_free(&r);
#undef X5
  /* relu passes NaN through; -inf -> 0 */
  CHECK_OK(unary(&r, RLX_UNARY_RELU, 0, 0, 0, TF(F32, SH(5), NAN, -INF, INF, -1, 3)));
  CHECK_F(&r, 0, 0, NAN, 0, INF, 0, 3);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_RELU, 0, 0, 0, TI(I64, SH(3), -5, 0, 9)));
  CHECK_SHAPE(&r, 0, I64, 3);
  CHECK_I(&r, 0, 0, 0, 9);
  krun_free(&r);
}

/* exp(88.8) overflows f32 (computed in double, rounds to inf); log(e) in
 * f32 is 0.99999994 as in torch; rsqrt(0) = inf, rsqrt(-1) = NaN. */
TEST(unary_exp_log_rsqrt) {
  krun r;
  CHECK_OK(unary(&r, RLX_UNARY_EXP, 0, 0, 0, TF(F32, SH(4), 0, 1, -1, 88.8)));
  CHECK_F(&r, 0, 1e-7, 1, 2.71828175, 0.36787945, INF);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_LOG, 0, 0, 0, TF(F32, SH(4), 1, M_E, 0, -1)));
  CHECK_F(&r, 0, 1e-7, 0, 0.99999994, -INF, NAN);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_RSQRT, 0, 0, 0, TF(F32, SH(4), 4, 0.25, 0, -1)));
  CHECK_F(&r, 0, 0, 0.5, 2, INF, NAN);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_TANH, 0, 0, 0, TF(F32, SH(2), -1, 0.5)));
  CHECK_F(&r, 0, 1e-7, -0.761594176, 0.462117165);
  krun_free(&r);
}

/* floor/ceil/round/trunc/frac; round is half-to-even (torch.round). */
TEST(unary_rounding) {
  krun r;
#define XR TF(F32, SH(8), -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7, -2.7)
  CHECK_OK(unary(&r, RLX_UNARY_FLOOR, 0, 0, 0, XR));
  CHECK_F(&r, 0, 0, -3, -2, -1, 0, 1, 2, 2, -3);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_CEIL, 0, 0, 0, XR));
  CHECK_F(&r, 0, 0, -2, -1, -0.0, 1, 2, 3, 3, -2);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_ROUND, 0, 0, 0, XR));
  CHECK_F(&r, 0, 0, -2, -2, -0.0, 0, 2, 2, 3, -3);
  CHECK(signbit(kt_f(&r, 0, 2))); /* round(-0.5) = -0 */
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_TRUNC, 0, 0, 0, XR));
  CHECK_F(&r, 0, 0, -2, -1, -0.0, 0, 1, 2, 2, -2);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_FRAC, 0, 0, 0, XR)); /* torch.frac in f32 */
  CHECK_F(&r, 0, 1e-7, -0.5, -0.5, -0.5, 0.5, 0.5, 0.5, 0.700000048, -0.700000048);
  krun_free(&r);
#undef XR
  /* identity on integers */
  CHECK_OK(unary(&r, RLX_UNARY_ROUND, 0, 0, 0, TI(I32, SH(2), -3, 4)));
  CHECK_I(&r, 0, -3, 4);
  krun_free(&r);
}

/* sign: torch.sign(NaN) is 0; abs/neg of INT64_MIN wrap to INT64_MIN
 * (torch.abs / torch.neg on int64). */
TEST(unary_sign_abs_neg) {
  krun r;
  CHECK_OK(unary(&r, RLX_UNARY_SIGN, 0, 0, 0, TF(F32, SH(5), NAN, -3, 0, 2, -INF)));
  CHECK_F(&r, 0, 0, 0, -1, 0, 1, -1);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_SIGN, 0, 0, 0, TI(I64, SH(3), -7, 0, 7)));
  CHECK_I(&r, 0, -1, 0, 1);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_ABS, 0, 0, 0, TI(I64, SH(4), INT64_MIN, -5, 0, 7)));
  CHECK_I(&r, 0, INT64_MIN, 5, 0, 7);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_NEG, 0, 0, 0, TI(I64, SH(4), INT64_MIN, -5, 0, 7)));
  CHECK_I(&r, 0, INT64_MIN, 5, 0, -7);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_ABS, 0, 0, 0, TF(F32, SH(2), -0.0, -2.5)));
  CHECK_F(&r, 0, 0, 0, 2.5);
  CHECK(!signbit(kt_f(&r, 0, 0)));
  krun_free(&r);
}

/* bitwise_not, logical_not, isnan, isinf: predicates output bool. */
TEST(unary_bitwise_logical) {
  krun r;
  CHECK_OK(unary(&r, RLX_UNARY_BITWISE_NOT, 0, 0, 0, TI(I32, SH(4), 0, -1, 5, INT32_MAX)));
  CHECK_SHAPE(&r, 0, I32, 4);
  CHECK_I(&r, 0, -1, 0, -6, INT32_MIN);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_BITWISE_NOT, 0, 0, 0, TI(BOOL, SH(2), 0, 1)));
  CHECK_SHAPE(&r, 0, BOOL, 2);
  CHECK_I(&r, 0, 1, 0);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_LOGICAL_NOT, 0, 0, 0, TF(F32, SH(4), 0, -0.0, 2, NAN)));
  CHECK_SHAPE(&r, 0, BOOL, 4);
  CHECK_I(&r, 0, 1, 1, 0, 0);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_LOGICAL_NOT, 0, 0, 0, TI(I64, SH(3), 0, 3, -1)));
  CHECK_SHAPE(&r, 0, BOOL, 3);
  CHECK_I(&r, 0, 1, 0, 0);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_ISNAN, 0, 0, 0, TF(F32, SH(4), NAN, INF, -INF, 1)));
  CHECK_SHAPE(&r, 0, BOOL, 4);
  CHECK_I(&r, 0, 1, 0, 0, 0);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_ISINF, 0, 0, 0, TF(F32, SH(4), NAN, INF, -INF, 1)));
  CHECK_I(&r, 0, 0, 1, 1, 0);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_ISNAN, 0, 0, 0, TF(F16, SH(2), NAN, 1)));
  CHECK_SHAPE(&r, 0, BOOL, 2);
  CHECK_I(&r, 0, 1, 0);
  krun_free(&r);
  CHECK_ERR(unary(&r, RLX_UNARY_BITWISE_NOT, 0, 0, 0, TF(F32, SH(1), 1)), RLX_ERR_UNSUPPORTED,
            "bitwise_not");
  krun_free(&r);
  CHECK_ERR(unary(&r, RLX_UNARY_EXP, 0, 0, 0, TI(I64, SH(1), 1)), RLX_ERR_UNSUPPORTED, "float");
  krun_free(&r);
}

/* Piecewise activations (torch: F.leaky_relu(x, 0.1), F.elu, F.hardtanh,
 * F.hardsigmoid, F.hardswish, F.softplus(beta=2, threshold=15)). */
TEST(unary_piecewise) {
  krun r;
  CHECK_OK(unary(&r, RLX_UNARY_LEAKY_RELU, 0.1, 0, 0, TF(F32, SH(3), -2, 0, 3)));
  CHECK_F(&r, 0, 1e-7, -0.2, 0, 3);
  krun_free(&r);
  /* elu: a = alpha, b = scale, c = input_scale; expm1(-1) = -0.632120559 */
  CHECK_OK(unary(&r, RLX_UNARY_ELU, 1, 1, 1, TF(F32, SH(3), -1, 0, 2)));
  CHECK_F(&r, 0, 1e-7, -0.63212055, 0, 2);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_ELU, 2, 1, 1, TF(F32, SH(3), -1, 0, 2)));
  CHECK_F(&r, 0, 1e-7, -1.2642411, 0, 2);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_HARDTANH, -1, 1, 0, TF(F32, SH(4), -2, 0.5, 2, NAN)));
  CHECK_F(&r, 0, 0, -1, 0.5, 1, NAN);
  krun_free(&r);
  /* hardsigmoid = clamp(x/6 + 1/2, 0, 1); torch keeps NaN */
  CHECK_OK(unary(&r, RLX_UNARY_HARDSIGMOID, 0, 0, 0, TF(F32, SH(5), -4, 0, 3, 1, NAN)));
  CHECK_F(&r, 0, 1e-7, 0, 0.5, 1, 2.0 / 3.0, NAN);
  krun_free(&r);
  /* hardswish = x * clamp(x + 3, 0, 6) / 6: [-4, 0, 3, 1] -> [0, 0, 3, 2/3] */
  CHECK_OK(unary(&r, RLX_UNARY_HARDSWISH, 0, 0, 0, TF(F32, SH(4), -4, 0, 3, 1)));
  CHECK_F(&r, 0, 1e-7, 0, 0, 3, 2.0 / 3.0);
  krun_free(&r);
  /* F.celu(alpha=2), F.selu, F.mish, F.logsigmoid: NaN propagates */
  CHECK_OK(unary(&r, RLX_UNARY_CELU, 2, 0, 0, TF(F32, SH(3), NAN, -1, 2)));
  CHECK_F(&r, 0, 1e-7, NAN, -0.786938667, 2);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_SELU, 0, 0, 0, TF(F32, SH(3), NAN, -1, 2)));
  CHECK_F(&r, 0, 1e-7, NAN, -1.11133075, 2.10140204);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_MISH, 0, 0, 0, TF(F32, SH(3), NAN, -1, 2)));
  CHECK_F(&r, 0, 1e-7, NAN, -0.30340144, 1.943959);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_LOGSIGMOID, 0, 0, 0, TF(F32, SH(3), NAN, -1, 2)));
  CHECK_F(&r, 0, 1e-7, NAN, -1.31326175, -0.126928017);
  krun_free(&r);
  /* softplus(beta 2, threshold 15): x*beta > 15 returns x; log1p(e^2)/2 */
  CHECK_OK(unary(&r, RLX_UNARY_SOFTPLUS, 2, 15, 0, TF(F32, SH(4), 1, 10, 30, -20)));
  CHECK_F(&r, 0, 1e-7, 1.06346405, 10, 30, 2.12417707e-18);
  krun_free(&r);
}

/* round_decimals (torch.round(x, decimals=d)), nan_to_num, clamp. */
TEST(unary_round_decimals_nan_to_num_clamp) {
  krun r;
  /* 0.125 * 100 = 12.5 rounds to even: 0.12 */
  CHECK_OK(
      unary(&r, RLX_UNARY_ROUND_DECIMALS, 2, 0, 0, TF(F32, SH(4), 1.2345, -2.5, 0.125, -0.125)));
  CHECK_F(&r, 0, 1e-7, 1.23000002, -2.5, 0.119999997, -0.119999997);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_ROUND_DECIMALS, -1, 0, 0, TF(F32, SH(4), 125, 135, 1234.5, -15)));
  CHECK_F(&r, 0, 0, 120, 140, 1230, -20);
  krun_free(&r);
  /* torch computes in the input's precision (float below f64), and the
   * result is discontinuous: f32 2.675 (2.67499995) * 100 rounds to 267.5
   * in float, then to even 268 -> 2.68; in double it would be 2.67 */
  CHECK_OK(unary(&r, RLX_UNARY_ROUND_DECIMALS, 2, 0, 0, TF(F32, SH(3), 2.675, 1.005, 0.285)));
  CHECK_F(&r, 0, 0, 2.680000066757202, 1, 0.2800000011920929);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_ROUND_DECIMALS, 2, 0, 0, TF(F64, SH(2), 2.675, 0.285)));
  CHECK_F(&r, 0, 0, 2.68, 0.28);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_ROUND_DECIMALS, 2, 0, 0, TF(F16, SH(1), 2.675)));
  CHECK_F(&r, 0, 0, 2.6796875);
  krun_free(&r);
  /* a: nan, b: posinf, c: neginf */
  CHECK_OK(unary(&r, RLX_UNARY_NAN_TO_NUM, 0, 100, -100, TF(F32, SH(4), NAN, INF, -INF, 1.5)));
  CHECK_F(&r, 0, 0, 0, 100, -100, 1.5);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_CLAMP, -1, 1, 0, TF(F32, SH(4), NAN, -2, 0.5, 2)));
  CHECK_F(&r, 0, 0, NAN, -1, 0.5, 1);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_CLAMP, -1, NAN, 0, TF(F32, SH(2), -2, 5))); /* min only */
  CHECK_F(&r, 0, 0, -1, 5);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_CLAMP, NAN, 3, 0, TI(I64, SH(3), -9, 2, 9))); /* max only, ints */
  CHECK_I(&r, 0, -9, 2, 3);
  krun_free(&r);
}

/* pow_scalar on integers is exact and wraps (torch: t ** 3). */
TEST(unary_pow_scalar_int) {
  krun r;
  CHECK_OK(unary(&r, RLX_UNARY_POW_SCALAR, 3, 0, 0, TI(I64, SH(4), 2, -3, 0, 7)));
  CHECK_SHAPE(&r, 0, I64, 4);
  CHECK_I(&r, 0, 8, -27, 0, 343);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_POW_SCALAR, 3, 0, 0, TI(I32, SH(2), 2048, -3))); /* 2^33 wraps */
  CHECK_SHAPE(&r, 0, I32, 2);
  CHECK_I(&r, 0, 0, -27);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_POW_SCALAR, 0, 0, 0, TI(I64, SH(2), 0, -3)));
  CHECK_I(&r, 0, 1, 1);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_POW_SCALAR, 0.5, 0, 0, TF(F32, SH(2), 4, -1)));
  CHECK_F(&r, 0, 0, 2, NAN);
  krun_free(&r);
}

/* torch.erfinv in f64: erfinv(0.5) = 0.4769362762044699,
 * erfinv(-0.9) = -1.1630871536766743. */
TEST(unary_erfinv) {
  krun r;
  CHECK_OK(unary(&r, RLX_UNARY_ERFINV, 0, 0, 0, TF(F64, SH(6), 0, 0.5, -0.9, 1, -1, 1.5)));
  CHECK_SHAPE(&r, 0, F64, 6);
  CHECK_F(&r, 0, 1e-14, 0, 0.4769362762044699, -1.1630871536766743, INF, -INF, NAN);
  krun_free(&r);
}

/* f16 and bf16 inputs: computed wide, rounded once to the dtype. Expected
 * values are torch's f16/bf16 results, exact. The inputs round on the way
 * in: 0.1 is 0.0999755859 in f16 and 0.100097656 in bf16. */
TEST(unary_half) {
  krun r;
  CHECK_OK(unary(&r, RLX_UNARY_EXP, 0, 0, 0, TF(F16, SH(5), 0, 1, -1, 2, 0.1)));
  CHECK_SHAPE(&r, 0, F16, 5);
  CHECK_F(&r, 0, 0, 1, 2.71875, 0.367919921875, 7.390625, 1.10546875);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_SIGMOID, 0, 0, 0, TF(F16, SH(5), 0, 1, -1, 2, 0.1)));
  CHECK_F(&r, 0, 0, 0.5, 0.73095703125, 0.26904296875, 0.880859375, 0.52490234375);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_GELU, 0, 0, 0, TF(BF16, SH(5), 0, 1, -1, 2, 0.1)));
  CHECK_SHAPE(&r, 0, BF16, 5);
  CHECK_F(&r, 0, 0, 0, 0.83984375, -0.158203125, 1.953125, 0.053955078125);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_EXP, 0, 0, 0, TF(BF16, SH(5), 0, 1, -1, 2, 0.1)));
  CHECK_F(&r, 0, 0, 1, 2.71875, 0.3671875, 7.375, 1.1015625);
  krun_free(&r);
}

/* ==== binary ==== */

/* [2,1,3] + [4,1] -> [2,4,3]: out[i,j,k] = a[i,0,k] + b[j,0]. */
TEST(binary_broadcast) {
  krun r;
  CHECK_OK(binary(&r, RLX_BINARY_ADD, TF(F32, SH(2, 1, 3), 0, 1, 2, 3, 4, 5),
                  TF(F32, SH(4, 1), 0, 10, 20, 30)));
  CHECK_SHAPE(&r, 0, F32, 2, 4, 3);
  CHECK_F(&r, 0, 0,
          0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32,
          3, 4, 5, 13, 14, 15, 23, 24, 25, 33, 34, 35);
  krun_free(&r);
  /* rank-0 with rank-2, i64 */
  CHECK_OK(binary(&r, RLX_BINARY_SUB, TI(I64, SH0, 100), TI(I64, SH(2, 2), 1, 2, 3, 4)));
  CHECK_SHAPE(&r, 0, I64, 2, 2);
  CHECK_I(&r, 0, 99, 98, 97, 96);
  krun_free(&r);
}

TEST(binary_arith_f32) {
  krun r;
#define A3 TF(F32, SH(3), 6, -3, 1.5)
#define B3 TF(F32, SH(3), 2, 4, -0.5)
  CHECK_OK(binary(&r, RLX_BINARY_ADD, A3, B3));
  CHECK_F(&r, 0, 0, 8, 1, 1);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_SUB, A3, B3));
  CHECK_F(&r, 0, 0, 4, -7, 2);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_MUL, A3, B3));
  CHECK_F(&r, 0, 0, 12, -12, -0.75);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_DIV, A3, B3));
  CHECK_F(&r, 0, 0, 3, -0.75, -3);
  krun_free(&r);
#undef A3
#undef B3
  CHECK_OK(binary(&r, RLX_BINARY_DIV, TF(F32, SH(3), 1, -1, 0), TF(F32, SH(3), 0, 0, 0)));
  CHECK_F(&r, 0, 0, INF, -INF, NAN);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_POW, TF(F32, SH(3), 2, 4, -8), TF(F32, SH(3), -1, 0.5, 1.0 / 3)));
  CHECK_F(&r, 0, 0, 0.5, 2, NAN);
  krun_free(&r);
}

/* Python semantics: -7 // 2 = -4, -7 % 2 = 1, fmod(-7, 2) = -1,
 * trunc(-7 / 2) = -3 (torch.div(rounding_mode=...), remainder, fmod). */
TEST(binary_div_mod_float) {
  krun r;
#define A5 TF(F32, SH(5), -7, 7, -7, 7, -7.5)
#define B5 TF(F32, SH(5), 2, -2, -2, 2, 2)
  CHECK_OK(binary(&r, RLX_BINARY_DIV_FLOOR, A5, B5));
  CHECK_F(&r, 0, 0, -4, -4, 3, 3, -4);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_DIV_TRUNC, A5, B5));
  CHECK_F(&r, 0, 0, -3, -3, 3, 3, -3);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_REMAINDER, A5, B5));
  CHECK_F(&r, 0, 0, 1, -1, -1, 1, 0.5);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_FMOD, A5, B5));
  CHECK_F(&r, 0, 0, -1, 1, -1, 1, -1.5);
  krun_free(&r);
#undef A5
#undef B5
  /* by zero (torch): 1 // 0 = inf, -1 // 0 = -inf, remainder(1, 0) = NaN */
  CHECK_OK(binary(&r, RLX_BINARY_DIV_FLOOR, TF(F32, SH(3), 1, -1, 0), TF(F32, SH(3), 0, 0, 0)));
  CHECK_F(&r, 0, 0, INF, -INF, NAN);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_REMAINDER, TF(F32, SH(1), 1), TF(F32, SH(1), 0)));
  CHECK_F(&r, 0, 0, NAN);
  krun_free(&r);
  /* trunc division rounds the quotient to the dtype first, as torch: in f32
   * 1 / 0.1f is 10 (in double 9.99999985); floor division is exact: 9 */
  CHECK_OK(binary(&r, RLX_BINARY_DIV_TRUNC, TF(F32, SH(2), 1, -1), TF(F32, SH(2), 0.1, 0.1)));
  CHECK_F(&r, 0, 0, 10, -10);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_DIV_TRUNC, TF(F32, SH(2, 1), 1, -1), TF(F32, SH(1), 0.1)));
  CHECK_F(&r, 0, 0, 10, -10); /* the broadcasting path */
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_DIV_FLOOR, TF(F32, SH(2), 1, -1), TF(F32, SH(2), 0.1, 0.1)));
  CHECK_F(&r, 0, 0, 9, -10);
  krun_free(&r);
}

TEST(binary_div_mod_int) {
  krun r;
  static const rlx_dtype types[] = {RLX_DTYPE_I64, RLX_DTYPE_I32, RLX_DTYPE_I8};
  for (size_t t = 0; t < RLX_COUNTOF(types); t++) {
    tens a = TI(I64, SH(4), -7, 7, -7, 7), b = TI(I64, SH(4), 2, -2, -2, 2);
    a.dtype = b.dtype = types[t];
    CHECK_OK(binary(&r, RLX_BINARY_DIV_FLOOR, a, b));
    CHECK(r.out[0].dtype == types[t]);
    CHECK_I(&r, 0, -4, -4, 3, 3);
    krun_free(&r);
    CHECK_OK(binary(&r, RLX_BINARY_DIV_TRUNC, a, b));
    CHECK_I(&r, 0, -3, -3, 3, 3);
    krun_free(&r);
    CHECK_OK(binary(&r, RLX_BINARY_REMAINDER, a, b));
    CHECK_I(&r, 0, 1, -1, -1, 1);
    krun_free(&r);
    CHECK_OK(binary(&r, RLX_BINARY_FMOD, a, b));
    CHECK_I(&r, 0, -1, 1, -1, 1);
    krun_free(&r);
  }
  /* INT64_MIN // -1 wraps to INT64_MIN, remainder 0 (torch); no trap */
  CHECK_OK(binary(&r, RLX_BINARY_DIV_FLOOR, TI(I64, SH(1), INT64_MIN), TI(I64, SH(1), -1)));
  CHECK_I(&r, 0, INT64_MIN);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_REMAINDER, TI(I64, SH(1), INT64_MIN), TI(I64, SH(1), -1)));
  CHECK_I(&r, 0, 0);
  krun_free(&r);
  /* integer division by zero is a run-time error */
  static const rlx_binary_kind divs[] = {RLX_BINARY_DIV_FLOOR, RLX_BINARY_DIV_TRUNC,
                                         RLX_BINARY_REMAINDER, RLX_BINARY_FMOD};
  for (size_t k = 0; k < RLX_COUNTOF(divs); k++) {
    CHECK_ERR(binary(&r, divs[k], TI(I32, SH(2), 1, 2), TI(I32, SH(2), 1, 0)), RLX_ERR_RUNTIME,
              "by zero");
    krun_free(&r);
  }
}

/* maximum/minimum propagate NaN, fmax/fmin ignore it (torch). */
TEST(binary_minmax_nan) {
  krun r;
#define A TF(F32, SH(4), NAN, 1, NAN, 2)
#define B TF(F32, SH(4), 1, NAN, NAN, 3)
  CHECK_OK(binary(&r, RLX_BINARY_MAXIMUM, A, B));
  CHECK_F(&r, 0, 0, NAN, NAN, NAN, 3);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_MINIMUM, A, B));
  CHECK_F(&r, 0, 0, NAN, NAN, NAN, 2);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_FMAX, A, B));
  CHECK_F(&r, 0, 0, 1, 1, NAN, 3);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_FMIN, A, B));
  CHECK_F(&r, 0, 0, 1, 1, NAN, 2);
  krun_free(&r);
#undef A
#undef B
  CHECK_OK(binary(&r, RLX_BINARY_MAXIMUM, TI(I32, SH(2), -5, 7), TI(I32, SH(2), 3, -9)));
  CHECK_I(&r, 0, 3, 7);
  krun_free(&r);
}

/* Integer pow: exact, wraps; negative exponents give 1 for base 1, +-1 for
 * base -1 (by parity), 0 otherwise (torch.pow on int64). */
TEST(binary_pow_int) {
  krun r;
  CHECK_OK(binary(&r, RLX_BINARY_POW, TI(I64, SH(8), 2, 1, -1, -1, 3, 0, 2, -2),
                  TI(I64, SH(8), -1, -3, -3, -2, 0, 0, 10, 3)));
  CHECK_I(&r, 0, 0, 1, -1, 1, 1, 1, 1024, -8);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_POW, TI(I64, SH(2), 0, 2), TI(I64, SH(2), -1, 64)));
  CHECK_I(&r, 0, 0, 0); /* 0 ** -1 = 0 in torch; 2 ** 64 wraps to 0 */
  krun_free(&r);
}

/* Shifts (torch on int32/int64): a shift count >= the width or < 0 gives 0,
 * or -1 for a negative value shifted right. */
TEST(binary_shifts) {
  krun r;
  CHECK_OK(binary(&r, RLX_BINARY_SHL, TI(I32, SH(4), 1, -8, 1, 1), TI(I32, SH(4), 31, 1, 32, 40)));
  CHECK_I(&r, 0, INT32_MIN, -16, 0, 0);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_SHR, TI(I32, SH(4), -8, 8, -8, 8), TI(I32, SH(4), 1, 1, 32, 40)));
  CHECK_I(&r, 0, -4, 4, -1, 0);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_SHL, TI(I64, SH(3), 1, 1, 1), TI(I64, SH(3), 63, 64, -1)));
  CHECK_I(&r, 0, INT64_MIN, 0, 0);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_SHR, TI(I64, SH(2), 8, -8), TI(I64, SH(2), -1, -1)));
  CHECK_I(&r, 0, 0, -1);
  krun_free(&r);
}

TEST(binary_bitwise) {
  krun r;
#define A TI(BOOL, SH(4), 0, 0, 1, 1)
#define B TI(BOOL, SH(4), 0, 1, 0, 1)
  CHECK_OK(binary(&r, RLX_BINARY_BITAND, A, B));
  CHECK_SHAPE(&r, 0, BOOL, 4);
  CHECK_I(&r, 0, 0, 0, 0, 1);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_BITOR, A, B));
  CHECK_SHAPE(&r, 0, BOOL, 4);
  CHECK_I(&r, 0, 0, 1, 1, 1);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_BITXOR, A, B));
  CHECK_SHAPE(&r, 0, BOOL, 4);
  CHECK_I(&r, 0, 0, 1, 1, 0);
  krun_free(&r);
#undef A
#undef B
  CHECK_OK(binary(&r, RLX_BINARY_BITAND, TI(I32, SH(3), 12, -1, 6), TI(I32, SH(3), 10, 5, 3)));
  CHECK_I(&r, 0, 8, 5, 2);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_BITOR, TI(I32, SH(3), 12, -1, 6), TI(I32, SH(3), 10, 5, 3)));
  CHECK_I(&r, 0, 14, -1, 7);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_BITXOR, TI(I32, SH(3), 12, -1, 6), TI(I32, SH(3), 10, 5, 3)));
  CHECK_I(&r, 0, 6, -6, 5);
  krun_free(&r);
}

/* Logical ops and compares output bool; NaN is truthy; every compare with
 * NaN is false except ne (torch). */
TEST(binary_logical_compare) {
  krun r;
#define A TF(F32, SH(4), 0, 2, NAN, 0)
#define B TF(F32, SH(4), 3, 0, 1, 0)
  CHECK_OK(binary(&r, RLX_BINARY_LOGICAL_AND, A, B));
  CHECK_SHAPE(&r, 0, BOOL, 4);
  CHECK_I(&r, 0, 0, 0, 1, 0);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_LOGICAL_OR, A, B));
  CHECK_I(&r, 0, 1, 1, 1, 0);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_LOGICAL_XOR, A, B));
  CHECK_I(&r, 0, 1, 1, 0, 0);
  krun_free(&r);
#undef A
#undef B
#define A TF(F32, SH(5), NAN, 1, NAN, 2, -0.0)
#define B TF(F32, SH(5), 1, NAN, NAN, 3, 0)
  static const struct {
    rlx_binary_kind k;
    int64_t want[5];
  } cmp[] = {
      {RLX_BINARY_EQ, {0, 0, 0, 0, 1}}, {RLX_BINARY_NE, {1, 1, 1, 1, 0}},
      {RLX_BINARY_LT, {0, 0, 0, 1, 0}}, {RLX_BINARY_LE, {0, 0, 0, 1, 1}},
      {RLX_BINARY_GT, {0, 0, 0, 0, 0}}, {RLX_BINARY_GE, {0, 0, 0, 0, 1}},
  };
  for (size_t c = 0; c < RLX_COUNTOF(cmp); c++) {
    CHECK_OK(binary(&r, cmp[c].k, A, B));
    CHECK_SHAPE(&r, 0, BOOL, 5);
    kt_check_i_(__FILE__, __LINE__, &r, 0, cmp[c].want, 5);
    krun_free(&r);
  }
#undef A
#undef B
  CHECK_OK(binary(&r, RLX_BINARY_LT, TI(I64, SH(3), 1, 2, 3), TI(I64, SH(1), 2)));
  CHECK_SHAPE(&r, 0, BOOL, 3);
  CHECK_I(&r, 0, 1, 0, 0);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_LOGICAL_AND, TI(BOOL, SH(2), 1, 1), TI(BOOL, SH(2), 1, 0)));
  CHECK_I(&r, 0, 1, 0);
  krun_free(&r);
}

/* Integer arithmetic wraps to the dtype's width, as torch does. */
TEST(binary_int_overflow) {
  krun r;
  CHECK_OK(binary(&r, RLX_BINARY_ADD, TI(I32, SH(2), INT32_MAX, INT32_MIN), TI(I32, SH(2), 1, -1)));
  CHECK_I(&r, 0, INT32_MIN, INT32_MAX);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_MUL, TI(I32, SH(1), 65536), TI(I32, SH(1), 65536)));
  CHECK_I(&r, 0, 0);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_ADD, TI(I8, SH(1), 127), TI(I8, SH(1), 1)));
  CHECK_I(&r, 0, -128);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_SUB, TI(I64, SH(1), INT64_MIN), TI(I64, SH(1), 1)));
  CHECK_I(&r, 0, INT64_MAX);
  krun_free(&r);
}

TEST(binary_infer_errors) {
  krun r;
  CHECK_ERR(binary(&r, RLX_BINARY_ADD, TF(F32, SH(2), 1, 2), TI(I32, SH(2), 1, 2)), RLX_ERR_SHAPE,
            "dtypes f32 and i32");
  krun_free(&r);
  CHECK_ERR(binary(&r, RLX_BINARY_ADD, TF(F32, SH(2, 3), 1, 2, 3, 4, 5, 6),
                   TF(F32, SH(4), 1, 2, 3, 4)),
            RLX_ERR_SHAPE, "do not broadcast");
  krun_free(&r);
  CHECK_ERR(binary(&r, RLX_BINARY_BITAND, TF(F32, SH(1), 1), TF(F32, SH(1), 1)),
            RLX_ERR_UNSUPPORTED, "bitwise_and needs integer");
  krun_free(&r);
  CHECK_ERR(binary(&r, RLX_BINARY_SHL, TF(F64, SH(1), 1), TF(F64, SH(1), 1)), RLX_ERR_UNSUPPORTED,
            "integer");
  krun_free(&r);
  CHECK_ERR(binary(&r, RLX_BINARY_DIV, TI(I64, SH(1), 1), TI(I64, SH(1), 1)), RLX_ERR_UNSUPPORTED,
            "float");
  krun_free(&r);
  /* the node's op is named in the message */
  CHECK_ERR(binary(&r, RLX_BINARY_ADD, TF(F32, SH(2), 1, 2), TF(F32, SH(3), 1, 2, 3)),
            RLX_ERR_SHAPE, "rlx binary");
  krun_free(&r);
}

/* ==== where, cast ==== */

/* cond [1,3], a [2,1], b [] -> [2,3] */
TEST(where) {
  krun r;
  tens c = TI(BOOL, SH(1, 3), 1, 0, 1);
  CHECK_OK(krun_op(&r, RLX_OP_WHERE, NULL, 3,
                   (tens[]){c, TF(F32, SH(2, 1), 10, 20), TF(F32, SH0, -1)}, 1));
  CHECK_SHAPE(&r, 0, F32, 2, 3);
  CHECK_F(&r, 0, 0, 10, -1, 10, 20, -1, 20);
  krun_free(&r);
  CHECK_OK(krun_op(&r, RLX_OP_WHERE, NULL, 3,
                   (tens[]){c, TI(I64, SH(3), INT64_MAX, 2, 3), TI(I64, SH(3), 4, 5, INT64_MIN)},
                   1));
  CHECK_SHAPE(&r, 0, I64, 1, 3);
  CHECK_I(&r, 0, INT64_MAX, 5, 3);
  krun_free(&r);
  CHECK_ERR(krun_op(&r, RLX_OP_WHERE, NULL, 3,
                    (tens[]){TF(F32, SH(1), 1), TF(F32, SH(1), 1), TF(F32, SH(1), 1)}, 1),
            RLX_ERR_SHAPE, "condition must be bool");
  krun_free(&r);
  CHECK_ERR(
      krun_op(&r, RLX_OP_WHERE, NULL, 3, (tens[]){c, TF(F32, SH(1), 1), TF(F64, SH(1), 1)}, 1),
      RLX_ERR_SHAPE, "f32 and f64");
  krun_free(&r);
  CHECK_ERR(krun_op(&r, RLX_OP_WHERE, NULL, 3, (tens[]){c, TF(F32, SH(2), 1, 2), TF(F32, SH(1), 1)},
                    1),
            RLX_ERR_SHAPE, "broadcast");
  krun_free(&r);
}

static rlx_status cast(krun *r, rlx_dtype to, tens x) {
  rlx_params p = {.cast = {.to = to}};
  return krun_op(r, RLX_OP_CAST, &p, 1, &x, 1);
}

/* torch's .to(dtype) on the CPU for each case. */
TEST(cast) {
  krun r;
  CHECK_OK(cast(&r, RLX_DTYPE_I32, TF(F32, SH(4), -2.7, 2.7, -0.5, 0)));
  CHECK_SHAPE(&r, 0, I32, 4);
  CHECK_I(&r, 0, -2, 2, 0, 0);
  krun_free(&r);
  CHECK_OK(cast(&r, RLX_DTYPE_BOOL, TF(F32, SH(5), NAN, 0, -0.0, 0.1, -INF)));
  CHECK_SHAPE(&r, 0, BOOL, 5);
  CHECK_I(&r, 0, 1, 0, 0, 1, 1);
  krun_free(&r);
  /* 2049 ties to even (2048); 65519 rounds down to 65504; 65520 overflows */
  CHECK_OK(cast(&r, RLX_DTYPE_F16, TI(I64, SH(6), 1, 2049, 65519, 65520, 70000, -3)));
  CHECK_SHAPE(&r, 0, F16, 6);
  CHECK_F(&r, 0, 0, 1, 2048, 65504, INF, INF, -3);
  krun_free(&r);
  CHECK_OK(cast(&r, RLX_DTYPE_F32, TI(BOOL, SH(2), 1, 0)));
  CHECK_SHAPE(&r, 0, F32, 2);
  CHECK_F(&r, 0, 0, 1, 0);
  krun_free(&r);
  /* f32 -> bf16 rounds to nearest even (1.00390625 is a tie, down; 1.01171875
   * a tie, up); 1e39 is inf already in f32 (overflow) */
  CHECK_OK(
      cast(&r, RLX_DTYPE_BF16, TF(F32, SH(5), 1.00390625, 1.01171875, 3.14159265, -2.5e-3, 1e39)));
  CHECK_SHAPE(&r, 0, BF16, 5);
  CHECK_F(&r, 0, 0, 1, 1.015625, 3.140625, -0.00250244140625, INF);
  CHECK(((uint16_t *)r.out[0].data)[2] == 0x4049);
  krun_free(&r);
  /* f64 -> f16/bf16 goes through f32, as torch's conversion does: 1 + 2^-11
   * + 2^-40 first rounds to the f16 tie 1 + 2^-11, then to even: 1 */
  CHECK_OK(cast(&r, RLX_DTYPE_F16, TF(F64, SH(1), 1 + 0x1p-11 + 0x1p-40)));
  CHECK_F(&r, 0, 0, 1);
  krun_free(&r);
  CHECK_OK(cast(&r, RLX_DTYPE_BF16, TF(F64, SH(1), 1 + 0x1p-8 + 0x1p-40)));
  CHECK_F(&r, 0, 0, 1);
  krun_free(&r);
  CHECK_OK(cast(&r, RLX_DTYPE_I8, TI(I64, SH(2), 300, -129))); /* wraps */
  CHECK_I(&r, 0, 44, 127);
  krun_free(&r);
  CHECK_OK(cast(&r, RLX_DTYPE_I64, TF(F16, SH(2), -3.75, 1000)));
  CHECK_I(&r, 0, -3, 1000);
  krun_free(&r);
  CHECK_OK(cast(&r, RLX_DTYPE_BOOL, TI(I32, SH(3), 0, -2, 256)));
  CHECK_I(&r, 0, 0, 1, 1);
  krun_free(&r);
}

TEST_MAIN(unary_activations, unary_exp_log_rsqrt, unary_rounding, unary_sign_abs_neg,
          unary_bitwise_logical, unary_piecewise, unary_round_decimals_nan_to_num_clamp,
          unary_pow_scalar_int, unary_erfinv, unary_half, binary_broadcast, binary_arith_f32,
          binary_div_mod_float, binary_div_mod_int, binary_minmax_nan, binary_pow_int,
          binary_shifts, binary_bitwise, binary_logical_compare, binary_int_overflow,
          binary_infer_errors, where, cast)
