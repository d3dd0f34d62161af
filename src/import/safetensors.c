/*
 * safetensors.c — the validating safetensors reader (format table in
 * safetensors.h). Parsing works on any in-memory image, so the fuzz target
 * and the tests exercise exactly the code that reads mapped files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import/json_util.h"
#include "import/safetensors.h"

/* By offset, then size: an empty tensor at the start of another sorts
 * first, so the overlap check does not depend on the header's order. */
static int cmp_offset(const void *a, const void *b) {
  const rlx_st_tensor *x = a, *y = b;
  if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
  return x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

static rlx_status parse_entry(rlx_st_file *f, const cJSON *e, uint64_t data_start, uint64_t data_len,
                              rlx_st_tensor *t) {
  const char *path = f->path, *name = e->string;
  char where[512];
  snprintf(where, sizeof where, "%s: tensor '%.200s'", path, name);
  if (!cJSON_IsObject(e)) return rlx_errorf(RLX_ERR_FORMAT, "%s: entry is not an object", where);
  const char *dt;
  rlx_status st = rlx_json_str(e, "dtype", where, &dt);
  if (st) return st;
  int d = rlx_dtype_from_safetensors(dt);
  if (d < 0) return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s: unknown or unsupported dtype '%s'", where, dt);
  char sw[600];
  snprintf(sw, sizeof sw, "%s: shape", where);
  if ((st = rlx_json_shape(cJSON_GetObjectItemCaseSensitive(e, "shape"), sw, &t->shape))) return st;
  const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
  int64_t b, en;
  if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 ||
      rlx_json_int(cJSON_GetArrayItem(offs, 0), where, &b) ||
      rlx_json_int(cJSON_GetArrayItem(offs, 1), where, &en))
    return rlx_errorf(RLX_ERR_FORMAT, "%s: 'data_offsets' must be [begin, end] integers", where);
  if (b < 0 || en < b || (uint64_t)en > data_len)
    return rlx_errorf(RLX_ERR_FORMAT, "%s: data_offsets [%lld, %lld] out of range (data section is "
                      "%llu bytes at file offset %llu)", where, (long long)b, (long long)en,
                      (unsigned long long)data_len, (unsigned long long)data_start);
  uint64_t need = rlx_dtype_size((rlx_dtype)d);
  for (int i = 0; i < t->shape.rank; i++)
    if (!rlx_mul_ok(need, (uint64_t)t->shape.dims[i], &need))
      return rlx_errorf(RLX_ERR_FORMAT, "%s: size overflows", where);
  if (need != (uint64_t)(en - b))
    return rlx_errorf(RLX_ERR_FORMAT, "%s: %s %s needs %llu bytes but data_offsets span %lld", where,
                      dt, "shape", (unsigned long long)need, (long long)(en - b));
  t->name = rlx_pool_strdup(&f->pool, name);
  if (!t->name) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  t->dtype = (rlx_dtype)d;
  t->nbytes = need;
  t->offset = data_start + (uint64_t)b;
  return RLX_OK;
}

rlx_status rlx_st_parse(const void *buf, size_t size, const char *path, rlx_st_file *f) {
  memset(f, 0, sizeof *f);
  f->fd = -1;
  f->path = path;
  f->size = size;
  if (size == 0) return RLX_OK; /* an empty file holds no tensors */
  const unsigned char *p = buf;
  if (size < 8)
    return rlx_errorf(RLX_ERR_FORMAT, "%s: truncated: %zu bytes, the 8-byte header length is "
                      "missing", path, size);
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; i--) hlen = hlen << 8 | p[i];
  if (hlen > size - 8)
    return rlx_errorf(RLX_ERR_FORMAT, "%s: header length %llu (at offset 0) exceeds the file "
                      "(%zu bytes): truncated or corrupt", path, (unsigned long long)hlen, size);
  if (hlen > (1u << 30)) return rlx_errorf(RLX_ERR_FORMAT, "%s: header of %llu bytes is too large",
                                           path, (unsigned long long)hlen);
  cJSON *root = NULL;
  rlx_status st = rlx_json_parse((const char *)p + 8, (size_t)hlen, path, &root);
  if (st) {
    rlx_error_prefix("safetensors header (bytes 8..%llu): ", (unsigned long long)(8 + hlen));
    return st;
  }
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return rlx_errorf(RLX_ERR_FORMAT, "%s: the header must be a JSON object", path);
  }
  uint64_t data_start = 8 + hlen, data_len = size - data_start;
  int cnt = cJSON_GetArraySize(root);
  f->tensors = rlx_calloc((size_t)(cnt ? cnt : 1), sizeof *f->tensors);
  if (!f->tensors) {
    st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  const cJSON *e;
  cJSON_ArrayForEach(e, root) {
    if (!strcmp(e->string, "__metadata__")) {
      if (!cJSON_IsObject(e)) {
        st = rlx_errorf(RLX_ERR_FORMAT, "%s: __metadata__ must be an object", path);
        goto done;
      }
      continue;
    }
    if ((st = parse_entry(f, e, data_start, data_len, &f->tensors[f->n_tensors]))) goto done;
    f->tensors[f->n_tensors].data = p + f->tensors[f->n_tensors].offset;
    f->n_tensors++;
  }
  /* offsets must not overlap */
  qsort(f->tensors, (size_t)f->n_tensors, sizeof *f->tensors, cmp_offset);
  for (int32_t i = 1; i < f->n_tensors; i++) {
    const rlx_st_tensor *a = &f->tensors[i - 1], *b = &f->tensors[i];
    if (a->offset + a->nbytes > b->offset) {
      st = rlx_errorf(RLX_ERR_FORMAT, "%s: tensors '%s' and '%s' overlap (file offsets %llu+%llu and "
                      "%llu)", path, a->name, b->name, (unsigned long long)a->offset,
                      (unsigned long long)a->nbytes, (unsigned long long)b->offset);
      goto done;
    }
  }
  for (int32_t i = 0; i < f->n_tensors; i++) {
    if (rlx_strmap_get(&f->index, f->tensors[i].name) >= 0) {
      st = rlx_errorf(RLX_ERR_FORMAT, "%s: tensor '%s' appears twice", path, f->tensors[i].name);
      goto done;
    }
    if ((st = rlx_strmap_put(&f->index, f->tensors[i].name, i))) goto done;
  }
done:
  cJSON_Delete(root);
  if (st) rlx_st_close(f);
  return st;
}

