/*
 * norm.c — lowering of layer_norm, rms_norm, group_norm, batch_norm (all
 * aten spellings; inference statistics only) and softmax / log_softmax.
 */
#include "import/lower/lower.h"

/* mean and rstd = 1 / sqrt(var + eps) of x reshaped to `rs` over `axes`,
 * reshaped to the recorded shapes of outputs 1 and 2, when something uses
 * them (native_layer_norm, native_group_norm). */
static rlx_status norm_stats(rlx_lower *lw, const rlx_aten_node *n, int32_t x, const rlx_shape *rs,
                             uint32_t axes, double eps, int32_t *outs) {
  if (n->out_kind != RLX_OUT_LIST || n->n_outs < 3 || (!lw_out_used(lw, n, 1) && !lw_out_used(lw, n, 2)))
    return RLX_OK;
  const rlx_tinfo *tm = lw_out(n, 1), *tr = lw_out(n, 2);
  if (!tm || !tr) return lw_fail(RLX_ERR_FORMAT, "mean/rstd output types are not recorded");
  int32_t xr = lw_reshape(lw, x, rs);
  rlx_params pm = {.reduce = {.kind = RLX_REDUCE_MEAN, .axes = axes, .keepdim = true}};
  rlx_params pv = {.reduce = {.kind = RLX_REDUCE_VAR, .axes = axes, .keepdim = true, .correction = 0}};
  int32_t mean = xr < 0 ? -1 : lw_emit(lw, RLX_OP_REDUCE, &pm, &xr, 1);
  int32_t var = xr < 0 ? -1 : lw_emit(lw, RLX_OP_REDUCE, &pv, &xr, 1);
  int32_t e = var < 0 ? -1 : lw_scalar(lw, lw_val(lw, var)->dtype, eps, 0);
  int32_t ve = e < 0 ? -1 : lw_binary(lw, RLX_BINARY_ADD, var, e);
  rlx_params pr = {.unary = {.kind = RLX_UNARY_RSQRT}};
  int32_t rstd = ve < 0 ? -1 : lw_emit(lw, RLX_OP_UNARY, &pr, &ve, 1);
  outs[1] = lw_cast(lw, lw_reshape(lw, mean, &tm->shape), tm->dtype);
  outs[2] = lw_cast(lw, lw_reshape(lw, rstd, &tr->shape), tr->dtype);
  return outs[1] < 0 || outs[2] < 0 ? rlx_last_status() : RLX_OK;
}

/* Binds y as output 0 of a node that may record (y, mean, rstd). */
static rlx_status bind_first(rlx_lower *lw, const rlx_aten_node *n, int32_t y) {
  if (n->out_kind != RLX_OUT_LIST) return lw_bind(lw, n, y);
  if (y < 0) return rlx_last_status();
  int32_t outs[8];
  int cnt = RLX_MIN(n->n_outs, 8);
  for (int i = 0; i < cnt; i++) outs[i] = i ? -1 : y;
  return lw_bind_multi(lw, n, outs, cnt);
}

/* normalized_shape must be the trailing dims of x (torch's check). */
static rlx_status check_normalized(rlx_lower *lw, int32_t x, const int64_t *shape, int cnt) {
  const rlx_shape *xs = &lw_val(lw, x)->shape;
  bool ok = cnt <= xs->rank;
  for (int i = 0; ok && i < cnt; i++) ok = shape[i] == xs->dims[xs->rank - cnt + i];
  if (ok) return RLX_OK;
  char b[128];
  return lw_fail(RLX_ERR_SHAPE, "argument 'normalized_shape' (%d dims) is not the trailing dims of the input %s",
                 cnt, rlx_shape_str(xs, b, sizeof b));
}

static rlx_status need_float(rlx_lower *lw, int32_t x) {
  rlx_dtype t = lw_val(lw, x)->dtype;
  if (!rlx_dtype_is_float(t))
    return lw_fail(RLX_ERR_UNSUPPORTED, "normalization of a %s tensor", rlx_dtype_name(t));
  return RLX_OK;
}

