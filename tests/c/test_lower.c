/*
 * test_lower.c — aten -> rlx lowering of small hand-written torch-ir graphs
 * with in-memory weights, run end to end (compile, session, run) against
 * hand-computed results: linear algebra, convolution and padding, shape and
 * data movement, elementwise ops, reductions and constant graph outputs.
 * test_lower_errors.c covers the lowering's errors.
 *
 * Graphs are written with single quotes (fixtures.h: jq). Values computed by
 * hand follow torch's semantics (e.g. linear is x @ W^T + b).
 */
#include "lower_util.h"

/* ---- linear algebra ---- */

TEST(linear) {
  fixture f;
  float x[2] = {5, 6};
  for (int rank = 1; rank <= 2; rank++) {
    const char *shp = rank == 1 ? "[2]" : "[1, 2]";
    char in[256], node[512], out[256];
    snprintf(in, sizeof in, "{'id': 'x', 'shape': %s, 'dtype': 'f32'}", shp);
    snprintf(node, sizeof node, "{'id': 'linear', 'op': 'aten.linear.default', 'args': [{'ref': 'x'},"
             " {'ref': 'p_w'}, {'ref': 'p_b'}], 'out': {'shape': %s, 'dtype': 'f32'}}", shp);
    snprintf(out, sizeof out, "{'ref': 'linear', 'shape': %s, 'dtype': 'f32'}", shp);
    CHECK_OK(fx_load(&f, in, LIN_WEIGHTS, node, out, lin_specs, 2));
    CHECK_OK(fx_compile(&f, false));
    rlx_tensor_view v = {.data = x, .dtype = RLX_DTYPE_F32, .rank = rank, .dims = {rank == 1 ? 2 : 1, 2}};
    CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
    CHECK_OK(rlx_session_run(f.s));
    if (rank == 1) CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(2), 27, 59);
    else CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(1, 2), 27, 59);
    fx_free(&f);
  }
}

TEST(addmm) {
  fixture f;
  float x[2] = {5, 6}, nanb[2] = {NAN, NAN};
  st_spec specs[] = {lin_specs[0], lin_specs[1], {"nan.bias", "F32", 1, {2}, nanb}};
  CHECK_OK(fx_load(&f, "{'id': 'x', " F32("[1, 2]") "}",
                   LIN_WEIGHTS ", {'id': 'p_nan', 'key': 'nan.bias', " F32("[2]") "}",
                   "{'id': 'addmm', 'op': 'aten.addmm.default', 'args': [{'ref': 'p_b'}, {'ref': 'x'},"
                   " {'ref': 'p_w'}], 'out': {" F32("[1, 2]") "}},"
                   /* beta = 0 ignores the input even where it is NaN (as torch does) */
                   " {'id': 'addmm_1', 'op': 'aten.addmm.default', 'args': [{'ref': 'p_nan'}, {'ref': 'x'},"
                   " {'ref': 'p_w'}], 'kwargs': {'beta': {'int': 0}, 'alpha': {'float': 0.5}},"
                   " 'out': {" F32("[1, 2]") "}}",
                   "{'ref': 'addmm', " F32("[1, 2]") "}, {'ref': 'addmm_1', " F32("[1, 2]") "}",
                   specs, 3));
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view v = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 2, .dims = {1, 2}};
  CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(1, 2), 33, 54);
  CHECK_OUT(&f, 1, RLX_DTYPE_F32, DIMS(1, 2), 11.5, 17);
  fx_free(&f);
}

/* transformers.grouped_mm_fallback (a library's custom op, found by its
 * namespace): x [4, 2], w [2, 2, 3] with w0 = [[1,0,1],[0,1,1]] and
 * w1 = 2 * w0 + 1, offsets read at run time. */
static const float gmm_w[12] = {1, 0, 1, 0, 1, 1, 3, 1, 3, 1, 3, 3};
static const st_spec gmm_specs[] = {{"experts.w", "F32", 3, {2, 2, 3}, gmm_w}};
#define GMM_NODE(op)                                                                            \
  "{'id': 'g', 'op': '" op "', 'args': [{'ref': 'x'}, {'ref': 'p_w'}, {'ref': 'offs'}],"        \
  " 'out': {" F32("[4, 3]") "}}"

