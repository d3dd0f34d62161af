/*
 * index.c — indexing ops:
 *
 *   gather  x [*A, D, *B], idx [*I] (integer) -> [*A, *I, *B] along `axis`
 *           (index_select, embedding, single-tensor aten.index)
 *   index   x plus one integer index tensor per indexed axis (advanced
 *           indexing, aten.index.Tensor): the index tensors broadcast to a
 *           shape [*I]; if the indexed axes are adjacent, [*I] replaces them
 *           in place, otherwise it goes first, as in NumPy and torch.
 *   index_put  x[indices] = values (or += with accumulate), same indexing rules.
 *   scan    cumsum / cumprod along an axis (integers and bools give i64).
 *
 * Out-of-range indices are a run-time error naming the value, never a read
 * out of bounds. Negative indices count from the end where torch allows it.
 */
#include "ops/ops_util.h"

rlx_status rlx_resolve_index(int64_t v, int64_t d, bool wrap, int64_t *out) {
  int64_t k = wrap && v < 0 ? v + d : v;
  *out = 0;
  if (k < 0 || k >= d) /* the message names the index as given, before wrapping */
    return rlx_errorf(RLX_ERR_RUNTIME, "index %lld is out of range for a dim of size %lld",
                      (long long)v, (long long)d);
  *out = k;
  return RLX_OK;
}

/* ---- gather ---- */

static rlx_status gather_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0), *ix = rlx_in(g, n, 1);
  int ax = n->p.gather.axis;
  if (ax < 0 || ax >= x->shape.rank) RLX_INFER_FAIL("gather axis %d out of range", ax);
  if (!rlx_dtype_is_int(ix->dtype)) RLX_INFER_FAIL("gather indices must be integers, got %s",
                                                    rlx_dtype_name(ix->dtype));
  if (x->shape.rank - 1 + ix->shape.rank > RLX_MAX_RANK) RLX_INFER_FAIL("gather result rank too high");
  os[0].rank = 0;
  for (int i = 0; i < ax; i++) os[0].dims[os[0].rank++] = x->shape.dims[i];
  for (int i = 0; i < ix->shape.rank; i++) os[0].dims[os[0].rank++] = ix->shape.dims[i];
  for (int i = ax + 1; i < x->shape.rank; i++) os[0].dims[os[0].rank++] = x->shape.dims[i];
  od[0] = x->dtype;
  return RLX_OK;
}

static rlx_status gather_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                             void *scratch) {
  (void)scratch;
  int ax = n->p.gather.axis;
  int64_t outer = rlx_dims_prod(in[0].dims, 0, ax), D = in[0].dims[ax];
  int64_t inner = rlx_dims_prod(in[0].dims, ax + 1, in[0].rank), I = rlx_view_numel(&in[1]);
  size_t es = rlx_dtype_size(in[0].dtype);
  for (int64_t j = 0; j < I; j++) {
    int64_t k;
    rlx_status st = rlx_resolve_index(rlx_load_i64(in[1].data, in[1].dtype, j), D, n->p.gather.wrap_negative, &k);
    if (st) return st;
    for (int64_t o = 0; o < outer; o++)
      memcpy((char *)out[0].data + (size_t)((o * I + j) * inner) * es,
             (const char *)in[0].data + (size_t)((o * D + k) * inner) * es, (size_t)inner * es);
  }
  return RLX_OK;
}

static void gather_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "axis=%d%s", n->p.gather.axis, n->p.gather.wrap_negative ? " wrap" : "");
}

const rlx_op_vtable rlx_op_gather = {.infer = gather_infer, .ref = gather_ref, .print = gather_print, .symbolic = true};

/* ---- advanced indexing: index (read) and index_put (write) ---- */

typedef struct index_geom {
  int nidx, first;
  bool adjacent;
  rlx_shape bshape; /* broadcast shape of the index tensors */
} index_geom;

static rlx_status index_geom_init(const rlx_shape *x, uint32_t mask, const rlx_shape *const *idx,
                                  int nidx, index_geom *gm) {
  gm->nidx = nidx;
  gm->first = -1;
  int last = -1, count = 0;
  for (int i = 0; i < x->rank; i++)
    if ((mask >> i) & 1) {
      if (gm->first < 0) gm->first = i;
      last = i;
      count++;
    }
  if (count != nidx || count == 0 || (mask >> x->rank))
    RLX_INFER_FAIL("index: mask 0x%x names %d axes but %d index tensors are given", mask, count, nidx);
  gm->adjacent = last - gm->first + 1 == count;
  gm->bshape.rank = 0;
  for (int k = 0; k < nidx; k++) {
    rlx_shape t;
    if (rlx_broadcast(&gm->bshape, idx[k], &t)) return RLX_ERR_SHAPE;
    gm->bshape = t;
  }
  return RLX_OK;
}

/* Shape of x[indices]: the index dims replace the indexed axes in place when
 * those are adjacent, and go first otherwise. */
