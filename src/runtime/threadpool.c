/*
 * threadpool.c — a fixed set of worker threads (see threadpool.h).
 *
 * One atomic word holds the region's state: its generation, a closed bit and
 * the number of workers that joined it. The caller publishes a region by
 * bumping the generation; a worker that sees it joins (a compare-and-swap,
 * refused once the region is closed), runs tasks, and leaves. The caller
 * runs tasks too; when none are left it closes the region and waits only
 * for the workers that joined and are still finishing a task. A worker that
 * was preempted before it joined (the machine is shared) never holds the
 * caller up: its share is taken by the others and it finds the region
 * closed. Between regions a worker spins briefly (a model runs many regions
 * back to back, and a wake-up through the kernel costs tens of
 * microseconds), then sleeps on a condition variable; the caller only takes
 * the lock to wake sleepers.
 *
 * Tasks are dealt, not drawn: thread t owns the contiguous share
 * [n*t/T, n*(t+1)/T) and runs it from the front; a thread whose share is done
 * takes tasks from the back of the others'. Kernels number their tasks in
 * the order of the memory they write, so thread t writes the same part of
 * every activation from one node to the next, and the next node reads it
 * from t's own cache. Drawing tasks from one counter scattered them: on this
 * two-core machine a megabyte written by the other core reads in 46-54 us,
 * one written by the reader in 14 us (docs/perf.md, "Tasks dealt, not drawn").
 */
#include <immintrin.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

#include "runtime/threadpool.h"

/* Pause rounds before sleeping: long enough to bridge the gap between the
 * regions of one kernel, short enough that a thread waiting on a preempted
 * peer gives its core up soon (an idle core lets the scheduler move the
 * preempted thread there; a spinning one does not). */
#define SPIN_ROUNDS 4000

/* state: generation << 32 | CLOSED | joined workers */
#define CLOSED ((uint64_t)1 << 31)
#define JOINED_MASK (CLOSED - 1)
#define GEN(s) ((s) >> 32)

struct rlx_threadpool {
  int size; /* threads taking part, including the caller */
  pthread_t *threads;
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  _Atomic bool caller_sleeps; /* the caller waits on `done` */
  _Atomic uint64_t state;     /* see above; a new generation is published with release */
  _Atomic int sleepers;       /* workers blocked on `wake` */
  _Atomic bool stop;
  /* the current region, written before its generation is published */
  rlx_task_fn fn;
  void *ctx;
  int64_t base;         /* the region's tasks are base + [0, n); the shares carry n */
  struct share *shares; /* [size]: each thread's part of the region's tasks */
  uint64_t regions; /* parallel regions run (each ends in a barrier); written by the caller only */
};

/* A thread's remaining tasks [lo, hi) in one word, hi << 32 | lo: the owner
 * takes lo, thieves take hi - 1, both by compare-and-swap. A line each, so the
 * owner's claims stay in its own cache. */
struct share {
  _Alignas(64) _Atomic uint64_t range;
};
#define SHARE_MAX ((int64_t)1 << 31) /* a region with more tasks is cut in rounds (see rlx_parallel_for) */

typedef struct worker_arg {
  rlx_threadpool *tp;
  int id;
} worker_arg;

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

/* Claims the front (own share) or the back (another's) of a share; -1 when it is empty. */
static int64_t claim(struct share *sh, bool front) {
  uint64_t r = atomic_load_explicit(&sh->range, memory_order_relaxed);
  for (;;) {
    uint64_t lo = r & 0xffffffffu, hi = r >> 32;
    if (lo >= hi) return -1;
    uint64_t nr = front ? r + 1 : (hi - 1) << 32 | lo;
    if (atomic_compare_exchange_weak_explicit(&sh->range, &r, nr, memory_order_relaxed, memory_order_relaxed))
      return (int64_t)(front ? lo : hi - 1);
  }
}

