/*
 * complex.c — lowering of complex values onto real ops (docs/design.md,
 * "Complex numbers").
 *
 * rlx's IR and kernels are real. A complex value of shape S and dtype
 * complex64 (complex128) is held as its real pairs: a real value of shape
 * S + [2] and dtype f32 (f64), [..., 0] the real and [..., 1] the imaginary
 * part, which is exactly torch.view_as_real's layout. Complex weights come
 * from the file in that layout (torch-ir.json says "storage": "real_pairs").
 *
 * The driver sends every node that reads or makes a complex value here
 * (lw_node_is_complex), whatever its op; each op below maps onto real ops
 * over the pairs: view_as_complex and view_as_real are the identity (the
 * pairs are the view), shape ops act on the complex axes and carry the
 * trailing 2 along, arithmetic works on the real and imaginary parts
 * (slices [..., 0:1] and [..., 1:2], joined again by a concat), and the FFTs
 * are the real `fft` op (complex_fft.c). Any other op on a complex value is
 * RLX_ERR_UNSUPPORTED naming the op (the driver adds the FX node).
 *
 * Output shapes are torch's recorded ones, which lw_bind checks against what
 * the emitted nodes infer. Symbolic shapes: handlers marked dyn below lower
 * them (the recorded types carry the symbolic dims); the driver refuses a
 * symbolic node of any other complex op, naming it.
 */
#include <stdio.h>

#include "import/lower/complex.h"

rlx_status lw_pairs_shape(const rlx_shape *s, rlx_shape *out) {
  if (s->rank >= RLX_MAX_RANK)
    return lw_fail(RLX_ERR_UNSUPPORTED, "a complex tensor of rank %d is held as rank-%d real pairs, over rlx's "
                   "limit of %d", s->rank, s->rank + 1, RLX_MAX_RANK);
  *out = *s;
  out->dims[out->rank++] = 2;
  return RLX_OK;
}

static bool arg_complex(rlx_lower *lw, const rlx_arg *a, int depth) {
  if (!a || depth > 16) return false;
  if (a->kind == RLX_ARG_REF) return lw_ref_is_complex(lw, a->u.s);
  if (a->kind == RLX_ARG_LIST)
    for (int32_t k = 0; k < a->u.list.n; k++)
      if (arg_complex(lw, &a->u.list.items[k], depth + 1)) return true;
  return false;
}

bool lw_node_is_complex(rlx_lower *lw, const rlx_aten_node *n) {
  for (int32_t k = 0; k < n->n_outs; k++)
    if ((n->out_kind == RLX_OUT_TENSOR || n->out_kind == RLX_OUT_LIST) && n->outs[k].present && n->outs[k].complex)
      return true;
  for (int32_t i = 0; i < n->n_args; i++)
    if (arg_complex(lw, &n->args[i], 0)) return true;
  for (int32_t i = 0; i < n->n_kwargs; i++)
    if (arg_complex(lw, &n->kw_vals[i], 0)) return true;
  return false;
}

/* ---- helpers (complex.h) ---- */

rlx_status cx_tensor(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, cx_val *out) {
  const rlx_arg *a = lw_arg(n, pos, name);
  rlx_status st = lw_tensor(lw, n, pos, name, &out->v);
  if (st) return st;
  out->complex = lw_ref_is_complex(lw, a->u.s);
  return RLX_OK;
}

int cx_rank(rlx_lower *lw, const cx_val *x) { return lw_val(lw, x->v)->shape.rank - (x->complex ? 1 : 0); }

rlx_status cx_out(const rlx_aten_node *n, const rlx_tinfo **t, rlx_shape *pairs) {
  *t = lw_out(n, 0);
  if (!*t) return lw_fail(RLX_ERR_FORMAT, "the output type is not recorded");
  if (!(*t)->complex) return *pairs = (*t)->shape, RLX_OK;
  return lw_pairs_shape(&(*t)->shape, pairs);
}

int32_t cx_part(rlx_lower *lw, int32_t v, int k) {
  if (v < 0) return -1;
  int r = lw_val(lw, v)->shape.rank;
  rlx_params p = {.slice = {.axis = r - 1, .start = k, .end = k + 1, .step = 1}};
  return lw_emit(lw, RLX_OP_SLICE, &p, &v, 1);
}

