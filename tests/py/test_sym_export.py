"""Unit tests of rlx._sym: torch's sympy size expressions -> the text grammar of
src/ir/sym.h, and the Python parser / evaluator of that grammar.

Run: python3 -m pytest -q tests/py/test_sym_export.py
"""

import itertools
import sys
from pathlib import Path

import pytest
import sympy
import torch.utils._sympy.functions as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

from rlx import _sym  # noqa: E402

s0, s1, s2 = sympy.symbols("s0 s1 s2", integer=True, positive=True)
NAMES = {s0: "seq", s1: "b", s2: "H"}
GRID = [dict(zip((s0, s1, s2), v)) for v in itertools.product((1, 2, 3, 7, 32, 33), (1, 2, 5),
                                                                 (1, 4, 64))]


def _value(expr, point) -> int:
    """sympy's own value of a torch size expression at ``point``."""
    v = expr.xreplace({k: sympy.Integer(x) for k, x in point.items()})
    v = v.doit() if hasattr(v, "doit") else v
    if not v.is_Integer:  # float forms (ToFloat, IntTrueDiv) evaluate to Floats
        v = sympy.Integer(int(v))
    return int(v)


def _agree(expr, text):
    for p in GRID:
        env = {NAMES[k]: v for k, v in p.items()}
        assert _sym.evaluate(text, env) == _value(expr, p), (expr, text, env)


# (sympy expression, expected text)
CASES = [
    (s0 + 1, "seq + 1"),
    (2 * s0 - 3, "2*seq - 3"),
    (s0 * s1, "seq*b"),
    (-s0 + s1, "-seq + b"),
    (3 - s0, "3 - seq"),
    (F.FloorDiv(s0 - 1, 32) + 1, "floordiv(seq - 1, 32) + 1"),
    (F.CleanDiv(4 * s0, 2), "2*seq"),
    (F.FloorDiv(2 * s0 * s1, 4), "floordiv(seq*b, 2)"),
    (F.FloorDiv(s0, s1), "floordiv(seq, b)"),
    (F.Mod(s0, 4), "mod(seq, 4)"),
    (F.PythonMod(s0, s1), "mod(seq, b)"),
    (F.ModularIndexing(s0, 2, 8), "mod(floordiv(seq, 2), 8)"),
    (F.Max(s0, s1, 3), "max(3, max(seq, b))"),
    (F.Min(s0, 512), "min(512, seq)"),
    (s0 ** 2, "seq*seq"),
    (s0 ** 2 * s1, "b*seq*seq"),
    (F.PowByNatural(s1, 3), "b*b*b"),
    (s0 / 2 + 1, "floordiv(seq + 2, 2)"),        # torch knew seq is even
    (s0 * s1 / 4, "floordiv(seq*b, 4)"),
    (2 * (s0 + 1) * s1, "b*(2*seq + 2)"),
    (F.FloorDiv(s0 + 1, 2) * F.FloorDiv(s2, 3), "floordiv(H, 3)*floordiv(seq + 1, 2)"),
    (-F.FloorDiv(s0, 2), "-floordiv(seq, 2)"),
    (s1 * -F.Max(s0, 2) + 7, "-b*max(2, seq) + 7"),
    (F.Identity(s0 + 2), "seq + 2"),
    (F.CeilToInt(F.IntTrueDiv(s0, 2)), "-floordiv(-seq, 2)"),
    (F.FloorToInt(F.IntTrueDiv(s0 * s1, 3)), "floordiv(seq*b, 3)"),
    (F.TruncToInt(1.5 * F.ToFloat(s2)), "floordiv(3*H, 2)"),    # interpolate(scale_factor=1.5)
    (F.FloorToInt(2.0 * F.ToFloat(s2)), "2*H"),
    (F.CeilToInt(0.25 * F.ToFloat(s2) + 0.5), "-floordiv(-H - 2, 4)"),
]


@pytest.mark.parametrize("expr,text", CASES, ids=[c[1] for c in CASES])
def test_translate(expr, text):
    got = _sym.to_text(expr, NAMES)
    assert got == text
    _agree(expr, got)
    assert _sym.parse(got)  # in the grammar
    assert _sym.names_in(got) <= set(NAMES.values())


def test_ceil_div_form():
    # CeilDiv builds FloorDiv(a + b - 1, b) (or CleanDiv); both translate
    e = F.CeilDiv(s0, 4)
    text = _sym.to_text(e, NAMES)
    _agree(e, text)
    assert text.startswith("floordiv(")


def test_int_or_text():
    assert _sym.to_int_or_text(sympy.Integer(7), NAMES) == 7
    assert _sym.to_int_or_text(s0 - 1, NAMES) == "seq - 1"
    with pytest.raises(_sym.SymError, match="not an integer"):
        _sym.to_int_or_text(sympy.Rational(1, 2), NAMES)


