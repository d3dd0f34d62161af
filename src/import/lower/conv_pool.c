/*
 * conv_pool.c — lowering of convolution (aten.convolution and the conv1d /
 * conv2d / conv3d / conv_transpose front-ends, including padding="same"),
 * max/avg pooling (with indices, dilation, ceil_mode, count_include_pad,
 * divisor_override) and adaptive pooling.
 */
#include "import/lower/lower.h"

/* Reads an nd-entry parameter list (a 1-entry list is repeated, an absent or
 * empty one is `def`) whose entries must lie in [lo, RLX_MAX_PARAM]; fails on
 * any other length. *given (may be NULL): whether the list had entries. */
static rlx_status spatial_p(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int nd, int64_t def,
                            int64_t lo, int64_t *out, bool *given) {
  int64_t v[RLX_MAX_SPATIAL];
  int cnt;
  rlx_status st = lw_ints(lw, n, pos, name, v, RLX_MAX_SPATIAL, &cnt);
  if (st) return st;
  if (cnt > 1 && cnt != nd)
    return lw_fail(RLX_ERR_SHAPE, "'%s' has %d entries for %d spatial dims", name, cnt, nd);
  if ((st = lw_check_params(v, cnt, lo, name))) return st;
  for (int i = 0; i < nd; i++) out[i] = cnt == 0 ? def : cnt == 1 ? v[0] : v[i];
  if (given) *given = cnt > 0;
  return RLX_OK;
}

static rlx_status spatial(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int nd, int64_t def,
                          int64_t lo, int64_t *out) {
  return spatial_p(lw, n, pos, name, nd, def, lo, out, NULL);
}

