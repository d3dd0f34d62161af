/*
 * tok_decode.c — decoders, rlx_tokenizer_decode and the streaming decoder.
 *
 * The decoder chain runs over a list of byte strings (tk_list), each
 * decoder as `tokenizers`' decode_chain. In full decode the result is made
 * valid UTF-8 the way `tokenizers` does: ByteLevel output through
 * from_utf8_lossy (one U+FFFD per maximal invalid subpart), a ByteFallback
 * run of <0xNN> tokens that is not valid UTF-8 as one U+FFFD per byte.
 *
 * The stream decodes "raw": bytes are kept as they are through the chain,
 * so a multi-byte character split across tokens can be held back until it
 * completes. Each push decodes a window — the last token already emitted
 * (context for decoders that treat the first token differently: Metaspace,
 * Strip, WordPiece) and the tokens not yet emitted — and emits the new
 * bytes up to any trailing incomplete UTF-8 sequence; invalid bytes become
 * U+FFFD at once (per maximal subpart, also for ByteFallback runs, where a
 * full decode gives one per byte). The concatenation of what a stream emits
 * (with its final flush) equals the full decode wherever the text is valid
 * UTF-8.
 */
#include <string.h>

#include "text/tokenizer.h"

/* ---- lists of byte strings ---- */

typedef struct tk_list {
  char *buf;
  int32_t *off, *len;
  int32_t n, cap, used, bcap;
} tk_list;

static rlx_status list_bytes(tk_list *l, const char *s, size_t n) {
  if (n > (size_t)INT32_MAX - (size_t)l->used) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "decoded text too long");
  rlx_status st = rlx_grow((void **)&l->buf, &l->bcap, l->used + (int32_t)n + 1, 1);
  if (st) return st;
  if (n) memcpy(l->buf + l->used, s, n);
  l->used += (int32_t)n;
  l->len[l->n - 1] += (int32_t)n;
  return RLX_OK;
}

/* Starts a new (empty) string. */
static rlx_status list_new(tk_list *l) {
  int32_t c1 = l->cap, c2 = l->cap;
  rlx_status st = rlx_grow((void **)&l->off, &c1, l->n + 1, sizeof *l->off);
  if (!st) st = rlx_grow((void **)&l->len, &c2, l->n + 1, sizeof *l->len);
  if (st) return st;
  l->cap = RLX_MIN(c1, c2);
  l->off[l->n] = l->used;
  l->len[l->n] = 0;
  l->n++;
  return RLX_OK;
}

static rlx_status list_add(tk_list *l, const char *s, size_t n) {
  rlx_status st = list_new(l);
  return st ? st : list_bytes(l, s, n);
}

static void list_free(tk_list *l) {
  rlx_free(l->buf);
  rlx_free(l->off);
  rlx_free(l->len);
  memset(l, 0, sizeof *l);
}

static const char *item(const tk_list *l, int32_t i) { return l->buf ? l->buf + l->off[i] : ""; }

/* Appends s[0..n) with invalid UTF-8 replaced (maximal subparts). */
static rlx_status bytes_lossy(tk_list *l, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    int used = rlx_utf8_decode(p + i, n - i, &cp);
    bool bad = cp == RLX_UC_REPLACEMENT && !(used == 3 && p[i] == 0xEF);
    rlx_status st = bad ? list_bytes(l, "\xEF\xBF\xBD", 3) : list_bytes(l, s + i, (size_t)used);
    if (st) return st;
    i += (size_t)used;
  }
  return RLX_OK;
}

static bool valid_utf8(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    int used = rlx_utf8_decode(p + i, n - i, &cp);
    if (cp == RLX_UC_REPLACEMENT && !(used == 3 && p[i] == 0xEF)) return false;
    i += (size_t)used;
  }
  return true;
}

/* ---- decoders ---- */

