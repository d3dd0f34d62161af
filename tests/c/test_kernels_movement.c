/*
 * test_kernels_movement.c — the reference kernels of data movement (reshape,
 * permute, slice, concat, expand, pad), indexing (gather, advanced index,
 * scan) and creation (full, arange), with their shape-inference errors.
 * Expected values were computed by hand or, where noted, with PyTorch 2.15 on
 * the CPU (f32 unless said otherwise). test_kernels_reduce.c covers the
 * reductions, softmax, normalizations and attention.
 */
#include "kernel_test.h"

#define INF INFINITY

/* ==== data movement ==== */

TEST(reshape_permute) {
  krun r;
  rlx_params p = {.shape = {.shape = SH(3, 1, 2)}};
  CHECK_OK(krun_op(&r, RLX_OP_RESHAPE, &p, 1, (tens[]){TI(I64, SH(2, 3), 1, 2, 3, 4, 5, 6)}, 1));
  CHECK_SHAPE(&r, 0, I64, 3, 1, 2);
  CHECK_I(&r, 0, 1, 2, 3, 4, 5, 6);
  krun_free(&r);
  p.shape.shape = SH(4);
  CHECK_ERR(krun_op(&r, RLX_OP_RESHAPE, &p, 1, (tens[]){TI(I64, SH(2, 3), 1, 2, 3, 4, 5, 6)}, 1),
            RLX_ERR_SHAPE, "cannot reshape [2, 3] to [4]");
  krun_free(&r);
  /* permute (2, 0, 1) of the [2,3,4] ramp: out[a][b][c] = x[b][c][a] =
   * 12b + 4c + a */
  double xb[24];
  rlx_params pp = {.permute = {.perm = {2, 0, 1, -1, -1, -1, -1, -1}}};
  CHECK_OK(
      krun_op(&r, RLX_OP_PERMUTE, &pp, 1, (tens[]){ramp(RLX_DTYPE_I32, SH(2, 3, 4), xb, 24)}, 1));
  CHECK_SHAPE(&r, 0, I32, 4, 2, 3);
  CHECK_I(&r, 0, 0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19,
          23);
  krun_free(&r);
  pp.permute.perm[1] = 2; /* (2, 2, 1): not a permutation */
  CHECK_ERR(krun_op(&r, RLX_OP_PERMUTE, &pp, 1, (tens[]){ramp(RLX_DTYPE_I32, SH(2, 3, 4), xb, 24)},
                    1),
            RLX_ERR_SHAPE, "not a permutation");
  krun_free(&r);
}

/* slice of the [2,6] ramp along axis 1 */
TEST(slice) {
  double xb[12];
  krun r;
  rlx_params p = {.slice = {.axis = 1, .start = 1, .end = 5, .step = 2}};
  CHECK_OK(krun_op(&r, RLX_OP_SLICE, &p, 1, (tens[]){ramp(RLX_DTYPE_F32, SH(2, 6), xb, 12)}, 1));
  CHECK_SHAPE(&r, 0, F32, 2, 2);
  CHECK_F(&r, 0, 0, 1, 3, 7, 9);
  krun_free(&r);
  p.slice = (rlx_slice_params){.axis = 1, .start = 2, .end = 6, .step = 3}; /* 2, 5 */
  CHECK_OK(krun_op(&r, RLX_OP_SLICE, &p, 1, (tens[]){ramp(RLX_DTYPE_F32, SH(2, 6), xb, 12)}, 1));
  CHECK_F(&r, 0, 0, 2, 5, 8, 11);
  krun_free(&r);
  p.slice = (rlx_slice_params){.axis = 0, .start = 1, .end = 2, .step = 1};
  CHECK_OK(krun_op(&r, RLX_OP_SLICE, &p, 1, (tens[]){ramp(RLX_DTYPE_F32, SH(2, 6), xb, 12)}, 1));
  CHECK_SHAPE(&r, 0, F32, 1, 6);
  CHECK_F(&r, 0, 0, 6, 7, 8, 9, 10, 11);
  krun_free(&r);
  p.slice = (rlx_slice_params){.axis = 1, .start = 3, .end = 3, .step = 1}; /* empty */
  CHECK_OK(krun_op(&r, RLX_OP_SLICE, &p, 1, (tens[]){ramp(RLX_DTYPE_F32, SH(2, 6), xb, 12)}, 1));
  CHECK_SHAPE(&r, 0, F32, 2, 0);
  krun_free(&r);
  p.slice = (rlx_slice_params){.axis = 1, .start = 0, .end = 7, .step = 1};
  CHECK_ERR(krun_op(&r, RLX_OP_SLICE, &p, 1, (tens[]){ramp(RLX_DTYPE_F32, SH(2, 6), xb, 12)}, 1),
            RLX_ERR_SHAPE, "[0:7:1] of a dim of size 6");
  krun_free(&r);
}

