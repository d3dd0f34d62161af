/*
 * elementwise.c — lowering of arithmetic, comparison, logical and bitwise
 * binary ops, unary ops, where, masked_fill and clamp, with torch's type
 * promotion (lw_result_type) and real select semantics (masked_fill with
 * -inf stays -inf; no arithmetic blending).
 */
#include <float.h>
#include <math.h>

#include "import/lower/lower.h"

typedef struct binary_map {
  const char *aten;
  rlx_binary_kind kind;
} binary_map;

static const binary_map binaries[] = {
    {"add", RLX_BINARY_ADD},          {"sub", RLX_BINARY_SUB},
    {"rsub", RLX_BINARY_SUB},         {"mul", RLX_BINARY_MUL},
    {"div", RLX_BINARY_DIV},          {"true_divide", RLX_BINARY_DIV},
    {"floor_divide", RLX_BINARY_DIV_FLOOR}, {"pow", RLX_BINARY_POW},
    {"maximum", RLX_BINARY_MAXIMUM},  {"minimum", RLX_BINARY_MINIMUM},
    {"fmax", RLX_BINARY_FMAX},        {"fmin", RLX_BINARY_FMIN},
    {"remainder", RLX_BINARY_REMAINDER}, {"fmod", RLX_BINARY_FMOD},
    {"atan2", RLX_BINARY_ATAN2},      {"hypot", RLX_BINARY_HYPOT},
    {"copysign", RLX_BINARY_COPYSIGN},
    {"bitwise_and", RLX_BINARY_BITAND}, {"bitwise_or", RLX_BINARY_BITOR},
    {"bitwise_xor", RLX_BINARY_BITXOR}, {"bitwise_left_shift", RLX_BINARY_SHL},
    {"__and__", RLX_BINARY_BITAND},   {"__or__", RLX_BINARY_BITOR},
    {"__xor__", RLX_BINARY_BITXOR},
    {"__lshift__", RLX_BINARY_SHL},   {"bitwise_right_shift", RLX_BINARY_SHR},
    {"__rshift__", RLX_BINARY_SHR},   {"logical_and", RLX_BINARY_LOGICAL_AND},
    {"logical_or", RLX_BINARY_LOGICAL_OR}, {"logical_xor", RLX_BINARY_LOGICAL_XOR},
    {"eq", RLX_BINARY_EQ},            {"ne", RLX_BINARY_NE},
    {"lt", RLX_BINARY_LT},            {"le", RLX_BINARY_LE},
    {"gt", RLX_BINARY_GT},            {"ge", RLX_BINARY_GE},
    {"xlogy", RLX_BINARY_XLOGY},      {"special_xlogy", RLX_BINARY_XLOGY},
    {"special_xlog1py", RLX_BINARY_XLOG1PY}, {"special_zeta", RLX_BINARY_ZETA},
    {"igamma", RLX_BINARY_IGAMMA},    {"special_gammainc", RLX_BINARY_IGAMMA},
    {"igammac", RLX_BINARY_IGAMMAC},  {"special_gammaincc", RLX_BINARY_IGAMMAC},
    {"nextafter", RLX_BINARY_NEXTAFTER}, {"gcd", RLX_BINARY_GCD}, {"lcm", RLX_BINARY_LCM},
};

/* Makes operand `a` (argument `what`) a tensor of dtype t: casts a tensor,
 * or builds a scalar. */
static int32_t as_tensor(rlx_lower *lw, const rlx_arg *a, int32_t v, rlx_dtype t, const char *what) {
  return v >= 0 ? lw_cast(lw, v, t) : lw_scalar_arg(lw, a, t, what);
}

/* The largest integer magnitude a double parameter holds exactly. */
#define EXACT_INT_DOUBLE 9007199254740992.0 /* 2^53 */

int32_t lw_binary(rlx_lower *lw, rlx_binary_kind k, int32_t a, int32_t b) {
  rlx_params p = {.binary = {.kind = k}};
  int32_t in[2] = {a, b};
  return lw_emit(lw, RLX_OP_BINARY, &p, in, 2);
}

