/*
 * cmd_bench.c — `rlx bench DIR`: latency of rlx_session_run over --iters runs
 * after --warmup runs, on the reference inputs (or zeros when the export has
 * none). Prints min, median, p90, mean, and the CPU time per run.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* --profile: time per node (between consecutive after-node hooks): wall
 * time, or at one thread the process's CPU time (the same figure on a quiet
 * machine, and one that other processes taking the core do not inflate). */
typedef struct profile {
  bool cpu;
  double last, *node_ms;
  uint64_t last_regions, *node_regions; /* parallel regions (barriers) per node */
} profile;

/* CPU time of the whole process (every pool thread), in ms: at one thread a
 * figure that other processes taking the core do not inflate. */
static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static rlx_status profile_hook(void *ctx, const rlx_session *s, int32_t node) {
  profile *p = ctx;
  double t = p->cpu ? cpu_ms() : cli_now_ms();
  uint64_t r = rlx_threadpool_regions(s->tp);
  p->node_ms[node] += t - p->last;
  p->node_regions[node] += r - p->last_regions;
  p->last = t, p->last_regions = r;
  return RLX_OK;
}

static void print_profile(const rlx_session *s, const profile *p, long iters, long top) {
  const rlx_graph *g = rlx_session_graph(s);
  double by_op[RLX_OP_COUNT] = {0}, total = 0, reg_op[RLX_OP_COUNT] = {0}, regions = 0;
  int count[RLX_OP_COUNT] = {0};
  for (int32_t i = 0; i < g->n_nodes; i++) {
    by_op[g->nodes[i].op] += p->node_ms[i] / (double)iters;
    reg_op[g->nodes[i].op] += (double)p->node_regions[i] / (double)iters;
    count[g->nodes[i].op]++;
    total += p->node_ms[i] / (double)iters;
    regions += (double)p->node_regions[i] / (double)iters;
  }
  printf("profile (per run, by rlx op, %s; kernels as run at the last binding; barriers: parallel regions over the "
         "%d-thread pool, %.0f per run):\n", p->cpu ? "CPU time" : "wall time", rlx_threadpool_size(s->tp), regions);
  for (int pass = 0; pass < RLX_OP_COUNT; pass++) { /* largest first */
    int best = -1;
    for (int o = 0; o < RLX_OP_COUNT; o++)
      if (count[o] && (best < 0 || by_op[o] > by_op[best])) best = o;
    if (best < 0) break;
    printf("  %-16s %4d nodes %9.3f ms %5.1f%%  %6.0f barriers\n", rlx_op_table[best].name, count[best], by_op[best],
           total > 0 ? 100.0 * by_op[best] / total : 0.0, reg_op[best]);
    count[best] = 0;
  }
  printf("slowest nodes%s:\n", top >= g->n_nodes ? " (all)" : "");
  bool *shown = calloc((size_t)g->n_nodes + 1, 1);
  for (long k = 0; k < top && shown; k++) {
    int32_t best = -1;
    for (int32_t i = 0; i < g->n_nodes; i++)
      if (!shown[i] && (best < 0 || p->node_ms[i] > p->node_ms[best])) best = i;
    if (best < 0) break;
    shown[best] = true;
    char params[256], sh[128] = "";
    rlx_node_params_str(g, &g->nodes[best], params, sizeof params);
    if (g->nodes[best].n_out > 0) rlx_graph_shape_str(g, &g->values[g->nodes[best].out[0]].shape, sh, sizeof sh);
    printf("  %9.3f ms  %-24s %-10s %-28s -> %-18s %s\n", p->node_ms[best] / (double)iters, g->nodes[best].label,
           rlx_op_table[g->nodes[best].op].name, rlx_session_kernel_name(s, best), sh, params);
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

/* ---- bindings: --shape NAME=AxB, --binding 'NAME=AxB,NAME=C' ---- */

#define MAX_BINDINGS 16

typedef struct binding {
  int n;
  char names[RLX_MAX_RANK * 4][128];
  int32_t rank[RLX_MAX_RANK * 4];
  int64_t dims[RLX_MAX_RANK * 4][RLX_MAX_RANK];
  void **data;   /* per graph input: its buffer at this binding */
  double plan_ms; /* the first reshape to it: planning a new binding */
} binding;

/* Adds "NAME=AxBxC" (or "NAME=" for rank 0) to b. */
static int parse_shape(const char *spec, binding *b) {
  const char *eq = strchr(spec, '=');
  if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof b->names[0] || b->n >= (int)RLX_COUNTOF(b->names))
    return cli_usage("bench", "--shape %s: expected NAME=AxBxC", spec);
  snprintf(b->names[b->n], sizeof b->names[0], "%.*s", (int)(eq - spec), spec);
  const char *p = eq + 1;
  int r = 0;
  while (*p && *p != ',') {
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p || v < 0 || r >= RLX_MAX_RANK) return cli_usage("bench", "--shape %s: expected NAME=AxBxC", spec);
    b->dims[b->n][r++] = v;
    p = end;
    if (*p == 'x') p++;
  }
  b->rank[b->n++] = r;
  return 0;
}

