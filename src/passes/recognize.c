/*
 * recognize.c — puts back the activations torch.export decomposed, so the
 * fusion passes see one unary node (docs/design.md, "Passes and fusion"):
 *
 *   hardswish(x)   = x * clamp(x + 3, 0, 6) / 6
 *   hardsigmoid(x) = clamp(x + 3, 0, 6) / 6
 *   gelu_tanh(x)   = x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
 *                    (GPT-2's gelu_new; the products and sums either way round)
 *
 * with the clamp as one clamp(0, 6), a clamp_min(0) / clamp_max(6) pair in
 * either order, or hardtanh(0, 6); the additions and products either way
 * round, the division by 6 a division (x / 6, not x * (1/6), which rounds
 * otherwise). The unary kernels compute exactly these float operations in
 * this order (ops/unary.c, cpu/eltwise.c), so the rewrite changes no bit.
 * Intermediates must feed only the pattern and not be graph outputs; the
 * last node becomes the unary and records the others as fused (for the
 * localizer), which dce then removes.
 *
 * Grouped-query attention: transformers' repeat_kv copies each key/value
 * head G times before attention (unsqueeze, expand, reshape: [B, Hk, S, D]
 * -> [B, Hk*G, S, D]); attention reads query head h from key/value head
 * h / G itself (ops/attention.c), so its inputs become the heads before the
 * copy, which then nobody reads. A decode step no longer copies the whole
 * filled cache of every layer. A constant bool mask that is exactly the
 * causal triangle (GPT-2's buffer) becomes the causal flag.
 */
#include <math.h>

#include "passes/passes.h"

typedef struct rec_ctx {
  rlx_graph *g;
  int32_t *uses;
} rec_ctx;

/* The node producing v when v is used once (not a graph output), else NULL. */
static const rlx_node *single_use_producer(const rec_ctx *c, int32_t v) {
  const rlx_value *val = &c->g->values[v];
  if (val->kind != RLX_VALUE_NODE || c->uses[v] != 1) return NULL;
  for (int32_t i = 0; i < c->g->n_outputs; i++)
    if (c->g->outputs[i] == v) return NULL;
  return &c->g->nodes[val->producer];
}

/* Whether v is a constant holding one element within float rounding of `want`. */
static bool scalar_near(const rlx_graph *g, int32_t v, int32_t of, double want) {
  const rlx_value *val = &g->values[v];
  if ((val->kind != RLX_VALUE_CONST && val->kind != RLX_VALUE_WEIGHT) || !val->data ||
      val->shape.rank > g->values[of].shape.rank || rlx_shape_numel(&val->shape) != 1)
    return false;
  double x = val->dtype == RLX_DTYPE_F32 ? *(const float *)val->data
             : val->dtype == RLX_DTYPE_F64 ? *(const double *)val->data : NAN;
  return fabs(x - want) <= 1e-7 * fabs(want);
}

/* Whether v is a constant holding one element equal to `want` (rank 0, or
 * all dims 1 and no higher rank than `of`, so broadcasting changes nothing). */
static bool scalar_is(const rlx_graph *g, int32_t v, int32_t of, double want) {
  const rlx_value *val = &g->values[v];
  if ((val->kind != RLX_VALUE_CONST && val->kind != RLX_VALUE_WEIGHT) || !val->data ||
      val->shape.rank > g->values[of].shape.rank || rlx_shape_numel(&val->shape) != 1)
    return false;
  double x;
  if (val->dtype == RLX_DTYPE_F32) x = *(const float *)val->data;
  else if (val->dtype == RLX_DTYPE_F64) x = *(const double *)val->data;
  else return false;
  return x == want;
}

static bool is_binary(const rlx_node *n, rlx_binary_kind k) { return n && n->op == RLX_OP_BINARY && n->p.binary.kind == k; }

/* x when v = x + 3 (v used once); else -1. */
static int32_t plus_three(const rec_ctx *c, int32_t v, const rlx_node **add) {
  const rlx_node *n = single_use_producer(c, v);
  if (!is_binary(n, RLX_BINARY_ADD)) return -1;
  *add = n;
  if (scalar_is(c->g, n->in[1], n->in[0], 3)) return n->in[0];
  if (scalar_is(c->g, n->in[0], n->in[1], 3)) return n->in[1];
  return -1;
}

