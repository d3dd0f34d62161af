/*
 * test_dynamic.c — a program with a shape symbol, end to end through the C
 * API (docs/design.md, "Shapes"): symbolic shapes recorded in torch-ir.json,
 * sym_size and SymInt arithmetic, symbolic view / slice / cat / arange, one
 * compiled model run at several bindings in turn (the plan cache), outputs
 * checked against hand-computed values at each, and bad bindings refused
 * with the input, axis, symbol and bounds named while the session stays
 * usable.
 */
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixtures.h"
#include "runtime/runtime.h"
#include "test.h"

/* x [2, seq] f32 ->
 *   r   = relu(x)                      [2, seq]
 *   n   = sym_size(x, 1)               seq
 *   n1  = n - 1
 *   t   = r[:, 1:]                     [2, seq - 1]
 *   v   = view(t, [n1, 2])             [seq - 1, 2]
 *   c   = cat([r, r], 1)               [2, 2 seq]
 *   a   = arange(n)                    [seq] i64
 *   s   = sum(c, [1])                  [2]
 * outputs: v, c, a, s */
static const char *DOC =
    "{'format': 'rlx-torch-ir', 'version': 1, 'model_name': 'dyn',"
    " 'symbols': [{'name': 'seq', 'min': 2, 'max': 64, 'hint': 4}],"
    " 'guards': [{'lhs': 'seq', 'rel': '>=', 'rhs': '2', 'source': 'test'}],"
    " 'inputs': [{'id': 'x', 'shape': [2, 4], 'sym_shape': [2, 'seq'], 'dtype': 'f32'}],"
    " 'weights': [],"
    " 'nodes': ["
    "  {'id': 'r', 'op': 'aten.relu.default', 'args': [{'ref': 'x'}], 'kwargs': {},"
    "   'out': {'shape': [2, 4], 'sym_shape': [2, 'seq'], 'dtype': 'f32'}},"
    "  {'id': 'n', 'op': 'aten.sym_size.int', 'args': [{'ref': 'x'}, {'int': 1}], 'kwargs': {},"
    "   'out': {'scalar': {'int': 4}, 'sym': 'seq'}},"
    "  {'id': 'n1', 'op': 'sym_sub', 'args': [{'sym': 'n'}, {'int': 1}], 'kwargs': {},"
    "   'out': {'scalar': {'int': 3}}},"
    "  {'id': 't', 'op': 'aten.slice.Tensor', 'args': [{'ref': 'r'}, {'int': 1}, {'int': 1},"
    "   {'int': 9223372036854775807}], 'kwargs': {},"
    "   'out': {'shape': [2, 3], 'sym_shape': [2, 'seq - 1'], 'dtype': 'f32'}},"
    "  {'id': 'v', 'op': 'aten.view.default', 'args': [{'ref': 't'}, {'list': [{'sym': 'n1'}, {'int': 2}]}],"
    "   'kwargs': {}, 'out': {'shape': [3, 2], 'sym_shape': ['seq - 1', 2], 'dtype': 'f32'}},"
    "  {'id': 'c', 'op': 'aten.cat.default', 'args': [{'list': [{'ref': 'r'}, {'ref': 'r'}]}, {'int': 1}],"
    "   'kwargs': {}, 'out': {'shape': [2, 8], 'sym_shape': [2, '2*seq'], 'dtype': 'f32'}},"
    "  {'id': 'a', 'op': 'aten.arange.default', 'args': [{'sym': 'n'}], 'kwargs': {'dtype': {'dtype': 'i64'}},"
    "   'out': {'shape': [4], 'sym_shape': ['seq'], 'dtype': 'i64'}},"
    "  {'id': 's', 'op': 'aten.sum.dim_IntList', 'args': [{'ref': 'c'}, {'list': [{'int': 1}]}], 'kwargs': {},"
    "   'out': {'shape': [2], 'dtype': 'f32'}}],"
    " 'outputs': [{'ref': 'v', 'shape': [3, 2], 'sym_shape': ['seq - 1', 2], 'dtype': 'f32'},"
    "  {'ref': 'c', 'shape': [2, 8], 'sym_shape': [2, '2*seq'], 'dtype': 'f32'},"
    "  {'ref': 'a', 'shape': [4], 'sym_shape': ['seq'], 'dtype': 'i64'},"
    "  {'ref': 's', 'shape': [2], 'dtype': 'f32'}]}";

