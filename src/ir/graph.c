/*
 * graph.c — building, copying and verifying rlx graphs.
 */
#include <stdio.h>
#include <string.h>

#include "ir/graph.h"

void rlx_graph_init(rlx_graph *g) { memset(g, 0, sizeof *g); }

void rlx_graph_free(rlx_graph *g) {
  if (!g) return;
  for (int32_t i = 0; i < g->n_owned; i++) rlx_aligned_free(g->owned[i]);
  rlx_free(g->owned);
  rlx_free(g->values);
  rlx_free(g->nodes);
  rlx_free(g->inputs);
  rlx_free(g->outputs);
  rlx_free(g->states);
  rlx_free(g->fx_values);
  rlx_free(g->guards);
  rlx_symtab_free(&g->syms);
  rlx_pool_free(&g->pool);
  memset(g, 0, sizeof *g);
}

bool rlx_shape_is_symbolic(const rlx_shape *s) {
  for (int i = 0; i < s->rank && i < RLX_MAX_RANK; i++)
    if (rlx_dim_is_sym(s->dims[i])) return true;
  return false;
}

bool rlx_graph_shape_valid(const rlx_graph *g, const rlx_shape *s) {
  if (!rlx_shape_is_symbolic(s)) return rlx_shape_valid(s, NULL);
  if (s->rank < 0 || s->rank > RLX_MAX_RANK) return false;
  int64_t nz = 1;
  for (int i = 0; i < s->rank; i++) {
    int64_t lo, hi;
    if (!rlx_dim_valid(&g->syms, s->dims[i])) return false;
    rlx_dim_bounds(&g->syms, s->dims[i], &lo, &hi);
    /* a lower bound below 0 is allowed: bindings where the dim would be
     * negative are refused when they are bound (docs/design.md, "Shapes") */
    if (hi < 0) return false;
    if (hi > 0 && (__builtin_mul_overflow(nz, hi, &nz) || nz > RLX_MAX_NUMEL)) return false;
  }
  return true;
}

int64_t rlx_value_max_numel(const rlx_graph *g, const rlx_value *v) {
  int64_t n = 1;
  for (int i = 0; i < v->shape.rank; i++) {
    int64_t lo, hi;
    rlx_dim_bounds(&g->syms, v->shape.dims[i], &lo, &hi);
    if (hi <= 0) return 0;
    if (__builtin_mul_overflow(n, hi, &n)) return INT64_MAX;
  }
  return n;
}

char *rlx_graph_shape_str(const rlx_graph *g, const rlx_shape *s, char *buf, size_t cap) {
  if (!rlx_shape_is_symbolic(s)) return rlx_shape_str(s, buf, cap);
  size_t n = 0;
  buf[0] = '\0';
  n += (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < s->rank && n + 1 < cap; i++) {
    char d[96];
    n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", rlx_dim_str(&g->syms, s->dims[i], d, sizeof d));
  }
  if (n + 1 < cap) snprintf(buf + n, cap - n, "]");
  return buf;
}

const char *rlx_rel_name(rlx_rel r) {
  static const char *names[] = {"==", "!=", "<", "<=", ">", ">="};
  return (unsigned)r < 6 ? names[r] : "?";
}

rlx_status rlx_graph_add_guard(rlx_graph *g, rlx_dim lhs, rlx_rel rel, rlx_dim rhs, const char *what) {
  rlx_status st = rlx_grow((void **)&g->guards, &g->cap_guards, g->n_guards + 1, sizeof *g->guards);
  if (st) return st;
  const char *w = rlx_pool_strdup(&g->pool, what ? what : "");
  if (!w) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory adding a guard");
  g->guards[g->n_guards++] = (rlx_guard){lhs, rhs, rel, w};
  /* what the guard tells shape inference: a difference known >= 0 */
  rlx_symtab *t = &g->syms;
  rlx_dim d;
  if (rel == RLX_REL_LE || rel == RLX_REL_LT || rel == RLX_REL_EQ) {
    if ((st = rlx_dim_sub(t, rhs, lhs, &d)) || (rel == RLX_REL_LT && (st = rlx_dim_add(t, d, -1, &d))) ||
        (st = rlx_sym_assume_nonneg(t, d)))
      return st;
  }
  if (rel == RLX_REL_GE || rel == RLX_REL_GT || rel == RLX_REL_EQ) {
    if ((st = rlx_dim_sub(t, lhs, rhs, &d)) || (rel == RLX_REL_GT && (st = rlx_dim_add(t, d, -1, &d))) ||
        (st = rlx_sym_assume_nonneg(t, d)))
      return st;
  }
  return RLX_OK;
}

