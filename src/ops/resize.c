/*
 * resize.c — upsampling/downsampling over the trailing 1..3 spatial axes of
 * [N, C, *S] with torch's exact coordinate rules (aten/native UpSample):
 *
 *   nearest        src = min(floor(dst * scale), in - 1)           (float math)
 *   nearest-exact  src = min(floor((dst + 0.5) * scale), in - 1)
 *   linear         src = scale * (dst + 0.5) - 0.5 clamped at 0 (align_corners:
 *                  scale * dst); taps floor(src), floor(src) + 1 (edge-clamped)
 *   cubic          src unclamped; 4 taps around floor(src), edge-clamped;
 *                  Keys kernel with a = -0.75
 *   antialias      (linear, cubic) PIL-style: support = taps/2 * max(scale, 1),
 *                  weights filter((j - center + 0.5) / max(scale, 1)) normalized
 *                  per output; cubic uses a = -0.5
 *
 * scale = in / out, or 1 / scale_factor when the user gave scale factors, or
 * (in - 1) / (out - 1) with align_corners. Coordinates are computed in float
 * for float/half inputs (as torch's opmath) so the chosen taps are identical;
 * the weighted sums are accumulated in double. Integer images can be resized
 * with nearest modes only (see resize_infer).
 *
 * The kernel builds a tap table per axis (index, weight) in scratch and sums
 * over the product of the axes' taps.
 */
#include <math.h>

#include "ops/ops_util.h"

typedef struct tap {
  int64_t idx;
  double w;
} tap;

