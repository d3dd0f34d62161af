/*
 * pool.c — max/avg pooling over 1..3 spatial dims (kernel, stride, padding,
 * dilation, ceil_mode, count_include_pad, divisor_override; max pooling can
 * also return int64 indices into each input plane, as torch does), and
 * adaptive max/avg pooling.
 *
 *   x [N, C, *S] (or [C, *S]) -> y [N, C, *S']   (+ indices i64, same shape)
 *   channels_last (2-D, no indices; the layout pass's): x [N, H, W, C] -> y [N, OH, OW, C]
 *
 * Spatial dims are padded to 3 internally; leading axes are flattened into
 * "planes". Computation in double, one rounding to the output dtype (integer
 * averages truncate toward zero, as torch's integer division).
 */
#include <math.h>

#include "ops/ops_util.h"

/* torch's pooling output size (pooling_output_shape); -1 on overflow. */
static int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  bool ok = true;
  int64_t num = rlx_add64(in, rlx_mul64(2, p, &ok), &ok);
  num = rlx_add64(num, -rlx_mul64(d, k - 1, &ok) - 1, &ok);
  num = rlx_add64(num, ceil_mode ? s - 1 : 0, &ok);
  if (!ok) return -1;
  int64_t o = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (o - 1) * s >= in + p) o--;
  return o;
}

static rlx_status pool_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_pool_params *p = &n->p.pool;
  const rlx_value *x = rlx_in(g, n, 0);
  if (p->nd < 1 || p->nd > 3 || x->shape.rank < p->nd + 1)
    RLX_INFER_FAIL("pool%dd on a rank-%d input", p->nd, x->shape.rank);
  if (x->dtype == RLX_DTYPE_BOOL)
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "pooling of a bool tensor");
  if (n->n_out == 2 && p->kind != RLX_POOL_MAX) RLX_INFER_FAIL("only max pooling returns indices");
  if (p->channels_last && (p->nd != 2 || x->shape.rank != 4 || n->n_out != 1))
    RLX_INFER_FAIL("a channels-last pool is 2-D on a rank-4 input, without indices");
  os[0] = x->shape;
  int lead = p->channels_last ? 1 : x->shape.rank - p->nd;
  for (int i = 0; i < p->nd; i++) {
    int64_t k = p->kernel[i], s = p->stride[i], pd = p->pad[i], d = p->dilation[i];
    if (!rlx_param_ok(k, 1) || !rlx_param_ok(s, 1) || !rlx_param_ok(d, 1) || !rlx_param_ok(pd, 0) || pd * 2 > k)
      RLX_INFER_FAIL("pool axis %d: kernel %lld stride %lld pad %lld dilation %lld (pad must be "
                     "at most half the kernel; each at most 2^31)", i, (long long)k, (long long)s, (long long)pd,
                     (long long)d);
    int64_t in = x->shape.dims[lead + i];
    if (rlx_dim_is_sym(in)) { /* the same formula on dims; bounds checked per binding */
      rlx_symtab *t = rlx_graph_syms(g);
      rlx_dim o, cap;
      rlx_status st = rlx_dim_add(t, in, 2 * pd - d * (k - 1) - 1 + (p->ceil_mode ? s - 1 : 0), &o);
      if (!st) st = rlx_dim_floordiv(t, o, s, &o);
      if (!st) st = rlx_dim_add(t, o, 1, &o);
      if (!st && p->ceil_mode) { /* the last window must start inside the input or the left padding */
        st = rlx_dim_add(t, in, pd + s - 1, &cap);
        if (!st) st = rlx_dim_floordiv(t, cap, s, &cap);
        if (!st) st = rlx_dim_min(t, o, cap, &o);
      }
      if (st) return st;
      os[0].dims[lead + i] = o;
      continue;
    }
    int64_t o = pool_out(in, k, s, pd, d, p->ceil_mode);
    if (o < 1) RLX_INFER_FAIL("pool axis %d: output size %lld < 1", i, (long long)o);
    os[0].dims[lead + i] = o;
  }
  od[0] = x->dtype;
  if (n->n_out == 2) {
    os[1] = os[0];
    od[1] = RLX_DTYPE_I64;
  }
  return RLX_OK;
}

typedef struct pool_geom {
  int64_t planes, in[3], out[3], k[3], s[3], p[3], d[3];
} pool_geom;

