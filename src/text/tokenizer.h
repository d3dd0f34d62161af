/*
 * tokenizer.h — the internals of rlx_tokenizer: a Hugging Face
 * `tokenizer.json` read into typed stages, and the encode and decode
 * pipelines over them.
 *
 * Encoding follows the `tokenizers` library step for step:
 *
 *   text --added tokens (not normalized)--> segments --normalizer-->
 *   --added tokens (normalized)--> segments --pre-tokenizer--> pieces
 *   --model (BPE / WordPiece / WordLevel)--> ids --post-processor--> ids
 *
 * Text inside the pipeline is code points (rlx_uc_buf); a piece is a range
 * of one. Decoding maps ids to token strings and runs the decoder chain over
 * a list of byte strings (tk_list), then replaces invalid UTF-8 with U+FFFD.
 *
 * Files: tok_load.c (JSON -> stages, with the JSON path in every error),
 * tok_norm.c (normalizers and pre-tokenizers), tok_model.c (vocab, BPE,
 * WordPiece, WordLevel), tok_encode.c (added tokens, post-processors, the
 * public encode), tok_decode.c (decoders, decode, the stream).
 */
#ifndef RLX_TEXT_TOKENIZER_H
#define RLX_TEXT_TOKENIZER_H

#include <cjson/cJSON.h>

#include "core/core.h"
#include "text/regex.h"
#include "text/unicode.h"

#define TK_MAX_FILE ((size_t)1 << 30) /* bytes of tokenizer.json */
#define TK_MAX_TOKEN 1024             /* bytes of one vocab or added token */
#define TK_MAX_VOCAB (1 << 24)        /* ids */
#define TK_MAX_TEXT ((size_t)1 << 28) /* bytes of text to encode */

/* ---- a vocabulary: id <-> byte string ---- */

typedef struct tk_vocab {
  char **tok;      /* [n] id -> NUL-terminated token (pool), NULL for a gap */
  int32_t *len;    /* [n] */
  uint32_t *hash;  /* [n] the hash of tok[id], kept for rehashing and probing */
  int32_t n;       /* max id + 1 */
  int32_t idcap;   /* allocated entries of tok and len */
  int32_t *slots;  /* open-addressing hash of ids, -1 empty, [cap] */
  uint32_t cap, count;
} tk_vocab;

int32_t tk_vocab_get(const tk_vocab *v, const char *s, size_t len);
/* Sizes the table for `count` strings and ids below `ids` (avoids regrowth). */
rlx_status tk_vocab_reserve(tk_vocab *v, uint32_t count, int32_t ids);
rlx_status tk_vocab_put(tk_vocab *v, rlx_pool *pool, const char *s, size_t len, int32_t id);
void tk_vocab_free(tk_vocab *v);

/* ---- normalizers ---- */

typedef enum tk_norm_kind {
  NORM_SEQUENCE, NORM_NFC, NORM_NFD, NORM_NFKC, NORM_NFKD, NORM_LOWERCASE, NORM_STRIP,
  NORM_STRIP_ACCENTS, NORM_REPLACE, NORM_PREPEND, NORM_BERT
} tk_norm_kind;

/* A literal or regex pattern (Split, Replace). */
typedef struct tk_pattern {
  rlx_regex *re;   /* a Regex pattern, or NULL */
  uint32_t *lit;   /* a String pattern as code points (pool) */
  int32_t lit_len;
} tk_pattern;

typedef struct tk_norm {
  tk_norm_kind kind;
  struct tk_norm *kids; /* SEQUENCE */
  int32_t n_kids;
  bool left, right;     /* STRIP */
  tk_pattern pat;       /* REPLACE */
  uint32_t *content;    /* REPLACE, PREPEND: code points (pool) */
  int32_t content_len;
  bool clean_text, chinese, strip_accents, lowercase; /* BERT */
} tk_norm;

/* ---- pre-tokenizers ---- */

typedef enum tk_pre_kind {
  PRE_SEQUENCE, PRE_BYTE_LEVEL, PRE_SPLIT, PRE_METASPACE, PRE_DIGITS, PRE_BERT, PRE_WHITESPACE,
  PRE_WHITESPACE_SPLIT, PRE_PUNCTUATION
} tk_pre_kind;

typedef enum tk_split_mode {
  SPLIT_REMOVED, SPLIT_ISOLATED, SPLIT_MERGED_PREV, SPLIT_MERGED_NEXT, SPLIT_CONTIGUOUS
} tk_split_mode;

typedef enum tk_prepend { PREPEND_ALWAYS, PREPEND_FIRST, PREPEND_NEVER } tk_prepend;

typedef struct tk_pre {
  tk_pre_kind kind;
  struct tk_pre *kids;  /* SEQUENCE */
  int32_t n_kids;
  bool add_prefix_space, use_regex; /* BYTE_LEVEL */
  tk_pattern pat;       /* SPLIT */
  tk_split_mode mode;   /* SPLIT, PUNCTUATION */
  bool invert;          /* SPLIT */
  uint32_t replacement; /* METASPACE */
  tk_prepend prepend;   /* METASPACE */
  bool split;           /* METASPACE */
  bool individual;      /* DIGITS */
} tk_pre;

