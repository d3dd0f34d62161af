"""Conformance: binary elementwise ops, comparisons, logical and bitwise ops, where, clamp.

Tensor-Tensor ops get a battery over dtypes and layouts (each variant only
where eager torch defines the op for that dtype):

  broadcast      (3,1,5) with (4,5)
  rank5-large    (2,1,3,1,67) with (5,1,67): rank 5, odd sizes, 2010 outputs
  noncontig      a permuted, b a strided slice
  empty          (0,1,3) with (2,1): a zero-size result
  f64, f16, bf16
  0d-promote     an f16 tensor with a 0-dim f32 tensor: the result stays f16
                 (torch's rule: a 0-dim operand of the same category does not promote)
  special        +-inf, NaN and +-0 on both sides
  i64, i32       integers (exact), with broadcasting
  i32-i64        integer widening
  i32-f32        integer with float: promoted to f32
  i64-0d-f64     a dimensioned integer with a 0-dim f64: promoted to f64
                 (a 0-dim operand of a higher category decides the dtype)
  bool           bools
  u8, i8-i16     narrow integer types (u8 arithmetic wraps modulo 256)

Scalar overloads (``add.Scalar``, ``pow.Tensor_Scalar``, ...) get hand-written
cases: int and float scalars on int and float tensors (the scalar's category
promotes, its width does not).
"""

import pytest
import torch

from cases import (INF, NAN, aten, b8, bf16, bools, case, case_id, f16, f32, f64, i8, i16, i32,
                   i64, ints, nonzero, nonzero_ints, randn, seed, special, torch_accepts, u8,
                   uniform)

seed("test_binary")


# Input generators by kind: gen(kind, *shape, dtype) -> tensor.
def g_any(*shape, dtype=f32):
    if dtype == b8:
        return bools(*shape)
    if dtype.is_floating_point:
        return randn(*shape, dtype=dtype, scale=2.0)
    return ints(-9, 10, *shape, dtype=dtype)


def g_pos(*shape, dtype=f32):  # positive bases (pow)
    if dtype == b8:
        return bools(*shape)
    return uniform(0.5, 3.0, *shape, dtype=dtype) if dtype.is_floating_point else \
        ints(0, 6, *shape, dtype=dtype)


def g_nonzero(*shape, dtype=f32):  # divisors
    if dtype == b8:
        return torch.ones(shape, dtype=b8)
    return nonzero(0.5, 4.0, *shape, dtype=dtype) if dtype.is_floating_point else \
        nonzero_ints(1, 7, *shape, dtype=dtype)


def g_exp(*shape, dtype=f32):  # exponents
    if dtype == b8:
        return bools(*shape)
    return uniform(-2, 2, *shape, dtype=dtype) if dtype.is_floating_point else \
        ints(0, 4, *shape, dtype=dtype)


def g_shift(*shape, dtype=i64):  # shift amounts inside the bit width
    return ints(0, 8, *shape, dtype=dtype)