rlx_status rlx_lower_binary(rlx_lower *lw, const rlx_aten_node *n) {
  const binary_map *m = NULL;
  for (size_t i = 0; i < RLX_COUNTOF(binaries) && !m; i++)
    if (lw_is(n, binaries[i].aten)) m = &binaries[i];
  if (!m) return lw_fail(RLX_ERR_INTERNAL, "no binary mapping");
  rlx_binary_kind k = m->kind;
  const rlx_arg *aa = lw_arg(n, 0, "self"), *ba = lw_arg(n, 1, "other");
  if (!ba) ba = lw_arg(n, 1, "exponent");
  lw_operand ops[2];
  int32_t av, bv;
  rlx_status st = lw_operand_of(lw, aa, &ops[0], &av);
  if (!st) st = lw_operand_of(lw, ba, &ops[1], &bv);
  if (st) return st;

  if (lw_is(n, "div")) { /* rounding_mode: None, "trunc", "floor" */
    const rlx_arg *rm = lw_arg(n, 2, "rounding_mode");
    if (rm && rm->kind == RLX_ARG_STR)
      k = !strcmp(rm->u.s, "trunc") ? RLX_BINARY_DIV_TRUNC
          : !strcmp(rm->u.s, "floor") ? RLX_BINARY_DIV_FLOOR : RLX_BINARY_COUNT;
    if (k == RLX_BINARY_COUNT) return lw_fail(RLX_ERR_UNSUPPORTED, "div rounding_mode '%s'", rm->u.s);
  }
  rlx_dtype ct = lw_result_type(ops, 2);
  if (k == RLX_BINARY_DIV && !rlx_dtype_is_float(ct)) ct = RLX_DTYPE_F32; /* true division */
  if ((k == RLX_BINARY_ATAN2 || k == RLX_BINARY_HYPOT || k == RLX_BINARY_COPYSIGN || k == RLX_BINARY_XLOGY ||
       k == RLX_BINARY_XLOG1PY || k == RLX_BINARY_ZETA) && !rlx_dtype_is_float(ct))
    ct = RLX_DTYPE_F32;
  if ((k == RLX_BINARY_IGAMMA || k == RLX_BINARY_IGAMMAC || k == RLX_BINARY_NEXTAFTER) && !rlx_dtype_is_float(ct))
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s is defined for floating-point inputs only (torch: not implemented "
                   "for %s)", rlx_binary_names[k], rlx_dtype_name(ct));
  if ((k == RLX_BINARY_GCD || k == RLX_BINARY_LCM) && (rlx_dtype_is_float(ct) || ct == RLX_DTYPE_BOOL))
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s is defined for integer inputs only (torch: not implemented for %s)",
                   rlx_binary_names[k], rlx_dtype_name(ct));
  if (k >= RLX_BINARY_LOGICAL_AND && k <= RLX_BINARY_LOGICAL_XOR) ct = RLX_DTYPE_BOOL;
  if (k == RLX_BINARY_POW && ct == RLX_DTYPE_BOOL) ct = RLX_DTYPE_I64;

  if (k == RLX_BINARY_POW && av >= 0 && bv < 0) { /* tensor ** scalar: torch's sqrt/rsqrt/square cases */
    rlx_params up = {.unary = {.kind = RLX_UNARY_POW_SCALAR}};
    if ((st = lw_float(lw, n, 1, "exponent", 1.0, &up.unary.a))) return st;
    if (!rlx_dtype_is_float(ct) && !(fabs(up.unary.a) <= EXACT_INT_DOUBLE)) /* the op holds it as a double */
      return lw_fail(RLX_ERR_UNSUPPORTED, "integer power with exponent %g: rlx takes integer exponents up to "
                     "2^53 in magnitude", up.unary.a);
    int32_t x = lw_cast(lw, av, ct);
    return lw_bind(lw, n, x < 0 ? -1 : lw_emit(lw, RLX_OP_UNARY, &up, &x, 1));
  }
  int32_t a = as_tensor(lw, aa, av, ct, "argument 'self'");
  const char *bname = lw_arg(n, 1, "other") ? "argument 'other'" : "argument 'exponent'";
  int32_t b = a < 0 ? -1 : as_tensor(lw, ba, bv, ct, bname);
  if (a < 0 || b < 0) return rlx_last_status();
  double alpha = 1.0;
  if (lw_is(n, "add") || lw_is(n, "sub") || lw_is(n, "rsub")) {
    const rlx_arg *al = lw_arg(n, 2, "alpha");
    if ((st = lw_float(lw, n, 2, "alpha", 1.0, &alpha))) return st;
    if (!rlx_dtype_is_float(ct) && al && al->kind == RLX_ARG_FLOAT)
      return lw_fail(RLX_ERR_UNSUPPORTED, "for integral input tensors, argument 'alpha' must not be a floating "
                     "point number (got %g)", alpha);
    if (alpha != 1.0) {
      int32_t s = lw_scalar_arg(lw, al, ct, "argument 'alpha'");
      if (lw_is(n, "rsub")) a = lw_binary(lw, RLX_BINARY_MUL, a, s);
      else b = lw_binary(lw, RLX_BINARY_MUL, b, s);
      if (a < 0 || b < 0) return rlx_last_status();
    }
  }
  if (lw_is(n, "rsub")) {
    int32_t t = a;
    a = b, b = t;
  }
  return lw_bind(lw, n, lw_binary(lw, k, a, b));
}

