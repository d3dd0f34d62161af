/*
 * localize.h — naming the node where rlx and PyTorch diverge.
 *
 * rlx_localize runs a model with reference kernels and compares the value of
 * every FX node with PyTorch's eager value for the same node (the exporter's
 * intermediates.safetensors, keyed by FX node name), in topological order.
 * A node out of tolerance whose inputs were all within it is a culprit; one
 * with an input already out of tolerance only propagated the error.
 *
 * rlx_kernel_bisect runs a compiled model with its chosen kernels and, after
 * each node, re-runs that node with its reference kernel on the very same
 * inputs: the first node whose kernel disagrees is the kernel at fault. It
 * needs no PyTorch values, only the reference kernels.
 */
#ifndef RLX_LOCALIZE_H
#define RLX_LOCALIZE_H

#include "check/parity.h"
#include "import/safetensors.h"
#include "runtime/runtime.h"

typedef enum rlx_loc_status {
  RLX_LOC_UNCHECKED, /* no value to compare (not in intermediates, or not computed) */
  RLX_LOC_OK,
  RLX_LOC_CULPRIT,    /* out of tolerance with every input within it */
  RLX_LOC_PROPAGATOR  /* out of tolerance, and so was an input */
} rlx_loc_status;

typedef struct rlx_loc_node {
  rlx_loc_status status;
  rlx_parity_result r;
  int32_t source; /* propagators: the FX index of an out-of-tolerance input */
} rlx_loc_node;

typedef struct rlx_localize_report {
  int32_t n;              /* FX nodes (torch-ir.json nodes) */
  rlx_loc_node *nodes;    /* per FX node */
  int32_t n_compared, n_bad, n_culprits;
  int32_t first_culprit;  /* FX index, -1 if none */
} rlx_localize_report;

/* `inputs`: one view per graph input, in order. */
rlx_status rlx_localize(const rlx_model *m, const rlx_tensor_view *inputs, const rlx_st_file *inter,
                        const rlx_parity_opts *o, rlx_localize_report *rep);
void rlx_localize_free(rlx_localize_report *rep);

typedef struct rlx_bisect_result {
  int32_t node;         /* compiled-graph node index of the first disagreeing kernel, -1 if none */
  rlx_parity_result r;  /* its output against the reference kernel's */
  int32_t checked;      /* nodes re-run */
} rlx_bisect_result;

rlx_status rlx_kernel_bisect(const rlx_compiled *c, const rlx_tensor_view *inputs,
                             const rlx_parity_opts *o, rlx_bisect_result *res);

#endif