rlx_status rlx_lower_convolution(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, w, b;
  rlx_status st = lw_tensor(lw, n, 0, "input", &x);
  if (!st) st = lw_tensor(lw, n, 1, "weight", &w);
  if (!st) st = lw_opt_tensor(lw, n, 2, "bias", &b);
  if (st) return st;
  const rlx_shape ws = lw_val(lw, w)->shape; /* a copy: emitting nodes may move the values */
  int nd = ws.rank - 2;
  if (nd < 1 || nd > 3) return lw_fail(RLX_ERR_UNSUPPORTED, "convolution with a rank-%d weight", ws.rank);
  rlx_dtype xt = lw_val(lw, x)->dtype, wt = lw_val(lw, w)->dtype;
  if (xt != wt || (b >= 0 && lw_val(lw, b)->dtype != xt)) /* torch: "expected scalar type Float but found Double" */
    return lw_fail(RLX_ERR_SHAPE, "convolution of a %s input with a %s weight%s%s", rlx_dtype_name(xt),
                   rlx_dtype_name(wt), b >= 0 ? " and a bias of " : "",
                   b >= 0 ? rlx_dtype_name(lw_val(lw, b)->dtype) : "");
  for (int i = 0; i < nd; i++)
    if (ws.dims[2 + i] < 1 || ws.dims[2 + i] > RLX_MAX_PARAM)
      return lw_fail(RLX_ERR_SHAPE, "the weight's kernel size %lld on spatial axis %d must be in [1, 2^31]",
                     (long long)ws.dims[2 + i], i);
  rlx_params p;
  memset(&p, 0, sizeof p);
  rlx_conv_params *c = &p.conv;
  c->nd = nd;
  bool generic = lw_is(n, "convolution");
  c->transposed = lw_is(n, "conv_transpose1d") || lw_is(n, "conv_transpose2d");
  int64_t groups = 1;
  const rlx_arg *pad_arg = lw_arg(n, 4, "padding");
  bool same = pad_arg && pad_arg->kind == RLX_ARG_STR && !strcmp(pad_arg->u.s, "same");
  bool valid = pad_arg && pad_arg->kind == RLX_ARG_STR && !strcmp(pad_arg->u.s, "valid");
  if ((st = spatial(lw, n, 3, "stride", nd, 1, 1, c->stride))) return st;
  if (!same && !valid && (st = spatial(lw, n, 4, "padding", nd, 0, 0, c->pad))) return st;
  if (generic) {
    if ((st = spatial(lw, n, 5, "dilation", nd, 1, 1, c->dilation)) ||
        (st = lw_bool(lw, n, 6, "transposed", false, &c->transposed)) ||
        (st = spatial(lw, n, 7, "output_padding", nd, 0, 0, c->out_pad)) ||
        (st = lw_int_in(lw, n, 8, "groups", 1, 1, RLX_MAX_PARAM, &groups)))
      return st;
  } else if (c->transposed) { /* conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation) */
    if ((st = spatial(lw, n, 5, "output_padding", nd, 0, 0, c->out_pad)) ||
        (st = lw_int_in(lw, n, 6, "groups", 1, 1, RLX_MAX_PARAM, &groups)) ||
        (st = spatial(lw, n, 7, "dilation", nd, 1, 1, c->dilation)))
      return st;
  } else { /* conv(x, w, b, stride, padding, dilation, groups) */
    if ((st = spatial(lw, n, 5, "dilation", nd, 1, 1, c->dilation)) ||
        (st = lw_int_in(lw, n, 6, "groups", 1, 1, RLX_MAX_PARAM, &groups)))
      return st;
  }
  c->groups = groups;
  for (int i = 0; c->transposed && i < nd; i++)
    if (c->out_pad[i] >= c->stride[i] && c->out_pad[i] >= c->dilation[i])
      return lw_fail(RLX_ERR_SHAPE, "'output_padding'[%d] = %lld must be smaller than the stride (%lld) or the "
                     "dilation (%lld)", i, (long long)c->out_pad[i], (long long)c->stride[i],
                     (long long)c->dilation[i]);
  for (int i = 0; same && i < nd; i++) /* torch refuses padding='same' with strides */
    if (c->stride[i] != 1)
      return lw_fail(RLX_ERR_UNSUPPORTED, "padding='same' with 'stride'[%d] = %lld (torch supports it only for "
                     "stride 1)", i, (long long)c->stride[i]);
  const rlx_tinfo *t = lw_out(n, 0);
  rlx_dtype ot = t ? t->dtype : lw_val(lw, x)->dtype, ct = ot == RLX_DTYPE_F64 ? ot : RLX_DTYPE_F32;
  x = lw_cast(lw, x, ct), w = lw_cast(lw, w, ct), b = lw_cast(lw, b, ct);
  if (x < 0 || w < 0) return rlx_last_status();
  bool unbatched = lw_val(lw, x)->shape.rank == nd + 1;
  if (unbatched) {
    rlx_shape s = lw_val(lw, x)->shape;
    memmove(s.dims + 1, s.dims, sizeof(int64_t) * (size_t)s.rank);
    s.dims[0] = 1, s.rank++;
    x = lw_reshape(lw, x, &s);
  }
  if (same) { /* total padding d*(k-1) per axis; an odd total pads one more at the end */
    rlx_params pp;
    memset(&pp, 0, sizeof pp);
    bool asym = false;
    for (int i = 0; i < nd; i++) {
      int64_t total = c->dilation[i] * (ws.dims[2 + i] - 1); /* both <= 2^31: no overflow */
      c->pad[i] = total / 2;
      pp.pad.hi[2 + i] = total % 2;
      asym |= total % 2;
    }
    if (asym) x = lw_emit(lw, RLX_OP_PAD, &pp, &x, 1);
  }
  int32_t in[3] = {x, w, b};
  int32_t y = lw_emit(lw, RLX_OP_CONV, &p, in, b >= 0 ? 3 : 2);
  if (y >= 0 && t) y = lw_cast(lw, lw_reshape(lw, y, &t->shape), t->dtype);
  return lw_bind(lw, n, y);
}

static int pool_nd(const rlx_aten_node *n) {
  return lw_is(n, "max_pool1d") || lw_is(n, "avg_pool1d") || lw_is(n, "adaptive_avg_pool1d") ||
                 lw_is(n, "adaptive_max_pool1d") ? 1
         : lw_is(n, "max_pool3d") || lw_is(n, "max_pool3d_with_indices") || lw_is(n, "avg_pool3d") ||
                 lw_is(n, "adaptive_avg_pool3d") || lw_is(n, "_adaptive_avg_pool3d") ||
                 lw_is(n, "adaptive_max_pool3d") ? 3 : 2;
}

