/*
 * pool.c — fast f32 2-D max and average pooling (no indices output), split
 * over the pool by channel plane, with the reference kernel's results
 * (src/ops/pool.c): max with its NaN rule (NaN once seen wins; otherwise
 * the first of equal values), averages summed and divided in double with
 * torch's divisor rules (count_include_pad, divisor_override).
 *
 * With AVX-512 (pool_avx512.c, pool.h) max pooling takes two passes over
 * each plane, one call a plane: every input row's window-row maxima once (16 output columns
 * a vector: a load at stride 1, two loads and a permute at stride 2, a
 * gather otherwise; the vectors at the row's edges masked to the columns
 * inside the input), then every output row combines its window's rows in
 * order — the reference's max step is associative on partial results, so
 * this is its row-major answer to the bit. Average pooling runs each
 * output row directly, 16 columns a vector in the reference's window
 * order, summing in double. googlenet's 13 max pools had run an output row
 * at a time through a phase split in scalar code: 7.1 -> 2.2 ms a run at
 * one thread, squeezenet's three 1.6 -> 0.5 ms (docs/perf.md). Stride 2 over 2-3 columns and stride 1
 * have passes of their own, and "same" pools over small planes, max and average, run flat, the planes of
 * a task as one array with masks made at compile time (docs/design.md, "Pooling"): inception_v3's nine
 * 3x3 average pools at 25x25 to 5x5 had filled 5 to 12 lanes of a row's vectors, 4.2 -> 1.6 ms a run
 * at one thread. Without AVX-512, max pooling runs an output row at a
 * time, vectorized by the compiler: the maximum over the window's input
 * rows first (one pass per kernel row over the whole input row), then that
 * row is split into its stride phases (-inf outside the image), so each
 * kernel column is a unit-stride stream at a constant offset, whatever the
 * stride and dilation; average pooling runs pool_one on every column.
 */
#include <math.h>
#include <string.h>

#include "cpu/pool.h"
#include "cpu/select.h"
#include "cpu/vmath.h"
#include "ops/ops_util.h"


/* Whether hmax_task (max) or rows_task (average) runs this pooling: AVX-512F (not turned off by RLX_NO_AVX512_MATH, eltwise.c), a kernel
 * of at most RLX_POOL_ROWS_MAX rows, columns that fit the vectors' int32 lanes, no dilated average. */
static bool rows_ok(const rlx_pool_params *p, int64_t W) {
  return rlx_cpu_avx512_math() && p->kernel[0] <= RLX_POOL_ROWS_MAX && p->kernel[1] <= RLX_POOL_COLS_MAX &&
         (p->kind == RLX_POOL_MAX || p->dilation[1] == 1) &&
         W + (p->kernel[1] + 16) * p->dilation[1] + 16 * p->stride[1] + p->pad[1] < ((int64_t)1 << 30);
}

typedef struct pool_job {
  const rlx_pool_params *p;
  const float *x;
  float *y;
  int64_t H, W, OH, OW;
  char *scratch; /* max pooling: per worker, max_row_floats() floats */
  int64_t C;     /* channels_last: the channels */
  bool avx512;   /* channels_last: the AVX-512 max rows */
} pool_job;

/* Phase planes of one row: QW columns per phase. */
static int64_t max_qw(const rlx_pool_params *p, int64_t OW) {
  return OW + (p->kernel[1] - 1) * p->dilation[1] / p->stride[1];
}
static size_t max_row_bytes(const rlx_pool_params *p, int64_t W, int64_t OW) {
  return ((size_t)(W + p->stride[1] * max_qw(p, OW)) * sizeof(float) + 63) & ~(size_t)63;
}
/* hmax_task's rows: H x RLX_POOL_HSTRIDE(OW) floats (whole 64-byte lines). */
static size_t hmax_bytes(int64_t H, int64_t OW) { return (size_t)(H * RLX_POOL_HSTRIDE(OW)) * sizeof(float); }

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

/* Output (oy, ox) of a plane as the reference kernel computes it (src/ops/pool.c): the window in
 * row-major order, the max's first of equal values and its NaN rule, the average's sum and division in
 * double. The columns at the row's edges, and every column without AVX-512. */
