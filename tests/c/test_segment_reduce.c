/*
 * test_segment_reduce.c — the segment_reduce op (ops/segment_reduce.c) on
 * hand-computed values: each reduction over offsets with an empty segment,
 * initial, mean's special cases, NaN in max, segments along an inner axis
 * with per-row offsets; and the run-time refusals (segments outside the
 * axis, lengths that do not add up when checked, integer data).
 */
#include <math.h>

#include "kernel_test.h"
#include "test.h"

static rlx_status seg(krun *r, rlx_reduce_kind k, int axis, bool has_init, double init, bool check, tens x, tens off) {
  rlx_params p = {.segment_reduce = {.kind = k, .axis = axis, .has_initial = has_init, .initial = init,
                                     .check_sum = check}};
  return krun_op(r, RLX_OP_SEGMENT_REDUCE, &p, 2, (tens[]){x, off}, 1);
}

#define X5 TF(F32, SH(5), 1, 2, 3, 4, 5)
#define OFF TI(I64, SH(5), 0, 0, 1, 3, 5) /* segments [], [1], [2 3], [4 5] */

TEST(reductions) {
  krun r;
  CHECK_OK(seg(&r, RLX_REDUCE_SUM, 0, false, 0, true, X5, OFF));
  CHECK_F(&r, 0, 0, 0, 1, 5, 9);
  krun_free(&r);
  CHECK_OK(seg(&r, RLX_REDUCE_MEAN, 0, false, 0, true, X5, OFF)); /* empty without initial: NaN */
  CHECK_F(&r, 0, 0, NAN, 1, 2.5, 4.5);
  krun_free(&r);
  CHECK_OK(seg(&r, RLX_REDUCE_MEAN, 0, true, 1, true, X5, OFF)); /* (initial + sum) / length; empty: initial */
  CHECK_F(&r, 0, 0, 1, 2, 3, 5);
  krun_free(&r);
  CHECK_OK(seg(&r, RLX_REDUCE_MAX, 0, false, 0, true, X5, OFF));
  CHECK_F(&r, 0, 0, -INFINITY, 1, 3, 5);
  krun_free(&r);
  CHECK_OK(seg(&r, RLX_REDUCE_MIN, 0, true, 2, true, X5, OFF));
  CHECK_F(&r, 0, 0, 2, 1, 2, 2);
  krun_free(&r);
  CHECK_OK(seg(&r, RLX_REDUCE_PROD, 0, false, 0, true, X5, OFF));
  CHECK_F(&r, 0, 0, 1, 1, 6, 20);
  krun_free(&r);
  /* max keeps a NaN once seen, whatever follows */
  CHECK_OK(seg(&r, RLX_REDUCE_MAX, 0, false, 0, false, TF(F32, SH(3), 1, NAN, 3), TI(I64, SH(2), 0, 3)));
  CHECK_F(&r, 0, 0, NAN);
  krun_free(&r);
}

/* axis 1 of [3, 4, 2] with per-row offsets [3, 3] (lengths [1 3], [2 2], [4 0]) */
TEST(inner_axis) {
  krun r;
  tens x = TF(F32, SH(3, 4, 2), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23);
  CHECK_OK(seg(&r, RLX_REDUCE_SUM, 1, false, 0, true, x, TI(I64, SH(3, 3), 0, 1, 4, 0, 2, 4, 0, 4, 4)));
  CHECK_SHAPE(&r, 0, F32, 3, 2, 2);
  CHECK_F(&r, 0, 0, 0, 1, 12, 15, 18, 20, 26, 28, 76, 80, 0, 0);
  krun_free(&r);
}

TEST(refusals) {
  krun r;
  CHECK_ERR(seg(&r, RLX_REDUCE_SUM, 0, false, 0, false, X5, TI(I64, SH(3), 0, 3, 6)), RLX_ERR_RUNTIME,
            "segment 1 spans [3, 6)");
  krun_free(&r);
  CHECK_ERR(seg(&r, RLX_REDUCE_SUM, 0, false, 0, false, X5, TI(I64, SH(3), 0, 3, 2)), RLX_ERR_RUNTIME,
            "segment 1 spans [3, 2)");
  krun_free(&r);
  CHECK_ERR(seg(&r, RLX_REDUCE_SUM, 0, false, 0, true, X5, TI(I64, SH(3), 0, 1, 2)), RLX_ERR_RUNTIME,
            "row 0 sums to 2, the axis has 5");
  krun_free(&r);
  CHECK_OK(seg(&r, RLX_REDUCE_SUM, 0, false, 0, false, X5, TI(I64, SH(3), 0, 1, 2))); /* unsafe: not checked */
  CHECK_F(&r, 0, 0, 1, 2);
  krun_free(&r);
  CHECK_ERR(seg(&r, RLX_REDUCE_SUM, 0, false, 0, false, TI(I64, SH(2), 1, 2), TI(I64, SH(2), 0, 2)),
            RLX_ERR_UNSUPPORTED, "takes float data");
  krun_free(&r);
}

TEST_MAIN(reductions, inner_axis, refusals)
