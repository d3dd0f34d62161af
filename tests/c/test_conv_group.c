/*
 * test_conv_group.c — the channels-last grouped conv's fast kernel
 * (cpu/conv_group.c; on AVX-512 its rows are conv_group_avx512.c's
 * register blocks) against the reference conv kernel. Groups that fill
 * whole vectors (16 and 32 channels: one broadcast a sum, two vectors at
 * once), groups of 2, 4 and 8 whose inputs fit a vector (the permute
 * path; a depthwise conv with two outputs a channel is one), and groups
 * that straddle vectors (24 and 40 channels: vectors across two groups and
 * pairs of 24-wide groups at once, pairs cut by the rows' channel ranges;
 * 20, 12, 6, 3 channels; 4 outputs on 8 inputs);
 * output channel counts off the 16-wide vectors; kernels 1x1, 3x3, 5x5 and
 * 3x1; strides 1 and 2, padding 0 to 2, dilation 2; images 1 to 30 pixels
 * wide (blocks of 8, of 4 and single pixels, the last block overlapping
 * the one before, rows with no interior pixel); batch 2; bias or none; a
 * residual; ReLU, hardswish and SiLU; NaN and infinities in the image; 1,
 * 2 and 3 threads. Every output must be written, and the node must get the
 * kernel the selector names on this CPU. ctest runs it twice: as is, and
 * with RLX_ISA=avx2 (the portable rows on an AVX-512 CPU). On AVX-512, each
 * kind of row (one, two and three vectors a block, straddling, permuted,
 * vectors from each group's first channel; whole rows and channel ranges)
 * must fetch all of the next row's input it is given, by its last block.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/conv_group.h"
#include "cpu/gemm.h"
#include "cpu/select.h"
#include "ops/ops_util.h"
#include "runtime/runtime.h"
#include "conv_check.h"
#include "test.h"

static unsigned rng = 17;

typedef struct gc_case {
  const char *what;
  int64_t N, C, O, G, H, W, kh, kw, sh, sw, ph, pw, dh, dw;
  bool bias, res;
  int act;      /* an rlx_unary_kind, or NO_ACT */
  int specials; /* NaN / Inf / -Inf every specials-th image element */
} gc_case;

#define NO_ACT (-1)

static int32_t build(rlx_graph *g, const gc_case *c, const float *w, const float *b, int64_t OH, int64_t OW) {
  rlx_shape xs = {.rank = 4, .dims = {c->N, c->H, c->W, c->C}}, ws = {.rank = 4, .dims = {c->O, c->C / c->G, c->kh, c->kw}};
  rlx_shape rs = {.rank = 4, .dims = {c->N, OH, OW, c->O}}, bs = {.rank = 1, .dims = {c->O}};
  int32_t in[4] = {rlx_graph_add_input(g, "x", RLX_DTYPE_F32, &xs), rlx_graph_add_const(g, RLX_DTYPE_F32, &ws, w),
                   c->bias ? rlx_graph_add_const(g, RLX_DTYPE_F32, &bs, b) : -1,
                   c->res ? rlx_graph_add_input(g, "res", RLX_DTYPE_F32, &rs) : -1};
  rlx_params p = {.conv = {.nd = 2, .groups = c->G, .channels_last = true,
                           .stride = {c->sh, c->sw}, .pad = {c->ph, c->pw}, .dilation = {c->dh, c->dw}}};
  if (c->act != NO_ACT) p.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = (rlx_unary_kind)c->act}};
  return rlx_graph_add_node(g, RLX_OP_CONV, &p, in, c->res ? 4 : 3, 1, c->what, NULL);
}

/* The worst |fast - ref| / max(1, |ref|) of case c; +Inf where a NaN or an Inf differs, an output was not
 * written, or the node does not get the expected kernel. */
static double run_case(const gc_case *c, int threads) {
  int64_t OH = (c->H + 2 * c->ph - c->dh * (c->kh - 1) - 1) / c->sh + 1;
  int64_t OW = (c->W + 2 * c->pw - c->dw * (c->kw - 1) - 1) / c->sw + 1;
  int64_t nx = c->N * c->H * c->W * c->C, nw = c->O * (c->C / c->G) * c->kh * c->kw, ny = c->N * OH * OW * c->O;
  float *x, *w, *b, *r;
  conv_operands(&rng, nx, nw, c->O, ny, c->specials, &x, &w, &b, &r);
  double worst = INFINITY;
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t node = build(&g, c, w, b, OH, OW);
  CHECK(node >= 0);
  const char *want = !strcmp(rlx_sgemm_active()->name, "avx512") ? "f32_conv_nhwc_grouped_avx512" : "f32_conv_nhwc_grouped";
  if (node >= 0) worst = conv_check(&g, node, x, r, ny, threads, want, c->what);
  rlx_graph_free(&g);
  free(x), free(w), free(b), free(r);
  return worst;
}

