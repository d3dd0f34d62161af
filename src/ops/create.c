/*
 * create.c — ops with no inputs: full (a filled tensor) and arange. Both are
 * folded into constants at compile time; their kernels run once.
 */
#include "ops/ops_util.h"

static rlx_status full_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_full_params *p = &n->p.full;
  if (!rlx_dtype_valid(p->dtype)) RLX_INFER_FAIL("full: invalid dtype");
  if (!rlx_graph_shape_valid(g, &p->shape))
    RLX_INFER_FAIL("full: invalid shape (rank %d, a negative dim or more than 2^48 elements)", p->shape.rank);
  if (p->sym_value && (!rlx_dim_valid(&g->syms, p->ivalue) || !rlx_dim_is_sym(p->ivalue)))
    RLX_INFER_FAIL("full: the symbolic value is not valid");
  os[0] = p->shape;
  od[0] = p->dtype;
  return RLX_OK;
}

static rlx_status full_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                           void *scratch) {
  (void)in, (void)scratch;
  const rlx_full_params *p = &n->p.full;
  int64_t N = rlx_view_numel(&out[0]);
  size_t es = rlx_dtype_size(p->dtype);
  char one[8];
  if (rlx_dtype_is_float(p->dtype)) rlx_store_f64(one, p->dtype, 0, p->value);
  else rlx_store_i64(one, p->dtype, 0, p->ivalue);
  for (int64_t i = 0; i < N; i++) memcpy((char *)out[0].data + (size_t)i * es, one, es);
  return RLX_OK;
}

static void full_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_full_params *p = &n->p.full;
  if (p->sym_value) rlx_bprintf(buf, cap, "value="), rlx_bprint_dim(buf, cap, p->ivalue);
  else if (rlx_dtype_is_float(p->dtype)) rlx_bprintf(buf, cap, "value=%g", p->value);
  else rlx_bprintf(buf, cap, "value=%lld", (long long)p->ivalue);
  rlx_bprint_ints(buf, cap, "shape", p->shape.dims, p->shape.rank);
}

static void full_concretize(rlx_params *p, const int64_t *ev) {
  for (int i = 0; i < p->full.shape.rank; i++) p->full.shape.dims[i] = rlx_dim_value(p->full.shape.dims[i], ev);
  if (p->full.sym_value) {
    p->full.ivalue = rlx_dim_value(p->full.ivalue, ev);
    p->full.value = (double)p->full.ivalue;
    p->full.sym_value = false;
  }
}

const rlx_op_vtable rlx_op_full = {.infer = full_infer, .ref = full_ref, .print = full_print, .symbolic = true,
                                   .concretize = full_concretize};

static rlx_status arange_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_arange_params *p = &n->p.arange;
  if (!rlx_dtype_valid(p->dtype) || p->dtype == RLX_DTYPE_BOOL) RLX_INFER_FAIL("arange: bad dtype");
  if (!rlx_dim_valid(&g->syms, p->length)) RLX_INFER_FAIL("arange: length out of range");
  int64_t lo, len; /* a symbolic length: its largest value */
  rlx_dim_bounds(&g->syms, p->length, &lo, &len);
  if (len < 0) RLX_INFER_FAIL("arange: negative length");
  if (len > RLX_MAX_NUMEL) RLX_INFER_FAIL("arange: more than 2^48 elements");
  bool ok = rlx_dim_valid(&g->syms, p->istart);
  int64_t slo, shi; /* a symbolic start: its bounds */
  rlx_dim_bounds(&g->syms, ok ? p->istart : 0, &slo, &shi);
  if (ok && len > 0 && (!rlx_dtype_is_float(p->dtype) || rlx_dim_is_sym(p->istart))) {
    rlx_add64(shi, rlx_mul64(len - 1, p->istep, &ok), &ok);
    rlx_add64(slo, rlx_mul64(len - 1, p->istep, &ok), &ok);
  }
  if (!ok) RLX_INFER_FAIL("arange: start + (n - 1) * step overflows");
  os[0].rank = 1;
  os[0].dims[0] = p->length;
  od[0] = p->dtype;
  return RLX_OK;
}

static rlx_status arange_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                             void *scratch) {
  (void)in, (void)scratch;
  const rlx_arange_params *p = &n->p.arange;
  for (int64_t i = 0; i < p->length; i++) {
    if (rlx_dtype_is_float(p->dtype)) rlx_store_f64(out[0].data, p->dtype, i, p->start + (double)i * p->step);
    else rlx_store_i64(out[0].data, p->dtype, i, p->istart + i * p->istep);
  }
  return RLX_OK;
}

static void arange_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_arange_params *p = &n->p.arange;
  if (rlx_dtype_is_float(p->dtype)) rlx_bprintf(buf, cap, "start=%g step=%g", p->start, p->step);
  else rlx_bprintf(buf, cap, "start="), rlx_bprint_dim(buf, cap, p->istart),
       rlx_bprintf(buf, cap, " step=%lld", (long long)p->istep);
  rlx_bprintf(buf, cap, " n=");
  rlx_bprint_dim(buf, cap, p->length);
}

/* The length, and a symbolic start (arange(past, past + seq)). */
static void arange_concretize(rlx_params *p, const int64_t *ev) {
  p->arange.length = rlx_dim_value(p->arange.length, ev);
  if (rlx_dim_is_sym(p->arange.istart)) {
    p->arange.istart = rlx_dim_value(p->arange.istart, ev);
    p->arange.start = (double)p->arange.istart;
  }
}

const rlx_op_vtable rlx_op_arange = {.infer = arange_infer, .ref = arange_ref, .print = arange_print,
                                     .symbolic = true, .concretize = arange_concretize};
