/*
 * conv_check.h — what the channels-last conv kernel tests (test_conv_dw.c,
 * test_conv_group.c) share: run one conv node of a graph with the reference
 * kernel and with the fast kernel the selector picks, and compare.
 */
#ifndef RLX_TEST_CONV_CHECK_H
#define RLX_TEST_CONV_CHECK_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/select.h"
#include "ops/ops_util.h"
#include "rand_buf.h"
#include "runtime/runtime.h"
#include "test.h"

/* The node's input views (x as input 0, r as the residual, input 3, if it has one) and its output view
 * over y. */
static inline void conv_views(const rlx_graph *g, int32_t node, const float *x, const float *r, rlx_tensor_view *vin,
                              rlx_tensor_view *out, float *y) {
  const rlx_node *n = &g->nodes[node];
  for (int k = 0; k < 4; k++) vin[k] = (rlx_tensor_view){0};
  for (int k = 0; k < n->n_in && k < 4; k++)
    if (n->in[k] >= 0) vin[k] = rlx_value_view(&g->values[n->in[k]]);
  vin[0].data = (void *)x;
  if (n->n_in > 3 && n->in[3] >= 0) vin[3].data = (void *)r;
  *out = rlx_value_view(&g->values[n->out[0]]);
  out->data = y;
}

/* A case's operands, each uniform in [-1, 1) from the generator state *rng: image x (nx floats), weights w (nw), bias b (nb), residual r
 * (ny); with specials > 0, every specials-th element of x from the third on NaN, +Inf, -Inf in turn. */
static inline void conv_operands(unsigned *rng, int64_t nx, int64_t nw, int64_t nb, int64_t ny, int specials,
                                 float **x, float **w, float **b, float **r) {
  *x = buf(nx), *w = buf(nw), *b = buf(nb), *r = buf(ny);
  for (int64_t i = 0; i < nx; i++) (*x)[i] = lcg_unit(rng);
  for (int64_t i = 0; i < nw; i++) (*w)[i] = lcg_unit(rng);
  for (int64_t i = 0; i < nb; i++) (*b)[i] = lcg_unit(rng);
  for (int64_t i = 0; i < ny; i++) (*r)[i] = lcg_unit(rng);
  if (specials > 0)
    for (int64_t i = 2, k = 0; i < nx; i += specials, k++) (*x)[i] = k % 3 == 0 ? NAN : k % 3 == 1 ? INFINITY : -INFINITY;
}

/* The worst |fast - ref| / max(1, |ref|) over the ny outputs of conv node `node`; +Inf where a NaN or an
 * Inf differs, an output is not written (the fast run's buffer starts at -12345), or the node does not get
 * the kernel named `want`. Prints the elements past 1e-5 and a wrong kernel, under the name `what`. */
static inline double conv_check(const rlx_graph *g, int32_t node, const float *x, const float *r, int64_t ny,
                                int threads, const char *want, const char *what) {
  float *ref = buf(ny), *fast = buf(ny);
  double worst = INFINITY;
  rlx_tensor_view vin[4], out;
  conv_views(g, node, x, r, vin, &out, ref);
  const rlx_op_vtable *vt = rlx_op_table[RLX_OP_CONV].vt;
  size_t rb = vt->scratch ? vt->scratch(g, &g->nodes[node]) : 0;
  void *rscr = aligned_alloc(64, (rb + 64) & ~(size_t)63);
  CHECK_OK(vt->ref(&g->nodes[node], vin, &out, rscr));
  free(rscr);
  rlx_kernel k = {.name = "reference", .run = rlx_reference_kernel};
  CHECK_OK(rlx_cpu_select(g, NULL, node, threads, &k));
  if (strcmp(k.name, want)) {
    fprintf(stderr, "  %s: kernel %s, expected %s\n", what, k.name, want);
  } else {
    rlx_threadpool *tp;
    CHECK_OK(rlx_threadpool_create(threads, &tp));
    void *scr = aligned_alloc(64, (k.scratch + 64) & ~(size_t)63);
    conv_views(g, node, x, r, vin, &out, fast);
    for (int64_t i = 0; i < ny; i++) fast[i] = -12345.0f; /* every output must be written */
    rlx_exec ex = {.tp = tp, .scratch = scr, .packed = k.packed};
    CHECK_OK(k.run(&g->nodes[node], vin, &out, &ex));
    worst = 0;
    for (int64_t i = 0; i < ny; i++) {
      double d;
      if (isnan(ref[i]) || isinf(ref[i])) d = (isnan(ref[i]) ? isnan(fast[i]) : ref[i] == fast[i]) ? 0 : INFINITY;
      else d = isfinite(fast[i]) && fast[i] != -12345.0f ? fabs((double)fast[i] - ref[i]) / fmax(1.0, fabs(ref[i])) : INFINITY;
      if (d > worst) {
        worst = d;
        if (d > 1e-5) fprintf(stderr, "  %s: element %lld: %.9g, reference %.9g\n", what, (long long)i, fast[i], ref[i]);
      }
    }
    free(scr);
    rlx_threadpool_destroy(tp);
  }
  rlx_aligned_free(k.packed);
  free(ref), free(fast);
  return worst;
}

#endif
