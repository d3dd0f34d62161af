/*
 * test_fuse_preact.c — the fuse_preact pass (passes/fuse_preact.c): an
 * inference batch norm (and its relu) folded into the channel-major 1x1
 * conv that reads it, the conv's reference with the batch norm inputs
 * (ops/conv.c) and its two fast ways (cpu/conv_gemm.c: B panels normalized
 * as the channel-major sgemm packs them, A panels as the pixel-major one
 * does).
 *
 * Each case builds x -> batch_norm (+ relu) -> 1x1 conv (maybe a bias, a
 * residual, an activation), fuses a clone (the IR verifier after the pass
 * and after dce) and runs both: reference against reference and fast
 * against fast (1, 2 and 3 threads, each way forced with RLX_CONV_PIX)
 * must agree bit for bit (the packers round each element as the fast batch
 * norm does, and the sums run in the same order), the fused fast run must
 * name the fused kernel of the way forced, and fast must match the
 * reference within the rounding of reordered sums. Sizes: DenseNet's
 * layers and transitions; channel and pixel counts off the panel widths;
 * batch 2; images of 1 and 4 pixels (the pixel-major skinny rows); a batch
 * norm without weight or bias, or without its relu; NaN, infinities and
 * -0 in x. Then the graphs the pass must leave alone, and what infer
 * refuses.
 */
#include <math.h>
#include <stdlib.h>

#include "ir/print.h"
#include "ops/ops_util.h"
#include "passes/passes.h"
#define GRAPH_BUILD_SEED 4242u
#include "graph_build.h"
#include "graph_run.h"
#include "test.h"

#define NONE RLX_UNARY_COUNT

typedef struct preact_case {
  int64_t N, C, H, W, O;      /* x [N, C, H, W], a 1x1 conv to O channels */
  bool relu, bn_w, bn_b;      /* the batch norm's relu, weight and bias */
  bool bias, residual;        /* the conv's */
  rlx_unary_kind act;         /* the conv's activation (NONE: none) */
  bool nan;                   /* NaN, infinities and -0 in x */
} preact_case;

static rlx_epilogue ep_of(rlx_unary_kind k) {
  return k == NONE ? (rlx_epilogue){0} : (rlx_epilogue){.has_act = true, .act = {.kind = k}};
}

static rlx_shape vec(int64_t n) { return (rlx_shape){.rank = 1, .dims = {n}}; }

/* A running variance: positive, some of it below eps's scale. */
static int32_t variance(rlx_graph *g, int64_t C) {
  float *v = malloc(sizeof(float) * (size_t)C);
  for (int64_t i = 0; i < C; i++) v[i] = i % 7 == 3 ? 1e-6f : fabsf(frand()) * 2.0f + 0.05f;
  rlx_shape s = vec(C);
  int32_t id = rlx_graph_add_const(g, RLX_DTYPE_F32, &s, v);
  free(v);
  return id;
}

/* Adds batch_norm(x) (+ relu) with eps 1e-5; returns its output. */
static int32_t add_bn(rlx_graph *g, int32_t x, int64_t C, bool relu, bool w, bool b) {
  rlx_params q = {.norm = {.eps = 1e-5, .ep = ep_of(relu ? RLX_UNARY_RELU : NONE)}};
  int32_t mean = weight(g, vec(C)), var = variance(g, C);
  int32_t bw = w ? weight(g, vec(C)) : -1, bb = b ? weight(g, vec(C)) : -1;
  return rlx_graph_add1(g, RLX_OP_BATCH_NORM, &q, (int32_t[]){x, mean, var, bw, bb}, 5, "norm", NULL);
}

/* x (and the residual) are graph inputs; the conv's output the graph output. */
static void build(rlx_graph *g, const preact_case *t) {
  rlx_graph_init(g);
  rlx_shape xs = shp4(t->N, t->C, t->H, t->W), rs = shp4(t->N, t->O, t->H, t->W);
  int32_t x = rlx_graph_add_input(g, "x", RLX_DTYPE_F32, &xs);
  int32_t r = t->residual ? rlx_graph_add_input(g, "r", RLX_DTYPE_F32, &rs) : -1;
  int32_t n = add_bn(g, x, t->C, t->relu, t->bn_w, t->bn_b);
  CHECK(n >= 0);
  rlx_params q = {.conv = {.nd = 2, .stride = {1, 1}, .dilation = {1, 1}, .groups = 1, .ep = ep_of(t->act)}};
  int32_t w = weight(g, shp4(t->O, t->C, 1, 1)), b = t->bias ? weight(g, vec(t->O)) : -1;
  int32_t y = rlx_graph_add1(g, RLX_OP_CONV, &q, (int32_t[]){n, w, b, r}, t->residual ? 4 : 3, "conv", NULL);
  CHECK(y >= 0);
  CHECK_OK(rlx_graph_add_output(g, y));
}

static float *random_input(const rlx_graph *g, int i, bool nan) {
  int64_t n = rlx_shape_numel(&g->values[g->inputs[i]].shape);
  float *v = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t e = 0; e < n; e++) {
    v[e] = frand() * 3.0f;
    if (nan && i == 0 && e % 97 == 5) v[e] = e % 4 == 0 ? NAN : e % 4 == 1 ? INFINITY : e % 4 == 2 ? -INFINITY : -0.0f;
  }
  return v;
}

