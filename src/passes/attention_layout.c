/*
 * attention_layout.c — lets attention read its q, k, v and write its output
 * with the heads inside the rows (docs/design.md, "Passes and fusion").
 *
 * A transformer's projections give [*B, L, H*D] rows; torch splits them into
 * heads with view + transpose, [*B, L, H, D] -> [*B, H, L, D], a copy each
 * for q, k and v (and one back for the output: BERT's four permutes a
 * layer, ViT's four of five). The attention kernel can read a head's rows
 * H*D apart instead (its products take row strides), so where an attention
 * input is such a permute of an [.., L, H, D] tensor, possibly behind
 * reshapes that only add or drop axes of size 1 (ViT's [L, H, D] -> [H, L,
 * D] -> [1, H, L, D]), the permute becomes a reshape of its input to [*B,
 * L, H, D] — a view, no copy — that the attention reads with the input's
 * RLX_ATTN_*_LH bit set. Likewise an output read only by a permute that
 * puts it back as [.., L, H, D]: the attention writes that layout and the
 * permute becomes a reshape. Only where every node on the way has that one
 * reader and is not a graph output, and the head, length and head-size
 * axes are not 1 (a one-token step's "permute" is already a reshape). The
 * same sums in the same order: the result is the unfused graph's, bit for
 * bit, reference and fast (tests/c/test_attention_layout.c).
 */
#include "ops/ops_util.h"
#include "passes/passes.h"

/* The producer of v when it is a node of op `op` whose output only `user` reads; -1 otherwise. */
static int32_t private_producer(const rlx_graph *g, int32_t v, int32_t user, rlx_op op) {
  const rlx_value *val = &g->values[v];
  if (val->kind != RLX_VALUE_NODE || val->producer < 0 || rlx_is_graph_output(g, v)) return -1;
  if (g->nodes[val->producer].op != op) return -1;
  return rlx_single_consumer(g, v, val->producer) == user ? val->producer : -1;
}

/* The axes of s (a permute's input or output) of size other than 1, in
 * order, as indices into the permute's input via perm (NULL: s is the
 * input); their count. */
static int nonunit_axes(const rlx_shape *s, const int32_t *perm, int *ax) {
  int m = 0;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] != 1) ax[m++] = perm ? perm[i] : i;
  return m;
}

/* Whether permute node p takes [.., L, H, D] (its input's axes other than 1)
 * to [.., H, L, D] (its output's), the leading axes kept in order. */
static bool swaps_lh(const rlx_graph *g, const rlx_node *p) {
  const rlx_shape *xs = &g->values[p->in[0]].shape, *ys = &g->values[p->out[0]].shape;
  int in_ax[RLX_MAX_RANK], out_ax[RLX_MAX_RANK];
  int m = nonunit_axes(xs, NULL, in_ax), mo = nonunit_axes(ys, p->p.permute.perm, out_ax);
  if (m != mo || m < 3) return false;
  for (int i = 0; i < m - 3; i++)
    if (out_ax[i] != in_ax[i]) return false;
  return out_ax[m - 3] == in_ax[m - 2] && out_ax[m - 2] == in_ax[m - 3] && out_ax[m - 1] == in_ax[m - 1];
}

/* The last three axes of an attention tensor of shape s are all other than 1. */
static bool heads_nonunit(const rlx_shape *s) {
  return s->rank >= 3 && s->dims[s->rank - 3] != 1 && s->dims[s->rank - 2] != 1 && s->dims[s->rank - 1] != 1;
}

/* Turns permute node pi into a reshape of its input to shape s (its output value's new shape). */
static void permute_to_reshape(rlx_graph *g, int32_t pi, const rlx_shape *s) {
  rlx_node *p = &g->nodes[pi];
  p->op = RLX_OP_RESHAPE;
  p->p = (rlx_params){.shape = {.shape = *s}};
  g->values[p->out[0]].shape = *s;
}