static bool clamp_bounds(const rlx_node *n, double *lo, double *hi) {
  if (!n || n->op != RLX_OP_UNARY) return false;
  const rlx_unary_params *p = &n->p.unary;
  if (p->kind == RLX_UNARY_CLAMP) *lo = p->a, *hi = p->b; /* NaN: no bound */
  else if (p->kind == RLX_UNARY_HARDTANH) *lo = p->a, *hi = p->b;
  else return false;
  return true;
}

/* x when v = clamp(x + 3, 0, 6) with every intermediate used once; the
 * pattern's nodes in `nodes` (up to 3), their count in *n. */
static int32_t clamp_0_6_of_plus_three(const rec_ctx *c, int32_t v, const rlx_node **nodes, int *n) {
  double lo, hi, lo2, hi2;
  const rlx_node *a = single_use_producer(c, v);
  if (!clamp_bounds(a, &lo, &hi)) return -1;
  nodes[(*n)++] = a;
  int32_t inner = a->in[0];
  if (!(lo == 0 && hi == 6)) { /* a pair of one-sided clamps */
    const rlx_node *b = single_use_producer(c, inner);
    if (!clamp_bounds(b, &lo2, &hi2)) return -1;
    nodes[(*n)++] = b;
    inner = b->in[0];
    bool ok = (lo == 0 && isnan(hi) && isnan(lo2) && hi2 == 6) || (isnan(lo) && hi == 6 && lo2 == 0 && isnan(hi2));
    if (!ok) return -1;
  }
  const rlx_node *add = NULL;
  int32_t x = plus_three(c, inner, &add);
  if (x < 0) return -1;
  nodes[(*n)++] = add;
  return x;
}

/* The operand of binary node n that is not the scalar `want` (within float rounding), or -1. */
static int32_t other_than(const rec_ctx *c, const rlx_node *n, double want) {
  if (scalar_near(c->g, n->in[1], n->in[0], want)) return n->in[0];
  if (scalar_near(c->g, n->in[0], n->in[1], want)) return n->in[1];
  return -1;
}

/* x when v = x * 0.5 (used once). */
static int32_t half_of(const rec_ctx *c, int32_t v, const rlx_node **nodes, int *n) {
  const rlx_node *m = single_use_producer(c, v);
  if (!is_binary(m, RLX_BINARY_MUL)) return -1;
  nodes[(*n)++] = m;
  return other_than(c, m, 0.5);
}

/* x when v = 1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)), x^3 as pow(x, 3)
 * or x * x * x, every intermediate used once. */
static int32_t one_plus_tanh_of_gelu(const rec_ctx *c, int32_t v, const rlx_node **nodes, int *n) {
  const rlx_node *a = single_use_producer(c, v);
  if (!is_binary(a, RLX_BINARY_ADD)) return -1;
  nodes[(*n)++] = a;
  int32_t t = other_than(c, a, 1.0);
  const rlx_node *th = t >= 0 ? single_use_producer(c, t) : NULL;
  if (!th || th->op != RLX_OP_UNARY || th->p.unary.kind != RLX_UNARY_TANH) return -1;
  nodes[(*n)++] = th;
  const rlx_node *s = single_use_producer(c, th->in[0]);
  if (!is_binary(s, RLX_BINARY_MUL)) return -1;
  nodes[(*n)++] = s;
  int32_t u = other_than(c, s, 0.7978845608028654);
  const rlx_node *ad = u >= 0 ? single_use_producer(c, u) : NULL;
  if (!is_binary(ad, RLX_BINARY_ADD)) return -1;
  nodes[(*n)++] = ad;
  for (int side = 0; side < 2; side++) { /* x + 0.044715 * x^3, either order */
    int32_t x = ad->in[side];
    const rlx_node *m = single_use_producer(c, ad->in[1 - side]);
    if (!is_binary(m, RLX_BINARY_MUL)) continue;
    int32_t cube = other_than(c, m, 0.044715);
    const rlx_node *p = cube >= 0 ? single_use_producer(c, cube) : NULL;
    if (!p) continue;
    bool is_cube = p->op == RLX_OP_UNARY && p->p.unary.kind == RLX_UNARY_POW_SCALAR && p->p.unary.a == 3 &&
                   p->in[0] == x;
    if (!is_cube) continue;
    nodes[(*n)++] = m;
    nodes[(*n)++] = p;
    return x;
  }
  return -1;
}

