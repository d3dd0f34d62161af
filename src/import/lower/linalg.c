/*
 * linalg.c — lowering of mm, bmm, matmul (with torch's 1-D rules), addmm,
 * baddbmm, linear, grouped matmuls (aten._grouped_mm and transformers'
 * grouped_mm_fallback), and every scaled-dot-product-attention variant.
 *
 * Matmul and attention compute in f32 or f64: f16/bf16 operands are cast to
 * f32 and the result cast back (torch also accumulates them in f32).
 */
#include <math.h>

#include "import/lower/lower.h"

/* f16/bf16 compute in f32; f32, f64 and integers in their own dtype. */
static rlx_dtype compute_type(rlx_dtype t) {
  return t == RLX_DTYPE_F16 || t == RLX_DTYPE_BF16 ? RLX_DTYPE_F32 : t;
}

static rlx_status need_numeric(rlx_lower *lw, int32_t v, const char *what) {
  if (lw_val(lw, v)->dtype == RLX_DTYPE_BOOL)
    return lw_fail(RLX_ERR_UNSUPPORTED, "%s of bool tensors", what);
  return RLX_OK;
}

/* out = alpha * (a @ b) + beta * bias, computed in ct, result reshaped to the
 * recorded shape and cast to the recorded dtype. */
static rlx_status emit_matmul(rlx_lower *lw, const rlx_aten_node *n, int32_t a, int32_t b,
                              int32_t bias, bool trans_b, double alpha, double beta) {
  const rlx_tinfo *t = lw_out(n, 0);
  rlx_status st = need_numeric(lw, a, "matmul");
  if (!st) st = need_numeric(lw, b, "matmul");
  if (st) return st;
  rlx_dtype at = lw_val(lw, a)->dtype, bt = lw_val(lw, b)->dtype;
  if (at != bt || (bias >= 0 && lw_val(lw, bias)->dtype != at)) /* torch: "expected m1 and m2 to have the same dtype" */
    return lw_fail(RLX_ERR_SHAPE, "matmul operands of different dtypes (%s, %s%s%s)", rlx_dtype_name(at),
                   rlx_dtype_name(bt), bias >= 0 ? ", bias " : "",
                   bias >= 0 ? rlx_dtype_name(lw_val(lw, bias)->dtype) : "");
  rlx_dtype ct = compute_type(t ? t->dtype : lw_val(lw, a)->dtype);
  a = lw_cast(lw, a, ct), b = lw_cast(lw, b, ct), bias = lw_cast(lw, bias, ct);
  if (a < 0 || b < 0) return rlx_last_status();
  /* torch.matmul's 1-D rules: a vector is a row (a) or a column (b) */
  const rlx_shape as = lw_val(lw, a)->shape, bs = lw_val(lw, b)->shape; /* copies: emitting moves values */
  if (as.rank == 1) {
    rlx_shape s = {.rank = 2, .dims = {1, as.dims[0]}};
    a = lw_reshape(lw, a, &s);
  }
  if (bs.rank == 1) {
    rlx_shape s = {.rank = 2, .dims = {bs.dims[0], 1}};
    if (trans_b) s.dims[0] = 1, s.dims[1] = bs.dims[0];
    b = lw_reshape(lw, b, &s);
  }
  if (a < 0 || b < 0) return rlx_last_status();
  rlx_params p = {.matmul = {.trans_b = trans_b, .alpha = alpha, .beta = beta}};
  int32_t in[3] = {a, b, bias};
  int32_t y = lw_emit(lw, RLX_OP_MATMUL, &p, in, bias >= 0 ? 3 : 2);
  if (y >= 0 && t) y = lw_cast(lw, lw_reshape(lw, y, &t->shape), t->dtype);
  return lw_bind(lw, n, y);
}

rlx_status rlx_lower_matmul(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, b;
  rlx_status st = lw_tensor(lw, n, 0, "self", &a);
  if (!st) st = lw_tensor(lw, n, 1, lw_is(n, "matmul") ? "other" : "mat2", &b);
  return st ? st : emit_matmul(lw, n, a, b, -1, false, 1.0, 1.0);
}

