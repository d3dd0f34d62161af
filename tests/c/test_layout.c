/*
 * test_layout.c — the layout pass (passes/layout.c), the channels-last conv
 * (ops/conv.c reference, cpu/conv_nhwc.c fast kernels) and the transposing
 * permute (cpu/movement.c). Each case builds a small NCHW network, converts
 * a clone (the IR verifier run after the pass and after dce), checks what
 * was converted and how many permutes are left, and runs both graphs:
 *  - with reference kernels, the outputs must be bit-identical (the
 *    channels-last reference conv is the NCHW one on transposed copies);
 *  - with the fast kernels (1, 2 and 3 threads) the converted graph must
 *    run the channels-last kernels and match the NCHW reference within
 *    float rounding of a reordered sum (|d| <= 1e-5 * (1 + |ref|) * taps),
 *    NaN where it is NaN, on inputs with odd channel counts, strides,
 *    dilations, big kernels (more taps than the offset table), 1x1 images,
 *    NaN and infinities.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu/select.h"
#include "ir/print.h"
#include "ops/ops_util.h"
#include "passes/passes.h"
#include "runtime/runtime.h"
#define GRAPH_BUILD_SEED 777u
#include "graph_build.h"
#include "graph_run.h"
#include "test.h"

/* conv of x: O outputs, k x k, stride s, pad p, dilation d, groups G, with a bias. */
static int32_t conv(rlx_graph *g, const char *label, int32_t x, int64_t O, int64_t k, int64_t s, int64_t p, int64_t d,
                    int64_t G) {
  int64_t C = g->values[x].shape.dims[1];
  rlx_params q = {.conv = {.nd = 2, .stride = {s, s}, .pad = {p, p}, .dilation = {d, d}, .groups = G}};
  int32_t w = weight(g, shp4(O, C / G, k, k));
  rlx_shape bs = {.rank = 1, .dims = {O}};
  int32_t b = weight(g, bs);
  return rlx_graph_add1(g, RLX_OP_CONV, &q, (int32_t[]){x, w, b}, 3, label, NULL);
}

static int32_t un(rlx_graph *g, const char *label, rlx_unary_kind k, int32_t x) {
  rlx_params q = {.unary = {.kind = k}};
  return rlx_graph_add1(g, RLX_OP_UNARY, &q, &x, 1, label, NULL);
}
static int32_t bin(rlx_graph *g, const char *label, rlx_binary_kind k, int32_t a, int32_t b) {
  rlx_params q = {.binary = {.kind = k}};
  return rlx_graph_add1(g, RLX_OP_BINARY, &q, (int32_t[]){a, b}, 2, label, NULL);
}

static int count_channels_last(const rlx_graph *g) {
  int c = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) c += g->nodes[i].op == RLX_OP_CONV && g->nodes[i].p.conv.channels_last;
  return c;
}

/* Converts a clone of g; expects `convs` channels-last convs and `perms`
 * permutes left; checks the outputs (see the header); frees g. nan: put NaN
 * and infinities in the inputs. */