def binary_battery(op, ga=g_any, gb=g_any, special_ok=True):
    f = op
    out = []

    def add(name, fn, a, b):
        if torch_accepts(fn, a, b):
            out.append(case(op, name, fn, a, b))

    add("broadcast", lambda a, b: f(a, b), ga(3, 1, 5), gb(4, 5))
    add("rank5-large", lambda a, b: f(a, b), ga(2, 1, 3, 1, 67), gb(5, 1, 67))
    add("noncontig", lambda a, b: f(a.permute(1, 0), b[:, ::2]), ga(5, 4), gb(4, 10))
    add("empty", lambda a, b: f(a, b), ga(0, 1, 3), gb(2, 1))
    add("f64", lambda a, b: f(a, b), ga(2, 3, 4, dtype=f64), gb(3, 1, dtype=f64))
    add("f16", lambda a, b: f(a, b), ga(6, 5, dtype=f16), gb(6, 5, dtype=f16))
    add("bf16", lambda a, b: f(a, b), ga(4, 7, dtype=bf16), gb(1, 7, dtype=bf16))
    add("0d-promote", lambda a, b: f(a, b), ga(3, 4, dtype=f16), gb(dtype=f32))
    if special_ok:
        add("special", lambda a, b: f(a, b), special(6, 5), special(6, 5))
    add("i64", lambda a, b: f(a, b), ga(2, 1, 6, dtype=i64), gb(3, 6, dtype=i64))
    add("i32", lambda a, b: f(a.t(), b), ga(5, 4, dtype=i32), gb(4, 5, dtype=i32))
    add("i32-i64", lambda a, b: f(a, b), ga(3, 4, dtype=i32), gb(4, dtype=i64))
    if torch_accepts(f, ga(2), gb(2)):  # mixed with floats only for ops defined on floats
        add("i32-f32", lambda a, b: f(a, b), ga(3, 4, dtype=i32), gb(3, 4, dtype=f32))
        add("i64-0d-f64", lambda a, b: f(a, b), ga(3, 4, dtype=i64), gb(dtype=f64))
    add("bool", lambda a, b: f(a, b), ga(4, 5, dtype=b8), gb(5, dtype=b8))
    add("u8", lambda a, b: f(a, b), u8_of(ga(4, 5, dtype=i64)), u8_of(gb(4, 5, dtype=i64)))
    add("i8-i16", lambda a, b: f(a, b), ga(3, 4, dtype=i8), gb(4, dtype=i16))
    return out


def u8_of(t):
    """Integers mapped into u8 range, keeping zero-ness (divisors stay non-zero)."""
    return (t.abs() * 37 % 256).to(u8) if bool((t != 0).all()) else (t * 37 % 256).to(u8)


CASES = []

# -- arithmetic (Tensor, Tensor)
for _op, _ga, _gb in (
    (aten.add.Tensor, g_any, g_any),
    (aten.sub.Tensor, g_any, g_any),
    (aten.mul.Tensor, g_any, g_any),
    (aten.div.Tensor, g_any, g_nonzero),
    (aten.atan2.default, g_any, g_any),
    (aten.maximum.default, g_any, g_any),
    (aten.minimum.default, g_any, g_any),
    (aten.fmod.Tensor, g_any, g_nonzero),
    (aten.remainder.Tensor, g_any, g_nonzero),
    (aten.pow.Tensor_Tensor, g_pos, g_exp),
    (aten.fmax.default, g_any, g_any),
    (aten.fmin.default, g_any, g_any),
    (aten.hypot.default, g_any, g_any),
    (aten.copysign.Tensor, g_any, g_any),
    (aten.floor_divide.default, g_any, g_nonzero),
    (aten.true_divide.Tensor, g_any, g_nonzero),
    (aten.rsub.Tensor, g_any, g_any),
):
    CASES += binary_battery(_op, _ga, _gb)

# -- comparisons and logical ops (any dtype -> bool)
for _op in (aten.eq.Tensor, aten.ne.Tensor, aten.lt.Tensor, aten.le.Tensor, aten.gt.Tensor,
            aten.ge.Tensor, aten.logical_and.default, aten.logical_or.default,
            aten.logical_xor.default):
    CASES += binary_battery(_op)
    # ties: equal values on both sides (eq/le/ge must see them)
    _t = ints(-3, 3, 4, 6)
    CASES.append(case(_op, "ties-f32", lambda a, b, f=_op: f(a, b), _t.float(),
                      ints(-3, 3, 4, 6).float()))

# -- bitwise and shifts (integers and bools)
for _op in (aten.bitwise_and.Tensor, aten.bitwise_or.Tensor, aten.bitwise_xor.Tensor):
    CASES += binary_battery(_op)
    CASES.append(case(_op, "i64-large", lambda a, b, f=_op: f(a, b),
                      ints(-2**62, 2**62, 5, 4), ints(-2**62, 2**62, 4)))
