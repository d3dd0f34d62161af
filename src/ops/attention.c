/*
 * attention.c — scaled dot-product attention with torch's semantics.
 *
 *   q    [*B, Hq, L, E]
 *   k    [*B, Hk, S, E]        Hq % Hk == 0 (grouped-query heads)
 *   v    [*B, Hk, S, Ev]
 *   mask broadcastable to [*B, Hq, L, S]: bool (true = attend) or additive float
 *   out  [*B, Hq, L, Ev]
 *
 * rows_lh (attention_layout) puts the heads inside the rows of a tensor:
 * q [*B, L, Hq, E], k [*B, S, Hk, E], v [*B, S, Hk, Ev], out [*B, L, Hq, Ev]
 * in shape and memory; the mask is always over [*B, Hq, L, S].
 *
 * causal keeps key j for query i when j <= i (top-left aligned, as torch's
 * is_causal). scale 0 means 1/sqrt(E). A row with every key masked out gives
 * zeros, as torch's math path (`_safe_softmax`) does. Computed in double.
 */
#include <math.h>

#include "ops/ops_util.h"

/* [*B, L, H, D] <-> [*B, H, L, D]: the two axes before the last swapped. */
static rlx_shape swap_lh(rlx_shape s) {
  int64_t t = s.dims[s.rank - 3];
  s.dims[s.rank - 3] = s.dims[s.rank - 2], s.dims[s.rank - 2] = t;
  return s;
}

static rlx_status attn_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *qv = rlx_in(g, n, 0), *kv = rlx_in(g, n, 1), *vv = rlx_in(g, n, 2);
  const rlx_value *m = rlx_in(g, n, 3);
  unsigned lh = n->p.attention.rows_lh;
  int r = qv->shape.rank;
  if (r < 3 || kv->shape.rank != r || vv->shape.rank != r)
    RLX_INFER_FAIL("attention needs q, k, v of equal rank >= 3 (got %d, %d, %d)", r, kv->shape.rank,
                   vv->shape.rank);
  if (lh & ~15u) RLX_INFER_FAIL("attention layout bits 0x%x", lh);
  if (!rlx_dtype_is_float(qv->dtype) || kv->dtype != qv->dtype || vv->dtype != qv->dtype)
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "attention needs q, k, v of one float dtype");
  /* the checks below on the logical [*B, H, L, D] shapes */
  rlx_value qs = *qv, ks = *kv, vs = *vv;
  if (lh & RLX_ATTN_Q_LH) qs.shape = swap_lh(qs.shape);
  if (lh & RLX_ATTN_K_LH) ks.shape = swap_lh(ks.shape);
  if (lh & RLX_ATTN_V_LH) vs.shape = swap_lh(vs.shape);
  const rlx_value *q = &qs;
  const int64_t *qd = qs.shape.dims, *kd = ks.shape.dims, *vd = vs.shape.dims;
  for (int i = 0; i < r - 3; i++)
    if (kd[i] != qd[i] || vd[i] != qd[i]) RLX_INFER_FAIL("attention batch dims differ at axis %d", i);
  int64_t Hq = qd[r - 3], Hk = kd[r - 3];
  if (rlx_dim_is_sym(Hq) || rlx_dim_is_sym(Hk) || rlx_dim_is_sym(qd[r - 1]) || rlx_dim_is_sym(vd[r - 1]))
    RLX_INFER_FAIL("attention needs static head counts and head sizes");
  if (vd[r - 3] != Hk || Hk < 1 || Hq % Hk)
    RLX_INFER_FAIL("attention heads: q %lld, k %lld, v %lld (q heads must be a multiple of kv heads)",
                   (long long)Hq, (long long)Hk, (long long)vd[r - 3]);
  if (kd[r - 1] != qd[r - 1]) RLX_INFER_FAIL("attention: q and k head dims differ (%lld vs %lld)",
                                             (long long)qd[r - 1], (long long)kd[r - 1]);
  if (vd[r - 2] != kd[r - 2]) RLX_INFER_FAIL("attention: k and v lengths differ");
  os[0] = q->shape;
  os[0].dims[r - 1] = vd[r - 1];
  if (lh & RLX_ATTN_OUT_LH) os[0] = swap_lh(os[0]);
  od[0] = q->dtype;
  if (m) {
    rlx_shape full = q->shape, tmp;
    full.dims[r - 1] = kd[r - 2];
    if (m->dtype != RLX_DTYPE_BOOL && m->dtype != q->dtype)
      RLX_INFER_FAIL("attention mask must be bool or %s, got %s", rlx_dtype_name(q->dtype),
                     rlx_dtype_name(m->dtype));
    if (rlx_broadcast(&m->shape, &full, &tmp) || !rlx_shape_eq(&tmp, &full))
      RLX_INFER_FAIL("attention mask does not broadcast to [.., Hq, L, S]");
  }
  return RLX_OK;
}