static void run_case(const preact_case *t) {
  rlx_graph g, f;
  build(&g, t);
  graph_fused(&g, &f, rlx_pass_fuse_preact, "fuse_preact");
  const rlx_node *cv = &f.nodes[0];
  bool shape_ok = f.n_nodes == 1 && cv->op == RLX_OP_CONV && cv->n_in == 11 && rlx_node_has_label(cv, "norm") &&
                  cv->in[0] == f.inputs[0] && (cv->in[9] >= 0) == t->bn_w && (cv->in[10] >= 0) == t->bn_b &&
                  cv->p.conv.pre_ep.has_act == t->relu && cv->p.conv.pre_eps == 1e-5;
  CHECK(shape_ok);
  if (!shape_ok) rlx_graph_print(&f, stderr);
  float *in[2];
  for (int i = 0; i < g.n_inputs; i++) in[i] = random_input(&g, i, t->nan);
  int64_t n = rlx_shape_numel(&g.values[g.outputs[0]].shape);
  float **ref = graph_run(&g, in, 0, NULL), **fref = graph_run(&f, in, 0, NULL);
  CHECK(close_to(ref[0], fref[0], n, 0, "reference"));
  for (int pix = 0; pix < 2; pix++) {
    setenv("RLX_CONV_PIX", pix ? "1" : "0", 1);
    const char *want = pix ? "f32_conv_pixel_bn_sgemm" : "f32_conv_1x1_bn_sgemm";
    for (int threads = 1; threads <= 3; threads++) {
      const char *names[4] = {0};
      float **a = graph_run(&g, in, threads, NULL), **b = graph_run(&f, in, threads, names);
      bool same = close_to(a[0], b[0], n, 0, "fast");
      CHECK(same);
      CHECK(close_to(ref[0], b[0], n, 1e-5 * (double)(t->C + 1), "fast against the reference"));
      CHECK(names[0] && !strcmp(names[0], want));
      if (!same || !names[0] || strcmp(names[0], want))
        fprintf(stderr, "  [%s] %lldx%lldx%lldx%lld -> %lld, pixel-major %d, %d threads, ran %s\n", rlx_test_current,
                (long long)t->N, (long long)t->C, (long long)t->H, (long long)t->W, (long long)t->O, pix, threads,
                names[0] ? names[0] : "?");
      graph_outs_free(&g, a), graph_outs_free(&f, b);
    }
  }
  unsetenv("RLX_CONV_PIX");
  graph_outs_free(&g, ref), graph_outs_free(&f, fref);
  for (int i = 0; i < g.n_inputs; i++) free(in[i]);
  rlx_graph_free(&f);
  rlx_graph_free(&g);
}

TEST(model_layers) {
  /* N, C, H, W, O, relu, bn_w, bn_b, bias, residual, act, nan: DenseNet-121's layers and transitions */
  run_case(&(preact_case){1, 96, 56, 56, 128, true, true, true, false, false, RLX_UNARY_RELU, false});
  run_case(&(preact_case){1, 256, 56, 56, 128, true, true, true, false, false, NONE, true});
  run_case(&(preact_case){1, 352, 28, 28, 128, true, true, true, false, false, RLX_UNARY_RELU, false});
  run_case(&(preact_case){1, 1024, 14, 14, 512, true, true, true, false, false, NONE, false});
  run_case(&(preact_case){1, 608, 7, 7, 128, true, true, true, false, false, RLX_UNARY_RELU, true});
}

TEST(edges) {
  /* channels and pixels off the panel widths; batch 2 */
  run_case(&(preact_case){1, 13, 5, 7, 17, true, true, true, true, false, NONE, true});
  run_case(&(preact_case){2, 33, 9, 11, 40, true, true, true, true, true, RLX_UNARY_RELU, true});
  run_case(&(preact_case){2, 70, 6, 6, 33, false, true, true, false, true, NONE, false});
  /* a batch norm without weight, without bias, without both; without its relu */
  run_case(&(preact_case){1, 48, 10, 10, 24, true, false, true, true, false, NONE, false});
  run_case(&(preact_case){1, 48, 10, 10, 24, true, true, false, false, false, RLX_UNARY_RELU, true});
  run_case(&(preact_case){1, 20, 8, 3, 64, false, false, false, true, false, NONE, true});
  /* images of 1 and 4 pixels (pixel-major: the transposed rows of the skinny kernel) and one row */
  run_case(&(preact_case){1, 64, 1, 1, 40, true, true, true, true, false, NONE, true});
  run_case(&(preact_case){2, 37, 2, 2, 50, true, true, true, false, true, RLX_UNARY_RELU, true});
  run_case(&(preact_case){1, 16, 1, 45, 8, true, true, true, true, false, NONE, false});
  /* an activation the sgemm's post lacks (its epilogue callback) */
  run_case(&(preact_case){1, 40, 12, 12, 36, true, true, true, true, true, RLX_UNARY_SILU, false});
}

