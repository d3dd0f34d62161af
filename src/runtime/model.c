/*
 * model.c — rlx_model (load: parse, map, lower, verify) and rlx_compiled
 * (copy, passes, kernel choice, memory plan), and the small public helpers.
 */
#include <stdio.h>
#include <string.h>

#include "import/lower/lower.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

static char *join(const char *dir, const char *file) {
  size_t n = strlen(dir) + strlen(file) + 2;
  char *p = rlx_malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, file);
  return p;
}

static char *dup(const char *s) {
  char *p = rlx_malloc(strlen(s) + 1);
  if (p) strcpy(p, s);
  return p;
}

rlx_status rlx_model_load_files(const char *ir_path, const char *weights_path,
                                const rlx_load_options *opts, rlx_model **model_out) {
  if (!ir_path || !weights_path || !model_out)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_model_load: NULL argument");
  rlx_load_options o = {.size = sizeof o};
  if (opts) {
    if (opts->size < offsetof(rlx_load_options, verbose) + sizeof(int))
      return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_load_options.size is %zu; set it to "
                        "sizeof(rlx_load_options)", opts->size);
    memcpy(&o, opts, RLX_MIN(opts->size, sizeof o));
  }
  rlx_model *m = rlx_calloc(1, sizeof *m);
  if (!m) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  rlx_status st = RLX_ERR_OUT_OF_MEMORY;
  if (!(m->ir_path = dup(ir_path)) || !(m->weights_path = dup(weights_path))) {
    rlx_errorf(st, "out of memory");
    goto fail;
  }
  if ((st = rlx_torch_ir_load(m->ir_path, &m->ir))) goto fail;
  if ((st = o.copy_weights ? rlx_st_read(m->weights_path, &m->weights) : rlx_st_open(m->weights_path, &m->weights)))
    goto fail;
  if (m->ir.n_outputs == 0) { /* torch.export gives every program an output: nothing here would run */
    st = rlx_errorf(RLX_ERR_FORMAT, "%s: 'outputs' is empty: the program has no output", m->ir_path);
    goto fail;
  }
  if ((st = rlx_lower_graph(&m->ir, &m->weights, &m->graph))) goto fail;
  if ((st = rlx_graph_verify(&m->graph, "import"))) goto fail;
  *model_out = m;
  return RLX_OK;
fail:
  rlx_model_destroy(m);
  return st;
}

rlx_status rlx_model_load(const char *dir, const rlx_load_options *opts, rlx_model **model_out) {
  if (!dir || !model_out) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_model_load: NULL argument");
  char *ir = join(dir, "torch-ir.json"), *w = join(dir, "weights.safetensors");
  rlx_model *m = NULL;
  rlx_status st = (ir && w) ? rlx_model_load_files(ir, w, opts, &m)
                            : rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  if (!st && !(m->dir = dup(dir))) {
    rlx_model_destroy(m);
    st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  }
  if (!st) *model_out = m; /* written only on success */
  rlx_free(ir);
  rlx_free(w);
  return st;
}

void rlx_model_destroy(rlx_model *m) {
  if (!m) return;
  rlx_graph_free(&m->graph);
  rlx_st_close(&m->weights);
  rlx_torch_ir_free(&m->ir);
  rlx_free(m->dir);
  rlx_free(m->ir_path);
  rlx_free(m->weights_path);
  rlx_free(m);
}

int rlx_model_input_count(const rlx_model *m) { return m ? m->graph.n_inputs : 0; }
int rlx_model_output_count(const rlx_model *m) { return m ? m->graph.n_outputs : 0; }

static void fill_info(const rlx_value *v, const char *name, rlx_io_info *info) {
  info->name = name;
  info->dtype = v->dtype;
  info->rank = v->shape.rank;
  memcpy(info->dims, v->shape.dims, sizeof info->dims);
}

rlx_status rlx_model_input_info(const rlx_model *m, int i, rlx_io_info *info) {
  if (!m || !info || i < 0 || i >= m->graph.n_inputs)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "input index %d out of range", i);
  const rlx_value *v = &m->graph.values[m->graph.inputs[i]];
  fill_info(v, v->name, info);
  return RLX_OK;
}

