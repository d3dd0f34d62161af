/*
 * cli.h — shared plumbing of the `rlx` command-line tool: opening an export
 * directory (load, compile, session), binding reference inputs, timing, and
 * uniform error reporting ("rlx <cmd>: error: ...", exit status 2).
 */
#ifndef RLX_CLI_H
#define RLX_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "check/parity.h"
#include "import/safetensors.h"
#include "rlx.h"
#include "runtime/runtime.h"

typedef struct cli_ctx {
  const char *cmd;
  const char *dir;
  rlx_model *model;
  rlx_compiled *compiled;
  rlx_session *session;
  rlx_st_file ref;     /* reference.safetensors, when present */
  bool has_ref;
  void **inputs;       /* aligned copies of bound inputs, one per graph input */
  double load_ms, compile_ms;
} cli_ctx;

/* Prints "rlx <cmd>: error: <msg>: <rlx_last_error()>" and returns 2. */
int cli_error(const cli_ctx *c, const char *msg);
/* Prints a usage error and returns 2. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Loads and compiles DIR (progress on stderr for large weights). Returns 0 or an exit code. */
int cli_load_compile(cli_ctx *c, const char *dir, const rlx_compile_options *opts);
/* Loads and compiles DIR and creates a session. Returns 0 or an exit code. */
int cli_open(cli_ctx *c, const char *dir, const rlx_compile_options *opts);
/* Opens DIR/reference.safetensors if present (required: error when absent). */
int cli_open_reference(cli_ctx *c, bool required);
/* Binds input `index` from a tensor of the reference file (copied, aligned). */
int cli_bind_copy(cli_ctx *c, int index, const rlx_tensor_view *src, const char *origin);
/* Binds every input from `in::<id>` of the reference file. */
int cli_bind_reference_inputs(cli_ctx *c);
/* The same for the reference data of another binding: `b<k>/in::<id>`
 * (prefix "b<k>/"), written by `rlx.export --reference-shapes`. */
int cli_bind_reference_inputs_at(cli_ctx *c, const char *prefix);
/* Whether the reference file holds inputs under prefix. */
bool cli_reference_has_binding(const cli_ctx *c, const char *prefix);
void cli_close(cli_ctx *c);

/* Parses common compile flags (--threads N, --reference-kernels, --no-passes,
 * --device cpu|cuda). Returns 1 if argv[*i] was consumed (advancing *i), 0 if
 * not a compile flag, -1 on a bad value. */
int cli_compile_flag(const char *cmd, int argc, char **argv, int *i, rlx_compile_options *o);

double cli_now_ms(void);
const char *cli_fmt_ms(double ms, char *buf, size_t cap);

/* verify --localize: node-by-node comparison with intermediates and kernel
 * bisection (report_localize.c). `json` is the verify report object. */
struct cJSON;
int cli_localize(cli_ctx *c, const rlx_parity_opts *po, bool default_passed, struct cJSON *json);

int cmd_verify(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);

#endif
