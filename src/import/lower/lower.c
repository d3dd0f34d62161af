/*
 * lower.c — the helpers handlers share (lower.h): the op registry, argument
 * readers, emitting, checks of hostile numbers, type promotion, and the
 * scalar-valued nodes (sym_size, sym_add, ..., _assert_scalar). The driver,
 * rlx_lower_graph, is driver.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "import/lower/lower.h"

/* ---- registry ---- */

static const rlx_lower_entry registry[] = {
#define RLX_ATEN(name, fn) {"aten." #name, fn, false},
#define RLX_ATEN_DYN(name, fn) {"aten." #name, fn, true},
#define RLX_LIB_OP(ns, name, fn) {#ns "." #name, fn, false},
#define RLX_LIB_OP_DYN(ns, name, fn) {#ns "." #name, fn, true},
#include "import/lower/aten_ops.def"
#undef RLX_LIB_OP_DYN
#undef RLX_LIB_OP
#undef RLX_ATEN_DYN
#undef RLX_ATEN
};

int rlx_lower_registry_count(void) { return (int)RLX_COUNTOF(registry); }
const char *rlx_lower_registry_name(int i) { return registry[i].name; }

/* Length of "ns.base" in "ns.base.overload" (the whole string when it has no
 * overload); 0 when op has no namespace (the exporter's _getitem, sym_add). */
static size_t qualified_len(const char *op) {
  const char *dot = strchr(op, '.');
  if (!dot || dot == op || !dot[1]) return 0;
  const char *dot2 = strchr(dot + 1, '.');
  return dot2 ? (size_t)(dot2 - op) : strlen(op);
}

const rlx_lower_entry *rlx_lower_find_entry(const char *op) {
  size_t n = qualified_len(op);
  if (!n) return NULL;
  for (size_t i = 0; i < RLX_COUNTOF(registry); i++)
    if (strlen(registry[i].name) == n && !strncmp(registry[i].name, op, n)) return &registry[i];
  return NULL;
}

rlx_lower_fn rlx_lower_find(const char *op) {
  const rlx_lower_entry *e = rlx_lower_find_entry(op);
  return e ? e->fn : NULL;
}

const char *lw_overload(const rlx_aten_node *n) {
  size_t q = qualified_len(n->op);
  return q && n->op[q] == '.' ? n->op + q + 1 : "";
}

bool lw_is(const rlx_aten_node *n, const char *base) {
  size_t q = qualified_len(n->op);
  if (!q) return false;
  const char *b = strchr(n->op, '.') + 1;
  size_t len = (size_t)(n->op + q - b);
  return strlen(base) == len && !strncmp(b, base, len);
}

rlx_status lw_fail(rlx_status s, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return rlx_errorf(s, "%s", msg);
}

/* ---- argument access ---- */

const rlx_arg *lw_arg(const rlx_aten_node *n, int pos, const char *name) {
  const rlx_arg *a = rlx_aten_arg(n, pos, name);
  return (a && a->kind == RLX_ARG_NONE) ? NULL : a;
}

static const char *arg_label(int pos, const char *name, char *buf, size_t cap) {
  if (name) snprintf(buf, cap, "argument '%s'", name);
  else snprintf(buf, cap, "argument %d", pos);
  return buf;
}

/* Resolves {"sym": name} to the value of that scalar node when it is a
 * constant; a symbolic one stays {"sym"} (so readers of plain ints refuse
 * it rather than take its example value). */
static const rlx_arg *resolve_sym(rlx_lower *lw, const rlx_arg *a) {
  if (!a || a->kind != RLX_ARG_SYM) return a;
  int32_t i = rlx_strmap_get(&lw->scalar_ix, a->u.s);
  if (i < 0 || lw->sinfo[i].symbolic) return a;
  return &lw->scalars[i];
}

/* Why a {"sym": ...} argument is not a plain number: " (the symbolic size
 * 'seq + 1' from node 'add_3': this op needs a constant)", or unknown. */
static const char *sym_note_lw(rlx_lower *lw, const rlx_arg *a, char *buf, size_t cap) {
  buf[0] = '\0';
  if (!a || a->kind != RLX_ARG_SYM) return buf;
  int32_t i = lw ? rlx_strmap_get(&lw->scalar_ix, a->u.s) : -1;
  if (i >= 0 && lw->sinfo[i].kind == LW_SCALAR_DIM) {
    char e[128];
    snprintf(buf, cap, " (the symbolic size '%s' from node '%.100s': rlx needs a constant here)",
             rlx_dim_str(&lw->g->syms, lw->sinfo[i].dim, e, sizeof e), a->u.s);
  } else {
    snprintf(buf, cap, " (the %ssymbolic value '%.200s')", i >= 0 ? "" : "unknown ", a->u.s);
  }
  return buf;
}
_Thread_local rlx_lower *lw_note; /* the lowering in progress, for messages (driver.c sets it) */
static const char *sym_note(const rlx_arg *a, char *buf, size_t cap) { return sym_note_lw(lw_note, a, buf, cap); }