TEST(grouped_mm_fallback) {
  fixture f;
  CHECK(rlx_lower_find("transformers.grouped_mm_fallback.default") == rlx_lower_find("aten._grouped_mm.default"));
  CHECK(rlx_lower_find("transformers.grouped_mm_fallback.default") != NULL);
  CHECK(rlx_lower_find("aten.grouped_mm_fallback.default") == NULL); /* the namespace is part of the name */
  CHECK(rlx_lower_find("mylib.add.Tensor") == NULL && rlx_lower_find("aten.add") != NULL);
  CHECK(rlx_lower_find("add") == NULL && rlx_lower_find("aten.") == NULL && rlx_lower_find(".add.Tensor") == NULL);
  bool listed = false;
  for (int i = 0; i < rlx_lower_registry_count(); i++)
    listed |= !strcmp(rlx_lower_registry_name(i), "transformers.grouped_mm_fallback");
  CHECK(listed);
  CHECK_OK(fx_load(&f, "{'id': 'x', " F32("[4, 2]") "}, {'id': 'offs', 'shape': [2], 'dtype': 'i32'}",
                   "{'id': 'p_w', 'key': 'experts.w', " F32("[2, 2, 3]") "}",
                   GMM_NODE("transformers.grouped_mm_fallback.default"), "{'ref': 'g', " F32("[4, 3]") "}",
                   gmm_specs, 1));
  CHECK_OK(fx_compile(&f, false));
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int32_t offs[2] = {1, 3};
  rlx_tensor_view vx = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 2, .dims = {4, 2}};
  rlx_tensor_view vo = {.data = offs, .dtype = RLX_DTYPE_I32, .rank = 1, .dims = {2}};
  CHECK_OK(rlx_session_bind_input(f.s, "x", &vx));
  CHECK_OK(rlx_session_bind_input(f.s, "offs", &vo));
  CHECK_OK(rlx_session_run(f.s));
  /* row 0 by w0: [a, b, a + b]; rows 1, 2 by w1: [3a + b, a + 3b, 3a + 3b]; row 3 past the end: 0 */
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(4, 3), 1, 2, 3, 13, 15, 21, 21, 23, 33, 0, 0, 0);
  offs[0] = 0, offs[1] = 0; /* every group empty: all zero */
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(4, 3), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  offs[0] = 3, offs[1] = 1; /* decreasing */
  CHECK_ERR(rlx_session_run(f.s), RLX_ERR_RUNTIME, "node 'g' (transformers.grouped_mm_fallback.default): "
            "grouped_matmul: offsets must be non-decreasing from 0, but offsets[1] = 1 follows 3");
  offs[0] = 1, offs[1] = 5; /* past S */
  CHECK_ERR(rlx_session_run(f.s), RLX_ERR_RUNTIME, "offsets[1] = 5 is past the 4 rows of the input");
  offs[0] = -1; /* negative */
  CHECK_ERR(rlx_session_run(f.s), RLX_ERR_RUNTIME, "offsets[0] = -1 follows 0");
  fx_free(&f);
  /* _grouped_mm: the same form lowers; a 3-D x 3-D one (batched) is refused naming the node */
  CHECK_OK(fx_load(&f, "{'id': 'x', " F32("[4, 2]") "}, {'id': 'offs', 'shape': [2], 'dtype': 'i32'}",
                   "{'id': 'p_w', 'key': 'experts.w', " F32("[2, 2, 3]") "}", GMM_NODE("aten._grouped_mm.default"),
                   "{'ref': 'g', " F32("[4, 3]") "}", gmm_specs, 1));
  fx_free(&f);
  CHECK_ERR(fx_load(&f, "{'id': 'x', " F32("[2, 4, 2]") "}", "{'id': 'p_w', 'key': 'experts.w', " F32("[2, 2, 3]") "}",
                    "{'id': 'g', 'op': 'aten._grouped_mm.default', 'args': [{'ref': 'x'}, {'ref': 'p_w'}],"
                    " 'out': {" F32("[2, 4, 3]") "}}", "", gmm_specs, 1),
            RLX_ERR_UNSUPPORTED, "node 'g' (aten._grouped_mm.default): grouped mm is supported as a 2-D input "
            "times a 3-D weight with offsets, without bias or out_dtype; got a 3-D input, a 3-D weight, no offsets");
}

