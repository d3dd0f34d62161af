/*
 * pool.c — fast f32 2-D max and average pooling (no indices output), split
 * over the pool by channel plane. Interior windows skip the bounds checks.
 * Same results as the reference kernel: max with NaN propagation, averages
 * with torch's divisor rules (count_include_pad, divisor_override).
 */
#include <math.h>

#include "cpu/select.h"
#include "ops/ops_util.h"

typedef struct pool_job {
  const rlx_pool_params *p;
  const float *x;
  float *y;
  int64_t H, W, OH, OW;
} pool_job;

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
                out[0].dims[r - 1]};
  int64_t planes = rlx_dims_prod(in[0].dims, 0, r - 2);
  rlx_parallel_for(planes * j.OH * j.OW >= 4096 ? x->tp : NULL, planes, plane_task, &j);
  return RLX_OK;
}

rlx_status rlx_cpu_try_pool(const rlx_graph *g, const rlx_node *n, int threads, rlx_kernel *k) {
  (void)threads;
  const rlx_value *xv = rlx_in(g, n, 0);
  if (n->p.pool.nd != 2 || n->n_out != 1 || xv->dtype != RLX_DTYPE_F32) return RLX_OK;
  k->fast = pool_run, k->ref = NULL, k->name = "f32_pool2d", k->scratch = 0;
  return RLX_OK;
}
