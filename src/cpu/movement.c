/*
 * movement.c — the fast permute, expand and slice (any dtype: elements moved as
 * 1/2/4/8-byte words), both a strided copy; concat and gather (embedding
 * rows), copies of contiguous runs split over the pool; pad (every mode),
 * each output row's in-range part one copy. Adjacent axes that stay adjacent and in order are merged first, so
 * attention's [B, S, H, D] -> [B, H, S, D] becomes a copy of contiguous
 * D-element runs; a permute that moves the innermost axis gathers with a
 * stride. Rows of the output are split over the pool.
 */
#include <string.h>

#include "cpu/gemm.h"
#include "cpu/select.h"
#include "ops/ops_util.h"

typedef struct perm_job {
  int rank;                 /* after merging */
  int64_t dims[RLX_MAX_RANK], st[RLX_MAX_RANK]; /* output dims; input stride (elements) per output axis */
  const char *x;
  char *y;
  size_t es;
  int64_t rows, row_len;    /* output rows = all axes but the last */
} perm_job;

static void perm_rows(void *ctx, int64_t t, int worker) {
  (void)worker;
  const perm_job *j = ctx;
  int64_t r0 = t * 64, r1 = RLX_MIN(r0 + 64, j->rows), L = j->row_len, s = j->st[j->rank - 1];
  int64_t idx[RLX_MAX_RANK], off = 0, rem = r0;
  for (int a = j->rank - 2; a >= 0; a--) idx[a] = rem % j->dims[a], rem /= j->dims[a], off += idx[a] * j->st[a];
  for (int64_t r = r0; r < r1; r++) {
    char *dst = j->y + (size_t)(r * L) * j->es;
    if (s == 1) {
      memcpy(dst, j->x + (size_t)off * j->es, (size_t)L * j->es);
    } else {
      switch (j->es) {
#define GATHER(T)                                                                         \
  for (int64_t i = 0; i < L; i++) ((T *)dst)[i] = ((const T *)j->x)[off + i * s]; \
  break;
        case 1: GATHER(uint8_t)
        case 2: GATHER(uint16_t)
        case 4: GATHER(uint32_t)
        default: GATHER(uint64_t)
#undef GATHER
      }
    }
    for (int a = j->rank - 2; a >= 0; a--) { /* odometer over the outer axes */
      off += j->st[a];
      if (++idx[a] < j->dims[a]) break;
      off -= idx[a] * j->st[a];
      idx[a] = 0;
    }
  }
}

/* The two inner output axes swapped in the input (NCHW <-> NHWC): y [outer,
 * A, B] = x [outer, B, A], in 32 x 32 tiles (their 32 input rows stay in
 * L1 while the tile is written row by row); narrower rows (3 channels) in
 * taller tiles, so a tile is never a handful of elements. */
#define TILE 32

typedef struct tr_job {
  const char *x;
  char *y;
  size_t es;
  int64_t outer, A, B, xo, tile_a, tile_b, tiles_a, tiles_b; /* xo: input stride of the outer index; a tile:
                                                               * tile_a output rows by tile_b columns */
  bool avx512; /* 4-byte tiles on rlx_f32_transpose__avx512 */
} tr_job;

RLX_VEC_CLONES static void tr_tile4(uint32_t *restrict y, const uint32_t *restrict x, int64_t A, int64_t B, int64_t na,
                                    int64_t nb) {
  for (int64_t i = 0; i < na; i++)
    for (int64_t j = 0; j < nb; j++) y[i * B + j] = x[j * A + i];
}

/* B = 2 (shufflenet's channel shuffle in NHWC: per pixel [2, A] -> [A, 2]): rows of two runs interleaved,
 * `tile_a` outer rows a task. */
RLX_VEC_CLONES static void interleave2(uint32_t *restrict y, const uint32_t *restrict x0, const uint32_t *restrict x1,
                                       int64_t A) {
  for (int64_t i = 0; i < A; i++) y[2 * i] = x0[i], y[2 * i + 1] = x1[i];
}

static void interleave_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const tr_job *j = ctx;
  for (int64_t o = t * j->tile_a, end = RLX_MIN(j->outer, o + j->tile_a); o < end; o++) {
    const uint32_t *x = (const uint32_t *)j->x + o * j->xo;
    interleave2((uint32_t *)j->y + o * 2 * j->A, x, x + j->A, j->A);
  }
}

