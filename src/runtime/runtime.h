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
  rlx_io_info *in_info, *out_info; /* what rlx_model_input_info / _output_info report */
};

/* What a kernel gets besides its tensors. */
typedef struct rlx_exec {
  rlx_threadpool *tp;  /* the session's pool (the kernel may split work over it) */
  void *scratch;       /* rlx_kernel.scratch bytes, 64-byte aligned */
  const void *packed;  /* rlx_kernel.packed */
} rlx_exec;

/* The one kernel signature, for every backend's kernels and for the ops'
 * reference kernels (through rlx_reference_kernel). */
typedef rlx_status (*rlx_kernel_fn)(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                                    const rlx_exec *x);

/* The backends kernels are registered for (docs/design.md, "Kernels"). */
typedef enum rlx_backend { RLX_BACKEND_CPU, RLX_BACKEND_COUNT } rlx_backend;

/* The kernel chosen for one node at compile time (for a dynamic graph, on
 * its instance at the hints: the choice holds for every binding). */
typedef struct rlx_kernel {
  const char *name;   /* "reference", "f32_conv_gemm", ... */
  rlx_kernel_fn run;
  bool fast;          /* a backend's kernel (not the op's reference kernel or a test wrapper of it) */
  size_t scratch;     /* bytes of scratch it needs (at the shapes it was chosen for) */
  void *packed;       /* constant weights packed at compile time (owned; rlx_aligned_free) */
  /* The fast kernel's scratch at another binding (g, n: a concrete instance;
   * threads: the pool's size), or SIZE_MAX when it cannot run those shapes
   * (the binding then runs the reference kernel). NULL: `scratch` does not
   * depend on the shapes. */
  size_t (*scratch_for)(const rlx_graph *g, const rlx_node *n, int threads);
  /* The kernel's name at another binding, where it picks a variant per
   * binding (g, n: a concrete instance). NULL: `name`. */
  const char *(*name_for)(const rlx_graph *g, const rlx_node *n);
} rlx_kernel;

/* A kernel family registered for (op, dtype of the node's first input,
 * backend): `supports` inspects a concrete node (g: a concrete graph; sym:
 * the symbolic graph g is the hint instance of, or NULL for a static model;
 * threads: the pool's size) and, when the family runs it faster than the
 * reference kernel, fills k (run, name, fast = true, scratch, packed
 * weights); otherwise it leaves k as it is. Errors are real failures (out
 * of memory packing weights). */
typedef struct rlx_kernel_reg {
  rlx_op op;
  rlx_dtype dtype;
  rlx_backend backend;
  const char *family;
  rlx_status (*supports)(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k);
} rlx_kernel_reg;

/* The registered families of each backend, in the order they are asked
 * (src/cpu/kernels.def for the CPU). */
extern const rlx_kernel_reg rlx_cpu_kernels[];
extern const int rlx_cpu_kernel_count;

/* Runs node n's op's reference kernel (single-threaded, x->scratch as its scratch). */
rlx_status rlx_reference_kernel(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                                const rlx_exec *x);

/* Chooses node `node`'s kernel (kernels.c): a fast CPU kernel when one fits
 * and reference_kernels is off, else the reference kernel. `threads` is the
 * session pool's size, for scratch sizing. g is concrete (for a dynamic
 * model, the instance at the hints); sym is the symbolic graph it is an
 * instance of, whose bounds a family may use to choose for every binding,
 * or NULL for a static model. */
rlx_status rlx_choose_kernel(const rlx_graph *g, const rlx_graph *sym, int32_t node, const rlx_compile_options *o,
                             int threads, rlx_kernel *k);
/* Asks the backend's registered families for node `node` in order; leaves
 * k (pre-filled with the reference kernel) or replaces it. */
rlx_status rlx_select_kernel(const rlx_graph *g, const rlx_graph *sym, int32_t node, rlx_backend backend, int threads,
                             rlx_kernel *k);
/* Whether k is the op's plain reference kernel. */
bool rlx_kernel_is_reference(const rlx_kernel *k, const rlx_node *n);

/* The compiled graph at one binding of its symbols (docs/design.md,
 * "Shapes"): every value with its concrete shape, every node with concrete
 * params, the kernel each node runs at these shapes, their scratch, the
 * memory plan and the kernels' argument views. A static model has one,
 * which aliases the compiled graph; a session of a dynamic model keeps a
 * few (its plan cache), built by rlx_instance_build without allocating. */
