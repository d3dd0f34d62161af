/*
 * test_conv_winograd.c — the Winograd convolutions (F(4x4, 3x3) in
 * src/cpu/conv_wg4.c, F(2x2, 3x3) in src/cpu/conv.c) against the reference
 * conv kernel: edge sizes (1x1 images, odd sizes, one channel, channels not a
 * multiple of 16, padding 0/1/2, batch 2), every epilogue (bias, residual,
 * ReLU, ReLU6), NaN and Inf inputs, on 1, 2 and 3 threads; resnet's layer
 * sizes for the rounding bound; and which kernel the chooser picks (the
 * kernel that ran is checked by name and by function, so a Winograd case
 * cannot silently run im2col).
 *
 * Rounding: Winograd's transforms add and subtract values many times the
 * size of the result, so its error is measured against the size of the
 * terms, not of the result: for every output,
 *
 *   |fast - ref| <= tol * (|bias| + |residual| + sum over taps |w| |x|)
 *
 * with tol = 2e-6 for F(4x4) and 5e-7 for F(2x2) (float's unit roundoff is
 * 6e-8). The worst ratios measured on resnet's layer sizes are printed
 * (6.3e-7 and 2.4e-7 at most when written: docs/perf.md records them), so tol
 * leaves a margin of 3x and 2x for other data.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu/conv.h"
#include "cpu/select.h"
#include "cpu/tuning.h"
#include "ops/ops_util.h"
#include "runtime/runtime.h"
#include "rand_buf.h"
#include "test.h"

#define WG4 "f32_conv_winograd_4x4_3x3"
#define WG2 "f32_conv_winograd_2x2_3x3"
#define TOL4 2e-6
#define TOL2 5e-7

static unsigned rng = 2024;
static float urand(void) { return lcg_unit(&rng); }

typedef struct conv_case {
  const char *what;
  int64_t N, C, H, W, O, pad;
  bool bias, res;
  int act;             /* 0 none, 1 relu, 2 relu6 (hardtanh 0, 6) */
  int specials;        /* NaN / Inf / -Inf planted in the input (every specials-th element, from 3) */
  bool inf_weight;     /* one weight is Inf: Winograd must decline */
  const char *force;   /* RLX_WINOGRAD, or NULL for the chooser's own pick */
  const char *want;    /* the kernel that must run */
} conv_case;

/* Runs c on `threads` threads; returns the worst |fast - ref| / scale over the finite outputs (or +Inf on a
 * mismatch of NaN / Inf). */
