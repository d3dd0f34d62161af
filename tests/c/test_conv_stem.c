/*
 * test_conv_stem.c — the stem conv (src/cpu/conv_stem.c: NCHW image in,
 * channels-last out, x_nchw) against the reference conv kernel, and that
 * reference against the plain NCHW one permuted (bit for bit: the same
 * sums in the same order). Geometries: 1 to 4 input channels; output
 * channels 1, off the 16-wide vectors, one and two vectors, several pairs;
 * kernels 1x1 to 9x9 (4 x 9 x 9 = 324 taps: more than one offset table);
 * strides 1, 2, 4; padding, dilation; an image narrower than the kernel's
 * reach (no pixel with every tap inside); batch 2; bias, residual, ReLU and
 * hardswish epilogues; NaN and Inf inputs; 1, 2 and 3 threads; every
 * output must be written.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu/select.h"
#include "ops/ops_util.h"
#include "runtime/runtime.h"
#include "rand_buf.h"
#include "test.h"

static unsigned rng = 5;
static float urand(void) { return lcg_unit(&rng); }

typedef struct stem_case {
  const char *what;
  int64_t N, C, H, W, O, k, stride, pad, dil;
  bool bias, res;
  int act;      /* 0 none, 1 relu, 2 hardswish */
  int specials; /* NaN / Inf / -Inf every specials-th input element */
} stem_case;

/* The conv of c on x [N, C, H, W]: x_nchw (channels-last out) or plain NCHW. */
static int32_t build(rlx_graph *g, const stem_case *c, bool x_nchw, const float *w, const float *b, int64_t OH,
                     int64_t OW) {
  rlx_shape xs = {.rank = 4, .dims = {c->N, c->C, c->H, c->W}}, ws = {.rank = 4, .dims = {c->O, c->C, c->k, c->k}};
  rlx_shape rs = x_nchw ? (rlx_shape){.rank = 4, .dims = {c->N, OH, OW, c->O}}
                        : (rlx_shape){.rank = 4, .dims = {c->N, c->O, OH, OW}};
  rlx_shape bs = {.rank = 1, .dims = {c->O}};
  int32_t in[4] = {rlx_graph_add_input(g, "x", RLX_DTYPE_F32, &xs), rlx_graph_add_const(g, RLX_DTYPE_F32, &ws, w),
                   c->bias ? rlx_graph_add_const(g, RLX_DTYPE_F32, &bs, b) : -1,
                   c->res ? rlx_graph_add_input(g, "res", RLX_DTYPE_F32, &rs) : -1};
  rlx_params p = {.conv = {.nd = 2, .groups = 1, .channels_last = x_nchw, .x_nchw = x_nchw}};
  for (int a = 0; a < 2; a++) p.conv.stride[a] = c->stride, p.conv.pad[a] = c->pad, p.conv.dilation[a] = c->dil;
  if (c->act == 1) p.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = RLX_UNARY_RELU}};
  if (c->act == 2) p.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = RLX_UNARY_HARDSWISH}};
  return rlx_graph_add_node(g, RLX_OP_CONV, &p, in, c->res ? 4 : 3, 1, c->what, NULL);
}

/* Runs the reference kernel of g's node on x (and r), into y. */
static void run_ref(rlx_graph *g, int32_t node, const float *x, const float *r, float *y) {
  const rlx_node *n = &g->nodes[node];
  rlx_tensor_view vin[4] = {{0}}, out = rlx_value_view(&g->values[n->out[0]]);
  for (int k = 0; k < n->n_in; k++)
    if (n->in[k] >= 0) vin[k] = rlx_value_view(&g->values[n->in[k]]);
  vin[0].data = (void *)x;
  if (n->n_in > 3 && n->in[3] >= 0) vin[3].data = (void *)r;
  out.data = y;
  const rlx_op_vtable *vt = rlx_op_table[RLX_OP_CONV].vt;
  size_t bytes = vt->scratch ? vt->scratch(g, n) : 0;
  void *scr = aligned_alloc(64, (bytes + 64) & ~(size_t)63);
  CHECK_OK(vt->ref(n, vin, &out, scr));
  free(scr);
}

static bool same(float a, float b) { return isnan(a) ? isnan(b) : a == b; }

/* The worst |stem - ref| / max(1, |ref|) of case c (+Inf where a NaN or an Inf differs, an output was not
 * written, the x_nchw reference is not the NCHW one permuted, or the node does not get the stem kernel). */
