/*
 * cast.c — the byte and integer work around a transformer's masks: casts
 * between the common dtypes, and bool / uint8 logic (bitwise and logical
 * and, or, xor) with any broadcast. BERT's mask setup is a cast of the int64
 * attention mask to bool and an and of two broadcast bool masks.
 *
 * A cast takes only the pairs whose conversion is one C conversion with the
 * reference's meaning (ops/select_cast.c, core/dtype.c): the same dtype (a
 * copy), anything to bool (nonzero; NaN is true), bool and integers to
 * float32 (one rounding) and to int64, float32 <-> float64, int64 to int32
 * (two's complement wrap). Float to integer, the half types and the
 * unsigned types above 8 bits stay on the reference.
 */
#include <string.h>

#include "cpu/bcast.h"
#include "cpu/select.h"
#include "ops/ops_util.h"

#define CHUNK 32768 /* elements per task */

typedef struct cast_job {
  rlx_dtype ti, to;
  const void *x;
  void *y;
  int64_t n;
} cast_job;

/* One typed loop per supported (from, to) pair; false: not supported. */
#define CAST_LOOP(TI, TO, EXPR)                                     \
  do {                                                              \
    const TI *x = (const TI *)j->x + i0;                            \
    TO *y = (TO *)j->y + i0;                                        \
    for (int64_t i = 0; i < len; i++) y[i] = (TO)(EXPR);            \
  } while (0)

#define FROM_INTS(TO, EXPR)                                                    \
  switch (j->ti) {                                                             \
    case RLX_DTYPE_I64: CAST_LOOP(int64_t, TO, EXPR); return true;             \
    case RLX_DTYPE_I32: CAST_LOOP(int32_t, TO, EXPR); return true;             \
    case RLX_DTYPE_I16: CAST_LOOP(int16_t, TO, EXPR); return true;             \
    case RLX_DTYPE_I8: CAST_LOOP(int8_t, TO, EXPR); return true;               \
    case RLX_DTYPE_U8: CAST_LOOP(uint8_t, TO, EXPR); return true;              \
    case RLX_DTYPE_BOOL: CAST_LOOP(uint8_t, TO, x[i] != 0); return true; /* any nonzero byte is true */ \
    default: break;                                                            \
  }

RLX_VEC_CLONES static bool cast_span(const cast_job *j, int64_t i0, int64_t len) {
  if (j->ti == j->to) {
    size_t sz = rlx_dtype_size(j->ti);
    if (len > 0) memcpy((char *)j->y + (size_t)i0 * sz, (const char *)j->x + (size_t)i0 * sz, (size_t)len * sz);
    return true;
  }
  switch (j->to) {
    case RLX_DTYPE_BOOL:
      if (j->ti == RLX_DTYPE_F32) { CAST_LOOP(float, uint8_t, x[i] != 0); return true; }
      if (j->ti == RLX_DTYPE_F64) { CAST_LOOP(double, uint8_t, x[i] != 0); return true; }
      FROM_INTS(uint8_t, x[i] != 0)
      return false;
    case RLX_DTYPE_F32:
      if (j->ti == RLX_DTYPE_F64) { CAST_LOOP(double, float, x[i]); return true; }
      FROM_INTS(float, x[i])
      return false;
    case RLX_DTYPE_F64:
      if (j->ti == RLX_DTYPE_F32) { CAST_LOOP(float, double, x[i]); return true; }
      return false;
    case RLX_DTYPE_I64:
      if (j->ti == RLX_DTYPE_I64) return false;
      FROM_INTS(int64_t, x[i])
      return false;
    case RLX_DTYPE_I32:
      if (j->ti == RLX_DTYPE_I64) { CAST_LOOP(int64_t, int32_t, (uint32_t)x[i]); return true; }
      return false;
    default: return false;
  }
}

static bool cast_supported(rlx_dtype ti, rlx_dtype to) {
  char a[8] = {0}, b[8];
  cast_job j = {ti, to, a, b, 1};
  return cast_span(&j, 0, 0);
}

static void cast_task(void *ctx, int64_t t, int worker) {
  (void)worker;
  const cast_job *j = ctx;
  int64_t i0 = t * CHUNK;
  cast_span(j, i0, RLX_MIN(CHUNK, j->n - i0));
}

static rlx_status cast_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  (void)n;
  cast_job j = {in[0].dtype, out[0].dtype, in[0].data, out[0].data, rlx_view_numel(&out[0])};
  int64_t tasks = (j.n + CHUNK - 1) / CHUNK;
  rlx_parallel_for(tasks > 1 ? x->tp : NULL, tasks, cast_task, &j);
  return RLX_OK;
}

