/*
 * test_complex.c — complex values held as real pairs (docs/design.md,
 * "Complex numbers"): the fft op's reference kernel against a direct DFT in
 * long double for every length 1..40 and 64, 100, 127, 128, 243 (each of
 * its three algorithms, both directions, c2c / r2c / c2r, f32 and f64);
 * complex arithmetic on hand-computed values, a complex weight stored as
 * real pairs; and the errors: complex program inputs and outputs, a complex
 * weight without "storage": "real_pairs" or with the wrong pairs shape, an
 * op rlx does not lower on complex values (naming the op and the FX node),
 * a complex dtype argument to a real op.
 */
#include <stdlib.h>

#include "fixtures.h"
#include "import/lower/lower.h"
#include "ops/ops_util.h"
#include "runtime/runtime.h"
#include "test.h"

/* ---- the fft kernel against a direct DFT ---- */

/* y [n, 2] = scale * sum_j x[j] exp(s 2 pi i jk / n), in long double. */
static void dft(const double *x, int64_t n, bool inverse, double scale, double *y) {
  long double s = inverse ? 1.0L : -1.0L, pi = 3.14159265358979323846264338327950288L;
  for (int64_t k = 0; k < n; k++) {
    long double re = 0, im = 0;
    for (int64_t j = 0; j < n; j++) {
      long double t = 2 * pi * (long double)((j * k) % n) / (long double)n;
      long double c = cosl(t), sn = s * sinl(t);
      re += x[2 * j] * c - x[2 * j + 1] * sn;
      im += x[2 * j] * sn + x[2 * j + 1] * c;
    }
    y[2 * k] = (double)(re * scale), y[2 * k + 1] = (double)(im * scale);
  }
}

/* Runs the fft reference kernel on one line of length n (B = 1, A = 2 lines:
 * the lines' offsets are tested too) and compares with dft(). */
static void check_line(rlx_fft_kind kind, int64_t n, bool inverse, rlx_dtype dt) {
  const int A = 2;
  int64_t half = n / 2 + 1, L_in = kind == RLX_FFT_C2R ? half : n;
  int64_t L_out = kind == RLX_FFT_C2R ? n : kind == RLX_FFT_R2C ? half : n;
  int in_c = kind == RLX_FFT_R2C ? 1 : 2, out_c = kind == RLX_FFT_C2R ? 1 : 2;
  size_t es = rlx_dtype_size(dt);
  unsigned char *xin = calloc((size_t)(A * L_in * in_c), es), *yout = calloc((size_t)(A * L_out * out_c), es);
  double *line = calloc((size_t)(2 * n), sizeof(double)), *want = calloc((size_t)(2 * n), sizeof(double));
  rlx_node node = {0};
  node.op = RLX_OP_FFT;
  int norm = (int)(n % 3); /* every norm mode, over the lengths */
  double scale = norm == 2 ? 1.0 / (double)n : norm == 1 ? 1.0 / sqrt((double)n) : 1.0;
  node.p.fft = (rlx_fft_params){.kind = kind, .axis = 1, .n = n, .inverse = inverse, .onesided = true, .norm = norm};
  rlx_graph g;
  rlx_graph_init(&g);
  size_t scratch_bytes = rlx_op_table[RLX_OP_FFT].vt->scratch(&g, &node);
  void *scratch = malloc(scratch_bytes);
  for (int64_t i = 0; i < A * L_in * in_c; i++) rlx_store_f64(xin, dt, i, sin(0.7 * (double)i + 0.3) + 0.25 * (double)(i % 5));
  rlx_tensor_view in = {.data = xin, .dtype = dt, .rank = in_c == 2 ? 3 : 2, .dims = {A, L_in, 2}};
  rlx_tensor_view out = {.data = yout, .dtype = dt, .rank = out_c == 2 ? 3 : 2, .dims = {A, L_out, 2}};
  CHECK_OK(rlx_op_table[RLX_OP_FFT].vt->ref(&node, &in, &out, scratch));
  double maxerr = 0, maxabs = 0;
  for (int a = 0; a < A; a++) {
    for (int64_t j = 0; j < n; j++) { /* the input line as complex, as the kernel reads it */
      int64_t src = kind == RLX_FFT_C2R ? (j <= n / 2 ? j : n - j) : j;
      double re = rlx_load_f64(xin, dt, (a * L_in + src) * in_c);
      double im = in_c == 2 ? rlx_load_f64(xin, dt, (a * L_in + src) * in_c + 1) : 0;
      if (kind == RLX_FFT_C2R && (j == 0 || 2 * j == n)) im = 0; /* the real bins of a Hermitian half */
      if (kind == RLX_FFT_C2R && j > n / 2) im = -im;
      line[2 * j] = re, line[2 * j + 1] = im;
    }
    dft(line, n, inverse, scale, want);
    for (int64_t k = 0; k < L_out; k++)
      for (int c = 0; c < out_c; c++) {
        double got = rlx_load_f64(yout, dt, (a * L_out + k) * out_c + c);
        maxerr = fmax(maxerr, fabs(got - want[2 * k + c]));
        maxabs = fmax(maxabs, fabs(want[2 * k + c]));
      }
  }
  /* f64: a few ulp times log2 of the (Bluestein) length; f32: the output's rounding */
  double tol = (dt == RLX_DTYPE_F64 ? 1e-13 : 1e-6) * (1 + maxabs);
  if (!(maxerr <= tol)) {
    fprintf(stderr, "%s:%d: [%s] fft kind %d n %lld %s %s: max error %.3g > %.3g\n", __FILE__, __LINE__,
            rlx_test_current, (int)kind, (long long)n, inverse ? "inverse" : "forward", rlx_dtype_name(dt), maxerr, tol);
    rlx_test_failures++;
  }
  free(xin), free(yout), free(line), free(want), free(scratch);
  rlx_graph_free(&g);
}

