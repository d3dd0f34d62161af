/*
 * test_recognize.c — the pass that puts back decomposed activations
 * (passes/recognize.c): each way torch spells hardswish and hardsigmoid
 * becomes one unary node, the fast kernels give the same bits as the
 * decomposed graph's fast kernels (the same float operations in the same
 * order; hardswish within an ulp, its kernels multiplying by 1/6 where the
 * decomposition divides by 6) on inputs with NaN, infinities, -3 and 3 (the clamp's corners),
 * the reference kernels agree to float rounding, and near misses are left
 * alone. GPT-2's tanh GELU becomes one gelu_tanh (its kernel rounds in
 * another order: a few ulp); an activation behind a reshape of a matmul's
 * output folds into the matmul (fuse_epilogue), bit for bit, and an
 * activation after a norm into the norm. Attention reads
 * grouped KV heads in place of transformers' repeat_kv copy (the reference
 * kernel bit for bit), and a block-wise tile of the heads is left alone.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu/select.h"
#include "passes/passes.h"
#include "runtime/runtime.h"
#include "graph_run.h"
#include "test.h"

static int32_t scalar(rlx_graph *g, float v) {
  rlx_shape s = {.rank = 0};
  return rlx_graph_add_const(g, RLX_DTYPE_F32, &s, &v);
}
static int32_t un(rlx_graph *g, rlx_unary_params p, int32_t x) {
  rlx_params q = {.unary = p};
  return rlx_graph_add1(g, RLX_OP_UNARY, &q, &x, 1, "u", NULL);
}
static int32_t bin(rlx_graph *g, rlx_binary_kind k, int32_t a, int32_t b) {
  rlx_params q = {.binary = {.kind = k}};
  return rlx_graph_add1(g, RLX_OP_BINARY, &q, (int32_t[]){a, b}, 2, "b", NULL);
}
static rlx_unary_params clampp(double lo, double hi) { return (rlx_unary_params){.kind = RLX_UNARY_CLAMP, .a = lo, .b = hi}; }

#define N 1000

/* Runs a one-input graph on x with the fast kernels (threads 1) or the references (0). */
static void run(const rlx_graph *g, const float *x, float *y, int threads) {
  float *in[1] = {(float *)x};
  float **o = graph_run(g, in, threads, NULL);
  memcpy(y, o[0], rlx_value_nbytes(&g->values[g->outputs[0]]));
  free(o[0]), free(o);
}

/* form: which spelling of the clamp (0: clamp(0, 6), 1: min then max, 2: max
 * then min, 3: hardtanh); swish: x * clamp(...) (operand order swapped when
 * swap); want: the unary the pass must make, or -1 for none. */
static void check(int form, bool swish, bool swap, float three, float six, int want) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape s = {.rank = 2, .dims = {10, N / 10}};
  int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &s);
  int32_t a = bin(&g, RLX_BINARY_ADD, x, scalar(&g, three)), c;
  if (form == 0) c = un(&g, clampp(0, 6), a);
  else if (form == 1) c = un(&g, clampp(NAN, 6), un(&g, clampp(0, NAN), a));
  else if (form == 2) c = un(&g, clampp(0, NAN), un(&g, clampp(NAN, 6), a));
  else c = un(&g, (rlx_unary_params){.kind = RLX_UNARY_HARDTANH, .a = 0, .b = 6}, a);
  if (swish) c = swap ? bin(&g, RLX_BINARY_MUL, c, x) : bin(&g, RLX_BINARY_MUL, x, c);
  CHECK_OK(rlx_graph_add_output(&g, bin(&g, RLX_BINARY_DIV, c, scalar(&g, six))));
  rlx_graph f;
  CHECK_OK(rlx_graph_clone(&g, &f));
  CHECK_OK(rlx_pass_recognize(&f));
  CHECK_OK(rlx_pass_dce(&f));
  CHECK_OK(rlx_graph_verify(&f, "recognize"));
  bool one = f.n_nodes == 1 && f.nodes[0].op == RLX_OP_UNARY;
  if (want < 0) CHECK(f.n_nodes == g.n_nodes);
  else CHECK(one && (int)f.nodes[0].p.unary.kind == want);
  float *xs = malloc(sizeof(float) * N), *y0 = malloc(sizeof(float) * N), *y1 = malloc(sizeof(float) * N);
  for (int i = 0; i < N; i++) xs[i] = (float)(i - N / 2) * 0.0137f;
  xs[0] = NAN, xs[1] = INFINITY, xs[2] = -INFINITY, xs[3] = -3, xs[4] = 3, xs[5] = -0.0f, xs[6] = 1e30f;
  run(&g, xs, y0, 1);
  run(&f, xs, y1, 1);
  for (int i = 0; i < N; i++) {
    bool same = (isnan(y0[i]) && isnan(y1[i])) || memcmp(&y0[i], &y1[i], sizeof(float)) == 0;
    /* hardswish's kernels multiply by 1/6 where the decomposition divides by 6 (eltwise.c: a division a
     * vector was the activation's largest cost): within an ulp, not the same bits */
    if (want == RLX_UNARY_HARDSWISH && !same)
      same = fabsf(y1[i] - y0[i]) <= nextafterf(fabsf(y0[i]), INFINITY) - fabsf(y0[i]);
    if (!same) fprintf(stderr, "  [%s] fast, x=%g: %.9g vs %.9g\n", rlx_test_current, xs[i], y0[i], y1[i]);
    CHECK(same);
  }
  run(&g, xs, y0, 0);
  run(&f, xs, y1, 0);
  for (int i = 0; i < N; i++)
    CHECK((isnan(y0[i]) && isnan(y1[i])) || y0[i] == y1[i] || fabsf(y0[i] - y1[i]) <= 2e-7f * fabsf(y0[i]));
  free(xs), free(y0), free(y1);
  rlx_graph_free(&f);
  rlx_graph_free(&g);
}

