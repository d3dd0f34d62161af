/*
 * test_special.c — the special-function kinds of the unary and binary ops
 * (ops/special_*.c, ops/unary.c, ops/binary.c): the results torch defines
 * bit for bit (nextafter in each float format, gcd and lcm with torch's
 * wrapping, frexp), torch's edge values, the float emulation special.h
 * documents, and the errors (mvlgamma's domain, dtypes the kinds refuse).
 * Expected values are eager torch's (torch 2.15, CPU), noted per case.
 */
#include <math.h>
#include <string.h>

#include "kernel_test.h"
#include "ops/special.h"
#include "test.h"

static rlx_status unary(krun *r, rlx_unary_kind kind, double a, tens x) {
  rlx_params p = {.unary = {.kind = kind, .a = a}};
  return krun_op(r, RLX_OP_UNARY, &p, 1, &x, 1);
}

static rlx_status binary(krun *r, rlx_binary_kind kind, tens a, tens b) {
  rlx_params p = {.binary = {.kind = kind}};
  return krun_op(r, RLX_OP_BINARY, &p, 2, (tens[]){a, b}, 1);
}

/* Output k's raw bytes equal `want` (n elements of `size` bytes). */
static void check_bits(const krun *r, int k, const void *want, int64_t n, size_t size, int line) {
  const rlx_tensor_view *v = &r->out[k];
  if (!v->data || rlx_view_numel(v) != n || memcmp(v->data, want, (size_t)n * size)) {
    fprintf(stderr, "test_special.c:%d: [%s] output %d is not bit-identical to torch's\n", line, rlx_test_current, k);
    rlx_test_failures++;
  }
}
#define CHECK_BITS32(r, k, ...) \
  check_bits(r, k, (const float[]){__VA_ARGS__}, KT_NVALS_(float, __VA_ARGS__), 4, __LINE__)
#define CHECK_BITS64(r, k, ...) \
  check_bits(r, k, (const double[]){__VA_ARGS__}, KT_NVALS_(double, __VA_ARGS__), 8, __LINE__)
#define CHECK_BITS16(r, k, ...) \
  check_bits(r, k, (const uint16_t[]){__VA_ARGS__}, KT_NVALS_(uint16_t, __VA_ARGS__), 2, __LINE__)

/* torch.nextafter: one step in the input's own format; equal inputs give the
 * second (+0 toward -0 is -0); a zero steps to the smallest subnormal. */
TEST(nextafter_bits) {
  krun r;
  CHECK_OK(binary(&r, RLX_BINARY_NEXTAFTER, TF(F32, SH(7), 1, 0, -0.0, INFINITY, 3.4028234663852886e38, 1.0, -1.0),
                  TF(F32, SH(7), 2, -0.0, 0, 0, INFINITY, 0, -INFINITY)));
  CHECK_BITS32(&r, 0, 1.00000011920928955f, -0.0f, 0.0f, 3.4028234663852886e38f, INFINITY, 0.99999994039535522f,
               -1.00000011920928955f);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_NEXTAFTER, TF(F32, SH(2, 1), 0, 1.4e-45), TF(F32, SH(2), 1, -1)));
  CHECK_BITS32(&r, 0, 1.4e-45f, -1.4e-45f, 2.8e-45f, 0.0f); /* broadcast: [2,1] against [2] */
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_NEXTAFTER, TF(F64, SH(4), 1, 0, 4.9406564584124654e-324, INFINITY),
                  TF(F64, SH(4), 2, -1, 0, 0)));
  CHECK_BITS64(&r, 0, 1.0000000000000002, -4.9406564584124654e-324, 0.0, 1.7976931348623157e308);
  krun_free(&r);
  /* f16: 0 -> 1 is 2^-24 (0x0001), 1 -> 0 is 0.99951171875 (0x3bff), 65504 -> inf (0x7c00), -0 -> 0 is +0 */
  CHECK_OK(binary(&r, RLX_BINARY_NEXTAFTER, TF(F16, SH(5), 0, 1, 65504, -0.0, INFINITY),
                  TF(F16, SH(5), 1, 0, INFINITY, 0, 0)));
  CHECK_BITS16(&r, 0, 0x0001, 0x3bff, 0x7c00, 0x0000, 0x7bff);
  krun_free(&r);
  /* bf16: 1 -> 2 is 1.0078125 (0x3f81), 0 -> -1 is -2^-133 (0x8001), 1 -> 0 is 0.99609375 (0x3f7f) */
  CHECK_OK(binary(&r, RLX_BINARY_NEXTAFTER, TF(BF16, SH(3), 1, 0, 1), TF(BF16, SH(3), 2, -1, 0)));
  CHECK_BITS16(&r, 0, 0x3f81, 0x8001, 0x3f7f);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_NEXTAFTER, TF(BF16, SH(2), NAN, 1), TF(BF16, SH(2), 1, NAN)));
  CHECK_F(&r, 0, 0, NAN, NAN);
  krun_free(&r);
  CHECK_ERR(binary(&r, RLX_BINARY_NEXTAFTER, TI(I32, SH(1), 1), TI(I32, SH(1), 2)), RLX_ERR_UNSUPPORTED,
            "needs float inputs");
  krun_free(&r);
}

