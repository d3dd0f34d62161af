/*
 * memplan.c — lifetimes -> arena offsets in O(n log n).
 *
 * One sweep over the nodes in program order, as a register allocator sweeps
 * instructions: at node i the blocks first defined there are placed, then
 * the blocks last used there are released (after placing, so a node's
 * outputs never overlap its inputs). Free address ranges are kept coalesced
 * (a neighbour map by start and by end) and indexed by (size, offset) in a
 * treap; a block goes to the smallest free range that holds it (best fit,
 * lowest offset among equals), or else on top of the arena, reusing a free
 * range that ends at the top. Every step is O(log n) expected, so a chain of
 * 200k nodes plans in milliseconds (the greedy-by-size planner this replaced
 * compared each block with every placed block: O(n^2)).
 */
#include <stdlib.h>
#include <string.h>

#include "plan/memplan.h"

#define ALIGN 64

/* ---- free ranges: a treap by (size, offset), neighbour maps by address ---- */

typedef struct frange {
  int64_t off, size; /* size < 0: no longer free */
  uint32_t prio;
  int32_t l, r; /* treap children, -1 none */
} frange;

typedef struct fmap { /* open addressing, int64 key -> range id; stale ids are checked by the caller */
  int64_t *keys;
  int32_t *vals;
  uint32_t mask;
} fmap;

typedef struct planner {
  frange *rs;
  int32_t n_rs, root;
  uint32_t seed;
  fmap by_start, by_end;
  int64_t top; /* end of the arena so far */
} planner;

static uint32_t hash64(int64_t k) {
  uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15ull;
  return (uint32_t)(x >> 32);
}

static void fmap_put(fmap *m, int64_t key, int32_t val) {
  uint32_t h = hash64(key) & m->mask;
  while (m->vals[h] >= 0 && m->keys[h] != key) h = (h + 1) & m->mask;
  m->keys[h] = key, m->vals[h] = val;
}

static int32_t fmap_get(const fmap *m, int64_t key) {
  uint32_t h = hash64(key) & m->mask;
  while (m->vals[h] >= 0) {
    if (m->keys[h] == key) return m->vals[h];
    h = (h + 1) & m->mask;
  }
  return -1;
}

static bool key_less(const frange *a, const frange *b) {
  return a->size != b->size ? a->size < b->size : a->off < b->off;
}

/* Splits treap t into keys < k (l) and >= k (r). */
static void split(frange *rs, int32_t t, const frange *k, int32_t *l, int32_t *r) {
  if (t < 0) {
    *l = *r = -1;
    return;
  }
  if (key_less(&rs[t], k)) {
    split(rs, rs[t].r, k, &rs[t].r, r);
    *l = t;
  } else {
    split(rs, rs[t].l, k, l, &rs[t].l);
    *r = t;
  }
}

static int32_t merge(frange *rs, int32_t a, int32_t b) {
  if (a < 0) return b;
  if (b < 0) return a;
  if (rs[a].prio > rs[b].prio) {
    rs[a].r = merge(rs, rs[a].r, b);
    return a;
  }
  rs[b].l = merge(rs, a, rs[b].l);
  return b;
}

static void treap_insert(planner *p, int32_t id) {
  int32_t l, r;
  split(p->rs, p->root, &p->rs[id], &l, &r);
  p->root = merge(p->rs, merge(p->rs, l, id), r);
}

static void treap_erase(planner *p, int32_t id) {
  frange k = p->rs[id];
  int32_t l, mid, r;
  split(p->rs, p->root, &k, &l, &mid); /* mid: keys >= k; its smallest is id */
  k.off++;                             /* the next key after id's */
  split(p->rs, mid, &k, &mid, &r);
  p->root = merge(p->rs, l, r);
}

/* The free range with the smallest (size, offset) of size >= need, or -1. */
static int32_t best_fit(const planner *p, int64_t need) {
  int32_t t = p->root, best = -1;
  while (t >= 0) {
    if (p->rs[t].size >= need) best = t, t = p->rs[t].l;
    else t = p->rs[t].r;
  }
  return best;
}

