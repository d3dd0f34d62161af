/*
 * complex_fft.c — torch's Fourier transforms onto the real `fft` op
 * (src/ops/fft.c; docs/design.md, "Complex numbers").
 *
 * Two families reach rlx. The primitives torch.export's default and Core
 * ATen decompositions leave:
 *
 *   _fft_r2c(x, dim[], normalization, onesided)   real -> complex
 *   _fft_c2c(x, dim[], normalization, forward)    complex -> complex
 *   _fft_c2r(x, dim[], normalization, last_dim_size)  complex -> real
 *
 * (normalization 0: none, 1: 1/sqrt(n), 2: 1/n, n the product of the
 * signal sizes), and torch.fft's own ops, kept whole by --decomposition
 * aten: fft, ifft, rfft, irfft, hfft, ihfft (n, dim, norm) and fftn, ifftn,
 * fft2, ifft2, rfftn, rfft2, irfftn, irfft2 (s, dim, norm), with torch's
 * rules for defaults: a signal size padded with zeros or trimmed to n (s),
 * irfft's n = 2 (L - 1), norm "backward" / "forward" / "ortho" scaling the
 * inverse / forward / both directions.
 *
 * A transform over several axes is one `fft` node per axis (c2c, and r2c or
 * c2r on the last axis); each node applies its own axis's share of the
 * normalization (1/n_i or 1/sqrt(n_i)), which multiplies to torch's.
 */
#include <math.h>

#include "import/lower/complex.h"

#define MAX_FFT_DIMS RLX_MAX_RANK

/* torch's norm string for a transform in direction `forward`, as a mode. */
static rlx_status norm_mode(rlx_lower *lw, const rlx_aten_node *n, int pos, bool forward, int *mode) {
  const rlx_arg *a = lw_arg(n, pos, "norm");
  const char *s = a && a->kind == RLX_ARG_STR ? a->u.s : a ? NULL : "backward";
  if (!s) return lw_fail(RLX_ERR_FORMAT, "argument 'norm' must be a string or None");
  if (!strcmp(s, "ortho")) *mode = 1;
  else if (!strcmp(s, "backward")) *mode = forward ? 0 : 2;
  else if (!strcmp(s, "forward")) *mode = forward ? 2 : 0;
  else return lw_fail(RLX_ERR_UNSUPPORTED, "norm '%.40s' is not one of backward, forward, ortho", s);
  return RLX_OK;
}

/* An fft node over v; mode is torch's norm mode (the node's norm). */
static int32_t emit_fft(rlx_lower *lw, int32_t v, rlx_fft_kind kind, int axis, rlx_dim len, bool inverse,
                        bool onesided, int mode) {
  if (v < 0) return -1;
  rlx_params p = {.fft = {.kind = kind, .axis = axis, .n = len, .inverse = inverse, .onesided = onesided,
                          .norm = mode}};
  return lw_emit(lw, RLX_OP_FFT, &p, &v, 1);
}

/* n / 2 + 1 (a symbolic n: its expression). */
static rlx_status half_len(rlx_lower *lw, rlx_dim n, rlx_dim *out) {
  if (!rlx_dim_is_sym(n)) return *out = n / 2 + 1, RLX_OK;
  rlx_status st = rlx_dim_floordiv(lw_syms(lw), n, 2, out);
  return st ? st : rlx_dim_add(lw_syms(lw), *out, 1, out);
}

/* v with axis `axis` trimmed (a slice from 0) or zero-padded to len. A
 * symbolic size is taken as it is when it agrees with len at every binding. */
static int32_t resize_axis(rlx_lower *lw, int32_t v, int axis, rlx_dim len) {
  if (v < 0) return -1;
  const rlx_shape *s = &lw_val(lw, v)->shape;
  rlx_dim d = s->dims[axis];
  if (d == len || lw_dims_agree(lw, d, len)) return v;
  if (rlx_dim_is_sym(d) || rlx_dim_is_sym(len)) {
    lw_fail(RLX_ERR_UNSUPPORTED, "resizing FFT axis %d of a symbolic size to another size", axis);
    return -1;
  }
  if (d > len) {
    rlx_params p = {.slice = {.axis = axis, .start = 0, .end = len, .step = 1}};
    return lw_emit(lw, RLX_OP_SLICE, &p, &v, 1);
  }
  rlx_params p;
  memset(&p, 0, sizeof p);
  p.pad.mode = RLX_PAD_CONSTANT;
  p.pad.hi[axis] = len - d;
  return lw_emit(lw, RLX_OP_PAD, &p, &v, 1);
}

/* The transformed axes of `dim` (a list or an int) against the complex rank
 * r: distinct, in the given order. */
