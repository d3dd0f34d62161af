/*
 * shape.c — data movement: reshape, permute, slice (with step), concat,
 * expand (broadcast), pad (constant with negative pads cropping, reflect,
 * replicate, circular; negative pads crop in every mode but circular). Every
 * kernel copies elements by size; no dtype math.
 */
#include "ops/ops_util.h"

static inline void copy_elem(char *dst, int64_t di, const char *src, int64_t si, size_t es) {
  memcpy(dst + (size_t)di * es, src + (size_t)si * es, es);
}

/* ---- reshape ---- */

static rlx_status reshape_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  const rlx_shape *s = &n->p.shape.shape;
  if (s->rank < 0 || s->rank > RLX_MAX_RANK) RLX_INFER_FAIL("reshape to rank %d", s->rank);
  if (!rlx_graph_shape_valid(g, s)) RLX_INFER_FAIL("reshape target has a negative dim or too many elements");
  char a[256], b[256];
  if (!rlx_shape_is_symbolic(s) && !rlx_shape_is_symbolic(&x->shape)) {
    if (rlx_shape_numel(s) != rlx_shape_numel(&x->shape))
      RLX_INFER_FAIL("cannot reshape %s to %s", rlx_shape_str(&x->shape, a, sizeof a), rlx_shape_str(s, b, sizeof b));
  } else { /* the element counts must be provably equal, or at least not provably different */
    rlx_dim nx, ns, d;
    rlx_status st = rlx_shape_numel_dim(g, &x->shape, &nx);
    if (!st) st = rlx_shape_numel_dim(g, s, &ns);
    if (!st) st = rlx_dim_sub(rlx_graph_syms(g), nx, ns, &d);
    int64_t lo = 0, hi = 0;
    if (!st) rlx_dim_bounds(&g->syms, d, &lo, &hi);
    if (!st && (lo > 0 || hi < 0))
      RLX_INFER_FAIL("cannot reshape %s to %s: the element counts differ at every binding",
                     rlx_graph_shape_str(g, &x->shape, a, sizeof a), rlx_graph_shape_str(g, s, b, sizeof b));
  }
  os[0] = *s;
  od[0] = x->dtype;
  return RLX_OK;
}

/* Reshape and expand targets: symbolic dims take their values. */
static void shape_concretize(rlx_params *p, const int64_t *ev) {
  for (int i = 0; i < p->shape.shape.rank; i++) p->shape.shape.dims[i] = rlx_dim_value(p->shape.shape.dims[i], ev);
}

static rlx_status reshape_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                              void *scratch) {
  (void)n, (void)scratch;
  if (out[0].data != in[0].data)
    memcpy(out[0].data, in[0].data, (size_t)rlx_view_numel(&in[0]) * rlx_dtype_size(in[0].dtype));
  return RLX_OK;
}

static void shape_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprint_ints(buf, cap, "shape", n->p.shape.shape.dims, n->p.shape.shape.rank);
}

const rlx_op_vtable rlx_op_reshape = {.infer = reshape_infer, .ref = reshape_ref, .print = shape_print,
                                      .symbolic = true, .concretize = shape_concretize};

/* ---- permute ---- */

static rlx_status permute_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  uint32_t seen = 0;
  os[0].rank = x->shape.rank;
  for (int i = 0; i < x->shape.rank; i++) {
    int32_t a = n->p.permute.perm[i];
    if (a < 0 || a >= x->shape.rank || (seen >> a) & 1)
      RLX_INFER_FAIL("permute: entry %d (%d) is not a permutation of %d axes", i, a, x->shape.rank);
    seen |= 1u << a;
    os[0].dims[i] = x->shape.dims[a];
  }
  od[0] = x->dtype;
  return RLX_OK;
}

