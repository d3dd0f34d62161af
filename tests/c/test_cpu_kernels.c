/*
 * test_cpu_kernels.c — every fast CPU kernel against the reference kernel of
 * its op, on the same random inputs: sizes around the microkernel tiles (1,
 * tile - 1, tile, tile + 1, large), strides, padding, dilation, groups,
 * broadcasting, masks, fused epilogues, special values; with 1, 2 and 3
 * threads. The selector must take each case (a fast kernel that silently
 * falls back would test nothing). The vector math the kernels share is
 * tested on its own in test_cpu_vmath.c.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "cpu/select.h"
#include "cpu/vmath.h"
#include "ops/ops_util.h"
#include "runtime/runtime.h"
#include "test.h"

#define MAXIN 5

typedef struct spec {
  rlx_dtype dt;
  rlx_shape sh;
  bool constant, absent, specials;
  const int64_t *vals; /* exact values (e.g. grouped_matmul's offsets) instead of random ones */
  const float *fvals;  /* exact float values, or NULL */
} spec;

static unsigned rng = 12345;
static const char *want_kernel; /* the kernel run_both must select where the CPU has AVX-512 (NULL: any) */
static double urand(void) {
  rng = rng * 1664525u + 1013904223u;
  return (double)(rng >> 8) / 16777216.0 * 2.0 - 1.0;
}

static void *fill(const spec *s) {
  int64_t n = rlx_shape_numel(&s->sh);
  void *d = aligned_alloc(64, ((size_t)(n ? n : 1) * rlx_dtype_size(s->dt) + 63) & ~(size_t)63);
  for (int64_t i = 0; i < n; i++) {
    double v = urand() * 2;
    if (s->specials && i % 7 == 3) v = (i % 3 == 0) ? NAN : (i % 3 == 1) ? INFINITY : -INFINITY;
    if (s->fvals) rlx_store_f64(d, s->dt, i, s->fvals[i]);
    else if (s->vals) rlx_store_i64(d, s->dt, i, s->vals[i]);
    else if (s->dt == RLX_DTYPE_BOOL) rlx_store_i64(d, s->dt, i, urand() > -0.6);
    else rlx_store_f64(d, s->dt, i, v);
  }
  return d;
}

/* Runs the node with its reference kernel and with the fast kernel rlx picks,
 * returns the max difference relative to max(1, |ref|); NaN where exactly one
 * side is NaN counts as a full difference. */
static double run_both(const char *what, rlx_op op, const rlx_params *p, int n_in, const spec *in, int threads) {
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t ids[MAXIN];
  void *data[MAXIN] = {0};
  for (int k = 0; k < n_in; k++) {
    if (in[k].absent) {
      ids[k] = -1;
      continue;
    }
    data[k] = fill(&in[k]);
    ids[k] = in[k].constant ? rlx_graph_add_const(&g, in[k].dt, &in[k].sh, data[k])
                            : rlx_graph_add_input(&g, "x", in[k].dt, &in[k].sh);
  }
  int32_t node = rlx_graph_add_node(&g, op, p, ids, n_in, 1, what, NULL);
  double worst = INFINITY;
  if (node < 0) {
    fprintf(stderr, "  %s: infer failed: %s\n", what, rlx_last_error());
    goto done;
  }
  const rlx_node *n = &g.nodes[node];
  const rlx_value *ov = &g.values[n->out[0]];
  rlx_tensor_view vin[MAXIN], ref = rlx_value_view(ov), fast = rlx_value_view(ov);
  memset(vin, 0, sizeof vin);
  for (int k = 0; k < n_in; k++)
    if (ids[k] >= 0) vin[k] = rlx_value_view(&g.values[ids[k]]), vin[k].data = in[k].constant ? (void *)g.values[ids[k]].data : data[k];
  size_t bytes = rlx_value_nbytes(ov) + 64;
  ref.data = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
  fast.data = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
  const rlx_op_vtable *vt = rlx_op_table[op].vt;
  size_t rs = vt->scratch ? vt->scratch(&g, n) : 0;
  void *rscr = aligned_alloc(64, (rs + 64) & ~(size_t)63);
  CHECK_OK(vt->ref(n, vin, &ref, rscr));
  rlx_kernel kern = {.name = "reference", .run = rlx_reference_kernel};
  CHECK_OK(rlx_cpu_select(&g, NULL, node, threads, &kern));
  if (want_kernel && rlx_cpu_avx512_math() && (!kern.name || strcmp(kern.name, want_kernel))) {
    fprintf(stderr, "  %s: kernel %s, expected %s\n", what, kern.name ? kern.name : "(none)", want_kernel);
    CHECK(false);
  }
  if (!kern.fast) {
    fprintf(stderr, "  %s: no fast kernel was selected\n", what);
  } else {
    rlx_threadpool *tp;
    CHECK_OK(rlx_threadpool_create(threads, &tp));
    void *fscr = aligned_alloc(64, (kern.scratch + 64) & ~(size_t)63);
    rlx_exec x = {.tp = tp, .scratch = fscr, .packed = kern.packed};
    CHECK_OK(kern.run(n, vin, &fast, &x));
    worst = 0;
    int64_t N = rlx_value_nbytes(ov) / rlx_dtype_size(ov->dtype);
    for (int64_t i = 0; i < N; i++) {
      double a = rlx_load_f64(ref.data, ov->dtype, i), b = rlx_load_f64(fast.data, ov->dtype, i);
      double d = (isnan(a) || isnan(b)) ? (isnan(a) && isnan(b) ? 0 : INFINITY)
                 : (a == b) ? 0 : fabs(a - b) / fmax(1.0, fabs(a));
      if (d > worst) worst = d;
    }
    free(fscr);
    rlx_threadpool_destroy(tp);
    rlx_aligned_free(kern.packed);
  }
  free(rscr), free(ref.data), free(fast.data);
done:
  for (int k = 0; k < n_in; k++) free(data[k]);
  rlx_graph_free(&g);
  if (!(worst < 1e-4)) fprintf(stderr, "  %s (%d threads): max rel diff %g\n", what, threads, worst);
  return worst;
}

#define F32(...) ((spec){RLX_DTYPE_F32, {.rank = RLX_TEST_NARG_(__VA_ARGS__), .dims = {__VA_ARGS__}}, false, false, false, NULL, NULL})
#define W32(...) ((spec){RLX_DTYPE_F32, {.rank = RLX_TEST_NARG_(__VA_ARGS__), .dims = {__VA_ARGS__}}, true, false, false, NULL, NULL})
/* A 1-D integer tensor of dtype t holding the values v[0..n). */
#define IVALS(t, n, v) ((spec){RLX_DTYPE_##t, {.rank = 1, .dims = {n}}, false, false, false, v, NULL})
#define NONE ((spec){.absent = true})

static void each_threads(const char *what, rlx_op op, const rlx_params *p, int n_in, const spec *in) {
  for (int t = 1; t <= 3; t++) CHECK(run_both(what, op, p, n_in, in, t) < 1e-4);
}