bool lw_symbolic(rlx_lower *lw, int32_t v) { return v >= 0 && rlx_shape_is_symbolic(&lw->g->values[v].shape); }

/* An int or a {"sym"} dim. */
static rlx_status arg_dim(rlx_lower *lw, const rlx_arg *a, const char *what, rlx_dim *out) {
  if (a->kind == RLX_ARG_INT) {
    if (a->u.i < -((int64_t)1 << 62))
      return lw_fail(RLX_ERR_SHAPE, "%s is %lld; rlx takes sizes of at least -2^62", what, (long long)a->u.i);
    return *out = a->u.i, RLX_OK;
  }
  if (a->kind == RLX_ARG_BOOL) return *out = a->u.b, RLX_OK;
  if (a->kind == RLX_ARG_SYM) {
    int32_t i = rlx_strmap_get(&lw->scalar_ix, a->u.s);
    if (i >= 0 && lw->sinfo[i].kind == LW_SCALAR_DIM) return *out = lw->sinfo[i].dim, RLX_OK;
  }
  char sb[256];
  return lw_fail(RLX_ERR_UNSUPPORTED, "%s must be an int%s", what, sym_note(a, sb, sizeof sb));
}

rlx_status lw_dim(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, rlx_dim def, rlx_dim *out) {
  char lb[64];
  const rlx_arg *a = lw_arg(n, pos, name);
  if (!a) return *out = def, RLX_OK;
  return arg_dim(lw, a, arg_label(pos, name, lb, sizeof lb), out);
}

rlx_status lw_dims(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, rlx_dim *out, int max,
                   int *count) {
  char lb[64], w[96];
  const rlx_arg *a = lw_arg(n, pos, name);
  *count = 0;
  if (!a) return RLX_OK;
  arg_label(pos, name, lb, sizeof lb);
  if (a->kind != RLX_ARG_LIST) {
    rlx_status st = arg_dim(lw, a, lb, &out[0]);
    if (!st) *count = 1;
    return st;
  }
  if (a->u.list.n > max) return lw_fail(RLX_ERR_UNSUPPORTED, "%s has %d entries (at most %d)", lb, a->u.list.n, max);
  for (int i = 0; i < a->u.list.n; i++) {
    snprintf(w, sizeof w, "%s[%d]", lb, i);
    rlx_status st = arg_dim(lw, &a->u.list.items[i], w, &out[i]);
    if (st) return st;
  }
  *count = a->u.list.n;
  return RLX_OK;
}

const rlx_arg *lw_resolve(rlx_lower *lw, const rlx_arg *a) { return resolve_sym(lw, a); }

rlx_status lw_ref(rlx_lower *lw, const char *name, int32_t *v) {
  int32_t id = rlx_strmap_get(&lw->vals, name);
  if (id >= 0) {
    *v = id;
    return RLX_OK;
  }
  if (rlx_strmap_get(&lw->multi, name) >= 0)
    return lw_fail(RLX_ERR_FORMAT, "'%s' has several outputs and must be read through _getitem", name);
  int32_t miss = rlx_strmap_get(&lw->missing, name);
  if (miss >= 0) {
    const rlx_aten_node *parent = NULL;
    for (int32_t i = 0; i < lw->ir->n_nodes && !parent; i++) {
      int32_t m = rlx_strmap_get(&lw->multi, lw->ir->nodes[i].id);
      if (m == miss >> 8) parent = &lw->ir->nodes[i];
    }
    return lw_fail(RLX_ERR_UNSUPPORTED, "uses '%s', output %d of '%s' (%s), which rlx does not compute", name,
                   miss & 0xff, parent ? parent->id : "?", parent ? parent->op : "?");
  }
  return lw_fail(RLX_ERR_FORMAT, "refers to '%s', which is not an input, a weight or an earlier "
                 "node with a tensor result", name);
}

rlx_status lw_tensor(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int32_t *v) {
  char lb[64];
  const rlx_arg *a = lw_arg(n, pos, name);
  if (!a) return lw_fail(RLX_ERR_FORMAT, "%s (a tensor) is missing", arg_label(pos, name, lb, sizeof lb));
  if (a->kind != RLX_ARG_REF)
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s must be a tensor", arg_label(pos, name, lb, sizeof lb));
  return lw_ref(lw, a->u.s, v);
}

rlx_status lw_opt_tensor(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int32_t *v) {
  *v = -1;
  return lw_arg(n, pos, name) ? lw_tensor(lw, n, pos, name, v) : RLX_OK;
}

rlx_status lw_int(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int64_t def, int64_t *out) {
  char lb[64], sb[256];
  const rlx_arg *a = resolve_sym(lw, lw_arg(n, pos, name));
  if (!a) return *out = def, RLX_OK;
  if (a->kind == RLX_ARG_INT) return *out = a->u.i, RLX_OK;
  if (a->kind == RLX_ARG_BOOL) return *out = a->u.b, RLX_OK;
  return lw_fail(RLX_ERR_UNSUPPORTED, "%s must be an int%s", arg_label(pos, name, lb, sizeof lb),
                 sym_note(a, sb, sizeof sb));
}