/* matmul of two vectors is a scalar. The fillers make the reshape of `a`
 * grow the value table, so a handler holding a value pointer across it
 * would read freed memory (caught by the sanitizer build). */
TEST(matmul_vectors) {
  fixture f;
  char in[4096];
  snprintf(in, sizeof in, "%s{'id': 'a', " F32("[2]") "}, {'id': 'b', " F32("[2]") "}", fillers(14));
  CHECK_OK(fx_load(&f, in, "", "{'id': 'mm', 'op': 'aten.matmul.default', 'args': [{'ref': 'a'},"
                   " {'ref': 'b'}], 'out': {" F32("[]") "}}", "{'ref': 'mm', " F32("[]") "}", NULL, 0));
  if (!f.m) return;
  CHECK_OK(fx_compile(&f, false));
  float a[2] = {2, 3}, b[2] = {4, -5};
  rlx_tensor_view va = view1(a, RLX_DTYPE_F32, 2), vb = view1(b, RLX_DTYPE_F32, 2);
  CHECK_OK(rlx_session_bind_input(f.s, "a", &va));
  CHECK_OK(rlx_session_bind_input(f.s, "b", &vb));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(), -7);
  fx_free(&f);
}

/* ---- convolution and padding ---- */

static const float conv_w[4] = {1, 0, 0, 1}, conv_b[1] = {0.5f};
static const st_spec conv_specs[] = {{"c.weight", "F32", 4, {1, 1, 2, 2}, conv_w},
                                     {"c.bias", "F32", 1, {1}, conv_b}};
#define CONV_WEIGHTS \
  "{'id': 'p_w', 'key': 'c.weight', " F32("[1, 1, 2, 2]") "}, {'id': 'p_b', 'key': 'c.bias', " F32("[1]") "}"

TEST(conv2d) {
  fixture f;
  float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  CHECK_OK(fx_load(&f, "{'id': 'x', " F32("[1, 1, 3, 3]") "}", CONV_WEIGHTS,
                   "{'id': 'conv2d', 'op': 'aten.conv2d.default', 'args': [{'ref': 'x'}, {'ref': 'p_w'},"
                   " {'ref': 'p_b'}], 'out': {" F32("[1, 1, 2, 2]") "}},"
                   " {'id': 'conv2d_1', 'op': 'aten.conv2d.default', 'args': [{'ref': 'x'}, {'ref': 'p_w'},"
                   " {'ref': 'p_b'}, {'list': [{'int': 2}, {'int': 2}]}, {'list': [{'int': 1}, {'int': 1}]}],"
                   " 'out': {" F32("[1, 1, 2, 2]") "}}",
                   "{'ref': 'conv2d', " F32("[1, 1, 2, 2]") "}, {'ref': 'conv2d_1', " F32("[1, 1, 2, 2]") "}",
                   conv_specs, 2));
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view v = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 4, .dims = {1, 1, 3, 3}};
  CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(1, 1, 2, 2), 6.5, 8.5, 12.5, 14.5);
  /* stride 2, padding 1: windows at (-1,-1), (-1,1), (1,-1), (1,1) */
  CHECK_OUT(&f, 1, RLX_DTYPE_F32, DIMS(1, 1, 2, 2), 1.5, 3.5, 7.5, 14.5);
  fx_free(&f);
}

/* padding="same" with an even kernel pads one more at the end; an unbatched
 * input is reshaped first. The fillers make that reshape grow the value
 * table (see matmul_vectors). */
TEST(conv2d_same_unbatched) {
  fixture f;
  float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  char in[4096];
  snprintf(in, sizeof in, "%s{'id': 'x', " F32("[1, 3, 3]") "}", fillers(13));
  CHECK_OK(fx_load(&f, in, CONV_WEIGHTS,
                   "{'id': 'conv2d', 'op': 'aten.conv2d.padding', 'args': [{'ref': 'x'}, {'ref': 'p_w'},"
                   " {'ref': 'p_b'}, {'list': [{'int': 1}]}, {'str': 'same'}], 'out': {" F32("[1, 3, 3]") "}}",
                   "{'ref': 'conv2d', " F32("[1, 3, 3]") "}", conv_specs, 2));
  if (!f.m) return;
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view v = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 3, .dims = {1, 3, 3}};
  CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(1, 3, 3), 6.5, 8.5, 3.5, 12.5, 14.5, 6.5, 7.5, 8.5, 9.5);
  fx_free(&f);
}

