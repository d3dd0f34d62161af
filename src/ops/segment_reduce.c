/*
 * segment_reduce.c — torch.segment_reduce over run-time segments:
 *
 *   data [A.., L, I..] (float), offsets [A.., S + 1] (int64) -> y [A.., S, I..]
 *
 * with A.. the dims before `axis` and I.. those after. For each row a of A..,
 * segment s is data[a, offsets[a, s] : offsets[a, s + 1], i]; the lowering
 * builds offsets from torch's lengths (0 and their running sum) or takes
 * torch's offsets as they are.
 *
 * As torch's CPU kernel: every segment starts at `initial` when given, else
 * at 0 (sum, mean), 1 (prod), -inf (max), +inf (min); the elements are
 * combined in order in the data's type (float for f32, double for f64, f16
 * and bf16 rounded back after every step), max and min keep a NaN once seen;
 * mean divides by the length unless the segment is empty (then it is
 * `initial`, or NaN without one) or the value is NaN.
 *
 * Torch reads out of bounds for offsets outside the axis and, with unsafe,
 * for lengths that do not add up to it; rlx refuses both at run time
 * (RLX_ERR_RUNTIME naming the row and segment), as it refuses lengths that
 * do not add up without unsafe (torch's error).
 */
#include <math.h>

#include "ops/ops_util.h"

static rlx_status segment_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0), *off = rlx_in(g, n, 1);
  const rlx_segment_reduce_params *p = &n->p.segment_reduce;
  if (!rlx_dtype_is_float(x->dtype))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "segment_reduce takes float data, got %s (torch's CPU kernel has no "
                      "integer one)", rlx_dtype_name(x->dtype));
  if (off->dtype != RLX_DTYPE_I64) RLX_INFER_FAIL("segment_reduce: offsets must be i64, got %s",
                                                  rlx_dtype_name(off->dtype));
  if (p->kind != RLX_REDUCE_SUM && p->kind != RLX_REDUCE_MEAN && p->kind != RLX_REDUCE_MAX &&
      p->kind != RLX_REDUCE_MIN && p->kind != RLX_REDUCE_PROD)
    RLX_INFER_FAIL("segment_reduce: reduction %d is not sum, mean, max, min or prod", (int)p->kind);
  if (p->axis < 0 || p->axis >= x->shape.rank)
    RLX_INFER_FAIL("segment_reduce: axis %d out of range for rank %d", (int)p->axis, x->shape.rank);
  if (off->shape.rank != p->axis + 1 || off->shape.dims[p->axis] < 1)
    RLX_INFER_FAIL("segment_reduce: offsets must have rank axis + 1 = %d and a last dim >= 1", (int)p->axis + 1);
  for (int d = 0; d < p->axis; d++)
    if (off->shape.dims[d] != x->shape.dims[d])
      RLX_INFER_FAIL("segment_reduce: offsets dim %d is %lld, data's is %lld", d, (long long)off->shape.dims[d],
                     (long long)x->shape.dims[d]);
  os[0] = x->shape;
  os[0].dims[p->axis] = off->shape.dims[p->axis] - 1;
  od[0] = x->dtype;
  return RLX_OK;
}

/* v rounded to dtype t (the accumulator's type, as torch's scalar_t). */
static double round_to(rlx_dtype t, double v) {
  switch (t) {
    case RLX_DTYPE_F32: return (float)v;
    case RLX_DTYPE_F16: return rlx_f16_to_f32(rlx_f32_to_f16((float)v));
    case RLX_DTYPE_BF16: return rlx_bf16_to_f32(rlx_f32_to_bf16((float)v));
    default: return v;
  }
}

static double start_value(const rlx_segment_reduce_params *p) {
  if (p->has_initial) return p->initial;
  switch (p->kind) {
    case RLX_REDUCE_MAX: return -INFINITY;
    case RLX_REDUCE_MIN: return INFINITY;
    case RLX_REDUCE_PROD: return 1;
    default: return 0;
  }
}

/* One segment of len elements at x[0], x[stride], ... */
static double segment(const rlx_segment_reduce_params *p, rlx_dtype t, const void *x, int64_t base, int64_t stride,
                      int64_t len) {
  double acc = round_to(t, start_value(p));
  for (int64_t j = 0; j < len; j++) {
    double v = rlx_load_f64(x, t, base + j * stride);
    switch (p->kind) {
      case RLX_REDUCE_MAX: acc = v != v ? v : (acc < v ? v : acc); break;
      case RLX_REDUCE_MIN: acc = v != v ? v : (v < acc ? v : acc); break;
      case RLX_REDUCE_PROD: acc = round_to(t, acc * v); break;
      default: acc = round_to(t, acc + v); break;
    }
  }
  if (p->kind == RLX_REDUCE_MEAN) {
    if (len == 0 && !p->has_initial) acc = NAN;
    else if (len > 0 && acc == acc) acc = round_to(t, acc / (double)len);
  }
  return acc;
}

static rlx_status segment_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, void *scratch) {
  (void)scratch;
  const rlx_segment_reduce_params *p = &n->p.segment_reduce;
  const rlx_tensor_view *x = &in[0], *ov = &in[1]; /* x [A.., L, I..], offsets [A.., S + 1] */
  int ax = p->axis;
  int64_t A = 1, I = 1, L = x->dims[ax], S = ov->dims[ax] - 1;
  for (int d = 0; d < ax; d++) A *= x->dims[d];
  for (int d = ax + 1; d < x->rank; d++) I *= x->dims[d];
  const int64_t *off = ov->data;
  for (int64_t a = 0; a < A; a++) { /* check the row's segments before using them */
    const int64_t *o = off + a * (S + 1);
    for (int64_t s = 0; s < S; s++)
      if (o[s] < 0 || o[s] > o[s + 1] || o[s + 1] > L)
        return rlx_errorf(RLX_ERR_RUNTIME, "segment_reduce: row %lld segment %lld spans [%lld, %lld), not a range "
                          "within the %lld elements of axis %d (torch would read out of bounds)", (long long)a,
                          (long long)s, (long long)o[s], (long long)o[s + 1], (long long)L, ax);
    if (p->check_sum && (o[0] != 0 || o[S] != L))
      return rlx_errorf(RLX_ERR_RUNTIME, "segment_reduce(): Expected all rows of lengths along axis to sum to "
                        "data.size(lengths.dim()-1) when !unsafe (row %lld sums to %lld, the axis has %lld)",
                        (long long)a, (long long)(o[S] - o[0]), (long long)L);
  }
  for (int64_t a = 0; a < A; a++) {
    const int64_t *o = off + a * (S + 1);
    for (int64_t s = 0; s < S; s++)
      for (int64_t i = 0; i < I; i++) {
        double v = segment(p, x->dtype, x->data, (a * L + o[s]) * I + i, I, o[s + 1] - o[s]);
        rlx_store_f64(out[0].data, out[0].dtype, (a * S + s) * I + i, v);
      }
  }
  return RLX_OK;
}

static void segment_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_segment_reduce_params *p = &n->p.segment_reduce;
  rlx_bprintf(buf, cap, "%s axis=%d", rlx_reduce_names[p->kind], (int)p->axis);
  if (p->has_initial) rlx_bprintf(buf, cap, " initial=%g", p->initial);
  if (p->check_sum) rlx_bprintf(buf, cap, " check_sum");
}

const rlx_op_vtable rlx_op_segment_reduce = {.infer = segment_infer, .ref = segment_ref, .print = segment_print};