/* Input k (0 q, 1 k, 2 v) of attention node ai. */
static void try_input(rlx_graph *g, int32_t ai, int k) {
  rlx_node *a = &g->nodes[ai];
  int32_t v = a->in[k];
  const rlx_shape *as = &g->values[v].shape;
  if (!heads_nonunit(as)) return;
  /* back through one reshape that only adds or drops axes of size 1 */
  int32_t user = ai, u = v, ri = private_producer(g, v, ai, RLX_OP_RESHAPE);
  if (ri >= 0 && rlx_shape_same_nonunit(&g->values[g->nodes[ri].in[0]].shape, as)) user = ri, u = g->nodes[ri].in[0];
  int32_t pi = private_producer(g, u, user, RLX_OP_PERMUTE);
  if (pi < 0 || !swaps_lh(g, &g->nodes[pi])) return;
  rlx_shape lh = *as; /* [*B, H, L, D] -> [*B, L, H, D] */
  lh.dims[lh.rank - 3] = as->dims[as->rank - 2], lh.dims[lh.rank - 2] = as->dims[as->rank - 3];
  permute_to_reshape(g, pi, &lh);
  a = &g->nodes[ai];
  a->in[k] = g->nodes[pi].out[0]; /* the reshape between, if any, is left for dce */
  a->p.attention.rows_lh |= (uint8_t)(k == 0 ? RLX_ATTN_Q_LH : k == 1 ? RLX_ATTN_K_LH : RLX_ATTN_V_LH);
}

/* The output of attention node ai, read only by a permute to [.., L, H, D]. */
static void try_output(rlx_graph *g, int32_t ai) {
  rlx_node *a = &g->nodes[ai];
  int32_t y = a->out[0];
  const rlx_shape *ys = &g->values[y].shape;
  if (!heads_nonunit(ys) || rlx_is_graph_output(g, y)) return;
  int32_t pi = rlx_single_consumer(g, y, ai);
  if (pi < 0 || g->nodes[pi].op != RLX_OP_PERMUTE) return;
  /* the permute's output, its axes other than 1, is [.., L, H, D] of y's [.., H, L, D] */
  const rlx_node *p = &g->nodes[pi];
  int in_ax[RLX_MAX_RANK], out_ax[RLX_MAX_RANK];
  int m = nonunit_axes(ys, NULL, in_ax), mo = nonunit_axes(&g->values[p->out[0]].shape, p->p.permute.perm, out_ax);
  if (m != mo || m < 3) return;
  for (int i = 0; i < m - 3; i++)
    if (out_ax[i] != in_ax[i]) return;
  if (out_ax[m - 3] != in_ax[m - 2] || out_ax[m - 2] != in_ax[m - 3] || out_ax[m - 1] != in_ax[m - 1]) return;
  rlx_shape lh = *ys;
  lh.dims[lh.rank - 3] = ys->dims[ys->rank - 2], lh.dims[lh.rank - 2] = ys->dims[ys->rank - 3];
  g->values[y].shape = lh;
  a->p.attention.rows_lh |= RLX_ATTN_OUT_LH;
  permute_to_reshape(g, pi, &g->values[g->nodes[pi].out[0]].shape);
}

rlx_status rlx_pass_attention_layout(rlx_graph *g) {
  for (int32_t i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].op != RLX_OP_ATTENTION || g->nodes[i].p.attention.rows_lh ||
        g->values[g->nodes[i].in[0]].dtype != RLX_DTYPE_F32)
      continue;
    for (int k = 0; k < 3; k++) {
      const rlx_node *a = &g->nodes[i];
      bool shared = false; /* a value read as two of q, k, v keeps its one layout */
      for (int o = 0; o < 3; o++) shared |= o != k && a->in[o] == a->in[k];
      if (!shared) try_input(g, i, k);
    }
    try_output(g, i);
  }
  return RLX_OK;
}
