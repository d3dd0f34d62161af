/*
 * test_fuse_expand.c — the fuse_expand pass (passes/fuse_expand.c): a 1x1
 * expansion conv folded into the channels-last depthwise conv that reads
 * it, the conv's reference with the pointwise inputs (ops/conv.c) and its
 * fast kernel (cpu/conv_nhwc.c: bands of expanded rows per task, or the
 * expanded tensor whole first where bands would compute too many rows
 * twice).
 *
 * Each case builds x -> conv1x1 (+ its activation) -> depthwise conv (a
 * bias, maybe a residual and an activation), fuses a clone (the IR verifier
 * after the pass and after dce) and runs both: reference against reference
 * and fast against fast (1, 2 and 3 threads) must agree bit for bit (the
 * fused kernel runs the unfused 1x1 conv's sgemm on each band, whose sums
 * do not depend on how the rows are split, and the depthwise rows on the
 * same values), the fused graph's fast run must name the fused kernel, and
 * the fast run must match the reference within the rounding of reordered
 * sums. Sizes: mobilenet_v3's and efficientnet's front layers, rows of
 * 64 KiB (a band of 8 rows, slid many times), batch 2 (a task crossing
 * images), images smaller than the kernel, channel counts off the vector
 * width, stride 2, dilation (the generic rows), activations the sgemm's
 * post has and one it has not (SiLU, its epilogue), NaN and infinities in
 * x. Then the cases the pass must leave alone, and what infer refuses.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu/conv_dw.h"
#include "ir/print.h"
#include "ops/ops_util.h"
#include "passes/passes.h"
#define GRAPH_BUILD_SEED 777u
#include "graph_build.h"
#include "graph_run.h"
#include "test.h"

#define NONE RLX_UNARY_COUNT

typedef struct expand_case {
  int64_t N, H, W, C0, C, k, s, p, d; /* x [N, H, W, C0], 1x1 to C channels, a k x k depthwise conv */
  rlx_unary_kind pre, act;            /* the 1x1 conv's activation, the depthwise conv's (NONE: none) */
  bool pw_bias, residual, nan;
} expand_case;

static rlx_epilogue ep_of(rlx_unary_kind k) {
  return k == NONE ? (rlx_epilogue){0} : (rlx_epilogue){.has_act = true, .act = {.kind = k}};
}

static int64_t out_size(const expand_case *t, int64_t in) { return (in + 2 * t->p - t->d * (t->k - 1) - 1) / t->s + 1; }

/* x (and the residual) are graph inputs; the depthwise conv's output the graph output. */
static void build(rlx_graph *g, const expand_case *t) {
  rlx_graph_init(g);
  int64_t OH = out_size(t, t->H), OW = out_size(t, t->W);
  rlx_shape xs = shp4(t->N, t->H, t->W, t->C0), rs = shp4(t->N, OH, OW, t->C);
  int32_t x = rlx_graph_add_input(g, "x", RLX_DTYPE_F32, &xs);
  int32_t r = t->residual ? rlx_graph_add_input(g, "r", RLX_DTYPE_F32, &rs) : -1;
  rlx_params pq = {.conv = {.nd = 2, .stride = {1, 1}, .dilation = {1, 1}, .groups = 1, .channels_last = true,
                            .ep = ep_of(t->pre)}};
  int32_t pw = weight(g, shp4(t->C, t->C0, 1, 1)), pb = t->pw_bias ? weight(g, (rlx_shape){.rank = 1, .dims = {t->C}}) : -1;
  int32_t e = rlx_graph_add1(g, RLX_OP_CONV, &pq, (int32_t[]){x, pw, pb}, 3, "expand", NULL);
  CHECK(e >= 0);
  rlx_params dq = {.conv = {.nd = 2, .stride = {t->s, t->s}, .pad = {t->p, t->p}, .dilation = {t->d, t->d},
                            .groups = t->C, .channels_last = true, .ep = ep_of(t->act)}};
  int32_t w = weight(g, shp4(t->C, 1, t->k, t->k)), b = weight(g, (rlx_shape){.rank = 1, .dims = {t->C}});
  int32_t y = rlx_graph_add1(g, RLX_OP_CONV, &dq, (int32_t[]){e, w, b, r}, t->residual ? 4 : 3, "dw", NULL);
  CHECK(y >= 0);
  CHECK_OK(rlx_graph_add_output(g, y));
}

