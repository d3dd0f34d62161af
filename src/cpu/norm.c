/*
 * norm.c — fast f32 row kernels: softmax / log_softmax over the last axis,
 * layer_norm and rms_norm over trailing axes; group_norm and inference
 * batch_norm per channel plane. Rows are split over the pool;
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
  const float *mask; /* a fused softmax's mask, broadcast to x (mst; full is x's shape) */
  rlx_shape full;
  int64_t mst[RLX_MAX_RANK];
} row_job;

RLX_VEC_CLONES static void softmax_row(void *ctx, int64_t r, int worker) {
  (void)worker;
  const row_job *j = ctx;
  const float *x = j->x + r * j->D;
  float *y = j->y + r * j->D;
  const rlx_softmax_params *p = &j->n->p.softmax;
  if (p->pre || j->mask) { /* fuse_softmax: y = x op scale + mask first, each step rounded as its node was */
    float sc = (float)p->scale;
    if (p->pre == RLX_SOFTMAX_PRE_MUL)
      for (int64_t i = 0; i < j->D; i++) y[i] = x[i] * sc;
    else if (p->pre == RLX_SOFTMAX_PRE_DIV)
      for (int64_t i = 0; i < j->D; i++) y[i] = x[i] / sc;
    else
      for (int64_t i = 0; i < j->D; i++) y[i] = x[i];
    if (j->mask) {
      int r0 = j->full.rank - 1;
      const float *m = j->mask + rlx_strided_offset(&j->full, j->mst, r * j->D);
      if (j->mst[r0]) for (int64_t i = 0; i < j->D; i++) y[i] += m[i];
      else for (int64_t i = 0; i < j->D; i++) y[i] += m[0];
    }
    x = y; /* the rest reads the row in place, as each loop below reads x before writing y */
  }
  float mx = vmax_f32(x, j->D);
  if (j->n->p.softmax.log) { /* x may be y: the exponentials are summed, not stored */
    float ls = (float)log(vsum_exp_f32(x, j->D, mx));
    for (int64_t i = 0; i < j->D; i++) y[i] = x[i] - mx - ls;
    return;
  }
  float inv = (float)(1.0 / vexp_sum_f32(x, y, j->D, mx, 1.0f));
  for (int64_t i = 0; i < j->D; i++) y[i] *= inv;
}

RLX_VEC_CLONES static void norm_row(void *ctx, int64_t r, int worker) {
  (void)worker;
  const row_job *j = ctx;
  const float *x = j->x + r * j->D;
  float *y = j->y + r * j->D;
  bool rms = j->n->op == RLX_OP_RMS_NORM;
  /* lane sums (vmath.h); the mean is rounded to float before the deviations:
   * that shifts the variance by (mean - float(mean))^2, ~1e-14 mean^2 */
  float m = rms ? 0.0f : (float)(vsum_f32(x, j->D) / (double)j->D);
  double var = vsumsq_dev_f32(x, j->D, m);
  float inv = (float)(1.0 / sqrt(var / (double)j->D + j->n->p.norm.eps));
  for (int64_t i = 0; i < j->D; i++) {
    float v = (x[i] - m) * inv;
    if (j->w) v *= j->w[i];
    if (j->b) v += j->b[i];
    y[i] = v;
  }
  if (j->n->p.norm.ep.has_act) rlx_cpu_act_f32(&j->n->p.norm.ep.act, y, j->D);
}

static rlx_status rows_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  int r = in[0].rank;
  bool sm = n->op == RLX_OP_SOFTMAX;
  int64_t D = sm ? in[0].dims[r - 1] : rlx_dims_prod(in[0].dims, r - n->p.norm.n_axes, r);
  row_job j = {n, in[0].data, sm ? NULL : in[1].data, sm || n->op == RLX_OP_RMS_NORM ? NULL : in[2].data,
               out[0].data, D, .mask = sm && n->n_in > 1 ? in[1].data : NULL};
  if (j.mask) {
    j.full = rlx_view_shape(&in[0]);
    rlx_shape ms = rlx_view_shape(&in[1]);
    rlx_broadcast_strides(&ms, &j.full, j.mst);
  }
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

/* ---- group norm and inference batch norm: per-channel planes ----
 *
 * group_norm: statistics over each (sample, group) block of C/G channels x
 * the spatial size, in double as in the reference; then per channel
 * (x - mean) * inv [* w + b] in float, as the layer norm rows above. batch
 * norm with running statistics: per channel (x - mean) * (inv * w) + b.
 * Blocks (groups, or sample-channel planes) are split over the pool. */