TEST(hardswish) {
  for (int form = 0; form < 4; form++)
    for (int swap = 0; swap < 2; swap++) check(form, true, swap, 3, 6, RLX_UNARY_HARDSWISH);
}

TEST(hardsigmoid) {
  for (int form = 0; form < 4; form++) check(form, false, false, 3, 6, RLX_UNARY_HARDSIGMOID);
}

TEST(near_misses) {
  check(0, true, false, 2.5f, 6, -1); /* x + 2.5 */
  check(0, true, false, 3, 6.5f, -1); /* / 6.5 */
  check(0, false, false, 3, 5, -1);

  /* an intermediate read twice, or a graph output; x * clamp(y + 3) */
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape s = {.rank = 1, .dims = {8}};
  int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &s), y = rlx_graph_add_input(&g, "y", RLX_DTYPE_F32, &s);
  int32_t c = un(&g, clampp(0, 6), bin(&g, RLX_BINARY_ADD, x, scalar(&g, 3)));
  CHECK_OK(rlx_graph_add_output(&g, bin(&g, RLX_BINARY_DIV, bin(&g, RLX_BINARY_MUL, x, c), scalar(&g, 6))));
  CHECK_OK(rlx_graph_add_output(&g, c));
  int32_t c2 = un(&g, clampp(0, 6), bin(&g, RLX_BINARY_ADD, y, scalar(&g, 3)));
  CHECK_OK(rlx_graph_add_output(&g, bin(&g, RLX_BINARY_DIV, bin(&g, RLX_BINARY_MUL, x, c2), scalar(&g, 6))));
  int before = g.n_nodes;
  CHECK_OK(rlx_pass_recognize(&g));
  CHECK_OK(rlx_pass_dce(&g));
  CHECK(g.n_nodes == before);
  for (int32_t i = 0; i < g.n_nodes; i++) CHECK(g.nodes[i].op != RLX_OP_UNARY || g.nodes[i].p.unary.kind == RLX_UNARY_CLAMP);
  rlx_graph_free(&g);
}

/* x * 0.5 * (1 + tanh(0.79788456 * (x + 0.044715 * pow(x, 3)))), as GPT-2 writes it. */
static int32_t gelu_new(rlx_graph *g, int32_t x, float c3, bool swap) {
  int32_t cube = un(g, (rlx_unary_params){.kind = RLX_UNARY_POW_SCALAR, .a = 3}, x);
  int32_t inner = bin(g, RLX_BINARY_ADD, x, bin(g, RLX_BINARY_MUL, cube, scalar(g, c3)));
  int32_t t = un(g, (rlx_unary_params){.kind = RLX_UNARY_TANH}, bin(g, RLX_BINARY_MUL, inner, scalar(g, 0.7978845608028654f)));
  int32_t h = bin(g, RLX_BINARY_MUL, x, scalar(g, 0.5f)), o = bin(g, RLX_BINARY_ADD, t, scalar(g, 1.0f));
  return swap ? bin(g, RLX_BINARY_MUL, o, h) : bin(g, RLX_BINARY_MUL, h, o);
}

