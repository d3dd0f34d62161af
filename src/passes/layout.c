/*
 * layout.c — the layout pass (docs/design.md, "Layout"): runs the 2-D f32
 * convolutions of a network channels-last (NHWC) where that beats NCHW, with
 * the layout conversions pushed to the edges of each channels-last region.
 *
 * The graph keeps its meaning: every value keeps its id and its NCHW shape.
 * A converted conv becomes
 *
 *   x' = permute(x, [0, 2, 3, 1])          (or an NHWC x' that already exists)
 *   y' = conv(x', w, ...) channels_last    [N, OH, OW, O]
 *   y  = permute(y', [0, 3, 1, 2])         (the node's old output value)
 *
 * and one forward sweep carries the NHWC twin of each value (nhwc[v]) on to
 * its consumers: elementwise nodes (unary, binary, fused, where, cast) whose
 * big inputs all have a twin run on the twins (their small operands — a
 * per-channel scale, a constant — get a permute of their own, folded when
 * constant); a reduction over rank-4 dims runs on the twin with its axes
 * renumbered; a concat, a slice and a 2-D pool likewise; a channel shuffle (reshape to
 * [N, g, C/g, H, W], axes 1 and 2 swapped, reshape back) through rank-5
 * twins [N, H, W, g, C/g] (do_reshape); a permute to NHWC of a value with a twin is
 * the twin, and a permute to NCHW records its input as its output's twin
 * (convnext's own permutes). Every node that needs NCHW still reads the old
 * value, through its back-permute; back-permutes nobody reads are removed
 * by dce, so a chain of converted nodes has a permute only at its ends.
 *
 * When: a network with depthwise or grouped convolutions (the
 * MobileNet/EfficientNet family, ConvNeXt, RegNet, ResNeXt), where NCHW
 * runs them over short image rows or one small product per group, and
 * channels-last kernels vectorize over channels; the convs Winograd takes
 * in NCHW stay NCHW. RLX_LAYOUT=nhwc converts every eligible conv of any
 * network, RLX_LAYOUT=nchw none (measuring the choice); RLX_SKIP_PASSES=layout
 * skips the pass.
 *
 * New nodes are appended while sweeping, each remembering the original node
 * it must precede; one reordering at the end restores topological order
 * (linear in the graph's size).
 */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

typedef struct layout_ctx {
  rlx_graph *g;
  int32_t *nhwc;   /* per value: its NHWC twin, or -1 */
  int32_t cap_nhwc, n_nhwc;
  int32_t *before; /* per node (appended ones): the original node it precedes; -1 for originals */
  int32_t cap_before;
  int32_t n_orig;
  int32_t at; /* the original node being rewritten */
  bool all;   /* RLX_LAYOUT=nhwc */
} layout_ctx;

static const int32_t TO_NHWC[4] = {0, 2, 3, 1}, TO_NCHW[4] = {0, 3, 1, 2};

static bool is_perm(const rlx_node *n, const int32_t *perm) {
  if (n->op != RLX_OP_PERMUTE) return false;
  for (int i = 0; i < 4; i++)
    if (n->p.permute.perm[i] != perm[i]) return false;
  return true;
}

static rlx_params perm_params(const int32_t *perm) {
  rlx_params p;
  memset(&p, 0, sizeof p);
  for (int i = 0; i < RLX_MAX_RANK; i++) p.permute.perm[i] = i < 4 ? perm[i] : -1;
  return p;
}

/* Appends a node (placed before ctx->at at the end); returns its output or -1. */
static int32_t add(layout_ctx *c, rlx_op op, const rlx_params *p, const int32_t *in, int32_t n_in, const char *label,
                   const char *aten) {
  int32_t ni = rlx_graph_add_node(c->g, op, p, in, n_in, 1, label, aten);
  if (ni < 0) return -1;
  if (rlx_grow((void **)&c->before, &c->cap_before, ni + 1, sizeof *c->before)) return -1;
  c->before[ni] = c->at;
  if (rlx_grow((void **)&c->nhwc, &c->cap_nhwc, c->g->n_values, sizeof *c->nhwc)) return -1;
  for (; c->n_nhwc < c->g->n_values; c->n_nhwc++) c->nhwc[c->n_nhwc] = -1;
  return c->g->nodes[ni].out[0];
}

/* The NHWC twin of rank-4 value v, made (a permute) if it has none. */
static int32_t twin(layout_ctx *c, int32_t v) {
  if (c->nhwc[v] >= 0) return c->nhwc[v];
  rlx_params p = perm_params(TO_NHWC);
  int32_t t = add(c, RLX_OP_PERMUTE, &p, &v, 1, c->g->values[v].name, NULL);
  if (t >= 0) c->nhwc[v] = t;
  return t;
}

