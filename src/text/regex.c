/*
 * regex.c — the tokenizer's regex engine (see regex.h).
 *
 * A pattern is parsed into a tree (re_node, first-child/next-sibling), then
 * compiled to a program for a backtracking VM in the style of Pike and
 * Thompson's: CHAR, ANY, CLASS, SPLIT (try x, on failure y), JMP, LOOK (run
 * the sub-program that follows; continue after it when it matched, or did
 * not for a negative lookahead), anchors and MATCH. Counted repetition is
 * unrolled. The VM keeps an explicit stack of (pc, position) choices, so a
 * long run of whitespace under \s+ costs heap, not C stack.
 */
#include <string.h>

#include "text/regex.h"
#include "text/unicode.h"

#define RE_MAX_PATTERN 4096 /* code points */
#define RE_MAX_PROG 65536   /* instructions, after unrolling {m,n} */
#define RE_MAX_DEPTH 64     /* nesting of groups */

/* ---- classes ---- */

enum { CI_RANGE, CI_CATS, CI_SPACE, CI_WORD };

typedef struct re_item {
  uint8_t kind, neg;
  uint32_t lo, hi; /* CI_RANGE */
  uint32_t cats;   /* CI_CATS: a mask of 1 << rlx_uc_cat */
} re_item;

typedef struct re_class {
  int32_t first, count; /* into rlx_regex.items */
  bool neg, icase;
} re_class;

/* ---- tree ---- */

enum { N_EMPTY, N_CHAR, N_ANY, N_CLASS, N_CAT, N_ALT, N_REPEAT, N_LOOK, N_BOL, N_EOL, N_BOS, N_EOS, N_EOSNL };

typedef struct re_node {
  uint8_t kind, icase, neg, greedy;
  uint32_t c;       /* N_CHAR: the code point; N_CLASS: the class index */
  int32_t min, max; /* N_REPEAT; max < 0: unbounded */
  int32_t kid, next;
} re_node;

/* ---- program ---- */

enum { OP_CHAR, OP_CHARI, OP_ANY, OP_CLASS, OP_SPLIT, OP_JMP, OP_LOOK, OP_BOL, OP_EOL, OP_BOS, OP_EOS,
       OP_EOSNL, OP_MATCH };

typedef struct re_inst {
  uint8_t op, neg;
  uint32_t c;   /* CHAR: code point; CLASS: class index */
  int32_t x, y; /* SPLIT: first and second choice; JMP: x; LOOK: x = the pc after the body */
} re_inst;

struct rlx_regex {
  re_item *items;
  re_class *classes;
  re_inst *prog;
  int32_t n_items, cap_items, n_classes, cap_classes, n_prog, cap_prog;
};

/* ---- parser ---- */

typedef struct re_parser {
  const uint32_t *p;
  int32_t n, i;
  re_node *nodes;
  int32_t n_nodes, cap_nodes;
  rlx_regex *re;
  const char *where;
  int depth;
} re_parser;

static rlx_status perr(re_parser *ps, rlx_status s, const char *what) {
  return rlx_errorf(s, "%s: regex %s at offset %d", ps->where, what, ps->i);
}

static int32_t new_node(re_parser *ps, int kind) {
  if (rlx_grow((void **)&ps->nodes, &ps->cap_nodes, ps->n_nodes + 1, sizeof *ps->nodes)) return -1;
  re_node *nd = &ps->nodes[ps->n_nodes];
  memset(nd, 0, sizeof *nd);
  nd->kind = (uint8_t)kind;
  nd->kid = nd->next = -1;
  return ps->n_nodes++;
}

static bool at(const re_parser *ps, uint32_t c) { return ps->i < ps->n && ps->p[ps->i] == c; }

static int hexval(uint32_t c) {
  return c >= '0' && c <= '9' ? (int)c - '0' : (c | 32) >= 'a' && (c | 32) <= 'f' ? (int)(c | 32) - 'a' + 10 : -1;
}

static rlx_status add_item(re_parser *ps, re_item it) {
  rlx_regex *re = ps->re;
  rlx_status st = rlx_grow((void **)&re->items, &re->cap_items, re->n_items + 1, sizeof *re->items);
  if (st) return st;
  re->items[re->n_items++] = it;
  return RLX_OK;
}

