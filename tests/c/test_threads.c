/*
 * test_threads.c — the promise of include/rlx.h that an rlx_model and an
 * rlx_compiled are immutable and may be shared by threads, each thread
 * using its own sessions, and that rlx_last_error() is per thread.
 *
 * For each shipped model (mnist_cnn, tiny_llama) and each session pool size
 * (compile threads = 1 and 2): compile once, run once on this thread for the
 * reference bytes, then start N threads (RLX_TEST_THREADS, default 4) on the
 * one rlx_compiled. Runners keep a session for ITERS runs, destroying and
 * recreating it half way (then also binding their own output buffers);
 * creators create, run and destroy a session every iteration while the
 * runners run. Every output of every run must equal the reference bytes
 * (memcmp); a difference names the thread, iteration, output and first
 * differing element. Threads also compile the one rlx_model concurrently.
 *
 * Workers never use CHECK (its counter is not atomic): they count their own
 * failures and print them; the main thread checks the counts after joining.
 * Inputs come from reference.safetensors, mapped once and read by all.
 * Runs from the source root; ThreadSanitizer runs it in scripts/test.sh.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>

#include "import/safetensors.h"
#include "rlx.h"
#include "test.h"

#define MNIST "examples/models/mnist_cnn"
#define LLAMA "examples/models/tiny_llama"
#define ITERS 8
#define MAX_THREADS 64
#define MAX_OUTPUTS 8

/* What every worker shares, all read-only once the threads start. */
typedef struct shared {
  const char *dir;
  int pool;                 /* compile option threads: each session's pool size */
  const rlx_model *m;
  const rlx_compiled *c;
  const rlx_st_file *ref;   /* inputs as in::<input name> */
  int n_out;
  const void *want[MAX_OUTPUTS]; /* reference output bytes */
  size_t want_bytes[MAX_OUTPUTS], elem[MAX_OUTPUTS];
  pthread_barrier_t start;  /* all threads begin together */
} shared;

typedef enum role { RUNNER, CREATOR, COMPILER } role;

typedef struct worker {
  shared *sh;
  pthread_t thread;
  int id;
  role role;
  int failures;
  void *out[MAX_OUTPUTS];   /* this thread's output buffers (bound after the recreation) */
} worker;

static int thread_count(void) {
  const char *e = getenv("RLX_TEST_THREADS");
  int n = e && *e ? atoi(e) : 4;
  return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;
}

static const char *role_name(role r) { return r == RUNNER ? "runner" : r == CREATOR ? "creator" : "compiler"; }

static void fail(worker *w, int iter, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "  %s (pool %d): thread %d (%s), iteration %d: %s\n", w->sh->dir, w->sh->pool, w->id,
          role_name(w->role), iter, msg);
  w->failures++;
}

static rlx_tensor_view st_view(const rlx_st_tensor *t) {
  rlx_tensor_view v = {.data = (void *)t->data, .dtype = t->dtype, .rank = t->shape.rank};
  memcpy(v.dims, t->shape.dims, sizeof v.dims);
  return v;
}

/* Binds every input of s from the reference file. */
static rlx_status bind_inputs(rlx_session *s, const rlx_model *m, const rlx_st_file *ref) {
  for (int i = 0; i < rlx_model_input_count(m); i++) {
    rlx_io_info info;
    char key[256];
    rlx_status st = rlx_model_input_info(m, i, &info);
    if (st) return st;
    snprintf(key, sizeof key, "in::%s", info.name);
    const rlx_st_tensor *t = rlx_st_find(ref, key);
    if (!t) return RLX_ERR_NOT_FOUND;
    rlx_tensor_view v = st_view(t);
    if ((st = rlx_session_bind_input(s, info.name, &v))) return st;
  }
  return RLX_OK;
}

