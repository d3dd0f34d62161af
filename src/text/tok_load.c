/*
 * tok_load.c — reads a Hugging Face tokenizer.json into the stages of
 * tokenizer.h. The file is untrusted: every field is type-checked, every
 * string bounded (TK_MAX_TOKEN), every id range-checked, and anything this
 * does not implement (a model, normalizer, pre-tokenizer, decoder or
 * post-processor type, a field value) fails naming its JSON path, e.g.
 * "tokenizer.json: pre_tokenizer.pretokenizers[1].type 'UnicodeScripts' is
 * not supported".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/json_util.h"
#include "text/tokenizer.h"

#define WHERE_CAP 256

typedef struct tk_loader {
  rlx_tokenizer *t;
  const char *path; /* the file, for messages */
} tk_loader;

static rlx_status ferr(tk_loader *L, rlx_status s, const char *where, const char *fmt, const char *arg) {
  char a[201], msg[512];
  snprintf(a, sizeof a, "%.200s", arg ? arg : ""); /* names from the file are cut at 200 bytes */
  snprintf(msg, sizeof msg, fmt, a);
  return rlx_errorf(s, "%s: %s%s%s", L->path, where, *where ? " " : "", msg);
}

static const cJSON *get(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

static bool is_null(const cJSON *j) { return !j || cJSON_IsNull(j); }

/* An optional boolean (absent or null: dflt). */
static rlx_status get_bool(tk_loader *L, const cJSON *obj, const char *key, const char *where, bool dflt,
                           bool *out) {
  const cJSON *j = get(obj, key);
  if (is_null(j)) {
    *out = dflt;
    return RLX_OK;
  }
  if (!cJSON_IsBool(j)) {
    char w[WHERE_CAP];
    snprintf(w, sizeof w, "%s.%s", where, key);
    return ferr(L, RLX_ERR_FORMAT, w, "must be true or false", NULL);
  }
  *out = cJSON_IsTrue(j);
  return RLX_OK;
}

/* A string of at most TK_MAX_TOKEN bytes; absent or null gives NULL unless required. */
static rlx_status get_str(tk_loader *L, const cJSON *obj, const char *key, const char *where, bool required,
                          const char **out) {
  const cJSON *j = get(obj, key);
  char w[WHERE_CAP];
  snprintf(w, sizeof w, "%s.%s", where, key);
  if (is_null(j)) {
    if (required) return ferr(L, RLX_ERR_FORMAT, w, "is missing", NULL);
    *out = NULL;
    return RLX_OK;
  }
  if (!cJSON_IsString(j) || !j->valuestring) return ferr(L, RLX_ERR_FORMAT, w, "must be a string", NULL);
  if (strlen(j->valuestring) > TK_MAX_TOKEN) return ferr(L, RLX_ERR_UNSUPPORTED, w, "is longer than 1024 bytes", NULL);
  *out = rlx_pool_strdup(&L->t->pool, j->valuestring); /* the tree is freed after loading */
  if (!*out) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading %s", L->path);
  return RLX_OK;
}

static rlx_status get_int(tk_loader *L, const cJSON *obj, const char *key, const char *where, int64_t lo,
                          int64_t hi, int64_t *out) {
  const cJSON *j = get(obj, key);
  char w[WHERE_CAP];
  snprintf(w, sizeof w, "%s.%s", where, key);
  int64_t v = 0;
  if (!j || rlx_json_int(j, w, &v) || v < lo || v > hi) {
    char range[96];
    snprintf(range, sizeof range, "must be an integer in [%lld, %lld]", (long long)lo, (long long)hi);
    return ferr(L, RLX_ERR_FORMAT, w, "%s", range);
  }
  *out = v;
  return RLX_OK;
}

static rlx_status get_type(tk_loader *L, const cJSON *j, const char *where, const char **out) {
  if (!cJSON_IsObject(j)) return ferr(L, RLX_ERR_FORMAT, where, "must be an object", NULL);
  return get_str(L, j, "type", where, true, out);
}

static rlx_status unsupported_type(tk_loader *L, const char *where, const char *type) {
  char w[WHERE_CAP];
  snprintf(w, sizeof w, "%s.type", where);
  return ferr(L, RLX_ERR_UNSUPPORTED, w, "'%s' is not supported", type);
}

/* UTF-8 -> code points in the tokenizer's pool. */
static rlx_status pool_cps(tk_loader *L, const char *s, uint32_t **out, int32_t *n) {
  rlx_uc_buf b = {0};
  rlx_status st = rlx_uc_from_utf8(&b, s, strlen(s));
  if (st) {
    rlx_uc_buf_free(&b);
    return st;
  }
  *out = rlx_pool_alloc(&L->t->pool, (size_t)(b.n ? b.n : 1) * sizeof **out);
  if (!*out) {
    rlx_uc_buf_free(&b);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading %s", L->path);
  }
  if (b.n) memcpy(*out, b.v, (size_t)b.n * sizeof **out);
  *n = b.n;
  rlx_uc_buf_free(&b);
  return RLX_OK;
}

static rlx_status add_regex(tk_loader *L, const char *pattern, const char *where, rlx_regex **out) {
  rlx_tokenizer *t = L->t;
  rlx_status st = rlx_grow((void **)&t->regexes, &t->cap_regexes, t->n_regexes + 1, sizeof *t->regexes);
  if (st) return st;
  char w[WHERE_CAP + 64];
  snprintf(w, sizeof w, "%s: %s", L->path, where);
  if ((st = rlx_regex_compile(pattern, w, out))) return st;
  t->regexes[t->n_regexes++] = *out;
  return RLX_OK;
}

/* {"String": "..."} or {"Regex": "..."} */
static rlx_status load_pattern(tk_loader *L, const cJSON *obj, const char *where, tk_pattern *out) {
  char w[WHERE_CAP];
  snprintf(w, sizeof w, "%s.pattern", where);
  const cJSON *p = get(obj, "pattern");
  if (!cJSON_IsObject(p)) return ferr(L, RLX_ERR_FORMAT, w, "must be {\"String\": ...} or {\"Regex\": ...}", NULL);
  const char *s = NULL;
  if (get(p, "String")) {
    rlx_status st = get_str(L, p, "String", w, true, &s);
    if (st) return st;
    return pool_cps(L, s, &out->lit, &out->lit_len);
  }
  if (get(p, "Regex")) {
    rlx_status st = get_str(L, p, "Regex", w, true, &s);
    if (st) return st;
    char w2[WHERE_CAP + 8];
    snprintf(w2, sizeof w2, "%s.Regex", w);
    return add_regex(L, s, w2, &out->re);
  }
  return ferr(L, RLX_ERR_UNSUPPORTED, w, "must be {\"String\": ...} or {\"Regex\": ...}", NULL);
}

/* A list field of a Sequence: allocates *kids. */
static rlx_status load_list(tk_loader *L, const cJSON *obj, const char *key, const char *where, size_t elem,
                            void **kids, int32_t *n, const cJSON **arr) {
  char w[WHERE_CAP];
  snprintf(w, sizeof w, "%s.%s", where, key);
  *arr = get(obj, key);
  if (!cJSON_IsArray(*arr)) return ferr(L, RLX_ERR_FORMAT, w, "must be a list", NULL);
  int count = cJSON_GetArraySize(*arr);
  if (count > 256) return ferr(L, RLX_ERR_UNSUPPORTED, w, "has more than 256 entries", NULL);
  *kids = rlx_pool_alloc(&L->t->pool, elem * (size_t)(count ? count : 1));
  if (!*kids) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading %s", L->path);
  *n = count;
  return RLX_OK;
}

/* ---- normalizers ---- */

static rlx_status load_norm(tk_loader *L, const cJSON *j, const char *where, int depth, tk_norm *n) {
  const char *type = NULL;
  rlx_status st = get_type(L, j, where, &type);
  if (st) return st;
  if (depth > 16) return ferr(L, RLX_ERR_UNSUPPORTED, where, "nests Sequences deeper than 16", NULL);
  if (!strcmp(type, "Sequence")) {
    const cJSON *arr, *e;
    n->kind = NORM_SEQUENCE;
    if ((st = load_list(L, j, "normalizers", where, sizeof *n->kids, (void **)&n->kids, &n->n_kids, &arr))) return st;
    int i = 0;
    cJSON_ArrayForEach(e, arr) {
      char w[WHERE_CAP];
      snprintf(w, sizeof w, "%s.normalizers[%d]", where, i);
      if ((st = load_norm(L, e, w, depth + 1, &n->kids[i++]))) return st;
    }
    return RLX_OK;
  }
  static const struct { const char *name; tk_norm_kind kind; } plain[] = {
      {"NFC", NORM_NFC}, {"NFD", NORM_NFD}, {"NFKC", NORM_NFKC}, {"NFKD", NORM_NFKD},
      {"Lowercase", NORM_LOWERCASE}, {"StripAccents", NORM_STRIP_ACCENTS}};
  for (size_t k = 0; k < RLX_COUNTOF(plain); k++)
    if (!strcmp(type, plain[k].name)) {
      n->kind = plain[k].kind;
      return RLX_OK;
    }
  if (!strcmp(type, "Strip")) {
    n->kind = NORM_STRIP;
    if ((st = get_bool(L, j, "strip_left", where, true, &n->left))) return st;
    return get_bool(L, j, "strip_right", where, true, &n->right);
  }
  if (!strcmp(type, "Replace") || !strcmp(type, "Prepend")) {
    const char *content = NULL;
    bool rep = type[0] == 'R';
    n->kind = rep ? NORM_REPLACE : NORM_PREPEND;
    if (rep && (st = load_pattern(L, j, where, &n->pat))) return st;
    if ((st = get_str(L, j, rep ? "content" : "prepend", where, true, &content))) return st;
    return pool_cps(L, content, &n->content, &n->content_len);
  }
  if (!strcmp(type, "BertNormalizer")) {
    n->kind = NORM_BERT;
    if ((st = get_bool(L, j, "clean_text", where, true, &n->clean_text))) return st;
    if ((st = get_bool(L, j, "handle_chinese_chars", where, true, &n->chinese))) return st;
    if ((st = get_bool(L, j, "lowercase", where, true, &n->lowercase))) return st;
    return get_bool(L, j, "strip_accents", where, n->lowercase, &n->strip_accents);
  }
  return unsupported_type(L, where, type);
}

/* ---- pre-tokenizers ---- */

/* GPT-2's split pattern (tokenizers' ByteLevel with use_regex). */
static const char gpt2_pattern[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static rlx_status load_behavior(tk_loader *L, const cJSON *j, const char *where, tk_split_mode dflt,
                                tk_split_mode *out) {
  static const char *const names[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
  const char *b = NULL;
  rlx_status st = get_str(L, j, "behavior", where, false, &b);
  if (st) return st;
  if (!b) {
    *out = dflt;
    return RLX_OK;
  }
  for (int k = 0; k < 5; k++)
    if (!strcmp(b, names[k])) {
      *out = (tk_split_mode)k;
      return RLX_OK;
    }
  char w[WHERE_CAP];
  snprintf(w, sizeof w, "%s.behavior", where);
  return ferr(L, RLX_ERR_UNSUPPORTED, w, "'%s' is not a split behavior", b);
}

static rlx_status load_prepend(tk_loader *L, const cJSON *j, const char *where, tk_prepend *out) {
  const char *scheme = NULL;
  rlx_status st = get_str(L, j, "prepend_scheme", where, false, &scheme);
  if (st) return st;
  if (!scheme) { /* the older form: add_prefix_space */
    bool aps;
    if ((st = get_bool(L, j, "add_prefix_space", where, true, &aps))) return st;
    *out = aps ? PREPEND_ALWAYS : PREPEND_NEVER;
    return RLX_OK;
  }
  if (!strcmp(scheme, "always")) *out = PREPEND_ALWAYS;
  else if (!strcmp(scheme, "first")) *out = PREPEND_FIRST;
  else if (!strcmp(scheme, "never")) *out = PREPEND_NEVER;
  else {
    char w[WHERE_CAP];
    snprintf(w, sizeof w, "%s.prepend_scheme", where);
    return ferr(L, RLX_ERR_UNSUPPORTED, w, "'%s' is not supported", scheme);
  }
  return RLX_OK;
}

static rlx_status load_replacement(tk_loader *L, const cJSON *j, const char *where, uint32_t *out) {
  const char *r = NULL;
  rlx_status st = get_str(L, j, "replacement", where, false, &r);
  if (st) return st;
  if (!r) {
    *out = 0x2581;
    return RLX_OK;
  }
  uint32_t cp;
  size_t n = strlen(r);
  if (n == 0 || (size_t)rlx_utf8_decode((const unsigned char *)r, n, &cp) != n || cp == RLX_UC_REPLACEMENT) {
    char w[WHERE_CAP];
    snprintf(w, sizeof w, "%s.replacement", where);
    return ferr(L, RLX_ERR_FORMAT, w, "must be one character", NULL);
  }
  *out = cp;
  return RLX_OK;
}

static rlx_status load_pre(tk_loader *L, const cJSON *j, const char *where, int depth, tk_pre *p) {
  const char *type = NULL;
  rlx_status st = get_type(L, j, where, &type);
  if (st) return st;
  if (depth > 16) return ferr(L, RLX_ERR_UNSUPPORTED, where, "nests Sequences deeper than 16", NULL);
  if (!strcmp(type, "Sequence")) {
    const cJSON *arr, *e;
    p->kind = PRE_SEQUENCE;
    if ((st = load_list(L, j, "pretokenizers", where, sizeof *p->kids, (void **)&p->kids, &p->n_kids, &arr)))
      return st;
    int i = 0;
    cJSON_ArrayForEach(e, arr) {
      char w[WHERE_CAP];
      snprintf(w, sizeof w, "%s.pretokenizers[%d]", where, i);
      if ((st = load_pre(L, e, w, depth + 1, &p->kids[i++]))) return st;
    }
    return RLX_OK;
  }
  if (!strcmp(type, "ByteLevel")) {
    p->kind = PRE_BYTE_LEVEL;
    if ((st = get_bool(L, j, "add_prefix_space", where, true, &p->add_prefix_space))) return st;
    if ((st = get_bool(L, j, "use_regex", where, true, &p->use_regex))) return st;
    return p->use_regex ? add_regex(L, gpt2_pattern, where, &p->pat.re) : RLX_OK;
  }
  if (!strcmp(type, "Split")) {
    p->kind = PRE_SPLIT;
    if ((st = load_pattern(L, j, where, &p->pat))) return st;
    if ((st = load_behavior(L, j, where, SPLIT_ISOLATED, &p->mode))) return st;
    return get_bool(L, j, "invert", where, false, &p->invert);
  }
  if (!strcmp(type, "Metaspace")) {
    p->kind = PRE_METASPACE;
    if ((st = load_replacement(L, j, where, &p->replacement))) return st;
    if ((st = load_prepend(L, j, where, &p->prepend))) return st;
    return get_bool(L, j, "split", where, true, &p->split);
  }
  if (!strcmp(type, "Digits")) {
    p->kind = PRE_DIGITS;
    return get_bool(L, j, "individual_digits", where, false, &p->individual);
  }
  if (!strcmp(type, "BertPreTokenizer")) return p->kind = PRE_BERT, RLX_OK;
  if (!strcmp(type, "WhitespaceSplit")) return p->kind = PRE_WHITESPACE_SPLIT, RLX_OK;
  if (!strcmp(type, "Whitespace")) {
    p->kind = PRE_WHITESPACE;
    return add_regex(L, "\\w+|[^\\w\\s]+", where, &p->pat.re);
  }
  if (!strcmp(type, "Punctuation")) {
    p->kind = PRE_PUNCTUATION;
    return load_behavior(L, j, where, SPLIT_ISOLATED, &p->mode);
  }
  return unsupported_type(L, where, type);
}

/* ---- decoders ---- */

static rlx_status load_dec(tk_loader *L, const cJSON *j, const char *where, int depth, tk_dec *d) {
  const char *type = NULL;
  rlx_status st = get_type(L, j, where, &type);
  if (st) return st;
  if (depth > 16) return ferr(L, RLX_ERR_UNSUPPORTED, where, "nests Sequences deeper than 16", NULL);
  if (!strcmp(type, "Sequence")) {
    const cJSON *arr, *e;
    d->kind = DEC_SEQUENCE;
    if ((st = load_list(L, j, "decoders", where, sizeof *d->kids, (void **)&d->kids, &d->n_kids, &arr))) return st;
    int i = 0;
    cJSON_ArrayForEach(e, arr) {
      char w[WHERE_CAP];
      snprintf(w, sizeof w, "%s.decoders[%d]", where, i);
      if ((st = load_dec(L, e, w, depth + 1, &d->kids[i++]))) return st;
    }
    return RLX_OK;
  }
  if (!strcmp(type, "ByteLevel")) return d->kind = DEC_BYTE_LEVEL, RLX_OK;
  if (!strcmp(type, "ByteFallback")) return d->kind = DEC_BYTE_FALLBACK, RLX_OK;
  if (!strcmp(type, "Fuse")) return d->kind = DEC_FUSE, RLX_OK;
  if (!strcmp(type, "Metaspace")) {
    tk_prepend pre;
    d->kind = DEC_METASPACE;
    if ((st = load_replacement(L, j, where, &d->replacement))) return st;
    if ((st = load_prepend(L, j, where, &pre))) return st;
    d->strip_first = pre != PREPEND_NEVER;
    return RLX_OK;
  }
  if (!strcmp(type, "WordPiece")) {
    d->kind = DEC_WORDPIECE;
    if ((st = get_str(L, j, "prefix", where, false, &d->prefix))) return st;
    if (!d->prefix) d->prefix = "##";
    return get_bool(L, j, "cleanup", where, true, &d->cleanup);
  }
  if (!strcmp(type, "Replace")) {
    d->kind = DEC_REPLACE;
    if ((st = load_pattern(L, j, where, &d->pat))) return st;
    return get_str(L, j, "content", where, true, &d->content);
  }
  if (!strcmp(type, "BPEDecoder")) {
    d->kind = DEC_BPE;
    if ((st = get_str(L, j, "suffix", where, false, &d->content))) return st;
    if (!d->content) d->content = "</w>";
    return RLX_OK;
  }
  if (!strcmp(type, "Strip")) {
    int64_t a, b;
    d->kind = DEC_STRIP;
    if ((st = get_str(L, j, "content", where, true, &d->content))) return st;
    uint32_t cp;
    size_t n = strlen(d->content);
    if (n == 0 || (size_t)rlx_utf8_decode((const unsigned char *)d->content, n, &cp) != n) {
      char w[WHERE_CAP];
      snprintf(w, sizeof w, "%s.content", where);
      return ferr(L, RLX_ERR_FORMAT, w, "must be one character", NULL);
    }
    if ((st = get_int(L, j, "start", where, 0, 1 << 20, &a))) return st;
    if ((st = get_int(L, j, "stop", where, 0, 1 << 20, &b))) return st;
    d->start = (int32_t)a, d->stop = (int32_t)b;
    return RLX_OK;
  }
  return unsupported_type(L, where, type);
}

/* ---- the model ---- */

static rlx_status load_vocab(tk_loader *L, const cJSON *jm, tk_model *m) {
  const cJSON *v = get(jm, "vocab"), *e;
  if (!cJSON_IsObject(v)) return ferr(L, RLX_ERR_FORMAT, "model.vocab", "must be an object of token: id", NULL);
  int count = cJSON_GetArraySize(v);
  rlx_status rs = tk_vocab_reserve(&m->vocab, (uint32_t)count, count);
  if (rs) return rs;
  cJSON_ArrayForEach(e, v) {
    int64_t id = 0;
    size_t len = strlen(e->string);
    if (!cJSON_IsNumber(e) || rlx_json_int(e, "id", &id) || id < 0 || id >= TK_MAX_VOCAB)
      return ferr(L, RLX_ERR_FORMAT, "model.vocab", "'%s' must map to an id in [0, 2^24)", e->string);
    if (len > TK_MAX_TOKEN) return ferr(L, RLX_ERR_UNSUPPORTED, "model.vocab", "has a token longer than 1024 bytes", NULL);
    if (tk_vocab_get(&m->vocab, e->string, len) >= 0)
      return ferr(L, RLX_ERR_FORMAT, "model.vocab", "has '%s' twice", e->string);
    rlx_status st = tk_vocab_put(&m->vocab, &L->t->pool, e->string, len, (int32_t)id);
    if (st) return st;
  }
  return RLX_OK;
}

static rlx_status load_merges(tk_loader *L, const cJSON *jm, tk_model *m) {
  const cJSON *arr = get(jm, "merges"), *e;
  if (is_null(arr)) return RLX_OK;
  if (!cJSON_IsArray(arr)) return ferr(L, RLX_ERR_FORMAT, "model.merges", "must be a list", NULL);
  size_t plen = m->prefix ? strlen(m->prefix) : 0;
  char buf[2 * TK_MAX_TOKEN + 2];
  int32_t rank = 0;
  cJSON_ArrayForEach(e, arr) {
    char w[WHERE_CAP];
    snprintf(w, sizeof w, "model.merges[%d]", rank);
    const char *a = NULL, *b = NULL;
    size_t al = 0, bl = 0;
    if (cJSON_IsString(e)) {
      const char *s = e->valuestring, *sp = strchr(s, ' ');
      if (!sp || strchr(sp + 1, ' ')) return ferr(L, RLX_ERR_FORMAT, w, "'%s' must be two tokens and one space", s);
      a = s, al = (size_t)(sp - s), b = sp + 1, bl = strlen(b);
    } else if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 && cJSON_IsString(e->child) &&
               cJSON_IsString(e->child->next)) {
      a = e->child->valuestring, b = e->child->next->valuestring;
      al = strlen(a), bl = strlen(b);
    } else {
      return ferr(L, RLX_ERR_FORMAT, w, "must be \"a b\" or [\"a\", \"b\"]", NULL);
    }
    if (al > TK_MAX_TOKEN || bl > TK_MAX_TOKEN) return ferr(L, RLX_ERR_UNSUPPORTED, w, "has a token longer than 1024 bytes", NULL);
    int32_t ia = tk_vocab_get(&m->vocab, a, al), ib = tk_vocab_get(&m->vocab, b, bl);
    memcpy(buf, a, al);
    size_t skip = plen && bl >= plen && !memcmp(b, m->prefix, plen) ? plen : 0;
    memcpy(buf + al, b + skip, bl - skip);
    int32_t ic = tk_vocab_get(&m->vocab, buf, al + bl - skip);
    if (ia < 0 || ib < 0 || ic < 0) {
      const char *name = ia < 0 ? a : ib < 0 ? b : buf;
      size_t nl = ia < 0 ? al : ib < 0 ? bl : al + bl - skip;
      char missing[TK_MAX_TOKEN * 2 + 1];
      memcpy(missing, name, nl);
      missing[nl] = '\0';
      return ferr(L, RLX_ERR_FORMAT, w, "names a token that is not in the vocab ('%s')", missing);
    }
    rlx_status st = tk_merges_put(m, ia, ib, rank, ic);
    if (st) return st;
    rank++;
  }
  return RLX_OK;
}

static rlx_status load_model(tk_loader *L, const cJSON *jm, tk_model *m) {
  if (!cJSON_IsObject(jm)) return ferr(L, RLX_ERR_FORMAT, "model", "must be an object", NULL);
  const char *type = NULL;
  rlx_status st = get_str(L, jm, "type", "model", false, &type);
  if (st) return st;
  if (!type) type = get(jm, "merges") ? "BPE" : "";
  m->unk = -1;
  if (!strcmp(type, "BPE")) {
    m->kind = MODEL_BPE;
    const cJSON *drop = get(jm, "dropout");
    if (!is_null(drop) && !(cJSON_IsNumber(drop) && drop->valuedouble == 0.0))
      return ferr(L, RLX_ERR_UNSUPPORTED, "model.dropout", "must be null (BPE dropout is random)", NULL);
    if ((st = get_str(L, jm, "continuing_subword_prefix", "model", false, &m->prefix))) return st;
    if ((st = get_str(L, jm, "end_of_word_suffix", "model", false, &m->suffix))) return st;
    if ((st = get_bool(L, jm, "fuse_unk", "model", false, &m->fuse_unk))) return st;
    if ((st = get_bool(L, jm, "byte_fallback", "model", false, &m->byte_fallback))) return st;
    if ((st = get_bool(L, jm, "ignore_merges", "model", false, &m->ignore_merges))) return st;
  } else if (!strcmp(type, "WordPiece")) {
    int64_t mx = 100;
    m->kind = MODEL_WORDPIECE;
    if ((st = get_str(L, jm, "continuing_subword_prefix", "model", false, &m->prefix))) return st;
    if (!m->prefix) m->prefix = "##";
    if (get(jm, "max_input_chars_per_word") && (st = get_int(L, jm, "max_input_chars_per_word", "model", 0, INT32_MAX, &mx)))
      return st;
    m->max_chars = (int32_t)mx;
  } else if (!strcmp(type, "WordLevel")) {
    m->kind = MODEL_WORDLEVEL;
  } else {
    return unsupported_type(L, "model", type);
  }
  if ((st = get_str(L, jm, "unk_token", "model", false, &m->unk_token))) return st;
  if ((st = load_vocab(L, jm, m))) return st;
  if (m->unk_token) m->unk = tk_vocab_get(&m->vocab, m->unk_token, strlen(m->unk_token));
  if (m->kind == MODEL_BPE) {
    for (int b = 0; b < 256; b++) {
      char name[8];
      snprintf(name, sizeof name, "<0x%02X>", b);
      m->byte_ids[b] = tk_vocab_get(&m->vocab, name, 6);
    }
    return load_merges(L, jm, m);
  }
  return RLX_OK;
}

/* ---- added tokens and post-processors ---- */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static rlx_status load_added(tk_loader *L, const cJSON *arr) {
  rlx_tokenizer *t = L->t;
  if (is_null(arr)) return RLX_OK;
  if (!cJSON_IsArray(arr)) return ferr(L, RLX_ERR_FORMAT, "added_tokens", "must be a list", NULL);
  int count = cJSON_GetArraySize(arr);
  if (count > TK_MAX_VOCAB) return ferr(L, RLX_ERR_UNSUPPORTED, "added_tokens", "has too many entries", NULL);
  t->added = rlx_pool_alloc(&t->pool, sizeof *t->added * (size_t)(count ? count : 1));
  if (!t->added) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading %s", L->path);
  const cJSON *e;
  int i = 0;
  cJSON_ArrayForEach(e, arr) {
    char w[WHERE_CAP];
    snprintf(w, sizeof w, "added_tokens[%d]", i);
    if (!cJSON_IsObject(e)) return ferr(L, RLX_ERR_FORMAT, w, "must be an object", NULL);
    tk_added *a = &t->added[i];
    int64_t id;
    const char *content = NULL;
    rlx_status st = get_int(L, e, "id", w, 0, TK_MAX_VOCAB - 1, &id);
    if (!st) st = get_str(L, e, "content", w, true, &content);
    if (!st) st = get_bool(L, e, "special", w, false, &a->special);
    if (!st) st = get_bool(L, e, "lstrip", w, false, &a->lstrip);
    if (!st) st = get_bool(L, e, "rstrip", w, false, &a->rstrip);
    if (!st) st = get_bool(L, e, "single_word", w, false, &a->single_word);
    if (!st) st = get_bool(L, e, "normalized", w, !a->special, &a->normalized);
    if (st) return st;
    if (!content[0]) return ferr(L, RLX_ERR_FORMAT, w, "has an empty content", NULL);
    a->id = (int32_t)id;
    if ((st = pool_cps(L, content, &a->cps, &a->n_cps))) return st;
    if ((st = tk_vocab_put(&t->ids, &t->pool, content, strlen(content), a->id))) return st;
    if (a->normalized && t->norm) {
      /* matched against normalized text, so normalized too; and as in
       * tokenizers, the id then decodes to the normalized form */
      rlx_uc_buf b = {0};
      st = rlx_uc_from_utf8(&b, content, strlen(content));
      if (!st) st = tk_normalize(t->norm, &b);
      char *u = NULL;
      if (!st && b.n > 0) {
        a->cps = rlx_pool_alloc(&t->pool, (size_t)b.n * sizeof *a->cps);
        u = rlx_pool_alloc(&t->pool, 4 * (size_t)b.n + 1);
        if (!a->cps || !u) st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading %s", L->path);
      }
      if (!st && b.n > 0) {
        size_t ul = 0;
        memcpy(a->cps, b.v, (size_t)b.n * sizeof *a->cps), a->n_cps = b.n;
        for (int32_t k = 0; k < b.n; k++) ul += (size_t)rlx_utf8_encode(b.v[k], u + ul);
        st = tk_vocab_put(&t->ids, &t->pool, u, ul, a->id);
      }
      rlx_uc_buf_free(&b);
      if (st) return st;
    }
    i++;
  }
  t->n_added = i;
  /* sorted by first code point, for the matcher's binary search */
  t->added_order = rlx_pool_alloc(&t->pool, sizeof *t->added_order * (size_t)(i ? i : 1));
  uint64_t *keys = rlx_malloc(sizeof *keys * (size_t)(i ? i : 1));
  if (!t->added_order || !keys) {
    rlx_free(keys);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading %s", L->path);
  }
  for (int32_t k = 0; k < i; k++) keys[k] = (uint64_t)t->added[k].cps[0] << 32 | (uint32_t)k;
  qsort(keys, (size_t)i, sizeof *keys, cmp_u64);
  for (int32_t k = 0; k < i; k++) t->added_order[k] = (int32_t)(uint32_t)keys[k];
  rlx_free(keys);
  return RLX_OK;
}

static rlx_status push_ids(tk_loader *L, int32_t **v, int32_t *n, const int32_t *src, int32_t k) {
  int32_t *nv = rlx_pool_alloc(&L->t->pool, sizeof *nv * (size_t)(*n + k + 1));
  if (!nv) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading %s", L->path);
  if (*n) memcpy(nv, *v, (size_t)*n * sizeof *nv);
  if (k) memcpy(nv + *n, src, (size_t)k * sizeof *nv);
  *v = nv;
  *n += k;
  return RLX_OK;
}

/* A [token, id] pair of BertProcessing / RobertaProcessing. */
static rlx_status load_pair_id(tk_loader *L, const cJSON *j, const char *key, const char *where, int32_t *id) {
  const cJSON *p = get(j, key);
  char w[WHERE_CAP];
  snprintf(w, sizeof w, "%s.%s", where, key);
  int64_t v = 0;
  if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) != 2 || !cJSON_IsString(p->child) ||
      rlx_json_int(p->child->next, w, &v) || v < 0 || v >= TK_MAX_VOCAB)
    return ferr(L, RLX_ERR_FORMAT, w, "must be [token, id]", NULL);
  *id = (int32_t)v;
  return RLX_OK;
}