/* ---- unary ---- */

typedef struct unary_map {
  const char *aten;
  rlx_unary_kind kind;
} unary_map;

static const unary_map unaries[] = {
    {"relu", RLX_UNARY_RELU}, {"gelu", RLX_UNARY_GELU}, {"silu", RLX_UNARY_SILU},
    {"sigmoid", RLX_UNARY_SIGMOID}, {"tanh", RLX_UNARY_TANH}, {"exp", RLX_UNARY_EXP},
    {"exp2", RLX_UNARY_EXP2}, {"expm1", RLX_UNARY_EXPM1}, {"log", RLX_UNARY_LOG},
    {"log2", RLX_UNARY_LOG2}, {"log10", RLX_UNARY_LOG10}, {"log1p", RLX_UNARY_LOG1P},
    {"sqrt", RLX_UNARY_SQRT}, {"rsqrt", RLX_UNARY_RSQRT}, {"neg", RLX_UNARY_NEG},
    {"abs", RLX_UNARY_ABS}, {"sign", RLX_UNARY_SIGN}, {"sgn", RLX_UNARY_SIGN},
    {"sin", RLX_UNARY_SIN}, {"cos", RLX_UNARY_COS}, {"tan", RLX_UNARY_TAN},
    {"asin", RLX_UNARY_ASIN}, {"acos", RLX_UNARY_ACOS}, {"atan", RLX_UNARY_ATAN},
    {"sinh", RLX_UNARY_SINH}, {"cosh", RLX_UNARY_COSH}, {"asinh", RLX_UNARY_ASINH},
    {"acosh", RLX_UNARY_ACOSH}, {"atanh", RLX_UNARY_ATANH}, {"erf", RLX_UNARY_ERF},
    {"erfc", RLX_UNARY_ERFC}, {"erfinv", RLX_UNARY_ERFINV}, {"floor", RLX_UNARY_FLOOR},
    {"ceil", RLX_UNARY_CEIL}, {"round", RLX_UNARY_ROUND}, {"trunc", RLX_UNARY_TRUNC},
    {"frac", RLX_UNARY_FRAC}, {"reciprocal", RLX_UNARY_RECIPROCAL}, {"square", RLX_UNARY_SQUARE},
    {"logical_not", RLX_UNARY_LOGICAL_NOT}, {"bitwise_not", RLX_UNARY_BITWISE_NOT},
    {"isnan", RLX_UNARY_ISNAN}, {"isinf", RLX_UNARY_ISINF}, {"isposinf", RLX_UNARY_ISPOSINF},
    {"isneginf", RLX_UNARY_ISNEGINF}, {"isfinite", RLX_UNARY_ISFINITE},
    {"leaky_relu", RLX_UNARY_LEAKY_RELU}, {"elu", RLX_UNARY_ELU}, {"celu", RLX_UNARY_CELU},
    {"selu", RLX_UNARY_SELU}, {"hardtanh", RLX_UNARY_HARDTANH}, {"relu6", RLX_UNARY_HARDTANH},
    {"hardsigmoid", RLX_UNARY_HARDSIGMOID}, {"hardswish", RLX_UNARY_HARDSWISH},
    {"softplus", RLX_UNARY_SOFTPLUS}, {"mish", RLX_UNARY_MISH},
    {"log_sigmoid_forward", RLX_UNARY_LOGSIGMOID}, {"nan_to_num", RLX_UNARY_NAN_TO_NUM},
    {"special_erfinv", RLX_UNARY_ERFINV}, {"special_erf", RLX_UNARY_ERF}, {"special_erfc", RLX_UNARY_ERFC},
    {"special_expm1", RLX_UNARY_EXPM1}, {"special_exp2", RLX_UNARY_EXP2}, {"special_log1p", RLX_UNARY_LOG1P},
    {"special_expit", RLX_UNARY_SIGMOID}, {"log_sigmoid", RLX_UNARY_LOGSIGMOID},
    {"positive", RLX_UNARY_COUNT},
    {"lgamma", RLX_UNARY_LGAMMA}, {"special_gammaln", RLX_UNARY_LGAMMA}, {"digamma", RLX_UNARY_DIGAMMA},
    {"special_digamma", RLX_UNARY_DIGAMMA}, {"special_psi", RLX_UNARY_DIGAMMA},
    {"special_erfcx", RLX_UNARY_ERFCX}, {"special_ndtr", RLX_UNARY_NDTR}, {"special_log_ndtr", RLX_UNARY_LOG_NDTR},
    {"special_ndtri", RLX_UNARY_NDTRI}, {"i0", RLX_UNARY_I0}, {"special_i0", RLX_UNARY_I0},
    {"special_modified_bessel_i0", RLX_UNARY_I0}, {"special_i0e", RLX_UNARY_I0E}, {"special_i1", RLX_UNARY_I1},
    {"special_modified_bessel_i1", RLX_UNARY_I1}, {"special_i1e", RLX_UNARY_I1E},
    {"special_bessel_j0", RLX_UNARY_BESSEL_J0}, {"special_bessel_j1", RLX_UNARY_BESSEL_J1},
    {"special_bessel_y0", RLX_UNARY_BESSEL_Y0}, {"special_bessel_y1", RLX_UNARY_BESSEL_Y1},
    {"special_modified_bessel_k0", RLX_UNARY_BESSEL_K0}, {"special_modified_bessel_k1", RLX_UNARY_BESSEL_K1},
    {"special_scaled_modified_bessel_k0", RLX_UNARY_BESSEL_K0E},
    {"special_scaled_modified_bessel_k1", RLX_UNARY_BESSEL_K1E},
    {"special_spherical_bessel_j0", RLX_UNARY_SPHERICAL_J0}, {"special_entr", RLX_UNARY_ENTR},
    {"sinc", RLX_UNARY_SINC}, {"special_sinc", RLX_UNARY_SINC}, {"angle", RLX_UNARY_ANGLE},
    /* specials (issue 11) */
    {"special_airy_ai", RLX_UNARY_AIRY_AI},
};

