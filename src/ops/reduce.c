/*
 * reduce.c — reductions over any set of axes (sum, mean, max, min, prod, any,
 * all, var, std, 2-norm, logsumexp, nansum) and argmax/argmin.
 *
 * Output dtype follows torch: sum/prod of integers or bools give i64; any/all
 * give bool; the rest keep the input dtype. Floats accumulate in double.
 * hash_xor is torch's hash_tensor (mode 0, XorSumOps in ReduceOpsKernel.cpp):
 * u64, the xor of every element's 64 bits — a float as the bits of its
 * double value, an integer sign-extended to 64 bits, a bool as 0 or 1 — and
 * 0 over an empty axis.
 */
#include <math.h>

#include "ops/ops_util.h"

static bool needs_float(rlx_reduce_kind k) {
  return k == RLX_REDUCE_MEAN || k == RLX_REDUCE_VAR || k == RLX_REDUCE_STD ||
         k == RLX_REDUCE_NORM2 || k == RLX_REDUCE_LOGSUMEXP;
}

static rlx_status reduce_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_reduce_params *p = &n->p.reduce;
  const rlx_value *x = rlx_in(g, n, 0);
  if ((unsigned)p->kind >= RLX_REDUCE_COUNT) RLX_INFER_FAIL("invalid reduce kind");
  if (p->axes >> x->shape.rank) RLX_INFER_FAIL("reduce axes mask 0x%x exceeds rank %d", p->axes,
                                               x->shape.rank);
  if (needs_float(p->kind) && !rlx_dtype_is_float(x->dtype))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s needs a float input, got %s",
                      rlx_reduce_names[p->kind], rlx_dtype_name(x->dtype));
  os[0].rank = 0;
  for (int i = 0; i < x->shape.rank; i++) {
    bool red = (p->axes >> i) & 1;
    if (red && x->shape.dims[i] == 0 && (p->kind == RLX_REDUCE_MAX || p->kind == RLX_REDUCE_MIN)) /* 0: a constant */
      RLX_INFER_FAIL("%s over an empty axis %d has no identity", rlx_reduce_names[p->kind], i);
    if (!red) os[0].dims[os[0].rank++] = x->shape.dims[i];
    else if (p->keepdim) os[0].dims[os[0].rank++] = 1;
  }
  switch (p->kind) {
    case RLX_REDUCE_SUM: case RLX_REDUCE_PROD: case RLX_REDUCE_NANSUM:
      od[0] = rlx_dtype_is_float(x->dtype) ? x->dtype : RLX_DTYPE_I64;
      break;
    case RLX_REDUCE_ANY: case RLX_REDUCE_ALL: od[0] = RLX_DTYPE_BOOL; break;
    case RLX_REDUCE_HASH_XOR:
      if (rlx_dtype_is_wide_unsigned(x->dtype)) /* torch: "xor_sum_cpu" not implemented for 'UInt32' */
        return rlx_errorf(RLX_ERR_UNSUPPORTED, "hash_xor of %s: torch defines it for float, signed integer, u8 "
                          "and bool inputs", rlx_dtype_name(x->dtype));
      od[0] = RLX_DTYPE_U64;
      break;
    default: od[0] = x->dtype; break;
  }
  return RLX_OK;
}

/* Splits x's axes into kept and reduced; fills strides for walking each. */
typedef struct red_geom {
  rlx_shape kept, red;
  int64_t kst[RLX_MAX_RANK], rst[RLX_MAX_RANK];
} red_geom;

static void red_geom_init(const rlx_shape *xs, uint32_t axes, red_geom *r) {
  int64_t st[RLX_MAX_RANK];
  rlx_shape_strides(xs, st);
  r->kept.rank = r->red.rank = 0;
  for (int i = 0; i < xs->rank; i++) {
    if ((axes >> i) & 1) {
      r->rst[r->red.rank] = st[i];
      r->red.dims[r->red.rank++] = xs->dims[i];
    } else {
      r->kst[r->kept.rank] = st[i];
      r->kept.dims[r->kept.rank++] = xs->dims[i];
    }
  }
}