static void check_case(rlx_graph *g, int convs, int perms, bool nan) {
  rlx_graph f;
  CHECK_OK(rlx_graph_clone(g, &f));
  int perms_before = graph_count_op(g, RLX_OP_PERMUTE);
  CHECK_OK(rlx_pass_layout(&f));
  CHECK_OK(rlx_graph_verify(&f, "layout"));
  CHECK_OK(rlx_pass_fold(&f));
  CHECK_OK(rlx_pass_dce(&f));
  CHECK_OK(rlx_graph_verify(&f, "dce"));
  int got_convs = count_channels_last(&f), got_perms = graph_count_op(&f, RLX_OP_PERMUTE) - perms_before;
  CHECK(got_convs == convs);
  CHECK(got_perms == perms);
  if (got_convs != convs || got_perms != perms) {
    fprintf(stderr, "  [%s] %d channels-last convs (want %d), %d permutes added (want %d):\n", rlx_test_current,
            got_convs, convs, got_perms, perms);
    rlx_graph_print(&f, stderr);
  }
  float *inputs[8];
  for (int i = 0; i < g->n_inputs; i++) {
    int64_t n = rlx_shape_numel(&g->values[g->inputs[i]].shape);
    inputs[i] = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t e = 0; e < n; e++) {
      inputs[i][e] = frand();
      if (nan && e % 97 == 13) inputs[i][e] = e % 3 == 0 ? NAN : e % 3 == 1 ? INFINITY : -INFINITY;
    }
  }
  float **ref = graph_run(g, inputs, 0, NULL);
  for (int threads = 0; threads <= 3; threads++) {
    const char *names[256] = {0};
    float **b = graph_run(&f, inputs, threads, names);
    for (int i = 0; i < g->n_outputs; i++)
      CHECK(close_to(ref[i], b[i], rlx_shape_numel(&g->values[g->outputs[i]].shape), threads ? 2e-4 : 0,
                     threads ? "fast" : "reference"));
    for (int i = 0; i < g->n_outputs; i++) free(b[i]);
    free(b);
    for (int32_t i = 0; threads && i < f.n_nodes && i < 256; i++)
      if (f.nodes[i].op == RLX_OP_CONV && f.nodes[i].p.conv.channels_last) {
        bool nhwc = f.nodes[i].p.conv.x_nchw ? !strcmp(names[i], "f32_conv_stem_nhwc") /* a stem on the image */
                                             : !strncmp(names[i], "f32_conv_nhwc_", 14);
        CHECK(nhwc);
        if (!nhwc) fprintf(stderr, "  [%s] node %s ran %s\n", rlx_test_current, f.nodes[i].label, names[i]);
      }
  }
  for (int i = 0; i < g->n_outputs; i++) free(ref[i]);
  free(ref);
  for (int i = 0; i < g->n_inputs; i++) free(inputs[i]);
  rlx_graph_free(&f);
  rlx_graph_free(g);
}

/* An inverted residual block: 1x1 expand + relu, depthwise, 1x1 project,
 * residual add — one channels-last region: a permute at each end. With
 * 5 to 7 input channels the expand conv stays NCHW and its output is
 * permuted; with at most 4 it is a stem, reading its NCHW input and writing
 * channels-last (x_nchw). A small input (at most 4096 elements) is permuted
 * for the residual add, a big one keeps the add NCHW. */
static void block_case_dil(int64_t N, int64_t C, int64_t H, int64_t W, int64_t E, int64_t k, int64_t s, int64_t dil,
                           bool nan, int convs, int perms) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape xs = shp4(N, C, H, W);
  int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
  int32_t e = un(&g, "relu", RLX_UNARY_RELU, conv(&g, "expand", x, E, 1, 1, 0, 1, 1));
  int32_t d = un(&g, "hardswish", RLX_UNARY_HARDSWISH, conv(&g, "dw", e, E, k, s, k / 2 * dil, dil, E));
  int32_t p = conv(&g, "project", d, C, 1, 1, 0, 1, 1);
  CHECK_OK(rlx_graph_add_output(&g, s == 1 ? bin(&g, "add", RLX_BINARY_ADD, p, x) : p));
  check_case(&g, convs, perms, nan);
}

static void block_case(int64_t N, int64_t C, int64_t H, int64_t W, int64_t E, int64_t k, int64_t s, bool nan, int convs,
                       int perms) {
  block_case_dil(N, C, H, W, E, k, s, 1, nan, convs, perms);
}