rlx_status lw_float(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, double def, double *out) {
  char lb[64], sb[256];
  const rlx_arg *a = resolve_sym(lw, lw_arg(n, pos, name));
  if (!a) return *out = def, RLX_OK;
  if (a->kind == RLX_ARG_FLOAT) return *out = a->u.f, RLX_OK;
  if (a->kind == RLX_ARG_INT) return *out = (double)a->u.i, RLX_OK;
  if (a->kind == RLX_ARG_BOOL) return *out = a->u.b, RLX_OK;
  return lw_fail(RLX_ERR_UNSUPPORTED, "%s must be a number%s", arg_label(pos, name, lb, sizeof lb),
                 sym_note(a, sb, sizeof sb));
}

rlx_status lw_bool(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, bool def, bool *out) {
  char lb[64], sb[256];
  const rlx_arg *a = resolve_sym(lw, lw_arg(n, pos, name));
  if (!a) return *out = def, RLX_OK;
  if (a->kind == RLX_ARG_BOOL) return *out = a->u.b, RLX_OK;
  if (a->kind == RLX_ARG_INT) return *out = a->u.i != 0, RLX_OK;
  return lw_fail(RLX_ERR_UNSUPPORTED, "%s must be a bool%s", arg_label(pos, name, lb, sizeof lb),
                 sym_note(a, sb, sizeof sb));
}

rlx_status lw_ints(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int64_t *out, int max, int *count) {
  char lb[64], sb[256];
  const rlx_arg *a = resolve_sym(lw, lw_arg(n, pos, name));
  *count = 0;
  if (!a) return RLX_OK;
  if (a->kind == RLX_ARG_INT) {
    out[0] = a->u.i;
    *count = 1;
    return RLX_OK;
  }
  if (a->kind != RLX_ARG_LIST)
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s must be a list of ints%s", arg_label(pos, name, lb, sizeof lb),
                   sym_note(a, sb, sizeof sb));
  if (a->u.list.n > max)
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s has %d entries (at most %d)",
                   arg_label(pos, name, lb, sizeof lb), a->u.list.n, max);
  for (int i = 0; i < a->u.list.n; i++) {
    const rlx_arg *e = resolve_sym(lw, &a->u.list.items[i]);
    if (e->kind != RLX_ARG_INT)
      return lw_fail(RLX_ERR_UNSUPPORTED, "%s[%d] must be an int%s", arg_label(pos, name, lb, sizeof lb), i,
                     sym_note(e, sb, sizeof sb));
    out[i] = e->u.i;
  }
  *count = a->u.list.n;
  return RLX_OK;
}

rlx_status lw_dtype(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int def, int *out) {
  (void)lw;
  char lb[64];
  const rlx_arg *a = lw_arg(n, pos, name);
  if (!a) return *out = def, RLX_OK;
  if (a->kind != RLX_ARG_DTYPE)
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s must be a dtype", arg_label(pos, name, lb, sizeof lb));
  if (a->complex) /* only complex.c reads complex dtypes, from the arguments themselves */
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s is a complex dtype, which this op does not take in rlx",
                   arg_label(pos, name, lb, sizeof lb));
  *out = (int)a->u.dt;
  return RLX_OK;
}

rlx_status lw_tensor_list(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name,
                          int32_t *out, int max, int *count) {
  char lb[64];
  const rlx_arg *a = lw_arg(n, pos, name);
  if (!a || a->kind != RLX_ARG_LIST)
    return lw_fail(RLX_ERR_FORMAT, "%s must be a list of tensors", arg_label(pos, name, lb, sizeof lb));
  if (a->u.list.n > max)
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s has %d tensors (at most %d)",
                   arg_label(pos, name, lb, sizeof lb), a->u.list.n, max);
  for (int i = 0; i < a->u.list.n; i++) {
    const rlx_arg *e = &a->u.list.items[i];
    if (e->kind == RLX_ARG_NONE) {
      out[i] = -1;
      continue;
    }
    if (e->kind != RLX_ARG_REF)
      return lw_fail(RLX_ERR_FORMAT, "%s[%d] must be a tensor", arg_label(pos, name, lb, sizeof lb), i);
    rlx_status st = lw_ref(lw, e->u.s, &out[i]);
    if (st) return st;
  }
  *count = a->u.list.n;
  return RLX_OK;
}

const rlx_tinfo *lw_out(const rlx_aten_node *n, int k) {
  if ((n->out_kind != RLX_OUT_TENSOR && n->out_kind != RLX_OUT_LIST) || k >= n->n_outs) return NULL;
  return n->outs[k].present ? &n->outs[k] : NULL;
}

bool lw_out_used(rlx_lower *lw, const rlx_aten_node *n, int k) {
  int32_t mask = rlx_strmap_get(&lw->used, n->id);
  return mask > 0 && k < 31 && ((mask >> k) & 1);
}

