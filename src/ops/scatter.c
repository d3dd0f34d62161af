/*
 * scatter.c — element-wise gather and the scatter family:
 *
 *   gather_elements x [*X], index [*I] (rank of x; I <= X off the axis) -> [*I]
 *                   out[p] = x[p with p[axis] = index[p]]          (torch.gather)
 *   scatter         x, index [*I], src [*S] (S >= I) -> [*X]
 *                   out = x; out[p with p[axis] = index[p]] (op)= src[p] for p in I,
 *                   op: assign, add, mul, mean, amax, amin; include_self chooses
 *                   whether x's own values take part (scatter_reduce)
 *   slice_scatter   x, src -> x with x[axis][start:end:step] = src
 *   masked_scatter  x, mask (broadcasts to x), source -> x with the positions
 *                   where mask is true filled from source in row-major order
 *
 * Index values must lie in [0, size) (torch rejects negative ones here);
 * anything else is a run-time error naming the value. Integer mean divides
 * with floor, as torch does.
 */
#include <math.h>

#include "ops/ops_util.h"

static rlx_status check_index_shape(const rlx_graph *g, const rlx_value *x, const rlx_value *ix,
                                    const rlx_value *src, int ax) {
  if (ax < 0 || ax >= RLX_MAX(x->shape.rank, 1)) RLX_INFER_FAIL("axis %d out of range", ax);
  if (!rlx_dtype_is_int(ix->dtype) || ix->dtype == RLX_DTYPE_BOOL)
    RLX_INFER_FAIL("index must be an integer tensor, got %s", rlx_dtype_name(ix->dtype));
  if (ix->shape.rank != x->shape.rank && !(x->shape.rank == 0 && ix->shape.rank <= 1))
    RLX_INFER_FAIL("index has rank %d, the tensor rank %d", ix->shape.rank, x->shape.rank);
  for (int d = 0; d < ix->shape.rank && x->shape.rank; d++) {
    if (d != ax && !rlx_dim_may_le(g, ix->shape.dims[d], x->shape.dims[d]))
      RLX_INFER_FAIL("index dim %d (%lld) exceeds the tensor's (%lld)", d, (long long)ix->shape.dims[d],
                     (long long)x->shape.dims[d]);
    if (src && !rlx_dim_may_le(g, ix->shape.dims[d], src->shape.dims[d]))
      RLX_INFER_FAIL("index dim %d (%lld) exceeds src's (%lld)", d, (long long)ix->shape.dims[d],
                     (long long)src->shape.dims[d]);
  }
  if (src && (src->shape.rank != ix->shape.rank || src->dtype != x->dtype))
    RLX_INFER_FAIL("src must be a %s tensor of the index's rank", rlx_dtype_name(x->dtype));
  return RLX_OK;
}

/* Offset in a tensor of shape `s` of coordinates `c` with c[axis] replaced by j. */
static int64_t offset_at(const rlx_shape *s, const int64_t *c, int axis, int64_t j) {
  int64_t off = 0;
  for (int d = 0; d < s->rank; d++) off = off * s->dims[d] + (d == axis ? j : c[d]);
  return off;
}

static void coords(const rlx_shape *s, int64_t i, int64_t *c) {
  for (int d = s->rank - 1; d >= 0; d--) c[d] = i % s->dims[d], i /= s->dims[d];
}

static rlx_status read_index(const rlx_tensor_view *ix, int64_t i, int64_t size, int64_t *j) {
  *j = rlx_load_i64(ix->data, ix->dtype, i);
  if (*j < 0 || *j >= size)
    return rlx_errorf(RLX_ERR_RUNTIME, "index %lld is out of range for a dim of size %lld",
                      (long long)*j, (long long)size);
  return RLX_OK;
}

/* ---- gather_elements ---- */

static rlx_status gel_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0), *ix = rlx_in(g, n, 1);
  if (check_index_shape(g, x, ix, NULL, n->p.scatter.axis)) return RLX_ERR_SHAPE;
  os[0] = ix->shape;
  od[0] = x->dtype;
  return RLX_OK;
}

static rlx_status gel_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                          void *scratch) {
  (void)scratch;
  rlx_shape xs = rlx_view_shape(&in[0]), is = rlx_view_shape(&in[1]);
  int ax = n->p.scatter.axis;
  size_t es = rlx_dtype_size(in[0].dtype);
  int64_t N = rlx_shape_numel(&is), c[RLX_MAX_RANK];
  for (int64_t i = 0; i < N; i++) {
    int64_t j;
    coords(&is, i, c);
    rlx_status st = read_index(&in[1], i, xs.rank ? xs.dims[ax] : 1, &j);
    if (st) return st;
    memcpy((char *)out[0].data + (size_t)i * es,
           (const char *)in[0].data + (size_t)(xs.rank ? offset_at(&xs, c, ax, j) : 0) * es, es);
  }
  return RLX_OK;
}

