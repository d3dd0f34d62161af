/*
 * sym.h — symbolic dims: integer expressions over the shape symbols of a
 * dynamic export (docs/design.md, "Shapes").
 *
 * A dim is an int64 (rlx_dim). A constant is itself (sizes >= 0; paddings
 * may be negative, down to -2^62). A dim that depends on a symbol is
 * RLX_DIM_SYM_BASE + e, where e indexes an expression of the graph's
 * rlx_symtab. Expressions are kept in a canonical form and hash-consed, so
 * two dims are provably equal exactly when their int64 values are equal:
 * shape code that only copies dims and compares them for equality (as
 * broadcasting and most infer functions do) works on symbolic shapes as it
 * is. Arithmetic goes through rlx_dim_add & co.
 *
 * Canonical form: a polynomial with int64 coefficients over atoms. An atom
 * is a symbol, or an operation the polynomial cannot express — floordiv,
 * mod, min, max — over canonical operands. Terms are sorted; a polynomial
 * that is a constant is returned as a constant dim, never as an expression.
 * Simplifications: constant folding, exact division of a polynomial by a
 * constant, floordiv/mod by a constant c of a polynomial whose remainder part
 * provably lies in [0, c), min/max decided by the operands' bounds.
 *
 * Bounds: every symbol has a range [min, max]; every atom and expression
 * gets conservative interval bounds, used to decide comparisons (slice ends,
 * min/max) at compile time and to size memory for the largest binding.
 *
 * Evaluation: rlx_symtab_eval computes every atom and expression for one
 * binding of the symbols, in creation order (operands are always created
 * before their users), with overflow-checked arithmetic.
 *
 * Grammar of the text form (torch-ir.json "sym_shape" entries, symbol
 * ranges, guards), parsed by rlx_sym_parse:
 *
 *   expr   := term (('+' | '-') term)*
 *   term   := unary ('*' unary)*
 *   unary  := '-' unary | atom
 *   atom   := INT | NAME | '(' expr ')'
 *           | ('floordiv' | 'mod' | 'min' | 'max') '(' expr ',' expr ')'
 *
 * NAME is a declared symbol ([A-Za-z_][A-Za-z0-9_]*). floordiv and mod are
 * Python's (floor toward -inf; the remainder has the divisor's sign), as in
 * torch's sympy FloorDiv and Mod.
 */
#ifndef RLX_SYM_H
#define RLX_SYM_H

#include "core/core.h"

typedef int64_t rlx_dim;

#define RLX_DIM_SYM_BASE INT64_MIN
#define RLX_SYM_MAX_EXPRS (1 << 30)
#define RLX_SYM_MAX_DEG 8     /* atoms in one term */
#define RLX_SYM_MAX_TERMS 64  /* terms in one expression */

static inline bool rlx_dim_is_sym(rlx_dim d) { return d < RLX_DIM_SYM_BASE + RLX_SYM_MAX_EXPRS; }
static inline int32_t rlx_dim_expr(rlx_dim d) { return (int32_t)(d - RLX_DIM_SYM_BASE); }
static inline rlx_dim rlx_dim_of_expr(int32_t e) { return RLX_DIM_SYM_BASE + e; }

struct rlx_symtab;
/* Whether d is a constant or names an existing expression of t (a value
 * read from a file can fall in the symbolic range: never trust one). */
bool rlx_dim_valid(const struct rlx_symtab *t, rlx_dim d);

typedef struct rlx_symbol {
  const char *name;
  int64_t min, max; /* inclusive range */
  int64_t hint;     /* the export's example value */
} rlx_symbol;

typedef enum rlx_atom_kind {
  RLX_ATOM_SYM,
  RLX_ATOM_FLOORDIV,
  RLX_ATOM_MOD,
  RLX_ATOM_MIN,
  RLX_ATOM_MAX
} rlx_atom_kind;

typedef struct rlx_atom {
  rlx_atom_kind kind;
  int32_t sym;       /* RLX_ATOM_SYM */
  rlx_dim a, b;      /* operands of the others */
  int64_t lo, hi;    /* bounds */
} rlx_atom;

typedef struct rlx_term {
  int64_t coef;
  int32_t deg;
  int32_t atoms[RLX_SYM_MAX_DEG]; /* sorted ascending, repeated for powers */
} rlx_term;

typedef struct rlx_expr {
  int32_t first, n; /* its terms in the term table */
  uint64_t hash;
  int64_t lo, hi;   /* bounds */
} rlx_expr;

