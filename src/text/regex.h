/*
 * regex.h — a small backtracking regex engine over code points, for the
 * pre-tokenizer split patterns of Hugging Face tokenizers (which run them
 * with Oniguruma): leftmost-first alternation, greedy and lazy quantifiers
 * (* + ? {m} {m,} {m,n}), groups (plain ones do not capture), (?i:...) and
 * (?i), lookahead (?=...) (?!...), classes with ranges, negation and the
 * escapes \p{..} \P{..} (general categories, one or two letters) \s \S \d \D
 * \w \W, \r \n \t \f \v \xHH \x{H..} \uHHHH, anchors ^ $ \A \z \Z, and `.`
 * (not newline). What it does not handle (backreferences, lookbehind,
 * possessive quantifiers, named groups, class set operations, unbounded
 * repetition of something that can match empty) is refused at compile time
 * with RLX_ERR_UNSUPPORTED naming the construct and its offset.
 *
 * Matching is bounded: a search that takes more than a step budget
 * proportional to the subject fails with RLX_ERR_UNSUPPORTED (catastrophic
 * backtracking) rather than running for ever.
 */
#ifndef RLX_TEXT_REGEX_H
#define RLX_TEXT_REGEX_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"

typedef struct rlx_regex rlx_regex;

/* Compiles the UTF-8 pattern; errors name `where` (a JSON path). */
rlx_status rlx_regex_compile(const char *pattern, const char *where, rlx_regex **out);
void rlx_regex_destroy(rlx_regex *re);

/* Searches s[from..n) for the leftmost match (lookahead sees up to n).
 * *found says whether there was one, [*ms, *me) is where. */
rlx_status rlx_regex_find(const rlx_regex *re, const uint32_t *s, int32_t n, int32_t from,
                          bool *found, int32_t *ms, int32_t *me);

#endif