/* concat on axis 1 of [2,1,2], [2,2,2], [2,1,2] -> [2,4,2] */
TEST(concat) {
  krun r;
  rlx_params p = {.axis = {.axis = 1}};
  CHECK_OK(krun_op(&r, RLX_OP_CONCAT, &p, 3,
                   (tens[]){TI(I64, SH(2, 1, 2), 1, 2, 3, 4),
                            TI(I64, SH(2, 2, 2), 10, 11, 12, 13, 14, 15, 16, 17),
                            TI(I64, SH(2, 1, 2), 20, 21, 22, 23)},
                   1));
  CHECK_SHAPE(&r, 0, I64, 2, 4, 2);
  CHECK_I(&r, 0, 1, 2, 10, 11, 12, 13, 20, 21, 3, 4, 14, 15, 16, 17, 22, 23);
  krun_free(&r);
  CHECK_ERR(krun_op(&r, RLX_OP_CONCAT, &p, 2,
                    (tens[]){TI(I64, SH(2, 1), 1, 2), TI(I64, SH(3, 1), 1, 2, 3)}, 1),
            RLX_ERR_SHAPE, "differs from input 0 on axis 0");
  krun_free(&r);
  CHECK_ERR(krun_op(&r, RLX_OP_CONCAT, &p, 2,
                    (tens[]){TI(I64, SH(2, 1), 1, 2), TF(F32, SH(2, 1), 1, 2)}, 1),
            RLX_ERR_SHAPE, "concat input 1");
  krun_free(&r);
}

/* expand [3,1] -> [2,3,4]: out[i][j][k] = x[j] */
TEST(expand) {
  krun r;
  rlx_params p = {.shape = {.shape = SH(2, 3, 4)}};
  CHECK_OK(krun_op(&r, RLX_OP_EXPAND, &p, 1, (tens[]){TI(BOOL, SH(3, 1), 1, 0, 1)}, 1));
  CHECK_SHAPE(&r, 0, BOOL, 2, 3, 4);
  CHECK_I(&r, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1);
  krun_free(&r);
  p.shape.shape = SH(2, 4);
  CHECK_ERR(krun_op(&r, RLX_OP_EXPAND, &p, 1, (tens[]){TI(BOOL, SH(3, 1), 1, 0, 1)}, 1),
            RLX_ERR_SHAPE, "cannot expand [3, 1] to [2, 4]");
  krun_free(&r);
}

static rlx_status pad(krun *r, rlx_pad_mode mode, int axis, int64_t lo, int64_t hi, double value,
                      tens x) {
  rlx_params p = {.pad = {.mode = mode, .value = value}};
  p.pad.lo[axis] = lo;
  p.pad.hi[axis] = hi;
  return krun_op(r, RLX_OP_PAD, &p, 1, &x, 1);
}

