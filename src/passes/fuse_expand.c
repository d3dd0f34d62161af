/*
 * fuse_expand.c — folds the 1x1 expansion conv of an inverted-residual
 * block into the depthwise conv that reads it (docs/design.md, "Passes and
 * fusion"):
 *
 *   t = act1(conv1x1(x, pw, pw_bias))     x [N, H, W, C0], t [N, H, W, C]
 *   y = conv_dw(t, w, bias, ...)          groups = C
 *
 * becomes one conv reading x, with pw and pw_bias as its inputs 5 and 6 and
 * act1 as its pre_ep. The expanded activation t is the block's largest
 * tensor (mobilenet_v3's 112x112x64, 3.2 MB; efficientnet's 112x112x96,
 * 4.8 MB): unfused, the 1x1 conv writes it past L2 and the depthwise conv
 * reads it back; fused, the kernel (cpu/conv_nhwc.c) computes it a band of
 * rows at a time into a buffer that stays in L2, and the depthwise rows
 * read it there. Runs after `layout`, on channels-last convs: the producer
 * a 1x1 stride-1 unpadded conv of groups 1 without residual or gate, the
 * consumer depthwise (groups = C = O) without gate; t f32, read by nothing
 * else and not a graph output. On small images, where bands would compute
 * too many rows twice, the kernel makes t whole in scratch first (the
 * unfused pair without its node boundary). The reference computes t whole,
 * as the unfused graph's reference does, so its results are the same bits
 * (tests/c/test_fuse_expand.c).
 */
#include "ops/ops_util.h"
#include "passes/passes.h"

static bool is_const(const rlx_value *v) { return v->kind == RLX_VALUE_WEIGHT || v->kind == RLX_VALUE_CONST; }

static rlx_status fuse_one(rlx_graph *g, int32_t di) {
  const rlx_node *d = &g->nodes[di];
  const rlx_conv_params *dp = &d->p.conv;
  if (d->op != RLX_OP_CONV || !dp->channels_last || dp->x_nchw || dp->transposed || dp->nd != 2 ||
      rlx_in(g, d, 4) || rlx_in(g, d, 5))
    return RLX_OK;
  const rlx_value *dw = rlx_in(g, d, 1);
  int32_t v = d->in[0];
  const rlx_value *t = &g->values[v];
  if (t->dtype != RLX_DTYPE_F32 || t->shape.rank != 4 || dw->shape.rank != 4 || !is_const(dw) ||
      dp->groups != t->shape.dims[3] || dp->groups < 2 || dw->shape.dims[0] != dp->groups || dw->shape.dims[1] != 1)
    return RLX_OK; /* not depthwise */
  if (t->kind != RLX_VALUE_NODE || t->producer < 0 || rlx_is_graph_output(g, v)) return RLX_OK;
  int32_t pi = t->producer;
  const rlx_node *p = &g->nodes[pi];
  const rlx_conv_params *pp = &p->p.conv;
  if (p->op != RLX_OP_CONV || rlx_single_consumer(g, v, pi) != di || !pp->channels_last || pp->x_nchw ||
      pp->transposed || pp->nd != 2 || pp->groups != 1 || rlx_in(g, p, 3) || rlx_in(g, p, 4) || rlx_in(g, p, 5))
    return RLX_OK;
  const rlx_value *pw = rlx_in(g, p, 1), *x = rlx_in(g, p, 0);
  if (!is_const(pw) || pw->shape.rank != 4 || pw->shape.dims[2] != 1 || pw->shape.dims[3] != 1 ||
      x->dtype != RLX_DTYPE_F32 || pw->dtype != RLX_DTYPE_F32 || pp->stride[0] != 1 || pp->stride[1] != 1 ||
      pp->pad[0] != 0 || pp->pad[1] != 0)
    return RLX_OK; /* not a 1x1 stride-1 unpadded conv */
  const rlx_value *pb = rlx_in(g, p, 2);
  if (pb && !is_const(pb)) return RLX_OK;
  int32_t xi = p->in[0], wi = p->in[1], bi = p->in[2];
  rlx_epilogue pre = pp->ep;
  rlx_status st = rlx_node_set_input(g, di, 5, wi);
  if (!st) st = rlx_node_set_input(g, di, 6, bi);
  if (!st) st = rlx_node_absorb(g, di, pi);
  if (st) return st;
  g->nodes[di].in[0] = xi;
  g->nodes[di].p.conv.pre_ep = pre; /* the 1x1 conv is left for dce */
  return RLX_OK;
}

rlx_status rlx_pass_fuse_expand(rlx_graph *g) {
  for (int32_t i = 0; i < g->n_nodes; i++) {
    rlx_status st = fuse_one(g, i);
    if (st) return st;
  }
  return RLX_OK;
}