TEST(constant_pad_nd) {
  fixture f;
  float x[4] = {1, 2, 3, 4};
  CHECK_OK(fx_load(&f, "{'id': 'x', " F32("[2, 2]") "}", "",
                   "{'id': 'pad', 'op': 'aten.constant_pad_nd.default', 'args': [{'ref': 'x'}, {'list':"
                   " [{'int': 1}, {'int': 0}, {'int': 0}, {'int': 1}]}, {'float': 9}], 'out': {" F32("[3, 3]") "}},"
                   /* a negative pad crops */
                   " {'id': 'crop', 'op': 'aten.constant_pad_nd.default', 'args': [{'ref': 'x'}, {'list':"
                   " [{'int': -1}, {'int': 1}]}], 'out': {" F32("[2, 2]") "}}",
                   "{'ref': 'pad', " F32("[3, 3]") "}, {'ref': 'crop', " F32("[2, 2]") "}", NULL, 0));
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view v = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 2, .dims = {2, 2}};
  CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(3, 3), 9, 1, 2, 9, 3, 4, 9, 9, 9);
  CHECK_OUT(&f, 1, RLX_DTYPE_F32, DIMS(2, 2), 2, 0, 4, 0);
  fx_free(&f);
}

/* ---- shape and data movement ---- */

TEST(split_with_sizes_getitem) {
  fixture f;
  float x[5] = {0, 1, 2, 3, 4};
  CHECK_OK(fx_load(&f, "{'id': 'x', " F32("[5]") "}", "",
                   "{'id': 'split', 'op': 'aten.split_with_sizes.default', 'args': [{'ref': 'x'},"
                   " {'list': [{'int': 2}, {'int': 3}]}], 'out': [{" F32("[2]") "}, {" F32("[3]") "}]},"
                   " {'id': 'g1', 'op': '_getitem', 'args': [{'ref': 'split'}, {'int': 1}], 'out': {" F32("[3]") "}},"
                   " {'id': 'g0', 'op': '_getitem', 'args': [{'ref': 'split'}, {'int': 0}], 'out': {" F32("[2]") "}}",
                   "{'ref': 'g1', " F32("[3]") "}, {'ref': 'g0', " F32("[2]") "}", NULL, 0));
  for (int np = 0; np < 2; np++) {
    CHECK_OK(fx_compile(&f, np));
    rlx_tensor_view v = view1(x, RLX_DTYPE_F32, 5);
    CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
    CHECK_OK(rlx_session_run(f.s));
    CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(3), 2, 3, 4);
    CHECK_OUT(&f, 1, RLX_DTYPE_F32, DIMS(2), 0, 1);
  }
  fx_free(&f);
}

TEST(select_negative_index) {
  fixture f;
  float x[6] = {0, 1, 2, 3, 4, 5};
  CHECK_OK(fx_load(&f, "{'id': 'x', " F32("[2, 3]") "}", "",
                   "{'id': 'sel', 'op': 'aten.select.int', 'args': [{'ref': 'x'}, {'int': 1}, {'int': -1}],"
                   " 'out': {" F32("[2]") "}}, {'id': 'sel_1', 'op': 'aten.select.int', 'args': [{'ref': 'x'},"
                   " {'int': -2}, {'int': -2}], 'out': {" F32("[3]") "}}",
                   "{'ref': 'sel', " F32("[2]") "}, {'ref': 'sel_1', " F32("[3]") "}", NULL, 0));
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view v = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 2, .dims = {2, 3}};
  CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(2), 2, 5);
  CHECK_OUT(&f, 1, RLX_DTYPE_F32, DIMS(3), 0, 1, 2);
  fx_free(&f);
  CHECK_ERR(fx_load(&f, "{'id': 'x', " F32("[2, 3]") "}", "",
                    "{'id': 'sel', 'op': 'aten.select.int', 'args': [{'ref': 'x'}, {'int': 1}, {'int': -4}],"
                    " 'out': {" F32("[2]") "}}", "{'ref': 'sel', " F32("[2]") "}", NULL, 0),
            RLX_ERR_SHAPE, "node 'sel' (aten.select.int): select index -4 is out of range");
}