static double dtype_max(rlx_dtype t) {
  switch (t) {
    case RLX_DTYPE_F16: return 65504.0;
    case RLX_DTYPE_BF16: return 3.3895313892515355e38;
    case RLX_DTYPE_F64: return DBL_MAX;
    default: return FLT_MAX;
  }
}

static bool is_predicate(rlx_unary_kind k) {
  return k == RLX_UNARY_LOGICAL_NOT || k == RLX_UNARY_ISNAN || k == RLX_UNARY_ISINF ||
         k == RLX_UNARY_ISPOSINF || k == RLX_UNARY_ISNEGINF || k == RLX_UNARY_ISFINITE;
}

/* Reads the kind's scalar parameters. */
static rlx_status unary_params(rlx_lower *lw, const rlx_aten_node *n, rlx_unary_params *p, rlx_dtype t) {
  rlx_status st = RLX_OK;
  switch (p->kind) {
    case RLX_UNARY_GELU: {
      const rlx_arg *a = lw_arg(n, 1, "approximate");
      if (a && a->kind == RLX_ARG_STR && !strcmp(a->u.s, "tanh")) p->kind = RLX_UNARY_GELU_TANH;
      else if (a && (a->kind != RLX_ARG_STR || strcmp(a->u.s, "none")))
        return lw_fail(RLX_ERR_UNSUPPORTED, "gelu approximate must be 'none' or 'tanh'");
      break;
    }
    case RLX_UNARY_LEAKY_RELU: st = lw_float(lw, n, 1, "negative_slope", 0.01, &p->a); break;
    case RLX_UNARY_ELU:
      if (!(st = lw_float(lw, n, 1, "alpha", 1.0, &p->a)) && !(st = lw_float(lw, n, 2, "scale", 1.0, &p->b)))
        st = lw_float(lw, n, 3, "input_scale", 1.0, &p->c);
      break;
    case RLX_UNARY_CELU: st = lw_float(lw, n, 1, "alpha", 1.0, &p->a); break;
    case RLX_UNARY_HARDTANH:
      if (lw_is(n, "relu6")) p->a = 0, p->b = 6;
      else if (!(st = lw_float(lw, n, 1, "min_val", -1.0, &p->a))) st = lw_float(lw, n, 2, "max_val", 1.0, &p->b);
      if (!st && !rlx_dtype_is_float(t) && !(fabs(p->a) <= EXACT_INT_DOUBLE && fabs(p->b) <= EXACT_INT_DOUBLE))
        return lw_fail(RLX_ERR_UNSUPPORTED, "hardtanh of a %s tensor with bounds (%g, %g): 'min_val' and "
                       "'max_val' must be integers up to 2^53 in magnitude", rlx_dtype_name(t), p->a, p->b);
      break;
    case RLX_UNARY_SOFTPLUS:
      if (!(st = lw_float(lw, n, 1, "beta", 1.0, &p->a))) st = lw_float(lw, n, 2, "threshold", 20.0, &p->b);
      break;
    case RLX_UNARY_ROUND: {
      int64_t d;
      if ((st = lw_int(lw, n, 1, "decimals", 0, &d))) return st;
      if (d) p->kind = RLX_UNARY_ROUND_DECIMALS, p->a = (double)d;
      break;
    }
    case RLX_UNARY_NAN_TO_NUM:
      if (!(st = lw_float(lw, n, 1, "nan", 0.0, &p->a)) && !(st = lw_float(lw, n, 2, "posinf", dtype_max(t), &p->b)))
        st = lw_float(lw, n, 3, "neginf", -dtype_max(t), &p->c);
      break;
    default: break;
  }
  return st;
}