static rlx_status rewrite(rec_ctx *c, int32_t at, int32_t x, rlx_unary_kind kind, const rlx_node **nodes, int n) {
  for (int k = 0; k < n; k++) {
    rlx_status st = rlx_node_absorb(c->g, at, (int32_t)(nodes[k] - c->g->nodes));
    if (st) return st;
  }
  rlx_node *d = &c->g->nodes[at];
  d->op = RLX_OP_UNARY;
  d->n_in = 1;
  d->in[0] = x;
  d->p = (rlx_params){.unary = {.kind = kind}};
  c->uses[x]++; /* the dead nodes still count their reads until dce: harmless, matching stops at them */
  return RLX_OK;
}

/* gelu_tanh: (x * 0.5) * (1 + tanh(...)), the factors either way. */
static rlx_status try_gelu_tanh(rec_ctx *c, int32_t i) {
  const rlx_node *d = &c->g->nodes[i];
  const rlx_value *y = &c->g->values[d->out[0]];
  if (!is_binary(d, RLX_BINARY_MUL) || (y->dtype != RLX_DTYPE_F32 && y->dtype != RLX_DTYPE_F64)) return RLX_OK;
  for (int side = 0; side < 2; side++) {
    const rlx_node *nodes[12];
    int n = 0;
    int32_t x = half_of(c, d->in[side], nodes, &n);
    if (x < 0 || one_plus_tanh_of_gelu(c, d->in[1 - side], nodes, &n) != x) continue;
    if (!rlx_shape_eq(&c->g->values[x].shape, &y->shape) || c->g->values[x].dtype != y->dtype) continue;
    return rewrite(c, i, x, RLX_UNARY_GELU_TANH, nodes, n);
  }
  return RLX_OK;
}

static rlx_status try_node(rec_ctx *c, int32_t i) {
  const rlx_node *d = &c->g->nodes[i];
  if (is_binary(d, RLX_BINARY_MUL)) return try_gelu_tanh(c, i);
  if (!is_binary(d, RLX_BINARY_DIV) || !scalar_is(c->g, d->in[1], d->in[0], 6)) return RLX_OK;
  const rlx_value *y = &c->g->values[d->out[0]];
  if (y->dtype != RLX_DTYPE_F32 && y->dtype != RLX_DTYPE_F64) return RLX_OK;
  const rlx_node *nodes[5];
  int n = 0;
  /* hardsigmoid: the division of the clamp itself */
  int32_t x = clamp_0_6_of_plus_three(c, d->in[0], nodes, &n);
  if (x >= 0 && rlx_shape_eq(&c->g->values[x].shape, &y->shape) && c->g->values[x].dtype == y->dtype)
    return rewrite(c, i, x, RLX_UNARY_HARDSIGMOID, nodes, n);
  /* hardswish: the division of x * clamp(x + 3, 0, 6) */
  n = 0;
  const rlx_node *m = single_use_producer(c, d->in[0]);
  if (!is_binary(m, RLX_BINARY_MUL)) return RLX_OK;
  nodes[n++] = m;
  for (int side = 0; side < 2; side++) {
    int k = n;
    x = clamp_0_6_of_plus_three(c, m->in[1 - side], nodes, &k);
    if (x >= 0 && x == m->in[side] && rlx_shape_eq(&c->g->values[x].shape, &y->shape) &&
        c->g->values[x].dtype == y->dtype)
      return rewrite(c, i, x, RLX_UNARY_HARDSWISH, nodes, k);
  }
  return RLX_OK;
}

/* x when v = reshape(expand(reshape(x))) is repeat_kv(x, G): x [B, Hk, S, D],
 * [B, Hk, 1, S, D], [B, Hk, G, S, D], v [B, Hk*G, S, D]; else -1. */
