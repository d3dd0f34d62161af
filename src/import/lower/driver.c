/*
 * driver.c — the lowering driver, rlx_lower_graph: the coverage check (every
 * unsupported op in one message), inputs, weights and states, each node
 * through its handler (the registry, the scalar nodes, or complex.c), the
 * outputs and state updates, and the program info (FX node summaries) the
 * graph keeps. The helpers the handlers share are lower.c's.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "import/lower/lower.h"

/* Non-aten scalar ops the exporter writes for SymInt arithmetic. */
static bool is_sym_op(const char *op) { return !strncmp(op, "sym_", 4); }

/* Whether node n reads or makes anything symbolic: then only a handler
 * marked RLX_ATEN_DYN may lower it. */
static bool arg_symbolic(rlx_lower *lw, const rlx_arg *a, int depth) {
  if (!a || depth > 16) return false;
  if (a->kind == RLX_ARG_REF) {
    int32_t v = rlx_strmap_get(&lw->vals, a->u.s);
    return v >= 0 && lw_symbolic(lw, v);
  }
  if (a->kind == RLX_ARG_SYM) {
    int32_t i = rlx_strmap_get(&lw->scalar_ix, a->u.s);
    return i >= 0 && lw->sinfo[i].symbolic;
  }
  if (a->kind == RLX_ARG_LIST)
    for (int32_t k = 0; k < a->u.list.n; k++)
      if (arg_symbolic(lw, &a->u.list.items[k], depth + 1)) return true;
  return false;
}

static bool node_symbolic(rlx_lower *lw, const rlx_aten_node *n) {
  for (int32_t i = 0; i < n->n_args; i++)
    if (arg_symbolic(lw, &n->args[i], 0)) return true;
  for (int32_t i = 0; i < n->n_kwargs; i++)
    if (arg_symbolic(lw, &n->kw_vals[i], 0)) return true;
  for (int32_t k = 0; k < n->n_outs; k++)
    if (n->outs[k].present && rlx_shape_is_symbolic(&n->outs[k].shape)) return true;
  return false;
}

