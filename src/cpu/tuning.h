/*
 * tuning.h — the per-host constants of the CPU kernels' cost models
 * (docs/design.md, "Host tuning"): rates that differ between the hosts the
 * choices were measured on, picked once per process from the CPU's
 * identity. Everything else in the cost models is shared.
 */
#ifndef RLX_CPU_TUNING_H
#define RLX_CPU_TUNING_H

#include <stddef.h>

typedef struct rlx_cpu_tuning {
  const char *name;
  /* ns per element of Winograd's transformed input V and products M, one thread (cpu/conv.c) */
  double wg2_ns, wg4_ns;
  /* on one thread, a 1x1 conv with more weight bytes than this stays channel-major (cpu/conv_gemm.c) */
  size_t pix_one_thread_w;
  /* a B panel's cost beyond its width, in columns (A's broadcasts and the stores every panel pays): the
   * sgemm's choice of panel width for N columns (cpu/gemm.c rlx_sgemm_isa_for) */
  int panel_cols;
} rlx_cpu_tuning;

/* This host's: RLX_CPU_TUNING=<name> forces one ("xeon", "amd-avx512"; an
 * unknown name is ignored), else by the CPU's vendor and features; "xeon"
 * (the first host the rates were fitted on) where none matches. */
const rlx_cpu_tuning *rlx_cpu_tuning_get(void);

#endif