static rlx_status open_file(const char *path, bool copy, rlx_st_file *f) {
  memset(f, 0, sizeof *f);
  f->fd = -1;
  int fd;
  uint64_t size64;
  rlx_status st = rlx_file_open(path, &fd, &size64);
  if (st) return st;
  if (size64 > SIZE_MAX / 2) {
    close(fd);
    return rlx_errorf(RLX_ERR_IO, "%s is too large (%llu bytes)", path, (unsigned long long)size64);
  }
  size_t size = (size_t)size64;
  void *map = NULL, *owned = NULL;
  if (size && copy) {
    owned = rlx_aligned_alloc(size);
    if (!owned) {
      close(fd);
      return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory copying %s (%zu bytes)", path, size);
    }
    size_t got = 0;
    while (got < size) {
      ssize_t n = pread(fd, (char *)owned + got, size - got, (off_t)got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        int e = n < 0 ? errno : 0;
        rlx_aligned_free(owned);
        close(fd);
        return rlx_errorf(RLX_ERR_IO, "error reading %s at byte %zu: %s", path, got,
                          e ? strerror(e) : "the file shrank while it was read");
      }
      got += (size_t)n;
    }
  } else if (size) {
    map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      int e = errno;
      close(fd);
      return rlx_errorf(RLX_ERR_IO, "cannot map %s: %s", path, strerror(e));
    }
  }
  st = rlx_st_parse(map ? map : owned, size, path, f);
  if (st) {
    if (map) munmap(map, size);
    rlx_aligned_free(owned);
    close(fd);
    return st;
  }
  f->map = map;
  f->owned = owned;
  if (map) f->fd = fd; /* kept: rlx_st_check watches the mapped file's size */
  else close(fd);
  return RLX_OK;
}

rlx_status rlx_st_open(const char *path, rlx_st_file *f) { return open_file(path, false, f); }
rlx_status rlx_st_read(const char *path, rlx_st_file *f) { return open_file(path, true, f); }

rlx_status rlx_st_check(const rlx_st_file *f) {
  if (f->fd < 0) return RLX_OK;
  struct stat sb;
  if (fstat(f->fd, &sb) != 0)
    return rlx_errorf(RLX_ERR_IO, "cannot stat %s: %s", f->path, strerror(errno));
  if ((uint64_t)sb.st_size < (uint64_t)f->size)
    return rlx_errorf(RLX_ERR_IO, "%s was truncated from %zu to %lld bytes while rlx had it mapped: "
                      "reload the model (or load with copy_weights)", f->path, f->size, (long long)sb.st_size);
  return RLX_OK;
}

const rlx_st_tensor *rlx_st_find(const rlx_st_file *f, const char *name) {
  int32_t i = rlx_strmap_get(&f->index, name);
  return i < 0 ? NULL : &f->tensors[i];
}

bool rlx_st_aligned(const rlx_st_tensor *t) {
  size_t es = rlx_dtype_size(t->dtype);
  return !t->nbytes || (uintptr_t)t->data % es == 0;
}

rlx_status rlx_st_align(rlx_st_file *f) {
  for (int32_t i = 0; i < f->n_tensors; i++) {
    rlx_st_tensor *t = &f->tensors[i];
    if (rlx_st_aligned(t)) continue;
    if (rlx_grow((void **)&f->copies, &f->cap_copies, f->n_copies + 1, sizeof *f->copies)) return RLX_ERR_OUT_OF_MEMORY;
    void *c = rlx_aligned_alloc((size_t)t->nbytes);
    if (!c) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory copying tensor '%s' of %s", t->name, f->path);
    memcpy(c, t->data, (size_t)t->nbytes);
    f->copies[f->n_copies++] = c;
    t->data = c;
  }
  return RLX_OK;
}

void rlx_st_close(rlx_st_file *f) {
  if (!f) return;
  for (int32_t i = 0; i < f->n_copies; i++) rlx_aligned_free(f->copies[i]);
  rlx_free(f->copies);
  if (f->map) {
    munmap(f->map, f->size);
    if (f->fd >= 0) close(f->fd);
  }
  rlx_aligned_free(f->owned);
  rlx_free(f->tensors);
  rlx_strmap_free(&f->index);
  rlx_pool_free(&f->pool);
  memset(f, 0, sizeof *f);
}
