/*
 * test_fusion.c — the elementwise fusion pass (passes/fuse_eltwise.c) and
 * the fused op (ops/fused.c, cpu/fused.c). Each case builds a small graph of
 * unary / binary nodes, runs it unfused, then fuses it (the IR verifier run
 * after the pass) and checks which nodes were fused, and that the fused
 * graph computes the same bits: reference kernels against reference
 * kernels, fast against fast (the fused kernel runs each step as the
 * unfused node's fast kernel does), with 1, 2 and 3 threads, on random
 * inputs with NaN and infinities, at sizes around the kernel's tile (256)
 * and task (16384) lengths, empty and rank-0 tensors, and broadcasting.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu/select.h"
#include "ops/ops_util.h"
#include "passes/passes.h"
#include "runtime/runtime.h"
#include "graph_run.h"
#include "test.h"

static unsigned rng = 4242;
static float frand(int64_t i) {
  rng = rng * 1664525u + 1013904223u;
  float v = (float)((double)(rng >> 8) / 16777216.0 * 8.0 - 4.0);
  if (i % 11 == 5) v = (i % 3 == 0) ? NAN : (i % 3 == 1) ? INFINITY : -INFINITY;
  return v;
}

static rlx_shape shp(int rank, const int64_t *d) {
  rlx_shape s = {.rank = rank};
  for (int i = 0; i < rank; i++) s.dims[i] = d[i];
  return s;
}
#define SHP(...) shp((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

static int32_t in_f32(rlx_graph *g, const char *name, rlx_shape s) {
  return rlx_graph_add_input(g, name, RLX_DTYPE_F32, &s);
}
static int32_t scalar(rlx_graph *g, float v) {
  rlx_shape s = {.rank = 0};
  return rlx_graph_add_const(g, RLX_DTYPE_F32, &s, &v);
}
static int32_t un(rlx_graph *g, const char *label, rlx_unary_params p, int32_t x) {
  rlx_params q = {.unary = p};
  return rlx_graph_add1(g, RLX_OP_UNARY, &q, &x, 1, label, NULL);
}
static int32_t bin(rlx_graph *g, const char *label, rlx_binary_kind k, int32_t a, int32_t b) {
  rlx_params q = {.binary = {.kind = k}};
  return rlx_graph_add1(g, RLX_OP_BINARY, &q, (int32_t[]){a, b}, 2, label, NULL);
}
#define U(k) ((rlx_unary_params){.kind = RLX_UNARY_##k})

/* Bit-identical, NaN matching NaN. */
static bool same(const float *a, const float *b, int64_t n, const char *what) {
  for (int64_t i = 0; i < n; i++)
    if (!(a[i] == b[i] || (a[i] != a[i] && b[i] != b[i])) || (a[i] == 0 && signbit(a[i]) != signbit(b[i]))) {
      fprintf(stderr, "  [%s] %s: element %lld: %.9g vs %.9g\n", rlx_test_current, what, (long long)i, a[i], b[i]);
      return false;
    }
  return true;
}

/* Fuses g (a clone of it) and checks: `fused` fused nodes with `steps`
 * steps in all, `left` nodes in the fused graph, the same outputs. */
static void check_case(rlx_graph *g, int fused, int steps, int left) {
  rlx_graph f;
  CHECK_OK(rlx_graph_clone(g, &f));
  CHECK_OK(rlx_pass_fuse_eltwise(&f));
  CHECK_OK(rlx_graph_verify(&f, "fuse_eltwise"));
  CHECK_OK(rlx_pass_dce(&f));
  CHECK_OK(rlx_graph_verify(&f, "dce"));
  int nsteps = 0;
  for (int32_t i = 0; i < f.n_nodes; i++)
    if (f.nodes[i].op == RLX_OP_FUSED) nsteps += f.nodes[i].p.fused.n_steps;
  CHECK(graph_count_op(&f, RLX_OP_FUSED) == fused);
  CHECK(nsteps == steps);
  CHECK(f.n_nodes == left);
  if (graph_count_op(&f, RLX_OP_FUSED) != fused || nsteps != steps || f.n_nodes != left)
    fprintf(stderr, "  [%s] %d fused nodes, %d steps, %d nodes\n", rlx_test_current, graph_count_op(&f, RLX_OP_FUSED),
            nsteps, (int)f.n_nodes);
  float *inputs[16];
  for (int i = 0; i < g->n_inputs; i++) {
    int64_t n = rlx_shape_numel(&g->values[g->inputs[i]].shape);
    inputs[i] = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t e = 0; e < n; e++) inputs[i][e] = frand(e);
  }
  for (int threads = 0; threads <= 3; threads++) {
    const char *names[64] = {0};
    float **a = graph_run(g, inputs, threads, NULL), **b = graph_run(&f, inputs, threads, names);
    for (int i = 0; i < g->n_outputs; i++) {
      CHECK(same(a[i], b[i], rlx_shape_numel(&g->values[g->outputs[i]].shape), threads ? "fast" : "reference"));
      free(a[i]), free(b[i]);
    }
    free(a), free(b);
    for (int32_t i = 0; threads && i < f.n_nodes && i < 64; i++)
      if (f.nodes[i].op == RLX_OP_FUSED) CHECK(!strcmp(names[i], "f32_fused_eltwise"));
  }
  for (int i = 0; i < g->n_inputs; i++) free(inputs[i]);
  rlx_graph_free(&f);
  rlx_graph_free(g);
}