typedef struct rlx_symtab {
  rlx_pool pool; /* symbol names */
  rlx_symbol *syms;
  int32_t n_syms, cap_syms;
  rlx_atom *atoms;
  int32_t n_atoms, cap_atoms;
  rlx_term *terms;
  int32_t n_terms, cap_terms;
  rlx_expr *exprs;
  int32_t n_exprs, cap_exprs;
  int32_t *sym_atom;  /* per symbol: its atom */
  int32_t cap_sym_atom;
  int32_t *atom_expr; /* per atom: the expression 1*atom */
  int32_t cap_atom_expr;
  int32_t *order;     /* creation order: expression ids, atom ids | 2^30 */
  int32_t n_order, cap_order;
  int32_t *htab;      /* expression hash table (ids, -1 empty) */
  uint32_t hcap;
  int32_t *atab;      /* atom hash table */
  uint32_t acap;
  rlx_dim *facts;     /* dims known to be >= 0 at every valid binding (from guards) */
  int32_t n_facts, cap_facts;
} rlx_symtab;

void rlx_symtab_init(rlx_symtab *t);
void rlx_symtab_free(rlx_symtab *t);
rlx_status rlx_symtab_clone(const rlx_symtab *src, rlx_symtab *dst);

/* Declares a symbol with range [min, max] (1 <= min <= hint <= max <=
 * RLX_MAX_NUMEL); *dim_out is the dim that is exactly the symbol. */
rlx_status rlx_sym_declare(rlx_symtab *t, const char *name, int64_t min, int64_t max, int64_t hint,
                           rlx_dim *dim_out);
/* The index of a declared symbol, or -1. */
int32_t rlx_sym_find(const rlx_symtab *t, const char *name);
/* The symbol index when d is exactly one symbol (1 * s), else -1. */
int32_t rlx_dim_symbol(const rlx_symtab *t, rlx_dim d);

/* Arithmetic; each folds constants and keeps the canonical form. Errors
 * (RLX_ERR_UNSUPPORTED): an overflowing constant, an expression past
 * RLX_SYM_MAX_TERMS or RLX_SYM_MAX_DEG, division by a constant 0. */
rlx_status rlx_dim_add(rlx_symtab *t, rlx_dim a, rlx_dim b, rlx_dim *out);
rlx_status rlx_dim_sub(rlx_symtab *t, rlx_dim a, rlx_dim b, rlx_dim *out);
rlx_status rlx_dim_mul(rlx_symtab *t, rlx_dim a, rlx_dim b, rlx_dim *out);
rlx_status rlx_dim_floordiv(rlx_symtab *t, rlx_dim a, rlx_dim b, rlx_dim *out);
rlx_status rlx_dim_mod(rlx_symtab *t, rlx_dim a, rlx_dim b, rlx_dim *out);
rlx_status rlx_dim_min(rlx_symtab *t, rlx_dim a, rlx_dim b, rlx_dim *out);
rlx_status rlx_dim_max(rlx_symtab *t, rlx_dim a, rlx_dim b, rlx_dim *out);

/* Records that d >= 0 at every binding the program accepts (a guard): min
 * and max use it to decide, e.g. min(seq, t) = t under t <= seq. */
rlx_status rlx_sym_assume_nonneg(rlx_symtab *t, rlx_dim d);
/* Whether d >= 0 is known: from its bounds, or a recorded fact f with d - f
 * a constant >= 0. */
bool rlx_dim_known_nonneg(rlx_symtab *t, rlx_dim d);

/* Conservative bounds of d over every binding within the symbols' ranges. */
void rlx_dim_bounds(const rlx_symtab *t, rlx_dim d, int64_t *lo, int64_t *hi);

/* Parses the text form (grammar above); names must be declared symbols.
 * Errors (RLX_ERR_FORMAT) give the byte offset. */
rlx_status rlx_sym_parse(rlx_symtab *t, const char *text, rlx_dim *out);
/* The text form of d into buf (always NUL-terminated); returns buf. */
char *rlx_dim_str(const rlx_symtab *t, rlx_dim d, char *buf, size_t cap);

/* Evaluates every atom and expression for symbol values `syms` (one per
 * symbol) into atom_vals (n_atoms) and expr_vals (n_exprs). Errors
 * (RLX_ERR_SHAPE): an overflow, a division by zero. */
rlx_status rlx_symtab_eval(const rlx_symtab *t, const int64_t *syms, int64_t *atom_vals,
                           int64_t *expr_vals);
/* The value of one dim for symbol values `syms` (no tables needed; for
 * checks at load). Errors as rlx_symtab_eval. */
rlx_status rlx_dim_eval(const rlx_symtab *t, rlx_dim d, const int64_t *syms, int64_t *out);
/* The symbols' hints, as an array for rlx_dim_eval (rlx_malloc'd; NULL with
 * an error set on OOM; a table without symbols gives a 1-entry array). */
int64_t *rlx_symtab_hints(const rlx_symtab *t);

/* The value of d after rlx_symtab_eval. */
static inline int64_t rlx_dim_value(rlx_dim d, const int64_t *expr_vals) {
  return rlx_dim_is_sym(d) ? expr_vals[rlx_dim_expr(d)] : d;
}

#endif /* RLX_SYM_H */
