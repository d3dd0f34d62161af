/*
 * localize.c — node-by-node comparison with PyTorch and kernel bisection
 * (see localize.h). Both work through the session's after-node hook, so every
 * value is read right after it is produced, before the memory plan reuses its
 * storage. They allocate freely: this is the debugging path, not the run path.
 */
#include <stdlib.h>
#include <string.h>

#include "check/localize.h"

/* ---- localize against intermediates ---- */

typedef struct loc_ctx {
  const rlx_model *m;
  const rlx_st_file *inter;
  const rlx_parity_opts *o;
  rlx_localize_report *rep;
  int32_t *first_fx; /* per value: first FX node bound to it, -1 */
  int32_t *next_fx;  /* per FX node: next FX node bound to the same value */
} loc_ctx;

static void compare_fx(loc_ctx *c, int32_t fx, const rlx_value *val, const void *data) {
  rlx_loc_node *ln = &c->rep->nodes[fx];
  const rlx_st_tensor *t = rlx_st_find(c->inter, c->m->graph.prog->fx[fx].id);
  if (!t || ln->status != RLX_LOC_UNCHECKED || !data) return;
  rlx_tensor_view got = rlx_value_view(val), ref = {.data = (void *)t->data, .dtype = t->dtype, .rank = t->shape.rank};
  got.data = (void *)data;
  memcpy(ref.dims, t->shape.dims, sizeof ref.dims);
  rlx_parity_compare(&got, &ref, c->o, &ln->r);
  ln->status = ln->r.pass ? RLX_LOC_OK : RLX_LOC_CULPRIT; /* classified later */
  c->rep->n_compared++;
}

static rlx_status loc_hook(void *ctx, const rlx_session *s, int32_t node) {
  loc_ctx *c = ctx;
  const rlx_graph *g = rlx_session_graph(s); /* concrete shapes at this binding */
  const rlx_node *n = &g->nodes[node];
  for (int32_t k = 0; k < n->n_out; k++)
    for (int32_t fx = c->first_fx[n->out[k]]; fx >= 0; fx = c->next_fx[fx])
      compare_fx(c, fx, &g->values[n->out[k]], rlx_session_value_data(s, n->out[k]));
  return RLX_OK;
}

/* In topological order: a node is tainted when its value is out of
 * tolerance, or when it was not compared (a tuple-valued node, a sampled-out
 * one) and an input is tainted, so error is traced through unchecked nodes.
 * An out-of-tolerance node with a tainted input is a propagator; without,
 * a culprit. taint[i] holds the culprit an error came from, or -1. */
static rlx_status classify(loc_ctx *c) {
  const rlx_program_info *pi = c->m->graph.prog;
  int32_t *taint = rlx_malloc(sizeof(int32_t) * (size_t)(pi->n_aten_nodes + 1));
  if (!taint) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  rlx_localize_report *rep = c->rep;
  for (int32_t i = 0; i < pi->n_aten_nodes; i++) {
    rlx_loc_node *ln = &rep->nodes[i];
    const rlx_fx_node *f = &pi->fx[i];
    int32_t src = -1;
    for (int32_t k = 0; k < f->n_in && src < 0; k++)
      if (f->in[k] < i && taint[f->in[k]] >= 0) src = f->in[k];
    ln->source = -1;
    taint[i] = -1;
    if (ln->status == RLX_LOC_UNCHECKED) {
      taint[i] = src >= 0 ? taint[src] : -1;
      continue;
    }
    if (ln->status != RLX_LOC_CULPRIT) continue;
    rep->n_bad++;
    if (src >= 0) {
      ln->status = RLX_LOC_PROPAGATOR;
      ln->source = src;
      taint[i] = taint[src];
    } else {
      rep->n_culprits++;
      taint[i] = i;
      if (rep->first_culprit < 0) rep->first_culprit = i;
    }
  }
  rlx_free(taint);
  return RLX_OK;
}

void rlx_localize_free(rlx_localize_report *rep) {
  rlx_free(rep->nodes);
  memset(rep, 0, sizeof *rep);
}

static rlx_status bind_all(rlx_session *s, const rlx_model *m, const rlx_tensor_view *inputs) {
  for (int i = 0; i < rlx_model_input_count(m); i++) {
    rlx_io_info info;
    rlx_model_input_info(m, i, &info);
    rlx_status st = rlx_session_bind_input(s, info.name, &inputs[i]);
    if (st) return st;
  }
  return RLX_OK;
}

