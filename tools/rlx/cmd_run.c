/*
 * cmd_run.c — `rlx run DIR --input NAME=FILE.npy ... --output-dir D`: runs
 * the model on inputs from .npy files (or from reference.safetensors for the
 * inputs not given) and writes each output as D/out_<i>.npy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "npy.h"

#define MAX_INPUTS 256

int cmd_run(int argc, char **argv) {
  rlx_compile_options copts;
  rlx_compile_options_init(&copts);
  const char *dir = NULL, *outdir = NULL, *specs[MAX_INPUTS];
  int nspec = 0;
  for (int i = 0; i < argc; i++) {
    int r = cli_compile_flag("run", argc, argv, &i, &copts);
    if (r < 0) return 2;
    if (r) continue;
    if (!strcmp(argv[i], "--input") || !strcmp(argv[i], "--output-dir")) {
      if (i + 1 >= argc) return cli_usage("run", "%s needs a value", argv[i]);
      if (!strcmp(argv[i], "--output-dir")) outdir = argv[++i];
      else if (nspec < MAX_INPUTS) specs[nspec++] = argv[++i];
      else return cli_usage("run", "too many --input options");
    } else if (argv[i][0] == '-') {
      return cli_usage("run", "unknown option %s", argv[i]);
    } else if (!dir) {
      dir = argv[i];
    } else {
      return cli_usage("run", "more than one directory given");
    }
  }
  if (!dir) return cli_usage("run", "usage: rlx run DIR [--input NAME=FILE.npy]... [--output-dir D]");
  cli_ctx c = {.cmd = "run"};
  int rc = cli_open(&c, dir, &copts);
  if (!rc) rc = cli_open_reference(&c, false);
  int n_in = rc ? 0 : rlx_model_input_count(c.model);
  bool *given = calloc((size_t)n_in + 1, sizeof(bool));
  for (int s = 0; !rc && s < nspec; s++) {
    const char *eq = strchr(specs[s], '=');
    if (!eq) {
      rc = cli_usage("run", "--input %s: expected NAME=FILE.npy", specs[s]);
      break;
    }
    char name[512];
    snprintf(name, sizeof name, "%.*s", (int)(eq - specs[s]), specs[s]);
    int idx = -1;
    for (int i = 0; i < n_in; i++) {
      rlx_io_info info;
      rlx_model_input_info(c.model, i, &info);
      if (!strcmp(info.name, name)) idx = i;
    }
    if (idx < 0) {
      fprintf(stderr, "rlx run: error: the model has no input named '%s'\n", name);
      rc = 2;
      break;
    }
    rlx_tensor_view v;
    if (rlx_npy_read(eq + 1, &v)) {
      rc = cli_error(&c, "cannot read an input");
      break;
    }
    rc = cli_bind_copy(&c, idx, &v, eq + 1);
    free(v.data);
    given[idx] = true;
  }
  for (int i = 0; !rc && i < n_in; i++) {
    if (given[i]) continue;
    rlx_io_info info;
    rlx_model_input_info(c.model, i, &info);
    char key[512];
    snprintf(key, sizeof key, "in::%s", info.name);
    const rlx_st_tensor *t = c.has_ref ? rlx_st_find(&c.ref, key) : NULL;
    if (!t) {
      fprintf(stderr, "rlx run: error: input '%s' is not given (use --input %s=FILE.npy)\n", info.name, info.name);
      rc = 2;
      break;
    }
    rlx_tensor_view v = {.data = (void *)t->data, .dtype = t->dtype, .rank = t->shape.rank};
    memcpy(v.dims, t->shape.dims, sizeof v.dims);
    fprintf(stderr, "rlx run: input '%s' taken from reference.safetensors\n", info.name);
    rc = cli_bind_copy(&c, i, &v, c.ref.path);
  }
  free(given);
  double t0 = cli_now_ms();
  if (!rc && rlx_session_run(c.session)) rc = cli_error(&c, "run failed");
  double t1 = cli_now_ms();
  if (!rc && outdir && mkdir(outdir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "rlx run: error: cannot create %s\n", outdir);
    rc = 2;
  }
  for (int i = 0; !rc && i < rlx_model_output_count(c.model); i++) {
    rlx_tensor_view v;
    rlx_session_output(c.session, i, &v);
    rlx_shape s = {.rank = v.rank};
    memcpy(s.dims, v.dims, sizeof s.dims);
    char shp[128], path[4096];
    printf("out[%d] %s%s", i, rlx_dtype_name(v.dtype), rlx_shape_str(&s, shp, sizeof shp));
    if (outdir) {
      snprintf(path, sizeof path, "%s/out_%d.npy", outdir, i);
      if (rlx_npy_write(path, &v)) rc = cli_error(&c, "cannot write an output");
      else printf(" -> %s", path);
    }
    printf("\n");
  }
  if (!rc) {
    char b[32];
    printf("run: %s\n", cli_fmt_ms(t1 - t0, b, sizeof b));
  }
  cli_close(&c);
  return rc;
}
