/*
 * test_hostile.c — ops on hostile parameters (issue 8): every case here was
 * an overflow, an out-of-bounds read or undefined behaviour before its fix.
 * Infer must refuse what would overflow, and kernels given extreme data
 * (NaN, inf, 1e30 coordinates) must compute something defined.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu/vmath.h"
#include "import/safetensors.h"
#include "kernel_test.h"
#include "runtime/runtime.h"

/* Adds an input of shape s to a fresh graph and a node over it; returns the
 * status of the node's infer (the graph is freed). */
static rlx_status infer1(rlx_op op, const rlx_params *p, rlx_dtype t, rlx_shape s) {
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t x = rlx_graph_add_input(&g, "x", t, &s);
  rlx_error_clear();
  int32_t n = x < 0 ? -1 : rlx_graph_add_node(&g, op, p, &x, 1, 1, "node", NULL);
  rlx_status st = n < 0 ? rlx_last_status() : RLX_OK;
  rlx_graph_free(&g);
  return st;
}

/* as_strided with strides whose span overflows int64: the sum wrapped, the
 * bounds check passed, and the kernel read kilobytes past x. */
TEST(as_strided_span_overflow) {
  rlx_params p;
  memset(&p, 0, sizeof p);
  p.as_strided.size = SH(2, 2);
  int64_t big = ((int64_t)1 << 62) + 1024;
  p.as_strided.stride[0] = big, p.as_strided.stride[1] = big;
  CHECK_ERR(infer1(RLX_OP_AS_STRIDED, &p, RLX_DTYPE_F32, SH(4)), RLX_ERR_SHAPE, "overflow");
  /* one stride negative and one positive, each in range but summing past */
  p.as_strided.size = SH(3, 3);
  p.as_strided.stride[0] = INT64_MAX / 2, p.as_strided.stride[1] = INT64_MAX / 2;
  CHECK_ERR(infer1(RLX_OP_AS_STRIDED, &p, RLX_DTYPE_F32, SH(4)), RLX_ERR_SHAPE, "overflow");
  p.as_strided.size = SH(2);
  p.as_strided.stride[0] = 1;
  p.as_strided.offset = -1;
  CHECK_ERR(infer1(RLX_OP_AS_STRIDED, &p, RLX_DTYPE_F32, SH(4)), RLX_ERR_SHAPE, "negative");
  /* in range: still fine, and reads the right elements */
  p.as_strided.size = SH(2, 2);
  p.as_strided.stride[0] = 2, p.as_strided.stride[1] = -1;
  p.as_strided.offset = 1;
  krun r;
  CHECK_OK(krun_op(&r, RLX_OP_AS_STRIDED, &p, 1, (tens[]){TF(F32, SH(4), 10, 11, 12, 13)}, 1));
  CHECK_F(&r, 0, 0, 11, 10, 13, 12);
  krun_free(&r);
}

/* Shapes past the element limit are refused where they are made. */
TEST(output_shape_limit) {
  rlx_params p;
  memset(&p, 0, sizeof p);
  p.full.dtype = RLX_DTYPE_F32;
  p.full.shape = SH((int64_t)1 << 30, (int64_t)1 << 30);
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_error_clear();
  CHECK(rlx_graph_add_node(&g, RLX_OP_FULL, &p, NULL, 0, 1, "big", NULL) < 0);
  CHECK(strstr(rlx_last_error(), "2^48") != NULL);
  p.full.shape = SH(INT64_MAX, INT64_MAX, 0); /* empty, but its strides overflow */
  CHECK(rlx_graph_add_node(&g, RLX_OP_FULL, &p, NULL, 0, 1, "big2", NULL) < 0);
  rlx_graph_free(&g);
  /* reshape to a target whose product overflows int64 */
  memset(&p, 0, sizeof p);
  p.shape.shape = SH((int64_t)1 << 40, (int64_t)1 << 40, 0);
  CHECK_ERR(infer1(RLX_OP_RESHAPE, &p, RLX_DTYPE_F32, SH(0)), RLX_ERR_SHAPE, "reshape target");
  /* expand to a rank above the limit */
  memset(&p, 0, sizeof p);
  p.shape.shape.rank = RLX_MAX_RANK + 1;
  CHECK_ERR(infer1(RLX_OP_EXPAND, &p, RLX_DTYPE_F32, SH(1)), RLX_ERR_SHAPE, "expand");
}