/* The shape of every input at binding b: the given ones as given; the others
 * from the symbols the given ones determine (the rest at their hints). */
static int binding_shapes(cli_ctx *c, const binding *b, rlx_tensor_view *views) {
  const rlx_graph *g = &c->compiled->graph;
  const rlx_symtab *t = &g->syms;
  int64_t *syms = calloc((size_t)t->n_syms + 1, sizeof *syms);
  if (!syms) return cli_error(c, "out of memory");
  for (int32_t s = 0; s < t->n_syms; s++) syms[s] = t->syms[s].hint;
  bool *given = calloc((size_t)g->n_inputs + 1, sizeof *given);
  int rc = given ? 0 : cli_error(c, "out of memory");
  for (int k = 0; !rc && k < b->n; k++) {
    int32_t i = 0;
    while (i < g->n_inputs && strcmp(g->values[g->inputs[i]].name, b->names[k])) i++;
    if (i == g->n_inputs) {
      fprintf(stderr, "rlx bench: error: --shape: the model has no input named '%s'\n", b->names[k]);
      rc = 2;
      break;
    }
    given[i] = true;
    views[i].rank = b->rank[k];
    memcpy(views[i].dims, b->dims[k], sizeof views[i].dims);
    const rlx_shape *ms = &g->values[g->inputs[i]].shape;
    for (int d = 0; d < ms->rank && d < b->rank[k]; d++) {
      int32_t s = rlx_dim_symbol(t, ms->dims[d]);
      if (s >= 0) syms[s] = b->dims[k][d];
    }
  }
  for (int32_t i = 0; !rc && i < g->n_inputs; i++) {
    const rlx_value *v = &g->values[g->inputs[i]];
    views[i].dtype = v->dtype;
    if (given[i]) continue;
    views[i].rank = v->shape.rank;
    for (int d = 0; d < v->shape.rank; d++)
      if (rlx_dim_eval(t, v->shape.dims[d], syms, &views[i].dims[d])) rc = cli_error(c, "cannot size an input");
  }
  free(given);
  free(syms);
  return rc;
}

/* Input buffers for a binding: a reference input's values repeated over the
 * new shape (token ids stay valid ids, masks stay masks), else zeros. */
static int binding_data(cli_ctx *c, binding *b, const rlx_tensor_view *views) {
  int n_in = rlx_model_input_count(c->model);
  b->data = calloc((size_t)n_in + 1, sizeof *b->data);
  if (!b->data) return cli_error(c, "out of memory");
  for (int i = 0; i < n_in; i++) {
    rlx_io_info info;
    rlx_model_input_info(c->model, i, &info);
    size_t es = rlx_dtype_size(views[i].dtype), n = (size_t)rlx_view_numel(&views[i]) * es;
    if (!(b->data[i] = aligned_alloc(64, (n + 63) / 64 * 64 + 64))) return cli_error(c, "out of memory");
    memset(b->data[i], 0, n);
    char key[512];
    snprintf(key, sizeof key, "in::%s", info.name);
    const rlx_st_tensor *t = c->has_ref ? rlx_st_find(&c->ref, key) : NULL;
    if (t && t->nbytes)
      for (size_t o = 0; o < n; o += es) memcpy((char *)b->data[i] + o, (const char *)t->data + o % t->nbytes, es);
  }
  return 0;
}

