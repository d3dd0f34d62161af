/*
 * tok_encode.c — loading and encoding: the public rlx_tokenizer_* entry
 * points but decode (tok_decode.c).
 *
 * Added tokens are found as tokenizers' AddedVocabulary does: leftmost-
 * longest matches (its Aho-Corasick, here a scan with a first-character
 * filter), first of the tokens with normalized = false over the raw text,
 * then of those with normalized = true over each normalized segment; a
 * single_word token must not touch a word character on either side, and
 * lstrip / rstrip take in the whitespace beside the match.
 */
#include <string.h>

#include "import/json_util.h"
#include "text/tokenizer.h"

rlx_status tk_tokenizer_from_text(const char *text, size_t len, const char *name, rlx_tokenizer **out) {
  cJSON *root = NULL;
  rlx_status st = rlx_json_parse(text, len, name, &root);
  if (st) return st;
  rlx_tokenizer *t = rlx_calloc(1, sizeof *t);
  if (!t) {
    cJSON_Delete(root);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory loading %s", name);
  }
  st = tk_load_json(t, root, name);
  cJSON_Delete(root);
  if (st) {
    rlx_tokenizer_destroy(t);
    return st;
  }
  *out = t;
  return RLX_OK;
}

rlx_status rlx_tokenizer_load(const char *path, rlx_tokenizer **out) {
  if (!path || !out) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_tokenizer_load: NULL argument");
  char *text = NULL;
  size_t len = 0;
  rlx_status st = rlx_read_file(path, TK_MAX_FILE, &text, &len);
  if (st) return st;
  st = tk_tokenizer_from_text(text, len, path, out);
  rlx_free(text);
  return st;
}

void rlx_tokenizer_destroy(rlx_tokenizer *t) {
  if (!t) return;
  for (int32_t i = 0; i < t->n_regexes; i++) rlx_regex_destroy(t->regexes[i]);
  rlx_free(t->regexes);
  tk_model_free(&t->model);
  tk_vocab_free(&t->ids);
  rlx_free(t->is_special);
  rlx_pool_free(&t->pool);
  rlx_free(t);
}

int32_t rlx_tokenizer_vocab_size(const rlx_tokenizer *t) { return t ? t->ids.n : 0; }

rlx_status rlx_tokenizer_token_id(const rlx_tokenizer *t, const char *token, int32_t *id_out) {
  if (!t || !token || !id_out) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_tokenizer_token_id: NULL argument");
  int32_t id = tk_vocab_get(&t->ids, token, strlen(token));
  if (id < 0) return rlx_errorf(RLX_ERR_NOT_FOUND, "token '%.200s' is not in the vocabulary", token);
  *id_out = id;
  return RLX_OK;
}

const char *rlx_tokenizer_id_to_token(const rlx_tokenizer *t, int32_t id) {
  if (!t || id < 0 || id >= t->ids.n) return NULL;
  return t->ids.tok[id];
}

int rlx_tokenizer_is_special(const rlx_tokenizer *t, int32_t id) {
  return t && id >= 0 && id < t->ids.n && t->is_special[id];
}

/* ---- ids ---- */

typedef struct tk_ids { int32_t *v; int32_t n, cap; } tk_ids;

static rlx_status ids_push(tk_ids *ids, int32_t id) {
  rlx_status st = rlx_grow((void **)&ids->v, &ids->cap, ids->n + 1, sizeof *ids->v);
  if (st) return st;
  ids->v[ids->n++] = id;
  return RLX_OK;
}

/* ---- added tokens ---- */

typedef struct tk_seg { int32_t s, e, id; } tk_seg; /* id -1: text to tokenize */
typedef struct tk_segs { tk_seg *v; int32_t n, cap; } tk_segs;

static rlx_status seg_add(tk_segs *g, int32_t s, int32_t e, int32_t id) {
  rlx_status st = rlx_grow((void **)&g->v, &g->cap, g->n + 1, sizeof *g->v);
  if (st) return st;
  g->v[g->n++] = (tk_seg){s, e, id};
  return RLX_OK;
}

/* The longest added token (of the `normalized` kind) at s[i..n), or NULL. */
static const tk_added *added_at(const rlx_tokenizer *t, bool normalized, const uint32_t *s, int32_t i, int32_t n) {
  const tk_added *best = NULL;
  int32_t lo = 0, hi = t->n_added; /* the first token starting with s[i] */
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (t->added[t->added_order[mid]].cps[0] < s[i]) lo = mid + 1;
    else hi = mid;
  }
  for (int32_t k = lo; k < t->n_added && t->added[t->added_order[k]].cps[0] == s[i]; k++) {
    const tk_added *a = &t->added[t->added_order[k]];
    if (a->normalized != normalized || a->n_cps > n - i) continue;
    if (best && a->n_cps <= best->n_cps) continue;
    if (!memcmp(a->cps, s + i, (size_t)a->n_cps * sizeof *s)) best = a;
  }
  return best;
}

