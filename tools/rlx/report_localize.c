/*
 * report_localize.c — the `--localize` part of `rlx verify`: runs the
 * localizer against intermediates.safetensors and, when the default run
 * failed but the reference kernels pass, the kernel bisection; prints what
 * it found and adds it to the JSON report.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check/localize.h"
#include "cli.h"

/* Views of the inputs the CLI bound (cli_ctx.inputs), in input order. */
static rlx_tensor_view *input_views(const cli_ctx *c) {
  int n = rlx_model_input_count(c->model);
  rlx_tensor_view *v = calloc((size_t)n + 1, sizeof *v);
  for (int i = 0; v && i < n; i++) {
    rlx_io_info info;
    rlx_model_input_info(c->model, i, &info);
    v[i] = (rlx_tensor_view){.data = c->inputs[i], .dtype = info.dtype, .rank = info.rank};
    memcpy(v[i].dims, info.dims, sizeof v[i].dims);
  }
  return v;
}

static void print_inputs(const rlx_model *m, int32_t fx) {
  const char *d = m->graph.prog->fx[fx].inputs_desc;
  printf("      inputs: %s\n", d && *d ? d : "(none)");
}

static cJSON *node_json(const rlx_model *m, int32_t fx, const rlx_loc_node *ln) {
  const rlx_fx_node *f = &m->graph.prog->fx[fx];
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "node", f->id);
  cJSON_AddStringToObject(j, "op", f->op);
  cJSON_AddNumberToObject(j, "cosine", ln->r.cosine);
  cJSON_AddNumberToObject(j, "max_abs_err", ln->r.max_abs);
  cJSON_AddNumberToObject(j, "tolerance", ln->r.tol);
  cJSON_AddNumberToObject(j, "mismatches", (double)ln->r.n_mismatch);
  if (ln->source >= 0) cJSON_AddStringToObject(j, "from", m->graph.prog->fx[ln->source].id);
  if (f->getitem_of >= 0) cJSON_AddStringToObject(j, "output_of", m->graph.prog->fx[f->getitem_of].id);
  return j;
}

static int localize_torch(cli_ctx *c, const rlx_tensor_view *in, const rlx_parity_opts *po, cJSON *json,
                          bool *ref_clean) {
  char path[4096];
  snprintf(path, sizeof path, "%s/intermediates.safetensors", c->dir);
  struct stat sb;
  *ref_clean = true;
  if (stat(path, &sb) != 0) {
    printf("localize: no intermediates.safetensors (export with --intermediates to compare node by node)\n");
    return 0;
  }
  rlx_st_file inter;
  if (rlx_st_open(path, &inter)) return cli_error(c, "cannot read intermediates.safetensors");
  if (rlx_st_align(&inter)) {
    int rc = cli_error(c, "cannot read intermediates.safetensors");
    rlx_st_close(&inter);
    return rc;
  }
  rlx_localize_report rep;
  if (rlx_localize(c->model, in, &inter, po, &rep)) {
    rlx_st_close(&inter);
    return cli_error(c, "localization run failed");
  }
  const rlx_model *m = c->model;
  printf("localize: reference kernels vs intermediates.safetensors: %d of %d nodes compared, %d out of tolerance\n",
         rep.n_compared, rep.n, rep.n_bad);
  cJSON *loc = cJSON_AddObjectToObject(json, "localize");
  cJSON_AddNumberToObject(loc, "compared", rep.n_compared);
  cJSON *culprits = cJSON_AddArrayToObject(loc, "culprits"), *props = cJSON_AddArrayToObject(loc, "propagators");
  if (rep.n_bad == 0) printf("  every compared node is within tolerance\n");
  int listed = 0;
  for (int32_t i = 0; i < rep.n; i++) {
    const rlx_loc_node *ln = &rep.nodes[i];
    if (ln->status == RLX_LOC_CULPRIT) {
      const rlx_fx_node *n = &m->graph.prog->fx[i];
      const rlx_fx_node *parent = n->getitem_of >= 0 ? &m->graph.prog->fx[n->getitem_of] : NULL;
      if (parent) { /* a getitem culprit: the multi-output node it reads is at fault */
        printf("  culprit: node '%s' (%s), output %lld of node '%s' (%s)\n", n->id, n->op, (long long)n->getitem_index,
               parent->id, parent->op);
        print_inputs(m, n->getitem_of);
      } else {
        printf("  culprit: node '%s' (%s)\n", n->id, n->op);
        print_inputs(m, i);
      }
      printf("      output %s: cosine=%.9f max_abs=%.3e (tolerance %.3e), %lld of %lld elements off%s%s\n",
             n->out_desc, ln->r.cosine, ln->r.max_abs, ln->r.tol, (long long)ln->r.n_mismatch, (long long)ln->r.numel,
             ln->r.reason[0] ? ": " : "", ln->r.reason);
      cJSON_AddItemToArray(culprits, node_json(m, i, ln));
    }
  }
  for (int32_t i = 0; i < rep.n; i++) {
    const rlx_loc_node *ln = &rep.nodes[i];
    if (ln->status != RLX_LOC_PROPAGATOR) continue;
    if (listed++ < 12)
      printf("%s%s", listed == 1 ? "  propagators (inherited the error): " : ", ", m->graph.prog->fx[i].id);
    cJSON_AddItemToArray(props, node_json(m, i, ln));
  }
  if (listed) printf("%s (%d)\n", listed > 12 ? ", ..." : "", listed);
  *ref_clean = rep.n_bad == 0;
  rlx_localize_free(&rep);
  rlx_st_close(&inter);
  return 0;
}

