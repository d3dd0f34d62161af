/*
 * test_sym.c — symbolic dims: canonical forms (equal expressions are equal
 * int64 dims), simplification, bounds, evaluation against hand-computed
 * values (Python floor semantics), the text grammar and its errors.
 */
#include <stdlib.h>

#include "ir/sym.h"
#include "test.h"

static rlx_dim P(rlx_symtab *t, const char *text) {
  rlx_dim d = 0;
  rlx_status st = rlx_sym_parse(t, text, &d);
  if (st) {
    fprintf(stderr, "[%s] parse \"%s\": %s\n", rlx_test_current, text, rlx_last_error());
    rlx_test_failures++;
  }
  return d;
}

/* Evaluates d at symbol values v (one per declared symbol). */
static int64_t E(const rlx_symtab *t, rlx_dim d, const int64_t *v) {
  int64_t *av = calloc((size_t)t->n_atoms + 1, sizeof *av), *ev = calloc((size_t)t->n_exprs + 1, sizeof *ev);
  int64_t r = INT64_MIN;
  if (!rlx_symtab_eval(t, v, av, ev)) r = rlx_dim_value(d, ev);
  free(av);
  free(ev);
  return r;
}

static void setup(rlx_symtab *t) {
  rlx_symtab_init(t);
  CHECK_OK(rlx_sym_declare(t, "s0", 1, 512, 16, NULL));
  CHECK_OK(rlx_sym_declare(t, "s1", 2, 64, 8, NULL));
}

TEST(canonical_equality) {
  rlx_symtab t;
  setup(&t);
  CHECK(P(&t, "s0*768") == P(&t, "s0*12*64"));
  CHECK(P(&t, "s0*768") == P(&t, "768*s0"));
  CHECK(P(&t, "s0 + s1") == P(&t, "s1 + s0"));
  CHECK(P(&t, "(s0 + 1)*(s1 - 1)") == P(&t, "s0*s1 - s0 + s1 - 1"));
  CHECK(P(&t, "s0 - s0") == 0);
  CHECK(P(&t, "2*s0 - s0") == P(&t, "s0"));
  CHECK(P(&t, "s0*s1") != P(&t, "s0 + s1"));
  CHECK(rlx_dim_is_sym(P(&t, "s0")) && !rlx_dim_is_sym(P(&t, "3*4 - 2")) && P(&t, "3*4 - 2") == 10);
  CHECK(rlx_dim_symbol(&t, P(&t, "s1")) == 1 && rlx_dim_symbol(&t, P(&t, "2*s1")) == -1);
  rlx_symtab_free(&t);
}

TEST(floordiv_mod_simplify) {
  rlx_symtab t;
  setup(&t);
  CHECK(P(&t, "floordiv(4*s0, 2)") == P(&t, "2*s0"));
  CHECK(P(&t, "floordiv(2*s0 + 1, 2)") == P(&t, "s0")); /* remainder 1 in [0, 2) */
  CHECK(P(&t, "mod(2*s0 + 1, 2)") == 1);
  CHECK(P(&t, "mod(6*s0, 3)") == 0);
  /* conv output: (s0 + 2*1 - 1*(3 - 1) - 1) // 2 + 1, as torch records ((s0 - 1)//2) + 1 */
  rlx_dim conv = P(&t, "floordiv(s0 + 2 - 2 - 1, 2) + 1");
  CHECK(conv == P(&t, "floordiv(s0 - 1, 2) + 1"));
  CHECK(conv == P(&t, "floordiv(s0 + 1, 2)"));
  CHECK(rlx_dim_is_sym(conv));
  CHECK(P(&t, "floordiv(s0, s0)") == 1); /* s0 >= 1 */
  CHECK(P(&t, "max(s0, 0)") == P(&t, "s0"));  /* decided by bounds */
  CHECK(P(&t, "min(s1, 1)") == 1);
  CHECK(P(&t, "min(s0, s1)") == P(&t, "min(s1, s0)")); /* commutative */
  /* by a symbolic divisor it is a constant multiple of (s1 >= 2): Swin's padded window count */
  CHECK(P(&t, "floordiv(4*s1 + 4, s1 + 1)") == 4);
  CHECK(P(&t, "floordiv(4*s1 + 5, s1 + 1)") == 4); /* remainder 1 < min(s1 + 1) = 3 */
  CHECK(P(&t, "mod(4*s1 + 5, s1 + 1)") == 1);
  CHECK(P(&t, "floordiv(4*s1 + 4, 2*s1 + 2)") == 2);
  CHECK(P(&t, "floordiv(4*s1 + 4 - mod(4*s1 + 2, 4) + 2, s1 + 1)") == 4);
  CHECK(rlx_dim_is_sym(P(&t, "floordiv(4*s1 + 9, s1 + 1)"))); /* remainder 5: not below every s1 + 1 */
  CHECK(rlx_dim_is_sym(P(&t, "floordiv(3*s1, 2*s1 + 1)")));  /* 3 is no multiple of 2 */
  int64_t v[2] = {7, 2};
  CHECK(E(&t, P(&t, "floordiv(4*s1 + 9, s1 + 1)"), v) == 5 && E(&t, P(&t, "mod(4*s1 + 9, s1 + 1)"), v) == 2);
  rlx_symtab_free(&t);
}

