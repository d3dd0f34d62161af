/*
 * instance.c — the reshape stage (docs/design.md, "Shapes"): from the
 * shapes of the bound inputs to the symbols' values, and from those to a
 * concrete instance of the compiled graph: shapes, params, kernels,
 * scratch, memory plan and views. Nothing here allocates after
 * rlx_instance_alloc / rlx_bind_ws_create: a session builds instances for
 * new bindings while running.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"

/* Node i's kernel argument views from the instance's values. */
static void set_views(rlx_instance *inst, int32_t i) {
  const rlx_node *n = &inst->g.nodes[i];
  int32_t nin = RLX_MAX(n->n_in, rlx_op_table[n->op].max_in), at = inst->view_at[i];
  for (int32_t k = 0; k < nin; k++) {
    memset(&inst->views[at + k], 0, sizeof inst->views[at + k]);
    if (k < n->n_in && n->in[k] >= 0) inst->views[at + k] = rlx_value_view(&inst->g.values[n->in[k]]);
  }
  for (int32_t k = 0; k < n->n_out; k++) inst->views[at + nin + k] = rlx_value_view(&inst->g.values[n->out[k]]);
}

rlx_status rlx_instance_alloc(const rlx_compiled *c, rlx_instance *inst) {
  const rlx_graph *g = &c->graph;
  memset(inst, 0, sizeof *inst);
  int64_t nviews = 0;
  for (int32_t i = 0; i < g->n_nodes; i++)
    nviews += RLX_MAX(g->nodes[i].n_in, rlx_op_table[g->nodes[i].op].max_in) + g->nodes[i].n_out;
  inst->owned = true;
  inst->syms = rlx_calloc((size_t)g->syms.n_syms + 1, sizeof *inst->syms);
  inst->g.values = rlx_malloc(sizeof(rlx_value) * (size_t)(g->n_values + 1));
  inst->g.nodes = rlx_malloc(sizeof(rlx_node) * (size_t)(g->n_nodes + 1));
  inst->use_ref = rlx_calloc((size_t)g->n_nodes + 1, sizeof *inst->use_ref);
  inst->scratch = rlx_calloc((size_t)g->n_nodes + 1, sizeof *inst->scratch);
  inst->views = rlx_calloc((size_t)nviews + 1, sizeof *inst->views);
  inst->view_at = rlx_calloc((size_t)g->n_nodes + 1, sizeof *inst->view_at);
  rlx_status st = RLX_OK;
  if (!inst->syms || !inst->g.values || !inst->g.nodes || !inst->use_ref || !inst->scratch || !inst->views ||
      !inst->view_at)
    st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory for a binding's plan");
  if (!st) st = rlx_plan_alloc(&inst->plan, g->n_values, g->n_nodes);
  if (st) {
    rlx_instance_free(inst);
    return st;
  }
  memcpy(inst->g.values, g->values, sizeof(rlx_value) * (size_t)g->n_values);
  memcpy(inst->g.nodes, g->nodes, sizeof(rlx_node) * (size_t)g->n_nodes);
  inst->g.n_values = g->n_values, inst->g.n_nodes = g->n_nodes;
  int32_t at = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) { /* static nodes' views hold at every binding */
    inst->view_at[i] = at;
    set_views(inst, i);
    at += RLX_MAX(g->nodes[i].n_in, rlx_op_table[g->nodes[i].op].max_in) + g->nodes[i].n_out;
  }
  return RLX_OK;
}

void rlx_instance_free(rlx_instance *inst) {
  if (!inst || !inst->owned) return;
  rlx_free(inst->syms);
  rlx_free(inst->g.values);
  rlx_free(inst->g.nodes);
  rlx_free(inst->use_ref);
  rlx_free(inst->scratch);
  rlx_free(inst->views);
  rlx_free(inst->view_at);
  rlx_plan_free(&inst->plan);
  memset(inst, 0, sizeof *inst);
}