/* F.pad on the last axis unless said otherwise */
TEST(pad) {
  krun r;
  /* (1, 2) with 7 on [[1,2],[3,4]] */
  CHECK_OK(pad(&r, RLX_PAD_CONSTANT, 1, 1, 2, 7, TF(F32, SH(2, 2), 1, 2, 3, 4)));
  CHECK_SHAPE(&r, 0, F32, 2, 5);
  CHECK_F(&r, 0, 0, 7, 1, 2, 7, 7, 7, 3, 4, 7, 7);
  krun_free(&r);
  /* negative: (-1, 1) crops the first column and appends one of 7 */
  CHECK_OK(pad(&r, RLX_PAD_CONSTANT, 1, -1, 1, 7, TI(I64, SH(2, 2), 1, 2, 3, 4)));
  CHECK_SHAPE(&r, 0, I64, 2, 2);
  CHECK_I(&r, 0, 2, 7, 4, 7);
  krun_free(&r);
  CHECK_OK(pad(&r, RLX_PAD_CONSTANT, 0, -1, 0, 0, TI(I64, SH(2, 2), 1, 2, 3, 4)));
  CHECK_SHAPE(&r, 0, I64, 1, 2);
  CHECK_I(&r, 0, 3, 4);
  krun_free(&r);
  /* reflect (2, 2): [1,2,3,4] -> [3,2,1,2,3,4,3,2] */
  CHECK_OK(pad(&r, RLX_PAD_REFLECT, 0, 2, 2, 0, TF(F32, SH(4), 1, 2, 3, 4)));
  CHECK_SHAPE(&r, 0, F32, 8);
  CHECK_F(&r, 0, 0, 3, 2, 1, 2, 3, 4, 3, 2);
  krun_free(&r);
  /* replicate (2, 1), circular (2, 1) */
  CHECK_OK(pad(&r, RLX_PAD_REPLICATE, 0, 2, 1, 0, TF(F32, SH(4), 1, 2, 3, 4)));
  CHECK_F(&r, 0, 0, 1, 1, 1, 2, 3, 4, 4);
  krun_free(&r);
  CHECK_OK(pad(&r, RLX_PAD_CIRCULAR, 0, 2, 1, 0, TF(F32, SH(4), 1, 2, 3, 4)));
  CHECK_F(&r, 0, 0, 3, 4, 1, 2, 3, 4, 1);
  krun_free(&r);
  /* two axes at once: (1, 0) on axis 0, (0, 1) on axis 1, bool filled with 1 */
  rlx_params p = {.pad = {.mode = RLX_PAD_CONSTANT, .lo = {1, 0}, .hi = {0, 1}, .value = 1}};
  CHECK_OK(krun_op(&r, RLX_OP_PAD, &p, 1, (tens[]){TI(BOOL, SH(2, 2), 0, 0, 0, 0)}, 1));
  CHECK_SHAPE(&r, 0, BOOL, 3, 3);
  CHECK_I(&r, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1);
  krun_free(&r);
  /* infer errors */
  CHECK_ERR(pad(&r, RLX_PAD_REFLECT, 0, 4, 0, 0, TF(F32, SH(4), 1, 2, 3, 4)), RLX_ERR_SHAPE,
            "reflect padding");
  krun_free(&r);
  CHECK_ERR(pad(&r, RLX_PAD_CIRCULAR, 0, -1, 0, 0, TF(F32, SH(4), 1, 2, 3, 4)), RLX_ERR_SHAPE,
            "negative circular padding");
  krun_free(&r);
  /* negative reflect / replicate pads crop, as torch: reflect (2, -1) of [1,2,3,4] -> [3,2,1,2,3] */
  CHECK_OK(pad(&r, RLX_PAD_REFLECT, 0, 2, -1, 0, TF(F32, SH(4), 1, 2, 3, 4)));
  CHECK_F(&r, 0, 0, 3, 2, 1, 2, 3);
  krun_free(&r);
  CHECK_ERR(pad(&r, RLX_PAD_CONSTANT, 0, -3, -2, 0, TF(F32, SH(4), 1, 2, 3, 4)), RLX_ERR_SHAPE,
            "negative");
  krun_free(&r);
  CHECK_ERR(pad(&r, RLX_PAD_CONSTANT, 2, 1, 1, 0, TF(F32, SH(4), 1, 2, 3, 4)), RLX_ERR_SHAPE,
            "axis 2 of a rank-1");
  krun_free(&r);
}

/* ==== indexing ==== */

static rlx_status gather(krun *r, int axis, bool wrap, tens x, tens idx) {
  rlx_params p = {.gather = {.axis = axis, .wrap_negative = wrap}};
  return krun_op(r, RLX_OP_GATHER, &p, 2, (tens[]){x, idx}, 1);
}

