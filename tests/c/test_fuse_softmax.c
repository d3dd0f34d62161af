/*
 * test_fuse_softmax.c — the pass that folds a hand-written attention's scale
 * and additive mask into its softmax (passes/fuse_softmax.c): which graphs it
 * rewrites and which it leaves alone, the IR verifier after it, and that the
 * fused softmax gives the unfused graph's bits — reference kernels against
 * reference kernels, fast against fast with 1 and 2 threads — on scores and
 * masks with NaN, infinities and fully masked rows, rows longer than the
 * 16 vector lanes with a tail, and masks of every broadcast pattern.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu/select.h"
#include "passes/passes.h"
#include "runtime/runtime.h"
#include "graph_run.h"
#include "test.h"

static int32_t cst(rlx_graph *g, float v) {
  rlx_shape s = {.rank = 0};
  return rlx_graph_add_const(g, RLX_DTYPE_F32, &s, &v);
}
static int32_t bin(rlx_graph *g, rlx_binary_kind k, int32_t a, int32_t b) {
  rlx_params q = {.binary = {.kind = k}};
  return rlx_graph_add1(g, RLX_OP_BINARY, &q, (int32_t[]){a, b}, 2, k == RLX_BINARY_ADD ? "add" : "scale", NULL);
}
static int32_t softmax(rlx_graph *g, int32_t x, int axis, bool lg) {
  rlx_params q = {.softmax = {.axis = axis, .log = lg}};
  return rlx_graph_add1(g, RLX_OP_SOFTMAX, &q, &x, 1, "softmax", NULL);
}

static float val(int64_t i, int which) {
  unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)which * 40503u;
  float v = (float)(h % 2001) / 250.0f - 4.0f;
  if (which == 0 && i % 53 == 17) v = NAN;
  if (which == 0 && i % 61 == 3) v = INFINITY;
  if (which == 1 && h % 5 == 0) v = -INFINITY; /* masked */
  return v;
}

/* Fuses a clone of g, checks the fused softmax's parameters and node count,
 * then every output against the unfused graph. The mask input (input 1)
 * masks whole rows where `full_rows`. */
static void check(rlx_graph *g, bool fused, rlx_softmax_pre pre, bool mask, int left, bool full_rows) {
  rlx_graph f;
  CHECK_OK(rlx_graph_clone(g, &f));
  CHECK_OK(rlx_pass_fuse_softmax(&f));
  CHECK_OK(rlx_graph_verify(&f, "fuse_softmax"));
  CHECK_OK(rlx_pass_dce(&f));
  CHECK_OK(rlx_graph_verify(&f, "dce"));
  const rlx_node *s = NULL;
  for (int32_t i = 0; i < f.n_nodes; i++)
    if (f.nodes[i].op == RLX_OP_SOFTMAX) s = &f.nodes[i];
  CHECK(s != NULL);
  if (s) {
    bool got = s->p.softmax.pre != RLX_SOFTMAX_PRE_NONE || (s->n_in > 1 && s->in[1] >= 0);
    CHECK(got == fused);
    CHECK(s->p.softmax.pre == pre);
    CHECK((s->n_in > 1 && s->in[1] >= 0) == mask);
  }
  CHECK(f.n_nodes == left);
  if (f.n_nodes != left) fprintf(stderr, "  [%s] %d nodes left, want %d\n", rlx_test_current, (int)f.n_nodes, left);
  float *inputs[4];
  for (int i = 0; i < g->n_inputs; i++) {
    int64_t n = rlx_shape_numel(&g->values[g->inputs[i]].shape);
    inputs[i] = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t e = 0; e < n; e++) inputs[i][e] = val(e, i);
    if (i == 1 && full_rows) /* the first row of the mask fully masked */
      for (int64_t e = 0; e < g->values[g->inputs[i]].shape.dims[g->values[g->inputs[i]].shape.rank - 1]; e++)
        inputs[i][e] = -INFINITY;
  }
  for (int threads = 0; threads <= 2; threads++) {
    const char *names[64] = {0};
    float **a = graph_run(g, inputs, threads, NULL), **b = graph_run(&f, inputs, threads, names);
    for (int o = 0; o < g->n_outputs; o++) {
      int64_t n = rlx_shape_numel(&g->values[g->outputs[o]].shape), bad = -1;
      for (int64_t e = 0; e < n && bad < 0; e++)
        if (!(a[o][e] == b[o][e] || (a[o][e] != a[o][e] && b[o][e] != b[o][e]))) bad = e;
      CHECK(bad < 0);
      if (bad >= 0)
        fprintf(stderr, "  [%s] threads %d output %d element %lld: %.9g vs %.9g\n", rlx_test_current, threads, o,
                (long long)bad, a[o][bad], b[o][bad]);
      free(a[o]), free(b[o]);
    }
    free(a), free(b);
    for (int32_t i = 0; threads && i < f.n_nodes; i++) /* the fast kernel takes softmax over the last axis */
      if (f.nodes[i].op == RLX_OP_SOFTMAX && f.nodes[i].p.softmax.axis == f.values[f.nodes[i].out[0]].shape.rank - 1)
        CHECK(!strcmp(names[i], "f32_softmax_rows"));
  }
  for (int i = 0; i < g->n_inputs; i++) free(inputs[i]);
  rlx_graph_free(&f);
  rlx_graph_free(g);
}

