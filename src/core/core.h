/*
 * core.h — internal foundations shared by every part of librlx: error
 * reporting, the allocator hook, a bump pool, a string map, dtype traits and
 * element conversion, shapes.
 *
 * Errors: rlx_errorf() records a message in a thread-local buffer and returns
 * its status, so failing code reads `return rlx_errorf(RLX_ERR_FORMAT, ...)`.
 * Callers that add context use rlx_error_prefix(). Nothing here prints.
 */
#ifndef RLX_CORE_H
#define RLX_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rlx.h"

#if defined(__GNUC__)
#define RLX_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define RLX_UNUSED __attribute__((unused))
#else
#define RLX_PRINTF(a, b)
#define RLX_UNUSED
#endif

/* Internal invariants: checked in debug and test builds (RLX_CHECKED). */
#if defined(RLX_CHECKED) || !defined(NDEBUG)
#include <assert.h>
#define RLX_ASSERT(c) assert(c)
#else
#define RLX_ASSERT(c) ((void)0)
#endif

#define RLX_MIN(a, b) ((a) < (b) ? (a) : (b))
#define RLX_MAX(a, b) ((a) > (b) ? (a) : (b))
#define RLX_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errors ---- */

/* Sets the thread's last error to the formatted message; returns `s`. */
rlx_status rlx_errorf(rlx_status s, const char *fmt, ...) RLX_PRINTF(2, 3);
/* Prepends formatted context to the thread's last error message. */
void rlx_error_prefix(const char *fmt, ...) RLX_PRINTF(1, 2);
void rlx_error_clear(void);
/* Status of the last rlx_errorf on this thread (RLX_ERR_INTERNAL if none):
 * for callers that got -1 from a function that returns an id. */
rlx_status rlx_last_status(void);

/* ---- allocation: every heap allocation in librlx goes through these ---- */

void *rlx_malloc(size_t n);
void *rlx_calloc(size_t count, size_t n);
void *rlx_realloc(void *p, size_t n);
void rlx_free(void *p);
/* 64-byte aligned; free with rlx_aligned_free. */
void *rlx_aligned_alloc(size_t n);
void rlx_aligned_free(void *p);
/* A session arena of n bytes, 64-byte aligned; with `reserve`, a large one
 * is reserved address space, backed as touched (a dynamic model's arena for
 * its largest binding). Free with rlx_arena_free(p, n, reserve). */
void *rlx_arena_alloc(size_t n, bool reserve);
void rlx_arena_free(void *p, size_t n, bool reserve);
/* Test hook: the allocation after `n` more successful ones fails (and every
 * one after it, until reset with n < 0). */
void rlx_alloc_fail_after(long n);

/* Grows *arr (element size `elem`) so it holds at least `need` elements. */
rlx_status rlx_grow(void **arr, int32_t *cap, int32_t need, size_t elem);

/* Overflow-checked size arithmetic: false on overflow. */
static inline bool rlx_mul_ok(uint64_t a, uint64_t b, uint64_t *r) {
  return !__builtin_mul_overflow(a, b, r);
}
static inline bool rlx_add_ok(uint64_t a, uint64_t b, uint64_t *r) {
  return !__builtin_add_overflow(a, b, r);
}

/* ---- files (file.c): export directories are untrusted input ---- */

/* Opens `path` for reading without blocking (a FIFO with no writer does not
 * hang) and requires a regular file (FIFOs, devices, directories, and
 * symlinks to them are refused with RLX_ERR_IO naming what it is). */
rlx_status rlx_file_open(const char *path, int *fd_out, uint64_t *size_out);
/* Reads a whole regular file of at most max_bytes (else RLX_ERR_FORMAT) into
 * a NUL-terminated rlx_malloc'd buffer. */
rlx_status rlx_read_file(const char *path, size_t max_bytes, char **buf_out, size_t *len_out);

/* ---- bump pool: many small allocations freed at once ---- */

typedef struct rlx_pool_chunk rlx_pool_chunk;
typedef struct rlx_pool {
  rlx_pool_chunk *head;
} rlx_pool;

void *rlx_pool_alloc(rlx_pool *p, size_t n); /* zeroed, 16-byte aligned; NULL on OOM */
char *rlx_pool_strdup(rlx_pool *p, const char *s);
char *rlx_pool_sprintf(rlx_pool *p, const char *fmt, ...) RLX_PRINTF(2, 3);
void rlx_pool_free(rlx_pool *p);

/* ---- string -> int32 map (keys are not copied) ---- */

typedef struct rlx_strmap {
  const char **keys;
  int32_t *vals;
  uint32_t cap, count;
} rlx_strmap;

rlx_status rlx_strmap_put(rlx_strmap *m, const char *key, int32_t val);
/* Returns the value, or -1 when absent. */
int32_t rlx_strmap_get(const rlx_strmap *m, const char *key);
void rlx_strmap_free(rlx_strmap *m);

/* ---- dtypes ---- */

typedef enum rlx_dkind { RLX_DKIND_BOOL, RLX_DKIND_INT, RLX_DKIND_UINT, RLX_DKIND_FLOAT } rlx_dkind;

typedef struct rlx_dtype_traits {
  const char *name;
  size_t size;
  rlx_dkind kind;
} rlx_dtype_traits;