static rlx_status index_result_shape(const rlx_shape *x, uint32_t mask, const index_geom *gm,
                                     rlx_shape *rs) {
  if (gm->bshape.rank + x->rank - gm->nidx > RLX_MAX_RANK) RLX_INFER_FAIL("index result rank too high");
  rs->rank = 0;
  if (!gm->adjacent) *rs = gm->bshape;
  for (int i = 0; i < x->rank; i++) {
    bool idx = (mask >> i) & 1;
    if (idx && i == gm->first && gm->adjacent)
      for (int b = 0; b < gm->bshape.rank; b++) rs->dims[rs->rank++] = gm->bshape.dims[b];
    if (!idx) rs->dims[rs->rank++] = x->dims[i];
  }
  return RLX_OK;
}

/* Infers x[indices] from the index tensors at inputs [first_idx, n_in). */
static rlx_status index_infer_common(const rlx_graph *g, const rlx_node *n, int first_idx,
                                     uint32_t mask, rlx_shape *rs) {
  const rlx_value *x = rlx_in(g, n, 0);
  const rlx_shape *ish[RLX_MAX_RANK] = {0};
  int nidx = n->n_in - first_idx;
  if (nidx < 1 || nidx > RLX_MAX_RANK) RLX_INFER_FAIL("%d index tensors", nidx);
  for (int k = 0; k < nidx; k++) {
    const rlx_value *v = rlx_in(g, n, first_idx + k);
    if (!v || !rlx_dtype_is_int(v->dtype)) RLX_INFER_FAIL("index tensor %d must be an integer tensor", k);
    ish[k] = &v->shape;
  }
  index_geom gm;
  if (index_geom_init(&x->shape, mask, ish, nidx, &gm)) return RLX_ERR_SHAPE;
  return index_result_shape(&x->shape, mask, &gm, rs);
}

/* Walks the elements of x[indices], giving each one's offset in x. */
typedef struct index_walk {
  index_geom gm;
  uint32_t mask;
  rlx_shape xs, rs;
  int64_t ist[RLX_MAX_RANK][RLX_MAX_RANK], xst[RLX_MAX_RANK];
  const rlx_tensor_view *idx;
} index_walk;

static rlx_status index_walk_init(index_walk *w, const rlx_tensor_view *x, const rlx_tensor_view *idx,
                                  int nidx, uint32_t mask) {
  rlx_shape ishapes[RLX_MAX_RANK];
  const rlx_shape *ish[RLX_MAX_RANK] = {0};
  for (int k = 0; k < nidx; k++) ishapes[k] = rlx_view_shape(&idx[k]), ish[k] = &ishapes[k];
  w->xs = rlx_view_shape(x);
  w->mask = mask;
  w->idx = idx;
  if (index_geom_init(&w->xs, mask, ish, nidx, &w->gm) || index_result_shape(&w->xs, mask, &w->gm, &w->rs))
    return RLX_ERR_INTERNAL;
  for (int k = 0; k < nidx; k++) rlx_broadcast_strides(&ishapes[k], &w->gm.bshape, w->ist[k]);
  rlx_shape_strides(&w->xs, w->xst);
  return RLX_OK;
}

static rlx_status index_walk_offset(const index_walk *w, int64_t i, int64_t *off_out) {
  const rlx_shape *rs = &w->rs;
  int64_t oc[RLX_MAX_RANK], rem = i;
  for (int d = rs->rank - 1; d >= 0; d--) oc[d] = rem % rs->dims[d], rem /= rs->dims[d];
  int br = w->gm.bshape.rank, bpos = w->gm.adjacent ? w->gm.first : 0;
  int64_t bi = 0; /* linear index into the broadcast index shape */
  for (int b = 0; b < br; b++) bi = bi * w->gm.bshape.dims[b] + oc[bpos + b];
  int64_t off = 0;
  int k = 0, o = 0;
  for (int a = 0; a < w->xs.rank; a++) {
    if (o == bpos) o += br; /* skip the block of index dims */
    if ((w->mask >> a) & 1) {
      const rlx_tensor_view *t = &w->idx[k];
      int64_t v = rlx_load_i64(t->data, t->dtype, rlx_strided_offset(&w->gm.bshape, w->ist[k], bi)), r;
      rlx_status st = rlx_resolve_index(v, w->xs.dims[a], true, &r);
      if (st) return st;
      off += r * w->xst[a];
      k++;
    } else {
      off += oc[o++] * w->xst[a];
    }
  }
  *off_out = off;
  return RLX_OK;
}

static rlx_status index_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  od[0] = rlx_in(g, n, 0)->dtype;
  return index_infer_common(g, n, 1, n->p.index.indexed, &os[0]);
}

static rlx_status index_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                            void *scratch) {
  (void)scratch;
  index_walk w;
  if (index_walk_init(&w, &in[0], &in[1], n->n_in - 1, n->p.index.indexed)) return RLX_ERR_INTERNAL;
  size_t es = rlx_dtype_size(in[0].dtype);
  int64_t N = rlx_shape_numel(&w.rs);
  for (int64_t i = 0; i < N; i++) {
    int64_t off;
    rlx_status st = index_walk_offset(&w, i, &off);
    if (st) return st;
    memcpy((char *)out[0].data + (size_t)i * es, (const char *)in[0].data + (size_t)off * es, es);
  }
  return RLX_OK;
}

