/*
 * test_kernels_moe.c — the reference kernels of the ops a mixture-of-experts
 * layer lowers onto besides matmul: histc (tokens per expert) and
 * grouped_matmul (one matmul per expert's rows), with their shape-inference
 * and run-time errors. Expected values were computed by hand; the histc
 * bins of values on an edge also agree with PyTorch 2.15 on the CPU.
 */
#include "kernel_test.h"

/* A zero-size tensor of dtype t. */
static tens empty(rlx_dtype t, rlx_shape s) {
  static const double none[1] = {0};
  static const int64_t inone[1] = {0};
  return (tens){t, s, rlx_dtype_is_float(t) ? none : NULL, rlx_dtype_is_float(t) ? NULL : inone, 0};
}

static rlx_status histc(krun *r, int64_t bins, double min, double max, tens x) {
  rlx_params p = {.histc = {.bins = bins, .min = min, .max = max}};
  return krun_op(r, RLX_OP_HISTC, &p, 1, &x, 1);
}

/* ==== histc ==== */

TEST(histc_explicit_range) {
  krun r;
  /* [0, 3] in 4 bins of 0.75: 0, 0.5 -> 0; 1 -> 1; 2 -> 2; 3, 3 -> 3 (max is in the last bin);
   * -1 and 4 are outside */
  CHECK_OK(histc(&r, 4, 0, 3, TF(F32, SH(8), 0, 1, 2, 3, 3, 0.5, -1, 4)));
  CHECK_SHAPE(&r, 0, F32, 4);
  CHECK_F(&r, 0, 0, 2, 1, 1, 2);
  krun_free(&r);
  /* NaN and inf are not counted when the range is given */
  CHECK_OK(histc(&r, 3, 0, 3, TF(F32, SH(4), 1, NAN, 2, INFINITY)));
  CHECK_F(&r, 0, 0, 0, 1, 1);
  krun_free(&r);
  /* f64 counts in f64; a rank-2 input is flattened */
  CHECK_OK(histc(&r, 2, -1, 1, TF(F64, SH(2, 3), -1, -0.5, 0, 0.5, 1, 2)));
  CHECK_SHAPE(&r, 0, F64, 2);
  CHECK_F(&r, 0, 0, 2, 3);
  krun_free(&r);
  /* an empty input: all zero */
  CHECK_OK(histc(&r, 3, 0, 1, empty(RLX_DTYPE_F32, SH(0, 2))));
  CHECK_F(&r, 0, 0, 0, 0, 0);
  krun_free(&r);
}

TEST(histc_data_range) {
  krun r;
  /* min == max: the data's range [-1, 4], 4 bins of 1.25:
   * -1, 0 -> 0; 0.5, 1 -> 1; 2 -> 2; 3, 3, 4 -> 3 */
  CHECK_OK(histc(&r, 4, 0, 0, TF(F32, SH(8), 0, 1, 2, 3, 3, 0.5, -1, 4)));
  CHECK_F(&r, 0, 0, 2, 2, 1, 3);
  krun_free(&r);
  CHECK_OK(histc(&r, 4, 7, 7, TF(F32, SH(8), 0, 1, 2, 3, 3, 0.5, -1, 4))); /* any min == max */
  CHECK_F(&r, 0, 0, 2, 2, 1, 3);
  krun_free(&r);
  /* constant data widens to [v - 1, v + 1] = [1, 3]: 2 is bin 2 of 4 */
  CHECK_OK(histc(&r, 4, 0, 0, TF(F32, SH(3), 2, 2, 2)));
  CHECK_F(&r, 0, 0, 0, 0, 3, 0);
  krun_free(&r);
  CHECK_OK(histc(&r, 4, 0, 0, empty(RLX_DTYPE_F32, SH(0)))); /* empty: [-1, 1] */
  CHECK_F(&r, 0, 0, 0, 0, 0, 0);
  krun_free(&r);
  /* NaN or inf in the data makes the range non-finite: an error, as torch raises */
  CHECK_ERR(histc(&r, 4, 0, 0, TF(F32, SH(3), 1, NAN, 2)), RLX_ERR_RUNTIME, "histc: range of [nan, nan] is not finite");
  krun_free(&r);
  CHECK_ERR(histc(&r, 4, 0, 0, TF(F64, SH(3), 1, INFINITY, 2)), RLX_ERR_RUNTIME, "range of [1, inf] is not finite");
  krun_free(&r);
}

