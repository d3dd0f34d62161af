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
  char reason[256];     /* why it failed, "" when it passed */
} rlx_parity_result;

/* Default thresholds for a reference dtype. */
void rlx_parity_defaults(rlx_dtype t, rlx_parity_opts *o);
/* Compares got with ref; `o` may hold negatives for defaults. */
void rlx_parity_compare(const rlx_tensor_view *got, const rlx_tensor_view *ref,
                        const rlx_parity_opts *o, rlx_parity_result *r);

#endif
