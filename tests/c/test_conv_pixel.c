/*
 * test_conv_pixel.c — the pixel-major sgemm convolution (src/cpu/conv_gemm.c:
 * a row per output pixel, a column per output channel, written into the
 * NCHW output transposed) against the reference conv kernel, with the
 * kernel forced (RLX_CONV_PIX=1) so every geometry reaches it: 1x1 and
 * strided, grouped, dilated and padded convs, 1-D, one output channel,
 * channel counts off the 16/32-wide panels, images above one row block and
 * K above one K block, 1x1 convs on images of at most 4 pixels (the skinny
 * kernel), every epilogue (bias, residual, ReLU, ReLU6), NaN
 * and Inf inputs, batch 2, on 1, 2 and 3 threads; every output must be
 * written. Then which way the chooser takes on resnet50's layers, and the
 * AVX-512 block transpose its epilogue uses against the plain loop.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu/conv.h"
#include "cpu/gemm.h"
#include "cpu/select.h"
#include "ops/ops_util.h"
#include "runtime/runtime.h"
#include "rand_buf.h"
#include "test.h"

#define PIX "f32_conv_pixel_sgemm"

static unsigned rng = 77;
static float urand(void) { return lcg_unit(&rng); }

typedef struct pix_case {
  const char *what;
  int nd;                       /* 1 or 2 */
  int64_t N, C, H, W, O, G, k;  /* k x k kernel (1-D: H = 1, a k-wide kernel) */
  int64_t stride, pad, dil;
  bool bias, res;
  int act;      /* 0 none, 1 relu, 2 relu6 */
  int specials; /* NaN / Inf / -Inf planted in the input every specials-th element */
} pix_case;

/* Builds the conv of c; its node id, or -1. x, w, b and r are filled here. */
static int32_t build(rlx_graph *g, const pix_case *c, const float *w, const float *b, int64_t OH, int64_t OW) {
  rlx_shape xs, ws, rs, bs = {.rank = 1, .dims = {c->O}};
  if (c->nd == 2) {
    xs = (rlx_shape){.rank = 4, .dims = {c->N, c->C, c->H, c->W}};
    ws = (rlx_shape){.rank = 4, .dims = {c->O, c->C / c->G, c->k, c->k}};
    rs = (rlx_shape){.rank = 4, .dims = {c->N, c->O, OH, OW}};
  } else {
    xs = (rlx_shape){.rank = 3, .dims = {c->N, c->C, c->W}};
    ws = (rlx_shape){.rank = 3, .dims = {c->O, c->C / c->G, c->k}};
    rs = (rlx_shape){.rank = 3, .dims = {c->N, c->O, OW}};
  }
  int32_t in[4] = {rlx_graph_add_input(g, "x", RLX_DTYPE_F32, &xs), rlx_graph_add_const(g, RLX_DTYPE_F32, &ws, w),
                   c->bias ? rlx_graph_add_const(g, RLX_DTYPE_F32, &bs, b) : -1,
                   c->res ? rlx_graph_add_input(g, "res", RLX_DTYPE_F32, &rs) : -1};
  rlx_params p = {.conv = {.nd = c->nd, .groups = c->G}};
  for (int a = 0; a < c->nd; a++) p.conv.stride[a] = c->stride, p.conv.pad[a] = c->pad, p.conv.dilation[a] = c->dil;
  if (c->act == 1) p.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = RLX_UNARY_RELU}};
  if (c->act == 2) p.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = RLX_UNARY_HARDTANH, .a = 0, .b = 6}};
  return rlx_graph_add_node(g, RLX_OP_CONV, &p, in, c->res ? 4 : 3, 1, c->what, NULL);
}

/* Runs c with the pixel-major kernel forced; the worst |fast - ref| / max(1, |ref|) (+Inf where a NaN or an
 * Inf differs, or an output was not written). */