for _op in (aten.bitwise_left_shift.Tensor, aten.bitwise_right_shift.Tensor,
            aten.__lshift__.Tensor, aten.__rshift__.Tensor):
    CASES += binary_battery(_op, g_any, g_shift, special_ok=False)
    # shifting by the bit width or more is defined by torch: 0, or -1 for negative >>
    CASES.append(case(_op, "i64-wide-shift", lambda a, b, f=_op: f(a, b),
                      torch.tensor([1, -8, 5, -1, 3, -3]), torch.tensor([70, 70, 63, 64, 0, 65])))
    CASES.append(case(_op, "i32-wide-shift", lambda a, b, f=_op: f(a, b),
                      torch.tensor([1, -8, 5, -1], dtype=i32),
                      torch.tensor([33, 32, 31, 40], dtype=i32)))

# -- overflow: f16 rounds to inf; integers wrap (two's complement), as in torch
_big16 = torch.tensor([60000.0, -60000.0, 40000.0, 1.0], dtype=f16)
_imax32 = torch.tensor([2**31 - 1, -2**31, 2**30, 7], dtype=i32)
_imax64 = torch.tensor([2**63 - 1, -2**63, 2**62, 7], dtype=i64)
for _op in (aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor):
    CASES += [
        case(_op, "f16-overflow-inf", lambda a, b, f=_op: f(a, b), _big16, _big16.flip(0)),
        case(_op, "i32-overflow-wraps", lambda a, b, f=_op: f(a, b), _imax32,
             torch.tensor([1, -1, 4, 2], dtype=i32)),
        case(_op, "i64-overflow-wraps", lambda a, b, f=_op: f(a, b), _imax64,
             torch.tensor([1, -1, 4, 2])),
    ]

# -- atan2.out: the out= overload survives the "aten" export with its buffer
CASES += [
    case(aten.atan2.out, name, lambda a, b: aten.atan2.out(a, b, out=torch.empty_like(a)), a, b)
    for name, a, b in (("f32", randn(3, 4), randn(3, 4)), ("special", special(4, 5), special(4, 5)),
                       ("f64-broadcast-1", randn(2, 3, dtype=f64), randn(2, 1, dtype=f64)))
]

# -- copysign: signed zeros and NaN signs decide; Scalar overload
_zeros = torch.tensor([0.0, -0.0, 0.0, -0.0, 2.0, -3.0])
CASES += [
    case(aten.copysign.Tensor, "signed-zeros", lambda a, b: aten.copysign.Tensor(a, b),
         torch.tensor([1.5, 1.5, -2.0, -2.0, 0.0, -0.0]), _zeros),
    case(aten.copysign.Tensor, "nan-signs", lambda a, b: aten.copysign.Tensor(a, b),
         torch.tensor([1.0, 2.0, float("nan"), float("inf")]),
         torch.tensor([float("nan"), -float("nan"), -1.0, -0.0])),
    case(aten.copysign.Scalar, "neg-scalar", lambda a: aten.copysign.Scalar(a, -2.0), randn(3, 4)),
    case(aten.copysign.Scalar, "i64-pos-scalar", lambda a: aten.copysign.Scalar(a, 1), ints(-5, 5, 3, 4)),
    case(aten.copysign.Scalar, "zero-scalar-special", lambda a: aten.copysign.Scalar(a, -0.0), special(3, 5)),
]

# -- alpha on add/sub
CASES += [
    case(aten.add.Tensor, "alpha-f32", lambda a, b: aten.add.Tensor(a, b, alpha=2.5),
         randn(3, 4), randn(4)),
    case(aten.add.Tensor, "alpha-i64", lambda a, b: aten.add.Tensor(a, b, alpha=-3),
         ints(-9, 9, 3, 4), ints(-9, 9, 3, 4)),
    case(aten.sub.Tensor, "alpha-f32", lambda a, b: aten.sub.Tensor(a, b, alpha=0.5),
         randn(2, 3, 4), randn(3, 1)),
    case(aten.sub.Tensor, "alpha-i32", lambda a, b: aten.sub.Tensor(a, b, alpha=4),
         ints(-9, 9, 5, dtype=i32), ints(-9, 9, 5, dtype=i32)),
    case(aten.rsub.Tensor, "alpha-f32", lambda a, b: aten.rsub.Tensor(a, b, alpha=2),
         randn(3, 4), randn(4)),
]