/* Sums of up to 25 * 32 products of [-1, 1) values and a bias, by FMA in another order than the reference's:
 * rounding of order sqrt(terms) * eps * |terms|. */
#define TOL 5e-5

TEST(grouped_against_reference) {
  const gc_case cases[] = {
      /* what                               N   C    O   G   H   W kh kw sh sw ph pw dh dw bias  res    act */
      {"16-wide groups (regnet_y)",         1, 144, 144, 9, 9, 28, 3, 3, 1, 1, 1, 1, 1, 1, true, false, RLX_UNARY_RELU, 0},
      {"16-wide groups, stride 2",          1, 64, 64, 4, 12, 13, 3, 3, 2, 2, 1, 1, 1, 1, true, false, RLX_UNARY_RELU, 0},
      {"32-wide groups (two vectors)",      1, 128, 128, 4, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, true, true, RLX_UNARY_RELU, 0},
      {"32-wide groups, 48 outputs each",   1, 64, 96, 2, 6, 11, 3, 3, 1, 1, 1, 1, 1, 1, true, false, NO_ACT, 0},
      {"4-wide groups (resnext)",           1, 128, 128, 32, 8, 19, 3, 3, 1, 1, 1, 1, 1, 1, true, false, RLX_UNARY_RELU, 0},
      {"8-wide groups, stride 2",           2, 64, 64, 8, 9, 17, 3, 3, 2, 2, 1, 1, 1, 1, false, false, NO_ACT, 0},
      {"2-wide groups, 40 channels",        1, 40, 40, 20, 5, 9, 3, 3, 1, 1, 1, 1, 1, 1, true, false, NO_ACT, 0},
      {"depthwise, two outputs a channel",  1, 24, 48, 24, 7, 10, 3, 3, 1, 1, 1, 1, 1, 1, true, false, RLX_UNARY_HARDSWISH, 0},
      {"24-wide groups (regnet_x)",         1, 72, 72, 3, 10, 21, 3, 3, 1, 1, 1, 1, 1, 1, true, true, RLX_UNARY_RELU, 0},
      {"24-wide groups, pairs cut by rows", 1, 192, 192, 8, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, true, true, RLX_UNARY_RELU, 0},
      {"24-wide groups, five, stride 2",    2, 120, 120, 5, 9, 11, 3, 3, 2, 2, 1, 1, 1, 1, false, false, NO_ACT, 0},
      {"24-wide groups, three pixels",      1, 96, 96, 4, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, true, false, NO_ACT, 0},
      {"40-wide groups (straddle)",         1, 120, 120, 3, 6, 9, 3, 3, 1, 1, 1, 1, 1, 1, true, false, RLX_UNARY_SILU, 0},
      {"20-wide groups, 5x5",               1, 40, 40, 2, 8, 12, 5, 5, 1, 1, 2, 2, 1, 1, true, false, NO_ACT, 0},
      {"12-wide groups",                    1, 36, 36, 3, 6, 9, 3, 3, 1, 1, 1, 1, 1, 1, true, false, RLX_UNARY_SILU, 0},
      {"4 outputs on 8 inputs a group",     1, 32, 16, 4, 6, 14, 3, 3, 1, 1, 1, 1, 1, 1, true, false, NO_ACT, 0},
      {"6 outputs on 3 inputs a group",     1, 12, 24, 4, 5, 7, 3, 3, 1, 2, 1, 1, 1, 1, false, false, NO_ACT, 0},
      {"1x1 grouped (shufflenet v1)",       1, 48, 96, 3, 5, 13, 1, 1, 1, 1, 0, 0, 1, 1, true, true, RLX_UNARY_RELU, 0},
      {"3x1 kernel, unequal strides",       1, 32, 32, 2, 9, 11, 3, 1, 2, 1, 1, 0, 1, 1, true, false, NO_ACT, 0},
      {"dilation 2",                        1, 32, 32, 2, 11, 12, 3, 3, 1, 1, 2, 2, 2, 2, true, false, NO_ACT, 0},
      {"no padding",                        1, 32, 32, 2, 8, 15, 3, 3, 1, 1, 0, 0, 1, 1, true, true, RLX_UNARY_RELU, 0},
      {"one pixel",                         2, 32, 32, 2, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, true, true, NO_ACT, 0},
      {"three pixels wide",                 1, 32, 48, 2, 4, 3, 3, 3, 1, 1, 1, 1, 1, 1, true, false, NO_ACT, 0},
      {"five pixels wide",                  1, 64, 64, 16, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, true, false, NO_ACT, 0},
      {"thirty pixels wide",                1, 32, 32, 2, 3, 30, 3, 3, 1, 1, 1, 1, 1, 1, true, false, NO_ACT, 0},
      {"NaN and Inf, 16-wide",              1, 32, 32, 2, 6, 12, 3, 3, 1, 1, 1, 1, 1, 1, true, true, RLX_UNARY_RELU, 7},
      {"NaN and Inf, 4-wide",               1, 32, 32, 8, 6, 12, 3, 3, 1, 1, 1, 1, 1, 1, true, false, NO_ACT, 5},
      {"NaN and Inf, 24-wide",              1, 48, 48, 2, 5, 9, 3, 3, 2, 2, 1, 1, 1, 1, true, false, NO_ACT, 6},
      {"NaN and Inf, 24-wide pairs",        1, 96, 96, 4, 6, 10, 3, 3, 1, 1, 1, 1, 1, 1, true, true, RLX_UNARY_RELU, 5},
  };
  for (int threads = 1; threads <= 3; threads++)
    for (size_t i = 0; i < RLX_COUNTOF(cases); i++) {
      double d = run_case(&cases[i], threads);
      if (!(d <= TOL)) fprintf(stderr, "  %s, %d thread(s): worst %g\n", cases[i].what, threads, d);
      CHECK(d <= TOL);
    }
}