/* index_select semantics: out = x[idx] along the axis. */
TEST(gather) {
  krun r;
#define X TF(F32, SH(3, 2), 1, 2, 3, 4, 5, 6)
  CHECK_OK(gather(&r, 0, true, X, TI(I64, SH(3), 2, 0, -1)));
  CHECK_SHAPE(&r, 0, F32, 3, 2);
  CHECK_F(&r, 0, 0, 5, 6, 1, 2, 5, 6);
  krun_free(&r);
  CHECK_ERR(gather(&r, 0, false, X, TI(I64, SH(3), 2, 0, -1)), RLX_ERR_RUNTIME, "index -1");
  krun_free(&r);
  CHECK_ERR(gather(&r, 0, true, X, TI(I32, SH(2), 0, 3)), RLX_ERR_RUNTIME,
            "index 3 is out of range for a dim of size 3");
  krun_free(&r);
  /* a wrapped index still out of range is reported as given */
  CHECK_ERR(gather(&r, 0, true, X, TI(I64, SH(1), -4)), RLX_ERR_RUNTIME, "index -4 is out");
  krun_free(&r);
  /* [2,2] index on axis 1 of [3,2]: out[i][a][b] = x[i][idx[a][b]] */
  CHECK_OK(gather(&r, 1, false, X, TI(I64, SH(2, 2), 1, 0, 1, 1)));
  CHECK_SHAPE(&r, 0, F32, 3, 2, 2);
  CHECK_F(&r, 0, 0, 2, 1, 2, 2, 4, 3, 4, 4, 6, 5, 6, 6);
  krun_free(&r);
  /* a rank-0 index drops the axis (embedding of one token) */
  CHECK_OK(gather(&r, 0, false, X, TI(I64, SH0, 1)));
  CHECK_SHAPE(&r, 0, F32, 2);
  CHECK_F(&r, 0, 0, 3, 4);
  krun_free(&r);
  CHECK_ERR(gather(&r, 0, false, X, TF(F32, SH(1), 0)), RLX_ERR_SHAPE, "integers");
  krun_free(&r);
#undef X
}

static rlx_status adv_index(krun *r, uint32_t axes, int n_in, const tens *in) {
  rlx_params p = {.index = {.indexed = axes}};
  return krun_op(r, RLX_OP_INDEX, &p, n_in, in, 1);
}