rlx_status lw_axis(int64_t axis, int rank, const char *what, int *out) {
  int a = rlx_axis(axis, RLX_MAX(rank, 1));
  if (a < 0)
    return lw_fail(RLX_ERR_SHAPE, "%s: axis %lld is out of range for rank %d", what, (long long)axis, rank);
  *out = a;
  return RLX_OK;
}

/* ---- emitting ---- */

int32_t lw_emit_node(rlx_lower *lw, rlx_op op, const rlx_params *p, const int32_t *in, int n_in,
                     int n_out) {
  return rlx_graph_add_node(lw->g, op, p, in, n_in, n_out, lw->cur->id, lw->cur->op);
}

int32_t lw_emit(rlx_lower *lw, rlx_op op, const rlx_params *p, const int32_t *in, int n_in) {
  int32_t k = lw_emit_node(lw, op, p, in, n_in, 1);
  return k < 0 ? -1 : lw->g->nodes[k].out[0];
}

int32_t lw_cast(rlx_lower *lw, int32_t v, rlx_dtype t) {
  if (v < 0 || lw_val(lw, v)->dtype == t) return v;
  rlx_params p = {.cast = {.to = t}};
  return lw_emit(lw, RLX_OP_CAST, &p, &v, 1);
}

int32_t lw_reshape(rlx_lower *lw, int32_t v, const rlx_shape *s) {
  if (v < 0 || rlx_shape_eq(&lw_val(lw, v)->shape, s)) return v;
  rlx_params p = {.shape = {.shape = *s}};
  return lw_emit(lw, RLX_OP_RESHAPE, &p, &v, 1);
}

int32_t lw_scalar(rlx_lower *lw, rlx_dtype t, double v, int64_t iv) {
  unsigned char buf[8];
  if (rlx_dtype_is_float(t)) rlx_store_f64(buf, t, 0, v);
  else rlx_store_i64(buf, t, 0, iv);
  rlx_shape s = {.rank = 0};
  return rlx_graph_add_const(lw->g, t, &s, buf);
}

int32_t lw_dim_scalar(rlx_lower *lw, rlx_dim d, rlx_dtype t) {
  if (!rlx_dim_is_sym(d)) return lw_scalar(lw, t, (double)d, d);
  rlx_params p = {.full = {.dtype = t, .shape = {.rank = 0}, .ivalue = d, .sym_value = true}};
  return lw_emit(lw, RLX_OP_FULL, &p, NULL, 0);
}

int32_t lw_scalar_arg(rlx_lower *lw, const rlx_arg *a, rlx_dtype t, const char *what) {
  a = resolve_sym(lw, a);
  if (a && a->kind == RLX_ARG_SYM) { /* a symbolic size used as a number: a 0-d tensor of its value */
    int32_t i = rlx_strmap_get(&lw->scalar_ix, a->u.s);
    if (i >= 0 && lw->sinfo[i].kind == LW_SCALAR_DIM) return lw_dim_scalar(lw, lw->sinfo[i].dim, t);
  }
  int64_t iv;
  switch (a ? a->kind : RLX_ARG_NONE) {
    case RLX_ARG_INT: return lw_scalar(lw, t, (double)a->u.i, a->u.i);
    case RLX_ARG_BOOL: return lw_scalar(lw, t, a->u.b, a->u.b);
    case RLX_ARG_FLOAT: return lw_f64_to(a->u.f, t, what, &iv) ? -1 : lw_scalar(lw, t, a->u.f, iv);
    default: {
      char sb[256];
      lw_fail(RLX_ERR_UNSUPPORTED, "%s must be a number%s", what, sym_note(a, sb, sizeof sb));
      return -1;
    }
  }
}

/* ---- hostile numbers ---- */

rlx_status lw_check_range(int64_t v, int64_t lo, int64_t hi, const char *what) {
  if (v >= lo && v <= hi) return RLX_OK;
  return lw_fail(RLX_ERR_SHAPE, "%s is %lld; it must be in [%lld, %lld]", what, (long long)v, (long long)lo,
                 (long long)hi);
}

rlx_status lw_check_params(const int64_t *v, int n, int64_t lo, const char *name) {
  for (int i = 0; i < n; i++)
    if (v[i] < lo || v[i] > RLX_MAX_PARAM)
      return lw_fail(RLX_ERR_SHAPE, "'%s'[%d] is %lld; it must be in [%lld, 2^31]", name, i, (long long)v[i],
                     (long long)lo);
  return RLX_OK;
}

rlx_status lw_int_in(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int64_t def, int64_t lo,
                     int64_t hi, int64_t *out) {
  rlx_status st = lw_int(lw, n, pos, name, def, out);
  if (st) return st;
  char lb[64];
  return lw_check_range(*out, lo, hi, arg_label(pos, name, lb, sizeof lb));
}

