/*
 * unicode.c — UTF-8, property lookups and normalization over the generated
 * tables (unicode_data.c). Normalization follows UAX #15: full
 * decomposition, canonical reordering by combining class (a stable sort of
 * each run of non-starters), then for the composed forms the canonical
 * composition algorithm with blocking; Hangul syllables by arithmetic.
 */
#include <string.h>

#include "text/unicode.h"

/* ---- UTF-8 ---- */

int rlx_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
  unsigned c = s[0];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  int len;
  uint32_t v;
  unsigned lo = 0x80, hi = 0xBF; /* the range of the second byte */
  if (c >= 0xC2 && c <= 0xDF) len = 2, v = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, v = c & 0x0F;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F; /* no surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, v = c & 0x07;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    *cp = RLX_UC_REPLACEMENT;
    return 1;
  }
  for (int i = 1; i < len; i++) {
    unsigned b = (size_t)i < n ? s[i] : 0;
    if ((size_t)i >= n || b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) {
      *cp = RLX_UC_REPLACEMENT;
      return i; /* the maximal subpart: the bytes that were a valid prefix */
    }
    v = (v << 6) | (b & 0x3F);
  }
  *cp = v;
  return len;
}

bool rlx_utf8_incomplete(const unsigned char *s, size_t n) {
  if (n == 0 || n > 3) return false;
  uint32_t cp;
  int used = rlx_utf8_decode(s, n, &cp);
  if ((size_t)used != n || cp != RLX_UC_REPLACEMENT) return false;
  /* the whole of s was a valid prefix: is a longer sequence expected? */
  unsigned c = s[0];
  size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 1;
  return n < want;
}

int rlx_utf8_encode(uint32_t cp, char *out) {
  unsigned char *o = (unsigned char *)out;
  if (cp < 0x80) {
    o[0] = (unsigned char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (unsigned char)(0xC0 | (cp >> 6));
    o[1] = (unsigned char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (unsigned char)(0xE0 | (cp >> 12));
    o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (unsigned char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (unsigned char)(0xF0 | (cp >> 18));
  o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
  o[3] = (unsigned char)(0x80 | (cp & 0x3F));
  return 4;
}

/* ---- lookups ---- */

static const rlx_uc_range *range_find(const rlx_uc_range *t, uint32_t n, uint32_t cp) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (cp < t[mid].lo) hi = mid;
    else if (cp > t[mid].hi) lo = mid + 1;
    else return &t[mid];
  }
  return NULL;
}

static const rlx_uc_map *map_find(const rlx_uc_map *t, uint32_t n, uint32_t cp) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (cp < t[mid].cp) hi = mid;
    else if (cp > t[mid].cp) lo = mid + 1;
    else return &t[mid];
  }
  return NULL;
}

rlx_uc_cat rlx_uc_category(uint32_t cp) {
  if (cp < 0x80) { /* ASCII without the search */
    if (cp < 0x20 || cp == 0x7F) return RLX_UC_CC;
    if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return cp >= 'a' ? RLX_UC_LL : RLX_UC_LU;
    if (cp >= '0' && cp <= '9') return RLX_UC_ND;
  }
  const rlx_uc_range *r = range_find(rlx_uc_cats, rlx_uc_cats_count, cp);
  return r ? (rlx_uc_cat)r->v : RLX_UC_CN;
}

bool rlx_uc_is_space(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

bool rlx_uc_is_word(uint32_t cp) {
  rlx_uc_cat c = rlx_uc_category(cp);
  if ((c >= RLX_UC_LU && c <= RLX_UC_ND) || c == RLX_UC_NL || c == RLX_UC_PC) return true;
  /* Join_Control, and the symbols that are Other_Alphabetic (circled and squared letters) */
  return cp == 0x200C || cp == 0x200D || (cp >= 0x24B6 && cp <= 0x24E9) || (cp >= 0x1F130 && cp <= 0x1F149) ||
         (cp >= 0x1F150 && cp <= 0x1F169) || (cp >= 0x1F170 && cp <= 0x1F189);
}

int rlx_uc_ccc(uint32_t cp) {
  if (cp < 0x300) return 0;
  const rlx_uc_range *r = range_find(rlx_uc_cccs, rlx_uc_cccs_count, cp);
  return r ? (int)r->v : 0;
}

uint32_t rlx_uc_fold(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  uint32_t lo = 0, hi = rlx_uc_folds_count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (cp < rlx_uc_folds[mid].cp) hi = mid;
    else if (cp > rlx_uc_folds[mid].cp) lo = mid + 1;
    else return rlx_uc_folds[mid].fold;
  }
  return cp;
}

/* ---- buffers ---- */

rlx_status rlx_uc_push(rlx_uc_buf *b, uint32_t cp) {
  if (b->n == b->cap) {
    if (b->cap >= RLX_UC_MAX_LEN) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "text longer than 2^28 characters");
    rlx_status st = rlx_grow((void **)&b->v, &b->cap, b->n + 1, sizeof *b->v);
    if (st) return st;
  }
  b->v[b->n++] = cp;
  return RLX_OK;
}

void rlx_uc_buf_free(rlx_uc_buf *b) {
  rlx_free(b->v);
  memset(b, 0, sizeof *b);
}

rlx_status rlx_uc_from_utf8(rlx_uc_buf *b, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    i += (size_t)rlx_utf8_decode(p + i, n - i, &cp);
    rlx_status st = rlx_uc_push(b, cp);
    if (st) return st;
  }
  return RLX_OK;
}

