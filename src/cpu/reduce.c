/*
 * reduce.c — fast f32 sum / mean / max / min over one contiguous block of
 * axes: the input seen as [outer, R, inner] (a global average pool is
 * [N*C, H*W, 1], a mean over the sequence [B, S, D] is [B, S, D]). Rows
 * (inner 1) reduce along memory; columns (inner > 1) accumulate a strip of
 * inner elements per reduced index. Sums accumulate in double, as the
 * reference kernel does (in another order: the results agree to double
 * rounding, then round to the same float but for rare ties); max and min
 * are exact, NaN sticky as in the reference.
 */
#include <math.h>

#include "cpu/select.h"
#include "ops/ops_util.h"

#define STRIP 256    /* inner elements a column task accumulates */
#define ROW_WORK 16384 /* input elements per row task */

typedef struct reduce_job {
  rlx_reduce_kind kind;
  const float *x;
  float *y;
  int64_t outer, R, inner, rows_per_task, strips;
  double *part; /* band_task's partials: [BANDS][outer * inner] */
} reduce_job;

RLX_VEC_CLONES static double sum_row(const float *x, int64_t n) {
  double acc[8] = {0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; l++) acc[l] += (double)x[i + l];
  double s = 0;
  for (; i < n; i++) s += (double)x[i];
  for (int l = 0; l < 8; l++) s += acc[l];
  return s;
}

/* max (want_max) or min of a row; NaN once seen stays NaN. */
RLX_VEC_CLONES static float extreme_row(const float *x, int64_t n, bool want_max) {
  float acc[16];
  for (int l = 0; l < 16; l++) acc[l] = want_max ? -INFINITY : INFINITY;
  int64_t i = 0;
  if (want_max)
    for (; i + 16 <= n; i += 16)
      for (int l = 0; l < 16; l++) acc[l] = (x[i + l] > acc[l] || x[i + l] != x[i + l]) && acc[l] == acc[l] ? x[i + l] : acc[l];
  else
    for (; i + 16 <= n; i += 16)
      for (int l = 0; l < 16; l++) acc[l] = (x[i + l] < acc[l] || x[i + l] != x[i + l]) && acc[l] == acc[l] ? x[i + l] : acc[l];
  float m = want_max ? -INFINITY : INFINITY;
  for (int l = 0; l < 16; l++)
    if (m == m && ((want_max ? acc[l] > m : acc[l] < m) || acc[l] != acc[l])) m = acc[l];
  for (; i < n; i++)
    if (m == m && ((want_max ? x[i] > m : x[i] < m) || x[i] != x[i])) m = x[i];
  return m;
}

static float finish(rlx_reduce_kind k, double s, int64_t R) {
  return (float)(k == RLX_REDUCE_MEAN ? s / (double)R : s);
}

static void row_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const reduce_job *j = ctx;
  int64_t o0 = t * j->rows_per_task, o1 = RLX_MIN(j->outer, o0 + j->rows_per_task);
  for (int64_t o = o0; o < o1; o++) {
    const float *x = j->x + o * j->R;
    if (j->kind == RLX_REDUCE_MAX || j->kind == RLX_REDUCE_MIN)
      j->y[o] = extreme_row(x, j->R, j->kind == RLX_REDUCE_MAX);
    else
      j->y[o] = finish(j->kind, sum_row(x, j->R), j->R);
  }
}

/* Strip [c0, c0 + n) of outer index o over reduced rows [r0, r1): sums in
 * double, or the max / min (NaN sticky), into out[0, n). */
RLX_VEC_CLONES static void col_strip(const reduce_job *j, int64_t o, int64_t c0, int64_t n, int64_t r0, int64_t r1,
                                     double *out) {
  const float *x = j->x + o * j->R * j->inner + c0;
  if (j->kind == RLX_REDUCE_MAX || j->kind == RLX_REDUCE_MIN) {
    bool mx = j->kind == RLX_REDUCE_MAX;
    float acc[STRIP];
    for (int64_t i = 0; i < n; i++) acc[i] = mx ? -INFINITY : INFINITY;
    for (int64_t r = r0; r < r1; r++) {
      const float *xr = x + r * j->inner;
      if (mx)
        for (int64_t i = 0; i < n; i++) acc[i] = (xr[i] > acc[i] || xr[i] != xr[i]) && acc[i] == acc[i] ? xr[i] : acc[i];
      else
        for (int64_t i = 0; i < n; i++) acc[i] = (xr[i] < acc[i] || xr[i] != xr[i]) && acc[i] == acc[i] ? xr[i] : acc[i];
    }
    for (int64_t i = 0; i < n; i++) out[i] = acc[i];
    return;
  }
  double acc[STRIP] = {0};
  for (int64_t r = r0; r < r1; r++) {
    const float *xr = x + r * j->inner;
    for (int64_t i = 0; i < n; i++) acc[i] += (double)xr[i];
  }
  for (int64_t i = 0; i < n; i++) out[i] = acc[i];
}

static void col_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const reduce_job *j = ctx;
  int64_t o = t / j->strips, c0 = t % j->strips * STRIP, n = RLX_MIN(STRIP, j->inner - c0);
  double acc[STRIP];
  col_strip(j, o, c0, n, 0, j->R, acc);
  float *y = j->y + o * j->inner + c0;
  if (j->kind == RLX_REDUCE_MAX || j->kind == RLX_REDUCE_MIN)
    for (int64_t i = 0; i < n; i++) y[i] = (float)acc[i];
  else
    for (int64_t i = 0; i < n; i++) y[i] = finish(j->kind, acc[i], j->R);
}

