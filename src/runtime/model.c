/*
 * model.c — rlx_model (load: parse, map, lower, verify) and rlx_compiled
 * (copy, passes, kernel choice, memory plan), and the small public helpers.
 */
#include <stdio.h>
#include <string.h>

#include "import/lower/lower.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

static char *join(const char *dir, const char *file) {
  size_t n = strlen(dir) + strlen(file) + 2;
  char *p = rlx_malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, file);
  return p;
}

static char *dup(const char *s) {
  char *p = rlx_malloc(strlen(s) + 1);
  if (p) strcpy(p, s);
  return p;
}

/* Describes value v (its example dims, and symbolic dims by name and bounds). */
static rlx_status describe(rlx_model *m, const rlx_value *v, const char *name, const int64_t *hints, rlx_io_info *info) {
  rlx_graph *g = &m->graph;
  memset(info, 0, sizeof *info);
  info->name = name;
  info->dtype = v->dtype;
  info->rank = v->shape.rank;
  for (int d = 0; d < v->shape.rank; d++) {
    rlx_dim x = v->shape.dims[d];
    if (!rlx_dim_is_sym(x)) {
      info->dims[d] = info->dim_min[d] = info->dim_max[d] = x;
      continue;
    }
    char buf[256];
    if (!(info->dim_names[d] = rlx_pool_strdup(&g->pool, rlx_dim_str(&g->syms, x, buf, sizeof buf))))
      return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
    rlx_dim_bounds(&g->syms, x, &info->dim_min[d], &info->dim_max[d]);
    info->dim_min[d] = RLX_MAX(info->dim_min[d], 0);
    rlx_status st = rlx_dim_eval(&g->syms, x, hints, &info->dims[d]);
    if (st) return st;
  }
  return RLX_OK;
}

static rlx_status io_infos(rlx_model *m) {
  const rlx_graph *g = &m->graph;
  m->in_info = rlx_calloc((size_t)g->n_inputs + 1, sizeof *m->in_info);
  m->out_info = rlx_calloc((size_t)rlx_graph_user_outputs(g) + 1, sizeof *m->out_info);
  int64_t *h = rlx_symtab_hints(&g->syms);
  rlx_status st = m->in_info && m->out_info && h ? RLX_OK : rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  for (int32_t i = 0; !st && i < g->n_inputs; i++) {
    const rlx_value *v = &g->values[g->inputs[i]];
    st = describe(m, v, v->name, h, &m->in_info[i]);
  }
  for (int32_t i = 0; !st && i < rlx_graph_user_outputs(g); i++) {
    st = describe(m, &g->values[g->outputs[i]], g->prog->output_names[i], h, &m->out_info[i]);
  }
  rlx_free(h);
  return st;
}

rlx_status rlx_model_load_files(const char *ir_path, const char *weights_path,
                                const rlx_load_options *opts, rlx_model **model_out) {
  if (!ir_path || !weights_path || !model_out)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_model_load: NULL argument");
  rlx_load_options o = {.size = sizeof o};
  if (opts) {
    if (opts->size < offsetof(rlx_load_options, verbose) + sizeof(int))
      return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_load_options.size is %zu; set it to "
                        "sizeof(rlx_load_options)", opts->size);
    memcpy(&o, opts, RLX_MIN(opts->size, sizeof o));
  }
  rlx_model *m = rlx_calloc(1, sizeof *m);
  if (!m) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  rlx_status st = RLX_ERR_OUT_OF_MEMORY;
  if (!(m->ir_path = dup(ir_path)) || !(m->weights_path = dup(weights_path))) {
    rlx_errorf(st, "out of memory");
    goto fail;
  }
  if ((st = rlx_torch_ir_load(m->ir_path, &m->ir))) goto fail;
  if ((st = o.copy_weights ? rlx_st_read(m->weights_path, &m->weights) : rlx_st_open(m->weights_path, &m->weights)))
    goto fail;
  if (m->ir.n_outputs == 0) { /* torch.export gives every program an output: nothing here would run */
    st = rlx_errorf(RLX_ERR_FORMAT, "%s: 'outputs' is empty: the program has no output", m->ir_path);
    goto fail;
  }
  if ((st = rlx_lower_graph(&m->ir, &m->weights, &m->graph))) goto fail;
  if ((st = rlx_graph_verify(&m->graph, "import"))) goto fail;
  if ((st = io_infos(m))) goto fail;
  rlx_torch_ir_free(&m->ir); /* the graph holds everything the runtime and the tools need */
  *model_out = m;
  return RLX_OK;
