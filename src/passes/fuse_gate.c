/*
 * fuse_gate.c — folds a squeeze-excite block's channel scale into the conv
 * that reads it (docs/design.md, "Passes and fusion"):
 *
 *   y = conv(x * s, w, ...)   s [N or 1, 1, 1, C], x [N, H, W, C]
 *
 * becomes one conv with s as its gate input (input 4), which multiplies each
 * element of x by its channel's gate as the conv packs it: the gated image,
 * as big as the block's expanded activation, is never written and read
 * again. Runs after `layout`, on channels-last convs of groups 1 (the ones
 * whose fast kernel, the sgemm of cpu/conv_nhwc.c, packs its input) that
 * read x as [N, H, W, C] (not a stem's x_nchw). Only where the product feeds
 * nothing but the conv and is not a graph output. Each product is rounded to
 * f32 as the mul's kernels round it, so the result is the unfused graph's
 * bit for bit, reference and fast (tests/c/test_fuse_gate.c).
 */
#include "ops/ops_util.h"
#include "passes/passes.h"

/* Whether s is a gate for x [N, H, W, C]: [N or 1, 1, 1, C] of x's dtype. */
static bool is_gate(const rlx_value *s, const rlx_value *x) {
  const rlx_shape *a = &s->shape, *b = &x->shape;
  return s->dtype == x->dtype && a->rank == 4 && b->rank == 4 && a->dims[1] == 1 && a->dims[2] == 1 &&
         a->dims[3] == b->dims[3] && (a->dims[0] == 1 || a->dims[0] == b->dims[0]);
}

static rlx_status fuse_one(rlx_graph *g, int32_t ci) {
  const rlx_node *c = &g->nodes[ci];
  const rlx_conv_params *p = &c->p.conv;
  if (c->op != RLX_OP_CONV || !p->channels_last || p->x_nchw || p->transposed || p->groups != 1 ||
      rlx_in(g, c, 4) || g->values[c->in[0]].dtype != RLX_DTYPE_F32)
    return RLX_OK;
  int32_t v = c->in[0];
  const rlx_value *val = &g->values[v];
  if (val->kind != RLX_VALUE_NODE || val->producer < 0 || rlx_is_graph_output(g, v)) return RLX_OK;
  int32_t mi = val->producer;
  const rlx_node *m = &g->nodes[mi];
  if (m->op != RLX_OP_BINARY || m->p.binary.kind != RLX_BINARY_MUL || rlx_single_consumer(g, v, mi) != ci)
    return RLX_OK;
  int32_t a = m->in[0], b = m->in[1], x = -1, s = -1;
  if (rlx_shape_eq(&g->values[a].shape, &val->shape) && is_gate(&g->values[b], val)) x = a, s = b;
  else if (rlx_shape_eq(&g->values[b].shape, &val->shape) && is_gate(&g->values[a], val)) x = b, s = a;
  if (x < 0 || x == s || g->values[x].dtype != val->dtype) return RLX_OK;
  rlx_status st = rlx_node_set_input(g, ci, 4, s);
  if (!st) st = rlx_node_absorb(g, ci, mi);
  if (st) return st;
  g->nodes[ci].in[0] = x; /* the mul is left for dce */
  return RLX_OK;
}

rlx_status rlx_pass_fuse_gate(rlx_graph *g) {
  for (int32_t i = 0; i < g->n_nodes; i++) {
    rlx_status st = fuse_one(g, i);
    if (st) return st;
  }
  return RLX_OK;
}
