/*
 * test_lower_hostile.c — the aten -> rlx lowering on hostile arguments. A
 * torch-ir.json is untrusted: every int and float argument of a node may be
 * anything (INT64_MIN/MAX, 0, negative, NaN, +-inf, 1e300). Each case builds
 * a small graph around one node 'n' and expects the lowering to refuse it
 * with a status and a message naming the node and the argument, or, where
 * torch defines a result, to lower it without undefined behaviour (the ASan
 * and clang float-cast-overflow builds run these) and compute that result.
 *
 * This file holds the sizes, shapes and scalar values: factors that divide,
 * view / reshape / expand sizes and dims, the split family, pads, fill values
 * and scalars converted to integer dtypes, arange, reduction dims, one_hot.
 * test_lower_hostile_ops.c holds the per-op parameters and operand checks.
 *
 * Graphs are written with single quotes (fixtures.h: jq).
 */
#include "lower_hostile_util.h"

/* ---- division by zero, overflowing factors ---- */

TEST(pixel_shuffle_factor) {
  const char *up = "aten.pixel_shuffle.default", *down = "aten.pixel_unshuffle.default";
  char node[512];
  static const char *const bad[] = {"0", P32, "-2", I64MIN}; /* 0 and 2^32 (r*r wraps to 0) divided by zero */
  for (int i = 0; i < 4; i++) {
    snprintf(node, sizeof node, "{'id': 'n', 'op': '%s', 'args': [{'ref': 'x'}, {'int': %s}], 'out': %s}", up,
             bad[i], OUT("[1, 1, 4, 4]", "f32"));
    REFUSE(RLX_ERR_SHAPE, "'upscale_factor'", X4, node);
    snprintf(node, sizeof node, "{'id': 'n', 'op': '%s', 'args': [{'ref': 'x'}, {'int': %s}], 'out': %s}", down,
             bad[i], OUT("[1, 16, 1, 1]", "f32"));
    REFUSE(RLX_ERR_SHAPE, "'downscale_factor'", X4, node);
  }
  /* channels not divisible by r*r; a plane not divisible by r */
  REFUSE(RLX_ERR_SHAPE, "'upscale_factor'", IN("[1, 3, 2, 2]", "f32"),
         NODE("aten.pixel_shuffle.default", X ", " I(2), OUT("[1, 0, 4, 4]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'downscale_factor'", IN("[1, 1, 3, 4]", "f32"),
         NODE("aten.pixel_unshuffle.default", X ", " I(2), OUT("[1, 4, 1, 2]", "f32")));
}

#define IM2COL(k, d, p, s, out) NODE("aten.im2col.default", X ", " L(k) ", " L(d) ", " L(p) ", " L(s), out)

#define O OUT("[1, 4, 9]", "f32")
TEST(im2col_params) {
  const char *in = IN("[1, 1, 4, 4]", "f32");
  REFUSE(RLX_ERR_SHAPE, "'stride'[0] is 0", in, IM2COL(I(2), I(1), I(0), I(0), O)); /* was SIGFPE */
  REFUSE(RLX_ERR_SHAPE, "'stride'[0] is -1", in, IM2COL(I(2), I(1), I(0), I(-1), O));
  REFUSE(RLX_ERR_SHAPE, "'kernel_size'[0] is 0", in, IM2COL(I(0), I(1), I(0), I(1), O));
  REFUSE(RLX_ERR_SHAPE, "'dilation'[1] is 0", in, IM2COL(I(2), I(1) ", " I(0), I(0), I(1), O));
  REFUSE(RLX_ERR_SHAPE, "'padding'[0] is -1", in, IM2COL(I(2), I(1), I(-1), I(1), O));
  REFUSE(RLX_ERR_SHAPE, "'padding'[0] is " P62, in, IM2COL(I(2), I(1), II(P62), I(1), O)); /* H + 2*pad */
  REFUSE(RLX_ERR_SHAPE, "2^31", in, IM2COL(II(I64MAX), I(1), I(0), I(1), O));
  /* a kernel one wider than the input: (4 - 5) / 2 + 1 truncated to one block before */
  REFUSE(RLX_ERR_SHAPE, "does not fit", in, IM2COL(I(5), I(1), I(0), I(2), OUT("[1, 25, 1]", "f32")));
}
#undef O

TEST(repeat_sizes) {
  const char *in = IN("[2, 3]", "f32");
  REFUSE(RLX_ERR_SHAPE, "'repeats'", in,
         NODE("aten.repeat.default", X ", " L(II(P62) ", " I(4)), OUT("[0, 12]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'repeats'", in,
         NODE("aten.repeat.default", X ", " L(II(I64MAX) ", " I(1)), OUT("[0, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'repeats'[1] is -1", in,
         NODE("aten.repeat.default", X ", " L(I(1) ", " I(-1)), OUT("[2, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'dims'", in, NODE("aten.tile.default", X ", " L(II(P32) ", " II(P32)), OUT("[0, 3]", "f32")));
}

/* unfold's window table [(D - size) / step + 1, size] must not overflow */
TEST(unfold_windows) {
  REFUSE(RLX_ERR_SHAPE, "'size'", IN("[1099511627776]", "f32"),
         NODE("aten.unfold.default", X ", " I(0) ", " I(549755813888) ", " I(1),
              OUT("[0]", "f32"))); /* the true shape is past the record's limit */
  REFUSE(RLX_ERR_SHAPE, "unfold size", IN("[4]", "f32"),
         NODE("aten.unfold.default", X ", " I(0) ", " I(2) ", " I(0), OUT("[3, 2]", "f32")));
}

/* the offset is clamped to the matrix: -INT64_MIN is never computed */
TEST(diagonal_offset_extremes) {
  static const char *const offs[] = {I64MIN, I64MAX, "-3", "3"};
  for (int i = 0; i < 4; i++) {
    char node[512];
    snprintf(node, sizeof node, "{'id': 'n', 'op': 'aten.diagonal.default', 'args': [{'ref': 'x'}, {'int': %s}],"
             " 'out': %s}", offs[i], OUT("[0]", "f32"));
    fixture f;
    CHECK_OK(fx_load(&f, X22, node, "{'ref': 'n', 'shape': [0], 'dtype': 'f32'}"));
    fx_free(&f);
  }
}

/* ---- shapes: view, reshape, unsqueeze, squeeze, flatten, unflatten, expand ---- */

#define O6 OUT("[6]", "f32")
TEST(view_sizes) {
  const char *in = IN("[2, 3]", "f32");
  REFUSE(RLX_ERR_SHAPE, "only one size can be inferred", in,
         NODE("aten.view.default", X ", " L(I(-1) ", " I(-1)), OUT("[6, 1]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'size'[0] is -2", in, NODE("aten.view.default", X ", " L(I(-2) ", " I(-3)), O6));
  REFUSE(RLX_ERR_SHAPE, "'size'[0] is " I64MIN, in, NODE("aten.view.default", X ", " L(II(I64MIN)), O6));
  REFUSE(RLX_ERR_SHAPE, "'shape'", in, NODE("aten.reshape.default", X ", " L(I(4)), O6)); /* 4 != 6 elements */
  REFUSE(RLX_ERR_SHAPE, "'size' disagrees", in,
         NODE("aten.view.default", X ", " L(I(3) ", " I(2)), OUT("[2, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'size' has -1", in, NODE("aten._unsafe_view.default", X ", " L(I(-1) ", " I(-1)), O6));
  /* -1 next to a zero size is ambiguous (a division by zero before) */
  REFUSE(RLX_ERR_SHAPE, "ambiguous", IN("[0, 3]", "f32"),
         NODE("aten.view.default", X ", " L(I(0) ", " I(-1)), OUT("[0, 0]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "overflows", in,
         NODE("aten.view.default", X ", " L(II(P62) ", " I(4) ", " I(0)), OUT("[0]", "f32")));
  /* valid: one -1 */
  fixture f;
  CHECK_OK(fx_load(&f, in, NODE("aten.view.default", X ", " L(I(-1)), O6),
                   "{'ref': 'n', 'shape': [6], 'dtype': 'f32'}"));
  fx_free(&f);
}
#undef O6

#define O OUT("[2, 3, 1]", "f32")
TEST(view_dims) {
  const char *in = IN("[2, 3]", "f32");
  REFUSE(RLX_ERR_SHAPE, "argument 'dim' is " P62, in, NODE("aten.unsqueeze.default", X ", " II(P62), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'dim' is -100", in,
         NODE("aten.unsqueeze.default", X ", " I(-100), OUT("[1, 2, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'dim' is 3", in, NODE("aten.unsqueeze_copy.default", X ", " I(3), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'dim' is 2", in, NODE("aten.squeeze.dim", X ", " I(2), OUT("[2, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'dim' is " I64MIN, in,
         NODE("aten.squeeze.dims", X ", " L(II(I64MIN)), OUT("[2, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'start_dim' is 5", in,
         NODE("aten.flatten.using_ints", X ", " I(5) ", " I(-1), OUT("[6]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "comes after 'end_dim'", in,
         NODE("aten.flatten.using_ints", X ", " I(1) ", " I(0), OUT("[6]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'sizes'", in,
         NODE("aten.unflatten.int", X ", " I(1) ", " L(I(2) ", " I(2)), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'sizes' has -1", in,
         NODE("aten.unflatten.int", X ", " I(1) ", " L(I(-1) ", " I(-1)), O));
  /* valid edges: dim = rank and dim = -rank - 1 */
  fixture f;
  CHECK_OK(fx_load(&f, in, NODE("aten.unsqueeze.default", X ", " I(-3), OUT("[1, 2, 3]", "f32")),
                   "{'ref': 'n', 'shape': [1, 2, 3], 'dtype': 'f32'}"));
  fx_free(&f);
}
#undef O

TEST(expand_sizes) {
  const char *in = IN("[1, 3]", "f32");
  REFUSE(RLX_ERR_SHAPE, "'size'[0] is -2", in,
         NODE("aten.expand.default", X ", " L(I(-2) ", " I(3)), OUT("[1, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "new leading dim", in,
         NODE("aten.expand.default", X ", " L(I(-1) ", " I(-1) ", " I(3)), OUT("[1, 1, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'size' disagrees", in,
         NODE("aten.expand.default", X ", " L(I(2) ", " I(3)), OUT("[4, 3]", "f32")));
}

TEST(permute_flip_duplicates) {
  const char *in = IN("[2, 3]", "f32");
  REFUSE(RLX_ERR_SHAPE, "'dims'[1] repeats axis 1", in,
         NODE("aten.permute.default", X ", " L(I(1) ", " I(-1)), OUT("[3, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'dims'[1] repeats axis 0", in,
         NODE("aten.flip.default", X ", " L(I(0) ", " I(-2)), OUT("[2, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "t() needs", IN("[2, 2, 2]", "f32"), NODE("aten.t.default", X, OUT("[2, 2, 2]", "f32")));
}

/* ---- split family, unbind, stack ---- */

TEST(split_args) {
  const char *in = IN("[4]", "f32");
  REFUSE(RLX_ERR_SHAPE, "'chunks' is 0", in, NODE("aten.chunk.default", X ", " I(0), "[" OUT("[4]", "f32") "]"));
  REFUSE(RLX_ERR_SHAPE, "'split_size' is 0", in, NODE("aten.split.Tensor", X ", " I(0), "[" OUT("[4]", "f32") "]"));
  REFUSE(RLX_ERR_SHAPE, "'split_size' is -1", in,
         NODE("aten.split.Tensor", X ", " I(-1), "[" OUT("[2]", "f32") ", " OUT("[2]", "f32") "]"));
  REFUSE(RLX_ERR_SHAPE, "'split_sizes'[1] is -1", in,
         NODE("aten.split_with_sizes.default", X ", " L(I(5) ", " I(-1)), "[" OUT("[4]", "f32") ", " OUT("[0]", "f32")
           "]"));
  REFUSE(RLX_ERR_SHAPE, "split sizes sum to 2", in,
         NODE("aten.split_with_sizes.default", X ", " L(I(1) ", " I(1)), "[" OUT("[1]", "f32") ", " OUT("[1]", "f32")
           "]"));
  REFUSE(RLX_ERR_SHAPE, "'sections' is 0", in,
         NODE("aten.tensor_split.sections", X ", " I(0), "[" OUT("[4]", "f32") "]"));
  /* recorded pieces whose offsets overflow */
  REFUSE(RLX_ERR_SHAPE, "runs past", IN("[0, 4]", "f32"),
         NODE("aten.split.Tensor", X ", " I(2) ", " I(1),
              "[" OUT("[0, " P62 "]", "f32") ", " OUT("[0, " P62 "]", "f32") "]"));
}

/* tensor_split with indices [3, 1] of arange(5): [0 1 2], [], [1 2 3 4] (the
 * pieces overlap; cumulative offsets were wrong) */
TEST(tensor_split_indices) {
  fixture f;
  float x[5] = {0, 1, 2, 3, 4};
  CHECK_OK(fx_load(&f, IN("[5]", "f32"),
                   NODE("aten.tensor_split.indices", X ", " L(I(3) ", " I(1)),
                        "[" OUT("[3]", "f32") ", " OUT("[0]", "f32") ", " OUT("[4]", "f32") "]")
                   ", {'id': 'g0', 'op': '_getitem', 'args': [{'ref': 'n'}, {'int': 0}], 'out': " OUT("[3]", "f32") "}"
                   ", {'id': 'g2', 'op': '_getitem', 'args': [{'ref': 'n'}, {'int': 2}], 'out': " OUT("[4]", "f32") "}",
                   "{'ref': 'g0', 'shape': [3], 'dtype': 'f32'}, {'ref': 'g2', 'shape': [4], 'dtype': 'f32'}"));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, "x", (rlx_tensor_view){.data = x, .dtype = RLX_DTYPE_F32, .rank = 1, .dims = {5}}));
  CHECK_VALS(&f, 0, 0, 1, 2);
  CHECK_VALS(&f, 1, 1, 2, 3, 4);
  fx_free(&f);
}

TEST(unbind_and_stack) {
  REFUSE(RLX_ERR_FORMAT, "must record 3 outputs", IN("[3, 2]", "f32"),
         NODE("aten.unbind.int", X ", " I(0), "[" OUT("[2]", "f32") "]"));
  REFUSE(RLX_ERR_SHAPE, "stack: tensor 1", IN("[2, 3]", "f32") ", {'id': 'y', 'shape': [3, 2], 'dtype': 'f32'}",
         NODE("aten.stack.default", L(X ", {'ref': 'y'}"), OUT("[2, 2, 3]", "f32")));
}

/* ---- pads ---- */

TEST(pad_values_and_sizes) {
  const char *in = IN("[2]", "i64");
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'value' (-inf) cannot be converted to i64", in,
         NODE("aten.constant_pad_nd.default", X ", " L(I(1) ", " I(1)) ", " FS("-inf"), OUT("[4]", "i64")));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'value' (nan)", IN("[2]", "i32"),
         NODE("aten.constant_pad_nd.default", X ", " L(I(1) ", " I(1)) ", " FS("nan"), OUT("[4]", "i32")));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'value' (300)", IN("[2]", "i8"),
         NODE("aten.pad.default", X ", " L(I(1) ", " I(1)) ", {'str': 'constant'}, " I(300), OUT("[4]", "i8")));
  REFUSE(RLX_ERR_UNSUPPORTED, "up to 2^53", in,
         NODE("aten.constant_pad_nd.default", X ", " L(I(1) ", " I(1)) ", " II(I64MAX), OUT("[4]", "i64")));
  REFUSE(RLX_ERR_SHAPE, "'pad'[0] is " I64MIN "; rlx takes sizes of at least -2^62", IN("[2]", "f32"),
         NODE("aten.constant_pad_nd.default", X ", " L(II(I64MIN) ", " II(I64MAX)), OUT("[1]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'pad'[0, 1] = (-3, 5)", IN("[2]", "f32"), /* crops past the dim (torch: narrow fails) */
         NODE("aten.constant_pad_nd.default", X ", " L(I(-3) ", " I(5)), OUT("[4]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'padding'[0, 1]", IN("[1, 2]", "f32"),
         NODE("aten.replication_pad1d.default", X ", " L(I(-2) ", " I(-1)), OUT("[1, 0]", "f32")));
  /* torch truncates a float fill for an integer tensor: 2.7 pads with 2 */
  fixture f;
  int64_t x[2] = {7, 8};
  CHECK_OK(fx_load(&f, in, NODE("aten.constant_pad_nd.default", X ", " L(I(1) ", " I(1)) ", " F(2.7), OUT("[4]",
                   "i64")),
                   "{'ref': 'n', 'shape': [4], 'dtype': 'i64'}"));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, "x", (rlx_tensor_view){.data = x, .dtype = RLX_DTYPE_I64, .rank = 1, .dims = {2}}));
  CHECK_VALS(&f, 0, 2, 7, 8, 2);
  fx_free(&f);
}

/* ---- fill values and scalars converted to integer dtypes ---- */

#define O OUT("[2]", "i64")
TEST(fill_values) {
  REFUSE(RLX_ERR_UNSUPPORTED, "'fill_value' (inf) cannot be converted to i64", "",
         NODE("aten.full.default", L(I(2)) ", " FS("inf"), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "'fill_value' (nan)", "",
         NODEK("aten.full.default", L(I(2)) ", " FS("nan"), "'dtype': {'dtype': 'i64'}", O));
  REFUSE(RLX_ERR_UNSUPPORTED, "'fill_value' (1e+300)", "",
         NODE("aten.full.default", L(I(2)) ", " F(1e300), OUT("[2]", "i32")));
  REFUSE(RLX_ERR_UNSUPPORTED, "'fill_value' (300) cannot be converted to i8", "",
         NODE("aten.full.default", L(I(2)) ", " I(300), OUT("[2]", "i8")));
  REFUSE(RLX_ERR_UNSUPPORTED, "'fill_value' (-300)", "",
         NODE("aten.full.default", L(I(2)) ", " I(-300), OUT("[2]", "u8")));
  REFUSE(RLX_ERR_UNSUPPORTED, "'fill_value' (-inf)", IN("[2]", "i64"),
         NODE("aten.new_full.default", X ", " L(I(2)) ", " FS("-inf"), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "'fill_value' (inf)", IN("[2]", "i64"),
         NODE("aten.full_like.default", X ", " FS("inf"), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 's' (nan)", "",
         NODE("aten.scalar_tensor.default", FS("nan"), OUT("[]", "i64")));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'value' (inf)", IN("[2]", "i64"),
         NODE("aten.fill.Scalar", X ", " FS("inf"), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'value' (-inf)", IN("[2]", "i64")
         ", {'id': 'm', 'shape': [2], 'dtype': 'bool'}",
         NODE("aten.masked_fill.Scalar", X ", {'ref': 'm'}, " FS("-inf"), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'value' (inf)", IN("[2]", "i64") ", {'id': 'i', 'shape': [1], 'dtype': 'i64'}",
         NODE("aten.scatter.value", X ", " I(0) ", {'ref': 'i'}, " FS("inf"), O));
  /* the size argument must be the recorded shape */
  REFUSE(RLX_ERR_SHAPE, "'size' disagrees", "", NODE("aten.full.default", L(I(3)) ", " F(1.0), OUT("[5]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'size'[0] is -1", "", NODE("aten.zeros.default", L(I(-1)), OUT("[0]", "f32")));
  /* as torch: -1 wraps into u8, NaN is true, a float truncates */
  fixture f;
  CHECK_OK(fx_load(&f, "",
                   "{'id': 'a', 'op': 'aten.full.default', 'args': [" L(I(2)) ", " I(-1) "], 'out': " OUT("[2]", "u8")
                     "},"
                   " {'id': 'b', 'op': 'aten.full.default', 'args': [" L(I(1)) ", " FS("nan") "], 'out': " OUT("[1]",
                     "bool") "},"
                   " {'id': 'c', 'op': 'aten.full.default', 'args': [" L(I(1)) ", " F(-2.7) "], 'out': " OUT("[1]",
                     "i64") "}",
                   "{'ref': 'a', 'shape': [2], 'dtype': 'u8'}, {'ref': 'b', 'shape': [1], 'dtype': 'bool'},"
                   " {'ref': 'c', 'shape': [1], 'dtype': 'i64'}"));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, NULL, (rlx_tensor_view){0}));
  CHECK_VALS(&f, 0, 255, 255);
  CHECK_VALS(&f, 1, 1);
  CHECK_VALS(&f, 2, -2);
  fx_free(&f);
}
#undef O

/* eq.Scalar(x, inf) on a float tensor (logsumexp / nan_to_num decompositions):
 * the scalar stays a float; no conversion of inf to an integer happens */
TEST(compare_with_inf) {
  fixture f;
  float x[3] = {INFINITY, 1, -INFINITY};
  CHECK_OK(fx_load(&f, IN("[3]", "f32"),
                   "{'id': 'e', 'op': 'aten.eq.Scalar', 'args': [{'ref': 'x'}, " FS("inf") "], 'out': " OUT("[3]",
                     "bool") "},"
                   " {'id': 'a', 'op': 'aten.add.Tensor', 'args': [{'ref': 'x'}, " F(1e300) "], 'out': " OUT("[3]",
                     "f32") "}",
                   "{'ref': 'e', 'shape': [3], 'dtype': 'bool'}, {'ref': 'a', 'shape': [3], 'dtype': 'f32'}"));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, "x", (rlx_tensor_view){.data = x, .dtype = RLX_DTYPE_F32, .rank = 1, .dims = {3}}));
  CHECK_VALS(&f, 0, 1, 0, 0);
  fx_free(&f);
  /* an int tensor plus a float scalar computes in float (as torch) */
  CHECK_OK(fx_load(&f, IN("[2]", "i64"), NODE("aten.add.Tensor", X ", " F(1e300), OUT("[2]", "f32")),
                   "{'ref': 'n', 'shape': [2], 'dtype': 'f32'}"));
  fx_free(&f);
}

#define O OUT("[2]", "i64")
TEST(integer_scalar_args) {
  const char *in = IN("[2]", "i64");
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'alpha' must not be a floating point number", in,
         NODEK("aten.add.Tensor", X ", " X, "'alpha': " F(2.5), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "'alpha'", in, NODEK("aten.sub.Tensor", X ", " X, "'alpha': " FS("inf"), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "exponent", in, NODE("aten.pow.Tensor_Scalar", X ", " II(I64MAX), O));
  REFUSE(RLX_ERR_UNSUPPORTED, "'min_val'", in, NODE("aten.hardtanh.default", X ", " F(1e300) ", " F(1e301), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'min' (1000) is outside the representable range of i8", IN("[2]", "i8"),
         NODE("aten.clamp.default", X ", " I(1000), OUT("[2]", "i8")));
  REFUSE(RLX_ERR_SHAPE, "argument 'max' (-1000)", IN("[2]", "i8"),
         NODE("aten.clamp.default", X ", {'none': true}, " I(-1000), OUT("[2]", "i8")));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'min' (inf)", in, NODE("aten.clamp_min.default", X ", " FS("inf"), O));
  /* clamp(x, min=INT64_MAX) is exact (a double parameter would round it to 2^63);
   * a min below an int8's range never binds */
  fixture f;
  int64_t x[2] = {1, -5};
  CHECK_OK(fx_load(&f, in, NODE("aten.clamp.default", X ", " II(I64MAX), O),
                   "{'ref': 'n', 'shape': [2], 'dtype': 'i64'}"));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, "x", (rlx_tensor_view){.data = x, .dtype = RLX_DTYPE_I64, .rank = 1, .dims = {2}}));
  rlx_tensor_view v;
  CHECK(!rlx_session_output(f.s, 0, &v) && ((int64_t *)v.data)[0] == INT64_MAX && ((int64_t *)v.data)[1] == INT64_MAX);
  fx_free(&f);
  int8_t x8[2] = {1, -5};
  CHECK_OK(fx_load(&f, IN("[2]", "i8"), NODE("aten.clamp.default", X ", " I(-1000) ", " I(1000), OUT("[2]", "i8")),
                   "{'ref': 'n', 'shape': [2], 'dtype': 'i8'}"));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, "x", (rlx_tensor_view){.data = x8, .dtype = RLX_DTYPE_I8, .rank = 1, .dims = {2}}));
  CHECK_VALS(&f, 0, 1, -5);
  fx_free(&f);
}
#undef O

/* ---- arange ---- */

#define O OUT("[1]", "i64")
TEST(arange_args) {
  REFUSE(RLX_ERR_SHAPE, "unsupported range: argument 'start' is nan", "",
         NODE("aten.arange.start_step", FS("nan") ", " I(10) ", " I(1), OUT("[10]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'end' is inf", "", NODE("aten.arange.default", FS("inf"), OUT("[3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "unsupported range: argument 'start' is -inf", "",
         NODE("aten.arange.start_step", FS("-inf") ", " I(10) ", " I(1), OUT("[10]", "i64")));
  REFUSE(RLX_ERR_SHAPE, "step must be finite: argument 'step' is inf", "",
         NODE("aten.arange.start_step", I(0) ", " I(10) ", " FS("inf"), O));
  REFUSE(RLX_ERR_SHAPE, "step must be nonzero", "", NODE("aten.arange.start_step", I(0) ", " I(10) ", " I(0), O));
  REFUSE(RLX_ERR_SHAPE, "inconsistent with the step sign", "",
         NODE("aten.arange.start_step", I(0) ", " I(10) ", " I(-1), O));
  REFUSE(RLX_ERR_SHAPE, "has 3 elements but torch recorded 5", "",
         NODE("aten.arange.default", I(3), OUT("[5]", "i64")));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'start' (1e+300) cannot be converted", "",
         NODE("aten.arange.start", F(1e300) ", " F(1e300), OUT("[0]", "i64")));
  REFUSE(RLX_ERR_SHAPE, "elements but torch recorded", "", /* 2^64 elements: past every limit */
         NODE("aten.arange.start_step", II(I64MIN) ", " II(I64MAX) ", " I(1), OUT("[4]", "i64")));
  /* large int64 values stay exact; float arguments for an int64 result truncate (torch) */
  fixture f;
  CHECK_OK(fx_load(&f, "",
                   "{'id': 'a', 'op': 'aten.arange.start_step', 'args': [" II(P62) ", " II("4611686018427389952") ", "
                   I(1024) "], 'out': " OUT("[2]", "i64") "}, {'id': 'b', 'op': 'aten.arange.start_step', 'args': ["
                   F(0.5) ", " F(5.5) ", " F(1.5) "], 'out': " OUT("[4]", "i64") "}",
                   "{'ref': 'a', 'shape': [2], 'dtype': 'i64'}, {'ref': 'b', 'shape': [4], 'dtype': 'i64'}"));
  if (!f.m) return;
  CHECK_OK(fx_run(&f, NULL, (rlx_tensor_view){0}));
  rlx_tensor_view v;
  CHECK(!rlx_session_output(f.s, 0, &v) && ((int64_t *)v.data)[0] == ((int64_t)1 << 62) &&
        ((int64_t *)v.data)[1] == ((int64_t)1 << 62) + 1024);
  CHECK_VALS(&f, 1, 0, 1, 2, 3);
  fx_free(&f);
}
#undef O

/* ---- reductions ---- */

TEST(reduce_dims) {
  const char *in = IN("[2, 3]", "f32");
  REFUSE(RLX_ERR_SHAPE, "argument 'dim'[1] (1) names axis 1 again", in,
         NODE("aten.sum.dim_IntList", X ", " L(I(1) ", " I(1)), OUT("[2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'dim'[1] (-1) names axis 1 again", in,
         NODE("aten.amax.default", X ", " L(I(1) ", " I(-1)), OUT("[2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'dim'[1]", in, NODEK("aten.var.correction", X ", " L(I(0) ", " I(-2)), "", OUT("[3]", "f32")));
  /* an explicit INT64_MIN is not None */
  REFUSE(RLX_ERR_SHAPE, "argument 'dim': axis " I64MIN " is out of range", in,
         NODE("aten.argmax.default", X ", " II(I64MIN), OUT("[]", "i64")));
}

/* ---- one_hot: indices are checked at run time, as torch does ---- */

#define O OUT("[3, 4]", "i64")
TEST(one_hot) {
  const char *in = IN("[3]", "i64");
  REFUSE(RLX_ERR_SHAPE, "argument 'num_classes' is 0", in,
         NODE("aten.one_hot.default", X ", " I(0), OUT("[3, 0]", "i64")));
  REFUSE(RLX_ERR_SHAPE, "argument 'num_classes' is -2", in, NODE("aten.one_hot.default", X ", " I(-2), O));
  REFUSE(RLX_ERR_SHAPE, "'num_classes' is 3 but torch recorded 4", in,
         NODE("aten.one_hot.default", X ", " I(3), O));
  for (int nc = 0; nc < 2; nc++) { /* num_classes 4, and -1 (the recorded 4) */
    fixture f;
    CHECK_OK(fx_load(&f, in, nc ? NODE("aten.one_hot.default", X ", " I(-1), O)
                                : NODE("aten.one_hot.default", X ", " I(4), O),
                     "{'ref': 'n', 'shape': [3, 4], 'dtype': 'i64'}"));
    if (!f.m) return;
    int64_t ok[3] = {0, 3, 1}, big[3] = {0, 4, 1}, neg[3] = {0, -1, 1};
    rlx_tensor_view v = {.data = ok, .dtype = RLX_DTYPE_I64, .rank = 1, .dims = {3}};
    CHECK_OK(fx_run(&f, "x", v));
    CHECK_VALS(&f, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0);
    v.data = big; /* torch: "Class values must be smaller than num_classes" (rlx: an all-zero row before) */
    CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
    CHECK_ERR(rlx_session_run(f.s), RLX_ERR_RUNTIME, "node 'n' (aten.one_hot.default)");
    CHECK(strstr(rlx_last_error(), "index 4 is out of range for a dim of size 4") != NULL);
    v.data = neg; /* torch: "Class values must be non-negative" */
    CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
    CHECK_ERR(rlx_session_run(f.s), RLX_ERR_RUNTIME, "index -1 is out of range");
    fx_free(&f);
  }
}
#undef O

TEST_MAIN(pixel_shuffle_factor, im2col_params, repeat_sizes, unfold_windows, diagonal_offset_extremes, view_sizes,
          view_dims, expand_sizes, permute_flip_duplicates, split_args, tensor_split_indices, unbind_and_stack,
          pad_values_and_sizes, fill_values, compare_with_inf, integer_scalar_args, arange_args, reduce_dims,
          one_hot)
