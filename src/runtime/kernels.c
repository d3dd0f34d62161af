/*
 * kernels.c — kernel choice per node, made once at compile time: the
 * backend's registered families for the node's (op, dtype) are asked in
 * order (src/cpu/kernels.def) and the first that supports the node (by its
 * shapes, params and the CPU's features) runs it; with reference_kernels,
 * or when none does, the op's reference kernel.
 *
 * Test-only fault injection, for the localizer's own tests (never set these
 * in production; they exist so a test can plant a known fault in a real
 * model and check that rlx names it):
 *   RLX_TEST_INJECT_FAULT=<label>  the default (non-reference) kernel of the
 *       nodes with that FX label is replaced by one whose first output is
 *       wrong (x * 1.01 + 0.01 for floats, x + 1 for integers); reference
 *       runs are unaffected, so the kernel bisection can find it
 *   RLX_TEST_INJECT_NAN=<label>    the first element of those nodes' first
 *       output becomes NaN, in every mode
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "runtime/runtime.h"

rlx_status rlx_reference_kernel(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                                const rlx_exec *x) {
  return rlx_op_table[n->op].vt->ref(n, in, out, x->scratch);
}

static rlx_status faulty_kernel(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                                const rlx_exec *x) {
  rlx_status st = rlx_reference_kernel(n, in, out, x);
  if (st) return st;
  int64_t N = rlx_view_numel(&out[0]);
  for (int64_t i = 0; i < N; i++) {
    if (rlx_dtype_is_float(out[0].dtype))
      rlx_store_f64(out[0].data, out[0].dtype, i, rlx_load_f64(out[0].data, out[0].dtype, i) * 1.01 + 0.01);
    else if (out[0].dtype != RLX_DTYPE_BOOL)
      rlx_store_i64(out[0].data, out[0].dtype, i, rlx_load_i64(out[0].data, out[0].dtype, i) + 1);
  }
  return RLX_OK;
}

static rlx_status nan_kernel(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                             const rlx_exec *x) {
  rlx_status st = rlx_reference_kernel(n, in, out, x);
  if (!st && rlx_dtype_is_float(out[0].dtype) && rlx_view_numel(&out[0]) > 0)
    rlx_store_f64(out[0].data, out[0].dtype, 0, NAN);
  return st;
}

/* Whether the variable names this node (its label or one fused into it). */
static bool env_names(const char *var, const rlx_node *n) {
  const char *v = getenv(var);
  return v && *v && rlx_node_has_label(n, v);
}

/* The dtype a family is registered under: the node's first present input's
 * (its output's for the ops without inputs). */
static rlx_dtype key_dtype(const rlx_graph *g, const rlx_node *n) {
  for (int32_t k = 0; k < n->n_in; k++)
    if (n->in[k] >= 0) return g->values[n->in[k]].dtype;
  return g->values[n->out[0]].dtype;
}

rlx_status rlx_choose_kernel(const rlx_graph *g, const rlx_graph *sym, int32_t node, const rlx_compile_options *o,
                             int threads, rlx_kernel *k) {
  const rlx_node *n = &g->nodes[node];
  const rlx_op_vtable *vt = rlx_op_table[n->op].vt;
  memset(k, 0, sizeof *k);
  k->name = "reference";
  k->run = rlx_reference_kernel;
  k->scratch = vt->scratch ? vt->scratch(g, n) : 0;
  if (env_names("RLX_TEST_INJECT_NAN", n)) {
    k->run = nan_kernel, k->name = "nan (RLX_TEST_INJECT_NAN)";
    return RLX_OK;
  }
  if (o->reference_kernels) return RLX_OK;
  if (env_names("RLX_TEST_INJECT_FAULT", n)) {
    k->run = faulty_kernel, k->name = "faulty (RLX_TEST_INJECT_FAULT)";
    return RLX_OK;
  }
  return rlx_select_kernel(g, sym, node, RLX_BACKEND_CPU, threads, k);
}

rlx_status rlx_select_kernel(const rlx_graph *g, const rlx_graph *sym, int32_t node, rlx_backend backend, int threads,
                             rlx_kernel *k) {
  const rlx_node *n = &g->nodes[node];
  rlx_dtype dt = key_dtype(g, n);
  const rlx_kernel_reg *regs = rlx_cpu_kernels;
  int count = backend == RLX_BACKEND_CPU ? rlx_cpu_kernel_count : 0;
  for (int r = 0; r < count && !k->fast; r++) {
    if (regs[r].op != n->op || regs[r].dtype != dt) continue;
    rlx_status st = regs[r].supports(g, sym, n, threads, k);
    if (st) return st;
  }
  return RLX_OK;
}

bool rlx_kernel_is_reference(const rlx_kernel *k, const rlx_node *n) {
  (void)n;
  return k->run == rlx_reference_kernel;
}
