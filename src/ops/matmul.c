/*
 * matmul.c — batched matrix multiply with broadcast batch dims, an optional
 * transposed B (linear weights) and an optional bias:
 *
 *   out[..., M, N] = alpha * (a[..., M, K] @ b[..., K, N]) + beta * bias
 *
 * b is [..., N, K] when trans_b. bias broadcasts to out. f32, f64 and the
 * integer dtypes (exact, wrapping like torch's integer mm); the lowering
 * computes f16/bf16 in f32 and casts back.
 */
#include "ops/gemm_ref.h"
#include "ops/ops_util.h"

void rlx_gemm_ref_f32(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                      const float *B, int64_t ldb, float *C, int64_t ldc) {
  for (int64_t i = 0; i < M; i++) {
    float *c = C + i * ldc;
    for (int64_t j = 0; j < N; j++) c[j] = 0.0f;
    for (int64_t k = 0; k < K; k++) {
      float a = A[i * lda + k];
      const float *b = B + k * ldb;
      for (int64_t j = 0; j < N; j++) c[j] += a * b[j];
    }
  }
}

void rlx_gemm_ref_f64(int64_t M, int64_t N, int64_t K, const double *A, int64_t lda,
                      const double *B, int64_t ldb, double *C, int64_t ldc) {
  for (int64_t i = 0; i < M; i++) {
    double *c = C + i * ldc;
    for (int64_t j = 0; j < N; j++) c[j] = 0.0;
    for (int64_t k = 0; k < K; k++) {
      double a = A[i * lda + k];
      const double *b = B + k * ldb;
      for (int64_t j = 0; j < N; j++) c[j] += a * b[j];
    }
  }
}

/* Batch shape of a rank>=2 shape (all but the last two axes). */
static rlx_shape batch_of(const rlx_shape *s) {
  rlx_shape b = *s;
  b.rank = s->rank - 2;
  return b;
}

static rlx_status matmul_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *a = rlx_in(g, n, 0), *b = rlx_in(g, n, 1), *bias = rlx_in(g, n, 2);
  const rlx_matmul_params *p = &n->p.matmul;
  if (a->shape.rank < 2 || b->shape.rank < 2)
    RLX_INFER_FAIL("matmul operands must have rank >= 2 (got %d and %d)", a->shape.rank,
                   b->shape.rank);
  bool ok_dtype = a->dtype == RLX_DTYPE_F32 || a->dtype == RLX_DTYPE_F64 ||
                  (rlx_dtype_is_int(a->dtype) && a->dtype != RLX_DTYPE_BOOL);
  if (a->dtype != b->dtype || !ok_dtype)
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "matmul computes in f32, f64 or an integer dtype, got %s and %s",
                      rlx_dtype_name(a->dtype), rlx_dtype_name(b->dtype));
  int64_t M = a->shape.dims[a->shape.rank - 2], K = a->shape.dims[a->shape.rank - 1];
  int64_t bk = b->shape.dims[b->shape.rank - (p->trans_b ? 1 : 2)];
  int64_t N = b->shape.dims[b->shape.rank - (p->trans_b ? 2 : 1)];
  if (bk != K) RLX_INFER_FAIL("matmul inner dims differ: a has K=%lld, b has %lld", (long long)K,
                              (long long)bk);
  rlx_shape ba = batch_of(&a->shape), bb = batch_of(&b->shape);
  if (rlx_broadcast(&ba, &bb, &os[0])) return RLX_ERR_SHAPE;
  os[0].dims[os[0].rank++] = M;
  os[0].dims[os[0].rank++] = N;
  od[0] = a->dtype;
  if (bias) {
    rlx_shape tmp;
    if (bias->dtype != a->dtype) RLX_INFER_FAIL("matmul bias dtype %s differs from %s",
                                                rlx_dtype_name(bias->dtype), rlx_dtype_name(a->dtype));
    if (rlx_broadcast(&bias->shape, &os[0], &tmp) || !rlx_shape_eq(&tmp, &os[0]))
      RLX_INFER_FAIL("matmul bias does not broadcast to the output");
  }
  /* the residual may be the output reshaped by unit axes (fuse_epilogue: an
   * add behind a view of the output), the same elements in the same order */
  const rlx_value *res = rlx_in(g, n, 3);
  if (res && res->dtype == od[0] && !rlx_shape_eq(&res->shape, &os[0]) && rlx_shape_same_nonunit(&res->shape, &os[0]))
    return rlx_epilogue_infer(NULL, &p->ep, &os[0], od[0]);
  return rlx_epilogue_infer(res, &p->ep, &os[0], od[0]);
}

static size_t matmul_scratch(const rlx_graph *g, const rlx_node *n) {
  const rlx_value *b = rlx_in(g, n, 1);
  if (!n->p.matmul.trans_b || rlx_dtype_is_int(b->dtype)) return 0;
  int r = b->shape.rank;
  return (size_t)(b->shape.dims[r - 1] * b->shape.dims[r - 2]) * rlx_dtype_size(b->dtype);
}