TEST(inverted_residual) {
  block_case(1, 16, 12, 12, 64, 3, 1, false, 3, 2);
  block_case(1, 16, 12, 12, 64, 3, 1, true, 3, 2);
  block_case(1, 16, 40, 40, 32, 3, 1, false, 3, 2); /* x is big: the add stays NCHW, still 2 permutes */
  block_case(2, 5, 9, 7, 17, 3, 2, true, 2, 2);     /* odd channels (vector tails), batch 2, stride 2 */
  block_case(1, 24, 7, 7, 130, 5, 2, false, 3, 2);  /* 5x5, 130 channels: 64 + 64 + 2 */
  block_case(1, 16, 9, 67, 48, 3, 2, true, 3, 2);   /* stride 2, 3 rows of 67 x 48 > 32 KiB: runs of 8 pixels + a tail */
  block_case(2, 24, 7, 45, 100, 5, 2, false, 3, 2); /* the same for a 5x5 kernel, blocks of 64 and 36 channels */
  block_case(1, 8, 1, 1, 72, 3, 1, false, 3, 2);    /* a 1x1 image: every tap but the centre outside */
  block_case(1, 3, 20, 3, 24, 9, 1, false, 3, 2);   /* 81 taps: more than the offset table; a 3-channel stem */
  block_case_dil(1, 16, 11, 13, 48, 3, 1, 2, true, 3, 2);  /* dilation 2: the interior run starts at pixel 2 */
  block_case_dil(1, 16, 11, 13, 48, 3, 2, 3, false, 3, 2); /* dilation 3, stride 2 */
  block_case_dil(1, 16, 5, 5, 48, 5, 1, 2, false, 3, 2);   /* dilated kernel wider than the image: no interior */
}

/* Dense convs: strided 3x3 (implicit im2col from the image), a strided 1x1,
 * dilation, an even kernel; the input conv on 3 channels is a stem (its
 * NCHW input read as it is, nothing permuted before the output's);
 * Winograd-shaped 3x3s stay NCHW. */
TEST(dense_convs) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape xs = shp4(1, 3, 17, 19);
  int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
  int32_t a = conv(&g, "stem", x, 16, 3, 2, 1, 1, 1);                 /* x_nchw: 3 input channels */
  int32_t b = conv(&g, "dw", a, 16, 3, 1, 1, 1, 16);                  /* channels-last */
  int32_t c = conv(&g, "s2", b, 24, 3, 2, 1, 1, 1);                   /* channels-last, im2col */
  int32_t d = conv(&g, "dil", c, 20, 3, 1, 2, 2, 1);                  /* dilation 2 */
  int32_t e = conv(&g, "even", d, 12, 2, 1, 0, 1, 1);                 /* 2x2 */
  int32_t f = conv(&g, "down", e, 40, 1, 2, 0, 1, 1);                 /* strided 1x1 */
  CHECK_OK(rlx_graph_add_output(&g, f));
  check_case(&g, 6, 1, true);

  rlx_graph_init(&g);
  xs = shp4(1, 16, 10, 10);
  x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
  a = conv(&g, "dw", x, 16, 3, 1, 1, 1, 16);
  b = conv(&g, "wino", a, 16, 3, 1, 1, 1, 1); /* 3x3 stride 1, 16 -> 16: Winograd's, stays NCHW */
  CHECK_OK(rlx_graph_add_output(&g, conv(&g, "pw", b, 32, 1, 1, 0, 1, 1)));
  check_case(&g, 2, 4, false); /* dw's input and output, pw's input and output */
}

/* A ResNeXt / RegNet bottleneck: 1x1, a grouped 3x3 (16-wide groups: a
 * broadcast; 4-wide: the permute path; 24-wide: vectors from each group's
 * start), 1x1 and the residual add — grouped convs make a network
 * channels-last as depthwise ones do, and every conv of the block runs an
 * NHWC kernel (conv_group.c for the grouped one). */