static void add_free(planner *p, int64_t off, int64_t size) {
  int32_t prev = fmap_get(&p->by_end, off), next = fmap_get(&p->by_start, off + size);
  if (prev >= 0 && p->rs[prev].size >= 0 && p->rs[prev].off + p->rs[prev].size == off) {
    treap_erase(p, prev);
    off = p->rs[prev].off, size += p->rs[prev].size;
    p->rs[prev].size = -1;
  }
  if (next >= 0 && p->rs[next].size >= 0 && p->rs[next].off == off + size) {
    treap_erase(p, next);
    size += p->rs[next].size;
    p->rs[next].size = -1;
  }
  int32_t id = p->n_rs++;
  p->seed = p->seed * 1664525u + 1013904223u;
  p->rs[id] = (frange){off, size, p->seed, -1, -1};
  treap_insert(p, id);
  fmap_put(&p->by_start, off, id);
  fmap_put(&p->by_end, off + size, id);
}

/* Offset for a block of `size` bytes (a multiple of ALIGN); -1 on overflow. */
static int64_t place(planner *p, int64_t size) {
  int32_t f = best_fit(p, size);
  if (f < 0) { /* on top of the arena, taking a free range that ends there */
    int32_t t = fmap_get(&p->by_end, p->top);
    int64_t off = p->top;
    if (t >= 0 && p->rs[t].size >= 0 && p->rs[t].off + p->rs[t].size == p->top) {
      treap_erase(p, t);
      off = p->rs[t].off;
      p->rs[t].size = -1;
    }
    if (__builtin_add_overflow(off, size, &p->top)) return -1;
    return off;
  }
  frange r = p->rs[f];
  treap_erase(p, f);
  p->rs[f].size = -1;
  if (r.size > size) add_free(p, r.off + size, r.size - size);
  return r.off;
}

/* ---- the plan ---- */

static int32_t root_of(const rlx_plan *p, int32_t v) { return p->alias_of[v] >= 0 ? p->alias_of[v] : v; }

static bool in_arena(const rlx_graph *g, const rlx_plan *p, int32_t v) {
  return g->values[v].kind == RLX_VALUE_NODE && g->values[v].producer >= 0 && p->alias_of[v] < 0;
}

/* Whether v can live at a slice of another value's storage: a node's output
 * in the arena, not yet an alias, not a root of aliases (the output of a
 * concat already in place), not a graph output. */
static bool sliceable(const rlx_graph *g, const rlx_plan *p, int32_t v) {
  if (v < 0 || !in_arena(g, p, v) || rlx_value_nbytes(&g->values[v]) == 0) return false;
  int32_t pr = g->values[v].producer;
  if (g->nodes[pr].op == RLX_OP_CONCAT && p->skip[pr]) return false;
  for (int32_t i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == v) return false;
  return true;
}

#define CAT_CONFLICT (-3) /* pos: read at two places of concats */
#define CAT_FIRST (-2)    /* prev: read first */

/* Concats in place. pos[v]: the position at which concats read v (-1: none,
 * CAT_CONFLICT: at two positions, or twice by one concat); prev[v]: the
 * input before it there (CAT_FIRST at position 0; a disagreement is a
 * conflict too). Then, from the last concat back: a concat whose inputs
 * already sit at their offsets in one root of its axis, in order from
 * offset 0, is a prefix of that root (DenseNet's layers inside a block);
 * else, where every axis before the concat axis has size 1 (each input a
 * contiguous run of the output) and every input is read by concats only at
 * this place after these same inputs (so it needs one home), its inputs
 * become slices of its output. Either way the concat runs no kernel. One
 * sweep over the concats' inputs. */
