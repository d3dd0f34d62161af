/*
 * kernels.c — kernel choice per node, made once at compile time: a fast CPU
 * kernel (src/cpu/, by op, dtype, shape and CPU features) when one fits and
 * reference_kernels is off, otherwise the op's reference kernel.
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

#include "cpu/select.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

static rlx_status faulty_kernel(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                                void *scratch) {
  rlx_status st = rlx_op_table[n->op].vt->ref(n, in, out, scratch);
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
                             void *scratch) {
  rlx_status st = rlx_op_table[n->op].vt->ref(n, in, out, scratch);
  if (!st && rlx_dtype_is_float(out[0].dtype) && rlx_view_numel(&out[0]) > 0)
    rlx_store_f64(out[0].data, out[0].dtype, 0, NAN);
  return st;
}

/* Whether the variable names this node (its label or one fused into it). */
static bool env_names(const char *var, const rlx_node *n) {
  const char *v = getenv(var);
  return v && *v && rlx_node_has_label(n, v);
}

rlx_status rlx_choose_kernel(const rlx_graph *g, const rlx_graph *sym, int32_t node, const rlx_compile_options *o,
                             int threads, rlx_kernel *k) {
  const rlx_node *n = &g->nodes[node];
  const rlx_op_vtable *vt = rlx_op_table[n->op].vt;
  memset(k, 0, sizeof *k);
  k->name = "reference";
  k->ref = vt->ref;
  k->scratch = vt->scratch ? vt->scratch(g, n) : 0;
  if (env_names("RLX_TEST_INJECT_NAN", n)) {
    k->ref = nan_kernel, k->name = "nan (RLX_TEST_INJECT_NAN)";
    return RLX_OK;
  }
  if (o->reference_kernels) return RLX_OK;
  if (env_names("RLX_TEST_INJECT_FAULT", n)) {
    k->ref = faulty_kernel, k->name = "faulty (RLX_TEST_INJECT_FAULT)";
    return RLX_OK;
  }
  return rlx_cpu_select(g, sym, node, threads, k);
}

bool rlx_kernel_is_reference(const rlx_kernel *k, const rlx_node *n) {
  return !k->fast && k->ref == rlx_op_table[n->op].vt->ref;
}