TEST(matmul_tiles) {
  int64_t sizes[][3] = {{1, 1, 1}, {11, 7, 31}, {12, 256, 32}, {13, 300, 33}, {40, 5, 100}, {197, 768, 64}};
  for (size_t s = 0; s < RLX_COUNTOF(sizes); s++) {
    int64_t M = sizes[s][0], K = sizes[s][1], N = sizes[s][2];
    rlx_params p = {.matmul = {.trans_b = false, .alpha = 1, .beta = 1}};
    each_threads("matmul", RLX_OP_MATMUL, &p, 2, (spec[]){F32(M, K), F32(K, N)});
    each_threads("matmul const b", RLX_OP_MATMUL, &p, 2, (spec[]){F32(M, K), W32(K, N)});
    p.matmul.trans_b = true; /* a linear layer: weight [N, K], packed at compile time, bias row */
    each_threads("linear", RLX_OP_MATMUL, &p, 3, (spec[]){F32(2, M, K), W32(N, K), W32(N)});
  }
  rlx_params p = {.matmul = {.alpha = 0.5, .beta = 2}}; /* addmm with a full bias, batched broadcast */
  each_threads("addmm", RLX_OP_MATMUL, &p, 3, (spec[]){F32(3, 1, 5, 9), F32(4, 9, 6), F32(5, 6)});
  rlx_params e = {.matmul = {.trans_b = true, .alpha = 1, .beta = 1,
                             .ep = {.has_act = true, .act = {.kind = RLX_UNARY_GELU}}}};
  each_threads("linear+residual+gelu", RLX_OP_MATMUL, &e, 4, (spec[]){F32(7, 33), W32(20, 33), W32(20), F32(7, 20)});
  /* the epilogue inside the sgemm: alpha and a row bias, alpha alone, a batched residual, one row
   * (the skinny kernel), a [1, N] bias, blocks split over threads, an empty K */
  rlx_params ab = {.matmul = {.trans_b = true, .alpha = 0.25, .beta = -3}}, bmm0 = {.matmul = {.alpha = 1, .beta = 1}};
  each_threads("linear alpha bias", RLX_OP_MATMUL, &ab, 3, (spec[]){F32(13, 40), W32(300, 40), W32(300)});
  each_threads("matmul alpha", RLX_OP_MATMUL, &ab, 2, (spec[]){F32(13, 40), W32(300, 40)});
  rlx_params er = {.matmul = {.trans_b = true, .alpha = 1, .beta = 1,
                              .ep = {.has_act = true, .act = {.kind = RLX_UNARY_RELU}}}};
  each_threads("batched residual relu", RLX_OP_MATMUL, &er, 4,
               (spec[]){F32(3, 17, 64), W32(70, 64), W32(70), F32(3, 17, 70)});
  each_threads("one row residual relu", RLX_OP_MATMUL, &er, 4, (spec[]){F32(1, 64), W32(70, 64), W32(70), F32(1, 70)});
  each_threads("bias [1, N]", RLX_OP_MATMUL, &er, 3, (spec[]){F32(130, 64), W32(700, 64), W32(1, 700)});
  each_threads("empty K", RLX_OP_MATMUL, &er, 3, (spec[]){F32(5, 0), W32(9, 0), W32(9)});
  /* batches of one row against one weight (nn.MultiheadAttention's [S, B, D] with B = 1): one product */
  each_threads("rows as batches", RLX_OP_MATMUL, &er, 4, (spec[]){F32(37, 1, 40), W32(50, 40), W32(50), F32(37, 1, 50)});
  each_threads("rows as batches, plain b", RLX_OP_MATMUL, &bmm0, 2, (spec[]){F32(2, 3, 5, 40), F32(40, 9)});
  rlx_params bmm = {.matmul = {.alpha = 1, .beta = 1}}; /* many small batches: attention's bmm */
  each_threads("bmm", RLX_OP_MATMUL, &bmm, 2, (spec[]){F32(12, 17, 8), F32(12, 8, 17)});
}

/* Groups of rows around the tiles: empty groups, one-row groups, rows past the last offset,
 * K and N at 1, tile - 1, tile, tile + 1; the weights constant (packed per group at compile
 * time) or not. */
TEST(grouped_matmul) {
  static const int64_t offs_a[4] = {0, 1, 1, 13}, offs_b[3] = {50, 120, 197}, offs_c[2] = {0, 0};
  struct { int64_t S, K, N, E; const int64_t *offs; } cases[] = {
      {13, 1, 1, 4, offs_a}, {14, 7, 31, 4, offs_a}, {13, 256, 32, 4, offs_a}, {200, 300, 33, 3, offs_b},
      {197, 64, 96, 3, offs_b}, {5, 8, 8, 2, offs_c}};
  rlx_params p = {0};
  for (size_t c = 0; c < RLX_COUNTOF(cases); c++) {
    int64_t S = cases[c].S, K = cases[c].K, N = cases[c].N, E = cases[c].E;
    each_threads("grouped_matmul", RLX_OP_GROUPED_MATMUL, &p, 3, (spec[]){F32(S, K), F32(E, K, N), IVALS(I64, E, cases[c].offs)});
    each_threads("grouped_matmul const w", RLX_OP_GROUPED_MATMUL, &p, 3,
                 (spec[]){F32(S, K), W32(E, K, N), IVALS(I32, E, cases[c].offs)});
  }
}

static rlx_params conv2(int64_t s, int64_t pd, int64_t d, int64_t g) {
  rlx_params p = {.conv = {.nd = 2, .stride = {s, s}, .pad = {pd, pd}, .dilation = {d, d}, .groups = g}};
  return p;
}

TEST(conv_shapes) {
  rlx_params p = conv2(1, 1, 1, 1);
  each_threads("conv 3x3", RLX_OP_CONV, &p, 3, (spec[]){F32(1, 5, 9, 11), W32(7, 5, 3, 3), W32(7)});
  p = conv2(2, 3, 1, 1);
  each_threads("conv 7x7 s2", RLX_OP_CONV, &p, 2, (spec[]){F32(2, 3, 20, 17), W32(13, 3, 7, 7)});
  p = conv2(1, 1, 1, 1); /* K over one KC block, panels wrapping output rows, a 5-wide image */
  each_threads("conv 3x3 K>KC", RLX_OP_CONV, &p, 2, (spec[]){F32(1, 40, 9, 5), W32(16, 40, 3, 3)});
  p = conv2(2, 1, 1, 1); /* stride 2, odd size, one output row shorter than a panel */
  each_threads("conv 3x3 s2 odd", RLX_OP_CONV, &p, 3, (spec[]){F32(2, 6, 15, 13), W32(9, 6, 3, 3), W32(9)});
  p = conv2(1, 3, 1, 1); /* padding wider than part of the image: rows all padding */
  each_threads("conv 3x3 pad3", RLX_OP_CONV, &p, 2, (spec[]){F32(1, 3, 2, 40), W32(5, 3, 3, 3)});
  p = conv2(1, 1, 1, 1); /* Winograd F(2x2,3x3): odd output sizes cut the last tiles */
  each_threads("conv winograd pad1 odd", RLX_OP_CONV, &p, 3, (spec[]){F32(2, 16, 13, 15), W32(20, 16, 3, 3), W32(20)});
  p = conv2(1, 0, 1, 1);
  each_threads("conv winograd pad0", RLX_OP_CONV, &p, 2, (spec[]){F32(1, 24, 18, 16), W32(16, 24, 3, 3)});
  p = conv2(1, 2, 1, 1); /* padding 2: whole tiles of zeros at the borders */
  p.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = RLX_UNARY_RELU}};
  each_threads("conv winograd pad2+residual+relu", RLX_OP_CONV, &p, 4,
               (spec[]){F32(1, 16, 12, 12), W32(16, 16, 3, 3), W32(16), F32(1, 16, 14, 14)});
  p = conv2(2, 0, 1, 1); /* 1x1 stride 2 (a resnet downsample): one phase plane of four */
  each_threads("conv 1x1 s2", RLX_OP_CONV, &p, 2, (spec[]){F32(2, 8, 9, 11), W32(12, 8, 1, 1)});
  p = conv2(4, 2, 1, 1); /* 11x11 stride 4 (alexnet's first layer): 121 taps over 16 planes */
  each_threads("conv 11x11 s4", RLX_OP_CONV, &p, 3, (spec[]){F32(1, 3, 39, 35), W32(8, 3, 11, 11), W32(8)});
  p = conv2(2, 2, 2, 2); /* grouped, stride 2, dilation 2: taps on the even phases only */
  each_threads("conv 3x3 s2 d2 groups", RLX_OP_CONV, &p, 2, (spec[]){F32(1, 6, 15, 12), W32(8, 3, 3, 3)});
  p = conv2(1, 2, 2, 1);
  each_threads("conv dilated", RLX_OP_CONV, &p, 2, (spec[]){F32(1, 4, 10, 10), W32(6, 4, 3, 3)});
  p = conv2(1, 1, 1, 8);
  each_threads("conv depthwise", RLX_OP_CONV, &p, 3, (spec[]){F32(1, 8, 12, 12), W32(8, 1, 3, 3), W32(8)});
  p = conv2(2, 1, 1, 6); /* depthwise, the direct kernel: stride 2, batch 2, odd sizes */
  each_threads("conv depthwise s2", RLX_OP_CONV, &p, 2, (spec[]){F32(2, 6, 13, 11), W32(6, 1, 3, 3)});
  p = conv2(1, 4, 2, 5); /* dilation 2 on a 5x5 kernel (the generic taps loop) */
  each_threads("conv depthwise 5x5 d2", RLX_OP_CONV, &p, 3, (spec[]){F32(1, 5, 9, 10), W32(5, 1, 5, 5), W32(5)});
  p = conv2(1, 0, 1, 4); /* no padding: the 3-tap rows stop at the image edge */
  p.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = RLX_UNARY_HARDTANH, .a = 0, .b = 6}};
  each_threads("conv depthwise+residual+relu6", RLX_OP_CONV, &p, 4,
               (spec[]){F32(1, 4, 8, 19), W32(4, 1, 3, 3), W32(4), F32(1, 4, 6, 17)});
  p = conv2(3, 2, 2, 4); /* depthwise, stride 3 with dilation 2: taps spread over all nine phase planes */
  each_threads("conv depthwise 3x3 s3 d2", RLX_OP_CONV, &p, 3, (spec[]){F32(2, 4, 17, 14), W32(4, 1, 3, 3), W32(4)});
  p = conv2(2, 0, 1, 3); /* depthwise 4x4 stride 2 no padding: the generic taps on the phase planes */
  each_threads("conv depthwise 4x4 s2", RLX_OP_CONV, &p, 2, (spec[]){F32(1, 3, 12, 9), W32(3, 1, 4, 4)});
  p = conv2(1, 1, 1, 5); /* unequal strides: the grouped GEMM path */
  p.conv.stride[0] = 2;
  each_threads("conv depthwise strides 2x1", RLX_OP_CONV, &p, 2, (spec[]){F32(1, 5, 9, 8), W32(5, 1, 3, 3)});
  rlx_params pd1 = {.conv = {.nd = 1, .stride = {1}, .pad = {2}, .dilation = {1}, .groups = 3}};
  each_threads("conv1d depthwise", RLX_OP_CONV, &pd1, 2, (spec[]){F32(2, 3, 30), W32(3, 1, 4)});
  p = conv2(2, 0, 1, 2);
  each_threads("conv grouped s2", RLX_OP_CONV, &p, 2, (spec[]){F32(1, 6, 9, 9), W32(4, 3, 3, 3)});
  p = conv2(1, 0, 1, 1);
  each_threads("conv 1x1", RLX_OP_CONV, &p, 3, (spec[]){F32(2, 40, 7, 7), W32(70, 40, 1, 1), W32(70)});
  p = conv2(1, 1, 1, 1);
  p.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = RLX_UNARY_RELU}};
  each_threads("conv+residual+relu", RLX_OP_CONV, &p, 4,
               (spec[]){F32(1, 16, 14, 14), W32(32, 16, 3, 3), W32(32), F32(1, 32, 14, 14)});
  rlx_params p1 = {.conv = {.nd = 1, .stride = {2}, .pad = {1}, .dilation = {1}, .groups = 1}};
  each_threads("conv1d", RLX_OP_CONV, &p1, 3, (spec[]){F32(3, 4, 50), W32(8, 4, 5), W32(8)});
}