static int32_t new_value(rlx_graph *g, rlx_value_kind kind, rlx_dtype t, const rlx_shape *s,
                         const char *name) {
  if (!rlx_graph_shape_valid(g, s) || !rlx_dtype_valid(t) ||
      (kind != RLX_VALUE_INPUT && kind != RLX_VALUE_NODE && rlx_shape_is_symbolic(s))) {
    char buf[256];
    rlx_errorf(RLX_ERR_SHAPE, "value '%s' has an invalid shape %s or dtype", name ? name : "?",
               rlx_graph_shape_str(g, s, buf, sizeof buf));
    return -1;
  }
  if (rlx_grow((void **)&g->values, &g->cap_values, g->n_values + 1, sizeof *g->values)) return -1;
  rlx_value *v = &g->values[g->n_values];
  memset(v, 0, sizeof *v);
  v->kind = kind;
  v->dtype = t;
  v->shape = *s;
  v->producer = -1;
  v->slot = -1;
  if (name) {
    v->name = rlx_pool_strdup(&g->pool, name);
    if (!v->name) {
      rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory naming a value");
      return -1;
    }
  }
  return g->n_values++;
}

int32_t rlx_graph_add_input(rlx_graph *g, const char *name, rlx_dtype t, const rlx_shape *s) {
  int32_t v = new_value(g, RLX_VALUE_INPUT, t, s, name);
  if (v < 0) return -1;
  if (rlx_grow((void **)&g->inputs, &g->cap_inputs, g->n_inputs + 1, sizeof *g->inputs)) return -1;
  g->values[v].slot = g->n_inputs;
  g->inputs[g->n_inputs++] = v;
  return v;
}

int32_t rlx_graph_add_state(rlx_graph *g, const char *name, rlx_dtype t, const rlx_shape *s, const void *init) {
  int32_t v = new_value(g, RLX_VALUE_STATE, t, s, name); /* static shape: new_value refuses a symbolic one */
  if (v < 0) return -1;
  if (rlx_grow((void **)&g->states, &g->cap_states, g->n_states + 1, sizeof *g->states)) return -1;
  g->values[v].data = init;
  g->values[v].slot = g->n_states;
  g->states[g->n_states++] = v;
  return v;
}

rlx_status rlx_graph_add_state_update(rlx_graph *g, int32_t value) { return rlx_graph_add_output(g, value); }

int32_t rlx_graph_add_weight(rlx_graph *g, const char *key, rlx_dtype t, const rlx_shape *s,
                             const void *data) {
  int32_t v = new_value(g, RLX_VALUE_WEIGHT, t, s, key);
  if (v >= 0) g->values[v].data = data;
  return v;
}

int32_t rlx_graph_add_const_owned(rlx_graph *g, rlx_dtype t, const rlx_shape *s, void *data) {
  if (rlx_grow((void **)&g->owned, &g->cap_owned, g->n_owned + 1, sizeof *g->owned)) {
    rlx_aligned_free(data);
    return -1;
  }
  g->owned[g->n_owned++] = data;
  int32_t v = new_value(g, RLX_VALUE_CONST, t, s, NULL);
  if (v >= 0) g->values[v].data = data;
  return v;
}

int32_t rlx_graph_add_const(rlx_graph *g, rlx_dtype t, const rlx_shape *s, const void *data) {
  size_t n = (size_t)rlx_shape_numel(s) * rlx_dtype_size(t);
  void *copy = rlx_aligned_alloc(n);
  if (!copy) {
    rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory for a %zu-byte constant", n);
    return -1;
  }
  if (n) memcpy(copy, data, n);
  return rlx_graph_add_const_owned(g, t, s, copy);
}

