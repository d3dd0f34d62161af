/*
 * loss.c — lowering of torch's fused linear + cross-entropy custom ops, which
 * torch.export keeps whole (nn.functional.linear_cross_entropy with batch
 * chunking):
 *
 *   torch_nn._linear_cross_entropy_batch_chunked(input [N, F], linear_weight
 *       [C, F], target, linear_bias [C]?, weight [C]?, reduction, ignore_index,
 *       label_smoothing, batch_chunk_size, acc_policy, acc_dtype,
 *       allow_retain_graph, compute_input_grad, compute_linear_weight_grad,
 *       compute_linear_bias_grad) -> (loss, grad_input, grad_linear_weight,
 *       grad_linear_bias)
 *   torch_nn._linear_cross_entropy_batch_chunked_no_reduction(input,
 *       linear_weight, target, linear_bias, weight, ignore_index,
 *       batch_chunk_size, acc_policy, acc_dtype) -> loss [N]
 *
 * The chunking and accumulation policy change only the order of torch's
 * sums, so the loss is the plain composition, z = input @ linear_weight^T +
 * linear_bias and lse = logsumexp(z) per row:
 *
 *   class targets t [N] (int64): w_n = weight[t_n] (1 without weight), 0
 *     where t_n == ignore_index; row loss w_n (lse_n - z[n, t_n]); "sum" adds
 *     the rows, "mean" divides that by sum_n w_n (NaN when it is 0)
 *   probability targets t [N, C] (float): row loss sum_c weight_c t[n, c]
 *     (lse_n - z[n, c]); "mean" divides the sum by N
 *
 * The gradient outputs exist for training; rlx gives them when they are
 * empty (compute_*_grad false, which is what inference records) and refuses
 * a program that reads a computed one.
 */
#include <math.h>

#include "import/lower/lower.h"

static int32_t reduce(rlx_lower *lw, rlx_reduce_kind k, uint32_t axes, bool keepdim, int32_t x) {
  if (x < 0) return -1;
  rlx_params p = {.reduce = {.kind = k, .axes = axes, .keepdim = keepdim}};
  return lw_emit(lw, RLX_OP_REDUCE, &p, &x, 1);
}

static int32_t where(rlx_lower *lw, int32_t c, int32_t a, int32_t b) {
  if (c < 0 || a < 0 || b < 0) return -1;
  int32_t in[3] = {c, a, b};
  return lw_emit(lw, RLX_OP_WHERE, NULL, in, 3);
}

/* The summed loss of class targets t [N]; *den gets sum_n w_n. rows [N] is
 * the per-row loss. */
static int32_t class_rows(rlx_lower *lw, int32_t z, int32_t lse, int32_t t, int32_t weight, int64_t ignore,
                          int32_t *wsum) {
  rlx_dtype dt = lw_val(lw, z)->dtype;
  int64_t N = lw_val(lw, z)->shape.dims[0];
  int32_t ig = lw_scalar(lw, RLX_DTYPE_I64, (double)ignore, ignore);
  int32_t mask = ig < 0 ? -1 : lw_binary(lw, RLX_BINARY_EQ, t, ig);
  int32_t tc = where(lw, mask, lw_scalar(lw, RLX_DTYPE_I64, 0, 0), t); /* ignored rows read class 0 */
  rlx_shape col = {.rank = 2, .dims = {N, 1}}, row = {.rank = 1, .dims = {N}};
  rlx_params gp = {.scatter = {.axis = 1}};
  int32_t gin[2] = {z, lw_reshape(lw, tc, &col)};
  int32_t zt = gin[1] < 0 ? -1 : lw_reshape(lw, lw_emit(lw, RLX_OP_GATHER_ELEMENTS, &gp, gin, 2), &row);
  int32_t w;
  if (weight >= 0) {
    rlx_params wp = {.gather = {.axis = 0}};
    int32_t win[2] = {weight, tc};
    w = tc < 0 ? -1 : lw_emit(lw, RLX_OP_GATHER, &wp, win, 2);
  } else {
    w = lw_scalar(lw, dt, 1, 1);
  }
  w = where(lw, mask, lw_scalar(lw, dt, 0, 0), w); /* [N] */
  *wsum = reduce(lw, RLX_REDUCE_SUM, 1, false, w);
  int32_t d = zt < 0 ? -1 : lw_binary(lw, RLX_BINARY_SUB, lse, zt);
  return d < 0 || w < 0 ? -1 : lw_binary(lw, RLX_BINARY_MUL, d, w);
}

/* Per-row loss of probability targets t [N, C]. */
static int32_t prob_rows(rlx_lower *lw, int32_t z, int32_t lse, int32_t t, int32_t weight) {
  const rlx_shape zs = lw_val(lw, z)->shape;
  rlx_shape col = {.rank = 2, .dims = {zs.dims[0], 1}}, wr = {.rank = 2, .dims = {1, zs.dims[1]}};
  int32_t d = lw_binary(lw, RLX_BINARY_SUB, lw_reshape(lw, lse, &col), z);
  int32_t wt = weight >= 0 ? lw_binary(lw, RLX_BINARY_MUL, t, lw_reshape(lw, weight, &wr)) : t;
  int32_t pr = d < 0 || wt < 0 ? -1 : lw_binary(lw, RLX_BINARY_MUL, wt, d);
  return reduce(lw, RLX_REDUCE_SUM, 2, false, pr);
}