rlx_status rlx_bind_ws_create(const rlx_compiled *c, rlx_bind_ws *w) {
  const rlx_symtab *t = &c->graph.syms;
  memset(w, 0, sizeof *w);
  w->syms = rlx_calloc((size_t)t->n_syms + 1, sizeof *w->syms);
  w->set = rlx_calloc((size_t)t->n_syms + 1, sizeof *w->set);
  w->atom_vals = rlx_calloc((size_t)t->n_atoms + 1, sizeof *w->atom_vals);
  w->expr_vals = rlx_calloc((size_t)t->n_exprs + 1, sizeof *w->expr_vals);
  rlx_status st = w->syms && w->set && w->atom_vals && w->expr_vals
                      ? rlx_plan_ws_create(c->graph.n_values, c->graph.n_nodes, &w->plan)
                      : rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory for binding shapes");
  if (st) rlx_bind_ws_free(w);
  return st;
}

void rlx_bind_ws_free(rlx_bind_ws *w) {
  rlx_free(w->syms);
  rlx_free(w->set);
  rlx_free(w->atom_vals);
  rlx_free(w->expr_vals);
  rlx_plan_ws_destroy(w->plan);
  memset(w, 0, sizeof *w);
}

/* ---- binding: input shapes -> symbol values ---- */

static const char *input_name(const rlx_graph *g, int32_t i) { return g->values[g->inputs[i]].name; }

/* When dim is a*s + b for one symbol s (a != 0), sets *sym, *a, *b. */
static bool linear_in_one(const rlx_symtab *t, rlx_dim d, int32_t *sym, int64_t *a, int64_t *b) {
  if (!rlx_dim_is_sym(d)) return false;
  const rlx_expr *e = &t->exprs[rlx_dim_expr(d)];
  *a = 0, *b = 0, *sym = -1;
  for (int32_t k = 0; k < e->n; k++) {
    const rlx_term *tm = &t->terms[e->first + k];
    if (tm->deg == 0) {
      *b = tm->coef;
    } else if (tm->deg == 1 && t->atoms[tm->atoms[0]].kind == RLX_ATOM_SYM && *sym < 0) {
      *sym = t->atoms[tm->atoms[0]].sym, *a = tm->coef;
    } else {
      return false;
    }
  }
  return *sym >= 0 && *a != 0;
}

static rlx_status range_error(const rlx_graph *g, int32_t i, int d, int32_t s, int64_t v) {
  const rlx_symbol *y = &g->syms.syms[s];
  return rlx_errorf(RLX_ERR_SHAPE, "input '%s' axis %d: %s = %lld is outside its bounds [%lld, %lld]",
                    input_name(g, i), d, y->name, (long long)v, (long long)y->min, (long long)y->max);
}

