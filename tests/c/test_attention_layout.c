/*
 * test_attention_layout.c — the attention_layout pass (passes/attention_
 * layout.c) and attention with the heads inside the rows (rows_lh: the
 * reference in ops/attention.c, the fast kernel in cpu/attention.c).
 *
 * Each case builds torch's head split around one attention — per input a
 * view of [*B, L, H*D] as [*B, L, H, D] and a permute to [*B, H, L, D] (or
 * ViT's [L, H, D] -> [H, L, D] -> [1, H, L, D]), the output permuted back —
 * runs the pass on a clone (the IR verifier after it and after dce), checks
 * which permutes are gone and which layout bits are set, and runs both
 * graphs: reference against reference bit for bit, the fast kernel (1..3
 * threads) against the unfused reference within rounding. Batch 2,
 * grouped kv heads, L != S, causal, a bool mask, odd head sizes; then the
 * near misses the pass must leave alone.
 */
#include <math.h>
#include <stdlib.h>

#include "ir/print.h"
#include "ops/ops_util.h"
#include "passes/passes.h"
#include "graph_run.h"
#include "test.h"

static rlx_shape shp(int rank, const int64_t *d) {
  rlx_shape s = {.rank = rank};
  for (int i = 0; i < rank; i++) s.dims[i] = d[i];
  return s;
}

static int32_t reshape(rlx_graph *g, int32_t x, rlx_shape s) {
  rlx_params p = {.shape = {.shape = s}};
  return rlx_graph_add1(g, RLX_OP_RESHAPE, &p, &x, 1, "view", NULL);
}

static int32_t permute(rlx_graph *g, int32_t x, const int32_t *perm, int rank) {
  rlx_params p = {.permute = {.perm = {-1, -1, -1, -1, -1, -1, -1, -1}}};
  for (int i = 0; i < rank; i++) p.permute.perm[i] = perm[i];
  return rlx_graph_add1(g, RLX_OP_PERMUTE, &p, &x, 1, "permute", NULL);
}

typedef struct lh_case {
  int64_t B, L, S, Hq, Hk, E, Ev;
  bool vit;      /* B = 1 and ViT's rank-3 split ([L, H, D] -> [H, L, D] -> [1, H, L, D]) */
  bool causal, mask;
  int near_miss; /* 0: none; 1: q's permute read twice; 2: the output's permute is not back to [L, H, D];
                    3: a permute that is not the L/H swap on k */
} lh_case;

/* [B, N, H*D] input -> [B, H, N, D] (or ViT's), as torch splits heads. */
static int32_t heads(rlx_graph *g, const char *name, int64_t B, int64_t N, int64_t H, int64_t D, bool vit,
                     int32_t *extra) {
  rlx_shape xs = vit ? shp(2, (int64_t[]){N, H * D}) : shp(3, (int64_t[]){B, N, H * D});
  int32_t x = rlx_graph_add_input(g, name, RLX_DTYPE_F32, &xs);
  if (vit) {
    int32_t p = permute(g, reshape(g, x, shp(3, (int64_t[]){N, H, D})), (int32_t[]){1, 0, 2}, 3);
    if (extra) *extra = p;
    return reshape(g, p, shp(4, (int64_t[]){1, H, N, D}));
  }
  int32_t p = permute(g, reshape(g, x, shp(4, (int64_t[]){B, N, H, D})), (int32_t[]){0, 2, 1, 3}, 4);
  if (extra) *extra = p;
  return p;
}