/* ---- normalization ---- */

enum { SBASE = 0xAC00, LBASE = 0x1100, VBASE = 0x1161, TBASE = 0x11A7, LCOUNT = 19, VCOUNT = 21,
       TCOUNT = 28, NCOUNT = VCOUNT * TCOUNT, SCOUNT = LCOUNT * NCOUNT };

static rlx_status decompose_one(rlx_uc_buf *out, uint32_t cp, bool compat) {
  if (cp >= SBASE && cp < SBASE + SCOUNT) {
    uint32_t s = cp - SBASE, t = s % TCOUNT;
    rlx_status st = rlx_uc_push(out, LBASE + s / NCOUNT);
    if (!st) st = rlx_uc_push(out, VBASE + (s % NCOUNT) / TCOUNT);
    if (!st && t) st = rlx_uc_push(out, TBASE + t);
    return st;
  }
  const rlx_uc_map *m = NULL;
  if (cp >= 0xA0) {
    if (compat) m = map_find(rlx_uc_compat, rlx_uc_compat_count, cp);
    if (!m) m = map_find(rlx_uc_canon, rlx_uc_canon_count, cp);
  }
  if (!m) return rlx_uc_push(out, cp);
  for (uint32_t i = 0; i < m->len; i++) {
    rlx_status st = rlx_uc_push(out, rlx_uc_pool[m->off + i]);
    if (st) return st;
  }
  return RLX_OK;
}

/* Canonical ordering: a stable insertion sort of each run of non-starters. */
static void reorder(rlx_uc_buf *b) {
  for (int32_t i = 1; i < b->n; i++) {
    int c = rlx_uc_ccc(b->v[i]);
    if (!c) continue;
    uint32_t cp = b->v[i];
    int32_t j = i;
    while (j > 0) {
      int p = rlx_uc_ccc(b->v[j - 1]);
      if (p <= c) break;
      b->v[j] = b->v[j - 1];
      j--;
    }
    b->v[j] = cp;
  }
}

static uint32_t compose_pair(uint32_t a, uint32_t b) {
  if (a >= LBASE && a < LBASE + LCOUNT && b >= VBASE && b < VBASE + VCOUNT)
    return SBASE + ((a - LBASE) * VCOUNT + (b - VBASE)) * TCOUNT;
  if (a >= SBASE && a < SBASE + SCOUNT && (a - SBASE) % TCOUNT == 0 && b > TBASE && b < TBASE + TCOUNT)
    return a + (b - TBASE);
  uint32_t lo = 0, hi = rlx_uc_comps_count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const rlx_uc_pair *p = &rlx_uc_comps[mid];
    if (a < p->a || (a == p->a && b < p->b)) hi = mid;
    else if (a > p->a || b > p->b) lo = mid + 1;
    else return p->c;
  }
  return 0;
}

static void compose(rlx_uc_buf *b) {
  int32_t starter = -1, w = 0; /* the last starter kept, the write position */
  int last_ccc = 0;            /* class of the last character kept after it */
  for (int32_t r = 0; r < b->n; r++) {
    uint32_t cp = b->v[r];
    int c = rlx_uc_ccc(cp);
    bool adjacent = starter >= 0 && w == starter + 1;
    bool blocked = starter < 0 || (!adjacent && (last_ccc >= c || c == 0));
    if (!blocked) {
      uint32_t comp = compose_pair(b->v[starter], cp);
      if (comp) {
        b->v[starter] = comp;
        continue;
      }
    }
    if (c == 0) starter = w;
    last_ccc = c;
    b->v[w++] = cp;
  }
  b->n = w;
}

rlx_status rlx_uc_normalize(rlx_uc_buf *b, rlx_uc_form form) {
  bool compat = form == RLX_UC_NFKD || form == RLX_UC_NFKC;
  bool ascii = true;
  for (int32_t i = 0; i < b->n && ascii; i++) ascii = b->v[i] < 0x80;
  if (ascii) return RLX_OK; /* ASCII is invariant under every form */
  rlx_uc_buf out = {0};
  for (int32_t i = 0; i < b->n; i++) {
    rlx_status st = decompose_one(&out, b->v[i], compat);
    if (st) {
      rlx_uc_buf_free(&out);
      return st;
    }
  }
  reorder(&out);
  if (form == RLX_UC_NFC || form == RLX_UC_NFKC) compose(&out);
  rlx_uc_buf_free(b);
  *b = out;
  return RLX_OK;
}

rlx_status rlx_uc_lowercase(rlx_uc_buf *b) {
  rlx_uc_buf out = {0};
  rlx_status st = RLX_OK;
  for (int32_t i = 0; i < b->n && !st; i++) {
    uint32_t cp = b->v[i];
    if (cp < 0x80) {
      st = rlx_uc_push(&out, (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp);
      continue;
    }
    const rlx_uc_map *m = map_find(rlx_uc_lower, rlx_uc_lower_count, cp);
    if (!m) {
      st = rlx_uc_push(&out, cp);
      continue;
    }
    for (uint32_t k = 0; k < m->len && !st; k++) st = rlx_uc_push(&out, rlx_uc_pool[m->off + k]);
  }
  if (st) {
    rlx_uc_buf_free(&out);
    return st;
  }
  rlx_uc_buf_free(b);
  *b = out;
  return RLX_OK;
}