/* torch's hardswish decomposition: x * clamp(x + 3, 0, 6) / 6 (x read twice). */
static void hardswish_case(rlx_shape s, int *left) {
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t x = in_f32(&g, "x", s);
  int32_t a = bin(&g, "add", RLX_BINARY_ADD, x, scalar(&g, 3));
  int32_t c0 = un(&g, "clamp", (rlx_unary_params){.kind = RLX_UNARY_CLAMP, .a = 0, .b = NAN}, a);
  int32_t c1 = un(&g, "clamp_1", (rlx_unary_params){.kind = RLX_UNARY_CLAMP, .a = NAN, .b = 6}, c0);
  int32_t m = bin(&g, "mul", RLX_BINARY_MUL, x, c1);
  CHECK_OK(rlx_graph_add_output(&g, bin(&g, "div", RLX_BINARY_DIV, m, scalar(&g, 6))));
  check_case(&g, 1, 5, 1);
  (void)left;
}

TEST(hardswish_sizes) {
  int64_t sizes[] = {0, 1, 7, 255, 256, 257, 16383, 16384, 16385, 70001};
  for (size_t i = 0; i < RLX_COUNTOF(sizes); i++) hardswish_case(SHP(sizes[i]), NULL);
  hardswish_case(SHP(1, 16, 7, 9), NULL);
  hardswish_case((rlx_shape){.rank = 0}, NULL);
  hardswish_case(SHP(2, 0, 3), NULL);
}

/* SiLU-and-multiply (a gated MLP): silu(g) * u. */
TEST(silu_mul) {
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t a = in_f32(&g, "g", SHP(3, 1000)), u = in_f32(&g, "u", SHP(3, 1000));
  CHECK_OK(rlx_graph_add_output(&g, bin(&g, "mul", RLX_BINARY_MUL, un(&g, "silu", U(SILU), a), u)));
  check_case(&g, 1, 2, 1);
}

/* A row bias, GELU and a residual: gelu(x + b) + r, b a row of 257. */
TEST(bias_gelu_residual) {
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t x = in_f32(&g, "x", SHP(3, 5, 257)), b = in_f32(&g, "b", SHP(257)), r = in_f32(&g, "r", SHP(3, 5, 257));
  int32_t h = un(&g, "gelu", U(GELU), bin(&g, "add", RLX_BINARY_ADD, x, b));
  CHECK_OK(rlx_graph_add_output(&g, bin(&g, "add_1", RLX_BINARY_ADD, h, r)));
  check_case(&g, 1, 3, 1);
}

/* Squeeze-excite: the gate hardsigmoid-like chain runs on [1, C, 1, 1] and
 * fuses alone; the scale x * gate has another shape and stays a binary. */
TEST(squeeze_excite) {
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t s = in_f32(&g, "s", SHP(1, 72, 1, 1)), x = in_f32(&g, "x", SHP(1, 72, 28, 28));
  int32_t a = bin(&g, "add", RLX_BINARY_ADD, s, scalar(&g, 3));
  int32_t c = un(&g, "clamp", (rlx_unary_params){.kind = RLX_UNARY_CLAMP, .a = 0, .b = 6}, a);
  int32_t d = bin(&g, "div", RLX_BINARY_DIV, c, scalar(&g, 6));
  CHECK_OK(rlx_graph_add_output(&g, bin(&g, "mul", RLX_BINARY_MUL, d, x)));
  check_case(&g, 1, 3, 2);
}

