/*
 * session.c — rlx_session: one arena per session (allocated at creation from
 * the compiled memory plan), input/output binding by name, and the run loop,
 * which only fills data pointers and calls kernels: no allocation.
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

void rlx_session_destroy(rlx_session *s) {
  if (!s) return;
  rlx_threadpool_destroy(s->tp);
  rlx_aligned_free(s->arena);
  rlx_free(s->ptr);
  rlx_free(s->bound_in);
  rlx_free(s->bound_out);
  rlx_free(s->views);
  rlx_free(s->view_at);
  rlx_free(s);
}

rlx_status rlx_session_create(const rlx_compiled *c, rlx_session **out) {
  if (!c || !out) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_session_create: NULL argument");
  rlx_status wst = rlx_st_check(&c->model->weights);
  if (wst) return wst;
  const rlx_graph *g = &c->graph;
  rlx_session *s = rlx_calloc(1, sizeof *s);
  if (!s) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  s->c = c;
  int64_t nviews = 0;
  for (int32_t i = 0; i < g->n_nodes; i++)
    nviews += RLX_MAX(g->nodes[i].n_in, rlx_op_table[g->nodes[i].op].max_in) + g->nodes[i].n_out;
  s->arena = rlx_aligned_alloc(c->plan.arena_size ? c->plan.arena_size : 64);
  s->ptr = rlx_calloc((size_t)(g->n_values + 1), sizeof *s->ptr);
  s->bound_in = rlx_calloc((size_t)(g->n_inputs + 1), sizeof *s->bound_in);
  s->bound_out = rlx_calloc((size_t)(g->n_outputs + 1), sizeof *s->bound_out);
  s->views = rlx_calloc((size_t)(nviews + 1), sizeof *s->views);
  s->view_at = rlx_calloc((size_t)(g->n_nodes + 1), sizeof *s->view_at);
  if (!s->arena || !s->ptr || !s->bound_in || !s->bound_out || !s->views || !s->view_at) {
    bool arena = !s->arena;
    rlx_session_destroy(s);
    if (arena && c->plan.largest >= 0) {
      const rlx_value *v = &g->values[c->plan.largest];
      const rlx_node *n = &g->nodes[v->producer];
      char sh[160];
      return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory creating a session: an arena of %zu bytes; its "
                        "largest value is node '%s' (%s), %s %s of %zu bytes", c->plan.arena_size, n->label,
                        n->aten ? n->aten : rlx_op_table[n->op].name, rlx_dtype_name(v->dtype),
                        rlx_shape_str(&v->shape, sh, sizeof sh), rlx_value_nbytes(v));
    }
    if (arena) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory creating a session (an arena of %zu bytes)",
                                 c->plan.arena_size);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory creating a session's tables");
  }
  rlx_status pst = rlx_threadpool_create(c->threads, &s->tp);
  if (pst) {
    rlx_session_destroy(s);
    rlx_error_prefix("creating a session's thread pool: ");
    return pst;
  }
  /* shapes of every kernel argument, fixed for this plan */
  int32_t at = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const rlx_node *n = &g->nodes[i];
    int32_t nin = RLX_MAX(n->n_in, rlx_op_table[n->op].max_in);
    s->view_at[i] = at;
    for (int32_t k = 0; k < nin; k++)
      if (k < n->n_in && n->in[k] >= 0) s->views[at + k] = rlx_value_view(&g->values[n->in[k]]);
    for (int32_t k = 0; k < n->n_out; k++) s->views[at + nin + k] = rlx_value_view(&g->values[n->out[k]]);
    at += nin + n->n_out;
  }
  /* weights and constants have fixed addresses */
  for (int32_t v = 0; v < g->n_values; v++) {
    const rlx_value *val = &g->values[v];
    if (val->kind == RLX_VALUE_WEIGHT || val->kind == RLX_VALUE_CONST) s->ptr[v] = (void *)val->data;
    else if (c->plan.offset[v] >= 0) s->ptr[v] = (char *)s->arena + c->plan.offset[v];
  }
  const char *dn = getenv("RLX_DEBUG_NANS");
  s->debug_nans = !dn || !*dn || !strcmp(dn, "0") ? 0 : !strcmp(dn, "abort") ? 2 : 1;
  s->nan_culprit = -1;
  *out = s;
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
  const rlx_node *n = &s->c->graph.nodes[i];
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