static rlx_status permute_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                              void *scratch) {
  (void)scratch;
  rlx_shape xs = rlx_view_shape(&in[0]), os = rlx_view_shape(&out[0]);
  int64_t xst[RLX_MAX_RANK], st[RLX_MAX_RANK];
  rlx_shape_strides(&xs, xst);
  for (int i = 0; i < os.rank; i++) st[i] = xst[n->p.permute.perm[i]];
  size_t es = rlx_dtype_size(in[0].dtype);
  int64_t N = rlx_shape_numel(&os);
  for (int64_t i = 0; i < N; i++) copy_elem(out[0].data, i, in[0].data, rlx_strided_offset(&os, st, i), es);
  return RLX_OK;
}

static void permute_print(const rlx_node *n, char *buf, size_t cap) {
  int64_t p[RLX_MAX_RANK];
  int r = 0;
  for (; r < RLX_MAX_RANK && n->p.permute.perm[r] >= 0; r++) p[r] = n->p.permute.perm[r];
  rlx_bprint_ints(buf, cap, "perm", p, r);
}

const rlx_op_vtable rlx_op_permute = {
    .infer = permute_infer, .ref = permute_ref, .print = permute_print, .symbolic = true};

/* ---- slice ---- */

/* The length of [start:end:step] as a dim: ceil((end - start) / step). A
 * symbolic bound is checked where it can be decided and otherwise at each
 * binding (every binding re-runs this with its values). */
rlx_status rlx_slice_len(const rlx_graph *g, const rlx_slice_params *p, rlx_dim d, rlx_dim *len) {
  if (!rlx_dim_valid(&g->syms, p->start) || !rlx_dim_valid(&g->syms, p->end))
    RLX_INFER_FAIL("slice bounds out of range");
  if (!rlx_dim_is_sym(p->start) && !rlx_dim_is_sym(p->end) && !rlx_dim_is_sym(d)) {
    if (p->step < 1 || p->start < 0 || p->end < p->start || p->end > d)
      RLX_INFER_FAIL("slice [%lld:%lld:%lld] of a dim of size %lld", (long long)p->start,
                     (long long)p->end, (long long)p->step, (long long)d);
    int64_t n = p->end - p->start; /* no overflow: 0 <= start <= end <= d */
    *len = n / p->step + (n % p->step != 0);
    return RLX_OK;
  }
  if (p->step < 1 || p->step > RLX_MAX_NUMEL) RLX_INFER_FAIL("slice step %lld", (long long)p->step);
  if (!rlx_dim_may_le(g, 0, p->start) || !rlx_dim_may_le(g, p->start, p->end) || !rlx_dim_may_le(g, p->end, d)) {
    char a[96], b[96], c[96];
    RLX_INFER_FAIL("slice [%s:%s] of a dim of size %s is out of range at every binding",
                   rlx_dim_str(&g->syms, p->start, a, sizeof a), rlx_dim_str(&g->syms, p->end, b, sizeof b),
                   rlx_dim_str(&g->syms, d, c, sizeof c));
  }
  rlx_symtab *t = rlx_graph_syms(g);
  rlx_dim n;
  rlx_status st = rlx_dim_sub(t, p->end, p->start, &n);
  if (!st) st = rlx_dim_add(t, n, p->step - 1, &n);
  if (!st) st = rlx_dim_floordiv(t, n, p->step, len);
  return st;
}

static rlx_status slice_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  const rlx_slice_params *p = &n->p.slice;
  if (p->axis < 0 || p->axis >= x->shape.rank) RLX_INFER_FAIL("slice axis %d out of range", p->axis);
  os[0] = x->shape;
  rlx_status st = rlx_slice_len(g, p, x->shape.dims[p->axis], &os[0].dims[p->axis]);
  od[0] = x->dtype;
  return st;
}

void rlx_slice_concretize(rlx_params *p, const int64_t *ev) {
  p->slice.start = rlx_dim_value(p->slice.start, ev);
  p->slice.end = rlx_dim_value(p->slice.end, ev);
}