static char dir[512];

static void write_export(const char *doc) {
  snprintf(dir, sizeof dir, "%s/rlx_dyn_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  CHECK(mkdtemp(dir) != NULL);
  char p[600];
  snprintf(p, sizeof p, "%s/torch-ir.json", dir);
  char *text = jq(doc);
  FILE *f = fopen(p, "w");
  fputs(text, f);
  fclose(f);
  free(text);
  snprintf(p, sizeof p, "%s/weights.safetensors", dir);
  fclose(fopen(p, "w"));
}

static void remove_export(void) {
  char p[600];
  snprintf(p, sizeof p, "%s/torch-ir.json", dir);
  unlink(p);
  snprintf(p, sizeof p, "%s/weights.safetensors", dir);
  unlink(p);
  rmdir(dir);
}

/* Runs at seq = L with x[i][j] = (i * L + j) - L (half negative) and checks
 * every output against its definition. */
static void run_at(rlx_session *s, int64_t L) {
  float *x = malloc(sizeof(float) * (size_t)(2 * L));
  for (int64_t k = 0; k < 2 * L; k++) x[k] = (float)(k - L);
  rlx_tensor_view xv = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 2, .dims = {2, L}};
  CHECK_OK(rlx_session_bind_input(s, "x", &xv));
  CHECK_OK(rlx_session_run(s));
  rlx_tensor_view o;
  CHECK_OK(rlx_session_output(s, 0, &o)); /* v = view(relu(x)[:, 1:], [L - 1, 2]) */
  CHECK(o.rank == 2 && o.dims[0] == L - 1 && o.dims[1] == 2);
  for (int64_t k = 0; k < 2 * (L - 1) && o.rank == 2; k++) {
    int64_t i = k / (L - 1), j = 1 + k % (L - 1);
    float want = x[i * L + j] > 0 ? x[i * L + j] : 0;
    if (((float *)o.data)[k] != want) {
      fprintf(stderr, "seq=%lld: v[%lld] = %g, expected %g\n", (long long)L, (long long)k, ((float *)o.data)[k], want);
      rlx_test_failures++;
      break;
    }
  }
  CHECK_OK(rlx_session_output(s, 1, &o)); /* c = cat([r, r], 1) */
  CHECK(o.rank == 2 && o.dims[0] == 2 && o.dims[1] == 2 * L);
  for (int64_t i = 0; i < 2 && o.rank == 2; i++)
    for (int64_t j = 0; j < 2 * L; j++) {
      float r = x[i * L + j % L] > 0 ? x[i * L + j % L] : 0;
      CHECK(((float *)o.data)[i * 2 * L + j] == r);
    }
  CHECK_OK(rlx_session_output(s, 2, &o)); /* a = arange(L) */
  CHECK(o.rank == 1 && o.dims[0] == L && o.dtype == RLX_DTYPE_I64);
  for (int64_t j = 0; j < L && o.rank == 1; j++) CHECK(((int64_t *)o.data)[j] == j);
  CHECK_OK(rlx_session_output(s, 3, &o)); /* s = 2 * sum(relu(x[i])) */
  for (int64_t i = 0; i < 2; i++) {
    double want = 0;
    for (int64_t j = 0; j < L; j++) want += x[i * L + j] > 0 ? 2.0 * x[i * L + j] : 0;
    CHECK_NEAR(((float *)o.data)[i], want, 1e-4 * (1 + want));
  }
  free(x);
}

