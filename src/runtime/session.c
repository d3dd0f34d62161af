/*
 * session.c — rlx_session: one arena per session (allocated at creation for
 * the largest binding), input/output binding by name, the reshape stage
 * (a dynamic model's binding resolved from the input shapes and planned, or
 * found in the session's plan cache: instance.c), and the run loop, which
 * only fills data pointers and calls kernels: no allocation.
 *
 * RLX_DEBUG_NANS=1 scans every node's float outputs during the run and
 * reports (stderr) the first node that produced a NaN or Inf from finite
 * inputs — the culprit — and how many later nodes only propagated it;
 * RLX_DEBUG_NANS=abort fails the run at the culprit instead.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

#define PLAN_CACHE 4 /* bindings a session keeps planned */

static void static_instance_free(rlx_instance *inst);

void rlx_session_destroy(rlx_session *s) {
  if (!s) return;
  rlx_threadpool_destroy(s->tp);
  rlx_arena_free(s->arena, s->c->arena_size ? s->c->arena_size : 64, s->c->dynamic);
  for (int i = 0; s->cache && i < s->n_cache; i++) {
    if (s->cache[i].owned) rlx_instance_free(&s->cache[i]);
    else static_instance_free(&s->cache[i]);
  }
  rlx_free(s->cache);
  rlx_bind_ws_free(&s->ws);
  rlx_free(s->ptr);
  rlx_free(s->bound_in);
  rlx_free(s->in_shape);
  rlx_free(s->bound_out);
  rlx_aligned_free(s->state);
  rlx_free(s);
}

#define STATE_ALIGN 64

static size_t state_block(const rlx_value *v) { return (rlx_value_nbytes(v) + STATE_ALIGN - 1) & ~(size_t)(STATE_ALIGN - 1); }

/* The states' memory, each at its initial value; s->ptr of each state. */
static rlx_status create_state(rlx_session *s) {
  const rlx_graph *g = &s->c->graph;
  size_t total = 0;
  for (int32_t k = 0; k < g->n_states; k++) {
    size_t b = state_block(&g->values[g->states[k]]);
    if (total > SIZE_MAX / 2 - b) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "the session state overflows size_t");
    total += b;
  }
  if (!g->n_states) return RLX_OK;
  s->state = rlx_aligned_alloc(total ? total : STATE_ALIGN);
  if (!s->state) {
    const rlx_value *v = &g->values[g->states[0]];
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory creating a session's state: %zu bytes for %d "
                      "buffers ('%s', ...)", total, g->n_states, v->name);
  }
  s->state_size = total;
  size_t off = 0;
  for (int32_t k = 0; k < g->n_states; k++) {
    const rlx_value *v = &g->values[g->states[k]];
    s->ptr[g->states[k]] = (char *)s->state + off;
    off += state_block(v);
  }
  return rlx_session_reset_state(s);
}

rlx_status rlx_session_reset_state(rlx_session *s) {
  if (!s) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_session_reset_state: NULL session");
  const rlx_graph *g = &s->c->graph;
  for (int32_t k = 0; k < g->n_states; k++) {
    const rlx_value *v = &g->values[g->states[k]];
    size_t nb = rlx_value_nbytes(v);
    if (!nb) continue;
    if (v->data) memcpy(s->ptr[g->states[k]], v->data, nb);
    else memset(s->ptr[g->states[k]], 0, nb);
  }
  return RLX_OK;
}

rlx_status rlx_session_state(rlx_session *s, int index, rlx_tensor_view *v) {
  if (!s || !v) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_session_state: NULL argument");
  const rlx_graph *g = &s->c->graph;
  if (index < 0 || index >= g->n_states)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "state index %d out of range (%d states)", index, g->n_states);
  *v = rlx_value_view(&g->values[g->states[index]]);
  v->data = s->ptr[g->states[index]];
  return RLX_OK;
}

