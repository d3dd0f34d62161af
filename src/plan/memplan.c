/*
 * memplan.c — lifetimes -> arena offsets (greedy by size, first fit among
 * time-overlapping blocks, as XNNPACK's and ggml's planners do).
 */
#include <stdlib.h>
#include <string.h>

#include "plan/memplan.h"

#define ALIGN 64

typedef struct block {
  int32_t value;
  size_t size;
  int32_t first, last; /* node indices, inclusive */
} block;

static int cmp_size_desc(const void *a, const void *b) {
  const block *x = a, *y = b;
  if (x->size != y->size) return x->size < y->size ? 1 : -1;
  return x->value - y->value; /* deterministic */
}

static int32_t root_of(const rlx_plan *p, int32_t v) { return p->alias_of[v] >= 0 ? p->alias_of[v] : v; }

rlx_status rlx_plan_memory(const rlx_graph *g, bool aliasing, const size_t *node_scratch, rlx_plan *p) {
  memset(p, 0, sizeof *p);
  int32_t nv = g->n_values, nn = g->n_nodes;
  p->n_values = nv;
  p->offset = rlx_malloc(sizeof(int64_t) * (size_t)(nv + 1));
  p->alias_of = rlx_malloc(sizeof(int32_t) * (size_t)(nv + 1));
  p->skip = rlx_calloc((size_t)(nn + 1), sizeof(bool));
  int32_t *first = rlx_malloc(sizeof(int32_t) * (size_t)(nv + 1));
  int32_t *last = rlx_malloc(sizeof(int32_t) * (size_t)(nv + 1));
  block *blocks = rlx_malloc(sizeof(block) * (size_t)(nv + 1));
  block *placed = rlx_malloc(sizeof(block) * (size_t)(nv + 1));
  int64_t *poff = rlx_malloc(sizeof(int64_t) * (size_t)(nv + 1));
  rlx_status st = RLX_OK;
  if (!p->offset || !p->alias_of || !p->skip || !first || !last || !blocks || !placed || !poff) {
    st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory planning memory");
    goto done;
  }
  for (int32_t v = 0; v < nv; v++) p->offset[v] = -1, p->alias_of[v] = -1, first[v] = -1, last[v] = -1;

  /* aliases: a reshape's output shares its input's storage */
  for (int32_t i = 0; aliasing && i < nn; i++) {
    const rlx_node *n = &g->nodes[i];
    if (n->op != RLX_OP_RESHAPE) continue;
    p->alias_of[n->out[0]] = root_of(p, n->in[0]);
    p->skip[i] = true;
  }
  /* lifetimes of arena roots */
  for (int32_t i = 0; i < nn; i++) {
    const rlx_node *n = &g->nodes[i];
    for (int32_t k = 0; k < n->n_out; k++) {
      int32_t r = root_of(p, n->out[k]);
      if (first[r] < 0) first[r] = i;
      if (last[r] < i) last[r] = i;
    }
    for (int32_t k = 0; k < n->n_in; k++)
      if (n->in[k] >= 0) {
        int32_t r = root_of(p, n->in[k]);
        if (last[r] < i) last[r] = i;
      }
  }
  for (int32_t i = 0; i < g->n_outputs; i++) last[root_of(p, g->outputs[i])] = nn;

  int32_t nb = 0;
  for (int32_t v = 0; v < nv; v++) {
    const rlx_value *val = &g->values[v];
    if (val->kind != RLX_VALUE_NODE || val->producer < 0 || p->alias_of[v] >= 0) continue;
    size_t sz = (rlx_value_nbytes(val) + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    blocks[nb++] = (block){v, sz, first[v], last[v]};
  }
  qsort(blocks, (size_t)nb, sizeof *blocks, cmp_size_desc);
  int32_t np = 0;
  for (int32_t b = 0; b < nb; b++) {
    /* lowest offset not overlapping any placed block alive at the same time */
    int64_t off = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (int32_t j = 0; j < np; j++) {
        if (placed[j].last < blocks[b].first || blocks[b].last < placed[j].first) continue;
        if (off < poff[j] + (int64_t)placed[j].size && poff[j] < off + (int64_t)blocks[b].size) {
          off = poff[j] + (int64_t)placed[j].size;
          moved = true;
        }
      }
    }
    placed[np] = blocks[b];
    poff[np++] = off;
    p->offset[blocks[b].value] = off;
    if ((size_t)off + blocks[b].size > p->values_size) p->values_size = (size_t)off + blocks[b].size;
  }
  for (int32_t i = 0; i < nn; i++) {
    const rlx_op_vtable *vt = rlx_op_table[g->nodes[i].op].vt;
    size_t s = node_scratch ? node_scratch[i] : vt->scratch ? vt->scratch(g, &g->nodes[i]) : 0;
    if (s > p->scratch_size) p->scratch_size = s;
  }
  p->scratch_size = (p->scratch_size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
  p->scratch_offset = p->values_size;
  p->arena_size = p->values_size + p->scratch_size;
done:
  rlx_free(first);
  rlx_free(last);
  rlx_free(blocks);
  rlx_free(placed);
  rlx_free(poff);
  if (st) rlx_plan_free(p);
  return st;
}

void rlx_plan_free(rlx_plan *p) {
  rlx_free(p->offset);
  rlx_free(p->alias_of);
  rlx_free(p->skip);
  memset(p, 0, sizeof *p);
}
