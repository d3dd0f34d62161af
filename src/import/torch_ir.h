/*
 * torch_ir.h — the parsed form of torch-ir.json (format "rlx-torch-ir",
 * version 1), the ATen graph written by `python3 -m rlx.export`.
 *
 * Layout of the file (see DESIGN.md, "torch-ir.json"):
 *
 *   {format, version, model_name, producer, decomposition,
 *    inputs:  [{id, shape, dtype, dynamic?}],
 *    weights: [{id, key, shape, dtype, kind}],
 *    nodes:   [{id, op, args, kwargs, out}],        topological order
 *    outputs: [{ref, shape, dtype} | {const: arg}]}
 *
 * Arguments are tagged objects: {"ref": name}, {"int": n}, {"float": x or
 * "inf"/"-inf"/"nan"}, {"bool": b}, {"str": s}, {"dtype": tok},
 * {"none": true}, {"list": [...]}, {"sym": name}.
 *
 * Dynamic shapes (docs/design.md, "Shapes"): top-level "symbols" and
 * "guards", "sym_shape" next to a recorded shape, "sym" next to a recorded
 * scalar. Every sym_shape entry must evaluate to the recorded shape entry
 * at the symbols' hints.
 *
 * The parser treats the file as hostile: every field is type-checked, every
 * shape is bounded, and errors name the JSON path ("nodes[12] 'conv_1':
 * out.shape[2] must be a non-negative integer") or the byte offset of a
 * syntax error. All memory lives in the struct's pool.
 */
#ifndef RLX_TORCH_IR_H
#define RLX_TORCH_IR_H

#include "core/core.h"
#include "ir/sym.h"

typedef enum rlx_arg_kind {
  RLX_ARG_NONE,
  RLX_ARG_REF,
  RLX_ARG_INT,
  RLX_ARG_FLOAT,
  RLX_ARG_BOOL,
  RLX_ARG_STR,
  RLX_ARG_DTYPE,
  RLX_ARG_LIST,
  RLX_ARG_SYM
} rlx_arg_kind;

typedef struct rlx_arg rlx_arg;
struct rlx_arg {
  rlx_arg_kind kind;
  bool complex; /* DTYPE: "c64"/"c128", a complex dtype; u.dt is its component (f32/f64) */
  union {
    const char *s; /* REF, STR, SYM */
    int64_t i;     /* INT (huge values clamp to INT64_MIN/MAX) */
    double f;      /* FLOAT */
    bool b;        /* BOOL */
    rlx_dtype dt;  /* DTYPE */
    struct {
      rlx_arg *items;
      int32_t n;
    } list;
  } u;
};

/* One recorded tensor type: present is false for a null entry. `shape`
 * holds rlx_dims: where the file gives a sym_shape, its symbolic dims
 * (expressions of the rlx_torch_ir's symtab); `example` is the recorded
 * "shape" (the values at the symbols' hints). */
typedef struct rlx_tinfo {
  bool present;
  /* complex ("c64"/"c128", docs/design.md "Complex numbers"): dtype is the
   * component dtype (f32/f64) and shape the complex shape; the value rlx
   * computes is the real pairs, shape + [2] */
  bool complex;
  rlx_dtype dtype;
  rlx_shape shape;
  rlx_shape example;
} rlx_tinfo;

typedef enum rlx_out_kind { RLX_OUT_NONE, RLX_OUT_TENSOR, RLX_OUT_LIST, RLX_OUT_SCALAR } rlx_out_kind;

typedef struct rlx_aten_node {
  const char *id;  /* FX node name */
  const char *op;  /* "aten.convolution.default", "_getitem", ... */
  rlx_arg *args;
  int32_t n_args;
  const char **kw_names;
  rlx_arg *kw_vals;
  int32_t n_kwargs;
  rlx_out_kind out_kind;
  rlx_tinfo *outs; /* TENSOR: 1 entry; LIST: n_outs entries */
  int32_t n_outs;
  rlx_arg scalar;  /* SCALAR */
  bool has_scalar_dim;
  rlx_dim scalar_dim; /* SCALAR with a recorded "sym": its expression */
} rlx_aten_node;

typedef struct rlx_ir_input {
  const char *id;
  rlx_dtype dtype;
  rlx_shape shape;   /* rlx_dims (symbolic where the file gives sym_shape) */
  rlx_shape example; /* the recorded example shape */
  int32_t dynamic[RLX_MAX_RANK]; /* -1 static, else a symbol id */
  bool has_dynamic;
} rlx_ir_input;

typedef struct rlx_ir_weight {
  const char *id, *key, *kind;
  rlx_dtype dtype;
  rlx_shape shape;
  bool complex; /* "c64"/"c128": dtype is the component and the file holds shape + [2] (real pairs) */
} rlx_ir_weight;

/* A mutated buffer (torch.export's BUFFER_MUTATION): session state that
 * starts at its initial value and is replaced by node `update`'s value
 * after each run (docs/design.md, "State"). */
typedef struct rlx_ir_state {
  const char *id, *key; /* placeholder name, buffer name */
  rlx_dtype dtype;
  rlx_shape shape;
  bool init_zeros;      /* true: starts at zeros; false: at weights.safetensors[key] */
  const char *update;   /* the FX node whose value the state takes after a run */
} rlx_ir_state;

typedef struct rlx_ir_output {
  bool is_const;
  const char *ref; /* !is_const */
  rlx_tinfo type;  /* !is_const */
  rlx_arg value;   /* is_const */
} rlx_ir_output;

/* A guard from the file: lhs rel rhs must hold at every binding. */
typedef struct rlx_ir_guard {
  rlx_dim lhs, rhs;
  int rel; /* rlx_rel (ir/graph.h) */
  const char *source;
} rlx_ir_guard;

typedef struct rlx_torch_ir {
  rlx_pool pool;
  const char *model_name, *producer, *decomposition;
  rlx_symtab syms; /* "symbols" and every expression the file's shapes use */
  rlx_ir_guard *guards;
  int32_t n_guards;
  rlx_ir_input *inputs;
  int32_t n_inputs;
  rlx_ir_weight *weights;
  int32_t n_weights;
  rlx_aten_node *nodes;
  int32_t n_nodes;
  rlx_ir_output *outputs;
  int32_t n_outputs;
  rlx_ir_state *states; /* "state" (absent: none) */
  int32_t n_states;
} rlx_torch_ir;

/* Parses torch-ir.json text. `path` is only used in messages. On error the
 * struct is left freed. */
rlx_status rlx_torch_ir_parse(const char *text, size_t len, const char *path, rlx_torch_ir *ir);
/* Reads and parses a file (a regular file of at most RLX_TORCH_IR_MAX_BYTES:
 * a large transformer's graph is a few MB). */
#define RLX_TORCH_IR_MAX_BYTES ((size_t)256 << 20)
rlx_status rlx_torch_ir_load(const char *path, rlx_torch_ir *ir);
void rlx_torch_ir_free(rlx_torch_ir *ir);

/* Argument access for lowering: positional `pos` or keyword `name`. NULL when
 * absent (or when the value is {"none": true} and none_is_absent). */
const rlx_arg *rlx_aten_arg(const rlx_aten_node *n, int pos, const char *name);


#endif /* RLX_TORCH_IR_H */
