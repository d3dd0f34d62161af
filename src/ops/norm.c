/*
 * norm.c — normalizations: layer_norm and rms_norm over trailing axes,
 * group_norm over (C/G, spatial), batch_norm with running statistics
 * (inference). Statistics in double, biased variance, one rounding at the end.
 *
 *   layer_norm  x [.., *T], w [*T]?, b [*T]?       T = the n_axes trailing dims
 *   rms_norm    x [.., *T], w [*T]?
 *   group_norm  x [N, C, *], w [C]?, b [C]?
 *   batch_norm  x [N, C, *], mean [C]?, var [C]?, w [C]?, b [C]?
 *               without running statistics the batch's own are used (biased
 *               variance over N and the spatial axes: training mode, and
 *               instance_norm, which torch lowers onto it)
 */
#include <math.h>

#include "ops/ops_util.h"

static rlx_status check_param(const rlx_value *x, const rlx_value *w, const int64_t *dims, int rank,
                              const char *what) {
  if (!w) return RLX_OK;
  rlx_shape want = {.rank = rank};
  memcpy(want.dims, dims, sizeof(int64_t) * (size_t)rank);
  if (!rlx_shape_eq(&w->shape, &want) || w->dtype != x->dtype) {
    char a[96], b[96];
    RLX_INFER_FAIL("%s is %s %s, expected %s %s", what, rlx_dtype_name(w->dtype),
                   rlx_shape_str(&w->shape, a, sizeof a), rlx_dtype_name(x->dtype),
                   rlx_shape_str(&want, b, sizeof b));
  }
  return RLX_OK;
}

static rlx_status norm_common(const rlx_value *x, rlx_shape *os, rlx_dtype *od) {
  if (!rlx_dtype_is_float(x->dtype))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "normalization needs a float input, got %s",
                      rlx_dtype_name(x->dtype));
  os[0] = x->shape;
  od[0] = x->dtype;
  return RLX_OK;
}

/* The output's shape and dtype, then the fused activation (docs/design.md
 * "Passes and fusion": act(norm(x) * w + b), applied to the rounded output
 * as a separate unary node would be). */
static rlx_status norm_done(const rlx_node *n, const rlx_value *x, rlx_shape *os, rlx_dtype *od) {
  rlx_status st = norm_common(x, os, od);
  return st ? st : rlx_epilogue_infer(NULL, &n->p.norm.ep, os, *od);
}

/* ---- layer_norm / rms_norm ---- */

static rlx_status trailing_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os,
                                 rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  int k = n->p.norm.n_axes, r = x->shape.rank;
  if (k < 1 || k > r) RLX_INFER_FAIL("normalizing %d trailing axes of a rank-%d input", k, r);
  const int64_t *t = x->shape.dims + (r - k);
  if (check_param(x, rlx_in(g, n, 1), t, k, "weight")) return RLX_ERR_SHAPE;
  if (n->op == RLX_OP_LAYER_NORM && check_param(x, rlx_in(g, n, 2), t, k, "bias"))
    return RLX_ERR_SHAPE;
  return norm_done(n, x, os, od);
}

static rlx_status trailing_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                               void *scratch) {
  (void)scratch;
  bool rms = n->op == RLX_OP_RMS_NORM;
  int k = n->p.norm.n_axes, r = in[0].rank;
  int64_t D = rlx_dims_prod(in[0].dims, r - k, r), rows = rlx_dims_prod(in[0].dims, 0, r - k);
  rlx_dtype t = in[0].dtype;
  const void *w = in[1].data, *b = rms ? NULL : in[2].data;
  for (int64_t row = 0; row < rows; row++) {
    int64_t base = row * D;
    double mean = 0, var = 0;
    if (!rms) {
      for (int64_t i = 0; i < D; i++) mean += rlx_load_f64(in[0].data, t, base + i);
      mean /= (double)D;
    }
    for (int64_t i = 0; i < D; i++) {
      double d = rlx_load_f64(in[0].data, t, base + i) - mean;
      var += d * d;
    }
    double inv = 1.0 / sqrt(var / (double)D + n->p.norm.eps);
    for (int64_t i = 0; i < D; i++) {
      double y = (rlx_load_f64(in[0].data, t, base + i) - mean) * inv;
      if (w) y *= rlx_load_f64(w, t, i);
      if (b) y += rlx_load_f64(b, t, i);
      rlx_store_f64(out[0].data, t, base + i, y);
    }
  }
  rlx_epilogue_apply(&n->p.norm.ep, NULL, &out[0]);
  return RLX_OK;
}

static void trailing_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "axes=%d eps=%g", n->p.norm.n_axes, n->p.norm.eps);
  rlx_epilogue_print(&n->p.norm.ep, false, buf, cap);
}

const rlx_op_vtable rlx_op_layer_norm = {
    .infer = trailing_infer, .ref = trailing_ref, .print = trailing_print, .symbolic = true};
const rlx_op_vtable rlx_op_rms_norm = {
    .infer = trailing_infer, .ref = trailing_ref, .print = trailing_print, .symbolic = true};

/* ---- group_norm ---- */

