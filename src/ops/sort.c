/*
 * sort.c — sort along one axis, returning the sorted values and (optionally)
 * the int64 indices they came from; also torch's topk. NaN sorts as larger
 * than every number, as in torch: last ascending, first descending.
 *
 *   x [*A, D, *B] -> values [*A, D, *B], indices i64 [*A, D, *B]
 *
 * Where elements are equal (ties, NaNs) the indices show which algorithm ran,
 * so each node runs the one torch's CPU kernel (aten/src/ATen/native/cpu/
 * SortingKernel.cpp, TopKImpl.h) runs for the call it came from
 * (rlx_sort_algo):
 *
 *   STABLE  sort/argsort with stable=True: std::stable_sort. Any stable sort
 *           gives the same answer; this is a merge sort.
 *   TORCH   stable=False: std::sort (libstdc++'s introsort, order_algo.c),
 *           except a 1-D ascending integer (not bool) input of at least
 *           32768 elements (at::internal::GRAIN_SIZE), which fbgemm's radix
 *           sort takes: stable.
 *   TOPK    topk(k): when k * 64 <= D std::partial_sort of the row's first k;
 *           else std::nth_element at k - 1 and, if sorted, std::sort of the
 *           first k - 1 (torch sorts k - 1, the k-th is already in place).
 *           The node writes the whole row in that order; the lowering
 *           slices off the first k.
 *
 * Integers compare exactly as int64 (u64 with its top bit flipped, which
 * maps unsigned order onto signed order); floats as double. One row at a
 * time in scratch (2 x D (key, index) pairs).
 */
#include <math.h>

#include "ops/ops_util.h"
#include "ops/order_algo.h"

#define RLX_SORT_RADIX_MIN 32768 /* at::internal::GRAIN_SIZE */

static rlx_status sort_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  const rlx_sort_params *p = &n->p.sort;
  int ax = p->axis;
  if (ax < 0 || ax >= RLX_MAX(x->shape.rank, 1)) RLX_INFER_FAIL("sort axis %d out of range", ax);
  if (p->algo != RLX_SORT_STABLE && p->algo != RLX_SORT_TORCH && p->algo != RLX_SORT_TOPK)
    RLX_INFER_FAIL("sort algorithm %d is not one of rlx_sort_algo", (int)p->algo);
  if (p->algo == RLX_SORT_TOPK && p->topk_k < 0) RLX_INFER_FAIL("topk k=%lld is negative", (long long)p->topk_k);
  os[0] = x->shape;
  od[0] = x->dtype;
  if (n->n_out == 2) os[1] = x->shape, od[1] = RLX_DTYPE_I64;
  return RLX_OK;
}

static size_t sort_scratch(const rlx_graph *g, const rlx_node *n) {
  const rlx_value *x = rlx_in(g, n, 0);
  int64_t D = x->shape.rank ? x->shape.dims[n->p.sort.axis] : 1;
  return (size_t)(2 * D) * sizeof(ord_item);
}

/* torch's KeyValueCompAsc / KeyValueCompDesc: "a before b". */
static bool fl_asc(const ord_item *a, const ord_item *b, const void *ctx) {
  (void)ctx;
  return (!isnan(a->key.f) && isnan(b->key.f)) || a->key.f < b->key.f;
}
static bool fl_desc(const ord_item *a, const ord_item *b, const void *ctx) {
  (void)ctx;
  return (isnan(a->key.f) && !isnan(b->key.f)) || a->key.f > b->key.f;
}
static bool int_asc(const ord_item *a, const ord_item *b, const void *ctx) {
  (void)ctx;
  return a->key.i < b->key.i;
}
static bool int_desc(const ord_item *a, const ord_item *b, const void *ctx) {
  (void)ctx;
  return a->key.i > b->key.i;
}

/* Stable bottom-up merge sort of v[0..n) under `less` using tmp: an item
 * of the right run goes first only when it is strictly before. */
