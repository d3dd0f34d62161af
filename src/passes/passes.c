/*
 * passes.c — runs the passes of passes.def in order, verifying after each.
 * RLX_SKIP_PASSES=name,name,... leaves those passes out (to find which
 * rewrite changes a result; `rlx verify --no-passes` leaves out all).
 */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

/* Whether `name` is in the comma-separated list `list`. */
static bool listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && !strncmp(p, name, n)) return true;
    p = e ? e + 1 : NULL;
  }
  return false;
}

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
  const char *skip = getenv("RLX_SKIP_PASSES");
  for (size_t i = 0; i < RLX_COUNTOF(passes); i++) {
    if (skip && listed(skip, passes[i].name)) continue;
    rlx_status st = passes[i].run(g);
    if (st) {
      rlx_error_prefix("pass %s: ", passes[i].name);
      return st;
    }
    if (verify && (st = rlx_graph_verify(g, passes[i].name))) return st;
  }
  return RLX_OK;
}