/* torch.gcd / torch.lcm, including where torch's own arithmetic wraps. */
TEST(gcd_lcm) {
  krun r;
  CHECK_OK(binary(&r, RLX_BINARY_GCD, TI(I8, SH(4), -128, -128, 0, 12), TI(I8, SH(4), 0, 64, 0, -18)));
  CHECK_SHAPE(&r, 0, I8, 4);
  CHECK_I(&r, 0, -128, 64, 0, 6);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_LCM, TI(I8, SH(5), 100, -128, 0, 12, 127), TI(I8, SH(5), 3, 3, 5, -18, 126)));
  CHECK_I(&r, 0, 44, -128, 0, 36, -126);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_GCD, TI(I64, SH(2), INT64_MIN, INT64_MIN), TI(I64, SH(2), 6, 7)));
  CHECK_I(&r, 0, -2, -1);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_LCM, TI(I64, SH(2), 1LL << 40, 2147483647),
                  TI(I64, SH(2), 205891132094649LL, 2147483645))); /* 3^30 */
  CHECK_I(&r, 0, 3857129671191691264LL, 4611686009837453315LL);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_LCM, TI(I32, SH(2), 2147483647, INT32_MIN), TI(I32, SH(2), 2147483645, 1)));
  CHECK_I(&r, 0, 3, INT32_MIN);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_GCD, TI(U8, SH(2), 200, 0), TI(U8, SH(2), 150, 0)));
  CHECK_I(&r, 0, 50, 0);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_LCM, TI(U8, SH(2), 200, 7), TI(U8, SH(2), 150, 11)));
  CHECK_I(&r, 0, 88, 77);
  krun_free(&r);
  CHECK_ERR(binary(&r, RLX_BINARY_GCD, TF(F32, SH(1), 4), TF(F32, SH(1), 6)), RLX_ERR_UNSUPPORTED,
            "needs integer inputs");
  krun_free(&r);
  CHECK_ERR(binary(&r, RLX_BINARY_LCM, TI(BOOL, SH(1), 1), TI(BOOL, SH(1), 1)), RLX_ERR_UNSUPPORTED,
            "needs integer inputs");
  krun_free(&r);
}

/* torch.frexp: mantissa in [0.5, 1) with x's sign; exponent int32, 0 for
 * zeros, infinities and NaN. */
TEST(frexp) {
  krun r;
  tens x = TF(F32, SH(8), 0, -3, 0.75, 1.4e-45, 3e38, INFINITY, NAN, -0.0);
  CHECK_OK(unary(&r, RLX_UNARY_FREXP_EXPONENT, 0, x));
  CHECK_SHAPE(&r, 0, I32, 8);
  CHECK_I(&r, 0, 0, 2, 0, -148, 128, 0, 0, 0);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_FREXP_MANTISSA, 0, x));
  CHECK_SHAPE(&r, 0, F32, 8);
  CHECK_BITS32(&r, 0, 0.0f, -0.75f, 0.75f, 0.5f, 0.88162076473236084f, INFINITY, NAN, -0.0f);
  krun_free(&r);
  CHECK_ERR(unary(&r, RLX_UNARY_FREXP_EXPONENT, 0, TI(I32, SH(1), 4)), RLX_ERR_UNSUPPORTED, "needs a float input");
  krun_free(&r);
}