void lw_int_range(rlx_dtype t, int64_t *lo, int64_t *hi) {
  switch (t) {
    case RLX_DTYPE_I32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case RLX_DTYPE_I16: *lo = INT16_MIN, *hi = INT16_MAX; break;
    case RLX_DTYPE_I8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case RLX_DTYPE_U8: *lo = 0, *hi = UINT8_MAX; break;
    case RLX_DTYPE_U16: *lo = 0, *hi = UINT16_MAX; break;
    case RLX_DTYPE_U32: *lo = 0, *hi = UINT32_MAX; break;
    case RLX_DTYPE_U64: *lo = 0, *hi = INT64_MAX; break; /* what an int64 argument can hold */
    default: *lo = INT64_MIN, *hi = INT64_MAX; break;
  }
}

rlx_status lw_f64_to(double v, rlx_dtype t, const char *what, int64_t *iv) {
  *iv = 0;
  if (rlx_dtype_is_float(t)) return RLX_OK;
  if (t == RLX_DTYPE_BOOL) return *iv = v != 0, RLX_OK;
  int64_t lo, hi;
  lw_int_range(t, &lo, &hi);
  /* 2^63 is the first double past INT64_MAX; the narrower bounds are exact */
  bool ok = t == RLX_DTYPE_I64   ? v >= -9223372036854775808.0 && v < 9223372036854775808.0
            : t == RLX_DTYPE_U64 ? v > -1.0 && v < 18446744073709551616.0
                                 : v >= (double)lo && v <= (double)hi;
  if (!ok)
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s (%g) cannot be converted to %s without overflow", what, v,
                   rlx_dtype_name(t));
  *iv = t == RLX_DTYPE_U64 ? (int64_t)(uint64_t)v : (int64_t)v; /* u64: its bits */
  return RLX_OK;
}

rlx_status lw_fill_value(rlx_lower *lw, const rlx_arg *a, rlx_dtype t, const char *what, double *v, int64_t *iv) {
  a = resolve_sym(lw, a);
  switch (a ? a->kind : RLX_ARG_NONE) {
    case RLX_ARG_FLOAT: *v = a->u.f; return lw_f64_to(a->u.f, t, what, iv);
    case RLX_ARG_BOOL: *v = a->u.b, *iv = a->u.b; return RLX_OK;
    case RLX_ARG_INT: break;
    default: {
      char sb[256];
      return lw_fail(RLX_ERR_UNSUPPORTED, "%s must be a number%s", what, sym_note(a, sb, sizeof sb));
    }
  }
  *v = (double)a->u.i, *iv = a->u.i;
  if (t == RLX_DTYPE_BOOL) return *iv = a->u.i != 0, RLX_OK;
  if (rlx_dtype_is_float(t)) return RLX_OK;
  int64_t lo, hi;
  lw_int_range(t, &lo, &hi);
  /* torch lets negative ints wrap into unsigned types */
  if (t == RLX_DTYPE_U8 || t == RLX_DTYPE_U16 || t == RLX_DTYPE_U32) lo = -hi;
  if (t == RLX_DTYPE_U64) lo = INT64_MIN;
  if (a->u.i < lo || a->u.i > hi)
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s (%lld) cannot be converted to %s without overflow", what,
                   (long long)a->u.i, rlx_dtype_name(t));
  return RLX_OK;
}

int32_t lw_fill_scalar(rlx_lower *lw, const rlx_arg *a, rlx_dtype t, const char *what) {
  double v;
  int64_t iv;
  return lw_fill_value(lw, a, t, what, &v, &iv) ? -1 : lw_scalar(lw, t, v, iv);
}

/* Whether two dims have the same value at every binding. Equal canonical
 * forms are; otherwise (rlx and torch may write one size differently, e.g.
 * through floordiv) they are compared at the hints, at every symbol's min and
 * max with the others at their hints, and at all mins and all maxes. */
static bool dims_agree(const rlx_symtab *t, rlx_dim a, rlx_dim b) {
  if (a == b) return true;
  if (!rlx_dim_valid(t, a) || !rlx_dim_valid(t, b)) return false;
  int64_t v[64];
  int32_t ns = t->n_syms < 64 ? t->n_syms : 64;
  for (int trial = -3; trial < 2 * ns; trial++) {
    for (int32_t i = 0; i < ns; i++)
      v[i] = trial == -2 ? t->syms[i].min : trial == -1 ? t->syms[i].max : t->syms[i].hint;
    if (trial >= 0) v[trial / 2] = trial % 2 ? t->syms[trial / 2].max : t->syms[trial / 2].min;
    int64_t x, y;
    rlx_error_clear();
    bool ex = rlx_dim_eval(t, a, v, &x) == RLX_OK, ey = rlx_dim_eval(t, b, v, &y) == RLX_OK;
    if (ex != ey || (ex && x != y)) return false;
  }
  rlx_error_clear();
  return true;
}

bool lw_dims_agree(rlx_lower *lw, rlx_dim a, rlx_dim b) { return dims_agree(&lw->g->syms, a, b); }