/* The mask of a category name: "L", "Lu", "N", "Nd", ... (also "Letter"-free
 * forms only; Oniguruma's long names and scripts are refused). */
static bool cat_mask(const uint32_t *name, int len, uint32_t *mask) {
  static const char *const names[RLX_UC_CAT_COUNT] = {
      "Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps",
      "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"};
  if (len < 1 || len > 2) return false;
  uint32_t m = 0;
  for (int k = 0; k < RLX_UC_CAT_COUNT; k++) {
    if ((uint32_t)names[k][0] != name[0]) continue;
    if (len == 1 || (uint32_t)names[k][1] == name[1]) m |= 1u << k;
  }
  *mask = m;
  return m != 0;
}

/* After a backslash: a class escape (\p{..} \s \d \w and negations), as an
 * item. Returns 1 if it was one, 0 if not (ps->i unchanged), or -1 on error. */
static int class_escape(re_parser *ps, re_item *it) {
  uint32_t e = ps->p[ps->i];
  memset(it, 0, sizeof *it);
  switch (e) {
    case 's': case 'S': it->kind = CI_SPACE; it->neg = e == 'S'; ps->i++; return 1;
    case 'w': case 'W': it->kind = CI_WORD; it->neg = e == 'W'; ps->i++; return 1;
    case 'd': case 'D': it->kind = CI_CATS; it->cats = 1u << RLX_UC_ND; it->neg = e == 'D'; ps->i++; return 1;
    case 'p': case 'P': {
      ps->i++;
      if (!at(ps, '{')) return perr(ps, RLX_ERR_UNSUPPORTED, "\\p without {...}"), -1;
      int32_t s = ++ps->i;
      while (ps->i < ps->n && ps->p[ps->i] != '}') ps->i++;
      if (ps->i >= ps->n) return perr(ps, RLX_ERR_FORMAT, "unterminated \\p{"), -1;
      const uint32_t *name = ps->p + s;
      int len = ps->i - s;
      bool neg = e == 'P';
      if (len > 0 && name[0] == '^') neg = !neg, name++, len--;
      it->kind = CI_CATS;
      it->neg = neg;
      if (!cat_mask(name, len, &it->cats))
        return perr(ps, RLX_ERR_UNSUPPORTED, "property (only general categories such as \\p{L}, \\p{Nd})"), -1;
      ps->i++;
      return 1;
    }
    default: return 0;
  }
}

/* After a backslash: a literal escape. Returns the code point, or -1. */
static int64_t literal_escape(re_parser *ps) {
  uint32_t e = ps->p[ps->i++];
  switch (e) {
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'f': return '\f';
    case 'v': return '\v';
    case 'a': return 7;
    case 'e': return 27;
    case '0': return 0;
    case 'x': case 'u': {
      int64_t v = 0;
      if (e == 'x' && at(ps, '{')) {
        ps->i++;
        int k = 0;
        while (ps->i < ps->n && ps->p[ps->i] != '}' && k < 8 && hexval(ps->p[ps->i]) >= 0)
          v = v * 16 + hexval(ps->p[ps->i++]), k++;
        if (!at(ps, '}') || k == 0) return perr(ps, RLX_ERR_FORMAT, "bad \\x{...}"), -1;
        ps->i++;
      } else {
        int want = e == 'x' ? 2 : 4;
        for (int k = 0; k < want; k++) {
          if (ps->i >= ps->n || hexval(ps->p[ps->i]) < 0) return perr(ps, RLX_ERR_FORMAT, "bad hex escape"), -1;
          v = v * 16 + hexval(ps->p[ps->i++]);
        }
      }
      if (v > 0x10FFFF) return perr(ps, RLX_ERR_FORMAT, "escape past U+10FFFF"), -1;
      return v;
    }
    default:
      if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '1' && e <= '9')) {
        ps->i--;
        return perr(ps, RLX_ERR_UNSUPPORTED, "escape (backreference, \\b, \\k, or an unknown letter)"), -1;
      }
      return e; /* an escaped punctuation character stands for itself */
  }
}