TEST(elementwise) {
  rlx_unary_kind kinds[] = {RLX_UNARY_RELU, RLX_UNARY_GELU, RLX_UNARY_GELU_TANH, RLX_UNARY_SILU, RLX_UNARY_SIGMOID,
                            RLX_UNARY_TANH, RLX_UNARY_EXP, RLX_UNARY_NEG, RLX_UNARY_RSQRT, RLX_UNARY_ABS,
                            RLX_UNARY_SQUARE, RLX_UNARY_RECIPROCAL};
  for (size_t k = 0; k < RLX_COUNTOF(kinds); k++)
    for (int64_t n = 1; n <= 100001; n += 50000) {
      rlx_params p = {.unary = {.kind = kinds[k]}};
      spec x = F32(n);
      x.specials = kinds[k] == RLX_UNARY_RELU || kinds[k] == RLX_UNARY_NEG || kinds[k] == RLX_UNARY_TANH ||
                   kinds[k] == RLX_UNARY_ABS || kinds[k] == RLX_UNARY_SQUARE;
      each_threads(rlx_unary_names[kinds[k]], RLX_OP_UNARY, &p, 1, &x);
    }
  rlx_unary_params withp[] = {{.kind = RLX_UNARY_HARDTANH, .a = 0, .b = 6},
                              {.kind = RLX_UNARY_HARDTANH, .a = -1, .b = 1},
                              {.kind = RLX_UNARY_LEAKY_RELU, .a = 0.125},
                              {.kind = RLX_UNARY_LEAKY_RELU, .a = 0.01},
                              {.kind = RLX_UNARY_HARDSWISH},
                              {.kind = RLX_UNARY_HARDSIGMOID},
                              {.kind = RLX_UNARY_CLAMP, .a = 0, .b = NAN},      /* clamp(min=0): no upper bound */
                              {.kind = RLX_UNARY_CLAMP, .a = NAN, .b = 6},      /* clamp(max=6) */
                              {.kind = RLX_UNARY_CLAMP, .a = -0.1, .b = 0.3},   /* bounds not floats: rounded */
                              {.kind = RLX_UNARY_CLAMP, .a = 2, .b = 1},        /* min > max: all max */
                              {.kind = RLX_UNARY_CLAMP, .a = -1e300, .b = 1e300},  /* beyond float range */
                              {.kind = RLX_UNARY_POW_SCALAR, .a = 2},
                              {.kind = RLX_UNARY_POW_SCALAR, .a = 3},
                              {.kind = RLX_UNARY_POW_SCALAR, .a = 0.5},
                              {.kind = RLX_UNARY_POW_SCALAR, .a = -1}};
  for (size_t k = 0; k < RLX_COUNTOF(withp); k++) {
    rlx_params p = {.unary = withp[k]};
    spec x = F32(70001);
    x.specials = true;
    each_threads(rlx_unary_names[withp[k].kind], RLX_OP_UNARY, &p, 1, &x);
  }
  rlx_binary_kind bk[] = {RLX_BINARY_ADD, RLX_BINARY_SUB, RLX_BINARY_MUL, RLX_BINARY_DIV};
  for (size_t k = 0; k < RLX_COUNTOF(bk); k++) {
    rlx_params p = {.binary = {.kind = bk[k]}};
    each_threads("binary same", RLX_OP_BINARY, &p, 2, (spec[]){F32(3, 70001), F32(3, 70001)});
    each_threads("binary row", RLX_OP_BINARY, &p, 2, (spec[]){F32(4, 5, 33), F32(1, 33)});
    each_threads("binary scalar", RLX_OP_BINARY, &p, 2, (spec[]){F32(2, 9), F32(1)});
    /* any other broadcast (the row kernel): both sides broadcast, a column, rank mismatch, big */
    each_threads("binary both", RLX_OP_BINARY, &p, 2, (spec[]){F32(4, 1, 33), F32(1, 5, 33)});
    each_threads("binary column", RLX_OP_BINARY, &p, 2, (spec[]){F32(1, 64, 1), F32(1, 64, 512)});
    each_threads("binary ranks", RLX_OP_BINARY, &p, 2, (spec[]){F32(2, 3, 1, 7), F32(3, 5, 1)});
    each_threads("binary outer", RLX_OP_BINARY, &p, 2, (spec[]){F32(600, 1), F32(1, 70)});
    each_threads("binary mid", RLX_OP_BINARY, &p, 2, (spec[]){F32(3, 40, 1, 16), F32(3, 1, 50, 16)});
    if (bk[k] == RLX_BINARY_ADD || bk[k] == RLX_BINARY_MUL)
      each_threads("binary row first", RLX_OP_BINARY, &p, 2, (spec[]){F32(5, 33), F32(4, 5, 33)});
  }
}