static void geom3(int nd, const rlx_shape *x, const rlx_shape *y, pool_geom *g) {
  int lead = x->rank - nd, off = 3 - nd;
  g->planes = rlx_dims_prod(x->dims, 0, lead);
  for (int i = 0; i < 3; i++) {
    int j = i - off;
    g->in[i] = j >= 0 ? x->dims[lead + j] : 1;
    g->out[i] = j >= 0 ? y->dims[lead + j] : 1;
    g->k[i] = 1, g->s[i] = 1, g->p[i] = 0, g->d[i] = 1;
  }
}

static rlx_status pool_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                           void *scratch) {
  (void)scratch;
  const rlx_pool_params *p = &n->p.pool;
  rlx_shape xs = rlx_view_shape(&in[0]), ys = rlx_view_shape(&out[0]);
  int64_t C = 1; /* channels_last: plane pl is (pl / C, channel pl % C), element ii of it at (.. + ii) * C */
  if (p->channels_last) {
    static const int TO_NCHW[4] = {0, 3, 1, 2};
    rlx_shape a = xs, b = ys;
    for (int i = 0; i < 4; i++) xs.dims[i] = a.dims[TO_NCHW[i]], ys.dims[i] = b.dims[TO_NCHW[i]];
    C = xs.dims[1];
  }
  pool_geom g;
  geom3(p->nd, &xs, &ys, &g);
  for (int i = 0; i < p->nd; i++) {
    int j = 3 - p->nd + i;
    g.k[j] = p->kernel[i], g.s[j] = p->stride[i], g.p[j] = p->pad[i], g.d[j] = p->dilation[i];
  }
  int64_t isz = g.in[0] * g.in[1] * g.in[2], osz = g.out[0] * g.out[1] * g.out[2];
  rlx_dtype t = in[0].dtype;
  int64_t *idx_out = n->n_out == 2 ? out[1].data : NULL;
  for (int64_t pl = 0; pl < g.planes; pl++)
    for (int64_t o = 0; o < osz; o++) {
      int64_t oc[3] = {o / (g.out[1] * g.out[2]), (o / g.out[2]) % g.out[1], o % g.out[2]};
      int64_t lo[3], hi[3];
      for (int a = 0; a < 3; a++) lo[a] = oc[a] * g.s[a] - g.p[a];
      double acc = p->kind == RLX_POOL_MAX ? -INFINITY : 0.0;
      int64_t best = -1, count = 0, padded = 1;
      if (p->kind == RLX_POOL_AVG) /* window clipped to the padded input */
        for (int a = 0; a < 3; a++) {
          hi[a] = RLX_MIN(lo[a] + g.k[a], g.in[a] + g.p[a]);
          padded *= hi[a] - lo[a];
        }
      for (int64_t kd = 0; kd < g.k[0]; kd++)
        for (int64_t kh = 0; kh < g.k[1]; kh++)
          for (int64_t kw = 0; kw < g.k[2]; kw++) {
            int64_t z = lo[0] + kd * g.d[0], h = lo[1] + kh * g.d[1], w = lo[2] + kw * g.d[2];
            if (z < 0 || z >= g.in[0] || h < 0 || h >= g.in[1] || w < 0 || w >= g.in[2]) continue;
            int64_t ii = (z * g.in[1] + h) * g.in[2] + w;
            double v = rlx_load_f64(in[0].data, t, C > 1 ? (pl / C * isz + ii) * C + pl % C : pl * isz + ii);
            if (p->kind == RLX_POOL_MAX) {
              if (v > acc || v != v || best < 0) { /* NaN wins, as in torch */
                if (!(acc != acc)) acc = v, best = ii;
              }
            } else {
              acc += v;
              count++;
            }
          }
      if (p->kind == RLX_POOL_AVG) {
        int64_t div = p->divisor_override ? p->divisor_override
                                          : (p->count_include_pad ? padded : count);
        acc = div ? acc / (double)div : NAN;
      }
      rlx_store_f64(out[0].data, out[0].dtype, C > 1 ? (pl / C * osz + o) * C + pl % C : pl * osz + o, acc);
      if (idx_out) idx_out[pl * osz + o] = best;
    }
  return RLX_OK;
}