/* Splits s[0..n) at the added tokens of the `normalized` kind. */
static rlx_status split_added(const rlx_tokenizer *t, bool normalized, const uint32_t *s, int32_t n, tk_segs *g) {
  int32_t start_off = 0;
  rlx_status st = RLX_OK;
  bool any = false;
  for (int32_t k = 0; k < t->n_added && !any; k++) any = t->added[k].normalized == normalized;
  for (int32_t i = 0; any && i < n && !st;) {
    const tk_added *a = added_at(t, normalized, s, i, n);
    if (!a) {
      i++;
      continue;
    }
    int32_t ms = i, me = i + a->n_cps;
    i = me; /* the scan goes on after this match, whatever happens to it */
    if (a->single_word) {
      bool start_ok = ms == 0 || !rlx_uc_is_word(s[ms - 1]);
      bool stop_ok = me == n || !rlx_uc_is_word(s[me]);
      if (!start_ok || !stop_ok) continue;
    }
    if (a->lstrip) {
      int32_t k = ms;
      while (k > 0 && rlx_uc_is_space(s[k - 1])) k--;
      ms = RLX_MAX(k, start_off);
    }
    if (a->rstrip)
      while (me < n && rlx_uc_is_space(s[me])) me++;
    if (start_off < ms) st = seg_add(g, start_off, ms, -1);
    if (!st) st = seg_add(g, ms, me, a->id);
    start_off = me;
  }
  if (!st && start_off < n) st = seg_add(g, start_off, n, -1);
  return st;
}

/* ---- the pipeline ---- */

/* Pre-tokenizes and runs the model on text s[0..n) (normalized). */
static rlx_status encode_pieces(const rlx_tokenizer *t, const uint32_t *s, int32_t n, bool at_start, tk_ids *ids) {
  tk_pieces p = {0};
  rlx_status st = tk_pieces_add(&p, s, n, at_start);
  if (!st && t->pre) st = tk_pre_tokenize(t->pre, &p);
  char *buf = NULL;
  int32_t cap = 0;
  for (int32_t k = 0; k < p.n && !st; k++) {
    const tk_piece *pc = &p.v[k];
    if ((st = rlx_grow((void **)&buf, &cap, 4 * pc->len + 1, 1))) break;
    int32_t w = 0;
    for (int32_t i = 0; i < pc->len; i++) w += rlx_utf8_encode(p.text.v[pc->off + i], buf + w);
    st = tk_model_tokenize(&t->model, buf, w, &ids->v, &ids->n, &ids->cap);
  }
  rlx_free(buf);
  tk_pieces_free(&p);
  return st;
}

/* A segment of raw text between non-normalized added tokens. */
static rlx_status encode_segment(const rlx_tokenizer *t, const uint32_t *s, int32_t n, bool at_start, tk_ids *ids) {
  rlx_uc_buf b = {0};
  rlx_status st = RLX_OK;
  for (int32_t i = 0; i < n && !st; i++) st = rlx_uc_push(&b, s[i]);
  if (!st && t->norm) st = tk_normalize(t->norm, &b);
  tk_segs g = {0};
  if (!st) st = split_added(t, true, b.v, b.n, &g);
  for (int32_t k = 0; k < g.n && !st; k++) {
    if (g.v[k].id >= 0) st = ids_push(ids, g.v[k].id);
    else st = encode_pieces(t, b.v + g.v[k].s, g.v[k].e - g.v[k].s, at_start && g.v[k].s == 0, ids);
  }
  rlx_free(g.v);
  rlx_uc_buf_free(&b);
  return st;
}

/* Decodes UTF-8 text, refusing invalid sequences (tokenizers takes &str). */
static rlx_status text_cps(const char *text, size_t len, rlx_uc_buf *b) {
  const unsigned char *p = (const unsigned char *)text;
  for (size_t i = 0; i < len;) {
    uint32_t cp;
    int used = rlx_utf8_decode(p + i, len - i, &cp);
    if (cp == RLX_UC_REPLACEMENT && !(used == 3 && p[i] == 0xEF && p[i + 1] == 0xBF && p[i + 2] == 0xBD))
      return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "text is not valid UTF-8 at byte %zu", i);
    rlx_status st = rlx_uc_push(b, cp);
    if (st) return st;
    i += (size_t)used;
  }
  return RLX_OK;
}

rlx_status rlx_tokenizer_encode(const rlx_tokenizer *t, const char *text, size_t len, int add_special,
                                int32_t *ids_out, size_t cap, size_t *n_out) {
  if (!t || (!text && len) || !n_out || (!ids_out && cap))
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_tokenizer_encode: NULL argument");
  if (len > TK_MAX_TEXT) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "text of %zu bytes is over the 256 MiB limit", len);
  rlx_uc_buf b = {0};
  tk_ids ids = {0};
  tk_segs g = {0};
  rlx_status st = text_cps(text, len, &b);
  if (!st && add_special && t->has_post)
    for (int32_t i = 0; i < t->post.n_pre && !st; i++) st = ids_push(&ids, t->post.pre[i]);
  if (!st) st = split_added(t, false, b.v, b.n, &g);
  for (int32_t k = 0; k < g.n && !st; k++) {
    if (g.v[k].id >= 0) st = ids_push(&ids, g.v[k].id);
    else st = encode_segment(t, b.v + g.v[k].s, g.v[k].e - g.v[k].s, g.v[k].s == 0, &ids);
  }
  if (!st && add_special && t->has_post)
    for (int32_t i = 0; i < t->post.n_post && !st; i++) st = ids_push(&ids, t->post.post[i]);
  if (!st) {
    size_t n = (size_t)ids.n;
    if (n && cap) memcpy(ids_out, ids.v, RLX_MIN(n, cap) * sizeof *ids_out);
    *n_out = n;
  }
  rlx_free(g.v);
  rlx_free(ids.v);
  rlx_uc_buf_free(&b);
  return st;
}
