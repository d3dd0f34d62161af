/*
 * attention.c — fast f32 scaled dot-product attention: one task per (batch,
 * head), each computing S = scale * Q K^T with a single-threaded sgemm, the
 * mask / causal limit and a row softmax in place, then O = P V. GQA maps
 * query head h to key/value head h / (Hq / Hk); with few query rows (a
 * decode step) a task takes a kv head's whole group of query heads, whose
 * rows are contiguous, as one product. Same semantics as the
 * reference kernel (ops/attention.c), including all-masked rows giving 0.
 *
 *   q [*B, Hq, L, E], k [*B, Hk, S, E], v [*B, Hk, S, Ev], mask? -> [*B, Hq, L, Ev]
 *
 * or any of them [*B, L, H, D] (rows_lh, the attention_layout pass): a
 * head's rows are then H * D apart, which the products take as their row
 * strides, so the heads are never copied out of the projections' rows.
 */
#include <math.h>
#include <string.h>

#include "cpu/gemm.h"
#include "cpu/select.h"
#include "cpu/vmath.h"
#include "ops/ops_util.h"

typedef struct attn_job {
  const rlx_node *n;
  const rlx_tensor_view *in;
  rlx_tensor_view *out;
  char *scratch;
  size_t per_worker;
  int64_t Hq, Hk, L, S, E, Ev;
  int64_t hp; /* query heads per task (heads_per_task) */
  int64_t ldq, ldk, ldv, ldo; /* row strides: E (Ev), or H * E with the heads inside the rows (rows_lh) */
  bool q_lh, k_lh, v_lh, o_lh;
  float scale;
  rlx_shape full; /* [*B, Hq, L, S] */
  int64_t mst[RLX_MAX_RANK];
} attn_job;

static size_t scores_bytes(int64_t L, int64_t S) { return ((size_t)(L * S) * sizeof(float) + 63) & ~(size_t)63; }

#define CAUSAL_ROWS 32 /* query rows a causal block multiplies together */

