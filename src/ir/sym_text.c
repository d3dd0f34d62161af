/*
 * sym_text.c — the text form of symbolic dims: rlx_sym_parse, a recursive
 * descent parser of the grammar in sym.h, and rlx_dim_str, its printer.
 *
 * Both need only sym.h: the parser builds dims with rlx_dim_add & co., so
 * they arrive canonical and hash-consed, and the printer reads the tables
 * sym.h lays out; sym.c owns those tables. Nesting is bounded (64 levels
 * parsing, 16 printing) so hostile text cannot exhaust the stack.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/sym.h"

/* ---- parsing ---- */

typedef struct parser {
  rlx_symtab *t;
  const char *s, *p;
  int depth;
} parser;

static void skip(parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t') ps->p++;
}

static rlx_status perr(parser *ps, const char *what) {
  return rlx_errorf(RLX_ERR_FORMAT, "symbolic size \"%.120s\": %s at offset %d", ps->s, what, (int)(ps->p - ps->s));
}

static rlx_status p_expr(parser *ps, rlx_dim *out);

static rlx_status p_atom(parser *ps, rlx_dim *out) {
  skip(ps);
  const char *p = ps->p;
  if (*p >= '0' && *p <= '9') {
    int64_t v = 0;
    while (*ps->p >= '0' && *ps->p <= '9') {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *ps->p - '0', &v) ||
          v > ((int64_t)1 << 62))
        return perr(ps, "an integer too large");
      ps->p++;
    }
    return *out = v, RLX_OK;
  }
  if (*p == '(') {
    ps->p++;
    rlx_status st = p_expr(ps, out);
    if (st) return st;
    skip(ps);
    if (*ps->p != ')') return perr(ps, "')' expected");
    ps->p++;
    return RLX_OK;
  }
  if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_')) return perr(ps, "a value expected");
  const char *q = p;
  while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_') q++;
  char name[64];
  if (q - p >= (long)sizeof name) return perr(ps, "a name too long");
  memcpy(name, p, (size_t)(q - p));
  name[q - p] = '\0';
  ps->p = q;
  static const char *fns[] = {"floordiv", "mod", "min", "max"};
  for (int f = 0; f < 4; f++) {
    if (strcmp(name, fns[f])) continue;
    skip(ps);
    if (*ps->p != '(') return perr(ps, "'(' expected");
    ps->p++;
    rlx_dim a, b;
    rlx_status st = p_expr(ps, &a);
    if (st) return st;
    skip(ps);
    if (*ps->p != ',') return perr(ps, "',' expected");
    ps->p++;
    if ((st = p_expr(ps, &b))) return st;
    skip(ps);
    if (*ps->p != ')') return perr(ps, "')' expected");
    ps->p++;
    switch (f) {
      case 0: st = rlx_dim_floordiv(ps->t, a, b, out); break;
      case 1: st = rlx_dim_mod(ps->t, a, b, out); break;
      case 2: st = rlx_dim_min(ps->t, a, b, out); break;
      default: st = rlx_dim_max(ps->t, a, b, out); break;
    }
    if (st) rlx_error_prefix("symbolic size \"%.120s\": ", ps->s);
    return st;
  }
  int32_t s = rlx_sym_find(ps->t, name);
  if (s < 0) {
    ps->p = p;
    return perr(ps, "an undeclared symbol");
  }
  *out = rlx_dim_of_expr(ps->t->atom_expr[ps->t->sym_atom[s]]);
  return RLX_OK;
}

static rlx_status p_unary(parser *ps, rlx_dim *out) {
  skip(ps);
  if (*ps->p == '-') {
    ps->p++;
    if (++ps->depth > 64) return perr(ps, "nesting too deep");
    rlx_dim a;
    rlx_status st = p_unary(ps, &a);
    ps->depth--;
    return st ? st : rlx_dim_sub(ps->t, 0, a, out);
  }
  if (++ps->depth > 64) return perr(ps, "nesting too deep");
  rlx_status st = p_atom(ps, out);
  ps->depth--;
  return st;
}