static float pool_one(const pool_job *j, const float *x, int64_t oy, int64_t ox) {
  const rlx_pool_params *p = j->p;
  int64_t kh = p->kernel[0], kw = p->kernel[1], dh = p->dilation[0], dw = p->dilation[1];
  int64_t y0 = oy * p->stride[0] - p->pad[0], x0 = ox * p->stride[1] - p->pad[1];
  bool is_max = p->kind == RLX_POOL_MAX;
  double acc = is_max ? -INFINITY : 0.0;
  int64_t count = 0;
  for (int64_t a = 0; a < kh; a++) {
    int64_t iy = y0 + a * dh;
    if (iy < 0 || iy >= j->H) continue;
    const float *row = x + iy * j->W;
    for (int64_t b = 0; b < kw; b++) {
      int64_t ix = x0 + b * dw;
      if (ix < 0 || ix >= j->W) continue;
      double v = row[ix];
      if (is_max) {
        if ((v > acc || v != v) && acc == acc) acc = v;
      } else {
        acc += v;
        count++;
      }
    }
  }
  if (is_max) return (float)acc;
  int64_t hend = RLX_MIN(y0 + kh, j->H + p->pad[0]), wend = RLX_MIN(x0 + kw, j->W + p->pad[1]);
  int64_t div = p->divisor_override ? p->divisor_override : p->count_include_pad ? (hend - y0) * (wend - x0) : count;
  return div ? (float)(acc / (double)div) : NAN;
}

static void plane_task(void *ctx, int64_t pl, int worker) {
  (void)worker;
  const pool_job *j = ctx;
  const float *x = j->x + pl * j->H * j->W;
  float *y = j->y + pl * j->OH * j->OW;
  for (int64_t oy = 0; oy < j->OH; oy++)
    for (int64_t ox = 0; ox < j->OW; ox++) y[oy * j->OW + ox] = pool_one(j, x, oy, ox);
}

/* AVX-512 max pooling of one plane (pool.h): each input row's window-row maxima once (into the worker's
 * scratch, H x OW floats), then each output row combines the rows of its window in order. */
static void hmax_task(void *ctx, int64_t pl, int worker) {
  const pool_job *j = ctx;
  const rlx_pool_params *p = j->p;
  int64_t kh = p->kernel[0], sh = p->stride[0], ph = p->pad[0], dh = p->dilation[0];
  const float *x = j->x + pl * j->H * j->W;
  float *h = (float *)(j->scratch + hmax_bytes(j->H, j->OW) * (size_t)worker);
  rlx_pool_plane g = {j->H, j->W, j->OH, j->OW, kh, p->kernel[1], sh, p->stride[1], ph, p->pad[1], dh, p->dilation[1]};
  rlx_pool_max_plane_avx512(x, h, j->y + pl * j->OH * j->OW, &g);
}

/* The flat run of "same" pools over small planes (pool.h): its mask tables, made at compile time
 * (rlx_kernel.packed), for the planes' H and W. */
typedef struct flat_masks {
  int64_t H, W; /* the plane it was made for */
  rlx_pool_flat f;
} flat_masks;

static bool flat_ok(const rlx_pool_params *p, int64_t H, int64_t W, int64_t OH, int64_t OW) {
  return rows_ok(p, W) && p->stride[0] == 1 && p->stride[1] == 1 && p->dilation[0] == 1 &&
         p->dilation[1] == 1 && OH == H && OW == W && H > 0 && W > 0 && H * W <= RLX_POOL_FLAT_MAX;
}
static int64_t gcd16(int64_t v) { return v % 16 == 0 ? 16 : v % 8 == 0 ? 8 : v % 4 == 0 ? 4 : v % 2 == 0 ? 2 : 1; }
/* Planes a task runs: about 4096 floats (h stays in L1), a multiple of q. */
static int64_t flat_chunk(int64_t H, int64_t W) {
  int64_t q = 16 / gcd16(H * W);
  return RLX_MAX(q, 4096 / (H * W) / q * q);
}
static size_t flat_bytes(int64_t H, int64_t W) { return (size_t)((flat_chunk(H, W) * H * W + 15) / 16 * 16) * sizeof(float); }

static flat_masks *flat_make(const rlx_pool_params *p, int64_t H, int64_t W) {
  int64_t hw = H * W, period = hw / gcd16(hw), kh = p->kernel[0], kw = p->kernel[1];
  flat_masks *fm = rlx_aligned_alloc(sizeof(flat_masks) + sizeof(uint16_t) * (size_t)(period * (kh + kw)));
  if (!fm) return NULL;
  uint16_t *hm = (uint16_t *)(fm + 1), *vm = hm + period * kw;
  for (int64_t u = 0; u < period; u++) {
    for (int64_t b = 0; b < kw; b++) hm[u * kw + b] = 0;
    for (int64_t a = 0; a < kh; a++) vm[u * kh + a] = 0;
    for (int l = 0; l < 16; l++) {
      int64_t e = (16 * u + l) % hw, col = e % W, row = e / W;
      for (int64_t b = 0; b < kw; b++)
        if (col + b - p->pad[1] >= 0 && col + b - p->pad[1] < W) hm[u * kw + b] |= (uint16_t)(1u << l);
      for (int64_t a = 0; a < kh; a++)
        if (row + a - p->pad[0] >= 0 && row + a - p->pad[0] < H) vm[u * kh + a] |= (uint16_t)(1u << l);
    }
  }
  fm->H = H, fm->W = W;
  fm->f = (rlx_pool_flat){H, W, kh, kw, p->pad[0], p->pad[1], period, hm, vm};
  return fm;
}