/* Each kind of AVX-512 row, given the next row's input to fetch, asks for every line of it by its end. */
TEST(prefetch_covers_next_rows) {
  if (!rlx_sgemm_isa_avx512(rlx_sgemm_active())) return;
  const struct {
    const char *what;
    int64_t C, O, G, W, sw, ob0, ob1;
  } rows[] = {
      {"16-wide groups", 144, 144, 9, 28, 1, 0, 144},     {"16-wide groups, a range", 144, 144, 9, 56, 2, 32, 96},
      {"32-wide groups", 128, 128, 4, 14, 1, 0, 128},     {"24-wide pairs", 192, 192, 8, 28, 1, 0, 192},
      {"24-wide pairs cut", 192, 192, 8, 28, 1, 48, 144}, {"40-wide straddle", 120, 120, 3, 13, 1, 0, 128},
      {"4-wide permuted", 128, 128, 32, 56, 1, 0, 128},   {"20-wide from each group", 40, 40, 2, 12, 1, 0, 40},
      {"12-wide, three pixels", 36, 36, 3, 3, 1, 0, 36},  {"one pixel", 32, 32, 2, 1, 1, 0, 32},
  };
  for (size_t i = 0; i < RLX_COUNTOF(rows); i++) {
    int64_t C = rows[i].C, O = rows[i].O, Cg = C / rows[i].G, Og = O / rows[i].G, W = rows[i].W;
    int64_t OW = (W + 2 - 3) / rows[i].sw + 1, nw = rlx_gconv_vectors(O, Og, Cg) * 16 * 9 * Cg;
    float *x = calloc((size_t)(5 * W * C), sizeof(float)), *wt = rlx_aligned_alloc(sizeof(float) * (size_t)nw);
    float *y = calloc((size_t)(OW * O), sizeof(float));
    CHECK(x && wt && y);
    if (!x || !wt || !y) break;
    memset(wt, 0, sizeof(float) * (size_t)nw); /* the kernel's weight loads are aligned */
    rlx_gconv_row r = {.x = x, .wt = wt, .y = y, .C = C, .W = W, .O = O, .Op = (O + 15) / 16 * 16, .Cg = Cg,
                       .Og = Og, .OW = OW, .iy0 = 0, .dh = 1, .k0 = 0, .k1 = 3, .kw = 3, .sw = rows[i].sw, .pw = 1,
                       .dw = 1, .ob0 = rows[i].ob0, .ob1 = rows[i].ob1, .taps = 9};
    CHECK(rlx_gconv_row_avx512(&r) == 0);
    /* the next rows (one or two), and a slice not ending on a line */
    for (int64_t n = 1; n <= 3; n++) {
      r.pf = x + 3 * W * C, r.pf_floats = n <= 2 ? n * W * C : W * C - 3;
      int64_t got = rlx_gconv_row_avx512(&r), want = (r.pf_floats * 4 + 63) / 64;
      if (got != want) fprintf(stderr, "  %s: %lld of %lld lines fetched\n", rows[i].what, (long long)got, (long long)want);
      CHECK(got == want);
    }
    free(x), free(y);
    rlx_aligned_free(wt);
  }
}

TEST_MAIN(grouped_against_reference, prefetch_covers_next_rows)
