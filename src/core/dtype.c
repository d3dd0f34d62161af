/*
 * dtype.c — the dtype traits table (from RLX_DTYPE_LIST), token parsing,
 * torch's type promotion, f16/bf16 conversion and generic element access.
 *
 * Element access converts through double or int64. It is the slow, obviously
 * correct path that reference kernels use for mixed or exotic dtypes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

const rlx_dtype_traits rlx_dtype_traits_table[RLX_DTYPE_COUNT] = {
    [RLX_DTYPE_F32] = {"f32", 4, RLX_DKIND_FLOAT},  [RLX_DTYPE_F16] = {"f16", 2, RLX_DKIND_FLOAT},
    [RLX_DTYPE_BF16] = {"bf16", 2, RLX_DKIND_FLOAT}, [RLX_DTYPE_F64] = {"f64", 8, RLX_DKIND_FLOAT},
    [RLX_DTYPE_I64] = {"i64", 8, RLX_DKIND_INT},    [RLX_DTYPE_I32] = {"i32", 4, RLX_DKIND_INT},
    [RLX_DTYPE_I16] = {"i16", 2, RLX_DKIND_INT},    [RLX_DTYPE_I8] = {"i8", 1, RLX_DKIND_INT},
    [RLX_DTYPE_U8] = {"u8", 1, RLX_DKIND_UINT},     [RLX_DTYPE_BOOL] = {"bool", 1, RLX_DKIND_BOOL},
    [RLX_DTYPE_U16] = {"u16", 2, RLX_DKIND_UINT},   [RLX_DTYPE_U32] = {"u32", 4, RLX_DKIND_UINT},
    [RLX_DTYPE_U64] = {"u64", 8, RLX_DKIND_UINT},
};

/* The public list and the traits table must agree on names and sizes. */
#define RLX_X_(e, tok, sz) _Static_assert(sz > 0, "dtype size");
RLX_DTYPE_LIST(RLX_X_)
#undef RLX_X_

const char *rlx_dtype_name(rlx_dtype t) {
  return rlx_dtype_valid(t) ? rlx_dtype_traits_table[t].name : "?";
}

size_t rlx_dtype_size(rlx_dtype t) { return rlx_dtype_valid(t) ? rlx_dtype_traits_table[t].size : 0; }

int rlx_dtype_from_token(const char *tok) {
#define RLX_X_(e, name, sz) \
  if (strcmp(tok, name) == 0) return RLX_DTYPE_##e;
  RLX_DTYPE_LIST(RLX_X_)
#undef RLX_X_
  return -1;
}

static const char *const st_names[RLX_DTYPE_COUNT] = {
    [RLX_DTYPE_F32] = "F32", [RLX_DTYPE_F16] = "F16", [RLX_DTYPE_BF16] = "BF16",
    [RLX_DTYPE_F64] = "F64", [RLX_DTYPE_I64] = "I64", [RLX_DTYPE_I32] = "I32",
    [RLX_DTYPE_I16] = "I16", [RLX_DTYPE_I8] = "I8",   [RLX_DTYPE_U8] = "U8",
    [RLX_DTYPE_BOOL] = "BOOL", [RLX_DTYPE_U16] = "U16", [RLX_DTYPE_U32] = "U32", [RLX_DTYPE_U64] = "U64",
};

int rlx_dtype_from_safetensors(const char *tok) {
  for (int i = 0; i < RLX_DTYPE_COUNT; i++)
    if (strcmp(tok, st_names[i]) == 0) return i;
  return -1;
}

const char *rlx_dtype_safetensors_name(rlx_dtype t) { return rlx_dtype_valid(t) ? st_names[t] : "?"; }

/* Rank within the category, used by promotion. */
static int float_rank(rlx_dtype t) {
  switch (t) {
    case RLX_DTYPE_F16: return 1;
    case RLX_DTYPE_BF16: return 1;
    case RLX_DTYPE_F32: return 2;
    default: return 3; /* f64 */
  }
}

rlx_dtype rlx_dtype_promote(rlx_dtype a, rlx_dtype b) {
  if (a == b) return a;
  rlx_dkind ka = rlx_dtype_traits_table[a].kind, kb = rlx_dtype_traits_table[b].kind;
  if (ka == RLX_DKIND_BOOL) return b;
  if (kb == RLX_DKIND_BOOL) return a;
  bool fa = ka == RLX_DKIND_FLOAT, fb = kb == RLX_DKIND_FLOAT;
  if (fa && !fb) return a;
  if (fb && !fa) return b;
  if (fa && fb) {
    int ra = float_rank(a), rb = float_rank(b);
    if (ra == rb) return RLX_DTYPE_F32; /* f16 with bf16 */
    return ra > rb ? a : b;
  }
  /* both integers. torch refuses to promote u16/u32/u64 with any other
   * integer (promote_types raises), so no exported program asks; rlx keeps
   * the wider of the two, the unsigned one at equal width. */
  if (a >= RLX_DTYPE_U16 || b >= RLX_DTYPE_U16) {
    size_t sa = rlx_dtype_traits_table[a].size, sb = rlx_dtype_traits_table[b].size;
    if (sa != sb) return sa > sb ? a : b;
    return a >= RLX_DTYPE_U16 ? a : b;
  }
  if ((a == RLX_DTYPE_U8 && b == RLX_DTYPE_I8) || (a == RLX_DTYPE_I8 && b == RLX_DTYPE_U8))
    return RLX_DTYPE_I16;
  if (a == RLX_DTYPE_U8) return b;
  if (b == RLX_DTYPE_U8) return a;
  return rlx_dtype_traits_table[a].size >= rlx_dtype_traits_table[b].size ? a : b;
}

