/*
 * bench_conv.c — the f32 NCHW convolution kernels on the layers of
 * resnet18/50 (batch 1, random data), each way the chooser can run a layer
 * (cm: the channel-major implicit-GEMM sgemm, RLX_WINOGRAD=0 RLX_CONV_PIX=0;
 * pm: the pixel-major one, RLX_CONV_PIX=1; 2 and 4: Winograd F(2x2, 3x3) and
 * F(4x4, 3x3) on 3x3 stride-1 layers) and the way it picks by itself
 * (auto), interleaved round by round; prints per layer the median and
 * minimum ms over rounds, GFLOP/s of the direct product (2 * O * C * kh * kw
 * * OH * OW), parallel regions per run and the kernel's name. At one thread
 * the times are the thread's CPU time, else wall time. Numbers, not
 * assertions.
 *
 *   bench_conv [threads] [rounds] [layer] [way]   (layer: an index into the table, else all;
 *                                                 way: auto, cm, pm, 2 or 4, else all)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/select.h"
#include "ir/graph.h"
#include "runtime/runtime.h"
#include "runtime/threadpool.h"
#include "bench_util.h"

typedef struct layer {
  int64_t C, H, W, O, k, s, p;
} layer;

static const layer layers[] = {
    {64, 56, 56, 64, 3, 1, 1},   {128, 28, 28, 128, 3, 1, 1}, {256, 14, 14, 256, 3, 1, 1},
    {512, 7, 7, 512, 3, 1, 1},   {64, 56, 56, 128, 3, 2, 1},  {128, 28, 28, 256, 3, 2, 1},
    {256, 14, 14, 512, 3, 2, 1}, {128, 56, 56, 128, 3, 2, 1}, {512, 14, 14, 512, 3, 2, 1},
    {64, 56, 56, 128, 1, 2, 0},  {256, 14, 14, 512, 1, 2, 0}, {1024, 14, 14, 2048, 1, 2, 0},
    {1024, 14, 14, 512, 1, 1, 0}, {2048, 7, 7, 512, 1, 1, 0}, {512, 7, 7, 2048, 1, 1, 0},
    {64, 56, 56, 256, 1, 1, 0},  {256, 56, 56, 64, 1, 1, 0},  {128, 28, 28, 512, 1, 1, 0},
    {512, 28, 28, 128, 1, 1, 0}, {256, 14, 14, 1024, 1, 1, 0}, {1024, 14, 14, 256, 1, 1, 0},
    /* narrow 3x3s: squeezenet's, DenseNet's 32-output layers, inception_v4's stem (as the zoo's 160 px run has it) */
    {16, 55, 55, 64, 3, 1, 1},   {32, 27, 27, 128, 3, 1, 1},  {48, 13, 13, 192, 3, 1, 1},
    {128, 14, 14, 32, 3, 1, 1},  {128, 7, 7, 32, 3, 1, 1},    {32, 77, 77, 32, 3, 1, 1},
    {32, 77, 77, 64, 3, 1, 1},
    /* stems on the image's 3 channels: resnet's and googlenet's 7x7 stride 2, squeezenet's 3x3 stride 2 */
    {3, 224, 224, 64, 7, 2, 3},  {3, 224, 224, 64, 3, 2, 0},
    /* squeezenet's 13x13 fire modules: squeeze 384/512 -> 48/64, expand 1x1 64 -> 256 */
    {384, 13, 13, 48, 1, 1, 0},  {512, 13, 13, 64, 1, 1, 0},  {64, 13, 13, 256, 1, 1, 0},  {64, 13, 13, 256, 3, 1, 1},
    /* squeezenet's classifier, 512 -> 1000 at 13x13 */
    {512, 13, 13, 1000, 1, 1, 0},
    /* googlenet's 14x14 and 7x7 3x3s */
    {160, 14, 14, 320, 3, 1, 1}, {112, 14, 14, 224, 3, 1, 1}, {192, 7, 7, 384, 3, 1, 1},
};

#define WAYS 5
static const char *way_name[WAYS] = {"auto", "cm", "pm", "2", "4"};
/* RLX_WINOGRAD and RLX_CONV_PIX per way (NULL: unset) */
static const char *way_wg[WAYS] = {NULL, "0", "0", "2", "4"}, *way_pix[WAYS] = {NULL, "0", "1", NULL, NULL};

static void set_env(const char *name, const char *v) {
  if (v) setenv(name, v, 1);
  else unsetenv(name);
}