static void tr_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const tr_job *j = ctx;
  int64_t per = j->tiles_a * j->tiles_b, o = t / per, ta = (t % per) / j->tiles_b, tb = t % j->tiles_b;
  int64_t a0 = ta * j->tile_a, b0 = tb * j->tile_b, na = RLX_MIN(j->tile_a, j->A - a0), nb = RLX_MIN(j->tile_b, j->B - b0);
  size_t es = j->es;
  const char *x = j->x + (size_t)(o * j->xo + b0 * j->A + a0) * es;
  char *y = j->y + (size_t)(o * j->A * j->B + a0 * j->B + b0) * es;
  if (es == 4 && j->avx512) { /* 16x16 blocks through registers: bits moved, never computed on */
    rlx_f32_transpose__avx512((const float *)x, j->A, nb, na, (float *)y, j->B, false);
    return;
  }
  if (es == 4) {
    tr_tile4((uint32_t *)y, (const uint32_t *)x, j->A, j->B, na, nb);
    return;
  }
  for (int64_t i = 0; i < na; i++)
    for (int64_t k = 0; k < nb; k++) memcpy(y + (size_t)(i * j->B + k) * es, x + (size_t)(k * j->A + i) * es, es);
}

/* y (contiguous, dims) = x read with stride st[i] (elements) along output axis i. */
static void strided_copy(rlx_threadpool *tp, const rlx_tensor_view *out, const int64_t *st, const void *x, size_t es) {
  perm_job j = {.x = x, .y = out->data, .es = es};
  /* merge output axes i-1, i when the input is contiguous across them (or
   * broadcasts both); size-1 axes drop */
  for (int i = 0; i < out->rank; i++) {
    int64_t d = out->dims[i], s = st[i];
    if (d == 1) continue;
    if (j.rank > 0 && j.st[j.rank - 1] == s * d) {
      j.dims[j.rank - 1] *= d;
      j.st[j.rank - 1] = s;
    } else {
      j.dims[j.rank] = d, j.st[j.rank] = s, j.rank++;
    }
  }
  if (j.rank == 0) j.dims[0] = 1, j.st[0] = 1, j.rank = 1;
  j.row_len = j.dims[j.rank - 1];
  j.rows = rlx_view_numel(out) / (j.row_len ? j.row_len : 1);
  if (j.row_len == 0 || j.rows == 0) return;
  int r = j.rank;
  if (r >= 2 && j.st[r - 2] == 1 && j.st[r - 1] == j.dims[r - 2] && j.dims[r - 2] > 1 &&
      (r == 2 || j.st[r - 3] == j.dims[r - 2] * j.dims[r - 1]) && (r <= 3)) { /* a transpose of the inner two */
    tr_job t = {.x = x, .y = out->data, .es = es, .outer = r == 3 ? j.dims[0] : 1, .A = j.dims[r - 2],
                .B = j.dims[r - 1], .xo = r == 3 ? j.st[0] : 0,
                .avx512 = rlx_sgemm_isa_avx512(rlx_sgemm_active())};
    if (t.B == 2 && es == 4) { /* rows of 2: an interleave, about 4096 elements a task */
      t.tile_a = RLX_MAX(1, 2048 / t.A);
      rlx_parallel_for(j.rows * j.row_len >= 32768 ? tp : NULL, (t.outer + t.tile_a - 1) / t.tile_a, interleave_task, &t);
      return;
    }
    if (t.avx512 && es == 4) { /* long runs on both sides, about 32 KiB a tile (docs/design.md, "Layout") */
      t.tile_a = RLX_MIN(t.A, 256);
      t.tile_b = RLX_MAX(32, RLX_MIN(512, 8192 / t.tile_a / 16 * 16));
    } else {
      t.tile_a = t.B < TILE ? TILE * TILE / t.B : TILE; /* narrow rows (3 channels): taller tiles */
      t.tile_b = TILE;
    }
    t.tiles_a = (t.A + t.tile_a - 1) / t.tile_a, t.tiles_b = (t.B + t.tile_b - 1) / t.tile_b;
    int64_t tasks = t.outer * t.tiles_a * t.tiles_b;
    rlx_parallel_for(j.rows * j.row_len >= 32768 ? tp : NULL, tasks, tr_task, &t);
    return;
  }
  int64_t tasks = (j.rows + 63) / 64;
  rlx_parallel_for(j.rows * j.row_len >= 32768 ? tp : NULL, tasks, perm_rows, &j);
}

static rlx_status perm_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  rlx_shape xs = rlx_view_shape(&in[0]);
  int64_t xst[RLX_MAX_RANK], st[RLX_MAX_RANK];
  rlx_shape_strides(&xs, xst);
  for (int i = 0; i < out[0].rank; i++) st[i] = xst[n->p.permute.perm[i]];
  strided_copy(x->tp, &out[0], st, in[0].data, rlx_dtype_size(in[0].dtype));
  return RLX_OK;
}

