/*
 * lower_util.h — helpers the aten -> rlx lowering tests (test_lower.c,
 * test_lower_errors.c) share: a model built in memory from a torch-ir
 * document and a weights image, lowered, compiled and run, and checks of its
 * outputs against hand-computed values.
 *
 *   fx_load(&f, inputs, weights, nodes, outputs, specs, n)   parse, lower, verify
 *   fx_compile(&f, no_passes)                               compile, create a session
 *   CHECK_OUT(&f, k, RLX_DTYPE_F32, DIMS(2), 27, 59)        output k: dtype, shape, values
 *   fx_free(&f)
 *
 * Graphs are written with single quotes (fixtures.h: jq); F32("[2]") is a
 * shape and the f32 dtype. LIN_WEIGHTS with lin_specs is a 2x2 linear layer.
 */
#ifndef RLX_TEST_LOWER_UTIL_H
#define RLX_TEST_LOWER_UTIL_H

#include <stdlib.h>

#include "fixtures.h"
#include "import/lower/lower.h"
#include "runtime/runtime.h"
#include "test.h"

/* A model built in memory: the parsed document, the weights image (which
 * the model's tensors point into), and after fx_compile a session. */
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

/* Parses the document built from its four lists, lowers it over the weights
 * in `w` and verifies the graph. On error the fixture is freed. */
static inline rlx_status fx_load(fixture *f, const char *inputs, const char *weights, const char *nodes,
                                 const char *outputs, const st_spec *w, int nw) {
  memset(f, 0, sizeof *f);
  char buf[32768];
  snprintf(buf, sizeof buf,
           "{'format': 'rlx-torch-ir', 'version': 1, 'model_name': 't', 'inputs': [%s],"
           " 'weights': [%s], 'nodes': [%s], 'outputs': [%s]}",
           inputs, weights, nodes, outputs);
  char *doc = jq(buf);
  size_t size;
  f->wimg = st_build(w, nw, &size);
  f->m = rlx_calloc(1, sizeof *f->m);
  rlx_status st = rlx_torch_ir_parse(doc, strlen(doc), "t.json", &f->m->ir);
  if (!st) st = rlx_st_parse(f->wimg, size, "w.st", &f->m->weights);
  if (!st) st = rlx_lower_graph(&f->m->ir, &f->m->weights, &f->m->graph);
  if (!st) st = rlx_graph_verify(&f->m->graph, "import");
  free(doc);
  if (st) {
    char msg[2048]; /* keep the message: freeing may not touch it, but be sure */
    snprintf(msg, sizeof msg, "%s", rlx_last_error());
    fx_free(f);
    rlx_errorf(st, "%s", msg);
  }
  return st;
}

/* Compiles (passes on unless no_passes) and creates a session. */
static inline rlx_status fx_compile(fixture *f, bool no_passes) {
  rlx_compile_options o;
  rlx_compile_options_init(&o);
  o.no_passes = no_passes;
  rlx_session_destroy(f->s);
  rlx_compiled_destroy(f->c);
  f->s = NULL, f->c = NULL;
  rlx_status st = rlx_model_compile(f->m, &o, &f->c);
  return st ? st : rlx_session_create(f->c, &f->s);
}

static inline rlx_tensor_view view1(void *data, rlx_dtype t, int64_t n) {
  return (rlx_tensor_view){.data = data, .dtype = t, .rank = 1, .dims = {n}};
}

/* Output k as a view; an empty view (rank -1) when it cannot be read. */
static inline rlx_tensor_view fx_out(const fixture *f, int k) {
  rlx_tensor_view v;
  if (rlx_session_output(f->s, k, &v)) v = (rlx_tensor_view){.rank = -1};
  return v;
}

/* Checks output k: dtype, shape and values (as doubles, exactly or NaN-equal);
 * a failure is reported at the caller's file and line. */
static inline void check_out(const fixture *f, int k, rlx_dtype t, int rank, const int64_t *dims,
                             const double *want, int64_t n, const char *file, int line) {
  rlx_tensor_view v = fx_out(f, k);
  bool ok = v.rank == rank && v.dtype == t && rlx_view_numel(&v) == n;
  for (int i = 0; ok && i < rank; i++) ok = v.dims[i] == dims[i];
  for (int64_t i = 0; ok && i < n; i++) {
    double g = rlx_load_f64(v.data, v.dtype, i);
    if (!(g == want[i] || (isnan(g) && isnan(want[i])))) {
      fprintf(stderr, "%s:%d: [%s] output %d element %lld is %.9g, expected %.9g\n", file, line,
              rlx_test_current, k, (long long)i, g, want[i]);
      rlx_test_failures++;
      return;
    }
  }
  if (!ok) {
    fprintf(stderr, "%s:%d: [%s] output %d is %s rank %d (%lld elements), expected %s rank %d\n",
            file, line, rlx_test_current, k, rlx_dtype_name(v.dtype), v.rank,
            (long long)(v.rank >= 0 ? rlx_view_numel(&v) : -1), rlx_dtype_name(t), rank);
    rlx_test_failures++;
  }
}

#define CHECK_OUT(f, k, t, dims_, ...)                                                     \
  do {                                                                                     \
    const int64_t d_[] = {dims_};                                                          \
    const double w_[] = {__VA_ARGS__};                                                     \
    check_out(f, k, t, (int)(sizeof d_ / sizeof d_[0]) - 1, d_ + 1, w_,                    \
              (int64_t)(sizeof w_ / sizeof w_[0]), __FILE__, __LINE__);                    \
  } while (0)
/* dims are written after a leading 0 so that a scalar is DIMS() */
#define DIMS(...) 0, ##__VA_ARGS__

/* `n` inputs f0.. of shape [0] (need no binding): they push the value table
 * to a chosen size, so a later emit reallocates it mid-handler. */
static inline const char *fillers(int n) {
  static char buf[4096];
  buf[0] = '\0';
  for (int i = 0; i < n; i++)
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "{'id': 'f%d', 'shape': [0], 'dtype': 'f32'}, ", i);
  return buf;
}

#define F32(shape) "'shape': " shape ", 'dtype': 'f32'"

/* A 2x2 linear layer fc: W = [[1,2],[3,4]], b = [10,20]; linear: x W^T + b; addmm(b, x, W): b + x W */
RLX_UNUSED static const float lin_w[4] = {1, 2, 3, 4}, lin_b[2] = {10, 20};
RLX_UNUSED static const st_spec lin_specs[] = {{"fc.weight", "F32", 2, {2, 2}, lin_w},
                                               {"fc.bias", "F32", 1, {2}, lin_b}};
#define LIN_WEIGHTS                                                                       \
  "{'id': 'p_w', 'key': 'fc.weight', " F32("[2, 2]") "}, {'id': 'p_b', 'key': 'fc.bias', " \
  F32("[2]") "}"

#endif /* RLX_TEST_LOWER_UTIL_H */