# -- div with rounding modes (Tensor and Scalar divisors, negative operands)
for _mode in ("floor", "trunc", None):
    _m = _mode or "true"
    CASES += [
        case(aten.div.Tensor_mode, f"{_m}-f32-broadcast",
             lambda a, b, m=_mode: aten.div.Tensor_mode(a, b, rounding_mode=m),
             randn(3, 1, 5, scale=5), g_nonzero(4, 5)),
        case(aten.div.Tensor_mode, f"{_m}-i64-negative",
             lambda a, b, m=_mode: aten.div.Tensor_mode(a, b, rounding_mode=m),
             ints(-50, 50, 4, 6), g_nonzero(4, 6, dtype=i64)),
        case(aten.div.Tensor_mode, f"{_m}-i32-noncontig",
             lambda a, b, m=_mode: aten.div.Tensor_mode(a.t(), b, rounding_mode=m),
             ints(-50, 50, 6, 4, dtype=i32), g_nonzero(6, dtype=i32)),
        case(aten.div.Tensor_mode, f"{_m}-special",
             lambda a, b, m=_mode: aten.div.Tensor_mode(a, b, rounding_mode=m),
             special(5, 6, lo=-9, hi=9), special(5, 6)),
        case(aten.div.Tensor_mode, f"{_m}-f16",
             lambda a, b, m=_mode: aten.div.Tensor_mode(a, b, rounding_mode=m),
             randn(5, 6, dtype=f16, scale=5), g_nonzero(5, 6, dtype=f16)),
        case(aten.div.Tensor_mode, f"{_m}-i64-f32",
             lambda a, b, m=_mode: aten.div.Tensor_mode(a, b, rounding_mode=m),
             ints(-50, 50, 4, 6), g_nonzero(6)),
        case(aten.div.Scalar_mode, f"{_m}-f32",
             lambda a, m=_mode: aten.div.Scalar_mode(a, -2.5, rounding_mode=m),
             randn(4, 6, scale=5)),
        case(aten.div.Scalar_mode, f"{_m}-i64-int",
             lambda a, m=_mode: aten.div.Scalar_mode(a, 3, rounding_mode=m), ints(-50, 50, 4, 6)),
        case(aten.div.Scalar_mode, f"{_m}-i64-neg-int",
             lambda a, m=_mode: aten.div.Scalar_mode(a, -4, rounding_mode=m), ints(-50, 50, 9)),
        case(aten.div.Scalar_mode, f"{_m}-i32-float",
             lambda a, m=_mode: aten.div.Scalar_mode(a, 1.5, rounding_mode=m),
             ints(-50, 50, 9, dtype=i32)),
        case(aten.div.Scalar_mode, f"{_m}-special-by-zero",
             lambda a, m=_mode: aten.div.Scalar_mode(a, 0.0, rounding_mode=m), special(3, 5)),
        case(aten.div.Scalar_mode, f"{_m}-bf16-permuted",
             lambda a, m=_mode: aten.div.Scalar_mode(a.t(), 0.75, rounding_mode=m),
             randn(3, 5, dtype=bf16, scale=4)),
    ]


# -- Scalar overloads: a float scalar promotes an integer tensor to f32; an int
#    scalar keeps the tensor's dtype; neither widens a float tensor.
def scalar_cases(op, scalars, float_gen=randn, int_gen=None, bool_ok=False, special_ok=True):
    f = op
    int_gen = int_gen or (lambda *s, dtype=i64: ints(-9, 10, *s, dtype=dtype))
    fs, is_ = scalars
    out = [
        case(op, "f32-float", lambda a: f(a, fs), float_gen(3, 4)),
        case(op, "f32-int-permuted", lambda a: f(a.permute(1, 0), is_), float_gen(4, 3)),
        case(op, "f16-float", lambda a: f(a, fs), float_gen(5, 4, dtype=f16)),
        case(op, "bf16-int", lambda a: f(a, is_), float_gen(5, 4, dtype=bf16)),
        case(op, "f64-float", lambda a: f(a, fs), float_gen(2, 3, dtype=f64)),
        case(op, "empty", lambda a: f(a, fs), float_gen(0, 3)),
    ]
    if special_ok:
        out.append(case(op, "special", lambda a: f(a, fs), special(4, 5)))
    for name, fn, x in (("i64-int", lambda a: f(a, is_), int_gen(3, 5)),
                        ("i32-int", lambda a: f(a, is_), int_gen(3, 5, dtype=i32)),
                        ("i64-float", lambda a: f(a, fs), int_gen(3, 5)),
                        ("i32-float-strided", lambda a: f(a[::2], fs), int_gen(6, 2, dtype=i32))):
        if torch_accepts(fn, x):
            out.append(case(op, name, fn, x))
    if bool_ok:
        for name, fn in (("bool-int", lambda a: f(a, is_)), ("bool-bool", lambda a: f(a, True))):
            if torch_accepts(fn, bools(3)):
                out.append(case(op, name, fn, bools(3, 4)))
    return out