/* Applies one post-processor to (pre, post): the new ids wrap the old. */
static rlx_status load_post(tk_loader *L, const cJSON *j, const char *where, int depth, tk_post *p) {
  const char *type = NULL;
  rlx_status st = get_type(L, j, where, &type);
  if (st) return st;
  if (depth > 16) return ferr(L, RLX_ERR_UNSUPPORTED, where, "nests Sequences deeper than 16", NULL);
  if (!strcmp(type, "ByteLevel")) return RLX_OK; /* offsets only */
  if (!strcmp(type, "Sequence")) {
    const cJSON *arr = get(j, "processors"), *e;
    char w[WHERE_CAP];
    snprintf(w, sizeof w, "%s.processors", where);
    if (!cJSON_IsArray(arr)) return ferr(L, RLX_ERR_FORMAT, w, "must be a list", NULL);
    int i = 0;
    cJSON_ArrayForEach(e, arr) {
      char w2[WHERE_CAP + 16];
      snprintf(w2, sizeof w2, "%s[%d]", w, i++);
      if ((st = load_post(L, e, w2, depth + 1, p))) return st;
    }
    return RLX_OK;
  }
  int32_t pre[64], post[64], np = 0, nq = 0;
  if (!strcmp(type, "BertProcessing") || !strcmp(type, "RobertaProcessing")) {
    if ((st = load_pair_id(L, j, "cls", where, &pre[0]))) return st;
    if ((st = load_pair_id(L, j, "sep", where, &post[0]))) return st;
    np = nq = 1;
  } else if (!strcmp(type, "TemplateProcessing")) {
    const cJSON *single = get(j, "single"), *specials = get(j, "special_tokens"), *e;
    char w[WHERE_CAP];
    snprintf(w, sizeof w, "%s.single", where);
    if (!cJSON_IsArray(single)) return ferr(L, RLX_ERR_FORMAT, w, "must be a list", NULL);
    bool seen = false;
    int i = 0;
    cJSON_ArrayForEach(e, single) {
      char wi[WHERE_CAP + 16];
      snprintf(wi, sizeof wi, "%s[%d]", w, i++);
      const cJSON *sp = get(e, "SpecialToken"), *sq = get(e, "Sequence");
      if (sq) {
        const char *sid = NULL;
        if ((st = get_str(L, sq, "id", wi, true, &sid))) return st;
        if (strcmp(sid, "A") || seen) return ferr(L, RLX_ERR_UNSUPPORTED, wi, "must be the one sequence $A", NULL);
        seen = true;
        continue;
      }
      const char *name = NULL;
      if (!sp || (st = get_str(L, sp, "id", wi, true, &name)))
        return st ? st : ferr(L, RLX_ERR_FORMAT, wi, "must be {\"SpecialToken\": ...} or {\"Sequence\": ...}", NULL);
      const cJSON *tok = cJSON_IsObject(specials) ? get(specials, name) : NULL, *ids = tok ? get(tok, "ids") : NULL, *x;
      if (!cJSON_IsArray(ids))
        return ferr(L, RLX_ERR_FORMAT, where, "special_tokens has no ids for '%s'", name);
      cJSON_ArrayForEach(x, ids) {
        int64_t v = 0;
        if (rlx_json_int(x, "id", &v) || v < 0 || v >= TK_MAX_VOCAB)
          return ferr(L, RLX_ERR_FORMAT, where, "special_tokens['%s'].ids must be ids", name);
        if ((seen ? nq : np) >= 64) return ferr(L, RLX_ERR_UNSUPPORTED, where, "has more than 64 special ids", NULL);
        if (seen) post[nq++] = (int32_t)v;
        else pre[np++] = (int32_t)v;
      }
    }
    if (!seen) return ferr(L, RLX_ERR_UNSUPPORTED, w, "has no $A sequence", NULL);
  } else {
    return unsupported_type(L, where, type);
  }
  /* ids = pre + (p->pre + seq + p->post) + post */
  int32_t *npre = NULL, n_npre = 0;
  if ((st = push_ids(L, &npre, &n_npre, pre, np)) || (st = push_ids(L, &npre, &n_npre, p->pre, p->n_pre))) return st;
  p->pre = npre, p->n_pre = n_npre;
  return push_ids(L, &p->post, &p->n_post, post, nq);
}