static rlx_status fft_axes(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int r, int *axes,
                           int *cnt) {
  int64_t d[MAX_FFT_DIMS];
  rlx_status st = lw_ints(lw, n, pos, name, d, MAX_FFT_DIMS, cnt);
  if (st) return st;
  uint32_t seen = 0;
  for (int i = 0; i < *cnt; i++) {
    if ((st = lw_axis(d[i], r, "argument 'dim'", &axes[i]))) return st;
    if (r == 0) return lw_fail(RLX_ERR_SHAPE, "an FFT of a 0-d tensor");
    if ((seen >> axes[i]) & 1) return lw_fail(RLX_ERR_SHAPE, "FFT dims must be unique (axis %d repeats)", axes[i]);
    seen |= 1u << axes[i];
  }
  return RLX_OK;
}

/* A static signal size must be in [1, 2^31]; a symbolic one is checked at each binding (fft's infer). */
static rlx_status check_len(rlx_dim len, int axis) {
  if (!rlx_dim_is_sym(len) && (len < 1 || len > RLX_MAX_PARAM))
    return lw_fail(RLX_ERR_SHAPE, "invalid number of data points (%lld) along axis %d", (long long)len, axis);
  return RLX_OK;
}

/* ---- the primitives ---- */

/* The real value complex input `x` (argument 0 of n) was promoted from, as
 * comp, when it is a _to_copy / to of a real tensor (FNet's fftn of a real
 * input: _to_copy to complex64, then _fft_c2c); else -1. A c2c over it can
 * start with a full r2c, which reads the real values and not the zeros. */
static int32_t promoted_from(rlx_lower *lw, const rlx_aten_node *n, const cx_val *x, rlx_dtype comp) {
  const rlx_arg *a = lw_arg(n, 0, "self");
  const rlx_aten_node *src = NULL;
  for (int32_t i = 0; i < lw->ir->n_nodes && !src; i++)
    if (!strcmp(lw->ir->nodes[i].id, a->u.s)) src = &lw->ir->nodes[i];
  if (!src || !(lw_is(src, "_to_copy") || lw_is(src, "to")) || !lw_out(src, 0) || !lw_out(src, 0)->complex) return -1;
  const rlx_arg *sa = lw_arg(src, 0, "self");
  int32_t r;
  if (!sa || sa->kind != RLX_ARG_REF || lw_ref_is_complex(lw, sa->u.s) || lw_ref(lw, sa->u.s, &r)) {
    rlx_error_clear();
    return -1;
  }
  const rlx_shape *rs = &lw_val(lw, r)->shape, *xs = &lw_val(lw, x->v)->shape;
  bool same = rs->rank == xs->rank - 1;
  for (int i = 0; same && i < rs->rank; i++) same = rs->dims[i] == xs->dims[i];
  return same ? lw_cast(lw, r, comp) : -1;
}

