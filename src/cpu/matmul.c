/*
 * matmul.c — the fast f32 matmul: batched sgemm, with B packed at compile
 * time when it is a constant 2-D weight (linear layers); alpha, a row bias,
 * the residual and the activation applied to each block of the output
 * inside the sgemm (another bias shape: passes after it). Many small batches (attention's bmm) run in parallel over
 * batches with single-threaded sgemm; few large ones use the threaded sgemm.
 * Also the grouped matmul (MoE experts): one sgemm per group of rows.
 *
 *   a [*Ba, M, K], b [*Bb, K, N] (trans_b: [*Bb, N, K]), bias -> [*B, M, N]
 */
#include <string.h>

#include "cpu/gemm.h"
#include "cpu/select.h"
#include "ops/ops_util.h"

typedef struct mm_job {
  const rlx_node *n;
  const rlx_tensor_view *in;
  rlx_tensor_view *out;
  const rlx_exec *x;
  rlx_shape ob;
  int64_t sa[RLX_MAX_RANK], sb[RLX_MAX_RANK];
  int64_t M, N, K;
  bool in_gemm_ep; /* the epilogue runs inside the sgemm (a row bias or none) */
} mm_job;

/* Rows of each product: a's batches are rows of one product where b is one 2-D matrix ([197, 1, 768] x W). */
static int64_t mm_rows(const int64_t *odims, int orank, int b_rank) {
  return b_rank == 2 ? rlx_dims_prod(odims, 0, orank - 1) : odims[orank - 2];
}

/* Scratch: one single-threaded sgemm's per thread (batches in parallel) or the threaded sgemm's for M x K
 * products (one batch at a time): never both at once. */
static size_t mm_threaded_scratch(int threads, int64_t M, int64_t K) { return rlx_sgemm_scratch_for(threads, M, K); }
static size_t mm_scratch(int threads, int64_t M, int64_t K) {
  return RLX_MAX((size_t)threads * rlx_sgemm_scratch(1), mm_threaded_scratch(threads, M, K));
}

/* The epilogue run on each block of C inside the sgemm, while it is in
 * cache: alpha, a row bias (a linear layer's), the residual, the
 * activation — the float operations, in the order, of the passes it
 * replaces (epilogue() then rlx_cpu_epilogue). */
typedef struct mm_ep {
  const rlx_matmul_params *p;
  const float *bias;     /* [N], or NULL */
  const float *residual; /* laid out like C, or NULL */
  const float *c0;       /* C's base, to locate the residual */
} mm_ep;

RLX_VEC_CLONES static void mm_epilogue(const void *ctx, float *c, int64_t ldc, int64_t i0, int64_t j0, int m, int n) {
  const mm_ep *e = ctx;
  float alpha = (float)e->p->alpha, beta = (float)e->p->beta;
  (void)i0;
  for (int r = 0; r < m; r++) {
    float *row = c + r * ldc;
    if (e->bias) {
      const float *b = e->bias + j0;
      for (int k = 0; k < n; k++) row[k] = alpha * row[k] + beta * b[k];
    } else if (e->p->alpha != 1.0) {
      for (int k = 0; k < n; k++) row[k] *= alpha;
    }
    if (e->residual) {
      const float *res = e->residual + (row - e->c0);
      for (int k = 0; k < n; k++) row[k] += res[k];
    }
    if (e->p->ep.has_act) rlx_cpu_act_f32(&e->p->ep.act, row, n);
  }
}

/* Whether the bias is absent or a row of N (the epilogue's case). */
static bool row_bias(const rlx_tensor_view *bias, int64_t N) {
  if (!bias->data) return true;
  rlx_shape bs = rlx_view_shape(bias);
  return rlx_shape_numel(&bs) == N && bs.rank > 0 && bs.dims[bs.rank - 1] == N;
}

