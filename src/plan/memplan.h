/*
 * memplan.h — the memory plan: where every value of a compiled graph lives.
 *
 *   - graph inputs: caller memory bound at run time;
 *   - weights and constants: their data (mapped file or owned buffer);
 *   - node outputs: offsets in one 64-byte-aligned arena, shared between
 *     values whose lifetimes (first definition .. last use) do not overlap;
 *   - reshape outputs: aliases of their input's storage (no copy);
 *   - concats in place: where a concat's inputs are contiguous slices of its
 *     output (every axis before the concat axis of size 1), each input lives
 *     at its slice of the concat's storage, so its producer writes it there,
 *     and the concat (and every concat of a prefix of its inputs, a prefix of
 *     its storage: DenseNet's blocks) runs no kernel;
 *   - per-node scratch: one region after the values, sized for the largest.
 *
 * Nothing is allocated while running: a session allocates the arena once.
 */
#ifndef RLX_MEMPLAN_H
#define RLX_MEMPLAN_H

#include "ir/graph.h"

typedef struct rlx_plan {
  int32_t n_values;
  int64_t *offset;     /* arena offset per value; -1 when not in the arena */
  int32_t *alias_of;   /* root value whose storage this value shares; -1 if none */
  int64_t *alias_off;  /* with alias_of: the byte offset of this value in the root's storage */
  bool *skip;          /* per node: no kernel to run (an aliasing reshape, a concat in place) */
  size_t values_size;  /* bytes used by values */
  size_t scratch_offset, scratch_size;
  size_t arena_size;   /* values + scratch */
  int32_t largest;     /* the largest value in the arena (for messages), -1 if none */
} rlx_plan;

typedef struct rlx_plan_ws rlx_plan_ws;

/* Working memory for planning graphs of up to nv values and nn nodes. */
rlx_status rlx_plan_ws_create(int32_t nv, int32_t nn, rlx_plan_ws **out);
void rlx_plan_ws_destroy(rlx_plan_ws *w);
/* Allocates a plan's arrays for nv values and nn nodes (free: rlx_plan_free). */
rlx_status rlx_plan_alloc(rlx_plan *p, int32_t nv, int32_t nn);
/* Plans into a plan allocated by rlx_plan_alloc, with workspace w:
 * allocates nothing (a session replans for each new binding this way). */
rlx_status rlx_plan_memory_ws(const rlx_graph *g, bool aliasing, const size_t *node_scratch, rlx_plan_ws *w,
                              rlx_plan *p);

/* `aliasing`: let reshape outputs share their input's storage, and concats
 * run in place.
 * `node_scratch`: scratch bytes per node of the chosen kernels (NULL: the
 * reference kernels' own). */
rlx_status rlx_plan_memory(const rlx_graph *g, bool aliasing, const size_t *node_scratch, rlx_plan *plan);
void rlx_plan_free(rlx_plan *plan);
/* Recomputes the byte offsets of the plan's aliases (concat slices and the
 * reshapes of them) from g's value sizes: for a plan made at another binding
 * of the same graph, whose aliases hold at every binding (the runtime's
 * fallback to the largest binding's plan, runtime/instance.c). */
void rlx_plan_alias_offsets(const rlx_graph *g, rlx_plan *p);

#endif
