/*
 * histc.c — a histogram of every element of x in `bins` equal-width bins over
 * [min, max], as torch.histc computes it on the CPU:
 *
 *   x [*] (f32, f64, f16, bf16) -> counts [bins], x's dtype
 *
 * Elements outside [min, max], and NaN, are not counted; x == max falls in the
 * last bin. When min == max the range is the data's own min and max, found at
 * run time (widened to [v - 1, v + 1] when those are equal too, or when x is
 * empty); a NaN or infinite element then makes the range non-finite, which is
 * a run-time error, as torch raises one.
 *
 * The bin of an element is torch's linear interpolation
 *
 *   bin = (int64)((x - lo) * bins / (hi - lo)),  bin == bins -> bins - 1
 *
 * with lo and hi rounded to x's dtype and every operation done in that dtype:
 * f32 in float, f64 in double, f16 and bf16 in float rounded back to the
 * dtype after each step (as c10::Half and c10::BFloat16 arithmetic does), so
 * values on or next to a bin edge land where torch puts them. Counts are
 * exact (int64 in scratch) and rounded to the dtype once; torch adds f16/bf16
 * counts in the dtype, which stops counting past 2048 (f16) or 256 (bf16) in
 * one bin of one thread's histogram, so rlx differs from torch only there.
 */
#include <math.h>

#include "ops/ops_util.h"

static rlx_status histc_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  const rlx_histc_params *p = &n->p.histc;
  if (!rlx_dtype_is_float(x->dtype))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "histc takes a float tensor, got %s (torch's CPU "
                      "histc has no integer kernel)", rlx_dtype_name(x->dtype));
  if (p->bins < 1) RLX_INFER_FAIL("histc: bins must be > 0, got %lld", (long long)p->bins);
  if (p->bins > ((int64_t)1 << 40)) /* the count scratch (8 bytes a bin) must be sizeable */
    RLX_INFER_FAIL("histc: %lld bins is too many", (long long)p->bins);
  if (!isfinite(p->min) || !isfinite(p->max))
    RLX_INFER_FAIL("histc: range of [%g, %g] is not finite", p->min, p->max);
  if (p->min > p->max) RLX_INFER_FAIL("histc: max must be larger than min (min %g, max %g)", p->min, p->max);
  os[0].rank = 1;
  os[0].dims[0] = p->bins;
  od[0] = x->dtype;
  return RLX_OK;
}

static size_t histc_scratch(const rlx_graph *g, const rlx_node *n) {
  (void)g;
  return (size_t)n->p.histc.bins * sizeof(int64_t);
}

/* v rounded to the 16-bit float dtype t (f16 or bf16); other dtypes: v. */
static float round16(rlx_dtype t, float v) {
  if (t == RLX_DTYPE_F16) return rlx_f16_to_f32(rlx_f32_to_f16(v));
  if (t == RLX_DTYPE_BF16) return rlx_bf16_to_f32(rlx_f32_to_bf16(v));
  return v;
}

/* The range [lo, hi] before rounding to the dtype: the params, or the data's
 * min and max when they are equal. RLX_ERR_RUNTIME if that is not finite. */
static rlx_status histc_range(const rlx_histc_params *p, const rlx_tensor_view *x, double *lo, double *hi) {
  int64_t n = rlx_view_numel(x);
  *lo = p->min, *hi = p->max;
  if (*lo == *hi && n > 0) {
    *lo = INFINITY, *hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
      double v = rlx_load_f64(x->data, x->dtype, i);
      if (v != v) { /* torch's aminmax propagates NaN into the range */
        *lo = *hi = NAN;
        break;
      }
      *lo = fmin(*lo, v), *hi = fmax(*hi, v);
    }
  }
  if (*lo == *hi) *lo -= 1, *hi += 1;
  if (!isfinite(*lo) || !isfinite(*hi))
    return rlx_errorf(RLX_ERR_RUNTIME, "histc: range of [%g, %g] is not finite (min == max bins "
                      "over the data's range, and the data holds NaN or inf)", *lo, *hi);
  return RLX_OK;
}

/* Bin of x in [lo, hi] (f32, f16, bf16), or -1 when x is outside or NaN. */
static int64_t bin_f32(rlx_dtype t, float x, float lo, float hi, int64_t bins) {
  if (!(x >= lo && x <= hi)) return -1;
  float fb = round16(t, (float)bins);
  float pos = round16(t, round16(t, round16(t, x - lo) * fb) / round16(t, hi - lo));
  return pos >= 0 && pos < (float)bins ? (int64_t)pos : bins - 1; /* NaN (hi == lo): last bin, as x == hi */
}

static int64_t bin_f64(double x, double lo, double hi, int64_t bins) {
  if (!(x >= lo && x <= hi)) return -1;
  double pos = (x - lo) * (double)bins / (hi - lo);
  return pos >= 0 && pos < (double)bins ? (int64_t)pos : bins - 1;
}

static rlx_status histc_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                            void *scratch) {
  const rlx_histc_params *p = &n->p.histc;
  const rlx_tensor_view *x = &in[0]; /* x [*] */
  int64_t *count = scratch;         /* count [bins] */
  rlx_dtype t = x->dtype;
  double lo, hi;
  rlx_status st = histc_range(p, x, &lo, &hi);
  if (st) return st;
  for (int64_t b = 0; b < p->bins; b++) count[b] = 0;
  int64_t N = rlx_view_numel(x);
  if (t == RLX_DTYPE_F64) {
    const double *xd = x->data;
    for (int64_t i = 0; i < N; i++) {
      int64_t b = bin_f64(xd[i], lo, hi, p->bins);
      if (b >= 0) count[b]++;
    }
  } else { /* the edges are linspace(lo, hi)'s ends in the dtype */
    float flo = round16(t, (float)lo), fhi = round16(t, (float)hi);
    for (int64_t i = 0; i < N; i++) {
      int64_t b = bin_f32(t, (float)rlx_load_f64(x->data, t, i), flo, fhi, p->bins);
      if (b >= 0) count[b]++;
    }
  }
  for (int64_t b = 0; b < p->bins; b++) rlx_store_f64(out[0].data, t, b, (double)count[b]);
  return RLX_OK;
}

static void histc_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_histc_params *p = &n->p.histc;
  rlx_bprintf(buf, cap, "bins=%lld", (long long)p->bins);
  if (p->min == p->max) rlx_bprintf(buf, cap, " range=data");
  else rlx_bprintf(buf, cap, " min=%g max=%g", p->min, p->max);
}

const rlx_op_vtable rlx_op_histc = {.infer = histc_infer, .ref = histc_ref, .scratch = histc_scratch,
                                    .print = histc_print, .symbolic = true};
