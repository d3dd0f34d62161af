/*
 * norm_train.c — batch norm in training mode with its running-statistics
 * update, the functional forms torch.export records for a BatchNorm layer in
 * train() (the buffer updates come back as outputs, which the exporter turns
 * into mutations):
 *
 *   _native_batch_norm_legit_functional(x, w, b, running_mean, running_var,
 *       training, momentum, eps) -> (y, save_mean, save_invstd, new_mean, new_var)
 *   _batch_norm_with_update_functional(x, w, b, running_mean, running_var,
 *       momentum, eps) -> (y, save_mean, save_invstd, reserve, new_mean, new_var)
 *
 * With x [N, C, *] and n = N * prod(*) elements per channel, as torch's CPU
 * kernel (batch_norm_cpu_update_stats_template):
 *
 *   mean = sum(x) / n, var = sum((x - mean)^2) / n          per channel
 *   y = (x - mean) / sqrt(var + eps) * w + b                 the batch_norm op
 *   save_invstd = 1 / sqrt(var + eps)
 *   new_mean = momentum * mean + (1 - momentum) * running_mean
 *   new_var = momentum * var * n / (n - 1) + (1 - momentum) * running_var
 *
 * the update in double (torch's momentum is a double), so n = 1 gives a NaN
 * variance update, as eager torch's 0 / 0 (torch.export itself refuses n = 1). With training false the output uses the
 * running statistics, save_mean and save_invstd are empty and the running
 * statistics come back unchanged. reserve is an empty uint8 tensor.
 */
#include "import/lower/lower.h"

static int32_t scalar_op(rlx_lower *lw, rlx_binary_kind k, int32_t x, double v) {
  if (x < 0) return -1;
  int32_t s = lw_scalar(lw, lw_val(lw, x)->dtype, v, 0);
  return s < 0 ? -1 : lw_binary(lw, k, x, s);
}

/* momentum * stat + (1 - momentum) * running, in f64, as output k's type. */
static int32_t ema(rlx_lower *lw, const rlx_aten_node *n, int k, int32_t stat, int32_t running, double momentum) {
  const rlx_tinfo *t = lw_out(n, k);
  if (!t) return lw_fail(RLX_ERR_FORMAT, "output %d's type is not recorded", k), -1;
  rlx_shape c = {.rank = 1, .dims = {lw_val(lw, running)->shape.dims[0]}};
  int32_t a = scalar_op(lw, RLX_BINARY_MUL, lw_reshape(lw, lw_cast(lw, stat, RLX_DTYPE_F64), &c), momentum);
  int32_t b = scalar_op(lw, RLX_BINARY_MUL, lw_cast(lw, running, RLX_DTYPE_F64), 1.0 - momentum);
  int32_t s = a < 0 || b < 0 ? -1 : lw_binary(lw, RLX_BINARY_ADD, a, b);
  return s < 0 ? -1 : lw_cast(lw, lw_reshape(lw, s, &t->shape), t->dtype);
}

static int32_t empty_like_out(rlx_lower *lw, const rlx_aten_node *n, int k) {
  const rlx_tinfo *t = lw_out(n, k);
  if (!t) return lw_fail(RLX_ERR_FORMAT, "output %d's type is not recorded", k), -1;
  rlx_params p = {.full = {.dtype = t->dtype, .shape = t->shape}};
  return lw_emit(lw, RLX_OP_FULL, &p, NULL, 0);
}