static double run_case(const pix_case *c, int threads) {
  int64_t H = c->nd == 2 ? c->H : 1, ext = c->dil * (c->k - 1) + 1;
  int64_t OH = c->nd == 2 ? (H + 2 * c->pad - ext) / c->stride + 1 : 1, OW = (c->W + 2 * c->pad - ext) / c->stride + 1;
  int64_t nx = c->N * c->C * H * c->W, nw = c->O * (c->C / c->G) * c->k * (c->nd == 2 ? c->k : 1),
          ny = c->N * c->O * OH * OW;
  float *x = buf(nx), *w = buf(nw), *b = buf(c->O), *r = buf(ny);
  for (int64_t i = 0; i < nx; i++) x[i] = urand();
  for (int64_t i = 0; i < nw; i++) w[i] = urand();
  for (int64_t i = 0; i < c->O; i++) b[i] = urand();
  for (int64_t i = 0; i < ny; i++) r[i] = urand();
  if (c->specials)
    for (int64_t i = 3, k = 0; i < nx; i += c->specials, k++) x[i] = k % 3 == 0 ? NAN : k % 3 == 1 ? INFINITY : -INFINITY;
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t node = build(&g, c, w, b, OH, OW);
  double worst = INFINITY;
  CHECK(node >= 0);
  if (node < 0) goto done;
  const rlx_node *n = &g.nodes[node];
  rlx_tensor_view vin[4] = {{0}}, ref = rlx_value_view(&g.values[n->out[0]]), fast = ref;
  for (int k = 0; k < n->n_in; k++)
    if (n->in[k] >= 0) vin[k] = rlx_value_view(&g.values[n->in[k]]);
  vin[0].data = x, vin[1].data = (void *)g.values[n->in[1]].data;
  if (c->bias) vin[2].data = (void *)g.values[n->in[2]].data;
  if (c->res) vin[3].data = r;
  ref.data = buf(ny), fast.data = buf(ny);
  const rlx_op_vtable *vt = rlx_op_table[RLX_OP_CONV].vt;
  size_t rs_bytes = vt->scratch ? vt->scratch(&g, n) : 0;
  void *rscr = aligned_alloc(64, (rs_bytes + 64) & ~(size_t)63);
  CHECK_OK(vt->ref(n, vin, &ref, rscr));
  setenv("RLX_CONV_PIX", "1", 1);
  rlx_kernel k = {.name = "reference", .run = rlx_reference_kernel};
  CHECK_OK(rlx_cpu_select(&g, NULL, node, threads, &k));
  unsetenv("RLX_CONV_PIX");
  if (strcmp(k.name, PIX)) fprintf(stderr, "  %s: kernel %s, expected " PIX "\n", c->what, k.name);
  CHECK(!strcmp(k.name, PIX) && k.run == rlx_conv_pix_run);
  if (k.run != rlx_conv_pix_run) goto cleanup;
  rlx_threadpool *tp;
  CHECK_OK(rlx_threadpool_create(threads, &tp));
  void *fscr = aligned_alloc(64, (k.scratch + 64) & ~(size_t)63);
  for (int64_t i = 0; i < ny; i++) ((float *)fast.data)[i] = -12345.0f; /* every output must be written */
  rlx_exec ex = {.tp = tp, .scratch = fscr, .packed = k.packed};
  CHECK_OK(k.run(n, vin, &fast, &ex));
  worst = 0;
  const float *fy = fast.data, *ry = ref.data;
  for (int64_t i = 0; i < ny; i++) {
    double d;
    if (isnan(ry[i]) || isinf(ry[i])) d = (isnan(ry[i]) ? isnan(fy[i]) : fy[i] == ry[i]) ? 0 : INFINITY;
    else d = isfinite(fy[i]) && fy[i] != -12345.0f ? fabs((double)fy[i] - ry[i]) / fmax(1.0, fabs(ry[i])) : INFINITY;
    if (d > worst) worst = d;
  }
  free(fscr);
  rlx_threadpool_destroy(tp);
cleanup:
  rlx_aligned_free(k.packed);
  free(rscr), free(ref.data), free(fast.data);
done:
  rlx_graph_free(&g);
  free(x), free(w), free(b), free(r);
  return worst;
}