TEST(grouped) {
  int64_t widths[][2] = {{64, 4}, {32, 8}, {48, 2}}; /* channels, groups */
  for (size_t i = 0; i < RLX_COUNTOF(widths); i++)
    for (int s = 1; s <= 2; s++) {
      rlx_graph g;
      rlx_graph_init(&g);
      rlx_shape xs = shp4(1, 24, 9, 11);
      int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
      int64_t W = widths[i][0], G = widths[i][1];
      int32_t a = un(&g, "relu", RLX_UNARY_RELU, conv(&g, "reduce", x, W, 1, 1, 0, 1, 1));
      int32_t b = un(&g, "relu2", RLX_UNARY_RELU, conv(&g, "grouped", a, W, 3, s, 1, 1, G));
      int32_t c = conv(&g, "expand", b, 24, 1, 1, 0, 1, 1);
      CHECK_OK(rlx_graph_add_output(&g, s == 1 ? bin(&g, "add", RLX_BINARY_ADD, c, x) : c));
      check_case(&g, 3, 2, s == 2);
    }
}

/* Squeeze-excite and the head: mean over H, W with keepdim (renumbered
 * axes, a per-channel gate broadcast back), a mean without keepdim (the
 * same [N, C] tensor either way), and a concat along channels. */
TEST(reduce_concat) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape xs = shp4(2, 24, 9, 9);
  int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
  int32_t d = conv(&g, "dw", x, 24, 3, 1, 1, 1, 24);
  rlx_params r = {.reduce = {.kind = RLX_REDUCE_MEAN, .axes = 0xC, .keepdim = true}};
  int32_t m = rlx_graph_add1(&g, RLX_OP_REDUCE, &r, &d, 1, "mean", NULL);
  int32_t gate = un(&g, "sigmoid", RLX_UNARY_SIGMOID, conv(&g, "fc", m, 24, 1, 1, 0, 1, 1));
  int32_t s = bin(&g, "scale", RLX_BINARY_MUL, d, gate);
  int32_t p = conv(&g, "pw", s, 8, 1, 1, 0, 1, 1);
  rlx_params cat = {.axis = {.axis = 1}};
  int32_t cc = rlx_graph_add1(&g, RLX_OP_CONCAT, &cat, (int32_t[]){p, s}, 2, "cat", NULL);
  r.reduce.keepdim = false;
  CHECK_OK(rlx_graph_add_output(&g, rlx_graph_add1(&g, RLX_OP_REDUCE, &r, &cc, 1, "head", NULL)));
  check_case(&g, 3, 1, true); /* only the input is permuted: the head's [N, C] is the same tensor */
}

/* A per-channel constant [C, 1, 1] and a scalar operand get their own
 * (folded) permutes; a big operand without a twin keeps the node NCHW. */
TEST(operands) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape xs = shp4(1, 12, 30, 25), cs = {.rank = 3, .dims = {12, 1, 1}}, ss = {.rank = 0};
  int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), y = rlx_graph_add_input(&g, "y", RLX_DTYPE_F32, &xs);
  int32_t d = conv(&g, "dw", x, 12, 3, 1, 1, 1, 12);
  int32_t a = bin(&g, "scale", RLX_BINARY_MUL, d, weight(&g, cs));
  float two = 2;
  int32_t b = bin(&g, "add", RLX_BINARY_ADD, a, rlx_graph_add_const(&g, RLX_DTYPE_F32, &ss, &two));
  int32_t c = bin(&g, "mix", RLX_BINARY_SUB, b, y); /* y is as big as b and has no twin: NCHW */
  CHECK_OK(rlx_graph_add_output(&g, c));
  CHECK_OK(rlx_graph_add_output(&g, b));
  check_case(&g, 1, 2, true); /* x's permute and b's back-permute (the constant's folds) */
}

/* When the pass leaves a graph alone: no depthwise or grouped conv; RLX_LAYOUT=nchw.
 * RLX_LAYOUT=nhwc converts every eligible conv. */
