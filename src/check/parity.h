/*
 * parity.h — comparing rlx's outputs with PyTorch's reference values.
 *
 * Rules (DESIGN.md, "Checking parity"):
 *  - shapes and dtypes must be equal;
 *  - a position that is non-finite in the reference must hold the same
 *    non-finite value (NaN, +inf, -inf) in rlx; any other non-finite value in
 *    rlx fails;
 *  - integer and bool references must match exactly;
 *  - floats: cosine similarity (f64, over positions finite in both) >= cosine
 *    and max |rlx - ref| <= atol + rtol * max |ref|.
 */
#ifndef RLX_PARITY_H
#define RLX_PARITY_H

#include "core/core.h"

typedef struct rlx_parity_opts {
  double atol, rtol, cosine; /* negative: the dtype's default */
} rlx_parity_opts;

typedef struct rlx_parity_result {
  bool pass;
  double cosine, max_abs, max_rel, tol;
  int64_t numel;
  int64_t n_mismatch;   /* elements out of tolerance, non-finite mismatches, or unequal ints */
  int64_t first_bad;    /* index of the first such element, -1 if none */
  char reason[512];     /* why it failed, "" when it passed */
  /* float64 arbitration (rlx_parity_arbitrate): set when it was consulted */
  bool arbitrated;
  double err64_rlx, err64_torch; /* max |rlx - f64|, max |torch - f64| */
} rlx_parity_result;

/* Default thresholds for a reference dtype. */
void rlx_parity_defaults(rlx_dtype t, rlx_parity_opts *o);
/* Compares got with ref; `o` may hold negatives for defaults. */
void rlx_parity_compare(const rlx_tensor_view *got, const rlx_tensor_view *ref,
                        const rlx_parity_opts *o, rlx_parity_result *r);

/* Float64 arbitration, for a float output that failed the comparison above on
 * tolerance or cosine alone (never on shape, dtype or non-finite values).
 * `ref64` holds the same model run in float64 by the exporter. Eager torch in
 * float32 is itself an approximation: on deep, badly conditioned networks its
 * own rounding error can exceed the f32 bar, and then two correct float32
 * programs disagree by more than the bar. The output passes when rlx is as
 * close to the float64 values as eager torch is, within a factor of
 * RLX_PARITY_ARBITER_SLACK (two correct f32 programs differ in summation
 * order) or within the ordinary tolerance, and its cosine against float64
 * meets the bar. Sets r->arbitrated, the two errors, and r->pass/reason. */
#define RLX_PARITY_ARBITER_SLACK 2.0
/* It arbitrates only when eager torch's own distance from float64 is within
 * this factor of the float32 bar (and its cosine deficit within this factor
 * of the cosine bar's): float rounding puts torch near float64 (the zoo's
 * worst, inception_v4, is 3.3x the bar), so a reference far from it is
 * broken, not rounded. Elements whose float64 value is non-finite while rlx
 * or torch is finite make the output fail: the arbiter never passes them. */
#define RLX_PARITY_ARBITER_MAX_DRIFT 32.0
void rlx_parity_arbitrate(const rlx_tensor_view *got, const rlx_tensor_view *ref, const rlx_tensor_view *ref64,
                          const rlx_parity_opts *o, rlx_parity_result *r);

#endif
