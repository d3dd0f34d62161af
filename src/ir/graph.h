/*
 * graph.h — the rlx graph: typed SSA values and nodes in topological order.
 *
 * Invariants (checked by rlx_graph_verify):
 *  - every node's op is valid and its input/output counts fit ops.def;
 *  - every input value id is -1 (an absent optional input, only at positions
 *    past the op's minimum input count) or a value defined before the node:
 *    an INPUT, WEIGHT or CONST value, or the output of an earlier node (so
 *    the graph is acyclic and in topological order);
 *  - a NODE value's producer/slot point back at the node that defines it;
 *  - each node's outputs have exactly the shapes and dtypes its op's infer
 *    function computes from its inputs and parameters.
 *
 * Ownership: the graph owns its arrays, its pool (names, edge lists) and the
 * data of CONST values; WEIGHT data belongs to whoever mapped the weights
 * file and must outlive the graph.
 */
#ifndef RLX_GRAPH_H
#define RLX_GRAPH_H

#include "core/core.h"
#include "ir/params.h"
#include "ir/sym.h"

typedef enum rlx_op {
#define RLX_OP(e, name, mi, ma, mo) RLX_OP_##e,
#include "ir/ops.def"
#undef RLX_OP
  RLX_OP_COUNT
} rlx_op;

typedef enum rlx_value_kind {
  RLX_VALUE_INPUT,  /* a graph input, bound at run time */
  RLX_VALUE_WEIGHT, /* a parameter or buffer from weights.safetensors */
  RLX_VALUE_CONST,  /* a constant made by lowering or folding (owned) */
  RLX_VALUE_NODE,   /* the output of a node */
  RLX_VALUE_STATE   /* session state (a mutated buffer, a KV cache): memory each session owns, starting at
                       `data` (NULL: zeros) and updated by every run from its update output (rlx_graph) */
} rlx_value_kind;

typedef struct rlx_value {
  rlx_value_kind kind;
  rlx_dtype dtype;
  rlx_shape shape;
  int32_t producer;  /* NODE: index of the defining node; else -1 */
  int32_t slot;      /* NODE: output slot; INPUT: input index */
  const char *name;  /* input id, weight key, or producer label (pool) */
  const void *data;  /* WEIGHT / CONST: the element bytes */
} rlx_value;

typedef struct rlx_node {
  rlx_op op;
  int32_t n_in, n_out;
  int32_t *in;       /* value ids (pool); -1: absent optional input */
  int32_t *out;      /* value ids (pool) */
  rlx_params p;
  const char *label; /* the FX node name this node was lowered from */
  const char *aten;  /* that FX node's aten op, e.g. "aten.convolution.default" */
  const char *fused; /* labels of the nodes fusion passes folded into this one,
                        comma-separated ("bn_3,relu_2"), or NULL */
} rlx_node;

/* A relation between two dims that must hold at every binding of the
 * symbols (docs/design.md, "Shapes"): from torch.export's guards and asserts,
 * and from checks shape inference could not decide at load. */
typedef enum rlx_rel { RLX_REL_EQ, RLX_REL_NE, RLX_REL_LT, RLX_REL_LE, RLX_REL_GT, RLX_REL_GE } rlx_rel;

typedef struct rlx_guard {
  rlx_dim lhs, rhs;
  rlx_rel rel;
  const char *what; /* where it comes from, for messages (pool) */
} rlx_guard;

/* What the localizer and the tools need of the source FX graph, one per
 * node of torch-ir.json, so that nothing after loading needs the parsed file
 * (docs/design.md, "Runtime"). */
typedef struct rlx_fx_node {
  const char *id, *op;
  int32_t *in;             /* the FX nodes its tensor arguments read (graph inputs and weights left out) */
  int32_t n_in;
  int32_t getitem_of;      /* _getitem: the multi-output FX node it reads, else -1 */
  int64_t getitem_index;
  const char *inputs_desc; /* its tensor arguments and their recorded types: "x f32[2, 3], fc f32[3]" */
  const char *out_desc;    /* its recorded output type: "f32[2, 4]", "" for a scalar */
} rlx_fx_node;

