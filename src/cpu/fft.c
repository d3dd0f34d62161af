/*
 * fft.c — the fft op on the thread pool: the node's tables built once per
 * run, then the lines (ops/fft.h) split into contiguous chunks, one task
 * each, every worker with its own work block. Each line is transformed by
 * the reference kernel's own code, so the outputs are bit-identical to it.
 *
 *   scratch: [tables][work for worker 0][work for worker 1]...
 */
#include "cpu/select.h"
#include "ops/fft.h"
#include "ops/ops_util.h"

/* Below this many line elements (lines x n) one thread does it all. */
#define FFT_PARALLEL_MIN 16384

typedef struct fft_job {
  const rlx_fft_params *p;
  const rlx_tensor_view *x;
  rlx_tensor_view *y;
  rlx_fft_tables tb;
  char *work;
  size_t per_worker;
  int64_t lines, per_task;
} fft_job;

static void fft_task(void *ctx, int64_t t, int worker) {
  const fft_job *j = ctx;
  int64_t first = t * j->per_task, count = RLX_MIN(j->per_task, j->lines - first);
  rlx_fft_run_lines(j->p, j->x, j->y, &j->tb, j->work + j->per_worker * (size_t)worker, first, count);
}

static rlx_status fft_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  fft_job j = {.p = &n->p.fft, .x = &in[0], .y = &out[0]};
  rlx_fft_tables_build(&j.tb, j.p, x->scratch);
  j.work = (char *)x->scratch + rlx_fft_tables_bound(j.p->n);
  j.per_worker = rlx_fft_work_bound(j.p->n);
  j.lines = rlx_fft_lines(j.p, &in[0]);
  if (j.lines == 0) return RLX_OK;
  int threads = rlx_threadpool_size(x->tp);
  bool parallel = threads > 1 && j.lines > 1 && j.lines * j.p->n >= FFT_PARALLEL_MIN;
  int64_t tasks = parallel ? RLX_MIN(j.lines, 4 * (int64_t)threads) : 1;
  j.per_task = (j.lines + tasks - 1) / tasks;
  rlx_parallel_for(parallel ? x->tp : NULL, (j.lines + j.per_task - 1) / j.per_task, fft_task, &j);
  return RLX_OK;
}

static size_t fft_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  (void)g;
  return rlx_fft_tables_bound(n->p.fft.n) + (size_t)(threads > 0 ? threads : 1) * rlx_fft_work_bound(n->p.fft.n);
}

rlx_status rlx_cpu_try_fft(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k) {
  (void)sym;
  const rlx_value *x = rlx_in(g, n, 0);
  if (x->dtype != RLX_DTYPE_F32 && x->dtype != RLX_DTYPE_F64) return RLX_OK;
  k->run = fft_run, k->fast = true, k->name = x->dtype == RLX_DTYPE_F32 ? "f32_fft_lines" : "f64_fft_lines";
  k->scratch_for = fft_scratch_for;
  k->scratch = fft_scratch_for(g, n, threads);
  return RLX_OK;
}