static rlx_status check_arity(rlx_op op, int32_t n_in, int32_t n_out) {
  const rlx_op_info *oi = &rlx_op_table[op];
  if (n_in < oi->min_in || (oi->max_in >= 0 && n_in > oi->max_in))
    return rlx_errorf(RLX_ERR_INTERNAL, "op %s takes %d..%d inputs, got %d", oi->name, oi->min_in,
                      oi->max_in, n_in);
  if (n_out < 1 || n_out > oi->max_out)
    return rlx_errorf(RLX_ERR_INTERNAL, "op %s has at most %d outputs, got %d", oi->name,
                      oi->max_out, n_out);
  return RLX_OK;
}

int32_t rlx_graph_add_node(rlx_graph *g, rlx_op op, const rlx_params *p, const int32_t *in,
                           int32_t n_in, int32_t n_out, const char *label, const char *aten) {
  RLX_ASSERT((unsigned)op < RLX_OP_COUNT);
  const char *lbl = label ? label : "?";
  if (check_arity(op, n_in, n_out)) goto fail;
  for (int32_t i = 0; i < n_in; i++)
    if (in[i] < -1 || in[i] >= g->n_values) {
      rlx_errorf(RLX_ERR_INTERNAL, "input %d refers to unknown value %d", i, in[i]);
      goto fail;
    } else if (in[i] == -1 && i < rlx_op_table[op].min_in) {
      rlx_errorf(RLX_ERR_INTERNAL, "required input %d is absent", i);
      goto fail;
    }
  if (rlx_grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes)) goto fail;
  rlx_node *n = &g->nodes[g->n_nodes];
  memset(n, 0, sizeof *n);
  n->op = op;
  if (p) n->p = *p;
  n->n_in = n_in;
  n->n_out = n_out;
  n->in = rlx_pool_alloc(&g->pool, sizeof(int32_t) * (size_t)(n_in ? n_in : 1));
  n->out = rlx_pool_alloc(&g->pool, sizeof(int32_t) * (size_t)n_out);
  n->label = rlx_pool_strdup(&g->pool, lbl);
  n->aten = aten ? rlx_pool_strdup(&g->pool, aten) : NULL;
  if (!n->in || !n->out || !n->label || (aten && !n->aten)) {
    rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory adding a node");
    goto fail;
  }
  if (n_in) memcpy(n->in, in, sizeof(int32_t) * (size_t)n_in);
  if (!rlx_op_table[op].vt->symbolic)
    for (int32_t k = 0; k < n_in; k++)
      if (in[k] >= 0 && rlx_shape_is_symbolic(&g->values[in[k]].shape)) {
        char buf[256];
        rlx_errorf(RLX_ERR_UNSUPPORTED, "input %d has the symbolic shape %s; rlx runs this op at static shapes "
                   "only (export with that axis static)", k, rlx_graph_shape_str(g, &g->values[in[k]].shape, buf, sizeof buf));
        goto fail;
      }

  rlx_shape shapes[4];
  rlx_dtype dtypes[4];
  RLX_ASSERT(n_out <= 4);
  if (rlx_op_table[op].vt->infer(g, n, shapes, dtypes)) goto fail;
  for (int32_t k = 0; k < n_out; k++)
    if (!rlx_graph_shape_valid(g, &shapes[k])) {
      char buf[256];
      rlx_errorf(RLX_ERR_SHAPE, "output %d would have shape %s: more than 2^48 elements or a negative dim",
                 k, rlx_graph_shape_str(g, &shapes[k], buf, sizeof buf));
      goto fail;
    }

  int32_t idx = g->n_nodes;
  for (int32_t k = 0; k < n_out; k++) {
    char nm[512];
    if (n_out == 1) snprintf(nm, sizeof nm, "%s", lbl);
    else snprintf(nm, sizeof nm, "%s#%d", lbl, k);
    int32_t v = new_value(g, RLX_VALUE_NODE, dtypes[k], &shapes[k], nm);
    if (v < 0) goto fail;
    g->values[v].producer = idx;
    g->values[v].slot = k;
    g->nodes[idx].out[k] = v;
  }
  g->n_nodes++;
  return idx;
