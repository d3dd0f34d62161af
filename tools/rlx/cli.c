/*
 * cli.c — shared plumbing of the command-line tool (see cli.h).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

int cli_error(const cli_ctx *c, const char *msg) {
  fprintf(stderr, "rlx %s: error: %s%s%s\n", c->cmd, msg, rlx_last_error()[0] ? ": " : "", rlx_last_error());
  return 2;
}

int cli_usage(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "rlx %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n(see 'rlx --help')\n");
  va_end(ap);
  return 2;
}

double cli_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

const char *cli_fmt_ms(double ms, char *buf, size_t cap) {
  if (ms < 1) snprintf(buf, cap, "%.1f us", ms * 1e3);
  else if (ms < 1000) snprintf(buf, cap, "%.3f ms", ms);
  else snprintf(buf, cap, "%.3f s", ms / 1e3);
  return buf;
}

int cli_compile_flag(const char *cmd, int argc, char **argv, int *i, rlx_compile_options *o) {
  const char *a = argv[*i];
  if (!strcmp(a, "--reference-kernels")) return o->reference_kernels = 1, 1;
  if (!strcmp(a, "--no-passes")) return o->no_passes = 1, 1;
  if (!strcmp(a, "--max-memory")) {
    if (*i + 1 >= argc) return cli_usage(cmd, "%s needs a value", a), -1;
    const char *v = argv[++*i];
    char *end;
    double mb = strtod(v, &end);
    if (*end || !(mb > 0 && mb < 1e12)) return cli_usage(cmd, "--max-memory %s: expected megabytes > 0", v), -1;
    o->max_memory = (size_t)(mb * 1048576.0);
    return 1;
  }
  if (!strcmp(a, "--threads") || !strcmp(a, "--device")) {
    if (*i + 1 >= argc) return cli_usage(cmd, "%s needs a value", a), -1;
    const char *v = argv[++*i];
    if (!strcmp(a, "--threads")) {
      char *end;
      long t = strtol(v, &end, 10);
      if (*end || t < 0 || t > RLX_MAX_THREADS) return cli_usage(cmd, "--threads %s: expected 0..%d", v, RLX_MAX_THREADS), -1;
      o->threads = (int)t;
    } else if (!strcmp(v, "cpu")) {
      o->device = RLX_DEVICE_CPU;
    } else if (!strcmp(v, "cuda")) {
      o->device = RLX_DEVICE_CUDA;
    } else {
      return cli_usage(cmd, "--device %s: expected cpu or cuda", v), -1;
    }
    return 1;
  }
  return 0;
}

/* Weights this large make load and compile take seconds: say what is going on. */
#define CLI_PROGRESS_BYTES ((off_t)256 << 20)

int cli_load_compile(cli_ctx *c, const char *dir, const rlx_compile_options *opts) {
  c->dir = dir;
  struct stat sb;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    fprintf(stderr, "rlx %s: error: %s is not a directory (expected an export directory written by "
            "`python3 -m rlx.export`)\n", c->cmd, dir);
    return 2;
  }
  char wpath[4096];
  snprintf(wpath, sizeof wpath, "%s/weights.safetensors", dir);
  bool progress = stat(wpath, &sb) == 0 && sb.st_size >= CLI_PROGRESS_BYTES;
  if (progress) fprintf(stderr, "rlx %s: loading %s (%.0f MiB of weights) ...\n", c->cmd, dir, (double)sb.st_size / 1048576.0);
  double t0 = cli_now_ms();
  if (rlx_model_load(dir, NULL, &c->model)) return cli_error(c, "cannot load the model");
  double t1 = cli_now_ms();
  if (progress) fprintf(stderr, "rlx %s: loaded in %.1f s; compiling (passes, kernels, packing the weights) ...\n", c->cmd,
                        (t1 - t0) / 1e3);
  if (rlx_model_compile(c->model, opts, &c->compiled)) return cli_error(c, "cannot compile the model");
  double t2 = cli_now_ms();
  if (progress) fprintf(stderr, "rlx %s: compiled in %.1f s\n", c->cmd, (t2 - t1) / 1e3);
  c->load_ms = t1 - t0, c->compile_ms = t2 - t1;
  return 0;
}

