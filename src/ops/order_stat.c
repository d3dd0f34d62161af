/*
 * order_stat.c — one order statistic per row along an axis: kthvalue,
 * median, nanmedian, mode. Values keep the input dtype, indices are i64.
 *
 *   x [*A, D, *B] -> values [*A, *B] (keepdim: [*A, 1, *B]), indices i64 likewise
 *
 * Which element each returns is torch's CPU kernel's (Sorting.cpp), whose
 * choice among equal values order_algo.h reproduces:
 *   kthvalue   torch's quickselect of the row, NaN ranking above every number
 *   median     a row holding NaN gives its first NaN; else the element at
 *              (D - 1) / 2 in (value, index) order
 *   nanmedian  NaN ranks last; the element at (D - #NaN - 1) / 2 (C division,
 *              so 0 when every element is NaN) after libstdc++'s nth_element
 *   mode       libstdc++'s std::sort of (value, index) pairs by value; the
 *              first most frequent run wins and gives the index sorted last
 * An empty axis is refused, as torch refuses it; the whole-tensor median of
 * an empty tensor is lowered to NaN instead. Scratch: one row of D items.
 */
#include "ops/ops_util.h"
#include "ops/order_algo.h"

static const char *const kind_names[] = {"kthvalue", "median", "nanmedian", "mode"};

static rlx_status order_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_order_stat_params *p = &n->p.order_stat;
  const rlx_value *x = rlx_in(g, n, 0);
  if ((unsigned)p->kind > RLX_ORDER_MODE) RLX_INFER_FAIL("invalid order statistic kind %d", (int)p->kind);
  int r = x->shape.rank;
  if (p->axis < 0 || p->axis >= RLX_MAX(r, 1)) RLX_INFER_FAIL("%s axis %d out of range", kind_names[p->kind], p->axis);
  if (x->dtype == RLX_DTYPE_BOOL && p->kind != RLX_ORDER_MODE)
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s of a bool tensor (torch refuses it)", kind_names[p->kind]);
  rlx_dim D = r ? x->shape.dims[p->axis] : 1;
  if (D == 0) RLX_INFER_FAIL("%s over the empty axis %d", kind_names[p->kind], p->axis);
  if (p->kind == RLX_ORDER_KTHVALUE && (p->k < 1 || !rlx_dim_may_le(g, p->k, D))) {
    if (rlx_dim_is_sym(D))
      RLX_INFER_FAIL("kthvalue k=%lld is out of range for the symbolic axis %d", (long long)p->k, p->axis);
    RLX_INFER_FAIL("kthvalue k=%lld is out of range for an axis of size %lld", (long long)p->k, (long long)D);
  }
  os[0].rank = 0;
  for (int i = 0; i < r; i++) {
    if (i != p->axis) os[0].dims[os[0].rank++] = x->shape.dims[i];
    else if (p->keepdim) os[0].dims[os[0].rank++] = 1;
  }
  od[0] = x->dtype;
  if (n->n_out == 2) os[1] = os[0], od[1] = RLX_DTYPE_I64;
  return RLX_OK;
}

static size_t order_scratch(const rlx_graph *g, const rlx_node *n) {
  const rlx_value *x = rlx_in(g, n, 0);
  int64_t D = x->shape.rank ? x->shape.dims[n->p.order_stat.axis] : 1;
  return (size_t)D * sizeof(ord_item);
}

/* nth_element's comparators (torch's lambdas over the row's indices). */
static bool less_value_index(const ord_item *a, const ord_item *b, const void *ctx) {
  if (*(const bool *)ctx) return a->key.f < b->key.f || (a->key.f == b->key.f && a->idx < b->idx);
  return a->key.i < b->key.i || (a->key.i == b->key.i && a->idx < b->idx);
}
static bool less_value_index_nan_last(const ord_item *a, const ord_item *b, const void *ctx) {
  (void)ctx;
  return a->key.f < b->key.f || (a->key.f == b->key.f && a->idx < b->idx) ||
         (b->key.f != b->key.f && a->key.f == a->key.f);
}
/* std::sort's comparator in mode: the values alone. */
static bool less_value(const ord_item *a, const ord_item *b, const void *ctx) {
  return *(const bool *)ctx ? a->key.f < b->key.f : a->key.i < b->key.i;
}