/* Collects every node whose op has no handler into one message. */
static rlx_status coverage_check(const rlx_torch_ir *ir) {
  int missing = 0;
  for (int32_t i = 0; i < ir->n_nodes; i++) {
    const char *op = ir->nodes[i].op;
    if (!strcmp(op, "_getitem") || is_sym_op(op) || rlx_lower_find(op)) continue;
    bool seen = false;
    for (int32_t j = 0; j < i && !seen; j++) seen = !strcmp(ir->nodes[j].op, op);
    if (!seen) missing++;
  }
  if (!missing) return RLX_OK;
  char msg[4096];
  size_t len = 0;
  len += (size_t)snprintf(msg, sizeof msg, "aten->rlx registry does not yet support %d op(s): ", missing);
  int listed = 0;
  for (int32_t i = 0; i < ir->n_nodes && len < sizeof msg - 64; i++) {
    const char *op = ir->nodes[i].op;
    if (!strcmp(op, "_getitem") || is_sym_op(op) || rlx_lower_find(op)) continue;
    bool seen = false;
    for (int32_t j = 0; j < i && !seen; j++) seen = !strcmp(ir->nodes[j].op, op);
    if (seen) continue;
    len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s (nodes: ", listed++ ? ", " : "", op);
    int shown = 0;
    for (int32_t j = i; j < ir->n_nodes && len < sizeof msg - 64; j++) {
      if (strcmp(ir->nodes[j].op, op)) continue;
      if (shown == 4) {
        len += (size_t)snprintf(msg + len, sizeof msg - len, ", ...");
        break;
      }
      len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s", shown++ ? ", " : "", ir->nodes[j].id);
    }
    len += (size_t)snprintf(msg + len, sizeof msg - len, ")");
  }
  return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s", msg);
}

static rlx_status add_inputs_weights(rlx_lower *lw, const rlx_st_file *wf) {
  const rlx_torch_ir *ir = lw->ir;
  for (int32_t i = 0; i < ir->n_inputs; i++) {
    const rlx_ir_input *in = &ir->inputs[i];
    if (rlx_strmap_get(&lw->vals, in->id) >= 0)
      return rlx_errorf(RLX_ERR_FORMAT, "input '%s' is declared twice", in->id);
    int32_t v = rlx_graph_add_input(lw->g, in->id, in->dtype, &in->shape);
    if (v < 0 || rlx_strmap_put(&lw->vals, in->id, v)) return RLX_ERR_OUT_OF_MEMORY;
  }
  for (int32_t i = 0; i < ir->n_weights; i++) {
    const rlx_ir_weight *w = &ir->weights[i];
    const rlx_st_tensor *t = rlx_st_find(wf, w->key);
    char a[128], b[128];
    if (!t)
      return rlx_errorf(RLX_ERR_NOT_FOUND, "weight '%s' (placeholder %s) is missing from %s", w->key,
                        w->id, wf->path);
    rlx_shape want = w->shape; /* a complex weight is stored as its real pairs */
    if (w->complex && lw_pairs_shape(&w->shape, &want)) {
      rlx_error_prefix("weight '%s': ", w->key);
      return RLX_ERR_UNSUPPORTED;
    }
    if (t->dtype != w->dtype || !rlx_shape_eq(&t->shape, &want))
      return rlx_errorf(RLX_ERR_SHAPE, "weight '%s': %s holds %s %s but torch-ir.json declares %s %s%s",
                        w->key, wf->path, rlx_dtype_name(t->dtype), rlx_shape_str(&t->shape, a, sizeof a),
                        rlx_dtype_name(w->dtype), rlx_shape_str(&want, b, sizeof b),
                        w->complex ? " (the real pairs of a complex weight)" : "");
    if (w->complex && rlx_strmap_put(&lw->cplx, w->id, 1)) return RLX_ERR_OUT_OF_MEMORY;
    if (rlx_strmap_get(&lw->vals, w->id) >= 0)
      return rlx_errorf(RLX_ERR_FORMAT, "weight placeholder '%s' is declared twice", w->id);
    int32_t v;
    if ((uintptr_t)t->data % rlx_dtype_size(t->dtype) == 0) {
      v = rlx_graph_add_weight(lw->g, w->key, t->dtype, &t->shape, t->data);
    } else { /* misaligned in the file: use an aligned copy */
      v = rlx_graph_add_const(lw->g, t->dtype, &t->shape, t->data);
      if (v >= 0) lw->g->values[v].name = rlx_pool_strdup(&lw->g->pool, w->key);
    }
    if (v < 0 || rlx_strmap_put(&lw->vals, w->id, v)) return RLX_ERR_OUT_OF_MEMORY;
  }
  for (int32_t i = 0; i < ir->n_states; i++) { /* docs/design.md, "State" */
    const rlx_ir_state *w = &ir->states[i];
    const void *init = NULL;
    if (!w->init_zeros) {
      const rlx_st_tensor *t = rlx_st_find(wf, w->key);
      char a[128], b[128];
      if (!t)
        return rlx_errorf(RLX_ERR_NOT_FOUND, "state '%s' (placeholder %s): its initial value is missing from %s",
                          w->key, w->id, wf->path);
      if (t->dtype != w->dtype || !rlx_shape_eq(&t->shape, &w->shape))
        return rlx_errorf(RLX_ERR_SHAPE, "state '%s': %s holds %s %s but torch-ir.json declares %s %s", w->key,
                          wf->path, rlx_dtype_name(t->dtype), rlx_shape_str(&t->shape, a, sizeof a),
                          rlx_dtype_name(w->dtype), rlx_shape_str(&w->shape, b, sizeof b));
      init = t->data; /* copied into each session's state, so alignment does not matter */
    }
    if (rlx_strmap_get(&lw->vals, w->id) >= 0)
      return rlx_errorf(RLX_ERR_FORMAT, "state placeholder '%s' is declared twice", w->id);
    int32_t v = rlx_graph_add_state(lw->g, w->key, w->dtype, &w->shape, init);
    if (v < 0) return rlx_last_status();
    if (rlx_strmap_put(&lw->vals, w->id, v)) return RLX_ERR_OUT_OF_MEMORY;
  }
  return RLX_OK;
}

static rlx_status lower_getitem(rlx_lower *lw, const rlx_aten_node *n) {
  if (n->n_args != 2 || n->args[0].kind != RLX_ARG_REF || n->args[1].kind != RLX_ARG_INT)
    return lw_fail(RLX_ERR_FORMAT, "_getitem needs (node, index)");
  const char *parent = n->args[0].u.s;
  int64_t k = n->args[1].u.i;
  int32_t m = rlx_strmap_get(&lw->multi, parent);
  if (m < 0) return lw_fail(RLX_ERR_FORMAT, "_getitem of '%s', which has no multiple outputs", parent);
  if (k < 0 || k >= lw->n_outs[m])
    return lw_fail(RLX_ERR_FORMAT, "_getitem index %lld out of range for '%s' (%d outputs)",
                   (long long)k, parent, lw->n_outs[m]);
  int32_t v = lw->outs[m][k];
  if (v < 0) { /* fine unless something uses it (lw_ref reports that) */
    if (m > INT32_MAX >> 8) return lw_fail(RLX_ERR_UNSUPPORTED, "more than 2^23 multi-output nodes");
    return rlx_strmap_put(&lw->missing, n->id, m << 8 | (int32_t)(k & 0xff));
  }
  return lw_bind(lw, n, v);
}

static rlx_status mark_used_outputs(rlx_lower *lw) {
  const rlx_torch_ir *ir = lw->ir;
  for (int32_t i = 0; i < ir->n_nodes; i++) {
    const rlx_aten_node *n = &ir->nodes[i];
    if (strcmp(n->op, "_getitem") || n->n_args != 2 || n->args[0].kind != RLX_ARG_REF ||
        n->args[1].kind != RLX_ARG_INT || n->args[1].u.i < 0 || n->args[1].u.i >= 31)
      continue;
    int32_t mask = rlx_strmap_get(&lw->used, n->args[0].u.s);
    if (mask < 0) mask = 0;
    mask |= (int32_t)1 << n->args[1].u.i;
    rlx_status st = rlx_strmap_put(&lw->used, n->args[0].u.s, mask);
    if (st) return st;
  }
  return RLX_OK;
}

static rlx_status add_outputs(rlx_lower *lw) {
  const rlx_torch_ir *ir = lw->ir;
  for (int32_t i = 0; i < ir->n_outputs; i++) {
    const rlx_ir_output *o = &ir->outputs[i];
    int32_t v = -1; /* gcc cannot see that rlx_errorf never returns RLX_OK */
    if (o->is_const) {
      const rlx_arg *a = &o->value;
      rlx_dtype t = a->kind == RLX_ARG_FLOAT ? RLX_DTYPE_F64
                    : a->kind == RLX_ARG_BOOL ? RLX_DTYPE_BOOL : RLX_DTYPE_I64;
      if (a->kind != RLX_ARG_FLOAT && a->kind != RLX_ARG_BOOL && a->kind != RLX_ARG_INT)
        return rlx_errorf(RLX_ERR_UNSUPPORTED, "output %d: constant outputs must be numbers", i);
      v = lw_scalar_arg(lw, a, t, "the constant");
      if (v < 0) return rlx_last_status();
    } else {
      rlx_status st = lw_ref(lw, o->ref, &v);
      if (st) {
        rlx_error_prefix("output %d: ", i);
        return st;
      }
      if (lw_ref_is_complex(lw, o->ref) || (o->type.present && o->type.complex))
        return rlx_errorf(RLX_ERR_UNSUPPORTED, "graph output %d ('%s') is complex: rlx programs return real "
                          "tensors; return torch.view_as_real of it", i, o->ref);
      if ((st = lw_check_type(lw, 0, lw_val(lw, v), o->type.present ? &o->type : NULL))) {
        rlx_error_prefix("graph output %d ('%s'): ", i, o->ref);
        return st;
      }
    }
    rlx_status st = rlx_graph_add_output(lw->g, v);
    if (st) return st;
  }
  for (int32_t i = 0; i < ir->n_states; i++) {
    const rlx_ir_state *w = &ir->states[i];
    int32_t v = -1;
    rlx_status st = lw_ref(lw, w->update, &v);
    if (st) {
      rlx_error_prefix("state '%s': its update: ", w->key);
      return st;
    }
    const rlx_value *uv = lw_val(lw, v);
    if (uv->dtype != w->dtype || !rlx_shape_eq(&uv->shape, &w->shape)) {
      char a[128], b[128];
      return rlx_errorf(RLX_ERR_SHAPE, "state '%s' is %s%s but its update '%s' is %s%s", w->key,
                        rlx_dtype_name(w->dtype), rlx_shape_str(&w->shape, a, sizeof a), w->update,
                        rlx_dtype_name(uv->dtype), rlx_graph_shape_str(lw->g, &uv->shape, b, sizeof b));
    }
    if ((st = rlx_graph_add_state_update(lw->g, v))) return st;
  }
  return RLX_OK;
}

/* The recorded type of a value named `name` (an FX node's, an input's or a
 * weight's), as "f32[2, 3]" or "(f32[..], i64[..])", appended to buf. */
static void append_type(const rlx_torch_ir *ir, const rlx_strmap *ix, const char *name, char *buf, size_t cap) {
  size_t len = strlen(buf);
  char shp[160];
  int32_t j = rlx_strmap_get(ix, name);
  if (j >= 0) {
    const rlx_aten_node *p = &ir->nodes[j];
    if (p->out_kind == RLX_OUT_TENSOR && p->outs[0].present) {
      snprintf(buf + len, cap - len, " %s%s", rlx_dtype_name(p->outs[0].dtype),
               rlx_shape_str(&p->outs[0].example, shp, sizeof shp));
    } else if (p->out_kind == RLX_OUT_LIST) {
      snprintf(buf + len, cap - len, " (");
      for (int32_t q = 0; q < p->n_outs && strlen(buf) + 100 < cap; q++) {
        len = strlen(buf);
        if (p->outs[q].present)
          snprintf(buf + len, cap - len, "%s%s%s", q ? ", " : "", rlx_dtype_name(p->outs[q].dtype),
                   rlx_shape_str(&p->outs[q].example, shp, sizeof shp));
        else
          snprintf(buf + len, cap - len, "%s-", q ? ", " : "");
      }
      len = strlen(buf);
      snprintf(buf + len, cap - len, ")");
    }
    return;
  }
  for (int32_t k = 0; k < ir->n_inputs; k++)
    if (!strcmp(ir->inputs[k].id, name))
      snprintf(buf + len, cap - len, " %s%s", rlx_dtype_name(ir->inputs[k].dtype),
               rlx_shape_str(&ir->inputs[k].example, shp, sizeof shp));
  for (int32_t k = 0; k < ir->n_weights; k++)
    if (!strcmp(ir->weights[k].id, name))
      snprintf(buf + len, cap - len, " %s%s", rlx_dtype_name(ir->weights[k].dtype),
               rlx_shape_str(&ir->weights[k].shape, shp, sizeof shp));
}

static void collect_refs(const rlx_arg *a, const rlx_strmap *ix, int32_t *in, int32_t *n, int32_t cap, int depth) {
  if (!a || depth > 16) return;
  if (a->kind == RLX_ARG_REF) {
    int32_t j = rlx_strmap_get(ix, a->u.s);
    if (j >= 0 && *n < cap) in[(*n)++] = j;
  } else if (a->kind == RLX_ARG_LIST) {
    for (int32_t k = 0; k < a->u.list.n; k++) collect_refs(&a->u.list.items[k], ix, in, n, cap, depth + 1);
  }
}

/* The program's header, output names and FX node summaries, in g's pool. */
static rlx_status program_info(const rlx_torch_ir *ir, rlx_graph *g) {
  rlx_pool *pl = &g->pool;
  rlx_program_info *pi = rlx_pool_alloc(pl, sizeof *pi);
  if (!pi) return RLX_ERR_OUT_OF_MEMORY;
  pi->model_name = rlx_pool_strdup(pl, ir->model_name ? ir->model_name : "model");
  pi->producer = rlx_pool_strdup(pl, ir->producer ? ir->producer : "");
  pi->decomposition = rlx_pool_strdup(pl, ir->decomposition ? ir->decomposition : "");
  pi->n_aten_nodes = ir->n_nodes, pi->n_weights = ir->n_weights;
  pi->output_names = rlx_pool_alloc(pl, sizeof(char *) * (size_t)(g->n_outputs + 1));
  pi->output_const = rlx_pool_alloc(pl, sizeof(bool) * (size_t)(g->n_outputs + 1));
  pi->fx = rlx_pool_alloc(pl, sizeof(rlx_fx_node) * (size_t)(ir->n_nodes + 1));
  if (!pi->model_name || !pi->producer || !pi->decomposition || !pi->output_names || !pi->output_const || !pi->fx)
    return RLX_ERR_OUT_OF_MEMORY;
  for (int32_t i = 0; i < g->n_outputs; i++) {
    bool state = i >= ir->n_outputs; /* the state updates follow the user outputs */
    pi->output_const[i] = !state && ir->outputs[i].is_const;
    const char *nm = state ? ir->states[i - ir->n_outputs].update : pi->output_const[i] ? "const" : ir->outputs[i].ref;
    if (!(pi->output_names[i] = rlx_pool_strdup(pl, nm))) return RLX_ERR_OUT_OF_MEMORY;
  }
  rlx_strmap ix = {0};
  rlx_status st = RLX_OK;
  for (int32_t i = 0; !st && i < ir->n_nodes; i++) st = rlx_strmap_put(&ix, ir->nodes[i].id, i);
  for (int32_t i = 0; !st && i < ir->n_nodes; i++) {
    const rlx_aten_node *n = &ir->nodes[i];
    rlx_fx_node *f = &pi->fx[i];
    int32_t refs[256], nr = 0;
    for (int32_t k = 0; k < n->n_args; k++) collect_refs(&n->args[k], &ix, refs, &nr, 256, 0);
    for (int32_t k = 0; k < n->n_kwargs; k++) collect_refs(&n->kw_vals[k], &ix, refs, &nr, 256, 0);
    char desc[1024] = "";
    for (int32_t k = 0; k < n->n_args; k++) {
      if (n->args[k].kind != RLX_ARG_REF || strlen(desc) + 200 > sizeof desc) continue;
      size_t len = strlen(desc);
      snprintf(desc + len, sizeof desc - len, "%s%s", len ? ", " : "", n->args[k].u.s);
      append_type(ir, &ix, n->args[k].u.s, desc, sizeof desc);
    }
    char od[512] = "";
    append_type(ir, &ix, n->id, od, sizeof od);
    f->out_desc = rlx_pool_strdup(pl, od[0] == ' ' ? od + 1 : od);
    f->id = rlx_pool_strdup(pl, n->id);
    f->op = rlx_pool_strdup(pl, n->op);
    f->inputs_desc = rlx_pool_strdup(pl, desc);
    f->in = rlx_pool_alloc(pl, sizeof(int32_t) * (size_t)(nr + 1));
    if (!f->id || !f->op || !f->inputs_desc || !f->out_desc || !f->in) {
      st = RLX_ERR_OUT_OF_MEMORY;
      break;
    }
    memcpy(f->in, refs, sizeof(int32_t) * (size_t)nr);
    f->n_in = nr;
    f->getitem_of = -1;
    if (!strcmp(n->op, "_getitem") && n->n_args >= 2 && n->args[0].kind == RLX_ARG_REF) {
      f->getitem_of = rlx_strmap_get(&ix, n->args[0].u.s);
      f->getitem_index = n->args[1].kind == RLX_ARG_INT ? n->args[1].u.i : -1;
    }
  }
  rlx_strmap_free(&ix);
  if (st) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  g->prog = pi;
  return RLX_OK;
}

rlx_status rlx_lower_graph(const rlx_torch_ir *ir, const rlx_st_file *weights, rlx_graph *g) {
  rlx_graph_init(g);
  rlx_lower lw = {.g = g, .ir = ir};
  lw_note = &lw;
  /* the recorded shapes' dims are expressions of ir->syms: the graph's table
   * starts as a copy, so they mean the same in the graph */
  rlx_status st = rlx_symtab_clone(&ir->syms, &g->syms);
  for (int32_t i = 0; !st && i < ir->n_guards; i++)
    st = rlx_graph_add_guard(g, ir->guards[i].lhs, (rlx_rel)ir->guards[i].rel, ir->guards[i].rhs, ir->guards[i].source);
  if (!st) st = coverage_check(ir);
  if (!st) st = mark_used_outputs(&lw);
  if (!st) st = add_inputs_weights(&lw, weights);
  for (int32_t i = 0; !st && i < ir->n_nodes; i++) {
    const rlx_aten_node *n = &ir->nodes[i];
    lw.cur = n;
    if (rlx_strmap_get(&lw.vals, n->id) >= 0 || rlx_strmap_get(&lw.multi, n->id) >= 0 ||
        rlx_strmap_get(&lw.missing, n->id) >= 0 || rlx_strmap_get(&lw.scalar_ix, n->id) >= 0) {
      st = rlx_errorf(RLX_ERR_FORMAT, "node id '%s' is used twice", n->id);
      break;
    }
    const rlx_lower_entry *e = is_sym_op(n->op) || !strcmp(n->op, "_getitem") ? NULL : rlx_lower_find_entry(n->op);
    if (!strcmp(n->op, "_getitem")) st = lower_getitem(&lw, n);
    else if (is_sym_op(n->op)) st = rlx_lower_scalar(&lw, n);
    else if (n->out_kind == RLX_OUT_SCALAR && e->fn == rlx_lower_scalar) /* sym_size of a complex tensor too */
      st = rlx_lower_scalar(&lw, n);
    else if (lw_node_is_complex(&lw, n) && !lw_complex_dynamic(n) && node_symbolic(&lw, n))
      st = rlx_errorf(RLX_ERR_UNSUPPORTED, "rlx lowers this op on complex values at static shapes only, and this "
                      "node has a symbolic shape or size; export with those axes static");
    else if (lw_node_is_complex(&lw, n)) st = rlx_lower_complex(&lw, n);
    else if (!e->dynamic && node_symbolic(&lw, n))
      st = rlx_errorf(RLX_ERR_UNSUPPORTED, "rlx lowers this op at static shapes only, and this node has a symbolic "
                      "shape or size; export with those axes static, or tell the rlx developers which op it is");
    else st = e->fn(&lw, n);
    if (st) rlx_error_prefix("node '%s' (%s): ", n->id, n->op);
  }
  if (!st) st = add_outputs(&lw);
  if (!st && ir->n_nodes) { /* keep FX name -> value for the localizer */
    g->fx_values = rlx_malloc(sizeof(int32_t) * (size_t)ir->n_nodes);
    if (!g->fx_values) st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
    for (int32_t i = 0; !st && i < ir->n_nodes; i++) g->fx_values[i] = rlx_strmap_get(&lw.vals, ir->nodes[i].id);
    if (!st) g->n_fx_values = ir->n_nodes;
  }
  if (!st) st = program_info(ir, g);
  rlx_strmap_free(&lw.vals);
  rlx_strmap_free(&lw.multi);
  rlx_strmap_free(&lw.used);
  rlx_strmap_free(&lw.scalar_ix);
  rlx_strmap_free(&lw.missing);
  rlx_strmap_free(&lw.cplx);
  rlx_free(lw.scalars);
  rlx_free(lw.sinfo);
  lw_note = NULL;
  rlx_free(lw.outs);
  rlx_free(lw.n_outs);
  if (st) rlx_graph_free(g);
  return st;
}