RLX_VEC_CLONES static void attn_task(void *ctx, int64_t t, int worker) {
  const attn_job *j = ctx;
  /* task t: hp consecutive query heads h0.. of batch b, which share kv head kh */
  int64_t tasks_per_b = j->Hq / j->hp, b = t / tasks_per_b, h0 = (t % tasks_per_b) * j->hp, kh = h0 / (j->Hq / j->Hk);
  int64_t R = j->hp * j->L; /* their query rows, contiguous: head after head */
  /* a head's first row; its rows ld* apart (heads inside rows: the row's slice) */
  const float *q = (const float *)j->in[0].data + (j->q_lh ? b * j->L * j->Hq + h0 : (b * j->Hq + h0) * j->L) * j->E;
  const float *k = (const float *)j->in[1].data + (j->k_lh ? b * j->S * j->Hk + kh : (b * j->Hk + kh) * j->S) * j->E;
  const float *v = (const float *)j->in[2].data + (j->v_lh ? b * j->S * j->Hk + kh : (b * j->Hk + kh) * j->S) * j->Ev;
  float *o = (float *)j->out[0].data + (j->o_lh ? b * j->L * j->Hq + h0 : (b * j->Hq + h0) * j->L) * j->Ev;
  char *base = j->scratch + j->per_worker * (size_t)worker;
  float *s = (float *)base;
  void *gs = base + scores_bytes(R, j->S);
  const rlx_tensor_view *mask = &j->in[3];
  bool causal = j->n->p.attention.causal, has_mask = mask->data != NULL;
  bool bool_mask = has_mask && mask->dtype == RLX_DTYPE_BOOL;
  /* causal, one head a task, no mask: rows [r0, r1) see keys [0, r1) only,
   * so each block of CAUSAL_ROWS rows multiplies that many (a 128 x 128
   * head: 62% of the products' work); the keys past a row's own are 0 in P */
  bool tri = causal && !has_mask && j->hp == 1;
  if (tri)
    for (int64_t r0 = 0; r0 < R; r0 += CAUSAL_ROWS) {
      int64_t r1 = RLX_MIN(R, r0 + CAUSAL_ROWS);
      rlx_sgemm(NULL, r1 - r0, RLX_MIN(r1, j->S), j->E, q + r0 * j->ldq, j->ldq, k, j->ldk, true, s + r0 * j->S, j->S,
                gs);
    }
  else
    rlx_sgemm(NULL, R, j->S, j->E, q, j->ldq, k, j->ldk, true, s, j->S, gs);
  for (int64_t r = 0; r < R; r++) {
    int64_t h = h0 + r / j->L, i = r % j->L;
    float *row = s + r * j->S, mx = -INFINITY;
    int64_t moff = has_mask ? rlx_strided_offset(&j->full, j->mst, (((b * j->Hq + h) * j->L) + i) * j->S) : 0;
    int64_t mstep = has_mask ? j->mst[j->full.rank - 1] : 0;
    /* columns past the causal limit are -inf; the others scaled, then
     * masked. Without an additive mask a positive scale is applied inside
     * the exponential instead (max(s x) = s max(x)): one pass less. */
    int64_t lim = causal ? RLX_MIN(i + 1, j->S) : j->S;
    float sc = j->scale, esc = 1.0f;
    bool float_mask = has_mask && !bool_mask;
    if (sc > 0 && !float_mask) esc = sc;
    else
      for (int64_t c = 0; c < lim; c++) row[c] *= sc; /* vectorized */
    if (tri) { /* the row's own keys only; the rest of P is 0 (never computed in S) */
      mx = vmax_f32(row, lim);
      if (mx == -INFINITY) { /* every score -inf (a -inf in q): zeros, as below */
        for (int64_t c = 0; c < j->S; c++) row[c] = 0.0f;
        continue;
      }
      double sum = vexp_sum_f32(row, row, lim, mx, esc);
      float inv = sum > 0 ? (float)(1.0 / sum) : 1.0f;
      for (int64_t c = 0; c < lim; c++) row[c] *= inv;
      for (int64_t c = lim; c < j->S; c++) row[c] = 0.0f;
      continue;
    }
    for (int64_t c = lim; c < j->S; c++) row[c] = -INFINITY;
    if (has_mask && mstep == 1 && bool_mask) { /* contiguous masks: vectorized selects */
      const uint8_t *mb = (const uint8_t *)mask->data + moff;
      for (int64_t c = 0; c < lim; c++) row[c] = mb[c] ? row[c] : -INFINITY;
    } else if (has_mask && mstep == 1) {
      const float *mf = (const float *)mask->data + moff;
      for (int64_t c = 0; c < lim; c++) row[c] = row[c] == -INFINITY ? row[c] : row[c] + mf[c];
    } else if (has_mask) { /* a broadcast mask column (stride 0) */
      for (int64_t c = 0; c < lim; c++) {
        float x = row[c];
        if (bool_mask && !((const uint8_t *)mask->data)[moff + c * mstep]) x = -INFINITY;
        else if (!bool_mask && x != -INFINITY) x += ((const float *)mask->data)[moff + c * mstep];
        row[c] = x;
      }
    }
    mx = vmax_f32(row, j->S);
    if (mx == -INFINITY) { /* a fully masked row */
      for (int64_t c = 0; c < j->S; c++) row[c] = 0.0f;
      continue;
    }
    double sum = vexp_sum_f32(row, row, j->S, mx, esc);
    float inv = sum > 0 ? (float)(1.0 / sum) : 1.0f;
    for (int64_t c = 0; c < j->S; c++) row[c] *= inv;
  }
  if (tri)
    for (int64_t r0 = 0; r0 < R; r0 += CAUSAL_ROWS) {
      int64_t r1 = RLX_MIN(R, r0 + CAUSAL_ROWS);
      rlx_sgemm(NULL, r1 - r0, j->Ev, RLX_MIN(r1, j->S), s + r0 * j->S, j->S, v, j->ldv, false, o + r0 * j->ldo, j->ldo,
                gs);
    }
  else
    rlx_sgemm(NULL, R, j->Ev, j->S, s, j->S, v, j->ldv, false, o, j->ldo, gs);
}

/* Query heads per task: a kv head's whole group (one K and one V packing for
 * all of them, one product of G*L rows) when that is a short block of rows
 * (decode: L = 1) and there are still enough tasks for the pool; else one. */
