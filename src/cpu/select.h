/*
 * select.h — the fast CPU kernels and their selection. Each fast kernel
 * family (one file per family) exposes a `try` function that inspects a node
 * and, when it can run it faster than the reference kernel, fills the kernel
 * descriptor (function, scratch size, weights packed at compile time).
 */
#ifndef RLX_CPU_SELECT_H
#define RLX_CPU_SELECT_H

#include "runtime/runtime.h"

/* For the plain-C loops of the fast kernels (the compiler vectorizes them):
 * built for AVX-512 (x86-64-v4), AVX2 (v3) and baseline x86-64, the best
 * variant this CPU runs picked when the library loads (GCC function
 * multiversioning). ISO C mode means no FMA contraction, so every variant
 * rounds exactly as the baseline does. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#define RLX_VEC_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define RLX_VEC_CLONES
#endif

/* The CPU backend's choice for a node (rlx_select_kernel): leaves k
 * (pre-filled with the reference kernel) or replaces it. */
rlx_status rlx_cpu_select(const rlx_graph *g, const rlx_graph *sym, int32_t node, int threads, rlx_kernel *k);

/* Families (kernels.def): each is an rlx_kernel_reg's `supports`; returns
 * RLX_OK whether or not it took the node (k->fast set if so). sym: the
 * symbolic graph g is the hint instance of, or NULL (static). */
#define RLX_KERNEL(op, dt, family)                                                                   \
  rlx_status rlx_cpu_try_##family(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, \
                                  rlx_kernel *k);
#include "cpu/kernels.def"
#undef RLX_KERNEL

/* y[i] = f(x[i]) in float for the kinds with a fast loop (x may be y);
 * false, writing nothing, for the others. */
bool rlx_cpu_unary_f32(const rlx_unary_params *p, const float *x, float *y, int64_t n);

/* y = act(y) in place, in float (fast paths for the common kinds). */
void rlx_cpu_act_f32(const rlx_unary_params *p, float *y, int64_t n);

/* The sgemm's in-register post (cpu/gemm.h) for an epilogue's activation:
 * false where the activation is not one it computes (SiLU, GELU, ...; the
 * callback epilogue then runs). Bias and residual left unset. */
struct rlx_sgemm_post;
bool rlx_cpu_sgemm_post(const rlx_epilogue *ep, struct rlx_sgemm_post *post);

/* The fused epilogue (residual add, activation) of a f32 matmul/conv output. */
void rlx_cpu_epilogue(rlx_threadpool *tp, const rlx_epilogue *ep, const rlx_tensor_view *residual,
                      rlx_tensor_view *out);

#endif