rlx_status rlx_lower_layer_norm(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, w, b;
  int64_t shape[RLX_MAX_RANK];
  int cnt;
  double eps;
  rlx_status st = lw_tensor(lw, n, 0, "input", &x);
  if (!st) st = lw_ints(lw, n, 1, "normalized_shape", shape, RLX_MAX_RANK, &cnt);
  if (!st) st = lw_opt_tensor(lw, n, 2, "weight", &w);
  if (!st) st = lw_opt_tensor(lw, n, 3, "bias", &b);
  if (!st) st = lw_float(lw, n, 4, "eps", 1e-5, &eps);
  if (!st) st = need_float(lw, x);
  if (!st) st = check_normalized(lw, x, shape, cnt);
  if (st) return st;
  rlx_dtype t = lw_val(lw, x)->dtype;
  rlx_params p = {.norm = {.n_axes = cnt, .eps = eps}};
  int32_t in[3] = {x, lw_cast(lw, w, t), lw_cast(lw, b, t)};
  int32_t y = lw_emit(lw, RLX_OP_LAYER_NORM, &p, in, 3), outs[3] = {y, -1, -1};
  const rlx_shape *xs = &lw_val(lw, x)->shape;
  uint32_t axes = 0;
  for (int i = xs->rank - cnt; i < xs->rank; i++) axes |= 1u << i;
  if (y < 0 || (st = norm_stats(lw, n, x, xs, axes, eps, outs))) return y < 0 ? rlx_last_status() : st;
  return n->out_kind == RLX_OUT_LIST ? lw_bind_multi(lw, n, outs, RLX_MIN(n->n_outs, 3)) : lw_bind(lw, n, y);
}

rlx_status rlx_lower_rms_norm(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, w;
  int64_t shape[RLX_MAX_RANK];
  int cnt;
  rlx_status st = lw_tensor(lw, n, 0, "input", &x);
  if (!st) st = lw_ints(lw, n, 1, "normalized_shape", shape, RLX_MAX_RANK, &cnt);
  if (!st) st = lw_opt_tensor(lw, n, 2, "weight", &w);
  if (!st) st = need_float(lw, x);
  if (!st) st = check_normalized(lw, x, shape, cnt);
  if (st) return st;
  rlx_dtype t = lw_val(lw, x)->dtype;
  /* eps=None means the dtype's machine epsilon, as torch.finfo(dtype).eps */
  double def = t == RLX_DTYPE_F64 ? 2.220446049250313e-16 : t == RLX_DTYPE_F16 ? 0.0009765625
               : t == RLX_DTYPE_BF16 ? 0.0078125 : 1.1920928955078125e-07;
  rlx_params p = {.norm = {.n_axes = cnt}};
  if ((st = lw_float(lw, n, 3, "eps", def, &p.norm.eps))) return st;
  int32_t in[2] = {x, lw_cast(lw, w, t)};
  return bind_first(lw, n, lw_emit(lw, RLX_OP_RMS_NORM, &p, in, 2));
}

