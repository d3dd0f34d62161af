/*
 * sym.c — symbolic dims: the symbol table, the canonical form and its
 * arithmetic, bounds, evaluation and copying (all described in sym.h). The
 * text form, parsing and printing, is in sym_text.c.
 *
 * Tables grow by doubling; atoms and expressions are hash-consed (open
 * addressing over ids). `order` records creation order, atoms and
 * expressions interleaved, which is the order evaluation follows.
 */
#include <string.h>

#include "ir/sym.h"

typedef struct poly {
  int32_t n;
  rlx_term t[RLX_SYM_MAX_TERMS];
} poly;

static rlx_status too_complex(void) {
  return rlx_errorf(RLX_ERR_UNSUPPORTED, "a symbolic size is too complex (more than %d terms or %d factors)",
                    RLX_SYM_MAX_TERMS, RLX_SYM_MAX_DEG);
}
static rlx_status overflow(void) {
  return rlx_errorf(RLX_ERR_UNSUPPORTED, "a symbolic size's constant overflows int64");
}

/* ---- saturating arithmetic for bounds ---- */

static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return a > 0 ? INT64_MAX : INT64_MIN;
}
static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}
static void imul(int64_t alo, int64_t ahi, int64_t blo, int64_t bhi, int64_t *lo, int64_t *hi) {
  int64_t c[4] = {sat_mul(alo, blo), sat_mul(alo, bhi), sat_mul(ahi, blo), sat_mul(ahi, bhi)};
  *lo = *hi = c[0];
  for (int i = 1; i < 4; i++) *lo = RLX_MIN(*lo, c[i]), *hi = RLX_MAX(*hi, c[i]);
}

/* Python floor division and modulo; false on b == 0 or INT64_MIN / -1. */
static bool pfloordiv(int64_t a, int64_t b, int64_t *q) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return false;
  int64_t d = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) d--;
  *q = d;
  return true;
}
static bool pmod(int64_t a, int64_t b, int64_t *r) {
  if (b == 0) return false;
  if (b == -1) return *r = 0, true;
  int64_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  *r = m;
  return true;
}

/* ---- tables ---- */

enum { ORD_ATOM = 1 << 30 };

void rlx_symtab_init(rlx_symtab *t) { memset(t, 0, sizeof *t); }

void rlx_symtab_free(rlx_symtab *t) {
  if (!t) return;
  rlx_free(t->syms);
  rlx_free(t->atoms);
  rlx_free(t->terms);
  rlx_free(t->exprs);
  rlx_free(t->sym_atom);
  rlx_free(t->atom_expr);
  rlx_free(t->htab);
  rlx_free(t->atab);
  rlx_free(t->order);
  rlx_free(t->facts);
  rlx_pool_free(&t->pool);
  memset(t, 0, sizeof *t);
}

static rlx_status push_order(rlx_symtab *t, int32_t v) {
  rlx_status st = rlx_grow((void **)&t->order, &t->cap_order, t->n_order + 1, sizeof *t->order);
  if (!st) t->order[t->n_order++] = v;
  return st;
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h;
}

static uint64_t poly_hash(const rlx_term *ts, int32_t n) {
  uint64_t h = 1469598103934665603ull;
  for (int32_t i = 0; i < n; i++) {
    h = mix(h, (uint64_t)ts[i].coef);
    h = mix(h, (uint64_t)ts[i].deg);
    for (int32_t k = 0; k < ts[i].deg; k++) h = mix(h, (uint64_t)ts[i].atoms[k]);
  }
  return h;
}

static bool terms_equal(const rlx_term *a, const rlx_term *b) {
  if (a->coef != b->coef || a->deg != b->deg) return false;
  for (int32_t k = 0; k < a->deg; k++)
    if (a->atoms[k] != b->atoms[k]) return false;
  return true;
}

/* Re-inserts every id of `ids` (n of them) into a table of capacity cap. */
static rlx_status rehash(int32_t **tab, uint32_t *cap, uint32_t need, const uint64_t *hashes, int32_t n) {
  uint32_t nc = *cap ? *cap : 64;
  while (nc < 2 * need) nc *= 2;
  int32_t *nt = rlx_malloc(sizeof(int32_t) * nc);
  if (!nt) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory (symbolic sizes)");
  memset(nt, 0xff, sizeof(int32_t) * nc);
  for (int32_t i = 0; i < n; i++) {
    uint32_t h = (uint32_t)hashes[i] & (nc - 1);
    while (nt[h] >= 0) h = (h + 1) & (nc - 1);
    nt[h] = i;
  }
  rlx_free(*tab);
  *tab = nt;
  *cap = nc;
  return RLX_OK;
}