TEST(runs_at_every_binding) {
  write_export(DOC);
  rlx_model *m = NULL;
  rlx_compiled *c = NULL;
  rlx_session *s = NULL;
  CHECK_OK(rlx_model_load(dir, NULL, &m));
  for (int ref = 0; m && ref < 2; ref++) {
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.reference_kernels = ref;
    CHECK_OK(rlx_model_compile(m, &o, &c));
    CHECK_OK(rlx_session_create(c, &s));
    if (!s) break;
    int64_t seqs[] = {4, 2, 64, 17, 4, 33, 2, 5, 6, 7, 8};
    for (size_t k = 0; k < sizeof seqs / sizeof seqs[0]; k++) run_at(s, seqs[k]);
    /* the arena was allocated once, at creation */
    size_t arena = c->arena_size;
    void *a = s->arena;
    run_at(s, 63);
    CHECK(s->arena == a && c->arena_size == arena);
    rlx_session_destroy(s);
    rlx_compiled_destroy(c);
    s = NULL, c = NULL;
  }
  rlx_model_destroy(m);
  remove_export();
}

TEST(bad_bindings_refused) {
  write_export(DOC);
  rlx_model *m = NULL;
  rlx_compiled *c = NULL;
  rlx_session *s = NULL;
  CHECK_OK(rlx_model_load(dir, NULL, &m));
  CHECK_OK(rlx_model_compile(m, NULL, &c));
  CHECK_OK(rlx_session_create(c, &s));
  if (s) {
    float x[200] = {0};
    rlx_tensor_view xv = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 2, .dims = {2, 65}};
    CHECK_OK(rlx_session_bind_input(s, "x", &xv));
    CHECK_ERR(rlx_session_run(s), RLX_ERR_SHAPE, "input 'x' axis 1: seq = 65 is outside its bounds [2, 64]");
    xv.dims[1] = 1;
    CHECK_OK(rlx_session_bind_input(s, "x", &xv));
    CHECK_ERR(rlx_session_reshape(s), RLX_ERR_SHAPE, "seq = 1 is outside its bounds [2, 64]");
    xv.dims[0] = 3, xv.dims[1] = 4;
    CHECK_OK(rlx_session_bind_input(s, "x", &xv));
    CHECK_ERR(rlx_session_run(s), RLX_ERR_SHAPE, "input 'x' axis 0 is 3; the model was exported with a static 2");
    xv.rank = 3;
    CHECK_ERR(rlx_session_bind_input(s, "x", &xv), RLX_ERR_SHAPE, "input 'x' is f32 [2, seq]");
    run_at(s, 9); /* still usable */
  }
  /* the API reports the symbols */
  rlx_io_info info;
  CHECK_OK(rlx_model_input_info(m, 0, &info));
  CHECK(info.rank == 2 && info.dims[1] == 4 && info.dim_names[0] == NULL && info.dim_names[1] &&
        !strcmp(info.dim_names[1], "seq") && info.dim_min[1] == 2 && info.dim_max[1] == 64);
  CHECK_OK(rlx_model_output_info(m, 1, &info));
  CHECK(info.dim_names[1] && !strcmp(info.dim_names[1], "2*seq") && info.dim_min[1] == 4 && info.dim_max[1] == 128);
  CHECK(rlx_model_symbol_count(m) == 1);
  rlx_symbol_info si;
  CHECK_OK(rlx_model_symbol_info(m, 0, &si));
  CHECK(!strcmp(si.name, "seq") && si.min == 2 && si.max == 64 && si.hint == 4);
  rlx_session_destroy(s);
  rlx_compiled_destroy(c);
  rlx_model_destroy(m);
  remove_export();
}

/* A shape torch recorded that rlx's inference disagrees with is an error
 * naming the node; so is a sym_shape entry that is not the example value. */
TEST(recorded_shapes_cross_checked) {
  char *doc = strdup(DOC), *at = strstr(doc, "'sym_shape': [2, 'seq - 1']");
  memcpy(at, "'sym_shape': [2, 'seq + 0']", strlen("'sym_shape': [2, 'seq + 0']")); /* t is seq - 1, not seq */
  write_export(doc);
  rlx_model *m = NULL;
  CHECK_ERR(rlx_model_load(dir, NULL, &m), RLX_ERR_FORMAT, "is 4 at the symbols' example values, but 'shape' records 3");
  remove_export();
  free(doc);
  doc = strdup(DOC), at = strstr(doc, "'shape': [2, 8], 'sym_shape': [2, '2*seq']");
  memcpy(at, "'shape': [2, 8], 'sym_shape': [2, 'seq+4']", strlen("'shape': [2, 8], 'sym_shape': [2, 'seq+4']"));
  write_export(doc);
  CHECK_ERR(rlx_model_load(dir, NULL, &m), RLX_ERR_SHAPE, "node 'c' (aten.cat.default): output 0: rlx infers f32 [2, 2*seq]");
  remove_export();
  free(doc);
}

