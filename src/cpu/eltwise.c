/*
 * eltwise.c — fast f32 elementwise kernels: unary ops in float math, binary
 * ops on same-shape operands or with a scalar / trailing-row operand, and the
 * fused epilogue of matmul and conv (residual add, activation). Large tensors
 * are split over the pool in chunks; small ones run on the calling thread.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "cpu/bcast.h"
#include "cpu/gemm.h"
#include "cpu/select.h"
#include "cpu/vmath.h"
#include "ops/ops_util.h"

#define CHUNK 16384 /* elements per task */

#if defined(__x86_64__) && defined(__GNUC__)
void rlx_silu_f32_avx512(const float *x, float *y, int64_t n, int sigmoid); /* vmath_avx512.c */
void rlx_gelu_f32_avx512(const float *x, float *y, int64_t n);
bool rlx_cpu_avx512_math(void) {
  /* computed on first use, by any thread: each computes the same answer, and
   * the atomic makes the benign race a defined one (ThreadSanitizer) */
  static _Atomic int has = -1;
  int h = atomic_load_explicit(&has, memory_order_relaxed);
  if (h < 0) {
    h = __builtin_cpu_supports("avx512f") && !getenv("RLX_NO_AVX512_MATH");
    atomic_store_explicit(&has, h, memory_order_relaxed);
  }
  return h;
}
static bool have_avx512(void) { return rlx_cpu_avx512_math(); }
#else
static bool have_avx512(void) { return false; }
static void rlx_silu_f32_avx512(const float *x, float *y, int64_t n, int sigmoid) { (void)x, (void)y, (void)n, (void)sigmoid; }
static void rlx_gelu_f32_avx512(const float *x, float *y, int64_t n) { (void)x, (void)y, (void)n; }
#endif