static float *random_input(const rlx_graph *g, int i, bool nan) {
  int64_t n = rlx_shape_numel(&g->values[g->inputs[i]].shape);
  float *v = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t e = 0; e < n; e++) {
    v[e] = frand();
    if (nan && i == 0 && e % 211 == 5) v[e] = e % 3 == 0 ? NAN : e % 3 == 1 ? INFINITY : -INFINITY;
  }
  return v;
}

static void run_case(const expand_case *t) {
  rlx_graph g, f;
  build(&g, t);
  graph_fused(&g, &f, rlx_pass_fuse_expand, "fuse_expand");
  const rlx_node *cv = &f.nodes[0];
  CHECK(f.n_nodes == 1 && cv->op == RLX_OP_CONV && cv->n_in == 7 && rlx_node_has_label(cv, "expand") &&
        cv->in[0] == f.inputs[0] && (cv->in[6] >= 0) == t->pw_bias && cv->p.conv.pre_ep.has_act == (t->pre != NONE));
  if (f.n_nodes != 1) rlx_graph_print(&f, stderr);
  float *in[2];
  for (int i = 0; i < g.n_inputs; i++) in[i] = random_input(&g, i, t->nan);
  int64_t n = rlx_shape_numel(&g.values[g.outputs[0]].shape);
  float **ref = graph_run(&g, in, 0, NULL), **fref = graph_run(&f, in, 0, NULL);
  CHECK(close_to(ref[0], fref[0], n, 0, "reference"));
  const char *want = rlx_dw_rows_take(t->k, t->s, t->d) ? "f32_conv_nhwc_1x1_depthwise_rows"
                                                         : "f32_conv_nhwc_1x1_depthwise";
  for (int threads = 1; threads <= 3; threads++) {
    const char *names[4] = {0};
    float **a = graph_run(&g, in, threads, NULL), **b = graph_run(&f, in, threads, names);
    if (!close_to(a[0], b[0], n, 0, "fast"))
      fprintf(stderr, "  [%s] %lldx%lldx%lldx%lld -> %lld k%lld s%lld, %d threads\n", rlx_test_current,
              (long long)t->N, (long long)t->H, (long long)t->W, (long long)t->C0, (long long)t->C, (long long)t->k,
              (long long)t->s, threads);
    CHECK(close_to(a[0], b[0], n, 0, "fast"));
    CHECK(close_to(ref[0], b[0], n, 1e-5 * (double)(t->C0 + t->k * t->k), "fast against the reference"));
    CHECK(names[0] && !strcmp(names[0], want));
    if (names[0] && strcmp(names[0], want)) fprintf(stderr, "  [%s] ran %s, not %s\n", rlx_test_current, names[0], want);
    graph_outs_free(&g, a), graph_outs_free(&f, b);
  }
  graph_outs_free(&g, ref), graph_outs_free(&f, fref);
  for (int i = 0; i < g.n_inputs; i++) free(in[i]);
  rlx_graph_free(&f);
  rlx_graph_free(&g);
}

TEST(model_layers) {
  /* N, H, W, C0, C, k, s, p, d, pre, act, pw_bias, residual, nan */
  run_case(&(expand_case){1, 112, 112, 16, 64, 3, 2, 1, 1, RLX_UNARY_RELU, RLX_UNARY_RELU, true, false, false});
  run_case(&(expand_case){1, 56, 56, 24, 72, 3, 1, 1, 1, RLX_UNARY_RELU, RLX_UNARY_RELU, true, false, true});
  run_case(&(expand_case){1, 56, 56, 24, 72, 5, 2, 2, 1, RLX_UNARY_RELU, RLX_UNARY_RELU, true, false, false});
  run_case(&(expand_case){1, 28, 28, 40, 120, 5, 1, 2, 1, RLX_UNARY_HARDSWISH, RLX_UNARY_HARDSWISH, true, true, false});
  run_case(&(expand_case){1, 14, 14, 80, 200, 3, 1, 1, 1, RLX_UNARY_HARDSWISH, RLX_UNARY_HARDSWISH, true, false, true});
  run_case(&(expand_case){1, 56, 56, 24, 144, 3, 1, 1, 1, RLX_UNARY_SILU, RLX_UNARY_SILU, true, false, false});
  run_case(&(expand_case){1, 14, 14, 112, 672, 5, 2, 2, 1, RLX_UNARY_SILU, RLX_UNARY_SILU, true, false, false});
}