/* Compares `n` bytes with output k's reference; reports the first difference. */
static void compare(worker *w, int iter, int k, const char *what, const void *got, size_t n) {
  const shared *sh = w->sh;
  if (n != sh->want_bytes[k]) {
    fail(w, iter, "output %d (%s) has %zu bytes, the reference %zu", k, what, n, sh->want_bytes[k]);
    return;
  }
  if (!memcmp(got, sh->want[k], n)) return;
  const unsigned char *a = got, *b = sh->want[k];
  size_t i = 0;
  while (a[i] == b[i]) i++;
  fail(w, iter, "output %d (%s) differs from the single-threaded run first at element %zu", k, what,
       i / sh->elem[k]);
}

/* Checks every output of the last run of s (and the bound copies, if any). */
static void check_outputs(worker *w, rlx_session *s, int iter, bool bound) {
  for (int k = 0; k < w->sh->n_out; k++) {
    rlx_tensor_view v;
    rlx_status st = rlx_session_output(s, k, &v);
    if (st) {
      fail(w, iter, "rlx_session_output(%d): %s: %s", k, rlx_status_string(st), rlx_last_error());
      continue;
    }
    compare(w, iter, k, "session view", v.data, (size_t)rlx_view_numel(&v) * rlx_dtype_size(v.dtype));
    if (bound) compare(w, iter, k, "bound buffer", w->out[k], w->sh->want_bytes[k]);
  }
}

/* Creates a session on c with the inputs bound and, if `bound`, the outputs
 * bound to w's buffers. NULL (and a failure counted) on error. */
static rlx_session *open_session(worker *w, const rlx_compiled *c, int iter, bool bound) {
  const shared *sh = w->sh;
  rlx_session *s = NULL;
  rlx_status st = rlx_session_create(c, &s);
  if (!st) st = bind_inputs(s, sh->m, sh->ref);
  for (int k = 0; !st && bound && k < sh->n_out; k++) {
    rlx_io_info info = {0};
    char name[16];
    st = rlx_model_output_info(sh->m, k, &info);
    rlx_tensor_view v = {.data = w->out[k], .dtype = info.dtype, .rank = info.rank};
    memcpy(v.dims, info.dims, sizeof v.dims);
    snprintf(name, sizeof name, "%d", k);
    if (!st) st = rlx_session_bind_output(s, name, &v);
  }
  if (st) {
    fail(w, iter, "creating a session: %s: %s", rlx_status_string(st), rlx_last_error());
    rlx_session_destroy(s);
    return NULL;
  }
  return s;
}

static bool run(worker *w, rlx_session *s, int iter) {
  rlx_status st = rlx_session_run(s);
  if (st) fail(w, iter, "rlx_session_run: %s: %s", rlx_status_string(st), rlx_last_error());
  return !st;
}

/* RUNNER: one session for ITERS runs, recreated half way (outputs bound from
 * then on). CREATOR: a fresh session every iteration. COMPILER: compiles the
 * shared model itself, then runs like a creator on its own rlx_compiled. */
static void *worker_main(void *p) {
  worker *w = p;
  shared *sh = w->sh;
  pthread_barrier_wait(&sh->start);
  const rlx_compiled *c = sh->c;
  rlx_compiled *own = NULL;
  if (w->role == COMPILER) {
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.threads = sh->pool;
    rlx_status st = rlx_model_compile(sh->m, &o, &own);
    if (st) {
      fail(w, -1, "rlx_model_compile: %s: %s", rlx_status_string(st), rlx_last_error());
      return NULL;
    }
    c = own;
  }
  rlx_session *s = NULL;
  for (int it = 0; it < ITERS; it++) {
    bool bound = w->role == RUNNER && it >= ITERS / 2;
    if (w->role != RUNNER || it == 0 || it == ITERS / 2) {
      rlx_session_destroy(s);
      if (!(s = open_session(w, c, it, bound))) break;
    }
    if (!run(w, s, it)) break;
    check_outputs(w, s, it, bound);
  }
  rlx_session_destroy(s);
  rlx_compiled_destroy(own);
  return NULL;
}

/* Runs n workers with the roles role_of(i) on sh and checks each came back
 * without a failure. */
