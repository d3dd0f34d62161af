/*
 * test_tokenizer.c — the tokenizer on hand-built tokenizer.json files with
 * hand-computed ids (byte-level BPE, byte-fallback BPE, WordPiece), the
 * regex engine and the Unicode normalization forms directly, streaming
 * decode of split multi-byte characters and invalid UTF-8, errors that
 * name the JSON path, and out-of-memory at every allocation of a load and
 * an encode (run under ASan: no crash, no leak).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "text/regex.h"
#include "text/unicode.h"

/* ---- helpers ---- */

static char g_path[64];

/* Writes json to a fresh temporary file; returns its path (static). */
static const char *write_json(const char *json) {
  strcpy(g_path, "/tmp/rlx_tok_XXXXXX");
  int fd = mkstemp(g_path);
  if (fd < 0) return NULL;
  size_t n = strlen(json);
  if (write(fd, json, n) != (ssize_t)n) n = 0;
  close(fd);
  return g_path;
}

static rlx_tokenizer *load(const char *json) {
  rlx_tokenizer *t = NULL;
  const char *p = write_json(json);
  rlx_status st = rlx_tokenizer_load(p, &t);
  if (st) fprintf(stderr, "load failed: %s\n", rlx_last_error());
  unlink(p);
  return t;
}

static rlx_status load_status(const char *json) {
  rlx_tokenizer *t = NULL;
  const char *p = write_json(json);
  rlx_status st = rlx_tokenizer_load(p, &t);
  unlink(p);
  rlx_tokenizer_destroy(t);
  return st;
}

/* Encodes and compares with want[0..n). */
static int encode_is(const rlx_tokenizer *t, const char *text, int special, const int32_t *want, size_t n) {
  int32_t ids[64];
  size_t got = 0;
  rlx_status st = rlx_tokenizer_encode(t, text, strlen(text), special, ids, 64, &got);
  if (st) {
    fprintf(stderr, "encode '%s': %s\n", text, rlx_last_error());
    return 0;
  }
  int ok = got == n && (n == 0 || !memcmp(ids, want, n * sizeof *ids));
  if (!ok) {
    fprintf(stderr, "encode '%s': got", text);
    for (size_t i = 0; i < got; i++) fprintf(stderr, " %d", ids[i]);
    fprintf(stderr, "\n");
  }
  return ok;
}

static int decode_is(const rlx_tokenizer *t, const int32_t *ids, size_t n, int skip, const char *want) {
  char buf[256];
  size_t len = 0;
  if (rlx_tokenizer_decode(t, ids, n, skip, buf, sizeof buf, &len)) return 0;
  int ok = len == strlen(want) && !strcmp(buf, want);
  if (!ok) fprintf(stderr, "decode: got '%s', want '%s'\n", buf, want);
  return ok;
}

/* Streams ids and returns the concatenation (static); pieces[i] gets each push's text. */
static const char *stream_all(const rlx_tokenizer *t, const int32_t *ids, size_t n, char pieces[][16]) {
  static char all[256];
  all[0] = '\0';
  rlx_token_stream *s = NULL;
  if (rlx_token_stream_create(t, 0, &s)) return "(create failed)";
  for (size_t i = 0; i <= n; i++) {
    const char *p;
    size_t len;
    rlx_status st = i < n ? rlx_token_stream_push(s, ids[i], &p, &len) : rlx_token_stream_flush(s, &p, &len);
    if (st) {
      rlx_token_stream_destroy(s);
      return "(push failed)";
    }
    if (pieces && i < n) snprintf(pieces[i], 16, "%s", p);
    strncat(all, p, sizeof all - strlen(all) - 1);
  }
  rlx_token_stream_destroy(s);
  return all;
}

/* ---- tokenizers ---- */

/* Byte-level BPE, GPT-2 layout. "hello" merges h e -> he, l l -> ll,
 * he ll -> hell, hell o -> hello; " world" is Ġworld: Ġ w -> Ġw, o r -> or,
 * Ġw or -> Ġwor, then l and d stay. */
