/*
 * passes.c — runs the passes of passes.def in order, verifying after each.
 */
#include "passes/passes.h"

typedef struct pass_entry {
  const char *name;
  rlx_status (*run)(rlx_graph *g);
} pass_entry;

static const pass_entry passes[] = {
#define RLX_PASS(name, desc) {#name, rlx_pass_##name},
#include "passes/passes.def"
#undef RLX_PASS
};

rlx_status rlx_passes_run(rlx_graph *g, bool verify) {
#if defined(RLX_CHECKED) || !defined(NDEBUG)
  verify = true;
#endif
  for (size_t i = 0; i < RLX_COUNTOF(passes); i++) {
    rlx_status st = passes[i].run(g);
    if (st) {
      rlx_error_prefix("pass %s: ", passes[i].name);
      return st;
    }
    if (verify && (st = rlx_graph_verify(g, passes[i].name))) return st;
  }
  return RLX_OK;
}