/* addmm(bias, m1, m2, beta, alpha), baddbmm(bias, b1, b2, beta, alpha) */
rlx_status rlx_lower_addmm(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t bias, a, b;
  double alpha, beta;
  bool bmm = lw_is(n, "baddbmm");
  rlx_status st = lw_tensor(lw, n, 0, "self", &bias);
  if (!st) st = lw_tensor(lw, n, 1, bmm ? "batch1" : "mat1", &a);
  if (!st) st = lw_tensor(lw, n, 2, bmm ? "batch2" : "mat2", &b);
  if (!st) st = lw_float(lw, n, 3, "beta", 1.0, &beta);
  if (!st) st = lw_float(lw, n, 4, "alpha", 1.0, &alpha);
  if (st) return st;
  if (beta == 0) bias = -1; /* torch ignores the input (even NaN) when beta is 0 */
  return emit_matmul(lw, n, a, b, bias, false, alpha, beta);
}

/* addbmm(self, batch1 [B, N, K], batch2 [B, K, M], beta, alpha): beta * self
 * + alpha * sum_b batch1[b] @ batch2[b], as one matmul over the batches laid
 * side by side: [N, B*K] @ [B*K, M]. */
rlx_status rlx_lower_addbmm(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t bias, a, b;
  double alpha, beta;
  rlx_status st = lw_tensor(lw, n, 0, "self", &bias);
  if (!st) st = lw_tensor(lw, n, 1, "batch1", &a);
  if (!st) st = lw_tensor(lw, n, 2, "batch2", &b);
  if (!st) st = lw_float(lw, n, 3, "beta", 1.0, &beta);
  if (!st) st = lw_float(lw, n, 4, "alpha", 1.0, &alpha);
  if (st) return st;
  const rlx_shape as = lw_val(lw, a)->shape, bs = lw_val(lw, b)->shape;
  if (as.rank != 3 || bs.rank != 3) /* torch: "batch1 must be a 3D tensor" */
    return lw_fail(RLX_ERR_SHAPE, "addbmm needs 3-D batches, got ranks %d and %d", as.rank, bs.rank);
  rlx_dim BK;
  if ((st = rlx_dim_mul(lw_syms(lw), as.dims[0], as.dims[2], &BK))) return st;
  rlx_params p;
  memset(&p, 0, sizeof p);
  for (int i = 0; i < RLX_MAX_RANK; i++) p.permute.perm[i] = i < 3 ? (int32_t[]){1, 0, 2}[i] : -1;
  rlx_shape a2 = {.rank = 2, .dims = {as.dims[1], BK}}, b2 = {.rank = 2, .dims = {BK, bs.dims[2]}};
  a = lw_reshape(lw, lw_emit(lw, RLX_OP_PERMUTE, &p, &a, 1), &a2);
  b = lw_reshape(lw, b, &b2);
  if (a < 0 || b < 0) return rlx_last_status();
  if (beta == 0) bias = -1; /* torch ignores the input (even NaN) when beta is 0 */
  return emit_matmul(lw, n, a, b, bias, false, alpha, beta);
}

rlx_status rlx_lower_linear(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, w, b;
  rlx_status st = lw_tensor(lw, n, 0, "input", &x);
  if (!st) st = lw_tensor(lw, n, 1, "weight", &w);
  if (!st) st = lw_opt_tensor(lw, n, 2, "bias", &b);
  return st ? st : emit_matmul(lw, n, x, w, b, true, 1.0, 1.0);
}

/* transformers.grouped_mm_fallback(input [S, K], weight [E, K, N], offs [E])
 * and aten._grouped_mm(self, mat2, offs, bias, out_dtype) in the form MoE
 * layers use (2-D x 3-D with offsets): one matmul per group of rows, the
 * groups read from offs at run time; rows past the last offset are zero. */
