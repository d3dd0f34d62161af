/*
 * test_linalg.c — the linalg op's reference kernels (src/ops/linalg*.c) on
 * hand-computed cases and invariants: LAPACK's pivots, reflector signs and
 * Bunch-Kaufman blocks; singular and non-positive-definite inputs (info
 * codes, det 0, logabsdet -inf); 0x0 and 1x1 matrices, empty batches,
 * non-square shapes; bad run-time pivots and failed checks as errors; and
 * the lowering's refusals (src/import/lower/linalg_decomp.c), each naming
 * the node.
 */
#include "fixtures.h"
#include "import/lower/lower.h"
#include "kernel_test.h"
#include "runtime/runtime.h"

static double at(const krun *r, int k, int64_t i) { return rlx_load_f64(r->out[k].data, r->out[k].dtype, i); }

static rlx_status la(krun *r, rlx_linalg_params lp, int n_in, const tens *in, int n_out) {
  rlx_params p;
  memset(&p, 0, sizeof p);
  p.linalg = lp;
  return krun_op(r, RLX_OP_LINALG, &p, n_in, in, n_out);
}

TEST(lu_pivots_det_and_solve) {
  krun r, d, s;
  tens a = TF(F64, SH(3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 10);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LU_FACTOR}, 1, &a, 3));
  CHECK_SHAPE(&r, 1, I32, 3);
  CHECK_I(&r, 1, 3, 3, 3); /* the largest |value| of each column, as LAPACK */
  CHECK_I(&r, 2, 0);
  CHECK_F(&r, 0, 1e-12, 7, 8, 10, 1.0 / 7, 6.0 / 7, 11.0 / 7, 4.0 / 7, 0.5, -0.5);
  tens lu = TF(F64, SH(3, 3), 7, 8, 10, 1.0 / 7, 6.0 / 7, 11.0 / 7, 4.0 / 7, 0.5, -0.5);
  tens piv = TI(I32, SH(3), 3, 3, 3);
  CHECK_OK(la(&d, (rlx_linalg_params){.kind = RLX_LINALG_LU_DET}, 2, (tens[]){lu, piv}, 1));
  CHECK_F(&d, 0, 1e-12, -3);
  krun_free(&d);
  CHECK_OK(la(&d, (rlx_linalg_params){.kind = RLX_LINALG_LU_DET, .log = true}, 2, (tens[]){lu, piv}, 2));
  CHECK_F(&d, 0, 0, -1);
  CHECK_F(&d, 1, 1e-12, log(3.0));
  /* A x = (6, 15, 25) has x = (1, 1, 1); A^T x = (12, 15, 19) too */
  tens b = TF(F64, SH(3, 1), 6, 15, 25);
  CHECK_OK(la(&s, (rlx_linalg_params){.kind = RLX_LINALG_LU_SOLVE, .left = true}, 3, (tens[]){lu, piv, b}, 1));
  CHECK_F(&s, 0, 1e-12, 1, 1, 1);
  krun_free(&s);
  tens bt = TF(F64, SH(1, 3), 12, 15, 19); /* right: x A = b is A^T x^T = b^T */
  CHECK_OK(la(&s, (rlx_linalg_params){.kind = RLX_LINALG_LU_SOLVE, .left = false}, 3, (tens[]){lu, piv, bt}, 1));
  CHECK_F(&s, 0, 1e-12, 1, 1, 1);
  krun_free(&s);
  tens b2 = TF(F64, SH(3, 1), 12, 15, 19);
  CHECK_OK(la(&s, (rlx_linalg_params){.kind = RLX_LINALG_LU_SOLVE, .left = true, .trans = true}, 3,
              (tens[]){lu, piv, b2}, 1));
  CHECK_F(&s, 0, 1e-12, 1, 1, 1);
  krun_free(&s);
  krun_free(&d);
  krun_free(&r);
}

