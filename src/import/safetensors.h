/*
 * safetensors.h — a validating reader for .safetensors files.
 *
 * File layout:
 *
 *   offset  size  field
 *   0       8     N: header length, unsigned little-endian
 *   8       N     header: JSON object {name: {dtype, shape, data_offsets:
 *                 [begin, end]}, "__metadata__"?: {str: str}}
 *   8+N     ...   data; tensor bytes at [8+N+begin, 8+N+end)
 *
 * Every field is validated before use: N fits in the file, the header is a
 * JSON object, dtypes are known, shapes are non-negative, offsets are in
 * range, ordered and non-overlapping, and numel x element size equals
 * end - begin (with overflow-checked arithmetic). A 0-byte file holds no
 * tensors. The file is mapped read-only (or read into memory); tensor data
 * points into the map.
 */
#ifndef RLX_SAFETENSORS_H
#define RLX_SAFETENSORS_H

#include "core/core.h"

typedef struct rlx_st_tensor {
  const char *name;
  rlx_dtype dtype;
  rlx_shape shape;
  const void *data;   /* into the mapping */
  uint64_t nbytes;
  uint64_t offset;    /* absolute file offset of the data */
} rlx_st_tensor;

typedef struct rlx_st_file {
  const char *path;
  void *map;          /* mmap base, or NULL for an empty file / parse from memory */
  void *owned;        /* or the file's bytes read into memory (rlx_st_read) */
  int fd;             /* the mapped file, kept open for rlx_st_check; else -1 */
  size_t size;
  rlx_st_tensor *tensors;
  int32_t n_tensors;
  rlx_strmap index;   /* name -> tensor index */
  rlx_pool pool;
  void **copies;      /* aligned copies made by rlx_st_align */
  int32_t n_copies, cap_copies;
} rlx_st_file;

/* Maps and validates `path` (a regular file; see rlx_file_open). The map is
 * MAP_PRIVATE over the file: if another process truncates the file while it
 * is mapped, reading the lost pages raises SIGBUS, so the runtime calls
 * rlx_st_check before every run; changes written into the file in place
 * show through. */
rlx_status rlx_st_open(const char *path, rlx_st_file *f);
/* The same, reading the file into memory instead of mapping it: later
 * changes to the file cannot affect it. */
rlx_status rlx_st_read(const char *path, rlx_st_file *f);
/* RLX_ERR_IO naming the file if a mapped file is now shorter than when it
 * was mapped (so reading the map would raise SIGBUS); RLX_OK otherwise. */
rlx_status rlx_st_check(const rlx_st_file *f);
/* Validates a file image in memory (not copied; must outlive f). */
rlx_status rlx_st_parse(const void *buf, size_t size, const char *path, rlx_st_file *f);
const rlx_st_tensor *rlx_st_find(const rlx_st_file *f, const char *name);
/* Whether a tensor's data is aligned to its element size. The format does
 * not require it (the official writer aligns, older writers may not); code
 * that loads elements in place needs it. */
bool rlx_st_aligned(const rlx_st_tensor *t);
/* Gives every misaligned tensor an aligned copy of its data (owned by f),
 * so that all of f's tensors can be read in place. */
rlx_status rlx_st_align(rlx_st_file *f);
void rlx_st_close(rlx_st_file *f);

#endif /* RLX_SAFETENSORS_H */