extern const rlx_dtype_traits rlx_dtype_traits_table[RLX_DTYPE_COUNT];

static inline bool rlx_dtype_valid(rlx_dtype t) { return (unsigned)t < RLX_DTYPE_COUNT; }
static inline bool rlx_dtype_is_float(rlx_dtype t) {
  return rlx_dtype_traits_table[t].kind == RLX_DKIND_FLOAT;
}
static inline bool rlx_dtype_is_int(rlx_dtype t) {
  return rlx_dtype_traits_table[t].kind == RLX_DKIND_INT ||
         rlx_dtype_traits_table[t].kind == RLX_DKIND_UINT;
}
/* Parses a torch-ir token ("f32") or a safetensors token ("F32"); -1 if unknown. */
int rlx_dtype_from_token(const char *tok);
int rlx_dtype_from_safetensors(const char *tok);
const char *rlx_dtype_safetensors_name(rlx_dtype t);

/* torch's type promotion between two tensor dtypes (same category rules as
 * torch.promote_types). */
rlx_dtype rlx_dtype_promote(rlx_dtype a, rlx_dtype b);

float rlx_f16_to_f32(uint16_t h);
uint16_t rlx_f32_to_f16(float f);
float rlx_bf16_to_f32(uint16_t h);
uint16_t rlx_f32_to_bf16(float f);

/* A double as int64 the way torch's casts behave on x86: truncated toward
 * zero; NaN and values outside int64 give INT64_MIN (cvttsd2si). Defined for
 * every input (a plain C cast of those is undefined behaviour). */
int64_t rlx_f64_to_i64(double v);

/* Element i of a buffer of dtype t, as double / int64, and stores of either.
 * Stores convert as torch's casts do (float->int truncates toward zero,
 * anything->bool is "!= 0"; float->u16/u32/u64 as GCC's x86 code does,
 * negative integers wrapping). A u64 above 2^63 loads as a negative int64
 * (its bits; add, sub, mul and bitwise ops on the bits are right) and as
 * its exact unsigned value through rlx_load_f64. */
double rlx_load_f64(const void *p, rlx_dtype t, int64_t i);
int64_t rlx_load_i64(const void *p, rlx_dtype t, int64_t i);
void rlx_store_f64(void *p, rlx_dtype t, int64_t i, double v);
void rlx_store_i64(void *p, rlx_dtype t, int64_t i, int64_t v);
/* u64 elements whose value needs all 64 bits: rlx_load_u64 reads any
 * integer or bool dtype as its two's-complement bits (u64 as itself);
 * rlx_store_u64 stores v as an unsigned value (to a float with one
 * rounding), to an integer dtype as its low bits. */
uint64_t rlx_load_u64(const void *p, rlx_dtype t, int64_t i);
void rlx_store_u64(void *p, rlx_dtype t, int64_t i, uint64_t v);
/* Whether t is u16, u32 or u64: the unsigned dtypes torch supports for only
 * a few ops (u8 is torch's full "Byte"). */
static inline bool rlx_dtype_is_wide_unsigned(rlx_dtype t) {
  return t == RLX_DTYPE_U16 || t == RLX_DTYPE_U32 || t == RLX_DTYPE_U64;
}

/* ---- shapes ---- */

typedef struct rlx_shape {
  int32_t rank;
  int64_t dims[RLX_MAX_RANK];
} rlx_shape;

/* Limits on what rlx accepts (docs/design.md, "Limits"): elements in one
 * tensor, and the magnitude of a stride, padding, dilation, kernel size or
 * scale-like op parameter. Sizes within these limits can be combined in
 * int64 without overflow (2^48 * 2^14 < 2^63). */
#define RLX_MAX_NUMEL ((int64_t)1 << 48)
#define RLX_MAX_PARAM ((int64_t)1 << 31)

/* Whether s is a valid shape (rank 0..RLX_MAX_RANK, dims >= 0, at most
 * RLX_MAX_NUMEL elements, computed without overflow); *numel gets the
 * element count when true (numel may be NULL). */
bool rlx_shape_valid(const rlx_shape *s, int64_t *numel);

int64_t rlx_shape_numel(const rlx_shape *s);
bool rlx_shape_eq(const rlx_shape *a, const rlx_shape *b);
/* Whether a and b have the same axes of size other than 1, in order (one is
 * the other reshaped by adding or dropping unit axes: the same memory). */
bool rlx_shape_same_nonunit(const rlx_shape *a, const rlx_shape *b);
/* "[2, 3, 4]" into buf (always NUL-terminated); returns buf. */
char *rlx_shape_str(const rlx_shape *s, char *buf, size_t cap);
/* Normalizes a possibly negative axis against rank; -1 if out of range. */
static inline int rlx_axis(int64_t axis, int rank) {
  if (axis < 0) axis += rank;
  return (axis < 0 || axis >= rank) ? -1 : (int)axis;
}
/* Product of dims[from..to). */
static inline int64_t rlx_dims_prod(const int64_t *d, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++) p *= d[i];
  return p;
}
/* Row-major strides (in elements) of shape s. */
void rlx_shape_strides(const rlx_shape *s, int64_t strides[RLX_MAX_RANK]);

#endif /* RLX_CORE_H */
