/*
 * sort.c — sort along one axis, returning the sorted values and (optionally)
 * the int64 indices they came from. Stable: equal elements keep their input
 * order (torch.sort(stable=True); argsort, topk lower onto this). NaN sorts
 * as larger than every number, as in torch: last ascending, first descending.
 *
 *   x [*A, D, *B] -> values [*A, D, *B], indices i64 [*A, D, *B]
 *
 * Integers compare exactly as int64; floats as double. Merge sort of one row
 * at a time in scratch (2 x D (key, index) pairs).
 */
#include <math.h>

#include "ops/ops_util.h"

typedef struct sort_item {
  union {
    double f;
    int64_t i;
  } key;
  int64_t idx;
} sort_item;

static rlx_status sort_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  int ax = n->p.sort.axis;
  if (ax < 0 || ax >= RLX_MAX(x->shape.rank, 1)) RLX_INFER_FAIL("sort axis %d out of range", ax);
  os[0] = x->shape;
  od[0] = x->dtype;
  if (n->n_out == 2) os[1] = x->shape, od[1] = RLX_DTYPE_I64;
  return RLX_OK;
}

static size_t sort_scratch(const rlx_graph *g, const rlx_node *n) {
  const rlx_value *x = rlx_in(g, n, 0);
  int64_t D = x->shape.rank ? x->shape.dims[n->p.sort.axis] : 1;
  return (size_t)(2 * D) * sizeof(sort_item);
}

/* -1 if a sorts before b in ascending order, 1 if after, 0 if equal. */
static int cmp_float(double a, double b) {
  bool na = a != a, nb = b != b;
  if (na || nb) return na == nb ? 0 : na ? 1 : -1;
  return (a > b) - (a < b);
}

static int cmp_item(const sort_item *a, const sort_item *b, bool fl, bool desc) {
  int c = fl ? cmp_float(a->key.f, b->key.f) : (a->key.i > b->key.i) - (a->key.i < b->key.i);
  return desc ? -c : c;
}

/* Stable bottom-up merge sort of v[0..n) using tmp. */
static void merge_sort(sort_item *v, sort_item *tmp, int64_t n, bool fl, bool desc) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = RLX_MIN(lo + w, n), hi = RLX_MIN(lo + 2 * w, n), i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = cmp_item(&v[j], &v[i], fl, desc) < 0 ? v[j++] : v[i++];
      while (i < mid) tmp[k++] = v[i++];
      while (j < hi) tmp[k++] = v[j++];
    }
    memcpy(v, tmp, sizeof(sort_item) * (size_t)n);
  }
}

static rlx_status sort_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                           void *scratch) {
  int ax = n->p.sort.axis;
  int64_t D = in[0].rank ? in[0].dims[ax] : 1;
  int64_t outer = in[0].rank ? rlx_dims_prod(in[0].dims, 0, ax) : 1;
  int64_t inner = in[0].rank ? rlx_dims_prod(in[0].dims, ax + 1, in[0].rank) : 1;
  rlx_dtype t = in[0].dtype;
  bool fl = rlx_dtype_is_float(t);
  size_t es = rlx_dtype_size(t);
  sort_item *v = scratch, *tmp = v + D;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * D * inner + i;
      for (int64_t d = 0; d < D; d++) {
        if (fl) v[d].key.f = rlx_load_f64(in[0].data, t, base + d * inner);
        else v[d].key.i = rlx_load_i64(in[0].data, t, base + d * inner);
        v[d].idx = d;
      }
      merge_sort(v, tmp, D, fl, n->p.sort.descending);
      for (int64_t d = 0; d < D; d++) {
        int64_t dst = base + d * inner, src = base + v[d].idx * inner;
        memcpy((char *)out[0].data + (size_t)dst * es, (const char *)in[0].data + (size_t)src * es, es);
        if (n->n_out == 2) ((int64_t *)out[1].data)[dst] = v[d].idx;
      }
    }
  return RLX_OK;
}

static void sort_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "axis=%d%s", n->p.sort.axis, n->p.sort.descending ? " descending" : "");
}

const rlx_op_vtable rlx_op_sort = {
    .infer = sort_infer, .ref = sort_ref, .scratch = sort_scratch, .print = sort_print, .symbolic = true};