static void one_batch(const mm_job *j, int64_t bi, rlx_threadpool *tp, void *scratch, size_t scratch_bytes) {
  const rlx_matmul_params *p = &j->n->p.matmul;
  const float *A = (const float *)j->in[0].data + rlx_strided_offset(&j->ob, j->sa, bi) * j->M * j->K;
  const float *B = (const float *)j->in[1].data + rlx_strided_offset(&j->ob, j->sb, bi) * j->K * j->N;
  float *C = (float *)j->out[0].data + bi * j->M * j->N;
  rlx_sgemm_args a = {.M = j->M, .N = j->N, .K = j->K, .A = A, .lda = j->K, .B = B, .ldb = p->trans_b ? j->K : j->N,
                      .trans_b = p->trans_b, .b_packed = (const float *)j->x->packed, .C = C, .ldc = j->N,
                      .scratch_bytes = scratch_bytes};
  mm_ep e = {p, j->in[2].data, j->n->n_in > 3 && j->in[3].data ? (const float *)j->in[3].data + bi * j->M * j->N : NULL,
             C};
  /* bias, residual and a simple activation in the microkernel's registers where alpha and beta are 1 (their
   * products then exact); others after each block */
  rlx_sgemm_post post;
  bool any = j->in_gemm_ep && (e.bias || e.residual || p->alpha != 1.0 || p->ep.has_act);
  if (any && p->alpha == 1.0 && (!e.bias || p->beta == 1.0) && rlx_cpu_sgemm_post(&p->ep, &post)) {
    post.col_bias = e.bias, post.res = e.residual, post.ldr = j->N;
    a.post = &post;
  } else if (any) {
    a.epilogue = mm_epilogue, a.epilogue_ctx = &e;
  }
  rlx_sgemm_ex(tp, &a, scratch);
}

static void batch_task(void *ctx, int64_t bi, int worker) {
  const mm_job *j = ctx;
  char *s = (char *)j->x->scratch + (size_t)worker * rlx_sgemm_scratch(1);
  one_batch(j, bi, NULL, s, rlx_sgemm_scratch(1));
}

/* out = alpha * out + beta * bias (broadcast), in place. */
static void epilogue(const rlx_matmul_params *p, const rlx_tensor_view *bias, rlx_tensor_view *out) {
  int64_t total = rlx_view_numel(out), N = out->dims[out->rank - 1];
  float *y = out->data, alpha = (float)p->alpha, beta = (float)p->beta;
  if (!bias->data) {
    for (int64_t i = 0; i < total; i++) y[i] *= alpha;
    return;
  }
  rlx_shape os = rlx_view_shape(out), bs = rlx_view_shape(bias);
  if (rlx_shape_numel(&bs) == N && bs.rank > 0 && bs.dims[bs.rank - 1] == N) { /* a row vector: linear's bias */
    const float *b = bias->data;
    for (int64_t i = 0; i < total; i += N)
      for (int64_t c = 0; c < N; c++) y[i + c] = alpha * y[i + c] + beta * b[c];
    return;
  }
  int64_t st[RLX_MAX_RANK];
  rlx_broadcast_strides(&bs, &os, st);
  const float *b = bias->data;
  for (int64_t i = 0; i < total; i++) y[i] = alpha * y[i] + beta * b[rlx_strided_offset(&os, st, i)];
}

static rlx_status mm_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  mm_job j = {.n = n, .in = in, .out = out, .x = x};
  int r = out[0].rank;
  j.M = mm_rows(out[0].dims, r, in[1].rank), j.N = out[0].dims[r - 1], j.K = in[0].dims[in[0].rank - 1];
  j.ob = rlx_view_shape(&out[0]);
  j.ob.rank = in[1].rank == 2 ? 0 : j.ob.rank - 2; /* one B for every batch: one product */
  rlx_shape ab = rlx_view_shape(&in[0]), bb = rlx_view_shape(&in[1]);
  ab.rank -= 2, bb.rank -= 2;
  rlx_broadcast_strides(&ab, &j.ob, j.sa);
  rlx_broadcast_strides(&bb, &j.ob, j.sb);
  int64_t nbatch = rlx_shape_numel(&j.ob);
  j.in_gemm_ep = row_bias(&in[2], j.N);
  int threads = rlx_threadpool_size(x->tp);
  if (nbatch >= threads && nbatch > 1 && j.M * j.N * j.K < (int64_t)1 << 24)
    rlx_parallel_for(x->tp, nbatch, batch_task, &j);
  else
    for (int64_t bi = 0; bi < nbatch; bi++) one_batch(&j, bi, x->tp, x->scratch, mm_threaded_scratch(threads, j.M, j.K));
  if (j.in_gemm_ep) return RLX_OK;
  if (n->p.matmul.alpha != 1.0 || in[2].data) epilogue(&n->p.matmul, &in[2], &out[0]);
  rlx_cpu_epilogue(x->tp, &n->p.matmul.ep, &in[3], &out[0]);
  return RLX_OK;
}