static double run_case(const conv_case *c, int threads) {
  int64_t OH = c->H + 2 * c->pad - 2, OW = c->W + 2 * c->pad - 2;
  int64_t nx = c->N * c->C * c->H * c->W, nw = c->O * c->C * 9, ny = c->N * c->O * OH * OW;
  float *x = buf(nx), *w = buf(nw), *b = buf(c->O), *r = buf(ny);
  for (int64_t i = 0; i < nx; i++) x[i] = urand();
  for (int64_t i = 0; i < nw; i++) w[i] = urand() / sqrtf((float)(9 * c->C));
  for (int64_t i = 0; i < c->O; i++) b[i] = urand();
  for (int64_t i = 0; i < ny; i++) r[i] = urand();
  if (c->specials)
    for (int64_t i = 3, k = 0; i < nx; i += c->specials, k++) x[i] = k % 3 == 0 ? NAN : k % 3 == 1 ? INFINITY : -INFINITY;
  if (c->inf_weight) w[nw / 2] = INFINITY;
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape xs = {.rank = 4, .dims = {c->N, c->C, c->H, c->W}}, ws = {.rank = 4, .dims = {c->O, c->C, 3, 3}},
            bs = {.rank = 1, .dims = {c->O}}, rs = {.rank = 4, .dims = {c->N, c->O, OH, OW}};
  int32_t in[4] = {rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), rlx_graph_add_const(&g, RLX_DTYPE_F32, &ws, w),
                   c->bias ? rlx_graph_add_const(&g, RLX_DTYPE_F32, &bs, b) : -1,
                   c->res ? rlx_graph_add_input(&g, "res", RLX_DTYPE_F32, &rs) : -1};
  rlx_params p = {.conv = {.nd = 2, .stride = {1, 1}, .pad = {c->pad, c->pad}, .dilation = {1, 1}, .groups = 1}};
  if (c->act == 1) p.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = RLX_UNARY_RELU}};
  if (c->act == 2) p.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = RLX_UNARY_HARDTANH, .a = 0, .b = 6}};
  int32_t node = rlx_graph_add_node(&g, RLX_OP_CONV, &p, in, c->res ? 4 : 3, 1, c->what, NULL);
  double worst = INFINITY;
  CHECK(node >= 0);
  if (node < 0) goto done;
  const rlx_node *n = &g.nodes[node];
  rlx_tensor_view vin[4] = {{0}}, ref = rlx_value_view(&g.values[n->out[0]]), fast = ref;
  for (int k = 0; k < 4; k++)
    if (in[k] >= 0) vin[k] = rlx_value_view(&g.values[in[k]]);
  vin[0].data = x, vin[1].data = (void *)g.values[in[1]].data;
  if (c->bias) vin[2].data = (void *)g.values[in[2]].data;
  if (c->res) vin[3].data = r;
  ref.data = buf(ny), fast.data = buf(ny);
  const rlx_op_vtable *vt = rlx_op_table[RLX_OP_CONV].vt;
  size_t rs_bytes = vt->scratch ? vt->scratch(&g, n) : 0;
  void *rscr = aligned_alloc(64, (rs_bytes + 64) & ~(size_t)63);
  CHECK_OK(vt->ref(n, vin, &ref, rscr));
  if (c->force) setenv("RLX_WINOGRAD", c->force, 1);
  rlx_kernel k = {.name = "reference", .run = rlx_reference_kernel};
  CHECK_OK(rlx_cpu_select(&g, NULL, node, threads, &k));
  unsetenv("RLX_WINOGRAD");
  if (strcmp(k.name, c->want)) {
    fprintf(stderr, "  %s: kernel %s, expected %s\n", c->what, k.name, c->want);
    CHECK(!strcmp(k.name, c->want));
  }
  CHECK((k.run == rlx_conv_wg4_run) == !strcmp(c->want, WG4));
  rlx_threadpool *tp;
  CHECK_OK(rlx_threadpool_create(threads, &tp));
  void *fscr = aligned_alloc(64, (k.scratch + 64) & ~(size_t)63);
  for (int64_t i = 0; i < ny; i++) ((float *)fast.data)[i] = -12345.0f; /* every output must be written */
  rlx_exec ex = {.tp = tp, .scratch = fscr, .packed = k.packed};
  CHECK_OK(k.run(n, vin, &fast, &ex));
  worst = 0;
  const float *fy = fast.data, *ry = ref.data;
  for (int64_t bi = 0; bi < c->N; bi++)
    for (int64_t o = 0; o < c->O; o++)
      for (int64_t oy = 0; oy < OH; oy++)
        for (int64_t ox = 0; ox < OW; ox++) {
          int64_t i = ((bi * c->O + o) * OH + oy) * OW + ox;
          double scale = (c->bias ? fabs(b[o]) : 0) + (c->res ? fabs(r[i]) : 0);
          for (int64_t ch = 0; ch < c->C; ch++)
            for (int64_t ki = 0; ki < 3; ki++)
              for (int64_t kj = 0; kj < 3; kj++) {
                int64_t iy = oy + ki - c->pad, ix = ox + kj - c->pad;
                if (iy < 0 || iy >= c->H || ix < 0 || ix >= c->W) continue;
                double t = fabs((double)w[((o * c->C + ch) * 3 + ki) * 3 + kj] * x[((bi * c->C + ch) * c->H + iy) * c->W + ix]);
                if (isfinite(t)) scale += t;
              }
          double d;
          if (isnan(ry[i]) || isinf(ry[i])) d = (isnan(ry[i]) ? isnan(fy[i]) : fy[i] == ry[i]) ? 0 : INFINITY;
          else d = isfinite(fy[i]) ? fabs((double)fy[i] - ry[i]) / (scale > 0 ? scale : 1) : INFINITY;
          if (d > worst) worst = d;
        }
  free(fscr);
  rlx_threadpool_destroy(tp);
  rlx_aligned_free(k.packed);
  free(rscr), free(ref.data), free(fast.data);
