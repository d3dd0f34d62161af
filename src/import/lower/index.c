/*
 * index.c — lowering of embedding, index_select and index.Tensor (advanced
 * indexing with several index tensors and None gaps).
 */
#include "import/lower/lower.h"

static rlx_status need_int_index(rlx_lower *lw, int32_t v) {
  rlx_dtype t = lw_val(lw, v)->dtype;
  if (t == RLX_DTYPE_BOOL || !rlx_dtype_is_int(t))
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s index tensors%s", rlx_dtype_name(t),
                   t == RLX_DTYPE_BOOL ? " (boolean mask indexing has a data-dependent shape)" : "");
  return RLX_OK;
}

static int32_t emit_gather(rlx_lower *lw, int32_t x, int32_t idx, int axis, bool wrap) {
  rlx_params p = {.gather = {.axis = axis, .wrap_negative = wrap}};
  int32_t in[2] = {x, idx};
  return lw_emit(lw, RLX_OP_GATHER, &p, in, 2);
}

/* embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse) */
rlx_status rlx_lower_embedding(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t w, idx;
  rlx_status st = lw_tensor(lw, n, 0, "weight", &w);
  if (!st) st = lw_tensor(lw, n, 1, "indices", &idx);
  if (!st) st = need_int_index(lw, idx);
  if (st) return st;
  return lw_bind(lw, n, emit_gather(lw, w, idx, 0, false));
}

rlx_status rlx_lower_index_select(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, idx;
  int64_t dim;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "dim", 0, &dim);
  if (!st) st = lw_tensor(lw, n, 2, "index", &idx);
  if (!st) st = need_int_index(lw, idx);
  if (st) return st;
  int a;
  if ((st = lw_axis(dim, lw_val(lw, x)->shape.rank, "argument 'dim'", &a))) return st;
  rlx_shape one = {.rank = 1, .dims = {1}}, scalar = {.rank = 0};
  if (lw_val(lw, x)->shape.rank == 0) { /* a 0-d input: its one element, by an index holding one value */
    const rlx_shape *is = &lw_val(lw, idx)->shape;
    if (rlx_shape_is_symbolic(is) || rlx_shape_numel(is) != 1) /* torch: "Index to scalar can have only 1 value" */
      return lw_fail(RLX_ERR_SHAPE, "index_select of a 0-d tensor needs an index of one value");
    int32_t y = emit_gather(lw, lw_reshape(lw, x, &one), lw_reshape(lw, idx, &one), 0, false);
    return lw_bind(lw, n, y < 0 ? -1 : lw_reshape(lw, y, &scalar));
  }
  if (lw_val(lw, idx)->shape.rank == 0) idx = lw_reshape(lw, idx, &one); /* a 0-d index keeps the axis, with length 1 */
  return lw_bind(lw, n, emit_gather(lw, x, idx, a, false));
}

/* index.Tensor(x, [idx or None, ...]) */
rlx_status rlx_lower_index(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, list[RLX_MAX_RANK], in[RLX_MAX_RANK + 1];
  int cnt;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_tensor_list(lw, n, 1, "indices", list, RLX_MAX_RANK, &cnt);
  if (st) return st;
  int rank = lw_val(lw, x)->shape.rank;
  if (cnt > rank) return lw_fail(RLX_ERR_SHAPE, "%d indices for a rank-%d tensor", cnt, rank);
  uint32_t mask = 0;
  int k = 0, last = -1;
  in[k++] = x;
  for (int i = 0; i < cnt; i++) {
    if (list[i] < 0) continue;
    if ((st = need_int_index(lw, list[i]))) return st;
    mask |= 1u << i;
    in[k++] = list[i];
    last = i;
  }
  if (k == 1) return lw_bind(lw, n, x); /* x[None, ...] selects everything */
  if (k == 2) return lw_bind(lw, n, emit_gather(lw, x, in[1], last, true));
  rlx_params p = {.index = {.indexed = mask}};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_INDEX, &p, in, k));
}
