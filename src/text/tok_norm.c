/*
 * tok_norm.c — normalizers (over a code-point buffer) and pre-tokenizers
 * (over a list of pieces), as the `tokenizers` library defines them.
 *
 * Splitting follows its PreTokenizedString::split: a pattern (a regex, a
 * literal, or a character predicate, where each matching character is a
 * match of its own) yields (range, is_match) events covering the piece;
 * the split behaviour (removed, isolated, merged with previous / next,
 * contiguous) turns them into new pieces, and empty pieces are dropped.
 */
#include <string.h>

#include "text/tokenizer.h"

/* ---- patterns ---- */

rlx_status tk_pattern_find(const tk_pattern *pat, const uint32_t *s, int32_t n, int32_t from,
                           bool *found, int32_t *ms, int32_t *me) {
  if (pat->re) return rlx_regex_find(pat->re, s, n, from, found, ms, me);
  *found = false;
  if (pat->lit_len == 0) return RLX_OK;
  for (int32_t i = from; i + pat->lit_len <= n; i++) {
    if (!memcmp(s + i, pat->lit, (size_t)pat->lit_len * sizeof *s)) {
      *found = true, *ms = i, *me = i + pat->lit_len;
      return RLX_OK;
    }
  }
  return RLX_OK;
}

/* ---- normalizers ---- */