static const char gpt2_json[] =
    "{\"version\":\"1.0\",\"added_tokens\":[{\"id\":15,\"content\":\"<|endoftext|>\",\"single_word\":false,"
    "\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true}],"
    "\"normalizer\":null,"
    "\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":true},"
    "\"post_processor\":{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":false,\"use_regex\":true},"
    "\"decoder\":{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":true},"
    "\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":null,\"continuing_subword_prefix\":null,"
    "\"end_of_word_suffix\":null,\"fuse_unk\":false,\"byte_fallback\":false,\"ignore_merges\":false,"
    "\"vocab\":{\"h\":0,\"e\":1,\"l\":2,\"o\":3,\"\xC4\xA0\":4,\"w\":5,\"r\":6,\"d\":7,\"he\":8,\"ll\":9,"
    "\"hell\":10,\"hello\":11,\"\xC4\xA0w\":12,\"or\":13,\"\xC4\xA0wor\":14,\"<|endoftext|>\":15,"
    "\"\xC3\xA2\":16,\"\xC4\xA4\":17,\"\xC2\xAC\":18},"
    "\"merges\":[\"h e\",\"l l\",\"he ll\",[\"hell\",\"o\"],\"\xC4\xA0 w\",\"o r\",\"\xC4\xA0w or\"]}}";

TEST(bytelevel_bpe) {
  rlx_tokenizer *t = load(gpt2_json);
  CHECK(t != NULL);
  if (!t) return;
  CHECK(encode_is(t, "hello", 1, (int32_t[]){11}, 1));
  CHECK(encode_is(t, "hello world", 1, (int32_t[]){11, 14, 2, 7}, 4));
  CHECK(encode_is(t, "hello world<|endoftext|>hello", 1, (int32_t[]){11, 14, 2, 7, 15, 11}, 6));
  CHECK(encode_is(t, "", 1, NULL, 0));
  /* characters outside the vocab are dropped when there is no unk_token (tokenizers' rule) */
  CHECK(encode_is(t, "hex", 0, (int32_t[]){8}, 1));
  CHECK(decode_is(t, (int32_t[]){11, 14, 2, 7}, 4, 0, "hello world"));
  CHECK(decode_is(t, (int32_t[]){11, 15}, 2, 0, "hello<|endoftext|>"));
  CHECK(decode_is(t, (int32_t[]){11, 15}, 2, 1, "hello"));
  int32_t id = -1;
  CHECK_OK(rlx_tokenizer_token_id(t, "<|endoftext|>", &id));
  CHECK(id == 15);
  CHECK_ERR(rlx_tokenizer_token_id(t, "nope", &id), RLX_ERR_NOT_FOUND, "nope");
  CHECK(rlx_tokenizer_vocab_size(t) == 19);
  CHECK(!strcmp(rlx_tokenizer_id_to_token(t, 11), "hello"));
  CHECK(rlx_tokenizer_id_to_token(t, 19) == NULL && rlx_tokenizer_id_to_token(t, -1) == NULL);
  CHECK(rlx_tokenizer_is_special(t, 15) && !rlx_tokenizer_is_special(t, 11));
  /* cap too small: the needed count comes back, the first cap ids are written */
  int32_t two[2] = {-1, -1};
  size_t n = 0;
  CHECK_OK(rlx_tokenizer_encode(t, "hello world", 11, 1, two, 1, &n));
  CHECK(n == 4 && two[0] == 11 && two[1] == -1);
  CHECK_OK(rlx_tokenizer_encode(t, "hello world", 11, 1, NULL, 0, &n));
  CHECK(n == 4);
  /* decode into a short buffer: truncated, NUL-terminated, full length reported */
  char small[4];
  size_t len = 0;
  CHECK_OK(rlx_tokenizer_decode(t, (int32_t[]){11}, 1, 0, small, sizeof small, &len));
  CHECK(len == 5 && !strcmp(small, "hel"));
  /* invalid UTF-8 input is refused, naming the byte */
  CHECK_ERR(rlx_tokenizer_encode(t, "a\xC3(", 3, 1, two, 2, &n), RLX_ERR_INVALID_ARGUMENT, "byte 1");
  CHECK_ERR(rlx_tokenizer_decode(t, (int32_t[]){99}, 1, 0, small, 4, &len), RLX_ERR_INVALID_ARGUMENT, "id 99");
  rlx_tokenizer_destroy(t);
}