/* v broadcast to shape s (no node when it has it). */
static int32_t expand_to(rlx_lower *lw, int32_t v, const rlx_shape *s) {
  if (v < 0 || rlx_shape_eq(&lw_val(lw, v)->shape, s)) return v;
  rlx_params p = {.shape = {.shape = *s}};
  return lw_emit(lw, RLX_OP_EXPAND, &p, &v, 1);
}

/* NumPy broadcast of a and b into *s (false when they do not broadcast). */
static bool broadcast(const rlx_shape *a, const rlx_shape *b, rlx_shape *s) {
  s->rank = RLX_MAX(a->rank, b->rank);
  for (int i = 0; i < s->rank; i++) {
    int ia = i - (s->rank - a->rank), ib = i - (s->rank - b->rank);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) return false;
    s->dims[i] = da == 1 ? db : da;
  }
  return true;
}

int32_t cx_join(rlx_lower *lw, int32_t re, int32_t im) {
  if (re < 0 || im < 0) return -1;
  rlx_shape s;
  const rlx_shape *a = &lw_val(lw, re)->shape, *b = &lw_val(lw, im)->shape;
  if (!broadcast(a, b, &s)) {
    lw_fail(RLX_ERR_SHAPE, "the real and imaginary parts do not broadcast");
    return -1;
  }
  int32_t in[2] = {expand_to(lw, re, &s), expand_to(lw, im, &s)};
  if (in[0] < 0 || in[1] < 0) return -1;
  rlx_params p = {.axis = {.axis = s.rank - 1}};
  return lw_emit(lw, RLX_OP_CONCAT, &p, in, 2);
}

int32_t cx_column(rlx_lower *lw, int32_t v) {
  if (v < 0) return -1;
  rlx_shape s;
  if (lw_pairs_shape(&lw_val(lw, v)->shape, &s)) return -1;
  s.dims[s.rank - 1] = 1;
  return lw_reshape(lw, v, &s);
}

int32_t cx_pairs(rlx_lower *lw, const cx_val *x, rlx_dtype comp) {
  if (x->complex) return lw_cast(lw, x->v, comp);
  int32_t re = cx_column(lw, lw_cast(lw, x->v, comp));
  if (re < 0) return -1;
  rlx_params p = {.full = {.dtype = comp, .shape = lw_val(lw, re)->shape}};
  return cx_join(lw, re, lw_emit(lw, RLX_OP_FULL, &p, NULL, 0));
}

/* ---- view_as_complex, view_as_real, polar, complex, real, imag ---- */

/* view_as_complex / view_as_real (and their _copy forms): the pairs are the view. */
static rlx_status lower_view_as(rlx_lower *lw, const rlx_aten_node *n) {
  cx_val x;
  rlx_status st = cx_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  bool to_complex = lw_is(n, "view_as_complex") || lw_is(n, "view_as_complex_copy");
  if (to_complex == x.complex)
    return lw_fail(RLX_ERR_SHAPE, "the input is %s already", x.complex ? "complex" : "real");
  const rlx_value *xv = lw_val(lw, x.v);
  if (to_complex && (xv->shape.rank == 0 || xv->shape.dims[xv->shape.rank - 1] != 2))
    return lw_fail(RLX_ERR_SHAPE, "view_as_complex needs a last dim of size 2");
  if (to_complex && xv->dtype != RLX_DTYPE_F32 && xv->dtype != RLX_DTYPE_F64)
    return lw_fail(RLX_ERR_UNSUPPORTED, "view_as_complex of %s: rlx has complex64 and complex128 (f32 and f64 "
                   "pairs)", rlx_dtype_name(xv->dtype));
  return lw_bind(lw, n, x.v);
}