static int32_t parse_class(re_parser *ps, bool icase) {
  ps->i++; /* [ */
  re_class cl = {.first = ps->re->n_items, .icase = icase};
  if (at(ps, '^')) cl.neg = true, ps->i++;
  bool first = true;
  while (ps->i < ps->n && (first || ps->p[ps->i] != ']')) {
    first = false;
    uint32_t c = ps->p[ps->i];
    re_item it;
    if (c == '[') return perr(ps, RLX_ERR_UNSUPPORTED, "nested class or POSIX bracket"), -1;
    if (c == '&' && ps->i + 1 < ps->n && ps->p[ps->i + 1] == '&')
      return perr(ps, RLX_ERR_UNSUPPORTED, "class intersection &&"), -1;
    int64_t lo;
    if (c == '\\') {
      ps->i++;
      if (ps->i >= ps->n) return perr(ps, RLX_ERR_FORMAT, "trailing backslash"), -1;
      int r = class_escape(ps, &it);
      if (r < 0) return -1;
      if (r) {
        if (add_item(ps, it)) return -1;
        continue;
      }
      lo = literal_escape(ps);
      if (lo < 0) return -1;
    } else {
      lo = c;
      ps->i++;
    }
    int64_t hi = lo;
    if (at(ps, '-') && ps->i + 1 < ps->n && ps->p[ps->i + 1] != ']') {
      ps->i++;
      if (ps->p[ps->i] == '\\') {
        ps->i++;
        if (ps->i >= ps->n) return perr(ps, RLX_ERR_FORMAT, "trailing backslash"), -1;
        hi = literal_escape(ps);
        if (hi < 0) return -1;
      } else {
        hi = ps->p[ps->i++];
      }
      if (hi < lo) return perr(ps, RLX_ERR_FORMAT, "class range out of order"), -1;
    }
    it = (re_item){.kind = CI_RANGE, .lo = (uint32_t)lo, .hi = (uint32_t)hi};
    if (add_item(ps, it)) return -1;
  }
  if (!at(ps, ']')) return perr(ps, RLX_ERR_FORMAT, "unterminated class"), -1;
  ps->i++;
  cl.count = ps->re->n_items - cl.first;
  rlx_regex *re = ps->re;
  if (rlx_grow((void **)&re->classes, &re->cap_classes, re->n_classes + 1, sizeof *re->classes)) return -1;
  re->classes[re->n_classes] = cl;
  int32_t nd = new_node(ps, N_CLASS);
  if (nd < 0) return -1;
  ps->nodes[nd].c = (uint32_t)re->n_classes++;
  return nd;
}

static int32_t parse_alt(re_parser *ps, bool *icase);

/* One group, after its '('. */
static int32_t parse_group(re_parser *ps, bool *icase) {
  bool inner_icase = *icase;
  int kind = N_CAT, neg = 0;
  if (at(ps, '?')) {
    ps->i++;
    if (at(ps, ':')) ps->i++;
    else if (at(ps, '!') || at(ps, '=')) kind = N_LOOK, neg = at(ps, '!'), ps->i++;
    else if (at(ps, 'i') || at(ps, '-')) {
      bool on = !at(ps, '-');
      if (!on) ps->i++;
      if (!at(ps, 'i')) return perr(ps, RLX_ERR_UNSUPPORTED, "group option (only (?i) and (?-i))"), -1;
      ps->i++;
      if (at(ps, ')')) { /* (?i) applies to the rest of the enclosing group */
        ps->i++;
        *icase = on;
        return new_node(ps, N_EMPTY);
      }
      if (!at(ps, ':')) return perr(ps, RLX_ERR_UNSUPPORTED, "group option (only (?i) and (?-i))"), -1;
      ps->i++;
      inner_icase = on;
    } else {
      return perr(ps, RLX_ERR_UNSUPPORTED, "group kind (lookbehind, named, atomic or conditional)"), -1;
    }
  }
  if (++ps->depth > RE_MAX_DEPTH) return perr(ps, RLX_ERR_UNSUPPORTED, "nesting deeper than 64 groups"), -1;
  int32_t body = parse_alt(ps, &inner_icase);
  ps->depth--;
  if (body < 0) return -1;
  if (!at(ps, ')')) return perr(ps, RLX_ERR_FORMAT, "missing ')'"), -1;
  ps->i++;
  if (kind == N_CAT) return body;
  int32_t nd = new_node(ps, N_LOOK);
  if (nd < 0) return -1;
  ps->nodes[nd].neg = (uint8_t)neg;
  ps->nodes[nd].kid = body;
  return nd;
}