/* The products sum K terms of [-1, 1) x [-1, 1) in float, in the order of the sgemm's K blocks, like the
 * reference's: 1e-5 of max(1, |ref|) is over 100 ulp at these sizes. */
#define TOL 1e-5

TEST(forced_edges) {
  const pix_case cases[] = {
      {"1x1 7x7, 70 <- 40 (16-wide panels), bias+relu", 2, 1, 40, 7, 7, 70, 1, 1, 1, 0, 1, true, false, 1, 0},
      {"1x1, one output channel", 2, 1, 3, 5, 5, 1, 1, 1, 1, 0, 1, false, false, 0, 0},
      {"1x1 1x13 image, 33 <- 17, residual+relu6", 2, 1, 17, 1, 13, 33, 1, 1, 1, 0, 1, true, true, 2, 0},
      {"3x3 s2 p1 14x14 -> 7x7, batch 2, bias+residual+relu", 2, 2, 16, 14, 14, 64, 1, 3, 2, 1, 1, true, true, 1, 0},
      {"1x1 s2 (downsample) 9x11 -> 5x6", 2, 1, 8, 9, 11, 32, 1, 1, 2, 0, 1, false, false, 0, 0},
      {"3x3 s1 p1 groups 2 (plain im2col)", 2, 1, 8, 6, 6, 12, 2, 3, 1, 1, 1, true, false, 0, 0},
      {"3x3 dilation 2 pad 2, 10x10", 2, 1, 4, 10, 10, 20, 1, 3, 1, 2, 2, true, false, 1, 0},
      {"5x5 s3 p2, 17x16", 2, 1, 5, 17, 16, 9, 1, 5, 3, 2, 1, true, true, 0, 0},
      {"1x1 40x40 (several row blocks), K 300 (two K blocks), 100 out", 2, 1, 300, 40, 40, 100, 1, 1, 1, 0, 1, true, false, 1, 0},
      {"1-D, k 5 stride 2 pad 1", 1, 2, 6, 1, 50, 24, 1, 5, 2, 1, 1, true, true, 1, 0},
      {"1x1 on a 1x1 image (squeeze-excite: the skinny kernel), 240 <- 64", 2, 1, 64, 1, 1, 240, 1, 1, 1, 0, 1, true, false, 1, 0},
      {"1x1 on a 2x2 image, batch 2, groups 2, residual", 2, 2, 12, 2, 2, 40, 2, 1, 1, 0, 1, true, true, 0, 0},
      {"1x1 on a 1x1 image, K 600 (three K blocks)", 2, 1, 600, 1, 1, 70, 1, 1, 1, 0, 1, false, false, 2, 0},
      {"NaN/Inf, 1x1 7x7", 2, 1, 20, 7, 7, 48, 1, 1, 1, 0, 1, true, false, 0, 37},
      {"NaN/Inf, 1x1 on a 1x1 image", 2, 1, 40, 1, 1, 33, 1, 1, 1, 0, 1, true, false, 0, 7},
      {"NaN/Inf, 3x3 s2, residual+relu", 2, 1, 6, 13, 13, 40, 1, 3, 2, 1, 1, true, true, 1, 53},
  };
  for (size_t i = 0; i < RLX_COUNTOF(cases); i++)
    for (int t = 1; t <= 3; t++) {
      double e = run_case(&cases[i], t);
      if (!(e <= TOL)) fprintf(stderr, "  %s (%d threads): worst relative error %g\n", cases[i].what, t, e);
      CHECK(e <= TOL);
    }
}