/* ---- the model ---- */

typedef enum tk_model_kind { MODEL_BPE, MODEL_WORDPIECE, MODEL_WORDLEVEL } tk_model_kind;

typedef struct tk_merge { uint64_t key; int32_t rank, id; } tk_merge;

typedef struct tk_model {
  tk_model_kind kind;
  tk_vocab vocab;
  int32_t unk;                 /* id of unk_token, or -1 */
  const char *unk_token;
  const char *prefix;          /* continuing_subword_prefix, or NULL */
  const char *suffix;          /* end_of_word_suffix (BPE), or NULL */
  bool fuse_unk, byte_fallback, ignore_merges;
  int32_t byte_ids[256];       /* BPE byte_fallback: id of <0xNN>, or -1 */
  tk_merge *merges;            /* hash (key = a << 32 | b), key 0 with id -1 is empty */
  uint32_t merges_cap, merges_count;
  int32_t max_chars;           /* WordPiece max_input_chars_per_word */
} tk_model;

/* ---- post-processors ---- */

typedef struct tk_post {
  int32_t *pre, *post; /* ids before and after the sequence (single) */
  int32_t n_pre, n_post;
} tk_post;

/* ---- decoders ---- */

typedef enum tk_dec_kind {
  DEC_SEQUENCE, DEC_BYTE_LEVEL, DEC_METASPACE, DEC_WORDPIECE, DEC_REPLACE, DEC_BYTE_FALLBACK, DEC_FUSE,
  DEC_STRIP, DEC_BPE
} tk_dec_kind;

typedef struct tk_dec {
  tk_dec_kind kind;
  struct tk_dec *kids;
  int32_t n_kids;
  uint32_t replacement; /* METASPACE */
  bool strip_first;     /* METASPACE: prepend_scheme != never */
  const char *prefix;   /* WORDPIECE */
  bool cleanup;         /* WORDPIECE */
  tk_pattern pat;       /* REPLACE */
  const char *content;  /* REPLACE (UTF-8), STRIP (one character), BPE (the suffix) */
  int32_t start, stop;  /* STRIP */
} tk_dec;

/* ---- added tokens ---- */

typedef struct tk_added {
  int32_t id;
  uint32_t *cps;  /* the content (normalized, for a `normalized` token), pool */
  int32_t n_cps;
  bool special, lstrip, rstrip, single_word, normalized;
} tk_added;

struct rlx_tokenizer {
  rlx_pool pool;
  tk_norm *norm;      /* NULL: none */
  tk_pre *pre;        /* NULL: none */
  tk_model model;
  tk_post post;
  bool has_post;
  tk_dec *dec;        /* NULL: tokens joined with spaces */
  tk_added *added;
  int32_t n_added;
  int32_t *added_order; /* [n_added] indices of `added` sorted by first code point (pool) */
  tk_vocab ids;       /* every id's string: the model's and the added tokens' */
  bool *is_special;   /* [ids.n] */
  rlx_regex **regexes; /* every compiled pattern, for destroy */
  int32_t n_regexes, cap_regexes;
};

/* ---- stages (tok_norm.c) ---- */

rlx_status tk_normalize(const tk_norm *n, rlx_uc_buf *b);

/* Pieces: ranges of a code-point buffer; at_start marks the piece that
 * begins the original text (Metaspace's prepend_scheme "first"). */
typedef struct tk_piece { int32_t off, len; bool at_start; } tk_piece;
typedef struct tk_pieces {
  rlx_uc_buf text;
  tk_piece *v;
  int32_t n, cap;
} tk_pieces;

rlx_status tk_pieces_add(tk_pieces *p, const uint32_t *cps, int32_t len, bool at_start);
void tk_pieces_free(tk_pieces *p);
/* Runs the pre-tokenizer over *p (replacing it). */
rlx_status tk_pre_tokenize(const tk_pre *pre, tk_pieces *p);
/* Finds the matches of pattern in s[0..n), as Hugging Face's Pattern trait:
 * calls back with (start, end) of each non-empty match. */
rlx_status tk_pattern_find(const tk_pattern *pat, const uint32_t *s, int32_t n, int32_t from,
                           bool *found, int32_t *ms, int32_t *me);
/* Byte-level alphabet: byte -> code point, and code point -> byte or -1. */
uint32_t tk_byte_to_cp(unsigned b);
int tk_cp_to_byte(uint32_t cp);

/* ---- model (tok_model.c) ---- */

/* Appends the ids of one piece (UTF-8 s[0..n)) to *ids. */
rlx_status tk_model_tokenize(const tk_model *m, const char *s, int32_t n, int32_t **ids, int32_t *n_ids,
                             int32_t *cap);
rlx_status tk_merges_put(tk_model *m, int32_t a, int32_t b, int32_t rank, int32_t id);
void tk_model_free(tk_model *m);

/* ---- loading (tok_load.c) ---- */

rlx_status tk_load_json(rlx_tokenizer *t, const cJSON *root, const char *path);
/* rlx_tokenizer_load from a buffer (`name` stands for the file in messages). */
rlx_status tk_tokenizer_from_text(const char *text, size_t len, const char *name, rlx_tokenizer **out);

#endif
