/*
 * search.c — searches in sorted data: searchsorted (and bucketize, which
 * lowers onto it) and isin.
 *
 *   searchsorted  seq [*A, S] or [S], values [*A, V] (any shape against a
 *                 1-D seq), sorter? i64 like seq -> i64 or i32 like values
 *   isin          elements [*E], test_elements [*T] -> bool [*E]
 *
 * searchsorted is torch's binary search (Bucketization.cpp), comparisons
 * included: the first insertion point is the first position whose element
 * is not `!(e >= v)`, the last the first where `!(e > v)` fails, so a NaN
 * value goes to the end and an unsorted sequence gives what torch gives.
 * With a sorter, position p of a row reads the row's element sorter[p]; a
 * sorter entry outside [0, S) is a run-time error. Inputs have one dtype
 * (the lowering casts both to torch's common type).
 *
 * isin is membership (==, so NaN is in nothing and -0 equals 0) through a
 * sorted copy of the test elements, except where torch's sort-based rule for
 * assume_unique=True applies (more test elements than 10 n^0.145, torch's
 * heuristic from NumPy): there an element is "in" when the next element in a
 * stable sort of elements ++ test_elements equals it, which differs from
 * membership when the elements repeat (the assumption broken). Scratch: the
 * test elements, or twice elements + test elements for that rule.
 */
#include <math.h>

#include "ops/ops_util.h"
#include "ops/order_algo.h"

static rlx_status ss_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *s = rlx_in(g, n, 0), *v = rlx_in(g, n, 1), *so = rlx_in(g, n, 2);
  int r = s->shape.rank;
  if (r == 0) RLX_INFER_FAIL("the sorted sequence must have at least one dimension");
  if (s->dtype != v->dtype) RLX_INFER_FAIL("sequence (%s) and values (%s) differ in dtype",
                                           rlx_dtype_name(s->dtype), rlx_dtype_name(v->dtype));
  if (s->dtype == RLX_DTYPE_BOOL)
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "searchsorted of bool tensors (torch refuses it)");
  if (v->shape.rank == 0 && r != 1)
    RLX_INFER_FAIL("a 0-d value needs a 1-D sorted sequence, got rank %d", r);
  if (r > 1) {
    bool ok = v->shape.rank == r;
    for (int i = 0; ok && i < r - 1; i++) ok = s->shape.dims[i] == v->shape.dims[i];
    if (!ok) {
      char a[96], b[96];
      RLX_INFER_FAIL("the sequence %s must be 1-D or match the values %s in all dims but the last",
                     rlx_shape_str(&s->shape, a, sizeof a), rlx_shape_str(&v->shape, b, sizeof b));
    }
  }
  if (so && (so->dtype != RLX_DTYPE_I64 || !rlx_shape_eq(&so->shape, &s->shape))) {
    char a[96], b[96];
    RLX_INFER_FAIL("the sorter (%s %s) must be i64 of the sequence's shape %s", rlx_dtype_name(so->dtype),
                   rlx_shape_str(&so->shape, a, sizeof a), rlx_shape_str(&s->shape, b, sizeof b));
  }
  rlx_dim S = s->shape.dims[r - 1];
  if (n->p.searchsorted.out_int32 && !rlx_dim_may_le(g, S, INT32_MAX)) /* torch refuses it too */
    RLX_INFER_FAIL("out_int32 for a sequence longer than the i32 range");
  os[0] = v->shape;
  od[0] = n->p.searchsorted.out_int32 ? RLX_DTYPE_I32 : RLX_DTYPE_I64;
  return RLX_OK;
}

static rlx_status ss_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, void *scratch) {
  (void)scratch;
  const rlx_tensor_view *s = &in[0], *v = &in[1], *so = n->n_in > 2 && in[2].data ? &in[2] : NULL;
  int64_t S = s->dims[s->rank - 1], nv = rlx_view_numel(v), ns = rlx_view_numel(s);
  int64_t V = s->rank > 1 ? v->dims[v->rank - 1] : 1;
  const int64_t *sorter = so ? so->data : NULL;
  for (int64_t j = 0; sorter && j < ns; j++)
    if (sorter[j] < 0 || sorter[j] >= S)
      return rlx_errorf(RLX_ERR_RUNTIME, "searchsorted: sorter[%lld] = %lld is out of range for a sequence of %lld",
                        (long long)j, (long long)sorter[j], (long long)S);
  bool fl = rlx_dtype_is_float(s->dtype), right = n->p.searchsorted.right;
  for (int64_t j = 0; j < nv; j++) {
    int64_t row = s->rank > 1 ? (j / V) * S : 0, lo = 0, hi = S;
    double vf = fl ? rlx_load_f64(v->data, v->dtype, j) : 0;
    int64_t vi = fl ? 0 : rlx_load_i64(v->data, v->dtype, j);
    while (lo < hi) {
      int64_t mid = lo + ((hi - lo) >> 1), at = row + (sorter ? sorter[row + mid] : mid);
      bool go_right;
      if (fl) {
        double e = rlx_load_f64(s->data, s->dtype, at);
        go_right = right ? !(e > vf) : !(e >= vf);
      } else {
        int64_t e = rlx_load_i64(s->data, s->dtype, at);
        go_right = right ? !(e > vi) : !(e >= vi);
      }
      if (go_right) lo = mid + 1;
      else hi = mid;
    }
    rlx_store_i64(out[0].data, out[0].dtype, j, lo);
  }
  return RLX_OK;
}

