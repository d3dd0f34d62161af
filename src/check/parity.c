/*
 * parity.c — the parity check (rules in parity.h). Everything is computed in
 * double; NaN never slips through a comparison because every non-finite value
 * is classified explicitly before any arithmetic.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check/parity.h"

void rlx_parity_defaults(rlx_dtype t, rlx_parity_opts *o) {
  switch (t) {
    case RLX_DTYPE_F16: o->atol = o->rtol = 1e-2, o->cosine = 0.999; break;
    case RLX_DTYPE_BF16: o->atol = o->rtol = 4e-2, o->cosine = 0.995; break;
    case RLX_DTYPE_F64: o->atol = o->rtol = 1e-7, o->cosine = 0.9999999; break;
    default: o->atol = o->rtol = 1e-4, o->cosine = 0.99999; break;
  }
}

static void mark_bad(rlx_parity_result *r, int64_t i) {
  if (r->first_bad < 0) r->first_bad = i;
  r->n_mismatch++;
}

/* The dtype's defaults, with the user's settings (those >= 0) over them. */
static void resolve_opts(rlx_dtype t, const rlx_parity_opts *user, rlx_parity_opts *o) {
  rlx_parity_defaults(t, o);
  if (!user) return;
  if (user->atol >= 0) o->atol = user->atol;
  if (user->rtol >= 0) o->rtol = user->rtol;
  if (user->cosine >= 0) o->cosine = user->cosine;
}

void rlx_parity_compare(const rlx_tensor_view *got, const rlx_tensor_view *ref,
                        const rlx_parity_opts *user, rlx_parity_result *r) {
  memset(r, 0, sizeof *r);
  r->first_bad = -1;
  rlx_parity_opts o;
  resolve_opts(ref->dtype, user, &o);
  bool same_shape = got->rank == ref->rank;
  for (int i = 0; same_shape && i < got->rank; i++) same_shape = got->dims[i] == ref->dims[i];
  if (!same_shape) {
    snprintf(r->reason, sizeof r->reason, "shape differs from the reference");
    return;
  }
  if (got->dtype != ref->dtype) {
    snprintf(r->reason, sizeof r->reason, "dtype %s differs from the reference's %s", rlx_dtype_name(got->dtype),
             rlx_dtype_name(ref->dtype));
    return;
  }
  int64_t n = rlx_view_numel(ref);
  r->numel = n;
  if (!rlx_dtype_is_float(ref->dtype)) { /* integers and bools: exact */
    for (int64_t i = 0; i < n; i++) {
      bool eq = rlx_dtype_is_float(got->dtype)
                    ? rlx_load_f64(got->data, got->dtype, i) == (double)rlx_load_i64(ref->data, ref->dtype, i)
                    : rlx_load_i64(got->data, got->dtype, i) == rlx_load_i64(ref->data, ref->dtype, i);
      if (!eq) mark_bad(r, i);
    }
    r->cosine = r->n_mismatch ? 0 : 1;
    r->pass = r->n_mismatch == 0;
    if (!r->pass)
      snprintf(r->reason, sizeof r->reason, "%lld of %lld elements differ (first at %lld)",
               (long long)r->n_mismatch, (long long)n, (long long)r->first_bad);
    return;
  }
  double dot = 0, ng = 0, nr = 0, refmax = 0;
  int64_t nonfinite_bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double a = rlx_load_f64(got->data, got->dtype, i), b = rlx_load_f64(ref->data, ref->dtype, i);
    bool fa = isfinite(a), fb = isfinite(b);
    if (!fb || !fa) {
      bool ok = !fb && !fa && ((isnan(a) && isnan(b)) || a == b);
      if (!ok) nonfinite_bad++, mark_bad(r, i);
      continue;
    }
    double d = fabs(a - b);
    if (d > r->max_abs) r->max_abs = d;
    if (fabs(b) > refmax) refmax = fabs(b);
    dot += a * b, ng += a * a, nr += b * b;
  }
  r->tol = o.atol + o.rtol * refmax;
  r->max_rel = refmax > 0 ? r->max_abs / refmax : r->max_abs;
  if (ng == 0 && nr == 0) r->cosine = 1;
  else if (ng == 0 || nr == 0) r->cosine = 0;
  else r->cosine = dot / (sqrt(ng) * sqrt(nr));
  for (int64_t i = 0; i < n && r->max_abs > r->tol; i++) { /* count elements out of tolerance */
    double a = rlx_load_f64(got->data, got->dtype, i), b = rlx_load_f64(ref->data, ref->dtype, i);
    if (isfinite(a) && isfinite(b) && fabs(a - b) > r->tol) mark_bad(r, i);
  }
  if (nonfinite_bad)
    snprintf(r->reason, sizeof r->reason, "%lld non-finite value(s) differ from the reference (first at %lld)",
             (long long)nonfinite_bad, (long long)r->first_bad);
  else if (r->max_abs > r->tol)
    snprintf(r->reason, sizeof r->reason, "max abs error %.3g exceeds %.3g (atol %g + rtol %g x max|ref| %.3g)",
             r->max_abs, r->tol, o.atol, o.rtol, refmax);
  else if (r->cosine < o.cosine)
    snprintf(r->reason, sizeof r->reason, "cosine %.9f is below %.9f", r->cosine, o.cosine);
  r->pass = r->reason[0] == '\0';
}

