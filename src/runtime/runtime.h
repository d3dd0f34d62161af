/*
 * runtime.h — the structs behind the public handles, for librlx itself and
 * for the tools and tests that inspect them (the CLI prints graphs, the
 * localizer walks nodes). Applications use include/rlx.h only.
 */
#ifndef RLX_RUNTIME_H
#define RLX_RUNTIME_H

#include "import/safetensors.h"
#include "import/torch_ir.h"
#include "ir/graph.h"
#include "plan/memplan.h"

struct rlx_model {
  char *dir;
  char *ir_path, *weights_path;
  rlx_torch_ir ir;       /* the aten graph as exported */
  rlx_st_file weights;   /* mapped weights.safetensors */
  rlx_graph graph;       /* the lowered rlx graph, before passes */
};

/* A kernel: the reference kernels for now; fast kernels plug in here. */
typedef rlx_status (*rlx_kernel_fn)(const rlx_node *n, const rlx_tensor_view *in,
                                    rlx_tensor_view *out, void *scratch);

/* The kernel for node `node` under the options (kernels.c). */
rlx_kernel_fn rlx_choose_kernel(const rlx_graph *g, int32_t node, const rlx_compile_options *o);
const char *rlx_kernel_name(rlx_kernel_fn k);

struct rlx_compiled {
  const rlx_model *model;
  rlx_compile_options opts;
  rlx_graph graph;        /* after passes */
  rlx_kernel_fn *kernels; /* per node */
  rlx_plan plan;
};

struct rlx_session {
  const rlx_compiled *c;
  void *arena;
  void **ptr;                /* per value: its data during a run */
  const void **bound_in;     /* per graph input: caller data (NULL: unbound) */
  rlx_tensor_view *bound_out;/* per graph output: caller buffer (data NULL: none) */
  rlx_tensor_view *views;    /* kernel argument views, all nodes back to back */
  int32_t *view_at;          /* per node: index of its first view (inputs, then outputs) */
  /* Optional per-node hook called after each node runs (the localizer).
   * Returning non-OK stops the run with that status. */
  rlx_status (*after_node)(void *ctx, const rlx_session *s, int32_t node);
  void *after_node_ctx;
  int debug_nans;             /* RLX_DEBUG_NANS: 0 off, 1 report, 2 abort */
  int32_t nan_culprit;        /* first node that produced a non-finite value, or -1 */
  int32_t nan_propagators;    /* later nodes that only passed one on */
};

/* The data pointer of value v during/after a run of s. */
static inline void *rlx_session_value_data(const rlx_session *s, int32_t v) { return s->ptr[v]; }

/* Loads with the given paths (tests use this to point at broken files). */
rlx_status rlx_model_load_files(const char *ir_path, const char *weights_path,
                                const rlx_load_options *opts, rlx_model **model_out);

#endif
