/*
 * distance.c — pairwise distances and bagged embeddings:
 *
 *   cdist          x1 [*B1, P, M], x2 [*B2, R, M] -> [*B, P, R]   p-norm distance
 *                  (B1 and B2 broadcast)
 *                  (p = 0 counts differing coordinates, p = inf takes the max)
 *   pdist          x [N, M] -> [N (N - 1) / 2], rows i < j in row-major order
 *   embedding_bag  weight [V, D], indices [L], offsets [B or B+1], per-sample
 *                  weights [L]? -> [B, D] by sum / mean / max over each bag;
 *                  padding_idx entries are skipped, an empty bag is zeros
 *
 * Computed directly in double (torch may use a matmul form for large p=2
 * cdist; the direct form is the more accurate of the two).
 */
#include <math.h>

#include "ops/ops_util.h"

static double pnorm_dist(const rlx_tensor_view *a, int64_t ao, const rlx_tensor_view *b, int64_t bo,
                         int64_t M, double p) {
  double acc = 0;
  for (int64_t m = 0; m < M; m++) {
    double d = fabs(rlx_load_f64(a->data, a->dtype, ao + m) - rlx_load_f64(b->data, b->dtype, bo + m));
    if (p == 0) acc += d != 0;
    else if (isinf(p)) acc = fmax(acc, d);
    else if (p == 1) acc += d;
    else if (p == 2) acc += d * d;
    else acc += pow(d, p);
  }
  if (p == 0 || p == 1 || isinf(p)) return acc;
  return p == 2 ? sqrt(acc) : pow(acc, 1.0 / p);
}

static rlx_status cdist_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *a = rlx_in(g, n, 0), *b = rlx_in(g, n, 1);
  int ra = a->shape.rank, rb = b->shape.rank;
  if (ra < 2 || rb < 2 || a->shape.dims[ra - 1] != b->shape.dims[rb - 1])
    RLX_INFER_FAIL("cdist needs [.., P, M] and [.., R, M]");
  rlx_shape ba = a->shape, bb = b->shape;
  ba.rank -= 2, bb.rank -= 2;
  if (rlx_broadcast(&ba, &bb, &os[0])) return RLX_ERR_SHAPE; /* batch dims broadcast */
  if (!rlx_dtype_is_float(a->dtype) || b->dtype != a->dtype) RLX_INFER_FAIL("cdist needs float inputs");
  if (n->p.dist.p < 0) RLX_INFER_FAIL("cdist p must be >= 0");
  os[0].dims[os[0].rank++] = a->shape.dims[ra - 2];
  os[0].dims[os[0].rank++] = b->shape.dims[rb - 2];
  od[0] = a->dtype;
  return RLX_OK;
}

static rlx_status cdist_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                            void *scratch) {
  (void)scratch;
  int ra = in[0].rank, rb = in[1].rank, ro = out[0].rank;
  int64_t P = in[0].dims[ra - 2], R = in[1].dims[rb - 2], M = in[0].dims[ra - 1];
  rlx_shape os = rlx_view_shape(&out[0]), as = rlx_view_shape(&in[0]), bs = rlx_view_shape(&in[1]);
  os.rank -= 2, as.rank -= 2, bs.rank -= 2;
  int64_t sa[RLX_MAX_RANK], sb[RLX_MAX_RANK], B = rlx_dims_prod(out[0].dims, 0, ro - 2);
  rlx_broadcast_strides(&as, &os, sa);
  rlx_broadcast_strides(&bs, &os, sb);
  for (int64_t b = 0; b < B; b++) {
    int64_t ab = rlx_strided_offset(&os, sa, b), bb = rlx_strided_offset(&os, sb, b);
    for (int64_t i = 0; i < P; i++)
      for (int64_t j = 0; j < R; j++)
        rlx_store_f64(out[0].data, out[0].dtype, (b * P + i) * R + j,
                      pnorm_dist(&in[0], (ab * P + i) * M, &in[1], (bb * R + j) * M, M, n->p.dist.p));
  }
  return RLX_OK;
}

static void dist_print(const rlx_node *n, char *buf, size_t cap) { rlx_bprintf(buf, cap, "p=%g", n->p.dist.p); }

const rlx_op_vtable rlx_op_cdist = {.infer = cdist_infer, .ref = cdist_ref, .print = dist_print, .symbolic = true};

static rlx_status pdist_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  if (x->shape.rank != 2 || !rlx_dtype_is_float(x->dtype)) RLX_INFER_FAIL("pdist needs a float [N, M] input");
  if (n->p.dist.p < 0) RLX_INFER_FAIL("pdist p must be >= 0");
  int64_t N = x->shape.dims[0];
  os[0].rank = 1;
  if (rlx_dim_is_sym(N)) { /* N (N - 1) / 2 */
    rlx_symtab *t = rlx_graph_syms(g);
    rlx_dim m;
    if (rlx_dim_add(t, N, -1, &m) || rlx_dim_mul(t, N, m, &m) || rlx_dim_floordiv(t, m, 2, &os[0].dims[0]))
      return rlx_last_status();
  } else {
    bool ok = true;
    int64_t pairs = N < 2 ? 0 : rlx_mul64(N, N - 1, &ok) / 2;
    if (!ok) RLX_INFER_FAIL("pdist of %lld rows: the pair count overflows", (long long)N);
    os[0].dims[0] = pairs;
  }
  od[0] = x->dtype;
  return RLX_OK;
}

