/*
 * cmd_verify.c — `rlx verify DIR`: runs the model on the reference inputs
 * and compares every output with PyTorch's (parity rules in
 * src/check/parity.h). Exit 0 on PASS, 1 on FAIL, 2 on error.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "check/parity.h"
#include "cli.h"

typedef struct verify_opts {
  rlx_compile_options copts;
  rlx_parity_opts popts;
  const char *json;
  int repeat;
  bool localize, no_arbiter;
} verify_opts;

static int parse(int argc, char **argv, verify_opts *o, const char **dir) {
  *o = (verify_opts){0};
  rlx_compile_options_init(&o->copts);
  o->popts = (rlx_parity_opts){-1, -1, -1};
  o->repeat = 1;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int r = cli_compile_flag("verify", argc, argv, &i, &o->copts);
    if (r < 0) return 2;
    if (r) continue;
    if (!strcmp(a, "--localize") || !strcmp(a, "--no-arbiter")) {
      *(a[2] == 'l' ? &o->localize : &o->no_arbiter) = true;
      continue;
    }
    double *d = !strcmp(a, "--atol") ? &o->popts.atol : !strcmp(a, "--rtol") ? &o->popts.rtol
                : !strcmp(a, "--cosine") ? &o->popts.cosine : NULL;
    if (d || !strcmp(a, "--json") || !strcmp(a, "--repeat")) {
      if (i + 1 >= argc) return cli_usage("verify", "%s needs a value", a);
      const char *v = argv[++i];
      char *end;
      if (!strcmp(a, "--json")) o->json = v;
      else if (!strcmp(a, "--repeat")) {
        o->repeat = (int)strtol(v, &end, 10);
        if (*end || o->repeat < 1) return cli_usage("verify", "--repeat %s: expected a positive count", v);
      } else {
        *d = strtod(v, &end);
        if (*end || *d < 0) return cli_usage("verify", "%s %s: expected a non-negative number", a, v);
      }
      continue;
    }
    if (a[0] == '-') return cli_usage("verify", "unknown option %s", a);
    if (*dir) return cli_usage("verify", "more than one directory given");
    *dir = a;
  }
  if (!*dir) return cli_usage("verify", "usage: rlx verify DIR [--threads N] [--reference-kernels] "
                              "[--localize] [--atol X] [--rtol X] [--cosine X] [--no-arbiter] [--json FILE] [--repeat N]");
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Compares every output of the last run with `<prefix>out::<i>` (and the
 * float64 arbiter's `<prefix>out64::<i>`), printing a line per output and
 * adding it to `outs`. Returns 0, or 2 on a missing reference. */
static int compare_outputs(cli_ctx *c, const verify_opts *o, const char *prefix, cJSON *outs, bool *pass,
                           int *compared) {
  const rlx_model *m = c->model;
  for (int i = 0; i < rlx_model_output_count(m); i++) {
    char key[64];
    snprintf(key, sizeof key, "%sout::%d", prefix, i);
    const rlx_st_tensor *t = rlx_st_find(&c->ref, key);
    rlx_tensor_view got;
    rlx_session_output(c->session, i, &got);
    if (!t) {
      if (m->graph.prog->output_const[i]) continue; /* non-tensor output */
      fprintf(stderr, "rlx verify: error: %s has no '%s' for output %d\n", c->ref.path, key, i);
      return 2;
    }
    rlx_tensor_view ref = {.data = (void *)t->data, .dtype = t->dtype, .rank = t->shape.rank};
    memcpy(ref.dims, t->shape.dims, sizeof ref.dims);
    rlx_parity_result r;
    rlx_parity_compare(&got, &ref, &o->popts, &r);
    snprintf(key, sizeof key, "%sout64::%d", prefix, i);
    const rlx_st_tensor *t64 = r.pass || o->no_arbiter ? NULL : rlx_st_find(&c->ref, key);
    if (t64) { /* the exporter's float64 run arbitrates a tolerance failure */
      rlx_tensor_view ref64 = {.data = (void *)t64->data, .dtype = t64->dtype, .rank = t64->shape.rank};
      memcpy(ref64.dims, t64->shape.dims, sizeof ref64.dims);
      rlx_parity_arbitrate(&got, &ref, &ref64, &o->popts, &r);
    }
    *pass &= r.pass;
    (*compared)++;
    char shp[128];
    rlx_shape gs = {.rank = got.rank};
    memcpy(gs.dims, got.dims, sizeof gs.dims);
    printf("out[%d] %s%s: cosine=%.9f max_abs=%.3e max_rel=%.3e (%lld elements)  %s\n", i,
           rlx_dtype_name(got.dtype), rlx_shape_str(&gs, shp, sizeof shp), r.cosine, r.max_abs,
           r.max_rel, (long long)r.numel, !r.pass ? "FAIL" : r.arbitrated ? "ok (float64 arbiter)" : "ok");
    if (r.reason[0]) printf("       %s\n", r.reason);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "index", i);
    cJSON_AddStringToObject(j, "dtype", rlx_dtype_name(got.dtype));
    cJSON_AddNumberToObject(j, "cosine", r.cosine);
    cJSON_AddNumberToObject(j, "max_abs_err", r.max_abs);
    cJSON_AddNumberToObject(j, "max_rel_err", r.max_rel);
    cJSON_AddNumberToObject(j, "numel", (double)r.numel);
    cJSON_AddNumberToObject(j, "mismatches", (double)r.n_mismatch);
    cJSON_AddBoolToObject(j, "pass", r.pass);
    if (r.reason[0]) cJSON_AddStringToObject(j, "reason", r.reason);
    if (r.arbitrated) {
      cJSON_AddBoolToObject(j, "arbitrated", true);
      cJSON_AddNumberToObject(j, "err64_rlx", r.err64_rlx);
      cJSON_AddNumberToObject(j, "err64_torch", r.err64_torch);
    }
    cJSON_AddItemToArray(outs, j);
  }
  return 0;
}

