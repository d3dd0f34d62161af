/*
 * cmd_ops.c — `rlx ops`: the aten ops the lowering registry handles, and the
 * rlx op set they lower onto.
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
  printf("aten ops rlx lowers (%d, every overload unless a handler rejects it):\n", n);
  for (int i = 0; i < n; i++) printf("  aten.%s\n", names[i]);
  printf("\nrlx op set (%d):", RLX_OP_COUNT);
  for (int i = 0; i < RLX_OP_COUNT; i++) printf(" %s", rlx_op_table[i].name);
  printf("\n");
  free(names);
  return 0;
}