static rlx_status pdist_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                            void *scratch) {
  (void)scratch;
  int64_t N = in[0].dims[0], M = in[0].dims[1], k = 0;
  for (int64_t i = 0; i < N; i++)
    for (int64_t j = i + 1; j < N; j++)
      rlx_store_f64(out[0].data, out[0].dtype, k++, pnorm_dist(&in[0], i * M, &in[0], j * M, M, n->p.dist.p));
  return RLX_OK;
}

const rlx_op_vtable rlx_op_pdist = {.infer = pdist_infer, .ref = pdist_ref, .print = dist_print, .symbolic = true};

/* ---- embedding_bag ---- */

static rlx_status bag_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *w = rlx_in(g, n, 0), *ix = rlx_in(g, n, 1), *off = rlx_in(g, n, 2), *psw = rlx_in(g, n, 3);
  const rlx_embedding_bag_params *p = &n->p.embedding_bag;
  if (w->shape.rank != 2 || !rlx_dtype_is_float(w->dtype)) RLX_INFER_FAIL("embedding_bag weight must be float [V, D]");
  if (ix->shape.rank != 1 || off->shape.rank != 1 || !rlx_dtype_is_int(ix->dtype) || !rlx_dtype_is_int(off->dtype))
    RLX_INFER_FAIL("embedding_bag needs 1-D integer indices and offsets");
  if (p->mode < 0 || p->mode > 2) RLX_INFER_FAIL("embedding_bag mode %d", p->mode);
  if (psw && (p->mode != 0 || psw->dtype != w->dtype || !rlx_shape_eq(&psw->shape, &ix->shape)))
    RLX_INFER_FAIL("per_sample_weights need mode sum and the indices' shape");
  rlx_dim B;
  if (rlx_dim_add(rlx_graph_syms(g), off->shape.dims[0], p->include_last_offset ? -1 : 0, &B)) return rlx_last_status();
  if (!rlx_dim_is_sym(B) && B < 0) RLX_INFER_FAIL("embedding_bag offsets are empty");
  os[0].rank = 2;
  os[0].dims[0] = B;
  os[0].dims[1] = w->shape.dims[1];
  od[0] = w->dtype;
  return RLX_OK;
}

static rlx_status bag_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                          void *scratch) {
  (void)scratch;
  const rlx_embedding_bag_params *p = &n->p.embedding_bag;
  int64_t V = in[0].dims[0], D = in[0].dims[1], L = in[1].dims[0], B = out[0].dims[0];
  rlx_dtype t = in[0].dtype;
  for (int64_t b = 0; b < B; b++) {
    int64_t lo = rlx_load_i64(in[2].data, in[2].dtype, b);
    int64_t hi = b + 1 < in[2].dims[0] ? rlx_load_i64(in[2].data, in[2].dtype, b + 1) : L;
    if (lo < 0 || hi > L || lo > hi)
      return rlx_errorf(RLX_ERR_RUNTIME, "embedding_bag offsets [%lld, %lld) for bag %lld are out of range "
                        "(%lld indices)", (long long)lo, (long long)hi, (long long)b, (long long)L);
    for (int64_t d = 0; d < D; d++) {
      double acc = p->mode == 2 ? -INFINITY : 0.0;
      int64_t count = 0;
      for (int64_t k = lo; k < hi; k++) {
        int64_t row = rlx_load_i64(in[1].data, in[1].dtype, k);
        if (row < 0 || row >= V)
          return rlx_errorf(RLX_ERR_RUNTIME, "embedding_bag index %lld is out of range for %lld rows",
                            (long long)row, (long long)V);
        if (row == p->padding_idx) continue;
        double v = rlx_load_f64(in[0].data, t, row * D + d);
        if (in[3].data) v *= rlx_load_f64(in[3].data, in[3].dtype, k);
        if (p->mode == 2) acc = (v > acc || v != v) ? v : acc;
        else acc += v;
        count++;
      }
      if (!count) acc = 0;
      else if (p->mode == 1) acc /= (double)count;
      rlx_store_f64(out[0].data, t, b * D + d, acc);
    }
  }
  return RLX_OK;
}

static void bag_print(const rlx_node *n, char *buf, size_t cap) {
  static const char *modes[] = {"sum", "mean", "max"};
  const rlx_embedding_bag_params *p = &n->p.embedding_bag;
  rlx_bprintf(buf, cap, "%s%s", modes[p->mode], p->include_last_offset ? " include_last_offset" : "");
  if (p->padding_idx >= 0) rlx_bprintf(buf, cap, " padding_idx=%lld", (long long)p->padding_idx);
}

const rlx_op_vtable rlx_op_embedding_bag = {.infer = bag_infer, .ref = bag_ref, .print = bag_print,
                                            .symbolic = true};
