/*
 * tok_model.c — the vocabulary hash and the three models: BPE (merges by
 * rank over a doubly linked list of symbols with a binary heap of candidate
 * pairs, as `tokenizers`' Word::merge_all: O(n log n) in the word length),
 * WordPiece (greedy longest match first) and WordLevel (whole-word lookup).
 */
#include <string.h>

#include "text/tokenizer.h"

/* ---- vocabulary ---- */

static uint32_t fnv(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  h ^= h >> 16; /* FNV's low bits cluster under linear probing: mix them (murmur3's finalizer) */
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

int32_t tk_vocab_get(const tk_vocab *v, const char *s, size_t len) {
  if (!v->cap) return -1;
  uint32_t h = fnv(s, len);
  for (uint32_t j = h & (v->cap - 1);; j = (j + 1) & (v->cap - 1)) {
    int32_t id = v->slots[j];
    if (id < 0) return -1;
    if (v->hash[id] == h && (size_t)v->len[id] == len && !memcmp(v->tok[id], s, len)) return id;
  }
}

static rlx_status vocab_rehash(tk_vocab *v, uint32_t ncap) {
  int32_t *slots = rlx_malloc((size_t)ncap * sizeof *slots);
  if (!slots) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory growing a vocabulary");
  memset(slots, 0xFF, (size_t)ncap * sizeof *slots);
  for (uint32_t i = 0; i < v->cap; i++) {
    int32_t id = v->slots[i];
    if (id < 0) continue;
    uint32_t j = v->hash[id] & (ncap - 1);
    while (slots[j] >= 0) j = (j + 1) & (ncap - 1);
    slots[j] = id;
  }
  rlx_free(v->slots);
  v->slots = slots;
  v->cap = ncap;
  return RLX_OK;
}

static rlx_status vocab_grow_ids(tk_vocab *v, int32_t need) {
  if (need <= v->idcap) return RLX_OK;
  int32_t c1 = v->idcap, c2 = v->idcap, c3 = v->idcap;
  rlx_status st = rlx_grow((void **)&v->tok, &c1, need, sizeof *v->tok);
  if (!st) st = rlx_grow((void **)&v->len, &c2, c1, sizeof *v->len);
  if (!st) st = rlx_grow((void **)&v->hash, &c3, c1, sizeof *v->hash);
  if (st) return st;
  v->idcap = c1;
  return RLX_OK;
}

rlx_status tk_vocab_reserve(tk_vocab *v, uint32_t count, int32_t ids) {
  if (ids > TK_MAX_VOCAB) ids = TK_MAX_VOCAB;
  rlx_status st = vocab_grow_ids(v, ids);
  if (st) return st;
  uint32_t cap = v->cap ? v->cap : 1024;
  while (cap < (uint32_t)TK_MAX_VOCAB * 2 && cap / 2 < count + 1) cap *= 2;
  return cap > v->cap ? vocab_rehash(v, cap) : RLX_OK;
}

/* Maps s -> id (a string already present keeps its first id; the loader
 * refuses repeats in a vocab) and id -> s (an id already holding a string
 * is given the new one). */
rlx_status tk_vocab_put(tk_vocab *v, rlx_pool *pool, const char *s, size_t len, int32_t id) {
  if (id < 0 || id >= TK_MAX_VOCAB) return rlx_errorf(RLX_ERR_FORMAT, "token id %d out of range", id);
  rlx_status st = vocab_grow_ids(v, id + 1);
  if (st) return st;
  if (id >= v->n) v->n = id + 1;
  if ((v->count + 1) * 2 > v->cap && (st = vocab_rehash(v, v->cap ? v->cap * 2 : 1024))) return st;
  char *copy = rlx_pool_alloc(pool, len + 1);
  if (!copy) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading a vocabulary");
  memcpy(copy, s, len);
  uint32_t h = fnv(s, len);
  if (v->tok[id]) { /* replacing: drop the id's slot, then insert it afresh */
    for (uint32_t j = v->hash[id] & (v->cap - 1); v->slots[j] >= 0; j = (j + 1) & (v->cap - 1))
      if (v->slots[j] == id) {
        v->tok[id] = copy, v->len[id] = (int32_t)len, v->hash[id] = h;
        return vocab_rehash(v, v->cap); /* linear probing: rebuild rather than leave a hole */
      }
  }
  v->tok[id] = copy;
  v->len[id] = (int32_t)len;
  v->hash[id] = h;
  if (tk_vocab_get(v, s, len) >= 0) return RLX_OK; /* another id has the string: keep the first */
  uint32_t j = h & (v->cap - 1);
  while (v->slots[j] >= 0) j = (j + 1) & (v->cap - 1);
  v->slots[j] = id;
  v->count++;
  return RLX_OK;
}

void tk_vocab_free(tk_vocab *v) {
  rlx_free(v->tok);
  rlx_free(v->len);
  rlx_free(v->hash);
  rlx_free(v->slots);
  memset(v, 0, sizeof *v);
}

/* ---- merges ---- */

static uint64_t mkey(int32_t a, int32_t b) { return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b; }

static uint32_t mhash(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return (uint32_t)k;
}

static const tk_merge *merge_get(const tk_model *m, int32_t a, int32_t b) {
  if (!m->merges_cap) return NULL;
  uint64_t k = mkey(a, b);
  for (uint32_t j = mhash(k) & (m->merges_cap - 1);; j = (j + 1) & (m->merges_cap - 1)) {
    const tk_merge *e = &m->merges[j];
    if (e->id < 0) return NULL;
    if (e->key == k) return e;
  }
}

rlx_status tk_merges_put(tk_model *m, int32_t a, int32_t b, int32_t rank, int32_t id) {
  if (!m->merges_cap || (m->merges_count + 1) * 2 > m->merges_cap) {
    uint32_t ncap = m->merges_cap ? m->merges_cap * 2 : 1024;
    tk_merge *t = rlx_malloc((size_t)ncap * sizeof *t);
    if (!t) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading merges");
    for (uint32_t i = 0; i < ncap; i++) t[i] = (tk_merge){0, 0, -1};
    m->merges_count = 0;
    for (uint32_t i = 0; i < m->merges_cap; i++) {
      if (m->merges[i].id < 0) continue;
      uint32_t j = mhash(m->merges[i].key) & (ncap - 1);
      while (t[j].id >= 0) j = (j + 1) & (ncap - 1);
      t[j] = m->merges[i];
      m->merges_count++;
    }
    rlx_free(m->merges);
    m->merges = t;
    m->merges_cap = ncap;
  }
  uint64_t k = mkey(a, b);
  uint32_t j = mhash(k) & (m->merges_cap - 1);
  while (m->merges[j].id >= 0) {
    if (m->merges[j].key == k) return RLX_OK; /* a repeated pair keeps its first (lowest) rank */
    j = (j + 1) & (m->merges_cap - 1);
  }
  m->merges[j] = (tk_merge){k, rank, id};
  m->merges_count++;
  return RLX_OK;
}

void tk_model_free(tk_model *m) {
  tk_vocab_free(&m->vocab);
  rlx_free(m->merges);
  m->merges = NULL;
  m->merges_cap = 0;
}

/* ---- id output ---- */

static rlx_status push_id(int32_t **ids, int32_t *n, int32_t *cap, int32_t id) {
  if (*n == *cap) {
    rlx_status st = rlx_grow((void **)ids, cap, *n + 1, sizeof **ids);
    if (st) return st;
  }
  (*ids)[(*n)++] = id;
  return RLX_OK;
}

/* ---- BPE ---- */

typedef struct bpe_sym { int32_t id, prev, next, len; } bpe_sym;
typedef struct bpe_cand { int32_t rank, pos, id; } bpe_cand;

static bool cand_less(bpe_cand a, bpe_cand b) { return a.rank != b.rank ? a.rank < b.rank : a.pos < b.pos; }

typedef struct bpe_heap { bpe_cand *v; int32_t n, cap; } bpe_heap;

static rlx_status heap_push(bpe_heap *h, bpe_cand c) {
  rlx_status st = rlx_grow((void **)&h->v, &h->cap, h->n + 1, sizeof *h->v);
  if (st) return st;
  int32_t i = h->n++;
  while (i > 0 && cand_less(c, h->v[(i - 1) / 2])) {
    h->v[i] = h->v[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->v[i] = c;
  return RLX_OK;
}

static bpe_cand heap_pop(bpe_heap *h) {
  bpe_cand top = h->v[0], last = h->v[--h->n];
  int32_t i = 0;
  for (;;) {
    int32_t l = 2 * i + 1, r = l + 1, m = i;
    bpe_cand best = last;
    if (l < h->n && cand_less(h->v[l], best)) m = l, best = h->v[l];
    if (r < h->n && cand_less(h->v[r], best)) m = r;
    if (m == i) break;
    h->v[i] = h->v[m];
    i = m;
  }
  if (h->n) h->v[i] = last;
  return top;
}

typedef struct bpe_word { bpe_sym *v; int32_t n, cap; } bpe_word;

static rlx_status word_add(bpe_word *w, int32_t id, int32_t len) {
  rlx_status st = rlx_grow((void **)&w->v, &w->cap, w->n + 1, sizeof *w->v);
  if (st) return st;
  w->v[w->n] = (bpe_sym){id, w->n - 1, w->n + 1, len};
  w->n++;
  return RLX_OK;
}

static rlx_status bpe_merge_all(const tk_model *m, bpe_word *w) {
  bpe_heap h = {0};
  rlx_status st = RLX_OK;
  if (w->n) w->v[w->n - 1].next = -1;
  for (int32_t i = 0; i + 1 < w->n && !st; i++) {
    const tk_merge *e = merge_get(m, w->v[i].id, w->v[i + 1].id);
    if (e) st = heap_push(&h, (bpe_cand){e->rank, i, e->id});
  }
  while (h.n && !st) {
    bpe_cand top = heap_pop(&h);
    bpe_sym *s = &w->v[top.pos];
    if (s->len == 0 || s->next < 0) continue;
    bpe_sym right = w->v[s->next];
    const tk_merge *e = merge_get(m, s->id, right.id);
    if (!e || e->id != top.id) continue; /* a stale candidate */
    s->id = top.id;
    s->len += right.len;
    w->v[s->next].len = 0;
    s->next = right.next;
    if (right.next >= 0) w->v[right.next].prev = top.pos;
    if (s->prev >= 0) {
      e = merge_get(m, w->v[s->prev].id, s->id);
      if (e) st = heap_push(&h, (bpe_cand){e->rank, s->prev, e->id});
    }
    if (!st && s->next >= 0) {
      e = merge_get(m, s->id, w->v[s->next].id);
      if (e) st = heap_push(&h, (bpe_cand){e->rank, top.pos, e->id});
    }
  }
  rlx_free(h.v);
  return st;
}

static rlx_status bpe_tokenize(const tk_model *m, const char *s, int32_t n, int32_t **ids, int32_t *n_ids,
                               int32_t *cap) {
  if (m->ignore_merges) {
    int32_t id = tk_vocab_get(&m->vocab, s, (size_t)n);
    if (id >= 0) return push_id(ids, n_ids, cap, id);
  }
  size_t plen = m->prefix ? strlen(m->prefix) : 0, slen = m->suffix ? strlen(m->suffix) : 0;
  char buf[4 + 2 * TK_MAX_TOKEN];
  bpe_word w = {0};
  rlx_status st = RLX_OK;
  int32_t unk_id = -1, unk_len = 0; /* a pending unk (fuse_unk extends it) */
  for (int32_t i = 0; i < n && !st;) {
    uint32_t cp;
    int32_t cl = rlx_utf8_decode((const unsigned char *)s + i, (size_t)(n - i), &cp);
    bool first = i == 0, last = i + cl == n;
    size_t k = 0;
    if (!first && plen) memcpy(buf, m->prefix, plen), k = plen;
    memcpy(buf + k, s + i, (size_t)cl), k += (size_t)cl;
    if (last && slen) memcpy(buf + k, m->suffix, slen), k += slen;
    i += cl;
    int32_t id = tk_vocab_get(&m->vocab, buf, k);
    if (id >= 0) {
      if (unk_id >= 0) st = word_add(&w, unk_id, unk_len), unk_id = -1;
      if (!st) st = word_add(&w, id, cl);
      continue;
    }
    if (m->byte_fallback) {
      bool all = true;
      for (size_t b = 0; b < k && all; b++) all = m->byte_ids[(unsigned char)buf[b]] >= 0;
      if (all) { /* as tokenizers: the bytes go in before a pending unk */
        for (size_t b = 0; b < k && !st; b++) st = word_add(&w, m->byte_ids[(unsigned char)buf[b]], 1);
        continue;
      }
    }
    if (m->unk < 0 && m->unk_token) { /* tokenizers loads such a file, and fails here */
      st = rlx_errorf(RLX_ERR_FORMAT, "BPE: unk_token '%.200s' is not in the vocab", m->unk_token);
      break;
    }
    if (m->unk < 0) continue; /* no unk_token: the character is dropped, as tokenizers */
    if (unk_id >= 0 && m->fuse_unk) {
      unk_len += cl;
    } else {
      if (unk_id >= 0) st = word_add(&w, unk_id, unk_len);
      unk_id = m->unk, unk_len = cl;
    }
  }
  if (!st && unk_id >= 0) st = word_add(&w, unk_id, unk_len);
  if (!st) st = bpe_merge_all(m, &w);
  for (int32_t i = 0; i < w.n && !st; i++)
    if (w.v[i].len) st = push_id(ids, n_ids, cap, w.v[i].id);
  rlx_free(w.v);
  return st;
}

/* ---- WordPiece ---- */

static rlx_status wordpiece_tokenize(const tk_model *m, const char *s, int32_t n, int32_t **ids,
                                     int32_t *n_ids, int32_t *cap) {
  int32_t chars = 0;
  for (int32_t i = 0; i < n; i++) chars += ((unsigned char)s[i] & 0xC0) != 0x80;
  if (chars > m->max_chars) {
    if (m->unk < 0) return rlx_errorf(RLX_ERR_FORMAT, "WordPiece: unk_token '%s' is not in the vocab", m->unk_token);
    return push_id(ids, n_ids, cap, m->unk);
  }
  size_t plen = m->prefix ? strlen(m->prefix) : 0;
  int32_t mark = *n_ids;
  char *buf = rlx_malloc(plen + (size_t)n + 1);
  if (!buf) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory in WordPiece");
  rlx_status st = RLX_OK;
  bool bad = false;
  for (int32_t start = 0; start < n && !st;) {
    int32_t end = n, found = -1;
    while (start < end) {
      size_t k = 0;
      if (start > 0 && plen) memcpy(buf, m->prefix, plen), k = plen;
      memcpy(buf + k, s + start, (size_t)(end - start));
      k += (size_t)(end - start);
      found = tk_vocab_get(&m->vocab, buf, k);
      if (found >= 0) break;
      end--; /* back one character */
      while (end > start && ((unsigned char)s[end] & 0xC0) == 0x80) end--;
    }
    if (found < 0) {
      bad = true;
      break;
    }
    st = push_id(ids, n_ids, cap, found);
    start = end;
  }
  rlx_free(buf);
  if (st) return st;
  if (bad) {
    *n_ids = mark;
    if (m->unk < 0) return rlx_errorf(RLX_ERR_FORMAT, "WordPiece: unk_token '%s' is not in the vocab", m->unk_token);
    return push_id(ids, n_ids, cap, m->unk);
  }
  return RLX_OK;
}

rlx_status tk_model_tokenize(const tk_model *m, const char *s, int32_t n, int32_t **ids, int32_t *n_ids,
                             int32_t *cap) {
  if (n == 0) return RLX_OK;
  switch (m->kind) {
    case MODEL_BPE: return bpe_tokenize(m, s, n, ids, n_ids, cap);
    case MODEL_WORDPIECE: return wordpiece_tokenize(m, s, n, ids, n_ids, cap);
    case MODEL_WORDLEVEL: {
      int32_t id = tk_vocab_get(&m->vocab, s, (size_t)n);
      if (id < 0) id = m->unk;
      if (id < 0) return rlx_errorf(RLX_ERR_FORMAT, "WordLevel: a word is not in the vocab and there is no unk_token");
      return push_id(ids, n_ids, cap, id);
    }
  }
  return rlx_errorf(RLX_ERR_INTERNAL, "unknown model kind");
}