TEST(gelu_tanh) {
  for (int k = 0; k < 3; k++) {
    rlx_graph g;
    rlx_graph_init(&g);
    rlx_shape s = {.rank = 1, .dims = {N}};
    int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &s);
    CHECK_OK(rlx_graph_add_output(&g, gelu_new(&g, x, k == 2 ? 0.0447f : 0.044715f, k == 1)));
    rlx_graph f;
    CHECK_OK(rlx_graph_clone(&g, &f));
    CHECK_OK(rlx_pass_recognize(&f));
    CHECK_OK(rlx_pass_dce(&f));
    CHECK_OK(rlx_graph_verify(&f, "recognize"));
    if (k == 2) { /* another constant: not GELU */
      CHECK(f.n_nodes == g.n_nodes);
    } else {
      CHECK(f.n_nodes == 1 && f.nodes[0].op == RLX_OP_UNARY && f.nodes[0].p.unary.kind == RLX_UNARY_GELU_TANH);
      float *xs = malloc(sizeof(float) * N), *y0 = malloc(sizeof(float) * N), *y1 = malloc(sizeof(float) * N);
      for (int i = 0; i < N; i++) xs[i] = (float)(i - N / 2) * 0.011f;
      xs[0] = NAN, xs[1] = 30, xs[2] = -30;
      run(&g, xs, y0, 1);
      run(&f, xs, y1, 1);
      for (int i = 0; i < N; i++) /* a few ulp, and an absolute 1e-7 where the value cancels near -4 */
        CHECK((isnan(y0[i]) && isnan(y1[i])) || fabsf(y0[i] - y1[i]) <= 1e-6f * fabsf(y0[i]) + 1e-7f);
      free(xs), free(y0), free(y1);
    }
    rlx_graph_free(&f);
    rlx_graph_free(&g);
  }
}

/* matmul -> reshape -> gelu_tanh: the activation goes into the matmul's
 * epilogue and the reshape reads the activated output; the same bits. */
TEST(epilogue_behind_reshape) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape as = {.rank = 2, .dims = {10, 100}}, ws = {.rank = 2, .dims = {100, 24}}, rs = {.rank = 3, .dims = {2, 5, 24}};
  int32_t a = rlx_graph_add_input(&g, "a", RLX_DTYPE_F32, &as);
  float *w = malloc(sizeof(float) * 2400);
  for (int i = 0; i < 2400; i++) w[i] = (float)((i * 37) % 101 - 50) * 0.003f;
  int32_t wv = rlx_graph_add_const(&g, RLX_DTYPE_F32, &ws, w);
  free(w);
  rlx_params mp = {.matmul = {.alpha = 1, .beta = 1}};
  int32_t m = rlx_graph_add1(&g, RLX_OP_MATMUL, &mp, (int32_t[]){a, wv}, 2, "mm", NULL);
  rlx_params rp = {.shape = {.shape = rs}};
  int32_t r = rlx_graph_add1(&g, RLX_OP_RESHAPE, &rp, &m, 1, "view", NULL);
  CHECK_OK(rlx_graph_add_output(&g, un(&g, (rlx_unary_params){.kind = RLX_UNARY_GELU_TANH}, r)));
  rlx_graph f;
  CHECK_OK(rlx_graph_clone(&g, &f));
  CHECK_OK(rlx_pass_fuse_epilogue(&f));
  CHECK_OK(rlx_pass_dce(&f));
  CHECK_OK(rlx_graph_verify(&f, "fuse_epilogue"));
  CHECK(f.n_nodes == 2 && f.nodes[0].op == RLX_OP_MATMUL && f.nodes[0].p.matmul.ep.has_act &&
        f.nodes[1].op == RLX_OP_RESHAPE);
  float *xs = malloc(sizeof(float) * N), *y0 = malloc(sizeof(float) * N), *y1 = malloc(sizeof(float) * N);
  for (int i = 0; i < N; i++) xs[i] = (float)((i * 13) % 29 - 14) * 0.05f;
  run(&g, xs, y0, 1);
  run(&f, xs, y1, 1);
  CHECK(memcmp(y0, y1, sizeof(float) * 240) == 0);
  free(xs), free(y0), free(y1);
  rlx_graph_free(&f);
  rlx_graph_free(&g);
}

