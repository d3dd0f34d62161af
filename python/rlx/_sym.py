"""Shape expressions: torch's sympy -> rlx's text grammar, and back to numbers.

This module owns the text form of symbolic dims in torch-ir.json
("sym_shape" entries, scalar "sym" values, guards; docs/design.md, "Shapes"):

  * ``to_text(expr, names)`` translates a sympy integer expression built by
    torch's symbolic shapes into the grammar of ``src/ir/sym.h``::

        expr  := term (('+' | '-') term)*
        term  := unary ('*' unary)*
        unary := '-' unary | atom
        atom  := INT | NAME | '(' expr ')'
               | ('floordiv' | 'mod' | 'min' | 'max') '(' expr ',' expr ')'

    floordiv and mod are Python's (floor toward -inf), as torch's FloorDiv
    and PythonMod; torch's Mod and ModularIndexing are only ever built on
    non-negative operands, where C and Python remainders agree.
  * ``to_relations(expr, names)`` splits a sympy relation (or a conjunction
    of relations) into ``(lhs, rel, rhs)`` text triples, the form of guards.
  * ``parse`` / ``evaluate`` / ``holds`` read the grammar back and compute
    it for one binding of the symbols; the exporter checks its own output
    with them and tests check exports with them.

What the grammar cannot say is a ``SymError``: float arithmetic on sizes
(``ToFloat``, true division, ``sqrt``), symbolic exponents, ``Where``.  The
one float form that is translated is a floor / ceil / trunc of a dyadic
rational multiple of integer sizes (``TruncToInt(1.5*ToFloat(s0))`` from
``interpolate(scale_factor=1.5)``), which is integer arithmetic exactly:
``floordiv(3*s0, 2)``.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Mapping

import sympy

from ._ir import ExportError

KEYWORDS = ("floordiv", "mod", "min", "max")
MAX_POW = 8          # x**k becomes k factors; src/ir/sym.h allows 8 atoms per term
MAX_DYADIC = 1 << 16  # largest numerator / denominator of a float scale taken exactly
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class SymError(ExportError):
    """A size expression that rlx's grammar cannot express (or a bad text)."""


def _cls(expr) -> str:
    return type(expr).__name__


# --------------------------------------------------------------------------
# sympy -> text


_SUM, _PROD, _ATOM = 0, 1, 2


def to_text(expr, names: Mapping) -> str:
    """The grammar text of integer expression ``expr``; ``names`` maps each
    sympy Symbol to its rlx name.  Raises SymError for what rlx cannot say."""
    return _Printer(names).text(sympy.sympify(expr), _SUM)


def to_int_or_text(expr, names: Mapping):
    """An int where ``expr`` is a number, else its text."""
    expr = sympy.sympify(expr)
    if expr.is_Integer:
        return int(expr)
    if expr.is_number:
        raise SymError(f"size {expr} is not an integer")
    return to_text(expr, names)


_RELS = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def to_relations(expr, names: Mapping) -> list[tuple[str, str, str]]:
    """(lhs, rel, rhs) texts for a sympy relation or a conjunction of them;
    [] for sympy's ``true``.  Raises SymError for anything else (Or, Not,
    ``false``)."""
    expr = sympy.sympify(expr)
    if expr is sympy.true:
        return []
    if expr is sympy.false:
        raise SymError("the condition is false at every binding")
    if isinstance(expr, sympy.And):
        return [r for a in sympy.ordered(expr.args) for r in to_relations(a, names)]
    if isinstance(expr, sympy.core.relational.Relational) and expr.rel_op in _RELS:
        p = _Printer(names)
        return [(p.text(expr.lhs, _SUM), _RELS[expr.rel_op], p.text(expr.rhs, _SUM))]
    raise SymError(f"condition {expr} ({_cls(expr)}) is not a relation rlx can check")


