/*
 * binary.c — binary elementwise op with NumPy broadcasting: validation,
 * shape inference, reference kernel.
 *
 * Both inputs carry the compute dtype (the lowering applies torch's type
 * promotion and inserts casts). Float compute is in double, rounded once to
 * the output (below f64, trunc division rounds its quotient to float before
 * truncating, as torch computes it; nextafter steps in the dtype itself);
 * integer compute is exact in int64 and wraps to the dtype's width as torch
 * does (gcd and lcm also where torch's own arithmetic wraps); u64 compares,
 * divides and shifts right as unsigned (binary_u64). Integer
 * division or remainder by zero is an error, as in torch ("ZeroDivisionError").
 */
#include <math.h>

#include "ops/ops_util.h"
#include "ops/special.h"

static bool float_only(rlx_binary_kind k) {
  switch (k) {
    case RLX_BINARY_DIV: case RLX_BINARY_ATAN2: case RLX_BINARY_HYPOT: case RLX_BINARY_COPYSIGN:
    case RLX_BINARY_XLOGY: case RLX_BINARY_XLOG1PY: case RLX_BINARY_ZETA: case RLX_BINARY_IGAMMA:
    case RLX_BINARY_IGAMMAC: case RLX_BINARY_NEXTAFTER:
      return true;
    default:
      return false;
  }
}

static rlx_status binary_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os,
                               rlx_dtype *od) {
  const rlx_value *a = rlx_in(g, n, 0), *b = rlx_in(g, n, 1);
  rlx_binary_kind k = n->p.binary.kind;
  if ((unsigned)k >= RLX_BINARY_COUNT) RLX_INFER_FAIL("invalid binary kind %d", (int)k);
  if (a->dtype != b->dtype)
    RLX_INFER_FAIL("binary %s inputs have dtypes %s and %s (the lowering must cast)",
                   rlx_binary_names[k], rlx_dtype_name(a->dtype), rlx_dtype_name(b->dtype));
  bool fl = rlx_dtype_is_float(a->dtype);
  if (fl && (k == RLX_BINARY_BITAND || k == RLX_BINARY_BITOR || k == RLX_BINARY_BITXOR ||
             k == RLX_BINARY_SHL || k == RLX_BINARY_SHR))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s needs integer inputs, got %s", rlx_binary_names[k],
                      rlx_dtype_name(a->dtype));
  if (!fl && float_only(k))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s needs float inputs, got %s", rlx_binary_names[k],
                      rlx_dtype_name(a->dtype));
  if ((fl || a->dtype == RLX_DTYPE_BOOL) && (k == RLX_BINARY_GCD || k == RLX_BINARY_LCM))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s needs integer inputs, got %s", rlx_binary_names[k],
                      rlx_dtype_name(a->dtype));
  if (rlx_broadcast(&a->shape, &b->shape, &os[0])) return RLX_ERR_SHAPE;
  od[0] = rlx_binary_is_predicate(k) ? RLX_DTYPE_BOOL : a->dtype;
  return RLX_OK;
}

/* torch's floor division for floats (c10 div_floor_floating). */
static double div_floor_f(double a, double b) {
  if (b == 0) return a / b;
  double mod = fmod(a, b), div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1.0;
  double fl;
  if (div != 0) {
    fl = floor(div);
    if (div - fl > 0.5) fl += 1.0;
  } else {
    fl = copysign(0.0, a / b);
  }
  return fl;
}

/* `f64`: the inputs are f64; below it the quotient that trunc division
 * truncates is rounded to float first, as torch computes it in float (the
 * rounding can reach the next integer: 1 / 0.1f is 10, not 9.99999985). */