rlx_status rlx_lower_grouped_mm(rlx_lower *lw, const rlx_aten_node *n) {
  bool fallback = lw_is(n, "grouped_mm_fallback");
  int32_t x, w, offs, bias = -1;
  int out_dtype = -1;
  rlx_status st = lw_tensor(lw, n, 0, fallback ? "input" : "self", &x);
  if (!st) st = lw_tensor(lw, n, 1, fallback ? "weight" : "mat2", &w);
  if (!st) st = fallback ? lw_tensor(lw, n, 2, "offs", &offs) : lw_opt_tensor(lw, n, 2, "offs", &offs);
  if (!st && !fallback) st = lw_opt_tensor(lw, n, 3, "bias", &bias);
  if (!st && !fallback) st = lw_dtype(lw, n, 4, "out_dtype", -1, &out_dtype);
  if (st) return st;
  int xr = lw_val(lw, x)->shape.rank, wr = lw_val(lw, w)->shape.rank;
  rlx_dtype xt = lw_val(lw, x)->dtype;
  if (xr != 2 || wr != 3 || offs < 0 || bias >= 0 || (out_dtype >= 0 && out_dtype != (int)xt))
    return lw_fail(RLX_ERR_UNSUPPORTED, "grouped mm is supported as a 2-D input times a 3-D weight with "
                   "offsets, without bias or out_dtype; got a %d-D input, a %d-D weight%s%s%s", xr, wr,
                   offs < 0 ? ", no offsets" : "", bias >= 0 ? ", a bias" : "",
                   out_dtype >= 0 && out_dtype != (int)xt ? ", an out_dtype" : "");
  const rlx_tinfo *t = lw_out(n, 0);
  rlx_dtype ot = t ? t->dtype : xt, ct = compute_type(ot);
  if (!rlx_dtype_is_float(ot)) return lw_fail(RLX_ERR_UNSUPPORTED, "grouped mm of %s tensors", rlx_dtype_name(ot));
  rlx_params p = {0};
  int32_t in[3] = {lw_cast(lw, x, ct), lw_cast(lw, w, ct), offs};
  if (in[0] < 0 || in[1] < 0) return rlx_last_status();
  return lw_bind(lw, n, lw_cast(lw, lw_emit(lw, RLX_OP_GROUPED_MATMUL, &p, in, 3), ot));
}

/* The public op and the backend variants, which place their arguments
 * differently:
 *   scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, *, scale, enable_gqa)
 *   _scaled_dot_product_attention_math(q, k, v, attn_mask, dropout_p, is_causal, dropout_mask, *, scale, enable_gqa)
 *   _scaled_dot_product_flash_attention[_for_cpu](q, k, v, dropout_p, is_causal, ..., *, attn_mask?, scale)
 *   _scaled_dot_product_efficient_attention(q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, *, scale) */
/* The flash variants' second output, logsumexp [*B, H, L] over the keys of
 * scale * q k^T with the causal limit (top-left, as torch) or the mask: a
 * matmul, a where / add and a logsumexp reduction (an attention node
 * computes the output). -1 when rlx cannot build it (grouped kv heads, a
 * symbolic causal limit): the output is then missing, and a graph that
 * reads it is refused naming it. */