rlx_status cx_lower_fft_prim(rlx_lower *lw, const rlx_aten_node *n) {
  cx_val x;
  const rlx_tinfo *t;
  rlx_shape ps;
  int axes[MAX_FFT_DIMS], cnt = 0;
  int64_t mode;
  rlx_dim last = 0;
  rlx_status st = cx_tensor(lw, n, 0, "self", &x);
  if (!st) st = cx_out(n, &t, &ps);
  if (!st) st = fft_axes(lw, n, 1, "dim", cx_rank(lw, &x), axes, &cnt);
  if (!st) st = lw_int_in(lw, n, 2, "normalization", 0, 0, 2, &mode);
  if (st) return st;
  bool r2c = lw_is(n, "_fft_r2c"), c2r = lw_is(n, "_fft_c2r");
  if (r2c == x.complex || (!r2c && !x.complex))
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s takes a %s input", n->op, r2c ? "real" : "complex");
  if (r2c && !t->complex) return lw_fail(RLX_ERR_FORMAT, "_fft_r2c's output is recorded as real");
  if (!cnt) return lw_bind(lw, n, r2c ? cx_pairs(lw, &x, t->dtype) : x.v);
  const rlx_shape xs_ = lw_val(lw, x.v)->shape, *xs = &xs_; /* a copy: emitting nodes moves the values */
  int32_t v = lw_cast(lw, x.v, t->dtype);
  if (r2c) {
    bool onesided;
    if ((st = lw_bool(lw, n, 3, "onesided", true, &onesided))) return st;
    int a = axes[cnt - 1];
    if ((st = check_len(xs->dims[a], a))) return st;
    v = emit_fft(lw, v, RLX_FFT_R2C, a, xs->dims[a], false, onesided, (int)mode);
    for (int i = 0; i < cnt - 1 && v >= 0; i++) {
      if ((st = check_len(xs->dims[axes[i]], axes[i]))) return st;
      v = emit_fft(lw, v, RLX_FFT_C2C, axes[i], xs->dims[axes[i]], false, false, (int)mode);
    }
    return lw_bind(lw, n, v);
  }
  bool forward = false;
  if (!c2r && (st = lw_bool(lw, n, 3, "forward", true, &forward))) return st;
  if (c2r && (st = lw_dim(lw, n, 3, "last_dim_size", 0, &last))) return st;
  int32_t real = c2r ? -1 : promoted_from(lw, n, &x, t->dtype);
  for (int i = 0; i < cnt - (c2r ? 1 : 0) && v >= 0; i++) {
    if ((st = check_len(xs->dims[axes[i]], axes[i]))) return st;
    bool from_real = i == 0 && real >= 0; /* the first axis as a full r2c of the real values */
    v = emit_fft(lw, from_real ? real : v, from_real ? RLX_FFT_R2C : RLX_FFT_C2C, axes[i], xs->dims[axes[i]],
                 !forward, false, (int)mode);
  }
  if (c2r) {
    int a = axes[cnt - 1];
    if ((st = check_len(last, a))) return st;
    rlx_dim L = xs->dims[a], half;
    if ((st = half_len(lw, last, &half))) return st;
    if (!lw_dims_agree(lw, L, half) && !lw_dims_agree(lw, L, last)) { /* as torch's c2r */
      char b1[96], b2[96], b3[96];
      return lw_fail(RLX_ERR_SHAPE, "_fft_c2r: axis %d has %s elements; last_dim_size %s needs %s (or %s)", a,
                     rlx_dim_str(lw_syms(lw), L, b1, sizeof b1), rlx_dim_str(lw_syms(lw), last, b2, sizeof b2),
                     rlx_dim_str(lw_syms(lw), half, b3, sizeof b3), b2);
    }
    v = emit_fft(lw, resize_axis(lw, v, a, half), RLX_FFT_C2R, a, last, true, false, (int)mode);
  }
  return lw_bind(lw, n, v);
}

/* ---- torch.fft's ops ---- */

typedef enum { FAM_C2C, FAM_R2C, FAM_C2R } fft_family;

/* What an fft_* op is, from its name ("fft", "irfftn", "ihfft2", ...). */
typedef struct fft_op {
  bool multi;     /* the (s, dim, norm) forms: ...n and ...2 */
  bool two;       /* ...2: dim defaults to the last two */
  bool forward;   /* the direction torch's norm names refer to (not i...) */
  bool hermitian; /* hfft: c2r of conj(x), forward; ihfft: conj(r2c(x)), inverse */
  fft_family fam;
} fft_op;

static rlx_status fft_op_of(const rlx_aten_node *n, fft_op *o) {
  char base[16] = "";
  const char *b = n->op + strlen("aten.fft_"), *dot = strchr(b, '.');
  size_t bl = dot ? (size_t)(dot - b) : strlen(b);
  if (strncmp(n->op, "aten.fft_", 9) || bl == 0 || bl >= sizeof base)
    return lw_fail(RLX_ERR_INTERNAL, "not a torch.fft op");
  memcpy(base, b, bl);
  o->two = base[bl - 1] == '2';
  o->multi = o->two || base[bl - 1] == 'n';
  o->forward = base[0] != 'i';
  o->hermitian = strstr(base, "hfft") != NULL;
  o->fam = strstr(base, "irfft") || (o->hermitian && o->forward) ? FAM_C2R
           : strstr(base, "rfft") || o->hermitian ? FAM_R2C : FAM_C2C;
  return RLX_OK;
}

/* The transformed axes, their signal sizes (for c2r the output's along the
 * last axis) and the norm mode, with torch's defaults for n / s and dim. */