TEST(bytelevel_stream) {
  rlx_tokenizer *t = load(gpt2_json);
  if (!t) return;
  /* U+20AC (E2 82 AC) is â (C3 A2 -> byte E2), Ĥ (byte 82), ¬ (byte AC) in the byte-level alphabet */
  int32_t euro[] = {11, 16, 17, 18, 11};
  char pieces[8][16];
  CHECK(!strcmp(stream_all(t, euro, 5, pieces), "hello\xE2\x82\xAChello"));
  CHECK(!strcmp(pieces[0], "hello") && !strcmp(pieces[1], "") && !strcmp(pieces[2], ""));
  CHECK(!strcmp(pieces[3], "\xE2\x82\xAC") && !strcmp(pieces[4], "hello"));
  CHECK(decode_is(t, euro, 5, 0, "hello\xE2\x82\xAChello"));
  /* a lone lead byte followed by ASCII: U+FFFD, as from_utf8_lossy */
  int32_t bad[] = {16, 11};
  CHECK(!strcmp(stream_all(t, bad, 2, pieces), "\xEF\xBF\xBDhello"));
  CHECK(decode_is(t, bad, 2, 0, "\xEF\xBF\xBDhello"));
  /* a truncated sequence at the end comes out at the flush as U+FFFD */
  int32_t cut[] = {11, 16, 17};
  CHECK(!strcmp(stream_all(t, cut, 3, pieces), "hello\xEF\xBF\xBD"));
  CHECK(decode_is(t, cut, 3, 0, "hello\xEF\xBF\xBD"));
  rlx_tokenizer_destroy(t);
}

/* SentencePiece-style BPE, Llama-2 layout: Prepend + Replace normalizer,
 * byte fallback, fuse_unk, BOS from TemplateProcessing. */
static const char llama2_json[] =
    "{\"added_tokens\":[{\"id\":0,\"content\":\"<unk>\",\"special\":true},"
    "{\"id\":1,\"content\":\"<s>\",\"special\":true,\"normalized\":false}],"
    "\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Prepend\",\"prepend\":\"\xE2\x96\x81\"},"
    "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"\xE2\x96\x81\"}]},"
    "\"pre_tokenizer\":null,"
    "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"<s>\",\"type_id\":0}},"
    "{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}],\"pair\":[],\"special_tokens\":{\"<s>\":{\"id\":\"<s>\","
    "\"ids\":[1],\"tokens\":[\"<s>\"]}}},"
    "\"decoder\":{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\",\"pattern\":{\"String\":\"\xE2\x96\x81\"},"
    "\"content\":\" \"},{\"type\":\"ByteFallback\"},{\"type\":\"Fuse\"},{\"type\":\"Strip\",\"content\":\" \","
    "\"start\":1,\"stop\":0}]},"
    "\"model\":{\"type\":\"BPE\",\"unk_token\":\"<unk>\",\"fuse_unk\":true,\"byte_fallback\":true,"
    "\"vocab\":{\"<unk>\":0,\"<s>\":1,\"<0xE2>\":2,\"<0x82>\":3,\"<0xAC>\":4,\"\xE2\x96\x81\":5,\"a\":6,"
    "\"\xE2\x96\x81" "a\":7},\"merges\":[[\"\xE2\x96\x81\",\"a\"]]}}";

