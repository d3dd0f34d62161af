/*
 * grid_sample.c — torch.nn.functional.grid_sample on 2-D and 3-D inputs:
 *
 *   x [N, C, H, W], grid [N, Ho, Wo, 2] (x, y in [-1, 1]) -> [N, C, Ho, Wo]
 *   x [N, C, D, H, W], grid [N, Do, Ho, Wo, 3] (x, y, z) -> [N, C, Do, Ho, Wo]
 *
 * (3-D: bilinear, which is trilinear, and nearest; torch has no 3-D bicubic)
 * modes bilinear / nearest (round half to even) / bicubic (a = -0.75), padding
 * zeros / border / reflection, align_corners, all with torch's rules
 * (aten/native GridSampler.h): unnormalize, then clip or reflect the source
 * coordinate; taps outside the image read 0. Coordinates are computed in the
 * input's precision (float for f32) so the same taps are chosen; sums in
 * double.
 */
#include <math.h>

#include "ops/ops_util.h"

enum { MODE_BILINEAR, MODE_NEAREST, MODE_BICUBIC };
enum { PAD_ZEROS, PAD_BORDER, PAD_REFLECTION };

static rlx_status gs_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0), *grid = rlx_in(g, n, 1);
  const rlx_grid_sample_params *p = &n->p.grid_sample;
  int r = x->shape.rank;
  if ((r != 4 && r != 5) || grid->shape.rank != r || grid->shape.dims[r - 1] != r - 2 ||
      grid->shape.dims[0] != x->shape.dims[0])
    RLX_INFER_FAIL("grid_sample needs x [N, C, H, W] and grid [N, Ho, Wo, 2], or x [N, C, D, H, W] and grid "
                   "[N, Do, Ho, Wo, 3]");
  if (r == 5 && p->mode == MODE_BICUBIC)
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "grid_sample: bicubic interpolation only supports 4D input (torch)");
  if (!rlx_dtype_is_float(x->dtype) || grid->dtype != x->dtype)
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "grid_sample needs float x and grid of one dtype");
  if (p->mode < 0 || p->mode > 2 || p->padding < 0 || p->padding > 2)
    RLX_INFER_FAIL("grid_sample mode %d / padding %d", p->mode, p->padding);
  os[0] = x->shape;
  for (int d = 2; d < r; d++) os[0].dims[d] = grid->shape.dims[d - 1];
  od[0] = x->dtype;
  return RLX_OK;
}

typedef struct gs_ctx {
  bool f32, align;
  int padding;
} gs_ctx;

static double rnd(const gs_ctx *c, double v) { return c->f32 ? (double)(float)v : v; }

static double unnormalize(const gs_ctx *c, double coord, int64_t size) {
  if (c->align) return rnd(c, rnd(c, rnd(c, coord + 1) / 2) * (double)(size - 1));
  return rnd(c, rnd(c, rnd(c, rnd(c, coord + 1) * (double)size) - 1) / 2);
}

static double clip(double v, int64_t size) { return fmin((double)(size - 1), fmax(v, 0.0)); }

static double reflect(const gs_ctx *c, double in, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return 0;
  double mn = (double)twice_low / 2, span = (double)(twice_high - twice_low) / 2;
  in = rnd(c, fabs(rnd(c, in - mn)));
  double extra = rnd(c, fmod(in, span));
  /* the parity of floor(in / span), taken in double: a NaN, infinite or
   * huge coordinate (whose quotient no integer type holds) is defined too */
  bool even = fmod(floor(rnd(c, in / span)), 2.0) == 0;
  return even ? rnd(c, extra + mn) : rnd(c, rnd(c, span - extra) + mn);
}

/* The padding rule applied to an unnormalized coordinate. */
static double pad_coord(const gs_ctx *c, double v, int64_t size) {
  if (c->padding == PAD_BORDER) return clip(v, size);
  if (c->padding == PAD_REFLECTION) {
    v = c->align ? reflect(c, v, 0, 2 * (size - 1)) : reflect(c, v, -1, 2 * size - 1);
    return clip(v, size);
  }
  return v;
}