TEST(slice_negative_start_step) {
  fixture f;
  float x[6] = {0, 1, 2, 3, 4, 5};
  CHECK_OK(fx_load(&f, "{'id': 'x', " F32("[6]") "}", "",
                   /* x[-5::2] with torch's INT64_MAX end sentinel */
                   "{'id': 'sl', 'op': 'aten.slice.Tensor', 'args': [{'ref': 'x'}, {'int': 0}, {'int': -5},"
                   " {'int': 9223372036854775807}, {'int': 2}], 'out': {" F32("[3]") "}},"
                   /* x[-100:-1]: a start before the beginning clamps */
                   " {'id': 'sl_1', 'op': 'aten.slice.Tensor', 'args': [{'ref': 'x'}, {'int': 0},"
                   " {'int': -100}, {'int': -1}], 'out': {" F32("[5]") "}},"
                   /* a huge step takes one element */
                   " {'id': 'sl_2', 'op': 'aten.slice.Tensor', 'args': [{'ref': 'x'}, {'int': 0}, {'int': 1},"
                   " {'int': 9223372036854775807}, {'int': 9223372036854775807}], 'out': {" F32("[1]") "}}",
                   "{'ref': 'sl', " F32("[3]") "}, {'ref': 'sl_1', " F32("[5]") "}, {'ref': 'sl_2', " F32("[1]") "}",
                   NULL, 0));
  if (!f.m) return;
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view v = view1(x, RLX_DTYPE_F32, 6);
  CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(3), 1, 3, 5);
  CHECK_OUT(&f, 1, RLX_DTYPE_F32, DIMS(5), 0, 1, 2, 3, 4);
  CHECK_OUT(&f, 2, RLX_DTYPE_F32, DIMS(1), 1);
  fx_free(&f);
}

/* narrow(x, dim, start, length) with lengths from the file. */
TEST(narrow_bounds) {
  fixture f;
  float x[6] = {0, 1, 2, 3, 4, 5};
  CHECK_OK(fx_load(&f, "{'id': 'x', " F32("[6]") "}", "",
                   "{'id': 'nw', 'op': 'aten.narrow.default', 'args': [{'ref': 'x'}, {'int': 0}, {'int': -4},"
                   " {'int': 2}], 'out': {" F32("[2]") "}}", "{'ref': 'nw', " F32("[2]") "}", NULL, 0));
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view v = view1(x, RLX_DTYPE_F32, 6);
  CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(2), 2, 3);
  fx_free(&f);
  CHECK_ERR(fx_load(&f, "{'id': 'x', " F32("[6]") "}", "",
                    "{'id': 'nw', 'op': 'aten.narrow.default', 'args': [{'ref': 'x'}, {'int': 0},"
                    " {'int': 5}, {'int': 1e30}], 'out': {" F32("[1]") "}}",
                    "{'ref': 'nw', " F32("[1]") "}", NULL, 0),
            RLX_ERR_SHAPE, "node 'nw' (aten.narrow.default): narrow(start=5, length=9223372036854775807) "
            "is out of range for a dim of size 6");
  CHECK_ERR(fx_load(&f, "{'id': 'x', " F32("[6]") "}", "",
                    "{'id': 'nw', 'op': 'aten.narrow.default', 'args': [{'ref': 'x'}, {'int': 0},"
                    " {'int': 4}, {'int': 3}], 'out': {" F32("[2]") "}}",
                    "{'ref': 'nw', " F32("[2]") "}", NULL, 0),
            RLX_ERR_SHAPE, "node 'nw' (aten.narrow.default): narrow(start=4, length=3)");
  CHECK_ERR(fx_load(&f, "{'id': 'x', " F32("[6]") "}", "",
                    "{'id': 'nw', 'op': 'aten.narrow.default', 'args': [{'ref': 'x'}, {'int': 0},"
                    " {'int': -7}, {'int': 1}], 'out': {" F32("[1]") "}}",
                    "{'ref': 'nw', " F32("[1]") "}", NULL, 0),
            RLX_ERR_SHAPE, "narrow(start=-7, length=1)");
}