/* ---- half precision ---- */

static inline uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

float rlx_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    float v = ldexpf((float)man, -24);
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t rlx_f32_to_f16(float f) {
  uint32_t u = f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | (a > 0x7f800000u ? 0x7e00 : 0x7c00);
  if (a >= 0x477ff000u) return sign | 0x7c00; /* rounds to >= 65520: inf */
  if (a < 0x38800000u) {                      /* below the smallest normal: subnormal or 0 */
    float v = bits_f32(a) * 16777216.0f;      /* scale by 2^24: the subnormal's integer */
    uint32_t m = (uint32_t)lrintf(v);         /* round to nearest even */
    return sign | (uint16_t)m;
  }
  uint32_t mant_odd = (a >> 13) & 1;
  a += 0xfffu + mant_odd; /* round to nearest even at bit 13 */
  return sign | (uint16_t)(((a >> 13) - (112u << 10)) & 0x7fff);
}

float rlx_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t rlx_f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

/* ---- element access ---- */

double rlx_load_f64(const void *p, rlx_dtype t, int64_t i) {
  switch (t) {
    case RLX_DTYPE_F32: return ((const float *)p)[i];
    case RLX_DTYPE_F16: return rlx_f16_to_f32(((const uint16_t *)p)[i]);
    case RLX_DTYPE_BF16: return rlx_bf16_to_f32(((const uint16_t *)p)[i]);
    case RLX_DTYPE_F64: return ((const double *)p)[i];
    case RLX_DTYPE_I64: return (double)((const int64_t *)p)[i];
    case RLX_DTYPE_I32: return ((const int32_t *)p)[i];
    case RLX_DTYPE_I16: return ((const int16_t *)p)[i];
    case RLX_DTYPE_I8: return ((const int8_t *)p)[i];
    case RLX_DTYPE_U8: return ((const uint8_t *)p)[i];
    case RLX_DTYPE_BOOL: return ((const uint8_t *)p)[i] != 0;
    case RLX_DTYPE_U16: return ((const uint16_t *)p)[i];
    case RLX_DTYPE_U32: return ((const uint32_t *)p)[i];
    case RLX_DTYPE_U64: return (double)((const uint64_t *)p)[i];
    default: RLX_ASSERT(0); return 0;
  }
}

/* Float to integer as torch's casts do on x86 for in-range values: truncate
 * toward zero. Out-of-range and NaN values (undefined in C and in torch) map
 * to INT64_MIN, as x86's cvttsd2si does. */
int64_t rlx_f64_to_i64(double v) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return INT64_MIN;
  return (int64_t)v;
}

/* A double as the unsigned types' casts give it with GCC on x86 (a plain C
 * cast, undefined outside the target's range, which torch does not guard):
 * u16 through a 32-bit cvttsd2si (INT32_MIN when out of range), u32 through
 * the 64-bit one, u64 by cvttsd2si of v - 2^63 for v >= 2^63 with the top
 * bit put back. So negative integers wrap (-1 -> the maximum), and each
 * out-of-range value maps as torch's scalar loop maps it. */
static uint64_t f64_to_unsigned(double v, rlx_dtype t) {
  switch (t) {
    case RLX_DTYPE_U16: {
      int32_t r = (v >= -2147483648.0 && v < 2147483648.0) ? (int32_t)v : INT32_MIN;
      return (uint16_t)(uint32_t)r;
    }
    case RLX_DTYPE_U32: return (uint32_t)(uint64_t)rlx_f64_to_i64(v);
    default:
      if (v >= 9223372036854775808.0) return (uint64_t)rlx_f64_to_i64(v - 9223372036854775808.0) ^ (1ull << 63);
      return (uint64_t)rlx_f64_to_i64(v);
  }
}

uint64_t rlx_load_u64(const void *p, rlx_dtype t, int64_t i) {
  if (t == RLX_DTYPE_U64) return ((const uint64_t *)p)[i];
  return (uint64_t)rlx_load_i64(p, t, i);
}