static void run_case(const lh_case *t) {
  rlx_graph g;
  rlx_graph_init(&g);
  int32_t qp = -1;
  int32_t q = heads(&g, "q", t->B, t->L, t->Hq, t->E, t->vit, &qp);
  int32_t k = heads(&g, "k", t->B, t->S, t->Hk, t->E, t->vit, NULL);
  if (t->near_miss == 3) /* [B, Hk, S, E] -> [B, Hk, E, S] -> back: not the swap */
    k = permute(&g, permute(&g, k, (int32_t[]){0, 1, 3, 2}, 4), (int32_t[]){0, 1, 3, 2}, 4);
  int32_t v = heads(&g, "v", t->B, t->S, t->Hk, t->Ev, t->vit, NULL);
  int32_t m = -1;
  if (t->mask) {
    rlx_shape ms = shp(4, (int64_t[]){t->B, 1, t->L, t->S});
    m = rlx_graph_add_input(&g, "mask", RLX_DTYPE_BOOL, &ms);
  }
  rlx_params ap = {.attention = {.causal = t->causal, .scale = 0.2}};
  int32_t y = rlx_graph_add1(&g, RLX_OP_ATTENTION, &ap, (int32_t[]){q, k, v, m}, t->mask ? 4 : 3, "sdpa", NULL);
  CHECK(y >= 0);
  int32_t back;
  if (t->near_miss == 2) back = permute(&g, y, (int32_t[]){0, 1, 3, 2}, 4); /* [B, H, Ev, L] */
  else if (t->vit) back = reshape(&g, permute(&g, y, (int32_t[]){2, 0, 1, 3}, 4), shp(2, (int64_t[]){t->L, t->Hq * t->Ev}));
  else back = reshape(&g, permute(&g, y, (int32_t[]){0, 2, 1, 3}, 4), shp(3, (int64_t[]){t->B, t->L, t->Hq * t->Ev}));
  CHECK_OK(rlx_graph_add_output(&g, back));
  if (t->near_miss == 1) {
    rlx_params up = {.unary = {.kind = RLX_UNARY_NEG}};
    CHECK_OK(rlx_graph_add_output(&g, rlx_graph_add1(&g, RLX_OP_UNARY, &up, &qp, 1, "neg", NULL)));
  }
  CHECK_OK(rlx_graph_verify(&g, "build"));
  rlx_graph f;
  CHECK_OK(rlx_graph_clone(&g, &f));
  CHECK_OK(rlx_pass_attention_layout(&f));
  CHECK_OK(rlx_graph_verify(&f, "attention_layout"));
  CHECK_OK(rlx_pass_dce(&f));
  CHECK_OK(rlx_graph_verify(&f, "dce"));
  unsigned want = t->near_miss == 1 ? 14u : t->near_miss == 2 ? 7u : t->near_miss == 3 ? 13u : 15u;
  const rlx_node *a = NULL;
  for (int32_t i = 0; i < f.n_nodes; i++)
    if (f.nodes[i].op == RLX_OP_ATTENTION) a = &f.nodes[i];
  CHECK(a && a->p.attention.rows_lh == want);
  int perms = graph_count_op(&f, RLX_OP_PERMUTE), want_perms = t->near_miss == 0 ? 0 : t->near_miss == 3 ? 3 : 1;
  CHECK(perms == want_perms);
  if (!a || a->p.attention.rows_lh != want || perms != want_perms) {
    fprintf(stderr, "  [%s] layout bits %u (want %u), %d permutes (want %d):\n", rlx_test_current,
            a ? a->p.attention.rows_lh : 0, want, perms, want_perms);
    rlx_graph_print(&f, stderr);
  }
  float *in[5];
  for (int i = 0; i < g.n_inputs; i++) {
    const rlx_value *iv = &g.values[g.inputs[i]];
    int64_t n = rlx_shape_numel(&iv->shape);
    in[i] = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t e = 0; e < n; e++) {
      if (iv->dtype == RLX_DTYPE_BOOL) ((uint8_t *)in[i])[e] = (e * 7 + i) % 5 != 0;
      else in[i][e] = (float)(((e + 13 * i) * 37) % 41 - 20) * 0.05f;
    }
  }
  float **r0 = graph_run(&g, in, 0, NULL), **r1 = graph_run(&f, in, 0, NULL);
  for (int o = 0; o < g.n_outputs; o++) {
    int64_t n = rlx_shape_numel(&g.values[g.outputs[o]].shape);
    CHECK(memcmp(r0[o], r1[o], sizeof(float) * (size_t)n) == 0);
    for (int threads = 1; threads <= 3; threads++) {
      float **b = graph_run(&f, in, threads, NULL);
      for (int64_t e = 0; e < n; e++) CHECK_NEAR(b[o][e], r0[o][e], 2e-6 * (1 + fabs(r0[o][e])));
      for (int oo = 0; oo < g.n_outputs; oo++) free(b[oo]);
      free(b);
    }
  }
  for (int o = 0; o < g.n_outputs; o++) free(r0[o]), free(r1[o]);
  free(r0), free(r1);
  for (int i = 0; i < g.n_inputs; i++) free(in[i]);
  rlx_graph_free(&f);
  rlx_graph_free(&g);
}

TEST(heads_in_rows) {
  /* B, L, S, Hq, Hk, E, Ev, vit, causal, mask, near_miss */
  run_case(&(lh_case){1, 24, 24, 4, 4, 16, 16, false, false, false, 0}); /* BERT's split */
  run_case(&(lh_case){2, 9, 13, 6, 3, 7, 5, false, false, true, 0});     /* batch 2, grouped kv, L != S, mask */
  run_case(&(lh_case){1, 40, 40, 4, 2, 8, 8, false, true, false, 0});    /* causal blocks, grouped kv */
  run_case(&(lh_case){1, 37, 37, 3, 3, 16, 16, true, false, false, 0});  /* ViT's split */
  run_case(&(lh_case){1, 33, 33, 2, 2, 8, 8, true, true, false, 0});     /* ViT's, causal */
}

TEST(near_misses) {
  run_case(&(lh_case){1, 10, 10, 2, 2, 8, 8, false, false, false, 1}); /* q's permute read by another node */
  run_case(&(lh_case){1, 10, 10, 2, 2, 8, 8, false, false, false, 2}); /* the output permuted elsewhere */
  run_case(&(lh_case){1, 10, 10, 2, 2, 8, 8, false, false, false, 3}); /* k behind another permute */
}

TEST_MAIN(heads_in_rows, near_misses)
