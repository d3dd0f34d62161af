/*
 * graph_run.h — runs a whole small graph node by node for the pass tests
 * (test_fusion.c, test_layout.c, test_recognize.c): with every node's
 * reference kernel (threads 0) or with the fast kernel rlx picks on a pool
 * of `threads`, each node given the scratch and the packed weights its
 * kernel asks for. Inputs: one buffer per graph input, in order; returns
 * one malloc'ed buffer per graph output (free each, then the array);
 * kernels[i], when given, receives node i's kernel name. graph_count_op
 * counts a graph's nodes of one op; graph_fused copies a graph through one
 * pass and dce, verifying each step; graph_outs_free frees graph_run's result.
 */
#ifndef RLX_TEST_GRAPH_RUN_H
#define RLX_TEST_GRAPH_RUN_H

#include <stdlib.h>
#include <string.h>

#include "cpu/select.h"
#include "runtime/runtime.h"
#include "test.h"

#define GRAPH_RUN_MAX_IN 16

static inline float **graph_run(const rlx_graph *g, float *const *inputs, int threads, const char **kernels) {
  void **buf = calloc((size_t)g->n_values, sizeof *buf);
  for (int i = 0; i < g->n_inputs; i++) buf[g->inputs[i]] = inputs[i];
  rlx_threadpool *tp = NULL;
  if (threads) CHECK_OK(rlx_threadpool_create(threads, &tp));
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const rlx_node *n = &g->nodes[i];
    rlx_tensor_view in[GRAPH_RUN_MAX_IN] = {0}, out = rlx_value_view(&g->values[n->out[0]]);
    CHECK(n->n_in <= GRAPH_RUN_MAX_IN);
    for (int k = 0; k < n->n_in && k < GRAPH_RUN_MAX_IN; k++) {
      if (n->in[k] < 0) continue;
      const rlx_value *v = &g->values[n->in[k]];
      in[k] = rlx_value_view(v);
      in[k].data = v->kind == RLX_VALUE_NODE || v->kind == RLX_VALUE_INPUT ? buf[n->in[k]] : (void *)v->data;
    }
    out.data = buf[n->out[0]] = malloc(rlx_value_nbytes(&g->values[n->out[0]]) + 4);
    rlx_kernel k = {.name = "reference", .run = rlx_reference_kernel};
    const rlx_op_vtable *vt = rlx_op_table[n->op].vt;
    k.scratch = vt->scratch ? vt->scratch(g, n) : 0;
    if (threads) CHECK_OK(rlx_cpu_select(g, NULL, i, threads, &k));
    if (kernels) kernels[i] = k.name;
    rlx_exec x = {.tp = tp, .packed = k.packed, .scratch = k.scratch ? rlx_aligned_alloc(k.scratch) : NULL};
    CHECK_OK(k.run(n, in, &out, &x));
    rlx_aligned_free(x.scratch);
    rlx_aligned_free(k.packed);
  }
  float **outs = calloc((size_t)g->n_outputs, sizeof *outs);
  for (int i = 0; i < g->n_outputs; i++) {
    size_t bytes = rlx_value_nbytes(&g->values[g->outputs[i]]);
    outs[i] = malloc(bytes + 4);
    memcpy(outs[i], buf[g->outputs[i]], bytes);
  }
  for (int32_t v = 0; v < g->n_values; v++)
    if (g->values[v].kind == RLX_VALUE_NODE) free(buf[v]);
  free(buf);
  rlx_threadpool_destroy(tp);
  return outs;
}

/* How many nodes of g run op. */
static inline int graph_count_op(const rlx_graph *g, rlx_op op) {
  int c = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) c += g->nodes[i].op == op;
  return c;
}

/* f = g (verified) through pass, then dce, each step verified under its name. */
static inline void graph_fused(const rlx_graph *g, rlx_graph *f, rlx_status (*pass)(rlx_graph *), const char *name) {
  CHECK_OK(rlx_graph_verify(g, "build"));
  CHECK_OK(rlx_graph_clone(g, f));
  CHECK_OK(pass(f));
  CHECK_OK(rlx_graph_verify(f, name));
  CHECK_OK(rlx_pass_dce(f));
  CHECK_OK(rlx_graph_verify(f, "dce"));
}

/* Frees what graph_run returned for g. */
static inline void graph_outs_free(const rlx_graph *g, float **outs) {
  for (int i = 0; i < g->n_outputs; i++) free(outs[i]);
  free(outs);
}

#endif
