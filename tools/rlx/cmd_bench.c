/*
 * cmd_bench.c — `rlx bench DIR`: latency of rlx_session_run over --iters runs
 * after --warmup runs, on the reference inputs (or zeros when the export has
 * none). Prints min, median, p90, mean.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* --profile: time per node (between consecutive after-node hooks). */
typedef struct profile {
  double last, *node_ms;
} profile;

static rlx_status profile_hook(void *ctx, const rlx_session *s, int32_t node) {
  (void)s;
  profile *p = ctx;
  double t = cli_now_ms();
  p->node_ms[node] += t - p->last;
  p->last = t;
  return RLX_OK;
}

static void print_profile(const rlx_compiled *c, const profile *p, long iters) {
  const rlx_graph *g = &c->graph;
  double by_op[RLX_OP_COUNT] = {0}, total = 0;
  int count[RLX_OP_COUNT] = {0};
  for (int32_t i = 0; i < g->n_nodes; i++) {
    by_op[g->nodes[i].op] += p->node_ms[i] / (double)iters;
    count[g->nodes[i].op]++;
    total += p->node_ms[i] / (double)iters;
  }
  printf("profile (per run, by rlx op; kernels as chosen at compile):\n");
  for (int pass = 0; pass < RLX_OP_COUNT; pass++) { /* largest first */
    int best = -1;
    for (int o = 0; o < RLX_OP_COUNT; o++)
      if (count[o] && (best < 0 || by_op[o] > by_op[best])) best = o;
    if (best < 0) break;
    printf("  %-16s %4d nodes %9.3f ms %5.1f%%\n", rlx_op_table[best].name, count[best], by_op[best],
           total > 0 ? 100.0 * by_op[best] / total : 0.0);
    count[best] = 0;
  }
  printf("slowest nodes:\n");
  bool *shown = calloc((size_t)g->n_nodes + 1, 1);
  for (int k = 0; k < 10 && shown; k++) {
    int32_t best = -1;
    for (int32_t i = 0; i < g->n_nodes; i++)
      if (!shown[i] && (best < 0 || p->node_ms[i] > p->node_ms[best])) best = i;
    if (best < 0) break;
    shown[best] = true;
    char params[256];
    rlx_node_params_str(&g->nodes[best], params, sizeof params);
    printf("  %9.3f ms  %-24s %-10s %-28s %s\n", p->node_ms[best] / (double)iters, g->nodes[best].label,
           rlx_op_table[g->nodes[best].op].name, c->kernels[best].name, params);
  }
  free(shown);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int bind_zeros(cli_ctx *c) {
  for (int i = 0; i < rlx_model_input_count(c->model); i++) {
    rlx_io_info info;
    rlx_model_input_info(c->model, i, &info);
    rlx_tensor_view v = {.dtype = info.dtype, .rank = info.rank};
    memcpy(v.dims, info.dims, sizeof v.dims);
    size_t n = (size_t)rlx_view_numel(&v) * rlx_dtype_size(v.dtype);
    v.data = calloc(n ? n : 1, 1);
    int rc = v.data ? cli_bind_copy(c, i, &v, "zeros") : cli_error(c, "out of memory");
    free(v.data);
    if (rc) return rc;
  }
  return 0;
}

int cmd_bench(int argc, char **argv) {
  rlx_compile_options copts;
  rlx_compile_options_init(&copts);
  const char *dir = NULL;
  long iters = 20, warmup = 3;
  bool prof = false;
  for (int i = 0; i < argc; i++) {
    int r = cli_compile_flag("bench", argc, argv, &i, &copts);
    if (r < 0) return 2;
    if (r) continue;
    if (!strcmp(argv[i], "--profile")) {
      prof = true;
    } else if (!strcmp(argv[i], "--iters") || !strcmp(argv[i], "--warmup")) {
      if (i + 1 >= argc) return cli_usage("bench", "%s needs a value", argv[i]);
      char *end;
      long v = strtol(argv[i + 1], &end, 10);
      if (*end || v < 0 || v > 1000000) return cli_usage("bench", "%s %s: expected a count", argv[i], argv[i + 1]);
      if (!strcmp(argv[i], "--iters")) iters = v > 0 ? v : 1;
      else warmup = v;
      i++;
    } else if (argv[i][0] == '-') {
      return cli_usage("bench", "unknown option %s", argv[i]);
    } else if (!dir) {
      dir = argv[i];
    } else {
      return cli_usage("bench", "more than one directory given");
    }
  }
  if (!dir) return cli_usage("bench", "usage: rlx bench DIR [--iters N] [--warmup N] [--threads N] [--profile]");
  cli_ctx c = {.cmd = "bench"};
  int rc = cli_open(&c, dir, &copts);
  if (!rc) rc = cli_open_reference(&c, false);
  if (!rc) rc = c.has_ref ? cli_bind_reference_inputs(&c) : bind_zeros(&c);
  double *t = rc ? NULL : calloc((size_t)iters, sizeof *t);
  for (long i = 0; !rc && i < warmup + iters; i++) {
    double t0 = cli_now_ms();
    if (rlx_session_run(c.session)) rc = cli_error(&c, "run failed");
    if (i >= warmup) t[i - warmup] = cli_now_ms() - t0;
  }
  profile pr = {0};
  if (!rc && prof) { /* extra runs with the per-node hook (its cost stays out of the latency above) */
    pr.node_ms = calloc((size_t)c.compiled->graph.n_nodes + 1, sizeof(double));
    c.session->after_node = profile_hook;
    c.session->after_node_ctx = &pr;
    for (long i = 0; !rc && i < iters; i++) {
      pr.last = cli_now_ms();
      if (rlx_session_run(c.session)) rc = cli_error(&c, "run failed");
    }
    c.session->after_node = NULL;
  }
  if (!rc) {
    qsort(t, (size_t)iters, sizeof *t, cmp_double);
    double mean = 0;
    for (long i = 0; i < iters; i++) mean += t[i] / (double)iters;
    char a[32], b[32], d[32], e[32];
    printf("model: %s  (%d rlx nodes, %s inputs, %ld iterations after %ld warm-up)\n",
           c.model->ir.model_name, c.compiled->graph.n_nodes, c.has_ref ? "reference" : "zero", iters, warmup);
    printf("latency: min %s  median %s  p90 %s  mean %s\n", cli_fmt_ms(t[0], a, sizeof a),
           cli_fmt_ms(t[iters / 2], b, sizeof b), cli_fmt_ms(t[(iters * 9) / 10 < iters ? (iters * 9) / 10 : iters - 1], d, sizeof d),
           cli_fmt_ms(mean, e, sizeof e));
    printf("memory: arena %.2f MiB (activations %.2f MiB, scratch %.2f MiB)\n",
           (double)c.compiled->plan.arena_size / 1048576.0, (double)c.compiled->plan.values_size / 1048576.0,
           (double)c.compiled->plan.scratch_size / 1048576.0);
    if (prof) print_profile(c.compiled, &pr, iters);
  }
  free(pr.node_ms);
  free(t);
  cli_close(&c);
  return rc;
}
