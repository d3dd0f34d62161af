/*
 * norm.c — fast f32 row kernels: softmax / log_softmax over the last axis,
 * layer_norm and rms_norm over trailing axes. Rows are split over the pool;
 * statistics accumulate in double as in the reference kernels.
 */
#include <math.h>

#include "cpu/select.h"
#include "cpu/vmath.h"
#include "ops/ops_util.h"

typedef struct row_job {
  const rlx_node *n;
  const float *x, *w, *b;
  float *y;
  int64_t D;
} row_job;

RLX_VEC_CLONES static void softmax_row(void *ctx, int64_t r, int worker) {
  (void)worker;
  const row_job *j = ctx;
  const float *x = j->x + r * j->D;
  float *y = j->y + r * j->D, mx = -INFINITY;
  for (int64_t i = 0; i < j->D; i++)
    if (x[i] > mx || x[i] != x[i]) mx = x[i];
  for (int64_t i = 0; i < j->D; i++) y[i] = exp_f32(x[i] - mx); /* vectorized */
  double sum = 0;
  for (int64_t i = 0; i < j->D; i++) sum += (double)y[i];
  if (j->n->p.softmax.log) {
    float ls = (float)log(sum);
    for (int64_t i = 0; i < j->D; i++) y[i] = x[i] - mx - ls;
  } else {
    float inv = (float)(1.0 / sum);
    for (int64_t i = 0; i < j->D; i++) y[i] *= inv;
  }
}

static void norm_row(void *ctx, int64_t r, int worker) {
  (void)worker;
  const row_job *j = ctx;
  const float *x = j->x + r * j->D;
  float *y = j->y + r * j->D;
  bool rms = j->n->op == RLX_OP_RMS_NORM;
  double mean = 0, var = 0;
  if (!rms) {
    for (int64_t i = 0; i < j->D; i++) mean += x[i];
    mean /= (double)j->D;
  }
  for (int64_t i = 0; i < j->D; i++) var += ((double)x[i] - mean) * ((double)x[i] - mean);
  float inv = (float)(1.0 / sqrt(var / (double)j->D + j->n->p.norm.eps)), m = (float)mean;
  for (int64_t i = 0; i < j->D; i++) {
    float v = (x[i] - m) * inv;
    if (j->w) v *= j->w[i];
    if (j->b) v += j->b[i];
    y[i] = v;
  }
}

static rlx_status rows_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  int r = in[0].rank;
  bool sm = n->op == RLX_OP_SOFTMAX;
  int64_t D = sm ? in[0].dims[r - 1] : rlx_dims_prod(in[0].dims, r - n->p.norm.n_axes, r);
  row_job j = {n, in[0].data, sm ? NULL : in[1].data, sm || n->op == RLX_OP_RMS_NORM ? NULL : in[2].data,
               out[0].data, D};
  int64_t rows = D ? rlx_view_numel(&in[0]) / D : 0;
  rlx_parallel_for(rows * D >= 8192 ? x->tp : NULL, rows, sm ? softmax_row : norm_row, &j);
  return RLX_OK;
}

rlx_status rlx_cpu_try_rows(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k) {
  (void)sym;
  (void)threads;
  const rlx_value *xv = rlx_in(g, n, 0);
  if (xv->dtype != RLX_DTYPE_F32 || xv->shape.rank == 0) return RLX_OK;
  if (n->op == RLX_OP_SOFTMAX && n->p.softmax.axis != xv->shape.rank - 1) return RLX_OK;
  k->run = rows_run, k->fast = true, k->scratch = 0;
  k->name = n->op == RLX_OP_SOFTMAX ? "f32_softmax_rows" : "f32_norm_rows";
  return RLX_OK;
}
