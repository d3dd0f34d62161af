/*
 * graph_build.h — what the pass tests that build small networks by hand
 * (test_layout.c, test_fuse_gate.c) share: a deterministic uniform [-1, 1)
 * generator (an LCG; define GRAPH_BUILD_SEED before including this to seed
 * it, so a failing case reproduces), 4-d shapes, random constant weights,
 * and an element-by-element comparison that names the first mismatch.
 */
#ifndef RLX_TEST_GRAPH_BUILD_H
#define RLX_TEST_GRAPH_BUILD_H

#include <math.h>
#include <stdlib.h>

#include "ir/graph.h"
#include "test.h"

#ifndef GRAPH_BUILD_SEED
#define GRAPH_BUILD_SEED 1u
#endif

static unsigned rng = GRAPH_BUILD_SEED;
static inline float frand(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)((double)(rng >> 8) / 16777216.0 * 2.0 - 1.0);
}

static inline rlx_shape shp4(int64_t a, int64_t b, int64_t c, int64_t d) {
  return (rlx_shape){.rank = 4, .dims = {a, b, c, d}};
}

/* A constant of shape s filled from frand. */
static inline int32_t weight(rlx_graph *g, rlx_shape s) {
  int64_t n = rlx_shape_numel(&s);
  float *w = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) w[i] = frand();
  int32_t v = rlx_graph_add_const(g, RLX_DTYPE_F32, &s, w);
  free(w);
  return v;
}

/* |got - ref| <= tol * (1 + |ref|) everywhere, NaN exactly where ref is NaN;
 * tol 0 asks for the same bits (the sign of a zero included). */
static inline bool close_to(const float *ref, const float *got, int64_t n, double tol, const char *what) {
  for (int64_t i = 0; i < n; i++) {
    bool ok = isnan(ref[i]) ? isnan(got[i])
                            : ref[i] == got[i] || fabs((double)got[i] - (double)ref[i]) <= tol * (1.0 + fabs((double)ref[i]));
    if (!ok || (tol == 0 && ref[i] == 0 && signbit(ref[i]) != signbit(got[i]))) {
      fprintf(stderr, "  [%s] %s: element %lld: %.9g vs %.9g\n", rlx_test_current, what, (long long)i, ref[i], got[i]);
      return false;
    }
  }
  return true;
}

#endif