static void concats_in_place(const rlx_graph *g, rlx_plan *p, int32_t *pos, int32_t *prev) {
  for (int32_t v = 0; v < g->n_values; v++) pos[v] = -1, prev[v] = -1;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const rlx_node *c = &g->nodes[i];
    if (c->op != RLX_OP_CONCAT) continue;
    for (int32_t k = 0; k < c->n_in; k++) {
      int32_t v = c->in[k], before = k ? c->in[k - 1] : CAT_FIRST;
      if (v < 0) continue;
      if (pos[v] == -1) pos[v] = k, prev[v] = before;
      else if (pos[v] != k || prev[v] != before) pos[v] = CAT_CONFLICT;
    }
  }
  for (int32_t i = g->n_nodes - 1; i >= 0; i--) {
    const rlx_node *c = &g->nodes[i];
    if (c->op != RLX_OP_CONCAT || c->n_in == 0 || c->in[0] < 0) continue;
    int32_t o = c->out[0], ax = c->p.axis.axis, root = p->alias_of[c->in[0]];
    int32_t rp = root >= 0 ? g->values[root].producer : -1; /* a root of slices is a concat's output in place */
    bool cat_root = rp >= 0 && g->nodes[rp].op == RLX_OP_CONCAT && p->skip[rp] && g->nodes[rp].p.axis.axis == ax;
    if (cat_root && sliceable(g, p, o)) {
      int64_t off = 0; /* a prefix of a root? */
      int32_t k = 0;
      for (; k < c->n_in; k++) {
        int32_t v = c->in[k];
        if (v < 0 || p->alias_of[v] != root || p->alias_off[v] != off) break;
        off += (int64_t)rlx_value_nbytes(&g->values[v]);
      }
      if (k == c->n_in) {
        p->alias_of[o] = root, p->alias_off[o] = 0, p->skip[i] = true;
        continue;
      }
    }
    if (p->alias_of[o] >= 0 || !in_arena(g, p, o) || ax < 0 || ax >= g->values[o].shape.rank) continue;
    bool ok = true;
    for (int a = 0; a < ax; a++) ok = ok && g->values[o].shape.dims[a] == 1;
    for (int32_t k = 0; k < c->n_in && ok; k++) {
      int32_t v = c->in[k];
      ok = sliceable(g, p, v) && pos[v] == k && prev[v] == (k ? c->in[k - 1] : CAT_FIRST);
    }
    if (!ok) continue;
    int64_t off = 0;
    for (int32_t k = 0; k < c->n_in; k++) {
      int32_t v = c->in[k];
      p->alias_of[v] = o, p->alias_off[v] = off;
      off += (int64_t)rlx_value_nbytes(&g->values[v]);
    }
    p->skip[i] = true;
  }
}

void rlx_plan_alias_offsets(const rlx_graph *g, rlx_plan *p) {
  for (int32_t v = 0; v < g->n_values; v++) p->alias_off[v] = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) { /* a root's slices, in order */
    const rlx_node *c = &g->nodes[i];
    if (!p->skip[i] || c->op != RLX_OP_CONCAT || p->alias_of[c->out[0]] >= 0) continue;
    int64_t off = 0;
    for (int32_t k = 0; k < c->n_in; k++) {
      p->alias_off[c->in[k]] = off;
      off += (int64_t)rlx_value_nbytes(&g->values[c->in[k]]);
    }
  }
  for (int32_t i = 0; i < g->n_nodes; i++) { /* reshapes view what they reshape (prefixes stay at 0) */
    const rlx_node *n = &g->nodes[i];
    if (p->skip[i] && n->op == RLX_OP_RESHAPE) p->alias_off[n->out[0]] = p->alias_off[n->in[0]];
  }
}

/* The planner's working memory, allocated once per (values, nodes) size so
 * that a session can replan for a new binding without allocating. */
struct rlx_plan_ws {
  int32_t nv, nn;
  uint32_t cap;
  int32_t *last, *free_at, *free_next;
  frange *rs;
  int64_t *keys_s, *keys_e;
  int32_t *vals_s, *vals_e;
};

rlx_status rlx_plan_ws_create(int32_t nv, int32_t nn, rlx_plan_ws **out) {
  rlx_plan_ws *w = rlx_calloc(1, sizeof *w);
  if (!w) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory planning memory");
  w->nv = nv, w->nn = nn, w->cap = 16;
  while ((uint64_t)w->cap < 8 * (uint64_t)(nv + 1) && w->cap < (1u << 31)) w->cap <<= 1;
  w->last = rlx_malloc(sizeof(int32_t) * (size_t)(nv + 1));
  w->free_at = rlx_malloc(sizeof(int32_t) * (size_t)(nn + 2)); /* per node: head of its release list */
  w->free_next = rlx_malloc(sizeof(int32_t) * (size_t)(nv + 1));
  w->rs = rlx_malloc(sizeof(frange) * (size_t)(2 * nv + 2));
  w->keys_s = rlx_malloc(sizeof(int64_t) * w->cap), w->keys_e = rlx_malloc(sizeof(int64_t) * w->cap);
  w->vals_s = rlx_malloc(sizeof(int32_t) * w->cap), w->vals_e = rlx_malloc(sizeof(int32_t) * w->cap);
  if (!w->last || !w->free_at || !w->free_next || !w->rs || !w->keys_s || !w->keys_e || !w->vals_s || !w->vals_e) {
    rlx_plan_ws_destroy(w);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory planning memory");
  }
  *out = w;
  return RLX_OK;
}

