/*
 * test_cpu_vmath.c — the vector math the fast kernels share (cpu/vmath.h):
 * tanh, sigmoid, SiLU and GELU against double-precision libm rounded to
 * float, within a few ulp, over sweeps of float bit patterns and at the
 * special values, through the unary kernels' row function; the lane
 * reductions (max, sum, exp-sum, sum of squared deviations) against plain
 * loops, with NaN and infinities at every lane position and
 * tails that fill no whole vector; hardswish against torch's float operations
 * within an ulp.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/select.h"
#include "cpu/vmath.h"
#include "test.h"

/* tanh_f32 (cpu/vmath.h) within 4 ulp of the double tanh rounded, over a
 * sweep of float bit patterns in [-12, 12], around the 0.625 switch, at
 * tiny values (tanh x = x), and exactly +-1, NaN at the extremes. */
TEST(tanh_accuracy) {
  float worst = 0;
  for (uint32_t u = 0; u < 0x41400000u; u += 977) {
    for (int sgn = 0; sgn < 2; sgn++) {
      union { uint32_t u; float f; } v = {.u = u | (sgn ? 0x80000000u : 0)};
      float want = (float)tanh((double)v.f), got = tanh_f32(v.f);
      float ulp = fmaxf(nextafterf(fabsf(want), INFINITY) - fabsf(want), 1e-45f);
      float e = fabsf(got - want) / ulp;
      if (e > worst) worst = e;
      if (!(e <= 4)) {
        fprintf(stderr, "  tanh_f32(%.9g) = %.9g, want %.9g\n", v.f, got, want);
        CHECK(e <= 4);
        return;
      }
    }
  }
  CHECK(tanh_f32(0.625f) > 0.554f && tanh_f32(0.62499997f) < tanh_f32(0.625f));
  CHECK(tanh_f32(100.0f) == 1.0f && tanh_f32(-INFINITY) == -1.0f && tanh_f32(INFINITY) == 1.0f);
  CHECK(isnan(tanh_f32(NAN)));
  CHECK(tanh_f32(1e-30f) == 1e-30f && signbit(tanh_f32(-0.0f)));
  printf("  tanh_f32: worst %.2f ulp\n", worst);
}

/* The fast SiLU and sigmoid (cpu/vmath_avx512.c where the CPU has AVX-512,
 * else vmath.h's loop) within 4 ulp of the double formula rounded, over a
 * sweep of float bit patterns in [-100, 100] (results below the smallest
 * normal float within 1e-38 absolute; below x = -87, where e^-x nears the
 * float range and torch's float exp overflows too, silu only tiny and not
 * positive), with torch's values at the edges:
 * NaN -> NaN, silu(+inf) = inf, silu(-inf) = NaN, sigmoid(-inf) = 0. */
TEST(silu_sigmoid_accuracy) {
  for (int sig = 0; sig < 2; sig++) {
    rlx_unary_params p = {.kind = sig ? RLX_UNARY_SIGMOID : RLX_UNARY_SILU};
    enum { N = 4099 }; /* not a multiple of 16: the masked tail too */
    static float x[N], y[N];
    float worst = 0;
    for (uint32_t u0 = 0; u0 < 0x42c80000u; u0 += 977 * N) {
      int n = 0;
      for (uint32_t u = u0; n < N; u += 977, n++) {
        union { uint32_t u; float f; } v = {.u = (u % 0x42c80000u) | (n % 2 ? 0x80000000u : 0)};
        x[n] = v.f;
      }
      CHECK(rlx_cpu_unary_f32(&p, x, y, N));
      for (int i = 0; i < N; i++) {
        double d = (double)x[i], e = sig ? 1.0 / (1.0 + exp(-d)) : d / (1.0 + exp(-d));
        float want = (float)e, got = y[i];
        float ulp = fmaxf(nextafterf(fabsf(want), INFINITY) - fabsf(want), 1e-45f), err = fabsf(got - want) / ulp;
        bool edge = !sig && x[i] < -87.0f;
        bool ok = edge ? (got <= 0.0f && got >= -1e-35f) : err <= 4 || (fabsf(want) < 1.2e-38f && fabsf(got - want) <= 1e-38f);
        if (!edge && err > worst && fabsf(want) >= 1.2e-38f) worst = err;
        if (!ok) {
          fprintf(stderr, "  %s(%.9g) = %.9g, want %.9g\n", sig ? "sigmoid" : "silu", x[i], got, want);
          CHECK(ok);
          return;
        }
      }
    }
    float sx[5] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f}, sy[5];
    CHECK(rlx_cpu_unary_f32(&p, sx, sy, 5));
    CHECK(isnan(sy[0]));
    CHECK(sig ? sy[1] == 1.0f && sy[2] == 0.0f && sy[3] == 0.5f : sy[1] == INFINITY && isnan(sy[2]) && sy[3] == 0.0f);
    printf("  %s: worst %.2f ulp\n", sig ? "sigmoid" : "silu", worst);
  }
}