static rlx_status fft_signal(rlx_lower *lw, const rlx_aten_node *n, const fft_op *o, const rlx_shape *xs, int r,
                             int *axes, rlx_dim *len, int *cnt, int *mode) {
  int nsz = 0;
  int64_t sizes[MAX_FFT_DIMS];
  rlx_status st;
  *cnt = 0;
  if (o->multi) { /* (s, dim, norm) */
    if ((st = lw_ints(lw, n, 1, "s", sizes, MAX_FFT_DIMS, &nsz))) return st;
    bool has_dim = lw_arg(n, 2, "dim") != NULL;
    if (has_dim && (st = fft_axes(lw, n, 2, "dim", r, axes, cnt))) return st;
    if (!has_dim && o->two) {
      if (r < 2) return lw_fail(RLX_ERR_SHAPE, "a 2-D FFT of a rank-%d tensor", r);
      axes[0] = r - 2, axes[1] = r - 1, *cnt = 2;
    } else if (!has_dim) {
      if (nsz > r) return lw_fail(RLX_ERR_SHAPE, "'s' has %d values but the input has %d dims", nsz, r);
      *cnt = nsz ? nsz : r;
      for (int i = 0; i < *cnt; i++) axes[i] = r - *cnt + i;
    }
    if (nsz && nsz != *cnt) return lw_fail(RLX_ERR_SHAPE, "'s' and 'dim' must have the same length");
  } else { /* (n, dim, norm) */
    int64_t d;
    if ((st = lw_int(lw, n, 1, "n", -1, &sizes[0])) || (st = lw_int(lw, n, 2, "dim", -1, &d))) return st;
    if (r == 0) return lw_fail(RLX_ERR_SHAPE, "an FFT of a 0-d tensor");
    if ((st = lw_axis(d, r, "argument 'dim'", &axes[0]))) return st;
    *cnt = 1;
    nsz = lw_arg(n, 1, "n") != NULL;
  }
  if (!*cnt) return lw_fail(RLX_ERR_SHAPE, "%s must transform at least one axis", n->op);
  for (int i = 0; i < *cnt; i++) {
    bool given = nsz && sizes[i] != -1;
    len[i] = given ? sizes[i] : xs->dims[axes[i]];
    if (o->fam == FAM_C2R && i == *cnt - 1 && !given) { /* 2 (L - 1) */
      rlx_symtab *t = lw_syms(lw);
      if ((st = rlx_dim_add(t, xs->dims[axes[i]], -1, &len[i])) || (st = rlx_dim_mul(t, len[i], 2, &len[i])))
        return st;
    }
    if ((st = check_len(len[i], axes[i]))) return st;
  }
  return norm_mode(lw, n, 3, o->forward, mode);
}

/* The conjugate of pairs v. */
static int32_t conj_pairs(rlx_lower *lw, int32_t v) {
  int32_t im = cx_part(lw, v, 1);
  rlx_params p = {.unary = {.kind = RLX_UNARY_NEG}};
  return im < 0 ? -1 : cx_join(lw, cx_part(lw, v, 0), lw_emit(lw, RLX_OP_UNARY, &p, &im, 1));
}

rlx_status cx_lower_fft(rlx_lower *lw, const rlx_aten_node *n) {
  fft_op o = {0}; /* gcc cannot see that rlx_errorf never returns RLX_OK */
  cx_val x;
  const rlx_tinfo *t;
  rlx_shape ps;
  rlx_status st = fft_op_of(n, &o);
  if (!st) st = cx_tensor(lw, n, 0, "self", &x);
  if (!st) st = cx_out(n, &t, &ps);
  if (st) return st;
  if (o.fam == FAM_R2C && x.complex)
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s expects a real input tensor, but got a complex one", n->op);
  int axes[MAX_FFT_DIMS], cnt = 0, mode = 0;
  rlx_dim len[MAX_FFT_DIMS];
  if ((st = fft_signal(lw, n, &o, &lw_val(lw, x.v)->shape, cx_rank(lw, &x), axes, len, &cnt, &mode))) return st;
  int last = cnt - 1;
  int32_t v;
  if (o.fam == FAM_R2C) { /* r2c on the last axis, then c2c forward on the others */
    v = lw_cast(lw, x.v, t->dtype);
    for (int i = 0; i < cnt; i++) v = resize_axis(lw, v, axes[i], len[i]);
    v = emit_fft(lw, v, RLX_FFT_R2C, axes[last], len[last], false, true, mode);
    for (int i = 0; i < last; i++) v = emit_fft(lw, v, RLX_FFT_C2C, axes[i], len[i], false, false, mode);
    return lw_bind(lw, n, o.hermitian && v >= 0 ? conj_pairs(lw, v) : v); /* conj(c2c fwd) = c2c inv of conj */
  }
  bool c2r = o.fam == FAM_C2R;
  v = cx_pairs(lw, &x, t->dtype);
  for (int i = 0; i < cnt; i++) {
    rlx_dim want = len[i];
    if (c2r && i == last && (st = half_len(lw, len[i], &want))) return st;
    v = resize_axis(lw, v, axes[i], want);
  }
  for (int i = 0; i < (c2r ? last : cnt); i++)
    v = emit_fft(lw, v, RLX_FFT_C2C, axes[i], len[i], !o.forward, false, mode);
  if (c2r) {
    if (o.hermitian && v >= 0) v = conj_pairs(lw, v);
    v = emit_fft(lw, v, RLX_FFT_C2R, axes[last], len[last], true, false, mode);
  }
  return lw_bind(lw, n, v);
}