static int32_t flash_logsumexp(rlx_lower *lw, int32_t q, int32_t k, int32_t mask, bool causal, double scale) {
  const rlx_value *qv = lw_val(lw, q), *kv = lw_val(lw, k);
  int r = qv->shape.rank;
  if (r < 3 || kv->shape.rank != r) return -1;
  rlx_dim L = qv->shape.dims[r - 2], S = kv->shape.dims[r - 2], E = qv->shape.dims[r - 1];
  if (qv->shape.dims[r - 3] != kv->shape.dims[r - 3] || rlx_dim_is_sym(E) || E <= 0) return -1;
  if (causal && (rlx_dim_is_sym(L) || rlx_dim_is_sym(S) || (int64_t)L * (int64_t)S > ((int64_t)1 << 28))) return -1;
  rlx_params mp = {.matmul = {.trans_b = true, .alpha = scale != 0 ? scale : 1.0 / sqrt((double)E), .beta = 1}};
  int32_t in2[2] = {q, k};
  int32_t sc = lw_emit(lw, RLX_OP_MATMUL, &mp, in2, 2);
  if (sc < 0) return -1;
  rlx_dtype ct = lw_val(lw, sc)->dtype;
  int32_t ninf = lw_scalar(lw, ct, -INFINITY, 0);
  if (causal) {
    rlx_shape cs = {.rank = 2, .dims = {L, S}};
    size_t cells = (size_t)L * (size_t)S;
    uint8_t *keep = rlx_aligned_alloc(cells ? cells : 1);
    if (!keep) return -1;
    for (int64_t i = 0; i < L; i++)
      for (int64_t j = 0; j < S; j++) keep[i * S + j] = j <= i;
    int32_t cm = rlx_graph_add_const_owned(lw->g, RLX_DTYPE_BOOL, &cs, keep);
    int32_t w[3] = {cm, sc, ninf};
    sc = cm < 0 || ninf < 0 ? -1 : lw_emit(lw, RLX_OP_WHERE, NULL, w, 3);
  } else if (mask >= 0 && lw_val(lw, mask)->dtype == RLX_DTYPE_BOOL) {
    int32_t w[3] = {mask, sc, ninf};
    sc = ninf < 0 ? -1 : lw_emit(lw, RLX_OP_WHERE, NULL, w, 3);
  } else if (mask >= 0) {
    sc = lw_binary(lw, RLX_BINARY_ADD, sc, mask);
  }
  if (sc < 0) return -1;
  rlx_params rp = {.reduce = {.kind = RLX_REDUCE_LOGSUMEXP, .axes = 1u << (r - 1)}};
  return lw_emit(lw, RLX_OP_REDUCE, &rp, &sc, 1);
}

rlx_status rlx_lower_sdpa(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t q, k, v, mask = -1;
  double dropout = 0, scale = 0;
  bool causal = false;
  rlx_status st = lw_tensor(lw, n, 0, "query", &q);
  if (!st) st = lw_tensor(lw, n, 1, "key", &k);
  if (!st) st = lw_tensor(lw, n, 2, "value", &v);
  if (st) return st;
  if (lw_is(n, "_scaled_dot_product_flash_attention") ||
      lw_is(n, "_scaled_dot_product_flash_attention_for_cpu")) {
    if (!(st = lw_float(lw, n, 3, "dropout_p", 0.0, &dropout)) && !(st = lw_bool(lw, n, 4, "is_causal", false, &causal)))
      st = lw_opt_tensor(lw, n, -1, "attn_mask", &mask);
  } else if (lw_is(n, "_scaled_dot_product_efficient_attention")) {
    if (!(st = lw_opt_tensor(lw, n, 3, "attn_bias", &mask)) && !(st = lw_float(lw, n, 5, "dropout_p", 0.0, &dropout)))
      st = lw_bool(lw, n, 6, "is_causal", false, &causal);
  } else {
    if (!(st = lw_opt_tensor(lw, n, 3, "attn_mask", &mask)) && !(st = lw_float(lw, n, 4, "dropout_p", 0.0, &dropout)))
      st = lw_bool(lw, n, 5, "is_causal", false, &causal);
  }
  if (!st) st = lw_float(lw, n, -1, "scale", 0.0, &scale);
  if (st) return st;
  if (dropout != 0)
    return lw_fail(RLX_ERR_UNSUPPORTED, "attention dropout_p=%g is random even in eval mode; pass "
                   "dropout_p=0 when not training", dropout);
  if (causal && mask >= 0) return lw_fail(RLX_ERR_UNSUPPORTED, "attention with both a mask and is_causal");
  const rlx_tinfo *t = lw_out(n, 0);
  rlx_dtype ot = t ? t->dtype : lw_val(lw, q)->dtype, ct = compute_type(ot);
  q = lw_cast(lw, q, ct), k = lw_cast(lw, k, ct), v = lw_cast(lw, v, ct);
  if (mask >= 0 && lw_val(lw, mask)->dtype != RLX_DTYPE_BOOL) mask = lw_cast(lw, mask, ct);
  if (q < 0 || k < 0 || v < 0 || (mask < -1)) return rlx_last_status();
  rlx_params p = {.attention = {.causal = causal, .scale = scale}};
  int32_t in[4] = {q, k, v, mask};
  int32_t y = lw_emit(lw, RLX_OP_ATTENTION, &p, in, mask >= 0 ? 4 : 3);
  y = lw_cast(lw, y, ot);
  if (n->out_kind == RLX_OUT_LIST) { /* variants return (output, logsumexp, ...) */
    if (y < 0) return rlx_last_status();
    int32_t outs[16];
    int cnt = RLX_MIN(n->n_outs, 16);
    for (int i = 0; i < cnt; i++) outs[i] = i ? -1 : y;
    bool flash = lw_is(n, "_scaled_dot_product_flash_attention") || lw_is(n, "_scaled_dot_product_flash_attention_for_cpu");
    if (flash && cnt > 1 && n->outs[1].present) { /* dce removes it when nothing reads it */
      int32_t lse = flash_logsumexp(lw, q, k, mask, causal, scale);
      if (lse >= 0) outs[1] = lw_cast(lw, lse, n->outs[1].dtype);
      if (outs[1] < -1) return rlx_last_status();
      if (outs[1] < 0) rlx_error_clear();
    }
    return lw_bind_multi(lw, n, outs, cnt);
  }
  return lw_bind(lw, n, y);
}