typedef struct flat_job {
  const pool_job *j;
  const flat_masks *fm;
  int64_t planes, chunk;
} flat_job;

static void flat_task(void *ctx, int64_t t, int worker) {
  const flat_job *fj = ctx;
  const pool_job *j = fj->j;
  int64_t hw = j->H * j->W, p0 = t * fj->chunk, p1 = RLX_MIN(fj->planes, p0 + fj->chunk);
  const rlx_pool_params *p = j->p;
  if (p->kind == RLX_POOL_AVG) { /* one pass; include_pad's windows all lie inside the padded plane (OH = H) */
    int64_t div = p->divisor_override ? p->divisor_override : p->count_include_pad ? p->kernel[0] * p->kernel[1] : 0;
    rlx_pool_avg_flat_avx512(j->x + p0 * hw, j->y + p0 * hw, (p1 - p0) * hw, &fj->fm->f, div);
    return;
  }
  size_t per = RLX_MAX(flat_bytes(j->H, j->W), hmax_bytes(j->H, j->OW));
  float *h = (float *)(j->scratch + per * (size_t)worker);
  if (!rlx_pool_max_flat_avx512(j->x + p0 * hw, h, j->y + p0 * hw, (p1 - p0) * hw, &fj->fm->f)) return;
  /* a NaN: these planes through the plane passes (the reference's step) */
  rlx_pool_plane g = {j->H, j->W, j->OH, j->OW, p->kernel[0], p->kernel[1], 1, 1, p->pad[0], p->pad[1], 1, 1};
  for (int64_t pl = p0; pl < p1; pl++) rlx_pool_max_plane_avx512(j->x + pl * hw, h, j->y + pl * hw, &g);
}

/* AVX-512 average pooling: every output row through rlx_pool_row_avx512 (16 columns a vector, the
 * reference's order: pool.h). */
static void rows_task(void *ctx, int64_t pl, int worker) {
  (void)worker;
  const pool_job *j = ctx;
  const rlx_pool_params *p = j->p;
  int64_t kh = p->kernel[0], kw = p->kernel[1], sh = p->stride[0], sw = p->stride[1];
  int64_t ph = p->pad[0], pw = p->pad[1], dh = p->dilation[0], dw = p->dilation[1];
  /* interior columns: ox * sw - pw >= 0 and ox * sw - pw + (kw - 1) * dw <= W - 1 */
  int64_t ox0 = (pw + sw - 1) / sw, last = j->W - 1 + pw - (kw - 1) * dw;
  int64_t ox1 = last < 0 ? 0 : RLX_MIN(j->OW, last / sw + 1);
  int64_t rows[RLX_POOL_ROWS_MAX];
  rlx_pool_row r = {.x = j->x + pl * j->H * j->W, .rows = rows, .W = j->W, .OW = j->OW, .ox0 = ox0,
                    .ox1 = RLX_MAX(ox0, ox1), .sw = sw, .pw = pw, .kw = kw, .dw = dw,
                    .include_pad = p->count_include_pad,
                    .divisor = p->divisor_override};
  for (int64_t oy = 0; oy < j->OH; oy++) {
    int64_t y0 = oy * sh - ph;
    r.nrows = 0;
    for (int64_t a = 0; a < kh; a++) {
      int64_t iy = y0 + a * dh;
      if (iy >= 0 && iy < j->H) rows[r.nrows++] = iy * j->W;
    }
    r.hrows = RLX_MIN(y0 + kh, j->H + ph) - y0;
    r.y = j->y + (pl * j->OH + oy) * j->OW;
    rlx_pool_row_avx512(&r);
  }
}

/* ---- channels-last (the layout pass's: x [N, H, W, C] -> y [N, OH, OW, C]) ----
 *
 * Each output pixel's channels in blocks of NHWC_BLOCK, vectorized along the channels: the window's taps
 * inside the image in row-major order, each a contiguous run of the block's channels — per lane the
 * reference's steps (max: b replaces a where b > a or b is NaN, unless a is NaN, from -inf, as vmaxps
 * where the row reads no NaN, else the row again with the full step; average: summed in double, one
 * division), so its bits. Tasks are output rows. */