/* torch.mvlgamma refuses any element at or below (p - 1) / 2 (NaN included). */
TEST(mvlgamma_domain) {
  krun r;
  /* torch.mvlgamma(tensor([2.5, 10.0], dtype=float64), 3) */
  CHECK_OK(unary(&r, RLX_UNARY_MVLGAMMA, 3, TF(F64, SH(2), 2.5, 10.0)));
  CHECK_F(&r, 0, 1e-14, 1.8809954616117743, 36.81285863239809);
  krun_free(&r);
  CHECK_ERR(unary(&r, RLX_UNARY_MVLGAMMA, 3, TF(F32, SH(3), 2.5, 1.0, 4)), RLX_ERR_RUNTIME, "element 1 is 1");
  krun_free(&r);
  CHECK_ERR(unary(&r, RLX_UNARY_MVLGAMMA, 2, TF(F32, SH(2), 2, NAN)), RLX_ERR_RUNTIME, "element 1 is nan");
  krun_free(&r);
}

/* Edge values torch defines (each list is torch's output, f32 unless noted). */
TEST(edge_values) {
  krun r;
  /* digamma: -inf at +0, +inf at -0, NaN at the poles and -inf */
  CHECK_OK(unary(&r, RLX_UNARY_DIGAMMA, 0, TF(F32, SH(5), 0, -0.0, -2, -INFINITY, INFINITY)));
  CHECK_F(&r, 0, 0, -INFINITY, INFINITY, NAN, NAN, INFINITY);
  krun_free(&r);
  /* polygamma(1, x) at the poles: torch's float sin(pi x) is the rounding of pi x, not 0 */
  CHECK_OK(unary(&r, RLX_UNARY_POLYGAMMA, 1, TF(F32, SH(4), -1, -2, 0, INFINITY)));
  CHECK_F(&r, 0, 1e-6, 1291369695936512.0, 322842423984128.0, INFINITY, 0);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_POLYGAMMA, 1, TF(F64, SH(2), -1, -2)));
  CHECK_F(&r, 0, 1e-13, 6.580790147320947e+32, 1.6451975368302367e+32);
  krun_free(&r);
  /* polygamma(40, 5): 40! overflows float, so torch's float result is inf (in double, -1.795e19) */
  CHECK_OK(unary(&r, RLX_UNARY_POLYGAMMA, 40, TF(F32, SH(1), 5)));
  CHECK_F(&r, 0, 0, -INFINITY);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_POLYGAMMA, 40, TF(F64, SH(1), 5)));
  CHECK_F(&r, 0, 1e-13, -1.7952358086131417e+19);
  krun_free(&r);
  /* sinc(1) is sin(float(pi)) / float(pi) in float, 0 only approximately in double */
  CHECK_OK(unary(&r, RLX_UNARY_SINC, 0, TF(F32, SH(4), 1, 0, 3e38, INFINITY)));
  CHECK_F(&r, 0, 1e-6, -2.7827534054836178e-08, 1, NAN, NAN);
  krun_free(&r);
  /* i0 of a float above log(FLT_MAX) is inf in torch although I0(90) = 1.2e38 fits */
  CHECK_OK(unary(&r, RLX_UNARY_I0, 0, TF(F32, SH(3), 88.72283, 90, INFINITY)));
  CHECK(isfinite(kt_f(&r, 0, 0)) && kt_f(&r, 0, 1) == INFINITY && isnan(kt_f(&r, 0, 2)));
  krun_free(&r);
  /* lgamma: glibc's lgammaf (torch's float lgamma) is inf from 4.0371103e36 */
  CHECK_OK(unary(&r, RLX_UNARY_LGAMMA, 0, TF(F32, SH(3), 4.03711e36, 4.0371103e36, -2)));
  CHECK(isfinite(kt_f(&r, 0, 0)) && kt_f(&r, 0, 1) == INFINITY && kt_f(&r, 0, 2) == INFINITY);
  krun_free(&r);
  /* Bessel J/Y: NaN at +-inf; Y -inf at 0 and NaN below; K inf at 0, 0 at inf; J1(-0) = -0 */
  CHECK_OK(unary(&r, RLX_UNARY_BESSEL_Y1, 0, TF(F32, SH(4), 0, -0.0, -1, INFINITY)));
  CHECK_F(&r, 0, 0, -INFINITY, -INFINITY, NAN, NAN);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_BESSEL_J1, 0, TF(F32, SH(2), -0.0, -INFINITY)));
  CHECK_BITS32(&r, 0, -0.0f, NAN);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_BESSEL_K1E, 0, TF(F32, SH(3), 0, -1, INFINITY)));
  CHECK_F(&r, 0, 0, INFINITY, NAN, 0);
  krun_free(&r);
  /* j0(1e10) in float: torch's phase x - pi/4 rounds to x (6.96649e-06; the true J0 is 2.17559e-06) */
  CHECK_OK(unary(&r, RLX_UNARY_BESSEL_J0, 0, TF(F32, SH(1), 1e10)));
  CHECK_F(&r, 0, 1e-11, 6.966487035242608e-06);
  krun_free(&r);
  CHECK_OK(unary(&r, RLX_UNARY_BESSEL_J0, 0, TF(F64, SH(1), 1e10)));
  CHECK_F(&r, 0, 1e-15, 2.1755892946936445e-06);
  krun_free(&r);
  /* angle of a real number: 0, pi below 0, NaN propagates (-0 gives 0) */
  CHECK_OK(unary(&r, RLX_UNARY_ANGLE, 0, TF(F32, SH(4), 2, -2, -0.0, NAN)));
  CHECK_F(&r, 0, 0, 0, 3.14159274101257324, 0, NAN);
  krun_free(&r);
  /* entr: -x log x, 0 at 0, -inf below, NaN propagates */
  CHECK_OK(unary(&r, RLX_UNARY_ENTR, 0, TF(F64, SH(4), 0.5, 0, -1, NAN)));
  CHECK_F(&r, 0, 1e-15, 0.34657359027997264, 0, -INFINITY, NAN);
  krun_free(&r);
}

