/*
 * lower.h — aten -> rlx lowering: the context shared by the handlers, the
 * helpers they use to read arguments and emit nodes, and the handler list.
 *
 * Each handler lowers one aten node into rlx nodes, labelled with the node's
 * FX name, and binds the node's result(s) with lw_bind / lw_bind_multi, which
 * check the inferred shape and dtype against the ones torch recorded. Errors
 * are prefixed with "node '<id>' (<op>): " by the driver.
 */
#ifndef RLX_LOWER_H
#define RLX_LOWER_H

#include <string.h>

#include "import/safetensors.h"
#include "import/torch_ir.h"
#include "ir/graph.h"

/* A scalar node's value: a dim (a size, symbolic or constant), a relation
 * between dims (sym_eq, sym_lt, ...: what _assert_scalar asserts), or a
 * number rlx does not track symbolically (only its recorded value). */
typedef enum lw_scalar_kind { LW_SCALAR_NUMBER, LW_SCALAR_DIM, LW_SCALAR_REL } lw_scalar_kind;
typedef struct lw_scalar_info {
  lw_scalar_kind kind;
  rlx_dim dim;      /* DIM */
  rlx_dim lhs, rhs; /* REL */
  int rel;          /* REL: rlx_rel */
  bool symbolic;    /* DIM/REL: depends on a symbol */
} lw_scalar_info;

typedef struct rlx_lower {
  rlx_graph *g;
  const rlx_torch_ir *ir;
  rlx_strmap vals;      /* aten value name -> rlx value id */
  rlx_strmap multi;     /* multi-output node name -> index into outs */
  rlx_strmap used;      /* multi-output node name -> bitmask of _getitem indices used */
  int32_t **outs;       /* per multi-output node: value id per output (-1: not computed) */
  int32_t *n_outs;
  int32_t n_multi, cap_multi, cap_multi_n;
  rlx_strmap missing;   /* _getitem of an output rlx does not compute -> (multi index << 8 | slot) */
  rlx_strmap scalar_ix; /* scalar-valued node (sym_size, sym_add, ...) -> index into scalars */
  rlx_arg *scalars;     /* their recorded example values */
  lw_scalar_info *sinfo; /* what each one is, as a dim or a relation */
  int32_t n_scalars, cap_scalars, cap_sinfo;
  rlx_strmap cplx;      /* names of the complex values (each held as real pairs, complex.c) */
  const rlx_aten_node *cur;
} rlx_lower;

typedef rlx_status (*rlx_lower_fn)(rlx_lower *lw, const rlx_aten_node *n);

#define RLX_ATEN(name, fn) rlx_status fn(rlx_lower *lw, const rlx_aten_node *n);
#define RLX_ATEN_DYN(name, fn) RLX_ATEN(name, fn)
#define RLX_LIB_OP(ns, name, fn) RLX_ATEN(name, fn)
#define RLX_LIB_OP_DYN(ns, name, fn) RLX_ATEN(name, fn)
#include "import/lower/aten_ops.def"
#undef RLX_LIB_OP_DYN
#undef RLX_LIB_OP
#undef RLX_ATEN_DYN
#undef RLX_ATEN

/* Lowers a parsed torch-ir graph with its weights into g (initialized here).
 * Unsupported ops are all reported in one RLX_ERR_UNSUPPORTED error whose
 * text the exporter's auto-decompose loop parses: "aten->rlx registry does
 * not yet support N op(s): aten.x.y (nodes: a, b), ...". */
rlx_status rlx_lower_graph(const rlx_torch_ir *ir, const rlx_st_file *weights, rlx_graph *g);

/* Registry introspection (for `rlx ops`): entry i's op without overload,
 * "aten.add" or "transformers.grouped_mm_fallback". */
int rlx_lower_registry_count(void);
const char *rlx_lower_registry_name(int i);
/* The registered handler for an op string ("aten.add.Tensor",
 * "transformers.grouped_mm_fallback.default"), or NULL. */
rlx_lower_fn rlx_lower_find(const char *op);
/* A registry entry (aten_ops.def), and the one for an op string, or NULL. */
typedef struct rlx_lower_entry {
  const char *name; /* "aten.add", "transformers.grouped_mm_fallback": namespace.base */
  rlx_lower_fn fn;
  bool dynamic;     /* the handler lowers symbolic shapes and sizes (RLX_ATEN_DYN) */
} rlx_lower_entry;
const rlx_lower_entry *rlx_lower_find_entry(const char *op);
/* The lowering in progress on this thread (set by the driver), which the
 * argument readers' messages describe symbolic scalars from. */
extern _Thread_local rlx_lower *lw_note;

/* ---- helpers for handlers ---- */

/* The overload part of n->op ("Tensor" for "aten.add.Tensor"), "" if none. */
const char *lw_overload(const rlx_aten_node *n);
/* true if the base name of n->op equals `base` ("add" for "aten.add.Tensor",
 * "grouped_mm_fallback" for "transformers.grouped_mm_fallback.default"). */
bool lw_is(const rlx_aten_node *n, const char *base);

rlx_status lw_fail(rlx_status s, const char *fmt, ...) RLX_PRINTF(2, 3);

