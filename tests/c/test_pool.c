/*
 * test_pool.c — the fast 2-D f32 pooling kernel (cpu/pool.c; with AVX-512
 * its rows' interiors are pool_avx512.c's, and "same" max and average
 * pools over small planes run flat there) against the reference kernel
 * (src/ops/pool.c), to the bit: both take the window in row-major order,
 * the max keeps the first of equal values and its NaN rule, the average is
 * summed and divided in double. Geometries: kernels 1 to 7 and unequal
 * ones, strides 1 (one load), 2 (two loads and a permute; 2x2 and 3x3
 * windows over small planes in one pass) and 3, 4 (a
 * gather), padding 0 to half the kernel, dilation 2 and 3 (max), ceil_mode
 * (windows past the input's end), rows of 1 to 70 columns (no interior,
 * a part of one vector, several and a tail), images with no interior row;
 * max with NaN, infinities, -0 and many equal values (a few values only);
 * average with count_include_pad both ways and divisor_override; 1, 2 and
 * 3 threads. Every output must be written, and the node must get the
 * kernel the selector names for this CPU. The channels-last pool (the
 * layout pass's): its reference against the NCHW one on the transposed
 * input, its fast kernel against its reference. ctest runs it twice: as is, and
 * with RLX_NO_AVX512_MATH=1 (the portable kernels; their max takes the
 * window's rows first, so of a -0 and a 0 it may keep the other one).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/pool.h"
#include "cpu/select.h"
#include "cpu/vmath.h"
#include "ops/ops_util.h"
#include "runtime/runtime.h"
#include "rand_buf.h"
#include "test.h"

static unsigned rng = 5;

typedef struct pool_case {
  bool is_max;
  int64_t N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil, include_pad;
  int64_t divisor;
  int values; /* 0: uniform [-1, 1); else that many distinct values (ties), with NaN, +-Inf and -0 */
} pool_case;

/* The portable max kernel takes the window's rows first, then its columns (pool.c): among equal values
 * it may keep another one than the reference, which matters only for the sign of a zero. */
static bool same_bits(float a, float b, bool zero_sign) {
  if (isnan(a)) return isnan(b);
  return zero_sign ? memcmp(&a, &b, sizeof a) == 0 : a == b;
}

