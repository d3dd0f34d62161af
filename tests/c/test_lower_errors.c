/*
 * test_lower_errors.c — the aten -> rlx lowering's errors on small
 * hand-written torch-ir graphs: unsupported ops in one report, dtypes and
 * parameters torch refuses (special functions, order statistics, searches),
 * recorded shapes that disagree with rlx's inference, missing or mistyped
 * weights, dangling references, bad _getitem, duplicate ids; and run-time
 * errors that name the node. test_lower.c covers the lowerings that succeed.
 *
 * Graphs are written with single quotes (fixtures.h: jq).
 */
#include "lower_util.h"

#define X2 "{'id': 'x', " F32("[2]") "}"
#define RELU(id, in, shape) \
  "{'id': '" id "', 'op': 'aten.relu.default', 'args': [{'ref': '" in "'}], 'out': {" F32(shape) "}}"

TEST(unsupported_ops_in_one_report) {
  fixture f;
  CHECK_ERR(fx_load(&f, X2, "",
                    "{'id': 'a', 'op': 'aten.foo.default', 'args': [{'ref': 'x'}], 'out': {" F32("[2]") "}},"
                    " " RELU("r", "a", "[2]") ","
                    " {'id': 'b', 'op': 'aten.foo.default', 'args': [{'ref': 'r'}], 'out': {" F32("[2]") "}},"
                    " {'id': 'c', 'op': 'aten.bar.Tensor', 'args': [{'ref': 'b'}], 'out': {" F32("[2]") "}}",
                    "{'ref': 'c', " F32("[2]") "}", NULL, 0),
            RLX_ERR_UNSUPPORTED, "x");
  CHECK(!strcmp(rlx_last_error(), "aten->rlx registry does not yet support 2 op(s): aten.foo.default "
                                  "(nodes: a, b), aten.bar.Tensor (nodes: c)"));
  /* non-aten targets are reported the same way; long node lists are cut */
  CHECK_ERR(fx_load(&f, X2, "",
                    "{'id': 'n1', 'op': 'frob_size', 'args': [], 'out': null},"
                    " {'id': 'n2', 'op': 'frob_size', 'args': [], 'out': null},"
                    " {'id': 'n3', 'op': 'frob_size', 'args': [], 'out': null},"
                    " {'id': 'n4', 'op': 'frob_size', 'args': [], 'out': null},"
                    " {'id': 'n5', 'op': 'frob_size', 'args': [], 'out': null}", "", NULL, 0),
            RLX_ERR_UNSUPPORTED, "support 1 op(s): frob_size (nodes: n1, n2, n3, n4, ...)");
  /* a library's custom op rlx does not know is named with its namespace */
  CHECK_ERR(fx_load(&f, X2, "", "{'id': 'f', 'op': 'mylib.frob.default', 'args': [{'ref': 'x'}], 'out': {"
                    F32("[2]") "}}", "", NULL, 0),
            RLX_ERR_UNSUPPORTED, "support 1 op(s): mylib.frob.default (nodes: f)");
  /* scalar (SymInt) nodes are supported: they carry their recorded value */
  CHECK_ERR(fx_load(&f, X2, "", "{'id': 'n1', 'op': 'sym_size', 'args': [], 'out': null}", "", NULL, 0),
            RLX_ERR_FORMAT, "node 'n1' (sym_size): a scalar node must record its value");
}

/* Dtypes and parameters torch refuses for the special functions are refused
 * at load, naming the node (torch raises "gcd_cpu" not implemented for
 * 'Float', and so on, before any export could record them). */