/* igamma / igammac boundaries in torch's (SciPy's) order, zeta's poles, xlogy's zeros. */
TEST(binary_edges) {
  krun r;
  tens a = TF(F64, SH(7), 0, 0, NAN, NAN, INFINITY, INFINITY, -1);
  tens x = TF(F64, SH(7), 1, 0, 0, INFINITY, NAN, INFINITY, 1);
  CHECK_OK(binary(&r, RLX_BINARY_IGAMMA, a, x));
  CHECK_F(&r, 0, 0, 1, NAN, 0, 1, 0, NAN, NAN);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_IGAMMAC, a, x));
  CHECK_F(&r, 0, 0, 0, NAN, 1, 0, 1, NAN, NAN);
  krun_free(&r);
  /* zeta(x, q): inf at x = 1 and at non-positive integer q (even for NaN x), NaN for x < 1 */
  CHECK_OK(binary(&r, RLX_BINARY_ZETA, TF(F64, SH(6), 1, 0.5, 2, NAN, 2, INFINITY),
                  TF(F64, SH(6), 3, 1, -2, 0, 1, 1)));
  CHECK_F(&r, 0, 1e-15, INFINITY, NAN, INFINITY, INFINITY, 1.6449340668482264, 1);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_XLOGY, TF(F32, SH(4), 0, 0, 2, -1), TF(F32, SH(4), 0, NAN, 0, 1)));
  CHECK_BITS32(&r, 0, 0.0f, NAN, -INFINITY, -0.0f);
  krun_free(&r);
  CHECK_ERR(binary(&r, RLX_BINARY_IGAMMA, TI(I64, SH(1), 1), TI(I64, SH(1), 1)), RLX_ERR_UNSUPPORTED,
            "needs float inputs");
  krun_free(&r);
  /* the new kinds are values, not predicates: xlogy of f32 is f32 */
  CHECK_OK(binary(&r, RLX_BINARY_XLOG1PY, TF(F32, SH(1), 2), TF(F32, SH(1), 1)));
  CHECK_SHAPE(&r, 0, F32, 1);
  krun_free(&r);
}

TEST_MAIN(nextafter_bits, gcd_lcm, frexp, mvlgamma_domain, edge_values, binary_edges)