static void start_workers(shared *sh, int n, role (*role_of)(int i)) {
  worker *ws = calloc((size_t)n, sizeof *ws);
  pthread_barrier_init(&sh->start, NULL, (unsigned)n);
  for (int i = 0; i < n; i++) {
    ws[i] = (worker){.sh = sh, .id = i, .role = role_of(i)};
    for (int k = 0; k < sh->n_out; k++) ws[i].out[k] = calloc(1, sh->want_bytes[k] ? sh->want_bytes[k] : 1);
  }
  for (int i = 0; i < n; i++)
    if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i])) {
      fprintf(stderr, "cannot start thread %d of %d\n", i, n); /* the others wait at the barrier */
      abort();
    }
  for (int i = 0; i < n; i++) pthread_join(ws[i].thread, NULL);
  for (int i = 0; i < n; i++) {
    CHECK(ws[i].failures == 0);
    for (int k = 0; k < sh->n_out; k++) free(ws[i].out[k]);
  }
  pthread_barrier_destroy(&sh->start);
  free(ws);
}

/* Loads dir, compiles it with the given pool size, records the reference
 * bytes from one run on this thread, then runs the workers on it. */
static void run_threads(const char *dir, int pool, role (*role_of)(int i)) {
  int n = thread_count(), before = rlx_test_failures;
  shared sh = {.dir = dir, .pool = pool};
  rlx_model *m = NULL;
  rlx_compiled *c = NULL;
  rlx_session *s = NULL;
  rlx_st_file ref;
  char path[512];
  snprintf(path, sizeof path, "%s/reference.safetensors", dir);
  CHECK_OK(rlx_st_open(path, &ref));
  rlx_compile_options o;
  rlx_compile_options_init(&o);
  o.threads = pool;
  CHECK_OK(rlx_model_load(dir, NULL, &m));
  if (m) CHECK_OK(rlx_model_compile(m, &o, &c));
  if (c) CHECK_OK(rlx_session_create(c, &s));
  if (s) CHECK_OK(bind_inputs(s, m, &ref));
  if (s) CHECK_OK(rlx_session_run(s));
  sh.m = m, sh.c = c, sh.ref = &ref;
  sh.n_out = s ? rlx_model_output_count(m) : 0;
  CHECK(!s || (sh.n_out > 0 && sh.n_out <= MAX_OUTPUTS));
  if (sh.n_out > MAX_OUTPUTS) sh.n_out = 0;
  void *want[MAX_OUTPUTS] = {0};
  for (int k = 0; k < sh.n_out; k++) {
    rlx_tensor_view v = {0};
    CHECK_OK(rlx_session_output(s, k, &v));
    sh.elem[k] = rlx_dtype_size(v.dtype);
    sh.want_bytes[k] = (size_t)rlx_view_numel(&v) * sh.elem[k];
    want[k] = malloc(sh.want_bytes[k] ? sh.want_bytes[k] : 1);
    if (v.data) memcpy(want[k], v.data, sh.want_bytes[k]);
    sh.want[k] = want[k];
  }
  rlx_session_destroy(s);
  if (rlx_test_failures == before) {
    start_workers(&sh, n, role_of);
    if (rlx_test_failures == before) printf("%s, pool %d: %d threads x %d runs, all bit-identical\n", dir, pool, n, ITERS);
  }
  for (int k = 0; k < sh.n_out; k++) free(want[k]);
  rlx_compiled_destroy(c);
  rlx_model_destroy(m);
  rlx_st_close(&ref);
}

static role all_runners(int i) { return RUNNER; }
static role runners_and_creators(int i) { return i % 2 ? CREATOR : RUNNER; }
static role runners_and_compilers(int i) { return i % 2 ? COMPILER : RUNNER; }

TEST(shared_compiled_runs) {
  for (int pool = 1; pool <= 2; pool++) {
    run_threads(MNIST, pool, all_runners);
    run_threads(LLAMA, pool, all_runners);
  }
}

TEST(create_while_running) {
  for (int pool = 1; pool <= 2; pool++) {
    run_threads(MNIST, pool, runners_and_creators);
    run_threads(LLAMA, pool, runners_and_creators);
  }
}

