/*
 * npy.c — .npy reader and writer (format in npy.h). The reader parses an
 * in-memory image (rlx_npy_parse); rlx_npy_read reads a regular file whole
 * and parses it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "npy.h"

#define NPY_MAX_HEADER (1u << 20)

static const struct {
  const char *descr;
  rlx_dtype t;
} descrs[] = {
    {"<f4", RLX_DTYPE_F32}, {"<f2", RLX_DTYPE_F16}, {"<f8", RLX_DTYPE_F64}, {"<i8", RLX_DTYPE_I64},
    {"<i4", RLX_DTYPE_I32}, {"<i2", RLX_DTYPE_I16}, {"|i1", RLX_DTYPE_I8},  {"|u1", RLX_DTYPE_U8},
    {"|b1", RLX_DTYPE_BOOL}, {"<u2", RLX_DTYPE_U16}, {"<u4", RLX_DTYPE_U32}, {"<u8", RLX_DTYPE_U64},
};

/* Parses the header dict `h` (NUL-terminated) into v's dtype and shape. */
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
    errno = 0;
    long long x = strtoll(p, &end, 10);
    if (end == p || x < 0 || errno == ERANGE)
      return rlx_errorf(RLX_ERR_FORMAT, "%s: bad shape entry at header offset %td", path, p - h);
    if (v->rank >= RLX_MAX_RANK) return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s: rank above %d", path, RLX_MAX_RANK);
    if (!rlx_mul_ok(bytes, (uint64_t)x, &bytes) || bytes > ((uint64_t)1 << 62))
      return rlx_errorf(RLX_ERR_FORMAT, "%s: the shape's size overflows", path);
    v->dims[v->rank++] = x;
    p = end;
  }
  return *p == ')' ? RLX_OK : rlx_errorf(RLX_ERR_FORMAT, "%s: unterminated shape", path);
}

rlx_status rlx_npy_parse(const void *buf, size_t len, const char *path, rlx_tensor_view *v) {
  memset(v, 0, sizeof *v);
  const unsigned char *b = buf;
  if (len < 10 || memcmp(b, "\x93NUMPY", 6))
    return rlx_errorf(RLX_ERR_FORMAT, "%s is not a .npy file (bad magic)", path);
  size_t at; /* where the header dict starts */
  uint32_t hlen;
  if (b[6] == 1) {
    at = 10;
    hlen = b[8] | (uint32_t)b[9] << 8;
  } else if (b[6] == 2 || b[6] == 3) {
    if (len < 12) return rlx_errorf(RLX_ERR_FORMAT, "%s: truncated header length (%zu bytes)", path, len);
    at = 12;
    hlen = b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 | (uint32_t)b[11] << 24;
  } else {
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s: .npy version %d.%d (1.0, 2.0 and 3.0 are supported)",
                      path, b[6], b[7]);
  }
  if (hlen > NPY_MAX_HEADER)
    return rlx_errorf(RLX_ERR_FORMAT, "%s: header length %u exceeds the %u-byte limit", path, hlen,
                      NPY_MAX_HEADER);
  if (len - at < hlen)
    return rlx_errorf(RLX_ERR_FORMAT, "%s: truncated header: %u bytes at offset %zu, the file has %zu",
                      path, hlen, at, len);
  const char *nul = memchr(b + at, 0, hlen);
  if (nul) return rlx_errorf(RLX_ERR_FORMAT, "%s: NUL byte in the header at offset %td", path, nul - (const char *)b);
  char *hdr = malloc((size_t)hlen + 1);
  if (!hdr) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
  memcpy(hdr, b + at, hlen);
  hdr[hlen] = 0;
  rlx_status st = parse_header(path, hdr, v);
  free(hdr);
  if (st) return st;
  at += hlen;
  size_t n = (size_t)rlx_view_numel(v) * rlx_dtype_size(v->dtype); /* bounded by parse_header */
  if (len - at < n)
    return rlx_errorf(RLX_ERR_FORMAT, "%s: truncated data: the shape needs %zu bytes at offset %zu, "
                      "%zu follow", path, n, at, len - at);
  if (!(v->data = malloc(n ? n : 1))) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
  if (n) memcpy(v->data, b + at, n);
  if (v->dtype == RLX_DTYPE_BOOL) /* numpy writes 0 or 1; anything else is not a bool */
    for (size_t i = 0; i < n; i++)
      if (((unsigned char *)v->data)[i] > 1) {
        free(v->data);
        v->data = NULL;
        return rlx_errorf(RLX_ERR_FORMAT, "%s: bool element %zu (offset %zu) is %u, not 0 or 1", path, i,
                          at + i, b[at + i]);
      }
  return RLX_OK;
}

/* Reads all of regular file fd (st_size bytes) into a malloc'd buffer. */
static rlx_status read_all(int fd, const char *path, size_t size, unsigned char **buf_out) {
  unsigned char *buf = malloc(size ? size : 1);
  if (!buf) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading %s (%zu bytes)", path, size);
  size_t got = 0;
  while (got < size) {
    ssize_t r = read(fd, buf + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      rlx_status st = r < 0 ? rlx_errorf(RLX_ERR_IO, "error reading %s at offset %zu: %s", path, got, strerror(errno))
                            : rlx_errorf(RLX_ERR_IO, "%s shrank while being read (%zu of %zu bytes)", path, got, size);
      free(buf);
      return st;
    }
    got += (size_t)r;
  }
  *buf_out = buf;
  return RLX_OK;
}

static const char *file_kind(mode_t m) {
  return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
       : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "a special file";
}

rlx_status rlx_npy_read(const char *path, rlx_tensor_view *v) {
  memset(v, 0, sizeof *v);
  /* O_NONBLOCK: opening a FIFO with no writer returns at once (then fstat refuses it). */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return rlx_errorf(RLX_ERR_IO, "cannot open %s: %s", path, strerror(errno));
  struct stat sb;
  rlx_status st = RLX_OK;
  unsigned char *buf = NULL;
  if (fstat(fd, &sb) != 0) {
    st = rlx_errorf(RLX_ERR_IO, "cannot stat %s: %s", path, strerror(errno));
  } else if (!S_ISREG(sb.st_mode)) {
    st = rlx_errorf(RLX_ERR_IO, "%s is %s; only regular files are read as .npy", path, file_kind(sb.st_mode));
  } else if ((uint64_t)sb.st_size > SIZE_MAX / 2) {
    st = rlx_errorf(RLX_ERR_IO, "%s is too large (%lld bytes)", path, (long long)sb.st_size);
  } else {
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    if (!(st = read_all(fd, path, (size_t)sb.st_size, &buf))) st = rlx_npy_parse(buf, (size_t)sb.st_size, path, v);
  }
  free(buf);
  close(fd);
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