rlx_status lw_check_type(rlx_lower *lw, int k, const rlx_value *v, const rlx_tinfo *t) {
  if (!t) return RLX_OK;
  rlx_tinfo pairs;
  if (t->complex) { /* rlx holds a complex value as its real pairs */
    pairs = *t;
    pairs.complex = false;
    rlx_status st = lw_pairs_shape(&t->shape, &pairs.shape);
    if (st) return st;
    t = &pairs;
  }
  if (v->dtype == t->dtype && rlx_shape_eq(&v->shape, &t->shape)) return RLX_OK;
  bool same = v->dtype == t->dtype && v->shape.rank == t->shape.rank;
  for (int i = 0; same && i < v->shape.rank; i++) same = dims_agree(&lw->g->syms, v->shape.dims[i], t->shape.dims[i]);
  if (same) return RLX_OK;
  char a[256], b[256];
  return lw_fail(RLX_ERR_SHAPE, "output %d: rlx infers %s %s but torch recorded %s %s", k,
                 rlx_dtype_name(v->dtype), rlx_graph_shape_str(lw->g, &v->shape, a, sizeof a),
                 rlx_dtype_name(t->dtype), rlx_graph_shape_str(lw->g, &t->shape, b, sizeof b));
}

rlx_status lw_bind(rlx_lower *lw, const rlx_aten_node *n, int32_t v) {
  if (v < 0) return rlx_last_status(); /* the failing emit set the message */
  const rlx_tinfo *t = lw_out(n, 0);
  rlx_status st = lw_check_type(lw, 0, lw_val(lw, v), t);
  if (!st && t && t->complex) st = rlx_strmap_put(&lw->cplx, n->id, 1);
  return st ? st : rlx_strmap_put(&lw->vals, n->id, v);
}

rlx_status lw_bind_multi(rlx_lower *lw, const rlx_aten_node *n, const int32_t *v, int count) {
  for (int k = 0; k < count; k++) /* torch records the type of every tensor output; a used one needs it */
    if (lw_out_used(lw, n, k) && !lw_out(n, k))
      return lw_fail(RLX_ERR_FORMAT, "output %d is used but its type is not recorded", k);
  for (int k = 0; k < count; k++) {
    if (v[k] < 0) continue;
    rlx_status st = lw_check_type(lw, k, lw_val(lw, v[k]), lw_out(n, k));
    if (st) return st;
  }
  if (rlx_grow((void **)&lw->outs, &lw->cap_multi, lw->n_multi + 1, sizeof *lw->outs) ||
      rlx_grow((void **)&lw->n_outs, &lw->cap_multi_n, lw->n_multi + 1, sizeof *lw->n_outs))
    return RLX_ERR_OUT_OF_MEMORY;
  int32_t *copy = rlx_pool_alloc(&lw->g->pool, sizeof(int32_t) * (size_t)(count ? count : 1));
  if (!copy) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  memcpy(copy, v, sizeof(int32_t) * (size_t)count);
  lw->outs[lw->n_multi] = copy;
  lw->n_outs[lw->n_multi] = count;
  return rlx_strmap_put(&lw->multi, n->id, lw->n_multi++);
}

/* ---- type promotion (c10 ResultTypeState) ---- */

static int promote_skip(int a, int b) {
  if (a < 0) return b;
  if (b < 0) return a;
  return (int)rlx_dtype_promote((rlx_dtype)a, (rlx_dtype)b);
}

static int combine_categories(int higher, int lower) {
  if (higher >= 0 && rlx_dtype_is_float((rlx_dtype)higher)) return higher;
  if (higher == RLX_DTYPE_BOOL || (lower >= 0 && rlx_dtype_is_float((rlx_dtype)lower)))
    return promote_skip(higher, lower);
  return higher >= 0 ? higher : lower;
}

rlx_dtype lw_result_type(const lw_operand *ops, int n) {
  int dim = -1, zero = -1, wrapped = -1;
  for (int i = 0; i < n; i++) {
    if (ops[i].is_tensor) {
      if (ops[i].rank > 0) dim = promote_skip(dim, ops[i].dtype);
      else zero = promote_skip(zero, ops[i].dtype);
    } else {
      int t = ops[i].kind == RLX_ARG_FLOAT ? RLX_DTYPE_F32
              : ops[i].kind == RLX_ARG_BOOL ? RLX_DTYPE_BOOL : RLX_DTYPE_I64;
      wrapped = promote_skip(wrapped, t);
    }
  }
  int r = combine_categories(dim, combine_categories(zero, wrapped));
  return r < 0 ? RLX_DTYPE_F32 : (rlx_dtype)r;
}

