/*
 * pool.c — fast f32 2-D max and average pooling (no indices output), split
 * over the pool by channel plane. Same results as the reference kernel: max
 * with NaN propagation, averages with torch's divisor rules
 * (count_include_pad, divisor_override).
 *
 * Max pooling runs an output row at a time, vectorized: the maximum over the
 * window's input rows first (one pass per kernel row over the whole input
 * row), then that row is split into its stride phases (-inf outside the
 * image), so each kernel column is a unit-stride stream at a constant
 * offset, whatever the stride and dilation.
 */
#include <math.h>

#include "cpu/select.h"
#include "ops/ops_util.h"

typedef struct pool_job {
  const rlx_pool_params *p;
  const float *x;
  float *y;
  int64_t H, W, OH, OW;
  char *scratch; /* max pooling: per worker, max_row_floats() floats */
} pool_job;

/* Phase planes of one row: QW columns per phase. */
static int64_t max_qw(const rlx_pool_params *p, int64_t OW) {
  return OW + (p->kernel[1] - 1) * p->dilation[1] / p->stride[1];
}
static size_t max_row_bytes(const rlx_pool_params *p, int64_t W, int64_t OW) {
  return ((size_t)(W + p->stride[1] * max_qw(p, OW)) * sizeof(float) + 63) & ~(size_t)63;
}

/* a = max(a, v) with NaN propagation (a NaN, once in, stays). */
RLX_VEC_CLONES static void vmax_row(float *restrict a, const float *restrict v, int64_t n) {
  for (int64_t i = 0; i < n; i++) a[i] = (v[i] > a[i] || v[i] != v[i]) ? v[i] : a[i];
}

RLX_VEC_CLONES static void max_plane(void *ctx, int64_t pl, int worker) {
  const pool_job *j = ctx;
  const rlx_pool_params *p = j->p;
  int64_t kh = p->kernel[0], kw = p->kernel[1], sh = p->stride[0], sw = p->stride[1];
  int64_t ph = p->pad[0], pw = p->pad[1], dh = p->dilation[0], dw = p->dilation[1], W = j->W;
  int64_t QW = max_qw(p, j->OW);
  const float *x = j->x + pl * j->H * W;
  float *y = j->y + pl * j->OH * j->OW;
  float *v = (float *)(j->scratch + max_row_bytes(p, W, j->OW) * (size_t)worker), *P = v + W;
  for (int64_t oy = 0; oy < j->OH; oy++) {
    for (int64_t i = 0; i < W; i++) v[i] = -INFINITY;
    for (int64_t a = 0; a < kh; a++) {
      int64_t iy = oy * sh - ph + a * dh;
      if (iy >= 0 && iy < j->H) vmax_row(v, x + iy * W, W);
    }
    for (int64_t f = 0; f < sw; f++) { /* phase f: P[f][q] = v[q*sw + f - pw] */
      float *Pf = P + f * QW;
      for (int64_t q = 0; q < QW; q++) {
        int64_t ix = q * sw + f - pw;
        Pf[q] = ix >= 0 && ix < W ? v[ix] : -INFINITY;
      }
    }
    float *yr = y + oy * j->OW;
    for (int64_t i = 0; i < j->OW; i++) yr[i] = -INFINITY;
    for (int64_t b = 0; b < kw; b++) {
      int64_t c = b * dw;
      vmax_row(yr, P + (c % sw) * QW + c / sw, j->OW);
    }
  }
}

static void plane_task(void *ctx, int64_t pl, int worker) {
  (void)worker;
  const pool_job *j = ctx;
  const rlx_pool_params *p = j->p;
  const float *x = j->x + pl * j->H * j->W;
  float *y = j->y + pl * j->OH * j->OW;
  int64_t kh = p->kernel[0], kw = p->kernel[1], sh = p->stride[0], sw = p->stride[1];
  int64_t ph = p->pad[0], pw = p->pad[1], dh = p->dilation[0], dw = p->dilation[1];
  bool is_max = p->kind == RLX_POOL_MAX;
  for (int64_t oy = 0; oy < j->OH; oy++)
    for (int64_t ox = 0; ox < j->OW; ox++) {
      int64_t y0 = oy * sh - ph, x0 = ox * sw - pw;
      float acc = is_max ? -INFINITY : 0.0f;
      int64_t count = 0;
      bool nan = false;
      for (int64_t a = 0; a < kh; a++) {
        int64_t iy = y0 + a * dh;
        if (iy < 0 || iy >= j->H) continue;
        const float *row = x + iy * j->W;
        for (int64_t b = 0; b < kw; b++) {
          int64_t ix = x0 + b * dw;
          if (ix < 0 || ix >= j->W) continue;
          float v = row[ix];
          if (is_max) {
            nan |= v != v;
            acc = v > acc ? v : acc;
          } else {
            acc += v;
            count++;
          }
        }
      }
      if (is_max) {
        y[oy * j->OW + ox] = nan ? NAN : acc;
      } else {
        int64_t hend = RLX_MIN(y0 + kh, j->H + ph), wend = RLX_MIN(x0 + kw, j->W + pw);
        int64_t div = p->divisor_override ? p->divisor_override
                      : p->count_include_pad ? (hend - y0) * (wend - x0) : count;
        y[oy * j->OW + ox] = div ? (float)((double)acc / (double)div) : NAN;
      }
    }
}

static rlx_status pool_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  int r = in[0].rank;
  pool_job j = {&n->p.pool, in[0].data, out[0].data, in[0].dims[r - 2], in[0].dims[r - 1], out[0].dims[r - 2],
                out[0].dims[r - 1], NULL};
  int64_t planes = rlx_dims_prod(in[0].dims, 0, r - 2);
  j.scratch = x->scratch;
  rlx_parallel_for(planes * j.OH * j.OW >= 4096 ? x->tp : NULL, planes,
                   n->p.pool.kind == RLX_POOL_MAX ? max_plane : plane_task, &j);
  return RLX_OK;
}

static size_t maxpool_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  const rlx_shape *xs = &rlx_in(g, n, 0)->shape, *ys = &g->values[n->out[0]].shape;
  return max_row_bytes(&n->p.pool, xs->dims[xs->rank - 1], ys->dims[ys->rank - 1]) * (size_t)(threads > 0 ? threads : 1);
}

rlx_status rlx_cpu_try_pool(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k) {
  (void)sym;
  const rlx_value *xv = rlx_in(g, n, 0);
  if (n->p.pool.nd != 2 || n->n_out != 1 || xv->dtype != RLX_DTYPE_F32) return RLX_OK;
  k->run = pool_run, k->fast = true, k->name = "f32_pool2d", k->scratch = 0;
  if (n->p.pool.kind == RLX_POOL_MAX) {
    k->name = "f32_maxpool2d_rows";
    k->scratch_for = maxpool_scratch_for;
    k->scratch = maxpool_scratch_for(g, n, threads);
  }
  return RLX_OK;
}