TEST(cat_promotes) {
  fixture f;
  int64_t a[2] = {1, 2};
  float b[1] = {0.5f};
  CHECK_OK(fx_load(&f, "{'id': 'a', 'shape': [2], 'dtype': 'i64'}, {'id': 'b', " F32("[1]") "}", "",
                   "{'id': 'cat', 'op': 'aten.cat.default', 'args': [{'list': [{'ref': 'a'}, {'ref': 'b'}]}],"
                   " 'out': {" F32("[3]") "}}", "{'ref': 'cat', " F32("[3]") "}", NULL, 0));
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view va = view1(a, RLX_DTYPE_I64, 2), vb = view1(b, RLX_DTYPE_F32, 1);
  CHECK_OK(rlx_session_bind_input(f.s, "a", &va));
  CHECK_OK(rlx_session_bind_input(f.s, "b", &vb));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(3), 1, 2, 0.5);
  fx_free(&f);
}

TEST(index_tensor) {
  fixture f;
  float x[12];
  for (int i = 0; i < 12; i++) x[i] = (float)i;
  int64_t i0[2] = {0, 2}, i1[2] = {-1, 0};
  CHECK_OK(fx_load(&f, "{'id': 'x', " F32("[3, 4]") "}, {'id': 'i0', 'shape': [2], 'dtype': 'i64'},"
                   " {'id': 'i1', 'shape': [2], 'dtype': 'i64'}", "",
                   "{'id': 'ix', 'op': 'aten.index.Tensor', 'args': [{'ref': 'x'}, {'list': [{'ref': 'i0'},"
                   " {'ref': 'i1'}]}], 'out': {" F32("[2]") "}},"
                   " {'id': 'ix_1', 'op': 'aten.index.Tensor', 'args': [{'ref': 'x'}, {'list': [{'none': true},"
                   " {'ref': 'i1'}]}], 'out': {" F32("[3, 2]") "}}",
                   "{'ref': 'ix', " F32("[2]") "}, {'ref': 'ix_1', " F32("[3, 2]") "}", NULL, 0));
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view vx = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 2, .dims = {3, 4}};
  rlx_tensor_view v0 = view1(i0, RLX_DTYPE_I64, 2), v1 = view1(i1, RLX_DTYPE_I64, 2);
  CHECK_OK(rlx_session_bind_input(f.s, "x", &vx));
  CHECK_OK(rlx_session_bind_input(f.s, "i0", &v0));
  CHECK_OK(rlx_session_bind_input(f.s, "i1", &v1));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(2), 3, 8);
  CHECK_OUT(&f, 1, RLX_DTYPE_F32, DIMS(3, 2), 3, 0, 7, 4, 11, 8);
  i1[0] = 4; /* out of range: a run-time error naming the node, not a wild read */
  CHECK_ERR(rlx_session_run(f.s), RLX_ERR_RUNTIME, "node 'ix'");
  fx_free(&f);
}

/* ---- elementwise ---- */

TEST(masked_fill_neg_inf) {
  fixture f;
  float x[3] = {1, 2, 3};
  uint8_t m[3] = {1, 0, 1};
  CHECK_OK(fx_load(&f, "{'id': 'x', " F32("[3]") "}, {'id': 'm', 'shape': [3], 'dtype': 'bool'}", "",
                   "{'id': 'mf', 'op': 'aten.masked_fill.Scalar', 'args': [{'ref': 'x'}, {'ref': 'm'},"
                   " {'float': '-inf'}], 'out': {" F32("[3]") "}},"
                   " {'id': 'sm', 'op': 'aten._softmax.default', 'args': [{'ref': 'mf'}, {'int': 0}, {'bool': false}],"
                   " 'out': {" F32("[3]") "}}",
                   "{'ref': 'mf', " F32("[3]") "}, {'ref': 'sm', " F32("[3]") "}", NULL, 0));
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view vx = view1(x, RLX_DTYPE_F32, 3), vm = view1(m, RLX_DTYPE_BOOL, 3);
  CHECK_OK(rlx_session_bind_input(f.s, "x", &vx));
  CHECK_OK(rlx_session_bind_input(f.s, "m", &vm));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(3), -INFINITY, 2, -INFINITY);
  CHECK_OUT(&f, 1, RLX_DTYPE_F32, DIMS(3), 0, 1, 0); /* exp(-inf) = 0, no NaN */
  fx_free(&f);
}

