/*
 * fold.c — constant folding: a node whose inputs are all constants or
 * weights (or that has no inputs: full, arange) is evaluated once with its
 * reference kernel, and its outputs become constants. The folded nodes are
 * then dropped from the node list (value ids stay; producers are renumbered),
 * so the graph the pass leaves satisfies the verifier: every remaining node's
 * outputs are NODE values pointing back at it. Results larger than both
 * 16 MiB and their inputs are not folded (an expand of a scalar should stay a
 * cheap node, not a big constant).
 */
#include <string.h>

#include "passes/passes.h"

#define FOLD_LIMIT ((size_t)16 << 20)

static bool foldable(const rlx_graph *g, const rlx_node *n) {
  size_t in_bytes = 0, out_bytes = 0;
  for (int32_t k = 0; k < n->n_out; k++) /* a symbolic size (arange(seq)) is computed per binding */
    if (rlx_shape_is_symbolic(&g->values[n->out[k]].shape)) return false;
  if ((n->op == RLX_OP_FULL && n->p.full.sym_value) || (n->op == RLX_OP_ARANGE && rlx_dim_is_sym(n->p.arange.istart) &&
                                                        rlx_dim_valid(&g->syms, n->p.arange.istart)))
    return false; /* a size used as a value: known per binding */
  for (int32_t k = 0; k < n->n_in; k++) {
    if (n->in[k] < 0) continue;
    const rlx_value *v = &g->values[n->in[k]];
    if (v->kind != RLX_VALUE_CONST && v->kind != RLX_VALUE_WEIGHT) return false;
    in_bytes += rlx_value_nbytes(v);
  }
  for (int32_t k = 0; k < n->n_out; k++) out_bytes += rlx_value_nbytes(&g->values[n->out[k]]);
  return out_bytes <= FOLD_LIMIT || out_bytes <= in_bytes;
}

static rlx_status fold_node(rlx_graph *g, int32_t idx) {
  const rlx_node *n = &g->nodes[idx];
  const rlx_op_info *oi = &rlx_op_table[n->op];
  int32_t n_views = RLX_MAX(n->n_in, oi->max_in);
  rlx_tensor_view in[64], out[4];
  void *bufs[4] = {0};
  if (n_views > 64) return RLX_OK; /* a huge concat of constants: leave it to run time */
  memset(in, 0, sizeof in);
  for (int32_t k = 0; k < n->n_in; k++)
    if (n->in[k] >= 0) in[k] = rlx_value_view(&g->values[n->in[k]]);
  rlx_status st = RLX_OK;
  for (int32_t k = 0; k < n->n_out; k++) {
    const rlx_value *v = &g->values[n->out[k]];
    out[k] = rlx_value_view(v);
    if (!(bufs[k] = rlx_aligned_alloc(rlx_value_nbytes(v)))) st = RLX_ERR_OUT_OF_MEMORY;
    out[k].data = bufs[k];
  }
  size_t sbytes = oi->vt->scratch ? oi->vt->scratch(g, n) : 0;
  void *scratch = sbytes ? rlx_aligned_alloc(sbytes) : NULL;
  if (sbytes && !scratch) st = RLX_ERR_OUT_OF_MEMORY;
  if (st) rlx_errorf(st, "out of memory folding node '%s'", n->label);
  if (!st) st = oi->vt->ref(n, in, out, scratch);
  rlx_aligned_free(scratch);
  if (st) { /* e.g. an index out of range in constant data: report it now */
    rlx_error_prefix("node '%s' (%s): ", n->label, n->aten ? n->aten : oi->name);
    for (int32_t k = 0; k < n->n_out; k++) rlx_aligned_free(bufs[k]);
    return st;
  }
  for (int32_t k = 0; k < n->n_out; k++) {
    if (rlx_grow((void **)&g->owned, &g->cap_owned, g->n_owned + 1, sizeof *g->owned)) {
      for (int32_t j = k; j < n->n_out; j++) rlx_aligned_free(bufs[j]);
      return RLX_ERR_OUT_OF_MEMORY;
    }
    g->owned[g->n_owned++] = bufs[k];
    rlx_value *v = &g->values[n->out[k]];
    v->kind = RLX_VALUE_CONST;
    v->data = bufs[k];
    v->producer = -1;
  }
  return RLX_OK;
}

/* Removes the nodes whose outputs are now constants, keeping the order. */
static void drop_folded(rlx_graph *g) {
  int32_t w = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const rlx_node *n = &g->nodes[i];
    if (g->values[n->out[0]].kind != RLX_VALUE_NODE) continue;
    for (int32_t k = 0; k < n->n_out; k++) g->values[n->out[k]].producer = w;
    g->nodes[w++] = g->nodes[i];
  }
  g->n_nodes = w;
}

rlx_status rlx_pass_fold(rlx_graph *g) {
  rlx_status st = RLX_OK;
  for (int32_t i = 0; !st && i < g->n_nodes; i++) {
    const rlx_node *n = &g->nodes[i];
    if (g->values[n->out[0]].kind != RLX_VALUE_NODE || !foldable(g, n)) continue;
    st = fold_node(g, i);
  }
  drop_folded(g);
  return st;
}
