/*
 * search.c — lowering of searchsorted (.Tensor, .Scalar; right or side,
 * out_int32, sorter), bucketize (.Tensor, .Scalar: searchsorted with the
 * operands swapped and a 1-D boundaries tensor) and isin (.Tensor_Tensor
 * and .Scalar_Tensor onto the isin op; .Tensor_Scalar is eq or ne, as torch
 * redispatches it). Operands take torch's common dtype first.
 */
#include "import/lower/lower.h"

/* The common dtype of tensor `t` and operand `a` (a tensor or a Python
 * scalar, which becomes a 0-d constant); both converted to it. */
static rlx_status promote_pair(rlx_lower *lw, int32_t *t, const rlx_arg *a, int32_t *av, const char *what) {
  lw_operand ops[2] = {{.is_tensor = true, .dtype = lw_val(lw, *t)->dtype, .rank = lw_val(lw, *t)->shape.rank}};
  rlx_status st = lw_operand_of(lw, a, &ops[1], av);
  if (st) return st;
  rlx_dtype ct = lw_result_type(ops, 2);
  *t = lw_cast(lw, *t, ct);
  *av = *av >= 0 ? lw_cast(lw, *av, ct) : lw_scalar_arg(lw, a, ct, what);
  return *t < 0 || *av < 0 ? rlx_last_status() : RLX_OK;
}

static rlx_status emit_search(rlx_lower *lw, const rlx_aten_node *n, int32_t seq, int32_t vals, int32_t sorter) {
  rlx_params p = {.searchsorted = {0}};
  rlx_status st = lw_bool(lw, n, -1, "out_int32", false, &p.searchsorted.out_int32);
  if (!st) st = lw_bool(lw, n, -1, "right", false, &p.searchsorted.right);
  if (st) return st;
  const rlx_arg *side = lw_arg(n, -1, "side");
  if (side && side->kind != RLX_ARG_NONE) {
    if (side->kind != RLX_ARG_STR || (strcmp(side->u.s, "left") && strcmp(side->u.s, "right")))
      return lw_fail(RLX_ERR_UNSUPPORTED, "argument 'side' must be 'left' or 'right'");
    bool right = !strcmp(side->u.s, "right");
    if (p.searchsorted.right && !right) /* torch: "side and right can't be set to opposites" */
      return lw_fail(RLX_ERR_UNSUPPORTED, "side='left' contradicts right=True");
    p.searchsorted.right = right;
  }
  int32_t in[3] = {seq, vals, sorter};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_SEARCHSORTED, &p, in, sorter >= 0 ? 3 : 2));
}

/* searchsorted(sorted_sequence, self, *, out_int32, right, side, sorter) */
rlx_status rlx_lower_searchsorted(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t seq, vals, sorter;
  rlx_status st = lw_tensor(lw, n, 0, "sorted_sequence", &seq);
  if (!st) st = lw_opt_tensor(lw, n, -1, "sorter", &sorter);
  if (!st) st = promote_pair(lw, &seq, lw_arg(n, 1, "self"), &vals, "argument 'self'");
  return st ? st : emit_search(lw, n, seq, vals, sorter);
}

/* bucketize(self, boundaries, *, out_int32, right) */
rlx_status rlx_lower_bucketize(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t bounds, vals;
  rlx_status st = lw_tensor(lw, n, 1, "boundaries", &bounds);
  if (st) return st;
  if (lw_val(lw, bounds)->shape.rank != 1) /* torch: "boundaries tensor must be 1 dimension" */
    return lw_fail(RLX_ERR_SHAPE, "argument 'boundaries' must be 1-D, got rank %d", lw_val(lw, bounds)->shape.rank);
  if ((st = promote_pair(lw, &bounds, lw_arg(n, 0, "self"), &vals, "argument 'self'"))) return st;
  return emit_search(lw, n, bounds, vals, -1);
}

/* isin(elements, test_elements, *, assume_unique, invert) and its scalar forms. */
rlx_status rlx_lower_isin(rlx_lower *lw, const rlx_aten_node *n) {
  rlx_params p = {.isin = {0}};
  rlx_status st = lw_bool(lw, n, -1, "assume_unique", false, &p.isin.assume_unique);
  if (!st) st = lw_bool(lw, n, -1, "invert", false, &p.isin.invert);
  if (st) return st;
  const char *ov = lw_overload(n);
  int32_t x, t;
  if (!strcmp(ov, "Scalar_Tensor")) { /* the element is a 0-d tensor of the common type */
    if ((st = lw_tensor(lw, n, 1, "test_elements", &t)) ||
        (st = promote_pair(lw, &t, lw_arg(n, 0, "element"), &x, "argument 'element'")))
      return st;
  } else {
    if ((st = lw_tensor(lw, n, 0, "elements", &x))) return st;
    bool scalar = !strcmp(ov, "Tensor_Scalar");
    if ((st = promote_pair(lw, &x, lw_arg(n, 1, scalar ? "test_element" : "test_elements"), &t,
                           scalar ? "argument 'test_element'" : "argument 'test_elements'")))
      return st;
    if (scalar) {
      if (lw_val(lw, x)->dtype == RLX_DTYPE_BOOL)
        return lw_fail(RLX_ERR_UNSUPPORTED, "isin of bool tensors (torch refuses it)");
      return lw_bind(lw, n, lw_binary(lw, p.isin.invert ? RLX_BINARY_NE : RLX_BINARY_EQ, x, t));
    }
  }
  int32_t in[2] = {x, t};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_ISIN, &p, in, 2));
}
