/*
 * fuzz_torch_ir.c — libFuzzer target for the torch-ir.json importer and
 * everything behind it: parse, lower, verify, compile, and one run.
 *
 * Input: torch-ir.json text, with no weights (an empty safetensors image),
 * so graphs use inputs only. Optionally the input may begin with a weights
 * image: the 4 bytes "RLXW", a little-endian u32 length L, then L bytes of
 * weights.safetensors; the rest is the JSON.
 *
 * Pipeline: rlx_torch_ir_parse -> rlx_st_parse -> rlx_lower_graph ->
 * rlx_graph_verify -> an rlx_model built by hand, with the checks of
 * rlx_model_load_files (src/runtime/model.c) -> rlx_model_compile
 * (threads 1) -> rlx_session_create -> every input bound to zeros ->
 * rlx_session_run -> every output's bytes read -> destroy. Any stage may
 * refuse the input with a status; only a crash, a sanitizer report or an
 * RLX_ASSERT (the library is built with RLX_CHECKED) is a finding.
 *
 * So that the fuzzer looks for bugs, not for big allocations, an input is
 * dropped (before lowering) when a recorded tensor exceeds MAX_TENSOR bytes,
 * and the run is skipped when the inputs total more than MAX_INPUTS bytes or
 * the compiled plan's arena exceeds MAX_ARENA. All limits are deterministic.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "import/lower/lower.h"
#include "runtime/runtime.h"

#define MAX_TENSOR ((uint64_t)64 << 20)
#define MAX_INPUTS ((uint64_t)1 << 20)
#define MAX_ARENA ((size_t)64 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t tensor_bytes(rlx_dtype t, const rlx_shape *s) {
  return (uint64_t)rlx_shape_numel(s) * rlx_dtype_size(t); /* numel <= 2^48: no overflow */
}

/* Whether every tensor the file records is at most MAX_TENSOR bytes. */
static bool recorded_sizes_ok(const rlx_torch_ir *ir) {
  for (int32_t i = 0; i < ir->n_inputs; i++)
    if (tensor_bytes(ir->inputs[i].dtype, &ir->inputs[i].shape) > MAX_TENSOR) return false;
  for (int32_t i = 0; i < ir->n_weights; i++)
    if (tensor_bytes(ir->weights[i].dtype, &ir->weights[i].shape) > MAX_TENSOR) return false;
  for (int32_t i = 0; i < ir->n_nodes; i++)
    for (int32_t k = 0; k < ir->nodes[i].n_outs; k++) {
      const rlx_tinfo *t = &ir->nodes[i].outs[k];
      if (t->present && tensor_bytes(t->dtype, &t->shape) > MAX_TENSOR) return false;
    }
  return true;
}

/* Binds every input of s to zeros, runs once and reads every output. */
static void run_once(const rlx_compiled *c, rlx_session *s) {
  const rlx_graph *g = &c->graph;
  uint64_t total = 0;
  for (int32_t i = 0; i < g->n_inputs; i++) total += rlx_value_nbytes(&g->values[g->inputs[i]]);
  if (total > MAX_INPUTS) return;
  void **bufs = calloc((size_t)g->n_inputs + 1, sizeof *bufs);
  if (!bufs) return;
  bool ok = true;
  for (int32_t i = 0; ok && i < g->n_inputs; i++) {
    const rlx_value *v = &g->values[g->inputs[i]];
    size_t n = rlx_value_nbytes(v);
    rlx_tensor_view view = rlx_value_view(v);
    view.data = bufs[i] = calloc(1, n ? n : 1);
    ok = bufs[i] && !rlx_session_bind_input(s, v->name, &view);
  }
  if (ok && !rlx_session_run(s)) {
    volatile uint64_t sum = 0;
    for (int i = 0; i < g->n_outputs; i++) {
      rlx_tensor_view out;
      if (rlx_session_output(s, i, &out)) continue;
      size_t n = (size_t)rlx_view_numel(&out) * rlx_dtype_size(out.dtype);
      for (size_t k = 0; k < n; k++) sum += ((const uint8_t *)out.data)[k];
    }
    (void)sum;
  }
  for (int32_t i = 0; i < g->n_inputs; i++) free(bufs[i]);
  free(bufs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *weights = NULL; /* an exact-size copy, so ASan sees reads past its end */
  size_t wsize = 0;
  if (size >= 8 && !memcmp(data, "RLXW", 4)) {
    wsize = data[4] | (size_t)data[5] << 8 | (size_t)data[6] << 16 | (size_t)data[7] << 24;
    if (wsize > size - 8 || !(weights = malloc(wsize ? wsize : 1))) return 0;
    memcpy(weights, data + 8, wsize);
    data += 8 + wsize;
    size -= 8 + wsize;
  }
  rlx_model *m = rlx_calloc(1, sizeof *m);
  if (!m) {
    free(weights);
    return 0;
  }
  rlx_compiled *c = NULL;
  rlx_session *s = NULL;
  if (rlx_torch_ir_parse((const char *)data, size, "fuzz/torch-ir.json", &m->ir)) goto done;
  if (!recorded_sizes_ok(&m->ir)) goto done;
  if (rlx_st_parse(weights, wsize, "fuzz/weights.safetensors", &m->weights)) goto done;
  if (m->ir.n_outputs == 0) goto done; /* as rlx_model_load_files refuses it */
  if (rlx_lower_graph(&m->ir, &m->weights, &m->graph)) goto done;
  if (rlx_graph_verify(&m->graph, "import")) goto done;
  rlx_compile_options o;
  rlx_compile_options_init(&o);
  o.threads = 1;
  if (rlx_model_compile(m, &o, &c)) goto done;
  if (c->plan.arena_size > MAX_ARENA) goto done;
  if (rlx_session_create(c, &s)) goto done;
  run_once(c, s);
done:
  rlx_session_destroy(s);
  rlx_compiled_destroy(c);
  rlx_model_destroy(m);
  free(weights);
  return 0;
}