#define SH(...) ((rlx_shape){.rank = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), .dims = {__VA_ARGS__}})

/* scores [2, 3, 5, 37] * c + mask of shape ms, softmax (log) over the last axis */
static void scaled_masked(rlx_shape ms, rlx_binary_kind k, bool mask_first, bool c_first, bool lg) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape xs = SH(2, 3, 5, 37);
  int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), m = rlx_graph_add_input(&g, "mask", RLX_DTYPE_F32, &ms);
  int32_t c = cst(&g, k == RLX_BINARY_DIV ? 8.0f : 0.125f);
  int32_t t = k == RLX_BINARY_MUL && c_first ? bin(&g, k, c, x) : bin(&g, k, x, c);
  int32_t u = mask_first ? bin(&g, RLX_BINARY_ADD, m, t) : bin(&g, RLX_BINARY_ADD, t, m);
  CHECK_OK(rlx_graph_add_output(&g, softmax(&g, u, 3, lg)));
  check(&g, true, k == RLX_BINARY_MUL ? RLX_SOFTMAX_PRE_MUL : RLX_SOFTMAX_PRE_DIV, true, 1, true);
}

TEST(scale_and_mask) {
  scaled_masked(SH(1, 1, 5, 37), RLX_BINARY_MUL, false, false, false);
  scaled_masked(SH(2, 1, 1, 37), RLX_BINARY_MUL, true, true, false);
  scaled_masked(SH(5, 37), RLX_BINARY_DIV, false, false, false);
  scaled_masked(SH(2, 3, 5, 37), RLX_BINARY_DIV, true, false, true);
  scaled_masked(SH(1, 3, 5, 1), RLX_BINARY_MUL, false, false, true); /* one value per row */
}

TEST(scale_only_mask_only) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape xs = SH(4, 70);
  int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
  CHECK_OK(rlx_graph_add_output(&g, softmax(&g, bin(&g, RLX_BINARY_DIV, x, cst(&g, 3.0f)), 1, false)));
  check(&g, true, RLX_SOFTMAX_PRE_DIV, false, 1, false);
  rlx_graph_init(&g);
  rlx_shape ms = SH(70);
  x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
  int32_t m = rlx_graph_add_input(&g, "mask", RLX_DTYPE_F32, &ms);
  CHECK_OK(rlx_graph_add_output(&g, softmax(&g, bin(&g, RLX_BINARY_ADD, m, x), 1, true)));
  check(&g, true, RLX_SOFTMAX_PRE_NONE, true, 1, false);
}

TEST(left_alone) {
  rlx_graph g;
  /* neither operand has the whole shape: [4, 1] + [1, 37] */
  rlx_graph_init(&g);
  rlx_shape col = SH(4, 1), row = SH(1, 37);
  int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &col), m = rlx_graph_add_input(&g, "mask", RLX_DTYPE_F32, &row);
  CHECK_OK(rlx_graph_add_output(&g, softmax(&g, bin(&g, RLX_BINARY_ADD, x, m), 1, false)));
  check(&g, false, RLX_SOFTMAX_PRE_NONE, false, 2, false);
  /* a smaller first operand: it is the mask, the other the scores (the same sum) */
  rlx_graph_init(&g);
  rlx_shape xs = SH(1, 37), big = SH(4, 37);
  x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), m = rlx_graph_add_input(&g, "mask", RLX_DTYPE_F32, &big);
  CHECK_OK(rlx_graph_add_output(&g, softmax(&g, bin(&g, RLX_BINARY_ADD, x, m), 1, false)));
  check(&g, true, RLX_SOFTMAX_PRE_NONE, true, 1, false);
  /* the masked scores are also a graph output: only the scale... which feeds the add, not the softmax */
  rlx_graph_init(&g);
  rlx_shape ms = SH(4, 37);
  xs = SH(4, 37);
  x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), m = rlx_graph_add_input(&g, "mask", RLX_DTYPE_F32, &ms);
  int32_t u = bin(&g, RLX_BINARY_ADD, bin(&g, RLX_BINARY_MUL, x, cst(&g, 0.5f)), m);
  CHECK_OK(rlx_graph_add_output(&g, softmax(&g, u, 1, false)));
  CHECK_OK(rlx_graph_add_output(&g, u));
  check(&g, false, RLX_SOFTMAX_PRE_NONE, false, 3, false);
  /* not the last axis */
  rlx_graph_init(&g);
  x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
  CHECK_OK(rlx_graph_add_output(&g, softmax(&g, bin(&g, RLX_BINARY_MUL, x, cst(&g, 0.5f)), 0, false)));
  check(&g, false, RLX_SOFTMAX_PRE_NONE, false, 2, false);
  /* a scale that is not a scalar constant: only the mask folds */
  rlx_graph_init(&g);
  rlx_shape vs = SH(37);
  x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), m = rlx_graph_add_input(&g, "mask", RLX_DTYPE_F32, &ms);
  int32_t sv = rlx_graph_add_input(&g, "s", RLX_DTYPE_F32, &vs);
  CHECK_OK(rlx_graph_add_output(&g, softmax(&g, bin(&g, RLX_BINARY_ADD, bin(&g, RLX_BINARY_MUL, x, sv), m), 1, false)));
  check(&g, true, RLX_SOFTMAX_PRE_NONE, true, 2, false);
}

TEST_MAIN(scale_and_mask, scale_only_mask_only, left_alone)