/* <0xNN> -> NN, or -1. */
static int byte_token(const char *s, int32_t n) {
  if (n != 6 || memcmp(s, "<0x", 3) || s[5] != '>') return -1;
  int hi = s[3] >= '0' && s[3] <= '9' ? s[3] - '0' : s[3] >= 'A' && s[3] <= 'F' ? s[3] - 'A' + 10
           : s[3] >= 'a' && s[3] <= 'f' ? s[3] - 'a' + 10 : -1;
  int lo = s[4] >= '0' && s[4] <= '9' ? s[4] - '0' : s[4] >= 'A' && s[4] <= 'F' ? s[4] - 'A' + 10
           : s[4] >= 'a' && s[4] <= 'f' ? s[4] - 'a' + 10 : -1;
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

static rlx_status dec_byte_level(const tk_list *in, tk_list *out, bool raw) {
  tk_list tmp = {0};
  rlx_status st = list_new(&tmp);
  for (int32_t i = 0; i < in->n && !st; i++) {
    const unsigned char *s = (const unsigned char *)item(in, i);
    int32_t n = in->len[i];
    bool all = true;
    for (int32_t k = 0; k < n && all;) {
      uint32_t cp;
      k += rlx_utf8_decode(s + k, (size_t)(n - k), &cp);
      all = tk_cp_to_byte(cp) >= 0;
    }
    if (!all) {
      st = list_bytes(&tmp, (const char *)s, (size_t)n);
      continue;
    }
    for (int32_t k = 0; k < n && !st;) {
      uint32_t cp;
      k += rlx_utf8_decode(s + k, (size_t)(n - k), &cp);
      char b = (char)tk_cp_to_byte(cp);
      st = list_bytes(&tmp, &b, 1);
    }
  }
  if (!st) st = list_new(out);
  if (!st) st = raw ? list_bytes(out, tmp.buf, (size_t)tmp.used) : bytes_lossy(out, tmp.buf, (size_t)tmp.used);
  list_free(&tmp);
  return st;
}

static rlx_status dec_byte_fallback(const tk_list *in, tk_list *out, bool raw) {
  rlx_status st = RLX_OK;
  tk_list run = {0}; /* the bytes of the current run of <0xNN> tokens */
  for (int32_t i = 0; i <= in->n && !st; i++) {
    int b = i < in->n ? byte_token(item(in, i), in->len[i]) : -1;
    if (b >= 0) {
      char c = (char)b;
      if (!run.n) st = list_new(&run);
      if (!st) st = list_bytes(&run, &c, 1);
      continue;
    }
    if (run.n) { /* the run ends */
      if (raw || valid_utf8(run.buf, (size_t)run.used)) st = list_add(out, run.buf, (size_t)run.used);
      else
        for (int32_t k = 0; k < run.used && !st; k++) st = list_add(out, "\xEF\xBF\xBD", 3);
      run.n = run.used = 0;
    }
    if (!st && i < in->n) st = list_add(out, item(in, i), (size_t)in->len[i]);
  }
  list_free(&run);
  return st;
}

/* Replaces each occurrence of `pat` in s[0..n) with rep (for cleanup). */
static rlx_status replace_lit(tk_list *out, const char *s, size_t n, const char *pat, const char *rep) {
  size_t pl = strlen(pat);
  tk_list tmp = {0};
  rlx_status st = list_new(&tmp);
  size_t i = 0;
  while (!st && i < n) {
    if (n - i >= pl && !memcmp(s + i, pat, pl)) {
      st = list_bytes(&tmp, rep, strlen(rep));
      i += pl;
    } else {
      st = list_bytes(&tmp, s + i, 1);
      i++;
    }
  }
  if (!st) st = list_add(out, tmp.buf ? tmp.buf : "", (size_t)tmp.used);
  list_free(&tmp);
  return st;
}

static rlx_status dec_wordpiece(const tk_dec *d, const tk_list *in, tk_list *out) {
  static const char *const cleanup[][2] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"}, {" 'm", "'m"},
      {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  size_t pl = strlen(d->prefix);
  rlx_status st = RLX_OK;
  tk_list a = {0}, b = {0};
  for (int32_t i = 0; i < in->n && !st; i++) {
    const char *s = item(in, i);
    size_t n = (size_t)in->len[i];
    a.n = a.used = 0;
    st = list_new(&a);
    if (i > 0 && n >= pl && !memcmp(s, d->prefix, pl)) s += pl, n -= pl;
    else if (i > 0 && !st) st = list_bytes(&a, " ", 1);
    if (!st) st = list_bytes(&a, s, n);
    for (size_t k = 0; d->cleanup && k < RLX_COUNTOF(cleanup) && !st; k++) {
      b.n = b.used = 0;
      st = replace_lit(&b, item(&a, 0), (size_t)a.len[0], cleanup[k][0], cleanup[k][1]);
      tk_list t = a;
      a = b, b = t;
    }
    if (!st) st = list_add(out, item(&a, 0), (size_t)a.len[0]);
  }
  list_free(&a);
  list_free(&b);
  return st;
}

static rlx_status dec_per_char(const tk_dec *d, const tk_list *in, tk_list *out) {
  rlx_status st = RLX_OK;
  for (int32_t i = 0; i < in->n && !st; i++) {
    const unsigned char *s = (const unsigned char *)item(in, i);
    int32_t n = in->len[i];
    st = list_new(out);
    if (d->kind == DEC_METASPACE) {
      for (int32_t k = 0; k < n && !st;) {
        uint32_t cp;
        int used = rlx_utf8_decode(s + k, (size_t)(n - k), &cp);
        if (cp == d->replacement) {
          if (!(i == 0 && d->strip_first)) st = list_bytes(out, " ", 1);
        } else {
          st = list_bytes(out, (const char *)s + k, (size_t)used);
        }
        k += used;
      }
    } else if (d->kind == DEC_STRIP) {
      uint32_t c;
      size_t cl = (size_t)rlx_utf8_decode((const unsigned char *)d->content, strlen(d->content), &c);
      int32_t a = 0, e = n;
      for (int32_t k = 0; k < d->start && (size_t)(e - a) >= cl && !memcmp(s + a, d->content, cl); k++) a += (int32_t)cl;
      for (int32_t k = 0; k < d->stop && (size_t)(e - a) >= cl && !memcmp(s + e - cl, d->content, cl); k++) e -= (int32_t)cl;
      st = list_bytes(out, (const char *)s + a, (size_t)(e - a));
    } else { /* DEC_BPE: the suffix becomes a space, but in the last token */
      out->n--;
      st = replace_lit(out, (const char *)s, (size_t)n, d->content, i == in->n - 1 ? "" : " ");
    }
  }
  return st;
}

static rlx_status dec_replace(const tk_dec *d, const tk_list *in, tk_list *out) {
  rlx_status st = RLX_OK;
  rlx_uc_buf b = {0};
  char u[4];
  for (int32_t i = 0; i < in->n && !st; i++) {
    b.n = 0;
    st = rlx_uc_from_utf8(&b, item(in, i), (size_t)in->len[i]);
    if (!st) st = list_new(out);
    int32_t pos = 0;
    while (!st && pos <= b.n) {
      bool found;
      int32_t ms = 0, me = 0;
      st = tk_pattern_find(&d->pat, b.v, b.n, pos, &found, &ms, &me);
      if (st) break;
      int32_t end = found ? ms : b.n;
      for (int32_t k = pos; k < end && !st; k++) st = list_bytes(out, u, (size_t)rlx_utf8_encode(b.v[k], u));
      if (!found || st) break;
      st = list_bytes(out, d->content, strlen(d->content));
      if (me == ms) {
        if (ms < b.n && !st) st = list_bytes(out, u, (size_t)rlx_utf8_encode(b.v[ms], u));
        me = ms + 1;
      }
      pos = me;
    }
  }
  rlx_uc_buf_free(&b);
  return st;
}

static rlx_status decode_chain(const tk_dec *d, tk_list *l, bool raw) {
  if (d->kind == DEC_SEQUENCE) {
    for (int32_t k = 0; k < d->n_kids; k++) {
      rlx_status st = decode_chain(&d->kids[k], l, raw);
      if (st) return st;
    }
    return RLX_OK;
  }
  tk_list out = {0};
  rlx_status st;
  switch (d->kind) {
    case DEC_BYTE_LEVEL: st = dec_byte_level(l, &out, raw); break;
    case DEC_BYTE_FALLBACK: st = dec_byte_fallback(l, &out, raw); break;
    case DEC_WORDPIECE: st = dec_wordpiece(d, l, &out); break;
    case DEC_REPLACE: st = dec_replace(d, l, &out); break;
    case DEC_FUSE:
      st = list_new(&out);
      if (!st && l->used) st = list_bytes(&out, l->buf, (size_t)l->used); /* the strings lie end to end */
      break;
    default: st = dec_per_char(d, l, &out); break;
  }
  if (st) {
    list_free(&out);
    return st;
  }
  list_free(l);
  *l = out;
  return RLX_OK;
}

/* Decodes ids into *out (one string); raw keeps invalid UTF-8 as bytes. */
static rlx_status decode_to(const rlx_tokenizer *t, const int32_t *ids, size_t n, bool skip, bool raw,
                            tk_list *out) {
  tk_list l = {0};
  rlx_status st = RLX_OK;
  for (size_t i = 0; i < n && !st; i++) {
    int32_t id = ids[i];
    if (id < 0 || id >= t->ids.n || !t->ids.tok[id]) {
      st = rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "id %d (at %zu) is not in the vocabulary", id, i);
      break;
    }
    if (skip && t->is_special[id]) continue;
    if (!t->dec && l.n && (st = list_add(&l, " ", 1))) break; /* no decoder: joined with spaces */
    st = list_add(&l, t->ids.tok[id], (size_t)t->ids.len[id]);
  }
  if (!st && t->dec) st = decode_chain(t->dec, &l, raw);
  if (!st) st = list_new(out);
  if (!st) st = raw ? list_bytes(out, l.buf ? l.buf : "", (size_t)l.used) : bytes_lossy(out, l.buf, (size_t)l.used);
  list_free(&l);
  return st;
}

rlx_status rlx_tokenizer_decode(const rlx_tokenizer *t, const int32_t *ids, size_t n, int skip_special, char *text,
                                size_t cap, size_t *len_out) {
  if (!t || (!ids && n) || !len_out || (!text && cap))
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_tokenizer_decode: NULL argument");
  tk_list out = {0};
  rlx_status st = decode_to(t, ids, n, skip_special != 0, false, &out);
  if (!st) {
    size_t len = (size_t)out.used;
    if (cap) {
      size_t k = RLX_MIN(len, cap - 1);
      if (k) memcpy(text, out.buf, k);
      text[k] = '\0';
    }
    *len_out = len;
  }
  list_free(&out);
  return st;
}

/* ---- the stream ---- */

struct rlx_token_stream {
  const rlx_tokenizer *t;
  bool skip;
  int32_t *ids; /* the window: ids[0] is the context once one token is emitted */
  int32_t n, cap;
  size_t ctx_len; /* raw bytes the context decodes to alone */
  size_t emitted; /* bytes past ctx_len already emitted */
  char *text;     /* what the last call returned, NUL-terminated */
  int32_t text_cap;
};

rlx_status rlx_token_stream_create(const rlx_tokenizer *t, int skip_special, rlx_token_stream **out) {
  if (!t || !out) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_token_stream_create: NULL argument");
  rlx_token_stream *s = rlx_calloc(1, sizeof *s);
  if (!s) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory creating a token stream");
  s->t = t;
  s->skip = skip_special != 0;
  *out = s;
  return RLX_OK;
}

void rlx_token_stream_destroy(rlx_token_stream *s) {
  if (!s) return;
  rlx_free(s->ids);
  rlx_free(s->text);
  rlx_free(s);
}

static rlx_status stream_set(rlx_token_stream *s, const tk_list *l) {
  rlx_status st = rlx_grow((void **)&s->text, &s->text_cap, l->used + 1, 1);
  if (st) return st;
  if (l->used) memcpy(s->text, l->buf, (size_t)l->used);
  s->text[l->used] = '\0';
  return RLX_OK;
}

rlx_status rlx_token_stream_push(rlx_token_stream *s, int32_t id, const char **text_out, size_t *len_out) {
  if (!s || !text_out || !len_out) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_token_stream_push: NULL argument");
  const rlx_tokenizer *t = s->t;
  if (id < 0 || id >= t->ids.n || !t->ids.tok[id])
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "id %d is not in the vocabulary", id);
  tk_list win = {0}, out = {0};
  rlx_status st = RLX_OK;
  if (!(s->skip && t->is_special[id])) {
    if ((st = rlx_grow((void **)&s->ids, &s->cap, s->n + 1, sizeof *s->ids))) return st;
    s->ids[s->n++] = id;
    st = decode_to(t, s->ids, (size_t)s->n, s->skip, true, &win);
  }
  if (!st) st = list_new(&out);
  size_t start = s->ctx_len + s->emitted;
  if (!st && win.n && (size_t)win.used > start) {
    const unsigned char *p = (const unsigned char *)win.buf + start;
    size_t n = (size_t)win.used - start, k = 0;
    while (k < n) { /* everything up to a trailing incomplete sequence */
      uint32_t cp;
      int used = rlx_utf8_decode(p + k, n - k, &cp);
      if (k + (size_t)used == n && rlx_utf8_incomplete(p + k, n - k)) break;
      k += (size_t)used;
    }
    st = bytes_lossy(&out, (const char *)p, k);
    s->emitted += k;
    if (!st && k == n) { /* all out: the last token becomes the context */
      s->ids[0] = s->ids[s->n - 1];
      s->n = 1;
      tk_list ctx = {0};
      st = decode_to(t, s->ids, 1, s->skip, true, &ctx);
      s->ctx_len = st ? 0 : (size_t)ctx.used;
      s->emitted = 0;
      list_free(&ctx);
    }
  }
  size_t len = (size_t)out.used;
  if (!st) st = stream_set(s, &out);
  list_free(&win);
  list_free(&out);
  if (st) return st;
  *text_out = s->text;
  *len_out = len;
  return RLX_OK;
}

rlx_status rlx_token_stream_flush(rlx_token_stream *s, const char **text_out, size_t *len_out) {
  if (!s || !text_out || !len_out) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_token_stream_flush: NULL argument");
  tk_list win = {0}, out = {0};
  rlx_status st = list_new(&out);
  size_t start = s->ctx_len + s->emitted;
  if (!st && s->n) st = decode_to(s->t, s->ids, (size_t)s->n, s->skip, true, &win);
  if (!st && win.n && (size_t)win.used > start) st = bytes_lossy(&out, win.buf + start, (size_t)win.used - start);
  size_t len = (size_t)out.used;
  if (!st) st = stream_set(s, &out);
  list_free(&win);
  list_free(&out);
  if (st) return st;
  s->n = 0, s->ctx_len = 0, s->emitted = 0;
  *text_out = s->text;
  *len_out = len;
  return RLX_OK;
}