/* Broadcasting in every direction: columns, rows, outer products, ranks. */
TEST(broadcasts) {
  int64_t shapes[][2][4] = {{{4, 5, 1, 0}, {1, 1, 6, 0}}, {{64, 1, 1, 0}, {1, 64, 56, 56}},
                            {{600, 1, 0, 0}, {1, 70, 0, 0}}, {{3, 1, 50, 16}, {3, 40, 1, 16}}};
  int ranks[][2] = {{3, 3}, {3, 4}, {2, 2}, {4, 4}};
  for (size_t i = 0; i < RLX_COUNTOF(shapes); i++) {
    rlx_graph g;
    rlx_graph_init(&g);
    int32_t a = in_f32(&g, "a", shp(ranks[i][0], shapes[i][0])), b = in_f32(&g, "b", shp(ranks[i][1], shapes[i][1]));
    int32_t t = bin(&g, "sub", RLX_BINARY_SUB, a, b);
    int32_t e = un(&g, "tanh", U(TANH), t);
    int32_t m = bin(&g, "maximum", RLX_BINARY_MAXIMUM, e, b); /* no fast loop: the reference formula */
    CHECK_OK(rlx_graph_add_output(&g, bin(&g, "mul", RLX_BINARY_MUL, m, t)));
    check_case(&g, 1, 4, 1);
  }
}

/* Where a group must stop: an intermediate that is a graph output, one read
 * by a node that is not elementwise, a non-f32 value, a predicate. */
TEST(boundaries) {
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t x = in_f32(&g, "x", SHP(4, 300));
  int32_t y1 = bin(&g, "add", RLX_BINARY_ADD, x, scalar(&g, 1)); /* an output, and read by relu */
  CHECK_OK(rlx_graph_add_output(&g, y1));
  int32_t r = un(&g, "relu", U(RELU), y1);
  CHECK_OK(rlx_graph_add_output(&g, bin(&g, "mul", RLX_BINARY_MUL, r, scalar(&g, 3))));
  check_case(&g, 1, 2, 2); /* add stays; relu + mul fuse */

  rlx_graph_init(&g);
  x = in_f32(&g, "x", SHP(4, 300));
  int32_t e = un(&g, "exp", U(EXP), x); /* read by the reduce as well: stays */
  rlx_params rp = {.reduce = {.kind = RLX_REDUCE_SUM, .axes = 2, .keepdim = true}};
  int32_t sum = rlx_graph_add1(&g, RLX_OP_REDUCE, &rp, &e, 1, "sum", NULL);
  int32_t q = bin(&g, "div", RLX_BINARY_DIV, e, sum);
  CHECK_OK(rlx_graph_add_output(&g, un(&g, "neg", U(NEG), un(&g, "log", U(LOG), q))));
  check_case(&g, 1, 3, 3); /* exp, sum, fused(div, log, neg) */

  rlx_graph_init(&g);
  x = in_f32(&g, "x", SHP(50));
  rlx_params cp = {.cast = {.to = RLX_DTYPE_F64}};
  int32_t c64 = rlx_graph_add1(&g, RLX_OP_CAST, &cp, (int32_t[]){un(&g, "sin", U(SIN), x)}, 1, "cast", NULL);
  cp.cast.to = RLX_DTYPE_F32;
  int32_t c32 = rlx_graph_add1(&g, RLX_OP_CAST, &cp, &c64, 1, "cast_1", NULL);
  int32_t gt = bin(&g, "gt", RLX_BINARY_GT, c32, x); /* bool: not a step */
  (void)gt;
  CHECK_OK(rlx_graph_add_output(&g, un(&g, "cos", U(COS), un(&g, "abs", U(ABS), c32))));
  check_case(&g, 1, 2, 4); /* sin, cast, cast, fused(abs, cos); gt is dead */
}

/* A chain longer than a fused node holds splits; so do more inputs than it takes. */
TEST(limits) {
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t v = in_f32(&g, "x", SHP(1000));
  for (int i = 0; i < 30; i++) v = un(&g, i % 2 ? "tanh" : "sin", i % 2 ? U(TANH) : U(SIN), v);
  CHECK_OK(rlx_graph_add_output(&g, v));
  check_case(&g, 2, 30, 2);

  rlx_graph_init(&g);
  char name[8];
  int32_t acc = in_f32(&g, "x0", SHP(333));
  for (int i = 1; i < 10; i++) {
    snprintf(name, sizeof name, "x%d", i);
    acc = bin(&g, "add", RLX_BINARY_ADD, acc, in_f32(&g, name, SHP(333)));
  }
  CHECK_OK(rlx_graph_add_output(&g, acc));
  check_case(&g, 2, 9, 2); /* 10 inputs: one node takes 8 (7 adds), the other the rest */
}

/* The special-function kinds run in fused programs through the same scalar
 * functions as their nodes (bit-identical): lgamma(x) * 2 + 1, and a chain
 * of binary and parameterized kinds over the tile and task boundaries. */