/* The kernel rlx_cpu_select picks for a lone conv (only the choice, no run). */
static const char *pick(int64_t C, int64_t H, int64_t O, int64_t k, int64_t s, int threads, rlx_kernel *kern) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape xs = {.rank = 4, .dims = {1, C, H, H}}, ws = {.rank = 4, .dims = {O, C, k, k}};
  float *w = buf(O * C * k * k);
  for (int64_t e = 0; e < O * C * k * k; e++) w[e] = urand();
  int32_t in[3] = {rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), rlx_graph_add_const(&g, RLX_DTYPE_F32, &ws, w), -1};
  rlx_params p = {.conv = {.nd = 2, .stride = {s, s}, .pad = {k / 2, k / 2}, .dilation = {1, 1}, .groups = 1}};
  int32_t node = rlx_graph_add_node(&g, RLX_OP_CONV, &p, in, 3, 1, "conv", NULL);
  CHECK(node >= 0);
  *kern = (rlx_kernel){.name = "reference", .run = rlx_reference_kernel};
  CHECK_OK(rlx_cpu_select(&g, NULL, node, threads, kern));
  rlx_aligned_free(kern->packed);
  rlx_graph_free(&g);
  free(w);
  return kern->name;
}

typedef struct pick_case {
  int64_t C, H, O, k, s;
  int threads;
  const char *force, *want;
} pick_case;

static void check_picks(const char *tuning, const pick_case *layers, size_t n) {
  setenv("RLX_CPU_TUNING", tuning, 1);
  for (size_t i = 0; i < n; i++) {
    const pick_case *l = &layers[i];
    if (l->force) setenv("RLX_CONV_PIX", l->force, 1);
    rlx_kernel kern;
    const char *got = pick(l->C, l->H, l->O, l->k, l->s, l->threads, &kern);
    unsetenv("RLX_CONV_PIX");
    if (strcmp(got, l->want))
      fprintf(stderr, "  %s: %lld <- %lld %lldx%lld k%lld s%lld, %d thread(s): %s, expected %s\n", tuning, (long long)l->O,
              (long long)l->C, (long long)l->H, (long long)l->H, (long long)l->k, (long long)l->s, l->threads, got, l->want);
    CHECK(!strcmp(got, l->want));
  }
  unsetenv("RLX_CPU_TUNING");
}

/* The chooser on resnet50's sgemm layers, with the Xeon host's tuning (cpu/tuning.c): pixel-major for the 7x7
 * and 14x14 layers, channel-major where the image fills the panels (28x28 and up), on one thread for the 1x1s
 * with more than 512 KiB of weights, and where K is small enough that pixel-major's own passes outweigh its
 * padding gain — conv_gemm.c, rlx_conv_pix_pick; RLX_CONV_PIX=0 turns it off. With the AMD EPYC host's,
 * one thread's large 1x1s go pixel-major too (there 0.87-0.94x the channel-major time, docs/perf.md "Host
 * tuning"). */