TEST(fft_kernel_matches_direct_dft) {
  static const int64_t extra[] = {64, 100, 127, 128, 243};
  for (int i = 0; i < 40 + (int)RLX_COUNTOF(extra); i++) {
    int64_t n = i < 40 ? i + 1 : extra[i - 40];
    for (int kind = RLX_FFT_C2C; kind <= RLX_FFT_C2R; kind++)
      for (int inv = 0; inv < 2; inv++) {
        check_line((rlx_fft_kind)kind, n, inv, RLX_DTYPE_F64);
        check_line((rlx_fft_kind)kind, n, inv, RLX_DTYPE_F32);
      }
  }
}

/* ---- lowering, end to end ---- */

typedef struct fixture {
  rlx_model *m;
  rlx_compiled *c;
  rlx_session *s;
  unsigned char *wimg;
} fixture;

static void fx_free(fixture *f) {
  rlx_session_destroy(f->s);
  rlx_compiled_destroy(f->c);
  rlx_model_destroy(f->m);
  free(f->wimg);
  memset(f, 0, sizeof *f);
}

static rlx_status fx_load(fixture *f, const char *inputs, const char *weights, const char *nodes,
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
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", rlx_last_error());
    fx_free(f);
    rlx_errorf(st, "%s", msg);
  }
  return st;
}

/* Loads, compiles, binds x [2, 2] (two complex numbers as pairs) and runs. */
static rlx_status fx_run(fixture *f, float *x) {
  rlx_compile_options o;
  rlx_compile_options_init(&o);
  rlx_status st = rlx_model_compile(f->m, &o, &f->c);
  if (!st) st = rlx_session_create(f->c, &f->s);
  rlx_tensor_view v = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 2, .dims = {2, 2}};
  if (!st) st = rlx_session_bind_input(f->s, "x", &v);
  return st ? st : rlx_session_run(f->s);
}

#define X22 "{'id': 'x', 'shape': [2, 2], 'dtype': 'f32'}"
#define VC "{'id': 'z', 'op': 'aten.view_as_complex.default', 'args': [{'ref': 'x'}], 'out': {'shape': [2], 'dtype': 'c64'}}"
#define WZ "{'id': 'w', 'key': 'w', 'shape': [2], 'dtype': 'c64', 'kind': 'buffer', 'storage': 'real_pairs'}"

