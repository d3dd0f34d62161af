/*
 * select.c — the CPU backend's kernel registry (kernels.def), and the CPU
 * selection the tests use to ask for a node's fast kernel directly.
 */
#include "cpu/select.h"

const rlx_kernel_reg rlx_cpu_kernels[] = {
#define RLX_KERNEL(op, dt, family) {RLX_OP_##op, RLX_DTYPE_##dt, RLX_BACKEND_CPU, #family, rlx_cpu_try_##family},
#include "cpu/kernels.def"
#undef RLX_KERNEL
};
const int rlx_cpu_kernel_count = (int)RLX_COUNTOF(rlx_cpu_kernels);

rlx_status rlx_cpu_select(const rlx_graph *g, const rlx_graph *sym, int32_t node, int threads, rlx_kernel *k) {
  return rlx_select_kernel(g, sym, node, RLX_BACKEND_CPU, threads, k);
}