TEST(compile_while_running) {
  run_threads(MNIST, 2, runners_and_compilers);
  run_threads(LLAMA, 1, runners_and_compilers);
}

/* ---- rlx_last_error is per thread ---- */

typedef struct err_worker {
  const rlx_compiled *c;
  pthread_barrier_t *phase;
  pthread_t thread;
  int id;
  int failures;
} err_worker;

/* Each thread makes its own bind fail (a shape naming the thread), waits for
 * every thread to do so, and finds its own message unchanged; then the even
 * threads fail again differently while the odd ones wait, and each checks
 * again. Every thread reaches every barrier. */
static void *err_main(void *p) {
  err_worker *w = p;
  char want[512] = "", wrong[64];
  rlx_session *s = NULL;
  if (rlx_session_create(w->c, &s)) w->failures++;
  float one = 0;
  rlx_tensor_view v = {.data = &one, .dtype = RLX_DTYPE_F32, .rank = 1, .dims = {1000 + w->id}};
  snprintf(wrong, sizeof wrong, "[%d]", 1000 + w->id);
  if (s && rlx_session_bind_input(s, "x", &v) == RLX_ERR_SHAPE && strstr(rlx_last_error(), wrong))
    snprintf(want, sizeof want, "%s", rlx_last_error());
  else w->failures++, fprintf(stderr, "  thread %d: bind gave \"%s\"\n", w->id, rlx_last_error());
  pthread_barrier_wait(w->phase);
  if (strcmp(rlx_last_error(), want))
    w->failures++, fprintf(stderr, "  thread %d: message \"%s\" became \"%s\"\n", w->id, want, rlx_last_error());
  pthread_barrier_wait(w->phase);
  if (w->id % 2 == 0) {
    char name[32];
    snprintf(name, sizeof name, "no_such_input_%d", w->id);
    if (s && rlx_session_bind_input(s, name, &v) == RLX_ERR_NOT_FOUND && strstr(rlx_last_error(), name))
      snprintf(want, sizeof want, "%s", rlx_last_error());
    else w->failures++, fprintf(stderr, "  thread %d: bind gave \"%s\"\n", w->id, rlx_last_error());
  }
  pthread_barrier_wait(w->phase);
  if (strcmp(rlx_last_error(), want))
    w->failures++, fprintf(stderr, "  thread %d: message \"%s\" became \"%s\"\n", w->id, want, rlx_last_error());
  rlx_session_destroy(s);
  return NULL;
}

TEST(last_error_per_thread) {
  int n = thread_count();
  rlx_model *m = NULL;
  rlx_compiled *c = NULL;
  CHECK_OK(rlx_model_load(MNIST, NULL, &m));
  if (m) CHECK_OK(rlx_model_compile(m, NULL, &c));
  if (!c) {
    rlx_model_destroy(m);
    return;
  }
  CHECK_ERR(rlx_session_run(NULL), RLX_ERR_INVALID_ARGUMENT, "NULL session");
  char mine[512];
  snprintf(mine, sizeof mine, "%s", rlx_last_error());
  pthread_barrier_t phase;
  pthread_barrier_init(&phase, NULL, (unsigned)n);
  err_worker *ws = calloc((size_t)n, sizeof *ws);
  int started = 0;
  for (; started < n; started++) {
    ws[started] = (err_worker){.c = c, .phase = &phase, .id = started};
    if (pthread_create(&ws[started].thread, NULL, err_main, &ws[started])) break;
  }
  CHECK(started == n);
  for (int i = 0; i < started; i++) {
    pthread_join(ws[i].thread, NULL);
    CHECK(ws[i].failures == 0);
  }
  CHECK(!strcmp(rlx_last_error(), mine)); /* the main thread's message is its own too */
  pthread_barrier_destroy(&phase);
  free(ws);
  rlx_compiled_destroy(c);
  rlx_model_destroy(m);
}

TEST_MAIN(shared_compiled_runs, create_while_running, compile_while_running, last_error_per_thread)