static int32_t parse_atom(re_parser *ps, bool *icase) {
  uint32_t c = ps->p[ps->i];
  int32_t nd;
  switch (c) {
    case '(': ps->i++; return parse_group(ps, icase);
    case '[': return parse_class(ps, *icase);
    case '.': ps->i++; return new_node(ps, N_ANY);
    case '^': ps->i++; return new_node(ps, N_BOL);
    case '$': ps->i++; return new_node(ps, N_EOL);
    case '*': case '+': case '?': case '{': return perr(ps, RLX_ERR_FORMAT, "quantifier without an operand"), -1;
    case '\\': {
      ps->i++;
      if (ps->i >= ps->n) return perr(ps, RLX_ERR_FORMAT, "trailing backslash"), -1;
      uint32_t e = ps->p[ps->i];
      if (e == 'A' || e == 'z' || e == 'Z') {
        ps->i++;
        return new_node(ps, e == 'A' ? N_BOS : e == 'z' ? N_EOS : N_EOSNL);
      }
      re_item it;
      int r = class_escape(ps, &it);
      if (r < 0) return -1;
      if (r) {
        rlx_regex *re = ps->re;
        re_class cl = {.first = re->n_items, .count = 1, .icase = *icase};
        if (add_item(ps, it)) return -1;
        if (rlx_grow((void **)&re->classes, &re->cap_classes, re->n_classes + 1, sizeof *re->classes)) return -1;
        re->classes[re->n_classes] = cl;
        nd = new_node(ps, N_CLASS);
        if (nd < 0) return -1;
        ps->nodes[nd].c = (uint32_t)re->n_classes++;
        return nd;
      }
      int64_t v = literal_escape(ps);
      if (v < 0) return -1;
      c = (uint32_t)v;
      break;
    }
    default: ps->i++; break;
  }
  nd = new_node(ps, N_CHAR);
  if (nd < 0) return -1;
  ps->nodes[nd].c = c;
  ps->nodes[nd].icase = *icase;
  return nd;
}

static bool parse_count(re_parser *ps, int32_t *v) {
  int32_t s = ps->i;
  int64_t x = 0;
  while (ps->i < ps->n && ps->p[ps->i] >= '0' && ps->p[ps->i] <= '9') {
    x = x * 10 + (ps->p[ps->i++] - '0');
    if (x > 1000) return false;
  }
  *v = (int32_t)x;
  return ps->i > s;
}

/* The nullable test: whether the node can match the empty string. */
static bool nullable(const re_parser *ps, int32_t nd) {
  const re_node *n = &ps->nodes[nd];
  switch (n->kind) {
    case N_CHAR: case N_ANY: case N_CLASS: return false;
    case N_CAT:
      for (int32_t k = n->kid; k >= 0; k = ps->nodes[k].next)
        if (!nullable(ps, k)) return false;
      return true;
    case N_ALT:
      for (int32_t k = n->kid; k >= 0; k = ps->nodes[k].next)
        if (nullable(ps, k)) return true;
      return false;
    case N_REPEAT: return n->min == 0 || nullable(ps, n->kid);
    default: return true;
  }
}

static int32_t parse_quant(re_parser *ps, bool *icase) {
  int32_t atom = parse_atom(ps, icase);
  if (atom < 0) return -1;
  while (ps->i < ps->n) {
    uint32_t c = ps->p[ps->i];
    int32_t min, max;
    if (c == '*') min = 0, max = -1;
    else if (c == '+') min = 1, max = -1;
    else if (c == '?') min = 0, max = 1;
    else if (c == '{') {
      int32_t save = ps->i++;
      if (!parse_count(ps, &min)) { /* not a counted repetition: a literal '{' (as Oniguruma) */
        ps->i = save;
        break;
      }
      max = min;
      if (at(ps, ',')) {
        ps->i++;
        if (!parse_count(ps, &max)) max = -1;
      }
      if (!at(ps, '}')) return perr(ps, RLX_ERR_UNSUPPORTED, "repetition count (over 1000, or malformed)"), -1;
      if (max >= 0 && max < min) return perr(ps, RLX_ERR_FORMAT, "repetition {m,n} with n < m"), -1;
    } else break;
    ps->i++;
    bool greedy = true;
    if (at(ps, '?')) greedy = false, ps->i++;
    else if (at(ps, '+')) return perr(ps, RLX_ERR_UNSUPPORTED, "possessive quantifier"), -1;
    if (max < 0 && nullable(ps, atom))
      return perr(ps, RLX_ERR_UNSUPPORTED, "unbounded repetition of something that can match empty"), -1;
    int32_t nd = new_node(ps, N_REPEAT);
    if (nd < 0) return -1;
    ps->nodes[nd].kid = atom;
    ps->nodes[nd].min = min;
    ps->nodes[nd].max = max;
    ps->nodes[nd].greedy = greedy;
    atom = nd;
  }
  return atom;
}

