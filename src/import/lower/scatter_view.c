/*
 * scatter_view.c — lowering of the writes through a view of the whole
 * tensor's storage: diagonal_scatter, as_strided_scatter and put. Each is an
 * index_put on the flattened tensor at the view's flat positions (offset +
 * sum_d i_d * stride_d): put's are its argument; as_strided_scatter's a
 * constant i64 tensor made at load from its static sizes and strides;
 * diagonal_scatter's are built in the graph from aranges, so it also takes
 * symbolic shapes.
 */
#include "import/lower/lower.h"

/* flat[index] = vals (or +=): x, index and vals flattened, x's shape restored. */
static rlx_status emit_flat_put(rlx_lower *lw, const rlx_aten_node *n, int32_t x, int32_t index, int32_t vals,
                                bool acc) {
  rlx_shape xs = lw_val(lw, x)->shape, flat = {.rank = 1}, ifl = {.rank = 1};
  rlx_status st = rlx_shape_numel_dim_lw(lw, &xs, &flat.dims[0]);
  if (!st) st = rlx_shape_numel_dim_lw(lw, &lw_val(lw, index)->shape, &ifl.dims[0]);
  if (st) return st;
  int32_t in[3] = {lw_reshape(lw, x, &flat), lw_reshape(lw, lw_cast(lw, vals, lw_val(lw, x)->dtype), &ifl),
                   lw_reshape(lw, index, &ifl)};
  if (in[0] < 0 || in[1] < 0 || in[2] < 0) return rlx_last_status();
  rlx_params p = {.index_put = {.indexed = 1, .accumulate = acc}};
  int32_t y = lw_emit(lw, RLX_OP_INDEX_PUT, &p, in, 3);
  return lw_bind(lw, n, y < 0 ? -1 : lw_reshape(lw, y, &xs));
}

/* A constant i64 tensor of shape `size` holding offset + sum_d i_d * stride[d];
 * each must lie in [0, N) (N: the elements of the tensor written). */
static int32_t strided_index(rlx_lower *lw, const rlx_shape *size, const int64_t *stride, int64_t offset, int64_t N) {
  int64_t P = rlx_shape_numel(size);
  int64_t *v = rlx_aligned_alloc((size_t)RLX_MAX(P, 1) * sizeof(int64_t));
  if (!v) {
    rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory for %lld view positions", (long long)P);
    return -1;
  }
  for (int64_t i = 0; i < P; i++) {
    int64_t rem = i, pos = offset;
    bool ok = true; /* sizes and strides come from the file: the sum may overflow */
    for (int d = size->rank - 1; d >= 0; d--) {
      pos = lw_add64(pos, lw_mul64(rem % size->dims[d], stride[d], &ok), &ok);
      rem /= size->dims[d];
    }
    if (!ok || pos < 0 || pos >= N) {
      if (!ok) pos = INT64_MAX;
      rlx_aligned_free(v);
      lw_fail(RLX_ERR_SHAPE, "the view reaches element %lld of a tensor of %lld", (long long)pos, (long long)N);
      return -1;
    }
    v[i] = pos;
  }
  return rlx_graph_add_const_owned(lw->g, RLX_DTYPE_I64, size, v);
}

/* i64 positions `coef * arange(len)` laid along axis `axis` of a rank-`rank`
 * tensor (length 1 elsewhere), or -1. */
static int32_t axis_positions(rlx_lower *lw, rlx_dim len, rlx_dim coef, int axis, int rank) {
  rlx_params p = {.arange = {.dtype = RLX_DTYPE_I64, .length = len, .step = 1, .istep = 1}};
  rlx_shape s = {.rank = rank};
  for (int i = 0; i < rank; i++) s.dims[i] = i == axis ? len : 1;
  int32_t a = lw_reshape(lw, lw_emit(lw, RLX_OP_ARANGE, &p, NULL, 0), &s);
  return a < 0 ? -1 : lw_binary(lw, RLX_BINARY_MUL, a, lw_dim_scalar(lw, coef, RLX_DTYPE_I64));
}

/* diagonal_scatter(self, src, offset=0, dim1=0, dim2=1): src is the diagonal,
 * self's other axes first, then the diagonal's length. Its flat positions
 * are start + sum_i o_i * stride_i + t * (stride_1 + stride_2), built from
 * aranges (folded to a constant at static shapes; computed per binding at
 * symbolic ones). */