rlx_status rlx_lower_unary(rlx_lower *lw, const rlx_aten_node *n) {
  const unary_map *m = NULL;
  for (size_t i = 0; i < RLX_COUNTOF(unaries) && !m; i++)
    if (lw_is(n, unaries[i].aten)) m = &unaries[i];
  if (!m) return lw_fail(RLX_ERR_INTERNAL, "no unary mapping");
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  if (m->kind == RLX_UNARY_COUNT) return lw_bind(lw, n, x); /* positive: identity */
  const rlx_tinfo *t = lw_out(n, 0);
  rlx_params p = {.unary = {.kind = m->kind}};
  /* compute dtype: the recorded output's, unless the op is a predicate */
  rlx_dtype ct = (t && !is_predicate(m->kind)) ? t->dtype : lw_val(lw, x)->dtype;
  if ((st = unary_params(lw, n, &p.unary, ct))) return st;
  x = lw_cast(lw, x, ct);
  int32_t y = x < 0 ? -1 : lw_emit(lw, RLX_OP_UNARY, &p, &x, 1);
  if (n->out_kind == RLX_OUT_LIST) { /* log_sigmoid_forward: (output, buffer) */
    int32_t outs[2] = {y, -1};
    if (y < 0) return rlx_last_status();
    return lw_bind_multi(lw, n, outs, n->n_outs < 2 ? n->n_outs : 2);
  }
  return lw_bind(lw, n, y);
}