/* matmul -> two reshapes -> (+ r) -> relu. With the add: the add goes into the matmul's epilogue as its
 * residual (read as the output's elements in order) where the reshapes only add unit axes, then the
 * activation after it; a reshape that regroups axes ([10, 24] -> [2, 5, 24]) keeps the add apart. Without
 * it (LeViT's linear, view, view, hardswish): the activation goes into the matmul and the chain's last
 * reshape still gives the output its shape (the residual case once left the chain's end as the activation
 * case's start, with the chain's first reshape standing in for the activated value: the zoo's levit ran on
 * a [10, 1, 24] where its graph had [2, 5, 24]). The same bits as the unfused graph, reference and fast. */
static void matmul_reshape_chain_case(bool add, bool regroup) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape as = {.rank = 2, .dims = {10, 100}}, ws = {.rank = 2, .dims = {100, 24}};
  rlx_shape s1 = {.rank = 3, .dims = {10, 1, 24}}, s2 = {.rank = 3, .dims = {1, 10, 24}}, s3 = {.rank = 3, .dims = {2, 5, 24}};
  int32_t a = rlx_graph_add_input(&g, "a", RLX_DTYPE_F32, &as);
  float *w = malloc(sizeof(float) * 2400);
  for (int i = 0; i < 2400; i++) w[i] = (float)((i * 37) % 101 - 50) * 0.003f;
  int32_t wv = rlx_graph_add_const(&g, RLX_DTYPE_F32, &ws, w);
  for (int i = 0; i < 240; i++) w[i] = (float)((i * 11) % 17 - 8) * 0.1f;
  int32_t res = rlx_graph_add_const(&g, RLX_DTYPE_F32, regroup ? &s3 : &s2, w);
  free(w);
  rlx_params mp = {.matmul = {.alpha = 1, .beta = 1}};
  int32_t m = rlx_graph_add1(&g, RLX_OP_MATMUL, &mp, (int32_t[]){a, wv}, 2, "mm", NULL);
  rlx_params r1 = {.shape = {.shape = s1}}, r2 = {.shape = {.shape = regroup ? s3 : s2}};
  int32_t v = rlx_graph_add1(&g, RLX_OP_RESHAPE, &r1, &m, 1, "view", NULL);
  v = rlx_graph_add1(&g, RLX_OP_RESHAPE, &r2, &v, 1, "view2", NULL);
  CHECK_OK(rlx_graph_add_output(&g, un(&g, (rlx_unary_params){.kind = RLX_UNARY_RELU}, add ? bin(&g, RLX_BINARY_ADD, v, res) : v)));
  rlx_graph f;
  CHECK_OK(rlx_graph_clone(&g, &f));
  for (int pass = 0; pass < 2; pass++) { /* as passes.def: fuse_epilogue, dce, twice */
    CHECK_OK(rlx_pass_fuse_epilogue(&f));
    CHECK_OK(rlx_pass_dce(&f));
    CHECK_OK(rlx_graph_verify(&f, "fuse_epilogue"));
  }
  if (!add) {
    CHECK(graph_count_op(&f, RLX_OP_UNARY) == 0 && f.nodes[0].p.matmul.ep.has_act);
  } else if (regroup) {
    CHECK(graph_count_op(&f, RLX_OP_BINARY) == 1);
  } else {
    CHECK(graph_count_op(&f, RLX_OP_BINARY) == 0 && f.nodes[0].op == RLX_OP_MATMUL && f.nodes[0].n_in == 4 &&
          f.nodes[0].in[3] == res);
  }
  CHECK(rlx_shape_eq(&f.values[f.outputs[0]].shape, &g.values[g.outputs[0]].shape));
  float *xs = malloc(sizeof(float) * 1000), *y0 = malloc(sizeof(float) * 240), *y1 = malloc(sizeof(float) * 240);
  for (int i = 0; i < 1000; i++) xs[i] = (float)((i * 13) % 29 - 14) * 0.05f;
  for (int threads = 0; threads <= 2; threads++) {
    run(&g, xs, y0, threads);
    run(&f, xs, y1, threads);
    CHECK(memcmp(y0, y1, sizeof(float) * 240) == 0);
  }
  free(xs), free(y0), free(y1);
  rlx_graph_free(&f);
  rlx_graph_free(&g);
}

