/*
 * test_lower_hostile_ops.c — the aten -> rlx lowering on hostile per-op
 * parameters and operands (see test_lower_hostile.c for the rules: each case
 * builds a small graph around one node 'n' and expects a refusal naming the
 * node and the argument, or a result torch defines, without undefined
 * behaviour): convolution and pooling parameters, interpolation and grid
 * sampling, normalization, the operand checks torch makes, recorded output
 * types and symbolic values, order statistics, scans and view scatters, and
 * issue 11's index makers, histograms, hash_tensor and specials.
 *
 * Graphs are written with single quotes (fixtures.h: jq).
 */
#include "lower_hostile_util.h"

/* ---- convolution and pooling parameters ---- */

#define CONV_IN IN("[1, 1, 4, 4]", "f32") ", {'id': 'w', 'shape': [1, 1, 2, 2], 'dtype': 'f32'}"
#define CONV(extra, out) NODE("aten.conv2d.default", X ", {'ref': 'w'}, {'none': true}" extra, out)

#define O OUT("[1, 1, 3, 3]", "f32")
TEST(conv_params) {
  REFUSE(RLX_ERR_SHAPE, "'stride'[0] is 0", CONV_IN, CONV(", " L(I(0)), O));
  REFUSE(RLX_ERR_SHAPE, "'stride'[0] is " P62 "; it must be in [1, 2^31]", CONV_IN, CONV(", " L(II(P62)), O));
  REFUSE(RLX_ERR_SHAPE, "'padding'[1] is " I64MIN, CONV_IN, CONV(", " L(I(1)) ", " L(I(0) ", " II(I64MIN)), O));
  REFUSE(RLX_ERR_SHAPE, "'dilation'[0] is -1", CONV_IN, CONV(", " L(I(1)) ", " L(I(0)) ", " L(I(-1)), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'groups' is 0", CONV_IN, CONV(", " L(I(1)) ", " L(I(0)) ", " L(I(1)) ", " I(0), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'groups' is " I64MAX, CONV_IN,
         CONV(", " L(I(1)) ", " L(I(0)) ", " L(I(1)) ", " II(I64MAX), O));
  REFUSE(RLX_ERR_SHAPE, "'stride' has 3 entries", CONV_IN,
         CONV(", " L(I(1) ", " I(1) ", " I(1)), O) /* 3 for 2 axes */);
  REFUSE(RLX_ERR_UNSUPPORTED, "padding='same' with 'stride'[0] = 2", CONV_IN,
         NODE("aten.conv2d.padding", X ", {'ref': 'w'}, {'none': true}, " L(I(2)) ", {'str': 'same'}", O));
  REFUSE(RLX_ERR_SHAPE, "'output_padding'[0] = 1 must be smaller", CONV_IN,
         NODE("aten.conv_transpose2d.input", X ", {'ref': 'w'}, {'none': true}, " L(I(1)) ", " L(I(0)) ", " L(I(1)),
              OUT("[1, 1, 6, 6]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "convolution of a f32 input with a f64 weight",
         IN("[1, 1, 4, 4]", "f32") ", {'id': 'w', 'shape': [1, 1, 2, 2], 'dtype': 'f64'}", CONV("", O));
  REFUSE(RLX_ERR_SHAPE, "kernel size 0", IN("[1, 1, 4, 4]", "f32")
         ", {'id': 'w', 'shape': [1, 1, 0, 0], 'dtype': 'f32'}",
         CONV("", OUT("[1, 1, 5, 5]", "f32")));
}
#undef O

#define O OUT("[1, 1, 2, 2]", "f32")
TEST(pool_params) {
  const char *in = IN("[1, 1, 4, 4]", "f32");
  REFUSE(RLX_ERR_SHAPE, "'padding'[0] is " P62, in,
         NODE("aten.avg_pool2d.default", X ", " L(I(2)) ", " L(I(2)) ", " L(II(P62)), O));
  REFUSE(RLX_ERR_SHAPE, "'kernel_size'[0] is 0", in, NODE("aten.max_pool2d.default", X ", " L(I(0)), O));
  REFUSE(RLX_ERR_SHAPE, "'kernel_size'[0] is " I64MAX, in, NODE("aten.max_pool2d.default", X ", " L(II(I64MAX)), O));
  REFUSE(RLX_ERR_SHAPE, "'stride'[0] is 0", in, NODE("aten.max_pool2d.default", X ", " L(I(2)) ", " L(I(0)), O));
  REFUSE(RLX_ERR_SHAPE, "'dilation'[0] is 0", in,
         NODE("aten.max_pool2d.default", X ", " L(I(2)) ", " L(I(2)) ", " L(I(0)) ", " L(I(0)), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'divisor_override' is 0", in,
         NODE("aten.avg_pool2d.default", X ", " L(I(2)) ", " L(I(2)) ", " L(I(0))
           ", {'bool': false}, {'bool': true}, " I(0), O));
  REFUSE(RLX_ERR_SHAPE, "'output_size'[0] is -5", in,
         NODE("aten.adaptive_avg_pool2d.default", X ", " L(I(-5) ", " I(2)), O));
  REFUSE(RLX_ERR_SHAPE, "'stride'[0] is 0", IN("[1, 2, 4, 4]", "f32"),
         NODE("aten.col2im.default", X ", " L(I(4) ", " I(4)) ", " L(I(1)) ", " L(I(1)) ", " L(I(0)) ", " L(I(0)),
              OUT("[1, 2, 4, 4]", "f32")));
}
#undef O

/* ---- interpolation and grid sampling ---- */

#define O OUT("[1, 1, 4, 4]", "f32")
TEST(resize_scales) {
  const char *in = IN("[1, 1, 2, 2]", "f32");
  REFUSE(RLX_ERR_SHAPE, "'scale_factors'[0] is nan", in,
         NODE("aten.upsample_nearest2d.vec", X ", {'none': true}, " L(FS("nan") ", " F(2.0)), O));
  REFUSE(RLX_ERR_SHAPE, "'scale_factors'[1] is inf", in,
         NODE("aten.upsample_bilinear2d.vec", X ", {'none': true}, {'bool': false}, " L(F(2.0) ", " FS("inf")), O));
  REFUSE(RLX_ERR_SHAPE, "'scale_factors'[0] is 1e+300", in,
         NODE("aten.upsample_nearest2d.vec", X ", {'none': true}, " L(F(1e300) ", " F(2.0)), O));
  REFUSE(RLX_ERR_SHAPE, "'scale_factors'[0] is -2", in,
         NODE("aten.upsample_nearest2d.vec", X ", {'none': true}, " L(F(-2.0) ", " F(2.0)), O));
  /* .default scales: torch uses one only when it is > 0 (NaN is not): the sizes decide */
  fixture f;
  CHECK_OK(fx_load(&f, in, NODE("aten.upsample_nearest2d.default", X ", " L(I(4) ", " I(4)) ", " FS("nan") ", "
                   F(-1.0), O),
                   "{'ref': 'n', 'shape': [1, 1, 4, 4], 'dtype': 'f32'}"));
  fx_free(&f);
  const char *gin = IN("[1, 1, 2, 2]", "f32") ", {'id': 'g', 'shape': [1, 2, 2, 2], 'dtype': 'f32'}";
  REFUSE(RLX_ERR_SHAPE, "argument 'interpolation_mode' (0 bilinear, 1 nearest, 2 bicubic) is " P32, gin,
         NODE("aten.grid_sampler_2d.default", X ", {'ref': 'g'}, " II(P32) ", " I(0) ", {'bool': false}",
           OUT("[1, 1, 2, 2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'padding_mode'", gin,
         NODE("aten.grid_sampler_2d.default", X ", {'ref': 'g'}, " I(0) ", " I(-1) ", {'bool': false}",
           OUT("[1, 1, 2, 2]", "f32")));
}
#undef O

/* ---- normalization ---- */

#define O OUT("[2, 4, 3]", "f32")
TEST(norm_args) {
  const char *in = IN("[2, 4, 3]", "f32");
  REFUSE(RLX_ERR_SHAPE, "argument 'num_groups' is 0", in, NODE("aten.group_norm.default", X ", " I(0), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'num_groups' is 3", in, NODE("aten.group_norm.default", X ", " I(3), O));
  REFUSE(RLX_ERR_SHAPE, "argument 'group' is " I64MAX, in,
         NODE("aten.native_group_norm.default", X ", {'none': true}, {'none': true}, " I(2) ", " I(4) ", " I(3) ", "
           II(I64MAX)
              ", " F(1e-5), "[" O ", " OUT("[2, 1]", "f32") ", " OUT("[2, 1]", "f32") "]"));
  /* more normalized dims than the input has (1u << negative before) */
  REFUSE(RLX_ERR_SHAPE, "'normalized_shape' (4 dims)", in,
         NODE("aten.layer_norm.default", X ", " L(I(1) ", " I(2) ", " I(4) ", " I(3)), O));
  REFUSE(RLX_ERR_SHAPE, "'normalized_shape' (1 dims)", in, NODE("aten.rms_norm.default", X ", " L(I(4)), O));
}
#undef O

/* ---- operand checks torch makes ---- */

TEST(operand_types) {
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'condition' must be a bool tensor, got f32", IN("[2]", "f32"),
         NODE("aten.where.self", X ", " X ", " X, OUT("[2]", "f32")));
  REFUSE(RLX_ERR_UNSUPPORTED, "argument 'mask' must be a bool tensor", IN("[2]", "f32")
         ", {'id': 'm', 'shape': [2], 'dtype': 'u8'}",
         NODE("aten.masked_fill.Scalar", X ", {'ref': 'm'}, " F(1.0), OUT("[2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "matmul operands of different dtypes (f32, i64)", IN("[2, 2]", "f32")
         ", {'id': 'y', 'shape': [2, 2], 'dtype': 'i64'}",
         NODE("aten.mm.default", X ", {'ref': 'y'}", OUT("[2, 2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'p' is nan", IN("[1, 2]", "f32"),
         NODE("aten.cdist.default", X ", " X ", " FS("nan"), OUT("[1, 1]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'p' is -1", IN("[3, 2]", "f32"),
         NODE("aten._pdist_forward.default", X ", " F(-1.0), OUT("[3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'stride'[0] is -1", IN("[4]", "f32"),
         NODE("aten.as_strided.default", X ", " L(I(2)) ", " L(I(-1)), OUT("[2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "'storage_offset' is -1", IN("[4]", "f32"),
         NODE("aten.as_strided.default", X ", " L(I(2)) ", " L(I(1)) ", " I(-1), OUT("[2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'mode' (0 sum, 1 mean, 2 max) is " P32, IN("[4, 2]", "f32")
         ", {'id': 'i', 'shape': [2], 'dtype': 'i64'}"
         ", {'id': 'o', 'shape': [1], 'dtype': 'i64'}",
         NODE("aten._embedding_bag.default", X ", {'ref': 'i'}, {'ref': 'o'}, {'bool': false}, " II(P32),
           OUT("[1, 2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'padding_idx' is -5", IN("[4, 2]", "f32")
         ", {'id': 'i', 'shape': [2], 'dtype': 'i64'}"
         ", {'id': 'o', 'shape': [1], 'dtype': 'i64'}",
         NODE("aten._embedding_bag.default", X ", {'ref': 'i'}, {'ref': 'o'}, {'bool': false}, " I(0)
           ", {'bool': false},"
              " {'none': true}, {'bool': false}, " I(-5), OUT("[1, 2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'step' is 0", IN("[4]", "f32") ", {'id': 's', 'shape': [2], 'dtype': 'f32'}",
         NODE("aten.slice_scatter.default", X ", {'ref': 's'}, " I(0) ", " I(0) ", " I(4) ", " I(0), OUT("[4]",
           "f32")));
}

/* ---- recorded types and symbolic values ---- */

TEST(recorded_outputs) {
  /* a used output whose type is not recorded (a null dereference before) */
  REFUSE(RLX_ERR_FORMAT, "output 1 (the mask) is used but its type is not recorded", IN("[3]", "f32"),
         NODE("aten.native_dropout.default", X ", " F(0.5) ", {'bool': false}", "[" OUT("[3]", "f32") ", null]")
         ", {'id': 'g', 'op': '_getitem', 'args': [{'ref': 'n'}, {'int': 1}], 'out': null}");
  REFUSE(RLX_ERR_FORMAT, "output 1 (the mask) is used", IN("[3]", "f32"),
         NODE("aten.native_dropout.default", X ", " F(0.5) ", {'bool': false}", "[" OUT("[3]", "f32") "]")
         ", {'id': 'g', 'op': '_getitem', 'args': [{'ref': 'n'}, {'int': 1}], 'out': null}");
  REFUSE(RLX_ERR_FORMAT, "output 1 is used but its type is not recorded", IN("[1, 1, 4, 4]", "f32"),
         NODE("aten.max_pool2d_with_indices.default", X ", " L(I(2) ", " I(2)), "[" OUT("[1, 1, 2, 2]", "f32")
           ", null]")
         ", {'id': 'g', 'op': '_getitem', 'args': [{'ref': 'n'}, {'int': 1}], 'out': null}");
  REFUSE(RLX_ERR_UNSUPPORTED, "the unknown symbolic value 's9'", IN("[2, 3]", "f32"),
         NODE("aten.transpose.int", X ", {'sym': 's9'}, " I(1), OUT("[3, 2]", "f32")));
}

/* ---- order statistics, scans, view scatters ---- */

TEST(order_stat_args) {
  char node[512];
  static const char *const ks[] = {"0", "-1", "4", I64MIN, I64MAX, P62};
  for (int i = 0; i < 6; i++) { /* k outside [1, 3] for an axis of 3 */
    snprintf(node, sizeof node, "{'id': 'n', 'op': 'aten.kthvalue.default', 'args': [{'ref': 'x'}, {'int': %s}, "
             "{'int': 1}], 'out': [%s, %s]}", ks[i], OUT("[2]", "f32"), OUT("[2]", "i64"));
    REFUSE(RLX_ERR_SHAPE, "kthvalue k=", IN("[2, 3]", "f32"), node);
  }
  static const char *const ops[] = {"aten.median.dim", "aten.nanmedian.dim", "aten.mode.default", "aten.cummax.default",
                                    "aten.cummin.default", "aten.logcumsumexp.default"};
  static const char *const dims[] = {"2", "-3", I64MIN, I64MAX};
  for (int o = 0; o < 6; o++)
    for (int i = 0; i < 4; i++) {
      bool one = o == 5;
      snprintf(node, sizeof node, "{'id': 'n', 'op': '%s', 'args': [{'ref': 'x'}, {'int': %s}], 'out': %s%s%s%s%s}",
               ops[o], dims[i], one ? "" : "[", OUT("[2, 3]", "f32"), one ? "" : ", ", one ? "" : OUT("[2, 3]", "i64"),
               one ? "" : "]");
      REFUSE(RLX_ERR_SHAPE, "argument 'dim'", IN("[2, 3]", "f32"), node);
    }
}

TEST(view_scatter_args) {
  const char *xs = "{'id': 'x', 'shape': [3, 4], 'dtype': 'f32'}, {'id': 's', 'shape': [2], 'dtype': 'f32'}";
  char node[512];
  static const char *const offs[] = {I64MIN, I64MAX};
  for (int i = 0; i < 2; i++) {
    snprintf(node, sizeof node, "{'id': 'n', 'op': 'aten.diagonal_scatter.default', 'args': [{'ref': 'x'}, "
             "{'ref': 's'}, {'int': %s}], 'out': %s}", offs[i], OUT("[3, 4]", "f32"));
    REFUSE(RLX_ERR_SHAPE, "diagonal offset", xs, node);
  }
  static const struct {
    const char *size, *stride, *off, *want;
  } as[] = {{"-1", "1", "0", "size[0] = -1"}, {"2", "-1", "0", "stride -1"}, {"2", I64MAX, "0", "stride"},
            {"2", "1", I64MAX, "storage_offset"}, {"2", "1", "11", "reaches element 12 of a tensor of 12"},
            {"2", "281474976710656", "0", "reaches element"}, {"3", "1", "0", "does not have the view's shape"}};
  for (size_t i = 0; i < sizeof as / sizeof as[0]; i++) {
    snprintf(node, sizeof node, "{'id': 'n', 'op': 'aten.as_strided_scatter.default', 'args': [{'ref': 'x'}, "
             "{'ref': 's'}, {'list': [{'int': %s}]}, {'list': [{'int': %s}]}, {'int': %s}], 'out': %s}", as[i].size,
             as[i].stride, as[i].off, OUT("[3, 4]", "f32"));
    REFUSE(RLX_ERR_SHAPE, as[i].want, xs, node);
  }
  REFUSE(RLX_ERR_UNSUPPORTED, "index_reduce reduce 'sum'",
         "{'id': 'x', 'shape': [3], 'dtype': 'f32'}, {'id': 'i', 'shape': [2], 'dtype': 'i64'}, "
         "{'id': 's', 'shape': [2], 'dtype': 'f32'}",
         NODE("aten.index_reduce.default", "{'ref': 'x'}, {'int': 0}, {'ref': 'i'}, {'ref': 's'}, {'str': 'sum'}",
              OUT("[3]", "f32")));
  REFUSE(RLX_ERR_UNSUPPORTED, "put needs an i64 index",
         "{'id': 'x', 'shape': [3], 'dtype': 'f32'}, {'id': 'i', 'shape': [2], 'dtype': 'i32'}, "
         "{'id': 's', 'shape': [2], 'dtype': 'f32'}",
         NODE("aten.put.default", "{'ref': 'x'}, {'ref': 'i'}, {'ref': 's'}", OUT("[3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "an index of one value",
         "{'id': 'x', 'shape': [], 'dtype': 'f32'}, {'id': 'i', 'shape': [2], 'dtype': 'i64'}",
         NODE("aten.index_select.default", "{'ref': 'x'}, {'int': 0}, {'ref': 'i'}", OUT("[]", "f32")));
}

/* ---- issue 11: index makers, histograms, hash_tensor ---- */

TEST(index_maker_args) {
  char node[512];
  static const char *const rows[] = {"-1", "2147483649", I64MAX, I64MIN};
  for (int i = 0; i < 4; i++) { /* negative, or a matrix past 2^31 rows: refused before counting */
    snprintf(node, sizeof node, "{'id': 'n', 'op': 'aten.tril_indices.default', 'args': [{'int': %s}, {'int': 3}],"
             " 'out': %s}", rows[i], OUT("[2, 3]", "i64"));
    REFUSE(RLX_ERR_SHAPE, "tril_indices", "", node);
  }
  REFUSE(RLX_ERR_SHAPE, "non-negative", "", NODE("aten.triu_indices.default", I(3) ", " I(-5), OUT("[2, 0]", "i64")));
  /* 2^31 x 2^31 would be 2^61 entries */
  REFUSE(RLX_ERR_SHAPE, "too large", "", NODE("aten.triu_indices.default", II("2147483648") ", " II("2147483648"),
                                             OUT("[2, 1]", "i64")));
  /* an offset of INT64_MIN / MAX is clamped: nothing, or everything, below the diagonal */
  fixture f;
  CHECK_OK(fx_load(&f, "", NODE("aten.tril_indices.default", I(2) ", " I(2) ", " II(I64MAX), OUT("[2, 4]", "i64")),
                   "{'ref': 'n', 'shape': [2, 4], 'dtype': 'i64'}"));
  if (f.m) {
    CHECK_OK(fx_run(&f, NULL, (rlx_tensor_view){0}));
    CHECK_VALS(&f, 0, 0, 0, 1, 1, 0, 1, 0, 1);
    fx_free(&f);
  }
  CHECK_OK(fx_load(&f, "", NODE("aten.triu_indices.default", I(2) ", " I(3) ", " II(I64MIN), OUT("[2, 6]", "i64")),
                   "{'ref': 'n', 'shape': [2, 6], 'dtype': 'i64'}"));
  if (f.m) fx_free(&f);
  REFUSE(RLX_ERR_SHAPE, "'size'", X22, NODEK("aten.nonzero_static.default", X, "'size': " I(-1), OUT("[0, 2]", "i64")));
  REFUSE(RLX_ERR_SHAPE, "'size'", X22,
         NODEK("aten.nonzero_static.default", X, "'size': " II(I64MAX), OUT("[1, 2]", "i64")));
  REFUSE(RLX_ERR_UNSUPPORTED, "'mode'", X22, NODEK("aten.hash_tensor.default", X, "'mode': " I(1), OUT("[]", "u64")));
  /* view(dtype): the recorded shape must be the input's with its last dim scaled */
  REFUSE(RLX_ERR_SHAPE, "bitcast of f32 [2, 2] to i64", X22,
         NODE("aten.view.dtype", X ", {'dtype': 'i64'}", OUT("[2, 2]", "i64")));
  REFUSE(RLX_ERR_SHAPE, "bitcast of u8 [3]", IN("[3]", "u8"),
         NODE("aten.view.dtype", X ", {'dtype': 'u32'}", OUT("[0]", "u32")));
  REFUSE(RLX_ERR_FORMAT, "argument 'dtype'", X22, NODE("aten.view.dtype", X ", {'dtype': 'i32'}", OUT("[2, 2]", "u32")));
  REFUSE(RLX_ERR_SHAPE, "argument 'dim'", X22,
         NODE("aten.hash_tensor.default", X ", " L(I(0) ", " I(-2)), OUT("[]", "u64")));
}

TEST(histogram_args) {
  char node[512];
  static const char *const bins[] = {"0", "-1", I64MIN, I64MAX};
  for (int i = 0; i < 4; i++) {
    snprintf(node, sizeof node, "{'id': 'n', 'op': 'aten.histogram.bin_ct', 'args': [{'ref': 'x'}, {'int': %s}],"
             " 'out': [%s, %s]}", bins[i], OUT("[1]", "f32"), OUT("[2]", "f32"));
    REFUSE(RLX_ERR_SHAPE, "'bins'", X22, node);
  }
  static const char *const ranges[] = {L(F(1.0) ", " F(0.0)), L(FS("nan") ", " F(1.0)), L(F(0.0)),
                                       L(FS("-inf") ", " F(1.0))};
  static const rlx_status want[] = {RLX_ERR_SHAPE, RLX_ERR_SHAPE, RLX_ERR_UNSUPPORTED, RLX_ERR_SHAPE};
  static const char *const says[] = {"min should not exceed max", "min should not exceed max", "'range'", "not finite"};
  for (int i = 0; i < 4; i++) {
    snprintf(node, sizeof node, "{'id': 'n', 'op': 'aten.histogram.bin_ct', 'args': [{'ref': 'x'}, {'int': 3}],"
             " 'kwargs': {'range': %s}, 'out': [%s, %s]}", ranges[i], OUT("[3]", "f32"), OUT("[4]", "f32"));
    REFUSE(want[i], says[i], X22, node);
  }
  REFUSE(RLX_ERR_UNSUPPORTED, "f32 or f64", IN("[4]", "i64"),
         "{'id': 'n', 'op': 'aten.histogram.bin_ct', 'args': [{'ref': 'x'}, {'int': 2}], 'out': ["
         OUT("[2]", "i64") ", " OUT("[3]", "i64") "]}");
  REFUSE(RLX_ERR_SHAPE, "at least 2 dimensions", IN("[4]", "f32"),
         NODE("aten._histogramdd_from_bin_cts.default", X ", " L(I(2)), OUT("[2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "2 counts for 3", IN("[4, 3]", "f32"),
         NODE("aten._histogramdd_from_bin_cts.default", X ", " L(I(2) ", " I(2)), OUT("[2, 2]", "f32")));
  /* NaN in the data with no range: a run-time error, as torch raises one */
  fixture f;
  CHECK_OK(fx_load(&f, IN("[3]", "f32"), NODE("aten.histogram.bin_ct", X ", " I(2), "[" OUT("[2]", "f32") ", "
                   OUT("[3]", "f32") "]") ", {'id': 'g', 'op': '_getitem', 'args': [{'ref': 'n'}, {'int': 0}],"
                   " 'out': " OUT("[2]", "f32") "}", "{'ref': 'g', 'shape': [2], 'dtype': 'f32'}"));
  if (f.m) {
    float x[3] = {1.0f, NAN, 2.0f};
    rlx_status st = fx_run(&f, "x", (rlx_tensor_view){x, RLX_DTYPE_F32, 1, {3}});
    CHECK(st == RLX_ERR_RUNTIME && strstr(rlx_last_error(), "not finite"));
    fx_free(&f);
  }
}

/* issue 11's lowerings (branch specials): segment_reduce, _trilinear, resize,
 * batch norm training, the orthogonal polynomials */
TEST(specials_args) {
  const char *xl = "{'id': 'x', 'shape': [5], 'dtype': 'f32'}, {'id': 'l', 'shape': [2], 'dtype': 'i64'}";
#define SEG(extra_args, kw) NODEK("aten.segment_reduce.default", X ", {'str': 'sum'}" extra_args, kw, OUT("[2]", "f32"))
  REFUSE(RLX_ERR_SHAPE, "'axis'", xl, SEG("", "'lengths': {'ref': 'l'}, 'axis': " II(I64MAX)));
  REFUSE(RLX_ERR_INVALID_ARGUMENT, "exactly one of lengths and offsets", xl,
         SEG("", "'lengths': {'ref': 'l'}, 'offsets': {'ref': 'l'}"));
  REFUSE(RLX_ERR_INVALID_ARGUMENT, "exactly one of lengths and offsets", xl, SEG("", "'axis': " I(0)));
  REFUSE(RLX_ERR_UNSUPPORTED, "reduction 'median'", xl,
         NODEK("aten.segment_reduce.default", X ", {'str': 'median'}", "'lengths': {'ref': 'l'}", OUT("[2]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "lengths has rank 1; it must be axis + 1 = 2",
         "{'id': 'x', 'shape': [2, 5], 'dtype': 'f32'}, {'id': 'l', 'shape': [2], 'dtype': 'i64'}",
         NODEK("aten.segment_reduce.default", X ", {'str': 'sum'}", "'lengths': {'ref': 'l'}, 'axis': " I(1),
               OUT("[2, 2]", "f32")));
#undef SEG
  const char *three = "{'id': 'x', 'shape': [2, 3], 'dtype': 'f32'}, {'id': 'w', 'shape': [4, 3, 3], 'dtype': 'f32'}";
#define TRI(e1, e2, e3, sum) NODE("aten._trilinear.default", X ", {'ref': 'w'}, " X ", " e1 ", " e2 ", " e3 ", " sum \
                                  ", " I(1), OUT("[2, 4]", "f32"))
  REFUSE(RLX_ERR_SHAPE, "names dim 1 twice", three, TRI(L(I(1) ", " I(1)), L(I(0)), L(I(1) ", " I(2)), L(I(2))));
  REFUSE(RLX_ERR_SHAPE, "'expand1'", three, TRI(L(II(I64MAX) ", " I(3)), L(I(0)), L(I(1) ", " I(2)), L(I(2))));
  REFUSE(RLX_ERR_SHAPE, "has rank 3, not 4", three, TRI(L(I(1) ", " I(3)), L(), L(I(1) ", " I(2)), L(I(2))));
#undef TRI
  REFUSE(RLX_ERR_UNSUPPORTED, "uninitialized", X22, NODE("aten.resize.default", X ", " L(I(3) ", " I(3)),
                                                         OUT("[3, 3]", "f32")));
  REFUSE(RLX_ERR_SHAPE, "running_mean must have shape [4]",
         "{'id': 'x', 'shape': [2, 4, 3], 'dtype': 'f32'}, {'id': 'm', 'shape': [3], 'dtype': 'f32'}",
         "{'id': 'n', 'op': 'aten._native_batch_norm_legit_functional.default', 'args': [" X ", {'none': true}, "
         "{'none': true}, {'ref': 'm'}, {'ref': 'm'}, {'bool': true}, " F(0.1) ", " F(1e-5) "], 'out': ["
         OUT("[2, 4, 3]", "f32") ", " OUT("[4]", "f32") ", " OUT("[4]", "f32") ", " OUT("[4]", "f32") ", "
         OUT("[4]", "f32") "]}");
  REFUSE(RLX_ERR_UNSUPPORTED, "not implemented for f16", IN("[3]", "f16"),
         NODE("aten.special_legendre_polynomial_p.n_scalar", X ", " I(3), OUT("[3]", "f16")));
}

TEST_MAIN(conv_params, pool_params, resize_scales, norm_args, operand_types, recorded_outputs, order_stat_args,
          view_scatter_args, index_maker_args, histogram_args, specials_args)