TEST(byte_fallback_bpe) {
  rlx_tokenizer *t = load(llama2_json);
  CHECK(t != NULL);
  if (!t) return;
  /* "a €" -> ▁a ▁ <0xE2> <0x82> <0xAC>, with BOS */
  CHECK(encode_is(t, "a \xE2\x82\xAC", 1, (int32_t[]){1, 7, 5, 2, 3, 4}, 6));
  CHECK(encode_is(t, "a \xE2\x82\xAC", 0, (int32_t[]){7, 5, 2, 3, 4}, 5));
  /* no byte tokens for x and y: one fused unk */
  CHECK(encode_is(t, "xy", 0, (int32_t[]){5, 0}, 2));
  CHECK(encode_is(t, "<s>a", 1, (int32_t[]){1, 1, 7}, 3)); /* the segment after <s> gets its ▁ too */
  CHECK(decode_is(t, (int32_t[]){1, 7, 5, 2, 3, 4}, 6, 1, "a \xE2\x82\xAC"));
  char pieces[8][16];
  int32_t ids[] = {7, 5, 2, 3, 4, 7};
  CHECK(!strcmp(stream_all(t, ids, 6, pieces), "a \xE2\x82\xAC a"));
  CHECK(!strcmp(pieces[0], "a") && !strcmp(pieces[1], " ") && !strcmp(pieces[2], "") &&
        !strcmp(pieces[3], "") && !strcmp(pieces[4], "\xE2\x82\xAC") && !strcmp(pieces[5], " a"));
  /* an invalid byte run decodes to one U+FFFD per byte, as tokenizers' ByteFallback */
  CHECK(decode_is(t, (int32_t[]){2, 3, 6}, 3, 0, "\xEF\xBF\xBD\xEF\xBF\xBD" "a"));
  rlx_tokenizer_destroy(t);
}

/* WordPiece, BERT layout. */
static const char bert_json[] =
    "{\"added_tokens\":[{\"id\":0,\"content\":\"[UNK]\",\"special\":true},{\"id\":1,\"content\":\"[CLS]\",\"special\":true},"
    "{\"id\":2,\"content\":\"[SEP]\",\"special\":true}],"
    "\"normalizer\":{\"type\":\"BertNormalizer\",\"clean_text\":true,\"handle_chinese_chars\":true,"
    "\"strip_accents\":null,\"lowercase\":true},"
    "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},"
    "\"post_processor\":{\"type\":\"BertProcessing\",\"sep\":[\"[SEP]\",2],\"cls\":[\"[CLS]\",1]},"
    "\"decoder\":{\"type\":\"WordPiece\",\"prefix\":\"##\",\"cleanup\":true},"
    "\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\",\"continuing_subword_prefix\":\"##\","
    "\"max_input_chars_per_word\":12,\"vocab\":{\"[UNK]\":0,\"[CLS]\":1,\"[SEP]\":2,\"un\":3,\"##aff\":4,"
    "\"##able\":5,\"hello\":6,\",\":7,\"cafe\":8,\"\xE4\xB8\xAD\":9}}}";

TEST(wordpiece) {
  rlx_tokenizer *t = load(bert_json);
  CHECK(t != NULL);
  if (!t) return;
  /* lowercased, accents stripped (NFD, then Mn dropped), punctuation split off */
  CHECK(encode_is(t, "Unaffable, Caf\xC3\xA9!", 1, (int32_t[]){1, 3, 4, 5, 7, 8, 0, 2}, 8));
  /* CJK characters become words of their own */
  CHECK(encode_is(t, "hello\xE4\xB8\xAD" "cafe", 0, (int32_t[]){6, 9, 8}, 3));
  /* over max_input_chars_per_word (12): unk */
  CHECK(encode_is(t, "unaffableunaffable", 0, (int32_t[]){0}, 1));
  CHECK(decode_is(t, (int32_t[]){1, 3, 4, 5, 7, 8, 2}, 7, 1, "unaffable, cafe"));
  CHECK(!strcmp(stream_all(t, (int32_t[]){3, 4, 5, 7, 8}, 5, NULL), "unaffable, cafe"));
  rlx_tokenizer_destroy(t);
}

