/*
 * test_fuse_gate.c — the fuse_gate pass (passes/fuse_gate.c): a channel
 * gate's mul (x * s, s [N or 1, 1, 1, C]) folded into the channels-last conv
 * that reads the product, the conv's gated reference (ops/conv.c) and its
 * fast kernels (cpu/conv_nhwc.c: for a 1x1 conv the gated rows written to
 * scratch, or over 1 MiB the packer that scales as it transposes; the
 * im2col packer for other geometries).
 *
 * Each case builds x -> mul(x, s) -> conv (channels-last, a bias, maybe a
 * residual and an activation), fuses a clone (the IR verifier after the
 * pass and after dce) and runs both: reference against reference and fast
 * against fast (1, 2 and 3 threads) must agree bit for bit (the product is
 * rounded to f32 as the mul's kernels round it, and the sgemm sums in the
 * same order whether it reads A in place or packed), the fused graph's fast
 * run must name the gated kernel, and the fast run must match the
 * reference within the rounding of a reordered sum. Sizes: odd channel
 * counts (the 4x4 blocks' tails), pixel counts that are not a multiple of 4
 * (an image ends inside a panel), batch 2 with a gate per image and one
 * shared, strides, padding, NaN and infinities in x and in the gate. Then
 * the cases the pass must leave alone.
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

typedef struct gate_case {
  int64_t N, H, W, C, O, k, s, p; /* x [N, H, W, C], an O-channel k x k conv, stride s, pad p */
  int64_t gate_n;                 /* the gate's batch: N or 1 */
  bool residual, act, nan, gate_first;
} gate_case;

/* x, s (and the residual) are graph inputs; the conv's output the graph output. */
static void build(rlx_graph *g, const gate_case *t) {
  rlx_graph_init(g);
  int64_t OH = (t->H + 2 * t->p - t->k) / t->s + 1, OW = (t->W + 2 * t->p - t->k) / t->s + 1;
  rlx_shape xs = shp4(t->N, t->H, t->W, t->C), ss = shp4(t->gate_n, 1, 1, t->C), rs = shp4(t->N, OH, OW, t->O);
  int32_t x = rlx_graph_add_input(g, "x", RLX_DTYPE_F32, &xs), s = rlx_graph_add_input(g, "s", RLX_DTYPE_F32, &ss);
  int32_t r = t->residual ? rlx_graph_add_input(g, "r", RLX_DTYPE_F32, &rs) : -1;
  rlx_params mp = {.binary = {.kind = RLX_BINARY_MUL}};
  int32_t m = rlx_graph_add1(g, RLX_OP_BINARY, &mp, t->gate_first ? (int32_t[]){s, x} : (int32_t[]){x, s}, 2, "mul", NULL);
  rlx_params q = {.conv = {.nd = 2, .stride = {t->s, t->s}, .pad = {t->p, t->p}, .dilation = {1, 1}, .groups = 1,
                           .channels_last = true}};
  if (t->act) q.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = RLX_UNARY_SILU}};
  int32_t w = weight(g, shp4(t->O, t->C, t->k, t->k)), b = weight(g, (rlx_shape){.rank = 1, .dims = {t->O}});
  int32_t y = rlx_graph_add1(g, RLX_OP_CONV, &q, (int32_t[]){m, w, b, r}, t->residual ? 4 : 3, "conv", NULL);
  CHECK(y >= 0);
  CHECK_OK(rlx_graph_add_output(g, y));
}

static float *random_input(const rlx_graph *g, int i, bool nan) {
  int64_t n = rlx_shape_numel(&g->values[g->inputs[i]].shape);
  float *v = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t e = 0; e < n; e++) {
    v[e] = frand();
    if (nan && e % 89 == 7 + i) v[e] = e % 3 == 0 ? NAN : e % 3 == 1 ? INFINITY : -INFINITY;
  }
  return v;
}