/* Few column tasks over many rows (a global average pool of a channels-last
 * image: one strip of C over H*W pixels) split the rows in BANDS bands too,
 * band first: the pool deals thread t the tasks of its band, the pixels it
 * wrote in the node before, so no thread reads the other's cache. Each task
 * writes its partial result; the caller combines them. The split depends on
 * the shape only, never on the thread count: the same sums at any count. */
#define BANDS 2
#define BAND_MAX_OUT 2048 /* outer * inner at most: the partials (32 KiB) are the kernel's scratch */

static void band_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const reduce_job *j = ctx;
  int64_t per = j->outer * j->strips, b = t / per, q = t % per, o = q / j->strips, c0 = q % j->strips * STRIP;
  int64_t n = RLX_MIN(STRIP, j->inner - c0), r0 = j->R * b / BANDS, r1 = j->R * (b + 1) / BANDS;
  col_strip(j, o, c0, n, r0, r1, j->part + b * j->outer * j->inner + o * j->inner + c0);
}

/* The input as [outer, R, inner] when the reduced axes (ignoring size-1
 * ones) form one contiguous block; false otherwise. */
static bool geometry(const rlx_shape *xs, uint32_t axes, int64_t *outer, int64_t *R, int64_t *inner) {
  int first = -1, last = -1;
  for (int i = 0; i < xs->rank; i++)
    if (((axes >> i) & 1) && xs->dims[i] != 1) {
      if (first < 0) first = i;
      last = i;
    }
  *outer = *R = *inner = 1;
  if (first < 0) { /* only size-1 axes: a copy */
    *outer = rlx_shape_numel(xs);
    return true;
  }
  for (int i = first; i <= last; i++)
    if (!((axes >> i) & 1) && xs->dims[i] != 1) return false;
  for (int i = 0; i < xs->rank; i++) {
    int64_t d = xs->dims[i];
    if (i < first) *outer *= d;
    else if (i <= last) *R *= d;
    else *inner *= d;
  }
  return true;
}

static rlx_status reduce_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  rlx_shape xs = rlx_view_shape(&in[0]);
  reduce_job j = {.kind = n->p.reduce.kind, .x = in[0].data, .y = out[0].data};
  if (!geometry(&xs, n->p.reduce.axes, &j.outer, &j.R, &j.inner))
    return rlx_op_table[n->op].vt->ref(n, in, out, NULL); /* a binding that split the block (cannot at load) */
  int64_t N = j.outer * j.inner;
  if (N == 0) return RLX_OK;
  if (j.inner == 1) {
    j.rows_per_task = RLX_MAX(1, ROW_WORK / RLX_MAX(1, j.R));
    int64_t tasks = (j.outer + j.rows_per_task - 1) / j.rows_per_task;
    rlx_parallel_for(tasks > 1 ? x->tp : NULL, tasks, row_task, &j);
  } else {
    j.strips = (j.inner + STRIP - 1) / STRIP;
    int64_t tasks = j.outer * j.strips;
    bool big = j.outer * j.R * j.inner >= ROW_WORK;
    if (big && tasks < 4 && j.R >= 4 * BANDS && N <= BAND_MAX_OUT && x->scratch) {
      double *part = x->scratch; /* not the stack: a host's thread may have little of it */
      j.part = part;
      rlx_parallel_for(x->tp, BANDS * tasks, band_task, &j);
      bool ext = j.kind == RLX_REDUCE_MAX || j.kind == RLX_REDUCE_MIN, mx = j.kind == RLX_REDUCE_MAX;
      for (int64_t i = 0; i < N; i++) {
        double v = part[i];
        for (int b = 1; b < BANDS; b++) {
          double w = part[b * N + i];
          if (!ext) v += w;
          else if (v == v && ((mx ? w > v : w < v) || w != w)) v = w;
        }
        j.y[i] = ext ? (float)v : finish(j.kind, v, j.R);
      }
      return RLX_OK;
    }
    rlx_parallel_for(tasks > 1 && big ? x->tp : NULL, tasks, col_task, &j);
  }
  return RLX_OK;
}

rlx_status rlx_cpu_try_reduce(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k) {
  (void)sym;
  (void)threads;
  const rlx_value *a = rlx_in(g, n, 0), *y = &g->values[n->out[0]];
  rlx_reduce_kind kind = n->p.reduce.kind;
  if (a->dtype != RLX_DTYPE_F32 || y->dtype != RLX_DTYPE_F32) return RLX_OK;
  if (kind != RLX_REDUCE_SUM && kind != RLX_REDUCE_MEAN && kind != RLX_REDUCE_MAX && kind != RLX_REDUCE_MIN)
    return RLX_OK;
  int64_t outer, R, inner;
  if (!geometry(&a->shape, n->p.reduce.axes, &outer, &R, &inner)) return RLX_OK;
  k->run = reduce_run, k->fast = true, k->name = inner == 1 ? "f32_reduce_rows" : "f32_reduce_cols";
  k->scratch = inner == 1 ? 0 : sizeof(double) * BANDS * BAND_MAX_OUT; /* band_task's partials, any binding */
  return RLX_OK;
}