/* The fast GELU (erf form; AVX-512 or vmath.h's gelu_f32) against the
 * double formula: erf's approximation is good to 1.5e-7 absolute, so the
 * bar is 4 ulp plus 3e-7 |x| (that error times x / 2, with the rounding of
 * 2 - q near 0), over [-20, 20]; at the edges NaN gives NaN and 0 gives 0,
 * and +-inf give the formula's inf and NaN (-inf * 0) or NaN for both, as
 * torch's own kernel does. */
TEST(gelu_accuracy) {
  rlx_unary_params p = {.kind = RLX_UNARY_GELU};
  enum { N = 4099 };
  static float x[N], y[N];
  for (uint32_t u0 = 0; u0 < 0x41a00000u; u0 += 1531 * N) {
    for (int n = 0; n < N; n++) {
      union { uint32_t u; float f; } v = {.u = ((u0 + (uint32_t)n * 1531u) % 0x41a00000u) | (n % 2 ? 0x80000000u : 0)};
      x[n] = v.f;
    }
    CHECK(rlx_cpu_unary_f32(&p, x, y, N));
    for (int i = 0; i < N; i++) {
      double d = x[i], e = 0.5 * d * (1.0 + erf(d * M_SQRT1_2));
      float want = (float)e, ulp = fmaxf(nextafterf(fabsf(want), INFINITY) - fabsf(want), 1e-45f);
      bool ok = fabsf(y[i] - want) <= 4 * ulp + 3e-7f * fabsf(x[i]);
      if (!ok) {
        fprintf(stderr, "  gelu(%.9g) = %.9g, want %.9g\n", x[i], y[i], want);
        CHECK(ok);
        return;
      }
    }
  }
  float sx[4] = {NAN, INFINITY, -INFINITY, 0.0f}, sy[4];
  CHECK(rlx_cpu_unary_f32(&p, sx, sy, 4));
  CHECK(isnan(sy[0]) && (sy[1] == INFINITY || isnan(sy[1])) && isnan(sy[2]) && sy[3] == 0.0f);
}

