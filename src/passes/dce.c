/*
 * dce.c — dead code elimination: keeps the nodes some graph output depends
 * on (walking backwards from the outputs) and compacts the node array, which
 * keeps its topological order. Values stay in place: the outputs of removed
 * nodes become unreferenced orphans (producer -1).
 */
#include <string.h>

#include "passes/passes.h"

static bool defines_live(const rlx_graph *g, const uint8_t *live, int32_t i) {
  const rlx_node *n = &g->nodes[i];
  for (int32_t k = 0; k < n->n_out; k++) {
    const rlx_value *v = &g->values[n->out[k]];
    if (live[n->out[k]] && v->kind == RLX_VALUE_NODE && v->producer == i) return true;
  }
  return false;
}

rlx_status rlx_pass_dce(rlx_graph *g) {
  uint8_t *live = rlx_calloc((size_t)(g->n_values ? g->n_values : 1), 1);
  int32_t *newidx = rlx_malloc(sizeof(int32_t) * (size_t)(g->n_nodes ? g->n_nodes : 1));
  if (!live || !newidx) {
    rlx_free(live);
    rlx_free(newidx);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory in dce");
  }
  for (int32_t i = 0; i < g->n_outputs; i++) live[g->outputs[i]] = 1;
  for (int32_t i = g->n_nodes - 1; i >= 0; i--) {
    newidx[i] = -1;
    if (!defines_live(g, live, i)) continue;
    newidx[i] = 0;
    const rlx_node *n = &g->nodes[i];
    for (int32_t k = 0; k < n->n_in; k++)
      if (n->in[k] >= 0) live[n->in[k]] = 1;
  }
  int32_t w = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    if (newidx[i] < 0) continue;
    newidx[i] = w;
    g->nodes[w++] = g->nodes[i];
  }
  for (int32_t i = 0; i < g->n_values; i++) {
    rlx_value *v = &g->values[i];
    if (v->kind != RLX_VALUE_NODE || v->producer < 0) continue;
    v->producer = newidx[v->producer];
  }
  g->n_nodes = w;
  rlx_free(live);
  rlx_free(newidx);
  return RLX_OK;
}