#define NHWC_BLOCK 64

/* One output row, the whole of it one function (cloned per ISA, its channel loops vectorized inline). Max:
 * EXACT, the reference's step; else b > a ? b : a (the step where neither is NaN, vmaxps), returning
 * whether a NaN (or an infinity: v * 0 is NaN for both) was read, for the caller to redo the row exactly. */
RLX_VEC_CLONES static int nhwc_row(const pool_job *j, int64_t t, bool exact) {
  int nan = 0;
  const rlx_pool_params *p = j->p;
  int64_t C = j->C, b = t / j->OH, oy = t % j->OH;
  int64_t kh = p->kernel[0], kw = p->kernel[1], dh = p->dilation[0], dw = p->dilation[1];
  int64_t y0 = oy * p->stride[0] - p->pad[0];
  bool is_max = p->kind == RLX_POOL_MAX;
  const float *img = j->x + b * j->H * j->W * C;
  for (int64_t ox = 0; ox < j->OW; ox++) {
    int64_t x0 = ox * p->stride[1] - p->pad[1];
    float *y = j->y + ((b * j->OH + oy) * j->OW + ox) * C;
    for (int64_t c0 = 0; c0 < C; c0 += NHWC_BLOCK) {
      int64_t nc = RLX_MIN(NHWC_BLOCK, C - c0), count = 0;
      float *restrict m = y + c0;
      double s[NHWC_BLOCK];
      float q[NHWC_BLOCK]; /* max: + v * 0 per tap, NaN once a NaN (or an infinity) was read */
      for (int64_t c = 0; c < nc; c++) m[c] = -INFINITY;
      if (is_max)
        for (int64_t c = 0; c < nc; c++) q[c] = 0.0f;
      else
        for (int64_t c = 0; c < nc; c++) s[c] = 0.0;
      for (int64_t a = 0; a < kh; a++) {
        int64_t iy = y0 + a * dh;
        if (iy < 0 || iy >= j->H) continue;
        for (int64_t e = 0; e < kw; e++) {
          int64_t ix = x0 + e * dw;
          if (ix < 0 || ix >= j->W) continue;
          const float *restrict v = img + (iy * j->W + ix) * C + c0;
          if (is_max && exact)
            for (int64_t c = 0; c < nc; c++) m[c] = (v[c] > m[c] || v[c] != v[c]) && m[c] == m[c] ? v[c] : m[c];
          else if (is_max)
            for (int64_t c = 0; c < nc; c++) m[c] = v[c] > m[c] ? v[c] : m[c], q[c] += v[c] * 0.0f;
          else
            for (int64_t c = 0; c < nc; c++) s[c] += (double)v[c];
          count++;
        }
      }
      if (is_max) {
        if (!exact)
          for (int64_t c = 0; c < nc; c++) nan |= q[c] != q[c];
        continue;
      }
      int64_t hend = RLX_MIN(y0 + kh, j->H + p->pad[0]), wend = RLX_MIN(x0 + kw, j->W + p->pad[1]);
      int64_t div = p->divisor_override ? p->divisor_override : p->count_include_pad ? (hend - y0) * (wend - x0) : count;
      double d = (double)div;
      for (int64_t c = 0; c < nc; c++) m[c] = div ? (float)(s[c] / d) : NAN;
    }
  }
  return nan;
}

static void nhwc_row_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const pool_job *j = ctx;
  const rlx_pool_params *p = j->p;
  if (p->kind == RLX_POOL_MAX && j->avx512 && p->kernel[0] <= RLX_POOL_ROWS_MAX) {
    int64_t b = t / j->OH, oy = t % j->OH, rows[RLX_POOL_ROWS_MAX];
    rlx_pool_nhwc_row r = {.rows = rows, .W = j->W, .C = j->C, .OW = j->OW, .sw = p->stride[1], .pw = p->pad[1],
                           .kw = p->kernel[1], .dw = p->dilation[1]};
    for (int64_t a = 0; a < p->kernel[0]; a++) {
      int64_t iy = oy * p->stride[0] - p->pad[0] + a * p->dilation[0];
      if (iy >= 0 && iy < j->H) rows[r.nrows++] = iy * j->W * j->C;
    }
    if (!rlx_pool_max_nhwc_row_avx512(j->x + b * j->H * j->W * j->C, j->y + t * j->OW * j->C, &r)) return;
  } else if (!nhwc_row(ctx, t, false)) {
    return;
  }
  nhwc_row(ctx, t, true); /* a NaN (or an infinity) read: the reference's step */
}