rlx_status lw_operand_of(rlx_lower *lw, const rlx_arg *a, lw_operand *op, int32_t *v) {
  a = resolve_sym(lw, a);
  memset(op, 0, sizeof *op);
  *v = -1;
  if (!a) return lw_fail(RLX_ERR_FORMAT, "an operand is missing");
  if (a->kind == RLX_ARG_REF) {
    rlx_status st = lw_ref(lw, a->u.s, v);
    if (st) return st;
    op->is_tensor = true;
    op->dtype = lw_val(lw, *v)->dtype;
    op->rank = lw_val(lw, *v)->shape.rank;
    return RLX_OK;
  }
  if (a->kind == RLX_ARG_INT || a->kind == RLX_ARG_FLOAT || a->kind == RLX_ARG_BOOL) {
    op->kind = a->kind;
    return RLX_OK;
  }
  if (a->kind == RLX_ARG_SYM) { /* a symbolic size: a Python int in type promotion */
    int32_t i = rlx_strmap_get(&lw->scalar_ix, a->u.s);
    if (i >= 0 && lw->sinfo[i].kind == LW_SCALAR_DIM) return op->kind = RLX_ARG_INT, RLX_OK;
  }
  char sb[256];
  return lw_fail(RLX_ERR_UNSUPPORTED, "an operand must be a tensor or a number%s", sym_note(a, sb, sizeof sb));
}

/* ---- scalar-valued nodes ---- */

/* A scalar operand of a sym op: an int literal, or another scalar node. */
static rlx_status scalar_operand(rlx_lower *lw, const rlx_arg *a, lw_scalar_info *out) {
  memset(out, 0, sizeof *out);
  if (a && a->kind == RLX_ARG_INT) return out->kind = LW_SCALAR_DIM, out->dim = a->u.i, RLX_OK;
  if (a && a->kind == RLX_ARG_BOOL) return out->kind = LW_SCALAR_DIM, out->dim = a->u.b, RLX_OK;
  if (a && a->kind == RLX_ARG_SYM) {
    int32_t i = rlx_strmap_get(&lw->scalar_ix, a->u.s);
    if (i >= 0) return *out = lw->sinfo[i], RLX_OK;
  }
  out->kind = LW_SCALAR_NUMBER;
  return RLX_OK;
}

/* The value of a sym op (the exporter's sym_add, sym_mul, ..., aten's
 * sym_size / sym_numel) as a dim or a relation; NUMBER when rlx does not
 * follow it symbolically (float arithmetic, sym_stride). */
static rlx_status scalar_info(rlx_lower *lw, const rlx_aten_node *n, lw_scalar_info *r) {
  memset(r, 0, sizeof *r);
  rlx_symtab *t = lw_syms(lw);
  if (lw_is(n, "sym_size") || lw_is(n, "sym_numel")) {
    int32_t x;
    rlx_status st = lw_tensor(lw, n, 0, "self", &x);
    if (st) return st;
    rlx_shape cs = lw_val(lw, x)->shape; /* a complex tensor's own shape: its pairs' without the trailing 2 */
    if (lw_ref_is_complex(lw, lw_arg(n, 0, "self")->u.s)) cs.rank--;
    const rlx_shape *xs = &cs;
    r->kind = LW_SCALAR_DIM;
    if (lw_is(n, "sym_numel")) return rlx_shape_numel_dim_lw(lw, xs, &r->dim);
    int64_t d;
    int a = 0; /* gcc cannot see that rlx_errorf never returns RLX_OK */
    if ((st = lw_int(lw, n, 1, "dim", 0, &d)) || (st = lw_axis(d, xs->rank, "argument 'dim'", &a))) return st;
    r->dim = xs->rank ? xs->dims[a] : 1;
    return RLX_OK;
  }
  static const struct {
    const char *op;
    int arity;
  } ops[] = {{"sym_add", 2}, {"sym_sub", 2}, {"sym_mul", 2}, {"sym_floordiv", 2}, {"sym_mod", 2}, {"sym_neg", 1},
             {"sym_max", 2}, {"sym_min", 2}, {"sym_eq", 2}, {"sym_ne", 2}, {"sym_lt", 2}, {"sym_le", 2},
             {"sym_gt", 2}, {"sym_ge", 2}, {"sym_int", 1}};
  int which = -1;
  for (int i = 0; i < (int)RLX_COUNTOF(ops) && which < 0; i++)
    if (!strcmp(n->op, ops[i].op)) which = i;
  if (which < 0 || n->n_args != ops[which].arity) return RLX_OK; /* a NUMBER */
  lw_scalar_info x, y = {.kind = LW_SCALAR_DIM};
  rlx_status st = scalar_operand(lw, &n->args[0], &x);
  if (!st && ops[which].arity == 2) st = scalar_operand(lw, &n->args[1], &y);
  if (st || x.kind != LW_SCALAR_DIM || y.kind != LW_SCALAR_DIM) return st;
  rlx_dim a = x.dim, b = y.dim, d = 0;
  if (which >= 8 && which <= 13) { /* a relation */
    static const int rels[] = {RLX_REL_EQ, RLX_REL_NE, RLX_REL_LT, RLX_REL_LE, RLX_REL_GT, RLX_REL_GE};
    r->kind = LW_SCALAR_REL, r->lhs = a, r->rhs = b, r->rel = rels[which - 8];
    r->symbolic = rlx_dim_is_sym(a) || rlx_dim_is_sym(b);
    return RLX_OK;
  }
  switch (which) {
    case 0: st = rlx_dim_add(t, a, b, &d); break;
    case 1: st = rlx_dim_sub(t, a, b, &d); break;
    case 2: st = rlx_dim_mul(t, a, b, &d); break;
    case 3: st = rlx_dim_floordiv(t, a, b, &d); break;
    case 4: st = rlx_dim_mod(t, a, b, &d); break;
    case 5: st = rlx_dim_sub(t, 0, a, &d); break;
    case 6: st = rlx_dim_max(t, a, b, &d); break;
    case 7: st = rlx_dim_min(t, a, b, &d); break;
    default: d = a; break; /* sym_int of an int */
  }
  if (st) return st;
  r->kind = LW_SCALAR_DIM, r->dim = d;
  return RLX_OK;
}