CASES += scalar_cases(aten.add.Scalar, (2.5, 3), bool_ok=True)
CASES += scalar_cases(aten.sub.Scalar, (-1.25, 7))
CASES += scalar_cases(aten.mul.Scalar, (0.5, -3), bool_ok=True)
CASES += scalar_cases(aten.div.Scalar, (-2.5, 4))
CASES += scalar_cases(aten.fmod.Scalar, (1.5, -3))
CASES += scalar_cases(aten.remainder.Scalar, (-1.5, 3))
CASES += scalar_cases(aten.pow.Tensor_Scalar, (0.5, 3), float_gen=lambda *s, dtype=f32: randn(
    *s, dtype=dtype, scale=2))
CASES += scalar_cases(aten.rsub.Scalar, (1.5, 2))
for _op, _s in ((aten.eq.Scalar, (0.5, 2)), (aten.ne.Scalar, (0.5, 2)), (aten.lt.Scalar, (0.5, 2)),
                (aten.le.Scalar, (-0.5, 1)), (aten.gt.Scalar, (0.5, -2)),
                (aten.ge.Scalar, (1.5, 0))):
    CASES += scalar_cases(_op, _s, float_gen=lambda *s, dtype=f32: (
        ints(-3, 4, *s).to(dtype) * 0.5), bool_ok=True)
    CASES.append(case(_op, "f32-vs-inf", lambda a, f=_op: f(a, INF), special(3, 4)))
    CASES.append(case(_op, "f32-vs-nan", lambda a, f=_op: f(a, NAN), special(3, 4)))
for _op, _s in ((aten.bitwise_and.Scalar, 6), (aten.bitwise_or.Scalar, -3),
                (aten.bitwise_xor.Scalar, 5), (aten.bitwise_left_shift.Tensor_Scalar, 3),
                (aten.bitwise_right_shift.Tensor_Scalar, 2), (aten.__lshift__.Scalar, 4),
                (aten.__rshift__.Scalar, 1), (aten.__and__.Scalar, 12), (aten.__or__.Scalar, 1),
                (aten.__xor__.Scalar, -1)):
    CASES += [
        case(_op, "i64", lambda a, f=_op, s=_s: f(a, s), ints(-100, 100, 3, 5)),
        case(_op, "i32-permuted", lambda a, f=_op, s=_s: f(a.t(), s), ints(-100, 100, 5, 3,
                                                                             dtype=i32)),
        case(_op, "i64-empty", lambda a, f=_op, s=_s: f(a, s), ints(-100, 100, 0, 5)),
    ]
    if torch_accepts(_op, bools(2), True):
        CASES.append(case(_op, "bool", lambda a, f=_op: f(a, True), bools(4, 3)))
for _op in (aten.__and__.Tensor, aten.__or__.Tensor, aten.__xor__.Tensor):
    CASES += [
        case(_op, "i64-broadcast", lambda a, b, f=_op: f(a, b), ints(-99, 99, 3, 1),
             ints(-99, 99, 4)),
        case(_op, "bool", lambda a, b, f=_op: f(a, b), bools(3, 4), bools(3, 4)),
        case(_op, "i32-i64", lambda a, b, f=_op: f(a, b), ints(-99, 99, 5, dtype=i32),
             ints(-99, 99, 5)),
    ]

