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
#include "runtime/threadpool.h"

struct rlx_model {
  char *dir;
  char *ir_path, *weights_path;
  rlx_torch_ir ir;       /* the aten graph as exported */
  rlx_st_file weights;   /* mapped weights.safetensors */
  rlx_graph graph;       /* the lowered rlx graph, before passes */
};

/* A reference-style kernel: single-threaded, scratch for itself. */
typedef rlx_status (*rlx_kernel_fn)(const rlx_node *n, const rlx_tensor_view *in,
                                    rlx_tensor_view *out, void *scratch);

/* What a fast kernel gets besides its tensors. */
typedef struct rlx_exec {
  rlx_threadpool *tp;  /* the session's pool (the kernel may split work over it) */
  void *scratch;       /* rlx_kernel.scratch bytes, 64-byte aligned */
  const void *packed;  /* rlx_kernel.packed */
} rlx_exec;

typedef rlx_status (*rlx_fast_fn)(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                                  const rlx_exec *x);

/* The kernel chosen for one node at compile time. */
typedef struct rlx_kernel {
  const char *name;   /* "reference", "f32_conv_gemm", ... */
  rlx_kernel_fn ref;  /* a reference-style kernel, or NULL */
  rlx_fast_fn fast;   /* a fast kernel, or NULL */
  size_t scratch;     /* bytes of scratch it needs */
  void *packed;       /* constant weights packed at compile time (owned; rlx_aligned_free) */
} rlx_kernel;

/* Chooses node `node`'s kernel (kernels.c): a fast CPU kernel when one fits
 * and reference_kernels is off, else the reference kernel. `threads` is the
 * session pool's size, for scratch sizing. */
rlx_status rlx_choose_kernel(const rlx_graph *g, int32_t node, const rlx_compile_options *o, int threads,
                             rlx_kernel *k);
/* Whether k is the op's plain reference kernel. */
bool rlx_kernel_is_reference(const rlx_kernel *k, const rlx_node *n);

struct rlx_compiled {
  const rlx_model *model;
  rlx_compile_options opts;
  int threads;           /* resolved thread count (opts.threads, or the cores) */
  rlx_graph graph;       /* after passes */
  rlx_kernel *kernels;   /* per node */
  rlx_plan plan;
};

struct rlx_session {
  const rlx_compiled *c;
  rlx_threadpool *tp;
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
