/*
 * lower_hostile_util.h — helpers the tests of the aten -> rlx lowering on
 * hostile arguments (test_lower_hostile.c, test_lower_hostile_ops.c) share:
 * a weightless model built in memory from a torch-ir document, lowered,
 * compiled and run; the expectation that a node 'n' is refused naming an
 * argument; checks of output values; and JSON pieces (single quotes,
 * fixtures.h: jq) for building one node.
 *
 *   REFUSE(RLX_ERR_SHAPE, "'stride'[0] is 0", IN("[4]", "f32"), NODE(op, X ", " I(0), OUT("[4]", "f32")))
 *   fx_load(&f, inputs, nodes, outputs); fx_run(&f, "x", view); CHECK_VALS(&f, 0, 1, 2); fx_free(&f)
 */
#ifndef RLX_TEST_LOWER_HOSTILE_UTIL_H
#define RLX_TEST_LOWER_HOSTILE_UTIL_H

#include <stdlib.h>

#include "fixtures.h"
#include "import/lower/lower.h"
#include "runtime/runtime.h"
#include "test.h"

typedef struct fixture {
  rlx_model *m;
  rlx_compiled *c;
  rlx_session *s;
  unsigned char *wimg;
} fixture;

static inline void fx_free(fixture *f) {
  rlx_session_destroy(f->s);
  rlx_compiled_destroy(f->c);
  rlx_model_destroy(f->m);
  free(f->wimg);
  memset(f, 0, sizeof *f);
}

/* Parses a document of the given inputs, nodes and outputs (no weights),
 * lowers and verifies it. On error the fixture is freed and the message kept. */
static inline rlx_status fx_load(fixture *f, const char *inputs, const char *nodes, const char *outputs) {
  memset(f, 0, sizeof *f);
  char buf[16384];
  snprintf(buf, sizeof buf,
           "{'format': 'rlx-torch-ir', 'version': 1, 'model_name': 't', 'inputs': [%s],"
           " 'weights': [], 'nodes': [%s], 'outputs': [%s]}",
           inputs, nodes, outputs);
  char *doc = jq(buf);
  size_t size;
  f->wimg = st_build(NULL, 0, &size);
  f->m = rlx_calloc(1, sizeof *f->m);
  rlx_status st = rlx_torch_ir_parse(doc, strlen(doc), "t.json", &f->m->ir);
  if (!st) st = rlx_st_parse(f->wimg, size, "w.st", &f->m->weights);
  if (!st) st = rlx_lower_graph(&f->m->ir, &f->m->weights, &f->m->graph);
  if (!st) st = rlx_graph_verify(&f->m->graph, "import");
  free(doc);
  if (st) {
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", rlx_last_error());
    fx_free(f);
    rlx_errorf(st, "%s", msg);
  }
  return st;
}

static inline rlx_status fx_run(fixture *f, const char *name, rlx_tensor_view v) {
  rlx_compile_options o;
  rlx_compile_options_init(&o);
  rlx_status st = rlx_model_compile(f->m, &o, &f->c);
  if (!st) st = rlx_session_create(f->c, &f->s);
  if (!st && name) st = rlx_session_bind_input(f->s, name, &v);
  return st ? st : rlx_session_run(f->s);
}

/* The lowering of `nodes` over `inputs` must fail with `want` and a message
 * naming node 'n' and containing `arg`. */
static inline void refuse(const char *file, int line, rlx_status want, const char *arg, const char *inputs,
                          const char *nodes) {
  fixture f;
  rlx_status st = fx_load(&f, inputs, nodes, "");
  const char *msg = rlx_last_error();
  if (st == RLX_OK) fx_free(&f);
  if (st != want || !strstr(msg, "node 'n' (") || !strstr(msg, arg)) {
    fprintf(stderr, "%s:%d: [%s] lowering returned %s (\"%s\"), expected %s naming node 'n' and \"%s\"\n",
            file, line, rlx_test_current, rlx_status_string(st), st ? msg : "", rlx_status_string(want), arg);
    rlx_test_failures++;
  }
}
#define REFUSE(want, arg, inputs, nodes) refuse(__FILE__, __LINE__, want, arg, inputs, nodes)

/* Output k's elements as doubles must be `want` (n of them). */
static inline void check_vals(const fixture *f, int k, const double *want, int64_t n, const char *file, int line) {
  rlx_tensor_view v;
  if (!f->s || rlx_session_output(f->s, k, &v) || rlx_view_numel(&v) != n) {
    fprintf(stderr, "%s:%d: [%s] output %d is missing or has the wrong size\n", file, line, rlx_test_current, k);
    rlx_test_failures++;
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    double g = v.dtype == RLX_DTYPE_I64 ? (double)((const int64_t *)v.data)[i] : rlx_load_f64(v.data, v.dtype, i);
    if (g != want[i]) {
      fprintf(stderr, "%s:%d: [%s] output %d element %lld is %.17g, expected %.17g\n", file, line,
              rlx_test_current, k, (long long)i, g, want[i]);
      rlx_test_failures++;
      return;
    }
  }
}
#define CHECK_VALS(f, k, ...)                                                               \
  do {                                                                                      \
    const double w_[] = {__VA_ARGS__};                                                      \
    check_vals(f, k, w_, (int64_t)(sizeof w_ / sizeof w_[0]), __FILE__, __LINE__);          \
  } while (0)

/* JSON pieces (single quotes) */
#define IN(shape, dt) "{'id': 'x', 'shape': " shape ", 'dtype': '" dt "'}"
#define OUT(shape, dt) "{'shape': " shape ", 'dtype': '" dt "'}"
#define NODE(op, args, out) "{'id': 'n', 'op': '" op "', 'args': [" args "], 'out': " out "}"
#define NODEK(op, args, kwargs, out) \
  "{'id': 'n', 'op': '" op "', 'args': [" args "], 'kwargs': {" kwargs "}, 'out': " out "}"
#define I(v) "{'int': " #v "}"
#define F(v) "{'float': " #v "}"
#define FS(v) "{'float': '" v "'}" /* 'inf', '-inf', 'nan' */
#define L(...) "{'list': [" __VA_ARGS__ "]}"
#define X "{'ref': 'x'}"
#define X4 IN("[1, 4, 2, 2]", "f32")
#define X22 IN("[2, 2]", "f32")
#define I64MIN "-9223372036854775808"
#define I64MAX "9223372036854775807"
#define P62 "4611686018427387904"
#define P32 "4294967296"
#define II(s) "{'int': " s "}"

#endif /* RLX_TEST_LOWER_HOSTILE_UTIL_H */
