/*
 * histogram.c — histogramdd: torch.histogram and torch.histogramdd on the
 * CPU (aten/src/ATen/native/Histogram.cpp, cpu/HistogramKernel.cpp):
 *
 *   x [M, D] (f32, f64), edges? [E], weight? [M]
 *     -> hist [bins[0], ..., bins[D-1]] (x's dtype), edges [E] (x's dtype)
 *
 * with E = sum over d of (bins[d] + 1): dim d's edges follow dim d-1's.
 *
 * Edges: given (histogram.bins_tensor, _histogramdd_from_bin_tensors; copied
 * to the output), or torch's linspace(lo, hi, bins + 1) in x's dtype, with
 * [lo, hi] the range argument or the column's min and max (0 and 1 when x
 * is empty; a NaN or infinite bound is a run-time error, as in torch; an
 * empty range widens to [lo - 0.5, hi + 0.5]). linspace is torch's kernel:
 * step = (hi - lo) / bins in the dtype, edge i = lo + step * i for i below
 * half, hi - step * (bins - i) above, each a fused multiply-add (one
 * rounding), as torch's AVX2 / AVX-512 builds compute it.
 *
 * Counting: a row is skipped when any coordinate is outside its dim's
 * [first edge, last edge] or NaN. Its bin in dim d is the last edge <= the
 * coordinate (std::upper_bound - 1), the last bin taking its right edge:
 * over all edges when they are given (torch's BINARY_SEARCH), and among
 * the neighbours of the linear guess (x - lo) * bins / (hi - lo), computed
 * in the dtype, for made edges (LINEAR_INTERPOLATION_WITH_LOCAL_SEARCH).
 * A row adds its weight (1 without one) to its bin, in the dtype, rows in
 * order (torch's single-thread order; with more rows torch sums per-thread
 * partial histograms, which rounds weighted f32 sums differently). density
 * divides by the total (summed in double, then rounded to the dtype) and by
 * each dim's bin width (edge differences in the dtype).
 */
#include <math.h>

#include "ops/ops_util.h"

static rlx_status histogramdd_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_histogramdd_params *p = &n->p.histogramdd;
  const rlx_value *x = rlx_in(g, n, 0), *e = rlx_in(g, n, 1), *w = rlx_in(g, n, 2);
  if (x->dtype != RLX_DTYPE_F32 && x->dtype != RLX_DTYPE_F64)
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "histogram takes an f32 or f64 input, got %s", rlx_dtype_name(x->dtype));
  if (p->dims < 1 || p->dims > RLX_MAX_RANK) RLX_INFER_FAIL("histogram of %d dims (1..%d)", p->dims, RLX_MAX_RANK);
  if (x->shape.rank != 2 || x->shape.dims[1] != p->dims)
    RLX_INFER_FAIL("histogram input must be [M, %d], got rank %d", p->dims, x->shape.rank);
  int64_t E = 0, cells = 1;
  for (int d = 0; d < p->dims; d++) {
    if (p->bins[d] < 1 || p->bins[d] > RLX_MAX_NUMEL)
      RLX_INFER_FAIL("histogram: bins must be > 0, got %lld for dimension %d", (long long)p->bins[d], d);
    E += p->bins[d] + 1;
    if (__builtin_mul_overflow(cells, p->bins[d], &cells) || cells > RLX_MAX_NUMEL || E > RLX_MAX_NUMEL)
      RLX_INFER_FAIL("histogram of %d dims has too many bins", p->dims);
    if (p->has_range && !(p->range[2 * d] <= p->range[2 * d + 1] && isfinite(p->range[2 * d]) &&
                          isfinite(p->range[2 * d + 1])))
      RLX_INFER_FAIL("histogram: dimension %d's range [%g, %g] is not finite or has min above max", d,
                     p->range[2 * d], p->range[2 * d + 1]);
  }
  if (p->edges_given != (e != NULL)) RLX_INFER_FAIL("histogram: edges input %s", e ? "given but not used" : "missing");
  if (e && (e->dtype != x->dtype || e->shape.rank != 1 || e->shape.dims[0] != E))
    RLX_INFER_FAIL("histogram edges must be %s [%lld]", rlx_dtype_name(x->dtype), (long long)E);
  if (w && (w->dtype != x->dtype || w->shape.rank != 1 || w->shape.dims[0] != x->shape.dims[0]))
    RLX_INFER_FAIL("histogram weight must be %s [%lld]", rlx_dtype_name(x->dtype), (long long)x->shape.dims[0]);
  os[0].rank = p->dims;
  for (int d = 0; d < p->dims; d++) os[0].dims[d] = p->bins[d];
  od[0] = x->dtype;
  if (n->n_out == 2) os[1].rank = 1, os[1].dims[0] = E, od[1] = x->dtype;
  return RLX_OK;
}

static size_t histogramdd_scratch(const rlx_graph *g, const rlx_node *n) {
  (void)g; /* the edges as doubles, when the node has no edges output */
  int64_t E = 0;
  for (int d = 0; d < n->p.histogramdd.dims; d++) E += n->p.histogramdd.bins[d] + 1;
  return (size_t)E * sizeof(double);
}

/* torch's linspace(lo, hi, bins + 1) into e[0..bins] in dtype t (f32: float
 * arithmetic; values read back as double). */
static void linspace(double *e, double lo, double hi, int64_t bins, rlx_dtype t) {
  int64_t steps = bins + 1, half = steps / 2;
  if (t == RLX_DTYPE_F32) {
    float a = (float)lo, b = (float)hi, step = (b - a) / (float)bins;
    for (int64_t i = 0; i < steps; i++)
      e[i] = i < half ? fmaf(step, (float)i, a) : fmaf(-step, (float)(steps - i - 1), b);
  } else {
    double step = (hi - lo) / (double)bins;
    for (int64_t i = 0; i < steps; i++)
      e[i] = i < half ? fma(step, (double)i, lo) : fma(-step, (double)(steps - i - 1), hi);
  }
}

