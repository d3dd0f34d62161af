/*
 * test_lower_hostile.c — the aten -> rlx lowering on hostile arguments. A
 * torch-ir.json is untrusted: every int and float argument of a node may be
 * anything (INT64_MIN/MAX, 0, negative, NaN, +-inf, 1e300). Each case builds
 * a small graph around one node 'n' and expects the lowering to refuse it
 * with a status and a message naming the node and the argument, or, where
 * torch defines a result, to lower it without undefined behaviour (the ASan
 * and clang float-cast-overflow builds run these) and compute that result.
 *
 * Graphs are written with single quotes (fixtures.h: jq).
 */
#include <stdlib.h>

#include "fixtures.h"
#include "import/lower/lower.h"
#include "runtime/runtime.h"
#include "test.h"

/* ---- helpers ---- */

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

/* Parses a document of the given inputs, nodes and outputs (no weights),
 * lowers and verifies it. On error the fixture is freed and the message kept. */
static rlx_status fx_load(fixture *f, const char *inputs, const char *nodes, const char *outputs) {
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

static rlx_status fx_run(fixture *f, const char *name, rlx_tensor_view v) {
  rlx_compile_options o;
  rlx_compile_options_init(&o);
  rlx_status st = rlx_model_compile(f->m, &o, &f->c);
  if (!st) st = rlx_session_create(f->c, &f->s);
  if (!st && name) st = rlx_session_bind_input(f->s, name, &v);
  return st ? st : rlx_session_run(f->s);
}

/* The lowering of `nodes` over `inputs` must fail with `want` and a message
 * naming node 'n' and containing `arg`. */
static void refuse(int line, rlx_status want, const char *arg, const char *inputs, const char *nodes) {
  fixture f;
  rlx_status st = fx_load(&f, inputs, nodes, "");
  const char *msg = rlx_last_error();
  if (st == RLX_OK) fx_free(&f);
  if (st != want || !strstr(msg, "node 'n' (") || !strstr(msg, arg)) {
    fprintf(stderr, "%s:%d: [%s] lowering returned %s (\"%s\"), expected %s naming node 'n' and \"%s\"\n",
            __FILE__, line, rlx_test_current, rlx_status_string(st), st ? msg : "", rlx_status_string(want), arg);
    rlx_test_failures++;
  }
}
#define REFUSE(want, arg, inputs, nodes) refuse(__LINE__, want, arg, inputs, nodes)

/* Output k's elements as doubles must be `want` (n of them). */
static void check_vals(const fixture *f, int k, const double *want, int64_t n, int line) {
  rlx_tensor_view v;
  if (!f->s || rlx_session_output(f->s, k, &v) || rlx_view_numel(&v) != n) {
    fprintf(stderr, "%s:%d: [%s] output %d is missing or has the wrong size\n", __FILE__, line, rlx_test_current, k);
    rlx_test_failures++;
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    double g = v.dtype == RLX_DTYPE_I64 ? (double)((const int64_t *)v.data)[i] : rlx_load_f64(v.data, v.dtype, i);
    if (g != want[i]) {
      fprintf(stderr, "%s:%d: [%s] output %d element %lld is %.17g, expected %.17g\n", __FILE__, line,
              rlx_test_current, k, (long long)i, g, want[i]);
      rlx_test_failures++;
      return;
    }
  }
}
#define CHECK_VALS(f, k, ...)                                                               \
  do {                                                                                      \
    const double w_[] = {__VA_ARGS__};                                                      \
    check_vals(f, k, w_, (int64_t)(sizeof w_ / sizeof w_[0]), __LINE__);                    \
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

/* ---- division by zero, overflowing factors ---- */

TEST(pixel_shuffle_factor) {
  const char *up = "aten.pixel_shuffle.default", *down = "aten.pixel_unshuffle.default";
  char node[512];
  static const char *const bad[] = {"0", P32, "-2", I64MIN}; /* 0 and 2^32 (r*r wraps to 0) divided by zero */
  for (int i = 0; i < 4; i++) {
    snprintf(node, sizeof node, "{'id': 'n', 'op': '%s', 'args': [{'ref': 'x'}, {'int': %s}], 'out': %s}", up,
             bad[i], OUT("[1, 1, 4, 4]", "f32"));
    REFUSE(RLX_ERR_SHAPE, "'upscale_factor'", X4, node);
    snprintf(node, sizeof node, "{'id': 'n', 'op': '%s', 'args': [{'ref': 'x'}, {'int': %s}], 'out': %s}", down,
             bad[i], OUT("[1, 16, 1, 1]", "f32"));
    REFUSE(RLX_ERR_SHAPE, "'downscale_factor'", X4, node);
  }
  /* channels not divisible by r*r; a plane not divisible by r */
  REFUSE(RLX_ERR_SHAPE, "'upscale_factor'", IN("[1, 3, 2, 2]", "f32"),
         NODE("aten.pixel_shuffle.default", X ", " I(2), OUT("[1, 0, 4, 4]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'downscale_factor'", IN("[1, 1, 3, 4]", "f32"),
         NODE("aten.pixel_unshuffle.default", X ", " I(2), OUT("[1, 4, 1, 2]", "f32")));
}

#define IM2COL(k, d, p, s, out) NODE("aten.im2col.default", X ", " L(k) ", " L(d) ", " L(p) ", " L(s), out)

#define O OUT("[1, 4, 9]", "f32")
TEST(im2col_params) {
  const char *in = IN("[1, 1, 4, 4]", "f32");
  REFUSE(RLX_ERR_SHAPE, "'stride'[0] is 0", in, IM2COL(I(2), I(1), I(0), I(0), O)); /* was SIGFPE */
  REFUSE(RLX_ERR_SHAPE, "'stride'[0] is -1", in, IM2COL(I(2), I(1), I(0), I(-1), O));
  REFUSE(RLX_ERR_SHAPE, "'kernel_size'[0] is 0", in, IM2COL(I(0), I(1), I(0), I(1), O));
  REFUSE(RLX_ERR_SHAPE, "'dilation'[1] is 0", in, IM2COL(I(2), I(1) ", " I(0), I(0), I(1), O));
  REFUSE(RLX_ERR_SHAPE, "'padding'[0] is -1", in, IM2COL(I(2), I(1), I(-1), I(1), O));
  REFUSE(RLX_ERR_SHAPE, "'padding'[0] is " P62, in, IM2COL(I(2), I(1), II(P62), I(1), O)); /* H + 2*pad */
  REFUSE(RLX_ERR_SHAPE, "2^31", in, IM2COL(II(I64MAX), I(1), I(0), I(1), O));
  /* a kernel one wider than the input: (4 - 5) / 2 + 1 truncated to one block before */
  REFUSE(RLX_ERR_SHAPE, "does not fit", in, IM2COL(I(5), I(1), I(0), I(2), OUT("[1, 25, 1]", "f32")));
}
#undef O

TEST(repeat_sizes) {
  const char *in = IN("[2, 3]", "f32");
  REFUSE(RLX_ERR_SHAPE, "'repeats'", in,
         NODE("aten.repeat.default", X ", " L(II(P62) ", " I(4)), OUT("[0, 12]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'repeats'", in,
         NODE("aten.repeat.default", X ", " L(II(I64MAX) ", " I(1)), OUT("[0, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'repeats'[1] is -1", in,
         NODE("aten.repeat.default", X ", " L(I(1) ", " I(-1)), OUT("[2, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'dims'", in, NODE("aten.tile.default", X ", " L(II(P32) ", " II(P32)), OUT("[0, 3]", "f32")));
}

/* unfold's window table [(D - size) / step + 1, size] must not overflow */
TEST(unfold_windows) {
  REFUSE(RLX_ERR_SHAPE, "'size'", IN("[1099511627776]", "f32"),
         NODE("aten.unfold.default", X ", " I(0) ", " I(549755813888) ", " I(1),
              OUT("[0]", "f32"))); /* the true shape is past the record's limit */
  REFUSE(RLX_ERR_SHAPE, "unfold size", IN("[4]", "f32"),
         NODE("aten.unfold.default", X ", " I(0) ", " I(2) ", " I(0), OUT("[3, 2]", "f32")));
}

/* the offset is clamped to the matrix: -INT64_MIN is never computed */
TEST(diagonal_offset_extremes) {
  static const char *const offs[] = {I64MIN, I64MAX, "-3", "3"};
  for (int i = 0; i < 4; i++) {
    char node[512];
    snprintf(node, sizeof node, "{'id': 'n', 'op': 'aten.diagonal.default', 'args': [{'ref': 'x'}, {'int': %s}],"
             " 'out': %s}", offs[i], OUT("[0]", "f32"));
    fixture f;
    CHECK_OK(fx_load(&f, X22, node, "{'ref': 'n', 'shape': [0], 'dtype': 'f32'}"));
    fx_free(&f);
  }
}

/* ---- shapes: view, reshape, unsqueeze, squeeze, flatten, unflatten, expand ---- */

#define O6 OUT("[6]", "f32")
TEST(view_sizes) {
  const char *in = IN("[2, 3]", "f32");
  REFUSE(RLX_ERR_SHAPE, "only one size can be inferred", in,
         NODE("aten.view.default", X ", " L(I(-1) ", " I(-1)), OUT("[6, 1]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'size'[0] is -2", in, NODE("aten.view.default", X ", " L(I(-2) ", " I(-3)), O6));
  REFUSE(RLX_ERR_SHAPE, "'size'[0] is " I64MIN, in, NODE("aten.view.default", X ", " L(II(I64MIN)), O6));
  REFUSE(RLX_ERR_SHAPE, "'shape'", in, NODE("aten.reshape.default", X ", " L(I(4)), O6)); /* 4 != 6 elements */
  REFUSE(RLX_ERR_SHAPE, "'size' disagrees", in,
         NODE("aten.view.default", X ", " L(I(3) ", " I(2)), OUT("[2, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'size' has -1", in, NODE("aten._unsafe_view.default", X ", " L(I(-1) ", " I(-1)), O6));
  /* -1 next to a zero size is ambiguous (a division by zero before) */
  REFUSE(RLX_ERR_SHAPE, "ambiguous", IN("[0, 3]", "f32"),
         NODE("aten.view.default", X ", " L(I(0) ", " I(-1)), OUT("[0, 0]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "overflows", in,
         NODE("aten.view.default", X ", " L(II(P62) ", " I(4) ", " I(0)), OUT("[0]", "f32")));
  /* valid: one -1 */
  fixture f;
  CHECK_OK(fx_load(&f, in, NODE("aten.view.default", X ", " L(I(-1)), O6),
                   "{'ref': 'n', 'shape': [6], 'dtype': 'f32'}"));
  fx_free(&f);
}
#undef O6

#define O OUT("[2, 3, 1]", "f32")
TEST(view_dims) {
  const char *in = IN("[2, 3]", "f32");
  REFUSE(RLX_ERR_SHAPE, "argument 'dim' is " P62, in, NODE("aten.unsqueeze.default", X ", " II(P62), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'dim' is -100", in,
         NODE("aten.unsqueeze.default", X ", " I(-100), OUT("[1, 2, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'dim' is 3", in, NODE("aten.unsqueeze_copy.default", X ", " I(3), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'dim' is 2", in, NODE("aten.squeeze.dim", X ", " I(2), OUT("[2, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'dim' is " I64MIN, in,
         NODE("aten.squeeze.dims", X ", " L(II(I64MIN)), OUT("[2, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'start_dim' is 5", in,
         NODE("aten.flatten.using_ints", X ", " I(5) ", " I(-1), OUT("[6]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "comes after 'end_dim'", in,
         NODE("aten.flatten.using_ints", X ", " I(1) ", " I(0), OUT("[6]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'sizes'", in,
         NODE("aten.unflatten.int", X ", " I(1) ", " L(I(2) ", " I(2)), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'sizes' has -1", in,
         NODE("aten.unflatten.int", X ", " I(1) ", " L(I(-1) ", " I(-1)), O));
  /* valid edges: dim = rank and dim = -rank - 1 */
  fixture f;
  CHECK_OK(fx_load(&f, in, NODE("aten.unsqueeze.default", X ", " I(-3), OUT("[1, 2, 3]", "f32")),
                   "{'ref': 'n', 'shape': [1, 2, 3], 'dtype': 'f32'}"));
  fx_free(&f);
}
#undef O

TEST(expand_sizes) {
  const char *in = IN("[1, 3]", "f32");
  REFUSE(RLX_ERR_SHAPE, "'size'[0] is -2", in,
         NODE("aten.expand.default", X ", " L(I(-2) ", " I(3)), OUT("[1, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "new leading dim", in,
         NODE("aten.expand.default", X ", " L(I(-1) ", " I(-1) ", " I(3)), OUT("[1, 1, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'size' disagrees", in,
         NODE("aten.expand.default", X ", " L(I(2) ", " I(3)), OUT("[4, 3]", "f32")));
}

TEST(permute_flip_duplicates) {
  const char *in = IN("[2, 3]", "f32");
  REFUSE(RLX_ERR_SHAPE, "'dims'[1] repeats axis 1", in,
         NODE("aten.permute.default", X ", " L(I(1) ", " I(-1)), OUT("[3, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'dims'[1] repeats axis 0", in,
         NODE("aten.flip.default", X ", " L(I(0) ", " I(-2)), OUT("[2, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "t() needs", IN("[2, 2, 2]", "f32"), NODE("aten.t.default", X, OUT("[2, 2, 2]", "f32")));
}

/* ---- split family, unbind, stack ---- */

TEST(split_args) {
  const char *in = IN("[4]", "f32");
  REFUSE(RLX_ERR_SHAPE, "'chunks' is 0", in, NODE("aten.chunk.default", X ", " I(0), "[" OUT("[4]", "f32") "]"));
  REFUSE(RLX_ERR_SHAPE, "'split_size' is 0", in, NODE("aten.split.Tensor", X ", " I(0), "[" OUT("[4]", "f32") "]"));
  REFUSE(RLX_ERR_SHAPE, "'split_size' is -1", in,
         NODE("aten.split.Tensor", X ", " I(-1), "[" OUT("[2]", "f32") ", " OUT("[2]", "f32") "]"));
  REFUSE(RLX_ERR_SHAPE, "'split_sizes'[1] is -1", in,
         NODE("aten.split_with_sizes.default", X ", " L(I(5) ", " I(-1)), "[" OUT("[4]", "f32") ", " OUT("[0]", "f32")
           "]"));
  REFUSE(RLX_ERR_SHAPE, "split sizes sum to 2", in,
         NODE("aten.split_with_sizes.default", X ", " L(I(1) ", " I(1)), "[" OUT("[1]", "f32") ", " OUT("[1]", "f32")
           "]"));
  REFUSE(RLX_ERR_SHAPE, "'sections' is 0", in,
         NODE("aten.tensor_split.sections", X ", " I(0), "[" OUT("[4]", "f32") "]"));
  /* recorded pieces whose offsets overflow */
  REFUSE(RLX_ERR_SHAPE, "runs past", IN("[0, 4]", "f32"),
         NODE("aten.split.Tensor", X ", " I(2) ", " I(1),
              "[" OUT("[0, " P62 "]", "f32") ", " OUT("[0, " P62 "]", "f32") "]"));
}

/* tensor_split with indices [3, 1] of arange(5): [0 1 2], [], [1 2 3 4] (the
 * pieces overlap; cumulative offsets were wrong) */
TEST(tensor_split_indices) {
  fixture f;
  float x[5] = {0, 1, 2, 3, 4};
  CHECK_OK(fx_load(&f, IN("[5]", "f32"),
                   NODE("aten.tensor_split.indices", X ", " L(I(3) ", " I(1)),
                        "[" OUT("[3]", "f32") ", " OUT("[0]", "f32") ", " OUT("[4]", "f32") "]")
                   ", {'id': 'g0', 'op': '_getitem', 'args': [{'ref': 'n'}, {'int': 0}], 'out': " OUT("[3]", "f32") "}"
                   ", {'id': 'g2', 'op': '_getitem', 'args': [{'ref': 'n'}, {'int': 2}], 'out': " OUT("[4]", "f32") "}",
                   "{'ref': 'g0', 'shape': [3], 'dtype': 'f32'}, {'ref': 'g2', 'shape': [4], 'dtype': 'f32'}"));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, "x", (rlx_tensor_view){.data = x, .dtype = RLX_DTYPE_F32, .rank = 1, .dims = {5}}));
  CHECK_VALS(&f, 0, 0, 1, 2);
  CHECK_VALS(&f, 1, 1, 2, 3, 4);
  fx_free(&f);
}

TEST(unbind_and_stack) {
  REFUSE(RLX_ERR_FORMAT, "must record 3 outputs", IN("[3, 2]", "f32"),
         NODE("aten.unbind.int", X ", " I(0), "[" OUT("[2]", "f32") "]"));
  REFUSE(RLX_ERR_SHAPE, "stack: tensor 1", IN("[2, 3]", "f32") ", {'id': 'y', 'shape': [3, 2], 'dtype': 'f32'}",
         NODE("aten.stack.default", L(X ", {'ref': 'y'}"), OUT("[2, 2, 3]", "f32")));
}

/* ---- pads ---- */

TEST(pad_values_and_sizes) {
  const char *in = IN("[2]", "i64");
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'value' (-inf) cannot be converted to i64", in,
         NODE("aten.constant_pad_nd.default", X ", " L(I(1) ", " I(1)) ", " FS("-inf"), OUT("[4]", "i64")));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'value' (nan)", IN("[2]", "i32"),
         NODE("aten.constant_pad_nd.default", X ", " L(I(1) ", " I(1)) ", " FS("nan"), OUT("[4]", "i32")));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'value' (300)", IN("[2]", "i8"),
         NODE("aten.pad.default", X ", " L(I(1) ", " I(1)) ", {'str': 'constant'}, " I(300), OUT("[4]", "i8")));
  REFUSE(RLX_ERR_UNSUPPORTED, "up to 2^53", in,
         NODE("aten.constant_pad_nd.default", X ", " L(I(1) ", " I(1)) ", " II(I64MAX), OUT("[4]", "i64")));
  REFUSE(RLX_ERR_SHAPE, "'pad'[0] is " I64MIN "; rlx takes sizes of at least -2^62", IN("[2]", "f32"),
         NODE("aten.constant_pad_nd.default", X ", " L(II(I64MIN) ", " II(I64MAX)), OUT("[1]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'pad'[0, 1] = (-3, 5)", IN("[2]", "f32"), /* crops past the dim (torch: narrow fails) */
         NODE("aten.constant_pad_nd.default", X ", " L(I(-3) ", " I(5)), OUT("[4]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'padding'[0, 1]", IN("[1, 2]", "f32"),
         NODE("aten.replication_pad1d.default", X ", " L(I(-2) ", " I(-1)), OUT("[1, 0]", "f32")));
  /* torch truncates a float fill for an integer tensor: 2.7 pads with 2 */
  fixture f;
  int64_t x[2] = {7, 8};
  CHECK_OK(fx_load(&f, in, NODE("aten.constant_pad_nd.default", X ", " L(I(1) ", " I(1)) ", " F(2.7), OUT("[4]",
                   "i64")),
                   "{'ref': 'n', 'shape': [4], 'dtype': 'i64'}"));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, "x", (rlx_tensor_view){.data = x, .dtype = RLX_DTYPE_I64, .rank = 1, .dims = {2}}));
  CHECK_VALS(&f, 0, 2, 7, 8, 2);
  fx_free(&f);
}

/* ---- fill values and scalars converted to integer dtypes ---- */

#define O OUT("[2]", "i64")
TEST(fill_values) {
  REFUSE(RLX_ERR_UNSUPPORTED, "'fill_value' (inf) cannot be converted to i64", "",
         NODE("aten.full.default", L(I(2)) ", " FS("inf"), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "'fill_value' (nan)", "",
         NODEK("aten.full.default", L(I(2)) ", " FS("nan"), "'dtype': {'dtype': 'i64'}", O));
  REFUSE(RLX_ERR_UNSUPPORTED, "'fill_value' (1e+300)", "",
         NODE("aten.full.default", L(I(2)) ", " F(1e300), OUT("[2]", "i32")));
  REFUSE(RLX_ERR_UNSUPPORTED, "'fill_value' (300) cannot be converted to i8", "",
         NODE("aten.full.default", L(I(2)) ", " I(300), OUT("[2]", "i8")));
  REFUSE(RLX_ERR_UNSUPPORTED, "'fill_value' (-300)", "",
         NODE("aten.full.default", L(I(2)) ", " I(-300), OUT("[2]", "u8")));
  REFUSE(RLX_ERR_UNSUPPORTED, "'fill_value' (-inf)", IN("[2]", "i64"),
         NODE("aten.new_full.default", X ", " L(I(2)) ", " FS("-inf"), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "'fill_value' (inf)", IN("[2]", "i64"),
         NODE("aten.full_like.default", X ", " FS("inf"), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 's' (nan)", "",
         NODE("aten.scalar_tensor.default", FS("nan"), OUT("[]", "i64")));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'value' (inf)", IN("[2]", "i64"),
         NODE("aten.fill.Scalar", X ", " FS("inf"), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'value' (-inf)", IN("[2]", "i64")
         ", {'id': 'm', 'shape': [2], 'dtype': 'bool'}",
         NODE("aten.masked_fill.Scalar", X ", {'ref': 'm'}, " FS("-inf"), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'value' (inf)", IN("[2]", "i64") ", {'id': 'i', 'shape': [1], 'dtype': 'i64'}",
         NODE("aten.scatter.value", X ", " I(0) ", {'ref': 'i'}, " FS("inf"), O));
  /* the size argument must be the recorded shape */
  REFUSE(RLX_ERR_SHAPE, "'size' disagrees", "", NODE("aten.full.default", L(I(3)) ", " F(1.0), OUT("[5]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'size'[0] is -1", "", NODE("aten.zeros.default", L(I(-1)), OUT("[0]", "f32")));
  /* as torch: -1 wraps into u8, NaN is true, a float truncates */
  fixture f;
  CHECK_OK(fx_load(&f, "",
                   "{'id': 'a', 'op': 'aten.full.default', 'args': [" L(I(2)) ", " I(-1) "], 'out': " OUT("[2]", "u8")
                     "},"
                   " {'id': 'b', 'op': 'aten.full.default', 'args': [" L(I(1)) ", " FS("nan") "], 'out': " OUT("[1]",
                     "bool") "},"
                   " {'id': 'c', 'op': 'aten.full.default', 'args': [" L(I(1)) ", " F(-2.7) "], 'out': " OUT("[1]",
                     "i64") "}",
                   "{'ref': 'a', 'shape': [2], 'dtype': 'u8'}, {'ref': 'b', 'shape': [1], 'dtype': 'bool'},"
                   " {'ref': 'c', 'shape': [1], 'dtype': 'i64'}"));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, NULL, (rlx_tensor_view){0}));
  CHECK_VALS(&f, 0, 255, 255);
  CHECK_VALS(&f, 1, 1);
  CHECK_VALS(&f, 2, -2);
  fx_free(&f);
}
#undef O

/* eq.Scalar(x, inf) on a float tensor (logsumexp / nan_to_num decompositions):
 * the scalar stays a float; no conversion of inf to an integer happens */
TEST(compare_with_inf) {
  fixture f;
  float x[3] = {INFINITY, 1, -INFINITY};
  CHECK_OK(fx_load(&f, IN("[3]", "f32"),
                   "{'id': 'e', 'op': 'aten.eq.Scalar', 'args': [{'ref': 'x'}, " FS("inf") "], 'out': " OUT("[3]",
                     "bool") "},"
                   " {'id': 'a', 'op': 'aten.add.Tensor', 'args': [{'ref': 'x'}, " F(1e300) "], 'out': " OUT("[3]",
                     "f32") "}",
                   "{'ref': 'e', 'shape': [3], 'dtype': 'bool'}, {'ref': 'a', 'shape': [3], 'dtype': 'f32'}"));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, "x", (rlx_tensor_view){.data = x, .dtype = RLX_DTYPE_F32, .rank = 1, .dims = {3}}));
  CHECK_VALS(&f, 0, 1, 0, 0);
  fx_free(&f);
  /* an int tensor plus a float scalar computes in float (as torch) */
  CHECK_OK(fx_load(&f, IN("[2]", "i64"), NODE("aten.add.Tensor", X ", " F(1e300), OUT("[2]", "f32")),
                   "{'ref': 'n', 'shape': [2], 'dtype': 'f32'}"));
  fx_free(&f);
}

#define O OUT("[2]", "i64")
TEST(integer_scalar_args) {
  const char *in = IN("[2]", "i64");
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'alpha' must not be a floating point number", in,
         NODEK("aten.add.Tensor", X ", " X, "'alpha': " F(2.5), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "'alpha'", in, NODEK("aten.sub.Tensor", X ", " X, "'alpha': " FS("inf"), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "exponent", in, NODE("aten.pow.Tensor_Scalar", X ", " II(I64MAX), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "'min_val'", in, NODE("aten.hardtanh.default", X ", " F(1e300) ", " F(1e301), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'min' (1000) is outside the representable range of i8", IN("[2]", "i8"),
         NODE("aten.clamp.default", X ", " I(1000), OUT("[2]", "i8")));
  REFUSE(RLX_ERR_SHAPE, "argument 'max' (-1000)", IN("[2]", "i8"),
         NODE("aten.clamp.default", X ", {'none': true}, " I(-1000), OUT("[2]", "i8")));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'min' (inf)", in, NODE("aten.clamp_min.default", X ", " FS("inf"), O));
  /* clamp(x, min=INT64_MAX) is exact (a double parameter would round it to 2^63);
   * a min below an int8's range never binds */
  fixture f;
  int64_t x[2] = {1, -5};
  CHECK_OK(fx_load(&f, in, NODE("aten.clamp.default", X ", " II(I64MAX), O),
                   "{'ref': 'n', 'shape': [2], 'dtype': 'i64'}"));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, "x", (rlx_tensor_view){.data = x, .dtype = RLX_DTYPE_I64, .rank = 1, .dims = {2}}));
  rlx_tensor_view v;
  CHECK(!rlx_session_output(f.s, 0, &v) && ((int64_t *)v.data)[0] == INT64_MAX && ((int64_t *)v.data)[1] == INT64_MAX);
  fx_free(&f);
  int8_t x8[2] = {1, -5};
  CHECK_OK(fx_load(&f, IN("[2]", "i8"), NODE("aten.clamp.default", X ", " I(-1000) ", " I(1000), OUT("[2]", "i8")),
                   "{'ref': 'n', 'shape': [2], 'dtype': 'i8'}"));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, "x", (rlx_tensor_view){.data = x8, .dtype = RLX_DTYPE_I8, .rank = 1, .dims = {2}}));
  CHECK_VALS(&f, 0, 1, -5);
  fx_free(&f);
}
#undef O

/* ---- arange ---- */

#define O OUT("[1]", "i64")
TEST(arange_args) {
  REFUSE(RLX_ERR_SHAPE, "unsupported range: argument 'start' is nan", "",
         NODE("aten.arange.start_step", FS("nan") ", " I(10) ", " I(1), OUT("[10]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'end' is inf", "", NODE("aten.arange.default", FS("inf"), OUT("[3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "unsupported range: argument 'start' is -inf", "",
         NODE("aten.arange.start_step", FS("-inf") ", " I(10) ", " I(1), OUT("[10]", "i64")));
  REFUSE(RLX_ERR_SHAPE, "step must be finite: argument 'step' is inf", "",
         NODE("aten.arange.start_step", I(0) ", " I(10) ", " FS("inf"), O));
  REFUSE(RLX_ERR_SHAPE, "step must be nonzero", "", NODE("aten.arange.start_step", I(0) ", " I(10) ", " I(0), O));
  REFUSE(RLX_ERR_SHAPE, "inconsistent with the step sign", "",
         NODE("aten.arange.start_step", I(0) ", " I(10) ", " I(-1), O));
  REFUSE(RLX_ERR_SHAPE, "has 3 elements but torch recorded 5", "",
         NODE("aten.arange.default", I(3), OUT("[5]", "i64")));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'start' (1e+300) cannot be converted", "",
         NODE("aten.arange.start", F(1e300) ", " F(1e300), OUT("[0]", "i64")));
  REFUSE(RLX_ERR_SHAPE, "elements but torch recorded", "", /* 2^64 elements: past every limit */
         NODE("aten.arange.start_step", II(I64MIN) ", " II(I64MAX) ", " I(1), OUT("[4]", "i64")));
  /* large int64 values stay exact; float arguments for an int64 result truncate (torch) */
  fixture f;
  CHECK_OK(fx_load(&f, "",
                   "{'id': 'a', 'op': 'aten.arange.start_step', 'args': [" II(P62) ", " II("4611686018427389952") ", "
                   I(1024) "], 'out': " OUT("[2]", "i64") "}, {'id': 'b', 'op': 'aten.arange.start_step', 'args': ["
                   F(0.5) ", " F(5.5) ", " F(1.5) "], 'out': " OUT("[4]", "i64") "}",
                   "{'ref': 'a', 'shape': [2], 'dtype': 'i64'}, {'ref': 'b', 'shape': [4], 'dtype': 'i64'}"));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, NULL, (rlx_tensor_view){0}));
  rlx_tensor_view v;
  CHECK(!rlx_session_output(f.s, 0, &v) && ((int64_t *)v.data)[0] == ((int64_t)1 << 62) &&
        ((int64_t *)v.data)[1] == ((int64_t)1 << 62) + 1024);
  CHECK_VALS(&f, 1, 0, 1, 2, 3);
  fx_free(&f);
}
#undef O

/* ---- reductions ---- */

TEST(reduce_dims) {
  const char *in = IN("[2, 3]", "f32");
  REFUSE(RLX_ERR_SHAPE, "argument 'dim'[1] (1) names axis 1 again", in,
         NODE("aten.sum.dim_IntList", X ", " L(I(1) ", " I(1)), OUT("[2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'dim'[1] (-1) names axis 1 again", in,
         NODE("aten.amax.default", X ", " L(I(1) ", " I(-1)), OUT("[2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'dim'[1]", in, NODEK("aten.var.correction", X ", " L(I(0) ", " I(-2)), "", OUT("[3]", "f32")));
  /* an explicit INT64_MIN is not None */
  REFUSE(RLX_ERR_SHAPE, "argument 'dim': axis " I64MIN " is out of range", in,
         NODE("aten.argmax.default", X ", " II(I64MIN), OUT("[]", "i64")));
}

/* ---- one_hot: indices are checked at run time, as torch does ---- */

#define O OUT("[3, 4]", "i64")
TEST(one_hot) {
  const char *in = IN("[3]", "i64");
  REFUSE(RLX_ERR_SHAPE, "argument 'num_classes' is 0", in,
         NODE("aten.one_hot.default", X ", " I(0), OUT("[3, 0]", "i64")));
  REFUSE(RLX_ERR_SHAPE, "argument 'num_classes' is -2", in, NODE("aten.one_hot.default", X ", " I(-2), O));
  REFUSE(RLX_ERR_SHAPE, "'num_classes' is 3 but torch recorded 4", in,
         NODE("aten.one_hot.default", X ", " I(3), O));
  for (int nc = 0; nc < 2; nc++) { /* num_classes 4, and -1 (the recorded 4) */
    fixture f;
    CHECK_OK(fx_load(&f, in, nc ? NODE("aten.one_hot.default", X ", " I(-1), O)
                                : NODE("aten.one_hot.default", X ", " I(4), O),
                     "{'ref': 'n', 'shape': [3, 4], 'dtype': 'i64'}"));
    if (!f.m) return;
    int64_t ok[3] = {0, 3, 1}, big[3] = {0, 4, 1}, neg[3] = {0, -1, 1};
    rlx_tensor_view v = {.data = ok, .dtype = RLX_DTYPE_I64, .rank = 1, .dims = {3}};
    CHECK_OK(fx_run(&f, "x", v));
    CHECK_VALS(&f, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0);
    v.data = big; /* torch: "Class values must be smaller than num_classes" (rlx: an all-zero row before) */
    CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
    CHECK_ERR(rlx_session_run(f.s), RLX_ERR_RUNTIME, "node 'n' (aten.one_hot.default)");
    CHECK(strstr(rlx_last_error(), "index 4 is out of range for a dim of size 4") != NULL);
    v.data = neg; /* torch: "Class values must be non-negative" */
    CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
    CHECK_ERR(rlx_session_run(f.s), RLX_ERR_RUNTIME, "index -1 is out of range");
    fx_free(&f);
  }
}
#undef O

/* ---- convolution and pooling parameters ---- */

#define CONV_IN IN("[1, 1, 4, 4]", "f32") ", {'id': 'w', 'shape': [1, 1, 2, 2], 'dtype': 'f32'}"
#define CONV(extra, out) NODE("aten.conv2d.default", X ", {'ref': 'w'}, {'none': true}" extra, out)

#define O OUT("[1, 1, 3, 3]", "f32")
TEST(conv_params) {
  REFUSE(RLX_ERR_SHAPE, "'stride'[0] is 0", CONV_IN, CONV(", " L(I(0)), O));
  REFUSE(RLX_ERR_SHAPE, "'stride'[0] is " P62 "; it must be in [1, 2^31]", CONV_IN, CONV(", " L(II(P62)), O));
  REFUSE(RLX_ERR_SHAPE, "'padding'[1] is " I64MIN, CONV_IN, CONV(", " L(I(1)) ", " L(I(0) ", " II(I64MIN)), O));
  REFUSE(RLX_ERR_SHAPE, "'dilation'[0] is -1", CONV_IN, CONV(", " L(I(1)) ", " L(I(0)) ", " L(I(-1)), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'groups' is 0", CONV_IN, CONV(", " L(I(1)) ", " L(I(0)) ", " L(I(1)) ", " I(0), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'groups' is " I64MAX, CONV_IN,
         CONV(", " L(I(1)) ", " L(I(0)) ", " L(I(1)) ", " II(I64MAX), O));
  REFUSE(RLX_ERR_SHAPE, "'stride' has 3 entries", CONV_IN,
         CONV(", " L(I(1) ", " I(1) ", " I(1)), O) /* 3 for 2 axes */);
  REFUSE(RLX_ERR_UNSUPPORTED, "padding='same' with 'stride'[0] = 2", CONV_IN,
         NODE("aten.conv2d.padding", X ", {'ref': 'w'}, {'none': true}, " L(I(2)) ", {'str': 'same'}", O));
  REFUSE(RLX_ERR_SHAPE, "'output_padding'[0] = 1 must be smaller", CONV_IN,
         NODE("aten.conv_transpose2d.input", X ", {'ref': 'w'}, {'none': true}, " L(I(1)) ", " L(I(0)) ", " L(I(1)),
              OUT("[1, 1, 6, 6]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "convolution of a f32 input with a f64 weight",
         IN("[1, 1, 4, 4]", "f32") ", {'id': 'w', 'shape': [1, 1, 2, 2], 'dtype': 'f64'}", CONV("", O));
  REFUSE(RLX_ERR_SHAPE, "kernel size 0", IN("[1, 1, 4, 4]", "f32")
         ", {'id': 'w', 'shape': [1, 1, 0, 0], 'dtype': 'f32'}",
         CONV("", OUT("[1, 1, 5, 5]", "f32")));
}
#undef O

#define O OUT("[1, 1, 2, 2]", "f32")
TEST(pool_params) {
  const char *in = IN("[1, 1, 4, 4]", "f32");
  REFUSE(RLX_ERR_SHAPE, "'padding'[0] is " P62, in,
         NODE("aten.avg_pool2d.default", X ", " L(I(2)) ", " L(I(2)) ", " L(II(P62)), O));
  REFUSE(RLX_ERR_SHAPE, "'kernel_size'[0] is 0", in, NODE("aten.max_pool2d.default", X ", " L(I(0)), O));
  REFUSE(RLX_ERR_SHAPE, "'kernel_size'[0] is " I64MAX, in, NODE("aten.max_pool2d.default", X ", " L(II(I64MAX)), O));
  REFUSE(RLX_ERR_SHAPE, "'stride'[0] is 0", in, NODE("aten.max_pool2d.default", X ", " L(I(2)) ", " L(I(0)), O));
  REFUSE(RLX_ERR_SHAPE, "'dilation'[0] is 0", in,
         NODE("aten.max_pool2d.default", X ", " L(I(2)) ", " L(I(2)) ", " L(I(0)) ", " L(I(0)), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'divisor_override' is 0", in,
         NODE("aten.avg_pool2d.default", X ", " L(I(2)) ", " L(I(2)) ", " L(I(0))
           ", {'bool': false}, {'bool': true}, " I(0), O));
  REFUSE(RLX_ERR_SHAPE, "'output_size'[0] is -5", in,
         NODE("aten.adaptive_avg_pool2d.default", X ", " L(I(-5) ", " I(2)), O));
  REFUSE(RLX_ERR_SHAPE, "'stride'[0] is 0", IN("[1, 2, 4, 4]", "f32"),
         NODE("aten.col2im.default", X ", " L(I(4) ", " I(4)) ", " L(I(1)) ", " L(I(1)) ", " L(I(0)) ", " L(I(0)),
              OUT("[1, 2, 4, 4]", "f32")));
}
#undef O

/* ---- interpolation and grid sampling ---- */

#define O OUT("[1, 1, 4, 4]", "f32")
TEST(resize_scales) {
  const char *in = IN("[1, 1, 2, 2]", "f32");
  REFUSE(RLX_ERR_SHAPE, "'scale_factors'[0] is nan", in,
         NODE("aten.upsample_nearest2d.vec", X ", {'none': true}, " L(FS("nan") ", " F(2.0)), O));
  REFUSE(RLX_ERR_SHAPE, "'scale_factors'[1] is inf", in,
         NODE("aten.upsample_bilinear2d.vec", X ", {'none': true}, {'bool': false}, " L(F(2.0) ", " FS("inf")), O));
  REFUSE(RLX_ERR_SHAPE, "'scale_factors'[0] is 1e+300", in,
         NODE("aten.upsample_nearest2d.vec", X ", {'none': true}, " L(F(1e300) ", " F(2.0)), O));
  REFUSE(RLX_ERR_SHAPE, "'scale_factors'[0] is -2", in,
         NODE("aten.upsample_nearest2d.vec", X ", {'none': true}, " L(F(-2.0) ", " F(2.0)), O));
  /* .default scales: torch uses one only when it is > 0 (NaN is not): the sizes decide */
  fixture f;
  CHECK_OK(fx_load(&f, in, NODE("aten.upsample_nearest2d.default", X ", " L(I(4) ", " I(4)) ", " FS("nan") ", "
                   F(-1.0), O),
                   "{'ref': 'n', 'shape': [1, 1, 4, 4], 'dtype': 'f32'}"));
  fx_free(&f);
  const char *gin = IN("[1, 1, 2, 2]", "f32") ", {'id': 'g', 'shape': [1, 2, 2, 2], 'dtype': 'f32'}";
  REFUSE(RLX_ERR_SHAPE, "argument 'interpolation_mode' (0 bilinear, 1 nearest, 2 bicubic) is " P32, gin,
         NODE("aten.grid_sampler_2d.default", X ", {'ref': 'g'}, " II(P32) ", " I(0) ", {'bool': false}",
           OUT("[1, 1, 2, 2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'padding_mode'", gin,
         NODE("aten.grid_sampler_2d.default", X ", {'ref': 'g'}, " I(0) ", " I(-1) ", {'bool': false}",
           OUT("[1, 1, 2, 2]", "f32")));
}
#undef O

/* ---- normalization ---- */

#define O OUT("[2, 4, 3]", "f32")
TEST(norm_args) {
  const char *in = IN("[2, 4, 3]", "f32");
  REFUSE(RLX_ERR_SHAPE, "argument 'num_groups' is 0", in, NODE("aten.group_norm.default", X ", " I(0), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'num_groups' is 3", in, NODE("aten.group_norm.default", X ", " I(3), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'group' is " I64MAX, in,
         NODE("aten.native_group_norm.default", X ", {'none': true}, {'none': true}, " I(2) ", " I(4) ", " I(3) ", "
           II(I64MAX)
              ", " F(1e-5), "[" O ", " OUT("[2, 1]", "f32") ", " OUT("[2, 1]", "f32") "]"));
  /* more normalized dims than the input has (1u << negative before) */
  REFUSE(RLX_ERR_SHAPE, "'normalized_shape' (4 dims)", in,
         NODE("aten.layer_norm.default", X ", " L(I(1) ", " I(2) ", " I(4) ", " I(3)), O));
  REFUSE(RLX_ERR_SHAPE, "'normalized_shape' (1 dims)", in, NODE("aten.rms_norm.default", X ", " L(I(4)), O));
}
#undef O

/* ---- operand checks torch makes ---- */

TEST(operand_types) {
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'condition' must be a bool tensor, got f32", IN("[2]", "f32"),
         NODE("aten.where.self", X ", " X ", " X, OUT("[2]", "f32")));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'mask' must be a bool tensor", IN("[2]", "f32")
         ", {'id': 'm', 'shape': [2], 'dtype': 'u8'}",
         NODE("aten.masked_fill.Scalar", X ", {'ref': 'm'}, " F(1.0), OUT("[2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "matmul operands of different dtypes (f32, i64)", IN("[2, 2]", "f32")
         ", {'id': 'y', 'shape': [2, 2], 'dtype': 'i64'}",
         NODE("aten.mm.default", X ", {'ref': 'y'}", OUT("[2, 2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'p' is nan", IN("[1, 2]", "f32"),
         NODE("aten.cdist.default", X ", " X ", " FS("nan"), OUT("[1, 1]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'p' is -1", IN("[3, 2]", "f32"),
         NODE("aten._pdist_forward.default", X ", " F(-1.0), OUT("[3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'stride'[0] is -1", IN("[4]", "f32"),
         NODE("aten.as_strided.default", X ", " L(I(2)) ", " L(I(-1)), OUT("[2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'storage_offset' is -1", IN("[4]", "f32"),
         NODE("aten.as_strided.default", X ", " L(I(2)) ", " L(I(1)) ", " I(-1), OUT("[2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'mode' (0 sum, 1 mean, 2 max) is " P32, IN("[4, 2]", "f32")
         ", {'id': 'i', 'shape': [2], 'dtype': 'i64'}"
         ", {'id': 'o', 'shape': [1], 'dtype': 'i64'}",
         NODE("aten._embedding_bag.default", X ", {'ref': 'i'}, {'ref': 'o'}, {'bool': false}, " II(P32),
           OUT("[1, 2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'padding_idx' is -5", IN("[4, 2]", "f32")
         ", {'id': 'i', 'shape': [2], 'dtype': 'i64'}"
         ", {'id': 'o', 'shape': [1], 'dtype': 'i64'}",
         NODE("aten._embedding_bag.default", X ", {'ref': 'i'}, {'ref': 'o'}, {'bool': false}, " I(0)
           ", {'bool': false},"
              " {'none': true}, {'bool': false}, " I(-5), OUT("[1, 2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'step' is 0", IN("[4]", "f32") ", {'id': 's', 'shape': [2], 'dtype': 'f32'}",
         NODE("aten.slice_scatter.default", X ", {'ref': 's'}, " I(0) ", " I(0) ", " I(4) ", " I(0), OUT("[4]",
           "f32")));
}

/* ---- recorded types and symbolic values ---- */

TEST(recorded_outputs) {
  /* a used output whose type is not recorded (a null dereference before) */
  REFUSE(RLX_ERR_FORMAT, "output 1 (the mask) is used but its type is not recorded", IN("[3]", "f32"),
         NODE("aten.native_dropout.default", X ", " F(0.5) ", {'bool': false}", "[" OUT("[3]", "f32") ", null]")
         ", {'id': 'g', 'op': '_getitem', 'args': [{'ref': 'n'}, {'int': 1}], 'out': null}");
  REFUSE(RLX_ERR_FORMAT, "output 1 (the mask) is used", IN("[3]", "f32"),
         NODE("aten.native_dropout.default", X ", " F(0.5) ", {'bool': false}", "[" OUT("[3]", "f32") "]")
         ", {'id': 'g', 'op': '_getitem', 'args': [{'ref': 'n'}, {'int': 1}], 'out': null}");
  REFUSE(RLX_ERR_FORMAT, "output 1 is used but its type is not recorded", IN("[1, 1, 4, 4]", "f32"),
         NODE("aten.max_pool2d_with_indices.default", X ", " L(I(2) ", " I(2)), "[" OUT("[1, 1, 2, 2]", "f32")
           ", null]")
         ", {'id': 'g', 'op': '_getitem', 'args': [{'ref': 'n'}, {'int': 1}], 'out': null}");
  REFUSE(RLX_ERR_UNSUPPORTED, "the unknown symbolic value 's9'", IN("[2, 3]", "f32"),
         NODE("aten.transpose.int", X ", {'sym': 's9'}, " I(1), OUT("[3, 2]", "f32")));
}

/* ---- order statistics, scans, view scatters ---- */

TEST(order_stat_args) {
  char node[512];
  static const char *const ks[] = {"0", "-1", "4", I64MIN, I64MAX, P62};
  for (int i = 0; i < 6; i++) { /* k outside [1, 3] for an axis of 3 */
    snprintf(node, sizeof node, "{'id': 'n', 'op': 'aten.kthvalue.default', 'args': [{'ref': 'x'}, {'int': %s}, "
             "{'int': 1}], 'out': [%s, %s]}", ks[i], OUT("[2]", "f32"), OUT("[2]", "i64"));
    REFUSE(RLX_ERR_SHAPE, "kthvalue k=", IN("[2, 3]", "f32"), node);
  }
  static const char *const ops[] = {"aten.median.dim", "aten.nanmedian.dim", "aten.mode.default", "aten.cummax.default",
                                    "aten.cummin.default", "aten.logcumsumexp.default"};
  static const char *const dims[] = {"2", "-3", I64MIN, I64MAX};
  for (int o = 0; o < 6; o++)
    for (int i = 0; i < 4; i++) {
      bool one = o == 5;
      snprintf(node, sizeof node, "{'id': 'n', 'op': '%s', 'args': [{'ref': 'x'}, {'int': %s}], 'out': %s%s%s%s%s}",
               ops[o], dims[i], one ? "" : "[", OUT("[2, 3]", "f32"), one ? "" : ", ", one ? "" : OUT("[2, 3]", "i64"),
               one ? "" : "]");
      REFUSE(RLX_ERR_SHAPE, "argument 'dim'", IN("[2, 3]", "f32"), node);
    }
}

TEST(view_scatter_args) {
  const char *xs = "{'id': 'x', 'shape': [3, 4], 'dtype': 'f32'}, {'id': 's', 'shape': [2], 'dtype': 'f32'}";
  char node[512];
  static const char *const offs[] = {I64MIN, I64MAX};
  for (int i = 0; i < 2; i++) {
    snprintf(node, sizeof node, "{'id': 'n', 'op': 'aten.diagonal_scatter.default', 'args': [{'ref': 'x'}, "
             "{'ref': 's'}, {'int': %s}], 'out': %s}", offs[i], OUT("[3, 4]", "f32"));
    REFUSE(RLX_ERR_SHAPE, "diagonal offset", xs, node);
  }
  static const struct {
    const char *size, *stride, *off, *want;
  } as[] = {{"-1", "1", "0", "size[0] = -1"}, {"2", "-1", "0", "stride -1"}, {"2", I64MAX, "0", "stride"},
            {"2", "1", I64MAX, "storage_offset"}, {"2", "1", "11", "reaches element 12 of a tensor of 12"},
            {"2", "281474976710656", "0", "reaches element"}, {"3", "1", "0", "does not have the view's shape"}};
  for (size_t i = 0; i < sizeof as / sizeof as[0]; i++) {
    snprintf(node, sizeof node, "{'id': 'n', 'op': 'aten.as_strided_scatter.default', 'args': [{'ref': 'x'}, "
             "{'ref': 's'}, {'list': [{'int': %s}]}, {'list': [{'int': %s}]}, {'int': %s}], 'out': %s}", as[i].size,
             as[i].stride, as[i].off, OUT("[3, 4]", "f32"));
    REFUSE(RLX_ERR_SHAPE, as[i].want, xs, node);
  }
  REFUSE(RLX_ERR_UNSUPPORTED, "index_reduce reduce 'sum'",
         "{'id': 'x', 'shape': [3], 'dtype': 'f32'}, {'id': 'i', 'shape': [2], 'dtype': 'i64'}, "
         "{'id': 's', 'shape': [2], 'dtype': 'f32'}",
         NODE("aten.index_reduce.default", "{'ref': 'x'}, {'int': 0}, {'ref': 'i'}, {'ref': 's'}, {'str': 'sum'}",
              OUT("[3]", "f32")));
  REFUSE(RLX_ERR_UNSUPPORTED, "put needs an i64 index",
         "{'id': 'x', 'shape': [3], 'dtype': 'f32'}, {'id': 'i', 'shape': [2], 'dtype': 'i32'}, "
         "{'id': 's', 'shape': [2], 'dtype': 'f32'}",
         NODE("aten.put.default", "{'ref': 'x'}, {'ref': 'i'}, {'ref': 's'}", OUT("[3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "an index of one value",
         "{'id': 'x', 'shape': [], 'dtype': 'f32'}, {'id': 'i', 'shape': [2], 'dtype': 'i64'}",
         NODE("aten.index_select.default", "{'ref': 'x'}, {'int': 0}, {'ref': 'i'}", OUT("[]", "f32")));
}

/* ---- issue 11: index makers, histograms, hash_tensor ---- */

TEST(index_maker_args) {
  char node[512];
  static const char *const rows[] = {"-1", "2147483649", I64MAX, I64MIN};
  for (int i = 0; i < 4; i++) { /* negative, or a matrix past 2^31 rows: refused before counting */
    snprintf(node, sizeof node, "{'id': 'n', 'op': 'aten.tril_indices.default', 'args': [{'int': %s}, {'int': 3}],"
             " 'out': %s}", rows[i], OUT("[2, 3]", "i64"));
    REFUSE(RLX_ERR_SHAPE, "tril_indices", "", node);
  }
  REFUSE(RLX_ERR_SHAPE, "non-negative", "", NODE("aten.triu_indices.default", I(3) ", " I(-5), OUT("[2, 0]", "i64")));
  /* 2^31 x 2^31 would be 2^61 entries */
  REFUSE(RLX_ERR_SHAPE, "too large", "", NODE("aten.triu_indices.default", II("2147483648") ", " II("2147483648"),
                                             OUT("[2, 1]", "i64")));
  /* an offset of INT64_MIN / MAX is clamped: nothing, or everything, below the diagonal */
  fixture f;
  CHECK_OK(fx_load(&f, "", NODE("aten.tril_indices.default", I(2) ", " I(2) ", " II(I64MAX), OUT("[2, 4]", "i64")),
                   "{'ref': 'n', 'shape': [2, 4], 'dtype': 'i64'}"));
  if (f.m) {
    CHECK_OK(fx_run(&f, NULL, (rlx_tensor_view){0}));
    CHECK_VALS(&f, 0, 0, 0, 1, 1, 0, 1, 0, 1);
    fx_free(&f);
  }
  CHECK_OK(fx_load(&f, "", NODE("aten.triu_indices.default", I(2) ", " I(3) ", " II(I64MIN), OUT("[2, 6]", "i64")),
                   "{'ref': 'n', 'shape': [2, 6], 'dtype': 'i64'}"));
  if (f.m) fx_free(&f);
  REFUSE(RLX_ERR_SHAPE, "'size'", X22, NODEK("aten.nonzero_static.default", X, "'size': " I(-1), OUT("[0, 2]", "i64")));
  REFUSE(RLX_ERR_SHAPE, "'size'", X22,
         NODEK("aten.nonzero_static.default", X, "'size': " II(I64MAX), OUT("[1, 2]", "i64")));
  REFUSE(RLX_ERR_UNSUPPORTED, "'mode'", X22, NODEK("aten.hash_tensor.default", X, "'mode': " I(1), OUT("[]", "u64")));
  /* view(dtype): the recorded shape must be the input's with its last dim scaled */
  REFUSE(RLX_ERR_SHAPE, "bitcast of f32 [2, 2] to i64", X22,
         NODE("aten.view.dtype", X ", {'dtype': 'i64'}", OUT("[2, 2]", "i64")));
  REFUSE(RLX_ERR_SHAPE, "bitcast of u8 [3]", IN("[3]", "u8"),
         NODE("aten.view.dtype", X ", {'dtype': 'u32'}", OUT("[0]", "u32")));
  REFUSE(RLX_ERR_FORMAT, "argument 'dtype'", X22, NODE("aten.view.dtype", X ", {'dtype': 'i32'}", OUT("[2, 2]", "u32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'dim'", X22,
         NODE("aten.hash_tensor.default", X ", " L(I(0) ", " I(-2)), OUT("[]", "u64")));
}

TEST(histogram_args) {
  char node[512];
  static const char *const bins[] = {"0", "-1", I64MIN, I64MAX};
  for (int i = 0; i < 4; i++) {
    snprintf(node, sizeof node, "{'id': 'n', 'op': 'aten.histogram.bin_ct', 'args': [{'ref': 'x'}, {'int': %s}],"
             " 'out': [%s, %s]}", bins[i], OUT("[1]", "f32"), OUT("[2]", "f32"));
    REFUSE(RLX_ERR_SHAPE, "'bins'", X22, node);
  }
  static const char *const ranges[] = {L(F(1.0) ", " F(0.0)), L(FS("nan") ", " F(1.0)), L(F(0.0)),
                                       L(FS("-inf") ", " F(1.0))};
  static const rlx_status want[] = {RLX_ERR_SHAPE, RLX_ERR_SHAPE, RLX_ERR_UNSUPPORTED, RLX_ERR_SHAPE};
  static const char *const says[] = {"min should not exceed max", "min should not exceed max", "'range'", "not finite"};
  for (int i = 0; i < 4; i++) {
    snprintf(node, sizeof node, "{'id': 'n', 'op': 'aten.histogram.bin_ct', 'args': [{'ref': 'x'}, {'int': 3}],"
             " 'kwargs': {'range': %s}, 'out': [%s, %s]}", ranges[i], OUT("[3]", "f32"), OUT("[4]", "f32"));
    REFUSE(want[i], says[i], X22, node);
  }
  REFUSE(RLX_ERR_UNSUPPORTED, "f32 or f64", IN("[4]", "i64"),
         "{'id': 'n', 'op': 'aten.histogram.bin_ct', 'args': [{'ref': 'x'}, {'int': 2}], 'out': ["
         OUT("[2]", "i64") ", " OUT("[3]", "i64") "]}");
  REFUSE(RLX_ERR_SHAPE, "at least 2 dimensions", IN("[4]", "f32"),
         NODE("aten._histogramdd_from_bin_cts.default", X ", " L(I(2)), OUT("[2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "2 counts for 3", IN("[4, 3]", "f32"),
         NODE("aten._histogramdd_from_bin_cts.default", X ", " L(I(2) ", " I(2)), OUT("[2, 2]", "f32")));
  /* NaN in the data with no range: a run-time error, as torch raises one */
  fixture f;
  CHECK_OK(fx_load(&f, IN("[3]", "f32"), NODE("aten.histogram.bin_ct", X ", " I(2), "[" OUT("[2]", "f32") ", "
                   OUT("[3]", "f32") "]") ", {'id': 'g', 'op': '_getitem', 'args': [{'ref': 'n'}, {'int': 0}],"
                   " 'out': " OUT("[2]", "f32") "}", "{'ref': 'g', 'shape': [2], 'dtype': 'f32'}"));
  if (f.m) {
    float x[3] = {1.0f, NAN, 2.0f};
    rlx_status st = fx_run(&f, "x", (rlx_tensor_view){x, RLX_DTYPE_F32, 1, {3}});
    CHECK(st == RLX_ERR_RUNTIME && strstr(rlx_last_error(), "not finite"));
    fx_free(&f);
  }
}

TEST_MAIN(pixel_shuffle_factor, im2col_params, repeat_sizes, unfold_windows, diagonal_offset_extremes, view_sizes,
          view_dims, expand_sizes, permute_flip_duplicates, split_args, tensor_split_indices, unbind_and_stack,
          pad_values_and_sizes, fill_values, compare_with_inf, integer_scalar_args, arange_args, reduce_dims, one_hot,
          conv_params, pool_params, resize_scales, norm_args, operand_types, recorded_outputs, order_stat_args,
          view_scatter_args, index_maker_args, histogram_args)