/* y[i] = f(x[i]) in float for the common kinds; false for the others. */
RLX_VEC_CLONES static bool unary_f32(const rlx_unary_params *p, const float *x, float *y, int64_t n) {
  switch (p->kind) {
    case RLX_UNARY_RELU:
      for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : (x[i] == x[i] ? 0.0f : x[i]);
      return true;
    case RLX_UNARY_SILU:
      if (have_avx512()) {
        rlx_silu_f32_avx512(x, y, n, 0);
        return true;
      }
      for (int64_t i = 0; i < n; i++) y[i] = x[i] / (1.0f + exp_f32(-x[i]));
      return true;
    case RLX_UNARY_SIGMOID:
      if (have_avx512()) {
        rlx_silu_f32_avx512(x, y, n, 1);
        return true;
      }
      for (int64_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + exp_f32(-x[i]));
      return true;
    case RLX_UNARY_GELU:
      if (have_avx512()) {
        rlx_gelu_f32_avx512(x, y, n);
        return true;
      }
      for (int64_t i = 0; i < n; i++) y[i] = gelu_f32(x[i]);
      return true;
    case RLX_UNARY_GELU_TANH:
      for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanh_f32(0.7978845608028654f * (v + 0.044715f * v * v * v)));
      }
      return true;
    case RLX_UNARY_TANH:
      for (int64_t i = 0; i < n; i++) y[i] = tanh_f32(x[i]);
      return true;
    case RLX_UNARY_ABS:
      for (int64_t i = 0; i < n; i++) y[i] = fabsf(x[i]);
      return true;
    case RLX_UNARY_SQUARE: /* the float product is the double one rounded: as the reference */
      for (int64_t i = 0; i < n; i++) y[i] = x[i] * x[i];
      return true;
    case RLX_UNARY_RECIPROCAL:
      for (int64_t i = 0; i < n; i++) y[i] = 1.0f / x[i];
      return true;
    case RLX_UNARY_POW_SCALAR: /* the exponents with exact shortcuts in the reference, rounded alike */
      if (p->a == 2) {
        for (int64_t i = 0; i < n; i++) y[i] = x[i] * x[i];
      } else if (p->a == 3) {
        for (int64_t i = 0; i < n; i++) y[i] = (float)((double)x[i] * x[i] * x[i]);
      } else if (p->a == 0.5) {
        for (int64_t i = 0; i < n; i++) y[i] = sqrtf(x[i]);
      } else if (p->a == -1) {
        for (int64_t i = 0; i < n; i++) y[i] = 1.0f / x[i];
      } else {
        return false;
      }
      return true;
    case RLX_UNARY_EXP:
      for (int64_t i = 0; i < n; i++) y[i] = expf(x[i]);
      return true;
    case RLX_UNARY_NEG:
      for (int64_t i = 0; i < n; i++) y[i] = -x[i];
      return true;
    case RLX_UNARY_RSQRT:
      for (int64_t i = 0; i < n; i++) y[i] = 1.0f / sqrtf(x[i]);
      return true;
    case RLX_UNARY_SQRT:
      for (int64_t i = 0; i < n; i++) y[i] = sqrtf(x[i]);
      return true;
    case RLX_UNARY_HARDTANH: { /* relu6 and friends; NaN propagates (both compares false) */
      float lo = (float)p->a, hi = (float)p->b; /* clamping to the float-rounded bounds: the same results */
      for (int64_t i = 0; i < n; i++) y[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i];
      return true;
    }
    case RLX_UNARY_LEAKY_RELU: {
      float a = (float)p->a; /* as torch: the slope as a float scalar, the product in float */
      for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : x[i] * a;
      return true;
    }
    case RLX_UNARY_HARDSWISH: /* as the reference up to float rounding */
      /* Times 1/6, not torch's / 6: within 1 ulp of torch's float result (not its bits), and no division
       * per vector, the slowest thing in the activation (a division-free exact quotient took as many
       * vector operations as it saved). mobilenet_v3's convs with hardswish in their epilogues: 5-7% less
       * in profile sums at one and two threads. The sgemm's post (gemm.c, act_avx512.h) computes the same
       * operations, so fused and unfused agree to the bit (docs/design.md, "Epilogues"). */
      for (int64_t i = 0; i < n; i++) { /* compares, not fminf/fmaxf (library calls): NaN gives NaN either way */
        float v = x[i] + 3.0f;
        v = v < 0.0f ? 0.0f : v;
        v = v > 6.0f ? 6.0f : v;
        y[i] = x[i] * v * (1.0f / 6.0f);
      }
      return true;
    case RLX_UNARY_CLAMP: { /* a NaN bound is absent; a NaN input propagates (both compares false) */
      float lo = p->a == p->a ? (float)p->a : -INFINITY, hi = p->b == p->b ? (float)p->b : INFINITY;
      for (int64_t i = 0; i < n; i++) { /* min, then max: with min > max every element is max, as in torch */
        float v = x[i] < lo ? lo : x[i];
        y[i] = v > hi ? hi : v;
      }
      return true;
    }
    case RLX_UNARY_HARDSIGMOID: /* torch's float operations: clamp(x + 3, 0, 6) / 6; NaN propagates */
      for (int64_t i = 0; i < n; i++) {
        float v = x[i] + 3.0f;
        v = v < 0.0f ? 0.0f : v;
        v = v > 6.0f ? 6.0f : v;
        y[i] = x[i] != x[i] ? x[i] : v / 6.0f;
      }
      return true;
    default:
      return false;
  }
}

bool rlx_cpu_unary_f32(const rlx_unary_params *p, const float *x, float *y, int64_t n) {
  return unary_f32(p, x, y, n);
}

/* The activations the sgemm's post computes, with unary_f32's float
 * operations (gemm.c post_act, gemm_avx512.c post_act). */