static size_t attn_scratch(const rlx_graph *g, const rlx_node *n) {
  const rlx_value *k = rlx_in(g, n, 1);
  int axis = k->shape.rank - (n->p.attention.rows_lh & RLX_ATTN_K_LH ? 3 : 2); /* S */
  return (size_t)k->shape.dims[axis] * sizeof(double);
}

/* Element (b, h, i, e) of a [*B, H, N, D] tensor (heads inside rows: [*B, N, H, D]). */
static inline int64_t at(bool lh, int64_t b, int64_t h, int64_t i, int64_t e, int64_t H, int64_t N, int64_t D) {
  return (lh ? (b * N + i) * H + h : (b * H + h) * N + i) * D + e;
}

static rlx_status attn_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                           void *scratch) {
  const rlx_attention_params *p = &n->p.attention;
  int r = in[0].rank;
  unsigned lh = p->rows_lh;
  bool ql = lh & RLX_ATTN_Q_LH, kl = lh & RLX_ATTN_K_LH, vl = lh & RLX_ATTN_V_LH, ol = lh & RLX_ATTN_OUT_LH;
  int64_t Hq = in[0].dims[r - (ql ? 2 : 3)], L = in[0].dims[r - (ql ? 3 : 2)], E = in[0].dims[r - 1];
  int64_t Hk = in[1].dims[r - (kl ? 2 : 3)], S = in[1].dims[r - (kl ? 3 : 2)], Ev = in[2].dims[r - 1];
  int64_t B = rlx_dims_prod(in[0].dims, 0, r - 3), rep = Hq / Hk;
  double scale = p->scale != 0 ? p->scale : 1.0 / sqrt((double)E);
  rlx_dtype t = in[0].dtype;
  double *w = scratch; /* [S] */
  rlx_shape full = rlx_view_shape(&in[0]), ms;
  if (ql) full = swap_lh(full);
  full.dims[r - 1] = S;
  int64_t mst[RLX_MAX_RANK];
  bool has_mask = in[3].data != NULL, bool_mask = has_mask && in[3].dtype == RLX_DTYPE_BOOL;
  if (has_mask) {
    ms = rlx_view_shape(&in[3]);
    rlx_broadcast_strides(&ms, &full, mst);
  }
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < Hq; h++) {
      int64_t kh = h / rep;
      for (int64_t i = 0; i < L; i++) {
        double mx = -INFINITY;
        for (int64_t j = 0; j < S; j++) {
          double s = -INFINITY;
          bool keep = !(p->causal && j > i);
          int64_t mo = 0;
          if (has_mask) mo = rlx_strided_offset(&full, mst, ((b * Hq + h) * L + i) * S + j);
          if (bool_mask && !((const uint8_t *)in[3].data)[mo]) keep = false;
          if (keep) {
            double dot = 0;
            for (int64_t e = 0; e < E; e++)
              dot += rlx_load_f64(in[0].data, t, at(ql, b, h, i, e, Hq, L, E)) *
                     rlx_load_f64(in[1].data, t, at(kl, b, kh, j, e, Hk, S, E));
            s = dot * scale;
            if (has_mask && !bool_mask) s += rlx_load_f64(in[3].data, t, mo);
          }
          w[j] = s;
          if (s > mx || s != s) mx = s;
        }
        double sum = 0;
        for (int64_t j = 0; j < S; j++) {
          w[j] = mx == -INFINITY ? 0.0 : exp(w[j] - mx);
          sum += w[j];
        }
        for (int64_t e = 0; e < Ev; e++) {
          double acc = 0;
          for (int64_t j = 0; j < S; j++)
            acc += w[j] * rlx_load_f64(in[2].data, t, at(vl, b, kh, j, e, Hk, S, Ev));
          rlx_store_f64(out[0].data, t, at(ol, b, h, i, e, Hq, L, Ev), sum > 0 ? acc / sum : acc);
        }
      }
    }
  return RLX_OK;
}

static void attn_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_attention_params *p = &n->p.attention;
  if (p->causal) rlx_bprintf(buf, cap, "causal");
  if (p->scale != 0) rlx_bprintf(buf, cap, "%sscale=%g", buf[0] ? " " : "", p->scale);
  if (p->rows_lh) /* which tensors are [*B, L, H, D] */
    rlx_bprintf(buf, cap, "%sheads-in-rows=%s%s%s%s", buf[0] ? " " : "", p->rows_lh & RLX_ATTN_Q_LH ? "q" : "",
                p->rows_lh & RLX_ATTN_K_LH ? "k" : "", p->rows_lh & RLX_ATTN_V_LH ? "v" : "",
                p->rows_lh & RLX_ATTN_OUT_LH ? "o" : "");
}

const rlx_op_vtable rlx_op_attention = {
    .infer = attn_infer, .ref = attn_ref, .scratch = attn_scratch, .print = attn_print, .symbolic = true};