static rlx_status nhwc_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  pool_job j = {&n->p.pool, in[0].data, out[0].data, in[0].dims[1], in[0].dims[2], out[0].dims[1], out[0].dims[2], NULL,
                in[0].dims[3], rlx_cpu_avx512_math()};
  int64_t rows = in[0].dims[0] * j.OH;
  rlx_parallel_for(rows * j.OW * j.C >= 4096 ? x->tp : NULL, rows, nhwc_row_task, &j);
  return RLX_OK;
}

static rlx_status pool_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  int r = in[0].rank;
  pool_job j = {&n->p.pool, in[0].data, out[0].data, in[0].dims[r - 2], in[0].dims[r - 1], out[0].dims[r - 2],
                out[0].dims[r - 1], NULL, 0, false};
  int64_t planes = rlx_dims_prod(in[0].dims, 0, r - 2);
  j.scratch = x->scratch;
  bool is_max = n->p.pool.kind == RLX_POOL_MAX;
  const flat_masks *fm = x->packed;
  rlx_threadpool *tp = planes * j.OH * j.OW >= 4096 ? x->tp : NULL;
  if (fm && fm->H == j.H && fm->W == j.W && flat_ok(&n->p.pool, j.H, j.W, j.OH, j.OW)) { /* (the shapes it was made for) */
    flat_job fj = {&j, fm, planes, flat_chunk(j.H, j.W)};
    rlx_parallel_for(tp, (planes + fj.chunk - 1) / fj.chunk, flat_task, &fj);
    return RLX_OK;
  }
  rlx_task_fn fn = rows_ok(&n->p.pool, j.W) ? (is_max ? hmax_task : rows_task) : is_max ? max_plane : plane_task;
  rlx_parallel_for(tp, planes, fn, &j);
  return RLX_OK;
}

static size_t maxpool_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  const rlx_shape *xs = &rlx_in(g, n, 0)->shape, *ys = &g->values[n->out[0]].shape;
  int64_t H = xs->dims[xs->rank - 2], W = xs->dims[xs->rank - 1], OW = ys->dims[ys->rank - 1];
  size_t per = RLX_MAX(max_row_bytes(&n->p.pool, W, OW), hmax_bytes(H, OW));
  if (flat_ok(&n->p.pool, H, W, ys->dims[ys->rank - 2], OW)) per = RLX_MAX(per, flat_bytes(H, W));
  return per * (size_t)(threads > 0 ? threads : 1);
}

rlx_status rlx_cpu_try_pool(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k) {
  (void)sym;
  const rlx_value *xv = rlx_in(g, n, 0);
  if (n->p.pool.nd != 2 || n->n_out != 1 || xv->dtype != RLX_DTYPE_F32) return RLX_OK;
  if (n->p.pool.channels_last) {
    k->run = nhwc_run, k->fast = true, k->scratch = 0;
    k->name = n->p.pool.kind == RLX_POOL_MAX ? "f32_maxpool2d_nhwc" : "f32_avgpool2d_nhwc";
    return RLX_OK;
  }
  k->run = pool_run, k->fast = true, k->name = "f32_pool2d", k->scratch = 0;
  bool is_max = n->p.pool.kind == RLX_POOL_MAX;
  if (rows_ok(&n->p.pool, xv->shape.dims[xv->shape.rank - 1]) && !is_max) {
    k->name = "f32_avgpool2d_avx512";
  } else if (is_max) {
    k->name = rows_ok(&n->p.pool, xv->shape.dims[xv->shape.rank - 1]) ? "f32_maxpool2d_avx512" : "f32_maxpool2d_rows";
    k->scratch_for = maxpool_scratch_for;
    k->scratch = maxpool_scratch_for(g, n, threads);
  }
  const rlx_shape *ys = &g->values[n->out[0]].shape;
  int64_t H = xv->shape.dims[xv->shape.rank - 2], W = xv->shape.dims[xv->shape.rank - 1];
  if (flat_ok(&n->p.pool, H, W, ys->dims[ys->rank - 2], ys->dims[ys->rank - 1])) {
    if (!(k->packed = flat_make(&n->p.pool, H, W)))
      return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory for the pool masks of node '%s'", n->label);
    k->name = is_max ? "f32_maxpool2d_flat_avx512" : "f32_avgpool2d_flat_avx512";
  }
  return RLX_OK;
}