static rlx_status slice_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                            void *scratch) {
  (void)scratch;
  const rlx_slice_params *p = &n->p.slice;
  int64_t outer = rlx_dims_prod(in[0].dims, 0, p->axis);
  int64_t inner = rlx_dims_prod(in[0].dims, p->axis + 1, in[0].rank);
  int64_t D = in[0].dims[p->axis], Do = out[0].dims[p->axis];
  size_t es = rlx_dtype_size(in[0].dtype);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < Do; j++)
      memcpy((char *)out[0].data + (size_t)((o * Do + j) * inner) * es,
             (const char *)in[0].data + (size_t)((o * D + p->start + j * p->step) * inner) * es,
             (size_t)inner * es);
  return RLX_OK;
}

static void slice_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_slice_params *p = &n->p.slice;
  rlx_bprintf(buf, cap, "axis=%d [", p->axis);
  rlx_bprint_dim(buf, cap, p->start);
  rlx_bprintf(buf, cap, ":");
  rlx_bprint_dim(buf, cap, p->end);
  rlx_bprintf(buf, cap, ":%lld]", (long long)p->step);
}

const rlx_op_vtable rlx_op_slice = {.infer = slice_infer, .ref = slice_ref, .print = slice_print,
                                    .symbolic = true, .concretize = rlx_slice_concretize};

/* ---- concat ---- */

static rlx_status concat_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x0 = rlx_in(g, n, 0);
  int ax = n->p.axis.axis;
  if (ax < 0 || ax >= x0->shape.rank) RLX_INFER_FAIL("concat axis %d out of range", ax);
  os[0] = x0->shape;
  os[0].dims[ax] = 0;
  for (int k = 0; k < n->n_in; k++) {
    const rlx_value *x = rlx_in(g, n, k);
    if (!x) RLX_INFER_FAIL("concat input %d is absent", k);
    if (x->dtype != x0->dtype || x->shape.rank != x0->shape.rank)
      RLX_INFER_FAIL("concat input %d is %s rank %d, input 0 is %s rank %d", k,
                     rlx_dtype_name(x->dtype), x->shape.rank, rlx_dtype_name(x0->dtype),
                     x0->shape.rank);
    for (int i = 0; i < x0->shape.rank; i++)
      if (i != ax && x->shape.dims[i] != x0->shape.dims[i])
        RLX_INFER_FAIL("concat input %d differs from input 0 on axis %d", k, i);
    if (rlx_dim_add(rlx_graph_syms(g), os[0].dims[ax], x->shape.dims[ax], &os[0].dims[ax]))
      RLX_INFER_FAIL("concat: the size of axis %d overflows", ax);
  }
  od[0] = x0->dtype;
  return RLX_OK;
}

static rlx_status concat_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                             void *scratch) {
  (void)scratch;
  int ax = n->p.axis.axis;
  int64_t outer = rlx_dims_prod(out[0].dims, 0, ax), inner = rlx_dims_prod(out[0].dims, ax + 1, out[0].rank);
  int64_t Do = out[0].dims[ax], off = 0;
  size_t es = rlx_dtype_size(out[0].dtype);
  for (int k = 0; k < n->n_in; k++) {
    int64_t Dk = in[k].dims[ax];
    for (int64_t o = 0; o < outer; o++)
      memcpy((char *)out[0].data + (size_t)((o * Do + off) * inner) * es,
             (const char *)in[k].data + (size_t)(o * Dk * inner) * es, (size_t)(Dk * inner) * es);
    off += Dk;
  }
  return RLX_OK;
}

static void axis_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "axis=%d", n->p.axis.axis);
}

const rlx_op_vtable rlx_op_concat = {.infer = concat_infer, .ref = concat_ref, .print = axis_print,
                                     .symbolic = true};

/* ---- expand ---- */

