/*
 * indices.c — lowerings that produce index tensors (issue 11):
 *
 *   nonzero_static(self, *, size, fill_value=-1)  -> nonzero_static node
 *   tril_indices(row, col, offset=0, *, dtype)    -> a constant [2, N]
 *   triu_indices(row, col, offset=0, *, dtype)    -> a constant [2, N]
 *
 * tril/triu_indices depend only on their int arguments, so the lowering
 * computes them as torch does (row-major over the rows, the columns of row
 * i being those with j <= i + offset, or j >= i + offset) into a constant.
 */
#include "import/lower/lower.h"

rlx_status rlx_lower_nonzero_static(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t size, fill;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, -1, "size", 0, &size);
  if (!st) st = lw_int(lw, n, -1, "fill_value", -1, &fill);
  if (st) return st;
  if (size < 0 || size > RLX_MAX_NUMEL) /* torch: "nonzero_static: 'size' must be an non-negative integer" */
    return lw_fail(RLX_ERR_SHAPE, "argument 'size' (%lld) must lie in [0, 2^48]", (long long)size);
  rlx_params p = {.nonzero_static = {.size = size, .fill = fill}};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_NONZERO_STATIC, &p, &x, 1));
}

/* sum over i in [0, rows) of clamp(a + i, 0, cols), in closed form (rows,
 * cols <= 2^31 and |a| <= 2^32: the terms fit __int128 comfortably). */
static __int128 sum_clamped(int64_t rows, int64_t a, int64_t cols) {
  if (cols == 0 || rows == 0) return 0;
  int64_t i1 = RLX_MIN(RLX_MAX(1 - a, 0), rows), i2 = RLX_MIN(RLX_MAX(cols - a, 0), rows); /* i1 <= i2 */
  __int128 ramp = (__int128)(i2 - i1) * a + (__int128)(i1 + i2 - 1) * (i2 - i1) / 2;
  return ramp + (__int128)cols * (rows - i2);
}

/* The number of (i, j) in [0, rows) x [0, cols) with j <= i + off (lower:
 * row i has clamp(i + off + 1, 0, cols) of them) or j >= i + off (upper:
 * clamp(cols - off - i, 0, cols), the lower sum read from the last row). */
static __int128 tri_count(int64_t rows, int64_t cols, int64_t off, bool lower) {
  if (lower) return sum_clamped(rows, off + 1, cols);
  return sum_clamped(rows, cols - off - (rows - 1), cols);
}

rlx_status rlx_lower_tri_indices(rlx_lower *lw, const rlx_aten_node *n) {
  int64_t rows, cols, off;
  int dt;
  bool lower = lw_is(n, "tril_indices");
  rlx_status st = lw_int(lw, n, 0, "row", 0, &rows);
  if (!st) st = lw_int(lw, n, 1, "col", 0, &cols);
  if (!st) st = lw_int(lw, n, 2, "offset", 0, &off);
  if (!st) st = lw_dtype(lw, n, -1, "dtype", RLX_DTYPE_I64, &dt);
  if (st) return st;
  if (rows < 0 || cols < 0) /* torch: "row must be non-negative, got..." */
    return lw_fail(RLX_ERR_SHAPE, "row (%lld) and col (%lld) must be non-negative", (long long)rows, (long long)cols);
  if (dt != RLX_DTYPE_I64 && dt != RLX_DTYPE_I32) /* torch's CPU kernel: int32 and int64 */
    return lw_fail(RLX_ERR_UNSUPPORTED, "argument 'dtype' (%s): %s makes int32 or int64 indices",
                   rlx_dtype_name((rlx_dtype)dt), lower ? "tril_indices" : "triu_indices");
  /* offsets beyond the matrix change nothing; keep the arithmetic in range */
  off = RLX_MAX(RLX_MIN(off, RLX_MAX_PARAM), -RLX_MAX_PARAM);
  __int128 count = rows <= RLX_MAX_PARAM && cols <= RLX_MAX_PARAM ? tri_count(rows, cols, off, lower) : -1;
  int64_t N = (int64_t)count;
  if (count < 0 || count > RLX_MAX_NUMEL / 2) return lw_fail(RLX_ERR_SHAPE, "a %lld x %lld %s is too large", (long long)rows, (long long)cols,
                          lower ? "tril_indices" : "triu_indices");
  rlx_shape s = {2, {2, N}};
  size_t es = rlx_dtype_size((rlx_dtype)dt);
  void *data = rlx_aligned_alloc((size_t)(2 * N) * es + 1);
  if (!data) return lw_fail(RLX_ERR_OUT_OF_MEMORY, "out of memory for a [2, %lld] index constant", (long long)N);
  int64_t k = 0;
  for (int64_t i = 0; i < rows; i++) {
    int64_t j0 = lower ? 0 : RLX_MAX(i + off, 0), j1 = lower ? RLX_MIN(i + off + 1, cols) : cols;
    for (int64_t j = j0; j < j1; j++, k++) {
      rlx_store_i64(data, (rlx_dtype)dt, k, i);
      rlx_store_i64(data, (rlx_dtype)dt, N + k, j);
    }
  }
  RLX_ASSERT(k == N);
  int32_t v = rlx_graph_add_const_owned(lw->g, (rlx_dtype)dt, &s, data);
  if (v < 0) return rlx_last_status();
  return lw_bind(lw, n, v);
}
