/*
 * test_core.c — core utilities: dtype tokens and sizes, f16/bf16 conversion
 * (against values computed with torch), torch's type promotion, the string
 * map, the pool, element load/store conversion rules, error messages.
 */
#include "core/core.h"
#include "test.h"

TEST(dtype_tokens) {
  CHECK(rlx_dtype_from_token("f32") == RLX_DTYPE_F32);
  CHECK(rlx_dtype_from_token("bool") == RLX_DTYPE_BOOL);
  CHECK(rlx_dtype_from_token("c64") == -1);
  CHECK(rlx_dtype_from_safetensors("BF16") == RLX_DTYPE_BF16);
  CHECK(rlx_dtype_from_safetensors("F8_E4M3") == -1);
  CHECK(rlx_dtype_size(RLX_DTYPE_I64) == 8 && rlx_dtype_size(RLX_DTYPE_BOOL) == 1);
  CHECK(!strcmp(rlx_dtype_name(RLX_DTYPE_BF16), "bf16"));
  CHECK(!strcmp(rlx_dtype_name((rlx_dtype)99), "?") && rlx_dtype_size((rlx_dtype)99) == 0);
}

/* torch.tensor(x).half().view(torch.int16) and .bfloat16() for these values */
TEST(half_conversion) {
  CHECK(rlx_f32_to_f16(1.0f) == 0x3c00);
  CHECK(rlx_f32_to_f16(-2.5f) == 0xc100);
  CHECK(rlx_f32_to_f16(65504.0f) == 0x7bff);
  CHECK(rlx_f32_to_f16(65520.0f) == 0x7c00);  /* rounds up to inf */
  CHECK(rlx_f32_to_f16(1e-8f) == 0x0000);     /* below half the smallest subnormal */
  CHECK(rlx_f32_to_f16(6e-8f) == 0x0001);     /* smallest subnormal 5.96e-8 */
  CHECK(rlx_f32_to_f16(1.00048828125f) == 0x3c00); /* tie: rounds to even */
  CHECK(rlx_f32_to_f16(1.00146484375f) == 0x3c02); /* tie: rounds to even (up) */
  CHECK((rlx_f32_to_f16(NAN) & 0x7c00) == 0x7c00 && (rlx_f32_to_f16(NAN) & 0x3ff));
  CHECK(rlx_f16_to_f32(0x3555) == 0.333251953125f);
  CHECK(rlx_f16_to_f32(0x0001) == 5.9604644775390625e-08f);
  CHECK(isinf(rlx_f16_to_f32(0xfc00)) && rlx_f16_to_f32(0xfc00) < 0);
  CHECK(rlx_f32_to_bf16(1.0f) == 0x3f80);
  CHECK(rlx_f32_to_bf16(3.140625f) == 0x4049);
  CHECK(rlx_f32_to_bf16(1.00390625f) == 0x3f80); /* tie to even */
  CHECK(rlx_f32_to_bf16(1.01171875f) == 0x3f82); /* tie to even (up) */
  CHECK(rlx_bf16_to_f32(0xc0a0) == -5.0f);
  for (uint32_t h = 0; h < 0x7c00; h++) /* every finite f16 round-trips */
    if (rlx_f32_to_f16(rlx_f16_to_f32((uint16_t)h)) != h) {
      CHECK(!"f16 round trip");
      break;
    }
}

/* torch.promote_types */
TEST(promotion) {
  CHECK(rlx_dtype_promote(RLX_DTYPE_I64, RLX_DTYPE_F16) == RLX_DTYPE_F16);
  CHECK(rlx_dtype_promote(RLX_DTYPE_F16, RLX_DTYPE_BF16) == RLX_DTYPE_F32);
  CHECK(rlx_dtype_promote(RLX_DTYPE_U8, RLX_DTYPE_I8) == RLX_DTYPE_I16);
  CHECK(rlx_dtype_promote(RLX_DTYPE_U8, RLX_DTYPE_I32) == RLX_DTYPE_I32);
  CHECK(rlx_dtype_promote(RLX_DTYPE_BOOL, RLX_DTYPE_U8) == RLX_DTYPE_U8);
  CHECK(rlx_dtype_promote(RLX_DTYPE_I32, RLX_DTYPE_I64) == RLX_DTYPE_I64);
  CHECK(rlx_dtype_promote(RLX_DTYPE_F32, RLX_DTYPE_F64) == RLX_DTYPE_F64);
  CHECK(rlx_dtype_promote(RLX_DTYPE_BOOL, RLX_DTYPE_BOOL) == RLX_DTYPE_BOOL);
}