/* aten.index.Tensor on the [2,3,4] ramp x[i][j][k] = 12i + 4j + k (torch). */
TEST(index_advanced) {
  double xb[24];
  krun r;
  tens x = ramp(RLX_DTYPE_I64, SH(2, 3, 4), xb, 24);
  /* adjacent axes 0, 1: x[[1,0], [2,-1]] -> rows x[1][2], x[0][2] -> [2,4] */
  CHECK_OK(adv_index(&r, 3, 3, (tens[]){x, TI(I64, SH(2), 1, 0), TI(I64, SH(2), 2, -1)}));
  CHECK_SHAPE(&r, 0, I64, 2, 4);
  CHECK_I(&r, 0, 20, 21, 22, 23, 8, 9, 10, 11);
  krun_free(&r);
  /* non-adjacent axes 0, 2 with [5] indices: the index dim goes first ->
   * [5,3], out[n][j] = x[i0[n]][j][i2[n]] */
  CHECK_OK(adv_index(&r, 5, 3,
                     (tens[]){x, TI(I64, SH(5), 0, 1, 1, 0, -1), TI(I64, SH(5), 3, 0, -1, 1, 2)}));
  CHECK_SHAPE(&r, 0, I64, 5, 3);
  CHECK_I(&r, 0, 3, 7, 11, 12, 16, 20, 15, 19, 23, 1, 5, 9, 14, 18, 22);
  krun_free(&r);
  /* adjacent axes 1, 2 with broadcasting [2,1] and [3] -> [2] + [2,3] */
  CHECK_OK(adv_index(&r, 6, 3, (tens[]){x, TI(I64, SH(2, 1), 0, 2), TI(I32, SH(3), 1, 2, 3)}));
  CHECK_SHAPE(&r, 0, I64, 2, 2, 3);
  CHECK_I(&r, 0, 1, 2, 3, 9, 10, 11, 13, 14, 15, 21, 22, 23);
  krun_free(&r);
  /* rank-0 index tensors: x[:, 2] drops the axis in place; x[1, :, 3] (not
   * adjacent) leaves only the kept axis */
  CHECK_OK(adv_index(&r, 2, 2, (tens[]){x, TI(I64, SH0, 2)}));
  CHECK_SHAPE(&r, 0, I64, 2, 4);
  CHECK_I(&r, 0, 8, 9, 10, 11, 20, 21, 22, 23);
  krun_free(&r);
  CHECK_OK(adv_index(&r, 5, 3, (tens[]){x, TI(I64, SH0, 1), TI(I64, SH0, 3)}));
  CHECK_SHAPE(&r, 0, I64, 3);
  CHECK_I(&r, 0, 15, 19, 23);
  krun_free(&r);
  /* one index tensor on the last axis */
  CHECK_OK(adv_index(&r, 4, 2, (tens[]){x, TI(I64, SH(1), 3)}));
  CHECK_SHAPE(&r, 0, I64, 2, 3, 1);
  CHECK_I(&r, 0, 3, 7, 11, 15, 19, 23);
  krun_free(&r);
  CHECK_ERR(adv_index(&r, 1, 2, (tens[]){x, TI(I64, SH(1), 2)}), RLX_ERR_RUNTIME,
            "index 2 is out of range for a dim of size 2");
  krun_free(&r);
  CHECK_ERR(adv_index(&r, 3, 2, (tens[]){x, TI(I64, SH(1), 0)}), RLX_ERR_SHAPE,
            "names 2 axes but 1 index tensors");
  krun_free(&r);
  CHECK_ERR(adv_index(&r, 3, 3, (tens[]){x, TI(I64, SH(2), 0, 1), TI(I64, SH(3), 0, 1, 2)}),
            RLX_ERR_SHAPE, "broadcast");
  krun_free(&r);
}

/* cumsum / cumprod (torch): integers and bools accumulate in i64. */
TEST(scan) {
  krun r;
  rlx_params p = {.scan = {.axis = 1}};
  CHECK_OK(krun_op(&r, RLX_OP_SCAN, &p, 1, (tens[]){TF(F32, SH(2, 3), 1, 2, 3, 4, 5, 6)}, 1));
  CHECK_SHAPE(&r, 0, F32, 2, 3);
  CHECK_F(&r, 0, 0, 1, 3, 6, 4, 9, 15);
  krun_free(&r);
  p.scan = (rlx_scan_params){.axis = 0, .prod = true};
  CHECK_OK(krun_op(&r, RLX_OP_SCAN, &p, 1, (tens[]){TF(F32, SH(2, 3), 1, 2, 3, 4, 5, 6)}, 1));
  CHECK_F(&r, 0, 0, 1, 2, 3, 4, 10, 18);
  krun_free(&r);
  p.scan = (rlx_scan_params){.axis = 0};
  CHECK_OK(krun_op(&r, RLX_OP_SCAN, &p, 1, (tens[]){TI(BOOL, SH(4), 1, 0, 1, 1)}, 1));
  CHECK_SHAPE(&r, 0, I64, 4);
  CHECK_I(&r, 0, 1, 1, 2, 3);
  krun_free(&r);
  p.scan = (rlx_scan_params){.axis = 0, .prod = true};
  CHECK_OK(krun_op(&r, RLX_OP_SCAN, &p, 1, (tens[]){TI(I32, SH(3), 65536, 65536, -1)}, 1));
  CHECK_SHAPE(&r, 0, I64, 3);
  CHECK_I(&r, 0, 65536, 4294967296LL, -4294967296LL);
  krun_free(&r);
  p.scan = (rlx_scan_params){.axis = 2};
  CHECK_ERR(krun_op(&r, RLX_OP_SCAN, &p, 1, (tens[]){TF(F32, SH(2, 3), 1, 2, 3, 4, 5, 6)}, 1),
            RLX_ERR_SHAPE, "axis 2");
  krun_free(&r);
}

