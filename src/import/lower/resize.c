/*
 * resize.c — lowering of interpolation: upsample_{nearest,linear,bilinear,
 * trilinear,bicubic}{1,2,3}d in .vec and .default forms, the nearest-exact and
 * antialiased (_aa) variants, and grid_sampler / grid_sampler_2d.
 */
#include "import/lower/lower.h"

typedef struct resize_kind {
  const char *aten;
  rlx_resize_mode mode;
  int nd;
  bool antialias, has_align;
} resize_kind;

static const resize_kind kinds[] = {
    {"upsample_nearest1d", RLX_RESIZE_NEAREST, 1, false, false},
    {"upsample_nearest2d", RLX_RESIZE_NEAREST, 2, false, false},
    {"upsample_nearest3d", RLX_RESIZE_NEAREST, 3, false, false},
    {"_upsample_nearest_exact1d", RLX_RESIZE_NEAREST_EXACT, 1, false, false},
    {"_upsample_nearest_exact2d", RLX_RESIZE_NEAREST_EXACT, 2, false, false},
    {"_upsample_nearest_exact3d", RLX_RESIZE_NEAREST_EXACT, 3, false, false},
    {"upsample_linear1d", RLX_RESIZE_LINEAR, 1, false, true},
    {"upsample_bilinear2d", RLX_RESIZE_LINEAR, 2, false, true},
    {"upsample_trilinear3d", RLX_RESIZE_LINEAR, 3, false, true},
    {"upsample_bicubic2d", RLX_RESIZE_CUBIC, 2, false, true},
    {"_upsample_bilinear2d_aa", RLX_RESIZE_LINEAR, 2, true, true},
    {"_upsample_bicubic2d_aa", RLX_RESIZE_CUBIC, 2, true, true},
};

/* .vec:     (x, output_size?, [align_corners,] scale_factors?)
 * .default: (x, output_size, [align_corners,] scales_d?, scales_h?, scales_w?) */
rlx_status rlx_lower_upsample(rlx_lower *lw, const rlx_aten_node *n) {
  const resize_kind *k = NULL;
  for (size_t i = 0; i < RLX_COUNTOF(kinds) && !k; i++)
    if (lw_is(n, kinds[i].aten)) k = &kinds[i];
  if (!k) return lw_fail(RLX_ERR_INTERNAL, "no resize mapping");
  int32_t x;
  rlx_status st = lw_tensor(lw, n, 0, "input", &x);
  if (st) return st;
  const rlx_tinfo *t = lw_out(n, 0);
  if (!t || t->shape.rank != k->nd + 2) return lw_fail(RLX_ERR_FORMAT, "the output shape is not recorded");
  rlx_params p;
  memset(&p, 0, sizeof p);
  rlx_resize_params *r = &p.resize;
  r->mode = k->mode, r->nd = k->nd, r->antialias = k->antialias;
  for (int a = 0; a < k->nd; a++) r->out[a] = t->shape.dims[2 + a];
  int next = 2;
  if (k->has_align) {
    if ((st = lw_bool(lw, n, 2, "align_corners", false, &r->align_corners))) return st;
    next = 3;
  }
  if (!strcmp(lw_overload(n), "vec")) {
    const rlx_arg *sf = lw_arg(n, next, "scale_factors");
    if (sf && sf->kind == RLX_ARG_LIST) {
      if (sf->u.list.n != k->nd) return lw_fail(RLX_ERR_SHAPE, "%d scale factors for %d axes", sf->u.list.n, k->nd);
      for (int a = 0; a < k->nd; a++) {
        const rlx_arg *e = lw_resolve(lw, &sf->u.list.items[a]);
        if (e->kind != RLX_ARG_FLOAT && e->kind != RLX_ARG_INT)
          return lw_fail(RLX_ERR_UNSUPPORTED, "argument 'scale_factors'[%d] must be a number", a);
        double v = e->kind == RLX_ARG_FLOAT ? e->u.f : (double)e->u.i;
        /* torch sizes the output as in * scale: it must be a positive, finite, bounded factor */
        if (!(v > 0 && v <= (double)RLX_MAX_PARAM))
          return lw_fail(RLX_ERR_SHAPE, "argument 'scale_factors'[%d] is %g; it must be in (0, 2^31]", a, v);
        r->scales[a] = v;
      }
    }
  } else {
    static const char *names[3][3] = {{"scales", NULL, NULL}, {"scales_h", "scales_w", NULL},
                                       {"scales_d", "scales_h", "scales_w"}};
    for (int a = 0; a < k->nd; a++) {
      if ((st = lw_float(lw, n, next + a, names[k->nd - 1][a], 0.0, &r->scales[a]))) return st;
      /* torch uses a scale only when it is > 0 (NaN is not), else the sizes' ratio (0 here) */
      if (!(r->scales[a] > 0)) r->scales[a] = 0;
    }
  }
  rlx_dtype ot = t->dtype;
  return lw_bind(lw, n, lw_cast(lw, lw_emit(lw, RLX_OP_RESIZE, &p, &x, 1), ot));
}

/* grid_sampler(_2d, _3d)(input, grid, interpolation_mode, padding_mode, align_corners) */
rlx_status rlx_lower_grid_sampler(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, grid;
  int64_t mode, pad;
  rlx_params p;
  memset(&p, 0, sizeof p);
  rlx_status st = lw_tensor(lw, n, 0, "input", &x);
  if (!st) st = lw_tensor(lw, n, 1, "grid", &grid);
  if (!st) st = lw_int(lw, n, 2, "interpolation_mode", 0, &mode);
  if (!st) st = lw_int(lw, n, 3, "padding_mode", 0, &pad);
  if (!st) st = lw_bool(lw, n, 4, "align_corners", false, &p.grid_sample.align_corners);
  if (st) return st;
  int rank = lw_val(lw, x)->shape.rank;
  if (rank != 4 && rank != 5)
    return lw_fail(RLX_ERR_UNSUPPORTED, "grid_sample on a rank-%d input (2-D, rank 4, or 3-D, rank 5)", rank);
  if ((lw_is(n, "grid_sampler_2d") && rank != 4) || (lw_is(n, "grid_sampler_3d") && rank != 5))
    return lw_fail(RLX_ERR_SHAPE, "%s on a rank-%d input", n->op, rank);
  if ((st = lw_check_range(mode, 0, 2, "argument 'interpolation_mode' (0 bilinear, 1 nearest, 2 bicubic)")) ||
      (st = lw_check_range(pad, 0, 2, "argument 'padding_mode' (0 zeros, 1 border, 2 reflection)")))
    return st;
  p.grid_sample.mode = (int)mode, p.grid_sample.padding = (int)pad;
  int32_t in[2] = {x, lw_cast(lw, grid, lw_val(lw, x)->dtype)};
  if (in[1] < 0) return rlx_last_status();
  return lw_bind(lw, n, lw_emit(lw, RLX_OP_GRID_SAMPLE, &p, in, 2));
}
