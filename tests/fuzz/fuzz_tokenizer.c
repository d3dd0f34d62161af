/*
 * fuzz_tokenizer.c — libFuzzer target for the tokenizer: tokenizer.json
 * loading (every component, the regex compiler), encoding, decoding and
 * streaming.
 *
 * Input: a little-endian u16 length L, then L bytes of text to encode, then
 * the tokenizer.json text. The text is encoded (with and without special
 * tokens; invalid UTF-8 is refused with a status), the ids decoded in full
 * and streamed one at a time, and ids past the vocabulary pushed to check
 * they are refused. Only a crash, a sanitizer report or an RLX_ASSERT is a
 * finding.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  size_t tl = (size_t)data[0] | (size_t)data[1] << 8;
  if (tl > size - 2) tl = size - 2;
  const char *text = (const char *)data + 2, *json = text + tl;
  rlx_tokenizer *t = NULL;
  if (tk_tokenizer_from_text(json, size - 2 - tl, "fuzz", &t)) return 0;
  for (int special = 0; special < 2; special++) {
    size_t n = 0;
    if (rlx_tokenizer_encode(t, text, tl, special, NULL, 0, &n)) break;
    int32_t *ids = malloc((n + 2) * sizeof *ids);
    if (!ids) break;
    if (!rlx_tokenizer_encode(t, text, tl, special, ids, n, &n)) {
      ids[n] = rlx_tokenizer_vocab_size(t);
      ids[n + 1] = -1;
      size_t len = 0;
      char small[8];
      rlx_tokenizer_decode(t, ids, n, special, small, sizeof small, &len);
      rlx_tokenizer_decode(t, ids, n + 2, 0, small, sizeof small, &len);
      rlx_token_stream *s = NULL;
      if (!rlx_token_stream_create(t, special, &s)) {
        const char *piece;
        for (size_t i = 0; i < n + 2; i++) rlx_token_stream_push(s, ids[i], &piece, &len);
        rlx_token_stream_flush(s, &piece, &len);
        rlx_token_stream_destroy(s);
      }
    }
    free(ids);
  }
  for (int32_t id = -1; id <= rlx_tokenizer_vocab_size(t); id++) rlx_tokenizer_id_to_token(t, id);
  rlx_tokenizer_destroy(t);
  return 0;
}