static int32_t parse_seq(re_parser *ps, bool *icase) {
  int32_t cat = new_node(ps, N_CAT), last = -1;
  if (cat < 0) return -1;
  while (ps->i < ps->n && ps->p[ps->i] != '|' && ps->p[ps->i] != ')') {
    int32_t q = parse_quant(ps, icase);
    if (q < 0) return -1;
    if (last < 0) ps->nodes[cat].kid = q;
    else ps->nodes[last].next = q;
    last = q;
  }
  return cat;
}

static int32_t parse_alt(re_parser *ps, bool *icase) {
  int32_t first = parse_seq(ps, icase);
  if (first < 0 || !at(ps, '|')) return first;
  int32_t alt = new_node(ps, N_ALT), last = first;
  if (alt < 0) return -1;
  ps->nodes[alt].kid = first;
  while (at(ps, '|')) {
    ps->i++;
    int32_t s = parse_seq(ps, icase);
    if (s < 0) return -1;
    ps->nodes[last].next = s;
    last = s;
  }
  return alt;
}

/* ---- code generation ---- */

/* Appends an instruction; -1 with the error set (too large, or out of memory). */
static int32_t emit(rlx_regex *re, re_inst in) {
  if (re->n_prog >= RE_MAX_PROG) {
    rlx_errorf(RLX_ERR_UNSUPPORTED, "regex too large once repetitions are unrolled (over %d steps)", RE_MAX_PROG);
    return -1;
  }
  if (rlx_grow((void **)&re->prog, &re->cap_prog, re->n_prog + 1, sizeof *re->prog)) return -1;
  re->prog[re->n_prog] = in;
  return re->n_prog++;
}

