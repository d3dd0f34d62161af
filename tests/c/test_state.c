/*
 * test_state.c — session state (docs/design.md, "State"): mutated buffers
 * that persist across runs, start at their initial value, are updated in
 * place by a scatter into them, and belong to each session; and the
 * format's errors for bad state entries.
 *
 * The program (what `python3 -m rlx.export` writes for a module whose
 * forward does `n += 1; acc *= 2; cache.index_copy_(0, pos, x)` and returns
 * `(x * n + acc.sum(0), cache.sum(0))`).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixtures.h"
#include "runtime/runtime.h"
#include "test.h"

static const char *state_ir =
    "{'format': 'rlx-torch-ir', 'version': 1, 'model_name': 'counter',"
    " 'inputs': [{'id': 'x', 'shape': [2, 3], 'dtype': 'f32'}, {'id': 'pos', 'shape': [2], 'dtype': 'i64'}],"
    " 'weights': [],"
    " 'state': [{'id': 'b_n', 'key': 'n', 'shape': [3], 'dtype': 'f32', 'init': 'zeros', 'update': 'add'},"
    "  {'id': 'b_acc', 'key': 'acc', 'shape': [2, 3], 'dtype': 'f32', 'init': 'weights', 'update': 'mul'},"
    "  {'id': 'b_cache', 'key': 'cache', 'shape': [8, 3], 'dtype': 'f32', 'init': 'zeros', 'update': '%s'}],"
    " 'nodes': ["
    "  {'id': 'add', 'op': 'aten.add.Tensor', 'args': [{'ref': 'b_n'}, {'float': 1.0}], 'out': {'shape': [3], 'dtype': 'f32'}},"
    "  {'id': 'mul', 'op': 'aten.mul.Tensor', 'args': [{'ref': 'b_acc'}, {'float': 2.0}], 'out': {'shape': [2, 3], 'dtype': 'f32'}},"
    "  {'id': 'index_put', 'op': 'aten.index_put.default', 'args': [{'ref': 'b_cache'}, {'list': [{'ref': 'pos'}]},"
    "   {'ref': 'x'}], 'out': {'shape': [8, 3], 'dtype': 'f32'}},"
    "  {'id': 'mul_1', 'op': 'aten.mul.Tensor', 'args': [{'ref': 'x'}, {'ref': 'add'}], 'out': {'shape': [2, 3], 'dtype': 'f32'}},"
    "  {'id': 'sum_1', 'op': 'aten.sum.dim_IntList', 'args': [{'ref': 'mul'}, {'list': [{'int': 0}]}],"
    "   'out': {'shape': [3], 'dtype': 'f32'}},"
    "  {'id': 'add_1', 'op': 'aten.add.Tensor', 'args': [{'ref': 'mul_1'}, {'ref': 'sum_1'}], 'out': {'shape': [2, 3], 'dtype': 'f32'}},"
    "  {'id': 'sum_2', 'op': 'aten.sum.dim_IntList', 'args': [{'ref': 'index_put'}, {'list': [{'int': 0}]}],"
    "   'out': {'shape': [3], 'dtype': 'f32'}}],"
    " 'outputs': [{'ref': 'add_1', 'shape': [2, 3], 'dtype': 'f32'}, {'ref': 'sum_2', 'shape': [3], 'dtype': 'f32'}]}";

static char dir[] = "/tmp/rlx_test_state_XXXXXX";

static void write_file(const char *name, const void *data, size_t len) {
  static bool made;
  if (!made && !mkdtemp(dir)) return;
  made = true;
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) return;
  if (len) fwrite(data, 1, len, f);
  fclose(f);
}

/* torch-ir.json with the cache's update node `update`, and weights holding acc = 0.5 (or nothing) */
static void write_model(const char *ir_fmt, const char *update, bool with_acc) {
  char fmt[8192], text[8192];
  snprintf(fmt, sizeof fmt, "%s", ir_fmt);
  for (char *c = fmt; *c; c++)
    if (*c == '\'') *c = '"';
  snprintf(text, sizeof text, fmt, update);
  write_file("torch-ir.json", text, strlen(text));
  float acc[6] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
  st_spec t = {"acc", "F32", 2, {2, 3}, acc};
  size_t size;
  unsigned char *img = st_build(&t, with_acc ? 1 : 0, &size);
  write_file("weights.safetensors", img, size);
  free(img);
}

typedef struct run_ctx {
  rlx_model *m;
  rlx_compiled *c;
  rlx_session *s;
  float x[6];
  int64_t pos[2];
} run_ctx;