typedef struct prepared {
  rlx_kernel k;
  void *scratch;
  bool ok;
} prepared;

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1, rounds = argc > 2 ? atoi(argv[2]) : 7, only = argc > 3 ? atoi(argv[3]) : -1;
  const char *way = argc > 4 ? argv[4] : NULL;
  if (threads < 1 || threads > 256) { /* a pool of 0 would be the CPU count, the kernels' scratch sized for 0 */
    fprintf(stderr, "usage: bench_conv [threads (1-256)] [rounds] [layer] [way]\n");
    return 2;
  }
  rlx_threadpool *tp;
  if (rlx_threadpool_create(threads, &tp) != RLX_OK) return 1;
  if (threads == 1) bench_clock = CLOCK_THREAD_CPUTIME_ID;
  printf("f32 conv, batch 1, %d thread(s), %d rounds (median / min ms of %s, GFLOP/s of the direct product)\n", threads,
         rounds, threads == 1 ? "CPU time" : "wall time");
  for (size_t li = 0; li < sizeof layers / sizeof layers[0]; li++) {
    if (only >= 0 && (size_t)only != li) continue;
    const layer *L = &layers[li];
    int64_t OH = (L->H + 2 * L->p - L->k) / L->s + 1, OW = (L->W + 2 * L->p - L->k) / L->s + 1;
    rlx_graph g;
    rlx_graph_init(&g);
    rlx_shape xs = {.rank = 4, .dims = {1, L->C, L->H, L->W}}, ws = {.rank = 4, .dims = {L->O, L->C, L->k, L->k}},
              bs = {.rank = 1, .dims = {L->O}};
    size_t nw = (size_t)(L->O * L->C * L->k * L->k), nx = (size_t)(L->C * L->H * L->W);
    float *w = malloc(sizeof(float) * nw), *bias = malloc(sizeof(float) * (size_t)L->O), *x = malloc(sizeof(float) * nx);
    float *y = malloc(sizeof(float) * (size_t)(L->O * OH * OW));
    unsigned r = 1;
    for (size_t i = 0; i < nw; i++) r = r * 1664525u + 1013904223u, w[i] = ((float)(r >> 9) / 8388608.0f - 1.0f) * 0.05f;
    for (size_t i = 0; i < nx; i++) r = r * 1664525u + 1013904223u, x[i] = (float)(r >> 9) / 8388608.0f - 1.0f;
    for (int64_t i = 0; i < L->O; i++) bias[i] = 0.01f * (float)i;
    int32_t in[3] = {rlx_graph_add_input(&g, "x", RLX_DTYPE_F32, &xs), rlx_graph_add_const(&g, RLX_DTYPE_F32, &ws, w),
                     rlx_graph_add_const(&g, RLX_DTYPE_F32, &bs, bias)};
    rlx_params p = {.conv = {.nd = 2, .stride = {L->s, L->s}, .pad = {L->p, L->p}, .dilation = {1, 1}, .groups = 1}};
    p.conv.ep = (rlx_epilogue){.has_act = true, .act = {.kind = RLX_UNARY_RELU}};
    int32_t node = rlx_graph_add_node(&g, RLX_OP_CONV, &p, in, 3, 1, "conv", NULL);
    if (node < 0) return 1;
    const rlx_node *n = &g.nodes[node];
    rlx_tensor_view vin[3] = {rlx_value_view(&g.values[in[0]]), rlx_value_view(&g.values[in[1]]),
                              rlx_value_view(&g.values[in[2]])};
    vin[0].data = x, vin[1].data = (void *)g.values[in[1]].data, vin[2].data = (void *)g.values[in[2]].data;
    rlx_tensor_view out = rlx_value_view(&g.values[n->out[0]]);
    out.data = y;
    prepared pr[WAYS];
    for (int v = 0; v < WAYS; v++) {
      set_env("RLX_WINOGRAD", way_wg[v]);
      set_env("RLX_CONV_PIX", way_pix[v]);
      pr[v].k = (rlx_kernel){.name = "reference", .run = rlx_reference_kernel};
      pr[v].ok = rlx_cpu_select(&g, NULL, node, threads, &pr[v].k) == RLX_OK && pr[v].k.fast;
      if (way && strcmp(way, way_name[v])) pr[v].ok = false;
      pr[v].scratch = pr[v].ok ? aligned_alloc(64, (pr[v].k.scratch + 64) & ~(size_t)63) : NULL;
      /* a way that ends in the same kernel as an earlier one is not timed twice */
      for (int u = 1; u < v && pr[v].ok; u++)
        if (pr[u].ok && !strcmp(pr[u].k.name, pr[v].k.name)) pr[v].ok = false;
    }
    set_env("RLX_WINOGRAD", NULL);
    set_env("RLX_CONV_PIX", NULL);
    double t[WAYS][64];
    uint64_t regions[WAYS] = {0};
    int reps = (int)(2e8 / (2.0 * (double)(L->O * L->C * L->k * L->k * OH * OW)) + 1);
    if (rounds > 64) rounds = 64;
    for (int rd = -1; rd < rounds; rd++) /* round -1 warms up */
      for (int v = 0; v < WAYS; v++) {
        if (!pr[v].ok) continue;
        rlx_exec ex = {.tp = tp, .scratch = pr[v].scratch, .packed = pr[v].k.packed};
        uint64_t r0 = rlx_threadpool_regions(tp);
        double t0 = bench_now();
        for (int i = 0; i < reps; i++) pr[v].k.run(n, vin, &out, &ex);
        if (rd >= 0) t[v][rd] = (bench_now() - t0) / reps * 1e3;
        regions[v] = (rlx_threadpool_regions(tp) - r0) / (uint64_t)reps;
      }
    double flops = 2.0 * (double)(L->O * L->C * L->k * L->k * OH * OW);
    printf("%4lldx%3lldx%3lld -> %4lldx%3lldx%3lld k%lld s%lld:", (long long)L->C, (long long)L->H, (long long)L->W,
           (long long)L->O, (long long)OH, (long long)OW, (long long)L->k, (long long)L->s);
    for (int v = 0; v < WAYS; v++) {
      if (!pr[v].ok) continue;
      qsort(t[v], (size_t)rounds, sizeof(double), bench_cmp);
      double med = t[v][rounds / 2];
      printf("  [%s] %s %.3f / %.3f ms %.0f GF/s %llu rg", way_name[v], pr[v].k.name + 9, med, t[v][0],
             flops / med * 1e-6, (unsigned long long)regions[v]);
    }
    printf("\n");
    for (int v = 0; v < WAYS; v++) {
      free(pr[v].scratch);
      rlx_aligned_free(pr[v].k.packed);
    }
    free(w), free(bias), free(x), free(y);
    rlx_graph_free(&g);
  }
  rlx_threadpool_destroy(tp);
  return 0;
}