TEST(residual_behind_reshape) {
  matmul_reshape_chain_case(true, false);
  matmul_reshape_chain_case(true, true);
}

TEST(activation_behind_reshape_chain) {
  matmul_reshape_chain_case(false, false);
  matmul_reshape_chain_case(false, true);
}

/* norm -> activation: the activation goes into the norm's epilogue (layer,
 * RMS, group and inference batch norm); the same bits as the unfused graph,
 * fast kernels against fast, references against references, NaN and
 * infinities included; an activation with a second consumer of the norm's
 * output, or a norm that is a graph output, stays apart. */
static void norm_act_case(rlx_op op, rlx_unary_kind act, rlx_shape xs, bool shared) {
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
  int64_t C = op == RLX_OP_GROUP_NORM || op == RLX_OP_BATCH_NORM ? xs.dims[1] : xs.dims[xs.rank - 1];
  rlx_shape cs = {.rank = 1, .dims = {C}};
  float *w = malloc(sizeof(float) * (size_t)C), *b = malloc(sizeof(float) * (size_t)C);
  for (int64_t c = 0; c < C; c++) w[c] = 0.5f + (float)(c % 7) * 0.1f, b[c] = (float)(c % 5) * 0.2f - 0.4f;
  int32_t wv = rlx_graph_add_const(&g, RLX_DTYPE_F32, &cs, w), bv = rlx_graph_add_const(&g, RLX_DTYPE_F32, &cs, b);
  for (int64_t c = 0; c < C; c++) w[c] = 1.0f + (float)(c % 3); /* batch norm's running variance */
  int32_t var = rlx_graph_add_const(&g, RLX_DTYPE_F32, &cs, w);
  free(w), free(b);
  rlx_params np = {.norm = {.n_axes = 1, .groups = 2, .eps = 1e-5}};
  int32_t ins[5] = {x, wv, bv}, nin = op == RLX_OP_RMS_NORM ? 2 : 3;
  if (op == RLX_OP_BATCH_NORM) ins[1] = bv, ins[2] = var, ins[3] = wv, ins[4] = bv, nin = 5;
  int32_t y = rlx_graph_add1(&g, op, &np, ins, nin, "norm", NULL);
  CHECK_OK(rlx_graph_add_output(&g, un(&g, (rlx_unary_params){.kind = act}, y)));
  if (shared) CHECK_OK(rlx_graph_add_output(&g, un(&g, (rlx_unary_params){.kind = RLX_UNARY_NEG}, y)));
  rlx_graph f;
  CHECK_OK(rlx_graph_clone(&g, &f));
  CHECK_OK(rlx_pass_fuse_epilogue(&f));
  CHECK_OK(rlx_pass_dce(&f));
  CHECK_OK(rlx_graph_verify(&f, "fuse_epilogue"));
  bool fused = f.nodes[0].op == op && f.nodes[0].p.norm.ep.has_act;
  CHECK(shared ? !fused && f.n_nodes == 3 : fused && f.n_nodes == 1);
  int64_t n = rlx_shape_numel(&xs);
  float *xd = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++) xd[i] = i % 97 == 13 ? NAN : i % 89 == 7 ? INFINITY : (float)((i * 13) % 29 - 14) * 0.05f;
  float *in[1] = {xd};
  for (int threads = 0; threads <= 2; threads++) {
    float **a = graph_run(&g, in, threads, NULL), **c = graph_run(&f, in, threads, NULL);
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++)
      if (!(a[0][i] == c[0][i] || (a[0][i] != a[0][i] && c[0][i] != c[0][i]))) bad = i;
    CHECK(bad < 0);
    if (bad >= 0)
      fprintf(stderr, "  %s + %s threads %d: element %lld %.9g vs %.9g\n", rlx_op_table[op].name, rlx_unary_names[act],
              threads, (long long)bad, a[0][bad], c[0][bad]);
    for (int o = 0; o < g.n_outputs; o++) free(a[o]), free(c[o]);
    free(a), free(c);
  }
  free(xd);
  rlx_graph_free(&f);
  rlx_graph_free(&g);
}