/* The bin is computed in the input's dtype, step by step, as torch does; x =
 * 0.5 lies on the edge between bins 2 and 3 of [-1.3, 2.9] in 7 bins, and the
 * rounding decides. f32: lo = -1.29999995, hi = 2.90000010; x - lo =
 * 1.79999995, * 7 = 12.5999994 (rounded), hi - lo = 4.19999981 (a tie,
 * rounded to even), 12.5999994 / 4.19999981 = 3.00000004 -> 3.0: bin 3, where
 * double arithmetic on the same floats gives 2.99999985 (bin 2).
 * f16: lo = -1.2998046875, hi = 2.900390625; x - lo = 1.7998046875 (exact),
 * * 7 = 12.5986... -> 12.6015625, hi - lo = 4.2001953125 -> 4.19921875,
 * 12.6015625 / 4.19921875 = 3.0009... -> 3.0: bin 3, where float arithmetic
 * without the f16 rounding gives 2.9995 (bin 2). */
TEST(histc_rounding_in_dtype) {
  krun r;
  CHECK_OK(histc(&r, 7, -1.3, 2.9, TF(F32, SH(1), 0.5)));
  CHECK_F(&r, 0, 0, 0, 0, 0, 1, 0, 0, 0);
  krun_free(&r);
  CHECK_OK(histc(&r, 7, -1.3, 2.9, TF(F16, SH(1), 0.5)));
  CHECK_SHAPE(&r, 0, F16, 7);
  CHECK_F(&r, 0, 0, 0, 0, 0, 1, 0, 0, 0);
  krun_free(&r);
}

TEST(histc_infer_errors) {
  krun r;
  CHECK_ERR(histc(&r, 0, 0, 1, TF(F32, SH(2), 0, 1)), RLX_ERR_SHAPE, "bins must be > 0");
  krun_free(&r);
  CHECK_ERR(histc(&r, INT64_MAX / 4, 0, 1, TF(F32, SH(2), 0, 1)), RLX_ERR_SHAPE, "bins is too many");
  krun_free(&r);
  CHECK_ERR(histc(&r, 3, 2, 1, TF(F32, SH(2), 0, 1)), RLX_ERR_SHAPE, "max must be larger than min");
  krun_free(&r);
  CHECK_ERR(histc(&r, 3, 0, INFINITY, TF(F32, SH(2), 0, 1)), RLX_ERR_SHAPE, "not finite");
  krun_free(&r);
  CHECK_ERR(histc(&r, 3, 0, 1, TI(I64, SH(2), 0, 1)), RLX_ERR_UNSUPPORTED, "histc takes a float tensor");
  krun_free(&r);
}

/* ==== grouped_matmul ==== */

/* x [5, 2] = 1..10; w [3, 2, 2]: w0 = identity, w1 = swap, w2 = 2 * identity. */
#define GX(t) TF(t, SH(5, 2), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
#define GW(t) TF(t, SH(3, 2, 2), 1, 0, 0, 1, 0, 1, 1, 0, 2, 0, 0, 2)

static rlx_status gmm(krun *r, tens x, tens w, tens offs) {
  rlx_params p = {0};
  return krun_op(r, RLX_OP_GROUPED_MATMUL, &p, 3, (tens[]){x, w, offs}, 1);
}