/* The static instance: the compiled graph and plan themselves. */
static rlx_status static_instance(rlx_session *s) {
  const rlx_compiled *c = s->c;
  rlx_instance *inst = &s->cache[0];
  const rlx_graph *g = &c->graph;
  int64_t nviews = 0;
  for (int32_t i = 0; i < g->n_nodes; i++)
    nviews += RLX_MAX(g->nodes[i].n_in, rlx_op_table[g->nodes[i].op].max_in) + g->nodes[i].n_out;
  memset(inst, 0, sizeof *inst);
  inst->g = *g; /* a shallow copy: the instance does not own it */
  inst->plan = c->plan;
  inst->views = rlx_calloc((size_t)nviews + 1, sizeof *inst->views);
  inst->view_at = rlx_calloc((size_t)g->n_nodes + 1, sizeof *inst->view_at);
  inst->use_ref = rlx_calloc((size_t)g->n_nodes + 1, sizeof *inst->use_ref);
  if (!inst->views || !inst->view_at || !inst->use_ref) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  int32_t at = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const rlx_node *n = &g->nodes[i];
    int32_t nin = RLX_MAX(n->n_in, rlx_op_table[n->op].max_in);
    inst->view_at[i] = at;
    for (int32_t k = 0; k < nin; k++)
      if (k < n->n_in && n->in[k] >= 0) inst->views[at + k] = rlx_value_view(&g->values[n->in[k]]);
    for (int32_t k = 0; k < n->n_out; k++) inst->views[at + nin + k] = rlx_value_view(&g->values[n->out[k]]);
    at += nin + n->n_out;
  }
  inst->ready = true;
  return RLX_OK;
}

static void static_instance_free(rlx_instance *inst) {
  rlx_free(inst->views);
  rlx_free(inst->use_ref);
  rlx_free(inst->view_at);
  memset(inst, 0, sizeof *inst);
}

/* Points the session at an instance: data pointers of arena values. */
static void use_instance(rlx_session *s, rlx_instance *inst) {
  const rlx_graph *g = &inst->g;
  for (int32_t v = 0; v < g->n_values; v++) {
    const rlx_value *val = &g->values[v];
    if (val->kind == RLX_VALUE_WEIGHT || val->kind == RLX_VALUE_CONST) s->ptr[v] = (void *)val->data;
    else if (inst->plan.offset[v] >= 0) s->ptr[v] = (char *)s->arena + inst->plan.offset[v];
  }
  s->cur = inst;
  s->views = inst->views, s->view_at = inst->view_at;
  s->reshape_needed = false;
}

rlx_status rlx_session_create(const rlx_compiled *c, rlx_session **out) {
  if (!c || !out) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_session_create: NULL argument");
  rlx_status wst = rlx_st_check(&c->model->weights);
  if (wst) return wst;
  const rlx_graph *g = &c->graph;
  rlx_session *s = rlx_calloc(1, sizeof *s);
  if (!s) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  s->c = c;
  s->arena = rlx_arena_alloc(c->arena_size ? c->arena_size : 64, c->dynamic);
  s->ptr = rlx_calloc((size_t)(g->n_values + 1), sizeof *s->ptr);
  s->bound_in = rlx_calloc((size_t)(g->n_inputs + 1), sizeof *s->bound_in);
  s->in_shape = rlx_calloc((size_t)(g->n_inputs + 1), sizeof *s->in_shape);
  s->bound_out = rlx_calloc((size_t)(g->n_outputs + 1), sizeof *s->bound_out);
  s->n_cache = c->dynamic ? PLAN_CACHE : 1;
  s->cache = rlx_calloc((size_t)s->n_cache, sizeof *s->cache);
  if (!s->arena || !s->ptr || !s->bound_in || !s->in_shape || !s->bound_out || !s->cache) {
    bool arena = !s->arena;
    if (!s->cache) s->n_cache = 0;
    rlx_session_destroy(s);
    if (arena && c->plan.largest >= 0) {
      const rlx_value *v = &g->values[c->plan.largest];
      const rlx_node *n = &g->nodes[v->producer];
      char sh[256];
      return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory creating a session: an arena of %zu bytes; its "
                        "largest value is node '%s' (%s), %s %s", c->arena_size, n->label,
                        n->aten ? n->aten : rlx_op_table[n->op].name, rlx_dtype_name(v->dtype),
                        rlx_graph_shape_str(g, &v->shape, sh, sizeof sh));
    }
    if (arena) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory creating a session (an arena of %zu bytes)",
                                 c->arena_size);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory creating a session's tables");
  }
  rlx_status st = RLX_OK;
  if (c->dynamic) {
    st = rlx_bind_ws_create(c, &s->ws);
    for (int i = 0; !st && i < s->n_cache; i++) st = rlx_instance_alloc(c, &s->cache[i]);
    if (st) s->n_cache = 0; /* destroy frees what was made */
  } else {
    st = static_instance(s);
    if (!st) use_instance(s, &s->cache[0]);
  }
  for (int32_t i = 0; !st && i < g->n_inputs; i++) { /* the example shapes, until inputs are bound */
    s->in_shape[i] = rlx_value_view(c->dynamic ? &c->hint.g.values[g->inputs[i]] : &g->values[g->inputs[i]]);
    s->in_shape[i].data = NULL;
  }
  if (!st) st = create_state(s);
  if (!st) st = rlx_threadpool_create(c->threads, &s->tp);
  if (st) {
    rlx_session_destroy(s);
    if (st != RLX_ERR_OUT_OF_MEMORY) rlx_error_prefix("creating a session's thread pool: ");
    return st;
  }
  s->reshape_needed = c->dynamic;
  const char *dn = getenv("RLX_DEBUG_NANS");
  s->debug_nans = !dn || !*dn || !strcmp(dn, "0") ? 0 : !strcmp(dn, "abort") ? 2 : 1;
  s->nan_culprit = -1;
  *out = s;
  return RLX_OK;
}