bool rlx_cpu_sgemm_post(const rlx_epilogue *ep, rlx_sgemm_post *post) {
  *post = (rlx_sgemm_post){.act = RLX_SGEMM_ACT_NONE};
  if (!ep->has_act) return true;
  const rlx_unary_params *p = &ep->act;
  switch (p->kind) {
    case RLX_UNARY_RELU:
      post->act = RLX_SGEMM_ACT_RELU;
      return true;
    case RLX_UNARY_HARDTANH:
      post->act = RLX_SGEMM_ACT_HARDTANH, post->lo = (float)p->a, post->hi = (float)p->b;
      return true;
    case RLX_UNARY_CLAMP:
      post->act = RLX_SGEMM_ACT_CLAMP;
      post->lo = p->a == p->a ? (float)p->a : -INFINITY, post->hi = p->b == p->b ? (float)p->b : INFINITY;
      return true;
    case RLX_UNARY_HARDSWISH:
      post->act = RLX_SGEMM_ACT_HARDSWISH;
      return true;
    default:
      return false;
  }
}

void rlx_cpu_act_f32(const rlx_unary_params *p, float *y, int64_t n) {
  if (!unary_f32(p, y, y, n))
    for (int64_t i = 0; i < n; i++) y[i] = (float)rlx_unary_apply(p, y[i], false);
}

static bool fast_unary(const rlx_unary_params *p) {
  float a = 0, b;
  return unary_f32(p, &a, &b, 0);
}

typedef struct unary_job {
  const rlx_unary_params *p;
  const float *x;
  float *y;
  int64_t n;
} unary_job;

static void unary_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const unary_job *j = ctx;
  int64_t i0 = t * CHUNK, len = RLX_MIN(CHUNK, j->n - i0);
  if (!unary_f32(j->p, j->x + i0, j->y + i0, len))
    for (int64_t i = 0; i < len; i++) j->y[i0 + i] = (float)rlx_unary_apply(j->p, j->x[i0 + i], false);
}

static void unary_par(rlx_threadpool *tp, const rlx_unary_params *p, const float *x, float *y, int64_t n) {
  unary_job j = {p, x, y, n};
  int64_t tasks = (n + CHUNK - 1) / CHUNK;
  rlx_parallel_for(tasks > 1 ? tp : NULL, tasks, unary_task, &j);
}

static rlx_status unary_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  unary_par(x->tp, &n->p.unary, in[0].data, out[0].data, rlx_view_numel(&out[0]));
  return RLX_OK;
}

/* ---- binary ---- */

typedef struct binary_job {
  rlx_binary_kind k;
  const float *a, *b;
  float *y;
  int64_t n, period; /* b repeats every `period` elements (n when same shape, 1 for a scalar) */
} binary_job;

/* y = a op s. swin's q * scale ([64, 3, 49, 32] by a scalar) had taken 1.8 ms, one element a run. */
RLX_VEC_CLONES static void binary_scalar(rlx_binary_kind k, const float *a, float s, float *y, int64_t n) {
  switch (k) {
    case RLX_BINARY_ADD: for (int64_t e = 0; e < n; e++) y[e] = a[e] + s; break;
    case RLX_BINARY_SUB: for (int64_t e = 0; e < n; e++) y[e] = a[e] - s; break;
    case RLX_BINARY_MUL: for (int64_t e = 0; e < n; e++) y[e] = a[e] * s; break;
    default: for (int64_t e = 0; e < n; e++) y[e] = a[e] / s; break;
  }
}

static void binary_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const binary_job *j = ctx;
  int64_t i0 = t * CHUNK, i1 = RLX_MIN(j->n, i0 + CHUNK);
  const float *a = j->a, *b = j->b;
  float *y = j->y;
  int64_t P = j->period;
  if (P == 1) { /* a scalar: one loop (a run a period long would be one element) */
    binary_scalar(j->k, a + i0, b[0], y + i0, i1 - i0);
    return;
  }
  for (int64_t i = i0; i < i1;) {
    int64_t bo = i % P, len = RLX_MIN(i1 - i, P - bo); /* a run where b is contiguous */
    const float *bb = b + bo;
    switch (j->k) {
      case RLX_BINARY_ADD: for (int64_t e = 0; e < len; e++) y[i + e] = a[i + e] + bb[e]; break;
      case RLX_BINARY_SUB: for (int64_t e = 0; e < len; e++) y[i + e] = a[i + e] - bb[e]; break;
      case RLX_BINARY_MUL: for (int64_t e = 0; e < len; e++) y[i + e] = a[i + e] * bb[e]; break;
      default: for (int64_t e = 0; e < len; e++) y[i + e] = a[i + e] / bb[e]; break;
    }
    i += len;
  }
}

