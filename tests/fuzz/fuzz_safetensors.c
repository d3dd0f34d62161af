/*
 * fuzz_safetensors.c — libFuzzer target for the safetensors reader.
 *
 * Input: a whole .safetensors image, parsed in place by rlx_st_parse. On
 * success every tensor's bytes are read (summed), so an offset or size the
 * validator let through out of range is an ASan report, and every tensor
 * is looked up by name. Run with scripts/fuzz.sh safetensors SECONDS.
 */
#include <stddef.h>
#include <stdint.h>

#include "import/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rlx_st_file f;
  if (rlx_st_parse(data, size, "fuzz.safetensors", &f)) return 0;
  volatile uint64_t sum = 0;
  for (int32_t i = 0; i < f.n_tensors; i++) {
    const rlx_st_tensor *t = &f.tensors[i];
    const uint8_t *p = t->data;
    uint64_t s = 0;
    for (uint64_t k = 0; k < t->nbytes; k++) s += p[k];
    sum += s;
    if (rlx_st_find(&f, t->name) != t) __builtin_trap(); /* the index must find every tensor */
  }
  (void)sum;
  rlx_st_close(&f);
  return 0;
}
