/*
 * unary.c — unary elementwise op: validation, shape inference, reference
 * kernel. Float kinds compute in double and round once to the output dtype
 * (round_decimals, which is discontinuous, computes in float below f64, as
 * torch does; so do the steps of the special functions and sinc listed in
 * special.h); integer kinds compute exactly in int64. frexp_exponent writes
 * int32; mvlgamma refuses elements at or below (p - 1) / 2, as torch.
 */
#include <math.h>

#include "ops/ops_util.h"
#include "ops/special.h"

static bool is_predicate(rlx_unary_kind k) {
  return k == RLX_UNARY_LOGICAL_NOT || k == RLX_UNARY_ISNAN || k == RLX_UNARY_ISINF ||
         k == RLX_UNARY_ISPOSINF || k == RLX_UNARY_ISNEGINF || k == RLX_UNARY_ISFINITE;
}

/* Kinds defined on integer (and bool) inputs as well as floats. */
static bool allows_int(rlx_unary_kind k) {
  switch (k) {
    case RLX_UNARY_RELU: case RLX_UNARY_NEG: case RLX_UNARY_ABS: case RLX_UNARY_SIGN:
    case RLX_UNARY_SQUARE: case RLX_UNARY_BITWISE_NOT: case RLX_UNARY_CLAMP:
    case RLX_UNARY_FLOOR: case RLX_UNARY_CEIL: case RLX_UNARY_ROUND: case RLX_UNARY_TRUNC:
    case RLX_UNARY_POW_SCALAR: case RLX_UNARY_HARDTANH: case RLX_UNARY_NAN_TO_NUM:
      return true;
    default:
      return is_predicate(k);
  }
}

static rlx_status unary_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  rlx_unary_kind k = n->p.unary.kind;
  if ((unsigned)k >= RLX_UNARY_COUNT) RLX_INFER_FAIL("invalid unary kind %d", (int)k);
  if (!rlx_dtype_is_float(x->dtype) && !allows_int(k))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "unary %s needs a float input, got %s",
                      rlx_unary_names[k], rlx_dtype_name(x->dtype));
  if (k == RLX_UNARY_BITWISE_NOT && rlx_dtype_is_float(x->dtype))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "bitwise_not needs an integer or bool input");
  os[0] = x->shape;
  od[0] = is_predicate(k) ? RLX_DTYPE_BOOL : k == RLX_UNARY_FREXP_EXPONENT ? RLX_DTYPE_I32 : x->dtype;
  return RLX_OK;
}

/* torch rounds to `decimals` in float below f64; the result is
 * discontinuous, so the wider precision would change it (2.675f -> 2.68). */
static double round_decimals(double x, double d, bool f64) {
  double tp = pow(10.0, fabs(d));
  if (f64) return d < 0 ? nearbyint(x / tp) * tp : nearbyint(x * tp) / tp;
  float xf = (float)x, tf = (float)tp;
  return d < 0 ? nearbyintf(xf / tf) * tf : nearbyintf(xf * tf) / tf;
}

/* torch forms pi x in the input's precision (float below f64): at large x
 * and next to the integers that product's rounding decides the result
 * (sinc(1) is -2.8e-8 in float, 3.9e-17 in double). */
static double sinc(double x, bool f64) {
  if (x == 0) return 1.0;
  double t = f64 ? M_PI * x : (double)((float)M_PI * (float)x);
  return sin(t) / t;
}

static double softplus(double x, double beta, double threshold) {
  return x * beta > threshold ? x : log1p(exp(x * beta)) / beta;
}

/* `f64`: the input is f64 (the few kinds torch computes in the input's
 * precision need to know). */
