/*
 * bench_reshape.c — the cost of planning a new binding of a dynamic model
 * (docs/design.md, "Shapes": resolve the symbols, concretize and re-infer
 * every node, kernel scratch, memory plan, views), without running it.
 *
 *   bench_reshape DIR [BINDINGS [ROUNDS [cold]]]
 *
 * Spreads BINDINGS (default 8, more than the session's plan cache holds)
 * bindings evenly over the symbols' ranges, binds inputs of those shapes
 * (no data is read) and reshapes through them ROUNDS times (default 200),
 * so every reshape builds a plan. Prints the mean and the minimum per plan.
 * With "cold", 64 MiB are streamed through the caches before each reshape
 * (untimed), as a run of a real model does between two bindings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "runtime/runtime.h"

#define MAXB 64

/* Keeps the cache-flush loop from being optimized away. */
volatile unsigned bench_sink;

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_reshape DIR [BINDINGS [ROUNDS]]\n");
    return 2;
  }
  int nb = argc > 2 ? atoi(argv[2]) : 8, rounds = argc > 3 ? atoi(argv[3]) : 200;
  bool cold = argc > 4 && !strcmp(argv[4], "cold");
  size_t flush_n = (size_t)64 << 20;
  unsigned char *flush = cold ? malloc(flush_n) : NULL;
  if (cold && !flush) return 2;
  if (flush) memset(flush, 1, flush_n);
  if (nb < 2 || nb > MAXB || rounds < 1) {
    fprintf(stderr, "bench_reshape: BINDINGS in [2, %d], ROUNDS >= 1\n", MAXB);
    return 2;
  }
  rlx_model *m = NULL;
  rlx_compiled *c = NULL;
  rlx_session *s = NULL;
  rlx_compile_options o;
  rlx_compile_options_init(&o);
  o.threads = 1;
  if (rlx_model_load(argv[1], NULL, &m) || rlx_model_compile(m, &o, &c) || rlx_session_create(c, &s)) {
    fprintf(stderr, "bench_reshape: %s\n", rlx_last_error());
    return 2;
  }
  const rlx_graph *g = &c->graph;
  const rlx_symtab *t = &g->syms;
  if (!t->n_syms) {
    fprintf(stderr, "bench_reshape: %s has no shape symbols\n", argv[1]);
    return 2;
  }
  static int64_t syms[MAXB][64];
  static rlx_tensor_view views[MAXB][64];
  static char dummy[64];
  if (t->n_syms > 64 || g->n_inputs > 64) {
    fprintf(stderr, "bench_reshape: at most 64 symbols and inputs\n");
    return 2;
  }
  for (int b = 0; b < nb; b++) {
    for (int k = 0; k < t->n_syms; k++) {
      const rlx_symbol *y = &t->syms[k];
      int64_t hi = y->max < y->min + 4096 ? y->max : y->min + 4096;
      syms[b][k] = y->min + (hi - y->min) * b / (nb - 1);
    }
    for (int i = 0; i < g->n_inputs; i++) {
      const rlx_value *v = &g->values[g->inputs[i]];
      rlx_tensor_view *w = &views[b][i];
      w->data = dummy, w->dtype = v->dtype, w->rank = v->shape.rank;
      for (int d = 0; d < v->shape.rank; d++)
        if (rlx_dim_eval(t, v->shape.dims[d], syms[b], &w->dims[d])) {
          fprintf(stderr, "bench_reshape: %s\n", rlx_last_error());
          return 2;
        }
    }
  }
  double total = 0, best = 1e30;
  int planned = 0;
  for (int r = 0; r < rounds; r++)
    for (int b = 0; b < nb; b++) {
      for (int i = 0; i < g->n_inputs; i++)
        if (rlx_session_bind_input(s, g->values[g->inputs[i]].name, &views[b][i])) {
          fprintf(stderr, "bench_reshape: %s\n", rlx_last_error());
          return 2;
        }
      if (flush) {
        unsigned acc = 0;
        for (size_t q = 0; q < flush_n; q += 64) acc += flush[q]++;
        bench_sink += acc;
      }
      double t0 = bench_now();
      if (rlx_session_reshape(s)) {
        fprintf(stderr, "bench_reshape: binding %d: %s\n", b, rlx_last_error());
        return 2;
      }
      double dt = (bench_now() - t0) * 1e6;
      total += dt, best = dt < best ? dt : best, planned++;
    }
  printf("%s: %d nodes, %d values; %d plans over %d bindings%s: mean %.1f us, min %.1f us per plan\n", argv[1],
         g->n_nodes, g->n_values, planned, nb, cold ? " (caches flushed before each)" : "", total / planned, best);
  free(flush);
  rlx_session_destroy(s);
  rlx_compiled_destroy(c);
  rlx_model_destroy(m);
  return 0;
}
