/*
 * bandwidth.c — measured read bandwidth of this machine: N threads each sum
 * their share of a buffer much larger than the caches, best of several
 * passes. The bound for decoding a language model is this figure divided by
 * the bytes of weights one token reads (bench/generate.py).
 *
 *   bench/bandwidth [THREADS] [MIB]     (defaults: 2 threads, 2048 MiB)
 *
 * Prints one line: "read bandwidth: X GB/s (T threads, M MiB, best of P)".
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bench_util.h"

typedef struct part {
  const float *p;
  size_t n;
  double sum;
} part;

static void *reader(void *arg) {
  part *w = arg;
  /* eight independent accumulators: the loop is bound by loads, not adds */
  float acc[8][16] = {{0}};
  size_t i = 0, n = w->n & ~(size_t)127;
  for (; i < n; i += 128)
    for (int a = 0; a < 8; a++)
      for (int k = 0; k < 16; k++) acc[a][k] += w->p[i + (size_t)a * 16 + (size_t)k];
  double s = 0;
  for (; i < w->n; i++) s += w->p[i];
  for (int a = 0; a < 8; a++)
    for (int k = 0; k < 16; k++) s += acc[a][k];
  w->sum = s;
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 2048;
  if (threads < 1 || threads > 256 || mib < 64) {
    fprintf(stderr, "usage: bandwidth [THREADS 1..256] [MIB >= 64]\n");
    return 2;
  }
  size_t n = mib * 1024 * 1024 / sizeof(float);
  /* huge pages where the kernel gives them (as rlx's packed weights get):
   * with 4 KiB pages the page walks cost a quarter of the bandwidth here */
  size_t bytes = (n * sizeof(float) + ((size_t)2 << 20) - 1) & ~(((size_t)2 << 20) - 1);
  float *buf = aligned_alloc((size_t)2 << 20, bytes);
#ifdef MADV_HUGEPAGE
  if (buf) (void)madvise(buf, bytes, MADV_HUGEPAGE);
#endif
  if (!buf) {
    fprintf(stderr, "bandwidth: cannot allocate %zu MiB\n", mib);
    return 2;
  }
  for (size_t i = 0; i < n; i++) buf[i] = (float)(i & 1023) * 1e-3f; /* touch every page */
  pthread_t tid[256];
  part w[256];
  double best = 0, check = 0;
  const int passes = 5;
  for (int r = 0; r < passes; r++) {
    double t0 = bench_now();
    for (int t = 0; t < threads; t++) {
      size_t a = n * (size_t)t / (size_t)threads, b = n * (size_t)(t + 1) / (size_t)threads;
      w[t] = (part){buf + a, b - a, 0};
      pthread_create(&tid[t], NULL, reader, &w[t]);
    }
    for (int t = 0; t < threads; t++) pthread_join(tid[t], NULL);
    double dt = bench_now() - t0, gbs = (double)(n * sizeof(float)) / dt / 1e9;
    for (int t = 0; t < threads; t++) check += w[t].sum;
    if (gbs > best) best = gbs;
  }
  printf("read bandwidth: %.1f GB/s (%d threads, %zu MiB, best of %d; checksum %.3g)\n", best, threads, mib, passes,
         check);
  free(buf);
  return 0;
}