TEST(pdist_pair_count_overflow) {
  rlx_params p = {.dist = {.p = 2}};
  /* 2^33 rows of 0 columns: an empty input whose N (N - 1) / 2 overflowed */
  CHECK_ERR(infer1(RLX_OP_PDIST, &p, RLX_DTYPE_F32, SH((int64_t)1 << 33, 0)), RLX_ERR_SHAPE, "overflow");
  CHECK_ERR(infer1(RLX_OP_PDIST, &p, RLX_DTYPE_F32, SH((int64_t)1 << 25, 0)), RLX_ERR_SHAPE, "2^48");
  CHECK_OK(infer1(RLX_OP_PDIST, &p, RLX_DTYPE_F32, SH(1, 3)));
}

TEST(col2im_params_bounded) {
  rlx_params p;
  memset(&p, 0, sizeof p);
  rlx_col2im_params *c = &p.col2im;
  for (int d = 0; d < 2; d++) c->out[d] = 4, c->kernel[d] = 2, c->dilation[d] = 1, c->stride[d] = 1;
  c->pad[0] = (int64_t)1 << 62; /* 2 * pad overflowed */
  CHECK_ERR(infer1(RLX_OP_COL2IM, &p, RLX_DTYPE_F32, SH(1, 4, 9)), RLX_ERR_SHAPE, "2^31");
  c->pad[0] = 0;
  c->dilation[1] = INT64_MAX;
  CHECK_ERR(infer1(RLX_OP_COL2IM, &p, RLX_DTYPE_F32, SH(1, 4, 9)), RLX_ERR_SHAPE, "2^31");
  c->dilation[1] = 1;
  c->kernel[0] = 9; /* wider than the output */
  CHECK_ERR(infer1(RLX_OP_COL2IM, &p, RLX_DTYPE_F32, SH(1, 18, 9)), RLX_ERR_SHAPE, "does not fit");
  c->kernel[0] = 2;
  CHECK_OK(infer1(RLX_OP_COL2IM, &p, RLX_DTYPE_F32, SH(1, 4, 9)));
}

/* Negative padding crops at most the dim; INT64_MIN/INT64_MAX summed to a
 * small "valid" size before, and the kernel indexed with i - INT64_MIN. */
TEST(pad_extremes) {
  rlx_params p;
  memset(&p, 0, sizeof p);
  p.pad.mode = RLX_PAD_CONSTANT;
  p.pad.lo[0] = INT64_MIN, p.pad.hi[0] = INT64_MAX;
  CHECK_ERR(infer1(RLX_OP_PAD, &p, RLX_DTYPE_F32, SH(3)), RLX_ERR_SHAPE, "out of range");
  p.pad.lo[0] = -4, p.pad.hi[0] = 2;
  CHECK_ERR(infer1(RLX_OP_PAD, &p, RLX_DTYPE_F32, SH(3)), RLX_ERR_SHAPE, "out of range");
  p.pad.lo[0] = -3, p.pad.hi[0] = 1; /* crop everything, then pad one */
  krun r;
  CHECK_OK(krun_op(&r, RLX_OP_PAD, &p, 1, (tens[]){TF(F32, SH(3), 1, 2, 3)}, 1));
  CHECK_SHAPE(&r, 0, F32, 1);
  CHECK_F(&r, 0, 0, 0);
  krun_free(&r);
}

/* A user scale factor far from out / in made the source index overflow the
 * float -> int conversion (1e-300) or read past the input (linear mode). */
TEST(resize_hostile_scales) {
  rlx_params p;
  memset(&p, 0, sizeof p);
  p.resize.nd = 1;
  p.resize.out[0] = 4;
  double bad[] = {1e-300, -2, NAN, INFINITY, 0.01};
  for (int m = RLX_RESIZE_NEAREST; m <= RLX_RESIZE_CUBIC; m++)
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      p.resize.mode = (rlx_resize_mode)m;
      p.resize.scales[0] = bad[i];
      CHECK_ERR(infer1(RLX_OP_RESIZE, &p, RLX_DTYPE_F32, SH(1, 1, 2)), RLX_ERR_SHAPE, "scale factor");
    }
  /* antialiased downsampling with its true scale still works */
  p.resize.mode = RLX_RESIZE_LINEAR;
  p.resize.antialias = true;
  p.resize.out[0] = 2;
  p.resize.scales[0] = 0.5;
  krun r;
  CHECK_OK(krun_op(&r, RLX_OP_RESIZE, &p, 1, (tens[]){TF(F32, SH(1, 1, 4), 1, 2, 3, 4)}, 1));
  CHECK_SHAPE(&r, 0, F32, 1, 1, 2);
  krun_free(&r);
}

