/*
 * test_conv_dw.c — the channels-last depthwise conv's fast kernel
 * (cpu/conv_nhwc.c; on AVX-512 its rows are conv_dw_avx512.c's register
 * blocks) against the reference conv kernel. Geometries: kernels 3, 5, 7
 * wide (the register-blocked ones) and others (the generic loop), square
 * and not; strides 1 and 2, unequal ones; padding 0, half the kernel, more
 * than the image (rows and columns all padding); images 1 to 30 pixels
 * wide (blocks of 8, 4, 2 and 1 pixels, rows with no interior pixel);
 * channel counts off the 16-wide vectors (1, 5, 17, 72) and several
 * vectors; vertical dilation (the rows) and horizontal (the generic loop);
 * batch 2; bias or none; a residual; activations in registers (ReLU,
 * ReLU6, hardswish, SiLU, sigmoid) and one after the row (GELU); NaN and
 * infinities in the image; 1, 2 and 3 threads. (Not in the weights: the
 * fast kernels skip the taps over padding, the reference multiplies the
 * padding's zeros, so an infinite weight there is NaN in one and not the
 * other. docs/design.md, "Layout".) Every output must be
 * written, and the node must get the kernel the selector names for its
 * geometry on this CPU.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu/conv_dw.h"
#include "cpu/select.h"
#include "ops/ops_util.h"
#include "runtime/runtime.h"
#include "conv_check.h"
#include "test.h"

static unsigned rng = 11;

typedef struct dw_case {
  const char *what;
  int64_t N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw;
  bool bias, res;
  int act;      /* an rlx_unary_kind, or NO_ACT */
  int specials;       /* NaN / Inf / -Inf every specials-th image element */
} dw_case;

#define NO_ACT (-1)

static int32_t build(rlx_graph *g, const dw_case *c, const float *w, const float *b, int64_t OH, int64_t OW) {
  rlx_shape xs = {.rank = 4, .dims = {c->N, c->H, c->W, c->C}}, ws = {.rank = 4, .dims = {c->C, 1, c->kh, c->kw}};
  rlx_shape rs = {.rank = 4, .dims = {c->N, OH, OW, c->C}}, bs = {.rank = 1, .dims = {c->C}};
  int32_t in[4] = {rlx_graph_add_input(g, "x", RLX_DTYPE_F32, &xs), rlx_graph_add_const(g, RLX_DTYPE_F32, &ws, w),
                   c->bias ? rlx_graph_add_const(g, RLX_DTYPE_F32, &bs, b) : -1,
                   c->res ? rlx_graph_add_input(g, "res", RLX_DTYPE_F32, &rs) : -1};
  rlx_params p = {.conv = {.nd = 2, .groups = c->C, .channels_last = true,
                           .stride = {c->sh, c->sw}, .pad = {c->ph, c->pw}, .dilation = {c->dh, c->dw}}};
  if (c->act == RLX_UNARY_HARDTANH) p.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = RLX_UNARY_HARDTANH, .a = 0, .b = 6}};
  else if (c->act != NO_ACT) p.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = (rlx_unary_kind)c->act}};
  return rlx_graph_add_node(g, RLX_OP_CONV, &p, in, c->res ? 4 : 3, 1, c->what, NULL);
}

/* The worst |fast - ref| / max(1, |ref|) of case c; +Inf where a NaN or an Inf differs, an output was not
 * written, or the node does not get the expected kernel. */
static double run_case(const dw_case *c, int threads) {
  int64_t OH = (c->H + 2 * c->ph - c->dh * (c->kh - 1) - 1) / c->sh + 1;
  int64_t OW = (c->W + 2 * c->pw - c->dw * (c->kw - 1) - 1) / c->sw + 1;
  int64_t nx = c->N * c->H * c->W * c->C, nw = c->C * c->kh * c->kw, ny = c->N * OH * OW * c->C;
  float *x, *w, *b, *r;
  conv_operands(&rng, nx, nw, c->C, ny, c->specials, &x, &w, &b, &r);
  double worst = INFINITY;
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t node = build(&g, c, w, b, OH, OW);
  CHECK(node >= 0);
  const char *want = rlx_dw_rows_take(c->kw, c->sw, c->dw) ? "f32_conv_nhwc_depthwise_rows" : "f32_conv_nhwc_depthwise";
  if (node >= 0) worst = conv_check(&g, node, x, r, ny, threads, want, c->what);
  rlx_graph_free(&g);
  free(x), free(w), free(b), free(r);
  return worst;
}