static bool trailing(const rlx_shape *s, const rlx_shape *o);
static rlx_status bcast_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x);

/* Whether a (b broadcast as trailing rows) or b (a, when it commutes) covers
 * the whole output: binary_run's case. Decided on each run's shapes: a
 * dynamic model's binding can change it (a batch of 1 broadcasts). */
static bool rows_case(const rlx_node *n, const rlx_tensor_view *in, const rlx_tensor_view *out) {
  rlx_shape as = rlx_view_shape(&in[0]), bs = rlx_view_shape(&in[1]), ys = rlx_view_shape(&out[0]);
  rlx_binary_kind bk = n->p.binary.kind;
  return (rlx_shape_eq(&as, &ys) && trailing(&bs, &ys)) ||
         (rlx_shape_eq(&bs, &ys) && (bk == RLX_BINARY_ADD || bk == RLX_BINARY_MUL) && trailing(&as, &ys));
}

static rlx_status binary_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  if (!rows_case(n, in, out)) return bcast_run(n, in, out, x);
  int64_t na = rlx_view_numel(&in[0]), nb = rlx_view_numel(&in[1]), N = rlx_view_numel(&out[0]);
  bool swap = na != N; /* the broadcast operand is always b (add and mul commute) */
  binary_job j = {n->p.binary.kind, swap ? in[1].data : in[0].data, swap ? in[0].data : in[1].data, out[0].data,
                  N, swap ? na : nb};
  int64_t tasks = (N + CHUNK - 1) / CHUNK;
  rlx_parallel_for(tasks > 1 ? x->tp : NULL, tasks, binary_task, &j);
  return RLX_OK;
}

/* ---- binary with any broadcast: rows of the collapsed output (cpu/bcast.h) ---- */

typedef struct bcast_job {
  rlx_binary_kind k;
  rlx_bcast_plan p;
  const float *a, *b;
  float *y;
} bcast_job;

#define BCAST_ROWS 64

RLX_VEC_CLONES static void bcast_rows(void *ctx, int64_t t, int worker) {
  (void)worker;
  const bcast_job *j = ctx;
  const rlx_bcast_plan *p = &j->p;
  int64_t r0 = t * BCAST_ROWS, r1 = RLX_MIN(r0 + BCAST_ROWS, p->rows), L = p->L;
  int64_t idx[RLX_MAX_RANK + 1], oa, ob;
  rlx_bcast_seek(p, r0, idx, &oa, &ob);
  int64_t ia = p->sa[p->rank - 1], ib = p->sb[p->rank - 1]; /* 0 or 1 */
  for (int64_t r = r0; r < r1; r++) {
    const float *a = j->a + oa, *b = j->b + ob;
    float *y = j->y + r * L;
#define OPS(EXPR)                                                              \
  if (ia && ib) for (int64_t e = 0; e < L; e++) { float u = a[e], v = b[e]; y[e] = EXPR; } \
  else if (ia) { float v = b[0]; for (int64_t e = 0; e < L; e++) { float u = a[e]; y[e] = EXPR; } } \
  else if (ib) { float u = a[0]; for (int64_t e = 0; e < L; e++) { float v = b[e]; y[e] = EXPR; } } \
  else { float u = a[0], v = b[0]; for (int64_t e = 0; e < L; e++) y[e] = EXPR; }
    switch (j->k) {
      case RLX_BINARY_ADD: OPS(u + v) break;
      case RLX_BINARY_SUB: OPS(u - v) break;
      case RLX_BINARY_MUL: OPS(u * v) break;
      default: OPS(u / v) break;
    }
#undef OPS
    rlx_bcast_next(p, idx, &oa, &ob);
  }
}