/* Reflection padding with NaN, inf and 1e30 coordinates: the flip count was
 * converted to int64 (undefined for these). Now defined: NaN and inf give
 * an out-of-image tap (0), 1e30 some in-image value. */
TEST(grid_sample_reflection_extremes) {
  for (int align = 0; align < 2; align++)
    for (int mode = 0; mode < 3; mode++) {
      rlx_params p = {.grid_sample = {.mode = mode, .padding = 2, .align_corners = align}};
      krun r;
      CHECK_OK(krun_op(&r, RLX_OP_GRID_SAMPLE, &p, 2,
                       (tens[]){TF(F32, SH(1, 1, 2, 2), 1, 2, 3, 4),
                                TF(F32, SH(1, 1, 4, 2), NAN, 0, INFINITY, -INFINITY, 1e30, -1e30, 0.5, 0.25)},
                       1));
      CHECK_SHAPE(&r, 0, F32, 1, 1, 1, 4);
      for (int i = 0; i < 4; i++) {
        double v = kt_f(&r, 0, i);
        CHECK(isnan(v) || (v >= 0 && v <= 4.0001)); /* defined and within the image's range */
      }
      krun_free(&r);
    }
}

/* The fast kernels' exp: NaN in (a softmax row of -inf gives -inf - -inf)
 * converted NaN to int32 for the exponent bits. */
TEST(exp_f32_non_finite) {
  volatile float nan = NAN, inf = INFINITY;
  CHECK(isnan(exp_f32(nan)));
  CHECK(exp_f32(-inf) == 0.0f);
  CHECK(isinf(exp_f32(inf)));
  CHECK(exp_f32(-inf - -inf) != exp_f32(-inf - -inf)); /* NaN */
  CHECK_NEAR(exp_f32(1.0f), 2.718281828, 1e-6);
}

/* ---- files ---- */

/* A temporary export directory: a copy of examples/models/mnist_cnn. */
static void copy_file(const char *from, const char *to) {
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  char buf[65536];
  size_t n;
  while (a && b && (n = fread(buf, 1, sizeof buf, a)) > 0) fwrite(buf, 1, n, b);
  if (a) fclose(a);
  if (b) fclose(b);
}

static void make_export(char *dir, size_t cap) {
  snprintf(dir, cap, "%s/rlx_hostile_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  CHECK(mkdtemp(dir) != NULL);
  char a[600], b[600];
  static const char *files[] = {"torch-ir.json", "weights.safetensors"};
  for (int i = 0; i < 2; i++) {
    snprintf(a, sizeof a, "examples/models/mnist_cnn/%s", files[i]);
    snprintf(b, sizeof b, "%s/%s", dir, files[i]);
    copy_file(a, b);
  }
}

static void remove_export(const char *dir) {
  char p[600];
  static const char *files[] = {"torch-ir.json", "weights.safetensors"};
  for (int i = 0; i < 2; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, files[i]);
    unlink(p);
  }
  rmdir(dir);
}

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "test_hostile: a load blocked (FIFO?): hang\n";
  if (write(2, msg, sizeof msg - 1)) {}
  _exit(3);
}

/* A FIFO with no writer in place of torch-ir.json or weights.safetensors
 * blocked open() forever; a symlink to /dev/zero was read until memory ran
 * out. Both are refused at once, naming the file and what it is. */