double rlx_binary_apply(rlx_binary_kind k, double a, double b, bool f64) {
  switch (k) {
    case RLX_BINARY_ADD: return a + b;
    case RLX_BINARY_SUB: return a - b;
    case RLX_BINARY_MUL: return a * b;
    case RLX_BINARY_DIV: return a / b;
    case RLX_BINARY_DIV_FLOOR: return div_floor_f(a, b);
    case RLX_BINARY_DIV_TRUNC: return trunc(f64 ? a / b : (double)(float)(a / b));
    case RLX_BINARY_POW: return pow(a, b);
    case RLX_BINARY_MAXIMUM: return (a != a || b != b) ? NAN : fmax(a, b);
    case RLX_BINARY_MINIMUM: return (a != a || b != b) ? NAN : fmin(a, b);
    case RLX_BINARY_FMAX: return fmax(a, b);
    case RLX_BINARY_FMIN: return fmin(a, b);
    case RLX_BINARY_REMAINDER: {
      double m = fmod(a, b);
      if (m != 0 && (b < 0) != (m < 0)) m += b;
      return m;
    }
    case RLX_BINARY_FMOD: return fmod(a, b);
    case RLX_BINARY_ATAN2: return atan2(a, b);
    case RLX_BINARY_HYPOT: return hypot(a, b);
    case RLX_BINARY_COPYSIGN: return copysign(a, b);
    case RLX_BINARY_XLOGY: return b != b ? NAN : a == 0 ? 0.0 : a * log(b); /* torch: 0 log(y) = 0 unless y is NaN */
    case RLX_BINARY_XLOG1PY: return b != b ? NAN : a == 0 ? 0.0 : a * log1p(b);
    case RLX_BINARY_ZETA: return rlx_special_zeta(a, b);
    case RLX_BINARY_IGAMMA: return rlx_special_igamma(a, b);
    case RLX_BINARY_IGAMMAC: return rlx_special_igammac(a, b);
    case RLX_BINARY_NEXTAFTER: /* the neighbour in the input's format, exactly; f16/bf16: next16 */
      return f64 ? nextafter(a, b) : (double)nextafterf((float)a, (float)b);
    default: return NAN;
  }
}

/* nextafter in a 16-bit format (f16, bf16) on its bit patterns f and to,
 * whose values are fv and tv (not NaN): as C's nextafter, `to` when the two
 * are equal (+0 toward -0 is -0), the smallest subnormal with to's sign from
 * a zero, else one step of the magnitude (inf steps down to the largest
 * finite, the largest finite up to inf). */
static uint16_t next16(uint16_t f, uint16_t to, double fv, double tv) {
  if (fv == tv) return to;
  if (fv == 0) return (uint16_t)((to & 0x8000u) | 1u);
  return (fv < tv) == (fv > 0) ? (uint16_t)(f + 1) : (uint16_t)(f - 1);
}

/* v as a two's complement integer of `bits` (< 64) width. */
static int64_t wrap_bits(int64_t v, int bits) {
  int64_t m = (int64_t)1 << bits, u = (int64_t)((uint64_t)v & (uint64_t)(m - 1));
  return u >= m / 2 ? u - m : u;
}

/* |v| as torch's std::abs computes it at C's width for the dtype (int for
 * 8- and 16-bit types, else the type's own): the most negative value stays. */
static int64_t abs_at(int64_t v, int width) {
  int64_t r = v < 0 ? (int64_t)(0 - (uint64_t)v) : v;
  return width < 64 ? wrap_bits(r, width) : r;
}

/* torch's gcd and lcm (calc_gcd; lcm = |a / g * b|) for a dtype of `bits`,
 * including where its arithmetic wraps: gcd(-128, 0) is -128 in int8, lcm
 * wraps the product (uint8 never does: its values are their own |v|). */
static int64_t gcd_lcm(rlx_binary_kind k, int64_t a, int64_t b, int bits, bool is_signed) {
  int width = bits < 32 ? 32 : bits; /* C's arithmetic width for the dtype */
  int64_t x = abs_at(a, width), y = abs_at(b, width);
  if (is_signed && bits < width) x = wrap_bits(x, bits), y = wrap_bits(y, bits); /* stored back to the dtype */
  while (x != 0) {
    int64_t c = x;
    x = x == -1 ? 0 : y % x;
    y = c;
  }
  if (k == RLX_BINARY_GCD) return y;
  if (y == 0) return 0;
  int64_t q = y == -1 ? (int64_t)(0 - (uint64_t)a) : a / y;
  int64_t v = (int64_t)((uint64_t)q * (uint64_t)b);
  if (width < 64) v = wrap_bits(v, width);
  return abs_at(v, width);
}

static bool pred_f(rlx_binary_kind k, double a, double b) {
  switch (k) {
    case RLX_BINARY_LOGICAL_AND: return a != 0 && b != 0;
    case RLX_BINARY_LOGICAL_OR: return a != 0 || b != 0;
    case RLX_BINARY_LOGICAL_XOR: return (a != 0) != (b != 0);
    case RLX_BINARY_EQ: return a == b;
    case RLX_BINARY_NE: return a != b;
    case RLX_BINARY_LT: return a < b;
    case RLX_BINARY_LE: return a <= b;
    case RLX_BINARY_GT: return a > b;
    default: return a >= b; /* GE */
  }
}

