/*
 * passes.h — graph-to-graph passes. Each pass is a standalone function over
 * an rlx_graph listed in passes.def; rlx_passes_run runs them in order and
 * re-verifies the graph after each one in checked builds (and always when
 * `verify` is set), failing with the offending node.
 */
#ifndef RLX_PASSES_H
#define RLX_PASSES_H

#include "ir/graph.h"

#define RLX_PASS(name, desc) rlx_status rlx_pass_##name(rlx_graph *g);
#include "passes/passes.def"
#undef RLX_PASS

rlx_status rlx_passes_run(rlx_graph *g, bool verify);

/* ---- graph surgery for the passes (graph_edit.c) ---- */

/* Uses of every value (node inputs and graph outputs); rlx_free the result. */
int32_t *rlx_value_uses(const rlx_graph *g);
/* The only node after `after` that reads v, or -1 (none, or several). */
int32_t rlx_single_consumer(const rlx_graph *g, int32_t v, int32_t after);
/* Whether v is one of the graph's outputs. */
bool rlx_is_graph_output(const rlx_graph *g, int32_t v);
/* Every read of old_v (and the FX map's entry) now names new_v. */
void rlx_replace_uses(rlx_graph *g, int32_t old_v, int32_t new_v);
/* Records that node `into` now also computes node `from` (fusion). */
rlx_status rlx_node_absorb(rlx_graph *g, int32_t into, int32_t from);
/* Whether `label` is the node's label or one of the labels fused into it. */
bool rlx_node_has_label(const rlx_node *n, const char *label);
/* Sets input k of a node, growing its input list with absent (-1) slots. */
rlx_status rlx_node_set_input(rlx_graph *g, int32_t node, int32_t k, int32_t v);

#endif
