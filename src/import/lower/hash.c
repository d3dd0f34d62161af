/*
 * hash.c — lowering of aten.hash_tensor(self, dim=[], *, keepdim=False,
 * mode=0): torch's xor reduction (the only mode torch has) over the axes in
 * dim, all of them when dim is empty, onto reduce(hash_xor), whose output is
 * u64 (src/ops/reduce.c says how each element becomes 64 bits).
 */
#include "import/lower/lower.h"

rlx_status rlx_lower_hash_tensor(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t mode, dims[RLX_MAX_RANK];
  int cnt;
  bool keepdim;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_ints(lw, n, 1, "dim", dims, RLX_MAX_RANK, &cnt);
  if (!st) st = lw_bool(lw, n, -1, "keepdim", false, &keepdim);
  if (!st) st = lw_int(lw, n, -1, "mode", 0, &mode);
  if (st) return st;
  if (mode != 0) /* torch: "hash_tensor only supports mode=0 (xor_reduction)" */
    return lw_fail(RLX_ERR_UNSUPPORTED, "argument 'mode' (%lld): hash_tensor has only mode 0 (xor reduction)",
                   (long long)mode);
  int rank = lw_val(lw, x)->shape.rank;
  uint32_t axes = 0;
  for (int i = 0; i < cnt; i++) {
    int a;
    if ((st = lw_axis(dims[i], rank, "argument 'dim'", &a))) return st;
    if (rank && ((axes >> a) & 1))
      return lw_fail(RLX_ERR_SHAPE, "argument 'dim'[%d] (%lld) names axis %d again", i, (long long)dims[i], a);
    if (rank) axes |= 1u << a;
  }
  if (cnt == 0 && rank) axes = (1u << rank) - 1;
  rlx_params p = {.reduce = {.kind = RLX_REDUCE_HASH_XOR, .axes = axes, .keepdim = keepdim}};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_REDUCE, &p, &x, 1));
}