static void run_case(const gate_case *t) {
  rlx_graph g, f;
  build(&g, t);
  graph_fused(&g, &f, rlx_pass_fuse_gate, "fuse_gate");
  /* x and s, or (a one-pixel image, both [1, 1, 1, C]) s and x: the same products */
  const rlx_node *cv = &f.nodes[0];
  CHECK(f.n_nodes == 1 && cv->op == RLX_OP_CONV && cv->n_in == 5 && rlx_node_has_label(cv, "mul") &&
        ((cv->in[0] == f.inputs[0] && cv->in[4] == f.inputs[1]) ||
         (t->H * t->W == 1 && cv->in[0] == f.inputs[1] && cv->in[4] == f.inputs[0])));
  if (f.n_nodes != 1) rlx_graph_print(&f, stderr);
  float *in[3];
  for (int i = 0; i < g.n_inputs; i++) in[i] = random_input(&g, i, t->nan);
  int64_t n = rlx_shape_numel(&g.values[g.outputs[0]].shape);
  float **ref = graph_run(&g, in, 0, NULL), **fref = graph_run(&f, in, 0, NULL);
  CHECK(close_to(ref[0], fref[0], n, 0, "reference"));
  for (int threads = 1; threads <= 3; threads++) {
    const char *names[4] = {0};
    float **a = graph_run(&g, in, threads, NULL), **b = graph_run(&f, in, threads, names);
    CHECK(close_to(a[0], b[0], n, 0, "fast"));
    CHECK(close_to(ref[0], b[0], n, 1e-5 * (double)(t->C * t->k * t->k), "fast against the reference"));
    bool pw = t->k == 1 && t->s == 1 && t->p == 0;
    const char *want = pw ? "f32_conv_nhwc_1x1_gated_sgemm" : "f32_conv_nhwc_gated_sgemm";
    CHECK(names[0] && !strcmp(names[0], want));
    if (names[0] && strcmp(names[0], want)) fprintf(stderr, "  [%s] ran %s, not %s\n", rlx_test_current, names[0], want);
    graph_outs_free(&g, a), graph_outs_free(&f, b);
  }
  graph_outs_free(&g, ref), graph_outs_free(&f, fref);
  for (int i = 0; i < g.n_inputs; i++) free(in[i]);
  rlx_graph_free(&f);
  rlx_graph_free(&g);
}

TEST(gated_pointwise) {
  /* N, H, W, C, O, k, s, p, gate_n, residual, act, nan, gate_first */
  /* gated images over 1 MiB: the transposing packer (pack_gated_1x1) */
  run_case(&(gate_case){1, 112, 112, 32, 16, 1, 1, 0, 1, false, false, false, true}); /* efficientnet's first */
  run_case(&(gate_case){2, 97, 97, 17, 24, 1, 1, 0, 2, true, true, true, false});     /* images end inside panels */
  run_case(&(gate_case){1, 251, 249, 5, 8, 1, 1, 0, 1, false, false, true, true});     /* 5 channels: a 4x4 block + 1 */
  /* smaller: the gated rows in scratch, then the ungated conv's sgemm */
  run_case(&(gate_case){1, 7, 7, 1152, 320, 1, 1, 0, 1, false, false, true, true});   /* its last: K blocks */
  run_case(&(gate_case){1, 14, 14, 144, 24, 1, 1, 0, 1, true, false, false, false});  /* with a residual */
  run_case(&(gate_case){1, 5, 3, 7, 9, 1, 1, 0, 1, false, true, true, false});        /* 15 pixels, 7 channels */
  run_case(&(gate_case){2, 3, 3, 13, 33, 1, 1, 0, 2, true, true, true, true});        /* 9 pixels an image, a gate each */
  run_case(&(gate_case){3, 5, 1, 6, 16, 1, 1, 0, 1, false, false, false, false});     /* 5 pixels, one gate for all */
  run_case(&(gate_case){1, 1, 1, 5, 3, 1, 1, 0, 1, false, false, false, true});       /* one pixel */
}