static bool gen(re_parser *ps, int32_t nd) {
  rlx_regex *re = ps->re;
  const re_node n = ps->nodes[nd];
  switch (n.kind) {
    case N_EMPTY: return true;
    case N_CHAR:
      return emit(re, (re_inst){.op = n.icase ? OP_CHARI : OP_CHAR, .c = n.icase ? rlx_uc_fold(n.c) : n.c}) >= 0;
    case N_ANY: return emit(re, (re_inst){.op = OP_ANY}) >= 0;
    case N_CLASS: return emit(re, (re_inst){.op = OP_CLASS, .c = n.c}) >= 0;
    case N_BOL: return emit(re, (re_inst){.op = OP_BOL}) >= 0;
    case N_EOL: return emit(re, (re_inst){.op = OP_EOL}) >= 0;
    case N_BOS: return emit(re, (re_inst){.op = OP_BOS}) >= 0;
    case N_EOS: return emit(re, (re_inst){.op = OP_EOS}) >= 0;
    case N_EOSNL: return emit(re, (re_inst){.op = OP_EOSNL}) >= 0;
    case N_CAT:
      for (int32_t k = n.kid; k >= 0; k = ps->nodes[k].next)
        if (!gen(ps, k)) return false;
      return true;
    case N_ALT: {
      /* SPLIT L1, L2; L1: a; JMP end; L2: SPLIT L2', L3; ... last. The JMPs
       * are chained through x until `end` is known. */
      int32_t jumps = -1;
      for (int32_t k = n.kid; k >= 0; k = ps->nodes[k].next) {
        bool more = ps->nodes[k].next >= 0;
        int32_t split = more ? emit(re, (re_inst){.op = OP_SPLIT}) : 0;
        if (split < 0) return false;
        if (more) re->prog[split].x = split + 1;
        if (!gen(ps, k)) return false;
        if (more) {
          int32_t j = emit(re, (re_inst){.op = OP_JMP, .x = jumps});
          if (j < 0) return false;
          jumps = j;
          re->prog[split].y = re->n_prog;
        }
      }
      while (jumps >= 0) {
        int32_t prev = re->prog[jumps].x;
        re->prog[jumps].x = re->n_prog;
        jumps = prev;
      }
      return true;
    }
    case N_LOOK: {
      int32_t look = emit(re, (re_inst){.op = OP_LOOK, .neg = n.neg});
      if (look < 0 || !gen(ps, n.kid) || emit(re, (re_inst){.op = OP_MATCH}) < 0) return false;
      re->prog[look].x = re->n_prog;
      return true;
    }
    case N_REPEAT: {
      for (int32_t k = 0; k < n.min; k++)
        if (!gen(ps, n.kid)) return false;
      if (n.max < 0) { /* L: SPLIT body, out; body; JMP L; out: */
        int32_t split = emit(re, (re_inst){.op = OP_SPLIT});
        if (split < 0 || !gen(ps, n.kid)) return false;
        if (emit(re, (re_inst){.op = OP_JMP, .x = split}) < 0) return false;
        re->prog[split].x = n.greedy ? split + 1 : re->n_prog;
        re->prog[split].y = n.greedy ? re->n_prog : split + 1;
        return true;
      }
      /* optional copies: SPLIT body, out; body; SPLIT body2, out; ... out:
       * the SPLITs are chained through y until `out` is known */
      int32_t splits = -1;
      for (int32_t k = n.min; k < n.max; k++) {
        int32_t split = emit(re, (re_inst){.op = OP_SPLIT, .y = splits});
        if (split < 0) return false;
        splits = split;
        if (!gen(ps, n.kid)) return false;
      }
      while (splits >= 0) {
        int32_t prev = re->prog[splits].y;
        re->prog[splits].x = n.greedy ? splits + 1 : re->n_prog;
        re->prog[splits].y = n.greedy ? re->n_prog : splits + 1;
        splits = prev;
      }
      return true;
    }
    default: return false;
  }
}

rlx_status rlx_regex_compile(const char *pattern, const char *where, rlx_regex **out) {
  size_t blen = strlen(pattern);
  rlx_uc_buf cps = {0};
  rlx_status st = rlx_uc_from_utf8(&cps, pattern, blen);
  if (st) {
    rlx_uc_buf_free(&cps);
    return st;
  }
  if (cps.n > RE_MAX_PATTERN) {
    rlx_uc_buf_free(&cps);
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s: regex longer than %d characters", where, RE_MAX_PATTERN);
  }
  rlx_regex *re = rlx_calloc(1, sizeof *re);
  if (!re) {
    rlx_uc_buf_free(&cps);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory compiling a regex");
  }
  re_parser ps = {.p = cps.v, .n = cps.n, .re = re, .where = where};
  bool icase = false;
  rlx_error_clear();
  int32_t root = parse_alt(&ps, &icase);
  if (root >= 0 && ps.i < ps.n) root = -1, perr(&ps, RLX_ERR_FORMAT, "unbalanced ')'");
  if (root >= 0 && (!gen(&ps, root) || emit(re, (re_inst){.op = OP_MATCH}) < 0)) {
    root = -1;
    if (rlx_last_status() == RLX_ERR_UNSUPPORTED) rlx_error_prefix("%s: ", where);
  }
  rlx_free(ps.nodes);
  rlx_uc_buf_free(&cps);
  if (root < 0) {
    rlx_regex_destroy(re);
    return rlx_last_error()[0] ? rlx_last_status()
                               : rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory compiling a regex");
  }
  *out = re;
  return RLX_OK;
}

void rlx_regex_destroy(rlx_regex *re) {
  if (!re) return;
  rlx_free(re->items);
  rlx_free(re->classes);
  rlx_free(re->prog);
  rlx_free(re);
}

/* ---- matching ---- */

static bool item_has(const re_item *it, uint32_t c) {
  bool in;
  switch (it->kind) {
    case CI_RANGE: in = c >= it->lo && c <= it->hi; break;
    case CI_CATS: in = (it->cats >> rlx_uc_category(c)) & 1; break;
    case CI_SPACE: in = rlx_uc_is_space(c); break;
    default: in = rlx_uc_is_word(c); break;
  }
  return in != (bool)it->neg;
}

