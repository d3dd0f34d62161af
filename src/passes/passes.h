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

#endif