/* polar(abs, angle) = abs cos(angle) + i abs sin(angle); complex(real, imag). */
static rlx_status lower_polar(rlx_lower *lw, const rlx_aten_node *n) {
  bool polar = lw_is(n, "polar");
  cx_val a, b;
  const rlx_tinfo *t;
  rlx_shape ps;
  rlx_status st = cx_tensor(lw, n, 0, polar ? "abs" : "real", &a);
  if (!st) st = cx_tensor(lw, n, 1, polar ? "angle" : "imag", &b);
  if (!st) st = cx_out(n, &t, &ps);
  if (st) return st;
  if (a.complex || b.complex) return lw_fail(RLX_ERR_UNSUPPORTED, "%s takes real tensors", polar ? "polar" : "complex");
  int32_t x = cx_column(lw, lw_cast(lw, a.v, t->dtype)), y = cx_column(lw, lw_cast(lw, b.v, t->dtype));
  if (!polar) return lw_bind(lw, n, cx_join(lw, x, y));
  rlx_params pc = {.unary = {.kind = RLX_UNARY_COS}}, ps_ = {.unary = {.kind = RLX_UNARY_SIN}};
  int32_t c = y < 0 ? -1 : lw_emit(lw, RLX_OP_UNARY, &pc, &y, 1);
  int32_t s = y < 0 ? -1 : lw_emit(lw, RLX_OP_UNARY, &ps_, &y, 1);
  if (x < 0 || c < 0 || s < 0) return rlx_last_status();
  return lw_bind(lw, n, cx_join(lw, lw_binary(lw, RLX_BINARY_MUL, x, c), lw_binary(lw, RLX_BINARY_MUL, x, s)));
}

/* real / imag: part k, without its axis. */
static rlx_status lower_part(rlx_lower *lw, const rlx_aten_node *n, int k) {
  cx_val x;
  const rlx_tinfo *t;
  rlx_shape ps;
  rlx_status st = cx_tensor(lw, n, 0, "self", &x);
  if (!st) st = cx_out(n, &t, &ps);
  if (st) return st;
  if (!x.complex) return k ? lw_fail(RLX_ERR_UNSUPPORTED, "imag of a real tensor") : lw_bind(lw, n, x.v);
  return lw_bind(lw, n, lw_reshape(lw, cx_part(lw, x.v, k), &ps));
}

/* _to_copy / to / type_as / clone-like conversions: complex -> complex casts
 * the pairs, real -> complex adds a zero imaginary part, complex -> real
 * keeps the real part (torch discards the imaginary part, with a warning). */
static rlx_status lower_convert(rlx_lower *lw, const rlx_aten_node *n) {
  cx_val x;
  const rlx_tinfo *t;
  rlx_shape ps;
  rlx_status st = cx_tensor(lw, n, 0, "self", &x);
  if (!st) st = cx_out(n, &t, &ps);
  if (st) return st;
  if (t->complex) return lw_bind(lw, n, cx_pairs(lw, &x, t->dtype));
  rlx_shape s = t->shape;
  return lw_bind(lw, n, lw_cast(lw, lw_reshape(lw, cx_part(lw, x.v, 0), &s), t->dtype));
}

/* ---- the dispatch ---- */

typedef rlx_status (*cx_handler)(rlx_lower *lw, const rlx_aten_node *n);

static rlx_status lower_real(rlx_lower *lw, const rlx_aten_node *n) { return lower_part(lw, n, 0); }
static rlx_status lower_imag(rlx_lower *lw, const rlx_aten_node *n) { return lower_part(lw, n, 1); }

/* dyn: the handler lowers symbolic shapes too (docs/design.md, "Shapes"):
 * it emits only ops whose infer is symbolic, takes sizes from the recorded
 * (symbolic) output type and compares a symbolic size with nothing but
 * equality. Pads need static sizes. */
