/*
 * cmd_inspect.c — `rlx inspect DIR`: the aten op histogram, the lowered rlx
 * graph (before and after passes) as a per-node table, the memory plan, and
 * optionally a Graphviz picture. `--check` only imports and lowers (the
 * exporter's auto-decompose loop uses it: exit 0, or 2 with the error, which
 * lists every unsupported op).
 */
#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli.h"
#include "ir/print.h"

extern char **environ;

typedef struct hist {
  const char *name;
  int count;
} hist;

static int cmp_hist(const void *a, const void *b) {
  const hist *x = a, *y = b;
  return x->count != y->count ? y->count - x->count : strcmp(x->name, y->name);
}

static void print_hist(const char *title, const char **names, int n) {
  hist *h = calloc((size_t)n + 1, sizeof *h);
  int nh = 0;
  for (int i = 0; i < n; i++) {
    int j = 0;
    while (j < nh && strcmp(h[j].name, names[i])) j++;
    if (j == nh) h[nh++] = (hist){names[i], 0};
    h[j].count++;
  }
  qsort(h, (size_t)nh, sizeof *h, cmp_hist);
  printf("%s (%d nodes, %d distinct):\n", title, n, nh);
  for (int i = 0; i < nh; i++) printf("  %5d  %s\n", h[i].count, h[i].name);
  free(h);
}

/* --dot FILE: the DOT text, or, for FILE.svg / .png / .pdf, Graphviz's
 * rendering of it (`dot` from PATH, run without a shell; the DOT text is kept
 * next to it as FILE.dot). */