typedef struct rlx_instance {
  int64_t *syms;          /* the binding: one value per symbol */
  rlx_graph g;            /* concrete values and nodes (arrays owned when `owned`); inputs, outputs,
                             edge lists and names are the compiled graph's */
  bool owned;
  bool ready;
  bool static_done;       /* use_ref and scratch of the nodes with static shapes are set */
  bool *use_ref;          /* per node: the fast kernel cannot run these shapes: run the reference */
  size_t *scratch;        /* per node */
  rlx_plan plan;
  rlx_tensor_view *views; /* kernel argument views, all nodes back to back */
  int32_t *view_at;       /* per node: index of its first view (inputs, then outputs) */
  uint64_t stamp;         /* last use (the cache evicts the oldest) */
} rlx_instance;

struct rlx_compiled {
  const rlx_model *model;
  rlx_compile_options opts;
  int threads;           /* resolved thread count (opts.threads, or the cores) */
  rlx_graph graph;       /* after passes; symbolic for a dynamic model */
  rlx_kernel *kernels;   /* per node */
  bool dynamic;          /* the graph has shape symbols */
  /* static: the plan. dynamic: a plan valid at every binding (each value
   * sized at its upper bound), and the scratch the largest binding needs. */
  rlx_plan plan;
  size_t max_scratch;
  size_t arena_size;     /* what a session allocates */
  rlx_instance hint;     /* dynamic: the instance at the symbols' hints (kernels were chosen on it) */
  /* dynamic: what changes between bindings — values with a symbolic shape,
   * and nodes with a symbolic input or output shape or size params (an
   * instance copies the rest once, when it is allocated) */
  int32_t *sym_values, n_sym_values;
  int32_t *sym_nodes, n_sym_nodes;
};

/* ---- instances (instance.c) ---- */

/* Allocates an instance's arrays for c's graph, holding a copy of its values
 * and nodes (what does not change between bindings is never copied again). */
rlx_status rlx_instance_alloc(const rlx_compiled *c, rlx_instance *inst);
void rlx_instance_free(rlx_instance *inst);
/* Work memory for building instances of c (one per session). */
typedef struct rlx_bind_ws {
  int64_t *syms, *atom_vals, *expr_vals;
  bool *set;
  rlx_plan_ws *plan;
} rlx_bind_ws;
rlx_status rlx_bind_ws_create(const rlx_compiled *c, rlx_bind_ws *w);
void rlx_bind_ws_free(rlx_bind_ws *w);
/* The symbols' values from the shapes of the graph inputs (ranks and dims
 * of the views bound, one per input) into w->syms, checked against their
 * ranges and the guards. Errors (RLX_ERR_SHAPE) name the input, the axis,
 * the symbol and its bounds, or the violated relation. */
rlx_status rlx_resolve_binding(const rlx_compiled *c, const rlx_tensor_view *shapes, rlx_bind_ws *w);
/* Builds inst at the binding w->syms (w->expr_vals evaluated): concrete
 * shapes and params, each node's infer re-run on them (a node whose check
 * fails at this binding is named), kernels and scratch, the memory plan
 * within `arena_cap` bytes (else the compiled bound plan), the views.
 * with_kernels false stops after the shapes (compile uses that before it
 * chooses kernels). Allocates nothing. */
rlx_status rlx_instance_build(const rlx_compiled *c, rlx_bind_ws *w, int threads, size_t arena_cap,
                              bool with_kernels, rlx_instance *inst);

struct rlx_session {
  const rlx_compiled *c;
  rlx_threadpool *tp;
  void *arena;
  void **ptr;                /* per value: its data during a run */
  const void **bound_in;     /* per graph input: caller data (NULL: unbound) */
  rlx_tensor_view *in_shape; /* per graph input: the shape of the view bound */
  rlx_tensor_view *bound_out;/* per graph output: caller buffer (data NULL: none) */
  void *state;               /* the states' memory, one 64-byte-aligned block each (docs/design.md, "State") */
  size_t state_size;
  rlx_instance *cur;         /* the binding runs use (NULL: none yet) */
  rlx_instance *cache;       /* dynamic: the plan cache */
  int n_cache;
  uint64_t clock;
  bool reshape_needed;       /* an input was bound with another shape since `cur` was chosen */
  rlx_bind_ws ws;
  /* kept for the localizer and the CLI: the current instance's arrays */
  rlx_tensor_view *views;
  int32_t *view_at;
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
/* The concrete graph of the binding s runs at (nodes with concrete params). */
static inline const rlx_graph *rlx_session_graph(const rlx_session *s) { return &s->cur->g; }
/* Whether node i runs the reference kernel at the current binding. */
bool rlx_session_node_is_reference(const rlx_session *s, int32_t i);
/* The name of the kernel node i runs at the current binding. */
const char *rlx_session_kernel_name(const rlx_session *s, int32_t i);

/* Loads with the given paths (tests use this to point at broken files). */
rlx_status rlx_model_load_files(const char *ir_path, const char *weights_path,
                                const rlx_load_options *opts, rlx_model **model_out);

#endif