TEST(norm_activation) {
  rlx_shape rows = {.rank = 3, .dims = {2, 7, 53}}, planes = {.rank = 4, .dims = {2, 6, 9, 11}};
  norm_act_case(RLX_OP_LAYER_NORM, RLX_UNARY_GELU, rows, false);
  norm_act_case(RLX_OP_RMS_NORM, RLX_UNARY_SILU, rows, false);
  norm_act_case(RLX_OP_GROUP_NORM, RLX_UNARY_SILU, planes, false);
  norm_act_case(RLX_OP_BATCH_NORM, RLX_UNARY_RELU, planes, false);
  norm_act_case(RLX_OP_LAYER_NORM, RLX_UNARY_TANH, rows, true); /* the norm's output read twice */
}

static int32_t shaped(rlx_graph *g, rlx_op op, int32_t x, rlx_shape s) {
  rlx_params p = {.shape = {.shape = s}};
  return rlx_graph_add1(g, op, &p, &x, 1, op == RLX_OP_EXPAND ? "expand" : "view", NULL);
}

/* transformers' repeat_kv: [1, 2, 5, 8] -> [1, 2, 1, 5, 8] -> [1, 2, 2, 5, 8] -> [1, 4, 5, 8]
 * (tile: the copy made at axis 1 instead, [1, 1, 2, 5, 8] -> [1, 2, 2, 5, 8], which
 * repeats the heads block by block and must stay) */
static int32_t repeat_kv(rlx_graph *g, int32_t x, bool tile) {
  rlx_shape u = {.rank = 5, .dims = {1, 2, 1, 5, 8}}, t = {.rank = 5, .dims = {1, 1, 2, 5, 8}};
  rlx_shape e = {.rank = 5, .dims = {1, 2, 2, 5, 8}}, r = {.rank = 4, .dims = {1, 4, 5, 8}};
  if (tile) { /* a [1, 2, 5, 8] viewed as [1, 1, 2, 5, 8] then copied twice along axis 1 */
    int32_t v = shaped(g, RLX_OP_RESHAPE, x, t);
    rlx_shape e2 = {.rank = 5, .dims = {1, 2, 2, 5, 8}};
    return shaped(g, RLX_OP_RESHAPE, shaped(g, RLX_OP_EXPAND, v, e2), r);
  }
  return shaped(g, RLX_OP_RESHAPE, shaped(g, RLX_OP_EXPAND, shaped(g, RLX_OP_RESHAPE, x, u), e), r);
}

static void gqa_case(bool tile) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape qs = {.rank = 4, .dims = {1, 4, 3, 8}}, ks = {.rank = 4, .dims = {1, 2, 5, 8}};
  int32_t q = rlx_graph_add_input(&g, "q", RLX_DTYPE_F32, &qs);
  int32_t k = rlx_graph_add_input(&g, "k", RLX_DTYPE_F32, &ks), v = rlx_graph_add_input(&g, "v", RLX_DTYPE_F32, &ks);
  rlx_params ap = {.attention = {.scale = 0.35}};
  int32_t in[4] = {q, repeat_kv(&g, k, tile), repeat_kv(&g, v, tile), -1};
  CHECK_OK(rlx_graph_add_output(&g, rlx_graph_add1(&g, RLX_OP_ATTENTION, &ap, in, 3, "sdpa", NULL)));
  rlx_graph f;
  CHECK_OK(rlx_graph_clone(&g, &f));
  CHECK_OK(rlx_pass_recognize(&f));
  CHECK_OK(rlx_pass_dce(&f));
  CHECK_OK(rlx_graph_verify(&f, "recognize"));
  const rlx_node *a = &f.nodes[f.n_nodes - 1];
  if (tile) {
    CHECK(graph_count_op(&f, RLX_OP_EXPAND) == 2 && a->in[1] != k);
  } else {
    CHECK(f.n_nodes == 1 && a->op == RLX_OP_ATTENTION && a->in[1] == k && a->in[2] == v);
  }
  float *x[3];
  int64_t sizes[3] = {96, 80, 80};
  for (int i = 0; i < 3; i++) {
    x[i] = malloc(sizeof(float) * (size_t)sizes[i]);
    for (int j = 0; j < sizes[i]; j++) x[i][j] = (float)(((j + 7 * i) * 37) % 23 - 11) * 0.07f;
  }
  /* the reference kernels: the same bits. The fast kernel runs a kv head's
   * group of query heads as one product of more rows, whose sgemm path may
   * sum in another order: a few ulp. */
  for (int threads = 0; threads <= 1; threads++) {
    float **o0 = graph_run(&g, x, threads, NULL), **o1 = graph_run(&f, x, threads, NULL);
    if (!threads) CHECK(memcmp(o0[0], o1[0], sizeof(float) * 96) == 0);
    for (int i = 0; threads && i < 96; i++) CHECK_NEAR(o1[0][i], o0[0][i], 1e-6 * (1 + fabs(o0[0][i])));
    free(o0[0]), free(o0), free(o1[0]), free(o1);
  }
  for (int i = 0; i < 3; i++) free(x[i]);
  rlx_graph_free(&f);
  rlx_graph_free(&g);
}