/* Operand v of an elementwise node with a rank-4 output, as an NHWC operand:
 * rank 0 as it is; rank 1..3 (numpy broadcasting aligns it right) first
 * reshaped to rank 4; -1 when that needs a symbolic reshape. */
static int32_t operand(layout_ctx *c, int32_t v) {
  const rlx_value *val = &c->g->values[v];
  if (val->shape.rank == 0) return v;
  if (val->shape.rank == 4) return twin(c, v);
  if (rlx_shape_is_symbolic(&val->shape)) return -1;
  rlx_params p;
  memset(&p, 0, sizeof p);
  p.shape.shape.rank = 4;
  int pad = 4 - val->shape.rank;
  for (int i = 0; i < 4; i++) p.shape.shape.dims[i] = i < pad ? 1 : val->shape.dims[i - pad];
  int32_t r = add(c, RLX_OP_RESHAPE, &p, &v, 1, val->name, NULL);
  return r < 0 ? -1 : twin(c, r);
}

/* The old node at index i now computes y = permute(y', TO_NCHW). */
static rlx_status become_back_permute(layout_ctx *c, int32_t i, int32_t yt) {
  rlx_node *n = &c->g->nodes[i];
  n->op = RLX_OP_PERMUTE;
  n->p = perm_params(TO_NCHW);
  n->n_in = 1;
  n->in[0] = yt;
  n->fused = NULL;
  c->nhwc[n->out[0]] = yt;
  return RLX_OK;
}

/* Replaces node i (one output) by `op` over `in` (NHWC), placed before it,
 * the old node becoming the back-permute. */
static rlx_status convert(layout_ctx *c, int32_t i, const rlx_params *p, const int32_t *in, int32_t n_in) {
  const rlx_node *n = &c->g->nodes[i];
  const char *fused = n->fused;
  int32_t yt = add(c, n->op, p, in, n_in, n->label, n->aten);
  if (yt < 0) return rlx_last_status();
  c->g->nodes[c->g->values[yt].producer].fused = fused;
  return become_back_permute(c, i, yt);
}

/* A 2-D f32 conv with constant weights and a static channel count, groups 1 or grouped; *dw: grouped
 * (depthwise, or groups of several channels: src/cpu/conv_group.c), which NHWC runs vectorized over channels
 * and NCHW poorly. */
static bool conv_eligible(const rlx_graph *g, const rlx_node *n, bool *dw) {
  if (n->op != RLX_OP_CONV) return false;
  const rlx_conv_params *p = &n->p.conv;
  const rlx_value *x = &g->values[n->in[0]], *w = &g->values[n->in[1]];
  if (p->nd != 2 || p->transposed || p->channels_last || x->dtype != RLX_DTYPE_F32 || x->shape.rank != 4 ||
      (w->kind != RLX_VALUE_WEIGHT && w->kind != RLX_VALUE_CONST) || rlx_dim_is_sym(x->shape.dims[1]))
    return false;
  int64_t C = x->shape.dims[1], O = w->shape.dims[0];
  *dw = p->groups > 1 && C % p->groups == 0 && O % p->groups == 0;
  return p->groups == 1 || *dw;
}

/* A 3x3 stride-1 conv, which the NCHW backend runs with Winograd at useful sizes. */
static bool winograd_shaped(const rlx_graph *g, const rlx_node *n) {
  const rlx_conv_params *p = &n->p.conv;
  const rlx_value *w = &g->values[n->in[1]];
  return w->shape.dims[2] == 3 && w->shape.dims[3] == 3 && p->stride[0] == 1 && p->stride[1] == 1 &&
         p->dilation[0] == 1 && p->dilation[1] == 1 && w->shape.dims[0] >= 16 && w->shape.dims[1] >= 16;
}

/* Input channels of a stem conv (the image's: RGB, RGBA, grey), src/cpu/conv_stem.c's bound. */
#define STEM_C 4