/* Kernels chosen at the hints must hold at every binding: with a hint of 1,
 * x [b, 4] + y [b, 1] is x plus one repeated element at compile, and the fast
 * kernel for that case repeats y's first b elements as rows at b = 3. */
TEST(kernel_choice_holds_at_every_binding) {
  write_export("{'format': 'rlx-torch-ir', 'version': 1, 'symbols': [{'name': 'b', 'min': 1, 'max': 8, 'hint': 1}],"
               " 'inputs': [{'id': 'x', 'shape': [1, 4], 'sym_shape': ['b', 4], 'dtype': 'f32'},"
               "  {'id': 'y', 'shape': [1, 1], 'sym_shape': ['b', 1], 'dtype': 'f32'}], 'weights': [],"
               " 'nodes': [{'id': 'z', 'op': 'aten.add.Tensor', 'args': [{'ref': 'x'}, {'ref': 'y'}], 'kwargs': {},"
               "  'out': {'shape': [1, 4], 'sym_shape': ['b', 4], 'dtype': 'f32'}}],"
               " 'outputs': [{'ref': 'z', 'shape': [1, 4], 'sym_shape': ['b', 4], 'dtype': 'f32'}]}");
  rlx_model *m = NULL;
  rlx_compiled *c = NULL;
  rlx_session *s = NULL;
  CHECK_OK(rlx_model_load(dir, NULL, &m));
  CHECK_OK(rlx_model_compile(m, NULL, &c));
  CHECK_OK(rlx_session_create(c, &s));
  float x[12], y[3] = {1, 2, 3};
  for (int i = 0; i < 12; i++) x[i] = (float)(10 * i);
  rlx_tensor_view xv = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 2, .dims = {3, 4}};
  rlx_tensor_view yv = {.data = y, .dtype = RLX_DTYPE_F32, .rank = 2, .dims = {3, 1}};
  if (s) {
    CHECK_OK(rlx_session_bind_input(s, "x", &xv));
    CHECK_OK(rlx_session_bind_input(s, "y", &yv));
    CHECK_OK(rlx_session_run(s));
    rlx_tensor_view o;
    CHECK_OK(rlx_session_output(s, 0, &o));
    CHECK(o.dims[0] == 3);
    for (int i = 0; i < 12; i++) CHECK(((float *)o.data)[i] == x[i] + y[i / 4]);
  }
  rlx_session_destroy(s);
  rlx_compiled_destroy(c);
  rlx_model_destroy(m);
  remove_export();
}

/* A 3x3 conv whose image size is a symbol in [2, 32] (hint 4): Winograd is
 * not worth it at 4x4 (4 tiles) and is at 16x16 (64), so the compiled kernel
 * keeps both packings and picks per binding; each binding's output matches
 * the reference kernels, and the session names the variant that ran. */