static rlx_status p_term(parser *ps, rlx_dim *out) {
  rlx_status st = p_unary(ps, out);
  for (;;) {
    if (st) return st;
    skip(ps);
    if (*ps->p != '*') return RLX_OK;
    ps->p++;
    rlx_dim b;
    if ((st = p_unary(ps, &b))) return st;
    st = rlx_dim_mul(ps->t, *out, b, out);
  }
}

static rlx_status p_expr(parser *ps, rlx_dim *out) {
  rlx_status st = p_term(ps, out);
  for (;;) {
    if (st) return st;
    skip(ps);
    char op = *ps->p;
    if (op != '+' && op != '-') return RLX_OK;
    ps->p++;
    rlx_dim b;
    if ((st = p_term(ps, &b))) return st;
    st = op == '+' ? rlx_dim_add(ps->t, *out, b, out) : rlx_dim_sub(ps->t, *out, b, out);
  }
}

rlx_status rlx_sym_parse(rlx_symtab *t, const char *text, rlx_dim *out) {
  parser ps = {.t = t, .s = text, .p = text};
  rlx_dim d;
  rlx_status st = p_expr(&ps, &d);
  if (st) return st;
  skip(&ps);
  if (*ps.p) return perr(&ps, "unexpected text");
  *out = d;
  return RLX_OK;
}

/* ---- printing ---- */

static void bput(char *buf, size_t cap, size_t *n, const char *fmt, ...) RLX_PRINTF(4, 5);
static void bput(char *buf, size_t cap, size_t *n, const char *fmt, ...) {
  if (*n + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(buf + *n, cap - *n, fmt, ap);
  va_end(ap);
  if (w > 0) *n = RLX_MIN(cap - 1, *n + (size_t)w);
}

static void dim_str(const rlx_symtab *t, rlx_dim d, char *buf, size_t cap, size_t *n, int depth);

static void atom_str(const rlx_symtab *t, int32_t id, char *buf, size_t cap, size_t *n, int depth) {
  const rlx_atom *a = &t->atoms[id];
  if (a->kind == RLX_ATOM_SYM) {
    bput(buf, cap, n, "%s", t->syms[a->sym].name);
    return;
  }
  static const char *names[] = {"", "floordiv", "mod", "min", "max"};
  bput(buf, cap, n, "%s(", names[a->kind]);
  dim_str(t, a->a, buf, cap, n, depth + 1);
  bput(buf, cap, n, ", ");
  dim_str(t, a->b, buf, cap, n, depth + 1);
  bput(buf, cap, n, ")");
}

static void dim_str(const rlx_symtab *t, rlx_dim d, char *buf, size_t cap, size_t *n, int depth) {
  if (!rlx_dim_is_sym(d)) {
    bput(buf, cap, n, "%lld", (long long)d);
    return;
  }
  if (depth > 16) {
    bput(buf, cap, n, "...");
    return;
  }
  const rlx_expr *e = &t->exprs[rlx_dim_expr(d)];
  /* highest degree first reads naturally: 2*s0 + 1 */
  for (int32_t k = e->n - 1; k >= 0; k--) {
    const rlx_term *tm = &t->terms[e->first + k];
    int64_t c = tm->coef;
    bool first = k == e->n - 1;
    if (!first) bput(buf, cap, n, c < 0 ? " - " : " + ");
    else if (c < 0) bput(buf, cap, n, "-");
    uint64_t ac = c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c;
    if (tm->deg == 0 || ac != 1) bput(buf, cap, n, "%llu%s", (unsigned long long)ac, tm->deg ? "*" : "");
    for (int32_t j = 0; j < tm->deg; j++) {
      if (j) bput(buf, cap, n, "*");
      atom_str(t, tm->atoms[j], buf, cap, n, depth);
    }
  }
}

char *rlx_dim_str(const rlx_symtab *t, rlx_dim d, char *buf, size_t cap) {
  size_t n = 0;
  if (!cap) return buf;
  buf[0] = '\0';
  dim_str(t, d, buf, cap, &n, 0);
  return buf;
}