/* Where the program came from (torch-ir.json's header), for reports. */
typedef struct rlx_program_info {
  const char *model_name, *producer, *decomposition;
  int32_t n_aten_nodes, n_weights;
  const char **output_names; /* per graph output: the FX node it is ("const" for a constant) */
  bool *output_const;        /* per graph output: a constant (no tensor to compare) */
  rlx_fx_node *fx;           /* n_aten_nodes entries */
} rlx_program_info;

typedef struct rlx_graph {
  rlx_pool pool;
  /* set by the lowering, in the pool; a clone borrows the source's (the
   * compiled model never outlives its model) */
  const rlx_program_info *prog;
  /* Shape symbols and the expressions of symbolic dims. Infer functions add
   * expressions to it through a const graph (rlx_graph_syms): it is an
   * append-only, hash-consed cache of values, so that does not change what
   * the graph means. Nothing adds to it after compile. */
  rlx_symtab syms;
  rlx_guard *guards;
  int32_t n_guards, cap_guards;
  rlx_value *values;
  int32_t n_values, cap_values;
  rlx_node *nodes;
  int32_t n_nodes, cap_nodes;
  int32_t *inputs; /* value ids of graph inputs, in order */
  int32_t n_inputs, cap_inputs;
  int32_t *outputs; /* value ids of graph outputs, in order */
  int32_t n_outputs, cap_outputs;
  /* Session state (docs/design.md, "State"): STATE value ids, in order. The
   * last n_states graph outputs are their updates, in the same order: what
   * each run leaves in the state (the user's outputs are the first
   * n_outputs - n_states). Being outputs keeps the updates live through
   * every pass. */
  int32_t *states;
  int32_t n_states, cap_states;
  void **owned; /* CONST data buffers to free */
  int32_t n_owned, cap_owned;
  /* The value each FX node of the source program was lowered to, by the
   * node's index in torch-ir.json (-1: none, e.g. an assert or a scalar).
   * Value ids are stable across passes; the localizer uses this map. */
  int32_t *fx_values;
  int32_t n_fx_values;
} rlx_graph;

/* Per-op functions. `in` holds one view per input (data NULL for an absent
 * optional input), `out` one per output; all views are contiguous. */
typedef struct rlx_op_vtable {
  /* Validates inputs and params; writes each output's shape and dtype.
   * Errors name the problem; the caller adds the node's label. */
  rlx_status (*infer)(const rlx_graph *g, const rlx_node *n, rlx_shape *out_shapes,
                      rlx_dtype *out_dtypes);
  /* The reference kernel: plain C, single-threaded, obviously correct. */
  rlx_status (*ref)(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                    void *scratch);
  /* Scratch bytes the reference kernel needs (NULL: none). */
  size_t (*scratch)(const rlx_graph *g, const rlx_node *n);
  /* Writes a short description of the params ("axis=-1 eps=1e-05"). */
  void (*print)(const rlx_node *n, char *buf, size_t cap);
  /* Whether infer handles symbolic dims in its inputs (and, for the ops
   * with concretize, in its params). rlx_graph_add_node refuses symbolic
   * inputs to the others, naming the op. */
  bool symbolic;
  /* For ops whose params hold dims (targets, bounds, sizes): replaces each
   * symbolic one by its value at a binding (expr_vals: rlx_symtab_eval). */
  void (*concretize)(rlx_params *p, const int64_t *expr_vals);
} rlx_op_vtable;

typedef struct rlx_op_info {
  const char *name;
  int min_in, max_in, max_out;
  const rlx_op_vtable *vt;
} rlx_op_info;

extern const rlx_op_info rlx_op_table[RLX_OP_COUNT];

/* Whether an elementwise node can be a step of a fused op (ops/fused.c):
 * a float unary or arithmetic binary kind. */
bool rlx_fused_takes(const rlx_node *n);

/* ---- building ---- */

void rlx_graph_init(rlx_graph *g);
void rlx_graph_free(rlx_graph *g);
/* Deep copy (const data duplicated, weight data shared). */
rlx_status rlx_graph_clone(const rlx_graph *src, rlx_graph *dst);