rlx_status rlx_localize(const rlx_model *m, const rlx_tensor_view *inputs, const rlx_st_file *inter,
                        const rlx_parity_opts *o, rlx_localize_report *rep) {
  memset(rep, 0, sizeof *rep);
  rep->first_culprit = -1;
  rlx_compile_options opts;
  rlx_compile_options_init(&opts);
  opts.reference_kernels = 1;
  opts.no_passes = 1; /* every FX node's value, exactly as lowered (fusion moves values) */
  rlx_compiled *cc = NULL;
  rlx_session *s = NULL;
  loc_ctx c = {.m = m, .inter = inter, .o = o, .rep = rep};
  rep->n = m->graph.prog ? m->graph.prog->n_aten_nodes : 0;
  rlx_status st = rlx_model_compile(m, &opts, &cc);
  if (!st) st = rlx_session_create(cc, &s);
  if (!st) st = bind_all(s, m, inputs);
  if (st) goto done;
  const rlx_graph *g = &cc->graph;
  rep->nodes = rlx_calloc((size_t)(rep->n + 1), sizeof *rep->nodes);
  c.first_fx = rlx_malloc(sizeof(int32_t) * (size_t)(g->n_values + 1));
  c.next_fx = rlx_malloc(sizeof(int32_t) * (size_t)(rep->n + 1));
  if (!rep->nodes || !c.first_fx || !c.next_fx) {
    st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory localizing");
    goto done;
  }
  for (int32_t v = 0; v < g->n_values; v++) c.first_fx[v] = -1;
  for (int32_t fx = rep->n - 1; fx >= 0; fx--) { /* chains in FX order */
    int32_t v = fx < g->n_fx_values ? g->fx_values[fx] : -1;
    c.next_fx[fx] = -1;
    if (v < 0) continue;
    c.next_fx[fx] = c.first_fx[v];
    c.first_fx[v] = fx;
  }
  s->after_node = loc_hook;
  s->after_node_ctx = &c;
  rlx_session_reset_state(s); /* the reference is one run from the initial state */
  if ((st = rlx_session_run(s))) goto done;
  /* values not produced by a node: folded constants, weights, inputs */
  for (int32_t fx = 0; fx < rep->n; fx++) {
    int32_t v = fx < g->n_fx_values ? g->fx_values[fx] : -1;
    if (v < 0 || rep->nodes[fx].status != RLX_LOC_UNCHECKED) continue;
    const rlx_value *val = &rlx_session_graph(s)->values[v];
    if (val->kind != RLX_VALUE_NODE) compare_fx(&c, fx, val, rlx_session_value_data(s, v));
  }
  st = classify(&c);
done:
  rlx_free(c.first_fx);
  rlx_free(c.next_fx);
  rlx_session_destroy(s);
  rlx_compiled_destroy(cc);
  if (st) rlx_localize_free(rep);
  return st;
}

/* ---- kernel bisection ---- */

typedef struct bisect_ctx {
  const rlx_parity_opts *o;
  rlx_bisect_result *res;
} bisect_ctx;

static rlx_status bisect_hook(void *ctx, const rlx_session *s, int32_t i) {
  bisect_ctx *b = ctx;
  const rlx_graph *ig = rlx_session_graph(s); /* concrete shapes and params at this binding */
  const rlx_node *n = &ig->nodes[i];
  const rlx_op_vtable *vt = rlx_op_table[n->op].vt;
  if (b->res->node >= 0 || s->cur->plan.skip[i] || rlx_session_node_is_reference(s, i)) return RLX_OK;
  int32_t nin = RLX_MAX(n->n_in, rlx_op_table[n->op].max_in);
  const rlx_tensor_view *in = &s->views[s->view_at[i]], *out = in + nin;
  rlx_tensor_view ref[4];
  void *buf[4] = {0}, *scratch = NULL;
  size_t sb = vt->scratch ? vt->scratch(ig, n) : 0;
  rlx_status st = RLX_OK;
  for (int32_t k = 0; k < n->n_out; k++) {
    ref[k] = out[k];
    size_t bytes = (size_t)rlx_view_numel(&out[k]) * rlx_dtype_size(out[k].dtype);
    if (!(buf[k] = rlx_aligned_alloc(bytes))) st = RLX_ERR_OUT_OF_MEMORY;
    ref[k].data = buf[k];
  }
  if (sb && !(scratch = rlx_aligned_alloc(sb))) st = RLX_ERR_OUT_OF_MEMORY;
  if (st) rlx_errorf(st, "out of memory bisecting kernels");
  if (!st) st = vt->ref(n, in, ref, scratch); /* same inputs, reference kernel */
  b->res->checked++;
  for (int32_t k = 0; !st && k < n->n_out && b->res->node < 0; k++) {
    rlx_parity_result r;
    rlx_parity_compare(&out[k], &ref[k], b->o, &r);
    if (!r.pass) b->res->node = i, b->res->r = r;
  }
  for (int32_t k = 0; k < n->n_out; k++) rlx_aligned_free(buf[k]);
  rlx_aligned_free(scratch);
  return st;
}

rlx_status rlx_kernel_bisect(const rlx_compiled *c, const rlx_tensor_view *inputs, const rlx_parity_opts *o,
                             rlx_bisect_result *res) {
  memset(res, 0, sizeof *res);
  res->node = -1;
  rlx_session *s = NULL;
  bisect_ctx b = {.o = o, .res = res};
  rlx_status st = rlx_session_create(c, &s);
  if (!st) st = bind_all(s, c->model, inputs);
  if (!st) {
    s->after_node = bisect_hook;
    s->after_node_ctx = &b;
    rlx_session_reset_state(s);
    st = rlx_session_run(s);
  }
  rlx_session_destroy(s);
  return st;
}
