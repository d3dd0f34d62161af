/*
 * alloc.c — the allocator hook every librlx allocation goes through (so tests
 * can inject out-of-memory at each site), a bump pool, a string map.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core.h"

/* Countdown to an injected failure; negative means "never". */
static _Atomic long fail_after = -1;

void rlx_alloc_fail_after(long n) { atomic_store(&fail_after, n); }

static bool injected_failure(void) {
  long n = atomic_load(&fail_after);
  if (n < 0) return false;
  if (n == 0) return true;
  atomic_fetch_sub(&fail_after, 1);
  return false;
}

void *rlx_malloc(size_t n) {
  if (injected_failure()) return NULL;
  return malloc(n ? n : 1);
}

void *rlx_calloc(size_t count, size_t n) {
  if (injected_failure()) return NULL;
  return calloc(count ? count : 1, n ? n : 1);
}

void *rlx_realloc(void *p, size_t n) {
  if (injected_failure()) return NULL;
  return realloc(p, n ? n : 1);
}

void rlx_free(void *p) { free(p); }

/* Blocks this large (packed weights: a 1B model's are 4 GiB, streamed once
 * per generated token) are aligned to 2 MiB and marked for transparent huge
 * pages, so streaming them walks 512 times fewer page-table entries. */
#define HUGE_MIN ((size_t)4 << 20)
#define HUGE_ALIGN ((size_t)2 << 20)

void *rlx_aligned_alloc(size_t n) {
  if (injected_failure()) return NULL;
  size_t rounded = (n + 63) & ~(size_t)63;
  if (rounded < HUGE_MIN) return aligned_alloc(64, rounded ? rounded : 64);
  rounded = (rounded + HUGE_ALIGN - 1) & ~(HUGE_ALIGN - 1);
  void *p = aligned_alloc(HUGE_ALIGN, rounded);
#ifdef MADV_HUGEPAGE
  if (p) (void)madvise(p, rounded, MADV_HUGEPAGE); /* advice: failure (no THP) changes nothing */
#endif
  return p;
}

void rlx_aligned_free(void *p) { free(p); }

/* A reserved arena of 64 MiB and more is address space (MAP_NORESERVE):
 * pages are backed as the session touches them, so a dynamic model's arena,
 * sized for its largest binding, costs what the bindings it runs use. A
 * static model's arena is all used: it is allocated outright, so one too
 * large for the machine fails here rather than when a run touches it. The
 * size is kept in a 64-byte header so rlx_arena_free can unmap it. */
#define ARENA_MMAP_MIN ((size_t)64 << 20)

void *rlx_arena_alloc(size_t n, bool reserve) {
  if (!reserve || n < ARENA_MMAP_MIN) return rlx_aligned_alloc(n);
  if (injected_failure() || n > SIZE_MAX - 4096) return NULL;
  size_t len = ((n + 64) + 4095) & ~(size_t)4095;
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return NULL;
  *(size_t *)p = len;
  return (char *)p + 64;
}

void rlx_arena_free(void *p, size_t n, bool reserve) {
  if (!p) return;
  if (!reserve || n < ARENA_MMAP_MIN) {
    rlx_aligned_free(p);
    return;
  }
  char *base = (char *)p - 64;
  munmap(base, *(size_t *)base);
}

rlx_status rlx_grow(void **arr, int32_t *cap, int32_t need, size_t elem) {
  if (need <= *cap) return RLX_OK;
  int64_t nc = *cap ? (int64_t)*cap * 2 : 16;
  while (nc < need) nc *= 2;
  if (nc > INT32_MAX) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "table too large");
  void *p = rlx_realloc(*arr, (size_t)nc * elem);
  if (!p) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory growing a table to %lld entries",
                            (long long)nc);
  memset((char *)p + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
  *arr = p;
  *cap = (int32_t)nc;
  return RLX_OK;
}

/* ---- pool ---- */

struct rlx_pool_chunk {
  rlx_pool_chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

void *rlx_pool_alloc(rlx_pool *p, size_t n) {
  n = (n + 15) & ~(size_t)15;
  rlx_pool_chunk *c = p->head;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > 32768 ? n : 32768;
    c = rlx_malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->cap = cap;
    c->used = 0;
    c->next = p->head;
    p->head = c;
  }
  void *r = c->data + c->used;
  c->used += n;
  memset(r, 0, n);
  return r;
}

char *rlx_pool_strdup(rlx_pool *p, const char *s) {
  size_t n = strlen(s) + 1;
  char *r = rlx_pool_alloc(p, n);
  if (r) memcpy(r, s, n);
  return r;
}

char *rlx_pool_sprintf(rlx_pool *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *r = rlx_pool_alloc(p, (size_t)n + 1);
  if (!r) return NULL;
  va_start(ap, fmt);
  vsnprintf(r, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return r;
}

void rlx_pool_free(rlx_pool *p) {
  rlx_pool_chunk *c = p->head;
  while (c) {
    rlx_pool_chunk *n = c->next;
    rlx_free(c);
    c = n;
  }
  p->head = NULL;
}

/* ---- string map: open addressing, FNV-1a, power-of-two capacity ---- */

static uint32_t str_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static rlx_status strmap_rehash(rlx_strmap *m, uint32_t ncap) {
  const char **keys = rlx_calloc(ncap, sizeof *keys);
  int32_t *vals = rlx_calloc(ncap, sizeof *vals);
  if (!keys || !vals) {
    rlx_free(keys);
    rlx_free(vals);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory growing a name table");
  }
  for (uint32_t i = 0; i < m->cap; i++) {
    if (!m->keys[i]) continue;
    uint32_t j = str_hash(m->keys[i]) & (ncap - 1);
    while (keys[j]) j = (j + 1) & (ncap - 1);
    keys[j] = m->keys[i];
    vals[j] = m->vals[i];
  }
  rlx_free(m->keys);
  rlx_free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = ncap;
  return RLX_OK;
}

rlx_status rlx_strmap_put(rlx_strmap *m, const char *key, int32_t val) {
  if ((m->count + 1) * 2 > m->cap) {
    rlx_status st = strmap_rehash(m, m->cap ? m->cap * 2 : 64);
    if (st) return st;
  }
  uint32_t j = str_hash(key) & (m->cap - 1);
  while (m->keys[j]) {
    if (strcmp(m->keys[j], key) == 0) {
      m->vals[j] = val;
      return RLX_OK;
    }
    j = (j + 1) & (m->cap - 1);
  }
  m->keys[j] = key;
  m->vals[j] = val;
  m->count++;
  return RLX_OK;
}

int32_t rlx_strmap_get(const rlx_strmap *m, const char *key) {
  if (!m->cap) return -1;
  uint32_t j = str_hash(key) & (m->cap - 1);
  while (m->keys[j]) {
    if (strcmp(m->keys[j], key) == 0) return m->vals[j];
    j = (j + 1) & (m->cap - 1);
  }
  return -1;
}

void rlx_strmap_free(rlx_strmap *m) {
  rlx_free(m->keys);
  rlx_free(m->vals);
  memset(m, 0, sizeof *m);
}