TEST(conv_picks_winograd_per_binding) {
  write_export("{'format': 'rlx-torch-ir', 'version': 1,"
               " 'symbols': [{'name': 'h', 'min': 2, 'max': 32, 'hint': 4}, {'name': 'w', 'min': 2, 'max': 32, 'hint': 4}],"
               " 'inputs': [{'id': 'x', 'shape': [1, 16, 4, 4], 'sym_shape': [1, 16, 'h', 'w'], 'dtype': 'f32'}],"
               " 'weights': [{'id': 'k', 'key': 'k', 'shape': [16, 16, 3, 3], 'dtype': 'f32', 'kind': 'param'},"
               "  {'id': 'bias', 'key': 'bias', 'shape': [16], 'dtype': 'f32', 'kind': 'param'}],"
               " 'nodes': [{'id': 'y', 'op': 'aten.conv2d.default', 'args': [{'ref': 'x'}, {'ref': 'k'}, {'ref': 'bias'},"
               "  {'list': [{'int': 1}, {'int': 1}]}, {'list': [{'int': 1}, {'int': 1}]}], 'kwargs': {},"
               "  'out': {'shape': [1, 16, 4, 4], 'sym_shape': [1, 16, 'h', 'w'], 'dtype': 'f32'}}],"
               " 'outputs': [{'ref': 'y', 'shape': [1, 16, 4, 4], 'sym_shape': [1, 16, 'h', 'w'], 'dtype': 'f32'}]}");
  static float kw[16 * 16 * 9], bias[16];
  for (int i = 0; i < 16 * 16 * 9; i++) kw[i] = (float)((i * 37 % 101) - 50) / 200.0f;
  for (int i = 0; i < 16; i++) bias[i] = (float)i / 8.0f - 1.0f;
  st_spec specs[] = {{"k", "F32", 4, {16, 16, 3, 3}, kw}, {"bias", "F32", 1, {16}, bias}};
  size_t size;
  unsigned char *img = st_build(specs, 2, &size);
  char p[600];
  snprintf(p, sizeof p, "%s/weights.safetensors", dir);
  FILE *f = fopen(p, "wb");
  fwrite(img, 1, size, f);
  fclose(f);
  free(img);
  rlx_model *m = NULL;
  rlx_compiled *c[2] = {NULL, NULL};
  rlx_session *s[2] = {NULL, NULL};
  CHECK_OK(rlx_model_load(dir, NULL, &m));
  for (int ref = 0; m && ref < 2; ref++) {
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.reference_kernels = ref;
    CHECK_OK(rlx_model_compile(m, &o, &c[ref]));
    if (c[ref]) CHECK_OK(rlx_session_create(c[ref], &s[ref]));
  }
  int32_t conv = -1;
  for (int32_t i = 0; c[0] && i < c[0]->graph.n_nodes; i++)
    if (c[0]->graph.nodes[i].op == RLX_OP_CONV) conv = i;
  CHECK(conv >= 0);
  if (s[0] && s[1] && conv >= 0) {
    CHECK(!strcmp(c[0]->kernels[conv].name, "f32_conv_winograd_or_sgemm"));
    /* tiles ceil(H/2) * ceil(W/2): 4, 64, 16, 256, 4, 21, 36 */
    int64_t sizes[][2] = {{4, 4}, {16, 16}, {2, 32}, {32, 32}, {4, 4}, {5, 13}, {12, 11}};
    const char *G = "f32_conv_implicit_sgemm", *WG = "f32_conv_winograd_2x2_3x3";
    const char *want[] = {G, WG, G, WG, G, G, WG};
    static float x[16 * 32 * 32];
    for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++) {
      int64_t H = sizes[b][0], W = sizes[b][1];
      for (int64_t i = 0; i < 16 * H * W; i++) x[i] = (float)((i * 13 + b) % 29) / 7.0f - 2.0f;
      rlx_tensor_view xv = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 4, .dims = {1, 16, H, W}};
      rlx_tensor_view o[2];
      for (int r = 0; r < 2; r++) {
        CHECK_OK(rlx_session_bind_input(s[r], "x", &xv));
        CHECK_OK(rlx_session_run(s[r]));
        CHECK_OK(rlx_session_output(s[r], 0, &o[r]));
      }
      const char *ran = rlx_session_kernel_name(s[0], conv);
      if (strcmp(ran, want[b])) {
        fprintf(stderr, "%lldx%lld: ran %s, expected %s\n", (long long)H, (long long)W, ran, want[b]);
        rlx_test_failures++;
      }
      CHECK(o[0].dims[2] == H && o[0].dims[3] == W && o[1].dims[2] == H && o[1].dims[3] == W);
      double worst = 0;
      for (int64_t i = 0; i < 16 * H * W; i++) {
        double d = fabs((double)((float *)o[0].data)[i] - ((float *)o[1].data)[i]);
        worst = d > worst ? d : worst;
      }
      CHECK(worst < 1e-4);
    }
  }
  for (int r = 0; r < 2; r++) rlx_session_destroy(s[r]), rlx_compiled_destroy(c[r]);
  rlx_model_destroy(m);
  remove_export();
}