static double run_case(const stem_case *c, int threads) {
  int64_t ext = c->dil * (c->k - 1) + 1;
  int64_t OH = (c->H + 2 * c->pad - ext) / c->stride + 1, OW = (c->W + 2 * c->pad - ext) / c->stride + 1;
  int64_t nx = c->N * c->C * c->H * c->W, nw = c->O * c->C * c->k * c->k, ny = c->N * c->O * OH * OW, P = OH * OW;
  float *x = buf(nx), *w = buf(nw), *b = buf(c->O), *r = buf(ny), *rn = buf(ny);
  float *ref = buf(ny), *ref_nchw = buf(ny), *fast = buf(ny);
  for (int64_t i = 0; i < nx; i++) x[i] = urand();
  for (int64_t i = 0; i < nw; i++) w[i] = urand();
  for (int64_t i = 0; i < c->O; i++) b[i] = urand();
  for (int64_t i = 0; i < ny; i++) r[i] = urand();
  if (c->specials)
    for (int64_t i = 2, k = 0; i < nx; i += c->specials, k++) x[i] = k % 3 == 0 ? NAN : k % 3 == 1 ? INFINITY : -INFINITY;
  for (int64_t bi = 0; bi < c->N; bi++) /* the residual in NCHW for the plain conv */
    for (int64_t o = 0; o < c->O; o++)
      for (int64_t p = 0; p < P; p++) rn[(bi * c->O + o) * P + p] = r[(bi * P + p) * c->O + o];
  double worst = INFINITY;
  rlx_graph g, gn;
  rlx_graph_init(&g), rlx_graph_init(&gn);
  int32_t node = build(&g, c, true, w, b, OH, OW), plain = build(&gn, c, false, w, b, OH, OW);
  CHECK(node >= 0 && plain >= 0);
  if (node < 0 || plain < 0) goto done;
  run_ref(&g, node, x, r, ref);
  run_ref(&gn, plain, x, rn, ref_nchw);
  for (int64_t bi = 0; bi < c->N; bi++)
    for (int64_t o = 0; o < c->O; o++)
      for (int64_t p = 0; p < P; p++)
        if (!same(ref_nchw[(bi * c->O + o) * P + p], ref[(bi * P + p) * c->O + o])) goto done;
  rlx_kernel k = {.name = "reference", .run = rlx_reference_kernel};
  CHECK_OK(rlx_cpu_select(&g, NULL, node, threads, &k));
  if (strcmp(k.name, "f32_conv_stem_nhwc")) {
    fprintf(stderr, "  %s: kernel %s, expected f32_conv_stem_nhwc\n", c->what, k.name);
    goto cleanup;
  }
  rlx_threadpool *tp;
  CHECK_OK(rlx_threadpool_create(threads, &tp));
  void *scr = aligned_alloc(64, (k.scratch + 64) & ~(size_t)63);
  const rlx_node *n = &g.nodes[node];
  rlx_tensor_view vin[4] = {{0}}, out = rlx_value_view(&g.values[n->out[0]]);
  for (int i = 0; i < n->n_in; i++)
    if (n->in[i] >= 0) vin[i] = rlx_value_view(&g.values[n->in[i]]);
  vin[0].data = x;
  if (c->res) vin[3].data = r;
  out.data = fast;
  for (int64_t i = 0; i < ny; i++) fast[i] = -12345.0f; /* every output must be written */
  rlx_exec ex = {.tp = tp, .scratch = scr, .packed = k.packed};
  CHECK_OK(k.run(n, vin, &out, &ex));
  worst = 0;
  for (int64_t i = 0; i < ny; i++) {
    double d;
    if (isnan(ref[i]) || isinf(ref[i])) d = same(ref[i], fast[i]) ? 0 : INFINITY;
    else d = isfinite(fast[i]) && fast[i] != -12345.0f ? fabs((double)fast[i] - ref[i]) / fmax(1.0, fabs(ref[i])) : INFINITY;
    if (d > worst) worst = d;
  }
  free(scr);
  rlx_threadpool_destroy(tp);
cleanup:
  rlx_aligned_free(k.packed);
done:
  rlx_graph_free(&g), rlx_graph_free(&gn);
  free(x), free(w), free(b), free(r), free(rn), free(ref), free(ref_nchw), free(fast);
  return worst;
}

/* Sums of up to 324 products of [-1, 1) values in float, in another order than the reference's GEMM:
 * rounding of order sqrt(taps) * eps * |terms|. */
#define TOL 2e-5

TEST(stem_against_reference) {
  const stem_case cases[] = {
      {"mobilenet's stem", 1, 3, 32, 30, 16, 3, 2, 1, 1, true, false, 2, 0},
      {"efficientnet's stem", 1, 3, 24, 24, 32, 3, 2, 1, 1, true, false, 1, 0},
      {"convnext's patchify", 1, 3, 16, 20, 96, 4, 4, 0, 1, true, false, 0, 0},
      {"one output channel", 1, 3, 9, 11, 1, 3, 1, 1, 1, true, false, 0, 0},
      {"17 channels (a vector and a tail)", 2, 3, 11, 13, 17, 3, 2, 1, 1, true, true, 1, 0},
      {"40 channels, grey image", 1, 1, 10, 9, 40, 5, 1, 2, 1, false, false, 0, 0},
      {"RGBA, 7x7 stride 2 pad 3", 1, 4, 20, 18, 24, 7, 2, 3, 1, true, false, 1, 0},
      {"1x1", 1, 3, 6, 7, 20, 1, 1, 0, 1, true, true, 0, 0},
      {"dilation 2", 1, 2, 12, 12, 16, 3, 1, 2, 2, true, false, 0, 0},
      {"324 taps", 1, 4, 12, 14, 33, 9, 1, 4, 1, true, false, 2, 0},
      {"narrower than the kernel", 1, 3, 5, 2, 16, 5, 1, 2, 1, true, false, 0, 0},
      {"wide padding", 1, 3, 4, 4, 16, 3, 1, 3, 1, true, false, 0, 0},
      {"NaN and Inf", 2, 3, 14, 15, 32, 3, 2, 1, 1, true, true, 2, 7},
  };
  for (int threads = 1; threads <= 3; threads++)
    for (size_t i = 0; i < RLX_COUNTOF(cases); i++) {
      double d = run_case(&cases[i], threads);
      if (!(d <= TOL)) fprintf(stderr, "  %s, %d thread(s): worst %g\n", cases[i].what, threads, d);
      CHECK(d <= TOL);
    }
}

TEST_MAIN(stem_against_reference)