static rlx_status expand_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  const rlx_shape *s = &n->p.shape.shape;
  rlx_shape tmp;
  if (!rlx_graph_shape_valid(g, s)) RLX_INFER_FAIL("expand to an invalid shape (rank %d)", s->rank);
  if (rlx_broadcast(&x->shape, s, &tmp) || !rlx_shape_eq(&tmp, s)) {
    char a[256], b[256];
    RLX_INFER_FAIL("cannot expand %s to %s", rlx_graph_shape_str(g, &x->shape, a, sizeof a),
                   rlx_graph_shape_str(g, s, b, sizeof b));
  }
  os[0] = *s;
  od[0] = x->dtype;
  return RLX_OK;
}

static rlx_status expand_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                             void *scratch) {
  (void)n, (void)scratch;
  rlx_shape xs = rlx_view_shape(&in[0]), os = rlx_view_shape(&out[0]);
  int64_t st[RLX_MAX_RANK];
  rlx_broadcast_strides(&xs, &os, st);
  size_t es = rlx_dtype_size(in[0].dtype);
  int64_t N = rlx_shape_numel(&os);
  for (int64_t i = 0; i < N; i++) copy_elem(out[0].data, i, in[0].data, rlx_strided_offset(&os, st, i), es);
  return RLX_OK;
}

const rlx_op_vtable rlx_op_expand = {.infer = expand_infer, .ref = expand_ref, .print = shape_print,
                                     .symbolic = true, .concretize = shape_concretize};

/* ---- pad ---- */

static rlx_status pad_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  const rlx_pad_params *p = &n->p.pad;
  os[0] = x->shape;
  for (int i = 0; i < x->shape.rank; i++) {
    int64_t d = x->shape.dims[i], lo = p->lo[i], hi = p->hi[i];
    if (!rlx_dim_valid(&g->syms, lo) || !rlx_dim_valid(&g->syms, hi))
      RLX_INFER_FAIL("padding of axis %d is out of range", i);
    if (rlx_dim_is_sym(d) || rlx_dim_is_sym(lo) || rlx_dim_is_sym(hi)) {
      /* symbolic: the rules below are checked per binding (this runs again with its values) */
      rlx_symtab *t = rlx_graph_syms(g);
      if (p->mode != RLX_PAD_CONSTANT && (lo || hi))
        RLX_INFER_FAIL("%s padding of an axis with a symbolic size or amount (axis %d): rlx pads those "
                       "with a constant only", p->mode == RLX_PAD_REFLECT ? "reflect" : "replicate or circular", i);
      if (rlx_dim_add(t, d, lo, &os[0].dims[i]) || rlx_dim_add(t, os[0].dims[i], hi, &os[0].dims[i]))
        RLX_INFER_FAIL("padding of axis %d is too complex", i);
      continue;
    }
    /* negative padding crops: never more than the dim (torch refuses a
     * negative size); positive padding is bounded by the element limit */
    if (lo < -d || hi < -d || lo > RLX_MAX_NUMEL || hi > RLX_MAX_NUMEL)
      RLX_INFER_FAIL("padding (%lld, %lld) of axis %d (size %lld) is out of range", (long long)lo,
                     (long long)hi, i, (long long)d);
    if (p->mode == RLX_PAD_CIRCULAR && (lo < 0 || hi < 0))
      RLX_INFER_FAIL("negative circular padding on axis %d", i);
    if (p->mode == RLX_PAD_REFLECT && (lo >= d || hi >= d) && (lo > 0 || hi > 0))
      RLX_INFER_FAIL("reflect padding (%lld, %lld) must be smaller than the dim %lld on axis %d",
                     (long long)lo, (long long)hi, (long long)d, i);
    if ((p->mode == RLX_PAD_REPLICATE || p->mode == RLX_PAD_CIRCULAR) && d == 0 && (lo || hi))
      RLX_INFER_FAIL("cannot %s-pad an empty axis %d",
                     p->mode == RLX_PAD_REPLICATE ? "replicate" : "circular", i);
    if (p->mode == RLX_PAD_CIRCULAR && (lo > d || hi > d))
      RLX_INFER_FAIL("circular padding larger than the dim on axis %d", i);
    bool ok = true;
    os[0].dims[i] = rlx_add64(rlx_add64(d, lo, &ok), hi, &ok);
    if (!ok) RLX_INFER_FAIL("padding of axis %d overflows", i);
    if (os[0].dims[i] < 0) RLX_INFER_FAIL("padding makes axis %d negative", i);
  }
  for (int i = x->shape.rank; i < RLX_MAX_RANK; i++)
    if (p->lo[i] || p->hi[i]) RLX_INFER_FAIL("padding given for axis %d of a rank-%d tensor", i,
                                             x->shape.rank);
  od[0] = x->dtype;
  return RLX_OK;
}

