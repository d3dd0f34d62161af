/*
 * fuse_eltwise.c — compiles each elementwise chain into one fused node
 * (docs/design.md, "Fusion"): a group is a DAG of f32 unary and arithmetic
 * binary nodes (ops/fused.c: rlx_fused_takes) of one output shape whose
 * intermediate results feed only nodes of the group and are not graph
 * outputs; it may read its inputs many times (hardswish reads x twice) and
 * broadcast them (a scalar, a per-channel [C, 1, 1], a row). The group's
 * last node becomes an RLX_OP_FUSED node computing the others as steps, in
 * one pass over memory; dce then drops the others.
 *
 * Groups are grown from the last node back: a node joins when its output's
 * every consumer is already in the group. One consumer list per value is
 * built first, so the pass is linear in the graph's size (a group is capped
 * at RLX_FUSED_MAX_STEPS steps and RLX_FUSED_MAX_IN inputs).
 */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

typedef struct fuse_ctx {
  rlx_graph *g;
  int32_t *use_start, *use_node; /* consumers of value v: use_node[use_start[v] .. use_start[v + 1]) */
  uint8_t *is_output;            /* per value: a graph output */
  int32_t *group;                /* per node: the root of its group, or -1 */
} fuse_ctx;

static bool candidate(const rlx_graph *g, const rlx_node *n) {
  if (n->n_out != 1 || !rlx_fused_takes(n) || g->values[n->out[0]].dtype != RLX_DTYPE_F32) return false;
  for (int32_t k = 0; k < n->n_in; k++)
    if (n->in[k] < 0 || g->values[n->in[k]].dtype != RLX_DTYPE_F32) return false;
  return true;
}

static rlx_status build_uses(fuse_ctx *c) {
  rlx_graph *g = c->g;
  size_t nv = (size_t)g->n_values + 1;
  c->use_start = rlx_calloc(nv + 1, sizeof(int32_t));
  c->is_output = rlx_calloc(nv, 1);
  c->group = rlx_malloc(sizeof(int32_t) * (size_t)(g->n_nodes ? g->n_nodes : 1));
  size_t total = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) total += (size_t)g->nodes[i].n_in;
  c->use_node = rlx_malloc(sizeof(int32_t) * (total ? total : 1));
  if (!c->use_start || !c->is_output || !c->group || !c->use_node)
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory (consumer lists of %d values)", (int)g->n_values);
  for (int32_t i = 0; i < g->n_nodes; i++)
    for (int32_t k = 0; k < g->nodes[i].n_in; k++)
      if (g->nodes[i].in[k] >= 0) c->use_start[g->nodes[i].in[k] + 1]++;
  for (size_t v = 0; v < nv; v++) c->use_start[v + 1] += c->use_start[v];
  int32_t *fill = rlx_malloc(sizeof(int32_t) * nv);
  if (!fill) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  memcpy(fill, c->use_start, sizeof(int32_t) * nv);
  for (int32_t i = 0; i < g->n_nodes; i++)
    for (int32_t k = 0; k < g->nodes[i].n_in; k++)
      if (g->nodes[i].in[k] >= 0) c->use_node[fill[g->nodes[i].in[k]]++] = i;
  rlx_free(fill);
  for (int32_t i = 0; i < g->n_outputs; i++) c->is_output[g->outputs[i]] = 1;
  for (int32_t i = 0; i < g->n_nodes; i++) c->group[i] = -1;
  return RLX_OK;
}

/* The distinct values the members read that no member produces. */
static int externals(const fuse_ctx *c, const int32_t *mem, int nm, int32_t root, int32_t *ext, int cap) {
  int ne = 0;
  for (int m = 0; m < nm; m++) {
    const rlx_node *n = &c->g->nodes[mem[m]];
    for (int32_t k = 0; k < n->n_in; k++) {
      int32_t v = n->in[k];
      const rlx_value *val = &c->g->values[v];
      if (val->kind == RLX_VALUE_NODE && val->producer >= 0 && c->group[val->producer] == root) continue;
      bool seen = false;
      for (int e = 0; e < ne && !seen; e++) seen = ext[e] == v;
      if (seen) continue;
      if (ne == cap) return cap + 1;
      ext[ne++] = v;
    }
  }
  return ne;
}

/* Whether every consumer of v is a member of root's group. */
static bool consumed_inside(const fuse_ctx *c, int32_t v, int32_t root) {
  for (int32_t u = c->use_start[v]; u < c->use_start[v + 1]; u++)
    if (c->group[c->use_node[u]] != root) return false;
  return true;
}