/* 0 if the fast kernel gives the reference's bits everywhere, else 1 (and says where). */
static int run_case(const pool_case *c, int threads) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape xs = {.rank = 4, .dims = {c->N, c->C, c->H, c->W}};
  int32_t in = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs);
  rlx_params p = {.pool = {.kind = c->is_max ? RLX_POOL_MAX : RLX_POOL_AVG, .nd = 2, .kernel = {c->kh, c->kw},
                           .stride = {c->sh, c->sw}, .pad = {c->ph, c->pw}, .dilation = {c->dh, c->dw},
                           .ceil_mode = c->ceil, .count_include_pad = c->include_pad,
                           .divisor_override = c->divisor}};
  int32_t node = rlx_graph_add_node(&g, RLX_OP_POOL, &p, &in, 1, 1, "pool", NULL);
  CHECK(node >= 0);
  if (node < 0) {
    fprintf(stderr, "  infer: %s\n", rlx_last_error());
    rlx_graph_free(&g);
    return 1;
  }
  const rlx_node *n = &g.nodes[node];
  int64_t nx = c->N * c->C * c->H * c->W, ny = rlx_shape_numel(&g.values[n->out[0]].shape);
  float *x = buf(nx), *ref = buf(ny), *fast = buf(ny);
  static const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f};
  for (int64_t i = 0; i < nx; i++) {
    if (!c->values) {
      x[i] = lcg_unit(&rng);
      continue;
    }
    unsigned r = (unsigned)((lcg_unit(&rng) + 1.0f) * 1000.0f);
    x[i] = r % 11 == 0 ? specials[(r / 11) % RLX_COUNTOF(specials)] : (float)(r % (unsigned)c->values) - 1.0f;
  }
  rlx_tensor_view vin = rlx_value_view(&g.values[in]), out = rlx_value_view(&g.values[n->out[0]]);
  vin.data = x, out.data = ref;
  CHECK_OK(rlx_op_table[RLX_OP_POOL].vt->ref(n, &vin, &out, NULL));
  rlx_kernel k = {.name = "reference", .run = rlx_reference_kernel};
  CHECK_OK(rlx_cpu_select(&g, NULL, node, threads, &k));
  bool rows = rlx_cpu_avx512_math() && (c->is_max || c->dw == 1);
  const rlx_shape *ys = &g.values[n->out[0]].shape;
  bool flat = rows && c->sh == 1 && c->sw == 1 && c->dh == 1 && c->dw == 1 && ys->dims[2] == c->H &&
              ys->dims[3] == c->W && c->H * c->W <= RLX_POOL_FLAT_MAX; /* "same" pools over small planes */
  const char *want = flat ? (c->is_max ? "f32_maxpool2d_flat_avx512" : "f32_avgpool2d_flat_avx512")
                     : rows ? (c->is_max ? "f32_maxpool2d_avx512" : "f32_avgpool2d_avx512")
                            : (c->is_max ? "f32_maxpool2d_rows" : "f32_pool2d");
  int bad = 0;
  if (strcmp(k.name, want)) {
    fprintf(stderr, "  kernel %s, expected %s\n", k.name, want);
    bad = 1;
  } else {
    rlx_threadpool *tp;
    CHECK_OK(rlx_threadpool_create(threads, &tp));
    void *scr = aligned_alloc(64, (k.scratch + 64) & ~(size_t)63);
    for (int64_t i = 0; i < ny; i++) fast[i] = -12345.0f; /* every output must be written */
    out.data = fast;
    rlx_exec ex = {.tp = tp, .scratch = scr, .packed = k.packed};
    CHECK_OK(k.run(n, &vin, &out, &ex));
    for (int64_t i = 0; i < ny && bad < 3; i++)
      if (!same_bits(fast[i], ref[i], rows || !c->is_max) || (fast[i] == -12345.0f && ref[i] != -12345.0f)) {
        fprintf(stderr, "  element %lld: %a, reference %a\n", (long long)i, fast[i], ref[i]);
        bad++;
      }
    free(scr);
    rlx_threadpool_destroy(tp);
  }
  rlx_aligned_free(k.packed);
  rlx_graph_free(&g);
  free(x), free(ref), free(fast);
  return bad ? 1 : 0;
}

static void each(const pool_case *c, const char *what) {
  for (int t = 1; t <= 3; t++) {
    int bad = run_case(c, t);
    if (bad)
      fprintf(stderr, "  %s: %s %lldx%lld s%lldx%lld p%lldx%lld d%lldx%lld%s on %lldx%lld, %d thread(s)\n", what,
              c->is_max ? "max" : "avg", (long long)c->kh, (long long)c->kw, (long long)c->sh, (long long)c->sw,
              (long long)c->ph, (long long)c->pw, (long long)c->dh, (long long)c->dw, c->ceil ? " ceil" : "",
              (long long)c->H, (long long)c->W, t);
    CHECK(!bad);
  }
}

