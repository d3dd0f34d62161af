/*
 * cmd_bench.c — `rlx bench DIR`: latency of rlx_session_run over --iters runs
 * after --warmup runs, on the reference inputs (or zeros when the export has
 * none). Prints min, median, p90, mean.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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
  for (int i = 0; i < argc; i++) {
    int r = cli_compile_flag("bench", argc, argv, &i, &copts);
    if (r < 0) return 2;
    if (r) continue;
    if (!strcmp(argv[i], "--iters") || !strcmp(argv[i], "--warmup")) {
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
  if (!dir) return cli_usage("bench", "usage: rlx bench DIR [--iters N] [--warmup N] [--threads N]");
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
  }
  free(t);
  cli_close(&c);
  return rc;
}