TEST(special_refusals) {
  fixture f;
  const char *i2 = "{'id': 'i', 'shape': [2], 'dtype': 'i64'}";
  CHECK_ERR(fx_load(&f, X2, "", "{'id': 'g', 'op': 'aten.gcd.default', 'args': [{'ref': 'x'}, {'ref': 'x'}], 'out': {"
                    F32("[2]") "}}", "{'ref': 'g', " F32("[2]") "}", NULL, 0),
            RLX_ERR_UNSUPPORTED, "node 'g' (aten.gcd.default): gcd is defined for integer inputs only");
  CHECK_ERR(fx_load(&f, i2, "", "{'id': 'q', 'op': 'aten.igamma.default', 'args': [{'ref': 'i'}, {'ref': 'i'}], 'out': "
                    "{'shape': [2], 'dtype': 'i64'}}", "{'ref': 'q', 'shape': [2], 'dtype': 'i64'}", NULL, 0),
            RLX_ERR_UNSUPPORTED, "node 'q' (aten.igamma.default): igamma is defined for floating-point inputs only");
  CHECK_ERR(fx_load(&f, i2, "", "{'id': 'n', 'op': 'aten.nextafter.default', 'args': [{'ref': 'i'}, {'ref': 'i'}], "
                    "'out': {'shape': [2], 'dtype': 'i64'}}", "{'ref': 'n', 'shape': [2], 'dtype': 'i64'}", NULL, 0),
            RLX_ERR_UNSUPPORTED, "node 'n' (aten.nextafter.default): nextafter is defined for floating-point");
  CHECK_ERR(fx_load(&f, X2, "", "{'id': 'p', 'op': 'aten.polygamma.default', 'args': [{'int': -1}, {'ref': 'x'}], "
                    "'out': {" F32("[2]") "}}", "{'ref': 'p', " F32("[2]") "}", NULL, 0),
            RLX_ERR_UNSUPPORTED, "node 'p' (aten.polygamma.default): polygamma(n, x) does not support negative n");
  CHECK_ERR(fx_load(&f, X2, "", "{'id': 'm', 'op': 'aten.mvlgamma.default', 'args': [{'ref': 'x'}, {'int': 0}], "
                    "'out': {" F32("[2]") "}}", "{'ref': 'm', " F32("[2]") "}", NULL, 0),
            RLX_ERR_UNSUPPORTED, "node 'm' (aten.mvlgamma.default): p has to be greater than or equal to 1");
  CHECK_ERR(fx_load(&f, i2, "", "{'id': 'fr', 'op': 'aten.frexp.Tensor', 'args': [{'ref': 'i'}], 'out': "
                    "[{'shape': [2], 'dtype': 'i64'}, {'shape': [2], 'dtype': 'i32'}]}", "", NULL, 0),
            RLX_ERR_UNSUPPORTED, "node 'fr' (aten.frexp.Tensor): torch.frexp() only supports floating-point");
}

/* The order statistics and searches refuse what torch refuses, naming the
 * node: k past the axis, a dim out of range, an empty axis, bool inputs,
 * integer logcumsumexp, a sequence that does not match the values, a sorter
 * of the wrong dtype, an unknown side, 2-D bucketize boundaries. */