fail:
  rlx_model_destroy(m);
  return st;
}

rlx_status rlx_model_load(const char *dir, const rlx_load_options *opts, rlx_model **model_out) {
  if (!dir || !model_out) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_model_load: NULL argument");
  char *ir = join(dir, "torch-ir.json"), *w = join(dir, "weights.safetensors");
  rlx_model *m = NULL;
  rlx_status st = (ir && w) ? rlx_model_load_files(ir, w, opts, &m)
                            : rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  if (!st && !(m->dir = dup(dir))) {
    rlx_model_destroy(m);
    st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  }
  if (!st) *model_out = m; /* written only on success */
  rlx_free(ir);
  rlx_free(w);
  return st;
}

void rlx_model_destroy(rlx_model *m) {
  if (!m) return;
  rlx_free(m->in_info);
  rlx_free(m->out_info);
  rlx_graph_free(&m->graph);
  rlx_st_close(&m->weights);
  rlx_torch_ir_free(&m->ir);
  rlx_free(m->dir);
  rlx_free(m->ir_path);
  rlx_free(m->weights_path);
  rlx_free(m);
}

int rlx_model_input_count(const rlx_model *m) { return m ? m->graph.n_inputs : 0; }
int rlx_model_output_count(const rlx_model *m) { return m ? rlx_graph_user_outputs(&m->graph) : 0; }

rlx_status rlx_model_input_info(const rlx_model *m, int i, rlx_io_info *info) {
  if (!m || !info || !m->in_info || i < 0 || i >= m->graph.n_inputs)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "input index %d out of range", i);
  *info = m->in_info[i];
  return RLX_OK;
}

rlx_status rlx_model_output_info(const rlx_model *m, int i, rlx_io_info *info) {
  if (!m || !info || !m->out_info || i < 0 || i >= rlx_graph_user_outputs(&m->graph))
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "output index %d out of range", i);
  *info = m->out_info[i];
  return RLX_OK;
}

int rlx_model_state_count(const rlx_model *m) { return m ? m->graph.n_states : 0; }

rlx_status rlx_model_state_info(const rlx_model *m, int i, rlx_io_info *info) {
  if (!m || !info || i < 0 || i >= m->graph.n_states)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "state index %d out of range", i);
  const rlx_value *v = &m->graph.values[m->graph.states[i]];
  memset(info, 0, sizeof *info);
  info->name = v->name, info->dtype = v->dtype, info->rank = v->shape.rank;
  for (int d = 0; d < v->shape.rank; d++) info->dims[d] = info->dim_min[d] = info->dim_max[d] = v->shape.dims[d];
  return RLX_OK;
}

int rlx_model_symbol_count(const rlx_model *m) { return m ? m->graph.syms.n_syms : 0; }

rlx_status rlx_model_symbol_info(const rlx_model *m, int i, rlx_symbol_info *info) {
  if (!m || !info || i < 0 || i >= m->graph.syms.n_syms)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "symbol index %d out of range", i);
  const rlx_symbol *y = &m->graph.syms.syms[i];
  *info = (rlx_symbol_info){y->name, y->min, y->max, y->hint};
  return RLX_OK;
}

void rlx_compile_options_init(rlx_compile_options *o) {
  memset(o, 0, sizeof *o);
  o->size = sizeof *o;
  o->device = RLX_DEVICE_CPU;
}

/* A static graph: kernels chosen on it, one plan. */
static rlx_status compile_static(rlx_compiled *c) {
  const rlx_graph *g = &c->graph;
  size_t *scratch = rlx_malloc(sizeof(size_t) * (size_t)(g->n_nodes + 1));
  rlx_status st = scratch ? RLX_OK : rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  for (int32_t i = 0; !st && i < g->n_nodes; i++) {
    st = rlx_choose_kernel(g, NULL, i, &c->opts, c->threads, &c->kernels[i]);
    if (!st) scratch[i] = c->kernels[i].scratch;
  }
  if (!st) st = rlx_plan_memory(g, true, scratch, &c->plan);
  rlx_free(scratch);
  if (!st) c->max_scratch = c->plan.scratch_size, c->arena_size = c->plan.arena_size;
  return st;
}

/* The bound instance: every symbolic dim and param at its upper bound (not a
 * real binding: no infer check). Its plan holds every binding, and its
 * scratch sizes bound every binding's (kernel scratch grows with the dims). */