/* ==== creation ==== */

TEST(full_arange) {
  krun r;
  rlx_params p = {.full = {.dtype = RLX_DTYPE_F32, .shape = SH(2, 2), .value = 1.5}};
  CHECK_OK(krun_op(&r, RLX_OP_FULL, &p, 0, NULL, 1));
  CHECK_SHAPE(&r, 0, F32, 2, 2);
  CHECK_F(&r, 0, 0, 1.5, 1.5, 1.5, 1.5);
  krun_free(&r);
  /* integers use the exact ivalue (2^53 + 1 is not a double) */
  p.full = (rlx_full_params){.dtype = RLX_DTYPE_I64, .shape = SH(3), .ivalue = 9007199254740993LL};
  CHECK_OK(krun_op(&r, RLX_OP_FULL, &p, 0, NULL, 1));
  CHECK_SHAPE(&r, 0, I64, 3);
  CHECK_I(&r, 0, 9007199254740993LL, 9007199254740993LL, 9007199254740993LL);
  krun_free(&r);
  p.full = (rlx_full_params){.dtype = RLX_DTYPE_BOOL, .shape = SH(2), .ivalue = 1};
  CHECK_OK(krun_op(&r, RLX_OP_FULL, &p, 0, NULL, 1));
  CHECK_SHAPE(&r, 0, BOOL, 2);
  CHECK_I(&r, 0, 1, 1);
  krun_free(&r);
  p.full = (rlx_full_params){.dtype = RLX_DTYPE_F16, .shape = SH0, .value = -INF};
  CHECK_OK(krun_op(&r, RLX_OP_FULL, &p, 0, NULL, 1));
  CHECK_SHAPE0(&r, 0, F16);
  CHECK_F(&r, 0, 0, -INF);
  krun_free(&r);
  p.full = (rlx_full_params){.dtype = RLX_DTYPE_F32, .shape = SH(2, -1)};
  CHECK_ERR(krun_op(&r, RLX_OP_FULL, &p, 0, NULL, 1), RLX_ERR_SHAPE, "negative dim");
  krun_free(&r);
  /* arange(5, -3, -2) in i64; arange(1, -1, -0.5) in f32 */
  rlx_params a = {.arange = {.dtype = RLX_DTYPE_I64, .length = 4, .istart = 5, .istep = -2}};
  CHECK_OK(krun_op(&r, RLX_OP_ARANGE, &a, 0, NULL, 1));
  CHECK_SHAPE(&r, 0, I64, 4);
  CHECK_I(&r, 0, 5, 3, 1, -1);
  krun_free(&r);
  a.arange = (rlx_arange_params){.dtype = RLX_DTYPE_F32, .length = 4, .start = 1, .step = -0.5};
  CHECK_OK(krun_op(&r, RLX_OP_ARANGE, &a, 0, NULL, 1));
  CHECK_SHAPE(&r, 0, F32, 4);
  CHECK_F(&r, 0, 0, 1, 0.5, 0, -0.5);
  krun_free(&r);
  a.arange = (rlx_arange_params){.dtype = RLX_DTYPE_I32, .length = 3, .istart = -1, .istep = 3};
  CHECK_OK(krun_op(&r, RLX_OP_ARANGE, &a, 0, NULL, 1));
  CHECK_SHAPE(&r, 0, I32, 3);
  CHECK_I(&r, 0, -1, 2, 5);
  krun_free(&r);
  a.arange = (rlx_arange_params){.dtype = RLX_DTYPE_F32, .length = 0, .start = 0, .step = 1};
  CHECK_OK(krun_op(&r, RLX_OP_ARANGE, &a, 0, NULL, 1));
  CHECK_SHAPE(&r, 0, F32, 0);
  krun_free(&r);
  a.arange = (rlx_arange_params){.dtype = RLX_DTYPE_BOOL, .length = 2};
  CHECK_ERR(krun_op(&r, RLX_OP_ARANGE, &a, 0, NULL, 1), RLX_ERR_SHAPE, "bad dtype");
  krun_free(&r);
}

TEST_MAIN(reshape_permute, slice, concat, expand, pad, gather, index_advanced, scan, full_arange)