TEST(order_search_refusals) {
  fixture f;
  const char *b23 = "{'id': 'b', 'shape': [2, 3], 'dtype': 'bool'}", *i2 = "{'id': 'i', 'shape': [2], 'dtype': 'i64'}";
  const char *x23 = "{'id': 'x', " F32("[2, 3]") "}", *x0 = "{'id': 'x', " F32("[2, 0]") "}";
#define TWO_OUT(shape) "'out': [{" F32(shape) "}, {'shape': " shape ", 'dtype': 'i64'}]}"
  CHECK_ERR(fx_load(&f, x23, "", "{'id': 'k', 'op': 'aten.kthvalue.default', 'args': [{'ref': 'x'}, {'int': 4}, "
                    "{'int': 1}], " TWO_OUT("[2]"), "", NULL, 0),
            RLX_ERR_SHAPE,
            "node 'k' (aten.kthvalue.default): rlx order_stat: kthvalue k=4 is out of range for an axis of size 3");
  CHECK_ERR(fx_load(&f, x23, "", "{'id': 'k', 'op': 'aten.kthvalue.default', 'args': [{'ref': 'x'}, {'int': 0}], "
                    TWO_OUT("[2]"), "", NULL, 0),
            RLX_ERR_SHAPE, "node 'k' (aten.kthvalue.default): rlx order_stat: kthvalue k=0 is out of range");
  CHECK_ERR(fx_load(&f, x23, "", "{'id': 'md', 'op': 'aten.median.dim', 'args': [{'ref': 'x'}, {'int': 2}], "
                    TWO_OUT("[2]"), "", NULL, 0),
            RLX_ERR_SHAPE, "node 'md' (aten.median.dim): argument 'dim'");
  CHECK_ERR(fx_load(&f, x0, "", "{'id': 'mo', 'op': 'aten.mode.default', 'args': [{'ref': 'x'}, {'int': 1}], "
                    TWO_OUT("[2]"), "", NULL, 0),
            RLX_ERR_SHAPE, "node 'mo' (aten.mode.default): rlx order_stat: mode over the empty axis 1");
  CHECK_ERR(fx_load(&f, b23, "", "{'id': 'nm', 'op': 'aten.nanmedian.dim', 'args': [{'ref': 'b'}, {'int': 1}], "
                    "'out': [{'shape': [2], 'dtype': 'bool'}, {'shape': [2], 'dtype': 'i64'}]}", "", NULL, 0),
            RLX_ERR_UNSUPPORTED, "node 'nm' (aten.nanmedian.dim): rlx order_stat: nanmedian of a bool tensor");
  CHECK_ERR(fx_load(&f, i2, "", "{'id': 'lc', 'op': 'aten.logcumsumexp.default', 'args': [{'ref': 'i'}, {'int': 0}], "
                    "'out': {'shape': [2], 'dtype': 'i64'}}", "{'ref': 'lc', 'shape': [2], 'dtype': 'i64'}", NULL, 0),
            RLX_ERR_UNSUPPORTED,
            "node 'lc' (aten.logcumsumexp.default): rlx cumulative: logcumsumexp needs a float input");
  const char *sv = "{'id': 'x', " F32("[2, 3]") "}, {'id': 'v', " F32("[3, 3]") "}";
  CHECK_ERR(fx_load(&f, sv, "", "{'id': 'ss', 'op': 'aten.searchsorted.Tensor', 'args': [{'ref': 'x'}, {'ref': 'v'}], "
                    "'out': {'shape': [3, 3], 'dtype': 'i64'}}", "{'ref': 'ss', 'shape': [3, 3], 'dtype': 'i64'}",
                    NULL, 0),
            RLX_ERR_SHAPE,
            "node 'ss' (aten.searchsorted.Tensor): rlx searchsorted: the sequence [2, 3] must be 1-D or match");
  const char *so =
      "{'id': 'x', " F32("[3]") "}, {'id': 'v', " F32("[2]") "}, {'id': 'o', 'shape': [3], 'dtype': 'i32'}";
  CHECK_ERR(fx_load(&f, so, "", "{'id': 'ss', 'op': 'aten.searchsorted.Tensor', 'args': [{'ref': 'x'}, {'ref': 'v'}], "
                    "'kwargs': {'sorter': {'ref': 'o'}}, 'out': {'shape': [2], 'dtype': 'i64'}}",
                    "{'ref': 'ss', 'shape': [2], 'dtype': 'i64'}", NULL, 0),
            RLX_ERR_SHAPE, "node 'ss' (aten.searchsorted.Tensor): rlx searchsorted: the sorter (i32 [3]) must be i64");
  CHECK_ERR(fx_load(&f, so, "", "{'id': 'ss', 'op': 'aten.searchsorted.Tensor', 'args': [{'ref': 'x'}, {'ref': 'v'}], "
                    "'kwargs': {'side': {'str': 'middle'}}, 'out': {'shape': [2], 'dtype': 'i64'}}",
                    "{'ref': 'ss', 'shape': [2], 'dtype': 'i64'}", NULL, 0),
            RLX_ERR_UNSUPPORTED, "node 'ss' (aten.searchsorted.Tensor): argument 'side' must be 'left' or 'right'");
  CHECK_ERR(fx_load(&f, sv, "", "{'id': 'bk', 'op': 'aten.bucketize.Tensor', 'args': [{'ref': 'v'}, {'ref': 'x'}], "
                    "'out': {'shape': [3, 3], 'dtype': 'i64'}}", "{'ref': 'bk', 'shape': [3, 3], 'dtype': 'i64'}",
                    NULL, 0),
            RLX_ERR_SHAPE, "node 'bk' (aten.bucketize.Tensor): argument 'boundaries' must be 1-D");
  CHECK_ERR(fx_load(&f, b23, "", "{'id': 'in', 'op': 'aten.isin.Tensor_Tensor', 'args': [{'ref': 'b'}, {'ref': 'b'}], "
                    "'out': {'shape': [2, 3], 'dtype': 'bool'}}", "{'ref': 'in', 'shape': [2, 3], 'dtype': 'bool'}",
                    NULL, 0),
            RLX_ERR_UNSUPPORTED, "node 'in' (aten.isin.Tensor_Tensor): rlx isin: isin of bool tensors");
#undef TWO_OUT
}