TEST(edges) {
  /* rows of 64 KiB: bands of 8 rows, slid every few output rows */
  run_case(&(expand_case){1, 64, 64, 8, 256, 3, 2, 1, 1, RLX_UNARY_RELU, NONE, true, false, true});
  run_case(&(expand_case){1, 33, 64, 8, 256, 7, 1, 3, 1, NONE, RLX_UNARY_RELU, false, true, false});
  /* batch 2: a task's rows cross from one image to the next */
  run_case(&(expand_case){2, 13, 11, 7, 21, 3, 2, 1, 1, RLX_UNARY_SILU, NONE, false, false, true});
  run_case(&(expand_case){2, 40, 9, 5, 33, 5, 1, 2, 1, RLX_UNARY_HARDSWISH, RLX_UNARY_HARDSWISH, true, true, false});
  /* an image smaller than the kernel, one row, one pixel */
  run_case(&(expand_case){1, 2, 9, 4, 8, 5, 1, 2, 1, RLX_UNARY_RELU, NONE, true, false, false});
  run_case(&(expand_case){1, 1, 37, 6, 20, 3, 1, 1, 1, NONE, NONE, true, false, false});
  run_case(&(expand_case){1, 1, 1, 3, 17, 3, 2, 1, 1, RLX_UNARY_RELU, RLX_UNARY_RELU, true, true, false});
  /* no padding, channels off the vector width; dilation (the generic depthwise loop) */
  run_case(&(expand_case){1, 30, 30, 3, 19, 3, 1, 0, 1, RLX_UNARY_RELU, NONE, true, false, false});
  run_case(&(expand_case){1, 20, 21, 8, 24, 3, 1, 2, 2, RLX_UNARY_RELU, RLX_UNARY_RELU, true, false, true});
  run_case(&(expand_case){2, 17, 16, 9, 40, 3, 2, 2, 2, NONE, RLX_UNARY_HARDSWISH, false, true, false});
}

/* The pass leaves these alone: the expansion read by another node too, or a
 * graph output; a 1x1 conv with a residual, a stride or a non-constant
 * weight; a 3x3 first conv; a groups-1 second conv; NCHW convs. */