TEST(chooser_picks) {
  static const pick_case xeon[] = {
      {512, 7, 2048, 1, 1, 2, NULL, PIX},                       /* layer4 conv3 */
      {512, 7, 2048, 1, 1, 1, NULL, "f32_conv_1x1_sgemm"},      /* 4 MiB of weights, one thread */
      {2048, 7, 512, 1, 1, 2, NULL, PIX},                       /* layer4 conv1 */
      {1024, 14, 2048, 1, 2, 2, NULL, PIX},                     /* layer4 downsample */
      {1024, 14, 2048, 1, 2, 1, NULL, "f32_conv_phased_sgemm"}, /* 8 MiB, one thread */
      {512, 14, 512, 3, 2, 1, NULL, PIX},                       /* layer4 block 1 conv2 (a 3x3) */
      {512, 14, 512, 3, 2, 2, NULL, PIX},
      {256, 28, 256, 3, 2, 1, NULL, PIX},                       /* layer3 block 1 conv2 (14x14 out) */
      /* layer3 conv3: at K = 256 pixel-major's own passes outweigh 0.875 of the padding (PIX_K0; two threads:
       * resnet50's six such convs 3.15 -> 2.97 ms summed, minima of interleaved runs) */
      {256, 14, 1024, 1, 1, 2, NULL, "f32_conv_1x1_sgemm"},
      {256, 14, 1024, 1, 1, 1, NULL, "f32_conv_1x1_sgemm"},     /* 1 MiB, one thread */
      {1024, 14, 128, 1, 1, 1, NULL, PIX},                      /* densenet's, 512 KiB */
      {512, 14, 128, 1, 1, 1, NULL, "f32_conv_1x1_sgemm"},      /* densenet's at K = 512: a tie either way */
      {64, 13, 256, 1, 1, 2, NULL, "f32_conv_1x1_sgemm"},       /* squeezenet's expand, K = 64 (PIX_K0) */
      {128, 28, 512, 1, 1, 2, NULL, "f32_conv_1x1_sgemm"},      /* layer2 conv3 (28x28: the image fills the panels) */
      {128, 56, 128, 3, 2, 2, NULL, "f32_conv_phased_sgemm"},   /* layer2 block 1 conv2 (28x28 out) */
      {512, 7, 2048, 1, 1, 2, "0", "f32_conv_1x1_sgemm"},
      {512, 7, 2048, 1, 1, 1, "1", PIX},
      {64, 1, 240, 1, 1, 1, NULL, PIX},                         /* a squeeze-excite 1x1 conv on its 1x1 image */
  };
  static const pick_case amd[] = {
      {512, 7, 2048, 1, 1, 1, NULL, PIX},                       /* 4 MiB of weights, one thread */
      {2048, 7, 512, 1, 1, 1, NULL, PIX},
      {1024, 14, 2048, 1, 2, 1, NULL, PIX},                     /* 8 MiB, one thread */
      {1024, 14, 256, 1, 1, 1, NULL, PIX},
      {256, 14, 1024, 1, 1, 1, NULL, "f32_conv_1x1_sgemm"},     /* the K rule still holds (PIX_K0) */
      {128, 28, 512, 1, 1, 1, NULL, "f32_conv_1x1_sgemm"},      /* 28x28 */
      {512, 7, 2048, 1, 1, 1, "0", "f32_conv_1x1_sgemm"},
  };
  if (strcmp(rlx_sgemm_active()->name, "avx512")) { /* the bars were measured with the AVX-512 kernels */
    printf("  chooser_picks: not an AVX-512 sgemm (%s), skipped\n", rlx_sgemm_active()->name);
    return;
  }
  check_picks("xeon", xeon, RLX_COUNTOF(xeon));
  check_picks("amd-avx512", amd, RLX_COUNTOF(amd));
}

/* rlx_f32_transpose (AVX-512 register tiles where the CPU has them) against the plain loop: block sizes
 * around the 16x16 tile, both modes, strides wider than the block; elements outside the block untouched. */
TEST(transpose_blocks) {
  const int64_t sizes[] = {1, 5, 12, 16, 17, 33};
  for (size_t a = 0; a < RLX_COUNTOF(sizes); a++)
    for (size_t b = 0; b < RLX_COUNTOF(sizes); b++)
      for (int add = 0; add <= 1; add++) {
        int64_t rows = sizes[a], cols = sizes[b], lds = cols + 3, ldd = rows + 5;
        float *src = buf(rows * lds), *dst = buf(cols * ldd), *want = buf(cols * ldd);
        for (int64_t i = 0; i < rows * lds; i++) src[i] = urand();
        for (int64_t i = 0; i < cols * ldd; i++) dst[i] = want[i] = urand();
        for (int64_t j = 0; j < cols; j++)
          for (int64_t r = 0; r < rows; r++) want[j * ldd + r] = (add ? want[j * ldd + r] : 0.0f) + src[r * lds + j];
        rlx_f32_transpose(src, lds, rows, cols, dst, ldd, add);
        int64_t bad = 0;
        for (int64_t i = 0; i < cols * ldd; i++) bad += dst[i] != want[i];
        if (bad) fprintf(stderr, "  transpose %lldx%lld add %d: %lld elements differ\n", (long long)rows, (long long)cols, add, (long long)bad);
        CHECK(bad == 0);
        free(src), free(dst), free(want);
      }
}

TEST_MAIN(forced_edges, chooser_picks, transpose_blocks)