TEST(max_against_reference) {
  /* the layers of the zoo's networks, then sweeps */
  const pool_case nets[] = {
      {true, 1, 64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, false, false, 0, 0},  /* resnet's */
      {true, 1, 16, 111, 111, 3, 3, 2, 2, 0, 0, 1, 1, true, false, 0, 0},   /* squeezenet's, ceil */
      {true, 1, 48, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, true, false, 0, 0},     /* googlenet's inception branch */
      {true, 2, 8, 24, 24, 2, 2, 2, 2, 0, 0, 1, 1, false, false, 0, 0},     /* vgg's */
      {true, 1, 4, 13, 13, 5, 5, 1, 1, 2, 2, 1, 1, false, false, 0, 0},     /* SPP */
  };
  for (size_t i = 0; i < RLX_COUNTOF(nets); i++) each(&nets[i], "network layer");
  for (int64_t W = 1; W <= 70; W += (W < 36 ? 1 : 7))
    for (int64_t s = 1; s <= 4; s++)
      for (int64_t k = 1; k <= 5; k += 2) {
        pool_case c = {true, 1, 2, 5, W, k, k, s, s, k / 2, k / 2, 1, 1, s > 1, false, 0, W % 3 == 0 ? 3 : 0};
        each(&c, "sweep");
      }
  const pool_case odd[] = {
      {true, 1, 3, 9, 40, 3, 3, 2, 2, 1, 1, 2, 2, true, false, 0, 4},     /* dilation 2, ties */
      {true, 1, 3, 11, 37, 2, 4, 1, 3, 1, 2, 3, 3, true, false, 0, 0},    /* dilation 3, unequal */
      {true, 1, 2, 7, 33, 7, 7, 1, 1, 3, 3, 1, 1, false, false, 0, 2},    /* 7x7, two values */
      {true, 2, 3, 6, 50, 1, 6, 1, 2, 0, 3, 1, 1, true, false, 0, 5},     /* kernel 1x6 */
      {true, 1, 2, 2, 3, 3, 3, 2, 2, 1, 1, 1, 1, true, false, 0, 3},      /* no interior column */
  };
  for (size_t i = 0; i < RLX_COUNTOF(odd); i++) each(&odd[i], "odd geometry");
  /* stride 2 both ways, 2x2 and 3x3 windows over at most 32 output columns (one pass, the shared row in a
   * register; then 3x3 windows at stride 1, also one pass): ceil's windows past the last row and column, padding, strips of exactly 16 and 32 columns
   * (the third column of lane 15 a scalar load, or past the row), a second strip in part */
  const pool_case s2[] = {
      {true, 1, 6, 27, 27, 3, 3, 2, 2, 0, 0, 1, 1, true, false, 0, 3},  /* squeezenet's 13x13, ties and specials */
      {true, 1, 5, 14, 14, 2, 2, 2, 2, 0, 0, 1, 1, true, false, 0, 4},  /* googlenet's 2x2 */
      {true, 1, 4, 28, 28, 3, 3, 2, 2, 0, 0, 1, 1, true, false, 0, 0},  /* googlenet's 14x14 */
      {true, 2, 3, 33, 33, 3, 3, 2, 2, 0, 0, 1, 1, false, false, 0, 5}, /* 16 columns: lane 15's third a scalar */
      {true, 1, 3, 20, 65, 3, 3, 2, 2, 0, 0, 1, 1, false, false, 0, 3}, /* 32 columns */
      {true, 1, 3, 9, 64, 3, 3, 2, 2, 0, 0, 1, 1, true, false, 0, 3},   /* 32 columns, the last third past the row */
      {true, 1, 3, 10, 35, 3, 3, 2, 2, 1, 1, 1, 1, true, false, 0, 3},  /* padded, a second strip of 2 */
      {true, 1, 3, 7, 9, 2, 2, 2, 2, 1, 1, 1, 1, true, false, 0, 2},    /* 2x2 padded, two values */
      {true, 1, 2, 1, 3, 3, 3, 2, 2, 1, 1, 1, 1, true, false, 0, 3},    /* one row */
      {true, 1, 3, 9, 101, 3, 3, 2, 2, 0, 0, 1, 1, true, false, 0, 3},  /* 51 columns: row by row across strips */
      {true, 1, 3, 7, 80, 2, 2, 2, 2, 1, 1, 1, 1, true, false, 0, 4},   /* 2x2, 41 columns, padded */
      {true, 1, 2, 5, 300, 3, 3, 2, 2, 1, 1, 1, 1, false, false, 0, 3}, /* 150 columns: the two passes */
      /* 3x3 at stride 1 in one pass: planes past the flat run's 1024 elements, or not "same" */
      {true, 1, 3, 36, 40, 3, 3, 1, 1, 1, 1, 1, 1, false, false, 0, 3},  /* 40 columns: a strip of 8 */
      {true, 1, 4, 12, 19, 3, 3, 1, 1, 0, 0, 1, 1, false, false, 0, 4},  /* unpadded: 17 columns */
      {true, 1, 3, 2, 16, 3, 3, 1, 1, 1, 0, 1, 1, false, false, 0, 3},   /* two rows, padded rows only */
      {true, 1, 2, 40, 33, 3, 3, 1, 1, 1, 0, 1, 1, false, false, 0, 0},  /* rows padded, columns not */
      {true, 1, 2, 20, 70, 3, 3, 1, 1, 1, 1, 1, 1, false, false, 0, 3},  /* 70 columns: the two passes */
  };
  for (size_t i = 0; i < RLX_COUNTOF(s2); i++) each(&s2[i], "stride 2 or 3x3 stride 1, one pass");
}

