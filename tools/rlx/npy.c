/*
 * npy.c — .npy reader and writer (format in npy.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/core.h"
#include "npy.h"

static const struct {
  const char *descr;
  rlx_dtype t;
} descrs[] = {
    {"<f4", RLX_DTYPE_F32}, {"<f2", RLX_DTYPE_F16}, {"<f8", RLX_DTYPE_F64}, {"<i8", RLX_DTYPE_I64},
    {"<i4", RLX_DTYPE_I32}, {"<i2", RLX_DTYPE_I16}, {"|i1", RLX_DTYPE_I8},  {"|u1", RLX_DTYPE_U8},
    {"|b1", RLX_DTYPE_BOOL},
};

static rlx_status parse_header(const char *path, const char *h, rlx_tensor_view *v) {
  const char *d = strstr(h, "'descr'"), *f = strstr(h, "'fortran_order'"), *s = strstr(h, "'shape'");
  if (!d || !f || !s) return rlx_errorf(RLX_ERR_FORMAT, "%s: the .npy header lacks descr, fortran_order or shape", path);
  d = strchr(d + 7, '\'');
  if (!d) return rlx_errorf(RLX_ERR_FORMAT, "%s: bad descr", path);
  d++;
  int found = -1;
  for (size_t i = 0; i < RLX_COUNTOF(descrs); i++)
    if (!strncmp(d, descrs[i].descr, 3) && d[3] == '\'') found = (int)i;
  if (found < 0) {
    char tok[16] = {0};
    for (int i = 0; i < 15 && d[i] && d[i] != '\''; i++) tok[i] = d[i];
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s: dtype '%s' is not supported (little-endian f4 f2 f8 i8 "
                      "i4 i2 i1 u1 b1 are)", path, tok);
  }
  v->dtype = descrs[found].t;
  const char *fv = strchr(f, ':');
  if (!fv) return rlx_errorf(RLX_ERR_FORMAT, "%s: bad fortran_order", path);
  if (strncmp(fv + 1 + strspn(fv + 1, " "), "False", 5))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s: Fortran-ordered arrays are not supported", path);
  const char *p = strchr(s, '(');
  if (!p) return rlx_errorf(RLX_ERR_FORMAT, "%s: bad shape", path);
  p++;
  v->rank = 0;
  uint64_t bytes = rlx_dtype_size(v->dtype);
  while (*p && *p != ')') {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ')') break;
    char *end;
    long long x = strtoll(p, &end, 10);
    if (end == p || x < 0) return rlx_errorf(RLX_ERR_FORMAT, "%s: bad shape entry", path);
    if (v->rank >= RLX_MAX_RANK) return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s: rank above %d", path, RLX_MAX_RANK);
    if (!rlx_mul_ok(bytes, (uint64_t)x, &bytes) || bytes > ((uint64_t)1 << 62))
      return rlx_errorf(RLX_ERR_FORMAT, "%s: the shape's size overflows", path);
    v->dims[v->rank++] = x;
    p = end;
  }
  return *p == ')' ? RLX_OK : rlx_errorf(RLX_ERR_FORMAT, "%s: unterminated shape", path);
}

rlx_status rlx_npy_read(const char *path, rlx_tensor_view *v) {
  memset(v, 0, sizeof *v);
  FILE *fp = fopen(path, "rb");
  if (!fp) return rlx_errorf(RLX_ERR_IO, "cannot open %s: %s", path, strerror(errno));
  unsigned char pre[12];
  rlx_status st = RLX_OK;
  char *hdr = NULL;
  if (fread(pre, 1, 10, fp) != 10 || memcmp(pre, "\x93NUMPY", 6)) {
    st = rlx_errorf(RLX_ERR_FORMAT, "%s is not a .npy file (bad magic)", path);
    goto done;
  }
  uint32_t hlen;
  if (pre[6] == 1) {
    hlen = pre[8] | (uint32_t)pre[9] << 8;
  } else if (pre[6] == 2 || pre[6] == 3) {
    if (fread(pre + 10, 1, 2, fp) != 2) {
      st = rlx_errorf(RLX_ERR_FORMAT, "%s: truncated header", path);
      goto done;
    }
    hlen = pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
  } else {
    st = rlx_errorf(RLX_ERR_UNSUPPORTED, "%s: .npy version %d.%d", path, pre[6], pre[7]);
    goto done;
  }
  if (hlen > (1u << 20) || !(hdr = calloc(1, hlen + 1)) || fread(hdr, 1, hlen, fp) != hlen) {
    st = rlx_errorf(RLX_ERR_FORMAT, "%s: truncated or oversized header", path);
    goto done;
  }
  if ((st = parse_header(path, hdr, v))) goto done;
  size_t n = (size_t)rlx_view_numel(v) * rlx_dtype_size(v->dtype); /* bounded by parse_header */
  struct stat sb;
  long at = ftell(fp);
  if (fstat(fileno(fp), &sb) != 0 || at < 0 || (uint64_t)sb.st_size - (uint64_t)at < n) {
    st = rlx_errorf(RLX_ERR_FORMAT, "%s: truncated data (expected %zu bytes)", path, n);
    goto done;
  }
  v->data = malloc(n ? n : 1);
  if (!v->data) {
    st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
    goto done;
  }
  if (fread(v->data, 1, n, fp) != n) {
    st = rlx_errorf(RLX_ERR_FORMAT, "%s: truncated data (expected %zu bytes)", path, n);
    free(v->data);
    v->data = NULL;
  }
done:
  free(hdr);
  fclose(fp);
  return st;
}

rlx_status rlx_npy_write(const char *path, const rlx_tensor_view *v) {
  const char *descr = NULL;
  for (size_t i = 0; i < RLX_COUNTOF(descrs); i++)
    if (descrs[i].t == v->dtype) descr = descrs[i].descr;
  rlx_tensor_view tmp = *v;
  void *conv = NULL;
  if (!descr && v->dtype == RLX_DTYPE_BF16) { /* numpy has no bf16: write f32 */
    int64_t n = rlx_view_numel(v);
    conv = malloc((size_t)(n ? n : 1) * 4);
    if (!conv) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < n; i++) ((float *)conv)[i] = rlx_bf16_to_f32(((const uint16_t *)v->data)[i]);
    tmp.data = conv, tmp.dtype = RLX_DTYPE_F32, descr = "<f4";
  }
  char hdr[512];
  int len = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < tmp.rank; i++) len += snprintf(hdr + len, sizeof hdr - (size_t)len, "%lld,%s", (long long)tmp.dims[i], i + 1 < tmp.rank ? " " : "");
  len += snprintf(hdr + len, sizeof hdr - (size_t)len, "), }");
  int total = 10 + len + 1, pad = (64 - total % 64) % 64;
  for (int i = 0; i < pad; i++) hdr[len++] = ' ';
  hdr[len++] = '\n';
  FILE *fp = fopen(path, "wb");
  if (!fp) {
    free(conv);
    return rlx_errorf(RLX_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  }
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(len & 0xff), (unsigned char)(len >> 8)};
  size_t n = (size_t)rlx_view_numel(&tmp) * rlx_dtype_size(tmp.dtype);
  bool ok = fwrite(pre, 1, 10, fp) == 10 && fwrite(hdr, 1, (size_t)len, fp) == (size_t)len &&
            fwrite(tmp.data, 1, n, fp) == n;
  ok &= fclose(fp) == 0;
  free(conv);
  return ok ? RLX_OK : rlx_errorf(RLX_ERR_IO, "error writing %s", path);
}