static double cosine_of(double dot, double na, double nb) {
  return na == 0 && nb == 0 ? 1 : na == 0 || nb == 0 ? 0 : dot / (sqrt(na) * sqrt(nb));
}

void rlx_parity_arbitrate(const rlx_tensor_view *got, const rlx_tensor_view *ref, const rlx_tensor_view *ref64,
                          const rlx_parity_opts *user, rlx_parity_result *r) {
  if (r->pass || !rlx_dtype_is_float(ref->dtype) || !rlx_dtype_is_float(ref64->dtype))
    return;
  int64_t n = rlx_view_numel(ref);
  if (rlx_view_numel(ref64) != n || ref64->rank != ref->rank) return;
  for (int i = 0; i < ref->rank; i++)
    if (ref64->dims[i] != ref->dims[i]) return;
  if (strncmp(r->reason, "max abs error", 13) && strncmp(r->reason, "cosine", 6)) return;
  rlx_parity_opts o;
  resolve_opts(ref->dtype, user, &o);
  double er = 0, et = 0, dot = 0, dott = 0, ng = 0, nt = 0, n64 = 0, max64 = 0;
  int64_t bad64 = 0, first64 = -1;
  for (int64_t i = 0; i < n; i++) {
    double a = rlx_load_f64(got->data, got->dtype, i), t = rlx_load_f64(ref->data, ref->dtype, i),
           x = rlx_load_f64(ref64->data, ref64->dtype, i);
    if (!isfinite(x)) {
      /* the float64 value says nothing about a finite rlx or torch value:
       * such an element can never be passed by the arbiter */
      if (isfinite(a) || isfinite(t)) {
        if (first64 < 0) first64 = i;
        bad64++;
      }
      continue;
    }
    if (!isfinite(a) || !isfinite(t)) continue; /* equal non-finite values (compare checked them) */
    er = fmax(er, fabs(a - x)), et = fmax(et, fabs(t - x)), max64 = fmax(max64, fabs(x));
    dot += a * x, dott += t * x, ng += a * a, nt += t * t, n64 += x * x;
  }
  r->arbitrated = true;
  if (bad64) {
    char prev[sizeof r->reason];
    memcpy(prev, r->reason, sizeof prev);
    snprintf(r->reason, sizeof r->reason, "%.110s; not arbitrated: the float64 reference is non-finite at %lld "
             "element(s) where rlx or torch is finite (first at %lld)", prev, (long long)bad64, (long long)first64);
    return;
  }
  double cos = cosine_of(dot, ng, n64), cost = cosine_of(dott, nt, n64);
  /* the same slack on both figures: within max(tolerance, 2x torch's own distance from float64) */
  double bar = fmax(o.atol + o.rtol * max64, RLX_PARITY_ARBITER_SLACK * et);
  double cos_bar = fmin(o.cosine, 1.0 - RLX_PARITY_ARBITER_SLACK * (1.0 - cost));
  r->err64_rlx = er, r->err64_torch = et;
  /* float rounding moves eager torch a little from float64, never far: an
   * out64 that torch is far from (a broken or forged reference) arbitrates
   * nothing */
  double bar32 = o.atol + o.rtol * max64;
  bool plausible = et <= RLX_PARITY_ARBITER_MAX_DRIFT * bar32 &&
                   1.0 - cost <= RLX_PARITY_ARBITER_MAX_DRIFT * (1.0 - o.cosine);
  if (plausible && er <= bar && cos >= cos_bar) {
    r->pass = true;
    snprintf(r->reason, sizeof r->reason,
             "float rounding: eager torch is itself %.3g from float64 (cosine %.7f), rlx is %.3g from it "
             "(cosine %.7f; bars %.3g, %.7f)", et, cost, er, cos, bar, cos_bar);
  } else {
    char prev[sizeof r->reason];
    memcpy(prev, r->reason, sizeof prev);
    snprintf(r->reason, sizeof r->reason,
             "%.90s; against float64 rlx is %.3g off (cosine %.7f), eager torch %.3g (cosine %.7f); "
             "bars %.3g and cosine %.7f%s", prev, er, cos, et, cost, bar, cos_bar,
             plausible ? "" : " (torch is too far from float64 for float rounding: not arbitrated)");
  }
}