static void axis_print(const rlx_node *n, char *buf, size_t cap) {
  static const char *names[] = {"", " add", " mul", " mean", " amax", " amin"};
  rlx_bprintf(buf, cap, "axis=%d%s", n->p.scatter.axis, names[n->p.scatter.reduce]);
  if (n->p.scatter.reduce && !n->p.scatter.include_self) rlx_bprintf(buf, cap, " exclude_self");
}

const rlx_op_vtable rlx_op_gather_elements = {.infer = gel_infer, .ref = gel_ref, .print = axis_print, .symbolic = true};

/* ---- scatter ---- */

static rlx_status scatter_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0), *ix = rlx_in(g, n, 1), *src = rlx_in(g, n, 2);
  if (check_index_shape(g, x, ix, src, n->p.scatter.axis)) return RLX_ERR_SHAPE;
  os[0] = x->shape;
  od[0] = x->dtype;
  return RLX_OK;
}

static size_t scatter_scratch(const rlx_graph *g, const rlx_node *n) {
  return (size_t)rlx_shape_numel(&rlx_in(g, n, 0)->shape) * (sizeof(int64_t) + 1);
}

static rlx_status scatter_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                              void *scratch) {
  const rlx_scatter_params *p = &n->p.scatter;
  rlx_shape xs = rlx_view_shape(&in[0]), is = rlx_view_shape(&in[1]), ss = rlx_view_shape(&in[2]);
  rlx_dtype t = in[0].dtype;
  bool fl = rlx_dtype_is_float(t);
  size_t es = rlx_dtype_size(t);
  int64_t X = rlx_shape_numel(&xs), N = rlx_shape_numel(&is), c[RLX_MAX_RANK];
  int64_t *count = scratch;
  uint8_t *touched = (uint8_t *)(count + X);
  memcpy(out[0].data, in[0].data, (size_t)X * es);
  for (int64_t q = 0; q < X; q++) count[q] = p->include_self, touched[q] = 0;
  for (int64_t i = 0; i < N; i++) {
    int64_t j;
    coords(&is, i, c);
    rlx_status st = read_index(&in[1], i, xs.rank ? xs.dims[p->axis] : 1, &j);
    if (st) return st;
    int64_t q = xs.rank ? offset_at(&xs, c, p->axis, j) : 0, s = ss.rank ? offset_at(&ss, c, -1, 0) : 0;
    bool first = !p->include_self && !touched[q];
    touched[q] = 1;
    count[q]++;
    if (p->reduce == RLX_SCATTER_NONE || first) {
      memcpy((char *)out[0].data + (size_t)q * es, (const char *)in[2].data + (size_t)s * es, es);
      continue;
    }
    if (fl) {
      double a = rlx_load_f64(out[0].data, t, q), b = rlx_load_f64(in[2].data, t, s), r;
      switch (p->reduce) {
        case RLX_SCATTER_MUL: r = a * b; break;
        case RLX_SCATTER_AMAX: r = (a != a || b != b) ? NAN : fmax(a, b); break;
        case RLX_SCATTER_AMIN: r = (a != a || b != b) ? NAN : fmin(a, b); break;
        default: r = a + b; break; /* add, mean */
      }
      rlx_store_f64(out[0].data, t, q, r);
    } else {
      int64_t a = rlx_load_i64(out[0].data, t, q), b = rlx_load_i64(in[2].data, t, s), r;
      switch (p->reduce) {
        case RLX_SCATTER_MUL: r = (int64_t)((uint64_t)a * (uint64_t)b); break;
        case RLX_SCATTER_AMAX: r = a > b ? a : b; break;
        case RLX_SCATTER_AMIN: r = a < b ? a : b; break;
        default: r = (int64_t)((uint64_t)a + (uint64_t)b); break;
      }
      rlx_store_i64(out[0].data, t, q, r);
    }
  }
  if (p->reduce == RLX_SCATTER_MEAN)
    for (int64_t q = 0; q < X; q++) {
      if (!touched[q] || count[q] <= 1) continue;
      if (fl) {
        rlx_store_f64(out[0].data, t, q, rlx_load_f64(out[0].data, t, q) / (double)count[q]);
      } else {
        int64_t a = rlx_load_i64(out[0].data, t, q), d = count[q], r = a / d;
        if ((a % d != 0) && ((a < 0) != (d < 0))) r--; /* floor */
        rlx_store_i64(out[0].data, t, q, r);
      }
    }
  return RLX_OK;
}