TEST(evaluation) {
  rlx_symtab t;
  setup(&t);
  int64_t v[2] = {7, 3};
  CHECK(E(&t, P(&t, "s0*s1 + 5"), v) == 26);
  CHECK(E(&t, P(&t, "floordiv(s0 - 10, 4)"), v) == -1); /* Python floor: -3 // 4 = -1 */
  CHECK(E(&t, P(&t, "mod(s0 - 10, 4)"), v) == 1);       /* -3 % 4 = 1 */
  CHECK(E(&t, P(&t, "floordiv(s0, s1)"), v) == 2);
  CHECK(E(&t, P(&t, "mod(s0, s1)"), v) == 1);
  CHECK(E(&t, P(&t, "max(s0, 3*s1)"), v) == 9 && E(&t, P(&t, "min(s0, 3*s1)"), v) == 7);
  CHECK(E(&t, P(&t, "floordiv(s0 + 1, 2)"), v) == 4);
  CHECK(E(&t, P(&t, "-s0 + 2"), v) == -5);
  /* Swin's pad to a multiple of the window: (7 - s0 % 7) % 7 */
  rlx_dim pad = P(&t, "mod(7 - mod(s0, 7), 7)");
  for (int64_t s = 1; s <= 30; s++) {
    int64_t w[2] = {s, 2};
    CHECK(E(&t, pad, w) == (7 - s % 7) % 7);
  }
  rlx_symtab_free(&t);
}

TEST(bounds) {
  rlx_symtab t;
  setup(&t);
  int64_t lo, hi;
  rlx_dim_bounds(&t, P(&t, "s0*s1"), &lo, &hi);
  CHECK(lo == 2 && hi == 512 * 64);
  rlx_dim_bounds(&t, P(&t, "s0 - s1"), &lo, &hi);
  CHECK(lo == 1 - 64 && hi == 510);
  rlx_dim_bounds(&t, P(&t, "floordiv(s0 - 1, 2) + 1"), &lo, &hi);
  CHECK(lo == 1 && hi == 256);
  rlx_dim_bounds(&t, P(&t, "mod(s0, 7)"), &lo, &hi);
  CHECK(lo == 0 && hi == 6);
  rlx_dim_bounds(&t, P(&t, "min(s0, s1)"), &lo, &hi);
  CHECK(lo == 1 && hi == 64);
  rlx_symtab_free(&t);
}

TEST(text_form) {
  rlx_symtab t;
  setup(&t);
  char buf[128];
  CHECK(!strcmp(rlx_dim_str(&t, P(&t, "s0*2 + 1"), buf, sizeof buf), "2*s0 + 1"));
  CHECK(!strcmp(rlx_dim_str(&t, P(&t, "s0 - s1*s0"), buf, sizeof buf), "-s0*s1 + s0"));
  CHECK(!strcmp(rlx_dim_str(&t, P(&t, "floordiv(s0 + 1, 2)"), buf, sizeof buf), "floordiv(s0 + 1, 2)"));
  CHECK(!strcmp(rlx_dim_str(&t, 42, buf, sizeof buf), "42"));
  rlx_dim d;
  CHECK_ERR(rlx_sym_parse(&t, "s0 + ", &d), RLX_ERR_FORMAT, "a value expected at offset 5");
  CHECK_ERR(rlx_sym_parse(&t, "s9 * 2", &d), RLX_ERR_FORMAT, "an undeclared symbol at offset 0");
  CHECK_ERR(rlx_sym_parse(&t, "floordiv(s0 2)", &d), RLX_ERR_FORMAT, "',' expected");
  CHECK_ERR(rlx_sym_parse(&t, "floordiv(s0, 0)", &d), RLX_ERR_UNSUPPORTED, "divided by zero");
  CHECK_ERR(rlx_sym_parse(&t, "s0 s1", &d), RLX_ERR_FORMAT, "unexpected text at offset 3");
  CHECK_ERR(rlx_sym_parse(&t, "99999999999999999999", &d), RLX_ERR_FORMAT, "too large");
  CHECK_ERR(rlx_sym_parse(&t, "4611686018427387904*4611686018427387904", &d), RLX_ERR_UNSUPPORTED, "overflows");
  char deep[300];
  memset(deep, '(', 200);
  strcpy(deep + 200, "s0");
  CHECK_ERR(rlx_sym_parse(&t, deep, &d), RLX_ERR_FORMAT, "nesting too deep");
  CHECK_ERR(rlx_sym_declare(&t, "s0", 1, 2, 1, NULL), RLX_ERR_FORMAT, "declared twice");
  CHECK_ERR(rlx_sym_declare(&t, "s5", 4, 2, 3, NULL), RLX_ERR_FORMAT, "not valid");
  rlx_symtab_free(&t);
}