/* Argument readers: positional `pos` (or -1) or keyword `name` (or NULL).
 * An absent or None argument yields the default; a wrong kind is an error
 * naming the argument. A symbolic scalar ({"sym": name}) reads the value the
 * exporter recorded for it: shapes are specialized to the example inputs. */
const rlx_arg *lw_arg(const rlx_aten_node *n, int pos, const char *name);
/* a, or the recorded value of a symbolic scalar ({"sym": name}) when there
 * is one (a is returned unchanged when not). */
const rlx_arg *lw_resolve(rlx_lower *lw, const rlx_arg *a);
rlx_status lw_tensor(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int32_t *v);
rlx_status lw_opt_tensor(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int32_t *v);
rlx_status lw_int(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int64_t def, int64_t *out);
rlx_status lw_float(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, double def, double *out);
rlx_status lw_bool(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, bool def, bool *out);
/* An int list (a single int counts as a list of one); *count = 0 if absent. */
rlx_status lw_ints(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int64_t *out, int max, int *count);
/* A dtype argument, or `def` when absent/None. */
rlx_status lw_dtype(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int def, int *out);
/* A tensor list (cat, index): value ids, -1 for None entries. */
rlx_status lw_tensor_list(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name,
                          int32_t *out, int max, int *count);
/* A size-like argument that may be symbolic (docs/design.md, "Shapes"): an
 * int, or {"sym": node} of a scalar node whose value is a dim. Handlers that
 * take symbolic sizes read them with these; lw_int / lw_ints refuse a
 * symbolic value (rlx never specializes one to its example value). */
rlx_status lw_dim(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, rlx_dim def, rlx_dim *out);
rlx_status lw_dims(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, rlx_dim *out, int max,
                   int *count);
/* The graph's symbol table, for dim arithmetic in handlers. */
static inline rlx_symtab *lw_syms(rlx_lower *lw) { return &lw->g->syms; }
/* The element count of s as a dim. */
rlx_status rlx_shape_numel_dim_lw(rlx_lower *lw, const rlx_shape *s, rlx_dim *out);
/* Whether two dims have the same value at every binding (equal canonical
 * forms, or equal at sampled bindings: the hints, mins and maxes). */
bool lw_dims_agree(rlx_lower *lw, rlx_dim a, rlx_dim b);
/* Whether a value's shape has a symbolic dim. */
bool lw_symbolic(rlx_lower *lw, int32_t v);

/* Resolves a value name. */
rlx_status lw_ref(rlx_lower *lw, const char *name, int32_t *v);

/* The recorded type of output k of n (NULL if not a tensor). */
const rlx_tinfo *lw_out(const rlx_aten_node *n, int k);
/* Whether output k of a multi-output node is used by some _getitem. */
bool lw_out_used(rlx_lower *lw, const rlx_aten_node *n, int k);

static inline const rlx_value *lw_val(rlx_lower *lw, int32_t v) { return &lw->g->values[v]; }

/* Emitting: nodes are labelled with the current aten node. Return -1 on
 * error (message set). */
int32_t lw_emit(rlx_lower *lw, rlx_op op, const rlx_params *p, const int32_t *in, int n_in);
int32_t lw_emit_node(rlx_lower *lw, rlx_op op, const rlx_params *p, const int32_t *in, int n_in,
                     int n_out);
int32_t lw_cast(rlx_lower *lw, int32_t v, rlx_dtype t);
int32_t lw_reshape(rlx_lower *lw, int32_t v, const rlx_shape *s);
int32_t lw_binary(rlx_lower *lw, rlx_binary_kind k, int32_t a, int32_t b);
/* A constant scalar (rank 0) of dtype t holding v (ints use iv exactly). */
int32_t lw_scalar(rlx_lower *lw, rlx_dtype t, double v, int64_t iv);
/* A Python-scalar argument (an operand of arithmetic) as a rank-0 constant
 * of dtype t. An int converts to a narrower integer dtype by wrapping, as
 * torch's wrapped scalars do; a float converts to an integer dtype only when
 * in range (lw_f64_to), else the error names `what` ("argument 'other'"). */
/* A dim as a rank-0 tensor of dtype t: a constant, or for a symbolic dim a
 * full node whose value is the dim's at each binding. */
int32_t lw_dim_scalar(rlx_lower *lw, rlx_dim d, rlx_dtype t);
/* A Python slice bound at argument pos: an int (one below -2^62 means
 * -2^62: slices clamp) or a symbolic size (shape.c). */
rlx_status lw_slice_bound(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, rlx_dim def,
                          rlx_dim *out);
/* Python slice semantics on a dim of size d, static or symbolic: negative
 * bounds count from the end, then both are clamped to [0, d] with
 * start <= end; a static step longer than the slice becomes its length. */
rlx_status lw_slice_normalize(rlx_lower *lw, rlx_dim d, rlx_dim *start, rlx_dim *end, int64_t *step);
int32_t lw_scalar_arg(rlx_lower *lw, const rlx_arg *a, rlx_dtype t, const char *what);

/* ---- hostile numbers: every int and float argument may be anything ---- */