static rlx_status expand_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  (void)n;
  rlx_shape xs = rlx_view_shape(&in[0]), os = rlx_view_shape(&out[0]);
  int64_t st[RLX_MAX_RANK];
  rlx_broadcast_strides(&xs, &os, st); /* 0 along broadcast axes */
  strided_copy(x->tp, &out[0], st, in[0].data, rlx_dtype_size(in[0].dtype));
  return RLX_OK;
}

/* A slice is the strided copy of a window: x from `start` along the axis,
 * `step` times its stride (a split of qkv: three copies of contiguous runs). */
static rlx_status slice_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  const rlx_slice_params *p = &n->p.slice;
  rlx_shape xs = rlx_view_shape(&in[0]);
  int64_t st[RLX_MAX_RANK];
  rlx_shape_strides(&xs, st);
  size_t es = rlx_dtype_size(in[0].dtype);
  if (rlx_view_numel(&out[0]) == 0) return RLX_OK;
  const char *base = (const char *)in[0].data + (size_t)(p->start * st[p->axis]) * es;
  st[p->axis] *= p->step;
  strided_copy(x->tp, &out[0], st, base, es);
  return RLX_OK;
}

/* ---- concat and gather: runs of contiguous bytes ---- */

typedef struct runs_job {
  const rlx_node *n;
  const rlx_tensor_view *in;
  rlx_tensor_view *out;
  int64_t outer, inner, per; /* per: concat, output elements a task copies */
  size_t es;
} runs_job;

/* Concat: task t copies elements [t * per, (t + 1) * per) of the flattened output, piece by piece (each
 * piece one input's part of one outer row), so the copy splits evenly whatever the number of outer rows:
 * a channel concat of one image (densenet's, inception's) is a single outer row, which had been one task. */
static void concat_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const runs_job *j = ctx;
  int ax = j->n->p.axis.axis;
  int64_t row = j->out->dims[ax] * j->inner, end = RLX_MIN(j->outer * row, (t + 1) * j->per);
  for (int64_t e = t * j->per; e < end;) {
    int64_t o = e / row, w = e % row, at = 0; /* at: where input k's part of the row starts */
    int k = 0;
    for (;; k++) {
      int64_t len = j->in[k].dims[ax] * j->inner;
      if (w < at + len) break;
      at += len;
    }
    for (; e < end && k < j->n->n_in; k++) { /* this row's pieces from input k on */
      int64_t len = j->in[k].dims[ax] * j->inner, n = RLX_MIN(end - e, at + len - w);
      if (n > 0)
        memcpy((char *)j->out->data + (size_t)e * j->es,
               (const char *)j->in[k].data + (size_t)(o * len + (w - at)) * j->es, (size_t)n * j->es);
      e += n, w += n, at += len;
    }
  }
}

static rlx_status concat_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  int ax = n->p.axis.axis;
  runs_job j = {.n = n, .in = in, .out = out, .outer = rlx_dims_prod(out[0].dims, 0, ax),
                .inner = rlx_dims_prod(out[0].dims, ax + 1, out[0].rank), .es = rlx_dtype_size(out[0].dtype)};
  int64_t total = j.outer * out[0].dims[ax] * j.inner;
  if (total == 0) return RLX_OK;
  j.per = 16384; /* elements a task */
  int64_t tasks = (total + j.per - 1) / j.per;
  rlx_parallel_for(total >= 32768 ? x->tp : NULL, tasks, concat_task, &j);
  return RLX_OK;
}

static void gather_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const runs_job *j = ctx;
  int ax = j->n->p.gather.axis;
  int64_t D = j->in[0].dims[ax], I = rlx_view_numel(&j->in[1]), o = t / I, i = t % I, k;
  if (rlx_resolve_index(rlx_load_i64(j->in[1].data, j->in[1].dtype, i), D, j->n->p.gather.wrap_negative, &k))
    return; /* checked before the region */
  size_t bytes = (size_t)j->inner * j->es;
  memcpy((char *)j->out->data + (size_t)(o * I + i) * bytes, (const char *)j->in[0].data + (size_t)(o * D + k) * bytes,
         bytes);
}