@pytest.mark.parametrize("expr,match", [
    (F.ToFloat(s0), "float arithmetic"),
    (F.IntTrueDiv(s0, s1), "float arithmetic"),
    (F.FloatTrueDiv(F.ToFloat(s0), 2.0), "float arithmetic"),
    (F.FloatPow(F.ToFloat(s0), 0.5), "float arithmetic"),
    (F.OpaqueUnaryFn_sqrt(F.ToFloat(s0)) if hasattr(F, "OpaqueUnaryFn_sqrt") else F.ToFloat(s0),
     "float arithmetic"),
    (F.TruncToInt(F.IntTrueDiv(s0, s1)), "float arithmetic"),    # a symbolic divisor
    (F.CeilToInt(0.1 * F.ToFloat(s0)), "float arithmetic"),     # 0.1 is not dyadic
    (F.RoundToInt(F.ToFloat(s0) * 0.5), "float arithmetic"),
    (s0 ** 9, "exponents up to 8"),
    (2 ** s0, "exponents"),
    (F.Where(s0 > 2, s0, 1), "no rlx form"),
    (sympy.Symbol("u0", integer=True) + 1, "not a shape symbol"),
    (sympy.Float(2.5) * s0, "not an integer polynomial|non-rational"),
])
def test_untranslatable(expr, match):
    with pytest.raises(_sym.SymError, match=match):
        _sym.to_text(expr, NAMES)


def test_relations():
    assert _sym.to_relations(s0 <= 4 * s1, NAMES) == [("seq", "<=", "4*b")]
    assert _sym.to_relations(sympy.Ne(s0, 1), NAMES) == [("seq", "!=", "1")]
    assert _sym.to_relations(sympy.Eq(F.Mod(s2, 32), 0), NAMES) == [("mod(H, 32)", "==", "0")]
    assert _sym.to_relations(s0 > s1, NAMES) == [("seq", ">", "b")]
    both = _sym.to_relations(sympy.And(s0 <= 4 * s1, sympy.Ne(s0, 1)), NAMES)
    assert sorted(both) == [("seq", "!=", "1"), ("seq", "<=", "4*b")]
    assert _sym.to_relations(sympy.true, NAMES) == []
    with pytest.raises(_sym.SymError, match="not a relation"):
        _sym.to_relations(sympy.Or(s0 < 2, s1 < 2), NAMES)
    with pytest.raises(_sym.SymError, match="false"):
        _sym.to_relations(sympy.false, NAMES)


# --------------------------------------------------------------------------
# The parser and evaluator


@pytest.mark.parametrize("text,env,value", [
    ("7", {}, 7),
    ("seq", {"seq": 5}, 5),
    ("1 + 2*3", {}, 7),
    ("(1 + 2)*3", {}, 9),
    ("2*3 - 4 - 1", {}, 1),           # left associative
    ("-2*3", {}, -6),
    ("- -3", {}, 3),
    ("a - -b", {"a": 1, "b": 2}, 3),
    ("a*-b", {"a": 3, "b": 2}, -6),
    ("floordiv(-7, 2)", {}, -4),      # Python floor
    ("mod(-7, 2)", {}, 1),            # remainder takes the divisor's sign
    ("mod(7, -2)", {}, -1),
    ("floordiv(seq - 1, 32) + 1", {"seq": 33}, 2),
    ("min(a, max(b, 3))", {"a": 10, "b": 1}, 3),
    ("  floordiv( x*x ,x )  ", {"x": 6}, 6),
    ("s_1 + _t2", {"s_1": 1, "_t2": 2}, 3),
])
def test_evaluate(text, env, value):
    assert _sym.evaluate(text, env) == value


def test_evaluate_int_entry_and_holds():
    assert _sym.evaluate(12, {}) == 12
    assert _sym.holds("seq", "<=", "4*b", {"seq": 8, "b": 2})
    assert not _sym.holds("seq", "<", "4*b", {"seq": 8, "b": 2})
    assert _sym.holds("mod(H, 32)", "==", 0, {"H": 64})
    assert _sym.holds("a", "!=", "b", {"a": 1, "b": 2})
    assert not _sym.holds("mod(a, b)", "==", "0", {"a": 1, "b": 0})  # not evaluable: false


@pytest.mark.parametrize("text,match", [
    ("", "expected a number"),
    ("1 +", "expected a number"),
    ("(1", r"expected \)"),
    ("1 2", "trailing"),
    ("floordiv(1)", "expected ,"),
    ("max(1, 2, 3)", r"expected \)"),
    ("a / b", "unexpected character '/'"),
    ("a**2", "expected a number"),
    ("3.5", "unexpected character"),
])
def test_parse_errors(text, match):
    with pytest.raises(_sym.SymError, match=match):
        _sym.parse(text)


def test_evaluate_errors():
    with pytest.raises(_sym.SymError, match="not bound"):
        _sym.evaluate("seq + 1", {})
    with pytest.raises(_sym.SymError, match="by zero"):
        _sym.evaluate("floordiv(1, seq - 1)", {"seq": 1})
    with pytest.raises(_sym.SymError, match="by zero"):
        _sym.evaluate("mod(1, 0)", {})


def test_round_trip_random_polynomials():
    # random integer polynomials and nestings: text evaluates to sympy's value
    import random
    rng = random.Random(1)
    atoms = [s0, s1, s2, sympy.Integer(3)]
    for _ in range(200):
        e = rng.choice(atoms)
        for _ in range(rng.randint(1, 4)):
            a = rng.choice(atoms)
            op = rng.choice(["add", "sub", "mul", "floordiv", "mod", "max", "min"])
            if op == "add":
                e = e + a
            elif op == "sub":
                e = e - a
            elif op == "mul":
                e = e * a
            elif op == "floordiv":
                e = F.FloorDiv(e, rng.randint(1, 5))
            elif op == "mod":
                e = F.PythonMod(e, rng.randint(1, 5))
            elif op == "max":
                e = F.Max(e, a)
            else:
                e = F.Min(e, a)
        if e.is_Integer:
            continue
        _agree(e, _sym.to_text(e, NAMES))