static double cubic1(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
static double cubic2(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

static double aa_filter(double x, bool cubic) {
  x = fabs(x);
  if (!cubic) return x < 1 ? 1 - x : 0;
  const double a = -0.5;
  if (x < 1) return cubic1(x, a);
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
  return 0;
}

/* torch's area_pixel_compute_scale. */
static double axis_scale(const rlx_resize_params *p, int a, int64_t in, int64_t out, bool f32) {
  if (p->align_corners && p->mode >= RLX_RESIZE_LINEAR)
    return out > 1 ? (f32 ? (double)((float)(in - 1) / (float)(out - 1)) : (double)(in - 1) / (double)(out - 1)) : 0;
  if (p->scales[a] > 0) return f32 ? (double)(float)(1.0 / p->scales[a]) : 1.0 / p->scales[a];
  return f32 ? (double)((float)in / (float)out) : (double)in / (double)out;
}

/* Taps per output on one axis. An antialiased tap window never holds more
 * than the whole input axis, so the count is capped at `in` (which also
 * bounds it for hostile scale factors). */
static int64_t max_taps(const rlx_resize_params *p, int64_t in, int64_t out, int a) {
  if (p->mode <= RLX_RESIZE_NEAREST_EXACT) return 1;
  int base = p->mode == RLX_RESIZE_LINEAR ? 2 : 4;
  if (!p->antialias) return base;
  double scale = p->align_corners ? (out > 1 ? (double)(in - 1) / (double)(out - 1) : 0)
                 : p->scales[a] > 0 ? 1.0 / p->scales[a] : (double)in / (double)out;
  double support = scale >= 1 ? base * 0.5 * scale : base * 0.5;
  double t = ceil(support) * 2 + 1;
  return t < (double)in ? (int64_t)t : RLX_MAX(in, 1);
}

/* Bytes of the tap tables of all axes, or 0 when that overflows 2^40. */
static size_t taps_bytes(const rlx_resize_params *p, const rlx_shape *xs) {
  uint64_t total = 0, b;
  for (int a = 0; a < p->nd; a++) {
    uint64_t T = (uint64_t)max_taps(p, xs->dims[2 + a], p->out[a], a);
    if (!rlx_mul_ok((uint64_t)p->out[a], T, &b) || !rlx_mul_ok(b, sizeof(tap), &b) ||
        !rlx_add_ok(total, b, &total) || total > ((uint64_t)1 << 40))
      return 0;
  }
  return (size_t)total;
}

/* A source index computed in floating point, clamped to [lo, hi] before it
 * is converted (a NaN takes lo), so the conversion is always defined. */
static int64_t clamp_index(double v, int64_t lo, int64_t hi) {
  if (!(v >= (double)lo)) return lo;
  return v < (double)hi ? (int64_t)v : hi;
}

/* Fills taps[out][T] for one axis. Unused taps have index -1. Zero-weight
 * taps that torch reads are kept: 0 * inf is NaN there too. */
static void axis_taps(const rlx_resize_params *p, int a, int64_t in, int64_t out, int64_t T, bool f32,
                      tap *taps) {
  double scale = axis_scale(p, a, in, out, f32);
  for (int64_t i = 0; i < out * T; i++) taps[i] = (tap){-1, 0.0};
  for (int64_t o = 0; o < out; o++) {
    tap *t = taps + o * T;
    if (p->mode == RLX_RESIZE_NEAREST || p->mode == RLX_RESIZE_NEAREST_EXACT) {
      double off = p->mode == RLX_RESIZE_NEAREST_EXACT ? 0.5 : 0.0;
      int64_t s = in == out ? o
                  : f32 ? clamp_index(floorf(((float)o + (float)off) * (float)scale), 0, in - 1)
                        : clamp_index(floor(((double)o + off) * scale), 0, in - 1);
      t[0] = (tap){s, 1.0};
    } else if (p->antialias) {
      bool cubic = p->mode == RLX_RESIZE_CUBIC;
      double support = (scale >= 1 ? scale : 1.0) * (cubic ? 2.0 : 1.0);
      double center = scale * ((double)o + 0.5), inv = scale >= 1 ? 1.0 / scale : 1.0, total = 0;
      int64_t xmin = clamp_index(center - support + 0.5, 0, in);
      int64_t xsize = clamp_index(center + support + 0.5, 0, in) - xmin;
      for (int64_t j = 0; j < xsize && j < T; j++) {
        t[j] = (tap){xmin + j, aa_filter(((double)(j + xmin) - center + 0.5) * inv, cubic)};
        total += t[j].w;
      }
      for (int64_t j = 0; j < xsize && j < T && total != 0; j++) t[j].w /= total;
    } else {
      bool cubic = p->mode == RLX_RESIZE_CUBIC;
      double src;
      if (p->align_corners) src = f32 ? (double)((float)scale * (float)o) : scale * (double)o;
      else src = f32 ? (double)((float)scale * ((float)o + 0.5f) - 0.5f) : scale * ((double)o + 0.5) - 0.5;
      if (!cubic) {
        if (src < 0) src = 0;
        int64_t i0 = in == out ? o : clamp_index(src, 0, in - 1);
        double l1 = in == out ? 0.0 : RLX_MIN(RLX_MAX(src - (double)i0, 0.0), 1.0);
        if (f32) l1 = (double)(float)l1;
        t[0] = (tap){i0, 1.0 - l1};
        t[1] = (tap){i0 + (i0 < in - 1 ? 1 : 0), l1};
      } else {
        int64_t i0 = clamp_index(floor(src), -4, in - 1); /* taps beyond -4 all clamp to 0 */
        double x = RLX_MIN(RLX_MAX(src - (double)i0, 0.0), 1.0);
        if (f32) x = (double)(float)x;
        const double A = -0.75;
        double w[4] = {cubic2(x + 1.0, A), cubic1(x, A), cubic1(1.0 - x, A), cubic2(2.0 - x, A)};
        for (int k = 0; k < 4; k++) t[k] = (tap){RLX_MIN(RLX_MAX(i0 - 1 + k, 0), in - 1), w[k]};
      }
    }
  }
}

static rlx_status resize_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  const rlx_resize_params *p = &n->p.resize;
  if (p->nd < 1 || p->nd > 3 || x->shape.rank != p->nd + 2)
    RLX_INFER_FAIL("resize over %d axes needs a rank-%d [N, C, ...] input, got rank %d", p->nd, p->nd + 2,
                   x->shape.rank);
  if (!rlx_dtype_is_float(x->dtype) && p->mode > RLX_RESIZE_NEAREST_EXACT)
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s resize of a %s tensor: torch interpolates integer images "
                      "with a 16-bit fixed-point algorithm that rlx does not reproduce bit-exactly; "
                      "convert the image to float first", p->mode == RLX_RESIZE_LINEAR ? "linear" : "cubic",
                      rlx_dtype_name(x->dtype));
  if (p->antialias && p->mode <= RLX_RESIZE_NEAREST_EXACT) RLX_INFER_FAIL("antialias needs linear or cubic mode");
  os[0] = x->shape;
  bool sym = rlx_shape_is_symbolic(&x->shape);
  for (int a = 0; a < p->nd; a++) {
    if (!rlx_dim_valid(&g->syms, p->out[a])) RLX_INFER_FAIL("resize output size out of range");
    sym |= rlx_dim_is_sym(p->out[a]);
  }
  if (sym) { /* the size checks below run per binding, with the values */
    for (int a = 0; a < p->nd; a++) os[0].dims[2 + a] = p->out[a];
    od[0] = x->dtype;
    return RLX_OK;
  }
  for (int a = 0; a < p->nd; a++) {
    if (p->out[a] < 1) RLX_INFER_FAIL("resize output size %lld", (long long)p->out[a]);
    if (x->shape.dims[2 + a] < 1) RLX_INFER_FAIL("resize of an empty axis");
    os[0].dims[2 + a] = p->out[a];
    /* a user scale factor must be one torch could have used for these
     * sizes: source coordinates then stay within the input */
    double sc = p->scales[a];
    if (sc != 0 && !(isfinite(sc) && sc > 0 && (double)p->out[a] / sc <= (double)x->shape.dims[2 + a] + 1))
      RLX_INFER_FAIL("resize axis %d: scale factor %g does not map %lld outputs into %lld inputs", a, sc,
                     (long long)p->out[a], (long long)x->shape.dims[2 + a]);
  }
  if (!taps_bytes(p, &x->shape)) RLX_INFER_FAIL("resize: the tap tables would exceed 2^40 bytes");
  od[0] = x->dtype;
  return RLX_OK;
}