TEST(lu_singular_empty_and_unpack) {
  krun r, d;
  tens a = TF(F32, SH(2, 2), 1, 2, 2, 4);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LU_FACTOR}, 1, &a, 3));
  CHECK_I(&r, 1, 2, 2);
  CHECK_I(&r, 2, 2); /* U[2, 2] is zero */
  tens lu = TF(F32, SH(2, 2), 2, 4, 0.5, 0), piv = TI(I32, SH(2), 2, 2);
  CHECK_OK(la(&d, (rlx_linalg_params){.kind = RLX_LINALG_LU_DET, .log = true}, 2, (tens[]){lu, piv}, 2));
  CHECK_F(&d, 0, 0, 0);
  CHECK_F(&d, 1, 0, -INFINITY);
  krun_free(&d);
  krun_free(&r);
  /* the same with check: torch's _linalg_check_errors raises */
  CHECK_ERR(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LU_FACTOR, .check = RLX_LINALG_CHECK_SINGULAR}, 1, &a, 3),
            RLX_ERR_RUNTIME, "singular");
  krun_free(&r);
  /* 0x0: det 1; an empty batch: empty outputs */
  tens e = {RLX_DTYPE_F32, SH(0, 0), (const double[]){0}, NULL, 0}, ep = {RLX_DTYPE_I32, SH(0), NULL, (const int64_t[]){0}, 0};
  CHECK_OK(la(&d, (rlx_linalg_params){.kind = RLX_LINALG_LU_DET}, 2, (tens[]){e, ep}, 1));
  CHECK_F(&d, 0, 0, 1);
  krun_free(&d);
  tens eb = {RLX_DTYPE_F32, SH(0, 3, 3), (const double[]){0}, NULL, 0};
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LU_FACTOR}, 1, &eb, 3));
  CHECK_SHAPE(&r, 0, F32, 0, 3, 3);
  CHECK_SHAPE(&r, 1, I32, 0, 3);
  CHECK_SHAPE(&r, 2, I32, 0);
  krun_free(&r);
  /* 1x1 */
  tens one = TF(F32, SH(1, 1), 5);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LU_FACTOR}, 1, &one, 3));
  CHECK_F(&r, 0, 0, 5);
  CHECK_I(&r, 1, 1);
  krun_free(&r);
  /* unpack a wide LU [2, 3]: P swaps the rows, L [2, 2], U [2, 3] */
  tens wl = TF(F64, SH(2, 3), 4, 5, 6, 0.25, 1, 2), wp = TI(I32, SH(2), 2, 2);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LU_UNPACK, .unpack_data = true, .unpack_pivots = true}, 2,
              (tens[]){wl, wp}, 3));
  CHECK_F(&r, 0, 0, 0, 1, 1, 0);
  CHECK_F(&r, 1, 0, 1, 0, 0.25, 1);
  CHECK_F(&r, 2, 0, 4, 5, 6, 0, 1, 2);
  krun_free(&r);
  /* a pivot out of range is a run-time error naming it */
  tens bad = TI(I32, SH(2), 2, 7);
  CHECK_ERR(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LU_UNPACK, .unpack_pivots = true}, 2, (tens[]){wl, bad}, 3),
            RLX_ERR_RUNTIME, "pivot 7 at [0, 1] is out of range");
  krun_free(&r);
}