static rlx_status gather_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  int ax = n->p.gather.axis;
  runs_job j = {.n = n, .in = in, .out = out, .outer = rlx_dims_prod(in[0].dims, 0, ax),
                .inner = rlx_dims_prod(in[0].dims, ax + 1, in[0].rank), .es = rlx_dtype_size(in[0].dtype)};
  int64_t I = rlx_view_numel(&in[1]), D = in[0].dims[ax], k;
  for (int64_t i = 0; i < I; i++) { /* every index first: an error before any copy, as the reference */
    rlx_status st = rlx_resolve_index(rlx_load_i64(in[1].data, in[1].dtype, i), D, n->p.gather.wrap_negative, &k);
    if (st) return st;
  }
  int64_t tasks = j.outer * I;
  if (tasks == 0 || j.inner == 0) return RLX_OK;
  rlx_parallel_for(tasks * j.inner >= 32768 && tasks > 1 ? x->tp : NULL, tasks, gather_task, &j);
  return RLX_OK;
}

/* index_put(x, values, idx) along one axis with a 1-D index and values of
 * x's shape but idx's length there, no accumulation: an index_copy, which a
 * KV cache's update is. The index is checked whole first (the reference's
 * error), then each row block is one memcpy; out == x (a state updated in
 * place) skips the copy of x. Any other form runs the reference kernel. */
static rlx_status index_put_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                                const rlx_exec *x) {
  const rlx_index_put_params *p = &n->p.index_put;
  int a = p->indexed ? __builtin_ctz(p->indexed) : -1, r = in[0].rank;
  const rlx_tensor_view *iv = &in[2];
  bool rows = n->n_in == 3 && a >= 0 && (p->indexed & (p->indexed - 1)) == 0 && !p->accumulate && iv->rank == 1 &&
              in[1].rank == r && a < r;
  for (int d = 0; rows && d < r; d++) rows = in[1].dims[d] == (d == a ? iv->dims[0] : in[0].dims[d]);
  if (!rows) return rlx_reference_kernel(n, in, out, x);
  size_t es = rlx_dtype_size(in[0].dtype);
  int64_t J = iv->dims[0], D = in[0].dims[a], outer = rlx_dims_prod(in[0].dims, 0, a);
  size_t inner = (size_t)rlx_dims_prod(in[0].dims, a + 1, r) * es;
  int64_t *pos = x->scratch;
  for (int64_t j = 0; j < J; j++) {
    rlx_status st = rlx_resolve_index(rlx_load_i64(iv->data, iv->dtype, j), D, true, &pos[j]);
    if (st) return st;
  }
  if (out[0].data != in[0].data) memcpy(out[0].data, in[0].data, (size_t)rlx_view_numel(&in[0]) * es);
  char *o = out[0].data;
  const char *v = in[1].data;
  for (int64_t b = 0; b < outer; b++)
    for (int64_t j = 0; j < J; j++)
      memcpy(o + ((size_t)(b * D + pos[j])) * inner, v + ((size_t)(b * J + j)) * inner, inner);
  return RLX_OK;
}

/* scratch: the resolved index, one int64 per entry (at most the indexed axis's
 * bound... the index's length at this binding) */
static size_t index_put_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  (void)threads;
  const rlx_value *iv = n->n_in == 3 ? rlx_in(g, n, 2) : NULL;
  size_t ref = rlx_op_table[n->op].vt->scratch ? rlx_op_table[n->op].vt->scratch(g, n) : 0;
  size_t mine = iv ? sizeof(int64_t) * (size_t)rlx_shape_numel(&iv->shape) : 0;
  return (mine > ref ? mine : ref) + 64;
}

rlx_status rlx_cpu_try_index_put(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads,
                                 rlx_kernel *k) {
  (void)sym;
  size_t es = rlx_dtype_size(rlx_in(g, n, 0)->dtype);
  if (n->n_in != 3 || (es != 1 && es != 2 && es != 4 && es != 8)) return RLX_OK;
  rlx_dtype it = rlx_in(g, n, 2)->dtype;
  if (it != RLX_DTYPE_I64 && it != RLX_DTYPE_I32 && it != RLX_DTYPE_I16 && it != RLX_DTYPE_I8 && it != RLX_DTYPE_U8)
    return RLX_OK;
  k->run = index_put_run, k->name = "index_put_rows", k->fast = true;
  k->scratch_for = index_put_scratch_for;
  k->scratch = index_put_scratch_for(g, n, threads);
  return RLX_OK;
}

/* Pad (any mode): each output row (the last axis) is the fill where an outer axis maps to the padding of
 * constant mode, else the source row's in-range part copied whole, its padding (fill, or reflect / replicate
 * / circular elements from rlx_pad_src) element by element. Rows split over the pool. */