rlx_status rlx_resolve_binding(const rlx_compiled *c, const rlx_tensor_view *shapes, rlx_bind_ws *w) {
  const rlx_graph *g = &c->graph;
  const rlx_symtab *t = &g->syms;
  int32_t ns = t->n_syms;
  for (int32_t s = 0; s < ns; s++) w->set[s] = false;
  int32_t from_in[64], from_ax[64]; /* where each of the first 64 symbols was read, for messages */
  /* direct reads: an axis that is one symbol */
  for (int32_t i = 0; i < g->n_inputs; i++) {
    const rlx_shape *ms = &g->values[g->inputs[i]].shape;
    const rlx_tensor_view *v = &shapes[i];
    if (v->rank != ms->rank) {
      char b[256];
      return rlx_errorf(RLX_ERR_SHAPE, "input '%s' has rank %d; the model takes rank %d %s", input_name(g, i),
                        (int)v->rank, ms->rank, rlx_graph_shape_str(g, ms, b, sizeof b));
    }
    for (int d = 0; d < ms->rank; d++) {
      int64_t got = v->dims[d];
      if (got < 0) return rlx_errorf(RLX_ERR_SHAPE, "input '%s' axis %d is %lld", input_name(g, i), d, (long long)got);
      if (!rlx_dim_is_sym(ms->dims[d])) {
        if (got != ms->dims[d])
          return rlx_errorf(RLX_ERR_SHAPE, "input '%s' axis %d is %lld; the model was exported with a static %lld "
                            "there", input_name(g, i), d, (long long)got, (long long)ms->dims[d]);
        continue;
      }
      int32_t s = rlx_dim_symbol(t, ms->dims[d]);
      if (s < 0) continue;
      if (w->set[s] && w->syms[s] != got)
        return rlx_errorf(RLX_ERR_SHAPE, "input '%s' axis %d is %lld, but input '%s' axis %d gave %s = %lld: the "
                          "model needs them equal", input_name(g, i), d, (long long)got,
                          s < 64 ? input_name(g, from_in[s]) : "?", s < 64 ? from_ax[s] : -1, t->syms[s].name,
                          (long long)w->syms[s]);
      if (got < t->syms[s].min || got > t->syms[s].max) return range_error(g, i, d, s, got);
      w->syms[s] = got, w->set[s] = true;
      if (s < 64) from_in[s] = i, from_ax[s] = d;
    }
  }
  /* an axis a*s + b of a symbol not read directly */
  for (int32_t i = 0; i < g->n_inputs; i++) {
    const rlx_shape *ms = &g->values[g->inputs[i]].shape;
    for (int d = 0; d < ms->rank; d++) {
      int32_t s;
      int64_t a, b, got = shapes[i].dims[d];
      if (!linear_in_one(t, ms->dims[d], &s, &a, &b) || w->set[s]) continue;
      int64_t num = got - b;
      char e[128];
      if (num % a || num / a < t->syms[s].min || num / a > t->syms[s].max)
        return rlx_errorf(RLX_ERR_SHAPE, "input '%s' axis %d is %lld, which is not %s for any %s in [%lld, %lld]",
                          input_name(g, i), d, (long long)got, rlx_dim_str(t, ms->dims[d], e, sizeof e),
                          t->syms[s].name, (long long)t->syms[s].min, (long long)t->syms[s].max);
      w->syms[s] = num / a, w->set[s] = true;
      if (s < 64) from_in[s] = i, from_ax[s] = d;
    }
  }
  for (int32_t s = 0; s < ns; s++)
    if (!w->set[s]) /* a symbol no input axis determines: use its hint (torch specializes such sizes) */
      w->syms[s] = t->syms[s].hint;
  rlx_status st = rlx_symtab_eval(t, w->syms, w->atom_vals, w->expr_vals);
  if (st) return st;
  /* every input axis must now be what was bound (derived axes: 2*seq, seq + 1) */
  for (int32_t i = 0; i < g->n_inputs; i++) {
    const rlx_shape *ms = &g->values[g->inputs[i]].shape;
    for (int d = 0; d < ms->rank; d++) {
      int64_t want = rlx_dim_value(ms->dims[d], w->expr_vals);
      if (want != shapes[i].dims[d]) {
        char e[128];
        return rlx_errorf(RLX_ERR_SHAPE, "input '%s' axis %d is %lld; the model needs %s = %lld there",
                          input_name(g, i), d, (long long)shapes[i].dims[d], rlx_dim_str(t, ms->dims[d], e, sizeof e),
                          (long long)want);
      }
    }
  }
  for (int32_t k = 0; k < g->n_guards; k++) {
    const rlx_guard *gd = &g->guards[k];
    int64_t a = rlx_dim_value(gd->lhs, w->expr_vals), b = rlx_dim_value(gd->rhs, w->expr_vals);
    bool ok = gd->rel == RLX_REL_EQ ? a == b : gd->rel == RLX_REL_NE ? a != b : gd->rel == RLX_REL_LT ? a < b
              : gd->rel == RLX_REL_LE ? a <= b : gd->rel == RLX_REL_GT ? a > b : a >= b;
    if (!ok) {
      char l[128], r[128];
      return rlx_errorf(RLX_ERR_SHAPE, "these input shapes break %s %s %s (%lld %s %lld), which the model assumes "
                        "(%s)", rlx_dim_str(t, gd->lhs, l, sizeof l), rlx_rel_name(gd->rel),
                        rlx_dim_str(t, gd->rhs, r, sizeof r), (long long)a, rlx_rel_name(gd->rel), (long long)b,
                        gd->what && *gd->what ? gd->what : "torch.export");
    }
  }
  return RLX_OK;
}