static rlx_status group_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  int64_t G = n->p.norm.groups;
  if (x->shape.rank < 2) RLX_INFER_FAIL("group_norm needs [N, C, ...], got rank %d", x->shape.rank);
  int64_t C = x->shape.dims[1];
  if (rlx_dim_is_sym(C)) RLX_INFER_FAIL("group_norm needs a static channel count (axis 1 is symbolic)");
  if (G < 1 || C % G) RLX_INFER_FAIL("group_norm: %lld groups do not divide %lld channels",
                                     (long long)G, (long long)C);
  if (check_param(x, rlx_in(g, n, 1), &C, 1, "weight") ||
      check_param(x, rlx_in(g, n, 2), &C, 1, "bias"))
    return RLX_ERR_SHAPE;
  return norm_done(n, x, os, od);
}

static rlx_status group_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                            void *scratch) {
  (void)scratch;
  int64_t N = in[0].dims[0], C = in[0].dims[1], G = n->p.norm.groups;
  int64_t S = rlx_dims_prod(in[0].dims, 2, in[0].rank), D = C / G * S;
  rlx_dtype t = in[0].dtype;
  for (int64_t b = 0; b < N; b++)
    for (int64_t gi = 0; gi < G; gi++) {
      int64_t base = (b * C + gi * (C / G)) * S;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < D; i++) mean += rlx_load_f64(in[0].data, t, base + i);
      mean /= (double)D;
      for (int64_t i = 0; i < D; i++) {
        double d = rlx_load_f64(in[0].data, t, base + i) - mean;
        var += d * d;
      }
      double inv = 1.0 / sqrt(var / (double)D + n->p.norm.eps);
      for (int64_t i = 0; i < D; i++) {
        int64_t c = gi * (C / G) + i / S;
        double y = (rlx_load_f64(in[0].data, t, base + i) - mean) * inv;
        if (in[1].data) y *= rlx_load_f64(in[1].data, t, c);
        if (in[2].data) y += rlx_load_f64(in[2].data, t, c);
        rlx_store_f64(out[0].data, t, base + i, y);
      }
    }
  rlx_epilogue_apply(&n->p.norm.ep, NULL, &out[0]);
  return RLX_OK;
}

static void group_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "groups=%lld eps=%g", (long long)n->p.norm.groups, n->p.norm.eps);
  rlx_epilogue_print(&n->p.norm.ep, false, buf, cap);
}

const rlx_op_vtable rlx_op_group_norm = {
    .infer = group_infer, .ref = group_ref, .print = group_print, .symbolic = true};

/* ---- batch_norm (inference) ---- */

static rlx_status batch_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  if (x->shape.rank < 2) RLX_INFER_FAIL("batch_norm needs [N, C, ...], got rank %d", x->shape.rank);
  int64_t C = x->shape.dims[1];
  static const char *names[] = {"", "running_mean", "running_var", "weight", "bias"};
  for (int k = 1; k < 5; k++)
    if (check_param(x, rlx_in(g, n, k), &C, 1, names[k])) return RLX_ERR_SHAPE;
  if (!rlx_in(g, n, 1) != !rlx_in(g, n, 2)) RLX_INFER_FAIL("batch_norm needs both running statistics or neither");
  return norm_done(n, x, os, od);
}

static rlx_status batch_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                            void *scratch) {
  (void)scratch;
  int64_t N = in[0].dims[0], C = in[0].dims[1], S = rlx_dims_prod(in[0].dims, 2, in[0].rank);
  rlx_dtype t = in[0].dtype;
  for (int64_t c = 0; c < C; c++) {
    double mean = 0, var = 0;
    if (in[1].data) {
      mean = rlx_load_f64(in[1].data, t, c);
      var = rlx_load_f64(in[2].data, t, c);
    } else { /* batch statistics */
      for (int64_t bi = 0; bi < N; bi++)
        for (int64_t i = 0; i < S; i++) mean += rlx_load_f64(in[0].data, t, (bi * C + c) * S + i);
      mean /= (double)(N * S);
      for (int64_t bi = 0; bi < N; bi++)
        for (int64_t i = 0; i < S; i++) {
          double d = rlx_load_f64(in[0].data, t, (bi * C + c) * S + i) - mean;
          var += d * d;
        }
      var /= (double)(N * S);
    }
    double inv = 1.0 / sqrt(var + n->p.norm.eps);
    double w = in[3].data ? rlx_load_f64(in[3].data, t, c) : 1.0;
    double b = in[4].data ? rlx_load_f64(in[4].data, t, c) : 0.0;
    for (int64_t bi = 0; bi < N; bi++)
      for (int64_t i = 0; i < S; i++) {
        int64_t off = (bi * C + c) * S + i;
        rlx_store_f64(out[0].data, t, off, (rlx_load_f64(in[0].data, t, off) - mean) * inv * w + b);
      }
  }
  rlx_epilogue_apply(&n->p.norm.ep, NULL, &out[0]);
  return RLX_OK;
}

static void batch_print(const rlx_node *n, char *buf, size_t cap) {
  rlx_bprintf(buf, cap, "eps=%g", n->p.norm.eps);
  rlx_epilogue_print(&n->p.norm.ep, false, buf, cap);
}

const rlx_op_vtable rlx_op_batch_norm = {
    .infer = batch_infer, .ref = batch_ref, .print = batch_print, .symbolic = true};