done:
  rlx_graph_free(&g);
  free(x), free(w), free(b), free(r);
  return worst;
}

static void each_threads(const conv_case *c, double tol) {
  for (int t = 1; t <= 3; t++) {
    double e = run_case(c, t);
    if (!(e <= tol)) fprintf(stderr, "  %s (%d threads): worst error / scale %g (tol %g)\n", c->what, t, e, tol);
    CHECK(e <= tol);
  }
}

/* Edge sizes, F(4x4) forced. */
TEST(wg4_edges) {
  const conv_case cases[] = {
      {"1x1 image", 1, 3, 1, 1, 4, 1, true, false, 0, 0, false, "4", WG4},
      {"3x3 image, pad 0 (one output)", 1, 4, 3, 3, 2, 0, false, false, 0, 0, false, "4", WG4},
      {"7x9 odd", 1, 5, 7, 9, 7, 1, true, false, 0, 0, false, "4", WG4},
      {"13x13, batch 2, bias+residual+relu", 2, 17, 13, 13, 20, 1, true, true, 1, 0, false, "4", WG4},
      {"1 channel, pad 0", 1, 1, 10, 10, 1, 0, false, false, 0, 0, false, "4", WG4},
      {"pad 2 + relu6", 1, 16, 12, 12, 16, 2, true, false, 2, 0, false, "4", WG4},
      {"33 -> 35 channels, 20x18, batch 2, residual", 2, 33, 20, 18, 35, 1, false, true, 0, 0, false, "4", WG4},
      {"2x40 image, pad 1", 1, 6, 2, 40, 5, 1, true, false, 1, 0, false, "4", WG4},
      {"rows of tiles wider than a block: 9x70", 1, 3, 9, 70, 4, 1, true, false, 0, 0, false, "4", WG4},
  };
  int layouts = 0; /* the cases cover both ways the GEMMs see the tiles: with the junk tiles and compact */
  for (size_t i = 0; i < RLX_COUNTOF(cases); i++) {
    each_threads(&cases[i], TOL4);
    conv_geo g = {.N = cases[i].N, .C = cases[i].C, .H = cases[i].H, .W = cases[i].W, .O = cases[i].O, .G = 1, .kh = 3,
                  .kw = 3, .OH = cases[i].H + 2 * cases[i].pad - 2, .OW = cases[i].W + 2 * cases[i].pad - 2, .sh = 1,
                  .sw = 1, .ph = cases[i].pad, .pw = cases[i].pad, .dh = 1, .dw = 1};
    wg4_geo w;
    CHECK(rlx_conv_wg4_geo(&g, &w));
    layouts |= w.compact ? 1 : 2;
  }
  CHECK(layouts == 3);
}

/* NaN and Inf in the input land where the reference puts them (the tile rows they reach are computed
 * directly), with either tile size. */
