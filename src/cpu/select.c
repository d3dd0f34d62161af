/*
 * select.c — asks each fast kernel family in turn whether it takes a node.
 */
#include "cpu/select.h"

rlx_status rlx_cpu_select(const rlx_graph *g, const rlx_graph *sym, int32_t node, int threads, rlx_kernel *k) {
  const rlx_node *n = &g->nodes[node];
  switch (n->op) {
    case RLX_OP_MATMUL: return rlx_cpu_try_matmul(g, n, threads, k);
    case RLX_OP_GROUPED_MATMUL: return rlx_cpu_try_grouped_matmul(g, n, threads, k);
    case RLX_OP_CONV: return rlx_cpu_try_conv(g, sym, n, threads, k);
    case RLX_OP_ATTENTION: return rlx_cpu_try_attention(g, n, threads, k);
    case RLX_OP_SOFTMAX: case RLX_OP_LAYER_NORM: case RLX_OP_RMS_NORM: return rlx_cpu_try_rows(g, n, threads, k);
    case RLX_OP_POOL: return rlx_cpu_try_pool(g, n, threads, k);
    case RLX_OP_UNARY: case RLX_OP_BINARY: return rlx_cpu_try_eltwise(g, n, threads, k);
    case RLX_OP_REDUCE: return rlx_cpu_try_reduce(g, n, threads, k);
    case RLX_OP_FUSED: return rlx_cpu_try_fused(g, n, threads, k);
    case RLX_OP_PERMUTE: case RLX_OP_EXPAND: case RLX_OP_SLICE: return rlx_cpu_try_movement(g, n, threads, k);
    default: return RLX_OK;
  }
}
