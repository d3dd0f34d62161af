"""Conformance: the unsigned dtypes torch added in 2.3 — uint16, uint32, uint64.

torch's CPU kernels support them for few ops (most raise "not implemented for
'UInt32'"): casts, data movement and indexing, eq/ne, bitwise and/or/xor,
minimum/maximum, clamp, mul, true division (to float), sum/prod/cumsum (to
int64), sort. Each case here is added only where eager torch runs it
(``torch_accepts``), for each of the three dtypes.  Values span the whole
range: u64 values above 2^63 (negative as int64 bits) check that rlx
compares, divides, sorts and converts them as unsigned; hash_tensor (whose
output is uint64) and view(dtype) (the bytes as another dtype) are here too; casts from float
take negative and fractional values (negative integers wrap, as torch's x86
casts do; values outside the target's range are left out, torch's answer
for them depends on whether its loop was vectorized).
"""

import pytest
import torch

from cases import (aten, bf16, case, case_id, f16, f32, f64, i16, i32, i64, i8, ints, seed,
                   torch_accepts, u8, uniform)

seed("test_unsigned")

U16, U32, U64 = torch.uint16, torch.uint32, torch.uint64
UNSIGNED = (U16, U32, U64)
_MAX = {U16: 2**16 - 1, U32: 2**32 - 1, U64: 2**64 - 1}
_gen = torch.Generator().manual_seed(11)


def uvals(dtype, *shape, hi=None):
    """Values over the whole range of ``dtype`` (or [0, hi)), with 0 and the
    maximum among them; uint64 from random int64 bits (half above 2^63)."""
    n = 1
    for d in shape:
        n *= d
    if dtype == U64 and hi is None:
        t = torch.randint(-2**63, 2**63 - 1, (n,), generator=_gen, dtype=i64).view(U64)
    else:
        top = hi if hi is not None else _MAX[dtype] + 1
        t = torch.randint(0, top, (n,), generator=_gen, dtype=i64).to(dtype)
    if n >= 2 and hi is None:
        t[0] = 0
        t[1] = _MAX[dtype] if dtype != U64 else torch.tensor(-1, dtype=i64).view(U64)
    return t.reshape(shape)


def _name(dt):
    return str(dt).replace("torch.", "").replace("uint", "u")


CASES = []


def add(op, name, fn, *inputs, **kw):
    """A case, only where eager torch defines fn for these inputs."""
    if torch_accepts(fn, *inputs):
        CASES.append(case(op, name, fn, *inputs, **kw))