static rlx_status do_conv(layout_ctx *c, int32_t i) {
  rlx_node *n = &c->g->nodes[i];
  bool dw;
  if (!conv_eligible(c->g, n, &dw)) return RLX_OK;
  /* NCHW's kernels win for the convs Winograd takes. A stem on a few image
   * channels with no twin (its im2col runs are long in NCHW, 3 wide in
   * NHWC) reads its image as it is and writes channels-last (x_nchw). */
  int64_t C = c->g->values[n->in[0]].shape.dims[1];
  bool few = C < 8 && c->nhwc[n->in[0]] < 0, stem = few && C <= STEM_C && !dw;
  if (!dw && !stem && !c->all && (winograd_shaped(c->g, n) || few)) return RLX_OK;
  int32_t in[4] = {-1, n->in[1], n->n_in > 2 ? n->in[2] : -1, n->n_in > 3 ? n->in[3] : -1};
  int32_t n_in = n->n_in, x = n->in[0];
  rlx_params p = n->p;
  p.conv.channels_last = true;
  p.conv.x_nchw = stem;
  if ((in[0] = stem ? x : twin(c, x)) < 0) return rlx_last_status();
  if (in[3] >= 0 && (in[3] = twin(c, in[3])) < 0) return rlx_last_status();
  return convert(c, i, &p, in, n_in);
}

/* Whether an elementwise node should run on twins: some input has a twin,
 * and every input without one is small next to the output (its permute
 * costs little) or constant. */
static bool eltwise_worth(const layout_ctx *c, const rlx_node *n) {
  const rlx_graph *g = c->g;
  const rlx_value *y = &g->values[n->out[0]];
  if (n->n_out != 1 || y->shape.rank != 4) return false;
  bool any = false;
  int64_t big = rlx_value_max_numel(g, y) / 16;
  for (int32_t k = 0; k < n->n_in; k++) {
    int32_t v = n->in[k];
    if (v < 0) return false;
    const rlx_value *val = &g->values[v];
    if (c->nhwc[v] >= 0) {
      any = true;
      continue;
    }
    if (val->shape.rank > 4) return false;
    bool constant = val->kind == RLX_VALUE_CONST || val->kind == RLX_VALUE_WEIGHT;
    if (!constant && rlx_value_max_numel(g, val) > RLX_MAX(big, 4096)) return false;
  }
  return any;
}

static rlx_status do_eltwise(layout_ctx *c, int32_t i) {
  const rlx_node *n = &c->g->nodes[i];
  if (!eltwise_worth(c, n)) return RLX_OK;
  int32_t n_in = n->n_in, in[RLX_FUSED_MAX_IN + 4];
  if (n_in > (int32_t)RLX_COUNTOF(in)) return RLX_OK;
  rlx_params p = n->p;
  for (int32_t k = 0; k < n_in; k++) {
    int32_t v = c->g->nodes[i].in[k];
    if (c->g->values[v].shape.rank != 4 && c->g->values[v].shape.rank != 0 &&
        rlx_shape_is_symbolic(&c->g->values[v].shape))
      return RLX_OK;
  }
  for (int32_t k = 0; k < n_in; k++)
    if ((in[k] = operand(c, c->g->nodes[i].in[k])) < 0) return rlx_last_status();
  return convert(c, i, &p, in, n_in);
}

/* NCHW axis a is NHWC axis NEW_AXIS[a]. */
static const int NEW_AXIS[4] = {0, 3, 1, 2};

static rlx_status do_reduce(layout_ctx *c, int32_t i) {
  rlx_node *n = &c->g->nodes[i];
  int32_t x = n->in[0];
  if (c->nhwc[x] < 0 || c->g->values[x].shape.rank != 4 || (n->p.reduce.axes >> 4)) return RLX_OK;
  rlx_params p = n->p;
  p.reduce.axes = 0;
  for (int a = 0; a < 4; a++)
    if ((n->p.reduce.axes >> a) & 1) p.reduce.axes |= 1u << NEW_AXIS[a];
  if (p.reduce.keepdim) return convert(c, i, &p, &c->nhwc[x], 1);
  /* without keepdim the kept axes must stay in order (the output is then the same tensor) */
  int last = -1;
  for (int a = 0; a < 4; a++)
    if (!((n->p.reduce.axes >> a) & 1)) {
      if (NEW_AXIS[a] < last) return RLX_OK;
      last = NEW_AXIS[a];
    }
  n->p = p;
  n->in[0] = c->nhwc[x];
  return RLX_OK;
}

static rlx_status do_concat(layout_ctx *c, int32_t i) {
  const rlx_node *n = &c->g->nodes[i];
  int32_t n_in = n->n_in;
  if (c->g->values[n->out[0]].shape.rank != 4 || n_in > 64) return RLX_OK;
  int32_t in[64];
  for (int32_t k = 0; k < n_in; k++)
    if (n->in[k] < 0 || (in[k] = c->nhwc[n->in[k]]) < 0) return RLX_OK;
  rlx_params p = n->p;
  int64_t a = p.axis.axis < 0 ? p.axis.axis + 4 : p.axis.axis;
  if (a < 0 || a > 3) return RLX_OK;
  p.axis.axis = NEW_AXIS[a];
  return convert(c, i, &p, in, n_in);
}