bool rlx_session_node_is_reference(const rlx_session *s, int32_t i) {
  const rlx_kernel *k = &s->c->kernels[i];
  return (k->fast && s->cur && s->cur->use_ref && s->cur->use_ref[i]) || rlx_kernel_is_reference(k, &s->c->graph.nodes[i]);
}

const char *rlx_session_kernel_name(const rlx_session *s, int32_t i) {
  const rlx_kernel *k = &s->c->kernels[i];
  if (k->fast && s->cur && s->cur->use_ref && s->cur->use_ref[i]) return "reference (fast kernel cannot run this binding)";
  /* the memory plan made its output an alias of its input: nothing runs */
  if (s->cur && s->cur->plan.skip && s->cur->plan.skip[i]) return "(view, no kernel)";
  return k->name_for && s->cur ? k->name_for(&s->cur->g, &s->cur->g.nodes[i]) : k->name;
}

rlx_status rlx_session_reshape(rlx_session *s) {
  if (!s) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_session_reshape: NULL session");
  const rlx_compiled *c = s->c;
  if (!c->dynamic) return RLX_OK; /* bind_input checked the shapes */
  rlx_status st = rlx_resolve_binding(c, s->in_shape, &s->ws);
  if (st) return st;
  int32_t ns = c->graph.syms.n_syms;
  rlx_instance *hit = NULL, *victim = NULL;
  for (int i = 0; i < s->n_cache && !hit; i++) {
    rlx_instance *inst = &s->cache[i];
    if (inst->ready && !memcmp(inst->syms, s->ws.syms, sizeof(int64_t) * (size_t)ns)) hit = inst;
    else if (!victim || !inst->ready || (victim->ready && inst->stamp < victim->stamp)) victim = inst;
  }
  if (!hit) {
    st = rlx_instance_build(c, &s->ws, rlx_threadpool_size(s->tp), c->arena_size, true, victim);
    if (st) { /* the current binding (if any) stays usable */
      if (s->cur == victim) s->cur = NULL, s->views = NULL, s->view_at = NULL;
      return st;
    }
    hit = victim;
  }
  hit->stamp = ++s->clock;
  use_instance(s, hit);
  return RLX_OK;
}

/* Index of the first non-finite element of a float view, or -1. */
static int64_t first_nonfinite(const rlx_tensor_view *v) {
  if (!v->data || !rlx_dtype_is_float(v->dtype)) return -1;
  int64_t n = rlx_view_numel(v);
  for (int64_t i = 0; i < n; i++)
    if (!isfinite(rlx_load_f64(v->data, v->dtype, i))) return i;
  return -1;
}

/* RLX_DEBUG_NANS: classifies node i after it ran. */
static rlx_status scan_nans(rlx_session *s, int32_t i, const rlx_tensor_view *in, const rlx_tensor_view *out) {
  const rlx_node *n = &s->cur->g.nodes[i];
  int64_t bad = -1;
  int32_t k = 0;
  for (; k < n->n_out && bad < 0; k++) bad = first_nonfinite(&out[k]);
  if (bad < 0) return RLX_OK;
  int32_t src = -1;
  for (int32_t j = 0; j < n->n_in && src < 0; j++)
    if (first_nonfinite(&in[j]) >= 0) src = j;
  double v = rlx_load_f64(out[k - 1].data, out[k - 1].dtype, bad);
  const char *what = isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf";
  const char *aten = n->aten ? n->aten : rlx_op_table[n->op].name;
  if (src >= 0) {
    if (s->nan_culprit < 0)
      fprintf(stderr, "rlx: RLX_DEBUG_NANS: %s at index %lld of node '%s' (%s): propagated from its "
              "input %d, which already held a non-finite value (an rlx input or weight?)\n", what,
              (long long)bad, n->label, aten, src);
    s->nan_propagators++;
    return RLX_OK;
  }
  if (s->nan_culprit >= 0) { /* a second independent source: report it too */
    fprintf(stderr, "rlx: RLX_DEBUG_NANS: %s also produced at index %lld of node '%s' (%s) from finite inputs\n",
            what, (long long)bad, n->label, aten);
    return RLX_OK;
  }
  s->nan_culprit = i;
  fprintf(stderr, "rlx: RLX_DEBUG_NANS: %s at index %lld of output %d of node '%s' (%s, rlx %s): culprit, "
          "its inputs are finite\n", what, (long long)bad, k - 1, n->label, aten, rlx_op_table[n->op].name);
  if (s->debug_nans == 2)
    return rlx_errorf(RLX_ERR_RUNTIME, "RLX_DEBUG_NANS=abort: %s produced by node '%s' (%s)", what, n->label, aten);
  return RLX_OK;
}