# -- pow overloads beyond the batteries
CASES += [
    case(aten.pow.Tensor_Scalar, "square", lambda a: aten.pow.Tensor_Scalar(a, 2), randn(4, 5)),
    case(aten.pow.Tensor_Scalar, "neg-one", lambda a: aten.pow.Tensor_Scalar(a, -1),
         g_nonzero(4, 5)),
    case(aten.pow.Tensor_Scalar, "neg-base-fractional-nan",
         lambda a: aten.pow.Tensor_Scalar(a, 1.5), randn(4, 5)),
    case(aten.pow.Tensor_Scalar, "zero-exponent-special",
         lambda a: aten.pow.Tensor_Scalar(a, 0), special(4, 5)),
    case(aten.pow.Tensor_Scalar, "i64-zero", lambda a: aten.pow.Tensor_Scalar(a, 0),
         ints(-5, 5, 6)),
    case(aten.pow.Tensor_Scalar, "neg-two-special", lambda a: aten.pow.Tensor_Scalar(a, -2.0),
         special(4, 5)),
    # torch computes x ** 0.5 as sqrt(x) and x ** -0.5 as rsqrt(x): NaN at -inf, -inf at -0
    case(aten.pow.Tensor_Scalar, "neg-half-special", lambda a: aten.pow.Tensor_Scalar(a, -0.5),
         special(4, 5)),
    case(aten.pow.Tensor_Scalar, "half-special", lambda a: aten.pow.Tensor_Scalar(a, 0.5),
         special(4, 5)),
    case(aten.pow.Tensor_Tensor, "neg-base-int-exponent",
         lambda a, b: aten.pow.Tensor_Tensor(a, b), randn(4, 5), ints(-3, 4, 4, 5).float()),
    case(aten.pow.Tensor_Tensor, "i64-base-i64-exp", lambda a, b: aten.pow.Tensor_Tensor(a, b),
         ints(-7, 8, 3, 5), ints(0, 9, 5)),
    case(aten.pow.Tensor_Tensor, "f32-base-i64-exp", lambda a, b: aten.pow.Tensor_Tensor(a, b),
         randn(3, 5), ints(-2, 4, 3, 5)),
    case(aten.pow.Scalar, "float-base", lambda e: aten.pow.Scalar(2.0, e), randn(4, 5, scale=3)),
    case(aten.pow.Scalar, "int-base-i64", lambda e: aten.pow.Scalar(3, e), ints(0, 12, 4, 5)),
    case(aten.pow.Scalar, "float-base-i64", lambda e: aten.pow.Scalar(1.5, e), ints(-4, 12, 4, 5)),
    case(aten.pow.Scalar, "neg-base-special", lambda e: aten.pow.Scalar(-2.0, e), special(4, 5)),
    case(aten.pow.Scalar, "zero-base", lambda e: aten.pow.Scalar(0.0, e), special(4, 5)),
    case(aten.pow.Scalar, "f16-permuted", lambda e: aten.pow.Scalar(0.5, e.t()),
         randn(4, 5, dtype=f16)),
    case(aten.pow.Scalar, "bf16-empty", lambda e: aten.pow.Scalar(10.0, e),
         randn(0, 5, dtype=bf16)),
]

# -- where: bool condition, three-way broadcast, promotion of the two branches
_w = aten.where.self
CASES += [
    case(_w, "broadcast", lambda c, a, b: _w(c, a, b), bools(4, 1), randn(4, 5), randn(5)),
    case(_w, "noncontig", lambda c, a, b: _w(c.t(), a[:, ::2], b), bools(5, 3), randn(3, 10),
         randn(3, 5)),
    case(_w, "i64", lambda c, a, b: _w(c, a, b), bools(2, 3, 4), ints(-9, 9, 3, 4), ints(-9, 9, 4)),
    case(_w, "i32-bool-values", lambda c, a, b: _w(c, a, b), bools(3, 4), bools(3, 4), bools(4)),
    case(_w, "promote-f32-f64", lambda c, a, b: _w(c, a, b), bools(3, 4), randn(3, 4),
         randn(3, 4, dtype=f64)),
    case(_w, "promote-i64-f32", lambda c, a, b: _w(c, a, b), bools(3, 4), ints(-9, 9, 3, 4),
         randn(4)),
    case(_w, "0d-branch", lambda c, a, b: _w(c, a, b), bools(3, 4), randn(3, 4, dtype=f16),
         randn(dtype=f32)),
    case(_w, "special", lambda c, a, b: _w(c, a, b), bools(4, 5), special(4, 5), special(4, 5)),
    case(_w, "empty", lambda c, a, b: _w(c, a, b), bools(0, 5), randn(1, 5), randn(5)),
    case(_w, "bf16-0d-cond", lambda c, a, b: _w(c, a, b), bools(), randn(3, dtype=bf16),
         randn(3, dtype=bf16)),
]