/* ---- errors ---- */

static char g_buf[4096];

/* gpt2_json with `from` replaced by `to`. */
static const char *edit(const char *from, const char *to) {
  const char *p = strstr(gpt2_json, from);
  if (!p) return "{}";
  snprintf(g_buf, sizeof g_buf, "%.*s%s%s", (int)(p - gpt2_json), gpt2_json, to, p + strlen(from));
  return g_buf;
}

TEST(errors_name_the_path) {
  CHECK_ERR(load_status(edit("{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":true}",
                             "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Digits\"},{\"type\":\"Whatever\"}]}")),
            RLX_ERR_UNSUPPORTED, "pre_tokenizer.pretokenizers[1].type 'Whatever' is not supported");
  CHECK_ERR(load_status(edit("\"type\":\"BPE\"", "\"type\":\"Unigram\"")), RLX_ERR_UNSUPPORTED,
            "model.type 'Unigram' is not supported");
  CHECK_ERR(load_status(edit("\"normalizer\":null", "\"normalizer\":{\"type\":\"Precompiled\"}")), RLX_ERR_UNSUPPORTED,
            "normalizer.type 'Precompiled' is not supported");
  CHECK_ERR(load_status(edit("{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":true},\"model\"",
                             "{\"type\":\"CTC\"},\"model\"")),
            RLX_ERR_UNSUPPORTED, "decoder.type 'CTC' is not supported");
  CHECK_ERR(load_status(edit("\"h\":0", "\"h\":\"zero\"")), RLX_ERR_FORMAT, "model.vocab 'h' must map to an id");
  CHECK_ERR(load_status(edit("\"h e\"", "\"h q\"")), RLX_ERR_FORMAT, "model.merges[0] names a token that is not in the vocab ('q')");
  CHECK_ERR(load_status(edit("\"h e\"", "\"he\"")), RLX_ERR_FORMAT, "model.merges[0] 'he' must be two tokens");
  CHECK_ERR(load_status(edit("\"fuse_unk\":false", "\"fuse_unk\":1")), RLX_ERR_FORMAT, "model.fuse_unk must be true or false");
  CHECK_ERR(load_status(edit("\"dropout\":null", "\"dropout\":0.1")), RLX_ERR_UNSUPPORTED, "model.dropout");
  CHECK_ERR(load_status(edit("\"id\":15", "\"id\":-3")), RLX_ERR_FORMAT, "added_tokens[0].id must be an integer");
  CHECK_ERR(load_status(edit("{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":true}",
                             "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(?<=a)b\"},\"behavior\":\"Isolated\"}")),
            RLX_ERR_UNSUPPORTED, "pre_tokenizer.pattern.Regex: regex group kind");
  CHECK_ERR(load_status(edit("{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":true}",
                             "{\"type\":\"Split\",\"pattern\":{\"String\":\"x\"},\"behavior\":\"Sideways\"}")),
            RLX_ERR_UNSUPPORTED, "pre_tokenizer.behavior 'Sideways' is not a split behavior");
  CHECK_ERR(load_status("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []} "), RLX_ERR_FORMAT,
            "malformed JSON");
  CHECK_ERR(load_status("[1, 2]"), RLX_ERR_FORMAT, "the top level must be an object");
  CHECK_ERR(load_status("{\"model\": null}"), RLX_ERR_FORMAT, "model must be an object");
  rlx_tokenizer *t = NULL;
  CHECK_ERR(rlx_tokenizer_load("/nonexistent/tokenizer.json", &t), RLX_ERR_IO, "/nonexistent/tokenizer.json");
  CHECK_ERR(rlx_tokenizer_load(NULL, &t), RLX_ERR_INVALID_ARGUMENT, "NULL");
}

/* ---- the regex engine ---- */