static uint64_t atom_hash(const rlx_atom *a) {
  return mix(mix(mix(mix(7, (uint64_t)a->kind), (uint64_t)a->sym), (uint64_t)a->a), (uint64_t)a->b);
}

static void term_bounds(const rlx_symtab *t, const rlx_term *tm, int64_t *lo, int64_t *hi) {
  *lo = *hi = tm->coef;
  for (int32_t k = 0; k < tm->deg; k++) {
    const rlx_atom *a = &t->atoms[tm->atoms[k]];
    imul(*lo, *hi, a->lo, a->hi, lo, hi);
  }
}

static rlx_status intern_poly(rlx_symtab *t, const poly *p, rlx_dim *out);

static rlx_status grow_hash_tables(rlx_symtab *t, bool exprs) {
  uint32_t n = exprs ? (uint32_t)t->n_exprs + 1 : (uint32_t)t->n_atoms + 1;
  uint32_t cap = exprs ? t->hcap : t->acap;
  if (cap && 2 * n <= cap) return RLX_OK;
  uint64_t *hs = rlx_malloc(sizeof(uint64_t) * (n ? n : 1));
  if (!hs) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory (symbolic sizes)");
  for (int32_t i = 0; i < (int32_t)n - 1; i++) hs[i] = exprs ? t->exprs[i].hash : atom_hash(&t->atoms[i]);
  rlx_status st = exprs ? rehash(&t->htab, &t->hcap, n, hs, (int32_t)n - 1)
                        : rehash(&t->atab, &t->acap, n, hs, (int32_t)n - 1);
  rlx_free(hs);
  return st;
}

/* The atom (kind, sym, a, b), created with its bounds if new; *id_out. */
static rlx_status intern_atom(rlx_symtab *t, rlx_atom a, int32_t *id_out) {
  rlx_status st = grow_hash_tables(t, false);
  if (st) return st;
  uint64_t h = atom_hash(&a);
  uint32_t i = (uint32_t)h & (t->acap - 1);
  for (; t->atab[i] >= 0; i = (i + 1) & (t->acap - 1)) {
    const rlx_atom *b = &t->atoms[t->atab[i]];
    if (b->kind == a.kind && b->sym == a.sym && b->a == a.a && b->b == a.b) return *id_out = t->atab[i], RLX_OK;
  }
  if (t->n_atoms >= RLX_SYM_MAX_EXPRS) return too_complex();
  if ((st = rlx_grow((void **)&t->atoms, &t->cap_atoms, t->n_atoms + 1, sizeof *t->atoms)) ||
      (st = rlx_grow((void **)&t->atom_expr, &t->cap_atom_expr, t->n_atoms + 1, sizeof *t->atom_expr)))
    return st;
  int32_t id = t->n_atoms++;
  t->atoms[id] = a;
  t->atab[i] = id;
  if ((st = push_order(t, ORD_ATOM | id))) return st;
  poly one = {.n = 1};
  one.t[0] = (rlx_term){.coef = 1, .deg = 1, .atoms = {id}};
  rlx_dim d;
  if ((st = intern_poly(t, &one, &d))) return st;
  t->atom_expr[id] = rlx_dim_expr(d);
  *id_out = id;
  return RLX_OK;
}

static rlx_status intern_poly(rlx_symtab *t, const poly *p, rlx_dim *out) {
  if (p->n == 0) return *out = 0, RLX_OK;
  if (p->n == 1 && p->t[0].deg == 0) {
    if (p->t[0].coef < -((int64_t)1 << 62)) return overflow(); /* keep clear of the symbolic encoding */
    return *out = p->t[0].coef, RLX_OK;
  }
  rlx_status st = grow_hash_tables(t, true);
  if (st) return st;
  uint64_t h = poly_hash(p->t, p->n);
  uint32_t i = (uint32_t)h & (t->hcap - 1);
  for (; t->htab[i] >= 0; i = (i + 1) & (t->hcap - 1)) {
    const rlx_expr *e = &t->exprs[t->htab[i]];
    if (e->hash != h || e->n != p->n) continue;
    bool same = true;
    for (int32_t k = 0; k < p->n && same; k++) same = terms_equal(&t->terms[e->first + k], &p->t[k]);
    if (same) return *out = rlx_dim_of_expr(t->htab[i]), RLX_OK;
  }
  if (t->n_exprs >= RLX_SYM_MAX_EXPRS) return too_complex();
  if ((st = rlx_grow((void **)&t->exprs, &t->cap_exprs, t->n_exprs + 1, sizeof *t->exprs)) ||
      (st = rlx_grow((void **)&t->terms, &t->cap_terms, t->n_terms + p->n, sizeof *t->terms)))
    return st;
  int32_t id = t->n_exprs++;
  rlx_expr *e = &t->exprs[id];
  e->first = t->n_terms, e->n = p->n, e->hash = h, e->lo = 0, e->hi = 0;
  memcpy(&t->terms[t->n_terms], p->t, sizeof(rlx_term) * (size_t)p->n);
  t->n_terms += p->n;
  for (int32_t k = 0; k < p->n; k++) {
    int64_t lo, hi;
    term_bounds(t, &p->t[k], &lo, &hi);
    e->lo = sat_add(e->lo, lo), e->hi = sat_add(e->hi, hi);
  }
  t->htab[i] = id;
  if ((st = push_order(t, id))) return st;
  *out = rlx_dim_of_expr(id);
  return RLX_OK;
}