/* Whether the reference kernels alone reproduce torch's outputs. */
static int reference_outputs_pass(cli_ctx *c, const rlx_tensor_view *in, const rlx_parity_opts *po, bool *pass) {
  rlx_compile_options o;
  rlx_compile_options_init(&o);
  o.reference_kernels = 1;
  rlx_compiled *cc = NULL;
  rlx_session *s = NULL;
  *pass = false;
  if (rlx_model_compile(c->model, &o, &cc) || rlx_session_create(cc, &s)) {
    rlx_compiled_destroy(cc);
    return cli_error(c, "cannot build the reference-kernel run");
  }
  int rc = 0;
  for (int i = 0; i < rlx_model_input_count(c->model) && !rc; i++) {
    rlx_io_info info;
    rlx_model_input_info(c->model, i, &info);
    if (rlx_session_bind_input(s, info.name, &in[i])) rc = cli_error(c, "cannot bind an input");
  }
  if (!rc && rlx_session_run(s)) rc = cli_error(c, "the reference-kernel run failed");
  *pass = !rc;
  for (int i = 0; !rc && i < rlx_model_output_count(c->model); i++) {
    char key[64];
    snprintf(key, sizeof key, "out::%d", i);
    const rlx_st_tensor *t = rlx_st_find(&c->ref, key);
    if (!t) continue;
    rlx_tensor_view got, ref = {.data = (void *)t->data, .dtype = t->dtype, .rank = t->shape.rank};
    memcpy(ref.dims, t->shape.dims, sizeof ref.dims);
    rlx_session_output(s, i, &got);
    rlx_parity_result r;
    rlx_parity_compare(&got, &ref, po, &r);
    *pass &= r.pass;
  }
  rlx_session_destroy(s);
  rlx_compiled_destroy(cc);
  return rc;
}

int cli_localize(cli_ctx *c, const rlx_parity_opts *po, bool default_passed, cJSON *json) {
  rlx_tensor_view *in = input_views(c);
  if (!in) return cli_error(c, "out of memory");
  bool ref_clean;
  int rc = localize_torch(c, in, po, json, &ref_clean);
  if (!rc && !default_passed) {
    bool ref_pass;
    rc = reference_outputs_pass(c, in, po, &ref_pass);
    if (!rc && ref_pass) {
      rlx_bisect_result b;
      if (rlx_kernel_bisect(c->compiled, in, po, &b)) {
        rc = cli_error(c, "kernel bisection failed");
      } else if (b.node >= 0) {
        const rlx_node *n = &c->compiled->graph.nodes[b.node];
        printf("kernel bisection: the reference kernels pass, the default run does not; each of the %d nodes "
               "with a non-reference kernel was re-run with its reference kernel on the same inputs:\n"
               "  kernel at fault: node '%s' (%s, rlx %s, kernel %s)%s%s%s: max_abs=%.3e vs the reference "
               "kernel, cosine=%.9f\n", b.checked, n->label, n->aten ? n->aten : "-", rlx_op_table[n->op].name,
               c->compiled->kernels[b.node].name, n->fused ? ", a fused group with [" : "", n->fused ? n->fused : "",
               n->fused ? "]" : "", b.r.max_abs, b.r.cosine);
        cJSON *k = cJSON_AddObjectToObject(json, "kernel_at_fault");
        cJSON_AddStringToObject(k, "node", n->label);
        if (n->fused) cJSON_AddStringToObject(k, "fused", n->fused);
        cJSON_AddStringToObject(k, "kernel", c->compiled->kernels[b.node].name);
        cJSON_AddNumberToObject(k, "max_abs_err", b.r.max_abs);
      } else {
        printf("kernel bisection: every kernel agrees with its reference kernel on its inputs\n");
      }
    } else if (!rc) {
      printf("the reference kernels fail too: the divergence is in the op semantics, not a fast kernel%s\n",
             ref_clean ? "" : " (see the culprit above)");
    }
  }
  free(in);
  return rc;
}