/* int64 arithmetic on values read from the file: an overflow clears *ok
 * (which stays cleared), so a handler can compute a size and reject it once. */
static inline int64_t lw_add64(int64_t a, int64_t b, bool *ok) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) *ok = false, r = 0;
  return r;
}
static inline int64_t lw_sub64(int64_t a, int64_t b, bool *ok) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) *ok = false, r = 0;
  return r;
}
static inline int64_t lw_mul64(int64_t a, int64_t b, bool *ok) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) *ok = false, r = 0;
  return r;
}

/* Fails with RLX_ERR_SHAPE unless lo <= v <= hi, naming `what`. */
rlx_status lw_check_range(int64_t v, int64_t lo, int64_t hi, const char *what);
/* An op parameter (kernel size, stride, padding, dilation, groups, ...) must
 * lie in [lo, RLX_MAX_PARAM]: entry i of the `n` values v of argument `name`. */
rlx_status lw_check_params(const int64_t *v, int n, int64_t lo, const char *name);
/* An int argument that must lie in [lo, hi] (the error names it). */
rlx_status lw_int_in(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int64_t def, int64_t lo,
                     int64_t hi, int64_t *out);

/* The range of an integer dtype (int64's for the others). */
void lw_int_range(rlx_dtype t, int64_t *lo, int64_t *hi);
/* v as an element of dtype t, as torch's checked scalar conversion
 * (c10::checked_convert): for an integer dtype v must lie in the dtype's
 * range (NaN and the infinities never do) and *iv gets it truncated toward
 * zero; bool takes any value (*iv = v != 0); a float dtype takes any value
 * (*iv = 0). The error (RLX_ERR_UNSUPPORTED) names `what`. */
rlx_status lw_f64_to(double v, rlx_dtype t, const char *what, int64_t *iv);
/* A fill value (full, fill_, masked_fill, constant pads, scatter's value)
 * as dtype t, converted as torch converts one: also an int must fit an
 * integer dtype (an unsigned one takes negative ints down to -max, which
 * wrap, as torch). *v gets the value as a double, *iv the exact integer. */
rlx_status lw_fill_value(rlx_lower *lw, const rlx_arg *a, rlx_dtype t, const char *what, double *v, int64_t *iv);
/* The fill value as a rank-0 constant of dtype t (-1 on error). */
int32_t lw_fill_scalar(rlx_lower *lw, const rlx_arg *a, rlx_dtype t, const char *what);

/* Checks value v, output k of a node, against the type torch recorded (t;
 * NULL: none, anything goes): same dtype, and dims that agree (a complex t
 * means its real pairs). */
rlx_status lw_check_type(rlx_lower *lw, int k, const rlx_value *v, const rlx_tinfo *t);
/* Binds the node's (single) result, checking it against the recorded type. */
rlx_status lw_bind(rlx_lower *lw, const rlx_aten_node *n, int32_t v);
/* Binds result k of a multi-output node (v = -1: not computed). */
rlx_status lw_bind_multi(rlx_lower *lw, const rlx_aten_node *n, const int32_t *v, int count);

/* torch's result_type over tensors and Python scalars. */
typedef struct lw_operand {
  bool is_tensor;
  rlx_dtype dtype; /* tensors */
  int rank;        /* tensors */
  rlx_arg_kind kind; /* scalars: RLX_ARG_INT, _FLOAT or _BOOL */
} lw_operand;
rlx_dtype lw_result_type(const lw_operand *ops, int n);
/* Describes argument `a` (a tensor ref or a scalar) as an operand. */
rlx_status lw_operand_of(rlx_lower *lw, const rlx_arg *a, lw_operand *op, int32_t *v);

/* ---- complex values (complex.c; docs/design.md, "Complex numbers") ---- */

/* Whether the aten value `name` (a node, input or weight) is complex: its
 * rlx value is then its real pairs, the complex shape + [2]. */
static inline bool lw_ref_is_complex(rlx_lower *lw, const char *name) { return rlx_strmap_get(&lw->cplx, name) >= 0; }
/* Whether node n reads or makes a complex value: the driver lowers such a
 * node with rlx_lower_complex, whatever its op. */
bool lw_node_is_complex(rlx_lower *lw, const rlx_aten_node *n);
/* Lowers a node that reads or makes complex values onto real ops over the
 * real pairs; an op it does not know is RLX_ERR_UNSUPPORTED naming it. */
rlx_status rlx_lower_complex(rlx_lower *lw, const rlx_aten_node *n);
/* Whether rlx_lower_complex lowers n's op at symbolic shapes too. */
bool lw_complex_dynamic(const rlx_aten_node *n);
/* The shape of the real pairs of a complex value of shape s (s + [2]);
 * RLX_ERR_UNSUPPORTED when s already has the largest rank. */
rlx_status lw_pairs_shape(const rlx_shape *s, rlx_shape *out);

/* Normalizes axis against rank (a 0-d tensor takes -1 and 0) or fails
 * naming `what` ("argument 'dim'"). */
rlx_status lw_axis(int64_t axis, int rank, const char *what, int *out);

#endif /* RLX_LOWER_H */
