/*
 * json_util.h — checked access to cJSON trees for the importers. Each getter
 * fails with RLX_ERR_FORMAT and a message naming `where` (a JSON path).
 */
#ifndef RLX_JSON_UTIL_H
#define RLX_JSON_UTIL_H

#include <cjson/cJSON.h>

#include "core/core.h"

/* Parses text; a syntax error reports line, column and byte offset. */
rlx_status rlx_json_parse(const char *text, size_t len, const char *path, cJSON **out);

/* Integral JSON number as int64 (values past +-2^63 clamp). */
rlx_status rlx_json_int(const cJSON *j, const char *where, int64_t *out);
rlx_status rlx_json_str(const cJSON *obj, const char *key, const char *where, const char **out);
/* A shape: array of at most RLX_MAX_RANK non-negative integers. */
rlx_status rlx_json_shape(const cJSON *j, const char *where, rlx_shape *out);
/* A dtype token field ("f32", ...). */
rlx_status rlx_json_dtype(const cJSON *obj, const char *key, const char *where, rlx_dtype *out);

#endif