TEST(complex_mul_with_weight) {
  /* x = (1 + 2i, 3 - i), w = (2 - i, 0.5i): x w = (4 + 3i, 0.5 + 1.5i); |x w| = (5, sqrt(2.5)) */
  static const float wd[] = {2, -1, 0, 0.5f};
  st_spec w[] = {{"w", "F32", 2, {2, 2}, wd}};
  float x[] = {1, 2, 3, -1};
  fixture f;
  CHECK_OK(fx_load(&f, X22, WZ,
                   VC ", {'id': 'm', 'op': 'aten.mul.Tensor', 'args': [{'ref': 'z'}, {'ref': 'w'}], "
                   "'out': {'shape': [2], 'dtype': 'c64'}}, "
                   "{'id': 'r', 'op': 'aten.view_as_real.default', 'args': [{'ref': 'm'}], 'out': {'shape': [2, 2], 'dtype': 'f32'}}, "
                   "{'id': 'a', 'op': 'aten.abs.default', 'args': [{'ref': 'm'}], 'out': {'shape': [2], 'dtype': 'f32'}}",
                   "{'ref': 'r', 'shape': [2, 2], 'dtype': 'f32'}, {'ref': 'a', 'shape': [2], 'dtype': 'f32'}", w, 1));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, x));
  rlx_tensor_view r, a;
  CHECK_OK(rlx_session_output(f.s, 0, &r));
  CHECK_OK(rlx_session_output(f.s, 1, &a));
  const float *rp = r.data, *ap = a.data;
  CHECK(r.rank == 2 && r.dims[0] == 2 && r.dims[1] == 2);
  CHECK_NEAR(rp[0], 4, 0);
  CHECK_NEAR(rp[1], 3, 0);
  CHECK_NEAR(rp[2], 0.5, 0);
  CHECK_NEAR(rp[3], 1.5, 0);
  CHECK_NEAR(ap[0], 5, 1e-6);
  CHECK_NEAR(ap[1], sqrt(2.5), 1e-6);
  fx_free(&f);
}

TEST(complex_polar_div_conj) {
  /* polar(2, pi/2) = 2i; x / 2i = (1 - 0.5i, -0.5 - 1.5i); conj of that */
  float x[] = {1, 2, 3, -1};
  fixture f;
  CHECK_OK(fx_load(&f, X22, "",
                   VC ", {'id': 'two', 'op': 'aten.full.default', 'args': [{'list': [{'int': 2}]}, {'float': 2.0}], "
                   "'kwargs': {'dtype': {'dtype': 'f32'}}, 'out': {'shape': [2], 'dtype': 'f32'}}, "
                   "{'id': 'ang', 'op': 'aten.full.default', 'args': [{'list': [{'int': 2}]}, {'float': 1.5707963267948966}], "
                   "'kwargs': {'dtype': {'dtype': 'f32'}}, 'out': {'shape': [2], 'dtype': 'f32'}}, "
                   "{'id': 'p', 'op': 'aten.polar.default', 'args': [{'ref': 'two'}, {'ref': 'ang'}], 'out': {'shape': [2], 'dtype': 'c64'}}, "
                   "{'id': 'd', 'op': 'aten.div.Tensor', 'args': [{'ref': 'z'}, {'ref': 'p'}], 'out': {'shape': [2], 'dtype': 'c64'}}, "
                   "{'id': 'c', 'op': 'aten.conj_physical.default', 'args': [{'ref': 'd'}], 'out': {'shape': [2], 'dtype': 'c64'}}, "
                   "{'id': 'r', 'op': 'aten.view_as_real.default', 'args': [{'ref': 'c'}], 'out': {'shape': [2, 2], 'dtype': 'f32'}}",
                   "{'ref': 'r', 'shape': [2, 2], 'dtype': 'f32'}", NULL, 0));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, x));
  rlx_tensor_view r;
  CHECK_OK(rlx_session_output(f.s, 0, &r));
  const float *rp = r.data;
  CHECK_NEAR(rp[0], 1, 1e-6);
  CHECK_NEAR(rp[1], 0.5, 1e-6);
  CHECK_NEAR(rp[2], -0.5, 1e-6);
  CHECK_NEAR(rp[3], 1.5, 1e-6);
  fx_free(&f);
}