static void open_model(run_ctx *r, int threads) {
  memset(r, 0, sizeof *r);
  rlx_compile_options o;
  rlx_compile_options_init(&o);
  o.threads = threads;
  CHECK_OK(rlx_model_load(dir, NULL, &r->m));
  if (r->m) CHECK_OK(rlx_model_compile(r->m, &o, &r->c));
  if (r->c) CHECK_OK(rlx_session_create(r->c, &r->s));
}

static void close_model(run_ctx *r) {
  rlx_session_destroy(r->s);
  rlx_compiled_destroy(r->c);
  rlx_model_destroy(r->m);
}

/* One run at x = base + i, rows written at pos; returns the outputs' data. */
static void run_once(rlx_session *s, run_ctx *r, float base, int64_t p0, int64_t p1, const float **y0, const float **y1) {
  for (int i = 0; i < 6; i++) r->x[i] = base + (float)i;
  r->pos[0] = p0, r->pos[1] = p1;
  rlx_tensor_view xv = {.data = r->x, .dtype = RLX_DTYPE_F32, .rank = 2, .dims = {2, 3}};
  rlx_tensor_view pv = {.data = r->pos, .dtype = RLX_DTYPE_I64, .rank = 1, .dims = {2}};
  rlx_tensor_view o0, o1;
  *y0 = *y1 = NULL;
  CHECK_OK(rlx_session_bind_input(s, "x", &xv));
  CHECK_OK(rlx_session_bind_input(s, "pos", &pv));
  if (rlx_session_run(s)) {
    CHECK(!"run failed");
    fprintf(stderr, "  %s\n", rlx_last_error());
    return;
  }
  CHECK_OK(rlx_session_output(s, 0, &o0));
  CHECK_OK(rlx_session_output(s, 1, &o1));
  *y0 = o0.data, *y1 = o1.data;
}

/* After k runs: n = k, acc = 0.5 * 2^k; out0 = x * k + 2 * 0.5 * 2^k. */
static void check_out0(const float *y, const float *x, int k) {
  for (int i = 0; y && i < 6; i++) CHECK_NEAR(y[i], x[i] * (float)k + (float)(1 << k), 1e-5);
}

TEST(state_persists_across_runs) {
  write_model(state_ir, "index_put", true);
  run_ctx r;
  open_model(&r, 1);
  if (!r.s) return close_model(&r);
  CHECK(rlx_model_state_count(r.m) == 3);
  CHECK(rlx_model_input_count(r.m) == 2 && rlx_model_output_count(r.m) == 2);
  rlx_io_info info;
  CHECK_OK(rlx_model_state_info(r.m, 2, &info));
  CHECK(!strcmp(info.name, "cache") && info.rank == 2 && info.dims[0] == 8 && info.dims[1] == 3);
  CHECK_ERR(rlx_model_state_info(r.m, 3, &info), RLX_ERR_INVALID_ARGUMENT, "state index 3");
  CHECK_ERR(rlx_model_output_info(r.m, 2, &info), RLX_ERR_INVALID_ARGUMENT, "output index 2");
  rlx_tensor_view cache;
  CHECK_OK(rlx_session_state(r.s, 2, &cache));
  const float *y0, *y1;
  float want[24] = {0};
  for (int k = 1; k <= 3; k++) { /* rows k and 7-k get the run's x */
    run_once(r.s, &r, (float)(10 * k), k, 7 - k, &y0, &y1);
    check_out0(y0, r.x, k);
    for (int j = 0; j < 3; j++) want[k * 3 + j] = r.x[j], want[(7 - k) * 3 + j] = r.x[3 + j];
    for (int j = 0; y1 && j < 3; j++) {
      float sum = 0;
      for (int q = 0; q < 8; q++) sum += want[q * 3 + j];
      CHECK_NEAR(y1[j], sum, 1e-4);
    }
    CHECK(!memcmp(cache.data, want, sizeof want));
  }
  /* the index_put writes the state's own memory: no copy after the run */
  const rlx_graph *g = &r.c->graph;
  int32_t u = g->outputs[rlx_graph_user_outputs(g) + 2];
  CHECK(rlx_session_value_data(r.s, u) == cache.data);
  /* reset: back to zeros and acc = 0.5 */
  CHECK_OK(rlx_session_reset_state(r.s));
  memset(want, 0, sizeof want);
  CHECK(!memcmp(cache.data, want, sizeof want));
  run_once(r.s, &r, 1, 0, 1, &y0, &y1);
  check_out0(y0, r.x, 1);
  /* state written by the caller between runs is what the next run reads */
  rlx_tensor_view n;
  CHECK_OK(rlx_session_state(r.s, 0, &n));
  CHECK(n.rank == 1 && n.dims[0] == 3 && ((float *)n.data)[0] == 1.0f);
  for (int i = 0; i < 3; i++) ((float *)n.data)[i] = 9.0f;
  rlx_tensor_view acc;
  CHECK_OK(rlx_session_state(r.s, 1, &acc));
  for (int i = 0; i < 6; i++) ((float *)acc.data)[i] = 0.0f;
  run_once(r.s, &r, 2, 0, 1, &y0, &y1);
  for (int i = 0; y0 && i < 6; i++) CHECK_NEAR(y0[i], r.x[i] * 10.0f, 1e-5);
  CHECK_ERR(rlx_session_state(r.s, 3, &n), RLX_ERR_INVALID_ARGUMENT, "state index 3 out of range");
  close_model(&r);
}