static bool view_matches(const rlx_tensor_view *v, const rlx_value *val) {
  if (v->dtype != val->dtype || v->rank != val->shape.rank) return false;
  RLX_ASSERT(v->rank >= 0 && v->rank <= RLX_MAX_RANK); /* callers check the rank first */
  for (int i = 0; i < v->rank; i++)
    if (v->dims[i] != val->shape.dims[i]) return false;
  return true;
}

static rlx_status mismatch(const rlx_graph *g, const char *what, const char *name, const rlx_tensor_view *v,
                           const rlx_value *val) {
  char a[256], b[128];
  rlx_shape vs = {.rank = v->rank};
  memcpy(vs.dims, v->dims, sizeof(int64_t) * (size_t)(v->rank > 0 && v->rank <= RLX_MAX_RANK ? v->rank : 0));
  return rlx_errorf(RLX_ERR_SHAPE, "%s '%s' is %s %s; the view given is %s %s", what, name,
                    rlx_dtype_name(val->dtype), rlx_graph_shape_str(g, &val->shape, a, sizeof a),
                    rlx_dtype_name(v->dtype), rlx_shape_str(&vs, b, sizeof b));
}

rlx_status rlx_session_bind_input(rlx_session *s, const char *name, const rlx_tensor_view *v) {
  if (!s || !name || !v) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_session_bind_input: NULL argument");
  const rlx_graph *g = &s->c->graph;
  for (int32_t i = 0; i < g->n_inputs; i++) {
    const rlx_value *val = &g->values[g->inputs[i]];
    if (strcmp(val->name, name)) continue;
    if (v->rank < 0 || v->rank > RLX_MAX_RANK)
      return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "input '%s': the view has rank %d", name, (int)v->rank);
    int64_t numel = rlx_view_numel(v);
    if (numel < 0) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "input '%s': the view's dims are not valid", name);
    if (!s->c->dynamic && !view_matches(v, val)) return mismatch(g, "input", name, v, val);
    if (v->dtype != val->dtype || v->rank != val->shape.rank) return mismatch(g, "input", name, v, val);
    if (!v->data && numel > 0)
      return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "input '%s': the view has no data", name);
    if (s->c->dynamic && memcmp(s->in_shape[i].dims, v->dims, sizeof(int64_t) * (size_t)v->rank))
      s->reshape_needed = true;
    s->bound_in[i] = v->data;
    s->in_shape[i] = *v;
    s->in_shape[i].data = NULL;
    return RLX_OK;
  }
  return rlx_errorf(RLX_ERR_NOT_FOUND, "the model has no input named '%s'", name);
}

static int32_t output_index(const rlx_session *s, const char *name) {
  const rlx_program_info *pi = s->c->graph.prog;
  char *end;
  long i = strtol(name, &end, 10);
  int32_t nu = rlx_graph_user_outputs(&s->c->graph);
  if (*name && !*end && i >= 0 && i < nu) return (int32_t)i;
  for (int32_t k = 0; pi && k < nu; k++)
    if (!pi->output_const[k] && !strcmp(pi->output_names[k], name)) return k;
  return -1;
}

rlx_status rlx_session_bind_output(rlx_session *s, const char *name, const rlx_tensor_view *v) {
  if (!s || !name || !v) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_session_bind_output: NULL argument");
  int32_t i = output_index(s, name);
  if (i < 0) return rlx_errorf(RLX_ERR_NOT_FOUND, "the model has no output named '%s'", name);
  const rlx_graph *g = &s->c->graph;
  const rlx_value *val = &g->values[g->outputs[i]];
  if (v->rank < 0 || v->rank > RLX_MAX_RANK)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "output '%s': the view has rank %d", name, (int)v->rank);
  if (v->dtype != val->dtype || v->rank != val->shape.rank || (!s->c->dynamic && !view_matches(v, val)))
    return mismatch(g, "output", name, v, val);
  s->bound_out[i] = *v;
  return RLX_OK;
}