/* The pass leaves these alone: the batch norm read by another node too, or
 * a graph output; an activation other than relu; batch statistics; a 3x3
 * conv, a padded or strided 1x1, groups 2, a weight that is not constant. */
TEST(not_fused) {
  for (int kind = 0; kind < 9; kind++) {
    rlx_graph g;
    rlx_graph_init(&g);
    int64_t C = 8, O = 6, S = 6;
    rlx_shape xs = shp4(1, C, S, S);
    int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
    rlx_params bq = {.norm = {.eps = 1e-5, .ep = ep_of(kind == 2 ? RLX_UNARY_SIGMOID : RLX_UNARY_RELU)}};
    int32_t mean = kind == 3 ? -1 : weight(&g, vec(C)), var = kind == 3 ? -1 : variance(&g, C);
    int32_t nb = rlx_graph_add1(&g, RLX_OP_BATCH_NORM, &bq, (int32_t[]){x, mean, var, weight(&g, vec(C)), -1}, 5,
                                "norm", NULL);
    int64_t k = kind == 4 ? 3 : 1, pad = kind == 5 ? 1 : 0, st = kind == 6 ? 2 : 1, groups = kind == 7 ? 2 : 1;
    rlx_shape ws = shp4(O, C / groups, k, k);
    int32_t w = kind == 8 ? rlx_graph_add_input(&g, "w", RLX_DTYPE_F32, &ws) : weight(&g, ws);
    rlx_params q = {.conv = {.nd = 2, .stride = {st, st}, .pad = {pad, pad}, .dilation = {1, 1}, .groups = groups}};
    int32_t y = rlx_graph_add1(&g, RLX_OP_CONV, &q, (int32_t[]){nb, w}, 2, "conv", NULL);
    CHECK(nb >= 0 && y >= 0);
    CHECK_OK(rlx_graph_add_output(&g, y));
    if (kind == 0) { /* another reader of the batch norm */
      rlx_params up = {.unary = {.kind = RLX_UNARY_NEG}};
      CHECK_OK(rlx_graph_add_output(&g, rlx_graph_add1(&g, RLX_OP_UNARY, &up, &nb, 1, "neg", NULL)));
    }
    if (kind == 1) CHECK_OK(rlx_graph_add_output(&g, nb)); /* the batch norm is an output */
    CHECK_OK(rlx_graph_verify(&g, "build"));
    CHECK_OK(rlx_pass_fuse_preact(&g));
    CHECK_OK(rlx_graph_verify(&g, "fuse_preact"));
    CHECK_OK(rlx_pass_dce(&g));
    bool kept = graph_count_op(&g, RLX_OP_BATCH_NORM) == 1;
    CHECK(kept);
    for (int32_t i = 0; i < g.n_nodes; i++) CHECK(g.nodes[i].n_in <= 7);
    if (!kept) fprintf(stderr, "  [not_fused] case %d was fused\n", kind);
    rlx_graph_free(&g);
  }
}

/* infer refuses batch norm inputs without both statistics, of the wrong
 * size or dtype, on a channels-last or grouped-pointwise conv, and a
 * pre-activation with neither a pointwise conv nor a batch norm. */
TEST(infer_refuses) {
  static const char *want[] = {"running mean and variance", "must be [8]", "must be [8]", "channel-major",
                               "pre-activation", "eps"};
  for (int kind = 0; kind < 6; kind++) {
    rlx_graph g;
    rlx_graph_init(&g);
    bool cl = kind == 3;
    rlx_shape xs = cl ? shp4(1, 5, 5, 8) : shp4(1, 8, 5, 5);
    int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
    rlx_shape s7 = vec(7);
    int32_t mean = weight(&g, vec(8)), var = kind == 0 ? -1 : variance(&g, 8);
    int32_t bw = kind == 1 ? weight(&g, s7) : weight(&g, vec(8)), bb = -1;
    if (kind == 2) {
      double d[8] = {0};
      rlx_shape s8 = vec(8);
      bb = rlx_graph_add_const(&g, RLX_DTYPE_F64, &s8, d);
    }
    rlx_params q = {.conv = {.nd = 2, .stride = {1, 1}, .dilation = {1, 1}, .groups = 1, .channels_last = cl,
                             .pre_ep = {.has_act = true, .act = {.kind = RLX_UNARY_RELU}},
                             .pre_eps = kind == 5 ? -1.0 : 1e-5}};
    int32_t w = weight(&g, shp4(4, 8, 1, 1));
    int32_t in[11] = {x, w, -1, -1, -1, -1, -1, mean, var, bw, bb}, n_in = kind == 4 ? 2 : 11;
    CHECK(rlx_graph_add1(&g, RLX_OP_CONV, &q, in, n_in, "conv", NULL) < 0);
    const char *e = rlx_last_error();
    CHECK(strstr(e, want[kind]) != NULL);
    if (!strstr(e, want[kind])) fprintf(stderr, "  [infer_refuses] case %d: %s\n", kind, e);
    rlx_graph_free(&g);
  }
}

TEST_MAIN(model_layers, edges, not_fused, infer_refuses)
