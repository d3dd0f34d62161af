/*
 * fuse_epilogue.c — folds the elementwise tail of a matmul or conv into it:
 * an add of a same-shaped tensor computed earlier (a residual connection)
 * and then an activation (any float unary op). The fused node computes
 * act(op(...) + bias + residual) in its epilogue, while the output is still
 * in cache; the add and the activation are left for dce (the pass runs
 * twice with dce between, see passes.def). Only when each intermediate feeds
 * nothing else. An activation behind a reshape of the output (a view:
 * act(reshape(y)) = reshape(act(y))) folds too, the reshape then reading
 * the activated output. Norms (layer, RMS, group, inference batch norm)
 * take the activation after their affine part the same way (no residual:
 * GroupNorm + SiLU, LayerNorm + GELU are one pass over memory).
 */
#include "passes/passes.h"

static bool is_norm(const rlx_node *n) {
  return n->op == RLX_OP_LAYER_NORM || n->op == RLX_OP_RMS_NORM || n->op == RLX_OP_GROUP_NORM ||
         n->op == RLX_OP_BATCH_NORM;
}

static rlx_epilogue *epilogue_of(rlx_node *n) {
  if (n->op == RLX_OP_CONV && !n->p.conv.transposed) return &n->p.conv.ep;
  if (n->op == RLX_OP_MATMUL) return &n->p.matmul.ep;
  if (is_norm(n)) return &n->p.norm.ep;
  return NULL;
}

/* Defined before node `at` runs (an input, constant, or an earlier node's output). */
static bool available_before(const rlx_graph *g, int32_t v, int32_t at) {
  const rlx_value *val = &g->values[v];
  return val->kind != RLX_VALUE_NODE || (val->producer >= 0 && val->producer < at);
}

static rlx_status fuse_node(rlx_graph *g, int32_t pi, bool *changed) {
  {
    rlx_node *p = &g->nodes[pi];
    rlx_epilogue *ep = epilogue_of(p);
    int32_t y = p->out[0];
    if (!ep || ep->has_act || rlx_is_graph_output(g, y) || !rlx_dtype_is_float(g->values[y].dtype)) return RLX_OK;
    int32_t ci = rlx_single_consumer(g, y, pi);
    if (ci < 0) return RLX_OK;
    const rlx_node *c = &g->nodes[ci];
    bool has_res = p->n_in > 3 && p->in[3] >= 0;
    if (c->op == RLX_OP_BINARY && c->p.binary.kind == RLX_BINARY_ADD && !has_res && !is_norm(p)) {
      int32_t r = c->in[0] == y ? c->in[1] : c->in[0];
      const rlx_value *rv = &g->values[r], *yv = &g->values[y];
      if (r == y || rv->dtype != yv->dtype || !rlx_shape_eq(&rv->shape, &yv->shape) ||
          !rlx_shape_eq(&g->values[c->out[0]].shape, &yv->shape) || !available_before(g, r, pi))
        return RLX_OK;
      rlx_status st = rlx_node_set_input(g, pi, 3, r);
      if (!st) st = rlx_node_absorb(g, pi, ci);
      if (st) return st;
      rlx_replace_uses(g, g->nodes[ci].out[0], y);
      *changed = true;
      return RLX_OK; /* the dead add still reads y: the next run, after dce, takes the activation */
    }
    /* reshape(y) + r is reshape(y + r) for a reshape that only adds or drops
     * unit axes (GPT-2's addmm, view, add; ViT's out_proj): the residual
     * read as y's elements in order (ops/matmul.c takes that shape) */
    if (c->op == RLX_OP_RESHAPE && p->op == RLX_OP_MATMUL && !has_res) {
      /* through a chain of such reshapes (ViT's [L, E] -> [L, 1, E] -> [1, L, E]); `e` is its end. The
       * activation case below starts at y's reader again (a chain's end is not what it looks at: with
       * the chain's first reshape as its `via`, the activated value would stand for the end's shape). */
      int32_t ri = ci;
      for (;;) {
        const rlx_node *rn = &g->nodes[ri];
        int32_t nx = rlx_is_graph_output(g, rn->out[0]) ? -1 : rlx_single_consumer(g, rn->out[0], ri);
        if (nx < 0 || g->nodes[nx].op != RLX_OP_RESHAPE) break;
        ri = nx;
      }
      const rlx_node *e = &g->nodes[ri];
      if (!rlx_is_graph_output(g, e->out[0]) && rlx_shape_same_nonunit(&g->values[e->out[0]].shape, &g->values[y].shape)) {
        int32_t ai = rlx_single_consumer(g, e->out[0], ri);
        const rlx_node *a = ai >= 0 ? &g->nodes[ai] : NULL;
        if (a && a->op == RLX_OP_BINARY && a->p.binary.kind == RLX_BINARY_ADD && a->in[0] != a->in[1]) {
          int32_t rv = a->in[0] == e->out[0] ? a->in[1] : a->in[0];
          const rlx_value *r = &g->values[rv], *w = &g->values[e->out[0]];
          if (r->dtype == w->dtype && rlx_shape_eq(&r->shape, &w->shape) &&
              rlx_shape_eq(&g->values[a->out[0]].shape, &w->shape) && available_before(g, rv, pi)) {
            int32_t eo = e->out[0];
            rlx_status st = rlx_node_set_input(g, pi, 3, rv);
            if (!st) st = rlx_node_absorb(g, pi, ai);
            if (st) return st;
            rlx_replace_uses(g, g->nodes[ai].out[0], eo);
            *changed = true;
            return RLX_OK;
          }
        }
      }
    }
    /* act(reshape(y)) is reshape(act(y)): an activation behind a view or a chain of them (GPT-2's addmm,
     * view, gelu; LeViT's linear, view, view, hardswish), `via` the chain's end */
    int32_t via = -1;
    for (int32_t ri = ci; g->nodes[ri].op == RLX_OP_RESHAPE && !rlx_is_graph_output(g, g->nodes[ri].out[0]);) {
      int32_t ui = rlx_single_consumer(g, g->nodes[ri].out[0], ri);
      if (ui < 0) break;
      if (g->nodes[ui].op == RLX_OP_UNARY) {
        via = ri, ci = ui, c = &g->nodes[ci];
        break;
      }
      ri = ui;
    }
    if (c->op == RLX_OP_UNARY && g->values[c->out[0]].dtype == g->values[y].dtype) {
      rlx_unary_kind k = c->p.unary.kind;
      if (k == RLX_UNARY_LOGICAL_NOT || k == RLX_UNARY_ISNAN || k == RLX_UNARY_ISINF || k == RLX_UNARY_ISPOSINF ||
          k == RLX_UNARY_ISNEGINF || k == RLX_UNARY_ISFINITE || k == RLX_UNARY_BITWISE_NOT ||
          k == RLX_UNARY_MVLGAMMA) /* its kernel refuses out-of-domain elements; an epilogue cannot */
        return RLX_OK;
      ep->has_act = true;
      ep->act = c->p.unary;
      rlx_status st = rlx_node_absorb(g, pi, ci);
      if (st) return st;
      rlx_replace_uses(g, g->nodes[ci].out[0], via >= 0 ? g->nodes[via].out[0] : y);
      *changed = true;
    }
    return RLX_OK;
  }
}

rlx_status rlx_pass_fuse_epilogue(rlx_graph *g) {
  for (int32_t i = 0; i < g->n_nodes; i++) {
    bool changed = false;
    rlx_status st = fuse_node(g, i, &changed);
    if (st) return st;
  }
  return RLX_OK;
}