/* as_strided of a symbolic tensor: the read range is checked at each
 * binding; one that would read past the end is refused, naming the node, and
 * the session stays usable. x [seq] -> as_strided(x, [seq - 4, 2], [1, 2])
 * reads up to (seq - 5) + 2 < seq. A static size [6, 2] reads element 7,
 * so seq <= 7 is refused. */
TEST(as_strided_checked_per_binding) {
  write_export("{'format': 'rlx-torch-ir', 'version': 1, 'symbols': [{'name': 'seq', 'min': 5, 'max': 64, 'hint': 9}],"
               " 'inputs': [{'id': 'x', 'shape': [9], 'sym_shape': ['seq'], 'dtype': 'f32'}], 'weights': [],"
               " 'nodes': [{'id': 'n', 'op': 'aten.sym_size.int', 'args': [{'ref': 'x'}, {'int': 0}], 'kwargs': {},"
               "   'out': {'scalar': {'int': 9}, 'sym': 'seq'}},"
               "  {'id': 'n4', 'op': 'sym_sub', 'args': [{'sym': 'n'}, {'int': 4}], 'kwargs': {}, 'out': {'scalar': {'int': 5}}},"
               "  {'id': 'a', 'op': 'aten.as_strided.default', 'args': [{'ref': 'x'}, {'list': [{'sym': 'n4'}, {'int': 2}]},"
               "   {'list': [{'int': 1}, {'int': 2}]}], 'kwargs': {},"
               "   'out': {'shape': [5, 2], 'sym_shape': ['seq - 4', 2], 'dtype': 'f32'}},"
               "  {'id': 'b', 'op': 'aten.as_strided.default', 'args': [{'ref': 'x'}, {'list': [{'int': 6}, {'int': 2}]},"
               "   {'list': [{'int': 1}, {'int': 2}]}], 'kwargs': {}, 'out': {'shape': [6, 2], 'dtype': 'f32'}}],"
               " 'outputs': [{'ref': 'a', 'shape': [5, 2], 'sym_shape': ['seq - 4', 2], 'dtype': 'f32'},"
               "  {'ref': 'b', 'shape': [6, 2], 'dtype': 'f32'}]}");
  rlx_model *m = NULL;
  rlx_compiled *c = NULL;
  rlx_session *s = NULL;
  CHECK_OK(rlx_model_load(dir, NULL, &m));
  if (m) CHECK_OK(rlx_model_compile(m, NULL, &c));
  if (c) CHECK_OK(rlx_session_create(c, &s));
  float x[64];
  for (int i = 0; i < 64; i++) x[i] = (float)i;
  int64_t seqs[] = {12, 7, 8, 64};
  for (size_t k = 0; s && k < sizeof seqs / sizeof seqs[0]; k++) {
    int64_t L = seqs[k];
    rlx_tensor_view xv = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 1, .dims = {L}};
    CHECK_OK(rlx_session_bind_input(s, "x", &xv));
    if (L <= 7) {
      CHECK_ERR(rlx_session_run(s), RLX_ERR_SHAPE, "node 'b'");
      continue;
    }
    CHECK_OK(rlx_session_run(s));
    rlx_tensor_view o;
    CHECK_OK(rlx_session_output(s, 0, &o));
    CHECK(o.rank == 2 && o.dims[0] == L - 4 && o.dims[1] == 2);
    for (int64_t i = 0; i < (L - 4) * 2 && o.rank == 2; i++) CHECK(((float *)o.data)[i] == (float)(i / 2 + 2 * (i % 2)));
    CHECK_OK(rlx_session_output(s, 1, &o));
    for (int64_t i = 0; i < 12; i++) CHECK(((float *)o.data)[i] == (float)(i / 2 + 2 * (i % 2)));
  }
  rlx_session_destroy(s);
  rlx_compiled_destroy(c);
  rlx_model_destroy(m);
  remove_export();
}

TEST_MAIN(runs_at_every_binding, bad_bindings_refused, recorded_shapes_cross_checked,
          kernel_choice_holds_at_every_binding, conv_picks_winograd_per_binding, as_strided_checked_per_binding)