/* sum / mean / max / min over one block of axes: rows (global average
 * pool), columns (a middle axis), banded columns (a channels-last pool),
 * everything, empty blocks, NaN and inf. */
TEST(reductions) {
  rlx_reduce_kind kinds[] = {RLX_REDUCE_SUM, RLX_REDUCE_MEAN, RLX_REDUCE_MAX, RLX_REDUCE_MIN};
  for (size_t k = 0; k < RLX_COUNTOF(kinds); k++) {
    const char *nm = rlx_reduce_names[kinds[k]];
    rlx_params p = {.reduce = {.kind = kinds[k], .axes = 0xC, .keepdim = true}};
    each_threads(nm, RLX_OP_REDUCE, &p, 1, (spec[]){F32(1, 72, 28, 28)});
    each_threads(nm, RLX_OP_REDUCE, &p, 1, (spec[]){F32(2, 3, 1, 7)});
    p.reduce.axes = 0x2, p.reduce.keepdim = false; /* a middle axis: columns */
    each_threads(nm, RLX_OP_REDUCE, &p, 1, (spec[]){F32(2, 300, 17)});
    each_threads(nm, RLX_OP_REDUCE, &p, 1, (spec[]){F32(3, 40, 1000)});
    each_threads(nm, RLX_OP_REDUCE, &p, 1, (spec[]){F32(5, 1, 9)}); /* only a size-1 axis: a copy */
    p.reduce.axes = 0x6; /* two axes with a size-1 one between... */
    each_threads(nm, RLX_OP_REDUCE, &p, 1, (spec[]){F32(4, 33, 1)});
    p.reduce.axes = 0x7; /* ...and everything */
    each_threads(nm, RLX_OP_REDUCE, &p, 1, (spec[]){F32(3, 50, 701)});
    spec sx = F32(6, 70, 33);
    sx.specials = true;
    p.reduce.axes = 0x4;
    each_threads(nm, RLX_OP_REDUCE, &p, 1, &sx);
    p.reduce.axes = 0x2;
    each_threads(nm, RLX_OP_REDUCE, &p, 1, &sx);
    /* a channels-last global pool: few column strips over many pixels, the pixels in bands (reduce.c) */
    p.reduce.axes = 0x6;
    each_threads(nm, RLX_OP_REDUCE, &p, 1, (spec[]){F32(1, 29, 31, 300)});
    each_threads(nm, RLX_OP_REDUCE, &p, 1, (spec[]){F32(2, 9, 7, 1000)}); /* outer 2: 8 strips */
    spec sb = F32(1, 23, 19, 40);
    sb.specials = true;
    each_threads(nm, RLX_OP_REDUCE, &p, 1, &sb);
    if (kinds[k] == RLX_REDUCE_SUM) { /* an empty block sums to 0 (infer refuses max/min of nothing, as torch) */
      p.reduce.axes = 0x2;
      each_threads(nm, RLX_OP_REDUCE, &p, 1, (spec[]){F32(3, 0, 5)});
    }
  }
}

TEST(pooling) {
  rlx_params p = {.pool = {.kind = RLX_POOL_MAX, .nd = 2, .kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1},
                           .dilation = {1, 1}}};
  spec x = F32(2, 3, 15, 16);
  x.specials = true; /* NaN and inf in the windows */
  each_threads("maxpool", RLX_OP_POOL, &p, 1, &x);
  x.specials = false; /* no NaN: the stride-2 columns split into evens and odds (pool_avx512.c), -inf at the edges */
  each_threads("maxpool no NaN", RLX_OP_POOL, &p, 1, &x);
  p.pool.kernel[0] = p.pool.kernel[1] = 2; /* 2x2 stride 2, padded, odd widths (ceil: a last window of one column) */
  each_threads("maxpool 2x2 s2 p1", RLX_OP_POOL, &p, 1, (spec[]){F32(1, 3, 17, 35)});
  p.pool.pad[0] = p.pool.pad[1] = 0, p.pool.ceil_mode = true;
  each_threads("maxpool 2x2 s2 ceil", RLX_OP_POOL, &p, 1, (spec[]){F32(1, 3, 17, 35)});
  spec x2 = F32(1, 3, 17, 35);
  x2.specials = true;
  each_threads("maxpool 2x2 s2 ceil NaN", RLX_OP_POOL, &p, 1, &x2);
  p.pool.kernel[0] = p.pool.kernel[1] = 3, p.pool.pad[0] = p.pool.pad[1] = 1, p.pool.ceil_mode = false;
  p.pool.dilation[0] = p.pool.dilation[1] = 2, p.pool.ceil_mode = true;
  each_threads("maxpool dilated ceil", RLX_OP_POOL, &p, 1, (spec[]){F32(1, 2, 13, 13)});
  rlx_params m = {.pool = {.kind = RLX_POOL_MAX, .nd = 2, .kernel = {5, 5}, .stride = {1, 1}, .pad = {2, 2},
                           .dilation = {1, 1}}}; /* stride 1, "same" size (SPP blocks) */
  spec xs = F32(1, 3, 9, 11);
  xs.specials = true;
  each_threads("maxpool 5x5 s1", RLX_OP_POOL, &m, 1, &xs);
  m.pool.kernel[0] = 2, m.pool.kernel[1] = 3, m.pool.stride[0] = 1, m.pool.stride[1] = 3, m.pool.pad[0] = 1,
  m.pool.pad[1] = 0, m.pool.ceil_mode = true; /* unequal kernel and strides */
  each_threads("maxpool 2x3 s1x3 ceil", RLX_OP_POOL, &m, 1, (spec[]){F32(2, 2, 7, 14)});
  rlx_params a = {.pool = {.kind = RLX_POOL_AVG, .nd = 2, .kernel = {3, 2}, .stride = {2, 2}, .pad = {1, 1},
                           .dilation = {1, 1}, .ceil_mode = true, .count_include_pad = false}};
  each_threads("avgpool exclude pad", RLX_OP_POOL, &a, 1, (spec[]){F32(1, 4, 11, 9)});
  a.pool.count_include_pad = true, a.pool.divisor_override = 5;
  each_threads("avgpool divisor", RLX_OP_POOL, &a, 1, (spec[]){F32(1, 4, 11, 9)});
  /* 4096 outputs and more: split over the threads */
  rlx_params b = {.pool = {.kind = RLX_POOL_MAX, .nd = 2, .kernel = {3, 3}, .stride = {2, 2}, .dilation = {1, 1},
                           .ceil_mode = true}}; /* squeezenet's */
  spec big = F32(1, 16, 37, 35);
  each_threads("maxpool 3x3 s2 ceil", RLX_OP_POOL, &b, 1, &big);
  big.specials = true;
  each_threads("maxpool 3x3 s2 ceil, NaN", RLX_OP_POOL, &b, 1, &big);
  b.pool.stride[0] = b.pool.stride[1] = 1, b.pool.pad[0] = b.pool.pad[1] = 1; /* googlenet's branch pools */
  each_threads("maxpool 3x3 s1 p1", RLX_OP_POOL, &b, 1, (spec[]){F32(1, 8, 29, 30)});
  b.pool.kernel[0] = 5, b.pool.pad[0] = 2, b.pool.dilation[0] = 2; /* dilated rows, windows past both edges */
  each_threads("maxpool 5x3 dilated", RLX_OP_POOL, &b, 1, &big);
  /* "same" pools over small planes run flat (pool.h): 7x7 and 14x14 (googlenet's), 29x30 (a period of 435
   * vectors), runs of planes cut in tasks, with NaN (the planes redone) and without */
  rlx_params f = {.pool = {.kind = RLX_POOL_MAX, .nd = 2, .kernel = {3, 3}, .stride = {1, 1}, .pad = {1, 1},
                           .dilation = {1, 1}, .ceil_mode = true}};
  spec s7 = F32(1, 200, 7, 7), s14 = F32(2, 30, 14, 14);
  want_kernel = "f32_maxpool2d_flat_avx512";
  each_threads("maxpool 3x3 s1 7x7 flat", RLX_OP_POOL, &f, 1, &s7);
  each_threads("maxpool 3x3 s1 14x14 flat", RLX_OP_POOL, &f, 1, &s14);
  each_threads("maxpool 3x3 s1 29x30 flat", RLX_OP_POOL, &f, 1, (spec[]){F32(1, 8, 29, 30)});
  s7.specials = s14.specials = true;
  each_threads("maxpool 3x3 s1 7x7 flat NaN", RLX_OP_POOL, &f, 1, &s7);
  each_threads("maxpool 3x3 s1 14x14 flat NaN", RLX_OP_POOL, &f, 1, &s14);
  f.pool.kernel[0] = 5, f.pool.pad[0] = 2, f.pool.kernel[1] = 1, f.pool.pad[1] = 0; /* 5x1 */
  each_threads("maxpool 5x1 s1 flat", RLX_OP_POOL, &f, 1, (spec[]){F32(1, 50, 9, 5)});
  want_kernel = NULL;
  a.pool.kernel[0] = a.pool.kernel[1] = 3, a.pool.stride[0] = a.pool.stride[1] = 1, a.pool.divisor_override = 0;
  each_threads("avgpool 3x3 s1 include pad", RLX_OP_POOL, &a, 1, (spec[]){F32(1, 8, 29, 30)});
}