rlx_status rlx_lower_batch_norm_train(rlx_lower *lw, const rlx_aten_node *n) {
  bool with_update = lw_is(n, "_batch_norm_with_update_functional"), training = true;
  int32_t x, w, b, rm, rv;
  double momentum, eps;
  rlx_status st = lw_tensor(lw, n, 0, "input", &x);
  if (!st) st = lw_opt_tensor(lw, n, 1, "weight", &w);
  if (!st) st = lw_opt_tensor(lw, n, 2, "bias", &b);
  if (!st) st = lw_tensor(lw, n, 3, "running_mean", &rm);
  if (!st) st = lw_tensor(lw, n, 4, "running_var", &rv);
  if (!st && !with_update) st = lw_bool(lw, n, 5, "training", true, &training);
  if (!st) st = lw_float(lw, n, with_update ? 5 : 6, "momentum", 0.1, &momentum);
  if (!st) st = lw_float(lw, n, with_update ? 6 : 7, "eps", 1e-5, &eps);
  if (st) return st;
  const rlx_value *xv = lw_val(lw, x);
  rlx_dtype t = xv->dtype;
  if (!rlx_dtype_is_float(t)) return lw_fail(RLX_ERR_UNSUPPORTED, "batch_norm of a %s tensor", rlx_dtype_name(t));
  const rlx_shape xs = xv->shape;
  if (xs.rank < 2) return lw_fail(RLX_ERR_SHAPE, "batch_norm needs an input of rank >= 2 ([N, C, ...]), got %d",
                                  xs.rank);
  int64_t C = xs.dims[1];
  for (int k = 0; k < 2; k++) {
    const rlx_shape *s = &lw_val(lw, k ? rv : rm)->shape;
    if (s->rank != 1 || s->dims[0] != C)
      return lw_fail(RLX_ERR_SHAPE, "%s must have shape [%lld] (the input's channels)",
                     k ? "running_var" : "running_mean", (long long)C);
  }
  int n_outs = with_update ? 6 : 5, im = with_update ? 4 : 3;
  if (n->out_kind != RLX_OUT_LIST || n->n_outs != n_outs)
    return lw_fail(RLX_ERR_FORMAT, "%s must record %d outputs", n->op, n_outs);
  int32_t outs[6] = {-1, -1, -1, -1, -1, -1};
  rlx_params p = {.norm = {.eps = eps}};
  if (!training) {
    int32_t in[5] = {x, lw_cast(lw, rm, t), lw_cast(lw, rv, t), lw_cast(lw, w, t), lw_cast(lw, b, t)};
    if ((outs[0] = lw_emit(lw, RLX_OP_BATCH_NORM, &p, in, 5)) < 0) return rlx_last_status();
    for (int k = 1; k < 3; k++)
      if (lw_out_used(lw, n, k) && (outs[k] = empty_like_out(lw, n, k)) < 0) return rlx_last_status();
    outs[3] = lw_cast(lw, rm, lw_out(n, 3) ? lw_out(n, 3)->dtype : t);
    outs[4] = lw_cast(lw, rv, lw_out(n, 4) ? lw_out(n, 4)->dtype : t);
    return outs[3] < 0 || outs[4] < 0 ? rlx_last_status() : lw_bind_multi(lw, n, outs, n_outs);
  }
  int64_t cnt = C ? rlx_shape_numel(&xs) / C : 0; /* elements per channel */
  int32_t in[5] = {x, -1, -1, lw_cast(lw, w, t), lw_cast(lw, b, t)};
  if ((outs[0] = lw_emit(lw, RLX_OP_BATCH_NORM, &p, in, 5)) < 0) return rlx_last_status();
  uint32_t axes = ((1u << xs.rank) - 1) & ~2u;
  rlx_params pm = {.reduce = {.kind = RLX_REDUCE_MEAN, .axes = axes}};
  rlx_params pv = {.reduce = {.kind = RLX_REDUCE_VAR, .axes = axes, .correction = 0}};
  int32_t mean = lw_emit(lw, RLX_OP_REDUCE, &pm, &x, 1), var = mean < 0 ? -1 : lw_emit(lw, RLX_OP_REDUCE, &pv, &x, 1);
  if (var < 0) return rlx_last_status();
  const rlx_tinfo *tm = lw_out(n, 1), *tr = lw_out(n, 2);
  if (!tm || !tr) return lw_fail(RLX_ERR_FORMAT, "save_mean / save_invstd types are not recorded");
  rlx_params pr = {.unary = {.kind = RLX_UNARY_RSQRT}};
  int32_t ve = scalar_op(lw, RLX_BINARY_ADD, var, eps);
  int32_t rstd = ve < 0 ? -1 : lw_emit(lw, RLX_OP_UNARY, &pr, &ve, 1);
  outs[1] = lw_cast(lw, lw_reshape(lw, mean, &tm->shape), tm->dtype);
  outs[2] = rstd < 0 ? -1 : lw_cast(lw, lw_reshape(lw, rstd, &tr->shape), tr->dtype);
  if (outs[1] < 0 || outs[2] < 0) return rlx_last_status();
  if (with_update && lw_out_used(lw, n, 3) && (outs[3] = empty_like_out(lw, n, 3)) < 0) return rlx_last_status();
  int32_t unbiased = scalar_op(lw, RLX_BINARY_DIV, scalar_op(lw, RLX_BINARY_MUL, lw_cast(lw, var, RLX_DTYPE_F64),
                                                               (double)cnt), (double)cnt - 1);
  outs[im] = ema(lw, n, im, mean, rm, momentum);
  outs[im + 1] = unbiased < 0 ? -1 : ema(lw, n, im + 1, unbiased, rv, momentum);
  if (outs[im] < 0 || outs[im + 1] < 0) return rlx_last_status();
  return lw_bind_multi(lw, n, outs, n_outs);
}
