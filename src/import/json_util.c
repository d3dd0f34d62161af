/*
 * json_util.c — checked cJSON access (see json_util.h).
 */
#include <math.h>
#include <string.h>

#include "import/json_util.h"

/* A syntax error at byte `off` of text, as line, column and offset. */
static rlx_status syntax_error(const char *text, size_t off, const char *path, const char *what) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < off; i++) {
    if (text[i] == '\n') line++, col = 1;
    else col++;
  }
  return rlx_errorf(RLX_ERR_FORMAT, "%s: malformed JSON at line %zu, column %zu (byte offset %zu)%s",
                    path, line, col, off, what);
}

/* ---- a strict, allocation-free JSON checker ----
 *
 * cJSON is lenient (it takes "01", "+1", "1.", any byte <= 32 as
 * whitespace, NUL bytes inside strings, which would then cut names short)
 * and reports an allocation failure exactly as it reports a syntax error.
 * So every text is first checked against RFC 8259 here, with cJSON's own
 * extra refusals (nesting of CJSON_NESTING_LIMIT levels, \u escapes that are
 * lone surrogates or NUL): a text this accepts and cJSON then fails on can
 * only have run out of memory. */

#define JSON_MAX_DEPTH 1000 /* cJSON's CJSON_NESTING_LIMIT */

typedef struct jcheck {
  const unsigned char *p, *end, *start;
  const char *why; /* what is wrong at p */
} jcheck;

static bool jfail(jcheck *c, const char *why) {
  c->why = why;
  return false;
}

static void jspace(jcheck *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static int jhex4(const unsigned char *q) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    int d = q[i] >= '0' && q[i] <= '9' ? q[i] - '0' : q[i] >= 'a' && q[i] <= 'f' ? q[i] - 'a' + 10
            : q[i] >= 'A' && q[i] <= 'F' ? q[i] - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

static bool jstring(jcheck *c) {
  c->p++; /* the opening quote */
  while (c->p < c->end) {
    unsigned char ch = *c->p;
    if (ch == '"') {
      c->p++;
      return true;
    }
    if (ch < 0x20) return jfail(c, ": a control character inside a string");
    if (ch != '\\') {
      c->p++;
      continue;
    }
    if (c->end - c->p < 2) break;
    unsigned char e = c->p[1];
    if (e != 'u') {
      if (!strchr("\"\\/bfnrt", e)) return jfail(c, ": an unknown escape in a string");
      c->p += 2;
      continue;
    }
    if (c->end - c->p < 6) break;
    int u = jhex4(c->p + 2);
    if (u < 0) return jfail(c, ": a bad \\u escape");
    if (u == 0) return jfail(c, ": \\u0000 inside a string");
    if (u >= 0xDC00 && u <= 0xDFFF) return jfail(c, ": a lone low surrogate \\u escape");
    if (u >= 0xD800 && u <= 0xDBFF) {
      if (c->end - c->p < 12 || c->p[6] != '\\' || c->p[7] != 'u')
        return jfail(c, ": a high surrogate \\u escape without its low half");
      int lo = jhex4(c->p + 8);
      if (lo < 0xDC00 || lo > 0xDFFF) return jfail(c, ": a high surrogate \\u escape without its low half");
      c->p += 6;
    }
    c->p += 6;
  }
  return jfail(c, ": an unterminated string");
}

static bool jdigits(jcheck *c) {
  const unsigned char *q = c->p;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') c->p++;
  return c->p > q;
}

/* Whether the integer literal [q, e) (digits only) is one a double holds
 * exactly, or one that rounds to +-2^63 (torch's int64 sentinels, which
 * rlx_json_int clamps). cJSON reads every number as a double: a literal such
 * as 2^53 + 1 would silently become 2^53, so the check refuses it. */
static bool jint_exact(const unsigned char *q, const unsigned char *e) {
  if (e - q < 16) return true; /* below 10^15 < 2^53 */
  unsigned __int128 m = 0;
  for (; q < e; q++) {
    m = m * 10 + (unsigned)(*q - '0');
    if (m > ((unsigned __int128)1 << 64)) return true; /* past int64: clamped like 1e30 */
  }
  const unsigned __int128 top = (unsigned __int128)1 << 63;
  if (m >= top - 512) return true; /* rounds to 2^63 */
  double d = (double)(uint64_t)m;
  return (unsigned __int128)(uint64_t)d == m;
}

static bool jnumber(jcheck *c) {
  const unsigned char *start = c->p;
  if (c->p < c->end && *c->p == '-') c->p++;
  if (c->p < c->end && *c->p == '0') c->p++;
  else if (!jdigits(c)) return jfail(c, ": a malformed number");
  if (c->p < c->end && *c->p == '.') {
    c->p++;
    if (!jdigits(c)) return jfail(c, ": a malformed number");
  }
  if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
    c->p++;
    if (c->p < c->end && (*c->p == '+' || *c->p == '-')) c->p++;
    if (!jdigits(c)) return jfail(c, ": a malformed number");
  }
  const unsigned char *digits = start + (*start == '-');
  if (c->p - digits >= 16 && memchr(digits, '.', (size_t)(c->p - digits)) == NULL &&
      !memchr(digits, 'e', (size_t)(c->p - digits)) && !memchr(digits, 'E', (size_t)(c->p - digits)) &&
      !jint_exact(digits, c->p)) {
    c->p = start;
    return jfail(c, ": an integer of 2^53 or more that a double cannot hold exactly (rlx would read it rounded)");
  }
  return true;
}

static bool jliteral(jcheck *c, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n)) return jfail(c, "");
  c->p += n;
  return true;
}