TEST(not_fused) {
  for (int kind = 0; kind < 8; kind++) {
    rlx_graph g;
    rlx_graph_init(&g);
    bool cl = kind != 7;
    int64_t C0 = 4, C = 8, S = 6;
    rlx_shape xs = cl ? shp4(1, S, S, C0) : shp4(1, C0, S, S);
    int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
    int64_t pk = kind == 5 ? 3 : 1, ps = kind == 3 ? 2 : 1, ES = kind == 3 ? S / 2 : S;
    rlx_shape es = cl ? shp4(1, ES, ES, C) : shp4(1, C, ES, ES), ws = shp4(C, C0, pk, pk);
    int32_t pw = kind == 4 ? rlx_graph_add_input(&g, "pw", RLX_DTYPE_F32, &ws) : weight(&g, ws);
    int32_t r = kind == 2 ? rlx_graph_add_input(&g, "r", RLX_DTYPE_F32, &es) : -1;
    rlx_params pq = {.conv = {.nd = 2, .stride = {ps, ps}, .pad = {pk / 2, pk / 2}, .dilation = {1, 1}, .groups = 1,
                              .channels_last = cl}};
    int32_t e = rlx_graph_add1(&g, RLX_OP_CONV, &pq, (int32_t[]){x, pw, -1, r}, kind == 2 ? 4 : 2, "expand", NULL);
    bool dw = kind != 6;
    rlx_params dq = {.conv = {.nd = 2, .stride = {1, 1}, .pad = {1, 1}, .dilation = {1, 1}, .groups = dw ? C : 1,
                              .channels_last = cl}};
    int32_t w = weight(&g, shp4(C, dw ? 1 : C, 3, 3));
    int32_t y = rlx_graph_add1(&g, RLX_OP_CONV, &dq, (int32_t[]){e, w}, 2, "dw", NULL);
    CHECK(e >= 0 && y >= 0);
    CHECK_OK(rlx_graph_add_output(&g, y));
    if (kind == 0) { /* another reader of the expansion */
      rlx_params up = {.unary = {.kind = RLX_UNARY_RELU}};
      CHECK_OK(rlx_graph_add_output(&g, rlx_graph_add1(&g, RLX_OP_UNARY, &up, &e, 1, "relu", NULL)));
    }
    if (kind == 1) CHECK_OK(rlx_graph_add_output(&g, e)); /* the expansion is an output */
    CHECK_OK(rlx_graph_verify(&g, "build"));
    CHECK_OK(rlx_pass_fuse_expand(&g));
    CHECK_OK(rlx_graph_verify(&g, "fuse_expand"));
    CHECK_OK(rlx_pass_dce(&g));
    CHECK(graph_count_op(&g, RLX_OP_CONV) == 2);
    for (int32_t i = 0; i < g.n_nodes; i++) CHECK(g.nodes[i].n_in <= 5);
    if (graph_count_op(&g, RLX_OP_CONV) != 2) fprintf(stderr, "  [not_fused] case %d was fused\n", kind);
    rlx_graph_free(&g);
  }
}

/* infer refuses pointwise inputs that do not fit x, a pointwise bias or
 * activation without the weight, and pointwise inputs on a conv that is
 * not channels-last or has a gate. */
TEST(infer_refuses) {
  for (int kind = 0; kind < 6; kind++) {
    rlx_graph g;
    rlx_graph_init(&g);
    bool cl = kind != 3;
    rlx_shape xs = cl ? shp4(1, 5, 5, 4) : shp4(1, 4, 5, 5);
    int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
    int32_t pw = weight(&g, kind == 0 ? shp4(8, 3, 1, 1) : kind == 5 ? shp4(8, 4, 3, 3) : shp4(8, 4, 1, 1));
    int32_t pb = weight(&g, (rlx_shape){.rank = 1, .dims = {kind == 1 ? 7 : 8}});
    rlx_shape gs = shp4(1, 1, 1, 8);
    int32_t gate = kind == 4 ? rlx_graph_add_input(&g, "s", RLX_DTYPE_F32, &gs) : -1;
    rlx_params q = {.conv = {.nd = 2, .stride = {1, 1}, .pad = {1, 1}, .dilation = {1, 1}, .groups = 8, .channels_last = cl}};
    int32_t w = weight(&g, shp4(8, 1, 3, 3));
    int32_t in[7] = {x, w, -1, -1, gate, pw, pb}, n_in = 7;
    if (kind == 2) { /* an activation for a pointwise conv that is not there */
      q.conv.pre_ep = (rlx_epilogue){.has_act = true, .act = {.kind = RLX_UNARY_RELU}};
      in[5] = in[6] = -1;
      xs = shp4(1, 5, 5, 8);
      in[0] = rlx_graph_add_input(&g, "x8", RLX_DTYPE_F32, &xs);
    }
    CHECK(rlx_graph_add1(&g, RLX_OP_CONV, &q, in, n_in, "conv", NULL) < 0);
    const char *e = rlx_last_error();
    CHECK(strstr(e, "pointwise") != NULL);
    if (!strstr(e, "pointwise")) fprintf(stderr, "  [infer_refuses] case %d: %s\n", kind, e);
    rlx_graph_free(&g);
  }
}

TEST_MAIN(model_layers, edges, not_fused, infer_refuses)
