/*
 * fused.c — the fast kernel of a fused elementwise chain (ops/fused.c): one
 * pass over the output in tiles of TILE elements that stay in L1, every step
 * evaluated over the tile before the next, so a chain of k nodes reads its
 * inputs and writes its output once instead of k times.
 *
 * The output's axes are collapsed where every input is contiguous across
 * them (or broadcasts along both), leaving rows along which each input is
 * contiguous (stride 1), one repeated element (stride 0), or, rarely,
 * strided (gathered). Inputs contiguous along the row are read in place;
 * the last step writes the output in place. Each step runs the loop the
 * unfused node's fast kernel runs (cpu/eltwise.c) or, for the kinds without
 * one, the reference formula, so a fused graph computes exactly what the
 * unfused graph computes with fast kernels.
 */
#include <math.h>
#include <string.h>

#include "cpu/select.h"
#include "ops/ops_util.h"

#define TILE 256
#define CHUNK 16384 /* output elements per task */

typedef struct fused_job {
  const rlx_fused_params *p;
  int n_in, rank;
  int64_t dims[RLX_MAX_RANK];
  int64_t st[RLX_FUSED_MAX_IN][RLX_MAX_RANK]; /* per input, per collapsed axis */
  const float *x[RLX_FUSED_MAX_IN];
  float *y;
  int64_t N, L; /* elements; row length (the last collapsed axis) */
} fused_job;

RLX_VEC_CLONES static void binary_tile(rlx_binary_kind k, const float *a, const float *b, float *y, int n) {
  switch (k) {
    case RLX_BINARY_ADD: for (int i = 0; i < n; i++) y[i] = a[i] + b[i]; return;
    case RLX_BINARY_SUB: for (int i = 0; i < n; i++) y[i] = a[i] - b[i]; return;
    case RLX_BINARY_MUL: for (int i = 0; i < n; i++) y[i] = a[i] * b[i]; return;
    case RLX_BINARY_DIV: for (int i = 0; i < n; i++) y[i] = a[i] / b[i]; return;
    default: for (int i = 0; i < n; i++) y[i] = (float)rlx_binary_apply(k, a[i], b[i], false); return;
  }
}

/* Evaluates the program over one row segment of n <= TILE elements. */
static void segment(const fused_job *j, const int64_t *off, int64_t col, int n, float *y,
                    float (*reg)[TILE], float (*buf)[TILE]) {
  const rlx_fused_params *p = j->p;
  const float *in[RLX_FUSED_MAX_IN];
  int r = j->rank - 1;
  for (int k = 0; k < j->n_in; k++) {
    const float *base = j->x[k] + off[k];
    int64_t s = j->st[k][r];
    if (s == 1) {
      in[k] = base + col;
    } else if (s == 0) {
      float v = base[0];
      for (int e = 0; e < n; e++) buf[k][e] = v;
      in[k] = buf[k];
    } else {
      for (int e = 0; e < n; e++) buf[k][e] = base[(col + e) * s];
      in[k] = buf[k];
    }
  }
  for (int s = 0; s < p->n_steps; s++) {
    const rlx_fused_step *t = &p->steps[s];
    float *dst = s == p->n_steps - 1 ? y : reg[s];
    const float *a = t->src[0] >= 0 ? in[t->src[0]] : reg[-t->src[0] - 1];
    if (t->op == RLX_OP_UNARY) {
      if (!rlx_cpu_unary_f32(&t->p.unary, a, dst, n))
        for (int e = 0; e < n; e++) dst[e] = (float)rlx_unary_apply(&t->p.unary, a[e], false);
    } else {
      const float *b = t->src[1] >= 0 ? in[t->src[1]] : reg[-t->src[1] - 1];
      binary_tile(t->p.binary.kind, a, b, dst, n);
    }
  }
}

static void fused_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const fused_job *j = ctx;
  float reg[RLX_FUSED_MAX_STEPS][TILE], buf[RLX_FUSED_MAX_IN][TILE];
  int64_t i = t * CHUNK, end = RLX_MIN(j->N, i + CHUNK), L = j->L;
  while (i < end) {
    int64_t row = i / L, col = i - row * L, rem = row;
    int64_t off[RLX_FUSED_MAX_IN] = {0};
    for (int d = j->rank - 2; d >= 0; d--) { /* the row's offset in each input */
      int64_t idx = rem % j->dims[d];
      rem /= j->dims[d];
      for (int k = 0; k < j->n_in; k++) off[k] += idx * j->st[k][d];
    }
    int64_t stop = RLX_MIN(end, (row + 1) * L);
    while (i < stop) {
      int n = (int)RLX_MIN(TILE, stop - i);
      segment(j, off, col, n, j->y + i, reg, buf);
      i += n, col += n;
    }
  }
}

static rlx_status fused_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  fused_job j = {.p = &n->p.fused, .n_in = n->n_in, .y = out[0].data};
  rlx_shape os = rlx_view_shape(&out[0]);
  int64_t st[RLX_FUSED_MAX_IN][RLX_MAX_RANK];
  for (int k = 0; k < n->n_in; k++) {
    rlx_shape is = rlx_view_shape(&in[k]);
    rlx_broadcast_strides(&is, &os, st[k]);
    j.x[k] = in[k].data;
  }
  for (int i = 0; i < os.rank; i++) { /* collapse axes every input walks alike */
    int64_t d = os.dims[i];
    if (d == 1) continue;
    bool merge = j.rank > 0;
    for (int k = 0; k < n->n_in && merge; k++) merge = j.st[k][j.rank - 1] == st[k][i] * d;
    int r = merge ? j.rank - 1 : j.rank++;
    j.dims[r] = merge ? j.dims[r] * d : d;
    for (int k = 0; k < n->n_in; k++) j.st[k][r] = st[k][i];
  }
  if (j.rank == 0) {
    j.dims[0] = 1, j.rank = 1;
    for (int k = 0; k < n->n_in; k++) j.st[k][0] = 0;
  }
  j.N = rlx_view_numel(&out[0]);
  j.L = j.dims[j.rank - 1];
  if (j.N == 0) return RLX_OK;
  int64_t tasks = (j.N + CHUNK - 1) / CHUNK;
  rlx_parallel_for(tasks > 1 ? x->tp : NULL, tasks, fused_task, &j);
  return RLX_OK;
}

rlx_status rlx_cpu_try_fused(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k) {
  (void)sym;
  (void)g, (void)threads;
  k->run = fused_run, k->fast = true, k->name = "f32_fused_eltwise", k->scratch = 0;
  return RLX_OK;
}