static void pool_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_pool_params *p = &n->p.pool;
  rlx_bprintf(buf, cap, "%s%dd", p->kind == RLX_POOL_MAX ? "max" : "avg", p->nd);
  rlx_bprint_ints(buf, cap, "kernel", p->kernel, p->nd);
  rlx_bprint_ints(buf, cap, "stride", p->stride, p->nd);
  rlx_bprint_ints(buf, cap, "pad", p->pad, p->nd);
  if (p->kind == RLX_POOL_MAX) rlx_bprint_ints(buf, cap, "dilation", p->dilation, p->nd);
  if (p->ceil_mode) rlx_bprintf(buf, cap, " ceil_mode");
  if (p->kind == RLX_POOL_AVG && !p->count_include_pad) rlx_bprintf(buf, cap, " exclude_pad");
  if (p->divisor_override) rlx_bprintf(buf, cap, " divisor=%lld", (long long)p->divisor_override);
  if (p->channels_last) rlx_bprintf(buf, cap, " channels_last");
}

const rlx_op_vtable rlx_op_pool = {.infer = pool_infer, .ref = pool_ref, .print = pool_print, .symbolic = true};

/* ---- adaptive pooling ---- */

static rlx_status apool_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_adaptive_pool_params *p = &n->p.adaptive_pool;
  const rlx_value *x = rlx_in(g, n, 0);
  if (p->nd < 1 || p->nd > 3 || x->shape.rank < p->nd + 1)
    RLX_INFER_FAIL("adaptive pool%dd on a rank-%d input", p->nd, x->shape.rank);
  if (!rlx_dtype_is_float(x->dtype))
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "adaptive pool needs a float input");
  os[0] = x->shape;
  int lead = x->shape.rank - p->nd;
  for (int i = 0; i < p->nd; i++) {
    if (p->out[i] < 1) RLX_INFER_FAIL("adaptive pool output size %lld", (long long)p->out[i]);
    os[0].dims[lead + i] = p->out[i];
  }
  od[0] = x->dtype;
  if (n->n_out == 2) {
    if (p->kind != RLX_POOL_MAX) RLX_INFER_FAIL("only adaptive max pooling returns indices");
    os[1] = os[0];
    od[1] = RLX_DTYPE_I64;
  }
  return RLX_OK;
}

static rlx_status apool_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out,
                            void *scratch) {
  (void)scratch;
  const rlx_adaptive_pool_params *p = &n->p.adaptive_pool;
  rlx_shape xs = rlx_view_shape(&in[0]), ys = rlx_view_shape(&out[0]);
  pool_geom g;
  geom3(p->nd, &xs, &ys, &g);
  int64_t isz = g.in[0] * g.in[1] * g.in[2], osz = g.out[0] * g.out[1] * g.out[2];
  int64_t *idx_out = n->n_out == 2 ? out[1].data : NULL;
  for (int64_t pl = 0; pl < g.planes; pl++)
    for (int64_t o = 0; o < osz; o++) {
      int64_t oc[3] = {o / (g.out[1] * g.out[2]), (o / g.out[2]) % g.out[1], o % g.out[2]};
      int64_t lo[3], hi[3];
      for (int a = 0; a < 3; a++) { /* start = floor(o*in/out), end = ceil((o+1)*in/out) */
        lo[a] = oc[a] * g.in[a] / g.out[a];
        hi[a] = ((oc[a] + 1) * g.in[a] + g.out[a] - 1) / g.out[a];
      }
      double acc = p->kind == RLX_POOL_MAX ? -INFINITY : 0.0;
      int64_t best = -1;
      for (int64_t z = lo[0]; z < hi[0]; z++)
        for (int64_t h = lo[1]; h < hi[1]; h++)
          for (int64_t w = lo[2]; w < hi[2]; w++) {
            int64_t ii = (z * g.in[1] + h) * g.in[2] + w;
            double v = rlx_load_f64(in[0].data, in[0].dtype, pl * isz + ii);
            if (p->kind == RLX_POOL_AVG) acc += v;
            else if ((v > acc || v != v || best < 0) && !(acc != acc)) acc = v, best = ii;
          }
      if (p->kind == RLX_POOL_AVG) acc /= (double)((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
      rlx_store_f64(out[0].data, out[0].dtype, pl * osz + o, acc);
      if (idx_out) idx_out[pl * osz + o] = best;
    }
  return RLX_OK;
}

static void apool_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_adaptive_pool_params *p = &n->p.adaptive_pool;
  rlx_bprintf(buf, cap, "%s%dd", p->kind == RLX_POOL_MAX ? "max" : "avg", p->nd);
  rlx_bprint_ints(buf, cap, "out", p->out, p->nd);
}

const rlx_op_vtable rlx_op_adaptive_pool = {
    .infer = apool_infer, .ref = apool_ref, .print = apool_print, .symbolic = true};