_tc = aten._to_copy.default
_all_dtypes = (f32, f64, f16, bf16, i64, i32, i16, i8, u8, torch.bool) + UNSIGNED
for U in UNSIGNED:
    u = _name(U)
    # -- casts to and from every dtype
    for D in _all_dtypes:
        if D == U:
            continue
        d = _name(D)
        add(_tc, f"{u}-to-{d}", lambda x, D=D: _tc(x, dtype=D), uvals(U, 4, 6))
        if D.is_floating_point:
            src = torch.cat([uniform(-3, 3, 12, dtype=f64), uniform(0, min(_MAX[U], 2**60), 12,
                                                                    dtype=f64)]).to(D)
            src = src[(src.double() < _MAX[U]) & (src.double() > -2**31)]
            add(_tc, f"{d}-to-{u}", lambda x, U=U: _tc(x, dtype=U), src)
        elif D in UNSIGNED:
            continue  # the other dtype's "{u}-to-{d}"
        elif D == torch.bool:
            add(_tc, f"bool-to-{u}", lambda x, U=U: _tc(x, dtype=U), ints(0, 2, 9).bool())
        else:
            info = torch.iinfo(D)
            add(_tc, f"{d}-to-{u}-wraps", lambda x, U=U: _tc(x, dtype=U),
                torch.cat([ints(max(info.min, -2**62), min(info.max, 2**62), 10),
                           torch.tensor([-1, 0, info.max, info.min])]).to(D))
    # -- data movement and indexing
    x46 = uvals(U, 4, 6)
    add(aten.permute.default, f"{u}", lambda x: aten.permute.default(x, [1, 0]).contiguous(), x46)
    add(aten.cat.default, f"{u}", lambda x, y: aten.cat.default([x, y], 1), x46, uvals(U, 4, 2))
    add(aten.stack.default, f"{u}", lambda x, y: aten.stack.default([x, y]), x46, uvals(U, 4, 6))
    add(aten.slice.Tensor, f"{u}-step", lambda x: aten.slice.Tensor(x, 1, 1, 6, 2), x46)
    add(aten.select.int, f"{u}", lambda x: aten.select.int(x, 0, -1), x46)
    add(aten.expand.default, f"{u}", lambda x: aten.expand.default(x, [3, 4, 6]), x46)
    add(aten.flip.default, f"{u}", lambda x: aten.flip.default(x, [0, 1]), x46)
    add(aten.roll.default, f"{u}", lambda x: aten.roll.default(x, [2], [1]), x46)
    add(aten.repeat.default, f"{u}", lambda x: aten.repeat.default(x, [2, 1]), x46)
    add(aten.constant_pad_nd.default, f"{u}", lambda x: aten.constant_pad_nd.default(x, [1, 2], 7),
        x46)
    add(aten.index.Tensor, f"{u}", lambda x, i: aten.index.Tensor(x, [i]), x46,
        torch.tensor([3, 0, -1]))
    add(aten.index_select.default, f"{u}", lambda x, i: aten.index_select.default(x, 1, i), x46,
        torch.tensor([5, 0, 2]))
    add(aten.gather.default, f"{u}", lambda x, i: aten.gather.default(x, 1, i), x46,
        ints(0, 6, 4, 3))
    add(aten.scatter.src, f"{u}", lambda x, i, s: aten.scatter.src(x, 1, i, s), x46,
        torch.tensor([[0, 1], [2, 3], [4, 5], [1, 0]]), uvals(U, 4, 2))
    add(aten.scatter_add.default, f"{u}-wraps", lambda x, i, s: aten.scatter_add.default(x, 0, i, s),
        x46, ints(0, 4, 3, 6), uvals(U, 3, 6))
    add(aten.embedding.default, f"{u}", lambda w, i: aten.embedding.default(w, i), x46,
        ints(0, 4, 2, 3))
    add(aten.diagonal.default, f"{u}", lambda x: aten.diagonal.default(x, 1).contiguous(), x46)
    add(aten.unfold.default, f"{u}", lambda x: aten.unfold.default(x, 1, 3, 2).contiguous(), x46)
    add(aten.full.default, f"{u}-wraps-negative", lambda: aten.full.default([2, 3], -2, dtype=U))
    add(aten.zeros_like.default, f"{u}", lambda x: aten.zeros_like.default(x), x46)
    add(aten.where.self, f"{u}", lambda c, x, y: aten.where.self(c, x, y), ints(0, 2, 4, 6).bool(),
        x46, uvals(U, 4, 6))
    # -- compare, bitwise, min/max, clamp
    y46 = uvals(U, 4, 6)
    for k in ("eq", "ne", "lt", "le", "gt", "ge"):
        op = getattr(aten, k).Tensor
        add(op, f"{u}", lambda a, b, op=op: op(a, b), x46, torch.where(ints(0, 2, 4, 6).bool(), x46, y46))
    add(aten.eq.Scalar, f"{u}", lambda a: aten.eq.Scalar(a, 5), uvals(U, 3, 5, hi=8))
    for k in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        op = getattr(aten, k).Tensor
        add(op, f"{u}", lambda a, b, op=op: op(a, b), x46, y46)
        ops = getattr(aten, k).Scalar
        add(ops, f"{u}", lambda a, ops=ops: ops(a, 0x5A5A), x46)
    add(aten.bitwise_not.default, f"{u}", lambda a: aten.bitwise_not.default(a), x46)
    add(aten.bitwise_left_shift.Tensor, f"{u}", lambda a, b: aten.bitwise_left_shift.Tensor(a, b),
        x46, uvals(U, 4, 6, hi=8))
    add(aten.bitwise_right_shift.Tensor, f"{u}", lambda a, b: aten.bitwise_right_shift.Tensor(a, b),
        x46, uvals(U, 4, 6, hi=8))
    add(aten.maximum.default, f"{u}", lambda a, b: aten.maximum.default(a, b), x46, y46)
    add(aten.minimum.default, f"{u}", lambda a, b: aten.minimum.default(a, b), x46, y46)
    add(aten.clamp.default, f"{u}", lambda a: aten.clamp.default(a, 1000, 60000), x46)
    add(aten.amax.default, f"{u}", lambda a: aten.amax.default(a, [1]), x46)
    add(aten.max.default, f"{u}", lambda a: aten.max.default(a), x46)
    # -- arithmetic
    add(aten.add.Tensor, f"{u}-wraps", lambda a, b: aten.add.Tensor(a, b), x46, y46)
    add(aten.sub.Tensor, f"{u}-wraps", lambda a, b: aten.sub.Tensor(a, b), x46, y46)
    add(aten.mul.Tensor, f"{u}-wraps", lambda a, b: aten.mul.Tensor(a, b), x46, y46)
    add(aten.mul.Tensor, f"{u}-scalar", lambda a: aten.mul.Tensor(a, 3), x46)
    add(aten.div.Tensor, f"{u}-true", lambda a, b: aten.div.Tensor(a, b), x46,
        uvals(U, 4, 6) | torch.ones(4, 6, dtype=U))
    add(aten.div.Tensor_mode, f"{u}-floor", lambda a, b: aten.div.Tensor_mode(a, b, rounding_mode="floor"),
        x46, (uvals(U, 4, 6, hi=50).long() + 1).to(U))
    add(aten.remainder.Tensor, f"{u}", lambda a, b: aten.remainder.Tensor(a, b), x46,
        (uvals(U, 4, 6, hi=50).long() + 1).to(U))
    add(aten.sum.dim_IntList, f"{u}-to-i64", lambda a: aten.sum.dim_IntList(a, [1]), x46)
    add(aten.sum.default, f"{u}-to-i64", lambda a: aten.sum.default(a), x46)
    add(aten.prod.dim_int, f"{u}-to-i64", lambda a: aten.prod.dim_int(a, 0), uvals(U, 3, 4, hi=9))
    add(aten.cumsum.default, f"{u}-to-i64", lambda a: aten.cumsum.default(a, 1), x46)
    add(aten.sqrt.default, f"{u}-to-f32", lambda a: aten.sqrt.default(a), x46)
    add(aten.isnan.default, f"{u}", lambda a: aten.isnan.default(a), x46)
    add(aten.any.dim, f"{u}", lambda a: aten.any.dim(a, 1), uvals(U, 4, 6, hi=2))
    # -- sorting: u64 above 2^63 must sort as unsigned
    add(aten.sort.default, f"{u}", lambda a: aten.sort.default(a, 1), x46)
    add(aten.sort.default, f"{u}-descending-ties", lambda a: aten.sort.default(a, 1, True),
        uvals(U, 3, 40, hi=4))
    add(aten.sort.stable, f"{u}-stable-ties", lambda a: aten.sort.stable(a, stable=True, dim=0),
        uvals(U, 40, 3, hi=4))
    add(aten.argsort.default, f"{u}", lambda a: aten.argsort.default(a, 0), x46)