static rlx_status grad_outputs(rlx_lower *lw, const rlx_aten_node *n, int32_t *outs) {
  static const char *const names[3] = {"compute_input_grad", "compute_linear_weight_grad",
                                       "compute_linear_bias_grad"};
  for (int k = 1; k < 4 && k < n->n_outs; k++) {
    bool on;
    rlx_status st = lw_bool(lw, n, 11 + k, names[k - 1], false, &on);
    if (st) return st;
    if (!lw_out_used(lw, n, k)) continue;
    if (on)
      return lw_fail(RLX_ERR_UNSUPPORTED, "linear_cross_entropy: output %d is a gradient (%s is true); rlx runs "
                     "the forward only", k, names[k - 1]);
    const rlx_tinfo *t = lw_out(n, k);
    if (!t) return lw_fail(RLX_ERR_FORMAT, "output %d's type is not recorded", k);
    rlx_params p = {.full = {.dtype = t->dtype, .shape = t->shape}};
    if ((outs[k] = lw_emit(lw, RLX_OP_FULL, &p, NULL, 0)) < 0) return rlx_last_status();
  }
  return RLX_OK;
}

rlx_status rlx_lower_linear_cross_entropy(rlx_lower *lw, const rlx_aten_node *n) {
  bool none = lw_is(n, "_linear_cross_entropy_batch_chunked_no_reduction");
  int32_t x, w, t, b, weight;
  int64_t ignore;
  double smoothing = 0;
  rlx_status st = lw_tensor(lw, n, 0, "input", &x);
  if (!st) st = lw_tensor(lw, n, 1, "linear_weight", &w);
  if (!st) st = lw_tensor(lw, n, 2, "target", &t);
  if (!st) st = lw_opt_tensor(lw, n, 3, "linear_bias", &b);
  if (!st) st = lw_opt_tensor(lw, n, 4, "weight", &weight);
  if (!st) st = lw_int(lw, n, none ? 5 : 6, "ignore_index", -100, &ignore);
  if (!st && !none) st = lw_float(lw, n, 7, "label_smoothing", 0, &smoothing);
  if (st) return st;
  const char *reduction = "none";
  if (!none) {
    const rlx_arg *ra = lw_arg(n, 5, "reduction");
    if (!ra || ra->kind != RLX_ARG_STR) return lw_fail(RLX_ERR_INVALID_ARGUMENT, "argument 'reduction' must be a string");
    reduction = ra->u.s;
    if (strcmp(reduction, "mean") && strcmp(reduction, "sum"))
      return lw_fail(RLX_ERR_UNSUPPORTED, "linear_cross_entropy does not support reduction='%s'", reduction);
  }
  if (smoothing > 0) return lw_fail(RLX_ERR_UNSUPPORTED, "linear_cross_entropy does not support label smoothing");
  const rlx_value *xv = lw_val(lw, x), *wv = lw_val(lw, w), *tv = lw_val(lw, t);
  rlx_dtype dt = xv->dtype;
  if (!rlx_dtype_is_float(dt)) return lw_fail(RLX_ERR_UNSUPPORTED, "linear_cross_entropy of a %s input", rlx_dtype_name(dt));
  if (xv->shape.rank != 2 || wv->shape.rank != 2 || xv->shape.dims[1] != wv->shape.dims[1])
    return lw_fail(RLX_ERR_SHAPE, "linear_cross_entropy needs input [N, F] and linear_weight [C, F]");
  int64_t N = xv->shape.dims[0], C = wv->shape.dims[0];
  bool prob = rlx_dtype_is_float(tv->dtype);
  if (prob ? (tv->dtype != dt || tv->shape.rank != 2 || tv->shape.dims[0] != N || tv->shape.dims[1] != C)
           : (tv->dtype != RLX_DTYPE_I64 || tv->shape.rank != 1 || tv->shape.dims[0] != N))
    return lw_fail(RLX_ERR_SHAPE, "linear_cross_entropy: target must be int64 [N] or %s [N, C] probabilities",
                   rlx_dtype_name(dt));
  /* z [N, C] = x @ w^T + b, in the input's dtype */
  rlx_params mp = {.matmul = {.trans_b = true, .alpha = 1, .beta = 1}};
  int32_t in[3] = {x, lw_cast(lw, w, dt), lw_cast(lw, b, dt)};
  int32_t z = lw_emit(lw, RLX_OP_MATMUL, &mp, in, b >= 0 ? 3 : 2);
  int32_t lse = reduce(lw, RLX_REDUCE_LOGSUMEXP, 2, false, z);
  if (weight >= 0 && (weight = lw_cast(lw, weight, dt)) < 0) return rlx_last_status();
  int32_t wsum = -1, rows = lse < 0 ? -1 : prob ? prob_rows(lw, z, lse, t, weight)
                                                : class_rows(lw, z, lse, t, weight, ignore, &wsum);
  int32_t loss = rows;
  if (!none && rows >= 0) {
    loss = reduce(lw, RLX_REDUCE_SUM, 1, false, rows);
    if (!strcmp(reduction, "mean")) {
      int32_t den = prob ? lw_scalar(lw, dt, (double)N, N) : wsum;
      int32_t q = den < 0 ? -1 : lw_binary(lw, RLX_BINARY_DIV, loss, den);
      int32_t zero = den < 0 ? -1 : lw_binary(lw, RLX_BINARY_EQ, den, lw_scalar(lw, dt, 0, 0));
      loss = where(lw, zero, lw_scalar(lw, dt, NAN, 0), q); /* torch: NaN when nothing counts */
    }
  }
  if (loss < 0) return rlx_last_status();
  if (none || n->out_kind != RLX_OUT_LIST) return lw_bind(lw, n, loss);
  int32_t outs[4] = {loss, -1, -1, -1};
  if ((st = grad_outputs(lw, n, outs))) return st;
  return lw_bind_multi(lw, n, outs, RLX_MIN(n->n_outs, 4));
}
