/*
 * unicode.h — the Unicode the tokenizer needs: UTF-8, general categories,
 * White_Space, normalization forms (NFD, NFC, NFKD, NFKC), lowercase and
 * simple case folding. Tables are generated (unicode_data.c, by
 * scripts/gen_unicode.py from Python's unicodedata; rlx_uc_version names the
 * Unicode version).
 *
 * Code points are uint32_t; text is UTF-8. Nothing here allocates except
 * through rlx_uc_buf, a growable code-point buffer.
 */
#ifndef RLX_TEXT_UNICODE_H
#define RLX_TEXT_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

/* General categories; the order is the generator's CATS list. */
typedef enum rlx_uc_cat {
  RLX_UC_CN, RLX_UC_LU, RLX_UC_LL, RLX_UC_LT, RLX_UC_LM, RLX_UC_LO, RLX_UC_MN, RLX_UC_MC, RLX_UC_ME,
  RLX_UC_ND, RLX_UC_NL, RLX_UC_NO, RLX_UC_PC, RLX_UC_PD, RLX_UC_PS, RLX_UC_PE, RLX_UC_PI, RLX_UC_PF,
  RLX_UC_PO, RLX_UC_SM, RLX_UC_SC, RLX_UC_SK, RLX_UC_SO, RLX_UC_ZS, RLX_UC_ZL, RLX_UC_ZP, RLX_UC_CC,
  RLX_UC_CF, RLX_UC_CS, RLX_UC_CO, RLX_UC_CAT_COUNT
} rlx_uc_cat;

typedef struct rlx_uc_range { uint32_t lo, hi, v; } rlx_uc_range;
typedef struct rlx_uc_map { uint32_t cp, off, len; } rlx_uc_map;
typedef struct rlx_uc_pair { uint32_t a, b, c; } rlx_uc_pair;
typedef struct rlx_uc_foldpair { uint32_t cp, fold; } rlx_uc_foldpair;

extern const char rlx_uc_version[];
extern const rlx_uc_range rlx_uc_cats[], rlx_uc_cccs[];
extern const rlx_uc_map rlx_uc_canon[], rlx_uc_compat[], rlx_uc_lower[];
extern const rlx_uc_pair rlx_uc_comps[];
extern const rlx_uc_foldpair rlx_uc_folds[];
extern const uint32_t rlx_uc_pool[];
extern const uint32_t rlx_uc_cats_count, rlx_uc_cccs_count, rlx_uc_canon_count, rlx_uc_compat_count,
    rlx_uc_lower_count, rlx_uc_comps_count, rlx_uc_folds_count, rlx_uc_pool_count;

#define RLX_UC_REPLACEMENT 0xFFFDu

/* ---- UTF-8 ---- */

/* Decodes one code point from s[0..n) (n >= 1). Returns the bytes used
 * (1..4); a byte that does not start a valid, complete sequence yields
 * U+FFFD and the length of its maximal invalid subpart (Unicode's
 * "substitution of maximal subparts", as Rust's from_utf8_lossy). */
int rlx_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);
/* Whether s[0..n) is a prefix of a valid sequence that is cut short (so a
 * streaming decoder should wait for more bytes). */
bool rlx_utf8_incomplete(const unsigned char *s, size_t n);
/* Writes cp (<= 0x10FFFF, not a surrogate) as UTF-8 into out[4]; returns the length. */
int rlx_utf8_encode(uint32_t cp, char *out);

/* ---- properties ---- */

rlx_uc_cat rlx_uc_category(uint32_t cp);
static inline bool rlx_uc_is_letter(uint32_t cp) {
  rlx_uc_cat c = rlx_uc_category(cp);
  return c >= RLX_UC_LU && c <= RLX_UC_LO;
}
static inline bool rlx_uc_is_number(uint32_t cp) {
  rlx_uc_cat c = rlx_uc_category(cp);
  return c >= RLX_UC_ND && c <= RLX_UC_NO;
}
static inline bool rlx_uc_is_mark(uint32_t cp) {
  rlx_uc_cat c = rlx_uc_category(cp);
  return c >= RLX_UC_MN && c <= RLX_UC_ME;
}
static inline bool rlx_uc_is_punct(uint32_t cp) {
  rlx_uc_cat c = rlx_uc_category(cp);
  return c >= RLX_UC_PC && c <= RLX_UC_PO;
}
/* Cc, Cf, Cs, Co, Cn (Rust unicode_categories' is_other). */
static inline bool rlx_uc_is_other(uint32_t cp) {
  rlx_uc_cat c = rlx_uc_category(cp);
  return c == RLX_UC_CN || c >= RLX_UC_CC;
}
/* The White_Space property (Rust char::is_whitespace, Oniguruma \s). */
bool rlx_uc_is_space(uint32_t cp);
/* \w as UTS #18 (Oniguruma, Rust's regex): Alphabetic, marks, Nd,
 * connector punctuation, Join_Control. */
bool rlx_uc_is_word(uint32_t cp);
int rlx_uc_ccc(uint32_t cp);
/* Simple case folding (for case-insensitive regex matching). */
uint32_t rlx_uc_fold(uint32_t cp);

/* ---- code-point buffers and whole-string transforms ---- */

/* At most this many code points in a buffer, so 4 * n bytes of UTF-8 fit an int32. */
#define RLX_UC_MAX_LEN (1 << 28)

typedef struct rlx_uc_buf {
  uint32_t *v;
  int32_t n, cap;
} rlx_uc_buf;

rlx_status rlx_uc_push(rlx_uc_buf *b, uint32_t cp);
void rlx_uc_buf_free(rlx_uc_buf *b);
/* Appends the UTF-8 text s[0..n) as code points (invalid bytes -> U+FFFD). */
rlx_status rlx_uc_from_utf8(rlx_uc_buf *b, const char *s, size_t n);

typedef enum rlx_uc_form { RLX_UC_NFD, RLX_UC_NFC, RLX_UC_NFKD, RLX_UC_NFKC } rlx_uc_form;

/* Replaces b's contents with their normalization form `form`. */
rlx_status rlx_uc_normalize(rlx_uc_buf *b, rlx_uc_form form);
/* Replaces b's contents with their full lowercase, character by character
 * (as tokenizers' NormalizedString::lowercase: no final-sigma rule). */
rlx_status rlx_uc_lowercase(rlx_uc_buf *b);

#endif