typedef struct pad_job {
  const rlx_pad_params *p;
  int rank;
  int64_t odims[RLX_MAX_RANK], xdims[RLX_MAX_RANK], xst[RLX_MAX_RANK];
  const char *x;
  char *y;
  size_t es;
  char fill[8];
  int64_t rows, per; /* output rows, rows a task */
} pad_job;

static void pad_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const pad_job *j = ctx;
  const rlx_pad_params *p = j->p;
  int r = j->rank, last = r - 1;
  int64_t L = j->odims[last], D = j->xdims[last], lo = p->lo[last];
  int64_t r0 = t * j->per, r1 = RLX_MIN(r0 + j->per, j->rows);
  /* the in-range part of every row: output [c0, c1) from source c0 - lo */
  int64_t c0 = RLX_MAX(lo, 0), c1 = RLX_MIN(lo + D, L);
  if (c1 < c0) c1 = c0;
  for (int64_t row = r0; row < r1; row++) {
    char *dst = j->y + (size_t)(row * L) * j->es;
    int64_t rem = row, off = 0;
    bool fill = false;
    for (int d = last - 1; d >= 0; d--) {
      int64_t jd = rem % j->odims[d];
      rem /= j->odims[d];
      int64_t s = rlx_pad_src(p->mode, jd, p->lo[d], j->xdims[d]);
      if (s < 0) fill = true;
      else off += s * j->xst[d];
    }
    for (int64_t c = 0; c < L; c++) {
      if (!fill && c == c0 && c1 > c0) { /* the run inside the source row */
        memcpy(dst + (size_t)c0 * j->es, j->x + (size_t)(off + c0 - lo) * j->es, (size_t)(c1 - c0) * j->es);
        c = c1 - 1;
        continue;
      }
      int64_t s = fill ? -1 : rlx_pad_src(p->mode, c, lo, D);
      memcpy(dst + (size_t)c * j->es, s < 0 ? j->fill : j->x + (size_t)(off + s) * j->es, j->es);
    }
  }
}

static rlx_status pad_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  pad_job j = {.p = &n->p.pad, .rank = out[0].rank, .x = in[0].data, .y = out[0].data,
               .es = rlx_dtype_size(in[0].dtype)};
  int64_t N = rlx_view_numel(&out[0]);
  if (N == 0) return RLX_OK;
  if (j.rank == 0) {
    memcpy(j.y, j.x, j.es);
    return RLX_OK;
  }
  rlx_shape xs = rlx_view_shape(&in[0]);
  rlx_shape_strides(&xs, j.xst);
  for (int d = 0; d < j.rank; d++) j.odims[d] = out[0].dims[d], j.xdims[d] = in[0].dims[d];
  if (rlx_dtype_is_float(in[0].dtype)) rlx_store_f64(j.fill, in[0].dtype, 0, j.p->value);
  else rlx_store_i64(j.fill, in[0].dtype, 0, (int64_t)j.p->value);
  int64_t L = j.odims[j.rank - 1];
  j.rows = N / L;
  j.per = RLX_MAX(1, 16384 / L);
  rlx_parallel_for(N >= 32768 ? x->tp : NULL, (j.rows + j.per - 1) / j.per, pad_task, &j);
  return RLX_OK;
}

rlx_status rlx_cpu_try_movement(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k) {
  (void)sym;
  (void)threads;
  size_t es = rlx_dtype_size(rlx_in(g, n, 0)->dtype);
  if (es != 1 && es != 2 && es != 4 && es != 8) return RLX_OK;
  if (n->op == RLX_OP_PERMUTE) k->run = perm_run, k->name = "permute_runs";
  else if (n->op == RLX_OP_EXPAND) k->run = expand_run, k->name = "expand_runs";
  else if (n->op == RLX_OP_SLICE) k->run = slice_run, k->name = "slice_runs";
  else if (n->op == RLX_OP_CONCAT) k->run = concat_run, k->name = "concat_runs";
  else if (n->op == RLX_OP_PAD) k->run = pad_run, k->name = "pad_rows";
  else if (n->op == RLX_OP_GATHER) {
    rlx_dtype it = rlx_in(g, n, 1)->dtype; /* the index dtypes rlx_load_i64 reads */
    if (it != RLX_DTYPE_I64 && it != RLX_DTYPE_I32 && it != RLX_DTYPE_I16 && it != RLX_DTYPE_I8 && it != RLX_DTYPE_U8)
      return RLX_OK;
    k->run = gather_run, k->name = "gather_rows";
  } else return RLX_OK;
  k->fast = true;
  return RLX_OK;
}
