/*
 * cmd_ops.c — `rlx ops`: the ops the lowering registry handles (aten, and
 * library custom ops such as transformers.grouped_mm_fallback), the rlx op
 * set they lower onto, and where rlx knowingly differs from torch.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "import/lower/lower.h"

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

int cmd_ops(int argc, char **argv) {
  (void)argv;
  if (argc) return cli_usage("ops", "usage: rlx ops");
  int n = rlx_lower_registry_count();
  const char **names = calloc((size_t)n, sizeof *names);
  if (!names) return 2;
  for (int i = 0; i < n; i++) names[i] = rlx_lower_registry_name(i);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  printf("ops rlx lowers (%d, every overload unless a handler rejects it):\n", n);
  for (int i = 0; i < n; i++) printf("  %s\n", names[i]);
  printf("\nrlx op set (%d):", RLX_OP_COUNT);
  for (int i = 0; i < RLX_OP_COUNT; i++) printf(" %s", rlx_op_table[i].name);
  printf("\n\nknown deviations from eager torch (docs/ops.md has the full coverage report):\n"
         "  - shapes are specialized to the exported example sizes; dynamic axes run at those sizes\n"
         "  - linear/cubic resize of integer (u8) images is refused: torch uses a 16-bit fixed-point\n"
         "    algorithm rlx does not reproduce bit-exactly (nearest modes are exact)\n"
         "  - gelu(+inf) is +inf; torch gives NaN in its vectorized lanes and +inf in scalar tails\n"
         "  - as_strided reads its input's contiguous storage (torch reads a view's base storage)\n"
         "  - sort, argsort and topk are stable; torch's topk may order equal values differently\n"
         "  - grouped mm offsets that decrease or pass the input's rows are a run-time error (torch's\n"
         "    fallback silently overlaps or clips the groups); rows past the last offset are zero\n"
         "    (torch's _grouped_mm leaves them unset)\n"
         "  - histc counts are exact; torch adds f16/bf16 counts in that dtype, which stops counting\n"
         "    past 2048 (f16) or 256 (bf16) per thread in one bin\n"
         "  - random ops (rand, randn, randperm, dropout in training) are not supported\n"
         "  - special functions (lgamma, digamma, polygamma, igamma, erfcx, ndtr, the Bessel family)\n"
         "    compute in double: where torch's own evaluation loses accuracy (ndtr's left tail,\n"
         "    igamma/igammac, digamma near its roots, torch's float64 J/Y above x = 5) rlx returns the\n"
         "    function's value; torch's edge values and its float-only argument rounding are kept\n"
         "  - mvlgamma takes orders p up to 2^20, polygamma orders n up to 2^53\n"
         "  - mode and nanmedian pick among equal values (all-NaN rows for nanmedian) as libstdc++'s\n"
         "    std::sort / std::nth_element do, i.e. as torch's Linux builds; other C++ libraries may differ\n"
         "  - put and index_copy with repeated indices (no accumulate): the last write wins\n"
         "  - as_strided_scatter writes its input's contiguous storage, as as_strided reads it\n"
         "  - complex values are computed as real pairs, inside a program only (its inputs and outputs\n"
         "    are real); FFTs compute in double (torch's float32 FFT in float); a real operand of a\n"
         "    complex mul/div scales both parts (torch multiplies by x + 0i: the same for finite values)\n");
  free(names);
  return 0;
}
