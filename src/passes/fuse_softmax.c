/*
 * fuse_softmax.c — folds the scale and the additive mask of an attention
 * written out by hand into the softmax after them (docs/design.md, "Passes
 * and fusion"):
 *
 *   softmax(x * c + mask), softmax(x / c + mask), softmax(x * c),
 *   softmax(x + mask)       over the last axis, c a scalar constant
 *
 * become one softmax node that reads x and the mask (its input 1, broadcast
 * to x): one pass over the scores instead of two or three. Each step keeps
 * its rounding (the reference rounds after the scale and after the mask, the
 * fast kernel runs the same float operations in order), so the result is the
 * unfused graph's, bit for bit. Only where each intermediate feeds nothing
 * but the next step and is not a graph output, and one operand of the add
 * has the softmax's whole shape (the scores; the other, the mask, may
 * broadcast; where both do, the scaled one is the scores).
 */
#include "ops/ops_util.h"
#include "passes/passes.h"

/* The producer of v when it is a binary `kind` node whose output only `user` reads. */
static int32_t private_binary(const rlx_graph *g, int32_t v, int32_t user, rlx_binary_kind kind) {
  const rlx_value *val = &g->values[v];
  if (val->kind != RLX_VALUE_NODE || val->producer < 0 || rlx_is_graph_output(g, v)) return -1;
  const rlx_node *p = &g->nodes[val->producer];
  if (p->op != RLX_OP_BINARY || p->p.binary.kind != kind) return -1;
  return rlx_single_consumer(g, v, val->producer) == user ? val->producer : -1;
}

/* A constant of one element of dtype t: its value in *out. */
static bool scalar_const(const rlx_graph *g, int32_t v, rlx_dtype t, double *out) {
  const rlx_value *val = &g->values[v];
  if ((val->kind != RLX_VALUE_CONST && val->kind != RLX_VALUE_WEIGHT) || !val->data || val->dtype != t ||
      rlx_shape_numel(&val->shape) != 1)
    return false;
  *out = rlx_load_f64(val->data, t, 0);
  return true;
}

/* Whether m broadcasts to shape s without enlarging it. */
static bool mask_fits(const rlx_shape *m, const rlx_shape *s) {
  if (m->rank > s->rank) return false;
  for (int i = 0; i < m->rank; i++) {
    int64_t md = m->dims[i], sd = s->dims[s->rank - m->rank + i];
    if (md != 1 && md != sd) return false;
  }
  return true;
}

/* Whether v is x * c or x / c (c a scalar constant of dtype t) read only by `user`. */
static bool scaled_input(const rlx_graph *g, int32_t v, int32_t user, rlx_dtype t) {
  double c;
  int32_t mul = private_binary(g, v, user, RLX_BINARY_MUL), div = private_binary(g, v, user, RLX_BINARY_DIV);
  if (mul >= 0) return scalar_const(g, g->nodes[mul].in[0], t, &c) || scalar_const(g, g->nodes[mul].in[1], t, &c);
  return div >= 0 && scalar_const(g, g->nodes[div].in[1], t, &c);
}

static rlx_status fuse_one(rlx_graph *g, int32_t si) {
  rlx_node *s = &g->nodes[si];
  if (s->op != RLX_OP_SOFTMAX || s->n_in > 1 || s->p.softmax.pre) return RLX_OK;
  const rlx_value *sv = &g->values[s->in[0]];
  rlx_dtype t = sv->dtype;
  if (!rlx_dtype_is_float(t) || sv->shape.rank == 0 || s->p.softmax.axis != sv->shape.rank - 1) return RLX_OK;
  int32_t x = s->in[0], mask = -1, add = private_binary(g, x, si, RLX_BINARY_ADD), scaled = -1;
  if (add >= 0) { /* x = a + b: the mask is the operand that broadcasts (else b), the other the scores */
    const rlx_node *a = &g->nodes[add];
    int32_t u = a->in[0], v = a->in[1];
    const rlx_value *uv = &g->values[u], *vv = &g->values[v];
    if (uv->dtype != t || vv->dtype != t) return RLX_OK;
    bool u_full = rlx_shape_eq(&uv->shape, &sv->shape), v_full = rlx_shape_eq(&vv->shape, &sv->shape);
    if (!u_full && !v_full) return RLX_OK;
    /* both full: the scores are the one a scale made (the pattern's), else a */
    int32_t scores = v_full && !u_full ? v : u;
    if (u_full && v_full && scaled_input(g, v, add, t) && !scaled_input(g, u, add, t)) scores = v;
    int32_t m = scores == u ? v : u;
    if (!mask_fits(&g->values[m].shape, &sv->shape)) return RLX_OK;
    mask = m, x = scores;
  }
  rlx_softmax_pre pre = RLX_SOFTMAX_PRE_NONE;
  double c = 0;
  int32_t user = add >= 0 ? add : si;
  int32_t mul = private_binary(g, x, user, RLX_BINARY_MUL), div = private_binary(g, x, user, RLX_BINARY_DIV);
  if (mul >= 0) {
    const rlx_node *p = &g->nodes[mul];
    int32_t other;
    if (scalar_const(g, p->in[1], t, &c)) other = p->in[0];
    else if (scalar_const(g, p->in[0], t, &c)) other = p->in[1];
    else other = -1;
    if (other >= 0 && rlx_shape_eq(&g->values[other].shape, &sv->shape))
      pre = RLX_SOFTMAX_PRE_MUL, x = other, scaled = mul;
  } else if (div >= 0) {
    const rlx_node *p = &g->nodes[div];
    if (scalar_const(g, p->in[1], t, &c) && rlx_shape_eq(&g->values[p->in[0]].shape, &sv->shape))
      pre = RLX_SOFTMAX_PRE_DIV, x = p->in[0], scaled = div;
  }
  if (pre == RLX_SOFTMAX_PRE_NONE && mask < 0) return RLX_OK;
  if (g->values[x].dtype != t) return RLX_OK;
  /* rewrite: the softmax reads x (and the mask); the add and the scale are left for dce */
  s->in[0] = x;
  if (mask >= 0) {
    rlx_status st = rlx_node_set_input(g, si, 1, mask);
    if (st) return st;
  }
  s = &g->nodes[si];
  s->p.softmax.pre = pre;
  s->p.softmax.scale = c;
  rlx_status st = RLX_OK;
  if (add >= 0) st = rlx_node_absorb(g, si, add);
  if (!st && scaled >= 0) st = rlx_node_absorb(g, si, scaled);
  return st;
}

rlx_status rlx_pass_fuse_softmax(rlx_graph *g) {
  for (int32_t i = 0; i < g->n_nodes; i++) {
    rlx_status st = fuse_one(g, i);
    if (st) return st;
  }
  return RLX_OK;
}