static void drain(rlx_threadpool *tp, int id) {
  int64_t i, base = tp->base;
  while ((i = claim(&tp->shares[id], true)) >= 0) tp->fn(tp->ctx, base + i, id);
  for (int d = 1; d < tp->size; d++) {
    struct share *v = &tp->shares[(id + d) % tp->size];
    while ((i = claim(v, false)) >= 0) tp->fn(tp->ctx, base + i, id);
  }
}

/* Waits until the generation moves past `seen` or the pool stops; returns the new one. */
static uint64_t wait_region(rlx_threadpool *tp, uint64_t seen) {
  for (int r = 1; r <= SPIN_ROUNDS; r++) {
    uint64_t g = GEN(atomic_load_explicit(&tp->state, memory_order_acquire));
    if (g != seen || atomic_load(&tp->stop)) return g;
    cpu_relax();
  }
  pthread_mutex_lock(&tp->mu);
  atomic_fetch_add(&tp->sleepers, 1);
  uint64_t g;
  while ((g = GEN(atomic_load(&tp->state))) == seen && !atomic_load(&tp->stop))
    pthread_cond_wait(&tp->wake, &tp->mu);
  atomic_fetch_sub(&tp->sleepers, 1);
  pthread_mutex_unlock(&tp->mu);
  return g;
}

/* Joins region `gen` unless it is closed or already past. */
static bool join(rlx_threadpool *tp, uint64_t gen) {
  uint64_t s = atomic_load_explicit(&tp->state, memory_order_acquire);
  while (GEN(s) == gen && !(s & CLOSED))
    if (atomic_compare_exchange_weak_explicit(&tp->state, &s, s + 1, memory_order_acquire, memory_order_acquire))
      return true;
  return false;
}

static void *worker_main(void *p) {
  worker_arg a = *(worker_arg *)p;
  rlx_free(p);
  rlx_threadpool *tp = a.tp;
  uint64_t seen = 0;
  for (;;) {
    seen = wait_region(tp, seen);
    if (atomic_load(&tp->stop)) break;
    if (!join(tp, seen)) continue;
    drain(tp, a.id);
    uint64_t s = atomic_fetch_sub_explicit(&tp->state, 1, memory_order_acq_rel) - 1;
    if ((s & JOINED_MASK) == 0 && (s & CLOSED) && atomic_load(&tp->caller_sleeps)) {
      pthread_mutex_lock(&tp->mu); /* the last one out wakes a sleeping caller */
      pthread_cond_signal(&tp->done);
      pthread_mutex_unlock(&tp->mu);
    }
  }
  return NULL;
}

int rlx_cpu_count(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int c = CPU_COUNT(&set);
    if (c > 0) return c > RLX_MAX_THREADS ? RLX_MAX_THREADS : c;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > RLX_MAX_THREADS ? RLX_MAX_THREADS : n > 0 ? (int)n : 1;
}

rlx_status rlx_threadpool_create(int n_threads, rlx_threadpool **out) {
  if (n_threads <= 0) n_threads = rlx_cpu_count();
  if (n_threads > RLX_MAX_THREADS) n_threads = RLX_MAX_THREADS; /* callers refuse more; see rlx.h */
  rlx_threadpool *tp = rlx_calloc(1, sizeof *tp);
  if (!tp) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory creating a thread pool");
  tp->size = n_threads;
  pthread_mutex_init(&tp->mu, NULL);
  pthread_cond_init(&tp->wake, NULL);
  pthread_cond_init(&tp->done, NULL);
  if (n_threads > 1 && (!(tp->threads = rlx_calloc((size_t)n_threads - 1, sizeof *tp->threads)) ||
                        !(tp->shares = rlx_aligned_alloc((size_t)n_threads * sizeof *tp->shares)))) {
    tp->size = 1; /* no worker started: none to join */
    rlx_threadpool_destroy(tp);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory creating a thread pool");
  }
  for (int i = 1; i < n_threads; i++) {
    worker_arg *a = rlx_malloc(sizeof *a);
    if (a) a->tp = tp, a->id = i;
    int err = a ? pthread_create(&tp->threads[i - 1], NULL, worker_main, a) : ENOMEM;
    if (err) {
      rlx_free(a);
      tp->size = i; /* the threads started so far are joined by destroy */
      rlx_threadpool_destroy(tp);
      return rlx_errorf(err == ENOMEM && !a ? RLX_ERR_OUT_OF_MEMORY : RLX_ERR_RUNTIME,
                        "cannot start worker thread %d of %d: %s", i, n_threads, strerror(err));
    }
  }
  *out = tp;
  return RLX_OK;
}

