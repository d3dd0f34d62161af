/*
 * bench_pwconv.c — the channels-last dense convs of mobilenet_v3_large's and
 * efficientnet_b0's high-resolution front (batch 1, random data, bias, the
 * layer's activation and residual in the epilogue): the 3x3 stride-2 stem on
 * the NCHW image and the 1x1 convs at 112x112 and 56x56, where the tensors
 * outgrow L2 and K is small; and regnet_y_800mf's at 14x14 and 7x7, where K
 * and the weights are large. Prints per layer the median and minimum ms over
 * rounds, GFLOP/s of the product and GB/s of its input, residual and output
 * together, and the kernel's name. At one thread the times are the thread's
 * CPU time, else wall time. Numbers, not assertions.
 *
 *   bench_pwconv [threads] [rounds] [layer]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cpu/select.h"
#include "ir/graph.h"
#include "runtime/runtime.h"
#include "runtime/threadpool.h"
#include "bench_util.h"

typedef struct layer {
  int64_t C, H, W, O, k, s;
  rlx_unary_kind act; /* RLX_UNARY_COUNT: none */
  bool res;
} layer;

/* (input channels, H, W, output channels, kernel, stride, activation, residual); k 3: the stem (NCHW input,
 * padding 1); k 1: a pointwise conv */
static const layer layers[] = {
    {3, 224, 224, 16, 3, 2, RLX_UNARY_HARDSWISH, false}, {16, 112, 112, 16, 1, 1, RLX_UNARY_COUNT, true},
    {16, 112, 112, 64, 1, 1, RLX_UNARY_RELU, false},     {64, 56, 56, 24, 1, 1, RLX_UNARY_COUNT, false},
    {24, 56, 56, 72, 1, 1, RLX_UNARY_RELU, false},       {72, 56, 56, 24, 1, 1, RLX_UNARY_COUNT, true},
    {72, 28, 28, 40, 1, 1, RLX_UNARY_COUNT, false},       {3, 224, 224, 32, 3, 2, RLX_UNARY_SILU, false},
    {32, 112, 112, 16, 1, 1, RLX_UNARY_COUNT, false},     {16, 112, 112, 96, 1, 1, RLX_UNARY_SILU, false},
    {96, 56, 56, 24, 1, 1, RLX_UNARY_COUNT, false},       {24, 56, 56, 144, 1, 1, RLX_UNARY_SILU, false},
    /* regnet_y_800mf's at 14x14 and 7x7 (weights of 0.4 and 2.4 MiB) */
    {320, 14, 14, 320, 1, 1, RLX_UNARY_RELU, false},      {320, 14, 14, 784, 1, 1, RLX_UNARY_RELU, false},
    {784, 7, 7, 784, 1, 1, RLX_UNARY_COUNT, true},
};