TEST(load_store) {
  double d[1];
  int64_t i[1];
  uint8_t b[1];
  int32_t i32[1];
  rlx_store_f64(i, RLX_DTYPE_I64, 0, -2.7); /* float -> int truncates toward zero */
  CHECK(i[0] == -2);
  rlx_store_f64(b, RLX_DTYPE_BOOL, 0, 0.25); /* anything -> bool is != 0 */
  CHECK(b[0] == 1);
  rlx_store_i64(i32, RLX_DTYPE_I32, 0, 4294967297LL); /* wraps like torch */
  CHECK(i32[0] == 1);
  rlx_store_i64(d, RLX_DTYPE_F64, 0, 9007199254740993LL);
  CHECK(d[0] == 9007199254740992.0);
  float f[1];
  rlx_store_i64(f, RLX_DTYPE_F32, 0, 16777217); /* one rounding: to even */
  CHECK(f[0] == 16777216.0f);
  rlx_store_f64(i, RLX_DTYPE_I64, 0, NAN); /* no UB: NaN maps to INT64_MIN as on x86 */
  CHECK(i[0] == INT64_MIN);
  uint16_t h[1] = {0x3c00};
  CHECK(rlx_load_i64(h, RLX_DTYPE_F16, 0) == 1);
}

TEST(strmap_and_pool) {
  rlx_strmap m = {0};
  rlx_pool p = {0};
  char key[32];
  for (int i = 0; i < 1000; i++) {
    snprintf(key, sizeof key, "k%d", i);
    CHECK_OK(rlx_strmap_put(&m, rlx_pool_strdup(&p, key), i));
  }
  CHECK(m.count == 1000);
  CHECK(rlx_strmap_get(&m, "k0") == 0 && rlx_strmap_get(&m, "k999") == 999);
  CHECK(rlx_strmap_get(&m, "k1000") == -1);
  CHECK_OK(rlx_strmap_put(&m, "k5", 55));
  CHECK(rlx_strmap_get(&m, "k5") == 55 && m.count == 1000);
  char *big = rlx_pool_alloc(&p, 100000); /* larger than a chunk */
  CHECK(big != NULL && ((uintptr_t)big & 15) == 0 && big[99999] == 0);
  CHECK(!strcmp(rlx_pool_sprintf(&p, "%s-%d", "x", 7), "x-7"));
  rlx_strmap_free(&m);
  rlx_pool_free(&p);
}

TEST(errors) {
  CHECK(rlx_errorf(RLX_ERR_SHAPE, "bad %d", 3) == RLX_ERR_SHAPE);
  rlx_error_prefix("node '%s': ", "conv_1");
  CHECK(!strcmp(rlx_last_error(), "node 'conv_1': bad 3"));
  CHECK(rlx_last_status() == RLX_ERR_SHAPE);
  CHECK(!strcmp(rlx_status_string(RLX_ERR_FORMAT), "format error"));
  CHECK(!strcmp(rlx_status_string((rlx_status)1000), "unknown status"));
}

TEST(alloc_failure_injection) {
  rlx_alloc_fail_after(1);
  void *a = rlx_malloc(8), *b = rlx_malloc(8);
  CHECK(a != NULL && b == NULL);
  rlx_alloc_fail_after(-1);
  void *c = rlx_malloc(8);
  CHECK(c != NULL);
  rlx_free(a);
  rlx_free(c);
}

TEST_MAIN(dtype_tokens, half_conversion, promotion, load_store, strmap_and_pool, errors,
          alloc_failure_injection)