class _Printer:
    def __init__(self, names: Mapping):
        self.names = names

    def text(self, e, ctx: int) -> str:
        s, prec = self._print(e)
        return f"({s})" if prec < ctx else s

    def _print(self, e) -> tuple[str, int]:
        if e.is_Integer:
            v = int(e)
            return str(v), (_ATOM if v >= 0 else _PROD)
        if e.is_Symbol:
            name = self.names.get(e)
            if name is None:
                raise SymError(f"symbol {e} is not a shape symbol of the program")
            return name, _ATOM
        if e.is_Rational or e.is_Float or e.is_number:
            raise SymError(f"size {e} is not an integer")
        if isinstance(e, (sympy.Add, sympy.Mul)):
            return self._poly(e)
        if isinstance(e, sympy.Pow) or _cls(e) == "PowByNatural":
            return self._pow(e)
        kind = _cls(e)
        a = e.args
        if kind in ("FloorDiv", "CleanDiv"):
            return self._call("floordiv", a[0], a[1]), _ATOM
        if kind == "CeilDiv":  # ceil(a / b) = -floor(-a / b)
            return "-" + self._call("floordiv", -a[0], a[1]), _PROD
        if kind in ("Mod", "PythonMod"):
            return self._call("mod", a[0], a[1]), _ATOM
        if kind == "ModularIndexing":  # (a // b) % c
            return f"mod({self._call('floordiv', a[0], a[1])}, {self.text(a[2], _SUM)})", _ATOM
        if kind in ("Max", "Min"):
            return self._minmax(kind.lower(), list(sympy.ordered(a))), _ATOM
        if kind == "Identity":
            return self._print(a[0])
        if kind in ("FloorToInt", "CeilToInt", "TruncToInt"):
            return self._rounded(kind, a[0])
        if kind in ("IntTrueDiv", "FloatTrueDiv", "ToFloat", "FloatPow", "TruncToFloat",
                    "RoundToInt", "RoundDecimal") or kind.startswith("OpaqueUnaryFn"):
            raise SymError(f"float arithmetic on sizes ({e}): rlx sizes are integers")
        raise SymError(f"size expression {e} ({kind}) has no rlx form")

    def _call(self, fn: str, a, b) -> str:
        return f"{fn}({self.text(a, _SUM)}, {self.text(b, _SUM)})"

    def _minmax(self, fn: str, args: list) -> str:
        if len(args) == 1:
            return self.text(args[0], _SUM)
        return f"{fn}({self.text(args[0], _SUM)}, {self._minmax(fn, args[1:])})"

    def _poly(self, e) -> tuple[str, int]:
        den = _denominator(e)
        if den != 1:  # torch knows the division is exact (a view by a divisor)
            num = sympy.expand(e * den)
            if _denominator(num) != 1:
                raise SymError(f"size {e} is not an integer polynomial")
            return self._call("floordiv", num, sympy.Integer(den)), _ATOM
        if isinstance(e, sympy.Add):
            terms = e.as_ordered_terms()
            out = self.text(terms[0], _SUM)
            for t in terms[1:]:
                if t.could_extract_minus_sign():
                    out += " - " + self.text(-t, _PROD)
                else:
                    out += " + " + self.text(t, _PROD)
            return out, _SUM
        coeff, rest = e.as_coeff_Mul()
        factors = [self.text(g, _ATOM) for f in sympy.Mul.make_args(rest)
                   for g in _expand_pow(f)]
        if coeff == -1:
            return "-" + "*".join(factors), _PROD
        if coeff != 1:
            factors.insert(0, str(int(coeff)))
        return "*".join(factors), _PROD

    def _pow(self, e) -> tuple[str, int]:
        factors = _expand_pow(e)
        if len(factors) == 1:
            return self._print(factors[0])
        if not factors:
            return "1", _ATOM
        return "*".join(self.text(f, _ATOM) for f in factors), _PROD

    def _rounded(self, kind: str, arg) -> tuple[str, int]:
        q = _exact_quotient(arg)
        if q is None:
            raise SymError(f"float arithmetic on sizes ({kind}({arg})): rlx sizes are integers")
        num, den = q
        if den == 1:
            return self._print(num)
        if kind == "TruncToInt" and not num.is_nonnegative:
            raise SymError(f"{kind}({arg}): truncation of a value that may be negative")
        if kind == "CeilToInt":
            return "-" + self._call("floordiv", -num, sympy.Integer(den)), _PROD
        return self._call("floordiv", num, sympy.Integer(den)), _ATOM


def _expand_pow(f) -> list:
    """``f`` as a list of factors: x**k (k a small natural number) is k copies of x."""
    if isinstance(f, sympy.Pow) or _cls(f) == "PowByNatural":
        base, exp = f.args
        if not (exp.is_Integer and 0 <= int(exp) <= MAX_POW):
            raise SymError(f"power {f}: only natural exponents up to {MAX_POW} have an rlx form")
        return [base] * int(exp)
    return [f]


def _denominator(e) -> int:
    """Least common denominator of the rational coefficients of polynomial ``e``."""
    den = 1
    for term in sympy.Add.make_args(e):
        c, _ = term.as_coeff_Mul()
        if c.is_Rational:
            den = math.lcm(den, int(c.q))
        elif c.is_number:
            raise SymError(f"size {e} has a non-rational coefficient {c}")
    return den


