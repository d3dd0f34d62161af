/*
 * fold_bn.c — folds an inference batch_norm into the convolution that feeds
 * it: with s = gamma / sqrt(var + eps), W' = W * s per output channel and
 * b' = (b - mean) * s + beta. The conv then writes what the batch_norm did
 * and the batch_norm is left for dce. Only when every operand is a constant
 * and the conv's output feeds nothing else, and only in f32/f64: rounding
 * the folded W' to f16/bf16 would add an error of its own (about doubling
 * a half-precision network's distance from float64), where the unfused pair
 * computes what torch computes. Rounding differs from the unfused f32 pair by
 * a few ulps; the localizer runs without passes.
 */
#include <math.h>

#include "passes/passes.h"

static bool constant(const rlx_graph *g, int32_t v) {
  return v < 0 || g->values[v].kind == RLX_VALUE_WEIGHT || g->values[v].kind == RLX_VALUE_CONST;
}

static rlx_status fold_one(rlx_graph *g, int32_t ci, int32_t bi) {
  rlx_node *conv = &g->nodes[ci];
  const rlx_node *bn = &g->nodes[bi];
  const rlx_value *w = &g->values[conv->in[1]];
  rlx_dtype t = w->dtype;
  int64_t O = w->shape.dims[0], per = rlx_shape_numel(&w->shape) / (O ? O : 1);
  void *nw = rlx_aligned_alloc(rlx_value_nbytes(w)), *nb = rlx_aligned_alloc((size_t)O * rlx_dtype_size(t));
  if (!nw || !nb) {
    rlx_aligned_free(nw), rlx_aligned_free(nb);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory folding batch_norm into '%s'", conv->label);
  }
  int32_t cb = conv->n_in > 2 ? conv->in[2] : -1;
  const rlx_value *mean = &g->values[bn->in[1]], *var = &g->values[bn->in[2]];
  const rlx_value *gam = bn->in[3] >= 0 ? &g->values[bn->in[3]] : NULL, *bet = bn->in[4] >= 0 ? &g->values[bn->in[4]] : NULL;
  for (int64_t o = 0; o < O; o++) {
    /* each operand in its own dtype (batch-norm statistics may be wider than the weights) */
    double s = (gam ? rlx_load_f64(gam->data, gam->dtype, o) : 1.0) /
               sqrt(rlx_load_f64(var->data, var->dtype, o) + bn->p.norm.eps);
    double b0 = cb >= 0 ? rlx_load_f64(g->values[cb].data, g->values[cb].dtype, o) : 0.0;
    for (int64_t i = 0; i < per; i++) rlx_store_f64(nw, t, o * per + i, rlx_load_f64(w->data, t, o * per + i) * s);
    rlx_store_f64(nb, t, o, (b0 - rlx_load_f64(mean->data, mean->dtype, o)) * s +
                                (bet ? rlx_load_f64(bet->data, bet->dtype, o) : 0.0));
  }
  rlx_shape bs = {.rank = 1, .dims = {O}};
  int32_t vw = rlx_graph_add_const_owned(g, t, &w->shape, nw);
  int32_t vb = vw < 0 ? (rlx_aligned_free(nb), -1) : rlx_graph_add_const_owned(g, t, &bs, nb);
  if (vw < 0 || vb < 0) return RLX_ERR_OUT_OF_MEMORY;
  rlx_status st = rlx_node_set_input(g, ci, 1, vw);
  if (!st) st = rlx_node_set_input(g, ci, 2, vb);
  if (!st) st = rlx_node_absorb(g, ci, bi);
  if (!st) rlx_replace_uses(g, g->nodes[bi].out[0], g->nodes[ci].out[0]);
  return st;
}

rlx_status rlx_pass_fold_bn(rlx_graph *g) {
  for (int32_t bi = 0; bi < g->n_nodes; bi++) {
    const rlx_node *bn = &g->nodes[bi];
    if (bn->op != RLX_OP_BATCH_NORM || bn->in[1] < 0 || bn->in[2] < 0) continue;
    bool ok = true;
    for (int32_t k = 1; k < bn->n_in; k++) ok &= constant(g, bn->in[k]);
    const rlx_value *x = &g->values[bn->in[0]];
    if (!ok || x->kind != RLX_VALUE_NODE || x->producer < 0) continue;
    int32_t ci = x->producer;
    const rlx_node *conv = &g->nodes[ci];
    rlx_dtype wt = conv->n_in > 1 && conv->in[1] >= 0 ? g->values[conv->in[1]].dtype : RLX_DTYPE_F32;
    if (conv->op != RLX_OP_CONV || (wt != RLX_DTYPE_F32 && wt != RLX_DTYPE_F64) || conv->p.conv.transposed ||
        conv->p.conv.ep.has_act ||
        (conv->n_in > 3 && conv->in[3] >= 0) || !constant(g, conv->in[1]) ||
        (conv->n_in > 2 && !constant(g, conv->in[2])) || rlx_single_consumer(g, bn->in[0], ci) != bi)
      continue;
    if (rlx_is_graph_output(g, bn->in[0])) continue;
    rlx_status st = fold_one(g, ci, bi);
    if (st) return st;
  }
  return RLX_OK;
}