TEST(avg_against_reference) {
  const pool_case nets[] = {
      {false, 1, 16, 56, 56, 2, 2, 2, 2, 0, 0, 1, 1, false, false, 0, 0},  /* densenet's transition */
      {false, 1, 24, 35, 35, 3, 3, 1, 1, 1, 1, 1, 1, false, true, 0, 0},   /* inception's branch */
      {false, 1, 24, 17, 17, 3, 3, 1, 1, 1, 1, 1, 1, false, false, 0, 0},  /* excluding the padding */
      {false, 1, 40, 25, 25, 3, 3, 1, 1, 1, 1, 1, 1, false, true, 0, 0},   /* inception's at 224: flat */
      {false, 1, 300, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, false, true, 0, 0},    /* its last, 5x5: flat */
      {false, 2, 7, 12, 12, 5, 5, 1, 1, 2, 2, 1, 1, false, false, 0, 7},   /* flat, 5x5, ties and specials */
      {false, 1, 9, 3, 7, 3, 5, 1, 1, 1, 2, 1, 1, false, false, 9, 7},     /* flat, divisor_override */
  };
  for (size_t i = 0; i < RLX_COUNTOF(nets); i++) each(&nets[i], "network layer");
  for (int64_t W = 1; W <= 70; W += (W < 36 ? 1 : 7))
    for (int64_t s = 1; s <= 3; s++)
      for (int64_t k = 1; k <= 4; k++) {
        pool_case c = {false, 1, 2, 6, W, k, k, s, s, k / 2, k / 2, 1, 1, W % 2 == 0, W % 4 < 2, W % 5 == 0 ? 3 : 0,
                       W % 7 == 0 ? 6 : 0};
        each(&c, "sweep");
      }
}

/* The channels-last pool (the layout pass's): its reference against the NCHW reference on the transposed
 * input (the same numbers, transposed), then the fast kernel against its reference to the bit, channel
 * counts around the 16-lane vectors and the 64-channel blocks, NaN, infinities, -0 and ties, 1-3 threads. */