static double safe(double v) { /* torch's safe_downgrade_to_int_range */
  return (!isfinite(v) || v > 2147483647.0 || v < -2147483648.0) ? -100.0 : v;
}

static double at(const rlx_tensor_view *x, int64_t base, int64_t H, int64_t W, int64_t yy, int64_t xx) {
  if (yy < 0 || yy >= H || xx < 0 || xx >= W) return 0;
  return rlx_load_f64(x->data, x->dtype, base + yy * W + xx);
}

static double cubic1(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
static double cubic2(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

/* The 3-D padding rule: torch's CPU grid_sampler_3d is scalar code whose
 * clip is std::min(size - 1, std::max(v, 0)), so a NaN coordinate (a NaN or
 * infinite grid value under border or reflection padding) lands on the last
 * voxel, where the 2-D kernel's vectorized clip gives 0. */
static double pad_coord3(const gs_ctx *c, double v, int64_t size) {
  if (c->padding == PAD_ZEROS) return v;
  if (c->padding == PAD_REFLECTION)
    v = c->align ? reflect(c, v, 0, 2 * (size - 1)) : reflect(c, v, -1, 2 * size - 1);
  double m = v < 0 ? 0 : v;
  return m < (double)(size - 1) ? m : (double)(size - 1);
}

/* x at (zz, yy, xx) of the volume at base, 0 outside. */
static double at3(const rlx_tensor_view *x, int64_t base, const int64_t *dhw, int64_t zz, int64_t yy, int64_t xx) {
  if (zz < 0 || zz >= dhw[0] || yy < 0 || yy >= dhw[1] || xx < 0 || xx >= dhw[2]) return 0;
  return rlx_load_f64(x->data, x->dtype, base + (zz * dhw[1] + yy) * dhw[2] + xx);
}

/* The 3-D form: x [N, C, D, H, W], grid [N, Do, Ho, Wo, 3] -> y [N, C, Do,
 * Ho, Wo]. Trilinear weights are torch's: each a product of three distances
 * to the opposite corner, in the input's precision. */
static void gs_ref3(const gs_ctx *c, int mode, const rlx_tensor_view *in, rlx_tensor_view *out) {
  int64_t N = in[0].dims[0], C = in[0].dims[1], dhw[3] = {in[0].dims[2], in[0].dims[3], in[0].dims[4]};
  int64_t P = out[0].dims[2] * out[0].dims[3] * out[0].dims[4], V = dhw[0] * dhw[1] * dhw[2]; /* points, voxels */
  rlx_dtype t = in[0].dtype;
  for (int64_t b = 0; b < N; b++)
    for (int64_t q = 0; q < P; q++) {
      int64_t gi = (b * P + q) * 3;
      double u[3]; /* source x, y, z: grid order, against W, H, D */
      for (int k = 0; k < 3; k++)
        u[k] = pad_coord3(c, unnormalize(c, rlx_load_f64(in[1].data, t, gi + k), dhw[2 - k]), dhw[2 - k]);
      double sx = safe(u[0]), sy = safe(u[1]), sz = safe(u[2]);
      for (int64_t ch = 0; ch < C; ch++) {
        int64_t base = (b * C + ch) * V;
        double v;
        if (mode == MODE_NEAREST) {
          v = at3(&in[0], base, dhw, (int64_t)nearbyint(sz), (int64_t)nearbyint(sy), (int64_t)nearbyint(sx));
        } else {
          double x0 = floor(sx), y0 = floor(sy), z0 = floor(sz);
          double dx[2] = {rnd(c, x0 + 1 - sx), rnd(c, sx - x0)}, dy[2] = {rnd(c, y0 + 1 - sy), rnd(c, sy - y0)},
                 dz[2] = {rnd(c, z0 + 1 - sz), rnd(c, sz - z0)};
          v = 0;
          for (int k = 0; k < 8; k++) {
            int i = k >> 2 & 1, j = k >> 1 & 1, l = k & 1; /* z, y, x offsets */
            double w = rnd(c, rnd(c, dx[l] * dy[j]) * dz[i]);
            v += w * at3(&in[0], base, dhw, (int64_t)z0 + i, (int64_t)y0 + j, (int64_t)x0 + l);
          }
        }
        rlx_store_f64(out[0].data, t, (b * C + ch) * P + q, v);
      }
    }
}

static rlx_status gs_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                         void *scratch) {
  (void)scratch;
  const rlx_grid_sample_params *p = &n->p.grid_sample;
  gs_ctx c = {.f32 = in[0].dtype != RLX_DTYPE_F64, .align = p->align_corners, .padding = p->padding};
  if (in[0].rank == 5) {
    gs_ref3(&c, p->mode, in, out);
    return RLX_OK;
  }
  int64_t N = in[0].dims[0], C = in[0].dims[1], H = in[0].dims[2], W = in[0].dims[3];
  int64_t Ho = out[0].dims[2], Wo = out[0].dims[3];
  rlx_dtype t = in[0].dtype;
  for (int64_t b = 0; b < N; b++)
    for (int64_t oy = 0; oy < Ho; oy++)
      for (int64_t ox = 0; ox < Wo; ox++) {
        int64_t gi = ((b * Ho + oy) * Wo + ox) * 2;
        double gx = rlx_load_f64(in[1].data, t, gi), gy = rlx_load_f64(in[1].data, t, gi + 1);
        double ux = unnormalize(&c, gx, W), uy = unnormalize(&c, gy, H);
        for (int64_t ch = 0; ch < C; ch++) {
          int64_t base = (b * C + ch) * H * W;
          double v = 0;
          if (p->mode == MODE_BICUBIC) {
            double x0 = floor(ux), y0 = floor(uy), tx = rnd(&c, ux - x0), ty = rnd(&c, uy - y0);
            const double A = -0.75;
            double wx[4] = {cubic2(tx + 1, A), cubic1(tx, A), cubic1(1 - tx, A), cubic2(2 - tx, A)};
            double wy[4] = {cubic2(ty + 1, A), cubic1(ty, A), cubic1(1 - ty, A), cubic2(2 - ty, A)};
            for (int i = 0; i < 4; i++)
              for (int j = 0; j < 4; j++) {
                double sx = pad_coord(&c, x0 - 1 + j, W), sy = pad_coord(&c, y0 - 1 + i, H);
                v += wy[i] * wx[j] * at(&in[0], base, H, W, (int64_t)safe(sy), (int64_t)safe(sx));
              }
          } else {
            double sx = safe(pad_coord(&c, ux, W)), sy = safe(pad_coord(&c, uy, H));
            if (p->mode == MODE_NEAREST) {
              v = at(&in[0], base, H, W, (int64_t)nearbyint(sy), (int64_t)nearbyint(sx));
            } else {
              double x0 = floor(sx), y0 = floor(sy);
              double e = rnd(&c, x0 + 1 - sx), w = rnd(&c, sx - x0), s = rnd(&c, y0 + 1 - sy), nn = rnd(&c, sy - y0);
              int64_t ix = (int64_t)x0, iy = (int64_t)y0;
              v = s * e * at(&in[0], base, H, W, iy, ix) + s * w * at(&in[0], base, H, W, iy, ix + 1) +
                  nn * e * at(&in[0], base, H, W, iy + 1, ix) + nn * w * at(&in[0], base, H, W, iy + 1, ix + 1);
            }
          }
          rlx_store_f64(out[0].data, t, ((b * C + ch) * Ho + oy) * Wo + ox, v);
        }
      }
  return RLX_OK;
}

static void gs_print(const rlx_node *n, char *buf, size_t cap) {
  static const char *modes[] = {"bilinear", "nearest", "bicubic"}, *pads[] = {"zeros", "border", "reflection"};
  const rlx_grid_sample_params *p = &n->p.grid_sample;
  rlx_bprintf(buf, cap, "%s %s%s", modes[p->mode], pads[p->padding], p->align_corners ? " align_corners" : "");
}

const rlx_op_vtable rlx_op_grid_sample = {.infer = gs_infer, .ref = gs_ref, .print = gs_print, .symbolic = true};