TEST(sessions_have_their_own_state) {
  write_model(state_ir, "index_put", true);
  run_ctx r;
  open_model(&r, 2);
  if (!r.s) return close_model(&r);
  rlx_session *s2 = NULL;
  CHECK_OK(rlx_session_create(r.c, &s2));
  if (!s2) return close_model(&r);
  const float *y0, *y1;
  run_once(r.s, &r, 0, 0, 1, &y0, &y1);
  run_once(r.s, &r, 0, 0, 1, &y0, &y1);
  check_out0(y0, r.x, 2);
  run_once(s2, &r, 0, 0, 1, &y0, &y1); /* the second session starts fresh */
  check_out0(y0, r.x, 1);
  run_once(r.s, &r, 0, 0, 1, &y0, &y1);
  check_out0(y0, r.x, 3);
  rlx_session_destroy(s2);
  close_model(&r);
}

/* The cache's update is the whole-buffer result of a mul that also feeds
 * nothing else: not a scatter, so the run copies it into the state. */
TEST(state_update_copied_when_not_in_place) {
  write_model(state_ir, "mul", true); /* cache is replaced by mul's value: shape [2,3] != [8,3] */
  rlx_model *m = NULL;
  CHECK_ERR(rlx_model_load(dir, NULL, &m), RLX_ERR_SHAPE, "state 'cache' is f32[8, 3] but its update 'mul' is f32[2, 3]");
  /* acc's update is mul (a whole new value): after 2 runs acc = 2 */
  write_model(state_ir, "index_put", true);
  run_ctx r;
  open_model(&r, 1);
  if (!r.s) return close_model(&r);
  const float *y0, *y1;
  run_once(r.s, &r, 0, 0, 1, &y0, &y1);
  run_once(r.s, &r, 0, 0, 1, &y0, &y1);
  rlx_tensor_view acc;
  CHECK_OK(rlx_session_state(r.s, 1, &acc));
  for (int i = 0; i < 6; i++) CHECK(((float *)acc.data)[i] == 2.0f);
  const rlx_graph *g = &r.c->graph;
  int32_t u = g->outputs[rlx_graph_user_outputs(g) + 1];
  CHECK(rlx_session_value_data(r.s, u) != acc.data);
  close_model(&r);
}

TEST(bad_state_entries) {
  rlx_model *m = NULL;
  write_model(state_ir, "nosuchnode", true);
  CHECK_ERR(rlx_model_load(dir, NULL, &m), RLX_ERR_FORMAT, "state 'cache': its update");
  write_model(state_ir, "index_put", false); /* acc's initial value is not in the weights */
  CHECK_ERR(rlx_model_load(dir, NULL, &m), RLX_ERR_NOT_FOUND, "state 'acc' (placeholder b_acc): its initial value is missing");
  char bad[8192];
  snprintf(bad, sizeof bad, "%s", state_ir);
  char *p = strstr(bad, "'init': 'zeros'");
  memcpy(p, "'init': 'zerox'", 15);
  write_model(bad, "index_put", true);
  CHECK_ERR(rlx_model_load(dir, NULL, &m), RLX_ERR_FORMAT, "state[0] ('n'): 'init' is 'zerox'");
  snprintf(bad, sizeof bad, "%s", state_ir);
  p = strstr(bad, "'key': 'n', ");
  memmove(p, p + 12, strlen(p + 12) + 1);
  write_model(bad, "index_put", true);
  CHECK_ERR(rlx_model_load(dir, NULL, &m), RLX_ERR_FORMAT, "state[0]");
  CHECK(m == NULL);
}

TEST(cleanup) {
  char path[512];
  snprintf(path, sizeof path, "%s/torch-ir.json", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/weights.safetensors", dir);
  unlink(path);
  rmdir(dir);
}

TEST_MAIN(state_persists_across_runs, sessions_have_their_own_state, state_update_copied_when_not_in_place,
          bad_state_entries, cleanup)