typedef struct chan_job {
  const rlx_node *n;
  const float *x, *mean, *var, *w, *b;
  float *y;
  int64_t C, G, S; /* channels, groups (batch norm: C), spatial size */
} chan_job;

RLX_VEC_CLONES static void group_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const chan_job *j = ctx;
  int64_t cg = j->C / j->G, D = cg * j->S, c0 = t % j->G * cg;
  const float *x = j->x + t * D;
  float *y = j->y + t * D;
  double acc[8] = {0}, mean = 0, var = 0;
  int64_t i = 0;
  for (; i + 8 <= D; i += 8)
    for (int l = 0; l < 8; l++) acc[l] += (double)x[i + l];
  for (; i < D; i++) mean += (double)x[i];
  for (int l = 0; l < 8; l++) mean += acc[l];
  mean /= (double)D;
  double vacc[8] = {0};
  for (i = 0; i + 8 <= D; i += 8)
    for (int l = 0; l < 8; l++) vacc[l] += ((double)x[i + l] - mean) * ((double)x[i + l] - mean);
  for (; i < D; i++) var += ((double)x[i] - mean) * ((double)x[i] - mean);
  for (int l = 0; l < 8; l++) var += vacc[l];
  float inv = (float)(1.0 / sqrt(var / (double)D + j->n->p.norm.eps)), m = (float)mean;
  for (int64_t c = 0; c < cg; c++) {
    const float *xc = x + c * j->S;
    float *yc = y + c * j->S;
    float w = j->w ? j->w[c0 + c] : 1.0f, b = j->b ? j->b[c0 + c] : 0.0f;
    if (j->w || j->b)
      for (int64_t s = 0; s < j->S; s++) yc[s] = (xc[s] - m) * inv * w + b;
    else
      for (int64_t s = 0; s < j->S; s++) yc[s] = (xc[s] - m) * inv;
  }
  if (j->n->p.norm.ep.has_act) rlx_cpu_act_f32(&j->n->p.norm.ep.act, y, D);
}

RLX_VEC_CLONES static void batch_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const chan_job *j = ctx;
  int64_t c = t % j->C;
  double inv = 1.0 / sqrt((double)j->var[c] + j->n->p.norm.eps);
  float m = j->mean[c], s = (float)(inv * (j->w ? (double)j->w[c] : 1.0)), b = j->b ? j->b[c] : 0.0f;
  const float *x = j->x + t * j->S;
  float *y = j->y + t * j->S;
  for (int64_t i = 0; i < j->S; i++) y[i] = (x[i] - m) * s + b;
  if (j->n->p.norm.ep.has_act) rlx_cpu_act_f32(&j->n->p.norm.ep.act, y, j->S);
}

static rlx_status chan_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  bool bn = n->op == RLX_OP_BATCH_NORM;
  int64_t N = in[0].dims[0], C = in[0].dims[1], S = rlx_dims_prod(in[0].dims, 2, in[0].rank);
  chan_job j = {.n = n, .x = in[0].data, .y = out[0].data, .C = C, .S = S};
  if (bn) j.mean = in[1].data, j.var = in[2].data, j.w = in[3].data, j.b = in[4].data, j.G = C;
  else j.w = in[1].data, j.b = in[2].data, j.G = n->p.norm.groups;
  int64_t blocks = N * j.G;
  if (blocks == 0 || S == 0) return RLX_OK;
  rlx_parallel_for(N * C * S >= 16384 ? x->tp : NULL, blocks, bn ? batch_task : group_task, &j);
  return RLX_OK;
}

rlx_status rlx_cpu_try_channels(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads,
                                rlx_kernel *k) {
  (void)sym, (void)threads;
  const rlx_value *xv = rlx_in(g, n, 0);
  if (xv->dtype != RLX_DTYPE_F32 || xv->shape.rank < 2) return RLX_OK;
  if (n->op == RLX_OP_BATCH_NORM && !rlx_in(g, n, 1)) return RLX_OK; /* batch statistics: the reference */
  k->run = chan_run, k->fast = true, k->scratch = 0;
  k->name = n->op == RLX_OP_BATCH_NORM ? "f32_batch_norm_planes" : "f32_group_norm_blocks";
  return RLX_OK;
}
