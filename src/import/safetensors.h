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
 * tensors. The file is mapped read-only; tensor data points into the map.
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
  size_t size;
  rlx_st_tensor *tensors;
  int32_t n_tensors;
  rlx_strmap index;   /* name -> tensor index */
  rlx_pool pool;
} rlx_st_file;

/* Maps and validates `path`. */
rlx_status rlx_st_open(const char *path, rlx_st_file *f);
/* Validates a file image in memory (not copied; must outlive f). */
rlx_status rlx_st_parse(const void *buf, size_t size, const char *path, rlx_st_file *f);
const rlx_st_tensor *rlx_st_find(const rlx_st_file *f, const char *name);
void rlx_st_close(rlx_st_file *f);

#endif /* RLX_SAFETENSORS_H */