/* Runs the model on x with the given kernels and threads; copies output 0
 * (n floats) into y. */
static void run_with(fixture *f, bool reference, int threads, float *x, const int64_t *xdims, int xrank, float *y,
                     int64_t n) {
  rlx_compile_options o;
  rlx_compile_options_init(&o);
  o.reference_kernels = reference, o.threads = threads;
  rlx_session_destroy(f->s);
  rlx_compiled_destroy(f->c);
  f->s = NULL, f->c = NULL;
  CHECK_OK(rlx_model_compile(f->m, &o, &f->c));
  if (f->c) CHECK_OK(rlx_session_create(f->c, &f->s));
  if (!f->s) return;
  rlx_tensor_view v = {.data = x, .dtype = RLX_DTYPE_F32, .rank = xrank};
  memcpy(v.dims, xdims, sizeof(int64_t) * (size_t)xrank);
  CHECK_OK(rlx_session_bind_input(f->s, "x", &v));
  CHECK_OK(rlx_session_run(f->s));
  rlx_tensor_view out;
  CHECK_OK(rlx_session_output(f->s, 0, &out));
  CHECK(rlx_view_numel(&out) == n);
  if (rlx_view_numel(&out) == n) memcpy(y, out.data, sizeof(float) * (size_t)n);
}

TEST(fft_threaded_kernel_is_bit_identical) {
  /* x [6, 100, 9, 2]: c2c over axis 1 (Bluestein, strided lines), then c2r over axis 2 (n = 16, from 9 bins) */
  enum { A = 6, L = 100, B = 9 };
  static float x[A * L * B * 2], ref[A * L * 16], got[A * L * 16];
  for (int i = 0; i < A * L * B * 2; i++) x[i] = (float)sin(0.37 * i) + 0.1f * (float)(i % 7);
  fixture f;
  CHECK_OK(fx_load(&f, "{'id': 'x', 'shape': [6, 100, 9, 2], 'dtype': 'f32'}", "",
                   "{'id': 'z', 'op': 'aten.view_as_complex.default', 'args': [{'ref': 'x'}], 'out': {'shape': [6, 100, 9], 'dtype': 'c64'}}, "
                   "{'id': 'c', 'op': 'aten._fft_c2c.default', 'args': [{'ref': 'z'}, {'list': [{'int': 1}]}, {'int': 1}, {'bool': true}], "
                   "'out': {'shape': [6, 100, 9], 'dtype': 'c64'}}, "
                   "{'id': 'r', 'op': 'aten._fft_c2r.default', 'args': [{'ref': 'c'}, {'list': [{'int': 2}]}, {'int': 2}, {'int': 16}], "
                   "'out': {'shape': [6, 100, 16], 'dtype': 'f32'}}",
                   "{'ref': 'r', 'shape': [6, 100, 16], 'dtype': 'f32'}", NULL, 0));
  if (!f.m) return;
  const int64_t dims[] = {A, L, B, 2};
  run_with(&f, true, 1, x, dims, 4, ref, A * L * 16);
  CHECK(f.s && !strcmp(rlx_session_kernel_name(f.s, 0) ? rlx_session_kernel_name(f.s, 0) : "", "reference"));
  for (int threads = 1; threads <= 3; threads += 2) {
    memset(got, 0, sizeof got);
    run_with(&f, false, threads, x, dims, 4, got, A * L * 16);
    CHECK(memcmp(got, ref, sizeof ref) == 0);
    int fast = 0;
    for (int32_t i = 0; f.s && i < rlx_session_graph(f.s)->n_nodes; i++)
      fast += !strcmp(rlx_session_kernel_name(f.s, i), "f32_fft_lines");
    CHECK(fast == 2);
  }
  fx_free(&f);
}