TEST(cholesky_and_triangular) {
  krun r;
  tens a = TF(F64, SH(2, 2), 4, 2, 2, 3);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_CHOLESKY}, 1, &a, 2));
  CHECK_F(&r, 0, 1e-15, 2, 0, 1, sqrt(2.0));
  CHECK_I(&r, 1, 0);
  krun_free(&r);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_CHOLESKY, .upper = true}, 1, &a, 2));
  CHECK_F(&r, 0, 1e-15, 2, 1, 0, sqrt(2.0));
  krun_free(&r);
  /* not positive-definite at order 2: torch's partial result, info 2 */
  tens np = TF(F32, SH(2, 2), 1, 2, 2, 1);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_CHOLESKY}, 1, &np, 2));
  CHECK_F(&r, 0, 0, 1, 0, 2, -3);
  CHECK_I(&r, 1, 2);
  krun_free(&r);
  CHECK_ERR(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_CHOLESKY, .check = RLX_LINALG_CHECK_NOT_PD}, 1, &np, 2),
            RLX_ERR_RUNTIME, "leading minor of order 2");
  krun_free(&r);
  tens l = TF(F64, SH(2, 2), 2, 99, 1, 1), b = TF(F64, SH(2, 1), 2, 3);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_TRI_SOLVE, .left = true}, 2, (tens[]){l, b}, 1));
  CHECK_F(&r, 0, 1e-15, 1, 2); /* the upper 99 is not read */
  krun_free(&r);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_TRI_SOLVE, .left = true, .unit = true}, 2, (tens[]){l, b}, 1));
  CHECK_F(&r, 0, 1e-15, 2, 1);
  krun_free(&r);
  CHECK_ERR(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_CHOLESKY}, 1, (tens[]){TF(F32, SH(2, 3), 1, 2, 3, 4, 5, 6)}, 2),
            RLX_ERR_SHAPE, "square");
  krun_free(&r);
  CHECK_ERR(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_CHOLESKY}, 1, (tens[]){TI(I64, SH(1, 1), 1)}, 2),
            RLX_ERR_UNSUPPORTED, "float32 and float64");
  krun_free(&r);
}

TEST(householder_qr) {
  krun r, q;
  /* dlarfg on (3, 4): beta = -5, tau = 1.6, v = (1, 0.5) */
  tens a = TF(F64, SH(2, 1), 3, 4);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_GEQRF}, 1, &a, 2));
  CHECK_F(&r, 0, 1e-15, -5, 0.5);
  CHECK_F(&r, 1, 1e-15, 1.6);
  krun_free(&r);
  /* Q = I - tau v v^T = [[-0.6, -0.8], [-0.8, 0.6]] (complete), its first column (reduced) */
  tens qr = TF(F64, SH(2, 1), -5, 0.5), tau = TF(F64, SH(1), 1.6);
  CHECK_OK(la(&q, (rlx_linalg_params){.kind = RLX_LINALG_ORGQR, .ncols = 2}, 2, (tens[]){qr, tau}, 1));
  CHECK_F(&q, 0, 1e-15, -0.6, -0.8, -0.8, 0.6);
  krun_free(&q);
  CHECK_OK(la(&q, (rlx_linalg_params){.kind = RLX_LINALG_ORGQR}, 2, (tens[]){qr, tau}, 1));
  CHECK_SHAPE(&q, 0, F64, 2, 1);
  CHECK_F(&q, 0, 1e-15, -0.6, -0.8);
  krun_free(&q);
  /* ormqr: Q^T (3, 4)^T = (-5, 0) */
  tens c = TF(F64, SH(2, 1), 3, 4);
  CHECK_OK(la(&q, (rlx_linalg_params){.kind = RLX_LINALG_ORMQR, .left = true, .trans = true}, 3, (tens[]){qr, tau, c}, 1));
  CHECK_F(&q, 0, 1e-15, -5, 0);
  krun_free(&q);
  /* a zero column: tau 0 (H = I), as LAPACK */
  tens z = TF(F32, SH(2, 2), 0, 1, 0, 1);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_GEQRF}, 1, &z, 2));
  CHECK_F(&r, 1, 0, 0, 0);
  krun_free(&r);
}