static rlx_status bcast_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  rlx_shape os = rlx_view_shape(&out[0]), as = rlx_view_shape(&in[0]), bs = rlx_view_shape(&in[1]);
  bcast_job j = {.k = n->p.binary.kind, .a = in[0].data, .b = in[1].data, .y = out[0].data};
  int64_t N = rlx_view_numel(&out[0]);
  if (N == 0) return RLX_OK;
  rlx_bcast_plan_of(&as, &bs, &os, &j.p); /* cpu/bcast.h: merged axes, rows */
  int64_t tasks = (j.p.rows + BCAST_ROWS - 1) / BCAST_ROWS;
  rlx_parallel_for(N >= CHUNK ? x->tp : NULL, tasks, bcast_rows, &j);
  return RLX_OK;
}

/* Whether shape s, right-aligned in o, is o's trailing dims (a row that
 * repeats) or a scalar. */
static bool trailing(const rlx_shape *s, const rlx_shape *o) {
  int64_t ns = rlx_shape_numel(s);
  if (ns == 1) return true;
  int skip = 0; /* leading size-1 axes of s */
  while (skip < s->rank && s->dims[skip] == 1) skip++;
  int k = s->rank - skip;
  if (k > o->rank) return false;
  for (int i = 0; i < k; i++)
    if (s->dims[skip + i] != o->dims[o->rank - k + i]) return false;
  return true;
}

/* ---- the fused epilogue of matmul / conv ---- */

typedef struct ep_job {
  const rlx_epilogue *ep;
  const float *res;
  float *y;
  int64_t n;
} ep_job;

static void ep_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const ep_job *j = ctx;
  int64_t i0 = t * CHUNK, len = RLX_MIN(CHUNK, j->n - i0);
  float *y = j->y + i0;
  if (j->res)
    for (int64_t i = 0; i < len; i++) y[i] += j->res[i0 + i];
  if (j->ep->has_act && !unary_f32(&j->ep->act, y, y, len))
    for (int64_t i = 0; i < len; i++) y[i] = (float)rlx_unary_apply(&j->ep->act, y[i], false);
}

void rlx_cpu_epilogue(rlx_threadpool *tp, const rlx_epilogue *ep, const rlx_tensor_view *residual, rlx_tensor_view *out) {
  if (!ep->has_act && !residual->data) return;
  ep_job j = {ep, residual->data, out->data, rlx_view_numel(out)};
  int64_t tasks = (j.n + CHUNK - 1) / CHUNK;
  rlx_parallel_for(tasks > 1 ? tp : NULL, tasks, ep_task, &j);
}

rlx_status rlx_cpu_try_eltwise(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k) {
  (void)sym;
  (void)threads;
  const rlx_value *a = rlx_in(g, n, 0), *y = &g->values[n->out[0]];
  if (a->dtype != RLX_DTYPE_F32 || y->dtype != RLX_DTYPE_F32) return RLX_OK;
  if (n->op == RLX_OP_UNARY) {
    if (!fast_unary(&n->p.unary)) return RLX_OK;
    k->run = unary_run, k->fast = true, k->name = "f32_unary", k->scratch = 0;
    return RLX_OK;
  }
  const rlx_value *b = rlx_in(g, n, 1);
  rlx_binary_kind bk = n->p.binary.kind;
  if (b->dtype != RLX_DTYPE_F32) return RLX_OK;
  if (bk != RLX_BINARY_ADD && bk != RLX_BINARY_SUB && bk != RLX_BINARY_MUL && bk != RLX_BINARY_DIV) return RLX_OK;
  bool a_full = rlx_shape_eq(&a->shape, &y->shape), b_full = rlx_shape_eq(&b->shape, &y->shape);
  bool ok = (a_full && trailing(&b->shape, &y->shape)) ||
            (b_full && (bk == RLX_BINARY_ADD || bk == RLX_BINARY_MUL) && trailing(&a->shape, &y->shape));
  if (ok) k->run = binary_run, k->name = "f32_binary";
  else k->run = bcast_run, k->name = "f32_binary_bcast"; /* any other broadcast */
  k->fast = true, k->scratch = 0;
  return RLX_OK;
}