TEST(attention) {
  rlx_params p = {.attention = {.causal = false}};
  each_threads("attention", RLX_OP_ATTENTION, &p, 3, (spec[]){F32(2, 3, 9, 16), F32(2, 3, 11, 16), F32(2, 3, 11, 8)});
  p.attention.causal = true, p.attention.scale = 0.3;
  each_threads("attention causal gqa", RLX_OP_ATTENTION, &p, 3, (spec[]){F32(1, 4, 7, 8), F32(1, 2, 7, 8), F32(1, 2, 7, 8)});
  rlx_params m = {.attention = {.causal = false}};
  spec bm = {RLX_DTYPE_BOOL, {.rank = 4, .dims = {2, 1, 9, 11}}, false, false, false, NULL, NULL};
  each_threads("attention bool mask", RLX_OP_ATTENTION, &m, 4,
               (spec[]){F32(2, 3, 9, 16), F32(2, 3, 11, 16), F32(2, 3, 11, 8), bm});
  each_threads("attention float mask", RLX_OP_ATTENTION, &m, 4,
               (spec[]){F32(2, 3, 9, 16), F32(2, 3, 11, 16), F32(2, 3, 11, 8), F32(3, 9, 11)});
  /* rows longer than the 16 lanes of the vectorized softmax, with a tail */
  spec bm37 = {RLX_DTYPE_BOOL, {.rank = 4, .dims = {1, 1, 20, 37}}, false, false, false, NULL, NULL};
  each_threads("attention long bool mask", RLX_OP_ATTENTION, &m, 4,
               (spec[]){F32(1, 2, 20, 16), F32(1, 2, 37, 16), F32(1, 2, 37, 8), bm37});
  each_threads("attention long float mask", RLX_OP_ATTENTION, &m, 4,
               (spec[]){F32(1, 2, 20, 16), F32(1, 2, 37, 16), F32(1, 2, 37, 8), F32(20, 37)});
  each_threads("attention mask broadcast over keys", RLX_OP_ATTENTION, &m, 4,
               (spec[]){F32(1, 2, 20, 16), F32(1, 2, 37, 16), F32(1, 2, 37, 8), F32(1, 2, 20, 1)});
  spec qs = F32(1, 2, 20, 16);
  qs.specials = true;
  each_threads("attention long specials", RLX_OP_ATTENTION, &m, 3, (spec[]){qs, F32(1, 2, 37, 16), F32(1, 2, 37, 8)});
  p.attention.scale = 0;
  each_threads("attention long causal", RLX_OP_ATTENTION, &p, 3, (spec[]){F32(1, 2, 40, 16), F32(1, 2, 40, 16), F32(1, 2, 40, 8)});
  /* causal without a mask: blocks of 32 query rows multiply only the keys up
   * to their last row; edges at a block (32, 33), one row, more queries than
   * keys (rows past S see them all) and fewer (top-left: the last keys
   * unseen), an odd E, specials in q */
  each_threads("attention causal 33", RLX_OP_ATTENTION, &p, 3, (spec[]){F32(2, 3, 33, 16), F32(2, 3, 33, 16), F32(2, 3, 33, 8)});
  each_threads("attention causal 32", RLX_OP_ATTENTION, &p, 3, (spec[]){F32(1, 2, 32, 7), F32(1, 2, 32, 7), F32(1, 2, 32, 5)});
  each_threads("attention causal 1", RLX_OP_ATTENTION, &p, 3, (spec[]){F32(1, 2, 1, 8), F32(1, 2, 1, 8), F32(1, 2, 1, 8)});
  each_threads("attention causal L > S", RLX_OP_ATTENTION, &p, 3, (spec[]){F32(1, 2, 70, 16), F32(1, 2, 45, 16), F32(1, 2, 45, 8)});
  each_threads("attention causal L < S", RLX_OP_ATTENTION, &p, 3, (spec[]){F32(1, 2, 40, 16), F32(1, 2, 99, 16), F32(1, 2, 99, 8)});
  spec qc = F32(1, 2, 65, 16);
  qc.specials = true;
  each_threads("attention causal specials", RLX_OP_ATTENTION, &p, 3, (spec[]){qc, F32(1, 2, 65, 16), F32(1, 2, 65, 8)});
  /* causal, one head a task: a -inf in q row 1 makes both scores it sees -inf (k's first column positive):
   * zeros, as torch's _safe_softmax gives, not NaN (the ones NaN from +-inf products stay NaN) */
  static const float q1[] = {1, 2, -INFINITY, 0.5f, 0.3f, -0.2f}, k1[] = {1, 1, 2, -1, 0.5f, 0.5f};
  spec qi = F32(1, 1, 3, 2), ki = F32(1, 1, 3, 2);
  qi.fvals = q1, ki.fvals = k1;
  each_threads("attention causal row of -inf scores", RLX_OP_ATTENTION, &p, 3, (spec[]){qi, ki, F32(1, 1, 3, 4)});
}