static size_t mm_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  const rlx_shape *a = &rlx_in(g, n, 0)->shape, *o = &g->values[n->out[0]].shape;
  return mm_scratch(threads > 0 ? threads : 1, mm_rows(o->dims, o->rank, rlx_in(g, n, 1)->shape.rank),
                    a->dims[a->rank - 1]);
}

rlx_status rlx_cpu_try_matmul(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k) {
  (void)sym;
  const rlx_value *a = rlx_in(g, n, 0), *b = rlx_in(g, n, 1);
  if (a->dtype != RLX_DTYPE_F32 || b->dtype != RLX_DTYPE_F32) return RLX_OK;
  k->run = mm_run, k->fast = true, k->name = "f32_matmul_sgemm";
  k->scratch_for = mm_scratch_for;
  k->scratch = mm_scratch_for(g, n, threads);
  bool constant_b = (b->kind == RLX_VALUE_WEIGHT || b->kind == RLX_VALUE_CONST) && b->shape.rank == 2;
  if (constant_b) { /* weights packed once, here */
    int64_t K = a->shape.dims[a->shape.rank - 1];
    int64_t N = b->shape.dims[n->p.matmul.trans_b ? 0 : 1];
    size_t bytes = rlx_sgemm_packed_size(N, K);
    if (!(k->packed = rlx_aligned_alloc(bytes)))
      return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory packing the weights of node '%s'", n->label);
    rlx_sgemm_pack_b(N, K, b->data, n->p.matmul.trans_b ? K : N, n->p.matmul.trans_b, k->packed);
    k->name = "f32_matmul_sgemm_packed_b";
  }
  return RLX_OK;
}

/* ---- grouped matmul: one sgemm per group of rows ----
 *
 *   x [S, K], w [E, K, N], offs [E] -> [S, N]
 *
 * The offsets are checked first, as the reference kernel does; each group's
 * rows run through the threaded sgemm; rows past the last offset are zeroed.
 * A constant w (MoE expert weights) is packed per group at compile time. */

static size_t packed_group_bytes(int64_t N, int64_t K) { return (rlx_sgemm_packed_size(N, K) + 63) & ~(size_t)63; }

static rlx_status gmm_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  (void)n;
  const rlx_tensor_view *offs = &in[2];
  int64_t S = in[0].dims[0], K = in[0].dims[1], E = in[1].dims[0], N = in[1].dims[2];
  rlx_status st = rlx_grouped_offsets_check(offs, S);
  if (st) return st;
  const float *X = in[0].data, *W = in[1].data;
  float *Y = out[0].data;
  size_t pg = packed_group_bytes(N, K);
  int64_t start = 0;
  for (int64_t e = 0; e < E; e++) {
    int64_t end = rlx_load_i64(offs->data, offs->dtype, e);
    const float *bp = x->packed ? (const float *)((const char *)x->packed + (size_t)e * pg) : NULL;
    rlx_sgemm_packed(x->tp, end - start, N, K, X + start * K, K, NULL, W + e * K * N, N, false, bp, Y + start * N, N,
                     x->scratch);
    start = end;
  }
  memset(Y + start * N, 0, sizeof(float) * (size_t)((S - start) * N));
  return RLX_OK;
}

rlx_status rlx_cpu_try_grouped_matmul(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k) {
  (void)sym;
  const rlx_value *x = rlx_in(g, n, 0), *w = rlx_in(g, n, 1);
  if (x->dtype != RLX_DTYPE_F32) return RLX_OK;
  k->run = gmm_run, k->fast = true, k->name = "f32_grouped_matmul_sgemm";
  k->scratch = rlx_sgemm_scratch(threads);
  int64_t E = w->shape.dims[0], K = w->shape.dims[1], N = w->shape.dims[2];
  size_t pg = packed_group_bytes(N, K);
  if ((w->kind == RLX_VALUE_WEIGHT || w->kind == RLX_VALUE_CONST) && E > 0 && N > 0 && K > 0) {
    if (!(k->packed = rlx_aligned_alloc((size_t)E * pg)))
      return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory packing the weights of node '%s'", n->label);
    for (int64_t e = 0; e < E; e++)
      rlx_sgemm_pack_b(N, K, (const float *)w->data + e * K * N, N, false, (float *)((char *)k->packed + (size_t)e * pg));
    k->name = "f32_grouped_matmul_sgemm_packed_b";
  }
  return RLX_OK;
}