/* the lane reductions of vmath.h, against plain loops */
TEST(vmath_reductions) {
  float x[40];
  for (int i = 0; i < 40; i++) x[i] = (float)((i * 7) % 13) - 6.0f;
  CHECK(vmax_f32(x, 40) == 6.0f);
  CHECK(vmax_f32(x, 0) == -INFINITY);
  CHECK(vmax_f32(x, 3) == 1.0f); /* -6, 1, -5: no full lane */
  int pos[] = {0, 5, 15, 16, 31, 33, 39};
  for (size_t p = 0; p < sizeof pos / sizeof pos[0]; p++) {
    float y[40];
    memcpy(y, x, sizeof y);
    y[pos[p]] = NAN;
    CHECK(isnan(vmax_f32(y, 40)));
    y[pos[p]] = INFINITY;
    CHECK(vmax_f32(y, 40) == INFINITY);
  }
  float ninf[33];
  for (int i = 0; i < 33; i++) ninf[i] = -INFINITY;
  CHECK(vmax_f32(ninf, 33) == -INFINITY);
  double s = 0, q = 0;
  for (int i = 0; i < 40; i++) s += x[i], q += ((double)x[i] - 0.5) * ((double)x[i] - 0.5);
  CHECK_NEAR(vsum_f32(x, 40), s, 1e-9);
  CHECK_NEAR(vsum_f32(x, 7), -6.0 + 1 - 5 + 2 - 4 + 3 - 3, 1e-9);
  CHECK_NEAR(vsumsq_dev_f32(x, 40, 0.5f), q, 1e-6);
  CHECK(vsum_f32(x, 0) == 0.0);
  /* vexp_sum_f32 (and on AVX-512 CPUs its vector version) against exp in
   * double: every tail length, a scale inside the exponential, -inf giving
   * 0 and NaN giving NaN, y == x allowed */
  for (int n = 0; n <= 40; n++)
    for (int sc = 0; sc < 2; sc++) {
      float scale = sc ? 0.125f : 1.0f, y[40], m = 2.5f;
      double want = 0, got = vexp_sum_f32(x, y, n, m, scale);
      for (int i = 0; i < n; i++) {
        double e = exp((double)scale * ((double)x[i] - m));
        want += e;
        CHECK_NEAR(y[i], e, 4e-7 * e);
      }
      CHECK_NEAR(got, want, 1e-6 * (want + 1e-30));
    }
  float z[21];
  for (int i = 0; i < 21; i++) z[i] = i % 3 ? -INFINITY : (float)i;
  double zs = vexp_sum_f32(z, z, 21, 18.0f, 1.0f);
  CHECK(z[1] == 0.0f && z[20] == 0.0f && z[18] == 1.0f);
  CHECK_NEAR(zs, 1 + exp(-3.0) + exp(-6.0) + exp(-9.0) + exp(-12.0) + exp(-15.0) + exp(-18.0), 1e-6);
  z[17] = NAN;
  CHECK(isnan(vexp_sum_f32(z, z, 21, 18.0f, 1.0f)) && isnan(z[17]));
  /* exponents at and past the float range's bottom (a mask's -inf or
   * finfo.min after the max is taken out): within FLT_MIN of e^-d (the
   * AVX-512 path gives 0 past e^-87, the portable one expf's denormal), and
   * the terms in range exact to a few ulp */
  float dz[34], dy[34];
  const float ds[] = {0.0f, 1.0f, 86.5f, 87.0f, 87.5f, 100.0f, 103.9f, 120.0f, 1e30f, INFINITY, 2.0f};
  for (int i = 0; i < 34; i++) dz[i] = 5.0f - ds[i % 11];
  double dsum = vexp_sum_f32(dz, dy, 34, 5.0f, 1.0f), dwant = 0;
  for (int i = 0; i < 34; i++) {
    double e = exp(-(double)ds[i % 11]);
    dwant += e;
    CHECK(fabs(dy[i] - e) <= 4e-7 * e + FLT_MIN);
    CHECK(dy[i] >= 0.0f);
  }
  CHECK_NEAR(dsum, dwant, 1e-6 * dwant);
  dsum = vexp_sum_f32(dz, dy, 34, 5.0f, 0.5f); /* the same through the scale: d / 2 */
  dwant = 0;
  for (int i = 0; i < 34; i++) {
    double e = exp(-0.5 * (double)ds[i % 11]);
    dwant += e;
    CHECK(fabs(dy[i] - e) <= 4e-7 * e + FLT_MIN);
  }
  CHECK_NEAR(dsum, dwant, 1e-6 * dwant);
  CHECK(dy[8] == 0.0f && dy[9] == 0.0f);
}

/* hardswish (the unary kernel's row; the sgemm post and the depthwise rows
 * compute the same operations) against torch's float operations, x *
 * min(max(x + 3, 0), 6) / 6: within 1 ulp (rlx multiplies by 1/6 instead
 * of dividing, eltwise.c; below the smallest normal, within its ulp), NaN
 * for NaN, over every 613th float bit pattern and the special values. */
static float hardswish_torch(float x) {
  float v = x + 3.0f;
  v = v < 0.0f ? 0.0f : v;
  v = v > 6.0f ? 6.0f : v;
  return x * v / 6.0f;
}

TEST(hardswish_within_an_ulp) {
  rlx_unary_params p = {.kind = RLX_UNARY_HARDSWISH};
  enum { N = 4093 };
  static float x[N], y[N];
  int64_t bad = 0, seen = 0;
  for (uint64_t u0 = 0; u0 < (1ull << 32); u0 += 613ull * N) {
    int n = 0;
    for (uint64_t u = u0; n < N; u += 613, n++) {
      union { uint32_t u; float f; } v = {.u = (uint32_t)u};
      x[n] = v.f;
    }
    if (u0 == 0) x[0] = INFINITY, x[1] = -INFINITY, x[2] = NAN, x[3] = -3.0f, x[4] = 3.0f, x[5] = -0.0f, x[6] = 1e-45f;
    CHECK(rlx_cpu_unary_f32(&p, x, y, N));
    for (int i = 0; i < N; i++, seen++) {
      float want = hardswish_torch(x[i]), got = y[i];
      bool ok = isnan(want) ? isnan(got)
                : isinf(want) ? got == want
                : fabsf(got - want) <= nextafterf(fabsf(want), INFINITY) - fabsf(want);
      if (!ok && bad++ < 5) fprintf(stderr, "  hardswish(%a) = %a, torch %a\n", x[i], got, want);
    }
  }
  CHECK(bad == 0 && seen > 7000000);
}

TEST_MAIN(tanh_accuracy, silu_sigmoid_accuracy, gelu_accuracy, vmath_reductions, hardswish_within_an_ulp)