/* ---- where, masked_fill, clamp ---- */

rlx_status rlx_lower_where(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t c, av, bv;
  lw_operand ops[2];
  const rlx_arg *aa = lw_arg(n, 1, "self"), *ba = lw_arg(n, 2, "other");
  rlx_status st = lw_tensor(lw, n, 0, "condition", &c);
  if (!st) st = lw_operand_of(lw, aa, &ops[0], &av);
  if (!st) st = lw_operand_of(lw, ba, &ops[1], &bv);
  if (st) return st;
  rlx_dtype cdt = lw_val(lw, c)->dtype;
  if (cdt != RLX_DTYPE_BOOL && cdt != RLX_DTYPE_U8) /* torch takes bool (and, deprecated, uint8) conditions */
    return lw_fail(RLX_ERR_UNSUPPORTED, "argument 'condition' must be a bool tensor, got %s", rlx_dtype_name(cdt));
  rlx_dtype ct = lw_result_type(ops, 2);
  int32_t in[3] = {lw_cast(lw, c, RLX_DTYPE_BOOL), -1, -1};
  if (in[0] >= 0) in[1] = as_tensor(lw, aa, av, ct, "argument 'self'");
  if (in[1] >= 0) in[2] = as_tensor(lw, ba, bv, ct, "argument 'other'");
  if (in[0] < 0 || in[1] < 0 || in[2] < 0) return rlx_last_status();
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_WHERE, NULL, in, 3));
}

rlx_status rlx_lower_masked_fill(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, mask, vv;
  lw_operand op;
  const rlx_arg *va = lw_arg(n, 2, "value");
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_tensor(lw, n, 1, "mask", &mask);
  if (!st) st = lw_operand_of(lw, va, &op, &vv);
  if (st) return st;
  if (vv >= 0 && lw_val(lw, vv)->shape.rank != 0)
    return lw_fail(RLX_ERR_SHAPE, "masked_fill value must be a scalar or a 0-dim tensor");
  if (lw_val(lw, mask)->dtype != RLX_DTYPE_BOOL) /* torch: "masked_fill_ only supports boolean masks" */
    return lw_fail(RLX_ERR_UNSUPPORTED, "argument 'mask' must be a bool tensor, got %s",
                   rlx_dtype_name(lw_val(lw, mask)->dtype));
  rlx_dtype t = lw_val(lw, x)->dtype;
  int32_t in[3] = {lw_cast(lw, mask, RLX_DTYPE_BOOL), -1, x};
  if (in[0] >= 0) in[1] = vv >= 0 ? lw_cast(lw, vv, t) : lw_fill_scalar(lw, va, t, "argument 'value'");
  if (in[0] < 0 || in[1] < 0) return rlx_last_status();
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_WHERE, NULL, in, 3));
}

/* A number bound of a clamp on an integer dtype t as an exact int64, as
 * torch takes it: a min above or a max below t's range is an error, one on
 * the other side never binds (and is clamped to the range here). */