rlx_status rlx_lower_group_norm(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, w, b;
  int64_t groups;
  double eps;
  rlx_status st = lw_tensor(lw, n, 0, "input", &x);
  if (st) return st;
  if (lw_is(n, "native_group_norm")) { /* (x, w, b, N, C, HxW, group, eps) */
    if (!(st = lw_opt_tensor(lw, n, 1, "weight", &w)) && !(st = lw_opt_tensor(lw, n, 2, "bias", &b)) &&
        !(st = lw_int(lw, n, 6, "group", 1, &groups)))
      st = lw_float(lw, n, 7, "eps", 1e-5, &eps);
  } else { /* (x, num_groups, w, b, eps, cudnn) */
    if (!(st = lw_int(lw, n, 1, "num_groups", 1, &groups)) && !(st = lw_opt_tensor(lw, n, 2, "weight", &w)) &&
        !(st = lw_opt_tensor(lw, n, 3, "bias", &b)))
      st = lw_float(lw, n, 4, "eps", 1e-5, &eps);
  }
  if (!st) st = need_float(lw, x);
  if (st) return st;
  const rlx_shape *gs = &lw_val(lw, x)->shape;
  int64_t C = gs->rank >= 2 ? gs->dims[1] : 0;
  if (gs->rank < 2) return lw_fail(RLX_ERR_SHAPE, "group_norm needs [N, C, ...], got rank %d", gs->rank);
  if (groups < 1 || groups > RLX_MAX_PARAM || C % groups)
    return lw_fail(RLX_ERR_SHAPE, "argument '%s' is %lld; it must be >= 1 and divide the %lld channels",
                   lw_is(n, "native_group_norm") ? "group" : "num_groups", (long long)groups, (long long)C);
  rlx_dtype t = lw_val(lw, x)->dtype;
  rlx_params p = {.norm = {.groups = groups, .eps = eps}};
  int32_t in[3] = {x, lw_cast(lw, w, t), lw_cast(lw, b, t)};
  int32_t y = lw_emit(lw, RLX_OP_GROUP_NORM, &p, in, 3), outs[3] = {y, -1, -1};
  const rlx_shape *xs = &lw_val(lw, x)->shape;
  if (y < 0) return rlx_last_status();
  bool ok = true;
  int64_t ng = rlx_dim_is_sym(xs->dims[0]) ? 1 : lw_mul64(xs->dims[0], groups, &ok); /* an empty input may have a huge N */
  if (!ok) return lw_fail(RLX_ERR_SHAPE, "group_norm: batch times groups overflows");
  rlx_shape rs = {.rank = 3, .dims = {xs->dims[0], groups, 0}};
  if (rlx_shape_is_symbolic(xs)) { /* (C / G) * spatial, as dims */
    rlx_dim inner = C / groups;
    for (int i = 2; i < xs->rank && !st; i++) st = rlx_dim_mul(lw_syms(lw), inner, xs->dims[i], &inner);
    if (st) return st;
    rs.dims[2] = inner;
  } else {
    rs.dims[2] = rlx_shape_numel(xs) / RLX_MAX(ng, 1);
  }
  if ((st = norm_stats(lw, n, x, &rs, 1u << 2, eps, outs))) return st; /* stats over [N, G, C/G * spatial] */
  return n->out_kind == RLX_OUT_LIST ? lw_bind_multi(lw, n, outs, RLX_MIN(n->n_outs, 3)) : lw_bind(lw, n, y);
}

/* batch_norm(x, w, b, mean, var, training, momentum, eps, cudnn)
 * native_batch_norm(x, w, b, mean, var, training, momentum, eps)
 * In training mode (as instance_norm lowers) the batch's statistics are used;
 * the running-stat updates are side effects a functional graph drops.
 * _native_batch_norm_legit(x, w, b, mean, var, training, momentum, eps)
 * _native_batch_norm_legit_no_training(x, w, b, mean, var, momentum, eps)
 * _native_batch_norm_legit.no_stats(x, w, b, training, momentum, eps) */
rlx_status rlx_lower_batch_norm(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, w, b, mean, var;
  bool training = false;
  double eps;
  bool no_training = lw_is(n, "_native_batch_norm_legit_no_training");
  bool no_stats = !strcmp(lw_overload(n), "no_stats"); /* (x, w, b, training, momentum, eps) */
  rlx_status st = lw_tensor(lw, n, 0, "input", &x);
  if (!st) st = lw_opt_tensor(lw, n, 1, "weight", &w);
  if (!st) st = lw_opt_tensor(lw, n, 2, "bias", &b);
  mean = var = -1;
  if (!st && !no_stats) st = lw_opt_tensor(lw, n, 3, "running_mean", &mean);
  if (!st && !no_stats) st = lw_opt_tensor(lw, n, 4, "running_var", &var);
  if (!st && !no_training) st = lw_bool(lw, n, no_stats ? 3 : 5, "training", false, &training);
  if (!st) st = lw_float(lw, n, no_training ? 6 : no_stats ? 5 : 7, "eps", 1e-5, &eps);
  if (!st) st = need_float(lw, x);
  if (st) return st;
  if (training || mean < 0 || var < 0) mean = var = -1; /* batch statistics (instance_norm, training) */
  rlx_dtype t = lw_val(lw, x)->dtype;
  rlx_params p = {.norm = {.eps = eps}};
  bool batch_stats = mean < 0;
  int32_t in[5] = {x, lw_cast(lw, mean, t), lw_cast(lw, var, t), lw_cast(lw, w, t), lw_cast(lw, b, t)};
  int32_t y = lw_emit(lw, RLX_OP_BATCH_NORM, &p, in, 5), outs[3] = {y, -1, -1};
  if (y < 0 || n->out_kind != RLX_OUT_LIST) return bind_first(lw, n, y);
  const rlx_shape *xs = &lw_val(lw, x)->shape;
  if (batch_stats) { /* outputs 1, 2: the batch's mean and 1/sqrt(var + eps) per channel */
    uint32_t axes = ((1u << xs->rank) - 1) & ~2u;
    if ((st = norm_stats(lw, n, x, xs, axes, eps, outs))) return st;
  } else { /* eval: outputs 1, 2 are empty placeholders */
    for (int k = 1; k < 3; k++) {
      const rlx_tinfo *tk = lw_out(n, k);
      if (!tk || !lw_out_used(lw, n, k)) continue;
      rlx_params fp = {.full = {.dtype = tk->dtype, .shape = tk->shape}};
      if ((outs[k] = lw_emit(lw, RLX_OP_FULL, &fp, NULL, 0)) < 0) return rlx_last_status();
    }
  }
  return lw_bind_multi(lw, n, outs, RLX_MIN(n->n_outs, 3));
}