static float *rand_floats(size_t n, unsigned *r, float scale) {
  float *p = malloc(sizeof(float) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) *r = *r * 1664525u + 1013904223u, p[i] = ((float)(*r >> 9) / 8388608.0f - 1.0f) * scale;
  return p;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1, rounds = argc > 2 ? atoi(argv[2]) : 9, only = argc > 3 ? atoi(argv[3]) : -1;
  if (threads < 1 || threads > 256) {
    fprintf(stderr, "usage: bench_pwconv [threads (1-256)] [rounds] [layer]\n");
    return 2;
  }
  rlx_threadpool *tp;
  if (rlx_threadpool_create(threads, &tp) != RLX_OK) return 1;
  if (threads == 1) bench_clock = CLOCK_THREAD_CPUTIME_ID;
  if (rounds > 64) rounds = 64;
  if (rounds < 1) rounds = 1;
  printf("f32 channels-last stem and 1x1 convs, batch 1, %d thread(s), %d rounds (median / min ms of %s)\n", threads,
         rounds, threads == 1 ? "CPU time" : "wall time");
  double total = 0;
  for (size_t li = 0; li < sizeof layers / sizeof layers[0]; li++) {
    if (only >= 0 && (size_t)only != li) continue;
    const layer *L = &layers[li];
    bool stem = L->k > 1;
    int64_t p = L->k / 2, OH = (L->H + 2 * p - L->k) / L->s + 1, OW = (L->W + 2 * p - L->k) / L->s + 1;
    rlx_graph g;
    rlx_graph_init(&g);
    rlx_shape xs = stem ? (rlx_shape){.rank = 4, .dims = {1, L->C, L->H, L->W}}
                        : (rlx_shape){.rank = 4, .dims = {1, L->H, L->W, L->C}};
    rlx_shape ws = {.rank = 4, .dims = {L->O, L->C, L->k, L->k}}, bs = {.rank = 1, .dims = {L->O}},
              ys = {.rank = 4, .dims = {1, OH, OW, L->O}};
    size_t nw = (size_t)(L->O * L->C * L->k * L->k), nx = (size_t)(L->C * L->H * L->W), ny = (size_t)(L->O * OH * OW);
    unsigned r = 1;
    float *w = rand_floats(nw, &r, 0.3f), *bias = rand_floats((size_t)L->O, &r, 0.1f), *x = rand_floats(nx, &r, 1.0f);
    float *res = L->res ? rand_floats(ny, &r, 1.0f) : NULL, *y = malloc(sizeof(float) * ny);
    int32_t in[4] = {rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), rlx_graph_add_const(&g, RLX_DTYPE_F32, &ws, w),
                     rlx_graph_add_const(&g, RLX_DTYPE_F32, &bs, bias),
                     L->res ? rlx_graph_add_input(&g, "res", RLX_DTYPE_F32, &ys) : -1};
    rlx_params prm = {.conv = {.nd = 2, .stride = {L->s, L->s}, .pad = {p, p}, .dilation = {1, 1}, .groups = 1,
                               .channels_last = true, .x_nchw = stem}};
    prm.conv.ep = (rlx_epilogue){.has_act = L->act != RLX_UNARY_COUNT, .act = {.kind = L->act == RLX_UNARY_COUNT ? RLX_UNARY_RELU : L->act}};
    int32_t node = rlx_graph_add_node(&g, RLX_OP_CONV, &prm, in, L->res ? 4 : 3, 1, "pw", NULL);
    if (node < 0) return 1;
    const rlx_node *n = &g.nodes[node];
    rlx_tensor_view vin[4];
    for (int i = 0; i < (L->res ? 4 : 3); i++) vin[i] = rlx_value_view(&g.values[in[i]]);
    vin[0].data = x, vin[1].data = (void *)g.values[in[1]].data, vin[2].data = (void *)g.values[in[2]].data;
    if (L->res) vin[3].data = res;
    rlx_tensor_view out = rlx_value_view(&g.values[n->out[0]]);
    out.data = y;
    rlx_kernel k = {.name = "reference", .run = rlx_reference_kernel};
    if (rlx_cpu_select(&g, NULL, node, threads, &k) != RLX_OK || !k.fast) {
      printf("layer %zu: no fast kernel\n", li);
      return 1;
    }
    void *scratch = aligned_alloc(64, (k.scratch + 64) & ~(size_t)63);
    rlx_exec ex = {.tp = tp, .scratch = scratch, .packed = k.packed};
    double t[64];
    size_t bytes = 4 * (nx + ny + (L->res ? ny : 0));
    int reps = (int)(8e7 / (double)bytes + 1);
    for (int rd = -1; rd < rounds; rd++) {
      double t0 = bench_now();
      for (int i = 0; i < reps; i++) k.run(n, vin, &out, &ex);
      if (rd >= 0) t[rd] = (bench_now() - t0) / reps * 1e3;
    }
    qsort(t, (size_t)rounds, sizeof(double), bench_cmp);
    double med = t[rounds / 2], flops = 2.0 * (double)ny * (double)(L->C * L->k * L->k);
    total += med;
    printf("%3lldx%3lldx%3lld k%lld s%lld -> %3lld %-9s%s: %.4f / %.4f ms %6.1f GFLOP/s %5.1f GB/s  %s\n",
           (long long)L->C, (long long)L->H, (long long)L->W, (long long)L->k, (long long)L->s, (long long)L->O,
           L->act == RLX_UNARY_COUNT ? "" : rlx_unary_names[L->act], L->res ? " +res" : "     ", med, t[0], flops / med * 1e-6,
           (double)bytes / med * 1e-6, k.name);
    free(scratch);
    rlx_aligned_free(k.packed);
    free(w), free(bias), free(x), free(y), free(res);
    rlx_graph_free(&g);
  }
  printf("sum of medians %.3f ms\n", total);
  rlx_threadpool_destroy(tp);
  return 0;
}