# -- hash_tensor: u64, the xor of each element's 64 bits (a float's double bits,
# an integer sign-extended, a bool as 0/1); torch refuses unsigned inputs
_ht = aten.hash_tensor.default
_fspecial = torch.tensor([[1.5, -0.0, 0.0, float("nan")], [float("inf"), -float("inf"), 3.0, -2.25],
                          [1e-40, -1e30, 7.0, 0.1]])
CASES += [
    case(_ht, "f32-all", lambda x: _ht(x), _fspecial),
    case(_ht, "f32-dim-1", lambda x: _ht(x, [1]), _fspecial),
    case(_ht, "f32-dim-0-keepdim", lambda x: _ht(x, [0], keepdim=True), _fspecial),
    case(_ht, "dims-neg", lambda x: _ht(x, [-1, 0]), uniform(-5, 5, 3, 4, 5)),
    case(_ht, "noncontig", lambda x: _ht(x.permute(2, 0, 1), [1]), uniform(-5, 5, 3, 4, 5)),
    case(_ht, "i64-negative", lambda x: _ht(x, [1]), ints(-2**62, 2**62, 4, 7)),
    case(_ht, "i32", lambda x: _ht(x), ints(-2**31, 2**31 - 1, 5, 3, dtype=i32)),
    case(_ht, "i8-sign-extends", lambda x: _ht(x, [0]), ints(-128, 128, 6, 2, dtype=i8)),
    case(_ht, "u8", lambda x: _ht(x, [1]), ints(0, 256, 3, 9, dtype=u8)),
    case(_ht, "bool", lambda x: _ht(x, [1], keepdim=True), ints(0, 2, 4, 5).bool()),
    case(_ht, "f16", lambda x: _ht(x, [1]), uniform(-9, 9, 3, 6, dtype=f16)),
    case(_ht, "bf16", lambda x: _ht(x), uniform(-9, 9, 3, 6, dtype=bf16)),
    case(_ht, "f64", lambda x: _ht(x, [0]), uniform(-9, 9, 5, 2, dtype=f64)),
    case(_ht, "0d", lambda x: _ht(x), torch.tensor(2.0)),
    case(_ht, "empty-kept-axis", lambda x: _ht(x, [1]), torch.zeros(0, 3)),
]