fail:
  rlx_error_prefix("rlx %s: ", rlx_op_table[op].name);
  return -1;
}

int32_t rlx_graph_add1(rlx_graph *g, rlx_op op, const rlx_params *p, const int32_t *in,
                       int32_t n_in, const char *label, const char *aten) {
  int32_t n = rlx_graph_add_node(g, op, p, in, n_in, 1, label, aten);
  return n < 0 ? -1 : g->nodes[n].out[0];
}

rlx_status rlx_graph_add_output(rlx_graph *g, int32_t value) {
  RLX_ASSERT(value >= 0 && value < g->n_values);
  rlx_status st = rlx_grow((void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1,
                           sizeof *g->outputs);
  if (st) return st;
  g->outputs[g->n_outputs++] = value;
  return RLX_OK;
}

rlx_tensor_view rlx_value_view(const rlx_value *v) {
  rlx_tensor_view t;
  memset(&t, 0, sizeof t);
  t.data = (void *)v->data;
  t.dtype = v->dtype;
  t.rank = v->shape.rank;
  memcpy(t.dims, v->shape.dims, sizeof t.dims);
  return t;
}

size_t rlx_value_nbytes(const rlx_value *v) {
  RLX_ASSERT(!rlx_shape_is_symbolic(&v->shape)); /* sized per binding (runtime instance) */
  return (size_t)rlx_shape_numel(&v->shape) * rlx_dtype_size(v->dtype);
}

rlx_status rlx_graph_clone(const rlx_graph *src, rlx_graph *dst) {
  rlx_graph_init(dst);
  rlx_status st = RLX_ERR_OUT_OF_MEMORY;
  if (rlx_symtab_clone(&src->syms, &dst->syms)) return RLX_ERR_OUT_OF_MEMORY;
  for (int32_t i = 0; i < src->n_guards; i++)
    if (rlx_graph_add_guard(dst, src->guards[i].lhs, src->guards[i].rel, src->guards[i].rhs, src->guards[i].what))
      goto fail;
  if (rlx_grow((void **)&dst->values, &dst->cap_values, src->n_values, sizeof *dst->values) ||
      rlx_grow((void **)&dst->nodes, &dst->cap_nodes, src->n_nodes, sizeof *dst->nodes) ||
      rlx_grow((void **)&dst->inputs, &dst->cap_inputs, src->n_inputs, sizeof *dst->inputs) ||
      rlx_grow((void **)&dst->outputs, &dst->cap_outputs, src->n_outputs, sizeof *dst->outputs) ||
      rlx_grow((void **)&dst->states, &dst->cap_states, src->n_states, sizeof *dst->states))
    goto fail;
  for (int32_t i = 0; i < src->n_values; i++) {
    rlx_value v = src->values[i];
    if (v.name && !(v.name = rlx_pool_strdup(&dst->pool, v.name))) goto oom;
    dst->values[i] = v;
    if (v.kind == RLX_VALUE_CONST) {
      size_t n = rlx_value_nbytes(&v);
      void *copy = rlx_aligned_alloc(n);
      if (!copy) goto oom;
      if (n) memcpy(copy, v.data, n);
      if (rlx_grow((void **)&dst->owned, &dst->cap_owned, dst->n_owned + 1, sizeof *dst->owned)) {
        rlx_aligned_free(copy);
        goto fail;
      }
      dst->owned[dst->n_owned++] = copy;
      dst->values[i].data = copy;
    }
  }
  dst->n_values = src->n_values;
  for (int32_t i = 0; i < src->n_nodes; i++) {
    rlx_node n = src->nodes[i];
    n.in = rlx_pool_alloc(&dst->pool, sizeof(int32_t) * (size_t)(n.n_in ? n.n_in : 1));
    n.out = rlx_pool_alloc(&dst->pool, sizeof(int32_t) * (size_t)n.n_out);
    n.label = rlx_pool_strdup(&dst->pool, src->nodes[i].label);
    if (!n.in || !n.out || !n.label) goto oom;
    if (src->nodes[i].aten && !(n.aten = rlx_pool_strdup(&dst->pool, src->nodes[i].aten)))
      goto oom;
    if (src->nodes[i].fused && !(n.fused = rlx_pool_strdup(&dst->pool, src->nodes[i].fused)))
      goto oom;
    memcpy(n.in, src->nodes[i].in, sizeof(int32_t) * (size_t)n.n_in);
    memcpy(n.out, src->nodes[i].out, sizeof(int32_t) * (size_t)n.n_out);
    if (n.op == RLX_OP_FUSED && n.p.fused.steps) { /* the program lives in the source's pool */
      size_t bytes = sizeof(rlx_fused_step) * (size_t)n.p.fused.n_steps;
      rlx_fused_step *steps = rlx_pool_alloc(&dst->pool, bytes ? bytes : 1);
      if (!steps) goto oom;
      memcpy(steps, n.p.fused.steps, bytes);
      for (int32_t s = 0; s < n.p.fused.n_steps; s++)
        if (steps[s].label && !(steps[s].label = rlx_pool_strdup(&dst->pool, steps[s].label))) goto oom;
      n.p.fused.steps = steps;
    }
    dst->nodes[i] = n;
  }
  dst->n_nodes = src->n_nodes;
  if (src->n_inputs) /* a graph of factories has none (and a NULL array: no memcpy from NULL) */
    memcpy(dst->inputs, src->inputs, sizeof(int32_t) * (size_t)src->n_inputs);
  dst->n_inputs = src->n_inputs;
  if (src->n_outputs) memcpy(dst->outputs, src->outputs, sizeof(int32_t) * (size_t)src->n_outputs);
  dst->n_outputs = src->n_outputs;
  if (src->n_states) memcpy(dst->states, src->states, sizeof(int32_t) * (size_t)src->n_states);
  dst->n_states = src->n_states;
  dst->prog = src->prog;
  if (src->n_fx_values) {
    if (!(dst->fx_values = rlx_malloc(sizeof(int32_t) * (size_t)src->n_fx_values))) goto oom;
    memcpy(dst->fx_values, src->fx_values, sizeof(int32_t) * (size_t)src->n_fx_values);
    dst->n_fx_values = src->n_fx_values;
  }
  return RLX_OK;
oom:
  rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory copying the graph");
fail:
  rlx_graph_free(dst);
  return st;
}

/* ---- verifier ---- */

static rlx_status node_fail(const rlx_graph *g, int32_t i, const char *stage, const char *what) {
  const rlx_node *n = &g->nodes[i];
  return rlx_errorf(RLX_ERR_INTERNAL, "IR verifier (after %s): node %d '%s' (%s): %s", stage, i,
                    n->label, (unsigned)n->op < RLX_OP_COUNT ? rlx_op_table[n->op].name : "?", what);
}

rlx_status rlx_graph_verify(const rlx_graph *g, const char *stage) {
  char msg[512], a[96], b[96];
  for (int32_t i = 0; i < g->n_values; i++) {
    const rlx_value *v = &g->values[i];
    if (!rlx_dtype_valid(v->dtype) || !rlx_graph_shape_valid(g, &v->shape))
      return rlx_errorf(RLX_ERR_INTERNAL, "IR verifier (after %s): value %d has a bad type (rank, "
                        "a negative dim or more than 2^48 elements)", stage, i);
    if ((v->kind == RLX_VALUE_WEIGHT || v->kind == RLX_VALUE_CONST) && !v->data &&
        rlx_value_nbytes(v))
      return rlx_errorf(RLX_ERR_INTERNAL, "IR verifier (after %s): value %d has no data", stage, i);
  }
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const rlx_node *n = &g->nodes[i];
    if ((unsigned)n->op >= RLX_OP_COUNT) return node_fail(g, i, stage, "invalid op");
    if (check_arity(n->op, n->n_in, n->n_out)) { /* copy: rlx_errorf must not read its own buffer */
      snprintf(msg, sizeof msg, "%s", rlx_last_error());
      return node_fail(g, i, stage, msg);
    }
    for (int32_t k = 0; k < n->n_in; k++) {
      int32_t v = n->in[k];
      if (v == -1 && k < rlx_op_table[n->op].min_in) {
        snprintf(msg, sizeof msg, "required input %d is absent", k);
        return node_fail(g, i, stage, msg);
      }
      if (v == -1) continue; /* an absent optional input */
      if (v < -1 || v >= g->n_values) return node_fail(g, i, stage, "input id out of range");
      const rlx_value *iv = &g->values[v];
      if (iv->kind == RLX_VALUE_NODE && iv->producer >= i) {
        snprintf(msg, sizeof msg, "input %d ('%s') is defined by node %d, not before it (cycle or "
                 "order broken)", k, iv->name ? iv->name : "?", iv->producer);
        return node_fail(g, i, stage, msg);
      }
    }
    for (int32_t k = 0; k < n->n_out; k++) {
      int32_t v = n->out[k];
      if (v < 0 || v >= g->n_values) return node_fail(g, i, stage, "output id out of range");
      const rlx_value *ov = &g->values[v];
      if (ov->kind != RLX_VALUE_NODE || ov->producer != i || ov->slot != k)
        return node_fail(g, i, stage, "output value does not point back at its node (SSA broken)");
    }
    rlx_shape shapes[4];
    rlx_dtype dtypes[4];
    if (rlx_op_table[n->op].vt->infer(g, n, shapes, dtypes)) {
      snprintf(msg, sizeof msg, "infer fails: %s", rlx_last_error());
      return node_fail(g, i, stage, msg);
    }
    for (int32_t k = 0; k < n->n_out; k++) {
      const rlx_value *ov = &g->values[n->out[k]];
      if (!rlx_shape_eq(&ov->shape, &shapes[k]) || ov->dtype != dtypes[k]) {
        snprintf(msg, sizeof msg, "output %d is %s %s but its op infers %s %s", k,
                 rlx_dtype_name(ov->dtype), rlx_shape_str(&ov->shape, a, sizeof a),
                 rlx_dtype_name(dtypes[k]), rlx_shape_str(&shapes[k], b, sizeof b));
        return node_fail(g, i, stage, msg);
      }
    }
  }
  for (int32_t i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] < 0 || g->outputs[i] >= g->n_values)
      return rlx_errorf(RLX_ERR_INTERNAL, "IR verifier (after %s): graph output %d is invalid",
                        stage, i);
  if (g->n_states < 0 || g->n_states > g->n_outputs)
    return rlx_errorf(RLX_ERR_INTERNAL, "IR verifier (after %s): %d states but %d outputs", stage, g->n_states,
                      g->n_outputs);
  for (int32_t k = 0; k < g->n_states; k++) {
    int32_t sv = g->states[k], uv = g->outputs[rlx_graph_user_outputs(g) + k];
    if (sv < 0 || sv >= g->n_values || g->values[sv].kind != RLX_VALUE_STATE)
      return rlx_errorf(RLX_ERR_INTERNAL, "IR verifier (after %s): state %d is not a STATE value", stage, k);
    const rlx_value *s = &g->values[sv], *u = &g->values[uv];
    if (u->dtype != s->dtype || !rlx_shape_eq(&u->shape, &s->shape))
      return rlx_errorf(RLX_ERR_INTERNAL, "IR verifier (after %s): state '%s' is %s %s but its update is %s %s",
                        stage, s->name, rlx_dtype_name(s->dtype), rlx_shape_str(&s->shape, a, sizeof a),
                        rlx_dtype_name(u->dtype), rlx_graph_shape_str(g, &u->shape, b, sizeof b));
  }
  return RLX_OK;
}

void rlx_node_params_str(const rlx_graph *g, const rlx_node *n, char *buf, size_t cap) {
  extern _Thread_local const rlx_symtab *rlx_print_syms;
  buf[0] = '\0';
  const rlx_op_vtable *vt = rlx_op_table[n->op].vt;
  rlx_print_syms = &g->syms;
  if (vt->print) vt->print(n, buf, cap);
  rlx_print_syms = NULL;
}