static int nhwc_case(const pool_case *c, int64_t C, int threads) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape xs = {.rank = 4, .dims = {c->N, c->H, c->W, C}}, xn = {.rank = 4, .dims = {c->N, C, c->H, c->W}};
  int32_t in = rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), inn = rlx_graph_add_input(&g, "xn", RLX_DTYPE_F32, &xn);
  rlx_params p = {.pool = {.kind = c->is_max ? RLX_POOL_MAX : RLX_POOL_AVG, .nd = 2, .kernel = {c->kh, c->kw},
                           .stride = {c->sh, c->sw}, .pad = {c->ph, c->pw}, .dilation = {c->dh, c->dw},
                           .ceil_mode = c->ceil, .count_include_pad = c->include_pad,
                           .divisor_override = c->divisor}};
  int32_t nn = rlx_graph_add_node(&g, RLX_OP_POOL, &p, &inn, 1, 1, "pool_nchw", NULL);
  p.pool.channels_last = true;
  int32_t node = rlx_graph_add_node(&g, RLX_OP_POOL, &p, &in, 1, 1, "pool", NULL);
  CHECK(node >= 0 && nn >= 0);
  if (node < 0 || nn < 0) {
    rlx_graph_free(&g);
    return 1;
  }
  const rlx_node *n = &g.nodes[node];
  const rlx_shape *ys = &g.values[n->out[0]].shape;
  int64_t OH = ys->dims[1], OW = ys->dims[2], nx = rlx_shape_numel(&xs), ny = rlx_shape_numel(ys);
  float *x = buf(nx), *xt = buf(nx), *ref = buf(ny), *refn = buf(ny), *fast = buf(ny);
  static const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f};
  for (int64_t i = 0; i < nx; i++) {
    unsigned r = (unsigned)((lcg_unit(&rng) + 1.0f) * 1000.0f);
    x[i] = c->values && r % 11 == 0 ? specials[(r / 11) % RLX_COUNTOF(specials)]
           : c->values              ? (float)(r % (unsigned)c->values) - 1.0f
                                    : lcg_unit(&rng);
  }
  for (int64_t b = 0; b < c->N; b++) /* x [N, H, W, C] -> xt [N, C, H, W] */
    for (int64_t e = 0; e < c->H * c->W; e++)
      for (int64_t ch = 0; ch < C; ch++) xt[(b * C + ch) * c->H * c->W + e] = x[(b * c->H * c->W + e) * C + ch];
  rlx_tensor_view vin = rlx_value_view(&g.values[in]), out = rlx_value_view(&g.values[n->out[0]]);
  rlx_tensor_view vn = rlx_value_view(&g.values[inn]), outn = rlx_value_view(&g.values[g.nodes[nn].out[0]]);
  vin.data = x, out.data = ref, vn.data = xt, outn.data = refn;
  CHECK_OK(rlx_op_table[RLX_OP_POOL].vt->ref(n, &vin, &out, NULL));
  CHECK_OK(rlx_op_table[RLX_OP_POOL].vt->ref(&g.nodes[nn], &vn, &outn, NULL));
  int bad = 0;
  for (int64_t b = 0; b < c->N && bad < 3; b++)
    for (int64_t e = 0; e < OH * OW && bad < 3; e++)
      for (int64_t ch = 0; ch < C && bad < 3; ch++)
        if (!same_bits(ref[(b * OH * OW + e) * C + ch], refn[(b * C + ch) * OH * OW + e], true)) {
          fprintf(stderr, "  reference: pixel %lld channel %lld: %a, NCHW %a\n", (long long)e, (long long)ch,
                  ref[(b * OH * OW + e) * C + ch], refn[(b * C + ch) * OH * OW + e]);
          bad++;
        }
  rlx_kernel k = {.name = "reference", .run = rlx_reference_kernel};
  CHECK_OK(rlx_cpu_select(&g, NULL, node, threads, &k));
  const char *want = c->is_max ? "f32_maxpool2d_nhwc" : "f32_avgpool2d_nhwc";
  if (strcmp(k.name, want)) {
    fprintf(stderr, "  kernel %s, expected %s\n", k.name, want);
    bad++;
  } else {
    rlx_threadpool *tp;
    CHECK_OK(rlx_threadpool_create(threads, &tp));
    for (int64_t i = 0; i < ny; i++) fast[i] = -12345.0f;
    out.data = fast;
    rlx_exec ex = {.tp = tp, .packed = k.packed};
    CHECK_OK(k.run(n, &vin, &out, &ex));
    for (int64_t i = 0; i < ny && bad < 3; i++)
      if (!same_bits(fast[i], ref[i], true)) {
        fprintf(stderr, "  element %lld: %a, reference %a\n", (long long)i, fast[i], ref[i]);
        bad++;
      }
    rlx_threadpool_destroy(tp);
  }
  rlx_aligned_free(k.packed);
  rlx_graph_free(&g);
  free(x), free(xt), free(ref), free(refn), free(fast);
  return bad ? 1 : 0;
}

TEST(nhwc_against_reference) {
  const pool_case cases[] = {
      {true, 1, 0, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, false, false, 0, 0}, /* resnext's and shufflenet's */
      {true, 2, 0, 9, 11, 3, 3, 2, 2, 0, 0, 1, 1, true, false, 0, 4},     /* ceil, ties and specials */
      {true, 1, 0, 7, 8, 2, 3, 1, 2, 1, 1, 2, 1, false, false, 0, 3},     /* dilation */
      {false, 1, 0, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1, false, true, 0, 5},   /* inception's, specials */
      {false, 1, 0, 10, 9, 2, 2, 2, 2, 0, 0, 1, 1, true, false, 0, 0},    /* densenet's, ceil */
      {false, 1, 0, 6, 7, 3, 3, 2, 2, 1, 1, 1, 1, false, false, 0, 0},    /* excluding the padding */
      {false, 1, 0, 5, 5, 3, 2, 1, 1, 1, 1, 1, 1, false, true, 7, 0},     /* divisor_override */
  };
  static const int64_t channels[] = {1, 5, 16, 24, 64, 70, 131};
  for (size_t i = 0; i < RLX_COUNTOF(cases); i++)
    for (size_t ci = 0; ci < RLX_COUNTOF(channels); ci++)
      for (int t = 1; t <= 3; t += 2) {
        if (cases[i].H == 112 && channels[ci] > 24) continue;
        int bad = nhwc_case(&cases[i], channels[ci], t);
        if (bad)
          fprintf(stderr, "  channels-last case %zu, %lld channels, %d thread(s)\n", i, (long long)channels[ci], t);
        CHECK(!bad);
      }
}

TEST_MAIN(max_against_reference, avg_against_reference, nhwc_against_reference)
