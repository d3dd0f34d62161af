/*
 * test_unsigned.c — the unsigned dtypes u16, u32, u64: tokens, sizes and
 * safetensors names; element loads and stores with torch's conversions
 * (values printed by torch 2.15 on x86: float -> u16/u32/u64 of negative,
 * fractional and large values, u64 above 2^63 to float and back); and
 * the u64 kernels whose answer depends on reading the bits as unsigned
 * (maximum, division, right shift, comparisons, clamp, sort), run through
 * the reference kernels of a small graph.
 */
#include "core/core.h"
#include "ir/graph.h"
#include "test.h"

TEST(tokens) {
  CHECK(rlx_dtype_from_token("u16") == RLX_DTYPE_U16 && rlx_dtype_from_token("u32") == RLX_DTYPE_U32 &&
        rlx_dtype_from_token("u64") == RLX_DTYPE_U64);
  CHECK(rlx_dtype_from_safetensors("U16") == RLX_DTYPE_U16 && rlx_dtype_from_safetensors("U32") == RLX_DTYPE_U32 &&
        rlx_dtype_from_safetensors("U64") == RLX_DTYPE_U64);
  CHECK(!strcmp(rlx_dtype_safetensors_name(RLX_DTYPE_U64), "U64"));
  CHECK(rlx_dtype_size(RLX_DTYPE_U16) == 2 && rlx_dtype_size(RLX_DTYPE_U32) == 4 && rlx_dtype_size(RLX_DTYPE_U64) == 8);
  CHECK(rlx_dtype_is_int(RLX_DTYPE_U64) && !rlx_dtype_is_float(RLX_DTYPE_U32));
  /* appended after bool: the values of the older dtypes did not move */
  CHECK(RLX_DTYPE_BOOL == 9 && RLX_DTYPE_U16 == 10 && RLX_DTYPE_U64 == 12);
  /* with itself and with floats as torch.promote_types */
  CHECK(rlx_dtype_promote(RLX_DTYPE_U32, RLX_DTYPE_U32) == RLX_DTYPE_U32);
  CHECK(rlx_dtype_promote(RLX_DTYPE_U64, RLX_DTYPE_F16) == RLX_DTYPE_F16);
  CHECK(rlx_dtype_promote(RLX_DTYPE_BF16, RLX_DTYPE_U16) == RLX_DTYPE_BF16);
}

/* torch.tensor([v], dtype=torch.float64).to(dtype) */
TEST(from_float) {
  uint16_t h[1];
  uint32_t w[1];
  uint64_t q[1];
  static const struct {
    double v;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
  } want[] = {
      {-1.0, 65535, 4294967295u, 18446744073709551615ull},
      {-2.5, 65534, 4294967294u, 18446744073709551614ull},
      {3.7, 3, 3, 3},
      {70000.0, 4464, 70000, 70000},
      {4294967295.0, 0, 4294967295u, 4294967295ull},
      {5e9, 0, 705032704u, 5000000000ull},
      {9223372036854775808.0, 0, 0, 9223372036854775808ull},
      {1.8e19, 0, 0, 18000000000000000000ull},
      {18446744073709551616.0, 0, 0, 0},
      {-1e20, 0, 0, 9223372036854775808ull},
      {NAN, 0, 0, 9223372036854775808ull},
  };
  for (size_t i = 0; i < RLX_COUNTOF(want); i++) {
    rlx_store_f64(h, RLX_DTYPE_U16, 0, want[i].v);
    rlx_store_f64(w, RLX_DTYPE_U32, 0, want[i].v);
    rlx_store_f64(q, RLX_DTYPE_U64, 0, want[i].v);
    CHECK(h[0] == want[i].u16);
    CHECK(w[0] == want[i].u32);
    CHECK(q[0] == want[i].u64);
  }
}