TEST(wg4_nonfinite) {
  const conv_case cases[] = {
      {"NaN/Inf, 17x15", 1, 8, 17, 15, 6, 1, true, false, 0, 97, false, "4", WG4},
      {"NaN/Inf, batch 2, residual+relu", 2, 5, 12, 9, 4, 2, true, true, 1, 211, false, "4", WG4},
      {"NaN/Inf, 1x1 image", 1, 4, 1, 1, 3, 1, true, false, 0, 2, false, "4", WG4},
      {"NaN/Inf, relu without residual", 1, 6, 14, 11, 5, 1, true, false, 1, 53, false, "4", WG4},
  };
  for (size_t i = 0; i < RLX_COUNTOF(cases); i++) each_threads(&cases[i], TOL4);
  const conv_case cases2[] = {
      {"F(2x2) NaN/Inf, 17x15", 1, 8, 17, 15, 6, 1, true, false, 0, 97, false, "2", WG2},
      {"F(2x2) NaN/Inf, batch 2, residual+relu", 2, 5, 12, 9, 4, 2, true, true, 1, 211, false, "2", WG2},
  };
  for (size_t i = 0; i < RLX_COUNTOF(cases2); i++) each_threads(&cases2[i], TOL2);
  /* an Inf weight: neither Winograd (its transform would spread it over whole tiles) */
  conv_case inf_w = {"Inf weight", 1, 8, 16, 16, 8, 1, true, false, 0, 0, true, "4", "f32_conv_implicit_sgemm"};
  each_threads(&inf_w, TOL4);
}

/* resnet's layer sizes (fewer output channels: the error depends on the sum over C and the taps, not on O):
 * the rounding bound, and the error printed for docs/perf.md. */
TEST(resnet_layer_sizes) {
  const int64_t sizes[][2] = {{64, 56}, {128, 28}, {256, 14}, {512, 7}};
  for (size_t s = 0; s < RLX_COUNTOF(sizes); s++) {
    int64_t C = sizes[s][0], H = sizes[s][1];
    conv_case c4 = {"resnet layer, F(4x4)", 1, C, H, H, 12, 1, true, true, 1, 0, false, "4", WG4};
    conv_case c2 = {"resnet layer, F(2x2)", 1, C, H, H, 12, 1, true, true, 1, 0, false, "2", WG2};
    double e4 = run_case(&c4, 2), e2 = run_case(&c2, 2);
    printf("  %lldx%lldx%lld: worst error / scale F(4x4) %.3g, F(2x2) %.3g\n", (long long)C, (long long)H,
           (long long)H, e4, e2);
    CHECK(e4 <= TOL4);
    CHECK(e2 <= TOL2);
  }
}

/* The kernel rlx_cpu_select picks for a 3x3 stride-1 conv C -> O at HxH followed by a chain of `after` 1x1
 * convs (only the choice, no run). */
static const char *pick(int64_t C, int64_t H, int64_t O, int after, int threads, const char *tuning) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape xs = {.rank = 4, .dims = {1, C, H, H}}, ws = {.rank = 4, .dims = {O, C, 3, 3}}, w1s = {.rank = 4, .dims = {O, O, 1, 1}};
  float *w = buf(O * C * 9), *w1 = buf(O * O);
  for (int64_t k = 0; k < O * C * 9; k++) w[k] = urand();
  for (int64_t k = 0; k < O * O; k++) w1[k] = urand();
  int32_t in[3] = {rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), rlx_graph_add_const(&g, RLX_DTYPE_F32, &ws, w), -1};
  rlx_params p = {.conv = {.nd = 2, .stride = {1, 1}, .pad = {1, 1}, .dilation = {1, 1}, .groups = 1}};
  int32_t node = rlx_graph_add_node(&g, RLX_OP_CONV, &p, in, 3, 1, "conv", NULL), last = node;
  CHECK(node >= 0);
  rlx_params p1 = {.conv = {.nd = 2, .stride = {1, 1}, .pad = {0, 0}, .dilation = {1, 1}, .groups = 1}};
  for (int i = 0; i < after && last >= 0; i++) {
    int32_t in1[3] = {g.nodes[last].out[0], rlx_graph_add_const(&g, RLX_DTYPE_F32, &w1s, w1), -1};
    last = rlx_graph_add_node(&g, RLX_OP_CONV, &p1, in1, 3, 1, "conv1x1", NULL);
    CHECK(last >= 0);
  }
  setenv("RLX_CPU_TUNING", tuning, 1);
  static char name[64];
  rlx_kernel k = {.name = "reference", .run = rlx_reference_kernel};
  CHECK_OK(rlx_cpu_select(&g, NULL, node, threads, &k));
  unsetenv("RLX_CPU_TUNING");
  snprintf(name, sizeof name, "%s", k.name);
  rlx_aligned_free(k.packed);
  rlx_graph_free(&g);
  free(w), free(w1);
  return name;
}

