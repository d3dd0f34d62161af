/*
 * kernel_test.h — helpers for the reference-kernel tests (test_kernels*.c):
 * run one op on small literal tensors and compare its outputs with expected
 * values.
 *
 *   krun r;
 *   rlx_params p = {.unary = {.kind = RLX_UNARY_RELU}};
 *   CHECK_OK(krun_op(&r, RLX_OP_UNARY, &p, 1, (tens[]){TF(F32, SH(3), -1, 0, 2)}, 1));
 *   CHECK_SHAPE(&r, 0, F32, 3);
 *   CHECK_F(&r, 0, 0, 0, 0, 2);        (tolerance, then the expected values)
 *   krun_free(&r);
 *
 * krun_op builds an rlx_graph with one INPUT value per given tensor (an
 * ABSENT tensor becomes the -1 "no input" id), adds the node (so the op's
 * infer runs), allocates each output from its inferred shape (filled with a
 * 0xA5 pattern, so an element the kernel forgets to write shows up) and the
 * scratch the op asks for, and calls the reference kernel with the runtime's
 * contract: max(n_in, max_inputs) input views, absent ones with data NULL.
 * It returns the status of infer or of the kernel; the krun must be freed
 * with krun_free either way.
 *
 * Input values are given as doubles (TF) or exact int64s (TI) and converted
 * to the tensor's dtype with rlx_store_f64 / rlx_store_i64, so one literal
 * list serves f32, f16, bf16 and integer tensors alike.
 */
#ifndef RLX_KERNEL_TEST_H
#define RLX_KERNEL_TEST_H

#include <stdlib.h>

#include "ir/graph.h"
#include "test.h"

typedef struct tens {
  rlx_dtype dtype;
  rlx_shape shape;
  const double *f;  /* values as doubles, converted to dtype */
  const int64_t *i; /* or values as exact integers; neither: an absent input */
  int64_t n;        /* number of values given (must equal the shape's numel) */
} tens;