int cmd_verify(int argc, char **argv) {
  verify_opts o;
  const char *dir = NULL;
  int rc = parse(argc, argv, &o, &dir);
  if (rc) return rc;
  cli_ctx c = {.cmd = "verify"};
  if ((rc = cli_open(&c, dir, &o.copts)) || (rc = cli_open_reference(&c, true)) ||
      (rc = cli_bind_reference_inputs(&c))) {
    cli_close(&c);
    return rc;
  }
  const rlx_model *m = c.model;
  const rlx_program_info *pi = m->graph.prog;
  printf("model:  %s (%s, decomposition %s)\n", pi->model_name, pi->producer[0] ? pi->producer : "?",
         pi->decomposition[0] ? pi->decomposition : "?");
  printf("graph:  %d aten nodes -> %d rlx nodes (%d after passes), %d weights\n", pi->n_aten_nodes,
         m->graph.n_nodes, c.compiled->graph.n_nodes, pi->n_weights);
  double *times = calloc((size_t)o.repeat, sizeof *times);
  for (int r = 0; r < o.repeat; r++) {
    /* a stateful program's reference is one run from the initial state */
    rlx_session_reset_state(c.session);
    double t0 = cli_now_ms();
    if (rlx_session_run(c.session)) {
      free(times);
      rc = cli_error(&c, "run failed");
      cli_close(&c);
      return rc;
    }
    times[r] = cli_now_ms() - t0;
  }
  qsort(times, (size_t)o.repeat, sizeof *times, cmp_double);
  double run_ms = times[o.repeat / 2];
  char b1[32], b2[32], b3[32];
  printf("time:   load %s, compile %s, run %s%s (cpu, %s kernels)\n", cli_fmt_ms(c.load_ms, b1, sizeof b1),
         cli_fmt_ms(c.compile_ms, b2, sizeof b2), cli_fmt_ms(times[o.repeat / 2], b3, sizeof b3),
         o.repeat > 1 ? " median" : "", o.copts.reference_kernels ? "reference" : "fast");
  free(times);

  cJSON *root = cJSON_CreateObject(), *outs = cJSON_AddArrayToObject(root, "outputs");
  cJSON_AddStringToObject(root, "model", pi->model_name);
  cJSON_AddNumberToObject(root, "load_ms", c.load_ms);
  cJSON_AddNumberToObject(root, "compile_ms", c.compile_ms);
  cJSON_AddNumberToObject(root, "run_ms", run_ms);
  cJSON_AddNumberToObject(root, "aten_nodes", pi->n_aten_nodes);
  cJSON_AddNumberToObject(root, "rlx_nodes", c.compiled->graph.n_nodes);
  bool pass = true;
  int compared = 0;
  rc = compare_outputs(&c, &o, "", outs, &pass, &compared);
  if (rc) {
    cJSON_Delete(root);
    cli_close(&c);
    return rc;
  }
  /* the reference data of more bindings (rlx.export --reference-shapes) */
  cJSON *bindings = NULL;
  for (int k = 1; k < 1000; k++) {
    char prefix[32];
    snprintf(prefix, sizeof prefix, "b%d/", k);
    if (!cli_reference_has_binding(&c, prefix)) break;
    if (!bindings) bindings = cJSON_AddArrayToObject(root, "bindings");
    cJSON *b = cJSON_CreateObject(), *bo = cJSON_AddArrayToObject(b, "outputs");
    cJSON_AddNumberToObject(b, "k", k);
    cJSON_AddItemToArray(bindings, b);
    if ((rc = cli_bind_reference_inputs_at(&c, prefix))) break;
    rlx_session_reset_state(c.session);
    if (rlx_session_run(c.session)) {
      rc = cli_error(&c, "run failed");
      break;
    }
    printf("binding %d:", k);
    cJSON *vals = cJSON_AddObjectToObject(b, "values"); /* apart from "k" and "pass": symbols may be named so */
    for (int s = 0; s < rlx_model_symbol_count(m); s++) {
      rlx_symbol_info si;
      rlx_model_symbol_info(m, s, &si);
      printf("%s %s=%lld", s ? "," : "", si.name, (long long)c.session->cur->syms[s]);
      cJSON_AddNumberToObject(vals, si.name, (double)c.session->cur->syms[s]);
    }
    printf("\n");
    bool bpass = true;
    int bcompared = 0;
    if ((rc = compare_outputs(&c, &o, prefix, bo, &bpass, &bcompared))) break;
    cJSON_AddBoolToObject(b, "pass", bpass);
    pass &= bpass;
  }
  if (rc) {
    cJSON_Delete(root);
    cli_close(&c);
    return rc;
  }
  if (!compared) pass = false, printf("no tensor outputs to compare\n");
  printf("parity: %s\n", pass ? "PASS" : "FAIL");
  cJSON_AddBoolToObject(root, "pass", pass);
  rc = pass ? 0 : 1;
  if (o.localize) {
    int lrc = cli_localize(&c, &o.popts, pass, root);
    if (lrc) rc = lrc;
  }
  if (o.json) {
    char *text = cJSON_Print(root);
    FILE *f = fopen(o.json, "w");
    if (!f || !text || fputs(text, f) < 0) {
      fprintf(stderr, "rlx verify: error: cannot write %s\n", o.json);
      rc = 2;
    }
    if (f) fclose(f);
    free(text);
  }
  cJSON_Delete(root);
  cli_close(&c);
  return rc;
}