static void index_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "axes=0x%x", n->p.index.indexed);
}

const rlx_op_vtable rlx_op_index = {.infer = index_infer, .ref = index_ref, .print = index_print, .symbolic = true};

/* index_put: x, values, index tensors... -> x with x[indices] = values
 * (or += values when accumulating; repeated indices then all add up). */
static rlx_status index_put_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0), *v = rlx_in(g, n, 1);
  rlx_shape rs, tmp;
  if (index_infer_common(g, n, 2, n->p.index_put.indexed, &rs)) return RLX_ERR_SHAPE;
  if (v->dtype != x->dtype) RLX_INFER_FAIL("index_put values are %s, the tensor is %s",
                                           rlx_dtype_name(v->dtype), rlx_dtype_name(x->dtype));
  if (rlx_broadcast(&v->shape, &rs, &tmp) || !rlx_shape_eq(&tmp, &rs))
    RLX_INFER_FAIL("index_put values do not broadcast to the indexed shape");
  os[0] = x->shape;
  od[0] = x->dtype;
  return RLX_OK;
}

static rlx_status index_put_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                                void *scratch) {
  (void)scratch;
  index_walk w;
  if (index_walk_init(&w, &in[0], &in[2], n->n_in - 2, n->p.index_put.indexed)) return RLX_ERR_INTERNAL;
  rlx_dtype t = in[0].dtype;
  size_t es = rlx_dtype_size(t);
  /* out == in[0]: a state updated in place (memplan.c); only the indexed elements are written */
  if (out[0].data != in[0].data) memcpy(out[0].data, in[0].data, (size_t)rlx_view_numel(&in[0]) * es);
  rlx_shape vs = rlx_view_shape(&in[1]);
  int64_t vst[RLX_MAX_RANK];
  rlx_broadcast_strides(&vs, &w.rs, vst);
  int64_t N = rlx_shape_numel(&w.rs);
  for (int64_t i = 0; i < N; i++) {
    int64_t off, vo = rlx_strided_offset(&w.rs, vst, i);
    rlx_status st = index_walk_offset(&w, i, &off);
    if (st) return st;
    if (!n->p.index_put.accumulate)
      memcpy((char *)out[0].data + (size_t)off * es, (const char *)in[1].data + (size_t)vo * es, es);
    else if (rlx_dtype_is_float(t))
      rlx_store_f64(out[0].data, t, off, rlx_load_f64(out[0].data, t, off) + rlx_load_f64(in[1].data, t, vo));
    else
      rlx_store_i64(out[0].data, t, off,
                    (int64_t)((uint64_t)rlx_load_i64(out[0].data, t, off) + (uint64_t)rlx_load_i64(in[1].data, t, vo)));
  }
  return RLX_OK;
}

static void index_put_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "axes=0x%x%s", n->p.index_put.indexed, n->p.index_put.accumulate ? " accumulate" : "");
}

const rlx_op_vtable rlx_op_index_put = {
    .infer = index_put_infer, .ref = index_put_ref, .print = index_put_print, .symbolic = true};

/* ---- scan ---- */

static rlx_status scan_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  int ax = n->p.scan.axis;
  if (ax < 0 || ax >= RLX_MAX(x->shape.rank, 1)) RLX_INFER_FAIL("scan axis %d out of range", ax);
  os[0] = x->shape;
  od[0] = rlx_dtype_is_float(x->dtype) ? x->dtype : RLX_DTYPE_I64;
  return RLX_OK;
}

static rlx_status scan_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                           void *scratch) {
  (void)scratch;
  int ax = n->p.scan.axis;
  bool prod = n->p.scan.prod;
  int64_t D = in[0].rank ? in[0].dims[ax] : 1;
  int64_t outer = in[0].rank ? rlx_dims_prod(in[0].dims, 0, ax) : 1;
  int64_t inner = in[0].rank ? rlx_dims_prod(in[0].dims, ax + 1, in[0].rank) : 1;
  bool fl = rlx_dtype_is_float(in[0].dtype);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double acc = prod ? 1 : 0;
      uint64_t iacc = prod ? 1 : 0;
      for (int64_t d = 0; d < D; d++) {
        int64_t off = (o * D + d) * inner + i;
        if (fl) {
          double v = rlx_load_f64(in[0].data, in[0].dtype, off);
          acc = prod ? acc * v : acc + v;
          rlx_store_f64(out[0].data, out[0].dtype, off, acc);
        } else {
          uint64_t v = (uint64_t)rlx_load_i64(in[0].data, in[0].dtype, off);
          iacc = prod ? iacc * v : iacc + v;
          ((int64_t *)out[0].data)[off] = (int64_t)iacc;
        }
      }
    }
  return RLX_OK;
}

static void scan_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "%s axis=%d", n->p.scan.prod ? "cumprod" : "cumsum", n->p.scan.axis);
}

const rlx_op_vtable rlx_op_scan = {.infer = scan_infer, .ref = scan_ref, .print = scan_print, .symbolic = true};