/* Grows the group of `root` to a fixpoint; returns its size (members in mem). */
static int grow(fuse_ctx *c, int32_t root, int32_t *mem) {
  rlx_graph *g = c->g;
  const rlx_shape *rs = &g->values[g->nodes[root].out[0]].shape;
  int nm = 0;
  mem[nm++] = root, c->group[root] = root;
  int32_t ext[RLX_FUSED_MAX_IN + 1];
  for (bool grew = true; grew && nm < RLX_FUSED_MAX_STEPS;) {
    grew = false;
    for (int m = 0; m < nm && nm < RLX_FUSED_MAX_STEPS; m++) {
      const rlx_node *n = &g->nodes[mem[m]];
      for (int32_t k = 0; k < n->n_in && nm < RLX_FUSED_MAX_STEPS; k++) {
        int32_t v = n->in[k];
        const rlx_value *val = &g->values[v];
        if (val->kind != RLX_VALUE_NODE || val->producer < 0) continue;
        int32_t p = val->producer;
        if (c->group[p] >= 0 || c->is_output[v] || !candidate(g, &g->nodes[p]) || !rlx_shape_eq(&val->shape, rs) ||
            !consumed_inside(c, v, root))
          continue;
        c->group[p] = root, mem[nm] = p;
        if (externals(c, mem, nm + 1, root, ext, RLX_FUSED_MAX_IN) > RLX_FUSED_MAX_IN) {
          c->group[p] = -1; /* too many inputs with it: leave it out */
          continue;
        }
        nm++, grew = true;
      }
    }
  }
  return nm;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Rewrites the root of a group of nm >= 2 members into the fused node. */
static rlx_status rewrite(fuse_ctx *c, int32_t root, int32_t *mem, int nm) {
  rlx_graph *g = c->g;
  qsort(mem, (size_t)nm, sizeof *mem, cmp_i32); /* node order is a topological order */
  int32_t ext[RLX_FUSED_MAX_IN + 1];
  int ne = externals(c, mem, nm, root, ext, RLX_FUSED_MAX_IN);
  rlx_fused_step *steps = rlx_pool_alloc(&g->pool, sizeof *steps * (size_t)nm);
  int32_t *in = rlx_pool_alloc(&g->pool, sizeof(int32_t) * (size_t)(ne ? ne : 1));
  if (!steps || !in) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  memcpy(in, ext, sizeof(int32_t) * (size_t)ne);
  for (int s = 0; s < nm; s++) {
    const rlx_node *n = &g->nodes[mem[s]];
    rlx_fused_step *t = &steps[s];
    t->op = n->op;
    if (n->op == RLX_OP_UNARY) t->p.unary = n->p.unary;
    else t->p.binary = n->p.binary;
    t->label = n->label;
    for (int32_t k = 0; k < n->n_in; k++) {
      int32_t v = n->in[k];
      const rlx_value *val = &g->values[v];
      int src = 0;
      bool found = false;
      if (val->kind == RLX_VALUE_NODE && val->producer >= 0 && c->group[val->producer] == root) {
        for (int q = 0; q < s && !found; q++)
          if (mem[q] == val->producer) src = -q - 1, found = true;
      } else {
        for (int e = 0; e < ne && !found; e++)
          if (ext[e] == v) src = e, found = true;
      }
      if (!found) return rlx_errorf(RLX_ERR_INTERNAL, "fuse_eltwise: operand %d of %s not found", (int)k, n->label);
      t->src[k] = (int16_t)src;
    }
  }
  for (int s = 0; s < nm - 1; s++) {
    rlx_status st = rlx_node_absorb(g, root, mem[s]);
    if (st) return st;
  }
  rlx_node *r = &g->nodes[root];
  r->op = RLX_OP_FUSED;
  memset(&r->p, 0, sizeof r->p);
  r->p.fused.n_steps = nm;
  r->p.fused.steps = steps;
  r->in = in, r->n_in = ne;
  return RLX_OK;
}

rlx_status rlx_pass_fuse_eltwise(rlx_graph *g) {
  fuse_ctx c = {.g = g};
  rlx_status st = build_uses(&c);
  int32_t mem[RLX_FUSED_MAX_STEPS];
  for (int32_t i = g->n_nodes - 1; !st && i >= 0; i--) {
    if (c.group[i] >= 0 || !candidate(g, &g->nodes[i])) continue;
    int nm = grow(&c, i, mem);
    if (nm >= 2) st = rewrite(&c, i, mem, nm);
  }
  rlx_free(c.use_start);
  rlx_free(c.use_node);
  rlx_free(c.is_output);
  rlx_free(c.group);
  return st;
}