TEST(rows) {
  rlx_params s = {.softmax = {.axis = 2}};
  each_threads("softmax", RLX_OP_SOFTMAX, &s, 1, (spec[]){F32(3, 5, 1000)});
  s.softmax.log = true;
  each_threads("log_softmax", RLX_OP_SOFTMAX, &s, 1, (spec[]){F32(3, 5, 17)});
  spec sx = F32(3, 4, 40);
  sx.specials = true;
  each_threads("log_softmax specials", RLX_OP_SOFTMAX, &s, 1, (spec[]){sx});
  s.softmax.log = false;
  each_threads("softmax specials", RLX_OP_SOFTMAX, &s, 1, (spec[]){sx});
  rlx_params ln = {.norm = {.n_axes = 2, .eps = 1e-5}};
  each_threads("layer_norm", RLX_OP_LAYER_NORM, &ln, 3, (spec[]){F32(4, 6, 33), W32(6, 33), W32(6, 33)});
  each_threads("layer_norm no affine", RLX_OP_LAYER_NORM, &ln, 3, (spec[]){F32(4, 6, 33), NONE, NONE});
  spec lx = F32(5, 100);
  lx.specials = true;
  rlx_params ln1 = {.norm = {.n_axes = 1, .eps = 1e-5}};
  each_threads("layer_norm specials", RLX_OP_LAYER_NORM, &ln1, 3, (spec[]){lx, W32(100), W32(100)});
  rlx_params rms = {.norm = {.n_axes = 1, .eps = 1e-6}};
  each_threads("rms_norm", RLX_OP_RMS_NORM, &rms, 2, (spec[]){F32(9, 64), W32(64)});
  rlx_params gn = {.norm = {.groups = 8, .eps = 1e-5}};
  each_threads("group_norm", RLX_OP_GROUP_NORM, &gn, 3, (spec[]){F32(2, 32, 7, 9), W32(32), W32(32)});
  each_threads("group_norm big", RLX_OP_GROUP_NORM, &gn, 3, (spec[]){F32(1, 64, 40, 41), W32(64), W32(64)});
  each_threads("group_norm no affine", RLX_OP_GROUP_NORM, &gn, 3, (spec[]){F32(3, 16, 5), NONE, NONE});
  gn.norm.groups = 3;
  spec gx = F32(2, 6, 13);
  gx.specials = true;
  each_threads("group_norm specials", RLX_OP_GROUP_NORM, &gn, 3, (spec[]){gx, W32(6), NONE});
  each_threads("group_norm empty", RLX_OP_GROUP_NORM, &gn, 3, (spec[]){F32(2, 6, 0), W32(6), W32(6)});
  /* inference batch norm: positive variances (exact values), with and without the affine part */
  static const int64_t var5[] = {1, 2, 3, 4, 5}, var7[] = {1, 3, 2, 9, 4, 7, 6};
  rlx_params bn = {.norm = {.eps = 1e-5}};
  spec v5 = {RLX_DTYPE_F32, {.rank = 1, .dims = {5}}, true, false, false, var5, NULL};
  spec v7 = {RLX_DTYPE_F32, {.rank = 1, .dims = {7}}, true, false, false, var7, NULL};
  each_threads("batch_norm", RLX_OP_BATCH_NORM, &bn, 5, (spec[]){F32(2, 5, 11, 13), W32(5), v5, W32(5), W32(5)});
  each_threads("batch_norm big", RLX_OP_BATCH_NORM, &bn, 5, (spec[]){F32(1, 7, 64, 65), W32(7), v7, NONE, NONE});
  each_threads("batch_norm rank 2", RLX_OP_BATCH_NORM, &bn, 5, (spec[]){F32(3, 5), W32(5), v5, W32(5), NONE});
  spec bx = F32(2, 5, 9);
  bx.specials = true;
  each_threads("batch_norm specials", RLX_OP_BATCH_NORM, &bn, 5, (spec[]){bx, W32(5), v5, W32(5), W32(5)});
}

static rlx_params perm(int a, int b, int c, int d) {
  rlx_params p = {.permute = {.perm = {a, b, c, d, -1, -1, -1, -1}}};
  return p;
}

/* Every element size, merged and unmerged axes, the innermost axis moved
 * (strided gather) or kept (runs), size-1 axes, and big enough to split. */
TEST(permute) {
  rlx_dtype dts[] = {RLX_DTYPE_F32, RLX_DTYPE_F16, RLX_DTYPE_I64, RLX_DTYPE_U8, RLX_DTYPE_BOOL};
  rlx_params ps[] = {perm(0, 2, 1, 3), perm(0, 2, 3, 1), perm(3, 2, 1, 0), perm(1, 0, 2, 3), perm(0, 1, 2, 3),
                     perm(2, 3, 0, 1)};
  int64_t shapes[][4] = {{2, 7, 5, 9}, {1, 130, 12, 64}, {3, 1, 1, 40}, {4, 33, 1, 2}};
  for (size_t d = 0; d < RLX_COUNTOF(dts); d++)
    for (size_t k = 0; k < RLX_COUNTOF(ps); k++)
      for (size_t h = 0; h < RLX_COUNTOF(shapes); h++) {
        spec x = {.dt = dts[d], .sh = {.rank = 4, .dims = {shapes[h][0], shapes[h][1], shapes[h][2], shapes[h][3]}}};
        each_threads("permute", RLX_OP_PERMUTE, &ps[k], 1, &x);
      }
  rlx_params e = {.shape = {.shape = {.rank = 5, .dims = {1, 4, 2, 64, 64}}}}; /* GQA's repeat_kv */
  each_threads("expand kv", RLX_OP_EXPAND, &e, 1, (spec[]){F32(1, 4, 1, 64, 64)});
  e.shape.shape = (rlx_shape){.rank = 3, .dims = {3, 70, 5}}; /* the innermost axis broadcast */
  each_threads("expand inner", RLX_OP_EXPAND, &e, 1, (spec[]){{.dt = RLX_DTYPE_I64, .sh = {.rank = 2, .dims = {70, 1}}}});
  e.shape.shape = (rlx_shape){.rank = 4, .dims = {2, 3, 4, 5}};
  each_threads("expand rank", RLX_OP_EXPAND, &e, 1, (spec[]){{.dt = RLX_DTYPE_BOOL, .sh = {.rank = 2, .dims = {1, 5}}}});
  rlx_params p2 = {.permute = {.perm = {1, 0, -1, -1, -1, -1, -1, -1}}};
  each_threads("transpose 2-D", RLX_OP_PERMUTE, &p2, 1, (spec[]){F32(300, 257)});
  /* the AVX-512 tiles (256 x 32, narrow rows in wide tiles): tails in both axes, several images */
  rlx_params p3 = {.permute = {.perm = {0, 2, 1, -1, -1, -1, -1, -1}}};
  each_threads("transpose tiles", RLX_OP_PERMUTE, &p3, 1, (spec[]){F32(2, 531, 301)});
  each_threads("transpose to 24 rows", RLX_OP_PERMUTE, &p3, 1, (spec[]){F32(1, 700, 24)});
  each_threads("transpose from 24 rows", RLX_OP_PERMUTE, &p3, 1, (spec[]){F32(1, 24, 700)});
}

/* Slices: a qkv split (contiguous runs), steps, the first and an inner axis, empty windows, dtypes. */
TEST(slices) {
  struct { int axis; int64_t start, end, step; } cases[] = {
      {2, 768, 1536, 1}, {2, 0, 2304, 3}, {0, 0, 1, 1}, {1, 5, 128, 7}, {2, 100, 100, 1}, {1, 127, 128, 1}};
  rlx_dtype dts[] = {RLX_DTYPE_F32, RLX_DTYPE_F16, RLX_DTYPE_I64, RLX_DTYPE_BOOL};
  for (size_t d = 0; d < RLX_COUNTOF(dts); d++)
    for (size_t c = 0; c < RLX_COUNTOF(cases); c++) {
      rlx_params p = {.slice = {.axis = cases[c].axis, .start = cases[c].start, .end = cases[c].end, .step = cases[c].step}};
      spec x = {.dt = dts[d], .sh = {.rank = 3, .dims = {2, 128, 2304}}};
      each_threads("slice", RLX_OP_SLICE, &p, 1, &x);
    }
}

/* Pad in every mode against the reference: positive and negative (cropping) amounts on inner and outer
 * axes, a row entirely padding, ranks 1 to 4, float, half, integer and bool elements. */
TEST(pads) {
  rlx_pad_mode modes[] = {RLX_PAD_CONSTANT, RLX_PAD_REFLECT, RLX_PAD_REPLICATE, RLX_PAD_CIRCULAR};
  struct { int rank; int64_t dims[4], lo[4], hi[4]; } cases[] = {
      {4, {1, 56, 56, 96}, {0, 0, 0, 0}, {0, 2, 3, 0}},   /* swin's windows: H and W padded at their ends */
      {4, {2, 3, 9, 11}, {0, 0, 2, 3}, {0, 0, 1, 2}},     /* an image padded around */
      {3, {3, 5, 40}, {0, 1, -2}, {0, 2, -3}},            /* crop the rows, pad the rows' axis */
      {2, {4, 33}, {-1, 5}, {2, -4}},
      {1, {70}, {3}, {-5}},
      {3, {2, 4, 1}, {1, 0, 0}, {1, 0, 0}},               /* whole rows of padding, 1-wide rows */
  };
  rlx_dtype dts[] = {RLX_DTYPE_F32, RLX_DTYPE_F16, RLX_DTYPE_I64, RLX_DTYPE_BOOL};
  for (size_t m = 0; m < RLX_COUNTOF(modes); m++)
    for (size_t c = 0; c < RLX_COUNTOF(cases); c++)
      for (size_t d = 0; d < RLX_COUNTOF(dts); d++) {
        bool neg = false, wide = false;
        for (int a = 0; a < cases[c].rank; a++) {
          neg = neg || cases[c].lo[a] < 0 || cases[c].hi[a] < 0;
          wide = wide || cases[c].lo[a] >= cases[c].dims[a] || cases[c].hi[a] >= cases[c].dims[a];
        }
        if ((modes[m] == RLX_PAD_CIRCULAR && neg) || (modes[m] == RLX_PAD_REFLECT && wide) ||
            (dts[d] == RLX_DTYPE_BOOL && modes[m] != RLX_PAD_CONSTANT))
          continue; /* refused by infer (test_hostile) */
        rlx_params p = {.pad = {.mode = modes[m], .value = dts[d] == RLX_DTYPE_BOOL ? 1 : -2.5}};
        for (int a = 0; a < cases[c].rank; a++) p.pad.lo[a] = cases[c].lo[a], p.pad.hi[a] = cases[c].hi[a];
        spec x = {.dt = dts[d], .sh = {.rank = cases[c].rank}};
        for (int a = 0; a < cases[c].rank; a++) x.sh.dims[a] = cases[c].dims[a];
        each_threads("pad", RLX_OP_PAD, &p, 1, &x);
      }
}