# -- clamp with scalar bounds (None = unbounded) and tensor bounds
_c, _ct = aten.clamp.default, aten.clamp.Tensor
CASES += [
    case(_c, "both-f32", lambda x: _c(x, -0.5, 0.75), randn(3, 4, 5)),
    case(_c, "min-only-permuted", lambda x: _c(x.permute(2, 0, 1), -0.25), randn(3, 4, 5)),
    case(_c, "max-only", lambda x: _c(x, None, 0.1), randn(6, 2)),
    case(_c, "i64-int-bounds", lambda x: _c(x, -3, 4), ints(-9, 9, 4, 5)),
    case(_c, "i32-float-bound-promotes", lambda x: _c(x, 0.5), ints(-3, 3, 4, 5, dtype=i32)),
    case(_c, "special", lambda x: _c(x, -1.0, 1.0), special(4, 5)),
    case(_c, "min-gt-max", lambda x: _c(x, 2.0, 1.0), randn(4, 5, scale=3)),
    case(_c, "f16", lambda x: _c(x, -1, 1), randn(4, 5, dtype=f16, scale=2)),
    case(_c, "bf16-empty", lambda x: _c(x, -1, 1), randn(4, 0, dtype=bf16)),
    case(_c, "inf-bounds", lambda x: _c(x, -INF, INF), special(4, 5)),
    case(_ct, "both-broadcast", lambda x, lo, hi: _ct(x, lo, hi), randn(3, 4, 5), randn(4, 1) - 0.5,
         randn(5) + 0.5),
    case(_ct, "min-only-noncontig", lambda x, lo: _ct(x.t(), lo), randn(5, 4), randn(4, 1)),
    case(_ct, "max-only", lambda x, hi: _ct(x, None, hi), randn(3, 4), randn(4)),
    case(_ct, "i64", lambda x, lo, hi: _ct(x, lo, hi), ints(-9, 9, 4, 5), ints(-5, 0, 5),
         ints(0, 5, 4, 1)),
    case(_ct, "i64-f32-bounds-promote", lambda x, lo, hi: _ct(x, lo, hi), ints(-9, 9, 4, 5),
         randn(5), randn(5) + 2),
    case(_ct, "special", lambda x, lo, hi: _ct(x, lo, hi), special(4, 5), randn(4, 5) - 1,
         randn(4, 5) + 1),
    case(_ct, "min-gt-max", lambda x, lo, hi: _ct(x, lo, hi), randn(4, 5), randn(4, 5) + 3,
         randn(4, 5) - 3),
    case(_ct, "f16-0d-bounds", lambda x, lo, hi: _ct(x, lo, hi), randn(4, 5, dtype=f16),
         randn(dtype=f16) - 1, randn(dtype=f16) + 1),
    case(aten.clamp_min.default, "f32", lambda x: aten.clamp_min.default(x, 0.3), randn(3, 4)),
    case(aten.clamp_min.default, "i64", lambda x: aten.clamp_min.default(x, -2), ints(-9, 9, 7)),
    case(aten.clamp_min.default, "special", lambda x: aten.clamp_min.default(x, 0.0),
         special(3, 4)),
    case(aten.clamp_max.default, "f32", lambda x: aten.clamp_max.default(x, 0.3), randn(3, 4)),
    case(aten.clamp_max.default, "i32", lambda x: aten.clamp_max.default(x, 2),
         ints(-9, 9, 7, dtype=i32)),
    case(aten.clamp_max.default, "special", lambda x: aten.clamp_max.default(x, 0.0),
         special(3, 4)),
    case(aten.clamp_min.Tensor, "broadcast", lambda x, m: aten.clamp_min.Tensor(x, m), randn(3, 4),
         randn(4)),
    case(aten.clamp_min.Tensor, "i64", lambda x, m: aten.clamp_min.Tensor(x, m), ints(-9, 9, 5),
         ints(-3, 3, 5)),
    case(aten.clamp_min.Tensor, "special", lambda x, m: aten.clamp_min.Tensor(x, m),
         special(3, 4), randn(3, 4)),
    case(aten.clamp_max.Tensor, "broadcast", lambda x, m: aten.clamp_max.Tensor(x, m), randn(3, 4),
         randn(3, 1)),
    case(aten.clamp_max.Tensor, "i32-f32-promotes", lambda x, m: aten.clamp_max.Tensor(x, m),
         ints(-9, 9, 5, dtype=i32), randn(5)),
    case(aten.clamp_max.Tensor, "special", lambda x, m: aten.clamp_max.Tensor(x, m),
         special(3, 4), randn(4)),

    case(aten.clip.default, "both", lambda x: aten.clip.default(x, -0.5, 0.5), special(4, 5)),
    case(aten.clip.default, "i64-min-only", lambda x: aten.clip.default(x, 0), ints(-9, 9, 6)),
    case(aten.clip.default, "f16-max-only", lambda x: aten.clip.default(x, None, 0.25),
         randn(3, 4, dtype=f16)),
    case(aten.clip.Tensor, "broadcast", lambda x, lo, hi: aten.clip.Tensor(x, lo, hi), randn(3, 4),
         randn(4) - 0.5, randn(3, 1) + 0.5),
    case(aten.clip.Tensor, "min-only", lambda x, lo: aten.clip.Tensor(x, lo), randn(3, 4),
         randn(4)),
    case(aten.clip.Tensor, "i64", lambda x, lo, hi: aten.clip.Tensor(x, lo, hi), ints(-9, 9, 5),
         ints(-5, 0, 5), ints(0, 5, 5)),
]