TEST(div_rounding_modes) {
  fixture f;
  int64_t a[3] = {-7, 7, -8}, b[3] = {2, -2, 3};
  const char *in = "{'id': 'a', 'shape': [3], 'dtype': 'i64'}, {'id': 'b', 'shape': [3], 'dtype': 'i64'}";
  CHECK_OK(fx_load(&f, in, "",
                   "{'id': 'fl', 'op': 'aten.div.Tensor_mode', 'args': [{'ref': 'a'}, {'ref': 'b'}],"
                   " 'kwargs': {'rounding_mode': {'str': 'floor'}}, 'out': {'shape': [3], 'dtype': 'i64'}},"
                   " {'id': 'tr', 'op': 'aten.div.Tensor_mode', 'args': [{'ref': 'a'}, {'ref': 'b'}],"
                   " 'kwargs': {'rounding_mode': {'str': 'trunc'}}, 'out': {'shape': [3], 'dtype': 'i64'}},"
                   " {'id': 'fs', 'op': 'aten.div.Scalar_mode', 'args': [{'ref': 'a'}, {'int': 2}],"
                   " 'kwargs': {'rounding_mode': {'str': 'floor'}}, 'out': {'shape': [3], 'dtype': 'i64'}},"
                   " {'id': 'tdiv', 'op': 'aten.div.Tensor', 'args': [{'ref': 'a'}, {'ref': 'b'}],"
                   " 'out': {" F32("[3]") "}}",
                   "{'ref': 'fl', 'shape': [3], 'dtype': 'i64'}, {'ref': 'tr', 'shape': [3], 'dtype': 'i64'},"
                   " {'ref': 'fs', 'shape': [3], 'dtype': 'i64'}, {'ref': 'tdiv', " F32("[3]") "}", NULL, 0));
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view va = view1(a, RLX_DTYPE_I64, 3), vb = view1(b, RLX_DTYPE_I64, 3);
  CHECK_OK(rlx_session_bind_input(f.s, "a", &va));
  CHECK_OK(rlx_session_bind_input(f.s, "b", &vb));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_I64, DIMS(3), -4, -4, -3);
  CHECK_OUT(&f, 1, RLX_DTYPE_I64, DIMS(3), -3, -3, -2);
  CHECK_OUT(&f, 2, RLX_DTYPE_I64, DIMS(3), -4, 3, -4);
  CHECK_OUT(&f, 3, RLX_DTYPE_F32, DIMS(3), -3.5, -3.5, (double)(-8.0f / 3.0f));
  fx_free(&f);
  CHECK_ERR(fx_load(&f, in, "", "{'id': 'd', 'op': 'aten.div.Tensor_mode', 'args': [{'ref': 'a'}, {'ref': 'b'}],"
                    " 'kwargs': {'rounding_mode': {'str': 'ceil'}}, 'out': {'shape': [3], 'dtype': 'i64'}}",
                    "{'ref': 'd', 'shape': [3], 'dtype': 'i64'}", NULL, 0),
            RLX_ERR_UNSUPPORTED, "node 'd' (aten.div.Tensor_mode): div rounding_mode 'ceil'");
}

TEST(where_scalar_branch) {
  fixture f;
  uint8_t c[3] = {1, 0, 1};
  float x[3] = {1, 2, 3};
  int64_t xi[3] = {1, 2, 3};
  CHECK_OK(fx_load(&f, "{'id': 'c', 'shape': [3], 'dtype': 'bool'}, {'id': 'x', " F32("[3]") "},"
                   " {'id': 'xi', 'shape': [3], 'dtype': 'i64'}", "",
                   "{'id': 'w0', 'op': 'aten.where.ScalarOther', 'args': [{'ref': 'c'}, {'ref': 'x'},"
                   " {'float': -1.5}], 'out': {" F32("[3]") "}},"
                   " {'id': 'w1', 'op': 'aten.where.ScalarSelf', 'args': [{'ref': 'c'}, {'int': 7},"
                   " {'ref': 'x'}], 'out': {" F32("[3]") "}},"
                   /* an integer tensor against a float scalar gives the default float dtype */
                   " {'id': 'w2', 'op': 'aten.where.ScalarOther', 'args': [{'ref': 'c'}, {'ref': 'xi'},"
                   " {'float': 0.5}], 'out': {" F32("[3]") "}}",
                   "{'ref': 'w0', " F32("[3]") "}, {'ref': 'w1', " F32("[3]") "}, {'ref': 'w2', " F32("[3]") "}",
                   NULL, 0));
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view vc = view1(c, RLX_DTYPE_BOOL, 3), vx = view1(x, RLX_DTYPE_F32, 3),
                  vi = view1(xi, RLX_DTYPE_I64, 3);
  CHECK_OK(rlx_session_bind_input(f.s, "c", &vc));
  CHECK_OK(rlx_session_bind_input(f.s, "x", &vx));
  CHECK_OK(rlx_session_bind_input(f.s, "xi", &vi));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(3), 1, -1.5, 3);
  CHECK_OUT(&f, 1, RLX_DTYPE_F32, DIMS(3), 7, 2, 7);
  CHECK_OUT(&f, 2, RLX_DTYPE_F32, DIMS(3), 1, 0.5, 3);
  fx_free(&f);
}