/* searchsorted.Scalar, which torch.export cannot record today (its meta
 * function fails on a Python scalar), and a sorter entry out of range at run
 * time: an error naming the node, not a wild read. */
TEST(searchsorted_scalar_and_sorter) {
  fixture f;
  float x[4] = {3, 1, 2, 2}, v[2] = {2, 2.5f};
  int64_t o[4] = {1, 2, 3, 0};
  CHECK_OK(fx_load(&f, "{'id': 'x', " F32("[4]") "}, {'id': 'v', " F32("[2]") "}, {'id': 'o', 'shape': [4], "
                   "'dtype': 'i64'}", "",
                   "{'id': 'sc', 'op': 'aten.searchsorted.Scalar', 'args': [{'ref': 'x'}, {'float': 2.5}], "
                   "'kwargs': {'sorter': {'ref': 'o'}}, 'out': {'shape': [], 'dtype': 'i64'}},"
                   " {'id': 'ss', 'op': 'aten.searchsorted.Tensor', 'args': [{'ref': 'x'}, {'ref': 'v'}], "
                   "'kwargs': {'right': {'bool': true}, 'sorter': {'ref': 'o'}}, "
                   "'out': {'shape': [2], 'dtype': 'i64'}}",
                   "{'ref': 'sc', 'shape': [], 'dtype': 'i64'}, {'ref': 'ss', 'shape': [2], 'dtype': 'i64'}", NULL, 0));
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view vx = view1(x, RLX_DTYPE_F32, 4), vv = view1(v, RLX_DTYPE_F32, 2), vo = view1(o, RLX_DTYPE_I64, 4);
  CHECK_OK(rlx_session_bind_input(f.s, "x", &vx));
  CHECK_OK(rlx_session_bind_input(f.s, "v", &vv));
  CHECK_OK(rlx_session_bind_input(f.s, "o", &vo));
  CHECK_OK(rlx_session_run(f.s)); /* sorted: 1 2 2 3 */
  CHECK_OUT(&f, 0, RLX_DTYPE_I64, DIMS(), 3);
  CHECK_OUT(&f, 1, RLX_DTYPE_I64, DIMS(2), 3, 3);
  o[2] = 4;
  CHECK_ERR(rlx_session_run(f.s), RLX_ERR_RUNTIME,
            "node 'sc' (aten.searchsorted.Scalar): searchsorted: sorter[2] = 4 is out of range");
  fx_free(&f);
}

