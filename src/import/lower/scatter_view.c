/*
 * scatter_view.c — lowering of the writes through a view of the whole
 * tensor's storage: diagonal_scatter, as_strided_scatter and put. Each is an
 * index_put on the flattened tensor: put's indices are its argument; the
 * other two get a constant i64 tensor of the view's flat positions, made at
 * load from the static shapes (offset + sum_d i_d * stride_d).
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

/* diagonal_scatter(self, src, offset=0, dim1=0, dim2=1): src is the diagonal,
 * self's other axes first, then the diagonal's length. */
rlx_status rlx_lower_diagonal_scatter(rlx_lower *lw, const rlx_aten_node *n) {
  int32_t x, src;
  int64_t off, d1, d2;
  rlx_status st = lw_tensor(lw, n, 0, "self", &x);
  if (!st) st = lw_tensor(lw, n, 1, "src", &src);
  if (!st) st = lw_int(lw, n, 2, "offset", 0, &off);
  if (!st) st = lw_int(lw, n, 3, "dim1", 0, &d1);
  if (!st) st = lw_int(lw, n, 4, "dim2", 1, &d2);
  if (st) return st;
  const rlx_shape xs = lw_val(lw, x)->shape;
  int a1, a2;
  if ((st = lw_axis(d1, xs.rank, "argument 'dim1'", &a1)) || (st = lw_axis(d2, xs.rank, "argument 'dim2'", &a2)))
    return st;
  if (xs.rank < 2 || a1 == a2)
    return lw_fail(RLX_ERR_SHAPE, "diagonal_scatter needs two distinct axes of a rank >= 2 tensor");
  if (off < -RLX_MAX_NUMEL || off > RLX_MAX_NUMEL)
    return lw_fail(RLX_ERR_SHAPE, "diagonal offset %lld", (long long)off);
  int64_t st_x[RLX_MAX_RANK], stride[RLX_MAX_RANK];
  rlx_shape_strides(&xs, st_x);
  int64_t len = off >= 0 ? RLX_MIN(xs.dims[a1], xs.dims[a2] - off) : RLX_MIN(xs.dims[a1] + off, xs.dims[a2]);
  rlx_shape size = {.rank = 0};
  for (int i = 0; i < xs.rank; i++)
    if (i != a1 && i != a2) stride[size.rank] = st_x[i], size.dims[size.rank++] = xs.dims[i];
  stride[size.rank] = st_x[a1] + st_x[a2];
  size.dims[size.rank++] = RLX_MAX(len, 0);
  if (!rlx_shape_eq(&size, &lw_val(lw, src)->shape)) /* torch: "src must have the shape of the diagonal" */
    return lw_fail(RLX_ERR_SHAPE, "diagonal_scatter: src does not have the diagonal's shape");
  int64_t N = rlx_shape_numel(&xs), start = 0; /* an empty diagonal starts nowhere */
  if (len > 0) start = off >= 0 ? off * st_x[a2] : -off * st_x[a1]; /* within x: |off| < its dim */
  int32_t idx = strided_index(lw, &size, stride, start, RLX_MAX(N, 1));
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