double rlx_unary_apply(const rlx_unary_params *p, double x, bool f64) {
  switch (p->kind) {
    case RLX_UNARY_RELU: return x > 0 ? x : (x == x ? 0.0 : x);
    case RLX_UNARY_GELU: return 0.5 * x * (1.0 + erf(x * M_SQRT1_2));
    case RLX_UNARY_GELU_TANH: {
      double c = sqrt(2.0 / M_PI);
      return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)));
    }
    case RLX_UNARY_SILU: return x / (1.0 + exp(-x));
    case RLX_UNARY_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case RLX_UNARY_TANH: return tanh(x);
    case RLX_UNARY_EXP: return exp(x);
    case RLX_UNARY_EXP2: return exp2(x);
    case RLX_UNARY_EXPM1: return expm1(x);
    case RLX_UNARY_LOG: return log(x);
    case RLX_UNARY_LOG2: return log2(x);
    case RLX_UNARY_LOG10: return log10(x);
    case RLX_UNARY_LOG1P: return log1p(x);
    case RLX_UNARY_SQRT: return sqrt(x);
    case RLX_UNARY_RSQRT: return 1.0 / sqrt(x);
    case RLX_UNARY_NEG: return -x;
    case RLX_UNARY_ABS: return fabs(x);
    case RLX_UNARY_SIGN: return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; /* sign(NaN) = 0, as torch */
    case RLX_UNARY_SIN: return sin(x);
    case RLX_UNARY_COS: return cos(x);
    case RLX_UNARY_TAN: return tan(x);
    case RLX_UNARY_ASIN: return asin(x);
    case RLX_UNARY_ACOS: return acos(x);
    case RLX_UNARY_ATAN: return atan(x);
    case RLX_UNARY_SINH: return sinh(x);
    case RLX_UNARY_COSH: return cosh(x);
    case RLX_UNARY_ASINH: return asinh(x);
    case RLX_UNARY_ACOSH: return acosh(x);
    case RLX_UNARY_ATANH: return atanh(x);
    case RLX_UNARY_ERF: return erf(x);
    case RLX_UNARY_ERFC: return erfc(x);
    case RLX_UNARY_ERFINV: return rlx_special_erfinv(x);
    case RLX_UNARY_FLOOR: return floor(x);
    case RLX_UNARY_CEIL: return ceil(x);
    case RLX_UNARY_ROUND: return nearbyint(x);
    case RLX_UNARY_TRUNC: return trunc(x);
    case RLX_UNARY_FRAC: return x - trunc(x);
    case RLX_UNARY_RECIPROCAL: return 1.0 / x;
    case RLX_UNARY_SQUARE: return x * x;
    case RLX_UNARY_LEAKY_RELU: return x > 0 ? x : x * p->a;
    case RLX_UNARY_ELU: /* a: alpha, b: scale, c: input_scale */
      return x > 0 ? p->b * x : p->b * p->a * expm1(x * p->c);
    case RLX_UNARY_CELU: return x > 0 ? x : p->a * expm1(x / p->a); /* NaN propagates */
    case RLX_UNARY_SELU: {
      const double alpha = 1.6732632423543772848170429916717;
      const double scale = 1.0507009873554804934193349852946;
      return x > 0 ? scale * x : scale * alpha * expm1(x);
    }
    case RLX_UNARY_HARDTANH: return x < p->a ? p->a : x > p->b ? p->b : x;
    case RLX_UNARY_HARDSIGMOID: return x != x ? x : fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0; /* torch's formula */
    case RLX_UNARY_HARDSWISH: return x * fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0;
    case RLX_UNARY_SOFTPLUS: return softplus(x, p->a, p->b);
    case RLX_UNARY_MISH: return x * tanh(softplus(x, 1.0, 20.0));
    case RLX_UNARY_LOGSIGMOID: return fmin(x, 0.0) - log1p(exp(-fabs(x)));
    case RLX_UNARY_ROUND_DECIMALS: return round_decimals(x, p->a, f64);
    case RLX_UNARY_NAN_TO_NUM: /* a: nan, b: posinf, c: neginf */
      return x != x ? p->a : x == INFINITY ? p->b : x == -INFINITY ? p->c : x;
    case RLX_UNARY_POW_SCALAR: /* torch's pow_tensor_scalar special cases */
      if (p->a == 0.5) return sqrt(x);
      if (p->a == -0.5) return 1.0 / sqrt(x);
      if (p->a == 2) return x * x;
      if (p->a == 3) return x * x * x;
      if (p->a == -1) return 1.0 / x;
      if (p->a == -2) return 1.0 / (x * x);
      return pow(x, p->a);
    case RLX_UNARY_RPOW_SCALAR: return pow(p->a, x);
    case RLX_UNARY_CLAMP: /* a: min, b: max (NaN: absent); NaN input propagates */
      if (x != x) return x;
      if (p->a == p->a && x < p->a) x = p->a;
      if (p->b == p->b && x > p->b) x = p->b;
      return x;
    case RLX_UNARY_LGAMMA: return rlx_special_lgamma(x, f64);
    case RLX_UNARY_DIGAMMA: return rlx_special_digamma(x);
    case RLX_UNARY_POLYGAMMA: return rlx_special_polygamma(p->a, x, f64); /* a: n */
    case RLX_UNARY_MVLGAMMA: return rlx_special_mvlgamma(x, p->a, f64);   /* a: p */
    case RLX_UNARY_ERFCX: return rlx_special_erfcx(x);
    case RLX_UNARY_NDTR: return rlx_special_ndtr(x);
    case RLX_UNARY_LOG_NDTR: return rlx_special_log_ndtr(x);
    case RLX_UNARY_NDTRI: return rlx_special_ndtri(x);
    case RLX_UNARY_I0: return rlx_special_i0(x, f64);
    case RLX_UNARY_I0E: return rlx_special_i0e(x);
    case RLX_UNARY_I1: return rlx_special_i1(x, f64);
    case RLX_UNARY_I1E: return rlx_special_i1e(x);
    case RLX_UNARY_BESSEL_J0: return rlx_special_j0(x, f64);
    case RLX_UNARY_BESSEL_J1: return rlx_special_j1(x, f64);
    case RLX_UNARY_BESSEL_Y0: return rlx_special_y0(x, f64);
    case RLX_UNARY_BESSEL_Y1: return rlx_special_y1(x, f64);
    case RLX_UNARY_BESSEL_K0: return rlx_special_k0(x);
    case RLX_UNARY_BESSEL_K1: return rlx_special_k1(x);
    case RLX_UNARY_BESSEL_K0E: return rlx_special_k0e(x);
    case RLX_UNARY_BESSEL_K1E: return rlx_special_k1e(x);
    case RLX_UNARY_SPHERICAL_J0: return rlx_special_spherical_j0(x);
    case RLX_UNARY_ENTR: return x != x ? x : x > 0 ? -x * log(x) : x == 0 ? 0.0 : -INFINITY;
    case RLX_UNARY_SINC: return sinc(x, f64);
    case RLX_UNARY_ANGLE: return x != x ? x : x < 0 ? M_PI : 0.0; /* of a real number; NaN propagates */
    case RLX_UNARY_FREXP_MANTISSA: {
      int e;
      return frexp(x, &e); /* +-0, +-inf and NaN are their own mantissa */
    }
    case RLX_UNARY_FREXP_EXPONENT: {
      int e = 0;
      if (isfinite(x)) frexp(x, &e); /* 0 for +-inf and NaN, as torch (glibc) */
      return e;
    }
    default: return NAN;
  }
}