static rlx_status reduce_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                             void *scratch) {
  (void)scratch;
  const rlx_reduce_params *p = &n->p.reduce;
  rlx_shape xs = rlx_view_shape(&in[0]);
  red_geom r;
  red_geom_init(&xs, p->axes, &r);
  int64_t nk = rlx_shape_numel(&r.kept), nr = rlx_shape_numel(&r.red);
  rlx_dtype t = in[0].dtype;
  bool fl = rlx_dtype_is_float(t);
  for (int64_t o = 0; o < nk; o++) {
    int64_t base = rlx_strided_offset(&r.kept, r.kst, o);
    double acc = 0, m = 0;
    int64_t iacc = 0;
    switch (p->kind) {
      case RLX_REDUCE_PROD: acc = 1, iacc = 1; break;
      case RLX_REDUCE_ALL: iacc = 1; break;
      case RLX_REDUCE_MAX: acc = -INFINITY, iacc = INT64_MIN; break;
      case RLX_REDUCE_MIN: acc = INFINITY, iacc = INT64_MAX; break;
      case RLX_REDUCE_LOGSUMEXP: m = -INFINITY; break;
      default: break;
    }
    if (p->kind == RLX_REDUCE_VAR || p->kind == RLX_REDUCE_STD || p->kind == RLX_REDUCE_LOGSUMEXP) {
      for (int64_t i = 0; i < nr; i++) { /* first pass: mean, or max for logsumexp */
        double v = rlx_load_f64(in[0].data, t, base + rlx_strided_offset(&r.red, r.rst, i));
        if (p->kind == RLX_REDUCE_LOGSUMEXP) m = (v > m || v != v) ? v : m;
        else m += v;
      }
      if (p->kind != RLX_REDUCE_LOGSUMEXP) m /= (double)nr;
      if (p->kind == RLX_REDUCE_LOGSUMEXP && isinf(m)) m = 0; /* all -inf (or +inf): no shift */
    }
    for (int64_t i = 0; i < nr; i++) {
      int64_t off = base + rlx_strided_offset(&r.red, r.rst, i);
      if (p->kind == RLX_REDUCE_HASH_XOR) {
        uint64_t bits;
        if (fl) {
          double v = rlx_load_f64(in[0].data, t, off);
          memcpy(&bits, &v, sizeof bits);
        } else {
          bits = (uint64_t)rlx_load_i64(in[0].data, t, off);
        }
        iacc = (int64_t)((uint64_t)iacc ^ bits);
      } else if (fl) {
        double v = rlx_load_f64(in[0].data, t, off);
        switch (p->kind) {
          case RLX_REDUCE_SUM: case RLX_REDUCE_MEAN: acc += v; break;
          case RLX_REDUCE_NANSUM: if (v == v) acc += v; break;
          case RLX_REDUCE_PROD: acc *= v; break;
          case RLX_REDUCE_MAX: if (v > acc || v != v) acc = (acc != acc) ? acc : v; break;
          case RLX_REDUCE_MIN: if (v < acc || v != v) acc = (acc != acc) ? acc : v; break;
          case RLX_REDUCE_ANY: iacc |= v != 0; break;
          case RLX_REDUCE_ALL: iacc &= v != 0; break;
          case RLX_REDUCE_VAR: case RLX_REDUCE_STD: acc += (v - m) * (v - m); break;
          case RLX_REDUCE_NORM2: acc += v * v; break;
          case RLX_REDUCE_LOGSUMEXP: acc += exp(v - m); break;
          default: break;
        }
      } else {
        int64_t v = rlx_load_i64(in[0].data, t, off);
        switch (p->kind) {
          case RLX_REDUCE_SUM: case RLX_REDUCE_NANSUM: iacc = (int64_t)((uint64_t)iacc + (uint64_t)v); break;
          case RLX_REDUCE_PROD: iacc = (int64_t)((uint64_t)iacc * (uint64_t)v); break;
          case RLX_REDUCE_MAX: iacc = v > iacc ? v : iacc; break;
          case RLX_REDUCE_MIN: iacc = v < iacc ? v : iacc; break;
          case RLX_REDUCE_ANY: iacc |= v != 0; break;
          case RLX_REDUCE_ALL: iacc &= v != 0; break;
          default: break;
        }
      }
    }
    if (fl && p->kind != RLX_REDUCE_ANY && p->kind != RLX_REDUCE_ALL && p->kind != RLX_REDUCE_HASH_XOR) {
      if (p->kind == RLX_REDUCE_MEAN) acc /= (double)nr;
      if (p->kind == RLX_REDUCE_VAR || p->kind == RLX_REDUCE_STD) {
        double dof = (double)nr - p->correction;
        acc = acc / (dof > 0 ? dof : 0.0);
        if (p->kind == RLX_REDUCE_STD) acc = sqrt(acc);
      }
      if (p->kind == RLX_REDUCE_NORM2) acc = sqrt(acc);
      if (p->kind == RLX_REDUCE_LOGSUMEXP) acc = log(acc) + m;
      rlx_store_f64(out[0].data, out[0].dtype, o, acc);
    } else {
      rlx_store_i64(out[0].data, out[0].dtype, o, iacc);
    }
  }
  return RLX_OK;
}