TEST(eigh_and_svd) {
  krun r;
  tens a = TF(F64, SH(2, 2), 2, 1, 1, 2);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_EIGH, .compute_uv = true}, 1, &a, 2));
  CHECK_F(&r, 0, 1e-14, 1, 3); /* ascending */
  double h = sqrt(0.5);
  for (int i = 0; i < 4; i++) CHECK_NEAR(fabs(at(&r, 1, i)), h, 1e-14);
  CHECK_NEAR(at(&r, 1, 0) * at(&r, 1, 2), -0.5, 1e-14); /* (1, -1) / sqrt 2 for w = 1 */
  krun_free(&r);
  /* UPLO: only the named triangle is read */
  tens up = TF(F64, SH(2, 2), 2, 1, 77, 2);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_EIGH, .upper = true}, 1, &up, 2));
  CHECK_F(&r, 0, 1e-14, 1, 3);
  CHECK_SHAPE(&r, 1, F64, 0);
  krun_free(&r);
  static const double want[4] = {3, 0, 4, 5};
  /* [[3, 0], [4, 5]]: A^T A has eigenvalues 45 and 5 */
  tens s = TF(F64, SH(2, 2), 3, 0, 4, 5);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_SVD, .compute_uv = true}, 1, &s, 3));
  CHECK_F(&r, 1, 1e-14, sqrt(45.0), sqrt(5.0));
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      double v = 0;
      for (int t = 0; t < 2; t++) v += at(&r, 0, i * 2 + t) * at(&r, 1, t) * at(&r, 2, t * 2 + j);
      CHECK_NEAR(v, want[i * 2 + j], 1e-13);
    }
  krun_free(&r);
  /* 3x2 with full matrices: U is 3x3 orthogonal, completed past the rank */
  tens t = TF(F32, SH(3, 2), 1, 0, 0, 1, 0, 0);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_SVD, .full = true, .compute_uv = true}, 1, &t, 3));
  CHECK_SHAPE(&r, 0, F32, 3, 3);
  CHECK_SHAPE(&r, 2, F32, 2, 2);
  CHECK_F(&r, 1, 1e-7, 1, 1);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double v = 0;
      for (int k = 0; k < 3; k++) v += at(&r, 0, k * 3 + i) * at(&r, 0, k * 3 + j);
      CHECK_NEAR(v, i == j, 1e-6);
    }
  krun_free(&r);
  /* a wide rank-1 matrix without vectors; 0x0 */
  tens w = TF(F64, SH(2, 3), 1, 2, 2, 2, 4, 4);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_SVD}, 1, &w, 3));
  CHECK_F(&r, 1, 1e-14, sqrt(45.0), 0);
  CHECK_SHAPE(&r, 0, F64, 0);
  krun_free(&r);
  tens e = {RLX_DTYPE_F32, SH(0, 0), (const double[]){0}, NULL, 0};
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_SVD, .compute_uv = true}, 1, &e, 3));
  CHECK_SHAPE(&r, 1, F32, 0);
  krun_free(&r);
}

TEST(ldl_bunch_kaufman) {
  krun r;
  /* [[0, 1], [1, 0]] needs a 2x2 block: pivots (-2, -2) */
  tens a = TF(F64, SH(2, 2), 0, 1, 1, 0);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LDL_FACTOR}, 1, &a, 3));
  CHECK_I(&r, 1, -2, -2);
  CHECK_I(&r, 2, 0);
  CHECK_F(&r, 0, 0, 0, 0, 1, 0);
  krun_free(&r);
  tens ld = TF(F64, SH(2, 2), 0, 0, 1, 0), piv = TI(I32, SH(2), -2, -2), b = TF(F64, SH(2, 1), 1, 2);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LDL_SOLVE}, 3, (tens[]){ld, piv, b}, 1));
  CHECK_F(&r, 0, 1e-15, 2, 1);
  krun_free(&r);
  /* 1x1 blocks with an interchange: [[1, 2], [2, 1]] -> pivot row 2 first */
  tens c = TF(F64, SH(2, 2), 1, 2, 2, 1);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LDL_FACTOR}, 1, &c, 3));
  CHECK_I(&r, 1, -2, -2); /* |a11| = 1 < 0.64 * 2 and |a22| too: a 2x2 block */
  krun_free(&r);
  tens d = TF(F64, SH(2, 2), 4, 1, 1, 3);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LDL_FACTOR}, 1, &d, 3));
  CHECK_I(&r, 1, 1, 2);
  CHECK_F(&r, 0, 1e-15, 4, 0, 0.25, 2.75);
  krun_free(&r);
  tens bad = TI(I32, SH(2), -2, 1);
  CHECK_ERR(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LDL_SOLVE}, 3, (tens[]){ld, bad, b}, 1), RLX_ERR_RUNTIME,
            "not a valid Bunch-Kaufman pivot");
  krun_free(&r);
  /* a zero matrix: info 1 */
  tens z = TF(F32, SH(1, 1), 0);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LDL_FACTOR}, 1, &z, 3));
  CHECK_I(&r, 2, 1);
  krun_free(&r);
}

