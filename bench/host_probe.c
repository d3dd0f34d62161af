/*
 * host_probe.c — how many of the host's cores are free right now: one
 * FMA-bound loop timed on one thread alone, then the same loop on T threads
 * at once (each thread the same work), best of a few tries each; prints
 * the speedup, T where T cores run the loop and about 1 where the vCPUs
 * share one core (the shared host of docs/perf.md ran its two vCPUs as one
 * core for minutes at a time). bench/compare.py runs it before and after
 * each multi-thread round and leaves the rounds run on a contended host out
 * of its medians. Numbers, not assertions.
 *
 *   host_probe [threads (2-64)] [ms per try]   -> one JSON line
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"

typedef float v16 __attribute__((vector_size(64)));
#define ACC 12 /* independent chains: enough to keep the FMA pipes full */

static volatile float keep;

typedef struct worker {
  long iters;
  pthread_barrier_t *start;
  double seconds;
  float sink;
} worker;

static float fma_loop(long iters) {
  v16 acc[ACC], a, b;
  for (int k = 0; k < 16; k++) a[k] = 0.999999f, b[k] = 1e-6f;
  for (int i = 0; i < ACC; i++)
    for (int k = 0; k < 16; k++) acc[i][k] = (float)(i + k);
  for (long n = 0; n < iters; n++)
    for (int i = 0; i < ACC; i++) acc[i] = acc[i] * a + b;
  float s = 0;
  for (int i = 0; i < ACC; i++)
    for (int k = 0; k < 16; k++) s += acc[i][k];
  return s;
}

static void *run(void *p) {
  worker *w = p;
  if (w->start) pthread_barrier_wait(w->start);
  double t0 = bench_now();
  w->sink = fma_loop(w->iters);
  w->seconds = bench_now() - t0;
  return NULL;
}

/* Wall seconds for T threads each running `iters` (T = 1: the caller alone). */
static double timed(int T, long iters, float *sink) {
  worker w[64];
  pthread_t th[64];
  pthread_barrier_t start;
  if (T > 1 && pthread_barrier_init(&start, NULL, (unsigned)T) != 0) return -1;
  for (int i = 0; i < T; i++) w[i] = (worker){iters, T > 1 ? &start : NULL, 0, 0};
  for (int i = 1; i < T; i++)
    if (pthread_create(&th[i], NULL, run, &w[i]) != 0) return -1;
  run(&w[0]);
  double worst = w[0].seconds;
  for (int i = 1; i < T; i++) {
    pthread_join(th[i], NULL);
    if (w[i].seconds > worst) worst = w[i].seconds;
  }
  for (int i = 0; i < T; i++) *sink += w[i].sink;
  if (T > 1) pthread_barrier_destroy(&start);
  return worst;
}

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 2;
  double ms = argc > 2 ? atof(argv[2]) : 5.0;
  if (T < 2 || T > 64 || !(ms > 0 && ms <= 1000)) {
    fprintf(stderr, "usage: host_probe [threads (2-64)] [ms per try (0-1000]]\n");
    return 2;
  }
  float sink = 0;
  long iters = 1000;
  double t;
  while ((t = timed(1, iters, &sink)) >= 0 && t < ms * 1e-3 / 4) iters *= 2; /* about `ms` a try */
  if (t < 0) return 1;
  iters = (long)((double)iters * (ms * 1e-3) / t) + 1;
  double one = 1e30, many = 1e30;
  for (int r = 0; r < 3; r++) { /* alternating, best of three each */
    double a = timed(1, iters, &sink), b = timed(T, iters, &sink);
    if (a < 0 || b < 0) return 1;
    if (a < one) one = a;
    if (b < many) many = b;
  }
  keep = sink; /* the loops' results are used: not optimized away */
  printf("{\"threads\": %d, \"speedup\": %.3f, \"one_ms\": %.3f, \"all_ms\": %.3f}\n", T, T * one / many, one * 1e3,
         many * 1e3);
  return 0;
}
