/*
 * fuse_preact.c — folds a pre-activation batch norm into the 1x1 conv that
 * reads it (docs/design.md, "Passes and fusion"):
 *
 *   t = act(batch_norm(x, mean, var, w, b, eps))     x [N, C, H, W]
 *   y = conv1x1(t, ...)                              channel-major, groups 1
 *
 * becomes one conv reading x, with mean, var, w and b as its inputs 7-10,
 * eps as its pre_eps and act as its pre_ep. DenseNet's layers and
 * transitions (norm -> relu -> 1x1 conv, on the block's concatenation)
 * are this pattern, where fold_bn (a batch norm after a conv) cannot apply:
 * unfused, the batch norm writes a copy of the growing concatenation and
 * the conv reads it back; fused, the conv's sgemm normalizes each element
 * as it packs it (cpu/conv_gemm.c), so the copy is never written. Runs
 * after `layout` and `fuse_epilogue` (the activation is the batch norm's
 * epilogue by then), on channel-major f32 convs with constant weights,
 * 1x1, stride 1, no padding (a padded conv would read act(b - mean * s),
 * not 0, at its border), groups 1, without gate or pointwise input; the
 * batch norm with running statistics, no activation or relu (what the
 * packers apply), its output read by nothing else and not a graph output.
 * The packers compute each element with the fast batch norm's float
 * operations, and the reference runs the unfused reference batch norm
 * first, so results are the unfused graph's bits both ways
 * (tests/c/test_fuse_preact.c).
 */
#include "ops/ops_util.h"
#include "passes/passes.h"

static bool is_const(const rlx_value *v) { return v->kind == RLX_VALUE_WEIGHT || v->kind == RLX_VALUE_CONST; }

static rlx_status fuse_one(rlx_graph *g, int32_t ci) {
  const rlx_node *c = &g->nodes[ci];
  const rlx_conv_params *p = &c->p.conv;
  if (c->op != RLX_OP_CONV || p->channels_last || p->transposed || p->nd != 2 || p->groups != 1 ||
      rlx_in(g, c, 4) || rlx_in(g, c, 5) || rlx_in(g, c, 7) || p->stride[0] != 1 || p->stride[1] != 1 ||
      p->pad[0] != 0 || p->pad[1] != 0)
    return RLX_OK;
  const rlx_value *w = rlx_in(g, c, 1);
  if (!is_const(w) || w->dtype != RLX_DTYPE_F32 || w->shape.rank != 4 || w->shape.dims[2] != 1 ||
      w->shape.dims[3] != 1)
    return RLX_OK;
  int32_t v = c->in[0];
  const rlx_value *t = &g->values[v];
  if (t->dtype != RLX_DTYPE_F32 || t->shape.rank != 4 || t->kind != RLX_VALUE_NODE || t->producer < 0 ||
      rlx_is_graph_output(g, v))
    return RLX_OK;
  int32_t bi = t->producer;
  const rlx_node *bn = &g->nodes[bi];
  if (bn->op != RLX_OP_BATCH_NORM || !rlx_in(g, bn, 1) || !rlx_in(g, bn, 2) || rlx_single_consumer(g, v, bi) != ci)
    return RLX_OK;
  const rlx_epilogue *ep = &bn->p.norm.ep;
  if (ep->has_act && ep->act.kind != RLX_UNARY_RELU) return RLX_OK;
  if (g->values[bn->in[0]].dtype != RLX_DTYPE_F32) return RLX_OK;
  int32_t xi = bn->in[0], in[4];
  for (int k = 0; k < 4; k++) in[k] = k + 1 < bn->n_in ? bn->in[k + 1] : -1;
  rlx_epilogue pre = *ep;
  double eps = bn->p.norm.eps;
  rlx_status st = RLX_OK;
  for (int k = 0; k < 4 && !st; k++) st = rlx_node_set_input(g, ci, 7 + k, in[k]);
  if (!st) st = rlx_node_absorb(g, ci, bi);
  if (st) return st;
  rlx_node *f = &g->nodes[ci];
  f->in[0] = xi; /* the batch norm is left for dce */
  f->p.conv.pre_ep = pre, f->p.conv.pre_eps = eps;
  return RLX_OK;
}

rlx_status rlx_pass_fuse_preact(rlx_graph *g) {
  for (int32_t i = 0; i < g->n_nodes; i++) {
    rlx_status st = fuse_one(g, i);
    if (st) return st;
  }
  return RLX_OK;
}