TEST(recorded_shape_mismatch) {
  fixture f;
  CHECK_ERR(fx_load(&f, X2, "", RELU("r", "x", "[3]"), "{'ref': 'r', " F32("[3]") "}", NULL, 0),
            RLX_ERR_SHAPE, "node 'r' (aten.relu.default): output 0: rlx infers f32 [2] but torch "
            "recorded f32 [3]");
  CHECK_ERR(fx_load(&f, X2, "", "{'id': 'a', 'op': 'aten.add.Tensor', 'args': [{'ref': 'x'}, {'ref': 'x'}],"
                    " 'out': {'shape': [2], 'dtype': 'i64'}}", "", NULL, 0),
            RLX_ERR_SHAPE, "node 'a' (aten.add.Tensor): output 0: rlx infers f32 [2] but torch recorded i64 [2]");
  CHECK_ERR(fx_load(&f, "{'id': 'x', " F32("[5]") "}", "",
                    "{'id': 'split', 'op': 'aten.split_with_sizes.default', 'args': [{'ref': 'x'},"
                    " {'list': [{'int': 2}, {'int': 3}]}], 'out': [{" F32("[2]") "}, {'shape': [3], 'dtype': 'i64'}]}",
                    "", NULL, 0),
            RLX_ERR_SHAPE, "node 'split' (aten.split_with_sizes.default): output 1: rlx infers f32 [3]");
  CHECK_ERR(fx_load(&f, X2, "", RELU("r", "x", "[2]"), "{'ref': 'r', " F32("[2, 1]") "}", NULL, 0),
            RLX_ERR_SHAPE, "graph output 0 ('r'): output 0: rlx infers f32 [2] but torch recorded f32 [2, 1]");
}

TEST(weight_errors) {
  fixture f;
  const char *node = "{'id': 'linear', 'op': 'aten.linear.default', 'args': [{'ref': 'x'}, {'ref': 'p_w'},"
                     " {'ref': 'p_b'}], 'out': {" F32("[2]") "}}";
  CHECK_ERR(fx_load(&f, X2, LIN_WEIGHTS, node, "", lin_specs, 1), RLX_ERR_NOT_FOUND,
            "weight 'fc.bias' (placeholder p_b) is missing from w.st");
  double w64[4] = {1, 2, 3, 4};
  st_spec wrong_dtype[] = {{"fc.weight", "F64", 2, {2, 2}, w64}, lin_specs[1]};
  CHECK_ERR(fx_load(&f, X2, LIN_WEIGHTS, node, "", wrong_dtype, 2), RLX_ERR_SHAPE,
            "weight 'fc.weight': w.st holds f64 [2, 2] but torch-ir.json declares f32 [2, 2]");
  st_spec wrong_shape[] = {{"fc.weight", "F32", 2, {1, 4}, lin_w}, lin_specs[1]};
  CHECK_ERR(fx_load(&f, X2, LIN_WEIGHTS, node, "", wrong_shape, 2), RLX_ERR_SHAPE,
            "weight 'fc.weight': w.st holds f32 [1, 4] but torch-ir.json declares f32 [2, 2]");
  CHECK_ERR(fx_load(&f, X2, LIN_WEIGHTS ", {'id': 'p_w', 'key': 'fc.bias', " F32("[2]") "}", node, "",
                    lin_specs, 2),
            RLX_ERR_FORMAT, "weight placeholder 'p_w' is declared twice");
  /* a weight the file holds at an odd address is copied, not misread */
  uint8_t pad[1] = {0};
  st_spec odd[] = {{"pad", "U8", 1, {1}, pad}, lin_specs[0], lin_specs[1]};
  CHECK_OK(fx_load(&f, X2, LIN_WEIGHTS, node, "{'ref': 'linear', " F32("[2]") "}", odd, 3));
  if (f.m) {
    CHECK_OK(fx_compile(&f, true));
    float x[2] = {5, 6};
    rlx_tensor_view v = view1(x, RLX_DTYPE_F32, 2);
    CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
    CHECK_OK(rlx_session_run(f.s));
    CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(2), 27, 59);
  }
  fx_free(&f);
}