rlx_status rlx_lower_diagonal_scatter(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, src;
  int64_t off, d1, d2;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_tensor(lw, n, 1, "src", &src);
  if (!st) st = lw_int(lw, n, 2, "offset", 0, &off);
  if (!st) st = lw_int(lw, n, 3, "dim1", 0, &d1);
  if (!st) st = lw_int(lw, n, 4, "dim2", 1, &d2);
  if (st) return st;
  const rlx_shape xs = lw_val(lw, x)->shape, ss = lw_val(lw, src)->shape;
  int a1, a2;
  if ((st = lw_axis(d1, xs.rank, "argument 'dim1'", &a1)) || (st = lw_axis(d2, xs.rank, "argument 'dim2'", &a2)))
    return st;
  if (xs.rank < 2 || a1 == a2)
    return lw_fail(RLX_ERR_SHAPE, "diagonal_scatter needs two distinct axes of a rank >= 2 tensor");
  if (off < -RLX_MAX_NUMEL || off > RLX_MAX_NUMEL)
    return lw_fail(RLX_ERR_SHAPE, "diagonal offset %lld", (long long)off);
  rlx_symtab *sy = lw_syms(lw);
  rlx_dim stride[RLX_MAX_RANK], len, along;
  stride[xs.rank - 1] = 1;
  for (int i = xs.rank - 2; i >= 0 && !st; i--) st = rlx_dim_mul(sy, stride[i + 1], xs.dims[i + 1], &stride[i]);
  /* the diagonal's length: min(d1, d2 - off) or min(d1 + off, d2), at least 0 */
  rlx_dim e1 = xs.dims[a1], e2 = xs.dims[a2];
  if (!st) st = off >= 0 ? rlx_dim_add(sy, e2, -off, &e2) : rlx_dim_add(sy, e1, off, &e1);
  if (!st) st = rlx_dim_min(sy, e1, e2, &len);
  if (!st) st = rlx_dim_max(sy, len, 0, &len);
  if (!st) st = rlx_dim_add(sy, stride[a1], stride[a2], &along);
  if (st) return st;
  bool ok = ss.rank == xs.rank - 1 && lw_dims_agree(lw, ss.dims[ss.rank - 1], len);
  for (int i = 0, j = 0; ok && i < xs.rank; i++)
    if (i != a1 && i != a2) ok = lw_dims_agree(lw, ss.dims[j++], xs.dims[i]);
  if (!ok) /* torch: "src must have the shape of the diagonal" */
    return lw_fail(RLX_ERR_SHAPE, "diagonal_scatter: src does not have the diagonal's shape");
  rlx_dim start = 0; /* within x when the diagonal is not empty: |off| < its dim */
  if ((st = rlx_dim_mul(sy, off >= 0 ? off : -off, stride[off >= 0 ? a2 : a1], &start))) return st;
  int32_t idx = axis_positions(lw, len, along, ss.rank - 1, ss.rank);
  for (int i = 0, j = 0; i < xs.rank && idx >= 0; i++)
    if (i != a1 && i != a2) idx = lw_binary(lw, RLX_BINARY_ADD, idx, axis_positions(lw, xs.dims[i], stride[i], j++, ss.rank));
  if (idx >= 0) idx = lw_binary(lw, RLX_BINARY_ADD, idx, lw_dim_scalar(lw, start, RLX_DTYPE_I64));
  return idx < 0 ? rlx_last_status() : emit_flat_put(lw, n, x, idx, src, false);
}

/* as_strided_scatter(self, src, size, stride, storage_offset=None): the view
 * reads self's contiguous storage, as rlx's as_strided does. */
rlx_status rlx_lower_as_strided_scatter(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, src;
  int64_t size[RLX_MAX_RANK], stride[RLX_MAX_RANK], off;
  int ns, nst;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_tensor(lw, n, 1, "src", &src);
  if (!st) st = lw_ints(lw, n, 2, "size", size, RLX_MAX_RANK, &ns);
  if (!st) st = lw_ints(lw, n, 3, "stride", stride, RLX_MAX_RANK, &nst);
  if (!st) st = lw_int(lw, n, 4, "storage_offset", 0, &off);
  if (st) return st;
  if (ns != nst) return lw_fail(RLX_ERR_SHAPE, "as_strided_scatter: %d sizes but %d strides", ns, nst);
  rlx_shape s = {.rank = ns};
  for (int i = 0; i < ns; i++) {
    if (size[i] < 0 || size[i] > RLX_MAX_NUMEL || stride[i] < 0 || stride[i] > RLX_MAX_NUMEL)
      return lw_fail(RLX_ERR_SHAPE, "as_strided_scatter size[%d] = %lld, stride %lld", i, (long long)size[i],
                     (long long)stride[i]);
    s.dims[i] = size[i];
  }
  if (off < 0 || off > RLX_MAX_NUMEL)
    return lw_fail(RLX_ERR_SHAPE, "as_strided_scatter storage_offset %lld", (long long)off);
  if (!rlx_shape_eq(&s, &lw_val(lw, src)->shape))
    return lw_fail(RLX_ERR_SHAPE, "as_strided_scatter: src does not have the view's shape");
  int32_t idx = strided_index(lw, &s, stride, off, rlx_shape_numel(&lw_val(lw, x)->shape));
  return idx < 0 ? rlx_last_status() : emit_flat_put(lw, n, x, idx, src, false);
}

/* put(self, index, source, accumulate=False): flat positions, negative ones
 * from the end; out-of-range ones are a run-time error. */
rlx_status rlx_lower_put(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, idx, src;
  bool acc;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_tensor(lw, n, 1, "index", &idx);
  if (!st) st = lw_tensor(lw, n, 2, "source", &src);
  if (!st) st = lw_bool(lw, n, 3, "accumulate", false, &acc);
  if (st) return st;
  if (lw_val(lw, idx)->dtype != RLX_DTYPE_I64) /* torch: "put_(): Expected a long tensor for index" */
    return lw_fail(RLX_ERR_UNSUPPORTED, "put needs an i64 index, got %s", rlx_dtype_name(lw_val(lw, idx)->dtype));
  rlx_dim a, b;
  if ((st = rlx_shape_numel_dim_lw(lw, &lw_val(lw, idx)->shape, &a)) ||
      (st = rlx_shape_numel_dim_lw(lw, &lw_val(lw, src)->shape, &b)))
    return st;
  if (!lw_dims_agree(lw, a, b)) /* torch: "Expected source and index to have the same number of elements" */
    return lw_fail(RLX_ERR_SHAPE, "put: source and index differ in element count");
  return emit_flat_put(lw, n, x, idx, src, acc);
}
