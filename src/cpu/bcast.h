/*
 * bcast.h — two operands broadcast to an output, walked as rows: what the
 * elementwise kernels with any broadcast share (cpu/eltwise.c for float
 * arithmetic, cpu/cast.c for bool / uint8 logic).
 *
 * Output axes of size 1 are dropped and neighbouring axes merged where both
 * operands stay contiguous across them (or both repeat); the last merged
 * axis is a row of L elements, along which each operand is contiguous
 * (stride 1) or one repeated element (stride 0) — an operand strided along
 * it makes rows of length 1. A task takes rows [r0, r1): rlx_bcast_seek
 * gives the operands' offsets at r0, rlx_bcast_next steps them (an
 * odometer over the outer axes).
 */
#ifndef RLX_CPU_BCAST_H
#define RLX_CPU_BCAST_H

#include "ops/ops_util.h"

typedef struct rlx_bcast_plan {
  int rank;                           /* merged axes, the row's included */
  int64_t dims[RLX_MAX_RANK + 1];     /* + 1: the row of length 1 an operand strided along the last axis adds */
  int64_t sa[RLX_MAX_RANK + 1], sb[RLX_MAX_RANK + 1];
  int64_t rows, L;                    /* rows of L elements; rows * L = the output's elements */
} rlx_bcast_plan;

/* The plan for a and b broadcast to out (shapes as numpy broadcasts them). */
static inline void rlx_bcast_plan_of(const rlx_shape *as, const rlx_shape *bs, const rlx_shape *os, rlx_bcast_plan *p) {
  int64_t sa[RLX_MAX_RANK], sb[RLX_MAX_RANK];
  rlx_broadcast_strides(as, os, sa);
  rlx_broadcast_strides(bs, os, sb);
  p->rank = 0;
  for (int i = 0; i < os->rank; i++) {
    int64_t d = os->dims[i];
    if (d == 1) continue;
    int r = p->rank - 1;
    if (p->rank > 0 && p->sa[r] == sa[i] * d && p->sb[r] == sb[i] * d) {
      p->dims[r] *= d, p->sa[r] = sa[i], p->sb[r] = sb[i];
    } else {
      p->dims[p->rank] = d, p->sa[p->rank] = sa[i], p->sb[p->rank] = sb[i], p->rank++;
    }
  }
  if (p->rank == 0) p->dims[0] = 1, p->sa[0] = p->sb[0] = 0, p->rank = 1;
  int r = p->rank - 1;
  if (p->sa[r] > 1 || p->sb[r] > 1) p->dims[p->rank] = 1, p->sa[p->rank] = p->sb[p->rank] = 0, p->rank++;
  p->L = p->dims[p->rank - 1];
  int64_t n = rlx_shape_numel(os);
  p->rows = p->L > 0 ? n / p->L : 0;
}

/* idx and the offsets of a and b (elements) at the start of row r. */
static inline void rlx_bcast_seek(const rlx_bcast_plan *p, int64_t r, int64_t idx[RLX_MAX_RANK + 1], int64_t *oa,
                                  int64_t *ob) {
  *oa = *ob = 0;
  for (int d = p->rank - 2; d >= 0; d--) {
    idx[d] = r % p->dims[d], r /= p->dims[d];
    *oa += idx[d] * p->sa[d], *ob += idx[d] * p->sb[d];
  }
}

/* From one row to the next. */
static inline void rlx_bcast_next(const rlx_bcast_plan *p, int64_t idx[RLX_MAX_RANK + 1], int64_t *oa, int64_t *ob) {
  for (int d = p->rank - 2; d >= 0; d--) {
    *oa += p->sa[d], *ob += p->sb[d];
    if (++idx[d] < p->dims[d]) break;
    *oa -= idx[d] * p->sa[d], *ob -= idx[d] * p->sb[d];
    idx[d] = 0;
  }
}

#endif