/* Concat (any axis, dtypes, an empty input, rotary's last-axis halves) and
 * gather (embedding rows, an inner axis, negative indices wrapped), against
 * the reference; an index out of range is an error from the fast kernel too. */
TEST(concat_gather) {
  rlx_dtype dts[] = {RLX_DTYPE_F32, RLX_DTYPE_F16, RLX_DTYPE_I64, RLX_DTYPE_BOOL};
  for (size_t d = 0; d < RLX_COUNTOF(dts); d++)
    for (int ax = 0; ax < 4; ax++) {
      rlx_params p = {.axis = {.axis = ax}};
      spec a = {.dt = dts[d], .sh = {.rank = 4, .dims = {2, 32, 128, 32}}}, b = a, e = a;
      b.sh.dims[ax] = 7, e.sh.dims[ax] = 0;
      each_threads("concat", RLX_OP_CONCAT, &p, 3, (spec[]){a, e, b});
    }
  static int64_t idx[300];
  for (int i = 0; i < 300; i++) idx[i] = (i * 7919) % 1000 - (i % 5 == 0 ? 1000 : 0); /* some negative */
  rlx_params g0 = {.gather = {.axis = 0, .wrap_negative = true}}, g1 = {.gather = {.axis = 1, .wrap_negative = true}};
  each_threads("gather rows", RLX_OP_GATHER, &g0, 2, (spec[]){F32(1000, 96), IVALS(I64, 300, idx)});
  each_threads("gather rows i32", RLX_OP_GATHER, &g0, 2, (spec[]){F32(1000, 3), IVALS(I32, 300, idx)});
  each_threads("gather inner", RLX_OP_GATHER, &g1, 2, (spec[]){F32(3, 1000, 5), IVALS(I64, 300, idx)});
  /* out of range (and negative without wrapping): the fast kernel refuses, naming the index */
  static const int64_t bad[3] = {1, 5, 2}, neg[2] = {0, -1};
  rlx_params gn = {.gather = {.axis = 0, .wrap_negative = false}};
  for (int c = 0; c < 2; c++) {
    rlx_graph g;
    rlx_graph_init(&g);
    rlx_shape xs = {.rank = 2, .dims = {5, 4}}, is = {.rank = 1, .dims = {c ? 2 : 3}};
    int32_t ids[2] = {rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), rlx_graph_add_input(&g, "i", RLX_DTYPE_I64, &is)};
    int32_t node = rlx_graph_add_node(&g, RLX_OP_GATHER, c ? &gn : &g0, ids, 2, 1, "embedding", NULL);
    CHECK(node >= 0);
    rlx_kernel k = {.name = "reference", .run = rlx_reference_kernel};
    CHECK_OK(rlx_cpu_select(&g, NULL, node, 2, &k));
    CHECK(!strcmp(k.name, "gather_rows"));
    float x[20] = {0}, y[12];
    rlx_tensor_view in[2] = {rlx_value_view(&g.values[ids[0]]), rlx_value_view(&g.values[ids[1]])};
    rlx_tensor_view out = rlx_value_view(&g.values[g.nodes[node].out[0]]);
    in[0].data = x, in[1].data = (void *)(c ? neg : bad), out.data = y;
    rlx_exec e = {0};
    CHECK(k.run(&g.nodes[node], in, &out, &e) != RLX_OK);
    CHECK(strstr(rlx_last_error(), c ? "index -1 is out of range" : "index 5 is out of range") != NULL);
    rlx_graph_free(&g);
  }
}

/* index_put along one axis (a KV cache's update) against the reference:
 * negative and repeated indices (the last write wins), each axis, an empty
 * index; the forms the rows kernel does not take (values that broadcast,
 * accumulate, two index tensors) run the reference inside it; an index out
 * of range is the reference's error, before anything is written. */
TEST(index_put_rows) {
  static const int64_t i5[5] = {3, -1, 7, 3, 0}, i3[3] = {9, 0, -10}, i2[2] = {5, 1}, none[1] = {0};
  rlx_params a1 = {.index_put = {.indexed = 1u << 1}}, a0 = {.index_put = {.indexed = 1u}};
  each_threads("index_put axis 1", RLX_OP_INDEX_PUT, &a1, 3, (spec[]){F32(2, 65, 3), F32(2, 5, 3), IVALS(I64, 5, i5)});
  each_threads("index_put axis 0", RLX_OP_INDEX_PUT, &a0, 3, (spec[]){F32(10, 4), F32(3, 4), IVALS(I32, 3, i3)});
  each_threads("index_put last axis", RLX_OP_INDEX_PUT, &a1, 3, (spec[]){F32(4, 6), F32(4, 2), IVALS(I64, 2, i2)});
  spec empty = IVALS(I64, 0, none);
  each_threads("index_put empty", RLX_OP_INDEX_PUT, &a1, 3, (spec[]){F32(4, 6), F32(4, 0), empty});
  each_threads("index_put broadcast", RLX_OP_INDEX_PUT, &a1, 3, (spec[]){F32(2, 65, 3), F32(1, 5, 3), IVALS(I64, 5, i5)});
  rlx_params acc = {.index_put = {.indexed = 1u << 1, .accumulate = true}};
  each_threads("index_put accumulate", RLX_OP_INDEX_PUT, &acc, 3, (spec[]){F32(2, 65, 3), F32(2, 5, 3), IVALS(I64, 5, i5)});
  /* out of range: refused naming the index, and the output (here the input itself, in place) untouched */
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape xs = {.rank = 2, .dims = {4, 2}}, vs = {.rank = 2, .dims = {2, 2}}, is = {.rank = 1, .dims = {2}};
  int32_t ids[3] = {rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), rlx_graph_add_input(&g, "v", RLX_DTYPE_F32, &vs),
                    rlx_graph_add_input(&g, "i", RLX_DTYPE_I64, &is)};
  int32_t node = rlx_graph_add_node(&g, RLX_OP_INDEX_PUT, &a0, ids, 3, 1, "index_put", NULL);
  CHECK(node >= 0);
  rlx_kernel k = {.name = "reference", .run = rlx_reference_kernel};
  CHECK_OK(rlx_cpu_select(&g, NULL, node, 1, &k));
  CHECK(!strcmp(k.name, "index_put_rows"));
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, v[4] = {-1, -2, -3, -4};
  int64_t bad[2] = {1, 4}, good[2] = {3, -4};
  rlx_tensor_view in[3] = {rlx_value_view(&g.values[ids[0]]), rlx_value_view(&g.values[ids[1]]),
                           rlx_value_view(&g.values[ids[2]])};
  rlx_tensor_view out = rlx_value_view(&g.values[g.nodes[node].out[0]]);
  in[0].data = x, in[1].data = v, in[2].data = bad, out.data = x; /* in place, as a state */
  int64_t scratch[8];
  rlx_exec e = {.scratch = scratch};
  CHECK(k.run(&g.nodes[node], in, &out, &e) != RLX_OK);
  CHECK(strstr(rlx_last_error(), "index 4 is out of range") != NULL);
  CHECK(x[2] == 3 && x[3] == 4); /* row 1 not written: the index is checked first */
  in[2].data = good;
  CHECK_OK(k.run(&g.nodes[node], in, &out, &e));
  const float want[8] = {-3, -4, 3, 4, 5, 6, -1, -2};
  CHECK(!memcmp(x, want, sizeof want));
  rlx_graph_free(&g);
}