TEST(limits) {
  rlx_symtab t;
  setup(&t);
  rlx_dim d = P(&t, "s0"), x = P(&t, "s1"), r;
  for (int i = 0; i < RLX_SYM_MAX_DEG - 1; i++) CHECK_OK(rlx_dim_mul(&t, d, P(&t, "s0"), &d));
  CHECK_ERR(rlx_dim_mul(&t, d, x, &r), RLX_ERR_UNSUPPORTED, "too complex");
  int64_t v[2] = {512, 64}; /* 512^8 = 2^72 overflows at evaluation */
  int64_t *av = calloc((size_t)t.n_atoms + 1, 8), *ev = calloc((size_t)t.n_exprs + 1, 8);
  CHECK_ERR(rlx_symtab_eval(&t, v, av, ev), RLX_ERR_SHAPE, "overflows");
  free(av);
  free(ev);
  rlx_symtab c;
  CHECK_OK(rlx_symtab_clone(&t, &c));
  CHECK(P(&c, "s0*s1") == P(&t, "s1*s0")); /* the clone shares the ids */
  rlx_symtab_free(&c);
  rlx_symtab_free(&t);
}

/* Stacked strides fold into one floordiv, as torch writes them (a conv
 * stride 2 then a pool stride 2: floordiv(H - 1, 4) + 1, not nested). */
TEST(nested_floordiv) {
  rlx_symtab t;
  setup(&t);
  rlx_dim h1 = P(&t, "floordiv(s0 - 1, 2) + 1"); /* conv 3x3 s2 p1 */
  rlx_dim h2, tmp;
  CHECK_OK(rlx_dim_add(&t, h1, -1, &tmp)); /* pool 3x3 s2 p1: floordiv(h1 + 2 - 2 - 1, 2) + 1 */
  CHECK_OK(rlx_dim_floordiv(&t, tmp, 2, &h2));
  CHECK_OK(rlx_dim_add(&t, h2, 1, &h2));
  CHECK(h2 == P(&t, "floordiv(s0 - 1, 4) + 1"));
  for (int64_t s = 1; s <= 40; s++) {
    int64_t v[2] = {s, 2}, a = (s - 1) >= 0 ? (s - 1) / 4 + 1 : -((-(s - 1) + 3) / 4) + 1;
    CHECK(E(&t, h2, v) == a);
  }
  rlx_symtab_free(&t);
}

/* Guards decide min and max the bounds cannot: min(s0, s1) is s1 under
 * s1 <= s0 (x[:, :y.shape[1]]). */
TEST(facts_from_guards) {
  rlx_symtab t;
  setup(&t);
  CHECK(rlx_dim_is_sym(P(&t, "min(s0, s1)")) && P(&t, "min(s0, s1)") != P(&t, "s1"));
  CHECK_OK(rlx_sym_assume_nonneg(&t, P(&t, "s0 - s1")));
  CHECK(P(&t, "min(s0, s1)") == P(&t, "s1"));
  CHECK(P(&t, "max(s1 - 3, s0)") == P(&t, "s0")); /* s0 - s1 + 3 >= 0 follows */
  rlx_symtab_free(&t);
}

TEST_MAIN(canonical_equality, floordiv_mod_simplify, evaluation, bounds, text_form, limits, nested_floordiv,
          facts_from_guards)