#define KT_NVALS_(type, ...) ((int64_t)(sizeof((type[]){__VA_ARGS__}) / sizeof(type)))
/* A shape of rank >= 1, and the rank-0 shape. */
#define SH(...) kt_shape_((const int64_t[]){__VA_ARGS__}, (int)KT_NVALS_(int64_t, __VA_ARGS__))
#define SH0 ((rlx_shape){.rank = 0})
/* Tensors: TF(F32, SH(2, 2), 1, 2, 3, 4), TI(I64, SH(3), -1, 0, 7), ABSENT. */
#define TF(t, sh, ...) \
  ((tens){RLX_DTYPE_##t, sh, (const double[]){__VA_ARGS__}, NULL, KT_NVALS_(double, __VA_ARGS__)})
#define TI(t, sh, ...) \
  ((tens){RLX_DTYPE_##t, sh, NULL, (const int64_t[]){__VA_ARGS__}, KT_NVALS_(int64_t, __VA_ARGS__)})
#define ABSENT ((tens){0})

static inline rlx_shape kt_shape_(const int64_t *d, int rank) {
  rlx_shape s = {.rank = rank};
  for (int i = 0; i < rank; i++) s.dims[i] = d[i];
  return s;
}

/* A tensor of shape s holding 0, 1, ..., n-1 (a ramp), written into buf. */
static inline tens ramp(rlx_dtype t, rlx_shape s, double *buf, int64_t n) {
  for (int64_t i = 0; i < n; i++) buf[i] = (double)i;
  return (tens){t, s, buf, NULL, n};
}

#define KT_MAX_IN 16

typedef struct krun {
  rlx_graph g;
  int32_t node;             /* index of the node, -1 if infer failed */
  void *in_data[KT_MAX_IN]; /* converted input buffers */
  rlx_tensor_view out[4];   /* the outputs, with their inferred shapes */
  void *scratch;
} krun;

static inline void krun_free(krun *r) {
  for (int k = 0; k < KT_MAX_IN; k++) free(r->in_data[k]);
  for (int k = 0; k < 4; k++) free(r->out[k].data);
  free(r->scratch);
  rlx_graph_free(&r->g);
  memset(r, 0, sizeof *r);
}

static inline void *kt_alloc_(size_t n) { return malloc(n ? n : 1); }

/* Converts a literal tensor into a buffer of its dtype. */
static inline void *kt_fill_(const tens *t) {
  int64_t n = rlx_shape_numel(&t->shape);
  if (n != t->n) {
    fprintf(stderr, "[%s] test bug: a tensor literal has %lld values for %lld elements\n",
            rlx_test_current, (long long)t->n, (long long)n);
    rlx_test_failures++;
    return NULL;
  }
  void *buf = kt_alloc_((size_t)n * rlx_dtype_size(t->dtype));
  for (int64_t i = 0; i < n; i++) {
    if (t->f) rlx_store_f64(buf, t->dtype, i, t->f[i]);
    else rlx_store_i64(buf, t->dtype, i, t->i[i]);
  }
  return buf;
}

static inline rlx_status krun_op(krun *r, rlx_op op, const rlx_params *p, int n_in, const tens *in,
                                 int n_out) {
  memset(r, 0, sizeof *r);
  rlx_graph_init(&r->g);
  r->node = -1;
  if (n_in > KT_MAX_IN || n_out > 4) return RLX_ERR_INTERNAL;
  int32_t ids[KT_MAX_IN];
  for (int k = 0; k < n_in; k++) {
    if (!in[k].f && !in[k].i) {
      ids[k] = -1;
      continue;
    }
    char name[16];
    snprintf(name, sizeof name, "x%d", k);
    ids[k] = rlx_graph_add_input(&r->g, name, in[k].dtype, &in[k].shape);
    r->in_data[k] = kt_fill_(&in[k]);
    if (ids[k] < 0 || !r->in_data[k]) return RLX_ERR_INTERNAL;
  }
  rlx_error_clear();
  r->node = rlx_graph_add_node(&r->g, op, p, ids, n_in, n_out, "node", NULL);
  if (r->node < 0) return rlx_last_status();
  const rlx_node *n = &r->g.nodes[r->node];
  /* exactly as many views as the contract promises, on the heap, so that
   * ASan catches a kernel reading or writing past them */
  int n_views = n_in > rlx_op_table[op].max_in ? n_in : rlx_op_table[op].max_in;
  rlx_tensor_view *views = calloc((size_t)(n_views ? n_views : 1), sizeof *views);
  rlx_tensor_view *outs = calloc((size_t)n_out, sizeof *outs);
  for (int k = 0; k < n_in; k++)
    if (ids[k] >= 0) {
      views[k] = rlx_value_view(&r->g.values[ids[k]]);
      views[k].data = r->in_data[k];
    }
  for (int k = 0; k < n_out; k++) {
    const rlx_value *v = &r->g.values[n->out[k]];
    outs[k] = rlx_value_view(v);
    outs[k].data = kt_alloc_(rlx_value_nbytes(v));
    memset(outs[k].data, 0xA5, rlx_value_nbytes(v));
    r->out[k] = outs[k];
  }
  const rlx_op_vtable *vt = rlx_op_table[op].vt;
  if (vt->scratch) r->scratch = kt_alloc_(vt->scratch(&r->g, n));
  rlx_error_clear();
  rlx_status st = vt->ref(n, views, outs, r->scratch);
  free(views);
  free(outs);
  return st;
}

/* ---- checking outputs ---- */

/* Output k has dtype t and the given dims. */
static inline void kt_check_shape_(const char *file, int line, const krun *r, int k, rlx_dtype t,
                                   const int64_t *d, int rank) {
  const rlx_tensor_view *v = &r->out[k];
  bool ok = v->data && v->dtype == t && v->rank == rank;
  for (int i = 0; ok && i < rank; i++) ok = v->dims[i] == d[i];
  if (!ok) {
    rlx_shape got = {.rank = v->rank}, want = kt_shape_(d, rank);
    char a[96], b[96];
    memcpy(got.dims, v->dims, sizeof got.dims);
    fprintf(stderr, "%s:%d: [%s] output %d is %s %s, expected %s %s\n", file, line,
            rlx_test_current, k, rlx_dtype_name(v->dtype), rlx_shape_str(&got, a, sizeof a),
            rlx_dtype_name(t), rlx_shape_str(&want, b, sizeof b));
    rlx_test_failures++;
  }
}

/* Output k holds `want` (n values): NaN matches NaN, infinities match
 * exactly, finite values within tol * max(1, |want|). */
static inline void kt_check_f_(const char *file, int line, const krun *r, int k, double tol,
                               const double *want, int64_t n) {
  const rlx_tensor_view *v = &r->out[k];
  if (!v->data || rlx_view_numel(v) != n) {
    fprintf(stderr, "%s:%d: [%s] output %d has %lld elements, expected %lld\n", file, line,
            rlx_test_current, k, v->data ? (long long)rlx_view_numel(v) : -1LL, (long long)n);
    rlx_test_failures++;
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    double got = rlx_load_f64(v->data, v->dtype, i), w = want[i];
    bool ok = (isnan(got) && isnan(w)) || got == w ||
              (isfinite(w) && fabs(got - w) <= tol * fmax(1.0, fabs(w)));
    if (!ok) {
      fprintf(stderr, "%s:%d: [%s] output %d element %lld = %.9g, expected %.9g (tol %g)\n",
              file, line, rlx_test_current, k, (long long)i, got, w, tol);
      rlx_test_failures++;
    }
  }
}

/* Output k holds exactly the integers `want`. */
static inline void kt_check_i_(const char *file, int line, const krun *r, int k,
                               const int64_t *want, int64_t n) {
  const rlx_tensor_view *v = &r->out[k];
  if (!v->data || rlx_view_numel(v) != n) {
    fprintf(stderr, "%s:%d: [%s] output %d has %lld elements, expected %lld\n", file, line,
            rlx_test_current, k, v->data ? (long long)rlx_view_numel(v) : -1LL, (long long)n);
    rlx_test_failures++;
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t got = rlx_load_i64(v->data, v->dtype, i);
    if (got != want[i]) {
      fprintf(stderr, "%s:%d: [%s] output %d element %lld = %lld, expected %lld\n", file,
              line, rlx_test_current, k, (long long)i, (long long)got, (long long)want[i]);
      rlx_test_failures++;
    }
  }
}

#define CHECK_SHAPE(r, k, t, ...)                                                         \
  kt_check_shape_(__FILE__, __LINE__, r, k, RLX_DTYPE_##t, (const int64_t[]){__VA_ARGS__}, \
                  (int)KT_NVALS_(int64_t, __VA_ARGS__))
#define CHECK_SHAPE0(r, k, t) kt_check_shape_(__FILE__, __LINE__, r, k, RLX_DTYPE_##t, NULL, 0)
#define CHECK_F(r, k, tol, ...)                                             \
  kt_check_f_(__FILE__, __LINE__, r, k, tol, (const double[]){__VA_ARGS__}, \
              KT_NVALS_(double, __VA_ARGS__))
#define CHECK_I(r, k, ...)                                              \
  kt_check_i_(__FILE__, __LINE__, r, k, (const int64_t[]){__VA_ARGS__}, \
              KT_NVALS_(int64_t, __VA_ARGS__))

/* Element i of output k as double / int64 (for one-off checks). */
static inline double kt_f(const krun *r, int k, int64_t i) {
  return rlx_load_f64(r->out[k].data, r->out[k].dtype, i);
}
static inline int64_t kt_i(const krun *r, int k, int64_t i) {
  return rlx_load_i64(r->out[k].data, r->out[k].dtype, i);
}

#endif /* RLX_KERNEL_TEST_H */