static rlx_status mismatch(const char *what, const char *name, const rlx_tensor_view *v,
                           const rlx_value *val) {
  char a[128], b[128];
  rlx_shape vs = {.rank = v->rank};
  memcpy(vs.dims, v->dims, sizeof(int64_t) * (size_t)(v->rank > 0 && v->rank <= RLX_MAX_RANK ? v->rank : 0));
  return rlx_errorf(RLX_ERR_SHAPE, "%s '%s' is %s %s; the view given is %s %s", what, name,
                    rlx_dtype_name(val->dtype), rlx_shape_str(&val->shape, a, sizeof a),
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
    if (!view_matches(v, val)) return mismatch("input", name, v, val);
    if (!v->data && rlx_value_nbytes(val))
      return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "input '%s': the view has no data", name);
    s->bound_in[i] = v->data;
    return RLX_OK;
  }
  return rlx_errorf(RLX_ERR_NOT_FOUND, "the model has no input named '%s'", name);
}

static int32_t output_index(const rlx_session *s, const char *name) {
  const rlx_model *m = s->c->model;
  char *end;
  long i = strtol(name, &end, 10);
  if (*name && !*end && i >= 0 && i < s->c->graph.n_outputs) return (int32_t)i;
  for (int32_t k = 0; k < m->ir.n_outputs && k < s->c->graph.n_outputs; k++)
    if (!m->ir.outputs[k].is_const && !strcmp(m->ir.outputs[k].ref, name)) return k;
  return -1;
}

rlx_status rlx_session_bind_output(rlx_session *s, const char *name, const rlx_tensor_view *v) {
  if (!s || !name || !v) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_session_bind_output: NULL argument");
  int32_t i = output_index(s, name);
  if (i < 0) return rlx_errorf(RLX_ERR_NOT_FOUND, "the model has no output named '%s'", name);
  const rlx_value *val = &s->c->graph.values[s->c->graph.outputs[i]];
  if (v->rank < 0 || v->rank > RLX_MAX_RANK)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "output '%s': the view has rank %d", name, (int)v->rank);
  if (!view_matches(v, val)) return mismatch("output", name, v, val);
  s->bound_out[i] = *v;
  return RLX_OK;
}

rlx_status rlx_session_run(rlx_session *s) {
  if (!s) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_session_run: NULL session");
  const rlx_compiled *c = s->c;
  rlx_status wst = rlx_st_check(&c->model->weights); /* a truncated map would raise SIGBUS */
  if (wst) return wst;
  const rlx_graph *g = &c->graph;
  for (int32_t i = 0; i < g->n_inputs; i++) {
    const rlx_value *val = &g->values[g->inputs[i]];
    if (!s->bound_in[i] && rlx_value_nbytes(val))
      return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "input '%s' is not bound", val->name);
    s->ptr[g->inputs[i]] = (void *)s->bound_in[i];
  }
  for (int32_t v = 0; v < g->n_values; v++)
    if (c->plan.alias_of[v] >= 0) s->ptr[v] = s->ptr[c->plan.alias_of[v]];
  void *scratch = (char *)s->arena + c->plan.scratch_offset;
  s->nan_culprit = -1;
  s->nan_propagators = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const rlx_node *n = &g->nodes[i];
    int32_t nin = RLX_MAX(n->n_in, rlx_op_table[n->op].max_in);
    rlx_tensor_view *in = &s->views[s->view_at[i]], *out = in + nin;
    for (int32_t k = 0; k < n->n_in; k++) in[k].data = n->in[k] >= 0 ? s->ptr[n->in[k]] : NULL;
    for (int32_t k = 0; k < n->n_out; k++) out[k].data = s->ptr[n->out[k]];
    if (!c->plan.skip[i]) {
      const rlx_kernel *k = &c->kernels[i];
      rlx_exec x = {.tp = s->tp, .scratch = scratch, .packed = k->packed};
      rlx_status st = k->fast ? k->fast(n, in, out, &x) : k->ref(n, in, out, scratch);
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
  return RLX_OK;
}

rlx_status rlx_session_output(const rlx_session *s, int index, rlx_tensor_view *v) {
  if (!s || !v) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_session_output: NULL argument");
  if (index < 0 || index >= s->c->graph.n_outputs)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "output index %d out of range (%d outputs)", index,
                      s->c->graph.n_outputs);
  int32_t id = s->c->graph.outputs[index];
  *v = rlx_value_view(&s->c->graph.values[id]);
  v->data = s->ptr[id];
  return RLX_OK;
}