#define GROUP_ROWS 64
static int64_t heads_per_task(int64_t B, int64_t Hq, int64_t Hk, int64_t L, int threads, unsigned lh) {
  int64_t G = Hq / Hk;
  if (lh & (RLX_ATTN_Q_LH | RLX_ATTN_OUT_LH)) return 1; /* a group's rows are not one block there */
  return G > 1 && G * L <= GROUP_ROWS && B * Hk >= threads ? G : 1;
}

static rlx_status attn_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  int r = in[0].rank;
  unsigned lh = n->p.attention.rows_lh;
  attn_job j = {.n = n, .in = in, .out = out, .scratch = x->scratch, .q_lh = lh & RLX_ATTN_Q_LH,
                .k_lh = lh & RLX_ATTN_K_LH, .v_lh = lh & RLX_ATTN_V_LH, .o_lh = lh & RLX_ATTN_OUT_LH};
  j.Hq = in[0].dims[r - (j.q_lh ? 2 : 3)], j.L = in[0].dims[r - (j.q_lh ? 3 : 2)], j.E = in[0].dims[r - 1];
  j.Hk = in[1].dims[r - (j.k_lh ? 2 : 3)], j.S = in[1].dims[r - (j.k_lh ? 3 : 2)], j.Ev = in[2].dims[r - 1];
  j.ldq = j.q_lh ? j.Hq * j.E : j.E, j.ldk = j.k_lh ? j.Hk * j.E : j.E;
  j.ldv = j.v_lh ? j.Hk * j.Ev : j.Ev, j.ldo = j.o_lh ? j.Hq * j.Ev : j.Ev;
  j.scale = (float)(n->p.attention.scale != 0 ? n->p.attention.scale : 1.0 / sqrt((double)j.E));
  int64_t B = rlx_dims_prod(in[0].dims, 0, r - 3);
  j.hp = heads_per_task(B, j.Hq, j.Hk, j.L, rlx_threadpool_size(x->tp), lh);
  j.per_worker = scores_bytes(j.hp * j.L, j.S) + rlx_sgemm_scratch(1);
  j.full = rlx_view_shape(&in[0]); /* [*B, Hq, L, S] */
  j.full.dims[r - 3] = j.Hq, j.full.dims[r - 2] = j.L;
  j.full.dims[r - 1] = j.S;
  if (in[3].data) {
    rlx_shape ms = rlx_view_shape(&in[3]);
    rlx_broadcast_strides(&ms, &j.full, j.mst);
  }
  rlx_parallel_for(x->tp, B * (j.Hq / j.hp), attn_task, &j);
  return RLX_OK;
}

static size_t attn_scratch_for(const rlx_graph *g, const rlx_node *n, int threads) {
  const rlx_value *q = rlx_in(g, n, 0), *kv = rlx_in(g, n, 1);
  int r = q->shape.rank;
  unsigned lh = n->p.attention.rows_lh;
  bool ql = lh & RLX_ATTN_Q_LH, kl = lh & RLX_ATTN_K_LH;
  int64_t L = q->shape.dims[r - (ql ? 3 : 2)], S = kv->shape.dims[r - (kl ? 3 : 2)];
  int64_t hp = heads_per_task(rlx_dims_prod(q->shape.dims, 0, r - 3), q->shape.dims[r - (ql ? 2 : 3)],
                              kv->shape.dims[r - (kl ? 2 : 3)], L, threads > 0 ? threads : 1, lh);
  return (size_t)(threads > 0 ? threads : 1) * (scores_bytes(hp * L, S) + rlx_sgemm_scratch(1));
}

rlx_status rlx_cpu_try_attention(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k) {
  (void)sym;
  const rlx_value *q = rlx_in(g, n, 0), *m = rlx_in(g, n, 3);
  if (q->dtype != RLX_DTYPE_F32 || (m && m->dtype != RLX_DTYPE_BOOL && m->dtype != RLX_DTYPE_F32)) return RLX_OK;
  k->run = attn_run, k->fast = true, k->name = "f32_attention_sgemm";
  k->scratch_for = attn_scratch_for;
  k->scratch = attn_scratch_for(g, n, threads);
  return RLX_OK;
}