static rlx_status bound_plan(rlx_compiled *c, rlx_bind_ws *w) {
  const rlx_graph *g = &c->graph;
  const rlx_symtab *t = &g->syms;
  for (int32_t e = 0; e < t->n_exprs; e++) w->expr_vals[e] = RLX_MAX(t->exprs[e].hi, 0);
  rlx_instance b;
  rlx_status st = rlx_instance_alloc(c, &b);
  if (st) return st;
  rlx_graph *bg = &b.g;
  *bg = (rlx_graph){.values = b.g.values, .nodes = b.g.nodes, .n_values = g->n_values, .n_nodes = g->n_nodes,
                    .inputs = g->inputs, .n_inputs = g->n_inputs, .outputs = g->outputs, .n_outputs = g->n_outputs,
                    .states = g->states, .n_states = g->n_states};
  memcpy(bg->values, g->values, sizeof(rlx_value) * (size_t)g->n_values);
  memcpy(bg->nodes, g->nodes, sizeof(rlx_node) * (size_t)g->n_nodes);
  for (int32_t v = 0; v < g->n_values; v++) {
    rlx_shape *sh = &bg->values[v].shape;
    for (int d = 0; d < sh->rank; d++) sh->dims[d] = rlx_dim_value(sh->dims[d], w->expr_vals);
    int64_t n;
    if (!rlx_shape_valid(sh, &n)) {
      char a[256];
      const rlx_node *nd = g->values[v].kind == RLX_VALUE_NODE ? &g->nodes[g->values[v].producer] : NULL;
      st = rlx_errorf(RLX_ERR_UNSUPPORTED, "%s%s%s%s has the symbolic shape %s, over 2^48 elements at the largest "
                      "binding its symbols' bounds allow: export with smaller bounds", nd ? "node '" : "value '",
                      nd ? nd->label : g->values[v].name ? g->values[v].name : "?", "'", "",
                      rlx_graph_shape_str(g, &g->values[v].shape, a, sizeof a));
      break;
    }
  }
  c->max_scratch = 0;
  for (int32_t i = 0; !st && i < g->n_nodes; i++) {
    rlx_node *n = &bg->nodes[i];
    const rlx_op_vtable *vt = rlx_op_table[n->op].vt;
    if (vt->concretize) vt->concretize(&n->p, w->expr_vals);
    const rlx_kernel *k = &c->kernels[i];
    size_t sf = k->fast ? (k->scratch_for ? k->scratch_for(bg, n, c->threads) : k->scratch) : 0;
    size_t sr = vt->scratch ? vt->scratch(bg, n) : 0; /* the fallback, where the fast kernel cannot run */
    if (sf == SIZE_MAX) sf = 0;
    b.scratch[i] = RLX_MAX(sf, sr);
    c->max_scratch = RLX_MAX(c->max_scratch, b.scratch[i]);
  }
  if (!st) {
    rlx_plan_free(&c->plan);
    st = rlx_plan_memory(bg, true, b.scratch, &c->plan);
  }
  if (!st) {
    c->max_scratch = (c->max_scratch + 63) & ~(size_t)63;
    c->arena_size = c->plan.values_size + c->max_scratch;
  }
  rlx_instance_free(&b);
  return st;
}

/* A dynamic graph: kernels chosen on the instance at the hints (the kernel
 * families handle every shape; shape-dependent choices inside a family are
 * made per binding), memory sized for the largest binding. */
/* The values and nodes an instance rebuilds per binding. */
static rlx_status symbolic_parts(rlx_compiled *c) {
  const rlx_graph *g = &c->graph;
  c->sym_values = rlx_malloc(sizeof(int32_t) * (size_t)(g->n_values + 1));
  c->sym_nodes = rlx_malloc(sizeof(int32_t) * (size_t)(g->n_nodes + 1));
  if (!c->sym_values || !c->sym_nodes) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  for (int32_t v = 0; v < g->n_values; v++)
    if (rlx_shape_is_symbolic(&g->values[v].shape)) c->sym_values[c->n_sym_values++] = v;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const rlx_node *n = &g->nodes[i];
    bool sym = rlx_op_table[n->op].vt->concretize != NULL;
    for (int32_t k = 0; !sym && k < n->n_in; k++) sym = n->in[k] >= 0 && rlx_shape_is_symbolic(&g->values[n->in[k]].shape);
    for (int32_t k = 0; !sym && k < n->n_out; k++) sym = rlx_shape_is_symbolic(&g->values[n->out[k]].shape);
    if (sym) c->sym_nodes[c->n_sym_nodes++] = i;
  }
  return RLX_OK;
}