/* One value, iteratively: stack[d] is '[' or '{' for each open container. */
static bool jvalue(jcheck *c) {
  unsigned char stack[JSON_MAX_DEPTH];
  int depth = 0;
  for (;;) {
    jspace(c);
    if (c->p >= c->end) return jfail(c, ": the text ends inside a value");
    unsigned char ch = *c->p;
    bool scalar = true;
    if (ch == '{' || ch == '[') {
      if (depth + 1 >= JSON_MAX_DEPTH) return jfail(c, ": nested 1000 levels deep");
      stack[depth++] = ch;
      c->p++;
      jspace(c);
      if (c->p < c->end && *c->p == (ch == '{' ? '}' : ']')) {
        c->p++, depth--;
      } else if (ch == '{') {
        if (c->p >= c->end || *c->p != '"') return jfail(c, ": an object key must be a string");
        if (!jstring(c)) return false;
        jspace(c);
        if (c->p >= c->end || *c->p != ':') return jfail(c, ": ':' expected after an object key");
        c->p++;
        continue;
      } else {
        continue;
      }
      scalar = false;
    }
    if (scalar) {
      bool ok = ch == '"' ? jstring(c) : ch == 't' ? jliteral(c, "true") : ch == 'f' ? jliteral(c, "false")
                : ch == 'n' ? jliteral(c, "null") : (ch == '-' || (ch >= '0' && ch <= '9')) ? jnumber(c)
                : jfail(c, "");
      if (!ok) return false;
    }
    /* after a value: close containers or go on to the next element */
    for (;;) {
      if (!depth) return true;
      jspace(c);
      if (c->p >= c->end) return jfail(c, ": the text ends inside a list or object");
      unsigned char close = stack[depth - 1] == '{' ? '}' : ']';
      if (*c->p == close) {
        c->p++, depth--;
        continue;
      }
      if (*c->p != ',') return jfail(c, stack[depth - 1] == '{' ? ": ',' or '}' expected" : ": ',' or ']' expected");
      c->p++;
      if (stack[depth - 1] == '{') {
        jspace(c);
        if (c->p >= c->end || *c->p != '"') return jfail(c, ": an object key must be a string");
        if (!jstring(c)) return false;
        jspace(c);
        if (c->p >= c->end || *c->p != ':') return jfail(c, ": ':' expected after an object key");
        c->p++;
      }
      break;
    }
  }
}

rlx_status rlx_json_parse(const char *text, size_t len, const char *path, cJSON **out) {
  jcheck c = {.p = (const unsigned char *)text, .end = (const unsigned char *)text + len,
              .start = (const unsigned char *)text, .why = ""};
  if (!jvalue(&c)) return syntax_error(text, (size_t)(c.p - c.start), path, c.why);
  jspace(&c);
  if (c.p < c.end) /* only whitespace may follow the value (a second value is not ignored) */
    return syntax_error(text, (size_t)(c.p - c.start), path, ": unexpected data after the JSON value");
  cJSON *j = cJSON_ParseWithLength(text, len);
  if (!j) /* the text is well-formed: cJSON could only have failed to allocate */
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "%s: out of memory parsing JSON (%zu bytes)", path, len);
  *out = j;
  return RLX_OK;
}

rlx_status rlx_json_int(const cJSON *j, const char *where, int64_t *out) {
  if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble) || j->valuedouble != floor(j->valuedouble))
    return rlx_errorf(RLX_ERR_FORMAT, "%s must be an integer", where);
  double v = j->valuedouble; /* exact: the checker refused integer literals a double cannot hold */
  if (v >= 9223372036854775807.0) *out = INT64_MAX;
  else if (v <= -9223372036854775808.0) *out = INT64_MIN;
  else *out = (int64_t)v;
  return RLX_OK;
}

rlx_status rlx_json_str(const cJSON *obj, const char *key, const char *where, const char **out) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsString(j) || !j->valuestring)
    return rlx_errorf(RLX_ERR_FORMAT, "%s: field '%s' must be a string", where, key);
  *out = j->valuestring;
  return RLX_OK;
}

rlx_status rlx_json_shape(const cJSON *j, const char *where, rlx_shape *out) {
  if (!cJSON_IsArray(j)) return rlx_errorf(RLX_ERR_FORMAT, "%s must be a list of dims", where);
  int n = cJSON_GetArraySize(j);
  if (n > RLX_MAX_RANK)
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s has rank %d; rlx handles rank <= %d", where, n,
                      RLX_MAX_RANK);
  out->rank = n;
  uint64_t numel = 1;
  int i = 0;
  const cJSON *d;
  cJSON_ArrayForEach(d, j) {
    int64_t v = 0; /* gcc cannot see that rlx_errorf never returns RLX_OK */
    if (rlx_json_int(d, where, &v) || v < 0)
      return rlx_errorf(RLX_ERR_FORMAT, "%s[%d] must be a non-negative integer", where, i);
    if (!rlx_mul_ok(numel, (uint64_t)v, &numel) || numel > ((uint64_t)1 << 48))
      return rlx_errorf(RLX_ERR_FORMAT, "%s: element count overflows", where);
    out->dims[i++] = v;
  }
  return RLX_OK;
}

rlx_status rlx_json_dtype(const cJSON *obj, const char *key, const char *where, rlx_dtype *out) {
  const char *tok = NULL; /* gcc cannot see that rlx_errorf never returns RLX_OK */
  if (rlx_json_str(obj, key, where, &tok)) return RLX_ERR_FORMAT;
  int t = rlx_dtype_from_token(tok);
  if (t < 0) return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s: unknown dtype '%s'", where, tok);
  *out = (rlx_dtype)t;
  return RLX_OK;
}
