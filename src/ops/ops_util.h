/*
 * ops_util.h — helpers shared by the op files: input access, broadcasting,
 * strided iteration, small printing helpers. Internal to src/ops/.
 */
#ifndef RLX_OPS_UTIL_H
#define RLX_OPS_UTIL_H

#include <stdio.h>
#include <string.h>

#include "ir/graph.h"

/* Value of input k of node n, or NULL when absent. */
static inline const rlx_value *rlx_in(const rlx_graph *g, const rlx_node *n, int k) {
  if (k >= n->n_in || n->in[k] < 0) return NULL;
  return &g->values[n->in[k]];
}

static inline rlx_shape rlx_view_shape(const rlx_tensor_view *v) {
  rlx_shape s;
  s.rank = v->rank;
  memcpy(s.dims, v->dims, sizeof s.dims);
  return s;
}


/* NumPy broadcast of a and b into *out; RLX_ERR_SHAPE when incompatible. */
rlx_status rlx_broadcast(const rlx_shape *a, const rlx_shape *b, rlx_shape *out);

/* Strides (elements) for reading `in` while walking `out` (right-aligned
 * broadcasting: a size-1 or missing axis gets stride 0). */
void rlx_broadcast_strides(const rlx_shape *in, const rlx_shape *out, int64_t st[RLX_MAX_RANK]);

/* Offset of linear element `i` of shape `s` under strides `st`. */
static inline int64_t rlx_strided_offset(const rlx_shape *s, const int64_t *st, int64_t i) {
  int64_t off = 0;
  for (int d = s->rank - 1; d >= 0; d--) {
    int64_t q = s->dims[d] ? i / s->dims[d] : 0;
    off += (i - q * s->dims[d]) * st[d];
    i = q;
  }
  return off;
}

/* int64 arithmetic on values read from files: an overflow clears *ok (which
 * stays cleared), so infer can compute a size and then reject it once. */
static inline int64_t rlx_add64(int64_t a, int64_t b, bool *ok) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) *ok = false;
  return r;
}
static inline int64_t rlx_mul64(int64_t a, int64_t b, bool *ok) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) *ok = false;
  return r;
}

/* Whether an op parameter (stride, padding, dilation, kernel size, output
 * size) lies in [lo, RLX_MAX_PARAM]: within that bound the size arithmetic
 * of the infer functions and kernels cannot overflow int64. */
static inline bool rlx_param_ok(int64_t v, int64_t lo) { return v >= lo && v <= RLX_MAX_PARAM; }

/* The value of a float unary kind at x (unary.c); f64 selects double-precision
 * rounding rules for the kinds that differ (round with decimals). */
double rlx_unary_apply(const rlx_unary_params *p, double x, bool f64);
/* The value of a float, non-predicate binary kind at (a, b) (binary.c). */
double rlx_binary_apply(rlx_binary_kind k, double a, double b, bool f64);

/* Index v into a dim of size d (negative ones from the end when wrap): the
 * error names the index as given (gather, index_select and the fast gather). */
rlx_status rlx_resolve_index(int64_t v, int64_t d, bool wrap, int64_t *out);

/* The epilogue of a fused matmul/conv (bias already added): + residual, act.
 * Infer checks the residual input; the reference kernels call apply. */
rlx_status rlx_epilogue_infer(const rlx_value *residual, const rlx_epilogue *ep, const rlx_shape *os, rlx_dtype od);
void rlx_epilogue_apply(const rlx_epilogue *ep, const rlx_tensor_view *residual, rlx_tensor_view *out);
void rlx_epilogue_print(const rlx_epilogue *ep, bool has_residual, char *buf, size_t cap);

/* Checks grouped_matmul's run-time offsets [E] against the S rows of its
 * input (grouped_matmul.c): RLX_ERR_RUNTIME naming the first bad entry unless
 * 0 <= offs[0] <= offs[1] <= ... <= S. */
rlx_status rlx_grouped_offsets_check(const rlx_tensor_view *offs, int64_t S);

/* ---- symbolic dims in infer (docs/design.md, "Shapes") ----
 * Checks that cannot be decided at load (a symbolic dim against a bound)
 * pass when they may hold at some binding: every binding is re-inferred
 * with concrete shapes before it runs, which refuses the bindings where they
 * fail, naming the node. */

/* Whether a <= b may hold at some binding (false: a > b at every binding). */
bool rlx_dim_may_le(const rlx_graph *g, rlx_dim a, rlx_dim b);
/* The element count of s as a dim. */
rlx_status rlx_shape_numel_dim(const rlx_graph *g, const rlx_shape *s, rlx_dim *out);

/* The length of slice p of a dim d (shape.c), checking its bounds; and its
 * concretize (slice, slice_scatter). */
rlx_status rlx_slice_len(const rlx_graph *g, const rlx_slice_params *p, rlx_dim d, rlx_dim *len);
void rlx_slice_concretize(rlx_params *p, const int64_t *expr_vals);

/* Pad's source index along one axis (src/ops/shape.c): the input index output position j reads, for an axis
 * of size d padded by lo before it, or -1 for the fill of constant padding (the reference and the fast pad
 * kernel, src/cpu/movement.c). */
int64_t rlx_pad_src(rlx_pad_mode mode, int64_t j, int64_t lo, int64_t d);

/* Errors for infer functions (the node's label is added by the caller). */
#define RLX_INFER_FAIL(...) return rlx_errorf(RLX_ERR_SHAPE, __VA_ARGS__)

/* Appends formatted text to buf (print helpers). */
void rlx_bprintf(char *buf, size_t cap, const char *fmt, ...) RLX_PRINTF(3, 4);
void rlx_bprint_ints(char *buf, size_t cap, const char *name, const int64_t *v, int n);
/* Appends dim d: its value, or its expression in the symbol table of the
 * graph being printed (rlx_node_params_str sets it). */
void rlx_bprint_dim(char *buf, size_t cap, rlx_dim d);

/* Declares `const rlx_op_vtable rlx_op_<name>`. */
#define RLX_OP(e, name, mi, ma, mo) extern const rlx_op_vtable rlx_op_##name;
#include "ir/ops.def"
#undef RLX_OP

#endif /* RLX_OPS_UTIL_H */
