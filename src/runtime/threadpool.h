/*
 * threadpool.h — the runtime's one persistent thread pool (per session).
 *
 * rlx_parallel_for(tp, n, fn, ctx) runs fn(ctx, i, worker) for every i in
 * [0, n), spreading the indices over the pool's threads (the calling thread
 * works too) and returns when all are done. Thread t starts on the t-th of
 * `size` contiguous shares of [0, n), in order, and a thread that finishes
 * its share takes tasks from the end of the others', so uneven tasks balance
 * themselves. Number tasks in the order of the memory they write: the same
 * thread then writes (and the next node reads) the same part of each
 * activation. `worker` is in [0, size) and lets a task use per-thread
 * scratch. Kernels never create threads; they receive the pool from the run
 * loop.
 */
#ifndef RLX_THREADPOOL_H
#define RLX_THREADPOOL_H

#include "core/core.h"

typedef struct rlx_threadpool rlx_threadpool;

/* n_threads: total threads including the caller; 0 means one per core. */
rlx_status rlx_threadpool_create(int n_threads, rlx_threadpool **out);
void rlx_threadpool_destroy(rlx_threadpool *tp);
/* Threads taking part in rlx_parallel_for (1 for a NULL pool). */
int rlx_threadpool_size(const rlx_threadpool *tp);

typedef void (*rlx_task_fn)(void *ctx, int64_t i, int worker);
/* A NULL pool runs everything on the calling thread. */
void rlx_parallel_for(rlx_threadpool *tp, int64_t n, rlx_task_fn fn, void *ctx);

/* How many regions rlx_parallel_for has spread over the pool's threads (a
 * barrier each: the caller waits for the last task), for profiles. */
uint64_t rlx_threadpool_regions(const rlx_threadpool *tp);

/* Cores available to this process. */
int rlx_cpu_count(void);

#endif
