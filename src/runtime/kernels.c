/*
 * kernels.c — kernel choice per node, made once at compile time.
 *
 * Today every op runs its reference kernel; optimized kernels will be chosen
 * here (by op, shape and CPU features) unless reference_kernels is set.
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

static bool env_names(const char *var, const char *label) {
  const char *v = getenv(var);
  return v && *v && !strcmp(v, label);
}

rlx_kernel_fn rlx_choose_kernel(const rlx_graph *g, int32_t node, const rlx_compile_options *o) {
  const rlx_node *n = &g->nodes[node];
  if (env_names("RLX_TEST_INJECT_NAN", n->label)) return nan_kernel;
  if (!o->reference_kernels && env_names("RLX_TEST_INJECT_FAULT", n->label)) return faulty_kernel;
  return rlx_op_table[n->op].vt->ref;
}

const char *rlx_kernel_name(rlx_kernel_fn k) {
  if (k == faulty_kernel) return "faulty (RLX_TEST_INJECT_FAULT)";
  if (k == nan_kernel) return "nan (RLX_TEST_INJECT_NAN)";
  return "reference";
}