int cli_open(cli_ctx *c, const char *dir, const rlx_compile_options *opts) {
  int rc = cli_load_compile(c, dir, opts);
  if (rc) return rc;
  if (rlx_session_create(c->compiled, &c->session)) return cli_error(c, "cannot create a session");
  c->inputs = calloc((size_t)rlx_model_input_count(c->model) + 1, sizeof(void *));
  if (!c->inputs) return cli_error(c, "out of memory");
  return 0;
}

int cli_open_reference(cli_ctx *c, bool required) {
  char path[4096];
  snprintf(path, sizeof path, "%s/reference.safetensors", c->dir);
  struct stat sb;
  if (stat(path, &sb) != 0) {
    if (!required) return 0;
    fprintf(stderr, "rlx %s: error: %s is missing (export without --no-reference to write it)\n", c->cmd, path);
    return 2;
  }
  static char keep[4096]; /* the safetensors struct borrows its path */
  snprintf(keep, sizeof keep, "%s", path);
  /* aligned copies of any misaligned tensor: the parity check reads in place */
  if (rlx_st_open(keep, &c->ref)) return cli_error(c, "cannot read the reference file");
  if (rlx_st_align(&c->ref)) {
    int rc = cli_error(c, "cannot read the reference file");
    rlx_st_close(&c->ref);
    return rc;
  }
  c->has_ref = true;
  return 0;
}

int cli_bind_copy(cli_ctx *c, int index, const rlx_tensor_view *src, const char *origin) {
  rlx_io_info info;
  rlx_model_input_info(c->model, index, &info);
  size_t n = (size_t)rlx_view_numel(src) * rlx_dtype_size(src->dtype);
  free(c->inputs[index]);
  c->inputs[index] = aligned_alloc(64, (n + 63) / 64 * 64 + 64);
  if (!c->inputs[index]) return cli_error(c, "out of memory");
  memcpy(c->inputs[index], src->data, n);
  rlx_tensor_view v = *src;
  v.data = c->inputs[index];
  if (rlx_session_bind_input(c->session, info.name, &v)) {
    char msg[256];
    snprintf(msg, sizeof msg, "cannot bind input '%s' from %s", info.name, origin);
    return cli_error(c, msg);
  }
  return 0;
}

int cli_bind_reference_inputs(cli_ctx *c) { return cli_bind_reference_inputs_at(c, ""); }

bool cli_reference_has_binding(const cli_ctx *c, const char *prefix) {
  if (!c->has_ref) return false;
  for (int i = 0; i < rlx_model_input_count(c->model); i++) {
    rlx_io_info info;
    rlx_model_input_info(c->model, i, &info);
    char key[512];
    snprintf(key, sizeof key, "%sin::%s", prefix, info.name);
    if (rlx_st_find(&c->ref, key)) return true;
  }
  return false;
}

int cli_bind_reference_inputs_at(cli_ctx *c, const char *prefix) {
  for (int i = 0; i < rlx_model_input_count(c->model); i++) {
    rlx_io_info info;
    rlx_model_input_info(c->model, i, &info);
    char key[512];
    snprintf(key, sizeof key, "%sin::%s", prefix, info.name);
    const rlx_st_tensor *t = rlx_st_find(&c->ref, key);
    if (!t) {
      fprintf(stderr, "rlx %s: error: %s has no tensor '%s' for input '%s'\n", c->cmd, c->ref.path, key, info.name);
      return 2;
    }
    rlx_tensor_view v = {.data = (void *)t->data, .dtype = t->dtype, .rank = t->shape.rank};
    memcpy(v.dims, t->shape.dims, sizeof v.dims);
    int rc = cli_bind_copy(c, i, &v, c->ref.path);
    if (rc) return rc;
  }
  return 0;
}

void cli_close(cli_ctx *c) {
  if (c->inputs && c->model)
    for (int i = 0; i < rlx_model_input_count(c->model); i++) free(c->inputs[i]);
  free(c->inputs);
  rlx_session_destroy(c->session);
  rlx_compiled_destroy(c->compiled);
  rlx_model_destroy(c->model);
  if (c->has_ref) rlx_st_close(&c->ref);
  memset(c, 0, sizeof *c);
}