/* std::upper_bound(e + lo, e + hi, v) - e */
static int64_t upper_bound(const double *e, int64_t lo, int64_t hi, double v) {
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (!(v < e[mid])) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Dim d's bin of coordinate v in [e[0], e[bins]] (e: that dim's edges). */
static int64_t bin_of(const double *e, int64_t bins, double v, bool local, rlx_dtype t) {
  int64_t pos;
  if (local) {
    double guess = t == RLX_DTYPE_F32 ? (double)(((float)v - (float)e[0]) * (float)bins / ((float)e[bins] - (float)e[0]))
                                      : (v - e[0]) * (double)bins / (e[bins] - e[0]);
    int64_t g = (int64_t)guess; /* in [0, bins]: v lies within the edges */
    pos = upper_bound(e, RLX_MAX(g - 1, 0), RLX_MIN(g + 2, bins + 1), v) - 1;
  } else {
    pos = upper_bound(e, 0, bins + 1, v) - 1;
  }
  return pos == bins ? bins - 1 : pos;
}

static rlx_status histogramdd_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                                  void *scratch) {
  const rlx_histogramdd_params *p = &n->p.histogramdd;
  const rlx_tensor_view *x = &in[0]; /* x [M, D] */
  rlx_dtype t = x->dtype;
  int D = p->dims;
  int64_t M = x->dims[0], E = 0, cells = 1;
  for (int d = 0; d < D; d++) E += p->bins[d] + 1, cells *= p->bins[d];
  double *edges = scratch; /* [E] */
  int64_t off[RLX_MAX_RANK];
  for (int d = 0, o = 0; d < D; o += (int)(p->bins[d] + 1), d++) off[d] = o;
  for (int d = 0; d < D; d++) {
    double *e = edges + off[d];
    if (p->edges_given) {
      for (int64_t i = 0; i <= p->bins[d]; i++) e[i] = rlx_load_f64(in[1].data, t, off[d] + i);
      continue;
    }
    double lo = p->has_range ? p->range[2 * d] : 0, hi = p->has_range ? p->range[2 * d + 1] : 1;
    if (!p->has_range && M > 0) { /* aminmax over the column: a NaN makes both NaN */
      lo = INFINITY, hi = -INFINITY;
      for (int64_t i = 0; i < M; i++) {
        double v = rlx_load_f64(x->data, t, i * D + d);
        if (v != v) {
          lo = hi = NAN;
          break;
        }
        lo = fmin(lo, v), hi = fmax(hi, v);
      }
      if (!isfinite(lo) || !isfinite(hi))
        return rlx_errorf(RLX_ERR_RUNTIME, "histogram: dimension %d's range [%g, %g] is not finite (the data "
                          "holds NaN or inf and no range was given)", d, lo, hi);
    }
    if (lo == hi) lo -= 0.5, hi += 0.5;
    linspace(e, lo, hi, p->bins[d], t);
  }
  for (int64_t c = 0; c < cells; c++) rlx_store_f64(out[0].data, t, c, 0.0);
  for (int64_t i = 0; i < M; i++) {
    int64_t cell = 0;
    bool skip = false;
    for (int d = 0; d < D && !skip; d++) {
      const double *e = edges + off[d];
      double v = rlx_load_f64(x->data, t, i * D + d);
      if (!(v >= e[0] && v <= e[p->bins[d]])) skip = true;
      else cell = cell * p->bins[d] + bin_of(e, p->bins[d], v, !p->edges_given, t);
    }
    if (skip) continue;
    double w = in[2].data ? rlx_load_f64(in[2].data, t, i) : 1.0;
    rlx_store_f64(out[0].data, t, cell, rlx_load_f64(out[0].data, t, cell) + w); /* rounded to the dtype */
  }
  if (p->density) {
    double total = 0;
    for (int64_t c = 0; c < cells; c++) total += rlx_load_f64(out[0].data, t, c);
    double tot_t = t == RLX_DTYPE_F32 ? (double)(float)total : total;
    for (int64_t c = 0; c < cells; c++) {
      double v = rlx_load_f64(out[0].data, t, c);
      rlx_store_f64(out[0].data, t, c, v / tot_t);
    }
    for (int d = 0; d < D; d++) { /* divide by dim d's bin widths, broadcast along the others */
      const double *e = edges + off[d];
      int64_t inner = 1;
      for (int k = d + 1; k < D; k++) inner *= p->bins[k];
      for (int64_t c = 0; c < cells; c++) {
        int64_t b = (c / inner) % p->bins[d];
        double width = t == RLX_DTYPE_F32 ? (double)((float)e[b + 1] - (float)e[b]) : e[b + 1] - e[b];
        rlx_store_f64(out[0].data, t, c, rlx_load_f64(out[0].data, t, c) / width);
      }
    }
  }
  if (n->n_out == 2)
    for (int64_t i = 0; i < E; i++) rlx_store_f64(out[1].data, t, i, edges[i]);
  return RLX_OK;
}

static void histogramdd_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_histogramdd_params *p = &n->p.histogramdd;
  rlx_bprint_ints(buf, cap, "bins", p->bins, p->dims);
  rlx_bprintf(buf, cap, "%s%s", p->edges_given ? " edges=given" : p->has_range ? " edges=range" : " edges=data",
              p->density ? " density" : "");
}

const rlx_op_vtable rlx_op_histogramdd = {.infer = histogramdd_infer, .ref = histogramdd_ref,
                                          .scratch = histogramdd_scratch, .print = histogramdd_print};