static const struct {
  const char *op;
  cx_handler fn;
  bool dyn;
} handlers[] = {
    {"view_as_complex", lower_view_as, true}, {"view_as_real", lower_view_as, true}, {"view_as_complex_copy", lower_view_as, true},
    {"view_as_real_copy", lower_view_as, true}, {"polar", lower_polar, true}, {"complex", lower_polar, true},
    {"real", lower_real, true}, {"imag", lower_imag, true},
    {"_to_copy", lower_convert, true}, {"to", lower_convert, true}, {"type_as", lower_convert, true},
    {"_assert_tensor_metadata", rlx_lower_noop, true},
    /* aliases: the pairs are the value */
    {"clone", rlx_lower_alias, true}, {"contiguous", rlx_lower_alias, true}, {"detach", rlx_lower_alias, true},
    {"alias", rlx_lower_alias, true}, {"alias_copy", rlx_lower_alias, true}, {"detach_copy", rlx_lower_alias, true},
    {"lift_fresh_copy", rlx_lower_alias, true}, {"resolve_conj", rlx_lower_alias, true}, {"resolve_neg", rlx_lower_alias, true},
    /* elementwise (complex_ops.c) */
    {"mul", cx_lower_arith, true}, {"add", cx_lower_arith, true}, {"sub", cx_lower_arith, true}, {"div", cx_lower_arith, true},
    {"rsub", cx_lower_arith, true}, {"neg", cx_lower_unary, true}, {"conj", cx_lower_unary, true}, {"_conj", cx_lower_unary, true},
    {"conj_physical", cx_lower_unary, true}, {"_conj_physical", cx_lower_unary, true}, {"positive", cx_lower_unary, true},
    {"abs", cx_lower_abs, true}, {"angle", cx_lower_abs, true}, {"sum", cx_lower_reduce, true}, {"mean", cx_lower_reduce, true},
    /* shape ops (complex_ops.c) */
    {"view", cx_lower_reshape, true}, {"_unsafe_view", cx_lower_reshape, true}, {"reshape", cx_lower_reshape, true},
    {"view_copy", cx_lower_reshape, true}, {"_reshape_alias", cx_lower_reshape, true}, {"flatten", cx_lower_reshape, true},
    {"unflatten", cx_lower_reshape, true}, {"unsqueeze", cx_lower_reshape, true}, {"squeeze", cx_lower_reshape, true},
    {"unsqueeze_copy", cx_lower_reshape, true}, {"squeeze_copy", cx_lower_reshape, true}, {"view_as", cx_lower_reshape, true},
    {"expand", cx_lower_expand, true}, {"expand_copy", cx_lower_expand, true},
    {"permute", cx_lower_permute, true}, {"permute_copy", cx_lower_permute, true}, {"transpose", cx_lower_permute, true},
    {"transpose_copy", cx_lower_permute, true}, {"t", cx_lower_permute, true}, {"t_copy", cx_lower_permute, true},
    {"slice", cx_lower_slice, true}, {"slice_copy", cx_lower_slice, true}, {"select", cx_lower_slice, true},
    {"select_copy", cx_lower_slice, true}, {"narrow", cx_lower_slice, true}, {"cat", cx_lower_cat, true}, {"stack", cx_lower_cat, true},
    {"constant_pad_nd", cx_lower_pad, false}, {"pad", cx_lower_pad, false},
    /* the Fourier transforms (complex_fft.c) */
    {"_fft_r2c", cx_lower_fft_prim, true}, {"_fft_c2c", cx_lower_fft_prim, true}, {"_fft_c2r", cx_lower_fft_prim, true},
    {"fft_fft", cx_lower_fft, true}, {"fft_ifft", cx_lower_fft, true}, {"fft_rfft", cx_lower_fft, true}, {"fft_irfft", cx_lower_fft, true},
    {"fft_hfft", cx_lower_fft, true}, {"fft_ihfft", cx_lower_fft, true}, {"fft_fftn", cx_lower_fft, true}, {"fft_ifftn", cx_lower_fft, true},
    {"fft_fft2", cx_lower_fft, true}, {"fft_ifft2", cx_lower_fft, true}, {"fft_rfftn", cx_lower_fft, true},
    {"fft_rfft2", cx_lower_fft, true}, {"fft_irfftn", cx_lower_fft, true}, {"fft_irfft2", cx_lower_fft, true},
    {"fft_hfftn", cx_lower_fft, true}, {"fft_hfft2", cx_lower_fft, true}, {"fft_ihfftn", cx_lower_fft, true},
    {"fft_ihfft2", cx_lower_fft, true},
};

bool lw_complex_dynamic(const rlx_aten_node *n) {
  for (size_t i = 0; i < RLX_COUNTOF(handlers); i++)
    if (lw_is(n, handlers[i].op)) return handlers[i].dyn;
  return false;
}

rlx_status rlx_lower_complex(rlx_lower *lw, const rlx_aten_node *n) {
  if (strncmp(n->op, "aten.", 5))
    return lw_fail(RLX_ERR_UNSUPPORTED, "rlx lowers only aten ops on complex values");
  for (size_t i = 0; i < RLX_COUNTOF(handlers); i++)
    if (lw_is(n, handlers[i].op)) return handlers[i].fn(lw, n);
  char list[1024] = "";
  size_t len = 0;
  for (size_t i = 0; i < RLX_COUNTOF(handlers) && len + 40 < sizeof list; i++)
    if (handlers[i].op[0] != '_' && !strstr(handlers[i].op, "_copy"))
      len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", handlers[i].op);
  return lw_fail(RLX_ERR_UNSUPPORTED, "rlx does not lower this op on complex values (complex tensors are held as "
                 "real pairs, and the complex ops rlx lowers are: %s)", list);
}