void rlx_plan_ws_destroy(rlx_plan_ws *w) {
  if (!w) return;
  rlx_free(w->last);
  rlx_free(w->free_at);
  rlx_free(w->free_next);
  rlx_free(w->rs);
  rlx_free(w->keys_s);
  rlx_free(w->keys_e);
  rlx_free(w->vals_s);
  rlx_free(w->vals_e);
  rlx_free(w);
}

rlx_status rlx_plan_alloc(rlx_plan *p, int32_t nv, int32_t nn) {
  memset(p, 0, sizeof *p);
  p->offset = rlx_malloc(sizeof(int64_t) * (size_t)(nv + 1));
  p->alias_of = rlx_malloc(sizeof(int32_t) * (size_t)(nv + 1));
  p->alias_off = rlx_calloc((size_t)(nv + 1), sizeof(int64_t));
  p->skip = rlx_calloc((size_t)(nn + 1), sizeof(bool));
  if (!p->offset || !p->alias_of || !p->alias_off || !p->skip) {
    rlx_plan_free(p);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory planning memory");
  }
  p->n_values = nv;
  return RLX_OK;
}

rlx_status rlx_plan_memory_ws(const rlx_graph *g, bool aliasing, const size_t *node_scratch, rlx_plan_ws *w,
                              rlx_plan *p) {
  int32_t nv = g->n_values, nn = g->n_nodes;
  RLX_ASSERT(nv <= w->nv && nn <= w->nn && p->offset);
  p->n_values = nv;
  p->largest = -1;
  p->values_size = p->scratch_offset = p->scratch_size = p->arena_size = 0;
  int32_t *last = w->last, *free_at = w->free_at, *free_next = w->free_next;
  planner pl = {.root = -1, .seed = 12345, .rs = w->rs};
  pl.by_start = (fmap){w->keys_s, w->vals_s, w->cap - 1};
  pl.by_end = (fmap){w->keys_e, w->vals_e, w->cap - 1};
  rlx_status st = RLX_OK;
  memset(pl.by_start.vals, 0xff, sizeof(int32_t) * w->cap);
  memset(pl.by_end.vals, 0xff, sizeof(int32_t) * w->cap);
  memset(p->skip, 0, sizeof(bool) * (size_t)(nn + 1));
  for (int32_t v = 0; v < nv; v++) p->offset[v] = -1, p->alias_of[v] = -1, p->alias_off[v] = 0, last[v] = -1;
  for (int32_t i = 0; i <= nn; i++) free_at[i] = -1;

  /* aliases: a reshape's output shares its input's storage */
  for (int32_t i = 0; aliasing && i < nn; i++) {
    const rlx_node *n = &g->nodes[i];
    if (n->op != RLX_OP_RESHAPE) continue;
    p->alias_of[n->out[0]] = root_of(p, n->in[0]);
    p->skip[i] = true;
  }
  /* State updates in place (docs/design.md, "State"): an index_put or
   * slice_scatter into the state that nothing else reads writes the state's
   * own memory, so a run touches only the rows it updates and leaves no
   * copy to make afterwards. Their kernels skip the initial copy when out
   * aliases in[0]. */
  for (int32_t k = 0; aliasing && k < g->n_states; k++) {
    int32_t sv = g->states[k], u = g->outputs[rlx_graph_user_outputs(g) + k];
    const rlx_value *uv = &g->values[u];
    if (uv->kind != RLX_VALUE_NODE || uv->producer < 0 || p->alias_of[u] >= 0) continue;
    const rlx_node *n = &g->nodes[uv->producer];
    if ((n->op != RLX_OP_INDEX_PUT && n->op != RLX_OP_SLICE_SCATTER) || n->in[0] != sv) continue;
    int32_t uses = 0;
    for (int32_t i = 0; i < nn; i++)
      for (int32_t j = 0; j < g->nodes[i].n_in; j++) uses += g->nodes[i].in[j] == sv;
    for (int32_t i = 0; i < g->n_outputs; i++) uses += g->outputs[i] == sv;
    if (uses == 1) p->alias_of[u] = sv;
  }
  if (aliasing) { /* last and free_next as its two maps, before their own use */
    concats_in_place(g, p, last, free_next);
    for (int32_t v = 0; v < nv; v++) { /* a reshape of a slice: an alias of the slice's root */
      last[v] = -1;
      int32_t r = p->alias_of[v];
      if (r >= 0 && p->alias_of[r] >= 0) p->alias_of[v] = p->alias_of[r];
    }
    rlx_plan_alias_offsets(g, p);
  }
  /* last use of every arena root (graph outputs: never released) */
  for (int32_t i = 0; i < nn; i++) {
    const rlx_node *n = &g->nodes[i];
    for (int32_t k = 0; k < n->n_out; k++) {
      int32_t r = root_of(p, n->out[k]);
      if (last[r] < i) last[r] = i;
    }
    for (int32_t k = 0; k < n->n_in; k++)
      if (n->in[k] >= 0) {
        int32_t r = root_of(p, n->in[k]);
        if (last[r] < i) last[r] = i;
      }
  }
  for (int32_t i = 0; i < g->n_outputs; i++) last[root_of(p, g->outputs[i])] = nn;
  for (int32_t v = 0; v < nv; v++)
    if (in_arena(g, p, v) && last[v] < nn) free_next[v] = free_at[last[v]], free_at[last[v]] = v;

  for (int32_t i = 0; i < nn && !st; i++) {
    const rlx_node *n = &g->nodes[i];
    for (int32_t k = 0; k < n->n_out; k++) {
      /* a value at a slice of a concat's storage places that storage when the first slice is made */
      int32_t v = root_of(p, n->out[k]);
      if (!in_arena(g, p, v) || p->offset[v] >= 0) continue;
      int64_t sz = (int64_t)((rlx_value_nbytes(&g->values[v]) + ALIGN - 1) & ~(size_t)(ALIGN - 1));
      int64_t off = sz ? place(&pl, sz) : 0;
      if (off < 0) {
        st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "the activations of node '%s' do not fit a 64-bit arena", n->label);
        break;
      }
      p->offset[v] = off;
      if (p->largest < 0 || sz > (int64_t)rlx_value_nbytes(&g->values[p->largest])) p->largest = v;
    }
    for (int32_t v = free_at[i]; v >= 0 && !st; v = free_next[v]) {
      int64_t sz = (int64_t)((rlx_value_nbytes(&g->values[v]) + ALIGN - 1) & ~(size_t)(ALIGN - 1));
      if (sz) add_free(&pl, p->offset[v], sz);
    }
  }
  if (st) return st;
  p->values_size = (size_t)pl.top;
  for (int32_t i = 0; i < nn; i++) {
    const rlx_op_vtable *vt = rlx_op_table[g->nodes[i].op].vt;
    size_t s = node_scratch ? node_scratch[i] : vt->scratch ? vt->scratch(g, &g->nodes[i]) : 0;
    if (s > p->scratch_size) p->scratch_size = s;
  }
  if (p->scratch_size > SIZE_MAX / 2 || p->values_size > SIZE_MAX / 2)
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "the arena would need more than %zu bytes", SIZE_MAX / 2);
  p->scratch_size = (p->scratch_size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
  p->scratch_offset = p->values_size;
  p->arena_size = p->values_size + p->scratch_size;
  return RLX_OK;
}

rlx_status rlx_plan_memory(const rlx_graph *g, bool aliasing, const size_t *node_scratch, rlx_plan *p) {
  rlx_plan_ws *w = NULL;
  rlx_status st = rlx_plan_alloc(p, g->n_values, g->n_nodes);
  if (!st) st = rlx_plan_ws_create(g->n_values, g->n_nodes, &w);
  if (!st) st = rlx_plan_memory_ws(g, aliasing, node_scratch, w, p);
  rlx_plan_ws_destroy(w);
  if (st) rlx_plan_free(p);
  return st;
}

void rlx_plan_free(rlx_plan *p) {
  rlx_free(p->offset);
  rlx_free(p->alias_of);
  rlx_free(p->alias_off);
  rlx_free(p->skip);
  memset(p, 0, sizeof *p);
}