static bool unary_pred(rlx_unary_kind k, double x) {
  switch (k) {
    case RLX_UNARY_LOGICAL_NOT: return x == 0;
    case RLX_UNARY_ISNAN: return x != x;
    case RLX_UNARY_ISINF: return isinf(x);
    case RLX_UNARY_ISPOSINF: return x == INFINITY;
    case RLX_UNARY_ISNEGINF: return x == -INFINITY;
    default: return isfinite(x); /* ISFINITE */
  }
}

/* Integer kinds, exact. `bits`: the dtype's width, for bitwise_not on bool. */
static int64_t unary_i(const rlx_unary_params *p, int64_t x, rlx_dtype t) {
  switch (p->kind) {
    case RLX_UNARY_RELU: return x > 0 ? x : 0;
    case RLX_UNARY_NEG: return (int64_t)(0 - (uint64_t)x);
    case RLX_UNARY_ABS: return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
    case RLX_UNARY_SIGN: return (x > 0) - (x < 0);
    case RLX_UNARY_SQUARE: return (int64_t)((uint64_t)x * (uint64_t)x);
    case RLX_UNARY_BITWISE_NOT: return t == RLX_DTYPE_BOOL ? !x : ~x;
    case RLX_UNARY_HARDTANH: return (double)x < p->a ? rlx_f64_to_i64(p->a) : (double)x > p->b ? rlx_f64_to_i64(p->b) : x;
    case RLX_UNARY_CLAMP: {
      double v = (double)x;
      if (p->a == p->a && v < p->a) return rlx_f64_to_i64(p->a);
      if (p->b == p->b && v > p->b) return rlx_f64_to_i64(p->b);
      return x;
    }
    case RLX_UNARY_POW_SCALAR: {
      int64_t e = rlx_f64_to_i64(p->a), r = 1; /* the lowering keeps it exact (|a| <= 2^53) */
      if (e < 0) return x == 1 ? 1 : x == -1 ? ((e & 1) ? -1 : 1) : 0;
      uint64_t b = (uint64_t)x, acc = 1;
      for (; e; e >>= 1, b *= b)
        if (e & 1) acc *= b;
      r = (int64_t)acc;
      return r;
    }
    default: return x; /* floor, ceil, round, trunc are identity on integers */
  }
}