/* All matches of pattern over text, as "a|b|c" of the matched text (static). */
static const char *matches(const char *pattern, const char *text) {
  static char out[512];
  out[0] = '\0';
  rlx_regex *re = NULL;
  if (rlx_regex_compile(pattern, "test", &re)) return rlx_last_error();
  rlx_uc_buf b = {0};
  rlx_uc_from_utf8(&b, text, strlen(text));
  for (int32_t pos = 0; pos <= b.n;) {
    bool found;
    int32_t ms, me;
    if (rlx_regex_find(re, b.v, b.n, pos, &found, &ms, &me)) {
      snprintf(out, sizeof out, "%s", rlx_last_error());
      break;
    }
    if (!found) break;
    if (out[0]) strcat(out, "|");
    for (int32_t i = ms; i < me; i++) {
      char u[5] = {0};
      rlx_utf8_encode(b.v[i], u);
      strcat(out, u);
    }
    pos = me > ms ? me : ms + 1;
  }
  rlx_uc_buf_free(&b);
  rlx_regex_destroy(re);
  return out;
}

TEST(regex) {
  const char *gpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
  CHECK(!strcmp(matches(gpt2, "I'm  here 42!!"), "I|'m| | here| 42|!!"));
  CHECK(!strcmp(matches(gpt2, "a   b\n"), "a|  | b|\n"));
  CHECK(!strcmp(matches("\\p{N}{1,3}", "1234567"), "123|456|7"));
  CHECK(!strcmp(matches("(?i:'s|'t)x", "'Sx 'tx 'Tx"), "'Sx|'tx|'Tx"));
  CHECK(!strcmp(matches("[^\\r\\n\\p{L}\\p{N}]?\\p{L}+", "\xC3\xA9t\xC3\xA9 .ab"), "\xC3\xA9t\xC3\xA9|.ab"));
  CHECK(!strcmp(matches("a+?b|c{2}|d{2,}", "aaab cc ccc ddd d"), "aaab|cc|cc|ddd"));
  CHECK(!strcmp(matches("x(?=y)|[\\x{41}-\\u0043]", "xy xz ABCD"), "x|A|B|C"));
  CHECK(!strcmp(matches("\\d+|\\w+", "ab_1 23"), "ab_1|23"));
  CHECK(!strcmp(matches("^a|b$", "ab\nab"), "a|b|a|b"));
  CHECK(!strcmp(matches("(a|b)*c", "ababc abd c"), "ababc|c"));
  CHECK(strstr(matches("(a*)*", "aaa"), "unbounded repetition of something that can match empty"));
  CHECK(strstr(matches("a++", "aaa"), "possessive"));
  CHECK(strstr(matches("\\1", "aaa"), "backreference"));
  CHECK(strstr(matches("(ab", "ab"), "missing ')'"));
  CHECK(strstr(matches("[a-", "a"), "unterminated class"));
  CHECK(strstr(matches("\\p{Greek}", "a"), "property"));
  /* catastrophic backtracking is cut off by the step budget, not left to run */
  char text[64];
  memset(text, 'a', 40);
  strcpy(text + 40, "!");
  CHECK(strstr(matches("(a|a)+b", text), "step budget"));
}

/* ---- Unicode ---- */

static const char *norm(const char *s, rlx_uc_form f) {
  static char out[256];
  rlx_uc_buf b = {0};
  rlx_uc_from_utf8(&b, s, strlen(s));
  rlx_uc_normalize(&b, f);
  size_t w = 0;
  for (int32_t i = 0; i < b.n && w + 4 < sizeof out; i++) w += (size_t)rlx_utf8_encode(b.v[i], out + w);
  out[w] = '\0';
  rlx_uc_buf_free(&b);
  return out;
}