TEST(gqa_repeat_kv) {
  gqa_case(false);
  gqa_case(true); /* the near miss */
}

/* A constant bool mask [1, 1, L, S] that is exactly c <= i becomes the
 * causal flag (the mask input dropped); the reference gives the same bits,
 * the fast kernel (causal blocks) agrees to rounding. Near misses keep the
 * mask: the diagonal off, one entry flipped, a mask per head, L != the
 * queries' rows. */
static void causal_mask_case(int kind) {
  int64_t L = kind == 4 ? 6 : 37, S = 37;
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape qs = {.rank = 4, .dims = {1, 2, 37, 8}}, ms = {.rank = 4, .dims = {1, kind == 3 ? 2 : 1, L, S}};
  int32_t q = rlx_graph_add_input(&g, "q", RLX_DTYPE_F32, &qs);
  int32_t k = rlx_graph_add_input(&g, "k", RLX_DTYPE_F32, &qs), v = rlx_graph_add_input(&g, "v", RLX_DTYPE_F32, &qs);
  int64_t n = rlx_shape_numel(&ms);
  uint8_t *b = malloc((size_t)n);
  for (int64_t e = 0; e < n; e++) {
    int64_t i = e / S % L, c = e % S;
    b[e] = kind == 1 ? c < i : c <= i;
  }
  if (kind == 2) b[5 * S + 20] = 1; /* a key after the diagonal kept */
  int32_t m = rlx_graph_add_const(&g, RLX_DTYPE_BOOL, &ms, b);
  free(b);
  rlx_params ap = {.attention = {.scale = 0.3}};
  int32_t in[4] = {q, k, v, m};
  int32_t y = rlx_graph_add1(&g, RLX_OP_ATTENTION, &ap, in, 4, "sdpa", NULL);
  if (kind == 4) { /* a mask that broadcasts over the rows is not the triangle either */
    CHECK(y < 0);
    rlx_graph_free(&g);
    return;
  }
  CHECK_OK(rlx_graph_add_output(&g, y));
  rlx_graph f;
  CHECK_OK(rlx_graph_clone(&g, &f));
  CHECK_OK(rlx_pass_recognize(&f));
  CHECK_OK(rlx_graph_verify(&f, "recognize"));
  const rlx_node *a = &f.nodes[f.n_nodes - 1];
  if (kind == 0) CHECK(a->p.attention.causal && a->in[3] < 0);
  else CHECK(!a->p.attention.causal && a->in[3] == m);
  float *x[3];
  for (int i = 0; i < 3; i++) {
    x[i] = malloc(sizeof(float) * 592);
    for (int j = 0; j < 592; j++) x[i][j] = (float)(((j + 5 * i) * 29) % 31 - 15) * 0.09f;
  }
  for (int threads = 0; threads <= 2; threads++) {
    float **o0 = graph_run(&g, x, threads, NULL), **o1 = graph_run(&f, x, threads, NULL);
    if (!threads) CHECK(memcmp(o0[0], o1[0], sizeof(float) * 592) == 0);
    for (int i = 0; threads && i < 592; i++) CHECK_NEAR(o1[0][i], o0[0][i], 1e-6 * (1 + fabs(o0[0][i])));
    free(o0[0]), free(o0), free(o1[0]), free(o1);
  }
  for (int i = 0; i < 3; i++) free(x[i]);
  rlx_graph_free(&f);
  rlx_graph_free(&g);
}

TEST(causal_mask) {
  for (int kind = 0; kind <= 4; kind++) causal_mask_case(kind);
}

TEST_MAIN(hardswish, hardsigmoid, near_misses, gelu_tanh, epilogue_behind_reshape, residual_behind_reshape, activation_behind_reshape_chain,
          norm_activation, gqa_repeat_kv, causal_mask)
