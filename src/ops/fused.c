/*
 * fused.c — an elementwise chain as one op (rlx_fused_params): validation,
 * shape inference, and the reference kernel. The reference computes each
 * step as the reference kernel of the node it replaces does (in double,
 * rounded to f32), so a fused graph's reference run is bit-identical to the
 * unfused one's. The fast kernel is cpu/fused.c.
 */
#include "ops/ops_util.h"
#include "ops/special.h"

/* Not: the kinds whose output is not the input's dtype, and mvlgamma, whose
 * kernel refuses out-of-domain elements (a fused step cannot fail). */
static bool fusable_unary(rlx_unary_kind k) {
  return (unsigned)k < RLX_UNARY_COUNT && k != RLX_UNARY_LOGICAL_NOT && k != RLX_UNARY_BITWISE_NOT &&
         k != RLX_UNARY_ISNAN && k != RLX_UNARY_ISINF && k != RLX_UNARY_ISPOSINF && k != RLX_UNARY_ISNEGINF &&
         k != RLX_UNARY_ISFINITE && k != RLX_UNARY_FREXP_EXPONENT && k != RLX_UNARY_MVLGAMMA;
}

/* Not: predicates, bitwise kinds, and the orthogonal polynomials, whose
 * kernel refuses an element past its step bound (ops/special_poly.c). */
static bool fusable_binary(rlx_binary_kind k) {
  return (unsigned)k < RLX_BINARY_COUNT && !rlx_binary_is_predicate(k) && k != RLX_BINARY_BITAND &&
         k != RLX_BINARY_BITOR && k != RLX_BINARY_BITXOR && k != RLX_BINARY_SHL && k != RLX_BINARY_SHR &&
         !rlx_binary_is_poly(k);
}

bool rlx_fused_takes(const rlx_node *n) {
  if (n->op == RLX_OP_UNARY) return fusable_unary(n->p.unary.kind);
  if (n->op == RLX_OP_BINARY) return fusable_binary(n->p.binary.kind);
  return false;
}

static rlx_status fused_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_fused_params *p = &n->p.fused;
  if (p->n_steps < 1 || p->n_steps > RLX_FUSED_MAX_STEPS || !p->steps)
    RLX_INFER_FAIL("fused: %d steps (1 to %d)", (int)p->n_steps, RLX_FUSED_MAX_STEPS);
  if (n->n_in > RLX_FUSED_MAX_IN) RLX_INFER_FAIL("fused: %d inputs (at most %d)", (int)n->n_in, RLX_FUSED_MAX_IN);
  for (int k = 0; k < n->n_in; k++) {
    const rlx_value *v = rlx_in(g, n, k);
    if (!v) RLX_INFER_FAIL("fused: input %d is absent", k);
    if (v->dtype != RLX_DTYPE_F32) RLX_INFER_FAIL("fused: input %d is %s (f32 only)", k, rlx_dtype_name(v->dtype));
  }
  rlx_shape sh[RLX_FUSED_MAX_STEPS];
  for (int s = 0; s < p->n_steps; s++) {
    const rlx_fused_step *t = &p->steps[s];
    int arity = t->op == RLX_OP_UNARY ? 1 : 2;
    if (t->op == RLX_OP_UNARY ? !fusable_unary(t->p.unary.kind)
                              : t->op != RLX_OP_BINARY || !fusable_binary(t->p.binary.kind))
      RLX_INFER_FAIL("fused: step %d is not a float unary or arithmetic binary op", s);
    const rlx_shape *in[2];
    for (int a = 0; a < arity; a++) {
      int k = t->src[a];
      if (k >= n->n_in || k < -s) RLX_INFER_FAIL("fused: step %d operand %d names %d (inputs 0..%d, steps before it)", s, a, k, (int)n->n_in - 1);
      in[a] = k >= 0 ? &rlx_in(g, n, k)->shape : &sh[-k - 1];
    }
    if (arity == 1) sh[s] = *in[0];
    else if (rlx_broadcast(in[0], in[1], &sh[s])) return RLX_ERR_SHAPE;
  }
  os[0] = sh[p->n_steps - 1];
  od[0] = RLX_DTYPE_F32;
  return RLX_OK;
}

static rlx_status fused_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, void *scratch) {
  (void)scratch;
  const rlx_fused_params *p = &n->p.fused;
  rlx_shape os = rlx_view_shape(&out[0]);
  int64_t st[RLX_FUSED_MAX_IN][RLX_MAX_RANK];
  for (int k = 0; k < n->n_in; k++) {
    rlx_shape is = rlx_view_shape(&in[k]);
    rlx_broadcast_strides(&is, &os, st[k]);
  }
  int64_t N = rlx_shape_numel(&os);
  float *y = out[0].data;
  double x[RLX_FUSED_MAX_IN] = {0}, r[RLX_FUSED_MAX_STEPS] = {0};
  for (int64_t i = 0; i < N; i++) {
    for (int k = 0; k < n->n_in; k++) x[k] = ((const float *)in[k].data)[rlx_strided_offset(&os, st[k], i)];
    for (int s = 0; s < p->n_steps; s++) {
      const rlx_fused_step *t = &p->steps[s];
      double a = t->src[0] >= 0 ? x[t->src[0]] : r[-t->src[0] - 1];
      if (t->op == RLX_OP_UNARY) {
        r[s] = (float)rlx_unary_apply(&t->p.unary, a, false);
      } else {
        double b = t->src[1] >= 0 ? x[t->src[1]] : r[-t->src[1] - 1];
        r[s] = (float)rlx_binary_apply(t->p.binary.kind, a, b, false);
      }
    }
    y[i] = (float)r[p->n_steps - 1];
  }
  return RLX_OK;
}

/* "add(i0,i1) clamp(s0) mul(i0,s1)": each step with its operands. */
static void fused_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_fused_params *p = &n->p.fused;
  buf[0] = 0;
  for (int s = 0; s < p->n_steps; s++) {
    const rlx_fused_step *t = &p->steps[s];
    bool un = t->op == RLX_OP_UNARY;
    rlx_bprintf(buf, cap, "%s%s(", s ? " " : "", un ? rlx_unary_names[t->p.unary.kind] : rlx_binary_names[t->p.binary.kind]);
    for (int a = 0; a < (un ? 1 : 2); a++) {
      int k = t->src[a];
      rlx_bprintf(buf, cap, "%s%c%d", a ? "," : "", k >= 0 ? 'i' : 's', k >= 0 ? k : -k - 1);
    }
    rlx_bprintf(buf, cap, ")");
  }
}

const rlx_op_vtable rlx_op_fused = {.infer = fused_infer, .ref = fused_ref, .print = fused_print, .symbolic = true};
