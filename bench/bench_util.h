/*
 * bench_util.h — what rlx's benchmark programs share: the clock they time
 * with and the comparison they sort times by. Each benchmark stays one
 * program; this header is static inline only.
 *
 * The clock is wall time unless a program at one thread asks for the
 * thread's CPU time (bench_clock = CLOCK_THREAD_CPUTIME_ID): the pool's
 * only thread is then the caller, and time other processes hold the core
 * does not count on a shared machine (cache and memory contention still do).
 */
#ifndef RLX_BENCH_UTIL_H
#define RLX_BENCH_UTIL_H

#include <time.h>

static clockid_t bench_clock = CLOCK_MONOTONIC;

static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(bench_clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* qsort's comparison of two doubles, ascending. */
static inline int bench_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#endif