TEST(gated_im2col) {
  run_case(&(gate_case){1, 9, 11, 7, 12, 3, 1, 1, 1, false, true, true, true});  /* 3x3, padding */
  run_case(&(gate_case){2, 10, 9, 16, 20, 3, 2, 1, 2, true, false, true, false}); /* stride 2, batch 2 */
  run_case(&(gate_case){1, 8, 8, 24, 40, 1, 2, 0, 1, false, false, false, true}); /* a strided 1x1 */
}

/* The pass leaves these alone: the product read by another node too, a
 * graph output, a gate that is not [N or 1, 1, 1, C], a depthwise conv, an
 * NCHW conv, a mul of two full tensors. */
TEST(not_fused) {
  for (int kind = 0; kind < 6; kind++) {
    rlx_graph g;
    rlx_graph_init(&g);
    bool cl = kind != 4, dw = kind == 3;
    int64_t C = 8;
    rlx_shape xs = cl ? shp4(1, 6, 6, C) : shp4(1, C, 6, 6);
    rlx_shape ss = kind == 2 ? shp4(1, 6, 1, C) : kind == 5 ? xs : cl ? shp4(1, 1, 1, C) : shp4(1, C, 1, 1);
    int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), s = rlx_graph_add_input(&g, "s", RLX_DTYPE_F32, &ss);
    rlx_params mp = {.binary = {.kind = RLX_BINARY_MUL}};
    int32_t m = rlx_graph_add1(&g, RLX_OP_BINARY, &mp, (int32_t[]){x, s}, 2, "mul", NULL);
    rlx_params q = {.conv = {.nd = 2, .stride = {1, 1}, .dilation = {1, 1}, .groups = dw ? C : 1, .channels_last = cl}};
    int32_t w = weight(&g, shp4(C, dw ? 1 : C, 1, 1));
    int32_t y = rlx_graph_add1(&g, RLX_OP_CONV, &q, (int32_t[]){m, w}, 2, "conv", NULL);
    CHECK_OK(rlx_graph_add_output(&g, y));
    if (kind == 0) { /* another reader of the product */
      rlx_params up = {.unary = {.kind = RLX_UNARY_RELU}};
      CHECK_OK(rlx_graph_add_output(&g, rlx_graph_add1(&g, RLX_OP_UNARY, &up, &m, 1, "relu", NULL)));
    }
    if (kind == 1) CHECK_OK(rlx_graph_add_output(&g, m)); /* the product is an output */
    CHECK_OK(rlx_graph_verify(&g, "build"));
    CHECK_OK(rlx_pass_fuse_gate(&g));
    CHECK_OK(rlx_graph_verify(&g, "fuse_gate"));
    CHECK(graph_count_op(&g, RLX_OP_BINARY) == 1 && g.nodes[1].n_in == 2);
    rlx_graph_free(&g);
  }
}

/* infer refuses a gate of the wrong shape, and one on an NCHW conv. */
TEST(infer_refuses) {
  for (int kind = 0; kind < 3; kind++) {
    rlx_graph g;
    rlx_graph_init(&g);
    bool cl = kind != 2;
    rlx_shape xs = cl ? shp4(2, 4, 4, 8) : shp4(2, 8, 4, 4), ss = kind == 0 ? shp4(1, 1, 1, 7) : kind == 1 ? shp4(3, 1, 1, 8) : shp4(1, 1, 1, 8);
    int32_t x = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), s = rlx_graph_add_input(&g, "s", RLX_DTYPE_F32, &ss);
    rlx_params q = {.conv = {.nd = 2, .stride = {1, 1}, .dilation = {1, 1}, .groups = 1, .channels_last = cl}};
    int32_t w = weight(&g, shp4(8, 8, 1, 1));
    CHECK(rlx_graph_add1(&g, RLX_OP_CONV, &q, (int32_t[]){x, w, -1, -1, s}, 5, "conv", NULL) < 0);
    CHECK(strstr(rlx_last_error(), "gate") != NULL);
    rlx_graph_free(&g);
  }
}

TEST_MAIN(gated_pointwise, gated_im2col, not_fused, infer_refuses)