TEST(matrix_exp) {
  krun r;
  tens rot = TF(F64, SH(2, 2), 0, 1, -1, 0);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_MATRIX_EXP}, 1, &rot, 1));
  CHECK_F(&r, 0, 1e-15, cos(1.0), sin(1.0), -sin(1.0), cos(1.0));
  krun_free(&r);
  tens big = TF(F64, SH(2, 2), 10, 0, 0, -3); /* scaled and squared */
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_MATRIX_EXP}, 1, &big, 1));
  CHECK_F(&r, 0, 1e-13, exp(10.0), 0, 0, exp(-3.0));
  krun_free(&r);
  tens nan = TF(F32, SH(1, 1), NAN);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_MATRIX_EXP}, 1, &nan, 1));
  CHECK_F(&r, 0, 0, NAN);
  krun_free(&r);
}

TEST(batch_and_infer_errors) {
  krun r;
  /* two matrices in a batch are factored independently */
  tens a = TF(F32, SH(2, 1, 1), 2, -3);
  CHECK_OK(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LU_DET}, 2, (tens[]){a, TI(I32, SH(2, 1), 1, 1)}, 1));
  CHECK_F(&r, 0, 0, 2, -3);
  krun_free(&r);
  CHECK_ERR(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LU_DET}, 2, (tens[]){a, TI(I32, SH(3, 1), 1, 1, 1)}, 1),
            RLX_ERR_SHAPE, "other batch dimensions");
  krun_free(&r);
  CHECK_ERR(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LU_SOLVE, .left = true}, 3,
               (tens[]){TF(F32, SH(1, 1), 1), TI(I32, SH(1), 1), TF(F32, SH(2, 1), 1, 2)}, 1),
            RLX_ERR_SHAPE, "B has 2 rows");
  krun_free(&r);
  CHECK_ERR(la(&r, (rlx_linalg_params){.kind = RLX_LINALG_LU_FACTOR}, 1, (tens[]){TF(F32, SH(3), 1, 2, 3)}, 3),
            RLX_ERR_SHAPE, "at least 2 dimensions");
  krun_free(&r);
}

/* Parses and lowers a graph of one input `a` and the given nodes (single
 * quotes), verifies it, frees everything; the status of the first failure. */
static rlx_status lower_graph(const char *input, const char *nodes, const char *outputs) {
  char buf[4096];
  snprintf(buf, sizeof buf,
           "{'format': 'rlx-torch-ir', 'version': 1, 'model_name': 't', 'inputs': [%s], 'weights': [], "
           "'nodes': [%s], 'outputs': [%s]}", input, nodes, outputs);
  char *doc = jq(buf);
  size_t size;
  unsigned char *wimg = st_build(NULL, 0, &size);
  rlx_model *m = rlx_calloc(1, sizeof *m);
  rlx_status st = rlx_torch_ir_parse(doc, strlen(doc), "t.json", &m->ir);
  if (!st) st = rlx_st_parse(wimg, size, "w.st", &m->weights);
  if (!st) st = rlx_lower_graph(&m->ir, &m->weights, &m->graph);
  if (!st) st = rlx_graph_verify(&m->graph, "import");
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", rlx_last_error());
  rlx_model_destroy(m);
  free(wimg);
  free(doc);
  if (st) rlx_errorf(st, "%s", msg);
  return st;
}