static int bind_binding(cli_ctx *c, const binding *b, const rlx_tensor_view *views) {
  for (int i = 0; i < rlx_model_input_count(c->model); i++) {
    rlx_io_info info;
    rlx_model_input_info(c->model, i, &info);
    rlx_tensor_view v = views[i];
    v.data = b->data[i];
    if (rlx_session_bind_input(c->session, info.name, &v)) return cli_error(c, "cannot bind an input");
  }
  return 0;
}

int cmd_bench(int argc, char **argv) {
  rlx_compile_options copts;
  rlx_compile_options_init(&copts);
  const char *dir = NULL;
  long iters = 20, warmup = 3;
  bool prof = false;
  long top = 10;
  static binding bs[MAX_BINDINGS];
  int nb = 0;
  memset(bs, 0, sizeof bs);
  for (int i = 0; i < argc; i++) {
    int r = cli_compile_flag("bench", argc, argv, &i, &copts);
    if (r < 0) return 2;
    if (r) continue;
    if (!strcmp(argv[i], "--profile")) {
      prof = true;
    } else if (!strcmp(argv[i], "--shape") || !strcmp(argv[i], "--binding")) {
      if (i + 1 >= argc) return cli_usage("bench", "%s needs a value", argv[i]);
      bool sep = !strcmp(argv[i], "--binding");
      if ((sep || !nb) && nb >= MAX_BINDINGS) return cli_usage("bench", "at most %d bindings", MAX_BINDINGS);
      binding *b = &bs[sep || !nb ? nb++ : nb - 1];
      for (const char *p = argv[++i]; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (parse_shape(p, b)) return 2;
    } else if (!strcmp(argv[i], "--top")) {
      char *end;
      if (i + 1 >= argc) return cli_usage("bench", "--top needs a value");
      top = strtol(argv[++i], &end, 10);
      if (*end || top < 0 || top > 100000000) return cli_usage("bench", "--top %s: expected a count", argv[i]);
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
  if (!dir)
    return cli_usage("bench", "usage: rlx bench DIR [--iters N] [--warmup N] [--threads N] [--profile] [--top N] "
                     "[--shape NAME=AxB]... [--binding 'NAME=AxB,NAME=C']...");
  cli_ctx c = {.cmd = "bench"};
  int rc = cli_open(&c, dir, &copts);
  if (!rc) rc = cli_open_reference(&c, false);
  rlx_tensor_view views[MAX_BINDINGS][64];
  int n_in = rc ? 0 : rlx_model_input_count(c.model);
  if (!rc && nb && n_in > 64) rc = cli_usage("bench", "--shape on a model of more than 64 inputs");
  for (int k = 0; !rc && k < nb; k++) {
    memset(views[k], 0, sizeof views[k]);
    if (!(rc = binding_shapes(&c, &bs[k], views[k]))) rc = binding_data(&c, &bs[k], views[k]);
  }
  if (!rc && !nb) rc = c.has_ref ? cli_bind_reference_inputs(&c) : bind_zeros(&c);
  /* a new binding's planning time: each binding's first reshape */
  for (int k = 0; !rc && k < nb; k++) {
    if ((rc = bind_binding(&c, &bs[k], views[k]))) break;
    double t0 = cli_now_ms();
    if (rlx_session_reshape(c.session)) rc = cli_error(&c, "bad binding");
    bs[k].plan_ms = cli_now_ms() - t0;
  }
  double *t = rc ? NULL : calloc((size_t)iters, sizeof *t), *cpu = rc ? NULL : calloc((size_t)iters, sizeof *cpu);
  if (!rc && (!t || !cpu)) rc = cli_error(&c, "out of memory");
  for (long i = 0; !rc && i < warmup + iters; i++) {
    if (nb > 1 && (rc = bind_binding(&c, &bs[i % nb], views[i % nb]))) break; /* alternate: a new shape each run */
    if (nb == 1 && i == 0 && (rc = bind_binding(&c, &bs[0], views[0]))) break;
    double t0 = cli_now_ms(), c0 = cpu_ms();
    if (rlx_session_run(c.session)) rc = cli_error(&c, "run failed");
    if (i >= warmup) t[i - warmup] = cli_now_ms() - t0, cpu[i - warmup] = cpu_ms() - c0;
  }
  profile pr = {0};
  if (!rc && prof) { /* extra runs with the per-node hook (its cost stays out of the latency above) */
    pr.node_ms = calloc((size_t)c.compiled->graph.n_nodes + 1, sizeof(double));
    pr.node_regions = calloc((size_t)c.compiled->graph.n_nodes + 1, sizeof(uint64_t));
    if (!pr.node_ms || !pr.node_regions) rc = cli_error(&c, "out of memory");
    c.session->after_node = profile_hook;
    c.session->after_node_ctx = &pr;
    pr.cpu = rlx_threadpool_size(c.session->tp) == 1;
    for (long i = 0; !rc && i < iters; i++) {
      pr.last = pr.cpu ? cpu_ms() : cli_now_ms();
      pr.last_regions = rlx_threadpool_regions(c.session->tp);
      if (rlx_session_run(c.session)) rc = cli_error(&c, "run failed");
    }
    c.session->after_node = NULL;
  }
  if (!rc) {
    qsort(t, (size_t)iters, sizeof *t, cmp_double);
    qsort(cpu, (size_t)iters, sizeof *cpu, cmp_double);
    double mean = 0;
    for (long i = 0; i < iters; i++) mean += t[i] / (double)iters;
    char a[32], b[32], d[32], e[32];
    printf("model: %s  (%d rlx nodes, %s inputs, %ld iterations after %ld warm-up)\n", c.model->graph.prog->model_name,
           c.compiled->graph.n_nodes, nb ? "generated" : c.has_ref ? "reference" : "zero", iters, warmup);
    for (int k = 0; k < nb; k++) {
      printf("binding %d:", k + 1);
      for (int i = 0; i < n_in; i++) {
        rlx_io_info info;
        rlx_model_input_info(c.model, i, &info);
        rlx_shape sh = {.rank = views[k][i].rank};
        memcpy(sh.dims, views[k][i].dims, sizeof sh.dims);
        char buf[128];
        printf(" %s=%s", info.name, rlx_shape_str(&sh, buf, sizeof buf));
      }
      printf("  (planned in %s)\n", cli_fmt_ms(bs[k].plan_ms, a, sizeof a));
    }
    printf("latency%s: min %s  median %s  p90 %s  mean %s\n", nb > 1 ? " (bindings alternating)" : "",
           cli_fmt_ms(t[0], a, sizeof a), cli_fmt_ms(t[iters / 2], b, sizeof b),
           cli_fmt_ms(t[(iters * 9) / 10 < iters ? (iters * 9) / 10 : iters - 1], d, sizeof d),
           cli_fmt_ms(mean, e, sizeof e));
    printf("cpu time per run (all threads): min %s  median %s\n", cli_fmt_ms(cpu[0], a, sizeof a),
           cli_fmt_ms(cpu[iters / 2], b, sizeof b));
    const rlx_plan *pl = &c.session->cur->plan;
    printf("memory: arena %.2f MiB%s (this binding: activations %.2f MiB, scratch %.2f MiB)\n",
           (double)c.compiled->arena_size / 1048576.0, c.compiled->dynamic ? " at the bounds" : "",
           (double)pl->values_size / 1048576.0, (double)pl->scratch_size / 1048576.0);
    if (prof) print_profile(c.session, &pr, iters, top);
  }
  for (int k = 0; k < nb; k++) {
    for (int i = 0; bs[k].data && i < n_in; i++) free(bs[k].data[i]);
    free(bs[k].data);
  }
  free(pr.node_ms);
  free(pr.node_regions);
  free(t);
  free(cpu);
  cli_close(&c);
  return rc;
}