rlx_status rlx_cpu_try_cast(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k) {
  (void)sym, (void)threads;
  if (!cast_supported(rlx_in(g, n, 0)->dtype, g->values[n->out[0]].dtype)) return RLX_OK;
  k->run = cast_run, k->fast = true, k->name = "cast_runs", k->scratch = 0;
  return RLX_OK;
}

/* ---- bool / uint8 logic with broadcasting: rows of the collapsed output (cpu/bcast.h) ---- */

typedef struct logic_job {
  rlx_binary_kind k;
  bool logical; /* operands read as truth values (logical_*, or bool) */
  rlx_bcast_plan p;
  const uint8_t *a, *b;
  uint8_t *y;
} logic_job;

#define LOGIC_ROWS 64

RLX_VEC_CLONES static void logic_rows(void *ctx, int64_t t, int worker) {
  (void)worker;
  const logic_job *j = ctx;
  const rlx_bcast_plan *p = &j->p;
  int64_t r0 = t * LOGIC_ROWS, r1 = RLX_MIN(r0 + LOGIC_ROWS, p->rows), L = p->L;
  int64_t idx[RLX_MAX_RANK + 1], oa, ob;
  rlx_bcast_seek(p, r0, idx, &oa, &ob);
  int64_t ia = p->sa[p->rank - 1], ib = p->sb[p->rank - 1]; /* 0 or 1 */
  for (int64_t r = r0; r < r1; r++) {
    const uint8_t *a = j->a + oa, *b = j->b + ob;
    uint8_t *y = j->y + r * L;
    for (int64_t e = 0; e < L; e++) {
      uint8_t u = a[ia * e], v = b[ib * e];
      if (j->logical) u = u != 0, v = v != 0;
      y[e] = j->k == RLX_BINARY_BITAND || j->k == RLX_BINARY_LOGICAL_AND ? (uint8_t)(u & v)
             : j->k == RLX_BINARY_BITOR || j->k == RLX_BINARY_LOGICAL_OR ? (uint8_t)(u | v)
                                                                        : (uint8_t)(u ^ v);
    }
    rlx_bcast_next(p, idx, &oa, &ob);
  }
}

static rlx_status logic_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x) {
  rlx_shape os = rlx_view_shape(&out[0]), as = rlx_view_shape(&in[0]), bs = rlx_view_shape(&in[1]);
  rlx_binary_kind bk = n->p.binary.kind;
  logic_job j = {.k = bk, .a = in[0].data, .b = in[1].data, .y = out[0].data,
                 .logical = bk == RLX_BINARY_LOGICAL_AND || bk == RLX_BINARY_LOGICAL_OR || bk == RLX_BINARY_LOGICAL_XOR ||
                            in[0].dtype == RLX_DTYPE_BOOL}; /* bool operands are truth values */
  int64_t N = rlx_view_numel(&out[0]);
  if (N == 0) return RLX_OK;
  rlx_bcast_plan_of(&as, &bs, &os, &j.p);
  int64_t tasks = (j.p.rows + LOGIC_ROWS - 1) / LOGIC_ROWS;
  rlx_parallel_for(N >= CHUNK ? x->tp : NULL, tasks, logic_rows, &j);
  return RLX_OK;
}

rlx_status rlx_cpu_try_logic(const rlx_graph *g, const rlx_graph *sym, const rlx_node *n, int threads, rlx_kernel *k) {
  (void)sym, (void)threads;
  const rlx_value *a = rlx_in(g, n, 0), *b = rlx_in(g, n, 1), *y = &g->values[n->out[0]];
  rlx_binary_kind bk = n->p.binary.kind;
  bool bitwise = bk == RLX_BINARY_BITAND || bk == RLX_BINARY_BITOR || bk == RLX_BINARY_BITXOR;
  bool logical = bk == RLX_BINARY_LOGICAL_AND || bk == RLX_BINARY_LOGICAL_OR || bk == RLX_BINARY_LOGICAL_XOR;
  bool bytes = (a->dtype == RLX_DTYPE_BOOL || a->dtype == RLX_DTYPE_U8) && b->dtype == a->dtype;
  /* bitwise: bool or uint8 in, the same out; logical: bool or uint8 in, bool out */
  if (!bytes || !(bitwise ? y->dtype == a->dtype : logical && y->dtype == RLX_DTYPE_BOOL)) return RLX_OK;
  k->run = logic_run, k->fast = true, k->name = "logic_bytes", k->scratch = 0;
  return RLX_OK;
}
