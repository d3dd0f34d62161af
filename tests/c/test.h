/*
 * test.h — a minimal test harness for the C unit tests: CHECK macros that
 * report file:line and keep going, and a main() per test file that runs the
 * TEST(...) functions it lists and exits non-zero on any failure.
 *
 *   TEST(name) { CHECK(x == 1); CHECK_NEAR(y, 0.5, 1e-6); CHECK_OK(st); }
 *   TEST_MAIN(name, other, ...)
 */
#ifndef RLX_TEST_H
#define RLX_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rlx.h"

extern int rlx_test_failures;
extern const char *rlx_test_current;

#define CHECK(c)                                                                          \
  do {                                                                                    \
    if (!(c)) {                                                                           \
      fprintf(stderr, "%s:%d: [%s] CHECK failed: %s\n", __FILE__, __LINE__,               \
              rlx_test_current, #c);                                                      \
      rlx_test_failures++;                                                                \
    }                                                                                     \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                             \
  do {                                                                                    \
    double a_ = (double)(a), b_ = (double)(b);                                            \
    if (!(fabs(a_ - b_) <= (tol)) && !(isnan(a_) && isnan(b_))) {                         \
      fprintf(stderr, "%s:%d: [%s] %s = %.9g, expected %s = %.9g (tol %g)\n", __FILE__,   \
              __LINE__, rlx_test_current, #a, a_, #b, b_, (double)(tol));                 \
      rlx_test_failures++;                                                                \
    }                                                                                     \
  } while (0)

#define CHECK_OK(expr)                                                                    \
  do {                                                                                    \
    rlx_status s_ = (expr);                                                               \
    if (s_ != RLX_OK) {                                                                   \
      fprintf(stderr, "%s:%d: [%s] %s returned %s: %s\n", __FILE__, __LINE__,             \
              rlx_test_current, #expr, rlx_status_string(s_), rlx_last_error());          \
      rlx_test_failures++;                                                                \
    }                                                                                     \
  } while (0)

/* expr must fail with status `want` and an error message containing `text`. */
#define CHECK_ERR(expr, want, text)                                                       \
  do {                                                                                    \
    rlx_status s_ = (expr);                                                               \
    if (s_ != (want) || !strstr(rlx_last_error(), (text))) {                              \
      fprintf(stderr, "%s:%d: [%s] %s returned %s (\"%s\"), expected %s containing "      \
              "\"%s\"\n", __FILE__, __LINE__, rlx_test_current, #expr,                    \
              rlx_status_string(s_), rlx_last_error(), rlx_status_string(want), (text));  \
      rlx_test_failures++;                                                                \
    }                                                                                     \
  } while (0)

#define TEST(name) static void test_##name(void)

/* Each test is timed: one that takes over 2 s says so (CI's time goes mostly to the sanitizer builds). */
static inline double rlx_test_now_(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define RLX_TEST_RUN_(name)                                                               \
  {                                                                                       \
    rlx_test_current = #name;                                                             \
    double t0_ = rlx_test_now_();                                                         \
    test_##name();                                                                        \
    double dt_ = rlx_test_now_() - t0_;                                                   \
    if (dt_ > 2.0) printf("  %s: %.1f s\n", #name, dt_);                                  \
  }

#define TEST_MAIN(...)                                                                    \
  int rlx_test_failures = 0;                                                              \
  const char *rlx_test_current = "";                                                      \
  int main(void) {                                                                        \
    RLX_TEST_FOREACH_(RLX_TEST_RUN_, __VA_ARGS__)                                         \
    if (rlx_test_failures) fprintf(stderr, "%d check(s) failed\n", rlx_test_failures);    \
    else printf("all checks passed\n");                                                   \
    return rlx_test_failures ? 1 : 0;                                                     \
  }

/* RLX_TEST_FOREACH_(M, a, b, ...) expands M(a) M(b) ... for up to 48 names. */
#define RLX_TEST_FE_1(M, x) M(x)
#define RLX_TEST_FE_2(M, x, ...) M(x) RLX_TEST_FE_1(M, __VA_ARGS__)
#define RLX_TEST_FE_3(M, x, ...) M(x) RLX_TEST_FE_2(M, __VA_ARGS__)
#define RLX_TEST_FE_4(M, x, ...) M(x) RLX_TEST_FE_3(M, __VA_ARGS__)
#define RLX_TEST_FE_5(M, x, ...) M(x) RLX_TEST_FE_4(M, __VA_ARGS__)
#define RLX_TEST_FE_6(M, x, ...) M(x) RLX_TEST_FE_5(M, __VA_ARGS__)
#define RLX_TEST_FE_7(M, x, ...) M(x) RLX_TEST_FE_6(M, __VA_ARGS__)
#define RLX_TEST_FE_8(M, x, ...) M(x) RLX_TEST_FE_7(M, __VA_ARGS__)
#define RLX_TEST_FE_9(M, x, ...) M(x) RLX_TEST_FE_8(M, __VA_ARGS__)
#define RLX_TEST_FE_10(M, x, ...) M(x) RLX_TEST_FE_9(M, __VA_ARGS__)
#define RLX_TEST_FE_11(M, x, ...) M(x) RLX_TEST_FE_10(M, __VA_ARGS__)
#define RLX_TEST_FE_12(M, x, ...) M(x) RLX_TEST_FE_11(M, __VA_ARGS__)
#define RLX_TEST_FE_13(M, x, ...) M(x) RLX_TEST_FE_12(M, __VA_ARGS__)
#define RLX_TEST_FE_14(M, x, ...) M(x) RLX_TEST_FE_13(M, __VA_ARGS__)
#define RLX_TEST_FE_15(M, x, ...) M(x) RLX_TEST_FE_14(M, __VA_ARGS__)
#define RLX_TEST_FE_16(M, x, ...) M(x) RLX_TEST_FE_15(M, __VA_ARGS__)
#define RLX_TEST_FE_17(M, x, ...) M(x) RLX_TEST_FE_16(M, __VA_ARGS__)
#define RLX_TEST_FE_18(M, x, ...) M(x) RLX_TEST_FE_17(M, __VA_ARGS__)
#define RLX_TEST_FE_19(M, x, ...) M(x) RLX_TEST_FE_18(M, __VA_ARGS__)
#define RLX_TEST_FE_20(M, x, ...) M(x) RLX_TEST_FE_19(M, __VA_ARGS__)
#define RLX_TEST_FE_21(M, x, ...) M(x) RLX_TEST_FE_20(M, __VA_ARGS__)
#define RLX_TEST_FE_22(M, x, ...) M(x) RLX_TEST_FE_21(M, __VA_ARGS__)
#define RLX_TEST_FE_23(M, x, ...) M(x) RLX_TEST_FE_22(M, __VA_ARGS__)
#define RLX_TEST_FE_24(M, x, ...) M(x) RLX_TEST_FE_23(M, __VA_ARGS__)
#define RLX_TEST_FE_25(M, x, ...) M(x) RLX_TEST_FE_24(M, __VA_ARGS__)
#define RLX_TEST_FE_26(M, x, ...) M(x) RLX_TEST_FE_25(M, __VA_ARGS__)
#define RLX_TEST_FE_27(M, x, ...) M(x) RLX_TEST_FE_26(M, __VA_ARGS__)
#define RLX_TEST_FE_28(M, x, ...) M(x) RLX_TEST_FE_27(M, __VA_ARGS__)
#define RLX_TEST_FE_29(M, x, ...) M(x) RLX_TEST_FE_28(M, __VA_ARGS__)
#define RLX_TEST_FE_30(M, x, ...) M(x) RLX_TEST_FE_29(M, __VA_ARGS__)
#define RLX_TEST_FE_31(M, x, ...) M(x) RLX_TEST_FE_30(M, __VA_ARGS__)
#define RLX_TEST_FE_32(M, x, ...) M(x) RLX_TEST_FE_31(M, __VA_ARGS__)
#define RLX_TEST_FE_33(M, x, ...) M(x) RLX_TEST_FE_32(M, __VA_ARGS__)
#define RLX_TEST_FE_34(M, x, ...) M(x) RLX_TEST_FE_33(M, __VA_ARGS__)
#define RLX_TEST_FE_35(M, x, ...) M(x) RLX_TEST_FE_34(M, __VA_ARGS__)
#define RLX_TEST_FE_36(M, x, ...) M(x) RLX_TEST_FE_35(M, __VA_ARGS__)
#define RLX_TEST_FE_37(M, x, ...) M(x) RLX_TEST_FE_36(M, __VA_ARGS__)
#define RLX_TEST_FE_38(M, x, ...) M(x) RLX_TEST_FE_37(M, __VA_ARGS__)
#define RLX_TEST_FE_39(M, x, ...) M(x) RLX_TEST_FE_38(M, __VA_ARGS__)
#define RLX_TEST_FE_40(M, x, ...) M(x) RLX_TEST_FE_39(M, __VA_ARGS__)
#define RLX_TEST_FE_41(M, x, ...) M(x) RLX_TEST_FE_40(M, __VA_ARGS__)
#define RLX_TEST_FE_42(M, x, ...) M(x) RLX_TEST_FE_41(M, __VA_ARGS__)
#define RLX_TEST_FE_43(M, x, ...) M(x) RLX_TEST_FE_42(M, __VA_ARGS__)
#define RLX_TEST_FE_44(M, x, ...) M(x) RLX_TEST_FE_43(M, __VA_ARGS__)
#define RLX_TEST_FE_45(M, x, ...) M(x) RLX_TEST_FE_44(M, __VA_ARGS__)
#define RLX_TEST_FE_46(M, x, ...) M(x) RLX_TEST_FE_45(M, __VA_ARGS__)
#define RLX_TEST_FE_47(M, x, ...) M(x) RLX_TEST_FE_46(M, __VA_ARGS__)
#define RLX_TEST_FE_48(M, x, ...) M(x) RLX_TEST_FE_47(M, __VA_ARGS__)
#define RLX_TEST_NARG_(...) RLX_TEST_NARG2_(__VA_ARGS__, 48, 47, 46, 45, 44, 43, 42, 41, 40, \
  39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17,  \
  16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define RLX_TEST_NARG2_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, \
  _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35, \
  _36, _37, _38, _39, _40, _41, _42, _43, _44, _45, _46, _47, _48, N, ...) N
#define RLX_TEST_CAT_(a, b) a##b
#define RLX_TEST_XCAT_(a, b) RLX_TEST_CAT_(a, b)
#define RLX_TEST_FOREACH_(M, ...) \
  RLX_TEST_XCAT_(RLX_TEST_FE_, RLX_TEST_NARG_(__VA_ARGS__))(M, __VA_ARGS__)

#endif