static bool pred_i(rlx_binary_kind k, int64_t a, int64_t b) {
  switch (k) {
    case RLX_BINARY_LOGICAL_AND: return a && b;
    case RLX_BINARY_LOGICAL_OR: return a || b;
    case RLX_BINARY_LOGICAL_XOR: return !a != !b;
    case RLX_BINARY_EQ: return a == b;
    case RLX_BINARY_NE: return a != b;
    case RLX_BINARY_LT: return a < b;
    case RLX_BINARY_LE: return a <= b;
    case RLX_BINARY_GT: return a > b;
    default: return a >= b;
  }
}

static int64_t ipow(int64_t b, int64_t e) {
  if (e < 0) return b == 1 ? 1 : b == -1 ? ((e & 1) ? -1 : 1) : 0;
  uint64_t base = (uint64_t)b, acc = 1;
  for (; e; e >>= 1, base *= base)
    if (e & 1) acc *= base;
  return (int64_t)acc;
}

/* Integer kinds. `bits` is the dtype's width (shifts); *err set on x/0. */
static int64_t binary_i(rlx_binary_kind k, int64_t a, int64_t b, int bits, bool *err) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (k) {
    case RLX_BINARY_ADD: return (int64_t)(ua + ub);
    case RLX_BINARY_SUB: return (int64_t)(ua - ub);
    case RLX_BINARY_MUL: return (int64_t)(ua * ub);
    case RLX_BINARY_DIV_TRUNC: case RLX_BINARY_DIV_FLOOR: case RLX_BINARY_REMAINDER:
    case RLX_BINARY_FMOD: {
      if (b == 0) {
        *err = true;
        return 0;
      }
      if (b == -1) return (k == RLX_BINARY_DIV_TRUNC || k == RLX_BINARY_DIV_FLOOR)
                              ? (int64_t)(0 - ua) : 0;
      int64_t q = a / b, r = a % b;
      if (k == RLX_BINARY_DIV_TRUNC) return q;
      if (k == RLX_BINARY_FMOD) return r;
      bool adjust = r != 0 && ((r < 0) != (b < 0));
      if (k == RLX_BINARY_DIV_FLOOR) return adjust ? q - 1 : q;
      return adjust ? r + b : r;
    }
    case RLX_BINARY_POW: return ipow(a, b);
    case RLX_BINARY_MAXIMUM: case RLX_BINARY_FMAX: return a > b ? a : b;
    case RLX_BINARY_MINIMUM: case RLX_BINARY_FMIN: return a < b ? a : b;
    case RLX_BINARY_BITAND: return a & b;
    case RLX_BINARY_BITOR: return a | b;
    case RLX_BINARY_BITXOR: return a ^ b;
    case RLX_BINARY_SHL: return (b < 0 || b >= bits) ? 0 : (int64_t)(ua << b);
    case RLX_BINARY_SHR: return (b < 0 || b >= bits) ? (a < 0 ? -1 : 0) : a >> b;
    default: return 0;
  }
}

/* u64 kinds whose answer depends on the sign (order, division, right
 * shift), on the values as unsigned; the rest (add, sub, mul, bitwise, left
 * shift) are the same on the bits, so binary_i does them. */
static bool u64_differs(rlx_binary_kind k) {
  switch (k) {
    case RLX_BINARY_DIV_TRUNC: case RLX_BINARY_DIV_FLOOR: case RLX_BINARY_REMAINDER: case RLX_BINARY_FMOD:
    case RLX_BINARY_MAXIMUM: case RLX_BINARY_FMAX: case RLX_BINARY_MINIMUM: case RLX_BINARY_FMIN:
    case RLX_BINARY_SHR: case RLX_BINARY_POW: case RLX_BINARY_LT: case RLX_BINARY_LE: case RLX_BINARY_GT:
    case RLX_BINARY_GE:
      return true;
    default:
      return false;
  }
}

static uint64_t binary_u64(rlx_binary_kind k, uint64_t a, uint64_t b, bool *err) {
  switch (k) {
    case RLX_BINARY_DIV_TRUNC: case RLX_BINARY_DIV_FLOOR: case RLX_BINARY_REMAINDER: case RLX_BINARY_FMOD:
      if (b == 0) {
        *err = true;
        return 0;
      }
      return (k == RLX_BINARY_DIV_TRUNC || k == RLX_BINARY_DIV_FLOOR) ? a / b : a % b;
    case RLX_BINARY_MAXIMUM: case RLX_BINARY_FMAX: return a > b ? a : b;
    case RLX_BINARY_MINIMUM: case RLX_BINARY_FMIN: return a < b ? a : b;
    case RLX_BINARY_SHR: return b >= 64 ? 0 : a >> b;
    case RLX_BINARY_POW: {
      uint64_t acc = 1;
      for (; b; b >>= 1, a *= a)
        if (b & 1) acc *= a;
      return acc;
    }
    case RLX_BINARY_LT: return a < b;
    case RLX_BINARY_LE: return a <= b;
    case RLX_BINARY_GT: return a > b;
    default: return a >= b; /* GE */
  }
}

