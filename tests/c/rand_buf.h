/*
 * rand_buf.h — what the kernel-against-reference tests (test_conv_*.c) share:
 * a deterministic uniform [-1, 1) generator (an LCG whose state each test
 * seeds itself, so a failing case reproduces) and 64-byte-aligned float
 * buffers, as the runtime's arena gives its kernels (a zero-length buffer is
 * still a valid pointer, so empty cases run through the same code).
 */
#ifndef RLX_TEST_RAND_BUF_H
#define RLX_TEST_RAND_BUF_H

#include <stdint.h>
#include <stdlib.h>

static inline float lcg_unit(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)(*state >> 8) / 8388608.0f - 1.0f; /* [-1, 1) */
}

static inline float *buf(int64_t n) {
  return aligned_alloc(64, ((size_t)(n ? n : 1) * sizeof(float) + 63) & ~(size_t)63);
}

#endif