TEST(grouped_matmul_groups) {
  krun r;
  /* offsets [1, 1, 4]: row 0 by w0, group 1 empty, rows 1..3 by w2, row 4 past the end is zero */
  CHECK_OK(gmm(&r, GX(F32), GW(F32), TI(I64, SH(3), 1, 1, 4)));
  CHECK_SHAPE(&r, 0, F32, 5, 2);
  CHECK_F(&r, 0, 0, 1, 2, 6, 8, 10, 12, 14, 16, 0, 0);
  krun_free(&r);
  /* [2, 3, 5] with i32 offsets in f64: rows 0, 1 by w0, row 2 by w1 (swapped), rows 3, 4 by w2 */
  CHECK_OK(gmm(&r, GX(F64), GW(F64), TI(I32, SH(3), 2, 3, 5)));
  CHECK_SHAPE(&r, 0, F64, 5, 2);
  CHECK_F(&r, 0, 0, 1, 2, 3, 4, 6, 5, 14, 16, 18, 20);
  krun_free(&r);
  CHECK_OK(gmm(&r, GX(F32), GW(F32), TI(I64, SH(3), 0, 0, 0))); /* no rows in any group */
  CHECK_F(&r, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  krun_free(&r);
  /* no groups at all (E = 0): every row is past the last offset */
  CHECK_OK(gmm(&r, TF(F32, SH(2, 2), 1, 2, 3, 4), empty(RLX_DTYPE_F32, SH(0, 2, 3)), empty(RLX_DTYPE_I64, SH(0))));
  CHECK_SHAPE(&r, 0, F32, 2, 3);
  CHECK_F(&r, 0, 0, 0, 0, 0, 0, 0, 0);
  krun_free(&r);
}

TEST(grouped_matmul_bad_offsets) {
  krun r;
  CHECK_ERR(gmm(&r, GX(F32), GW(F32), TI(I64, SH(3), 3, 1, 5)), RLX_ERR_RUNTIME,
            "grouped_matmul: offsets must be non-decreasing from 0, but offsets[1] = 1 follows 3");
  krun_free(&r);
  CHECK_ERR(gmm(&r, GX(F32), GW(F32), TI(I32, SH(3), 1, 2, 6)), RLX_ERR_RUNTIME,
            "grouped_matmul: offsets[2] = 6 is past the 5 rows of the input");
  krun_free(&r);
  CHECK_ERR(gmm(&r, GX(F32), GW(F32), TI(I64, SH(3), -2, 1, 5)), RLX_ERR_RUNTIME, "offsets[0] = -2 follows 0");
  krun_free(&r);
}

TEST(grouped_matmul_infer_errors) {
  krun r;
  CHECK_ERR(gmm(&r, TF(F32, SH(5, 3), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), GW(F32), TI(I64, SH(3), 1, 2, 3)),
            RLX_ERR_SHAPE, "inner dims differ: x has K=3, w has 2");
  krun_free(&r);
  CHECK_ERR(gmm(&r, GX(F32), GW(F32), TI(I64, SH(2), 1, 2)), RLX_ERR_SHAPE, "2 offsets for 3 groups");
  krun_free(&r);
  CHECK_ERR(gmm(&r, GX(F32), GW(F32), TF(F32, SH(3), 1, 2, 3)), RLX_ERR_SHAPE, "offsets must be i32 or i64");
  krun_free(&r);
  CHECK_ERR(gmm(&r, GX(F32), TF(F32, SH(2, 2), 1, 0, 0, 1), TI(I64, SH(3), 1, 2, 3)), RLX_ERR_SHAPE,
            "got ranks 2, 2 and 1");
  krun_free(&r);
  CHECK_ERR(gmm(&r, GX(F16), GW(F16), TI(I64, SH(3), 1, 2, 3)), RLX_ERR_UNSUPPORTED, "computes in f32 or f64");
  krun_free(&r);
}

TEST_MAIN(histc_explicit_range, histc_data_range, histc_rounding_in_dtype, histc_infer_errors,
          grouped_matmul_groups, grouped_matmul_bad_offsets, grouped_matmul_infer_errors)