/* ---- the whole file ---- */

rlx_status tk_load_json(rlx_tokenizer *t, const cJSON *root, const char *path) {
  tk_loader L = {t, path};
  rlx_status st;
  if (!cJSON_IsObject(root)) return ferr(&L, RLX_ERR_FORMAT, "", "the top level must be an object", NULL);
  const cJSON *j;
  if (!is_null(j = get(root, "normalizer"))) {
    if (!(t->norm = rlx_pool_alloc(&t->pool, sizeof *t->norm))) return RLX_ERR_OUT_OF_MEMORY;
    if ((st = load_norm(&L, j, "normalizer", 0, t->norm))) return st;
  }
  if (!is_null(j = get(root, "pre_tokenizer"))) {
    if (!(t->pre = rlx_pool_alloc(&t->pool, sizeof *t->pre))) return RLX_ERR_OUT_OF_MEMORY;
    if ((st = load_pre(&L, j, "pre_tokenizer", 0, t->pre))) return st;
  }
  if (!is_null(j = get(root, "decoder"))) {
    if (!(t->dec = rlx_pool_alloc(&t->pool, sizeof *t->dec))) return RLX_ERR_OUT_OF_MEMORY;
    if ((st = load_dec(&L, j, "decoder", 0, t->dec))) return st;
  }
  if (!is_null(j = get(root, "post_processor"))) {
    t->has_post = true;
    if ((st = load_post(&L, j, "post_processor", 0, &t->post))) return st;
  }
  if ((st = load_model(&L, get(root, "model"), &t->model))) return st;
  /* the id table: the model's tokens, then the added tokens over them */
  const tk_vocab *mv = &t->model.vocab;
  if ((st = tk_vocab_reserve(&t->ids, mv->count + 256, mv->n))) return st;
  for (int32_t id = 0; id < mv->n; id++)
    if (mv->tok[id] && (st = tk_vocab_put(&t->ids, &t->pool, mv->tok[id], (size_t)mv->len[id], id))) return st;
  if ((st = load_added(&L, get(root, "added_tokens")))) return st;
  int32_t cap = 0;
  if ((st = rlx_grow((void **)&t->is_special, &cap, t->ids.n + 1, sizeof *t->is_special))) return st;
  for (int32_t i = 0; i < t->n_added; i++) t->is_special[t->added[i].id] = t->added[i].special;
  for (int32_t i = 0; i < t->post.n_pre + t->post.n_post; i++) {
    int32_t id = i < t->post.n_pre ? t->post.pre[i] : t->post.post[i - t->post.n_pre];
    if (id >= t->ids.n || !t->ids.tok[id]) {
      char num[16];
      snprintf(num, sizeof num, "%d", id);
      return ferr(&L, RLX_ERR_FORMAT, "post_processor", "adds id %s, which no token has", num);
    }
  }
  if (t->ids.n == 0) return ferr(&L, RLX_ERR_FORMAT, "model.vocab", "is empty", NULL);
  return RLX_OK;
}