/* sym_size, sym_numel, sym_stride, sym_storage_offset, and the exporter's
 * sym_add / sym_mul / sym_lt / ...: a scalar node. Its value is followed as
 * a dim (or a relation) where rlx can, and checked against what torch
 * recorded (the example value, and the expression in "sym" if given). */
rlx_status rlx_lower_scalar(rlx_lower *lw, const rlx_aten_node *n) {
  if (n->out_kind != RLX_OUT_SCALAR) return lw_fail(RLX_ERR_FORMAT, "a scalar node must record its value");
  const rlx_arg *v = resolve_sym(lw, &n->scalar);
  if (v->kind != RLX_ARG_INT && v->kind != RLX_ARG_FLOAT && v->kind != RLX_ARG_BOOL)
    return lw_fail(RLX_ERR_FORMAT, "the recorded scalar is not a number");
  lw_scalar_info info;
  rlx_status st = scalar_info(lw, n, &info);
  if (st) return st;
  const rlx_symtab *t = &lw->g->syms;
  if (info.kind == LW_SCALAR_NUMBER && n->has_scalar_dim) info.kind = LW_SCALAR_DIM, info.dim = n->scalar_dim;
  if (info.kind == LW_SCALAR_NUMBER && v->kind == RLX_ARG_INT) info.kind = LW_SCALAR_DIM, info.dim = v->u.i;
  if (info.kind == LW_SCALAR_DIM) {
    info.symbolic = rlx_dim_is_sym(info.dim);
    int64_t at;
    int64_t *h = rlx_symtab_hints(t);
    if (!h) return RLX_ERR_OUT_OF_MEMORY;
    st = rlx_dim_eval(t, info.dim, h, &at);
    rlx_free(h);
    if (st) return st;
    if (v->kind == RLX_ARG_INT && at != v->u.i) {
      char e[128];
      return lw_fail(RLX_ERR_SHAPE, "rlx computes the size %s (%lld at the example shapes) but torch recorded %lld",
                     rlx_dim_str(t, info.dim, e, sizeof e), (long long)at, (long long)v->u.i);
    }
    if (n->has_scalar_dim && !dims_agree(t, info.dim, n->scalar_dim)) {
      char e1[128], e2[128];
      return lw_fail(RLX_ERR_SHAPE, "rlx computes the size %s but torch recorded %s",
                     rlx_dim_str(t, info.dim, e1, sizeof e1), rlx_dim_str(t, n->scalar_dim, e2, sizeof e2));
    }
  }
  if (rlx_grow((void **)&lw->scalars, &lw->cap_scalars, lw->n_scalars + 1, sizeof *lw->scalars) ||
      rlx_grow((void **)&lw->sinfo, &lw->cap_sinfo, lw->n_scalars + 1, sizeof *lw->sinfo))
    return RLX_ERR_OUT_OF_MEMORY;
  lw->scalars[lw->n_scalars] = *v;
  lw->sinfo[lw->n_scalars] = info;
  return rlx_strmap_put(&lw->scalar_ix, n->id, lw->n_scalars++);
}

/* _assert_scalar(cond, msg): a relation between sizes becomes a guard,
 * checked at every binding; torch checked any other at export. */
rlx_status rlx_lower_assert(rlx_lower *lw, const rlx_aten_node *n) {
  const rlx_arg *a = lw_arg(n, 0, "self");
  if (!a || a->kind != RLX_ARG_SYM) return RLX_OK;
  int32_t i = rlx_strmap_get(&lw->scalar_ix, a->u.s);
  if (i < 0 || lw->sinfo[i].kind != LW_SCALAR_REL || !lw->sinfo[i].symbolic) return RLX_OK;
  char what[256];
  snprintf(what, sizeof what, "node '%.100s' (%.60s)", n->id, n->op);
  return rlx_graph_add_guard(lw->g, lw->sinfo[i].lhs, (rlx_rel)lw->sinfo[i].rel, lw->sinfo[i].rhs, what);
}

rlx_status rlx_shape_numel_dim_lw(rlx_lower *lw, const rlx_shape *s, rlx_dim *out) {
  rlx_dim d = 1;
  for (int i = 0; i < s->rank; i++) {
    rlx_status st = rlx_dim_mul(lw_syms(lw), d, s->dims[i], &d);
    if (st) return st;
  }
  *out = d;
  return RLX_OK;
}