/* A 2-D f32 pool of a value with a twin runs channels-last (cpu/pool.c's channels-last kernel). */
static rlx_status do_pool(layout_ctx *c, int32_t i) {
  const rlx_node *n = &c->g->nodes[i];
  int32_t x = n->in[0];
  const rlx_value *xv = &c->g->values[x];
  if (n->n_out != 1 || n->p.pool.nd != 2 || n->p.pool.channels_last || c->nhwc[x] < 0 || xv->shape.rank != 4 ||
      xv->dtype != RLX_DTYPE_F32)
    return RLX_OK;
  rlx_params p = n->p;
  p.pool.channels_last = true;
  return convert(c, i, &p, &c->nhwc[x], 1);
}

static rlx_status do_slice(layout_ctx *c, int32_t i) {
  const rlx_node *n = &c->g->nodes[i];
  int32_t x = n->in[0];
  if (n->n_in != 1 || c->nhwc[x] < 0 || c->g->values[x].shape.rank != 4) return RLX_OK;
  rlx_params p = n->p;
  p.slice.axis = NEW_AXIS[n->p.slice.axis];
  return convert(c, i, &p, &c->nhwc[x], 1);
}

/* A channel shuffle (shufflenet: [N, C, H, W] viewed as [N, g, C/g, H, W], its axes 1 and 2 swapped, viewed
 * back as [N, C, H, W]) on twins. A rank-5 value v [N, a, b, H, W] made from a twinned one has for twin t
 * [N, H, W, a, b] (t[n, h, w, i, j] = v[n, i, j, h, w]): made by a reshape splitting a twin's channels, by the
 * permute swapping t's axes 3 and 4 where v's 1 and 2 are swapped, and a reshape merging v's axes 1 and 2
 * merges t's 3 and 4 into a rank-4 twin. Each twin is new nodes beside the old ones (which dce removes when
 * nothing NCHW reads them). */
static int32_t twin_reshape(layout_ctx *c, int32_t t, const int64_t *dims, int rank) {
  rlx_params p;
  memset(&p, 0, sizeof p);
  p.shape.shape.rank = rank;
  for (int k = 0; k < rank; k++) p.shape.shape.dims[k] = dims[k];
  return add(c, RLX_OP_RESHAPE, &p, &t, 1, c->g->values[t].name, NULL);
}

static rlx_status do_reshape(layout_ctx *c, int32_t i) {
  const rlx_node *n = &c->g->nodes[i];
  int32_t x = n->in[0], y = n->out[0];
  const rlx_shape *xs = &c->g->values[x].shape, *ys = &c->g->values[y].shape;
  if (c->nhwc[x] < 0 || rlx_shape_is_symbolic(xs) || rlx_shape_is_symbolic(ys)) return RLX_OK;
  int32_t t = -1;
  if (xs->rank == 4 && ys->rank == 5 && ys->dims[0] == xs->dims[0] && ys->dims[1] * ys->dims[2] == xs->dims[1] &&
      ys->dims[3] == xs->dims[2] && ys->dims[4] == xs->dims[3]) {
    int64_t d[5] = {ys->dims[0], ys->dims[3], ys->dims[4], ys->dims[1], ys->dims[2]};
    t = twin_reshape(c, c->nhwc[x], d, 5);
  } else if (xs->rank == 5 && ys->rank == 4 && ys->dims[0] == xs->dims[0] && ys->dims[1] == xs->dims[1] * xs->dims[2] &&
             ys->dims[2] == xs->dims[3] && ys->dims[3] == xs->dims[4]) {
    int64_t d[4] = {ys->dims[0], ys->dims[2], ys->dims[3], ys->dims[1]};
    t = twin_reshape(c, c->nhwc[x], d, 4);
  } else {
    return RLX_OK;
  }
  if (t < 0) return rlx_last_status();
  c->nhwc[y] = t;
  return RLX_OK;
}

static rlx_status do_permute5(layout_ctx *c, int32_t i) {
  static const int32_t SWAP12[5] = {0, 2, 1, 3, 4}, SWAP34[5] = {0, 1, 2, 4, 3};
  const rlx_node *n = &c->g->nodes[i];
  int32_t x = n->in[0];
  if (c->nhwc[x] < 0) return RLX_OK;
  for (int k = 0; k < 5; k++)
    if (n->p.permute.perm[k] != SWAP12[k]) return RLX_OK;
  rlx_params p;
  memset(&p, 0, sizeof p);
  for (int k = 0; k < RLX_MAX_RANK; k++) p.permute.perm[k] = k < 5 ? SWAP34[k] : -1;
  int32_t t = add(c, RLX_OP_PERMUTE, &p, &c->nhwc[x], 1, n->label, NULL);
  if (t < 0) return rlx_last_status();
  c->nhwc[n->out[0]] = t;
  return RLX_OK;
}