static bool item_eq(const ord_item *a, const ord_item *b, bool fl) {
  return fl ? a->key.f == b->key.f : a->key.i == b->key.i;
}

/* The position in v (after rearranging it) of the row's statistic. */
static int64_t row_stat(const rlx_order_stat_params *p, ord_item *v, int64_t D, bool fl) {
  switch (p->kind) {
    case RLX_ORDER_KTHVALUE:
      ord_quickselect(v, D, p->k - 1, fl);
      return p->k - 1;
    case RLX_ORDER_MEDIAN:
      for (int64_t d = 0; fl && d < D; d++)
        if (v[d].key.f != v[d].key.f) return d; /* the first NaN */
      ord_std_nth_element(v, (D - 1) / 2, D, less_value_index, &fl);
      return (D - 1) / 2;
    case RLX_ORDER_NANMEDIAN: {
      int64_t nan = 0;
      for (int64_t d = 0; fl && d < D; d++) nan += v[d].key.f != v[d].key.f;
      int64_t nth = (D - nan - 1) / 2; /* truncates toward zero, as C++ */
      ord_std_nth_element(v, nth, D, fl ? less_value_index_nan_last : less_value_index, &fl);
      return nth;
    }
    case RLX_ORDER_MODE: {
      ord_std_sort(v, D, less_value, &fl);
      int64_t best = 0, best_freq = 0, freq = 0;
      for (int64_t d = 0; d < D; d++) {
        freq++;
        if (d == D - 1 || !item_eq(&v[d], &v[d + 1], fl)) {
          if (freq > best_freq) best = d, best_freq = freq;
          freq = 0;
        }
      }
      return best;
    }
  }
  return 0;
}

static rlx_status order_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, void *scratch) {
  const rlx_order_stat_params *p = &n->p.order_stat;
  int ax = p->axis;
  int64_t D = in[0].rank ? in[0].dims[ax] : 1;
  int64_t outer = in[0].rank ? rlx_dims_prod(in[0].dims, 0, ax) : 1;
  int64_t inner = in[0].rank ? rlx_dims_prod(in[0].dims, ax + 1, in[0].rank) : 1;
  rlx_dtype t = in[0].dtype;
  bool fl = rlx_dtype_is_float(t);
  size_t es = rlx_dtype_size(t);
  ord_item *v = scratch; /* one row [D] */
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * D * inner + i, dst = o * inner + i;
      for (int64_t d = 0; d < D; d++) {
        if (fl) v[d].key.f = rlx_load_f64(in[0].data, t, base + d * inner);
        else v[d].key.i = rlx_load_i64(in[0].data, t, base + d * inner);
        v[d].idx = d;
      }
      int64_t src = v[row_stat(p, v, D, fl)].idx;
      memcpy((char *)out[0].data + (size_t)dst * es, (const char *)in[0].data + (size_t)(base + src * inner) * es, es);
      if (n->n_out == 2) ((int64_t *)out[1].data)[dst] = src;
    }
  return RLX_OK;
}

static void order_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_order_stat_params *p = &n->p.order_stat;
  rlx_bprintf(buf, cap, "%s axis=%d", kind_names[p->kind], p->axis);
  if (p->kind == RLX_ORDER_KTHVALUE) rlx_bprintf(buf, cap, " k=%lld", (long long)p->k);
  if (p->keepdim) rlx_bprintf(buf, cap, " keepdim");
}

const rlx_op_vtable rlx_op_order_stat = {
    .infer = order_infer, .ref = order_ref, .scratch = order_scratch, .print = order_print, .symbolic = true};