static rlx_status compile_dynamic(rlx_compiled *c) {
  const rlx_symtab *t = &c->graph.syms;
  rlx_status st = symbolic_parts(c);
  if (st) return st;
  rlx_bind_ws w;
  st = rlx_bind_ws_create(c, &w);
  if (st) return st;
  for (int32_t s = 0; s < t->n_syms; s++) w.syms[s] = t->syms[s].hint;
  st = rlx_symtab_eval(t, w.syms, w.atom_vals, w.expr_vals);
  if (!st) st = rlx_instance_alloc(c, &c->hint);
  if (!st) st = rlx_instance_build(c, &w, c->threads, 0, false, &c->hint);
  if (st) rlx_error_prefix("at the example shapes: ");
  for (int32_t i = 0; !st && i < c->graph.n_nodes; i++)
    st = rlx_choose_kernel(&c->hint.g, &c->graph, i, &c->opts, c->threads, &c->kernels[i]);
  if (!st) st = bound_plan(c, &w);
  rlx_bind_ws_free(&w);
  return st;
}

rlx_status rlx_model_compile(const rlx_model *m, const rlx_compile_options *opts, rlx_compiled **out) {
  if (!m || !out) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_model_compile: NULL argument");
  rlx_compile_options o;
  rlx_compile_options_init(&o);
  if (opts) {
    if (opts->size < offsetof(rlx_compile_options, no_passes) + sizeof(int))
      return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_compile_options.size is %zu; initialize the "
                        "options with rlx_compile_options_init", opts->size);
    memcpy(&o, opts, RLX_MIN(opts->size, sizeof o));
    o.size = sizeof o;
  }
  if (o.threads < 0 || o.threads > RLX_MAX_THREADS)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "threads=%d: rlx runs 1 to %d threads (0: one per core)",
                      o.threads, RLX_MAX_THREADS);
  if (o.device != RLX_DEVICE_CPU)
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "device %d: this build of rlx runs on the CPU only",
                      (int)o.device);
  rlx_compiled *c = rlx_calloc(1, sizeof *c);
  if (!c) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  c->model = m;
  c->opts = o;
  rlx_status st = rlx_graph_clone(&m->graph, &c->graph);
  if (!st && !o.no_passes) st = rlx_passes_run(&c->graph, false);
  c->threads = o.threads > 0 ? o.threads : rlx_cpu_count();
  c->dynamic = c->graph.syms.n_syms > 0;
  if (!st) {
    c->kernels = rlx_calloc((size_t)(c->graph.n_nodes + 1), sizeof *c->kernels);
    if (!c->kernels) st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  }
  if (!st) st = c->dynamic ? compile_dynamic(c) : compile_static(c);
  if (!st && o.max_memory && c->arena_size > o.max_memory) {
    char sh[160];
    const rlx_value *v = c->plan.largest >= 0 ? &c->graph.values[c->plan.largest] : NULL;
    const rlx_node *n = v ? &c->graph.nodes[v->producer] : NULL;
    if (n)
      st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "the model needs an arena of %zu bytes, over max_memory (%zu); its "
                      "largest value is node '%s' (%s), %s %s%s", c->arena_size, o.max_memory, n->label,
                      n->aten ? n->aten : rlx_op_table[n->op].name, rlx_dtype_name(v->dtype),
                      rlx_graph_shape_str(&c->graph, &v->shape, sh, sizeof sh),
                      c->dynamic ? " (at the largest binding the bounds allow)" : "");
    else
      st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "the model needs an arena of %zu bytes, over max_memory (%zu)",
                      c->arena_size, o.max_memory);
  }
  if (st) {
    rlx_compiled_destroy(c);
    return st;
  }
  *out = c;
  return RLX_OK;
}

void rlx_compiled_destroy(rlx_compiled *c) {
  if (!c) return;
  rlx_plan_free(&c->plan);
  rlx_instance_free(&c->hint);
  rlx_free(c->sym_values);
  rlx_free(c->sym_nodes);
  for (int32_t i = 0; c->kernels && i < c->graph.n_nodes; i++) rlx_aligned_free(c->kernels[i].packed);
  rlx_free(c->kernels);
  rlx_graph_free(&c->graph);
  rlx_free(c);
}