# -- masked_fill: a real select (so -inf and NaN fill values stay exact)
_mf, _mft = aten.masked_fill.Scalar, aten.masked_fill.Tensor
CASES += [
    case(_mf, "neg-inf", lambda x, m: _mf(x, m, -INF), randn(3, 4, 5), bools(3, 4, 5)),
    case(_mf, "pos-inf-broadcast-mask", lambda x, m: _mf(x, m, INF), randn(3, 4, 5), bools(4, 1)),
    case(_mf, "nan", lambda x, m: _mf(x, m, NAN), randn(3, 4), bools(3, 4)),
    case(_mf, "special-input", lambda x, m: _mf(x, m, 0.0), special(4, 5), bools(4, 5)),
    case(_mf, "i64", lambda x, m: _mf(x, m, 7), ints(-9, 9, 3, 4), bools(3, 4)),
    case(_mf, "bool", lambda x, m: _mf(x, m, True), bools(3, 4), bools(3, 4)),
    case(_mf, "f16-neg-inf-noncontig", lambda x, m: _mf(x.t(), m, -INF), randn(5, 4, dtype=f16),
         bools(4, 5)),
    case(_mf, "bf16-empty", lambda x, m: _mf(x, m, -1.0), randn(0, 4, dtype=bf16), bools(4)),
    case(_mf, "causal-attention-mask", lambda x: _mf(x, torch.ones(5, 5, dtype=b8).triu(1), -INF),
         randn(2, 5, 5)),
    case(_mft, "0d-value", lambda x, m, v: _mft(x, m, v), randn(3, 4), bools(3, 4), randn()),
    case(_mft, "0d-neg-inf", lambda x, m, v: _mft(x, m, v), randn(3, 4), bools(4),
         torch.tensor(-INF)),
    case(_mft, "i64", lambda x, m, v: _mft(x, m, v), ints(-9, 9, 3, 4), bools(3, 4),
         torch.tensor(5)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