static int write_dot(const rlx_graph *g, const char *path) {
  const char *ext = strrchr(path, '.');
  const char *fmt = ext && (!strcmp(ext, ".svg") || !strcmp(ext, ".png") || !strcmp(ext, ".pdf")) ? ext + 1 : NULL;
  char dotpath[4096];
  snprintf(dotpath, sizeof dotpath, fmt ? "%s.dot" : "%s", path);
  FILE *f = fopen(dotpath, "w");
  if (!f) {
    fprintf(stderr, "rlx inspect: error: cannot write %s: %s\n", dotpath, strerror(errno));
    return 2;
  }
  rlx_graph_dot(g, f);
  if (fclose(f)) {
    fprintf(stderr, "rlx inspect: error: writing %s: %s\n", dotpath, strerror(errno));
    return 2;
  }
  if (!fmt) {
    printf("\ngraph written to %s (Graphviz DOT; --dot FILE.svg or .png renders it)\n", path);
    return 0;
  }
  char tflag[16];
  snprintf(tflag, sizeof tflag, "-T%s", fmt);
  char *args[] = {"dot", tflag, "-o", (char *)path, dotpath, NULL};
  pid_t pid;
  int err = posix_spawnp(&pid, "dot", NULL, NULL, args, environ);
  if (err) {
    fprintf(stderr, "rlx inspect: error: cannot render %s: Graphviz's `dot` is not on PATH (%s; apt-get install "
            "graphviz); the DOT text is in %s\n", path, strerror(err), dotpath);
    return 2;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
    fprintf(stderr, "rlx inspect: error: `dot %s -o %s %s` failed (status %d)\n", tflag, path, dotpath,
            WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 2;
  }
  printf("\ngraph rendered to %s by Graphviz (DOT text: %s)\n", path, dotpath);
  return 0;
}

int cmd_inspect(int argc, char **argv) {
  const char *dir = NULL, *dot = NULL;
  bool check = false;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--check")) check = true;
    else if (!strcmp(argv[i], "--dot")) {
      if (i + 1 >= argc) return cli_usage("inspect", "--dot needs a file");
      dot = argv[++i];
    } else if (argv[i][0] == '-') return cli_usage("inspect", "unknown option %s", argv[i]);
    else if (!dir) dir = argv[i];
    else return cli_usage("inspect", "more than one directory given");
  }
  if (!dir) return cli_usage("inspect", "usage: rlx inspect DIR [--check] [--dot FILE]");
  cli_ctx c = {.cmd = "inspect"};
  int rc = cli_open(&c, dir, NULL);
  if (rc) {
    cli_close(&c);
    return rc;
  }
  const rlx_model *m = c.model;
  const rlx_graph *g = &c.compiled->graph;
  if (check) {
    printf("ok: %s lowers to %d rlx nodes\n", m->graph.prog->model_name, m->graph.n_nodes);
    cli_close(&c);
    return 0;
  }
  const rlx_program_info *pi = m->graph.prog;
  printf("model: %s\nproducer: %s\ndecomposition: %s\n", pi->model_name, pi->producer, pi->decomposition);
  for (int i = 0; i < rlx_model_symbol_count(m); i++) {
    rlx_symbol_info si;
    rlx_model_symbol_info(m, i, &si);
    printf("symbol %d: %s in [%lld, %lld] (example %lld)\n", i, si.name, (long long)si.min, (long long)si.max,
           (long long)si.hint);
  }
  for (int32_t i = 0; i < m->graph.n_guards; i++) {
    const rlx_guard *gd = &m->graph.guards[i];
    char l[128], r[128];
    printf("guard %d: %s %s %s (%s)\n", i, rlx_dim_str(&m->graph.syms, gd->lhs, l, sizeof l), rlx_rel_name(gd->rel),
           rlx_dim_str(&m->graph.syms, gd->rhs, r, sizeof r), gd->what && *gd->what ? gd->what : "torch.export");
  }
  for (int i = 0; i < rlx_model_input_count(m); i++) {
    rlx_io_info info;
    rlx_model_input_info(m, i, &info);
    char s[256];
    printf("input %d: %s %s%s\n", i, info.name, rlx_dtype_name(info.dtype),
           rlx_graph_shape_str(&m->graph, &m->graph.values[m->graph.inputs[i]].shape, s, sizeof s));
  }
  for (int i = 0; i < rlx_model_output_count(m); i++) {
    rlx_io_info info;
    rlx_model_output_info(m, i, &info);
    char s[256];
    printf("output %d: %s %s%s\n", i, info.name, rlx_dtype_name(info.dtype),
           rlx_graph_shape_str(&m->graph, &m->graph.values[m->graph.outputs[i]].shape, s, sizeof s));
  }
  const char **names = calloc((size_t)pi->n_aten_nodes + (size_t)g->n_nodes + 1, sizeof *names);
  for (int i = 0; i < pi->n_aten_nodes; i++) names[i] = pi->fx[i].op;
  print_hist("aten ops", names, pi->n_aten_nodes);
  for (int i = 0; i < g->n_nodes; i++) names[i] = rlx_op_table[g->nodes[i].op].name;
  print_hist("rlx ops after passes", names, g->n_nodes);
  int on_ref = 0;
  for (int i = 0; i < g->n_nodes; i++) { /* reshapes alias their input: no kernel runs */
    bool view = g->nodes[i].op == RLX_OP_RESHAPE;
    names[i] = view ? "(view, no kernel)" : c.compiled->kernels[i].name;
    on_ref += !view && rlx_kernel_is_reference(&c.compiled->kernels[i], &g->nodes[i]);
  }
  char title[96];
  snprintf(title, sizeof title, "kernels (%d on the reference kernel)", on_ref);
  print_hist(title, names, g->n_nodes);
  free(names);
  printf("lowered: %d rlx nodes; after passes (passes.def): %d\n", m->graph.n_nodes, g->n_nodes);
  printf("memory plan: arena %.3f MiB%s (activations %.3f MiB, scratch %.3f MiB)\n\n",
         (double)c.compiled->arena_size / 1048576.0, c.compiled->dynamic ? " for the largest binding" : "",
         (double)c.compiled->plan.values_size / 1048576.0, (double)c.compiled->max_scratch / 1048576.0);
  rlx_graph_print(g, stdout);
  if (dot) rc = write_dot(g, dot);
  cli_close(&c);
  return rc;
}