TEST(special_kinds) {
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t x = in_f32(&g, "x", SHP(3, 1001));
  int32_t l = un(&g, "lgamma", U(LGAMMA), x);
  int32_t m = bin(&g, "mul", RLX_BINARY_MUL, l, scalar(&g, 2));
  CHECK_OK(rlx_graph_add_output(&g, bin(&g, "add", RLX_BINARY_ADD, m, scalar(&g, 1))));
  check_case(&g, 1, 3, 1);

  rlx_graph_init(&g);
  x = in_f32(&g, "x", SHP(16385));
  int32_t y = in_f32(&g, "y", SHP(16385));
  int32_t a = bin(&g, "igamma", RLX_BINARY_IGAMMA, un(&g, "abs", U(ABS), x), y);
  int32_t b = bin(&g, "nextafter", RLX_BINARY_NEXTAFTER, a, y);
  int32_t c = un(&g, "polygamma", (rlx_unary_params){.kind = RLX_UNARY_POLYGAMMA, .a = 1}, b);
  int32_t d = bin(&g, "xlogy", RLX_BINARY_XLOGY, un(&g, "j0", U(BESSEL_J0), c), un(&g, "i0e", U(I0E), y));
  CHECK_OK(rlx_graph_add_output(&g, un(&g, "sinc", U(SINC), d)));
  check_case(&g, 1, 8, 1);
}

/* mvlgamma's kernel refuses out-of-domain elements, which a fused step
 * cannot: it stays a node between two fused groups. */
TEST(mvlgamma_not_fused) {
  rlx_graph g, f;
  rlx_graph_init(&g);
  int32_t x = in_f32(&g, "x", SHP(64));
  int32_t e = bin(&g, "add", RLX_BINARY_ADD, un(&g, "exp", U(EXP), x), scalar(&g, 1));
  int32_t v = un(&g, "mvlgamma", (rlx_unary_params){.kind = RLX_UNARY_MVLGAMMA, .a = 2}, e);
  CHECK_OK(rlx_graph_add_output(&g, bin(&g, "mul", RLX_BINARY_MUL, un(&g, "log", U(LOG), v), scalar(&g, 3))));
  CHECK_OK(rlx_graph_clone(&g, &f));
  CHECK_OK(rlx_pass_fuse_eltwise(&f));
  CHECK_OK(rlx_pass_dce(&f));
  CHECK_OK(rlx_graph_verify(&f, "fuse_eltwise"));
  CHECK(graph_count_op(&f, RLX_OP_FUSED) == 2 && f.n_nodes == 3);
  for (int32_t i = 0; i < f.n_nodes; i++)
    if (f.nodes[i].op == RLX_OP_UNARY) CHECK(f.nodes[i].p.unary.kind == RLX_UNARY_MVLGAMMA);
  rlx_graph_free(&f);
  rlx_graph_free(&g);
}

/* A fused node with a program that is not valid is refused by infer, naming the step. */
TEST(bad_program) {
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t x = in_f32(&g, "x", SHP(4));
  rlx_fused_step steps[2] = {{.op = RLX_OP_UNARY, .p.unary = {.kind = RLX_UNARY_EXP}, .src = {0, 0}},
                             {.op = RLX_OP_BINARY, .p.binary = {.kind = RLX_BINARY_ADD}, .src = {-1, -2}}};
  rlx_params p = {.fused = {.n_steps = 2, .steps = steps}};
  CHECK(rlx_graph_add1(&g, RLX_OP_FUSED, &p, &x, 1, "bad", NULL) < 0);
  CHECK(strstr(rlx_last_error(), "step 1 operand 1") != NULL);
  steps[1].src[1] = 1; /* input 1 of a 1-input node */
  CHECK(rlx_graph_add1(&g, RLX_OP_FUSED, &p, &x, 1, "bad", NULL) < 0);
  steps[1].src[1] = -1;
  steps[1].p.binary.kind = RLX_BINARY_EQ; /* a predicate is not a step */
  CHECK(rlx_graph_add1(&g, RLX_OP_FUSED, &p, &x, 1, "bad", NULL) < 0);
  CHECK(strstr(rlx_last_error(), "step 1") != NULL);
  steps[1].p.binary.kind = RLX_BINARY_ADD;
  CHECK(rlx_graph_add1(&g, RLX_OP_FUSED, &p, &x, 1, "ok", NULL) >= 0);
  rlx_graph_free(&g);
}

TEST_MAIN(hardswish_sizes, silu_mul, bias_gelu_residual, squeeze_excite, broadcasts, boundaries, limits, special_kinds,
          mvlgamma_not_fused, bad_program)