def _exact_quotient(arg):
    """(num, den): integer sympy expression and positive int with arg == num/den
    exactly, for float expressions built from ToFloat(int expr), integer-valued
    or dyadic float constants, IntTrueDiv by a constant and sums and constant
    multiples of those; None otherwise."""
    kind = _cls(arg)
    if arg.is_integer is True and not arg.is_number:
        return arg, 1
    if kind == "ToFloat":
        inner = arg.args[0]
        return (inner, 1) if inner.is_integer else None
    if arg.is_Integer:
        return arg, 1
    if arg.is_Float or arg.is_Rational:
        f = Fraction(float(arg)) if arg.is_Float else Fraction(int(arg.p), int(arg.q))
        if abs(f.numerator) > MAX_DYADIC or f.denominator > MAX_DYADIC:
            return None
        return sympy.Integer(f.numerator), f.denominator
    if kind in ("IntTrueDiv", "FloatTrueDiv"):
        a, b = _exact_quotient(arg.args[0]), _exact_quotient(arg.args[1])
        if a is None or b is None or not b[0].is_Integer or int(b[0]) == 0:
            return None
        num, den = a[0] * b[1], a[1] * int(b[0])
        if den < 0:
            num, den = -num, -den
        return sympy.expand(num), den
    if isinstance(arg, sympy.Mul):
        num, den = sympy.Integer(1), 1
        for f in arg.args:
            q = _exact_quotient(f)
            if q is None:
                return None
            num, den = num * q[0], den * q[1]
        return sympy.expand(num), den
    if isinstance(arg, sympy.Add):
        parts = [_exact_quotient(t) for t in arg.args]
        if any(p is None for p in parts):
            return None
        den = math.lcm(*(p[1] for p in parts))
        return sympy.expand(sum((p[0] * (den // p[1]) for p in parts), sympy.Integer(0))), den
    return None


# --------------------------------------------------------------------------
# text -> numbers


_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(\S))")


def _tokens(text: str) -> list[tuple[str, str]]:
    out = []
    pos = 0
    while text[pos:].strip():
        m = _TOKEN.match(text, pos)
        pos = m.end()
        if m.group(1):
            out.append(("int", m.group(1)))
        elif m.group(2):
            out.append(("name", m.group(2)))
        elif m.group(3) in ("+", "-", "*", "(", ")", ","):
            out.append(("op", m.group(3)))
        else:
            raise SymError(f"'{text}': unexpected character '{m.group(3)}'")
    return out


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def fail(self, what: str):
        raise SymError(f"'{self.text}': {what} at token {self.i + 1}")

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else ("end", "")

    def take(self, kind: str, val: str | None = None):
        t = self.peek()
        if t[0] != kind or (val is not None and t[1] != val):
            self.fail(f"expected {val or kind}, got '{t[1] or 'end'}'")
        self.i += 1
        return t[1]

    def expr(self):
        node = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take("op")
            node = (op, node, self.term())
        return node

    def term(self):
        node = self.unary()
        while self.peek() == ("op", "*"):
            self.take("op")
            node = ("*", node, self.unary())
        return node

    def unary(self):
        if self.peek() == ("op", "-"):
            self.take("op")
            return ("neg", self.unary())
        return self.atom()

    def atom(self):
        kind, val = self.peek()
        if kind == "int":
            self.i += 1
            return ("int", int(val))
        if kind == "name":
            self.i += 1
            if val in KEYWORDS:
                self.take("op", "(")
                a = self.expr()
                self.take("op", ",")
                b = self.expr()
                self.take("op", ")")
                return (val, a, b)
            return ("sym", val)
        if (kind, val) == ("op", "("):
            self.i += 1
            node = self.expr()
            self.take("op", ")")
            return node
        self.fail(f"expected a number, a name or '(', got '{val or 'end'}'")


def parse(text: str):
    """The syntax tree of ``text`` (nested tuples); SymError if it is not in the grammar."""
    p = _Parser(text)
    node = p.expr()
    if p.i != len(p.toks):
        p.fail("trailing text")
    return node


def names_in(text: str) -> set[str]:
    """The symbol names ``text`` uses."""
    out: set[str] = set()

    def walk(n):
        if n[0] == "sym":
            out.add(n[1])
        elif n[0] != "int":
            for c in n[1:]:
                walk(c)
    walk(parse(text))
    return out


def _eval(n, env: Mapping[str, int]) -> int:
    op = n[0]
    if op == "int":
        return n[1]
    if op == "sym":
        if n[1] not in env:
            raise SymError(f"symbol '{n[1]}' is not bound")
        return int(env[n[1]])
    if op == "neg":
        return -_eval(n[1], env)
    a, b = _eval(n[1], env), _eval(n[2], env)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op in ("floordiv", "mod"):
        if b == 0:
            raise SymError(f"{op} by zero")
        return a // b if op == "floordiv" else a % b
    return min(a, b) if op == "min" else max(a, b)


_CACHE: dict[str, tuple] = {}


def evaluate(entry, env: Mapping[str, int]) -> int:
    """The value of a sym_shape entry (an int or an expression text) at binding ``env``."""
    if isinstance(entry, int):
        return entry
    tree = _CACHE.get(entry)
    if tree is None:
        tree = _CACHE[entry] = parse(entry)
    return _eval(tree, env)


def holds(lhs, rel: str, rhs, env: Mapping[str, int]) -> bool:
    """Whether guard ``lhs rel rhs`` holds at ``env``; False where it cannot be
    evaluated there (a division by zero)."""
    try:
        a, b = evaluate(lhs, env), evaluate(rhs, env)
    except SymError:
        return False
    return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b,
            ">=": a >= b}[rel]