static bool is_chinese(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/* Drops the code points for which drop() holds (in place). */
static void filter(rlx_uc_buf *b, bool (*drop)(uint32_t)) {
  int32_t w = 0;
  for (int32_t i = 0; i < b->n; i++)
    if (!drop(b->v[i])) b->v[w++] = b->v[i];
  b->n = w;
}

static bool drop_bert_clean(uint32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  return c == 0 || c == 0xFFFD || rlx_uc_is_other(c);
}
static bool drop_mn(uint32_t c) { return rlx_uc_category(c) == RLX_UC_MN; }
static bool drop_mark(uint32_t c) { return rlx_uc_is_mark(c); }

static rlx_status bert_normalize(const tk_norm *n, rlx_uc_buf *b) {
  if (n->clean_text) {
    filter(b, drop_bert_clean);
    for (int32_t i = 0; i < b->n; i++)
      if (rlx_uc_is_space(b->v[i])) b->v[i] = ' ';
  }
  if (n->chinese) {
    rlx_uc_buf out = {0};
    rlx_status st = RLX_OK;
    for (int32_t i = 0; i < b->n && !st; i++) {
      bool c = is_chinese(b->v[i]);
      if (c) st = rlx_uc_push(&out, ' ');
      if (!st) st = rlx_uc_push(&out, b->v[i]);
      if (c && !st) st = rlx_uc_push(&out, ' ');
    }
    if (st) {
      rlx_uc_buf_free(&out);
      return st;
    }
    rlx_uc_buf_free(b);
    *b = out;
  }
  if (n->strip_accents) {
    rlx_status st = rlx_uc_normalize(b, RLX_UC_NFD);
    if (st) return st;
    filter(b, drop_mn);
  }
  return n->lowercase ? rlx_uc_lowercase(b) : RLX_OK;
}

static rlx_status replace(const tk_norm *n, rlx_uc_buf *b) {
  rlx_uc_buf out = {0};
  rlx_status st = RLX_OK;
  int32_t pos = 0;
  while (pos <= b->n && !st) {
    bool found;
    int32_t ms = 0, me = 0;
    st = tk_pattern_find(&n->pat, b->v, b->n, pos, &found, &ms, &me);
    if (st || !found) break;
    for (int32_t i = pos; i < ms && !st; i++) st = rlx_uc_push(&out, b->v[i]);
    for (int32_t i = 0; i < n->content_len && !st; i++) st = rlx_uc_push(&out, n->content[i]);
    if (me == ms) { /* an empty match: keep the next character and move past it */
      if (ms < b->n && !st) st = rlx_uc_push(&out, b->v[ms]);
      me = ms + 1;
    }
    pos = me;
  }
  for (int32_t i = pos; i < b->n && !st; i++) st = rlx_uc_push(&out, b->v[i]);
  if (st) {
    rlx_uc_buf_free(&out);
    return st;
  }
  rlx_uc_buf_free(b);
  *b = out;
  return RLX_OK;
}

rlx_status tk_normalize(const tk_norm *n, rlx_uc_buf *b) {
  switch (n->kind) {
    case NORM_SEQUENCE:
      for (int32_t k = 0; k < n->n_kids; k++) {
        rlx_status st = tk_normalize(&n->kids[k], b);
        if (st) return st;
      }
      return RLX_OK;
    case NORM_NFC: return rlx_uc_normalize(b, RLX_UC_NFC);
    case NORM_NFD: return rlx_uc_normalize(b, RLX_UC_NFD);
    case NORM_NFKC: return rlx_uc_normalize(b, RLX_UC_NFKC);
    case NORM_NFKD: return rlx_uc_normalize(b, RLX_UC_NFKD);
    case NORM_LOWERCASE: return rlx_uc_lowercase(b);
    case NORM_STRIP_ACCENTS: filter(b, drop_mark); return RLX_OK;
    case NORM_STRIP: {
      int32_t s = 0, e = b->n;
      if (n->left) while (s < e && rlx_uc_is_space(b->v[s])) s++;
      if (n->right) while (e > s && rlx_uc_is_space(b->v[e - 1])) e--;
      memmove(b->v, b->v + s, (size_t)(e - s) * sizeof *b->v);
      b->n = e - s;
      return RLX_OK;
    }
    case NORM_REPLACE: return replace(n, b);
    case NORM_PREPEND: {
      if (b->n == 0) return RLX_OK;
      rlx_uc_buf out = {0};
      rlx_status st = RLX_OK;
      for (int32_t i = 0; i < n->content_len && !st; i++) st = rlx_uc_push(&out, n->content[i]);
      for (int32_t i = 0; i < b->n && !st; i++) st = rlx_uc_push(&out, b->v[i]);
      if (st) {
        rlx_uc_buf_free(&out);
        return st;
      }
      rlx_uc_buf_free(b);
      *b = out;
      return RLX_OK;
    }
    case NORM_BERT: return bert_normalize(n, b);
  }
  return rlx_errorf(RLX_ERR_INTERNAL, "unknown normalizer kind");
}

/* ---- pieces ---- */

rlx_status tk_pieces_add(tk_pieces *p, const uint32_t *cps, int32_t len, bool at_start) {
  if (len == 0) return RLX_OK;
  rlx_status st = rlx_grow((void **)&p->v, &p->cap, p->n + 1, sizeof *p->v);
  if (st) return st;
  p->v[p->n++] = (tk_piece){p->text.n, len, at_start};
  for (int32_t i = 0; i < len; i++)
    if ((st = rlx_uc_push(&p->text, cps[i]))) return st;
  return RLX_OK;
}

void tk_pieces_free(tk_pieces *p) {
  rlx_uc_buf_free(&p->text);
  rlx_free(p->v);
  memset(p, 0, sizeof *p);
}

/* (range, is_match) events of one piece. */
typedef struct tk_event { int32_t s, e; bool match; } tk_event;
typedef struct tk_events { tk_event *v; int32_t n, cap; } tk_events;

static rlx_status ev_add(tk_events *ev, int32_t s, int32_t e, bool match) {
  rlx_status st = rlx_grow((void **)&ev->v, &ev->cap, ev->n + 1, sizeof *ev->v);
  if (st) return st;
  ev->v[ev->n++] = (tk_event){s, e, match};
  return RLX_OK;
}

static rlx_status events_pattern(const tk_pattern *pat, const uint32_t *s, int32_t n, tk_events *ev) {
  int32_t prev = 0, pos = 0;
  rlx_status st = RLX_OK;
  while (pos <= n && !st) {
    bool found;
    int32_t ms = 0, me = 0;
    st = tk_pattern_find(pat, s, n, pos, &found, &ms, &me);
    if (st || !found) break;
    if (prev != ms) st = ev_add(ev, prev, ms, false);
    if (!st) st = ev_add(ev, ms, me, true);
    prev = me;
    pos = me > ms ? me : ms + 1;
  }
  if (!st && prev != n) st = ev_add(ev, prev, n, false);
  return st;
}

static rlx_status events_pred(bool (*pred)(uint32_t, uint32_t), uint32_t arg, const uint32_t *s, int32_t n,
                              tk_events *ev) {
  int32_t last = 0;
  rlx_status st = RLX_OK;
  for (int32_t i = 0; i < n && !st; i++) {
    if (!pred(s[i], arg)) continue;
    if (last < i) st = ev_add(ev, last, i, false);
    if (!st) st = ev_add(ev, i, i + 1, true);
    last = i + 1;
  }
  if (!st && last < n) st = ev_add(ev, last, n, false);
  return st;
}

/* Applies the split behaviour to ev (events of piece s[0..n)), appending
 * the resulting pieces to out. */
static rlx_status split_apply(tk_events *ev, tk_split_mode mode, bool invert, const uint32_t *s, bool at_start,
                              tk_pieces *out) {
  if (invert)
    for (int32_t i = 0; i < ev->n; i++) ev->v[i].match = !ev->v[i].match;
  int32_t w = 0;
  bool prev_match = false;
  switch (mode) {
    case SPLIT_ISOLATED: w = ev->n; break;
    case SPLIT_REMOVED:
      for (int32_t i = 0; i < ev->n; i++)
        if (!ev->v[i].match) ev->v[w++] = ev->v[i];
      break;
    case SPLIT_CONTIGUOUS:
    case SPLIT_MERGED_PREV:
      for (int32_t i = 0; i < ev->n; i++) {
        tk_event e = ev->v[i];
        bool merge = mode == SPLIT_CONTIGUOUS ? e.match == prev_match : e.match && !prev_match;
        if (merge && w > 0) ev->v[w - 1].e = e.e;
        else ev->v[w++] = e;
        prev_match = e.match;
      }
      break;
    case SPLIT_MERGED_NEXT: { /* the same from the right */
      w = ev->n;
      int32_t r = ev->n;
      for (int32_t i = ev->n - 1; i >= 0; i--) {
        tk_event e = ev->v[i];
        if (e.match && !prev_match && r < ev->n) ev->v[r].s = e.s;
        else ev->v[--r] = e;
        prev_match = e.match;
      }
      memmove(ev->v, ev->v + r, (size_t)(ev->n - r) * sizeof *ev->v);
      w = ev->n - r;
      break;
    }
  }
  for (int32_t i = 0; i < w; i++) {
    rlx_status st = tk_pieces_add(out, s + ev->v[i].s, ev->v[i].e - ev->v[i].s, at_start && ev->v[i].s == 0);
    if (st) return st;
  }
  return RLX_OK;
}

/* ---- the byte-level alphabet (GPT-2's bytes_to_unicode) ---- */

static bool byte_is_printable(unsigned b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; }

/* The 68 other bytes, in order, map to U+0100..U+0143: 0x00-0x20 (33),
 * 0x7F-0xA0 (34), 0xAD (1). */
uint32_t tk_byte_to_cp(unsigned b) {
  if (byte_is_printable(b)) return b;
  return 256 + (b <= 0x20 ? b : b <= 0xA0 ? 33 + (b - 0x7F) : 67);
}

int tk_cp_to_byte(uint32_t cp) {
  if (cp < 256) return byte_is_printable(cp) ? (int)cp : -1;
  uint32_t n = cp - 256;
  return n <= 32 ? (int)n : n <= 66 ? (int)(0x7F + n - 33) : n == 67 ? 0xAD : -1;
}

/* ---- pre-tokenizers ---- */

static bool pred_space(uint32_t c, uint32_t arg) { return rlx_uc_is_space(c); }
static bool pred_punct(uint32_t c, uint32_t arg) {
  return (c < 0x80 && c > 0x20 && c != 0x7F && !(c >= '0' && c <= '9') && !((c | 32) >= 'a' && (c | 32) <= 'z')) ||
         rlx_uc_is_punct(c);
}
static bool pred_digit(uint32_t c, uint32_t arg) { return rlx_uc_is_number(c); }
static bool pred_char(uint32_t c, uint32_t arg) { return c == arg; }

static rlx_status split_pred(const tk_pieces *in, tk_pieces *out, bool (*pred)(uint32_t, uint32_t), uint32_t arg,
                             tk_split_mode mode) {
  tk_events ev = {0};
  rlx_status st = RLX_OK;
  for (int32_t k = 0; k < in->n && !st; k++) {
    const uint32_t *s = in->text.v + in->v[k].off;
    ev.n = 0;
    st = events_pred(pred, arg, s, in->v[k].len, &ev);
    if (!st) st = split_apply(&ev, mode, false, s, in->v[k].at_start, out);
  }
  rlx_free(ev.v);
  return st;
}

static rlx_status split_pattern(const tk_pieces *in, tk_pieces *out, const tk_pattern *pat, tk_split_mode mode,
                                bool invert) {
  tk_events ev = {0};
  rlx_status st = RLX_OK;
  for (int32_t k = 0; k < in->n && !st; k++) {
    const uint32_t *s = in->text.v + in->v[k].off;
    ev.n = 0;
    st = events_pattern(pat, s, in->v[k].len, &ev);
    if (!st) st = split_apply(&ev, mode, invert, s, in->v[k].at_start, out);
  }
  rlx_free(ev.v);
  return st;
}

/* Maps pieces (prepending a space where asked) to the byte-level alphabet. */
static rlx_status byte_level_map(const tk_pieces *in, tk_pieces *out, bool prefix_space) {
  rlx_status st = RLX_OK;
  uint32_t *tmp = NULL;
  int32_t cap = 0;
  for (int32_t k = 0; k < in->n && !st; k++) {
    const uint32_t *s = in->text.v + in->v[k].off;
    int32_t n = in->v[k].len, w = 0;
    if ((st = rlx_grow((void **)&tmp, &cap, 4 * n + 1, sizeof *tmp))) break;
    if (prefix_space && (n == 0 || s[0] != ' ')) tmp[w++] = ' ';
    for (int32_t i = 0; i < n; i++) {
      char u[4];
      int ul = rlx_utf8_encode(s[i], u);
      for (int b = 0; b < ul; b++) tmp[w++] = (uint32_t)(unsigned char)u[b];
    }
    for (int32_t i = 0; i < w; i++) tmp[i] = tk_byte_to_cp(tmp[i]);
    st = tk_pieces_add(out, tmp, w, in->v[k].at_start);
  }
  rlx_free(tmp);
  return st;
}

static rlx_status metaspace(const tk_pre *p, const tk_pieces *in, tk_pieces *out) {
  tk_pieces mid = {0};
  rlx_status st = RLX_OK;
  uint32_t *tmp = NULL;
  int32_t cap = 0;
  for (int32_t k = 0; k < in->n && !st; k++) {
    const uint32_t *s = in->text.v + in->v[k].off;
    int32_t n = in->v[k].len, w = 0;
    if ((st = rlx_grow((void **)&tmp, &cap, n + 1, sizeof *tmp))) break;
    bool pre = p->prepend == PREPEND_ALWAYS || (p->prepend == PREPEND_FIRST && in->v[k].at_start);
    if (pre && !(n > 0 && (s[0] == p->replacement || s[0] == ' '))) tmp[w++] = p->replacement;
    for (int32_t i = 0; i < n; i++) tmp[w++] = s[i] == ' ' ? p->replacement : s[i];
    st = tk_pieces_add(&mid, tmp, w, in->v[k].at_start);
  }
  rlx_free(tmp);
  if (!st) {
    if (p->split) {
      st = split_pred(&mid, out, pred_char, p->replacement, SPLIT_MERGED_NEXT);
    } else {
      tk_pieces_free(out);
      *out = mid;
      return RLX_OK;
    }
  }
  tk_pieces_free(&mid);
  return st;
}

static rlx_status pre_one(const tk_pre *p, const tk_pieces *in, tk_pieces *out) {
  switch (p->kind) {
    case PRE_SEQUENCE: return rlx_errorf(RLX_ERR_INTERNAL, "nested Sequence reached pre_one");
    case PRE_BYTE_LEVEL: {
      if (!p->use_regex) return byte_level_map(in, out, p->add_prefix_space);
      tk_pieces mid = {0};
      rlx_status st = RLX_OK;
      if (p->add_prefix_space) { /* the space goes in before the regex sees the piece */
        for (int32_t k = 0; k < in->n && !st; k++) {
          const uint32_t *s = in->text.v + in->v[k].off;
          int32_t n = in->v[k].len;
          if (n == 0 || s[0] != ' ') {
            uint32_t sp = ' ';
            st = tk_pieces_add(&mid, &sp, 1, in->v[k].at_start);
            if (!st && n) { /* extend the one-space piece with the text */
              for (int32_t i = 0; i < n && !st; i++) st = rlx_uc_push(&mid.text, s[i]);
              mid.v[mid.n - 1].len += n;
            }
          } else {
            st = tk_pieces_add(&mid, s, n, in->v[k].at_start);
          }
        }
      }
      tk_pieces split = {0};
      if (!st) st = split_pattern(p->add_prefix_space ? &mid : in, &split, &p->pat, SPLIT_ISOLATED, false);
      if (!st) st = byte_level_map(&split, out, false);
      tk_pieces_free(&mid);
      tk_pieces_free(&split);
      return st;
    }
    case PRE_SPLIT: return split_pattern(in, out, &p->pat, p->mode, p->invert);
    case PRE_METASPACE: return metaspace(p, in, out);
    case PRE_DIGITS: return split_pred(in, out, pred_digit, 0, p->individual ? SPLIT_ISOLATED : SPLIT_CONTIGUOUS);
    case PRE_BERT: {
      tk_pieces mid = {0};
      rlx_status st = split_pred(in, &mid, pred_space, 0, SPLIT_REMOVED);
      if (!st) st = split_pred(&mid, out, pred_punct, 0, SPLIT_ISOLATED);
      tk_pieces_free(&mid);
      return st;
    }
    case PRE_WHITESPACE: return split_pattern(in, out, &p->pat, SPLIT_REMOVED, true);
    case PRE_WHITESPACE_SPLIT: return split_pred(in, out, pred_space, 0, SPLIT_REMOVED);
    case PRE_PUNCTUATION: return split_pred(in, out, pred_punct, 0, p->mode);
  }
  return rlx_errorf(RLX_ERR_INTERNAL, "unknown pre-tokenizer kind");
}

rlx_status tk_pre_tokenize(const tk_pre *pre, tk_pieces *p) {
  if (pre->kind == PRE_SEQUENCE) {
    for (int32_t k = 0; k < pre->n_kids; k++) {
      rlx_status st = tk_pre_tokenize(&pre->kids[k], p);
      if (st) return st;
    }
    return RLX_OK;
  }
  tk_pieces out = {0};
  rlx_status st = pre_one(pre, p, &out);
  if (st) {
    tk_pieces_free(&out);
    return st;
  }
  tk_pieces_free(p);
  *p = out;
  return RLX_OK;
}