/* Adds an INPUT value; returns its id or -1 (error set). */
int32_t rlx_graph_add_input(rlx_graph *g, const char *name, rlx_dtype t, const rlx_shape *s);
/* Adds a STATE value; `init` (borrowed, numel * size bytes) is its initial
 * value, NULL for zeros. Its update is added later, with
 * rlx_graph_add_state_update, after every user output. */
int32_t rlx_graph_add_state(rlx_graph *g, const char *name, rlx_dtype t, const rlx_shape *s, const void *init);
/* Appends state k's update (a value of the state's dtype and shape) as the
 * next graph output; states are updated in order, after the user outputs. */
rlx_status rlx_graph_add_state_update(rlx_graph *g, int32_t value);
/* The graph outputs the user sees (the rest are state updates). */
static inline int32_t rlx_graph_user_outputs(const rlx_graph *g) { return g->n_outputs - g->n_states; }
/* Adds a WEIGHT value over borrowed bytes. */
int32_t rlx_graph_add_weight(rlx_graph *g, const char *key, rlx_dtype t, const rlx_shape *s,
                             const void *data);
/* Adds a CONST value; `data` (numel * size bytes) is copied. */
int32_t rlx_graph_add_const(rlx_graph *g, rlx_dtype t, const rlx_shape *s, const void *data);
/* Adds a CONST value and takes ownership of `data` (an rlx_aligned_alloc block). */
int32_t rlx_graph_add_const_owned(rlx_graph *g, rlx_dtype t, const rlx_shape *s, void *data);

/* Appends a node, runs its op's infer and creates its output values.
 * `in` may contain -1 for absent optional inputs. Returns the node index, or
 * -1 with the error set (prefixed by the label). Output value ids are in
 * g->nodes[idx].out. */
int32_t rlx_graph_add_node(rlx_graph *g, rlx_op op, const rlx_params *p, const int32_t *in,
                           int32_t n_in, int32_t n_out, const char *label, const char *aten);

/* Convenience: add a node with one output and return that value id (-1 on error). */
int32_t rlx_graph_add1(rlx_graph *g, rlx_op op, const rlx_params *p, const int32_t *in,
                       int32_t n_in, const char *label, const char *aten);

rlx_status rlx_graph_add_output(rlx_graph *g, int32_t value);

/* The graph's symbol table, writable for infer functions (see rlx_graph). */
static inline rlx_symtab *rlx_graph_syms(const rlx_graph *g) { return (rlx_symtab *)&g->syms; }

/* Whether a shape has a symbolic dim. */
bool rlx_shape_is_symbolic(const rlx_shape *s);
/* A valid shape at some binding: rank 0..8, every constant dim >= 0, every
 * symbolic dim's upper bound >= 0, and the product of the upper bounds at
 * most RLX_MAX_NUMEL (rlx_shape_valid for static shapes). */
bool rlx_graph_shape_valid(const rlx_graph *g, const rlx_shape *s);
/* The largest element count of a value over all bindings (its static count
 * when it has no symbolic dim). */
int64_t rlx_value_max_numel(const rlx_graph *g, const rlx_value *v);
/* "[2, seq, 768]" (symbolic dims as expressions) into buf; returns buf. */
char *rlx_graph_shape_str(const rlx_graph *g, const rlx_shape *s, char *buf, size_t cap);
/* Adds a guard (what: copied). */
rlx_status rlx_graph_add_guard(rlx_graph *g, rlx_dim lhs, rlx_rel rel, rlx_dim rhs, const char *what);
/* "==", "<=", ... */
const char *rlx_rel_name(rlx_rel r);

/* A value's view (shape, dtype; data from the value where it has data). */
rlx_tensor_view rlx_value_view(const rlx_value *v);
size_t rlx_value_nbytes(const rlx_value *v);

/* ---- checking, printing ---- */

/* The IR verifier (see the invariants above). `stage` names the pass that ran
 * last, for the message. */
rlx_status rlx_graph_verify(const rlx_graph *g, const char *stage);

/* Prints params of node n ("" if none). */
void rlx_node_params_str(const rlx_graph *g, const rlx_node *n, char *buf, size_t cap);

#endif /* RLX_GRAPH_H */