const rlx_op_vtable rlx_op_scatter = {
    .infer = scatter_infer, .ref = scatter_ref, .scratch = scatter_scratch, .print = axis_print, .symbolic = true};

/* ---- slice_scatter ---- */

static rlx_status ss_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0), *src = rlx_in(g, n, 1);
  const rlx_slice_params *p = &n->p.slice;
  if (p->axis < 0 || p->axis >= x->shape.rank) RLX_INFER_FAIL("slice_scatter axis %d out of range", p->axis);
  rlx_shape want = x->shape;
  rlx_status st = rlx_slice_len(g, p, x->shape.dims[p->axis], &want.dims[p->axis]);
  if (st) return st;
  if (!rlx_shape_eq(&src->shape, &want) || src->dtype != x->dtype) {
    char a[256], b[256];
    RLX_INFER_FAIL("slice_scatter src is %s %s, the slice is %s %s", rlx_dtype_name(src->dtype),
                   rlx_graph_shape_str(g, &src->shape, a, sizeof a), rlx_dtype_name(x->dtype),
                   rlx_graph_shape_str(g, &want, b, sizeof b));
  }
  os[0] = x->shape;
  od[0] = x->dtype;
  return RLX_OK;
}

static rlx_status ss_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                         void *scratch) {
  (void)scratch;
  const rlx_slice_params *p = &n->p.slice;
  size_t es = rlx_dtype_size(in[0].dtype);
  /* out == in[0]: a state updated in place (memplan.c) */
  if (out[0].data != in[0].data) memcpy(out[0].data, in[0].data, (size_t)rlx_view_numel(&in[0]) * es);
  int64_t outer = rlx_dims_prod(in[0].dims, 0, p->axis), inner = rlx_dims_prod(in[0].dims, p->axis + 1, in[0].rank);
  int64_t D = in[0].dims[p->axis], Ds = in[1].dims[p->axis];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < Ds; j++)
      memcpy((char *)out[0].data + (size_t)((o * D + p->start + j * p->step) * inner) * es,
             (const char *)in[1].data + (size_t)((o * Ds + j) * inner) * es, (size_t)inner * es);
  return RLX_OK;
}

static void ss_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_slice_params *p = &n->p.slice;
  rlx_bprintf(buf, cap, "axis=%d [", p->axis);
  rlx_bprint_dim(buf, cap, p->start);
  rlx_bprintf(buf, cap, ":");
  rlx_bprint_dim(buf, cap, p->end);
  rlx_bprintf(buf, cap, ":%lld]", (long long)p->step);
}

const rlx_op_vtable rlx_op_slice_scatter = {.infer = ss_infer, .ref = ss_ref, .print = ss_print, .symbolic = true,
                                            .concretize = rlx_slice_concretize};

/* ---- masked_scatter ---- */

static rlx_status ms_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0), *m = rlx_in(g, n, 1), *src = rlx_in(g, n, 2);
  rlx_shape tmp;
  if (m->dtype != RLX_DTYPE_BOOL) RLX_INFER_FAIL("masked_scatter mask must be bool");
  if (rlx_broadcast(&m->shape, &x->shape, &tmp) || !rlx_shape_eq(&tmp, &x->shape))
    RLX_INFER_FAIL("masked_scatter mask does not broadcast to the tensor");
  if (src->dtype != x->dtype) RLX_INFER_FAIL("masked_scatter source dtype differs");
  os[0] = x->shape;
  od[0] = x->dtype;
  return RLX_OK;
}

static rlx_status ms_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                         void *scratch) {
  (void)n, (void)scratch;
  rlx_shape xs = rlx_view_shape(&in[0]), ms = rlx_view_shape(&in[1]);
  int64_t mst[RLX_MAX_RANK], N = rlx_shape_numel(&xs), S = rlx_view_numel(&in[2]), k = 0;
  rlx_broadcast_strides(&ms, &xs, mst);
  size_t es = rlx_dtype_size(in[0].dtype);
  for (int64_t i = 0; i < N; i++) {
    const char *src = (const char *)in[0].data + (size_t)i * es;
    if (((const uint8_t *)in[1].data)[rlx_strided_offset(&xs, mst, i)]) {
      if (k >= S)
        return rlx_errorf(RLX_ERR_RUNTIME, "masked_scatter: the mask selects more elements than the "
                          "source holds (%lld)", (long long)S);
      src = (const char *)in[2].data + (size_t)(k++) * es;
    }
    memcpy((char *)out[0].data + (size_t)i * es, src, es);
  }
  return RLX_OK;
}

const rlx_op_vtable rlx_op_masked_scatter = {.infer = ms_infer, .ref = ms_ref, .symbolic = true};
