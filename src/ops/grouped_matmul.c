/*
 * grouped_matmul.c — one matrix multiply per group of rows, the groups given
 * at run time by cumulative offsets (a mixture-of-experts layer: the rows are
 * token/expert pairs sorted by expert, group e is expert e's rows):
 *
 *   x [S, K], w [E, K, N], offs [E] (i32 or i64) -> out [S, N]
 *
 *   out[r] = x[r] @ w[e]   for offs[e-1] <= r < offs[e]   (offs[-1] = 0)
 *   out[r] = 0             for r >= offs[E-1]
 *
 * (transformers' grouped_mm_fallback, which starts from zeros; torch's
 * _grouped_mm leaves those tail rows unset.) The offsets are data, so the
 * kernel checks them before writing anything: they must be non-decreasing,
 * from 0 up to at most S; anything else is RLX_ERR_RUNTIME naming the bad
 * entry (torch's Python fallback would silently overlap or clip the groups).
 *
 * f32 and f64, accumulating like matmul (the lowering computes f16/bf16 in
 * f32). The fast f32 kernel is in cpu/matmul.c.
 */
#include "ops/gemm_ref.h"
#include "ops/ops_util.h"

rlx_status rlx_grouped_offsets_check(const rlx_tensor_view *offs, int64_t S) {
  int64_t E = rlx_view_numel(offs), prev = 0;
  for (int64_t e = 0; e < E; e++) {
    int64_t end = rlx_load_i64(offs->data, offs->dtype, e);
    if (end < prev || end > S) {
      if (end > S)
        return rlx_errorf(RLX_ERR_RUNTIME, "grouped_matmul: offsets[%lld] = %lld is past the %lld rows of the input",
                          (long long)e, (long long)end, (long long)S);
      return rlx_errorf(RLX_ERR_RUNTIME, "grouped_matmul: offsets must be non-decreasing from 0, but offsets[%lld] "
                        "= %lld follows %lld", (long long)e, (long long)end, (long long)prev);
    }
    prev = end;
  }
  return RLX_OK;
}

static rlx_status grouped_matmul_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0), *w = rlx_in(g, n, 1), *offs = rlx_in(g, n, 2);
  if (x->shape.rank != 2 || w->shape.rank != 3 || offs->shape.rank != 1)
    RLX_INFER_FAIL("grouped_matmul takes x [S, K], w [E, K, N] and offsets [E], got ranks %d, %d and %d",
                   x->shape.rank, w->shape.rank, offs->shape.rank);
  if (x->dtype != w->dtype || (x->dtype != RLX_DTYPE_F32 && x->dtype != RLX_DTYPE_F64))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "grouped_matmul computes in f32 or f64, got %s and %s",
                      rlx_dtype_name(x->dtype), rlx_dtype_name(w->dtype));
  if (offs->dtype != RLX_DTYPE_I32 && offs->dtype != RLX_DTYPE_I64)
    RLX_INFER_FAIL("grouped_matmul offsets must be i32 or i64, got %s", rlx_dtype_name(offs->dtype));
  if (w->shape.dims[1] != x->shape.dims[1])
    RLX_INFER_FAIL("grouped_matmul inner dims differ: x has K=%lld, w has %lld",
                   (long long)x->shape.dims[1], (long long)w->shape.dims[1]);
  if (offs->shape.dims[0] != w->shape.dims[0])
    RLX_INFER_FAIL("grouped_matmul has %lld offsets for %lld groups", (long long)offs->shape.dims[0],
                   (long long)w->shape.dims[0]);
  os[0].rank = 2;
  os[0].dims[0] = x->shape.dims[0];
  os[0].dims[1] = w->shape.dims[2];
  od[0] = x->dtype;
  return RLX_OK;
}

static rlx_status grouped_matmul_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                                     void *scratch) {
  (void)n, (void)scratch;
  const rlx_tensor_view *x = &in[0], *w = &in[1], *offs = &in[2]; /* [S, K], [E, K, N], [E] */
  int64_t S = x->dims[0], K = x->dims[1], E = w->dims[0], N = w->dims[2];
  rlx_status st = rlx_grouped_offsets_check(offs, S);
  if (st) return st;
  bool f64 = x->dtype == RLX_DTYPE_F64;
  size_t es = f64 ? 8 : 4;
  int64_t start = 0;
  for (int64_t e = 0; e < E; e++) {
    int64_t end = rlx_load_i64(offs->data, offs->dtype, e);
    const char *A = (const char *)x->data + es * (size_t)(start * K);
    const char *B = (const char *)w->data + es * (size_t)(e * K * N);
    char *C = (char *)out[0].data + es * (size_t)(start * N);
    if (f64) rlx_gemm_ref_f64(end - start, N, K, (const double *)A, K, (const double *)B, N, (double *)C, N);
    else rlx_gemm_ref_f32(end - start, N, K, (const float *)A, K, (const float *)B, N, (float *)C, N);
    start = end;
  }
  memset((char *)out[0].data + es * (size_t)(start * N), 0, es * (size_t)((S - start) * N));
  return RLX_OK;
}

const rlx_op_vtable rlx_op_grouped_matmul = {.infer = grouped_matmul_infer, .ref = grouped_matmul_ref, .symbolic = true};
