/*
 * test_special_poly.c — the orthogonal polynomials (ops/special_poly.c) and
 * the Airy function (ops/special_airy.c) as binary and unary kinds: values a
 * hand can check (T3(1/2) = -1, H3(1/2) = 8/8 - 6 = -5, P3(1/2) = -7/16, ...),
 * torch's bits where its float recurrence or closed form decides them (noted
 * as eager torch 2.15 CPU), the edges torch defines (n < 0 is 0, NaN n is a
 * negative degree, the ends of the interval, Hermite's degree limit), the
 * step bound and the dtypes the kinds refuse; and ldexp's exact scaling.
 */
#include <math.h>
#include <string.h>

#include "kernel_test.h"
#include "ops/special.h"
#include "test.h"

static rlx_status binary(krun *r, rlx_binary_kind kind, tens a, tens b) {
  rlx_params p = {.binary = {.kind = kind}};
  return krun_op(r, RLX_OP_BINARY, &p, 2, (tens[]){a, b}, 1);
}

static void check_bits32(const krun *r, const float *want, int64_t n, int line) {
  const rlx_tensor_view *v = &r->out[0];
  if (!v->data || rlx_view_numel(v) != n || memcmp(v->data, want, (size_t)n * 4)) {
    fprintf(stderr, "test_special_poly.c:%d: [%s] output is not bit-identical to torch's\n", line, rlx_test_current);
    rlx_test_failures++;
  }
}
#define CHECK_BITS32(r, ...) check_bits32(r, (const float[]){__VA_ARGS__}, KT_NVALS_(float, __VA_ARGS__), __LINE__)

/* x = [0.5, 2, -1, 1, 0.3, NaN, 0.5], n = [3, 2, 5, -1, 10, 2, NaN]: the
 * recurrence (n = 2, 3), the ends (x = +-1), n < 0, the closed form (n = 10
 * inside (-1, 1): torch's float cos(n acos x) and the like), NaN x, NaN n. */
#define X7 TF(F32, SH(7), 0.5, 2, -1, 1, 0.3, NAN, 0.5)
#define N7 TF(F32, SH(7), 3, 2, 5, -1, 10, 2, NAN)

TEST(values_f32) {
  krun r;
  CHECK_OK(binary(&r, RLX_BINARY_CHEBYSHEV_T, X7, N7));
  CHECK_BITS32(&r, -1.0f, 7.0f, -1.0f, 0.0f, 0.9955225586891174f, NAN, 0.0f);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_CHEBYSHEV_U, X7, N7));
  CHECK_BITS32(&r, -1.0f, 15.0f, -6.0f, 0.0f, 1.0252491235733032f, NAN, 0.0f);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_CHEBYSHEV_V, X7, N7));
  CHECK_BITS32(&r, -1.0f, 11.0f, -11.0f, 0.0f, 0.926160454750061f, NAN, 0.0f);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_CHEBYSHEV_W, X7, N7));
  CHECK_BITS32(&r, -1.0f, 19.0f, -1.0f, 0.0f, 1.1243377923965454f, NAN, 0.0f);
  krun_free(&r);
  /* shifted T3(1/2) = T3(0) = -0 (the recurrence's sign), T2(3) = 17, T5(-3) = -3363 */
  CHECK_OK(binary(&r, RLX_BINARY_SHIFTED_CHEBYSHEV_T, X7, N7));
  CHECK_BITS32(&r, -0.0f, 17.0f, -3363.0f, 0.0f, 0.5623463988304138f, NAN, 0.0f);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_HERMITE_H, X7, N7));
  CHECK_BITS32(&r, -5.0f, 14.0f, 8.0f, 0.0f, -6173.8515625f, NAN, 0.0f);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_HERMITE_HE, X7, N7));
  CHECK_BITS32(&r, -1.375f, 3.0f, -6.0f, 0.0f, -544.8087158203125f, NAN, 0.0f);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_LAGUERRE_L, X7, N7));
  CHECK_BITS32(&r, -0.1458333283662796f, -1.0f, 12.883333206176758f, 0.0f, -0.4490206241607666f, NAN, 0.0f);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_LEGENDRE_P, X7, N7));
  CHECK_BITS32(&r, -0.4375f, 5.5f, -1.0f, 0.0f, 0.25147634744644165f, NAN, 0.0f);
  krun_free(&r);
}