TEST(to_float_and_ints) {
  uint64_t q[1] = {18446744073709551615ull};
  CHECK(rlx_load_f64(q, RLX_DTYPE_U64, 0) == 18446744073709551616.0);
  CHECK(rlx_load_i64(q, RLX_DTYPE_U64, 0) == -1); /* the bits */
  CHECK(rlx_load_u64(q, RLX_DTYPE_U64, 0) == 18446744073709551615ull);
  float f[1];
  /* one rounding from u64: 2^63 + 2^39 + 1 is nearer 2^63 + 2^40 than 2^63 in float */
  rlx_store_u64(f, RLX_DTYPE_F32, 0, (1ull << 63) + (1ull << 39) + 1);
  CHECK(f[0] == 9223373136366403584.0f);
  int32_t i32[1];
  rlx_store_u64(i32, RLX_DTYPE_I32, 0, 18446744073709551615ull); /* torch: -1 */
  CHECK(i32[0] == -1);
  uint16_t h[1] = {65535};
  CHECK(rlx_load_i64(h, RLX_DTYPE_U16, 0) == 65535 && rlx_load_f64(h, RLX_DTYPE_U16, 0) == 65535.0);
  uint32_t w[1];
  rlx_store_i64(w, RLX_DTYPE_U32, 0, -1); /* wraps */
  CHECK(w[0] == 4294967295u);
}

/* y = op(a, b) on u64 [4] through the reference kernel of one binary node. */
static void run_binary(rlx_binary_kind k, const uint64_t *a, const uint64_t *b, void *y, rlx_dtype yt) {
  rlx_graph g;
  rlx_graph_init(&g);
  rlx_shape s = {1, {4}};
  int32_t ia = rlx_graph_add_input(&g, "a", RLX_DTYPE_U64, &s), ib = rlx_graph_add_input(&g, "b", RLX_DTYPE_U64, &s);
  rlx_params p = {.binary = {.kind = k}};
  int32_t ins[2] = {ia, ib};
  int32_t node = rlx_graph_add_node(&g, RLX_OP_BINARY, &p, ins, 2, 1, "op", NULL);
  CHECK(node >= 0);
  if (node < 0) return rlx_graph_free(&g);
  CHECK(g.values[g.nodes[node].out[0]].dtype == yt);
  rlx_tensor_view in[2] = {{(void *)a, RLX_DTYPE_U64, 1, {4}}, {(void *)b, RLX_DTYPE_U64, 1, {4}}};
  rlx_tensor_view out[1] = {{y, yt, 1, {4}}};
  CHECK(rlx_op_table[RLX_OP_BINARY].vt->ref(&g.nodes[node], in, out, NULL) == RLX_OK);
  rlx_graph_free(&g);
}

TEST(u64_kernels) {
  const uint64_t big = 18446744073709551615ull, top = 1ull << 63;
  const uint64_t a[4] = {big, top, 5, 0}, b[4] = {1, 7, top, 3};
  uint64_t y[4];
  uint8_t m[4];
  run_binary(RLX_BINARY_MAXIMUM, a, b, y, RLX_DTYPE_U64);
  CHECK(y[0] == big && y[1] == top && y[2] == top && y[3] == 3);
  run_binary(RLX_BINARY_MINIMUM, a, b, y, RLX_DTYPE_U64);
  CHECK(y[0] == 1 && y[1] == 7 && y[2] == 5 && y[3] == 0);
  run_binary(RLX_BINARY_DIV_TRUNC, a, b, y, RLX_DTYPE_U64);
  CHECK(y[0] == big && y[1] == top / 7 && y[2] == 0 && y[3] == 0);
  run_binary(RLX_BINARY_REMAINDER, a, b, y, RLX_DTYPE_U64);
  CHECK(y[0] == 0 && y[1] == top % 7 && y[2] == 5 && y[3] == 0);
  const uint64_t sh[4] = {1, 63, 0, 64};
  run_binary(RLX_BINARY_SHR, a, sh, y, RLX_DTYPE_U64); /* logical, not arithmetic */
  CHECK(y[0] == big >> 1 && y[1] == 1 && y[2] == 5 && y[3] == 0);
  run_binary(RLX_BINARY_LT, a, b, m, RLX_DTYPE_BOOL);
  CHECK(!m[0] && !m[1] && m[2] && m[3]);
  run_binary(RLX_BINARY_ADD, a, b, y, RLX_DTYPE_U64); /* wraps */
  CHECK(y[0] == 0 && y[1] == top + 7 && y[2] == top + 5 && y[3] == 3);
}

TEST_MAIN(tokens, from_float, to_float_and_ints, u64_kernels)