/* Integer matmul: exact int64 accumulation, wrapped to the dtype on store. */
static void gemm_int(int64_t M, int64_t N, int64_t K, const rlx_tensor_view *a, int64_t ao,
                     const rlx_tensor_view *b, int64_t bo, bool trans_b, rlx_tensor_view *c, int64_t co) {
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      uint64_t acc = 0;
      for (int64_t k = 0; k < K; k++)
        acc += (uint64_t)rlx_load_i64(a->data, a->dtype, ao + i * K + k) *
               (uint64_t)rlx_load_i64(b->data, b->dtype, bo + (trans_b ? j * K + k : k * N + j));
      rlx_store_i64(c->data, c->dtype, co + i * N + j, (int64_t)acc);
    }
}

static rlx_status matmul_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                             void *scratch) {
  const rlx_matmul_params *p = &n->p.matmul;
  rlx_shape os = rlx_view_shape(&out[0]), as = rlx_view_shape(&in[0]), bs = rlx_view_shape(&in[1]);
  int r = os.rank;
  int64_t M = os.dims[r - 2], N = os.dims[r - 1], K = as.dims[as.rank - 1];
  rlx_shape ob = batch_of(&os), ab = batch_of(&as), bb = batch_of(&bs);
  int64_t sa[RLX_MAX_RANK], sb[RLX_MAX_RANK];
  rlx_broadcast_strides(&ab, &ob, sa);
  rlx_broadcast_strides(&bb, &ob, sb);
  int64_t nbatch = rlx_shape_numel(&ob);
  bool f64 = out[0].dtype == RLX_DTYPE_F64;
  size_t es = f64 ? 8 : 4;
  if (rlx_dtype_is_int(out[0].dtype)) {
    for (int64_t bi = 0; bi < nbatch; bi++)
      gemm_int(M, N, K, &in[0], rlx_strided_offset(&ob, sa, bi) * M * K, &in[1],
               rlx_strided_offset(&ob, sb, bi) * K * N, p->trans_b, &out[0], bi * M * N);
    if (in[2].data || p->alpha != 1.0) {
      rlx_shape cs = in[2].data ? rlx_view_shape(&in[2]) : os;
      int64_t sc[RLX_MAX_RANK], total = rlx_shape_numel(&os);
      rlx_broadcast_strides(&cs, &os, sc);
      for (int64_t i = 0; i < total; i++) {
        /* integer arithmetic wraps, as torch's does (unsigned: no undefined overflow) */
        uint64_t v = (uint64_t)rlx_f64_to_i64(p->alpha) * (uint64_t)rlx_load_i64(out[0].data, out[0].dtype, i);
        if (in[2].data)
          v += (uint64_t)rlx_f64_to_i64(p->beta) *
               (uint64_t)rlx_load_i64(in[2].data, in[2].dtype, rlx_strided_offset(&os, sc, i));
        rlx_store_i64(out[0].data, out[0].dtype, i, (int64_t)v);
      }
    }
    return RLX_OK; /* integer matmuls are never fused */
  }

  for (int64_t bi = 0; bi < nbatch; bi++) {
    const char *A = (const char *)in[0].data + es * (size_t)(rlx_strided_offset(&ob, sa, bi) * M * K);
    const char *B = (const char *)in[1].data + es * (size_t)(rlx_strided_offset(&ob, sb, bi) * K * N);
    char *C = (char *)out[0].data + es * (size_t)(bi * M * N);
    if (p->trans_b) { /* B is [N, K]: transpose it into scratch as [K, N] */
      for (int64_t j = 0; j < N; j++)
        for (int64_t k = 0; k < K; k++)
          memcpy((char *)scratch + es * (size_t)(k * N + j), B + es * (size_t)(j * K + k), es);
      B = scratch;
    }
    if (f64) rlx_gemm_ref_f64(M, N, K, (const double *)A, K, (const double *)B, N, (double *)C, N);
    else rlx_gemm_ref_f32(M, N, K, (const float *)A, K, (const float *)B, N, (float *)C, N);
  }
  if (p->alpha != 1.0 || in[2].data) {
    rlx_shape cs = in[2].data ? rlx_view_shape(&in[2]) : os;
    int64_t sc[RLX_MAX_RANK];
    rlx_broadcast_strides(&cs, &os, sc);
    int64_t total = rlx_shape_numel(&os);
    for (int64_t i = 0; i < total; i++) {
      double v = p->alpha * rlx_load_f64(out[0].data, out[0].dtype, i);
      if (in[2].data) v += p->beta * rlx_load_f64(in[2].data, in[2].dtype, rlx_strided_offset(&os, sc, i));
      rlx_store_f64(out[0].data, out[0].dtype, i, v);
    }
  }
  rlx_epilogue_apply(&p->ep, &in[3], &out[0]);
  return RLX_OK;
}

static void matmul_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_matmul_params *p = &n->p.matmul;
  if (p->trans_b) rlx_bprintf(buf, cap, "trans_b");
  if (p->alpha != 1.0) rlx_bprintf(buf, cap, "%salpha=%g", buf[0] ? " " : "", p->alpha);
  if (p->beta != 1.0) rlx_bprintf(buf, cap, "%sbeta=%g", buf[0] ? " " : "", p->beta);
  rlx_epilogue_print(&p->ep, n->n_in > 3 && n->in[3] >= 0, buf, cap);
}

const rlx_op_vtable rlx_op_matmul = {
    .infer = matmul_infer, .ref = matmul_ref, .scratch = matmul_scratch, .print = matmul_print, .symbolic = true};