/* The registry: a node runs the first family registered for its (op, dtype)
 * that takes it; an (op, dtype) nobody registered runs the reference. */
/* casts and bool / uint8 logic (cpu/cast.c): exactly the reference's values */
static void exact_threads(const char *what, rlx_op op, const rlx_params *p, int n_in, const spec *in) {
  for (int t = 1; t <= 3; t++) CHECK(run_both(what, op, p, n_in, in, t) == 0);
}

TEST(casts_logic) {
  static const rlx_dtype from[] = {RLX_DTYPE_F32, RLX_DTYPE_F64, RLX_DTYPE_I64, RLX_DTYPE_I32, RLX_DTYPE_I16,
                                   RLX_DTYPE_I8, RLX_DTYPE_U8, RLX_DTYPE_BOOL};
  static const rlx_dtype to[] = {RLX_DTYPE_BOOL, RLX_DTYPE_F32, RLX_DTYPE_F64, RLX_DTYPE_I64, RLX_DTYPE_I32};
  for (size_t a = 0; a < RLX_COUNTOF(from); a++)
    for (size_t b = 0; b < RLX_COUNTOF(to); b++) {
      bool flt = from[a] == RLX_DTYPE_F32 || from[a] == RLX_DTYPE_F64;
      bool ok = from[a] == to[b] || to[b] == RLX_DTYPE_BOOL || (to[b] == RLX_DTYPE_F32 && !flt) ||
                (to[b] == RLX_DTYPE_F32 && from[a] == RLX_DTYPE_F64) || (to[b] == RLX_DTYPE_F64 && from[a] == RLX_DTYPE_F32) ||
                (to[b] == RLX_DTYPE_I64 && !flt) || (to[b] == RLX_DTYPE_I32 && from[a] == RLX_DTYPE_I64);
      if (!ok) continue; /* float -> int: the reference's (see cast.c) */
      char what[64];
      snprintf(what, sizeof what, "cast %s -> %s", rlx_dtype_name(from[a]), rlx_dtype_name(to[b]));
      rlx_params p = {.cast = {.to = to[b]}};
      spec x = {from[a], {.rank = 2, .dims = {3, 50001}}, false, false, flt, NULL, NULL}; /* several tasks, a tail */
      exact_threads(what, RLX_OP_CAST, &p, 1, &x);
      spec one = {from[a], {.rank = 1, .dims = {7}}, false, false, flt, NULL, NULL};
      exact_threads(what, RLX_OP_CAST, &p, 1, &one);
    }
  /* int64 values that wrap in int32 and round in float32 */
  static const int64_t big[] = {0, 1, -1, (1LL << 40) + 1, -(1LL << 33) - 5, (1LL << 62) + 12345, INT64_MIN, INT64_MAX,
                                16777217, -16777219};
  rlx_params p32 = {.cast = {.to = RLX_DTYPE_I32}}, pf = {.cast = {.to = RLX_DTYPE_F32}}, pb = {.cast = {.to = RLX_DTYPE_BOOL}};
  exact_threads("cast big i64 -> i32", RLX_OP_CAST, &p32, 1, (spec[]){IVALS(I64, 10, big)});
  exact_threads("cast big i64 -> f32", RLX_OP_CAST, &pf, 1, (spec[]){IVALS(I64, 10, big)});
  exact_threads("cast big i64 -> bool", RLX_OP_CAST, &pb, 1, (spec[]){IVALS(I64, 10, big)});
  static const rlx_binary_kind ks[] = {RLX_BINARY_BITAND, RLX_BINARY_BITOR, RLX_BINARY_BITXOR, RLX_BINARY_LOGICAL_AND,
                                       RLX_BINARY_LOGICAL_OR, RLX_BINARY_LOGICAL_XOR};
  for (size_t k = 0; k < RLX_COUNTOF(ks); k++)
    for (int dt = 0; dt < 2; dt++) {
      rlx_dtype t = dt ? RLX_DTYPE_U8 : RLX_DTYPE_BOOL;
      rlx_params p = {.binary = {.kind = ks[k]}};
      char what[64];
      snprintf(what, sizeof what, "%s %s", rlx_binary_names[ks[k]], rlx_dtype_name(t));
      spec col = {t, {.rank = 4, .dims = {1, 1, 128, 1}}, false, false, false, NULL, NULL};
      spec row = {t, {.rank = 4, .dims = {1, 1, 1, 128}}, false, false, false, NULL, NULL};
      exact_threads(what, RLX_OP_BINARY, &p, 2, (spec[]){col, row}); /* BERT's mask */
      spec full = {t, {.rank = 2, .dims = {300, 301}}, false, false, false, NULL, NULL};
      spec vec = {t, {.rank = 1, .dims = {301}}, false, false, false, NULL, NULL};
      exact_threads(what, RLX_OP_BINARY, &p, 2, (spec[]){full, full});
      exact_threads(what, RLX_OP_BINARY, &p, 2, (spec[]){vec, full});
    }
}

static const char *chosen(rlx_op op, const rlx_params *p, rlx_dtype dt, rlx_shape sh) {
  static char name[64];
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t x = rlx_graph_add_input(&g, "x", dt, &sh);
  int32_t node = rlx_graph_add_node(&g, op, p, &x, 1, 1, "n", NULL);
  rlx_kernel k = {.name = "reference", .run = rlx_reference_kernel};
  CHECK(node >= 0);
  if (node >= 0) CHECK_OK(rlx_cpu_select(&g, NULL, node, 1, &k));
  snprintf(name, sizeof name, "%s%s", k.name, k.fast != (k.run != rlx_reference_kernel) ? " (inconsistent)" : "");
  rlx_aligned_free(k.packed);
  rlx_graph_free(&g);
  return name;
}

TEST(registry) {
  rlx_shape s = {.rank = 2, .dims = {3, 8}};
  rlx_params relu = {.unary = {.kind = RLX_UNARY_RELU}};
  CHECK(!strcmp(chosen(RLX_OP_UNARY, &relu, RLX_DTYPE_F32, s), "f32_unary"));
  CHECK(!strcmp(chosen(RLX_OP_UNARY, &relu, RLX_DTYPE_F16, s), "reference"));  /* no f16 family */
  rlx_params erf = {.unary = {.kind = RLX_UNARY_ERFINV}};
  CHECK(!strcmp(chosen(RLX_OP_UNARY, &erf, RLX_DTYPE_F32, s), "reference"));   /* registered, declines */
  rlx_params sl = {.slice = {.axis = 1, .start = 2, .end = 8, .step = 2}};
  CHECK(!strcmp(chosen(RLX_OP_SLICE, &sl, RLX_DTYPE_I64, s), "slice_runs"));
  CHECK(!strcmp(chosen(RLX_OP_SLICE, &sl, RLX_DTYPE_BOOL, s), "slice_runs"));
  rlx_params sm = {.softmax = {.axis = 1}};
  CHECK(!strcmp(chosen(RLX_OP_SOFTMAX, &sm, RLX_DTYPE_F32, s), "f32_softmax_rows"));
  for (int r = 0; r < rlx_cpu_kernel_count; r++)
    CHECK(rlx_cpu_kernels[r].supports && rlx_cpu_kernels[r].family && rlx_cpu_kernels[r].backend == RLX_BACKEND_CPU);
}

TEST_MAIN(casts_logic, index_put_rows, concat_gather, pads, matmul_tiles, grouped_matmul, conv_shapes, elementwise, reductions, pooling, attention, rows, permute, slices, registry)
