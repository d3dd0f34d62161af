/*
 * fuzz_npy.c — libFuzzer target for the .npy reader (tools/rlx/npy.c).
 *
 * Input: a whole .npy image, parsed by rlx_npy_parse. On success the copied
 * data is read (summed) over exactly numel x element size bytes, so a size
 * the parser got wrong is an ASan report. Run with scripts/fuzz.sh npy SECONDS.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/core.h"
#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rlx_tensor_view v;
  if (rlx_npy_parse(data, size, "fuzz.npy", &v)) {
    if (v.data) __builtin_trap(); /* data is NULL on error */
    return 0;
  }
  size_t n = (size_t)rlx_view_numel(&v) * rlx_dtype_size(v.dtype);
  if (n > size) __builtin_trap(); /* the data is a copy of part of the input */
  volatile uint64_t sum = 0;
  const uint8_t *p = v.data;
  for (size_t i = 0; i < n; i++) sum += p[i];
  (void)sum;
  free(v.data);
  return 0;
}