/* _cdist_forward(x1, x2, p, compute_mode), cdist(x1, x2, p, compute_mode),
 * _pdist_forward(x, p) */
rlx_status rlx_lower_dist(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t a, b = -1;
  rlx_params p = {.dist = {.p = 2.0}};
  bool pd = lw_is(n, "_pdist_forward") || lw_is(n, "pdist");
  rlx_status st = lw_tensor(lw, n, 0, pd ? "self" : "x1", &a);
  if (!st && !pd) st = lw_tensor(lw, n, 1, "x2", &b);
  if (!st) st = lw_float(lw, n, pd ? 1 : 2, "p", 2.0, &p.dist.p);
  if (st) return st;
  if (!(p.dist.p >= 0)) /* torch: "cdist only supports non-negative p values" (NaN included) */
    return lw_fail(RLX_ERR_SHAPE, "argument 'p' is %g; it must be >= 0", p.dist.p);
  if (pd) return lw_bind(lw, n, lw_emit(lw, RLX_OP_PDIST, &p, &a, 1));
  int32_t in[2] = {a, b};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_CDIST, &p, in, 2));
}

/* addmv(self, mat [M, K], vec [K], beta, alpha) = beta * self + alpha * (mat @
 * vec) (issue 11): the product as [M, K] @ [K, 1] with self (broadcastable to
 * [M]) as the bias of the column; torch ignores self when beta is 0. */
rlx_status rlx_lower_addmv(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t bias, a, b;
  double alpha, beta;
  rlx_status st = lw_tensor(lw, n, 0, "self", &bias);
  if (!st) st = lw_tensor(lw, n, 1, "mat", &a);
  if (!st) st = lw_tensor(lw, n, 2, "vec", &b);
  if (!st) st = lw_float(lw, n, 3, "beta", 1.0, &beta);
  if (!st) st = lw_float(lw, n, 4, "alpha", 1.0, &alpha);
  if (st) return st;
  const rlx_shape ms = lw_val(lw, a)->shape, vs = lw_val(lw, b)->shape, bs = lw_val(lw, bias)->shape;
  if (ms.rank != 2 || vs.rank != 1 || bs.rank > 1) /* torch: "vector + matrix @ vector expected" */
    return lw_fail(RLX_ERR_SHAPE, "addmv needs self of rank <= 1, a 2-D mat and a 1-D vec (got ranks %d, %d, %d)",
                   bs.rank, ms.rank, vs.rank);
  if (beta == 0) {
    bias = -1;
  } else if (bs.rank == 1) {
    rlx_shape col = {.rank = 2, .dims = {bs.dims[0], 1}};
    if ((bias = lw_reshape(lw, bias, &col)) < 0) return rlx_last_status();
  }
  return emit_matmul(lw, n, a, b, bias, false, alpha, beta);
}