static rlx_status binary_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                             void *scratch) {
  (void)scratch;
  rlx_binary_kind k = n->p.binary.kind;
  rlx_shape os = rlx_view_shape(&out[0]), as = rlx_view_shape(&in[0]), bs = rlx_view_shape(&in[1]);
  int64_t sa[RLX_MAX_RANK], sb[RLX_MAX_RANK];
  rlx_broadcast_strides(&as, &os, sa);
  rlx_broadcast_strides(&bs, &os, sb);
  int64_t N = rlx_shape_numel(&os);
  rlx_dtype t = in[0].dtype;
  bool pred = rlx_binary_is_predicate(k), same = rlx_shape_eq(&as, &os) && rlx_shape_eq(&bs, &os);
  int bits = (int)rlx_dtype_size(t) * 8;
  bool err = false;

  if (t == RLX_DTYPE_F32 && !pred && same) {
    const float *a = in[0].data, *b = in[1].data;
    float *y = out[0].data;
    for (int64_t i = 0; i < N; i++) y[i] = (float)rlx_binary_apply(k, a[i], b[i], false);
    return RLX_OK;
  }
  for (int64_t i = 0; i < N; i++) {
    int64_t ia = same ? i : rlx_strided_offset(&os, sa, i);
    int64_t ib = same ? i : rlx_strided_offset(&os, sb, i);
    if (k == RLX_BINARY_NEXTAFTER && (t == RLX_DTYPE_F16 || t == RLX_DTYPE_BF16)) {
      double a = rlx_load_f64(in[0].data, t, ia), b = rlx_load_f64(in[1].data, t, ib);
      if (a != a || b != b) rlx_store_f64(out[0].data, t, i, NAN);
      else
        ((uint16_t *)out[0].data)[i] =
            next16(((const uint16_t *)in[0].data)[ia], ((const uint16_t *)in[1].data)[ib], a, b);
    } else if (k == RLX_BINARY_GCD || k == RLX_BINARY_LCM) {
      int64_t a = rlx_load_i64(in[0].data, t, ia), b = rlx_load_i64(in[1].data, t, ib);
      rlx_store_i64(out[0].data, t, i, gcd_lcm(k, a, b, bits, t != RLX_DTYPE_U8));
    } else if (rlx_dtype_is_float(t)) {
      double a = rlx_load_f64(in[0].data, t, ia), b = rlx_load_f64(in[1].data, t, ib);
      if (pred) ((uint8_t *)out[0].data)[i] = pred_f(k, a, b);
      else rlx_store_f64(out[0].data, t, i, rlx_binary_apply(k, a, b, t == RLX_DTYPE_F64));
    } else if (t == RLX_DTYPE_U64 && u64_differs(k)) {
      uint64_t a = rlx_load_u64(in[0].data, t, ia), b = rlx_load_u64(in[1].data, t, ib);
      uint64_t r = binary_u64(k, a, b, &err);
      if (pred) ((uint8_t *)out[0].data)[i] = r != 0;
      else ((uint64_t *)out[0].data)[i] = r;
      if (err)
        return rlx_errorf(RLX_ERR_RUNTIME, "integer %s by zero (element %lld)", rlx_binary_names[k], (long long)i);
    } else {
      int64_t a = rlx_load_i64(in[0].data, t, ia), b = rlx_load_i64(in[1].data, t, ib);
      if (pred) ((uint8_t *)out[0].data)[i] = pred_i(k, a, b);
      else rlx_store_i64(out[0].data, t, i, binary_i(k, a, b, bits, &err));
      if (err)
        return rlx_errorf(RLX_ERR_RUNTIME, "integer %s by zero (element %lld)",
                          rlx_binary_names[k], (long long)i);
    }
  }
  return RLX_OK;
}

static void binary_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "%s", rlx_binary_names[n->p.binary.kind]);
}

const rlx_op_vtable rlx_op_binary = {
    .infer = binary_infer, .ref = binary_ref, .print = binary_print, .symbolic = true};
