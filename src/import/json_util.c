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

rlx_status rlx_json_parse(const char *text, size_t len, const char *path, cJSON **out) {
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!j) {
    const char *at = cJSON_GetErrorPtr();
    if (!at || at < text || at > text + len) at = end ? end : text;
    if (!cJSON_GetErrorPtr() && !end)
      return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "%s: out of memory parsing JSON", path);
    return syntax_error(text, (size_t)(at - text), path, "");
  }
  /* only whitespace may follow the value (a second value is not ignored) */
  for (const char *q = end; q && q < text + len; q++)
    if (*q != ' ' && *q != '\t' && *q != '\n' && *q != '\r') {
      cJSON_Delete(j);
      return syntax_error(text, (size_t)(q - text), path, ": unexpected data after the JSON value");
    }
  *out = j;
  return RLX_OK;
}

rlx_status rlx_json_int(const cJSON *j, const char *where, int64_t *out) {
  if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble) || j->valuedouble != floor(j->valuedouble))
    return rlx_errorf(RLX_ERR_FORMAT, "%s must be an integer", where);
  double v = j->valuedouble;
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
    int64_t v;
    if (rlx_json_int(d, where, &v) || v < 0)
      return rlx_errorf(RLX_ERR_FORMAT, "%s[%d] must be a non-negative integer", where, i);
    if (!rlx_mul_ok(numel, (uint64_t)v, &numel) || numel > ((uint64_t)1 << 48))
      return rlx_errorf(RLX_ERR_FORMAT, "%s: element count overflows", where);
    out->dims[i++] = v;
  }
  return RLX_OK;
}

rlx_status rlx_json_dtype(const cJSON *obj, const char *key, const char *where, rlx_dtype *out) {
  const char *tok;
  if (rlx_json_str(obj, key, where, &tok)) return RLX_ERR_FORMAT;
  int t = rlx_dtype_from_token(tok);
  if (t < 0) return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s: unknown dtype '%s'", where, tok);
  *out = (rlx_dtype)t;
  return RLX_OK;
}