void rlx_threadpool_destroy(rlx_threadpool *tp) {
  if (!tp) return;
  pthread_mutex_lock(&tp->mu);
  atomic_store(&tp->stop, true);
  pthread_cond_broadcast(&tp->wake);
  pthread_mutex_unlock(&tp->mu);
  for (int i = 1; tp->threads && i < tp->size; i++) pthread_join(tp->threads[i - 1], NULL);
  pthread_mutex_destroy(&tp->mu);
  pthread_cond_destroy(&tp->wake);
  pthread_cond_destroy(&tp->done);
  rlx_free(tp->threads);
  rlx_aligned_free(tp->shares);
  rlx_free(tp);
}

int rlx_threadpool_size(const rlx_threadpool *tp) { return tp ? tp->size : 1; }

static bool joined(rlx_threadpool *tp) {
  return (atomic_load_explicit(&tp->state, memory_order_acquire) & JOINED_MASK) != 0;
}

/* One region: tasks base + [0, n), n <= SHARE_MAX, dealt in shares. */
static void region(rlx_threadpool *tp, int64_t base, int64_t n) {
  tp->base = base;
  tp->regions++;
  for (int t = 0; t < tp->size; t++) {
    uint64_t lo = (uint64_t)(n * t / tp->size), hi = (uint64_t)(n * (t + 1) / tp->size);
    atomic_store_explicit(&tp->shares[t].range, hi << 32 | lo, memory_order_relaxed);
  }
  uint64_t gen = GEN(atomic_load_explicit(&tp->state, memory_order_relaxed)) + 1;
  atomic_store(&tp->state, gen << 32); /* seq_cst: publishes the region; pairs with the sleepers check (Dekker) */
  if (atomic_load(&tp->sleepers) > 0) {
    pthread_mutex_lock(&tp->mu);
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->mu);
  }
  drain(tp, 0);
  /* no task left: close the region to latecomers, then wait for the workers
   * in it to finish their last task (spin a little, then sleep: one may
   * have been preempted by another process) */
  atomic_fetch_or_explicit(&tp->state, CLOSED, memory_order_acq_rel);
  for (int r = 0; r < SPIN_ROUNDS && joined(tp); r++) cpu_relax();
  if (joined(tp)) {
    pthread_mutex_lock(&tp->mu);
    atomic_store(&tp->caller_sleeps, true);
    while (joined(tp)) pthread_cond_wait(&tp->done, &tp->mu);
    atomic_store(&tp->caller_sleeps, false);
    pthread_mutex_unlock(&tp->mu);
  }
}

void rlx_parallel_for(rlx_threadpool *tp, int64_t n, rlx_task_fn fn, void *ctx) {
  if (n <= 0) return;
  if (!tp || tp->size == 1 || n == 1) {
    for (int64_t i = 0; i < n; i++) fn(ctx, i, 0);
    return;
  }
  tp->fn = fn, tp->ctx = ctx;
  for (int64_t base = 0; base < n; base += SHARE_MAX) region(tp, base, RLX_MIN(SHARE_MAX, n - base));
}

uint64_t rlx_threadpool_regions(const rlx_threadpool *tp) { return tp ? tp->regions : 0; }