/* f64 runs torch's algorithm in double; broadcasting ([3,1] x against [2] n). */
TEST(values_f64_broadcast) {
  krun r;
  CHECK_OK(binary(&r, RLX_BINARY_LAGUERRE_L, TF(F64, SH(3, 1), 0.5, -1, 0.3), TF(F64, SH(2), 3, 10)));
  CHECK_F(&r, 0, 0, -0.14583333333333334, -0.3893744141378521, 5.666666666666667, 64.66662009479717,
          0.23050000000000007, -0.44902050945819366);
  krun_free(&r);
  /* Hermite: degree 129 is past float's limit (NaN) but within double's */
  CHECK_OK(binary(&r, RLX_BINARY_HERMITE_H, TF(F32, SH(1), 0.5), TF(F32, SH(1), 129)));
  CHECK_BITS32(&r, NAN);
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_HERMITE_H, TF(F64, SH(1), 0.5), TF(F64, SH(1), 129)));
  CHECK_F(&r, 0, 1e-15 * 5.4211e127, 5.4211e127);
  krun_free(&r);
}

/* A recurrence that would run for hours in torch (n = 2^40 inside (-1, 1),
 * where Legendre has no closed form) is refused past 2^24 steps; one that
 * overflows to NaN early (|x| > 1) is not. */
TEST(step_bound) {
  krun r;
  CHECK_ERR(binary(&r, RLX_BINARY_LEGENDRE_P, TF(F32, SH(2), 2, 0.5), TF(F32, SH(2), 3, 1099511627776.0)),
            RLX_ERR_RUNTIME, "element 1 needs more than 2^24 recurrence steps");
  krun_free(&r);
  CHECK_OK(binary(&r, RLX_BINARY_CHEBYSHEV_T, TF(F32, SH(1), 3), TF(F32, SH(1), 1099511627776.0)));
  CHECK_F(&r, 0, 0, NAN);
  krun_free(&r);
  CHECK_ERR(binary(&r, RLX_BINARY_CHEBYSHEV_T, TF(F16, SH(1), 0.5), TF(F16, SH(1), 2)), RLX_ERR_UNSUPPORTED,
            "needs f32 or f64 inputs");
  krun_free(&r);
  CHECK_ERR(binary(&r, RLX_BINARY_LEGENDRE_P, TI(I64, SH(1), 1), TI(I64, SH(1), 2)), RLX_ERR_UNSUPPORTED,
            "needs float inputs");
  krun_free(&r);
}

/* Ai against mpmath (torch's own double Ai(-5) is off by 4e-14): Ai(0) = 1 /
 * (3^(2/3) Gamma(2/3)); torch's edges: +-inf NaN, x > 103.892 zero. */
TEST(airy) {
  krun r;
  rlx_params p = {.unary = {.kind = RLX_UNARY_AIRY_AI}};
  tens x = TF(F64, SH(9), 0, 1, -1, 5, -5, 30, INFINITY, -INFINITY, 200);
  CHECK_OK(krun_op(&r, RLX_OP_UNARY, &p, 1, &x, 1));
  CHECK_F(&r, 0, 1e-15, 0.3550280538878172, 0.13529241631288141, 0.5355608832923521, 0.00010834442813607442,
          0.35076100902411433, 3.2082175915504954e-49, NAN, NAN, 0);
  krun_free(&r);
  /* float: torch's 2 x^(1/4) exp(zeta) overflows at x = 26, so Ai(26) is 0 there; Ai(25) is not
   * (mpmath's value: torch's float, exp of a rounded zeta, is 2.6e-6 off) */
  x = TF(F32, SH(3), 26, 25, NAN);
  CHECK_OK(krun_op(&r, RLX_OP_UNARY, &p, 1, &x, 1));
  CHECK_F(&r, 0, 1e-44, 0, 8.116026824691387e-38, NAN);
  krun_free(&r);
}

/* ldexp with an integer exponent scales exactly, as torch's kernel (eager
 * torch.ldexp(tensor([1e-30, 1, 1.5, 0, -3]), tensor([200, 128, -149, 5000, -5000]))). */
TEST(ldexp_exact) {
  krun r;
  CHECK_OK(binary(&r, RLX_BINARY_LDEXP, TF(F32, SH(5), 1e-30, 1, 1.5, 0, -3), TF(F32, SH(5), 200, 128, -149, 5000, -5000)));
  CHECK_BITS32(&r, 1.6069380493547143e+30f, INFINITY, 2.802596928649634e-45f, 0.0f, -0.0f);
  krun_free(&r);
}

TEST_MAIN(values_f32, values_f64_broadcast, step_bound, airy, ldexp_exact)