static rlx_status do_node(layout_ctx *c, int32_t i) {
  rlx_node *n = &c->g->nodes[i];
  switch (n->op) {
    case RLX_OP_CONV: return do_conv(c, i);
    case RLX_OP_SLICE: return do_slice(c, i);
    case RLX_OP_POOL: return do_pool(c, i);
    case RLX_OP_RESHAPE: return do_reshape(c, i);
    case RLX_OP_PERMUTE:
      if (c->g->values[n->in[0]].shape.rank == 5) return do_permute5(c, i);
      if (c->g->values[n->in[0]].shape.rank != 4) return RLX_OK;
      if (is_perm(n, TO_NCHW)) {
        c->nhwc[n->out[0]] = n->in[0];
      } else if (is_perm(n, TO_NHWC)) {
        if (c->nhwc[n->in[0]] >= 0) rlx_replace_uses(c->g, n->out[0], c->nhwc[n->in[0]]);
        else c->nhwc[n->in[0]] = n->out[0];
      }
      return RLX_OK;
    case RLX_OP_UNARY:
    case RLX_OP_BINARY:
    case RLX_OP_FUSED:
    case RLX_OP_WHERE:
    case RLX_OP_CAST: return do_eltwise(c, i);
    case RLX_OP_REDUCE: return do_reduce(c, i);
    case RLX_OP_CONCAT: return do_concat(c, i);
    default: return RLX_OK;
  }
}

/* Whether the network gets channels-last convs (see the header). */
static bool wanted(const rlx_graph *g, bool *all) {
  const char *env = getenv("RLX_LAYOUT");
  *all = env && !strcmp(env, "nhwc");
  if (env && !strcmp(env, "nchw")) return false;
  bool dw;
  for (int32_t i = 0; i < g->n_nodes; i++)
    if (conv_eligible(g, &g->nodes[i], &dw) && (dw || *all)) return true;
  return false;
}

/* Puts each appended node before the original it precedes; fixes producers. */
static rlx_status reorder(layout_ctx *c) {
  rlx_graph *g = c->g;
  int32_t total = g->n_nodes;
  if (total == c->n_orig) return RLX_OK;
  rlx_node *nodes = rlx_malloc(sizeof *nodes * (size_t)total);
  int32_t *start = rlx_calloc((size_t)c->n_orig + 2, sizeof *start);
  if (!nodes || !start) {
    rlx_free(nodes), rlx_free(start);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory (layout pass)");
  }
  /* counting sort of the appended nodes by the original they precede (stable) */
  for (int32_t i = c->n_orig; i < total; i++) start[c->before[i] + 1]++;
  for (int32_t i = 0; i <= c->n_orig; i++) start[i + 1] += start[i];
  int32_t k = 0, next = c->n_orig;
  for (int32_t o = 0; o < c->n_orig; o++) {
    for (int32_t a = start[o]; a < start[o + 1]; a++, next++) nodes[k++] = g->nodes[next];
    nodes[k++] = g->nodes[o];
  }
  /* the appended nodes were created in sweep order, so those before one original are consecutive */
  RLX_ASSERT(k == total && next == total);
  memcpy(g->nodes, nodes, sizeof *nodes * (size_t)total);
  for (int32_t i = 0; i < total; i++)
    for (int32_t s = 0; s < g->nodes[i].n_out; s++) g->values[g->nodes[i].out[s]].producer = i;
  rlx_free(nodes), rlx_free(start);
  return RLX_OK;
}

rlx_status rlx_pass_layout(rlx_graph *g) {
  layout_ctx c = {.g = g, .n_orig = g->n_nodes};
  if (!wanted(g, &c.all)) return RLX_OK;
  rlx_status st = rlx_grow((void **)&c.nhwc, &c.cap_nhwc, g->n_values + 1, sizeof *c.nhwc);
  for (; !st && c.n_nhwc < g->n_values; c.n_nhwc++) c.nhwc[c.n_nhwc] = -1;
  for (c.at = 0; c.at < c.n_orig && !st; c.at++) st = do_node(&c, c.at);
  if (!st) st = reorder(&c);
  rlx_free(c.nhwc), rlx_free(c.before);
  return st;
}
