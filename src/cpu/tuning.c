/*
 * tuning.c — the per-host constants of the cost models (cpu/tuning.h). Each
 * row is fitted on one host with bench/bench_conv (docs/perf.md, "Host
 * tuning"); a CPU that matches no row gets the first.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "cpu/tuning.h"

static const rlx_cpu_tuning tunings[] = {
    /* The Xeon host (2026-12-05 fit: 37 3x3 stride-1 layer shapes of seven CNNs, 1 and 2 threads). */
    {"xeon", 1.2, 1.5, 512 << 10, 16},
    /* The AMD EPYC host (CPUID family 0x19 model 0x11, AVX-512; 2026-12-07 fit on bench_conv's fifteen 3x3
     * stride-1 layers at 1 and 2 threads): its F(4x4) transforms ran 0.4-0.8 ns per element of V and M where
     * the Xeon's took about 1.5, and one thread's pixel-major 1x1s with 1-4 MiB of weights ran 0.87-0.94x the
     * channel-major time (the Xeon's 1.06-1.2x). Its sgemm is bound by the FMAs (one 16-lane FMA a cycle),
     * so a padded column costs nearly what a useful one does: one thread, B prepacked, the 12x16 kernel ran
     * 784x40x240 at 89 GFLOP/s against the 12x32's 69, 784x48x288 105 against 79, 196x80x480 103 against
     * 92, 196x112x672 100 against 95, 24 columns alike. Since the 12x16 kernel computes only the rows of its
     * last row block (49x1040x320: 93 against 107 before, 107 against 107 since), it is as fast as the 12x32 or
     * faster wherever N leaves half a 32-column panel (784x144x144 109 against 99, 784x1000x512 110 against
     * 105, 49x336x336 105 against 101) and within a few percent either way where N is a multiple of 32
     * (49x160x960 100 against 108, 196x784x320 113 against 110): no fixed cost, ties to the widest. */
    {"amd-avx512", 1.2, 0.6, SIZE_MAX, 0},
};

static const rlx_cpu_tuning *by_name(const char *name) {
  for (size_t i = 0; i < sizeof tunings / sizeof tunings[0]; i++)
    if (!strcmp(tunings[i].name, name)) return &tunings[i];
  return NULL;
}

static const rlx_cpu_tuning *detect(void) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  char vendor[13] = {0};
  if (__get_cpuid(0, &a, &b, &c, &d)) {
    memcpy(vendor, &b, 4), memcpy(vendor + 4, &d, 4), memcpy(vendor + 8, &c, 4);
    if (!strcmp(vendor, "AuthenticAMD") && __builtin_cpu_supports("avx512f")) return by_name("amd-avx512");
  }
#endif
  return &tunings[0];
}

const rlx_cpu_tuning *rlx_cpu_tuning_get(void) {
  const char *force = getenv("RLX_CPU_TUNING");
  const rlx_cpu_tuning *t = force && *force ? by_name(force) : NULL;
  if (t) return t;
  static const rlx_cpu_tuning *_Atomic host; /* every thread computes the same answer */
  if (!(t = host)) host = t = detect();
  return t;
}