TEST(reference_errors) {
  fixture f;
  CHECK_ERR(fx_load(&f, X2, "", RELU("r", "nope", "[2]"), "", NULL, 0), RLX_ERR_FORMAT,
            "node 'r' (aten.relu.default): refers to 'nope', which is not an input, a weight or an "
            "earlier node");
  CHECK_ERR(fx_load(&f, X2, "", RELU("r", "r2", "[2]") ", " RELU("r2", "x", "[2]"), "", NULL, 0),
            RLX_ERR_FORMAT, "node 'r' (aten.relu.default): refers to 'r2'"); /* used before defined */
  CHECK_ERR(fx_load(&f, X2, "", RELU("r", "x", "[2]"), "{'ref': 'nope', " F32("[2]") "}", NULL, 0),
            RLX_ERR_FORMAT, "output 0: refers to 'nope'");
  CHECK_ERR(fx_load(&f, X2, "", "{'id': 'r', 'op': 'aten.relu.default', 'args': [{'int': 3}],"
                    " 'out': {" F32("[2]") "}}", "", NULL, 0),
            RLX_ERR_UNSUPPORTED, "node 'r' (aten.relu.default): argument 'self' must be a tensor");
  CHECK_ERR(fx_load(&f, X2, "", "{'id': 'r', 'op': 'aten.relu.default', 'args': [],"
                    " 'out': {" F32("[2]") "}}", "", NULL, 0),
            RLX_ERR_FORMAT, "node 'r' (aten.relu.default): argument 'self' (a tensor) is missing");
}

#define MAXPOOL                                                                                  \
  "{'id': 'mp', 'op': 'aten.max_pool2d_with_indices.default', 'args': [{'ref': 'x'},"             \
  " {'list': [{'int': 2}, {'int': 2}]}], 'out': [{" F32("[1, 1, 1, 1]") "}, {'shape': [1, 1, 1, 1],"  \
  " 'dtype': 'i64'}]}"
#define X4 "{'id': 'x', " F32("[1, 1, 2, 2]") "}"