/* instance_norm(x, w, b, running_mean, running_var, use_input_stats, momentum,
 * eps, cudnn): with input statistics it is a group norm with one group per
 * channel; otherwise a batch norm with the running statistics. */
rlx_status rlx_lower_instance_norm(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, w, b, mean, var;
  bool use_stats;
  double eps;
  rlx_status st = lw_tensor(lw, n, 0, "input", &x);
  if (!st) st = lw_opt_tensor(lw, n, 1, "weight", &w);
  if (!st) st = lw_opt_tensor(lw, n, 2, "bias", &b);
  if (!st) st = lw_opt_tensor(lw, n, 3, "running_mean", &mean);
  if (!st) st = lw_opt_tensor(lw, n, 4, "running_var", &var);
  if (!st) st = lw_bool(lw, n, 5, "use_input_stats", true, &use_stats);
  if (!st) st = lw_float(lw, n, 7, "eps", 1e-5, &eps);
  if (!st) st = need_float(lw, x);
  if (st) return st;
  const rlx_value *xv = lw_val(lw, x);
  if (xv->shape.rank < 2) return lw_fail(RLX_ERR_SHAPE, "instance_norm needs [N, C, ...]");
  rlx_dtype t = xv->dtype;
  if (!use_stats && mean >= 0 && var >= 0) {
    rlx_params p = {.norm = {.eps = eps}};
    int32_t in[5] = {x, lw_cast(lw, mean, t), lw_cast(lw, var, t), lw_cast(lw, w, t), lw_cast(lw, b, t)};
    return lw_bind(lw, n, lw_emit(lw, RLX_OP_BATCH_NORM, &p, in, 5));
  }
  rlx_params p = {.norm = {.groups = xv->shape.dims[1], .eps = eps}};
  int32_t in[3] = {x, lw_cast(lw, w, t), lw_cast(lw, b, t)};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_GROUP_NORM, &p, in, 3));
}

/* softmax(x, dim, dtype?), _softmax(x, dim, half_to_float), and the log forms. */
rlx_status rlx_lower_softmax(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  int64_t dim;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_int(lw, n, 1, "dim", -1, &dim);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  rlx_dtype ot = t ? t->dtype : lw_val(lw, x)->dtype;
  if (!rlx_dtype_is_float(ot)) return lw_fail(RLX_ERR_UNSUPPORTED, "softmax to %s", rlx_dtype_name(ot));
  x = lw_cast(lw, x, ot); /* dtype= / half_to_float cast the input first */
  if (x < 0) return rlx_last_status();
  int a;
  if ((st = lw_axis(dim, lw_val(lw, x)->shape.rank, "argument 'dim'", &a))) return st;
  rlx_params p = {.softmax = {.axis = a, .log = lw_is(n, "log_softmax") || lw_is(n, "_log_softmax")}};
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_SOFTMAX, &p, &x, 1));
}