/* u64 kinds that read the sign or the magnitude, on the value as unsigned;
 * the others are the same on the bits (unary_i). */
static uint64_t unary_u64(const rlx_unary_params *p, uint64_t x) {
  switch (p->kind) {
    case RLX_UNARY_RELU: case RLX_UNARY_ABS: return x;
    case RLX_UNARY_SIGN: return x != 0;
    case RLX_UNARY_HARDTANH: case RLX_UNARY_CLAMP: { /* bounds are int64s (arguments): below 2^63 */
      double v = (double)x;
      if (p->a == p->a && v < p->a) return (uint64_t)rlx_f64_to_i64(p->a);
      if (p->b == p->b && v > p->b) return (uint64_t)rlx_f64_to_i64(p->b);
      return x;
    }
    default: return (uint64_t)unary_i(p, (int64_t)x, RLX_DTYPE_U64);
  }
}

static rlx_status unary_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                            void *scratch) {
  (void)scratch;
  const rlx_unary_params *p = &n->p.unary;
  int64_t N = rlx_view_numel(&in[0]);
  rlx_dtype t = in[0].dtype;
  if (p->kind == RLX_UNARY_MVLGAMMA) /* torch: "All elements must be greater than (p-1)/2" */
    for (int64_t i = 0; i < N; i++) {
      double x = rlx_load_f64(in[0].data, t, i);
      if (!(x > (p->a - 1) / 2))
        return rlx_errorf(RLX_ERR_RUNTIME, "mvlgamma of order p = %g needs every element above (p-1)/2 = %g; "
                          "element %lld is %g", p->a, (p->a - 1) / 2, (long long)i, x);
    }
  if (p->kind == RLX_UNARY_FREXP_EXPONENT) {
    int32_t *y = out[0].data;
    for (int64_t i = 0; i < N; i++) y[i] = (int32_t)rlx_unary_apply(p, rlx_load_f64(in[0].data, t, i), false);
  } else if (is_predicate(p->kind)) {
    uint8_t *y = out[0].data;
    for (int64_t i = 0; i < N; i++) y[i] = unary_pred(p->kind, rlx_load_f64(in[0].data, t, i));
  } else if (t == RLX_DTYPE_F32) {
    const float *x = in[0].data;
    float *y = out[0].data;
    for (int64_t i = 0; i < N; i++) y[i] = (float)rlx_unary_apply(p, x[i], false);
  } else if (rlx_dtype_is_float(t)) {
    for (int64_t i = 0; i < N; i++)
      rlx_store_f64(out[0].data, t, i,
                    rlx_unary_apply(p, rlx_load_f64(in[0].data, t, i), t == RLX_DTYPE_F64));
  } else if (t == RLX_DTYPE_U64) {
    const uint64_t *x = in[0].data;
    uint64_t *y = out[0].data;
    for (int64_t i = 0; i < N; i++) y[i] = unary_u64(p, x[i]);
  } else {
    for (int64_t i = 0; i < N; i++)
      rlx_store_i64(out[0].data, t, i, unary_i(p, rlx_load_i64(in[0].data, t, i), t));
  }
  return RLX_OK;
}

static void unary_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_unary_params *p = &n->p.unary;
  rlx_bprintf(buf, cap, "%s", rlx_unary_names[p->kind]);
  switch (p->kind) {
    case RLX_UNARY_LEAKY_RELU: case RLX_UNARY_CELU: case RLX_UNARY_POW_SCALAR:
    case RLX_UNARY_RPOW_SCALAR: case RLX_UNARY_ROUND_DECIMALS: case RLX_UNARY_POLYGAMMA:
    case RLX_UNARY_MVLGAMMA:
      rlx_bprintf(buf, cap, " a=%g", p->a);
      break;
    case RLX_UNARY_HARDTANH: case RLX_UNARY_SOFTPLUS: case RLX_UNARY_CLAMP:
      rlx_bprintf(buf, cap, " a=%g b=%g", p->a, p->b);
      break;
    case RLX_UNARY_ELU: case RLX_UNARY_NAN_TO_NUM:
      rlx_bprintf(buf, cap, " a=%g b=%g c=%g", p->a, p->b, p->c);
      break;
    default: break;
  }
}

const rlx_op_vtable rlx_op_unary = {
    .infer = unary_infer, .ref = unary_ref, .print = unary_print, .symbolic = true};