TEST(getitem_errors) {
  fixture f;
  /* an uncomputed output may be taken (export keeps dead _getitems) but not used */
  CHECK_OK(fx_load(&f, X2, "",
                   "{'id': 'ls', 'op': 'aten.log_sigmoid_forward.default', 'args': [{'ref': 'x'}],"
                   " 'out': [{" F32("[2]") "}, {" F32("[0]") "}]},"
                   " {'id': 'g', 'op': '_getitem', 'args': [{'ref': 'ls'}, {'int': 1}], 'out': {" F32("[0]") "}}",
                   "", NULL, 0));
  fx_free(&f);
  CHECK_ERR(fx_load(&f, X2, "",
                    "{'id': 'ls', 'op': 'aten.log_sigmoid_forward.default', 'args': [{'ref': 'x'}],"
                    " 'out': [{" F32("[2]") "}, {" F32("[0]") "}]},"
                    " {'id': 'g', 'op': '_getitem', 'args': [{'ref': 'ls'}, {'int': 1}], 'out': {" F32("[0]") "}},"
                    " {'id': 'r', 'op': 'aten.relu.default', 'args': [{'ref': 'g'}], 'out': {" F32("[0]") "}}",
                    "", NULL, 0),
            RLX_ERR_UNSUPPORTED, "node 'r' (aten.relu.default): uses 'g', output 1 of 'ls' "
                                 "(aten.log_sigmoid_forward.default), which rlx does not compute");
  CHECK_ERR(fx_load(&f, X4, "", MAXPOOL ", {'id': 'g', 'op': '_getitem', 'args': [{'ref': 'mp'},"
                    " {'int': 2}], 'out': {" F32("[1]") "}}", "", NULL, 0),
            RLX_ERR_FORMAT, "node 'g' (_getitem): _getitem index 2 out of range for 'mp' (2 outputs)");
  CHECK_ERR(fx_load(&f, X4, "", MAXPOOL ", {'id': 'g', 'op': '_getitem', 'args': [{'ref': 'mp'},"
                    " {'int': -1}], 'out': {" F32("[1]") "}}", "", NULL, 0),
            RLX_ERR_FORMAT, "_getitem index -1 out of range");
  CHECK_ERR(fx_load(&f, X2, "", RELU("r", "x", "[2]") ", {'id': 'g', 'op': '_getitem', 'args':"
                    " [{'ref': 'r'}, {'int': 0}], 'out': {" F32("[2]") "}}", "", NULL, 0),
            RLX_ERR_FORMAT, "node 'g' (_getitem): _getitem of 'r', which has no multiple outputs");
  CHECK_ERR(fx_load(&f, X2, "", "{'id': 'g', 'op': '_getitem', 'args': [{'ref': 'x'}], 'out': null}",
                    "", NULL, 0),
            RLX_ERR_FORMAT, "_getitem needs (node, index)");
  CHECK_ERR(fx_load(&f, X4, "", MAXPOOL ", {'id': 'r', 'op': 'aten.relu.default', 'args': [{'ref': 'mp'}],"
                    " 'out': {" F32("[1, 1, 1, 1]") "}}", "", NULL, 0),
            RLX_ERR_FORMAT, "node 'r' (aten.relu.default): 'mp' has several outputs and must be read "
            "through _getitem");
  /* both outputs of the pool read through _getitem: the indices are computed */
  float x[4] = {1, 4, 3, 2};
  CHECK_OK(fx_load(&f, X4, "", MAXPOOL ", {'id': 'g0', 'op': '_getitem', 'args': [{'ref': 'mp'}, {'int': 0}],"
                   " 'out': {" F32("[1, 1, 1, 1]") "}}, {'id': 'g1', 'op': '_getitem', 'args': [{'ref': 'mp'},"
                   " {'int': 1}], 'out': {'shape': [1, 1, 1, 1], 'dtype': 'i64'}}",
                   "{'ref': 'g0', " F32("[1, 1, 1, 1]") "}, {'ref': 'g1', 'shape': [1, 1, 1, 1], 'dtype': 'i64'}",
                   NULL, 0));
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view v = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 4, .dims = {1, 1, 2, 2}};
  CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(1, 1, 1, 1), 4);
  CHECK_OUT(&f, 1, RLX_DTYPE_I64, DIMS(1, 1, 1, 1), 1);
  fx_free(&f);
}

TEST(duplicate_ids) {
  fixture f;
  CHECK_ERR(fx_load(&f, X2, "", RELU("r", "x", "[2]") ", " RELU("r", "x", "[2]"), "", NULL, 0),
            RLX_ERR_FORMAT, "node id 'r' is used twice");
  CHECK_ERR(fx_load(&f, X2, "", RELU("x", "x", "[2]"), "", NULL, 0), RLX_ERR_FORMAT,
            "node id 'x' is used twice"); /* a node named like an input */
  CHECK_ERR(fx_load(&f, X4, "", MAXPOOL ", " MAXPOOL, "", NULL, 0), RLX_ERR_FORMAT,
            "node id 'mp' is used twice"); /* a multi-output node */
  CHECK_ERR(fx_load(&f, X2 ", " X2, "", "", "", NULL, 0), RLX_ERR_FORMAT, "input 'x' is declared twice");
}

TEST_MAIN(unsupported_ops_in_one_report, special_refusals, order_search_refusals,
          searchsorted_scalar_and_sorter, recorded_shape_mismatch, weight_errors, reference_errors,
          getitem_errors, duplicate_ids)