static rlx_status int_bound(rlx_lower *lw, const rlx_arg *a, rlx_dtype t, bool is_min, const char *what, int64_t *iv) {
  a = lw_resolve(lw, a);
  rlx_status st = RLX_OK;
  if (a->kind == RLX_ARG_INT) *iv = a->u.i;
  else if (a->kind == RLX_ARG_BOOL) *iv = a->u.b;
  else if (a->kind == RLX_ARG_FLOAT) st = isnan(a->u.f) ? lw_fail(RLX_ERR_UNSUPPORTED, "%s is nan", what)
                                                        : lw_f64_to(a->u.f, RLX_DTYPE_I64, what, iv);
  else st = lw_fail(RLX_ERR_UNSUPPORTED, "%s must be a number or a tensor", what);
  if (st) return st;
  int64_t lo, hi;
  lw_int_range(t, &lo, &hi);
  if (is_min ? *iv > hi : *iv < lo)
    return lw_fail(RLX_ERR_SHAPE, "%s (%lld) is outside the representable range of %s", what, (long long)*iv,
                   rlx_dtype_name(t));
  *iv = RLX_MIN(RLX_MAX(*iv, lo), hi);
  return RLX_OK;
}

rlx_status rlx_lower_clamp(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  rlx_dtype ct = t ? t->dtype : lw_val(lw, x)->dtype;
  const rlx_arg *lo = NULL, *hi = NULL;
  if (lw_is(n, "clamp_min")) lo = lw_arg(n, 1, "min");
  else if (lw_is(n, "clamp_max")) hi = lw_arg(n, 1, "max");
  else lo = lw_arg(n, 1, "min"), hi = lw_arg(n, 2, "max");
  x = lw_cast(lw, x, ct);
  if (x < 0) return rlx_last_status();
  const rlx_arg *bounds[2] = {lo, hi};
  static const char *const names[2] = {"argument 'min'", "argument 'max'"};
  bool tensor_bounds = (lo && lo->kind == RLX_ARG_REF) || (hi && hi->kind == RLX_ARG_REF), exact[2] = {false, false};
  int64_t ib[2] = {0, 0};
  for (int i = 0; i < 2 && !rlx_dtype_is_float(ct); i++) {
    if (!bounds[i] || bounds[i]->kind == RLX_ARG_REF) continue;
    if ((st = int_bound(lw, bounds[i], ct, i == 0, names[i], &ib[i]))) return st;
    exact[i] = true;
    /* a double parameter holds integers exactly up to 2^53; larger ones become integer constants */
    if (!(fabs((double)ib[i]) <= EXACT_INT_DOUBLE)) tensor_bounds = true;
  }
  if (!tensor_bounds) {
    rlx_params p = {.unary = {.kind = RLX_UNARY_CLAMP, .a = NAN, .b = NAN}};
    if ((lo && (st = lw_float(lw, n, 1, "min", NAN, &p.unary.a))) ||
        (hi && (st = lw_float(lw, n, lw_is(n, "clamp_max") ? 1 : 2, "max", NAN, &p.unary.b))))
      return st;
    if (exact[0]) p.unary.a = (double)ib[0];
    if (exact[1]) p.unary.b = (double)ib[1];
    return lw_bind(lw, n, lw_emit(lw, RLX_OP_UNARY, &p, &x, 1));
  }
  /* tensor bounds: min(max(x, lo), hi), NaN-propagating like torch */
  rlx_binary_kind kinds[2] = {RLX_BINARY_MAXIMUM, RLX_BINARY_MINIMUM};
  for (int i = 0; i < 2; i++) {
    if (!bounds[i]) continue;
    lw_operand op;
    int32_t bv;
    if ((st = lw_operand_of(lw, bounds[i], &op, &bv))) return st;
    int32_t b = exact[i] ? lw_scalar(lw, ct, (double)ib[i], ib[i]) : as_tensor(lw, bounds[i], bv, ct, names[i]);
    x = b < 0 ? -1 : lw_binary(lw, kinds[i], x, b);
    if (x < 0) return rlx_last_status();
  }
  return lw_bind(lw, n, x);
}