TEST(special_files_refused) {
  signal(SIGALRM, on_alarm);
  alarm(20);
  static const char *files[] = {"torch-ir.json", "weights.safetensors"};
  for (int i = 0; i < 2; i++) {
    char dir[512], p[600];
    make_export(dir, sizeof dir);
    snprintf(p, sizeof p, "%s/%s", dir, files[i]);
    unlink(p);
    CHECK(mkfifo(p, 0600) == 0);
    rlx_model *m = NULL;
    CHECK_ERR(rlx_model_load(dir, NULL, &m), RLX_ERR_IO, "is a FIFO");
    CHECK(strstr(rlx_last_error(), files[i]) != NULL);
    unlink(p);
    CHECK(symlink("/dev/zero", p) == 0);
    CHECK_ERR(rlx_model_load(dir, NULL, &m), RLX_ERR_IO, "is a character device");
    unlink(p);
    CHECK(mkdir(p, 0700) == 0);
    CHECK_ERR(rlx_model_load(dir, NULL, &m), RLX_ERR_IO, "is a directory");
    rmdir(p);
    remove_export(dir);
    CHECK(m == NULL);
  }
  alarm(0);
}

/* Truncating weights.safetensors under a loaded model made the next run
 * die of SIGBUS (mapped weights). Now session creation and every run check
 * the file's size first and fail with RLX_ERR_IO naming it; a model loaded
 * with copy_weights does not depend on the file at all. */
TEST(truncated_weights_while_loaded) {
  for (int copy = 0; copy < 2; copy++) {
    char dir[512], w[600];
    make_export(dir, sizeof dir);
    snprintf(w, sizeof w, "%s/weights.safetensors", dir);
    rlx_load_options lo = {.size = sizeof lo, .copy_weights = copy};
    rlx_model *m = NULL;
    rlx_compiled *c = NULL;
    rlx_session *s = NULL;
    rlx_compile_options co;
    rlx_compile_options_init(&co);
    co.reference_kernels = 1; /* reads the weights themselves, not packed copies */
    CHECK_OK(rlx_model_load(dir, &lo, &m));
    CHECK_OK(rlx_model_compile(m, &co, &c));
    CHECK_OK(rlx_session_create(c, &s));
    rlx_io_info info;
    CHECK_OK(rlx_model_input_info(m, 0, &info));
    rlx_tensor_view v = {.dtype = info.dtype, .rank = info.rank};
    memcpy(v.dims, info.dims, sizeof v.dims);
    v.data = calloc((size_t)rlx_view_numel(&v), rlx_dtype_size(v.dtype));
    CHECK_OK(rlx_session_bind_input(s, info.name, &v));
    CHECK_OK(rlx_session_run(s));
    CHECK(truncate(w, 16) == 0);
    if (copy) {
      CHECK_OK(rlx_session_run(s));
    } else {
      CHECK_ERR(rlx_session_run(s), RLX_ERR_IO, "truncated");
      CHECK(strstr(rlx_last_error(), "weights.safetensors") != NULL);
      rlx_session *s2 = NULL;
      CHECK_ERR(rlx_session_create(c, &s2), RLX_ERR_IO, "truncated");
      CHECK(s2 == NULL);
    }
    free(v.data);
    rlx_session_destroy(s);
    rlx_compiled_destroy(c);
    rlx_model_destroy(m);
    remove_export(dir);
  }
}

/* max_memory bounds what an untrusted model can make a session allocate:
 * compile fails naming the largest value instead. */
TEST(max_memory_limit) {
  rlx_model *m = NULL;
  rlx_compiled *c = NULL;
  CHECK_OK(rlx_model_load("examples/models/mnist_cnn", NULL, &m));
  rlx_compile_options o;
  rlx_compile_options_init(&o);
  o.max_memory = 1024;
  CHECK_ERR(rlx_model_compile(m, &o, &c), RLX_ERR_OUT_OF_MEMORY, "over max_memory (1024); its largest value is node '");
  CHECK(c == NULL);
  o.max_memory = (size_t)1 << 30;
  CHECK_OK(rlx_model_compile(m, &o, &c));
  rlx_compiled_destroy(c);
  o.threads = RLX_MAX_THREADS + 1;
  CHECK_ERR(rlx_model_compile(m, &o, &c), RLX_ERR_INVALID_ARGUMENT, "threads=257");
  rlx_model_destroy(m);
}

TEST_MAIN(as_strided_span_overflow, output_shape_limit, pdist_pair_count_overflow, col2im_params_bounded,
          pad_extremes, resize_hostile_scales, grid_sample_reflection_extremes, exp_f32_non_finite,
          special_files_refused, truncated_weights_while_loaded, max_memory_limit)
