/*
 * bench_dwconv.c — the channels-last depthwise convolution kernel on the
 * depthwise layers of mobilenet_v3_large and efficientnet_b0 (batch 1,
 * random data, bias and the layer's activation in the epilogue); prints per
 * layer the median and minimum ms over rounds and the GB/s of its input and
 * output together. At one thread the times are the thread's CPU time, else
 * wall time. Numbers, not assertions.
 *
 *   bench_dwconv [threads] [rounds] [layer]
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
  int64_t C, H, W, k, s;
  rlx_unary_kind act;
} layer;

/* (input channels, H, W, kernel, stride, activation); padding k / 2 */
static const layer layers[] = {
    {16, 112, 112, 3, 1, RLX_UNARY_RELU},      {64, 112, 112, 3, 2, RLX_UNARY_RELU},
    {72, 56, 56, 3, 1, RLX_UNARY_RELU},        {72, 56, 56, 5, 2, RLX_UNARY_RELU},
    {120, 28, 28, 5, 1, RLX_UNARY_RELU},       {240, 28, 28, 3, 2, RLX_UNARY_HARDSWISH},
    {200, 14, 14, 3, 1, RLX_UNARY_HARDSWISH},  {672, 14, 14, 3, 1, RLX_UNARY_HARDSWISH},
    {672, 14, 14, 5, 2, RLX_UNARY_HARDSWISH},  {960, 7, 7, 5, 1, RLX_UNARY_HARDSWISH},
    {32, 112, 112, 3, 1, RLX_UNARY_SILU},      {96, 112, 112, 3, 2, RLX_UNARY_SILU},
    {144, 56, 56, 3, 1, RLX_UNARY_SILU},       {240, 28, 28, 5, 1, RLX_UNARY_SILU},
    {672, 14, 14, 5, 1, RLX_UNARY_SILU},       {1152, 7, 7, 5, 1, RLX_UNARY_SILU},
};

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1, rounds = argc > 2 ? atoi(argv[2]) : 9, only = argc > 3 ? atoi(argv[3]) : -1;
  if (threads < 1 || threads > 256) { /* a pool of 0 would be the CPU count, the kernels' scratch sized for 0 */
    fprintf(stderr, "usage: bench_dwconv [threads (1-256)] [rounds] [layer]\n");
    return 2;
  }
  rlx_threadpool *tp;
  if (rlx_threadpool_create(threads, &tp) != RLX_OK) return 1;
  if (threads == 1) bench_clock = CLOCK_THREAD_CPUTIME_ID;
  if (rounds > 64) rounds = 64;
  if (rounds < 1) rounds = 1;
  printf("f32 channels-last depthwise conv, batch 1, %d thread(s), %d rounds (median / min ms of %s)\n", threads,
         rounds, threads == 1 ? "CPU time" : "wall time");
  double total = 0;
  for (size_t li = 0; li < sizeof layers / sizeof layers[0]; li++) {
    if (only >= 0 && (size_t)only != li) continue;
    const layer *L = &layers[li];
    int64_t p = L->k / 2, OH = (L->H + 2 * p - L->k) / L->s + 1, OW = (L->W + 2 * p - L->k) / L->s + 1;
    rlx_graph g;
    rlx_graph_init(&g);
    rlx_shape xs = {.rank = 4, .dims = {1, L->H, L->W, L->C}}, ws = {.rank = 4, .dims = {L->C, 1, L->k, L->k}},
              bs = {.rank = 1, .dims = {L->C}};
    size_t nw = (size_t)(L->C * L->k * L->k), nx = (size_t)(L->C * L->H * L->W), ny = (size_t)(L->C * OH * OW);
    float *w = malloc(sizeof(float) * nw), *bias = malloc(sizeof(float) * (size_t)L->C), *x = malloc(sizeof(float) * nx);
    float *y = malloc(sizeof(float) * ny);
    unsigned r = 1;
    for (size_t i = 0; i < nw; i++) r = r * 1664525u + 1013904223u, w[i] = ((float)(r >> 9) / 8388608.0f - 1.0f) * 0.3f;
    for (size_t i = 0; i < nx; i++) r = r * 1664525u + 1013904223u, x[i] = (float)(r >> 9) / 8388608.0f - 1.0f;
    for (int64_t i = 0; i < L->C; i++) bias[i] = 0.01f * (float)i;
    int32_t in[3] = {rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), rlx_graph_add_const(&g, RLX_DTYPE_F32, &ws, w),
                     rlx_graph_add_const(&g, RLX_DTYPE_F32, &bs, bias)};
    rlx_params prm = {.conv = {.nd = 2, .stride = {L->s, L->s}, .pad = {p, p}, .dilation = {1, 1}, .groups = L->C,
                               .channels_last = true}};
    prm.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = L->act}};
    int32_t node = rlx_graph_add_node(&g, RLX_OP_CONV, &prm, in, 3, 1, "dw", NULL);
    if (node < 0) return 1;
    const rlx_node *n = &g.nodes[node];
    rlx_tensor_view vin[3] = {rlx_value_view(&g.values[in[0]]), rlx_value_view(&g.values[in[1]]),
                              rlx_value_view(&g.values[in[2]])};
    vin[0].data = x, vin[1].data = (void *)g.values[in[1]].data, vin[2].data = (void *)g.values[in[2]].data;
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
    int reps = (int)(2e7 / (double)(nx + ny) + 1);
    for (int rd = -1; rd < rounds; rd++) {
      double t0 = bench_now();
      for (int i = 0; i < reps; i++) k.run(n, vin, &out, &ex);
      if (rd >= 0) t[rd] = (bench_now() - t0) / reps * 1e3;
    }
    qsort(t, (size_t)rounds, sizeof(double), bench_cmp);
    double med = t[rounds / 2];
    total += med;
    printf("%4lldx%3lldx%3lld k%lld s%lld %-9s -> %3lldx%3lld: %.4f / %.4f ms  %5.1f GB/s  %s\n", (long long)L->C,
           (long long)L->H, (long long)L->W, (long long)L->k, (long long)L->s, rlx_unary_names[L->act],
           (long long)OH, (long long)OW, med, t[0], 4.0 * (double)(nx + ny) / med * 1e-6, k.name);
    free(scratch);
    rlx_aligned_free(k.packed);
    free(w), free(bias), free(x), free(y);
    rlx_graph_free(&g);
  }
  printf("sum of medians %.3f ms\n", total);
  rlx_threadpool_destroy(tp);
  return 0;
}