/* logit(x, eps?) = log(z / (1 - z)), z = clamp(x, eps, 1 - eps) when eps is given */
rlx_status rlx_lower_logit(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  double eps;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_float(lw, n, 1, "eps", -1.0, &eps);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  rlx_dtype ct = t ? t->dtype : RLX_DTYPE_F32;
  x = lw_cast(lw, x, ct);
  if (x >= 0 && eps >= 0) {
    rlx_params c = {.unary = {.kind = RLX_UNARY_CLAMP, .a = eps, .b = 1.0 - eps}};
    x = lw_emit(lw, RLX_OP_UNARY, &c, &x, 1);
  }
  int32_t one = lw_scalar(lw, ct, 1.0, 1);
  if (x < 0 || one < 0) return rlx_last_status();
  int32_t q = lw_binary(lw, RLX_BINARY_DIV, x, lw_binary(lw, RLX_BINARY_SUB, one, x));
  rlx_params lg = {.unary = {.kind = RLX_UNARY_LOG}};
  return lw_bind(lw, n, q < 0 ? -1 : lw_emit(lw, RLX_OP_UNARY, &lg, &q, 1));
}

/* signbit: the sign bit, -0.0 and NaNs included, as copysign(1, x) < 0 in
 * floats; x < 0 for integers (false for bool and unsigned). */
rlx_status rlx_lower_signbit(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  rlx_dtype t = lw_val(lw, x)->dtype;
  if (t == RLX_DTYPE_BOOL) t = RLX_DTYPE_U8, x = lw_cast(lw, x, t);
  rlx_arg one = {.kind = RLX_ARG_FLOAT, .u.f = 1.0}, zero = {.kind = RLX_ARG_INT, .u.i = 0};
  int32_t s = rlx_dtype_is_float(t) ? lw_binary(lw, RLX_BINARY_COPYSIGN, lw_scalar_arg(lw, &one, t, "1"), x) : x;
  int32_t z = lw_scalar_arg(lw, &zero, t, "0");
  if (s < 0 || z < 0) return rlx_last_status();
  return lw_bind(lw, n, lw_binary(lw, RLX_BINARY_LT, s, z));
}

/* rrelu in eval (training=False): leaky_relu with slope (lower + upper) / 2;
 * the _functional variant also returns its noise input unchanged. Training
 * mode draws random slopes: refused. */
rlx_status rlx_lower_rrelu(rlx_lower *lw, const rlx_aten_node *n) {
  bool noise = lw_is(n, "rrelu_with_noise") || lw_is(n, "rrelu_with_noise_functional");
  int32_t x, nz = -1;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st && noise) st = lw_tensor(lw, n, 1, "noise", &nz);
  if (st) return st;
  int base = noise ? 2 : 1;
  double lo, hi;
  bool training;
  if ((st = lw_float(lw, n, base, "lower", 1.0 / 8.0, &lo)) || (st = lw_float(lw, n, base + 1, "upper", 1.0 / 3.0, &hi)) ||
      (st = lw_bool(lw, n, base + 2, "training", false, &training)))
    return st;
  if (training) return lw_fail(RLX_ERR_UNSUPPORTED, "rrelu with training=True draws random slopes; export the model in eval()");
  rlx_params p = {.unary = {.kind = RLX_UNARY_LEAKY_RELU, .a = (lo + hi) / 2}};
  int32_t y = lw_emit(lw, RLX_OP_UNARY, &p, &x, 1);
  if (y < 0) return rlx_last_status();
  if (!lw_is(n, "rrelu_with_noise_functional")) return lw_bind(lw, n, y);
  int32_t outs[2] = {y, nz};
  return lw_bind_multi(lw, n, outs, 2);
}