/* Emits a pooling node with 1 or 2 outputs and binds the aten node. */
static rlx_status emit_pool(rlx_lower *lw, const rlx_aten_node *n, rlx_op op, const rlx_params *p,
                            int32_t x) {
  bool with_idx = n->out_kind == RLX_OUT_LIST;
  int n_out = with_idx && lw_out_used(lw, n, 1) ? 2 : 1;
  int32_t k = lw_emit_node(lw, op, p, &x, 1, n_out);
  if (k < 0) return rlx_last_status();
  int32_t outs[2] = {lw->g->nodes[k].out[0], n_out == 2 ? lw->g->nodes[k].out[1] : -1};
  return with_idx ? lw_bind_multi(lw, n, outs, 2) : lw_bind(lw, n, outs[0]);
}

rlx_status rlx_lower_pool(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  rlx_params p;
  memset(&p, 0, sizeof p);
  rlx_pool_params *pp = &p.pool;
  int nd = pool_nd(n);
  pp->nd = nd;
  bool is_max = lw_is(n, "max_pool1d") || lw_is(n, "max_pool2d") || lw_is(n, "max_pool3d") ||
                lw_is(n, "max_pool2d_with_indices") || lw_is(n, "max_pool3d_with_indices");
  pp->kind = is_max ? RLX_POOL_MAX : RLX_POOL_AVG;
  bool stride_given;
  if ((st = spatial(lw, n, 1, "kernel_size", nd, 1, 1, pp->kernel)) ||
      (st = spatial_p(lw, n, 2, "stride", nd, 0, 1, pp->stride, &stride_given)) ||
      (st = spatial(lw, n, 3, "padding", nd, 0, 0, pp->pad)))
    return st;
  for (int i = 0; i < nd; i++) {
    if (!stride_given) pp->stride[i] = pp->kernel[i]; /* stride=[] means the kernel size */
    pp->dilation[i] = 1;
  }
  if (is_max) {
    if ((st = spatial(lw, n, 4, "dilation", nd, 1, 1, pp->dilation)) ||
        (st = lw_bool(lw, n, 5, "ceil_mode", false, &pp->ceil_mode)))
      return st;
  } else {
    int64_t div = 0;
    if ((st = lw_bool(lw, n, 4, "ceil_mode", false, &pp->ceil_mode)) ||
        (st = lw_bool(lw, n, 5, "count_include_pad", true, &pp->count_include_pad)))
      return st;
    if (lw_arg(n, 6, "divisor_override")) { /* torch: not zero when given; 0 here means none */
      if ((st = lw_int(lw, n, 6, "divisor_override", 0, &div))) return st;
      if (div == 0 || div < -RLX_MAX_PARAM || div > RLX_MAX_PARAM)
        return lw_fail(RLX_ERR_SHAPE, "argument 'divisor_override' is %lld; it must be non-zero and at most 2^31 "
                       "in magnitude", (long long)div);
    }
    pp->divisor_override = div;
  }
  return emit_pool(lw, n, RLX_OP_POOL, &p, x);
}

rlx_status rlx_lower_adaptive_pool(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (st) return st;
  rlx_params p;
  memset(&p, 0, sizeof p);
  int nd = pool_nd(n);
  p.adaptive_pool.nd = nd;
  p.adaptive_pool.kind = lw_is(n, "adaptive_max_pool1d") || lw_is(n, "adaptive_max_pool2d") ||
                                 lw_is(n, "adaptive_max_pool3d") ? RLX_POOL_MAX : RLX_POOL_AVG;
  if ((st = spatial(lw, n, 1, "output_size", nd, 1, 0, p.adaptive_pool.out))) return st;
  const rlx_value *xv = lw_val(lw, x);
  for (int i = 0; i < nd; i++) /* a None entry in output_size keeps the input size */
    if (p.adaptive_pool.out[i] <= 0 && xv->shape.rank >= nd)
      p.adaptive_pool.out[i] = xv->shape.dims[xv->shape.rank - nd + i];
  return emit_pool(lw, n, RLX_OP_ADAPTIVE_POOL, &p, x);
}