/* Sums of up to 49 products of [-1, 1) values and a bias, by FMA in another order than the reference's:
 * rounding of order sqrt(taps) * eps * |terms|. */
#define TOL 2e-5

TEST(depthwise_against_reference) {
  const dw_case cases[] = {
      /* what                              N   C   H   W kh kw sh sw ph pw dh dw bias  res    act */
      {"3x3 s1, 72 channels",              1, 72, 12, 19, 3, 3, 1, 1, 1, 1, 1, 1, true, false, RLX_UNARY_RELU, 0},
      {"3x3 s2, 64 channels",              1, 64, 13, 20, 3, 3, 2, 2, 1, 1, 1, 1, true, false, RLX_UNARY_RELU, 0},
      {"5x5 s1, 120 channels, hardswish",  1, 120, 9, 11, 5, 5, 1, 1, 2, 2, 1, 1, true, false, RLX_UNARY_HARDSWISH, 0},
      {"5x5 s2, 17 channels",              1, 17, 11, 14, 5, 5, 2, 2, 2, 2, 1, 1, true, false, NO_ACT, 0},
      {"7x7 s1, 48 channels (ConvNeXt)",   1, 48, 10, 23, 7, 7, 1, 1, 3, 3, 1, 1, true, false, NO_ACT, 0},
      {"7x7 s2, 5 channels",               2, 5, 15, 17, 7, 7, 2, 2, 3, 3, 1, 1, true, true, RLX_UNARY_SILU, 0},
      {"5x5 on a 7x7 image, 960 channels", 1, 960, 7, 7, 5, 5, 1, 1, 2, 2, 1, 1, true, false, RLX_UNARY_HARDSWISH, 0},
      {"two channels, 30 wide",            1, 2, 6, 30, 3, 3, 1, 1, 1, 1, 1, 1, false, false, NO_ACT, 0},
      {"no padding",                       1, 16, 8, 15, 3, 3, 1, 1, 0, 0, 1, 1, true, true, RLX_UNARY_HARDTANH, 0},
      {"padding past the image",           1, 16, 2, 3, 5, 5, 1, 1, 4, 4, 1, 1, true, false, NO_ACT, 0},
      {"one pixel",                        2, 33, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, true, true, RLX_UNARY_SIGMOID, 0},
      {"5x3 kernel",                       1, 24, 9, 10, 5, 3, 1, 1, 2, 1, 1, 1, true, false, RLX_UNARY_RELU, 0},
      {"3x7 kernel, stride 1x2",           1, 24, 6, 21, 3, 7, 1, 2, 1, 3, 1, 1, true, false, NO_ACT, 0},
      {"stride 2x1",                       1, 20, 11, 9, 3, 3, 2, 1, 1, 1, 1, 1, true, false, NO_ACT, 0},
      {"vertical dilation 2",              1, 18, 12, 13, 3, 3, 1, 1, 2, 1, 2, 1, true, false, NO_ACT, 0},
      {"horizontal dilation 2 (generic)",  1, 18, 9, 13, 3, 3, 1, 1, 1, 2, 1, 2, true, false, NO_ACT, 0},
      {"4x4 kernel (generic)",             1, 16, 9, 9, 4, 4, 1, 1, 1, 1, 1, 1, true, false, NO_ACT, 0},
      {"stride 3 (generic)",               1, 16, 13, 13, 3, 3, 3, 3, 1, 1, 1, 1, true, false, NO_ACT, 0},
      {"GELU after the row",               1, 40, 7, 12, 3, 3, 1, 1, 1, 1, 1, 1, true, true, RLX_UNARY_GELU, 0},
      {"NaN and Inf, 3x3",                 2, 40, 9, 18, 3, 3, 1, 1, 1, 1, 1, 1, true, true, RLX_UNARY_RELU, 7},
      {"NaN and Inf, 5x5 s2",              1, 21, 10, 12, 5, 5, 2, 2, 2, 2, 1, 1, true, false, RLX_UNARY_HARDSWISH, 5},
      {"NaN and Inf, 7x7, SiLU",           1, 16, 8, 9, 7, 7, 1, 1, 3, 3, 1, 1, false, false, RLX_UNARY_SILU, 6},
  };
  for (int threads = 1; threads <= 3; threads++)
    for (size_t i = 0; i < RLX_COUNTOF(cases); i++) {
      double d = run_case(&cases[i], threads);
      if (!(d <= TOL)) fprintf(stderr, "  %s, %d thread(s): worst %g\n", cases[i].what, threads, d);
      CHECK(d <= TOL);
    }
}

TEST_MAIN(depthwise_against_reference)