/* ---- polynomials ---- */

static int term_cmp(const rlx_term *a, const rlx_term *b) {
  if (a->deg != b->deg) return a->deg < b->deg ? -1 : 1;
  for (int32_t k = 0; k < a->deg; k++)
    if (a->atoms[k] != b->atoms[k]) return a->atoms[k] < b->atoms[k] ? -1 : 1;
  return 0;
}

/* Adds c * (term tm's atoms) into p, keeping terms sorted and non-zero. */
static rlx_status poly_add_term(poly *p, const rlx_term *tm, int64_t c) {
  if (c == 0) return RLX_OK;
  int32_t lo = 0, hi = p->n;
  while (lo < hi) {
    int32_t mid = (lo + hi) / 2;
    if (term_cmp(&p->t[mid], tm) < 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo < p->n && term_cmp(&p->t[lo], tm) == 0) {
    if (__builtin_add_overflow(p->t[lo].coef, c, &p->t[lo].coef)) return overflow();
    if (p->t[lo].coef == 0) {
      memmove(&p->t[lo], &p->t[lo + 1], sizeof(rlx_term) * (size_t)(p->n - lo - 1));
      p->n--;
    }
    return RLX_OK;
  }
  if (p->n >= RLX_SYM_MAX_TERMS) return too_complex();
  memmove(&p->t[lo + 1], &p->t[lo], sizeof(rlx_term) * (size_t)(p->n - lo));
  p->t[lo] = *tm;
  p->t[lo].coef = c;
  p->n++;
  return RLX_OK;
}

static void poly_of(const rlx_symtab *t, rlx_dim d, poly *p) {
  p->n = 0;
  RLX_ASSERT(rlx_dim_valid(t, d)); /* callers check dims from files first */
  if (!rlx_dim_is_sym(d)) {
    if (d) p->t[0] = (rlx_term){.coef = d, .deg = 0}, p->n = 1;
    return;
  }
  const rlx_expr *e = &t->exprs[rlx_dim_expr(d)];
  memcpy(p->t, &t->terms[e->first], sizeof(rlx_term) * (size_t)e->n);
  p->n = e->n;
}

static rlx_status atom_dim(rlx_symtab *t, rlx_atom a, rlx_dim *out) {
  int32_t id;
  rlx_status st = intern_atom(t, a, &id);
  if (!st) *out = rlx_dim_of_expr(t->atom_expr[id]);
  return st;
}

/* ---- public: symbols ---- */

rlx_status rlx_sym_declare(rlx_symtab *t, const char *name, int64_t min, int64_t max, int64_t hint,
                           rlx_dim *dim_out) {
  if (!(min >= 0 && min <= hint && hint <= max && max <= RLX_MAX_NUMEL))
    return rlx_errorf(RLX_ERR_FORMAT, "symbol '%s': range [%lld, %lld] with example %lld is not valid "
                      "(0 <= min <= example <= max <= 2^48)", name, (long long)min, (long long)max,
                      (long long)hint);
  if (rlx_sym_find(t, name) >= 0) return rlx_errorf(RLX_ERR_FORMAT, "symbol '%s' is declared twice", name);
  rlx_status st = rlx_grow((void **)&t->syms, &t->cap_syms, t->n_syms + 1, sizeof *t->syms);
  if (!st) st = rlx_grow((void **)&t->sym_atom, &t->cap_sym_atom, t->n_syms + 1, sizeof *t->sym_atom);
  if (st) return st;
  const char *nm = rlx_pool_strdup(&t->pool, name);
  if (!nm) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory (symbolic sizes)");
  int32_t s = t->n_syms++;
  t->syms[s] = (rlx_symbol){nm, min, max, hint};
  rlx_atom a = {.kind = RLX_ATOM_SYM, .sym = s, .lo = min, .hi = max};
  int32_t id;
  if ((st = intern_atom(t, a, &id))) return st;
  t->sym_atom[s] = id;
  if (dim_out) *dim_out = rlx_dim_of_expr(t->atom_expr[id]);
  return RLX_OK;
}

int32_t rlx_sym_find(const rlx_symtab *t, const char *name) {
  for (int32_t i = 0; i < t->n_syms; i++)
    if (!strcmp(t->syms[i].name, name)) return i;
  return -1;
}

int32_t rlx_dim_symbol(const rlx_symtab *t, rlx_dim d) {
  if (!rlx_dim_is_sym(d)) return -1;
  const rlx_expr *e = &t->exprs[rlx_dim_expr(d)];
  if (e->n != 1) return -1;
  const rlx_term *tm = &t->terms[e->first];
  if (tm->coef != 1 || tm->deg != 1 || t->atoms[tm->atoms[0]].kind != RLX_ATOM_SYM) return -1;
  return t->atoms[tm->atoms[0]].sym;
}

/* ---- public: arithmetic ---- */

rlx_status rlx_dim_add(rlx_symtab *t, rlx_dim a, rlx_dim b, rlx_dim *out) {
  if (!rlx_dim_is_sym(a) && !rlx_dim_is_sym(b)) {
    if (__builtin_add_overflow(a, b, out) || *out < -((int64_t)1 << 62)) return overflow();
    return RLX_OK;
  }
  poly p, q;
  poly_of(t, a, &p);
  poly_of(t, b, &q);
  for (int32_t i = 0; i < q.n; i++) {
    rlx_status st = poly_add_term(&p, &q.t[i], q.t[i].coef);
    if (st) return st;
  }
  return intern_poly(t, &p, out);
}

static rlx_status scale(rlx_symtab *t, rlx_dim a, int64_t c, rlx_dim *out) {
  poly p, r = {.n = 0};
  poly_of(t, a, &p);
  for (int32_t i = 0; i < p.n; i++) {
    int64_t v;
    if (__builtin_mul_overflow(p.t[i].coef, c, &v)) return overflow();
    rlx_status st = poly_add_term(&r, &p.t[i], v);
    if (st) return st;
  }
  return intern_poly(t, &r, out);
}

rlx_status rlx_dim_sub(rlx_symtab *t, rlx_dim a, rlx_dim b, rlx_dim *out) {
  if (!rlx_dim_is_sym(a) && !rlx_dim_is_sym(b)) {
    if (__builtin_sub_overflow(a, b, out) || *out < -((int64_t)1 << 62)) return overflow();
    return RLX_OK;
  }
  rlx_dim nb;
  rlx_status st = scale(t, b, -1, &nb);
  return st ? st : rlx_dim_add(t, a, nb, out);
}

rlx_status rlx_dim_mul(rlx_symtab *t, rlx_dim a, rlx_dim b, rlx_dim *out) {
  if (!rlx_dim_is_sym(a) && !rlx_dim_is_sym(b)) {
    if (__builtin_mul_overflow(a, b, out) || *out < -((int64_t)1 << 62)) return overflow();
    return RLX_OK;
  }
  if (!rlx_dim_is_sym(a)) return scale(t, b, a, out);
  if (!rlx_dim_is_sym(b)) return scale(t, a, b, out);
  poly p, q, r = {.n = 0};
  poly_of(t, a, &p);
  poly_of(t, b, &q);
  for (int32_t i = 0; i < p.n; i++)
    for (int32_t j = 0; j < q.n; j++) {
      if (p.t[i].deg + q.t[j].deg > RLX_SYM_MAX_DEG) return too_complex();
      rlx_term m = {.deg = p.t[i].deg + q.t[j].deg};
      int32_t x = 0, y = 0, k = 0; /* merge the sorted atom lists */
      while (x < p.t[i].deg || y < q.t[j].deg)
        m.atoms[k++] = (y >= q.t[j].deg || (x < p.t[i].deg && p.t[i].atoms[x] <= q.t[j].atoms[y]))
                           ? p.t[i].atoms[x++] : q.t[j].atoms[y++];
      int64_t c;
      if (__builtin_mul_overflow(p.t[i].coef, q.t[j].coef, &c)) return overflow();
      rlx_status st = poly_add_term(&r, &m, c);
      if (st) return st;
    }
  return intern_poly(t, &r, out);
}

/* a = c*q + r with every coefficient of r in [0, c) (c > 0). */
static rlx_status split_by(rlx_symtab *t, rlx_dim a, int64_t c, rlx_dim *q, rlx_dim *r) {
  poly p, pq = {.n = 0}, pr = {.n = 0};
  poly_of(t, a, &p);
  for (int32_t i = 0; i < p.n; i++) {
    int64_t d = 0, m = 0;
    pfloordiv(p.t[i].coef, c, &d);
    pmod(p.t[i].coef, c, &m);
    rlx_status st = poly_add_term(&pq, &p.t[i], d);
    if (!st) st = poly_add_term(&pr, &p.t[i], m);
    if (st) return st;
  }
  rlx_status st = intern_poly(t, &pq, q);
  return st ? st : intern_poly(t, &pr, r);
}

/* a = k*b + rem for a constant k and a constant rem in [0, min b), b
 * symbolic and positive: the form a size divided by a size it is a multiple
 * of takes (Swin's padded windows: floordiv(4*h + 4, h + 1)). */
static bool const_multiple(rlx_symtab *t, rlx_dim a, rlx_dim b, int64_t *k, int64_t *rem) {
  int64_t blo, bhi;
  rlx_dim_bounds(t, b, &blo, &bhi);
  if (blo <= 0 || !rlx_dim_is_sym(a)) return false;
  poly pa, pb;
  poly_of(t, a, &pa);
  poly_of(t, b, &pb);
  const rlx_term *lead = NULL;
  for (int32_t i = 0; i < pb.n && !lead; i++)
    if (pb.t[i].deg > 0) lead = &pb.t[i];
  if (!lead) return false;
  for (int32_t i = 0; i < pa.n; i++) {
    const rlx_term *m = &pa.t[i];
    if (m->deg != lead->deg || memcmp(m->atoms, lead->atoms, sizeof(int32_t) * (size_t)m->deg)) continue;
    if (m->coef % lead->coef) return false;
    rlx_dim kb, r;
    *k = m->coef / lead->coef;
    if (scale(t, b, *k, &kb) || rlx_dim_sub(t, a, kb, &r)) {
      rlx_error_clear();
      return false;
    }
    if (rlx_dim_is_sym(r) || r < 0 || r >= blo) return false;
    return *rem = r, true;
  }
  return false;
}

rlx_status rlx_dim_floordiv(rlx_symtab *t, rlx_dim a, rlx_dim b, rlx_dim *out) {
  if (!rlx_dim_is_sym(b)) {
    if (b == 0) return rlx_errorf(RLX_ERR_UNSUPPORTED, "a symbolic size is divided by zero");
    if (!rlx_dim_is_sym(a)) return pfloordiv(a, b, out) ? RLX_OK : overflow();
    if (b == 1) return *out = a, RLX_OK;
    if (b < 0) { /* floor(a / b) = floor(-a / -b) */
      rlx_dim na;
      rlx_status st = scale(t, a, -1, &na);
      return st ? st : rlx_dim_floordiv(t, na, -b, out);
    }
    rlx_dim q, r;
    rlx_status st = split_by(t, a, b, &q, &r);
    if (st) return st;
    int64_t lo, hi;
    rlx_dim_bounds(t, r, &lo, &hi);
    if (lo >= 0 && hi < b) return *out = q, RLX_OK; /* floor(r / b) = 0 */
    /* r = floordiv(x, c) + m: floor((floor(x / c) + m) / b) = floor((x + m c) / (c b)), the form
     * torch writes stacked strides in (a conv then a pool: floordiv(H - 1, 4), not nested) */
    if (rlx_dim_is_sym(r)) {
      const rlx_expr *e = &t->exprs[rlx_dim_expr(r)];
      int64_t m = 0, cb, mc, c = 0;
      rlx_dim x = 0;
      int32_t atoms = 0;
      for (int32_t k = 0; k < e->n; k++) {
        const rlx_term *tm = &t->terms[e->first + k];
        if (tm->deg == 0) m = tm->coef;
        else if (tm->deg == 1 && tm->coef == 1 && t->atoms[tm->atoms[0]].kind == RLX_ATOM_FLOORDIV &&
                 !rlx_dim_is_sym(t->atoms[tm->atoms[0]].b) && t->atoms[tm->atoms[0]].b > 0)
          atoms++, x = t->atoms[tm->atoms[0]].a, c = t->atoms[tm->atoms[0]].b;
        else atoms = 2;
      }
      if (atoms == 1 && !__builtin_mul_overflow(c, b, &cb) && !__builtin_mul_overflow(m, c, &mc)) {
        rlx_dim xm, f;
        st = rlx_dim_add(t, x, mc, &xm);
        if (!st) st = rlx_dim_floordiv(t, xm, cb, &f);
        return st ? st : rlx_dim_add(t, q, f, out);
      }
    }
    if (!rlx_dim_is_sym(r)) { /* a constant remainder */
      int64_t f;
      pfloordiv(r, b, &f);
      return rlx_dim_add(t, q, f, out);
    }
    rlx_atom at = {.kind = RLX_ATOM_FLOORDIV, .a = r, .b = b};
    pfloordiv(lo, b, &at.lo);
    pfloordiv(hi, b, &at.hi);
    rlx_dim f;
    st = atom_dim(t, at, &f);
    return st ? st : rlx_dim_add(t, q, f, out);
  }
  if (a == b) {
    int64_t lo, hi;
    rlx_dim_bounds(t, b, &lo, &hi);
    if (lo > 0) return *out = 1, RLX_OK;
  }
  int64_t k, rem;
  if (const_multiple(t, a, b, &k, &rem)) return *out = k, RLX_OK;
  rlx_atom at = {.kind = RLX_ATOM_FLOORDIV, .a = a, .b = b, .lo = INT64_MIN, .hi = INT64_MAX};
  int64_t alo, ahi, blo, bhi;
  rlx_dim_bounds(t, a, &alo, &ahi);
  rlx_dim_bounds(t, b, &blo, &bhi);
  if (blo > 0 && alo > INT64_MIN && ahi < INT64_MAX) {
    int64_t c[4] = {0, 0, 0, 0};
    pfloordiv(alo, blo, &c[0]), pfloordiv(alo, bhi, &c[1]), pfloordiv(ahi, blo, &c[2]), pfloordiv(ahi, bhi, &c[3]);
    at.lo = at.hi = c[0];
    for (int i = 1; i < 4; i++) at.lo = RLX_MIN(at.lo, c[i]), at.hi = RLX_MAX(at.hi, c[i]);
  }
  return atom_dim(t, at, out);
}

rlx_status rlx_dim_mod(rlx_symtab *t, rlx_dim a, rlx_dim b, rlx_dim *out) {
  if (!rlx_dim_is_sym(b)) {
    if (b == 0) return rlx_errorf(RLX_ERR_UNSUPPORTED, "a symbolic size is taken modulo zero");
    if (!rlx_dim_is_sym(a)) return pmod(a, b, out) ? RLX_OK : overflow();
    if (b == 1 || b == -1) return *out = 0, RLX_OK;
    if (b < 0) { /* a mod b = -((-a) mod -b) */
      rlx_dim na, m;
      rlx_status st = scale(t, a, -1, &na);
      if (!st) st = rlx_dim_mod(t, na, -b, &m);
      return st ? st : scale(t, m, -1, out);
    }
    rlx_dim q, r;
    rlx_status st = split_by(t, a, b, &q, &r);
    if (st) return st;
    if (!rlx_dim_is_sym(r)) return pmod(r, b, out) ? RLX_OK : overflow();
    int64_t lo, hi;
    rlx_dim_bounds(t, r, &lo, &hi);
    if (lo >= 0 && hi < b) return *out = r, RLX_OK;
    rlx_atom at = {.kind = RLX_ATOM_MOD, .a = r, .b = b, .lo = 0, .hi = b - 1};
    return atom_dim(t, at, out);
  }
  int64_t blo, bhi;
  rlx_dim_bounds(t, b, &blo, &bhi);
  if (a == b && blo > 0) return *out = 0, RLX_OK;
  int64_t k, rem;
  if (const_multiple(t, a, b, &k, &rem)) return *out = rem, RLX_OK;
  rlx_atom at = {.kind = RLX_ATOM_MOD, .a = a, .b = b, .lo = INT64_MIN, .hi = INT64_MAX};
  if (blo > 0) at.lo = 0, at.hi = bhi - 1;
  return atom_dim(t, at, out);
}

rlx_status rlx_sym_assume_nonneg(rlx_symtab *t, rlx_dim d) {
  if (!rlx_dim_is_sym(d)) return RLX_OK;
  rlx_status st = rlx_grow((void **)&t->facts, &t->cap_facts, t->n_facts + 1, sizeof *t->facts);
  if (!st) t->facts[t->n_facts++] = d;
  return st;
}

bool rlx_dim_known_nonneg(rlx_symtab *t, rlx_dim d) {
  int64_t lo, hi;
  rlx_dim_bounds(t, d, &lo, &hi);
  if (lo >= 0) return true;
  for (int32_t i = 0; i < t->n_facts; i++) {
    rlx_dim r;
    if (rlx_dim_sub(t, d, t->facts[i], &r) == RLX_OK && !rlx_dim_is_sym(r) && r >= 0) return true;
  }
  return false;
}

static rlx_status minmax(rlx_symtab *t, rlx_dim a, rlx_dim b, bool is_max, rlx_dim *out) {
  if (a == b) return *out = a, RLX_OK;
  rlx_dim d, e;
  rlx_status st = rlx_dim_sub(t, a, b, &d);
  if (!st) st = rlx_dim_sub(t, b, a, &e);
  if (st) return st;
  if (rlx_dim_known_nonneg(t, d)) return *out = is_max ? a : b, RLX_OK; /* a >= b */
  if (rlx_dim_known_nonneg(t, e)) return *out = is_max ? b : a, RLX_OK;
  int64_t alo, ahi, blo, bhi;
  rlx_dim_bounds(t, a, &alo, &ahi);
  rlx_dim_bounds(t, b, &blo, &bhi);
  rlx_atom at = {.kind = is_max ? RLX_ATOM_MAX : RLX_ATOM_MIN, .a = RLX_MIN(a, b), .b = RLX_MAX(a, b)};
  at.lo = is_max ? RLX_MAX(alo, blo) : RLX_MIN(alo, blo);
  at.hi = is_max ? RLX_MAX(ahi, bhi) : RLX_MIN(ahi, bhi);
  return atom_dim(t, at, out);
}

rlx_status rlx_dim_min(rlx_symtab *t, rlx_dim a, rlx_dim b, rlx_dim *out) { return minmax(t, a, b, false, out); }
rlx_status rlx_dim_max(rlx_symtab *t, rlx_dim a, rlx_dim b, rlx_dim *out) { return minmax(t, a, b, true, out); }

bool rlx_dim_valid(const rlx_symtab *t, rlx_dim d) {
  return !rlx_dim_is_sym(d) || (rlx_dim_expr(d) >= 0 && rlx_dim_expr(d) < t->n_exprs);
}

void rlx_dim_bounds(const rlx_symtab *t, rlx_dim d, int64_t *lo, int64_t *hi) {
  if (!rlx_dim_valid(t, d)) { /* never a real dim: unbounded, so no check passes on it */
    *lo = INT64_MIN, *hi = INT64_MAX;
    return;
  }
  if (!rlx_dim_is_sym(d)) {
    *lo = *hi = d;
    return;
  }
  const rlx_expr *e = &t->exprs[rlx_dim_expr(d)];
  *lo = e->lo, *hi = e->hi;
}

/* ---- evaluation ---- */

rlx_status rlx_symtab_eval(const rlx_symtab *t, const int64_t *syms, int64_t *atom_vals, int64_t *expr_vals) {
  for (int32_t o = 0; o < t->n_order; o++) {
    int32_t v = t->order[o];
    if (v & ORD_ATOM) {
      int32_t id = v & ~ORD_ATOM;
      const rlx_atom *a = &t->atoms[id];
      if (a->kind == RLX_ATOM_SYM) {
        atom_vals[id] = syms[a->sym];
        continue;
      }
      int64_t x = rlx_dim_value(a->a, expr_vals), y = rlx_dim_value(a->b, expr_vals), r = 0;
      bool ok = true;
      switch (a->kind) {
        case RLX_ATOM_FLOORDIV: ok = pfloordiv(x, y, &r); break;
        case RLX_ATOM_MOD: ok = pmod(x, y, &r); break;
        case RLX_ATOM_MIN: r = RLX_MIN(x, y); break;
        case RLX_ATOM_MAX: r = RLX_MAX(x, y); break;
        case RLX_ATOM_SYM: break;
      }
      if (!ok) return rlx_errorf(RLX_ERR_SHAPE, "a symbolic size divides %lld by %lld", (long long)x, (long long)y);
      atom_vals[id] = r;
      continue;
    }
    const rlx_expr *e = &t->exprs[v];
    int64_t sum = 0;
    for (int32_t k = 0; k < e->n; k++) {
      const rlx_term *tm = &t->terms[e->first + k];
      int64_t p = tm->coef;
      for (int32_t j = 0; j < tm->deg; j++)
        if (__builtin_mul_overflow(p, atom_vals[tm->atoms[j]], &p))
          return rlx_errorf(RLX_ERR_SHAPE, "a symbolic size overflows int64 for these input shapes");
      if (__builtin_add_overflow(sum, p, &sum))
        return rlx_errorf(RLX_ERR_SHAPE, "a symbolic size overflows int64 for these input shapes");
    }
    expr_vals[v] = sum;
  }
  return RLX_OK;
}

static rlx_status eval_dim(const rlx_symtab *t, rlx_dim d, const int64_t *syms, int depth, int64_t *out);

static rlx_status eval_atom(const rlx_symtab *t, int32_t id, const int64_t *syms, int depth, int64_t *out) {
  const rlx_atom *a = &t->atoms[id];
  if (a->kind == RLX_ATOM_SYM) return *out = syms[a->sym], RLX_OK;
  int64_t x, y;
  rlx_status st = eval_dim(t, a->a, syms, depth + 1, &x);
  if (!st) st = eval_dim(t, a->b, syms, depth + 1, &y);
  if (st) return st;
  bool ok = true;
  switch (a->kind) {
    case RLX_ATOM_FLOORDIV: ok = pfloordiv(x, y, out); break;
    case RLX_ATOM_MOD: ok = pmod(x, y, out); break;
    case RLX_ATOM_MIN: *out = RLX_MIN(x, y); break;
    case RLX_ATOM_MAX: *out = RLX_MAX(x, y); break;
    case RLX_ATOM_SYM: break;
  }
  return ok ? RLX_OK : rlx_errorf(RLX_ERR_SHAPE, "a symbolic size divides %lld by %lld", (long long)x, (long long)y);
}

static rlx_status eval_dim(const rlx_symtab *t, rlx_dim d, const int64_t *syms, int depth, int64_t *out) {
  if (!rlx_dim_is_sym(d)) return *out = d, RLX_OK;
  if (!rlx_dim_valid(t, d) || depth > 64) return rlx_errorf(RLX_ERR_INTERNAL, "a symbolic size is not valid");
  const rlx_expr *e = &t->exprs[rlx_dim_expr(d)];
  int64_t sum = 0;
  for (int32_t k = 0; k < e->n; k++) {
    const rlx_term *tm = &t->terms[e->first + k];
    int64_t p = tm->coef;
    for (int32_t j = 0; j < tm->deg; j++) {
      int64_t v = 0;
      rlx_status st = eval_atom(t, tm->atoms[j], syms, depth, &v);
      if (st) return st;
      if (__builtin_mul_overflow(p, v, &p))
        return rlx_errorf(RLX_ERR_SHAPE, "a symbolic size overflows int64 for these input shapes");
    }
    if (__builtin_add_overflow(sum, p, &sum))
      return rlx_errorf(RLX_ERR_SHAPE, "a symbolic size overflows int64 for these input shapes");
  }
  *out = sum;
  return RLX_OK;
}

rlx_status rlx_dim_eval(const rlx_symtab *t, rlx_dim d, const int64_t *syms, int64_t *out) {
  return eval_dim(t, d, syms, 0, out);
}

int64_t *rlx_symtab_hints(const rlx_symtab *t) {
  int64_t *h = rlx_malloc(sizeof(int64_t) * (size_t)(t->n_syms + 1));
  if (!h) {
    rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory (symbolic sizes)");
    return NULL;
  }
  for (int32_t i = 0; i < t->n_syms; i++) h[i] = t->syms[i].hint;
  return h;
}

/* ---- copying ---- */

#define COPY_ARRAY(field, count, cap)                                                     \
  do {                                                                                    \
    if (src->count) {                                                                     \
      if (rlx_grow((void **)&dst->field, &dst->cap, src->count, sizeof *dst->field)) goto oom; \
      memcpy(dst->field, src->field, sizeof *dst->field * (size_t)src->count);            \
    }                                                                                     \
  } while (0)

rlx_status rlx_symtab_clone(const rlx_symtab *src, rlx_symtab *dst) {
  rlx_symtab_init(dst);
  COPY_ARRAY(syms, n_syms, cap_syms);
  COPY_ARRAY(sym_atom, n_syms, cap_sym_atom);
  COPY_ARRAY(atoms, n_atoms, cap_atoms);
  COPY_ARRAY(atom_expr, n_atoms, cap_atom_expr);
  COPY_ARRAY(terms, n_terms, cap_terms);
  COPY_ARRAY(exprs, n_exprs, cap_exprs);
  COPY_ARRAY(order, n_order, cap_order);
  COPY_ARRAY(facts, n_facts, cap_facts);
  dst->n_syms = src->n_syms, dst->n_atoms = src->n_atoms, dst->n_terms = src->n_terms;
  dst->n_exprs = src->n_exprs, dst->n_order = src->n_order, dst->n_facts = src->n_facts;
  for (int32_t i = 0; i < dst->n_syms; i++)
    if (!(dst->syms[i].name = rlx_pool_strdup(&dst->pool, src->syms[i].name))) goto oom;
  if (src->hcap) {
    if (!(dst->htab = rlx_malloc(sizeof(int32_t) * src->hcap))) goto oom;
    memcpy(dst->htab, src->htab, sizeof(int32_t) * src->hcap);
    dst->hcap = src->hcap;
  }
  if (src->acap) {
    if (!(dst->atab = rlx_malloc(sizeof(int32_t) * src->acap))) goto oom;
    memcpy(dst->atab, src->atab, sizeof(int32_t) * src->acap);
    dst->acap = src->acap;
  }
  return RLX_OK;
oom:
  rlx_symtab_free(dst);
  return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory copying symbolic sizes");
}