# -- view(dtype): the same bytes as another dtype (little-endian), the last dim
# scaled by the ratio of the element sizes
_vd = aten.view.dtype
CASES += [
    case(_vd, "f32-to-u32", lambda x: _vd(x, U32), torch.tensor([[1.0, -0.0, float("nan")], [float("inf"), -2.5, 1e-40]])),
    case(_vd, "i64-to-u64", lambda x: _vd(x, U64), ints(-2**62, 2**62, 3, 4)),
    case(_vd, "u64-to-f64", lambda x: _vd(x, f64), uvals(U64, 2, 5)),
    case(_vd, "u8-to-u32-joins", lambda x: _vd(x, U32), ints(0, 256, 3, 8, dtype=u8)),
    case(_vd, "u32-to-u8-splits", lambda x: _vd(x, u8), uvals(U32, 2, 3)),
    case(_vd, "u64-to-u16-splits", lambda x: _vd(x, U16), uvals(U64, 4)),
    case(_vd, "u16-to-i64-joins", lambda x: _vd(x, i64), uvals(U16, 2, 8)),
    case(_vd, "f16-to-u16", lambda x: _vd(x, U16), uniform(-9, 9, 3, 3, dtype=f16)),
    case(_vd, "u16-to-bf16", lambda x: _vd(x, bf16), uvals(U16, 2, 4, hi=2**15)),
    case(_vd, "bool-to-u8", lambda x: _vd(x, u8), ints(0, 2, 5).bool()),
    case(_vd, "0d", lambda x: _vd(x, U32), torch.tensor(-1, dtype=i32)),
    case(_vd, "noncontig-same-size", lambda x: _vd(x.t(), U32), uniform(-5, 5, 3, 4)),
    case(_vd, "same-dtype", lambda x: _vd(x, U32), uvals(U32, 3)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