TEST(unicode) {
  CHECK(!strcmp(norm("e\xCC\x81", RLX_UC_NFC), "\xC3\xA9"));                 /* e + U+0301 -> é */
  CHECK(!strcmp(norm("\xC3\xA9", RLX_UC_NFD), "e\xCC\x81"));
  CHECK(!strcmp(norm("\xEF\xAC\x81", RLX_UC_NFKC), "fi"));                   /* U+FB01 */
  CHECK(!strcmp(norm("\xEF\xAC\x81", RLX_UC_NFC), "\xEF\xAC\x81"));
  CHECK(!strcmp(norm("\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB", RLX_UC_NFC), "\xED\x95\x9C")); /* jamo -> 한 */
  CHECK(!strcmp(norm("\xED\x95\x9C", RLX_UC_NFD), "\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB"));
  /* canonical order: dot below (220) before acute (230) */
  CHECK(!strcmp(norm("a\xCC\x81\xCC\xA3", RLX_UC_NFD), "a\xCC\xA3\xCC\x81"));
  CHECK(!strcmp(norm("a\xCC\x81\xCC\xA3", RLX_UC_NFC), "\xE1\xBA\xA1\xCC\x81"));
  CHECK(rlx_uc_category('A') == RLX_UC_LU && rlx_uc_category(0x4E2D) == RLX_UC_LO);
  CHECK(rlx_uc_category(0x0663) == RLX_UC_ND && rlx_uc_category(0x0301) == RLX_UC_MN);
  CHECK(rlx_uc_category(0x10FFFF) == RLX_UC_CN);
  CHECK(rlx_uc_is_space(0x3000) && !rlx_uc_is_space(0x200B));
  uint32_t cp;
  CHECK(rlx_utf8_decode((const unsigned char *)"\xF0\x9F\x98", 3, &cp) == 3 && cp == RLX_UC_REPLACEMENT);
  CHECK(rlx_utf8_incomplete((const unsigned char *)"\xF0\x9F\x98", 3));
  CHECK(!rlx_utf8_incomplete((const unsigned char *)"\xED\xA0", 2)); /* a surrogate: invalid, not incomplete */
  CHECK(rlx_utf8_decode((const unsigned char *)"\xC0\xAF", 2, &cp) == 1 && cp == RLX_UC_REPLACEMENT);
}

/* ---- robustness ---- */

TEST(out_of_memory_everywhere) {
  const char *jsons[] = {gpt2_json, llama2_json, bert_json};
  for (int k = 0; k < 3; k++) {
    const char *p = write_json(jsons[k]);
    bool ok_once = false;
    for (long n = 0; n < 20000 && !ok_once; n++) {
      rlx_alloc_fail_after(n);
      rlx_tokenizer *t = NULL;
      rlx_status st = rlx_tokenizer_load(p, &t);
      if (!st) {
        int32_t ids[16];
        size_t cnt;
        st = rlx_tokenizer_encode(t, "hello world a \xE2\x82\xAC Unaffable!", 25, 1, ids, 16, &cnt);
        char buf[64];
        size_t len;
        if (!st) st = rlx_tokenizer_decode(t, ids, cnt < 16 ? cnt : 16, 0, buf, sizeof buf, &len);
        rlx_token_stream *s = NULL;
        if (!st) st = rlx_token_stream_create(t, 0, &s);
        for (size_t i = 0; !st && i < cnt && i < 16; i++) {
          const char *piece;
          st = rlx_token_stream_push(s, ids[i], &piece, &len);
        }
        rlx_token_stream_destroy(s);
        rlx_tokenizer_destroy(t);
        ok_once = st == RLX_OK;
      }
      if (st && st != RLX_ERR_OUT_OF_MEMORY) fprintf(stderr, "fail after %ld: %s\n", n, rlx_last_error());
      if (st) CHECK(st == RLX_ERR_OUT_OF_MEMORY);
    }
    rlx_alloc_fail_after(-1);
    CHECK(ok_once);
    unlink(p);
  }
}

TEST_MAIN(bytelevel_bpe, bytelevel_stream, byte_fallback_bpe, wordpiece, errors_name_the_path, regex, unicode,
          out_of_memory_everywhere)