static void ss_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "%s%s%s", n->p.searchsorted.right ? "right" : "left", n->p.searchsorted.out_int32 ? " i32" : "",
              n->n_in > 2 && n->in[2] >= 0 ? " sorter" : "");
}

const rlx_op_vtable rlx_op_searchsorted = {.infer = ss_infer, .ref = ss_ref, .print = ss_print, .symbolic = true};

/* ---- isin ---- */

static rlx_status isin_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0), *t = rlx_in(g, n, 1);
  if (x->dtype != t->dtype)
    RLX_INFER_FAIL("elements (%s) and test elements (%s) differ in dtype", rlx_dtype_name(x->dtype),
                   rlx_dtype_name(t->dtype));
  if (x->dtype == RLX_DTYPE_BOOL) return rlx_errorf(RLX_ERR_UNSUPPORTED, "isin of bool tensors (torch refuses it)");
  os[0] = x->shape;
  od[0] = RLX_DTYPE_BOOL;
  return RLX_OK;
}

/* torch's choice: the sort-based rule when test elements outnumber 10 n^0.145. */
static bool isin_sorting(int64_t n, int64_t m) { return m >= (int64_t)(10.0 * pow((double)n, 0.145)); }

static size_t isin_scratch(const rlx_graph *g, const rlx_node *n) {
  int64_t ne = rlx_shape_numel(&rlx_in(g, n, 0)->shape), nt = rlx_shape_numel(&rlx_in(g, n, 1)->shape);
  if (n->p.isin.assume_unique && ne && isin_sorting(ne, nt)) return (size_t)(2 * (ne + nt)) * sizeof(ord_item);
  return (size_t)nt * sizeof(ord_item);
}

static bool less_key(const ord_item *a, const ord_item *b, const void *ctx) {
  return *(const bool *)ctx ? a->key.f < b->key.f : a->key.i < b->key.i;
}

static void load_item(const rlx_tensor_view *t, int64_t i, bool fl, ord_item *it) {
  if (fl) it->key.f = rlx_load_f64(t->data, t->dtype, i);
  else it->key.i = rlx_load_i64(t->data, t->dtype, i);
  it->idx = i;
}

/* assume_unique's rule: element p is in when its successor in the stable
 * order of elements ++ tests equals it. */
static void isin_by_neighbour(const rlx_tensor_view *x, const rlx_tensor_view *t, bool fl, bool invert, uint8_t *y,
                              ord_item *v) {
  int64_t ne = rlx_view_numel(x), nt = rlx_view_numel(t), N = ne + nt;
  for (int64_t i = 0; i < ne; i++) load_item(x, i, fl, &v[i]);
  for (int64_t i = 0; i < nt; i++) load_item(t, i, fl, &v[ne + i]), v[ne + i].idx = ne + i;
  ord_stable_sort(v, v + N, N, fl);
  for (int64_t s = 0; s < N; s++) {
    if (v[s].idx >= ne) continue;
    bool eq = s + 1 < N && (fl ? v[s + 1].key.f == v[s].key.f : v[s + 1].key.i == v[s].key.i);
    y[v[s].idx] = eq != invert;
  }
}

static rlx_status isin_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, void *scratch) {
  const rlx_tensor_view *x = &in[0], *t = &in[1];
  int64_t ne = rlx_view_numel(x), nt = rlx_view_numel(t);
  bool fl = rlx_dtype_is_float(x->dtype), invert = n->p.isin.invert;
  uint8_t *y = out[0].data;
  ord_item *v = scratch;
  if (ne == 0) return RLX_OK;
  if (n->p.isin.assume_unique && isin_sorting(ne, nt)) {
    isin_by_neighbour(x, t, fl, invert, y, v);
    return RLX_OK;
  }
  int64_t m = 0; /* the test elements but NaN, sorted */
  for (int64_t i = 0; i < nt; i++) {
    load_item(t, i, fl, &v[m]);
    if (!fl || v[m].key.f == v[m].key.f) m++;
  }
  ord_std_sort(v, m, less_key, &fl);
  for (int64_t i = 0; i < ne; i++) {
    ord_item e;
    load_item(x, i, fl, &e);
    int64_t lo = 0, hi = m;
    while (lo < hi) { /* the first test element not below e */
      int64_t mid = lo + ((hi - lo) >> 1);
      if (less_key(&v[mid], &e, &fl)) lo = mid + 1;
      else hi = mid;
    }
    bool found = lo < m && (fl ? v[lo].key.f == e.key.f : v[lo].key.i == e.key.i);
    y[i] = found != invert;
  }
  return RLX_OK;
}

static void isin_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "%s%s", n->p.isin.invert ? "invert" : "", n->p.isin.assume_unique ? " assume_unique" : "");
}

const rlx_op_vtable rlx_op_isin = {
    .infer = isin_infer, .ref = isin_ref, .scratch = isin_scratch, .print = isin_print, .symbolic = true};