/* ---- reductions ---- */

TEST(sum_empty_dim_list) {
  fixture f;
  float x[6] = {1, 2, 3, 4, 5, 6};
  CHECK_OK(fx_load(&f, "{'id': 'x', " F32("[2, 3]") "}", "",
                   "{'id': 's', 'op': 'aten.sum.dim_IntList', 'args': [{'ref': 'x'}, {'list': []}],"
                   " 'out': {" F32("[]") "}},"
                   " {'id': 's_1', 'op': 'aten.sum.dim_IntList', 'args': [{'ref': 'x'}, {'list': [{'int': -1}]},"
                   " {'bool': true}], 'out': {" F32("[2, 1]") "}}",
                   "{'ref': 's', " F32("[]") "}, {'ref': 's_1', " F32("[2, 1]") "}", NULL, 0));
  CHECK_OK(fx_compile(&f, false));
  rlx_tensor_view v = {.data = x, .dtype = RLX_DTYPE_F32, .rank = 2, .dims = {2, 3}};
  CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
  CHECK_OK(rlx_session_run(f.s));
  CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(), 21);
  CHECK_OUT(&f, 1, RLX_DTYPE_F32, DIMS(2, 1), 6, 15);
  fx_free(&f);
}

/* ---- graph outputs ---- */

TEST(constant_outputs) {
  fixture f;
  float x[2] = {-1, 2};
  CHECK_OK(fx_load(&f, "{'id': 'x', " F32("[2]") "}", "",
                   "{'id': 'r', 'op': 'aten.relu.default', 'args': [{'ref': 'x'}], 'out': {" F32("[2]") "}}",
                   "{'ref': 'r', " F32("[2]") "}, {'const': {'int': 7}}, {'const': {'float': '-inf'}},"
                   " {'const': {'bool': true}}, {'ref': 'x', " F32("[2]") "}", NULL, 0));
  for (int np = 0; np < 2; np++) {
    CHECK_OK(fx_compile(&f, np));
    rlx_tensor_view v = view1(x, RLX_DTYPE_F32, 2);
    CHECK_OK(rlx_session_bind_input(f.s, "x", &v));
    CHECK_OK(rlx_session_run(f.s));
    CHECK_OUT(&f, 0, RLX_DTYPE_F32, DIMS(2), 0, 2);
    CHECK_OUT(&f, 1, RLX_DTYPE_I64, DIMS(), 7);
    CHECK_OUT(&f, 2, RLX_DTYPE_F64, DIMS(), -INFINITY);
    CHECK_OUT(&f, 3, RLX_DTYPE_BOOL, DIMS(), 1);
    CHECK_OUT(&f, 4, RLX_DTYPE_F32, DIMS(2), -1, 2); /* an input passed through */
  }
  fx_free(&f);
  CHECK_ERR(fx_load(&f, "", "", "", "{'const': {'str': 'a'}}", NULL, 0), RLX_ERR_UNSUPPORTED,
            "output 0: constant outputs must be numbers");
}

TEST_MAIN(linear, addmm, grouped_mm_fallback, matmul_vectors, conv2d, conv2d_same_unbatched, constant_pad_nd,
          split_with_sizes_getitem, select_negative_index, slice_negative_start_step, narrow_bounds,
          cat_promotes, index_tensor, masked_fill_neg_inf, div_rounding_modes, where_scalar_branch,
          sum_empty_dim_list, constant_outputs)