/* The chooser (cpu/conv.c, conv_pick) with each host's tuning (cpu/tuning.c). On resnet's 3x3 stride-1
 * layers, the way bench_conv measures fastest on both hosts (docs/perf.md, "Convolutions from a padded
 * plane", "Host tuning"): F(4x4) at 56x56, 28x28 and 14x14, F(2x2) at 7x7. On narrow layers (fewer than 64
 * input channels): with the Xeon's rates, the sgemm from the padded plane with AVX-512 (0.83 ms against
 * F(2x2)'s 1.1 at one thread; not checked without AVX-512, whose costs were not measured); with the AMD
 * host's, F(4x4) (25-45% faster there) — but only where at most 32 convs or matmuls follow the layer
 * (F(4x4)'s rounding through a deep network: conv.c, WG4_NARROW_AFTER), so not with 33 after it. */
TEST(chooser_picks) {
  const char *narrow = rlx_conv_planes_avx512() ? "f32_conv_implicit_sgemm" : NULL;
  static const char *tunings[] = {"xeon", "amd-avx512"};
  struct { int64_t C, H, O; int after; const char *want[2]; } layers[] = {
      {64, 56, 64, 0, {WG4, WG4}},    {128, 28, 128, 0, {WG4, WG4}}, {256, 14, 256, 0, {WG4, WG4}},
      {512, 7, 512, 0, {WG2, WG2}},   {64, 56, 64, 40, {WG4, WG4}},  /* 64 channels: F(4x4) however deep */
      {32, 77, 32, 0, {narrow, WG4}}, {16, 55, 64, 0, {NULL, WG4}},  {32, 27, 128, 32, {NULL, WG4}},
      {32, 27, 128, 33, {NULL, narrow}}, {32, 77, 32, 33, {narrow, narrow}},
  };
  for (size_t i = 0; i < RLX_COUNTOF(layers); i++)
    for (int t = 0; t < 2; t++)
      for (int threads = 1; threads <= 2 && layers[i].want[t]; threads++) {
        const char *got = pick(layers[i].C, layers[i].H, layers[i].O, layers[i].after, threads, tunings[t]);
        if (strcmp(got, layers[i].want[t]))
          fprintf(stderr, "  %s: %lld -> %lld at %lldx%lld, %d convs after, %d threads: %s, expected %s\n", tunings[t],
                  (long long)layers[i].C, (long long)layers[i].O, (long long)layers[i].H, (long long)layers[i].H,
                  layers[i].after, threads, got, layers[i].want[t]);
        CHECK(!strcmp(got, layers[i].want[t]));
      }
}

/* RLX_CPU_TUNING names a row of cpu/tuning.c; an unknown or empty name leaves the host's own. */
TEST(tuning_named) {
  const rlx_cpu_tuning *host = rlx_cpu_tuning_get();
  CHECK(host && host->name);
  setenv("RLX_CPU_TUNING", "amd-avx512", 1);
  CHECK(!strcmp(rlx_cpu_tuning_get()->name, "amd-avx512"));
  CHECK(rlx_cpu_tuning_get()->wg4_ns < 1.0);
  setenv("RLX_CPU_TUNING", "xeon", 1);
  CHECK(!strcmp(rlx_cpu_tuning_get()->name, "xeon"));
  CHECK(rlx_cpu_tuning_get()->wg4_ns == 1.5);
  setenv("RLX_CPU_TUNING", "no-such-host", 1);
  CHECK(rlx_cpu_tuning_get() == host);
  setenv("RLX_CPU_TUNING", "", 1);
  CHECK(rlx_cpu_tuning_get() == host);
  unsetenv("RLX_CPU_TUNING");
}

TEST_MAIN(wg4_edges, wg4_nonfinite, resnet_layer_sizes, chooser_picks, tuning_named)