static void reduce_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_reduce_params *p = &n->p.reduce;
  rlx_bprintf(buf, cap, "%s axes=[", rlx_reduce_names[p->kind]);
  bool first = true;
  for (int i = 0; i < 32; i++)
    if ((p->axes >> i) & 1) {
      rlx_bprintf(buf, cap, first ? "%d" : ",%d", i);
      first = false;
    }
  rlx_bprintf(buf, cap, "]%s", p->keepdim ? " keepdim" : "");
  if (p->kind == RLX_REDUCE_VAR || p->kind == RLX_REDUCE_STD)
    rlx_bprintf(buf, cap, " correction=%g", p->correction);
}

const rlx_op_vtable rlx_op_reduce = {.infer = reduce_infer, .ref = reduce_ref, .print = reduce_print,
                                     .symbolic = true};

/* ---- argmax / argmin ---- */

static rlx_status arg_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_arg_reduce_params *p = &n->p.arg_reduce;
  const rlx_value *x = rlx_in(g, n, 0);
  if (p->axis >= x->shape.rank) RLX_INFER_FAIL("arg reduce axis %d out of range", p->axis);
  bool empty = p->axis >= 0 ? x->shape.dims[p->axis] == 0
                            : !rlx_shape_is_symbolic(&x->shape) && rlx_shape_numel(&x->shape) == 0;
  if (empty) RLX_INFER_FAIL("argmax/argmin over an empty axis"); /* symbolic: checked per binding */
  os[0].rank = 0;
  for (int i = 0; i < x->shape.rank; i++) {
    if (p->axis < 0 || i == p->axis) {
      if (p->keepdim) os[0].dims[os[0].rank++] = 1;
    } else {
      os[0].dims[os[0].rank++] = x->shape.dims[i];
    }
  }
  od[0] = RLX_DTYPE_I64;
  return RLX_OK;
}

static rlx_status arg_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                          void *scratch) {
  (void)scratch;
  const rlx_arg_reduce_params *p = &n->p.arg_reduce;
  rlx_shape xs = rlx_view_shape(&in[0]);
  red_geom r;
  red_geom_init(&xs, p->axis < 0 ? (1u << xs.rank) - 1 : 1u << p->axis, &r);
  int64_t nk = rlx_shape_numel(&r.kept), nr = rlx_shape_numel(&r.red);
  rlx_dtype t = in[0].dtype;
  for (int64_t o = 0; o < nk; o++) {
    int64_t base = rlx_strided_offset(&r.kept, r.kst, o), best = 0;
    if (!rlx_dtype_is_float(t)) { /* exact: int64 values differ beyond 2^53 */
      int64_t bv = rlx_load_i64(in[0].data, t, base);
      for (int64_t i = 1; i < nr; i++) {
        int64_t v = rlx_load_i64(in[0].data, t, base + rlx_strided_offset(&r.red, r.rst, i));
        if (p->is_max ? v > bv : v < bv) bv = v, best = i;
      }
      ((int64_t *)out[0].data)[o] = best;
      continue;
    }
    double bv = rlx_load_f64(in[0].data, t, base);
    for (int64_t i = 1; i < nr && bv == bv; i++) { /* first NaN wins, as in torch */
      double v = rlx_load_f64(in[0].data, t, base + rlx_strided_offset(&r.red, r.rst, i));
      if (v != v || (p->is_max ? v > bv : v < bv)) bv = v, best = i;
    }
    ((int64_t *)out[0].data)[o] = best;
  }
  return RLX_OK;
}

static void arg_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_arg_reduce_params *p = &n->p.arg_reduce;
  rlx_bprintf(buf, cap, "%s axis=%d%s", p->is_max ? "argmax" : "argmin", p->axis,
              p->keepdim ? " keepdim" : "");
}

const rlx_op_vtable rlx_op_arg_reduce = {.infer = arg_infer, .ref = arg_ref, .print = arg_print,
                                         .symbolic = true};