TEST(policy) {
  for (int mode = 0; mode < 3; mode++) {
    rlx_graph g;
    rlx_graph_init(&g);
    rlx_shape xs = shp4(1, 16, 8, 8);
    int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
    int32_t a = conv(&g, "a", x, 32, 1, 1, 0, 1, 1);
    CHECK_OK(rlx_graph_add_output(&g, conv(&g, "b", a, 32, 3, 2, 1, 1, 1)));
    if (mode == 1) setenv("RLX_LAYOUT", "nhwc", 1);
    if (mode == 2) setenv("RLX_LAYOUT", "nchw", 1);
    check_case(&g, mode == 1 ? 2 : 0, mode == 1 ? 2 : 0, false);
    unsetenv("RLX_LAYOUT");
  }
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape xs = shp4(1, 16, 8, 8);
  int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
  CHECK_OK(rlx_graph_add_output(&g, conv(&g, "dw", x, 16, 3, 1, 1, 1, 16)));
  setenv("RLX_LAYOUT", "nchw", 1);
  check_case(&g, 0, 0, false);
  unsetenv("RLX_LAYOUT");
}

/* The model's own permutes (ConvNeXt): dw conv, permute to NHWC, an
 * elementwise op, permute back — the pair cancels against the pass's. */
TEST(model_permutes) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape xs = shp4(1, 32, 7, 7);
  int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
  int32_t d = conv(&g, "dw", x, 32, 7, 1, 3, 1, 32);
  rlx_params to = {.permute = {.perm = {0, 2, 3, 1, -1, -1, -1, -1}}}, back = {.permute = {.perm = {0, 3, 1, 2, -1, -1, -1, -1}}};
  int32_t p = rlx_graph_add1(&g, RLX_OP_PERMUTE, &to, &d, 1, "permute", NULL);
  int32_t e = un(&g, "gelu", RLX_UNARY_GELU, p);
  int32_t q = rlx_graph_add1(&g, RLX_OP_PERMUTE, &back, &e, 1, "permute_1", NULL);
  CHECK_OK(rlx_graph_add_output(&g, bin(&g, "add", RLX_BINARY_ADD, q, x)));
  /* x's permute and the add's back-permute are added; the model's two are left dead (dce) */
  rlx_graph f;
  CHECK_OK(rlx_graph_clone(&g, &f));
  CHECK_OK(rlx_pass_layout(&f));
  CHECK_OK(rlx_pass_dce(&f));
  CHECK(graph_count_op(&f, RLX_OP_PERMUTE) == 2);
  rlx_graph_free(&f);
  check_case(&g, 1, 0, true);
}

/* A shufflenet unit: two branches concatenated, the channel shuffle (view as [N, 2, C/2, H, W], axes 1
 * and 2 swapped, view back), split in halves along the channels, one half through a conv and concatenated
 * again, a max pool between. All of it runs on twins: the pool channels-last, the slices and concats on
 * axis 3, the shuffle as a reshape to [N, H, W, 2, C/2], the permute of its axes 3 and 4 (the interleave
 * in cpu/movement.c) and a reshape back; the model's rank-5 permute is left dead. */
TEST(shuffle) {
  for (int64_t half = 5; half <= 16; half += 11) {
    rlx_graph g;
    rlx_graph_init(&g);
    rlx_shape xs = shp4(1, half, 9, 7);
    int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
    int32_t a = conv(&g, "dw", x, half, 3, 1, 1, 1, half), b = conv(&g, "pw", x, half, 1, 1, 0, 1, 1);
    rlx_params cat = {.axis = {.axis = 1}};
    int32_t cc = rlx_graph_add1(&g, RLX_OP_CONCAT, &cat, (int32_t[]){a, b}, 2, "cat", NULL);
    rlx_params mp = {.pool = {.kind = RLX_POOL_MAX, .nd = 2, .kernel = {3, 3}, .stride = {1, 1}, .pad = {1, 1},
                              .dilation = {1, 1}}};
    cc = rlx_graph_add1(&g, RLX_OP_POOL, &mp, &cc, 1, "pool", NULL);
    rlx_params v5 = {.shape = {.shape = {.rank = 5, .dims = {1, 2, half, 9, 7}}}};
    int32_t v = rlx_graph_add1(&g, RLX_OP_RESHAPE, &v5, &cc, 1, "view", NULL);
    rlx_params sw = {.permute = {.perm = {0, 2, 1, 3, 4, -1, -1, -1}}};
    int32_t t = rlx_graph_add1(&g, RLX_OP_PERMUTE, &sw, &v, 1, "permute", NULL);
    rlx_params v4 = {.shape = {.shape = shp4(1, 2 * half, 9, 7)}};
    int32_t u = rlx_graph_add1(&g, RLX_OP_RESHAPE, &v4, &t, 1, "view_1", NULL);
    rlx_params lo = {.slice = {.axis = 1, .start = 0, .end = half, .step = 1}};
    rlx_params hi = {.slice = {.axis = 1, .start = half, .end = 2 * half, .step = 1}};
    int32_t s0 = rlx_graph_add1(&g, RLX_OP_SLICE, &lo, &u, 1, "split", NULL);
    int32_t s1 = rlx_graph_add1(&g, RLX_OP_SLICE, &hi, &u, 1, "split_1", NULL);
    int32_t c = conv(&g, "pw_1", s1, half, 1, 1, 0, 1, 1);
    CHECK_OK(rlx_graph_add_output(&g, rlx_graph_add1(&g, RLX_OP_CONCAT, &cat, (int32_t[]){s0, c}, 2, "cat_1", NULL)));
    check_case(&g, 3, 2, true); /* x's permute, the twin's permute and the output's; the model's one gone */
  }
}

