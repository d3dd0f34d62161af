/*
 * cmd_tokenize.c — `rlx tokenize TOKENIZER.json`: encodes text to ids
 * ("ids: 1,2,3") and decodes ids to text ("text: ..."), with a tokenizer
 * read from a Hugging Face tokenizer.json. --json prints one JSON object
 * instead: {"ids": [...]} and, for --decode, "text" and "stream" (the
 * pieces a streaming decoder emits, one per id and the final flush).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "core/core.h"

#define TOKENIZE_USAGE                                                                        \
  "usage: rlx tokenize TOKENIZER.json (--text TEXT | --file F) [--no-special]\n"            \
  "                    [--decode 1,2,3] [--skip-special] [--json]"

static int tok_error(const char *what) {
  fprintf(stderr, "rlx tokenize: error: %s: %s\n", what, rlx_last_error());
  return 2;
}

/* "1,2,3" -> ids (malloc'd). */
static int parse_ids(const char *s, int32_t **ids, size_t *n) {
  size_t cap = 1;
  for (const char *p = s; *p; p++) cap += *p == ',';
  *ids = malloc(cap * sizeof **ids);
  if (!*ids) return -1;
  *n = 0;
  if (!*s) return 0;
  for (const char *p = s;;) {
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (end == p || errno || v < 0 || v > INT32_MAX || (*end && *end != ',')) return -1;
    (*ids)[(*n)++] = (int32_t)v;
    if (!*end) return 0;
    p = end + 1;
  }
}

static int run_encode(const rlx_tokenizer *tok, const char *text, size_t len, bool special, cJSON *json) {
  size_t n = 0;
  if (rlx_tokenizer_encode(tok, text, len, special, NULL, 0, &n)) return tok_error("encode");
  int32_t *ids = malloc((n ? n : 1) * sizeof *ids);
  if (!ids || rlx_tokenizer_encode(tok, text, len, special, ids, n, &n)) {
    free(ids);
    return ids ? tok_error("encode") : 2;
  }
  if (json) {
    cJSON *arr = cJSON_AddArrayToObject(json, "ids");
    for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(arr, cJSON_CreateNumber(ids[i]));
  } else {
    printf("ids: ");
    for (size_t i = 0; i < n; i++) printf("%s%d", i ? "," : "", ids[i]);
    printf("\n");
  }
  free(ids);
  return 0;
}

static int run_decode(const rlx_tokenizer *tok, const int32_t *ids, size_t n, bool skip, cJSON *json) {
  size_t len = 0;
  if (rlx_tokenizer_decode(tok, ids, n, skip, NULL, 0, &len)) return tok_error("decode");
  char *text = malloc(len + 1);
  if (!text || rlx_tokenizer_decode(tok, ids, n, skip, text, len + 1, &len)) {
    free(text);
    return text ? tok_error("decode") : 2;
  }
  if (!json) {
    printf("text: ");
    fwrite(text, 1, len, stdout);
    printf("\n");
    free(text);
    return 0;
  }
  cJSON_AddStringToObject(json, "text", text);
  free(text);
  rlx_token_stream *st = NULL;
  if (rlx_token_stream_create(tok, skip, &st)) return tok_error("stream");
  cJSON *arr = cJSON_AddArrayToObject(json, "stream");
  for (size_t i = 0; i <= n; i++) {
    const char *piece;
    size_t plen;
    rlx_status s = i < n ? rlx_token_stream_push(st, ids[i], &piece, &plen) : rlx_token_stream_flush(st, &piece, &plen);
    if (s) {
      rlx_token_stream_destroy(st);
      return tok_error("stream");
    }
    cJSON_AddItemToArray(arr, cJSON_CreateString(piece));
  }
  rlx_token_stream_destroy(st);
  return 0;
}

int cmd_tokenize(int argc, char **argv) {
  const char *path = NULL, *text = NULL, *file = NULL, *decode = NULL;
  bool special = true, skip = false, as_json = false;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool has_val = i + 1 < argc;
    if (!strcmp(a, "--text") || !strcmp(a, "--file") || !strcmp(a, "--decode")) {
      if (!has_val) return cli_usage("tokenize", "%s needs a value\n" TOKENIZE_USAGE, a);
      const char *v = argv[++i];
      if (a[2] == 't') text = v;
      else if (a[2] == 'f') file = v;
      else decode = v;
    } else if (!strcmp(a, "--no-special")) special = false;
    else if (!strcmp(a, "--skip-special")) skip = true;
    else if (!strcmp(a, "--json")) as_json = true;
    else if (a[0] == '-' || path) return cli_usage("tokenize", "unexpected argument '%s'\n" TOKENIZE_USAGE, a);
    else path = a;
  }
  if (!path || (!text && !file && !decode) || (text && file))
    return cli_usage("tokenize", TOKENIZE_USAGE);
  rlx_tokenizer *tok = NULL;
  if (rlx_tokenizer_load(path, &tok)) return tok_error("loading the tokenizer");
  char *buf = NULL;
  size_t len = text ? strlen(text) : 0;
  int rc = 0;
  if (file && rlx_read_file(file, (size_t)1 << 30, &buf, &len)) rc = tok_error("reading --file");
  cJSON *json = as_json ? cJSON_CreateObject() : NULL;
  if (!rc && (text || file)) rc = run_encode(tok, file ? buf : text, len, special, json);
  if (!rc && decode) {
    int32_t *ids = NULL;
    size_t n = 0;
    if (parse_ids(decode, &ids, &n)) rc = cli_usage("tokenize", "--decode '%s': expected ids like 1,2,3", decode);
    else rc = run_decode(tok, ids, n, skip, json);
    free(ids);
  }
  if (!rc && json) {
    char *s = cJSON_PrintUnformatted(json);
    if (s) printf("%s\n", s);
    free(s);
  }
  cJSON_Delete(json);
  rlx_free(buf);
  rlx_tokenizer_destroy(tok);
  return rc;
}
