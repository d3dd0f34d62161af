/*
 * attention.c — scaled dot-product attention with torch's semantics.
 *
 *   q    [*B, Hq, L, E]
 *   k    [*B, Hk, S, E]        Hq % Hk == 0 (grouped-query heads)
 *   v    [*B, Hk, S, Ev]
 *   mask broadcastable to [*B, Hq, L, S]: bool (true = attend) or additive float
 *   out  [*B, Hq, L, Ev]
 *
 * causal keeps key j for query i when j <= i (top-left aligned, as torch's
 * is_causal). scale 0 means 1/sqrt(E). A row with every key masked out gives
 * zeros, as torch's math path (`_safe_softmax`) does. Computed in double.
 */
#include <math.h>

#include "ops/ops_util.h"

static rlx_status attn_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *q = rlx_in(g, n, 0), *k = rlx_in(g, n, 1), *v = rlx_in(g, n, 2);
  const rlx_value *m = rlx_in(g, n, 3);
  int r = q->shape.rank;
  if (r < 3 || k->shape.rank != r || v->shape.rank != r)
    RLX_INFER_FAIL("attention needs q, k, v of equal rank >= 3 (got %d, %d, %d)", r, k->shape.rank,
                   v->shape.rank);
  if (!rlx_dtype_is_float(q->dtype) || k->dtype != q->dtype || v->dtype != q->dtype)
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "attention needs q, k, v of one float dtype");
  const int64_t *qd = q->shape.dims, *kd = k->shape.dims, *vd = v->shape.dims;
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
  return (size_t)k->shape.dims[k->shape.rank - 2] * sizeof(double);
}

static rlx_status attn_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                           void *scratch) {
  const rlx_attention_params *p = &n->p.attention;
  int r = in[0].rank;
  int64_t Hq = in[0].dims[r - 3], L = in[0].dims[r - 2], E = in[0].dims[r - 1];
  int64_t Hk = in[1].dims[r - 3], S = in[1].dims[r - 2], Ev = in[2].dims[r - 1];
  int64_t B = rlx_dims_prod(in[0].dims, 0, r - 3), rep = Hq / Hk;
  double scale = p->scale != 0 ? p->scale : 1.0 / sqrt((double)E);
  rlx_dtype t = in[0].dtype;
  double *w = scratch; /* [S] */
  rlx_shape full = rlx_view_shape(&in[0]), ms;
  full.dims[r - 1] = S;
  int64_t mst[RLX_MAX_RANK];
  bool has_mask = in[3].data != NULL, bool_mask = has_mask && in[3].dtype == RLX_DTYPE_BOOL;
  if (has_mask) {
    ms = rlx_view_shape(&in[3]);
    rlx_broadcast_strides(&ms, &full, mst);
  }
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < Hq; h++) {
      int64_t qb = (b * Hq + h) * L * E, kb = (b * Hk + h / rep) * S * E;
      int64_t vb = (b * Hk + h / rep) * S * Ev, ob = (b * Hq + h) * L * Ev;
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
              dot += rlx_load_f64(in[0].data, t, qb + i * E + e) *
                     rlx_load_f64(in[1].data, t, kb + j * E + e);
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
            acc += w[j] * rlx_load_f64(in[2].data, t, vb + j * Ev + e);
          rlx_store_f64(out[0].data, t, ob + i * Ev + e, sum > 0 ? acc / sum : acc);
        }
      }
    }
  return RLX_OK;
}

static void attn_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_attention_params *p = &n->p.attention;
  if (p->causal) rlx_bprintf(buf, cap, "causal");
  if (p->scale != 0) rlx_bprintf(buf, cap, "%sscale=%g", buf[0] ? " " : "", p->scale);
}

const rlx_op_vtable rlx_op_attention = {
    .infer = attn_infer, .ref = attn_ref, .scratch = attn_scratch, .print = attn_print, .symbolic = true};
