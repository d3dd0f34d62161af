/*
 * graph_edit.c — small graph surgery shared by the fusion passes: use counts
 * and replacing every use of a value with another.
 */
#include <string.h>

#include "passes/passes.h"

int32_t *rlx_value_uses(const rlx_graph *g) {
  int32_t *uses = rlx_calloc((size_t)(g->n_values + 1), sizeof *uses);
  if (!uses) {
    rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory counting uses");
    return NULL;
  }
  for (int32_t i = 0; i < g->n_nodes; i++)
    for (int32_t k = 0; k < g->nodes[i].n_in; k++)
      if (g->nodes[i].in[k] >= 0) uses[g->nodes[i].in[k]]++;
  for (int32_t i = 0; i < g->n_outputs; i++) uses[g->outputs[i]]++;
  return uses;
}

int32_t rlx_single_consumer(const rlx_graph *g, int32_t v, int32_t after) {
  int32_t found = -1;
  for (int32_t i = after + 1; i < g->n_nodes; i++)
    for (int32_t k = 0; k < g->nodes[i].n_in; k++)
      if (g->nodes[i].in[k] == v) {
        if (found >= 0 && found != i) return -1;
        found = i;
      }
  return found;
}

bool rlx_is_graph_output(const rlx_graph *g, int32_t v) {
  for (int32_t i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == v) return true;
  return false;
}

void rlx_replace_uses(rlx_graph *g, int32_t old_v, int32_t new_v) {
  for (int32_t i = 0; i < g->n_nodes; i++)
    for (int32_t k = 0; k < g->nodes[i].n_in; k++)
      if (g->nodes[i].in[k] == old_v) g->nodes[i].in[k] = new_v;
  for (int32_t i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == old_v) g->outputs[i] = new_v;
  /* new_v now holds what old_v held: FX nodes lowered to new_v's former
   * meaning have no value any more; those of old_v move over */
  for (int32_t i = 0; i < g->n_fx_values; i++)
    if (g->fx_values[i] == new_v) g->fx_values[i] = -1;
  for (int32_t i = 0; i < g->n_fx_values; i++)
    if (g->fx_values[i] == old_v) g->fx_values[i] = new_v;
}

rlx_status rlx_node_set_input(rlx_graph *g, int32_t node, int32_t k, int32_t v) {
  rlx_node *n = &g->nodes[node];
  if (k >= n->n_in) { /* grow the pool-allocated input list, padding with -1 */
    int32_t *in = rlx_pool_alloc(&g->pool, sizeof(int32_t) * (size_t)(k + 1));
    if (!in) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
    for (int32_t i = 0; i <= k; i++) in[i] = i < n->n_in ? n->in[i] : -1;
    n->in = in;
    n->n_in = k + 1;
  }
  n->in[k] = v;
  return RLX_OK;
}

rlx_status rlx_node_absorb(rlx_graph *g, int32_t into, int32_t from) {
  const rlx_node *f = &g->nodes[from];
  rlx_node *n = &g->nodes[into];
  char *s = n->fused ? rlx_pool_sprintf(&g->pool, "%s,%s", n->fused, f->label)
                     : rlx_pool_strdup(&g->pool, f->label);
  if (s && f->fused) s = rlx_pool_sprintf(&g->pool, "%s,%s", s, f->fused);
  if (!s) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  n->fused = s;
  return RLX_OK;
}

bool rlx_node_has_label(const rlx_node *n, const char *label) {
  if (!strcmp(n->label, label)) return true;
  size_t len = strlen(label);
  for (const char *p = n->fused; p && *p;) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l == len && !strncmp(p, label, len)) return true;
    p = e ? e + 1 : NULL;
  }
  return false;
}
