/*
 * conv_pool.c — lowering of convolution (aten.convolution and the conv1d /
 * conv2d / conv3d / conv_transpose front-ends, including padding="same"),
 * max/avg pooling (with indices, dilation, ceil_mode, count_include_pad,
 * divisor_override) and adaptive pooling.
 */
#include "import/lower/lower.h"

/* Expands a 1-entry list to nd entries; fails on any other length. */
static rlx_status spatial(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, int nd, int64_t def,
                          int64_t *out) {
  int64_t v[RLX_MAX_SPATIAL];
  int cnt;
  rlx_status st = lw_ints(lw, n, pos, name, v, RLX_MAX_SPATIAL, &cnt);
  if (st) return st;
  for (int i = 0; i < nd; i++) out[i] = cnt == 0 ? def : cnt == 1 ? v[0] : v[i];
  if (cnt > 1 && cnt != nd)
    return lw_fail(RLX_ERR_SHAPE, "'%s' has %d entries for %d spatial dims", name, cnt, nd);
  return RLX_OK;
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
  if ((st = spatial(lw, n, 3, "stride", nd, 1, c->stride))) return st;
  if (!same && !valid && (st = spatial(lw, n, 4, "padding", nd, 0, c->pad))) return st;
  if (generic) {
    if ((st = spatial(lw, n, 5, "dilation", nd, 1, c->dilation)) ||
        (st = lw_bool(lw, n, 6, "transposed", false, &c->transposed)) ||
        (st = spatial(lw, n, 7, "output_padding", nd, 0, c->out_pad)) || (st = lw_int(lw, n, 8, "groups", 1, &groups)))
      return st;
  } else if (c->transposed) { /* conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation) */
    if ((st = spatial(lw, n, 5, "output_padding", nd, 0, c->out_pad)) || (st = lw_int(lw, n, 6, "groups", 1, &groups)) ||
        (st = spatial(lw, n, 7, "dilation", nd, 1, c->dilation)))
      return st;
  } else { /* conv(x, w, b, stride, padding, dilation, groups) */
    if ((st = spatial(lw, n, 5, "dilation", nd, 1, c->dilation)) || (st = lw_int(lw, n, 6, "groups", 1, &groups)))
      return st;
  }
  c->groups = groups;
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
      int64_t total = c->dilation[i] * (ws.dims[2 + i] - 1);
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
  if ((st = spatial(lw, n, 1, "kernel_size", nd, 1, pp->kernel)) ||
      (st = spatial(lw, n, 2, "stride", nd, 0, pp->stride)) || (st = spatial(lw, n, 3, "padding", nd, 0, pp->pad)))
    return st;
  for (int i = 0; i < nd; i++) {
    if (!pp->stride[i]) pp->stride[i] = pp->kernel[i]; /* stride=[] means the kernel size */
    pp->dilation[i] = 1;
  }
  if (is_max) {
    if ((st = spatial(lw, n, 4, "dilation", nd, 1, pp->dilation)) || (st = lw_bool(lw, n, 5, "ceil_mode", false, &pp->ceil_mode)))
      return st;
  } else {
    int64_t div;
    if ((st = lw_bool(lw, n, 4, "ceil_mode", false, &pp->ceil_mode)) ||
        (st = lw_bool(lw, n, 5, "count_include_pad", true, &pp->count_include_pad)) ||
        (st = lw_int(lw, n, 6, "divisor_override", 0, &div)))
      return st;
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
  if ((st = spatial(lw, n, 1, "output_size", nd, 1, p.adaptive_pool.out))) return st;
  const rlx_value *xv = lw_val(lw, x);
  for (int i = 0; i < nd; i++) /* a None entry in output_size keeps the input size */
    if (p.adaptive_pool.out[i] <= 0 && xv->shape.rank >= nd)
      p.adaptive_pool.out[i] = xv->shape.dims[xv->shape.rank - nd + i];
  return emit_pool(lw, n, RLX_OP_ADAPTIVE_POOL, &p, x);
}