static int32_t repeat_kv_source(const rlx_graph *g, int32_t v) {
  const rlx_value *vv = &g->values[v];
  if (vv->kind != RLX_VALUE_NODE || vv->shape.rank != 4) return -1;
  const rlx_node *r2 = &g->nodes[vv->producer];
  if (r2->op != RLX_OP_RESHAPE) return -1;
  const rlx_value *ev = &g->values[r2->in[0]];
  if (ev->kind != RLX_VALUE_NODE || ev->shape.rank != 5) return -1;
  const rlx_node *e = &g->nodes[ev->producer];
  if (e->op != RLX_OP_EXPAND) return -1;
  const rlx_value *uv = &g->values[e->in[0]];
  if (uv->kind != RLX_VALUE_NODE || uv->shape.rank != 5) return -1;
  const rlx_node *r1 = &g->nodes[uv->producer];
  if (r1->op != RLX_OP_RESHAPE) return -1;
  int32_t x = r1->in[0];
  const rlx_dim *xd = g->values[x].shape.dims, *ud = uv->shape.dims, *ed = ev->shape.dims, *vd = vv->shape.dims;
  if (g->values[x].shape.rank != 4 || g->values[x].dtype != vv->dtype) return -1;
  int64_t hk = xd[1], grp = ed[2];
  if (rlx_dim_is_sym(hk) || rlx_dim_is_sym(grp) || rlx_dim_is_sym(vd[1]) || hk < 1 || grp < 1 || vd[1] != hk * grp)
    return -1;
  bool same = ud[0] == xd[0] && ud[1] == hk && ud[2] == 1 && ud[3] == xd[2] && ud[4] == xd[3] && ed[0] == xd[0] &&
              ed[1] == hk && ed[3] == xd[2] && ed[4] == xd[3] && vd[0] == xd[0] && vd[2] == xd[2] && vd[3] == xd[3];
  return same ? x : -1;
}

/* attention(q, repeat_kv(k), repeat_kv(v)) -> attention(q, k, v) */
static void try_attention(rlx_graph *g, int32_t i) {
  rlx_node *n = &g->nodes[i];
  int32_t k = repeat_kv_source(g, n->in[1]), v = repeat_kv_source(g, n->in[2]);
  if (k < 0 || v < 0 || g->values[k].shape.dims[1] != g->values[v].shape.dims[1]) return;
  n->in[1] = k, n->in[2] = v;
}

/* attention(q, k, v, mask) with mask a constant bool [1.., L, S] that is
 * exactly c <= i (torch's tril, GPT-2's causal buffer) -> attention(q, k, v)
 * causal: the same keys kept, and the fast kernel skips the products past
 * each block's diagonal instead of reading the mask. */
static void try_causal_mask(rlx_graph *g, int32_t i) {
  rlx_node *n = &g->nodes[i];
  if (n->n_in < 4 || n->in[3] < 0) return;
  const rlx_value *m = &g->values[n->in[3]], *q = &g->values[n->in[0]], *k = &g->values[n->in[1]];
  int r = m->shape.rank, rq = q->shape.rank;
  if ((m->kind != RLX_VALUE_CONST && m->kind != RLX_VALUE_WEIGHT) || !m->data || m->dtype != RLX_DTYPE_BOOL || r < 2 ||
      rq < 2)
    return;
  for (int d = 0; d < r - 2; d++)
    if (m->shape.dims[d] != 1) return;
  int64_t L = m->shape.dims[r - 2], S = m->shape.dims[r - 1];
  if (rlx_dim_is_sym(L) || rlx_dim_is_sym(S) || L != q->shape.dims[rq - 2] || S != k->shape.dims[rq - 2]) return;
  const uint8_t *b = m->data;
  for (int64_t row = 0; row < L; row++)
    for (int64_t c = 0; c < S; c++)
      if ((b[row * S + c] != 0) != (c <= row)) return;
  n->p.attention.causal = true;
  n->in[3] = -1;
}

rlx_status rlx_pass_recognize(rlx_graph *g) {
  rec_ctx c = {.g = g, .uses = rlx_value_uses(g)};
  if (!c.uses) return rlx_last_status();
  rlx_status st = RLX_OK;
  for (int32_t i = 0; i < g->n_nodes; i++)
    if (g->nodes[i].op == RLX_OP_ATTENTION && g->nodes[i].n_in >= 3) try_attention(g, i), try_causal_mask(g, i);
  for (int32_t i = 0; i < g->n_nodes && !st; i++) st = try_node(&c, i);
  rlx_free(c.uses);
  return st;
}