TEST(complex_errors) {
  fixture f;
  static const float wd[] = {2, -1, 0, 0.5f};
  st_spec w[] = {{"w", "F32", 2, {2, 2}, wd}};
  st_spec w3[] = {{"w", "F32", 2, {2, 3}, NULL}};
  CHECK_ERR(fx_load(&f, "{'id': 'x', 'shape': [2], 'dtype': 'c64'}", "", "", "{'ref': 'x', 'shape': [2], 'dtype': 'c64'}",
                    NULL, 0), RLX_ERR_UNSUPPORTED, "inputs[0]: the input is complex (c64)");
  CHECK_ERR(fx_load(&f, X22, "", VC, "{'ref': 'z', 'shape': [2], 'dtype': 'c64'}", NULL, 0), RLX_ERR_UNSUPPORTED,
            "graph output 0 ('z') is complex: rlx programs return real tensors");
  CHECK_ERR(fx_load(&f, X22, "{'id': 'w', 'key': 'w', 'shape': [2], 'dtype': 'c64', 'kind': 'buffer'}", "",
                    "{'ref': 'x', 'shape': [2, 2], 'dtype': 'f32'}", w, 1),
            RLX_ERR_FORMAT, "('w') is complex and must say \"storage\": \"real_pairs\"");
  float *zeros = calloc(6, sizeof(float));
  w3[0].data = zeros;
  CHECK_ERR(fx_load(&f, X22, WZ, "", "{'ref': 'x', 'shape': [2, 2], 'dtype': 'f32'}", w3, 1), RLX_ERR_SHAPE,
            "declares f32 [2, 2] (the real pairs of a complex weight)");
  free(zeros);
  CHECK_ERR(fx_load(&f, X22, "",
                    VC ", {'id': 'e', 'op': 'aten.exp.default', 'args': [{'ref': 'z'}], 'out': {'shape': [2], 'dtype': 'c64'}}",
                    "{'ref': 'x', 'shape': [2, 2], 'dtype': 'f32'}", NULL, 0),
            RLX_ERR_UNSUPPORTED, "node 'e' (aten.exp.default): rlx does not lower this op on complex values");
  CHECK_ERR(fx_load(&f, X22, "",
                    "{'id': 'e', 'op': 'aten.view_as_complex.default', 'args': [{'ref': 'x'}], 'out': {'shape': [2], 'dtype': 'c64'}}, "
                    "{'id': 'z2', 'op': 'aten.view_as_complex.default', 'args': [{'ref': 'e'}], 'out': {'shape': [2], 'dtype': 'c64'}}",
                    "{'ref': 'x', 'shape': [2, 2], 'dtype': 'f32'}", NULL, 0),
            RLX_ERR_SHAPE, "node 'z2' (aten.view_as_complex.default): the input is complex already");
  CHECK_ERR(fx_load(&f, X22, "",
                    "{'id': 'c', 'op': 'aten.cumsum.default', 'args': [{'ref': 'x'}, {'int': 0}], "
                    "'kwargs': {'dtype': {'dtype': 'c64'}}, 'out': {'shape': [2, 2], 'dtype': 'f32'}}",
                    "{'ref': 'c', 'shape': [2, 2], 'dtype': 'f32'}", NULL, 0),
            RLX_ERR_UNSUPPORTED, "argument 'dtype' is a complex dtype");
  CHECK_ERR(fx_load(&f, X22, "",
                    VC ", {'id': 'f', 'op': 'aten._fft_c2r.default', 'args': [{'ref': 'z'}, {'list': [{'int': 0}]}, {'int': 0}, "
                    "{'int': 7}], 'out': {'shape': [7], 'dtype': 'f32'}}",
                    "{'ref': 'f', 'shape': [7], 'dtype': 'f32'}", NULL, 0),
            RLX_ERR_SHAPE, "last_dim_size 7 needs 4");
}

TEST_MAIN(fft_kernel_matches_direct_dft, fft_threaded_kernel_is_bit_identical, complex_mul_with_weight, complex_polar_div_conj, complex_errors)