int64_t rlx_load_i64(const void *p, rlx_dtype t, int64_t i) {
  switch (t) {
    case RLX_DTYPE_U16: return ((const uint16_t *)p)[i];
    case RLX_DTYPE_U32: return ((const uint32_t *)p)[i];
    case RLX_DTYPE_U64: return (int64_t)((const uint64_t *)p)[i]; /* the bits: wraps above 2^63 */
    case RLX_DTYPE_I64: return ((const int64_t *)p)[i];
    case RLX_DTYPE_I32: return ((const int32_t *)p)[i];
    case RLX_DTYPE_I16: return ((const int16_t *)p)[i];
    case RLX_DTYPE_I8: return ((const int8_t *)p)[i];
    case RLX_DTYPE_U8: return ((const uint8_t *)p)[i];
    case RLX_DTYPE_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: return rlx_f64_to_i64(rlx_load_f64(p, t, i));
  }
}

void rlx_store_f64(void *p, rlx_dtype t, int64_t i, double v) {
  switch (t) {
    case RLX_DTYPE_F32: ((float *)p)[i] = (float)v; break;
    case RLX_DTYPE_F16: ((uint16_t *)p)[i] = rlx_f32_to_f16((float)v); break;
    case RLX_DTYPE_BF16: ((uint16_t *)p)[i] = rlx_f32_to_bf16((float)v); break;
    case RLX_DTYPE_F64: ((double *)p)[i] = v; break;
    case RLX_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case RLX_DTYPE_U16: case RLX_DTYPE_U32: case RLX_DTYPE_U64:
      rlx_store_i64(p, t, i, (int64_t)f64_to_unsigned(v, t));
      break;
    default: rlx_store_i64(p, t, i, rlx_f64_to_i64(v)); break;
  }
}

void rlx_store_u64(void *p, rlx_dtype t, int64_t i, uint64_t v) {
  switch (t) {
    case RLX_DTYPE_F32: ((float *)p)[i] = (float)v; break; /* one rounding */
    case RLX_DTYPE_F16: ((uint16_t *)p)[i] = rlx_f32_to_f16((float)v); break;
    case RLX_DTYPE_BF16: ((uint16_t *)p)[i] = rlx_f32_to_bf16((float)v); break;
    case RLX_DTYPE_F64: ((double *)p)[i] = (double)v; break;
    default: rlx_store_i64(p, t, i, (int64_t)v); break;
  }
}

void rlx_store_i64(void *p, rlx_dtype t, int64_t i, int64_t v) {
  switch (t) {
    case RLX_DTYPE_I64: ((int64_t *)p)[i] = v; break;
    case RLX_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)(uint32_t)v; break;
    case RLX_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)(uint16_t)v; break;
    case RLX_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)(uint8_t)v; break;
    case RLX_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case RLX_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case RLX_DTYPE_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case RLX_DTYPE_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case RLX_DTYPE_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case RLX_DTYPE_F32: ((float *)p)[i] = (float)v; break; /* one rounding, as torch */
    case RLX_DTYPE_F16: ((uint16_t *)p)[i] = rlx_f32_to_f16((float)v); break;
    case RLX_DTYPE_BF16: ((uint16_t *)p)[i] = rlx_f32_to_bf16((float)v); break;
    default: ((double *)p)[i] = (double)v; break;
  }
}

/* ---- shapes ---- */

int64_t rlx_shape_numel(const rlx_shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

bool rlx_shape_valid(const rlx_shape *s, int64_t *numel) {
  if (s->rank < 0 || s->rank > RLX_MAX_RANK) return false;
  /* the product of the non-zero dims bounds every stride and partial
   * product the kernels compute, also for an empty tensor */
  int64_t nz = 1;
  bool empty = false;
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0) return false;
    if (!s->dims[i]) empty = true;
    else if (__builtin_mul_overflow(nz, s->dims[i], &nz) || nz > RLX_MAX_NUMEL) return false;
  }
  if (numel) *numel = empty ? 0 : nz;
  return true;
}

int64_t rlx_view_numel(const rlx_tensor_view *v) {
  if (!v || v->rank < 0 || v->rank > RLX_MAX_RANK) return -1;
  int64_t n = 1;
  for (int i = 0; i < v->rank; i++)
    if (v->dims[i] < 0 || __builtin_mul_overflow(n, v->dims[i], &n)) return -1;
  return n;
}

bool rlx_shape_same_nonunit(const rlx_shape *a, const rlx_shape *b) {
  int i = 0, j = 0;
  for (;;) {
    while (i < a->rank && a->dims[i] == 1) i++;
    while (j < b->rank && b->dims[j] == 1) j++;
    if (i == a->rank || j == b->rank) return i == a->rank && j == b->rank;
    if (a->dims[i++] != b->dims[j++]) return false;
  }
}

bool rlx_shape_eq(const rlx_shape *a, const rlx_shape *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

char *rlx_shape_str(const rlx_shape *s, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  n += (size_t)snprintf(buf + n, cap - n, "[");
  for (int i = 0; i < s->rank && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, i ? ", %lld" : "%lld", (long long)s->dims[i]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
  return buf;
}

void rlx_shape_strides(const rlx_shape *s, int64_t strides[RLX_MAX_RANK]) {
  int64_t st = 1;
  for (int i = s->rank - 1; i >= 0; i--) {
    strides[i] = st;
    st *= s->dims[i];
  }
}