rlx_status rlx_session_run(rlx_session *s) {
  if (!s) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_session_run: NULL session");
  const rlx_compiled *c = s->c;
  rlx_status wst = rlx_st_check(&c->model->weights); /* a truncated map would raise SIGBUS */
  if (wst) return wst;
  for (int32_t i = 0; i < c->graph.n_inputs; i++) {
    const rlx_value *val = &c->graph.values[c->graph.inputs[i]];
    if (!s->bound_in[i] && rlx_view_numel(&s->in_shape[i]) > 0)
      return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "input '%s' is not bound", val->name);
  }
  if (s->reshape_needed || !s->cur) {
    rlx_status st = rlx_session_reshape(s);
    if (st) return st;
  }
  const rlx_instance *inst = s->cur;
  const rlx_graph *g = &inst->g;
  for (int32_t i = 0; i < g->n_inputs; i++) s->ptr[g->inputs[i]] = (void *)s->bound_in[i];
  for (int32_t v = 0; v < g->n_values; v++)
    if (inst->plan.alias_of[v] >= 0) s->ptr[v] = (char *)s->ptr[inst->plan.alias_of[v]] + inst->plan.alias_off[v];
  for (int32_t i = 0; i < g->n_outputs; i++) {
    if (!s->bound_out[i].data) continue;
    if (!view_matches(&s->bound_out[i], &g->values[g->outputs[i]]))
      return mismatch(g, "output", c->graph.values[c->graph.outputs[i]].name, &s->bound_out[i],
                      &g->values[g->outputs[i]]);
  }
  void *scratch = (char *)s->arena + inst->plan.scratch_offset;
  s->nan_culprit = -1;
  s->nan_propagators = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const rlx_node *n = &g->nodes[i];
    int32_t nin = RLX_MAX(n->n_in, rlx_op_table[n->op].max_in);
    rlx_tensor_view *in = &inst->views[inst->view_at[i]], *out = in + nin;
    for (int32_t k = 0; k < n->n_in; k++) in[k].data = n->in[k] >= 0 ? s->ptr[n->in[k]] : NULL;
    for (int32_t k = 0; k < n->n_out; k++) out[k].data = s->ptr[n->out[k]];
    if (!inst->plan.skip[i]) {
      const rlx_kernel *k = &c->kernels[i];
      rlx_exec x = {.tp = s->tp, .scratch = scratch, .packed = k->packed};
      /* a backend kernel that cannot run this binding's shapes falls back to the reference */
      rlx_kernel_fn run = k->fast && inst->use_ref[i] ? rlx_reference_kernel : k->run;
      rlx_status st = run(n, in, out, &x);
      if (st) {
        rlx_error_prefix("node '%s' (%s): ", n->label, n->aten ? n->aten : rlx_op_table[n->op].name);
        return st;
      }
    }
    if (s->debug_nans) {
      rlx_status st = scan_nans(s, i, in, out);
      if (st) return st;
    }
    if (s->after_node) {
      rlx_status st = s->after_node(s->after_node_ctx, s, i);
      if (st) return st;
    }
  }
  if (s->debug_nans && s->nan_culprit >= 0 && s->nan_propagators)
    fprintf(stderr, "rlx: RLX_DEBUG_NANS: %d later node(s) propagated it\n", s->nan_propagators);
  for (int32_t i = 0; i < g->n_outputs; i++) {
    if (!s->bound_out[i].data) continue;
    const rlx_value *val = &g->values[g->outputs[i]];
    memcpy(s->bound_out[i].data, s->ptr[g->outputs[i]], rlx_value_nbytes(val));
  }
  /* the new state: written in place by its scatter (memplan.c), else copied */
  for (int32_t k = 0, nu = rlx_graph_user_outputs(g); k < g->n_states; k++) {
    void *dst = s->ptr[g->states[k]], *src = s->ptr[g->outputs[nu + k]];
    if (dst != src) memcpy(dst, src, rlx_value_nbytes(&g->values[g->states[k]]));
  }
  return RLX_OK;
}

rlx_status rlx_session_output(const rlx_session *s, int index, rlx_tensor_view *v) {
  if (!s || !v) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_session_output: NULL argument");
  if (index < 0 || index >= rlx_graph_user_outputs(&s->c->graph))
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "output index %d out of range (%d outputs)", index,
                      rlx_graph_user_outputs(&s->c->graph));
  if (!s->cur) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "output %d: no binding yet (run or reshape first)", index);
  int32_t id = s->cur->g.outputs[index];
  *v = rlx_value_view(&s->cur->g.values[id]);
  v->data = s->ptr[id];
  return RLX_OK;
}