rlx_status rlx_model_output_info(const rlx_model *m, int i, rlx_io_info *info) {
  if (!m || !info || i < 0 || i >= m->graph.n_outputs)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "output index %d out of range", i);
  const rlx_value *v = &m->graph.values[m->graph.outputs[i]];
  fill_info(v, i < m->ir.n_outputs && !m->ir.outputs[i].is_const ? m->ir.outputs[i].ref : "const", info);
  return RLX_OK;
}

void rlx_compile_options_init(rlx_compile_options *o) {
  memset(o, 0, sizeof *o);
  o->size = sizeof *o;
  o->device = RLX_DEVICE_CPU;
}

rlx_status rlx_model_compile(const rlx_model *m, const rlx_compile_options *opts, rlx_compiled **out) {
  if (!m || !out) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_model_compile: NULL argument");
  rlx_compile_options o;
  rlx_compile_options_init(&o);
  if (opts) {
    if (opts->size < offsetof(rlx_compile_options, no_passes) + sizeof(int))
      return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_compile_options.size is %zu; initialize the "
                        "options with rlx_compile_options_init", opts->size);
    memcpy(&o, opts, RLX_MIN(opts->size, sizeof o));
    o.size = sizeof o;
  }
  if (o.threads < 0 || o.threads > RLX_MAX_THREADS)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "threads=%d: rlx runs 1 to %d threads (0: one per core)",
                      o.threads, RLX_MAX_THREADS);
  if (o.device != RLX_DEVICE_CPU)
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "device %d: this build of rlx runs on the CPU only",
                      (int)o.device);
  rlx_compiled *c = rlx_calloc(1, sizeof *c);
  if (!c) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  c->model = m;
  c->opts = o;
  rlx_status st = rlx_graph_clone(&m->graph, &c->graph);
  if (!st && !o.no_passes) st = rlx_passes_run(&c->graph, false);
  c->threads = o.threads > 0 ? o.threads : rlx_cpu_count();
  size_t *scratch = NULL;
  if (!st) {
    c->kernels = rlx_calloc((size_t)(c->graph.n_nodes + 1), sizeof *c->kernels);
    scratch = rlx_malloc(sizeof(size_t) * (size_t)(c->graph.n_nodes + 1));
    if (!c->kernels || !scratch) st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  }
  for (int32_t i = 0; !st && i < c->graph.n_nodes; i++) {
    st = rlx_choose_kernel(&c->graph, i, &c->opts, c->threads, &c->kernels[i]);
    if (!st) scratch[i] = c->kernels[i].scratch;
  }
  if (!st) st = rlx_plan_memory(&c->graph, true, scratch, &c->plan);
  if (!st && o.max_memory && c->plan.arena_size > o.max_memory) {
    char sh[160];
    const rlx_value *v = c->plan.largest >= 0 ? &c->graph.values[c->plan.largest] : NULL;
    const rlx_node *n = v ? &c->graph.nodes[v->producer] : NULL;
    if (n)
      st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "the model needs an arena of %zu bytes, over max_memory (%zu); its "
                      "largest value is node '%s' (%s), %s %s", c->plan.arena_size, o.max_memory, n->label,
                      n->aten ? n->aten : rlx_op_table[n->op].name, rlx_dtype_name(v->dtype),
                      rlx_shape_str(&v->shape, sh, sizeof sh));
    else
      st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "the model needs an arena of %zu bytes, over max_memory (%zu)",
                      c->plan.arena_size, o.max_memory);
  }
  rlx_free(scratch);
  if (st) {
    rlx_compiled_destroy(c);
    return st;
  }
  *out = c;
  return RLX_OK;
}

void rlx_compiled_destroy(rlx_compiled *c) {
  if (!c) return;
  rlx_plan_free(&c->plan);
  for (int32_t i = 0; c->kernels && i < c->graph.n_nodes; i++) rlx_aligned_free(c->kernels[i].packed);
  rlx_free(c->kernels);
  rlx_graph_free(&c->graph);
  rlx_free(c);
}