TEST(lowering_refusals) {
  const char *i33 = "{'id': 'a', 'shape': [3, 3], 'dtype': 'i64'}", *f23 = "{'id': 'a', 'shape': [2, 3], 'dtype': 'f32'}";
  CHECK_ERR(lower_graph(i33, "{'id': 'c', 'op': 'aten.linalg_cholesky_ex.default', 'args': [{'ref': 'a'}], "
                             "'out': [{'shape': [3, 3], 'dtype': 'i64'}, {'shape': [], 'dtype': 'i32'}]}",
                        "{'ref': 'a', 'shape': [3, 3], 'dtype': 'i64'}"),
            RLX_ERR_UNSUPPORTED, "node 'c' (aten.linalg_cholesky_ex.default): A is i64; rlx's linear algebra is "
                                 "float32 and float64");
  CHECK_ERR(lower_graph(f23, "{'id': 'q', 'op': 'aten.linalg_qr.default', 'args': [{'ref': 'a'}, {'str': 'full'}], "
                             "'out': [{'shape': [2, 2], 'dtype': 'f32'}, {'shape': [2, 3], 'dtype': 'f32'}]}",
                        "{'ref': 'a', 'shape': [2, 3], 'dtype': 'f32'}"),
            RLX_ERR_SHAPE, "node 'q' (aten.linalg_qr.default): qr received unrecognized mode 'full'");
  CHECK_ERR(lower_graph(f23, "{'id': 'l', 'op': 'aten.linalg_lu_factor_ex.default', 'args': [{'ref': 'a'}], "
                             "'kwargs': {'pivot': {'bool': false}}, 'out': [{'shape': [2, 3], 'dtype': 'f32'}, "
                             "{'shape': [2], 'dtype': 'i32'}, {'shape': [], 'dtype': 'i32'}]}",
                        "{'ref': 'a', 'shape': [2, 3], 'dtype': 'f32'}"),
            RLX_ERR_UNSUPPORTED, "node 'l' (aten.linalg_lu_factor_ex.default): LU without pivoting");
  CHECK_ERR(lower_graph("{'id': 'a', 'shape': [], 'dtype': 'i32'}",
                        "{'id': 'k', 'op': 'aten._linalg_check_errors.default', 'args': [{'ref': 'a'}, "
                        "{'str': 'linalg.inv'}], 'kwargs': {'is_matrix': {'bool': true}}, 'out': null}",
                        "{'ref': 'a', 'shape': [], 'dtype': 'i32'}"),
            RLX_ERR_UNSUPPORTED, "node 'k' (aten._linalg_check_errors.default): rlx checks the info of an LU");
  CHECK_ERR(lower_graph(f23, "{'id': 'p', 'op': 'aten.linalg_polar.default', 'args': [{'ref': 'a'}], "
                             "'out': [{'shape': [2, 3], 'dtype': 'f32'}, {'shape': [3, 3], 'dtype': 'f32'}]}",
                        "{'ref': 'a', 'shape': [2, 3], 'dtype': 'f32'}"),
            RLX_ERR_SHAPE, "at least as many rows as columns");
  /* a checked factorization lowers (the check marks the LU node) */
  CHECK_OK(lower_graph("{'id': 'a', 'shape': [3, 3], 'dtype': 'f32'}",
                       "{'id': 'f', 'op': 'aten.linalg_inv_ex.default', 'args': [{'ref': 'a'}], "
                       "'out': [{'shape': [3, 3], 'dtype': 'f32'}, {'shape': [], 'dtype': 'i32'}]}, "
                       "{'id': 'g0', 'op': '_getitem', 'args': [{'ref': 'f'}, {'int': 0}], 'out': {'shape': [3, 3], 'dtype': 'f32'}}, "
                       "{'id': 'g1', 'op': '_getitem', 'args': [{'ref': 'f'}, {'int': 1}], 'out': {'shape': [], 'dtype': 'i32'}}, "
                       "{'id': 'k', 'op': 'aten._linalg_check_errors.default', 'args': [{'ref': 'g1'}, "
                       "{'str': 'linalg.inv'}], 'kwargs': {'is_matrix': {'bool': true}}, 'out': null}",
                       "{'ref': 'g0', 'shape': [3, 3], 'dtype': 'f32'}"));
}

TEST_MAIN(lu_pivots_det_and_solve, lu_singular_empty_and_unpack, cholesky_and_triangular, householder_qr, eigh_and_svd,
          ldl_bunch_kaufman, matrix_exp, batch_and_infer_errors, lowering_refusals)