static size_t resize_scratch(const rlx_graph *g, const rlx_node *n) {
  const rlx_value *x = rlx_in(g, n, 0);
  const rlx_resize_params *p = &n->p.resize;
  return taps_bytes(p, &x->shape); /* infer checked it fits */
}

static rlx_status resize_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                             void *scratch) {
  const rlx_resize_params *p = &n->p.resize;
  int nd = p->nd;
  rlx_dtype t = in[0].dtype;
  bool f32 = t != RLX_DTYPE_F64;
  int64_t ins[3] = {1, 1, 1}, outs[3] = {1, 1, 1};
  int64_t T[3] = {1, 1, 1};
  tap *taps[3];
  tap one = {0, 1.0}; /* the single tap of a padded (size-1) axis */
  char *sp = scratch;
  for (int a = 0; a < 3; a++) {
    int k = a - (3 - nd); /* pad to 3 axes in front */
    if (k < 0) {
      taps[a] = &one;
      continue;
    }
    ins[a] = in[0].dims[2 + k], outs[a] = p->out[k];
    T[a] = max_taps(p, ins[a], outs[a], k);
    taps[a] = (tap *)sp;
    axis_taps(p, k, ins[a], outs[a], T[a], f32, taps[a]);
    sp += sizeof(tap) * (size_t)(outs[a] * T[a]);
  }
  int64_t planes = in[0].dims[0] * in[0].dims[1], isz = ins[0] * ins[1] * ins[2];
  int64_t osz = outs[0] * outs[1] * outs[2];
  bool integer = !rlx_dtype_is_float(t); /* nearest on integers: copy exactly */
  for (int64_t pl = 0; pl < planes; pl++)
    for (int64_t o = 0; o < osz; o++) {
      int64_t oz = o / (outs[1] * outs[2]), oy = (o / outs[2]) % outs[1], ox = o % outs[2];
      const tap *tz = taps[0] + (nd == 3 ? oz * T[0] : 0), *ty = taps[1] + (nd >= 2 ? oy * T[1] : 0);
      const tap *tx = taps[2] + ox * T[2];
      if (integer) {
        int64_t src = (tz[0].idx * ins[1] + ty[0].idx) * ins[2] + tx[0].idx;
        rlx_store_i64(out[0].data, t, pl * osz + o, rlx_load_i64(in[0].data, t, pl * isz + src));
        continue;
      }
      double acc = 0;
      for (int64_t a = 0; a < T[0]; a++)
        for (int64_t b = 0; b < T[1]; b++)
          for (int64_t c = 0; c < T[2]; c++) {
            if (tz[a].idx < 0 || ty[b].idx < 0 || tx[c].idx < 0) continue;
            double w = tz[a].w * ty[b].w * tx[c].w;
            int64_t src = (tz[a].idx * ins[1] + ty[b].idx) * ins[2] + tx[c].idx;
            acc += w * rlx_load_f64(in[0].data, t, pl * isz + src);
          }
      rlx_store_f64(out[0].data, t, pl * osz + o, acc);
    }
  return RLX_OK;
}

static void resize_print(const rlx_node *n, char *buf, size_t cap) {
  static const char *modes[] = {"nearest", "nearest-exact", "linear", "cubic"};
  const rlx_resize_params *p = &n->p.resize;
  rlx_bprintf(buf, cap, "%s%s%s", modes[p->mode], p->antialias ? " antialias" : "",
              p->align_corners ? " align_corners" : "");
  rlx_bprint_ints(buf, cap, "out", p->out, p->nd);
}

static void resize_concretize(rlx_params *p, const int64_t *ev) {
  for (int a = 0; a < RLX_MAX_SPATIAL; a++) p->resize.out[a] = rlx_dim_value(p->resize.out[a], ev);
}

const rlx_op_vtable rlx_op_resize = {.infer = resize_infer, .ref = resize_ref, .scratch = resize_scratch,
                                     .print = resize_print, .symbolic = true, .concretize = resize_concretize};