/* The transposing permute at edge sizes, against the reference kernel; then the interleave (rows of 2). */
TEST(transpose) {
  int64_t shapes[][4] = {{1, 3, 224, 5}, {2, 5, 7, 3}, {1, 33, 1, 65}, {1, 64, 9, 9}, {3, 1, 1, 1}, {1, 0, 4, 4}};
  for (size_t s = 0; s < RLX_COUNTOF(shapes); s++)
    for (int dir = 0; dir < 2; dir++) {
      rlx_graph g;
      rlx_graph_init(&g);
      rlx_shape xs = shp4(shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]);
      int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
      rlx_params p = {.permute = {.perm = {0, dir ? 3 : 2, dir ? 1 : 3, dir ? 2 : 1, -1, -1, -1, -1}}};
      CHECK_OK(rlx_graph_add_output(&g, rlx_graph_add1(&g, RLX_OP_PERMUTE, &p, &x, 1, "p", NULL)));
      int64_t n = rlx_shape_numel(&xs);
      float *in = malloc(sizeof(float) * (size_t)(n ? n : 1));
      for (int64_t e = 0; e < n; e++) in[e] = (float)e;
      float **a = graph_run(&g, &in, 0, NULL), **b = graph_run(&g, &in, 2, NULL);
      CHECK(close_to(a[0], b[0], n, 0, "permute"));
      free(a[0]), free(b[0]), free(a), free(b), free(in);
      rlx_graph_free(&g);
    }
  for (int64_t A = 1; A <= 70; A += 3) { /* [N, H, W, 2, A] -> [N, H, W, A, 2] */
    rlx_graph g;
    rlx_graph_init(&g);
    rlx_shape xs = {.rank = 5, .dims = {1, 3, A % 4 + 1, 2, A}};
    int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
    rlx_params p = {.permute = {.perm = {0, 1, 2, 4, 3, -1, -1, -1}}};
    CHECK_OK(rlx_graph_add_output(&g, rlx_graph_add1(&g, RLX_OP_PERMUTE, &p, &x, 1, "p", NULL)));
    int64_t n = rlx_shape_numel(&xs);
    float *in = malloc(sizeof(float) * (size_t)n);
    for (int64_t e = 0; e < n; e++) in[e] = (float)e;
    float **a = graph_run(&g, &in, 0, NULL), **b = graph_run(&g, &in, 2, NULL);
    CHECK(close_to(a[0], b[0], n, 0, "interleave"));
    free(a[0]), free(b[0]), free(a), free(b), free(in);
    rlx_graph_free(&g);
  }
}

TEST_MAIN(inverted_residual, dense_convs, grouped, reduce_concat, operands, policy, model_permutes, shuffle, transpose)