/* ---- instances ---- */

/* " at seq=40, batch=2" into buf, for messages. */
static const char *binding_str(const rlx_symtab *t, const int64_t *syms, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (int32_t s = 0; s < t->n_syms && n + 1 < cap; s++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%s=%lld", s ? ", " : " at ", t->syms[s].name, (long long)syms[s]);
  return buf;
}

/* Concrete values and nodes at w's binding; each node re-inferred. */
static rlx_status concretize(const rlx_compiled *c, const rlx_bind_ws *w, rlx_instance *inst) {
  const rlx_graph *g = &c->graph;
  rlx_graph *ig = &inst->g;
  ig->n_values = g->n_values, ig->n_nodes = g->n_nodes;
  ig->inputs = g->inputs, ig->n_inputs = g->n_inputs;
  ig->outputs = g->outputs, ig->n_outputs = g->n_outputs;
  ig->states = g->states, ig->n_states = g->n_states;
  ig->fx_values = g->fx_values, ig->n_fx_values = g->n_fx_values;
  memcpy(inst->syms, w->syms, sizeof(int64_t) * (size_t)g->syms.n_syms);
  char at[256], a[256], b[256];
  for (int32_t k = 0; k < c->n_sym_values; k++) { /* the rest is the copy rlx_instance_alloc made */
    int32_t v = c->sym_values[k];
    rlx_shape *s = &ig->values[v].shape;
    *s = g->values[v].shape;
    for (int d = 0; d < s->rank; d++) s->dims[d] = rlx_dim_value(s->dims[d], w->expr_vals);
    if (!rlx_shape_valid(s, NULL)) {
      const rlx_value *val = &g->values[v];
      if (val->kind == RLX_VALUE_NODE) {
        const rlx_node *n = &g->nodes[val->producer];
        return rlx_errorf(RLX_ERR_SHAPE, "node '%s' (%s): output %d would be %s%s (a negative size or more than 2^48 "
                          "elements)", n->label, n->aten ? n->aten : rlx_op_table[n->op].name, val->slot,
                          rlx_shape_str(s, a, sizeof a), binding_str(&g->syms, w->syms, at, sizeof at));
      }
      return rlx_errorf(RLX_ERR_SHAPE, "value '%s' would be %s%s", val->name ? val->name : "?",
                        rlx_shape_str(s, a, sizeof a), binding_str(&g->syms, w->syms, at, sizeof at));
    }
  }
  for (int32_t j = 0; j < c->n_sym_nodes; j++) {
    int32_t i = c->sym_nodes[j];
    rlx_node *n = &ig->nodes[i];
    const rlx_op_vtable *vt = rlx_op_table[n->op].vt;
    if (vt->concretize) n->p = g->nodes[i].p, vt->concretize(&n->p, w->expr_vals);
    rlx_shape shapes[4];
    rlx_dtype dtypes[4];
    if (vt->infer(ig, n, shapes, dtypes)) {
      rlx_error_prefix("node '%s' (%s)%s: ", n->label, n->aten ? n->aten : rlx_op_table[n->op].name,
                       binding_str(&g->syms, w->syms, at, sizeof at));
      return rlx_last_status() == RLX_ERR_INTERNAL ? RLX_ERR_SHAPE : rlx_last_status();
    }
    for (int32_t k = 0; k < n->n_out; k++) {
      const rlx_value *ov = &ig->values[n->out[k]];
      if (!rlx_shape_eq(&ov->shape, &shapes[k]) || ov->dtype != dtypes[k])
        return rlx_errorf(RLX_ERR_INTERNAL, "node '%s' (%s)%s: its output %d is %s by its symbolic shape but %s by "
                          "its op (a bug in rlx's shape inference)", n->label, rlx_op_table[n->op].name,
                          binding_str(&g->syms, w->syms, at, sizeof at), k, rlx_shape_str(&ov->shape, a, sizeof a),
                          rlx_shape_str(&shapes[k], b, sizeof b));
    }
  }
  return RLX_OK;
}

/* Scratch and kernel per node, the memory plan and the views. */
static rlx_status finish(const rlx_compiled *c, rlx_bind_ws *w, int threads, size_t arena_cap, rlx_instance *inst) {
  const rlx_graph *ig = &inst->g;
  /* static nodes' kernels and scratch hold at every binding: made at the first */
  int32_t todo = inst->static_done ? c->n_sym_nodes : ig->n_nodes;
  for (int32_t j = 0; j < todo; j++) {
    int32_t i = inst->static_done ? c->sym_nodes[j] : j;
    const rlx_node *n = &ig->nodes[i];
    const rlx_kernel *k = &c->kernels[i];
    const rlx_op_vtable *vt = rlx_op_table[n->op].vt;
    size_t sz = k->fast ? (k->scratch_for ? k->scratch_for(ig, n, threads) : k->scratch) : SIZE_MAX;
    inst->use_ref[i] = sz == SIZE_MAX;
    if (inst->use_ref[i]) sz = vt->scratch ? vt->scratch(ig, n) : 0;
    if (sz > c->max_scratch)
      return rlx_errorf(RLX_ERR_INTERNAL, "node '%s' needs %zu bytes of scratch at this binding, more than the %zu "
                        "its largest binding was sized for", n->label, sz, c->max_scratch);
    inst->scratch[i] = sz;
  }
  inst->static_done = true;
  rlx_status st = rlx_plan_memory_ws(ig, true, inst->scratch, w->plan, &inst->plan);
  if (st) return st;
  if (inst->plan.values_size > arena_cap - c->max_scratch) { /* the bound plan holds every binding */
    memcpy(inst->plan.offset, c->plan.offset, sizeof(int64_t) * (size_t)ig->n_values);
    /* with its aliases: which concats run in place depends on the shapes (memplan.h) */
    memcpy(inst->plan.alias_of, c->plan.alias_of, sizeof(int32_t) * (size_t)ig->n_values);
    memcpy(inst->plan.skip, c->plan.skip, sizeof(bool) * (size_t)ig->n_nodes);
    rlx_plan_alias_offsets(ig, &inst->plan); /* at this binding's sizes, inside the roots' larger storage */
    inst->plan.values_size = c->plan.values_size;
  }
  inst->plan.scratch_offset = inst->plan.values_size;
  size_t need = 0; /* what this binding's kernels use of the scratch region (sized for the largest) */
  for (int32_t i = 0; i < ig->n_nodes; i++) need = RLX_MAX(need, inst->scratch[i]);
  inst->plan.scratch_size = (need + 63) & ~(size_t)63;
  inst->plan.arena_size = inst->plan.values_size + inst->plan.scratch_size;
  for (int32_t j = 0; j < c->n_sym_nodes; j++) set_views(inst, c->sym_nodes[j]); /* the others' are made once */
  return RLX_OK;
}

rlx_status rlx_instance_build(const rlx_compiled *c, rlx_bind_ws *w, int threads, size_t arena_cap,
                              bool with_kernels, rlx_instance *inst) {
  inst->ready = false;
  rlx_status st = concretize(c, w, inst);
  if (!st && with_kernels) st = finish(c, w, threads, arena_cap, inst);
  inst->ready = st == RLX_OK;
  return st;
}