static void stable_sort(ord_item *v, ord_item *tmp, int64_t n, ord_less_fn less) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = RLX_MIN(lo + w, n), hi = RLX_MIN(lo + 2 * w, n), i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = less(&v[j], &v[i], NULL) ? v[j++] : v[i++];
      while (i < mid) tmp[k++] = v[i++];
      while (j < hi) tmp[k++] = v[j++];
    }
    memcpy(v, tmp, sizeof(ord_item) * (size_t)n);
  }
}

static int64_t sort_key_i(const void *data, rlx_dtype t, int64_t i) {
  if (t == RLX_DTYPE_U64) return (int64_t)(rlx_load_u64(data, t, i) ^ (1ull << 63));
  return rlx_load_i64(data, t, i);
}

static rlx_status sort_row(const rlx_sort_params *p, ord_item *v, ord_item *tmp, int64_t D, int rank, rlx_dtype t) {
  bool fl = rlx_dtype_is_float(t), desc = p->descending;
  ord_less_fn less = fl ? (desc ? fl_desc : fl_asc) : (desc ? int_desc : int_asc);
  switch (p->algo) {
    case RLX_SORT_STABLE: stable_sort(v, tmp, D, less); break;
    case RLX_SORT_TORCH:
      if (rank == 1 && !desc && !fl && t != RLX_DTYPE_BOOL && D >= RLX_SORT_RADIX_MIN)
        stable_sort(v, tmp, D, less);
      else ord_std_sort(v, D, less, NULL);
      break;
    case RLX_SORT_TOPK: {
      int64_t k = p->topk_k;
      if (k > D)
        return rlx_errorf(RLX_ERR_RUNTIME, "topk k=%lld is larger than the dim's size %lld", (long long)k, (long long)D);
      if (k == 0) break;
      if (k * 64 <= D) {
        ord_std_partial_sort(v, k, D, less, NULL);
      } else {
        ord_std_nth_element(v, k - 1, D, less, NULL);
        if (p->topk_sorted) ord_std_sort(v, k - 1, less, NULL);
      }
      break;
    }
  }
  return RLX_OK;
}

static rlx_status sort_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                           void *scratch) {
  const rlx_sort_params *p = &n->p.sort;
  int ax = p->axis;
  int64_t D = in[0].rank ? in[0].dims[ax] : 1;
  int64_t outer = in[0].rank ? rlx_dims_prod(in[0].dims, 0, ax) : 1;
  int64_t inner = in[0].rank ? rlx_dims_prod(in[0].dims, ax + 1, in[0].rank) : 1;
  rlx_dtype t = in[0].dtype;
  bool fl = rlx_dtype_is_float(t);
  size_t es = rlx_dtype_size(t);
  ord_item *v = scratch, *tmp = v + D;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * D * inner + i;
      for (int64_t d = 0; d < D; d++) {
        if (fl) v[d].key.f = rlx_load_f64(in[0].data, t, base + d * inner);
        else v[d].key.i = sort_key_i(in[0].data, t, base + d * inner);
        v[d].idx = d;
      }
      rlx_status st = sort_row(p, v, tmp, D, in[0].rank, t);
      if (st) return st;
      for (int64_t d = 0; d < D; d++) {
        int64_t dst = base + d * inner, src = base + v[d].idx * inner;
        memcpy((char *)out[0].data + (size_t)dst * es, (const char *)in[0].data + (size_t)src * es, es);
        if (n->n_out == 2) ((int64_t *)out[1].data)[dst] = v[d].idx;
      }
    }
  return RLX_OK;
}

static void sort_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_sort_params *p = &n->p.sort;
  rlx_bprintf(buf, cap, "axis=%d%s", p->axis, p->descending ? " descending" : "");
  if (p->algo == RLX_SORT_STABLE) rlx_bprintf(buf, cap, " stable");
  if (p->algo == RLX_SORT_TOPK) rlx_bprintf(buf, cap, " topk=%lld%s", (long long)p->topk_k, p->topk_sorted ? " sorted" : "");
}

const rlx_op_vtable rlx_op_sort = {
    .infer = sort_infer, .ref = sort_ref, .scratch = sort_scratch, .print = sort_print, .symbolic = true};
