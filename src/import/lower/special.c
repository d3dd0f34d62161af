/*
 * special.c — lowering of the special functions that are not a plain
 * self -> unary mapping (elementwise.c has those): polygamma(n, self) with
 * its order as the unary's parameter, mvlgamma(self, p), and frexp, whose
 * two outputs (mantissa in self's dtype, exponent in int32) are two unary
 * nodes. Argument checks and their messages are torch's.
 */
#include "import/lower/lower.h"

/* Orders up to here are exact as a double parameter. */
#define MAX_POLYGAMMA_N 9007199254740992LL /* 2^53 */
/* mvlgamma sums p lgamma terms per element; rlx bounds the work a file can ask for. */
#define MAX_MVLGAMMA_P (1LL << 20)

/* The unary `kind` with parameter a of tensor argument (pos, name), computed
 * in the recorded output dtype (torch promotes integer inputs to float). */
static rlx_status emit_param_unary(rlx_lower *lw, const rlx_aten_node *n, rlx_unary_kind kind, double a, int pos,
                                   const char *name) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, pos, name, &x);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  x = lw_cast(lw, x, t ? t->dtype : lw_val(lw, x)->dtype);
  rlx_params p = {.unary = {.kind = kind, .a = a}};
  return lw_bind(lw, n, x < 0 ? -1 : lw_emit(lw, RLX_OP_UNARY, &p, &x, 1));
}

/* polygamma(n, self), special_polygamma(n, self) */
rlx_status rlx_lower_polygamma(rlx_lower *lw, const rlx_aten_node *n) {
  int64_t order;
  rlx_status st = lw_int(lw, n, 0, "n", 0, &order);
  if (st) return st;
  if (order < 0) return lw_fail(RLX_ERR_UNSUPPORTED, "polygamma(n, x) does not support negative n (n = %lld)",
                                (long long)order);
  if (order > MAX_POLYGAMMA_N)
    return lw_fail(RLX_ERR_UNSUPPORTED, "polygamma order n = %lld: rlx takes n up to 2^53", (long long)order);
  return emit_param_unary(lw, n, RLX_UNARY_POLYGAMMA, (double)order, 1, "self");
}

/* mvlgamma(self, p), special_multigammaln(self, p); the elements' domain
 * (all above (p - 1) / 2) is checked by the kernel, at run time as torch */
rlx_status rlx_lower_mvlgamma(rlx_lower *lw, const rlx_aten_node *n) {
  int64_t p;
  rlx_status st = lw_int(lw, n, 1, "p", 1, &p);
  if (st) return st;
  if (p < 1) return lw_fail(RLX_ERR_UNSUPPORTED, "p has to be greater than or equal to 1 (p = %lld)", (long long)p);
  if (p > MAX_MVLGAMMA_P)
    return lw_fail(RLX_ERR_UNSUPPORTED, "mvlgamma of order p = %lld: rlx takes p up to 2^20", (long long)p);
  return emit_param_unary(lw, n, RLX_UNARY_MVLGAMMA, (double)p, 0, "self");
}

/* frexp(self) -> (mantissa, exponent): each output that is used becomes a
 * unary node over self, as max.dim's values and indices are two nodes. */
rlx_status rlx_lower_frexp(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  rlx_dtype t = lw_val(lw, x)->dtype;
  if (!rlx_dtype_is_float(t))
    return lw_fail(RLX_ERR_UNSUPPORTED, "torch.frexp() only supports floating-point dtypes (got %s)",
                   rlx_dtype_name(t));
  static const rlx_unary_kind kinds[2] = {RLX_UNARY_FREXP_MANTISSA, RLX_UNARY_FREXP_EXPONENT};
  int32_t outs[2] = {-1, -1};
  for (int k = 0; k < 2; k++) {
    if (!lw_out_used(lw, n, k)) continue;
    rlx_params p = {.unary = {.kind = kinds[k]}};
    if ((outs[k] = lw_emit(lw, RLX_OP_UNARY, &p, &x, 1)) < 0) return rlx_last_status();
  }
  return lw_bind_multi(lw, n, outs, 2);
}

/* ---- orthogonal polynomials (issue 11) ---- */

typedef struct poly_map {
  const char *aten;
  rlx_binary_kind kind;
} poly_map;

static const poly_map polys[] = {
    {"special_chebyshev_polynomial_t", RLX_BINARY_CHEBYSHEV_T},
    {"special_chebyshev_polynomial_u", RLX_BINARY_CHEBYSHEV_U},
    {"special_chebyshev_polynomial_v", RLX_BINARY_CHEBYSHEV_V},
    {"special_chebyshev_polynomial_w", RLX_BINARY_CHEBYSHEV_W},
    {"special_shifted_chebyshev_polynomial_t", RLX_BINARY_SHIFTED_CHEBYSHEV_T},
    {"special_shifted_chebyshev_polynomial_u", RLX_BINARY_SHIFTED_CHEBYSHEV_U},
    {"special_shifted_chebyshev_polynomial_v", RLX_BINARY_SHIFTED_CHEBYSHEV_V},
    {"special_shifted_chebyshev_polynomial_w", RLX_BINARY_SHIFTED_CHEBYSHEV_W},
    {"special_hermite_polynomial_h", RLX_BINARY_HERMITE_H},
    {"special_hermite_polynomial_he", RLX_BINARY_HERMITE_HE},
    {"special_laguerre_polynomial_l", RLX_BINARY_LAGUERRE_L},
    {"special_legendre_polynomial_p", RLX_BINARY_LEGENDRE_P},
};

/* special_<poly>(x, n) and its x_scalar / n_scalar overloads: torch promotes
 * x and n to one float dtype (integers and bools to float32) and truncates n
 * there, so n is cast to that dtype too; its CPU kernels exist for float32
 * and float64 only. */
rlx_status rlx_lower_orthopoly(rlx_lower *lw, const rlx_aten_node *n) {
  const poly_map *m = NULL;
  for (size_t i = 0; i < RLX_COUNTOF(polys) && !m; i++)
    if (lw_is(n, polys[i].aten)) m = &polys[i];
  if (!m) return lw_fail(RLX_ERR_INTERNAL, "no polynomial mapping");
  const rlx_arg *args[2] = {lw_arg(n, 0, "x"), lw_arg(n, 1, "n")};
  static const char *const what[2] = {"argument 'x'", "argument 'n'"};
  lw_operand ops[2];
  int32_t v[2];
  for (int k = 0; k < 2; k++) {
    if (!args[k]) return lw_fail(RLX_ERR_INVALID_ARGUMENT, "%s: %s is missing", n->op, what[k]);
    rlx_status st = lw_operand_of(lw, args[k], &ops[k], &v[k]);
    if (st) return st;
  }
  if (!ops[0].is_tensor && !ops[1].is_tensor)
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s: x or n must be a tensor", n->op);
  rlx_dtype ct = lw_result_type(ops, 2);
  if (!rlx_dtype_is_float(ct)) ct = RLX_DTYPE_F32;
  if (ct != RLX_DTYPE_F32 && ct != RLX_DTYPE_F64)
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s is not implemented for %s (torch's CPU kernel takes float32 and "
                   "float64)", rlx_binary_names[m->kind], rlx_dtype_name(ct));
  for (int k = 0; k < 2; k++) {
    v[k] = v[k] >= 0 ? lw_cast(lw, v[k], ct) : lw_scalar_arg(lw, args[k], ct, what[k]);
    if (v[k] < 0) return rlx_last_status();
  }
  return lw_bind(lw, n, lw_binary(lw, m->kind, v[0], v[1]));
}