static bool class_has(const rlx_regex *re, const re_class *cl, uint32_t c) {
  bool in = false;
  for (int32_t k = 0; k < cl->count && !in; k++) in = item_has(&re->items[cl->first + k], c);
  if (!in && cl->icase) {
    uint32_t f = rlx_uc_fold(c), alt = (c >= 'a' && c <= 'z') ? c - 32 : f;
    for (int32_t k = 0; k < cl->count && !in; k++)
      in = item_has(&re->items[cl->first + k], f) || item_has(&re->items[cl->first + k], alt);
  }
  return in != cl->neg;
}

typedef struct re_choice { int32_t pc, pos; } re_choice;

typedef struct re_vm {
  const rlx_regex *re;
  const uint32_t *s;
  int32_t n;
  re_choice *stack;
  int32_t cap;
  int64_t budget;
  rlx_status st;
} re_vm;

/* Runs the program from pc at pos; returns the end of the first match, or
 * -1. A lookahead runs in a VM of its own (its own choice stack). */
static int32_t vm_run(re_vm *vm, int32_t pc, int32_t pos) {
  const re_inst *prog = vm->re->prog;
  int32_t sp = 0;
  for (;;) {
    if (--vm->budget < 0) {
      vm->st = rlx_errorf(RLX_ERR_UNSUPPORTED, "regex backtracking exceeded its step budget");
      return -1;
    }
    const re_inst *in = &prog[pc];
    bool ok = true;
    switch (in->op) {
      case OP_CHAR: ok = pos < vm->n && vm->s[pos] == in->c; pos++, pc++; break;
      case OP_CHARI: ok = pos < vm->n && rlx_uc_fold(vm->s[pos]) == in->c; pos++, pc++; break;
      case OP_ANY: ok = pos < vm->n && vm->s[pos] != '\n'; pos++, pc++; break;
      case OP_CLASS:
        ok = pos < vm->n && class_has(vm->re, &vm->re->classes[in->c], vm->s[pos]);
        pos++, pc++;
        break;
      case OP_BOL: ok = pos == 0 || vm->s[pos - 1] == '\n'; pc++; break;
      case OP_EOL: ok = pos == vm->n || vm->s[pos] == '\n'; pc++; break;
      case OP_BOS: ok = pos == 0; pc++; break;
      case OP_EOS: ok = pos == vm->n; pc++; break;
      case OP_EOSNL: ok = pos == vm->n || (pos == vm->n - 1 && vm->s[pos] == '\n'); pc++; break;
      case OP_JMP: pc = in->x; break;
      case OP_SPLIT:
        if (rlx_grow((void **)&vm->stack, &vm->cap, sp + 1, sizeof *vm->stack)) {
          vm->st = RLX_ERR_OUT_OF_MEMORY;
          return -1;
        }
        vm->stack[sp++] = (re_choice){in->y, pos};
        pc = in->x;
        break;
      case OP_LOOK: {
        re_vm sub = {.re = vm->re, .s = vm->s, .n = vm->n, .budget = vm->budget};
        int32_t r = vm_run(&sub, pc + 1, pos);
        vm->budget = sub.budget;
        rlx_free(sub.stack);
        if (sub.st) {
          vm->st = sub.st;
          return -1;
        }
        ok = (r >= 0) != (bool)in->neg;
        pc = in->x;
        break;
      }
      case OP_MATCH: return pos;
      default: ok = false; break;
    }
    if (!ok) {
      if (sp == 0) return -1;
      sp--;
      pc = vm->stack[sp].pc;
      pos = vm->stack[sp].pos;
    }
  }
}

rlx_status rlx_regex_find(const rlx_regex *re, const uint32_t *s, int32_t n, int32_t from,
                          bool *found, int32_t *ms, int32_t *me) {
  re_vm vm = {.re = re, .s = s, .n = n, .budget = 100000 + (int64_t)n * 2000};
  *found = false;
  for (int32_t start = from; start <= n; start++) {
    int32_t end = vm_run(&vm, 0, start);
    if (vm.st) break;
    if (end >= 0) {
      *found = true;
      *ms = start;
      *me = end;
      break;
    }
  }
  rlx_free(vm.stack);
  return vm.st;
}
