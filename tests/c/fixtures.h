/*
 * fixtures.h — helpers the import and lowering tests share: safetensors file
 * images built in memory, and JSON written with single quotes.
 *
 *   st_image(header, data, n, &size)   raw: 8-byte length + header text + data
 *   st_build(specs, n, &size)          from tensor specs, with computed offsets
 *   exact_copy(text, &len)             text without its NUL terminator
 *   jq("{'a': 1}")                     the text with ' turned into "
 *
 * Buffers are malloc'd at exactly their size (no slack, no NUL terminator
 * where noted), so AddressSanitizer catches any read past the end. Free them
 * with free().
 */
#ifndef RLX_TEST_FIXTURES_H
#define RLX_TEST_FIXTURES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/* [len u64 LE][header][data] */
RLX_UNUSED static unsigned char *st_image(const char *header, const void *data, size_t data_len,
                               size_t *size_out) {
  size_t hlen = strlen(header), size = 8 + hlen + data_len;
  unsigned char *buf = malloc(size ? size : 1);
  for (int i = 0; i < 8; i++) buf[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
  memcpy(buf + 8, header, hlen);
  if (data_len) memcpy(buf + 8 + hlen, data, data_len);
  *size_out = size;
  return buf;
}

/* One tensor for st_build: safetensors dtype token ("F32"), shape, data
 * (numel x element size bytes; may be NULL for an empty tensor). */
typedef struct st_spec {
  const char *name;
  const char *dtype;
  int rank;
  int64_t dims[RLX_MAX_RANK];
  const void *data;
} st_spec;

/* A well-formed image holding the tensors back to back; the header is padded
 * with spaces so the data starts 8-byte aligned. */
RLX_UNUSED static unsigned char *st_build(const st_spec *t, int n, size_t *size_out) {
  char header[8192];
  size_t len = 0, off = 0, nbytes[64];
  len += (size_t)snprintf(header + len, sizeof header - len, "{");
  for (int i = 0; i < n; i++) {
    int d = rlx_dtype_from_safetensors(t[i].dtype);
    size_t numel = 1;
    for (int k = 0; k < t[i].rank; k++) numel *= (size_t)t[i].dims[k];
    nbytes[i] = numel * (d >= 0 ? rlx_dtype_size((rlx_dtype)d) : 1);
    len += (size_t)snprintf(header + len, sizeof header - len, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[",
                            i ? "," : "", t[i].name, t[i].dtype);
    for (int k = 0; k < t[i].rank; k++)
      len += (size_t)snprintf(header + len, sizeof header - len, "%s%lld", k ? "," : "",
                              (long long)t[i].dims[k]);
    len += (size_t)snprintf(header + len, sizeof header - len, "],\"data_offsets\":[%zu,%zu]}", off,
                            off + nbytes[i]);
    off += nbytes[i];
  }
  len += (size_t)snprintf(header + len, sizeof header - len, "}");
  while ((8 + len) % 8) header[len++] = ' ';
  header[len] = '\0';
  unsigned char *data = malloc(off ? off : 1);
  size_t at = 0;
  for (int i = 0; i < n; i++) {
    if (nbytes[i]) memcpy(data + at, t[i].data, nbytes[i]);
    at += nbytes[i];
  }
  unsigned char *img = st_image(header, data, off, size_out);
  free(data);
  return img;
}

/* Copies text into an exactly sized buffer without a NUL terminator. */
RLX_UNUSED static char *exact_copy(const char *text, size_t *len_out) {
  size_t n = strlen(text);
  char *b = malloc(n ? n : 1);
  memcpy(b, text, n);
  *len_out = n;
  return b;
}

/* JSON in C strings without escapes: every ' becomes " (NUL-terminated). */
RLX_UNUSED static char *jq(const char *text) {
  size_t n = strlen(text);
  char *b = malloc(n + 1);
  for (size_t i = 0; i <= n; i++) b[i] = text[i] == '\'' ? '"' : text[i];
  return b;
}

#endif