/* Source index along one axis for output position j, or -1 for the fill (ops_util.h). */
int64_t rlx_pad_src(rlx_pad_mode mode, int64_t j, int64_t lo, int64_t d) {
  int64_t i = j - lo;
  if (i >= 0 && i < d) return i;
  switch (mode) {
    case RLX_PAD_CONSTANT: return -1;
    case RLX_PAD_REPLICATE: return i < 0 ? 0 : d - 1;
    case RLX_PAD_CIRCULAR: return ((i % d) + d) % d;
    default: { /* reflect without repeating the edge */
      if (d == 1) return 0;
      int64_t period = 2 * (d - 1), m = ((i % period) + period) % period;
      return m < d ? m : period - m;
    }
  }
}

static rlx_status pad_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                          void *scratch) {
  (void)scratch;
  const rlx_pad_params *p = &n->p.pad;
  rlx_shape os = rlx_view_shape(&out[0]);
  int64_t xst[RLX_MAX_RANK];
  rlx_shape xs = rlx_view_shape(&in[0]);
  rlx_shape_strides(&xs, xst);
  size_t es = rlx_dtype_size(in[0].dtype);
  char fill[8];
  if (rlx_dtype_is_float(in[0].dtype)) rlx_store_f64(fill, in[0].dtype, 0, p->value);
  else rlx_store_i64(fill, in[0].dtype, 0, (int64_t)p->value);
  int64_t N = rlx_shape_numel(&os);
  for (int64_t i = 0; i < N; i++) {
    int64_t rem = i, off = 0;
    bool is_fill = false;
    for (int d = os.rank - 1; d >= 0; d--) {
      int64_t j = rem % os.dims[d];
      rem /= os.dims[d];
      int64_t s = rlx_pad_src(p->mode, j, p->lo[d], xs.dims[d]);
      if (s < 0) is_fill = true;
      else off += s * xst[d];
    }
    if (is_fill) memcpy((char *)out[0].data + (size_t)i * es, fill, es);
    else copy_elem(out[0].data, i, in[0].data, off, es);
  }
  return RLX_OK;
}

static void pad_print(const rlx_node *n, char *buf, size_t cap) {
  static const char *modes[] = {"constant", "reflect", "replicate", "circular"};
  const rlx_pad_params *p = &n->p.pad;
  int r = RLX_MAX_RANK;
  while (r > 0 && !p->lo[r - 1] && !p->hi[r - 1]) r--;
  rlx_bprintf(buf, cap, "%s", modes[p->mode]);
  rlx_bprint_ints(buf, cap, "lo", p->lo, r);
  rlx_bprint_ints(buf, cap, "hi", p->hi, r);
  if (p->mode == RLX_PAD_CONSTANT) rlx_bprintf(buf, cap, " value=%g", p->value);
}

static void pad_concretize(rlx_params *p, const int64_t *ev) {
  for (int i = 0; i < RLX_MAX_RANK; i++)
    p->pad.lo[i] = rlx_dim_value(p->pad.lo[i], ev), p->pad.hi[i] = rlx_dim_value(p->pad.hi[i], ev);
}

const rlx_op_vtable rlx_op_pad = {.infer = pad_infer, .ref = pad_ref, .print = pad_print, .symbolic = true,
                                  .concretize = pad_concretize};
