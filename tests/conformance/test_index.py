"""Conformance: gathers, scatters, advanced indexing, sorting and selection.

Indices are i64 unless a case says i32; negative indices are used where the op
accepts them (index.Tensor, index_put; gather, index_select and embedding do
not).  Non-accumulating scatters and index_put get duplicate-free indices
(``perm_along``, ``perm_index``) because torch leaves the winner of a
duplicate unspecified; accumulating ones get duplicates on purpose.  Sorts and
topk use tie-free values (``distinct``), except the ``stable`` cases, which
test tie order deliberately.
"""

import pytest
import torch

from cases import (INF, NAN, aten, b8, bf16, bools, case, case_id, distinct, f16, f64, i32, i64,
                   ints, perm_along, perm_index, randn, seed, special)

seed("test_index")

CASES = []

# -- index_select
_is = aten.index_select.default
CASES += [
    case(_is, "dim-0", lambda x, i: _is(x, 0, i), randn(5, 3), ints(0, 5, 7)),
    case(_is, "dim-neg-noncontig", lambda x, i: _is(x.permute(2, 0, 1), -1, i), randn(3, 4, 5),
         ints(0, 4, 6)),
    case(_is, "i32-index", lambda x, i: _is(x, 1, i), randn(3, 6), ints(0, 6, 4, dtype=i32)),
    case(_is, "empty-index", lambda x, i: _is(x, 0, i), randn(4, 3), ints(0, 4, 0)),
    case(_is, "i64-data-0d-index", lambda x, i: _is(x, 1, i), ints(-99, 99, 3, 4),
         torch.tensor(2)),
    case(_is, "bool-data", lambda x, i: _is(x, 0, i), bools(5, 2), ints(0, 5, 5)),
    case(_is, "f16", lambda x, i: _is(x, 1, i), randn(2, 8, dtype=f16), ints(0, 8, 8)),
    case(_is, "special", lambda x, i: _is(x, 0, i), special(4, 5), ints(0, 4, 6)),
]

# -- index.Tensor: advanced indexing (None = a full slice)
_ix = aten.index.Tensor
CASES += [
    case(_ix, "one-index", lambda x, i: _ix(x, [i]), randn(5, 3), ints(0, 5, 4)),
    case(_ix, "negative-indices", lambda x, i: _ix(x, [i]), randn(5, 3), ints(-5, 5, 2, 3)),
    case(_ix, "second-dim", lambda x, i: _ix(x, [None, i]), randn(3, 6, 2), ints(-6, 6, 4)),
    case(_ix, "two-broadcast", lambda x, i, j: _ix(x, [i, j]), randn(5, 6, 2), ints(0, 5, 3, 1),
         ints(-6, 6, 4)),
    case(_ix, "separated-advanced-dims-first", lambda x, i, j: _ix(x, [i, None, j]),
         randn(4, 3, 5), ints(0, 4, 2), ints(0, 5, 2)),
    case(_ix, "adjacent-in-middle", lambda x, i, j: _ix(x, [None, i, j]), randn(2, 4, 5, 3),
         ints(0, 4, 6), ints(0, 5, 6)),
    case(_ix, "three-indices", lambda x, i, j, k: _ix(x, [i, j, k]), randn(3, 4, 5),
         ints(0, 3, 2, 1, 1), ints(0, 4, 1, 3, 1), ints(-5, 5, 4)),
    case(_ix, "0d-index", lambda x, i: _ix(x, [None, i]), randn(3, 4), torch.tensor(-1)),
    case(_ix, "i32-index-noncontig", lambda x, i: _ix(x.t(), [i]), randn(3, 5),
         ints(0, 5, 4, dtype=i32)),
    case(_ix, "i64-data", lambda x, i: _ix(x, [i]), ints(-99, 99, 6, 2), ints(0, 6, 3)),
    case(_ix, "bool-data", lambda x, i: _ix(x, [None, i]), bools(2, 6), ints(0, 6, 3)),
    case(_ix, "empty-index", lambda x, i: _ix(x, [i]), randn(4, 3), ints(0, 4, 0)),
    case(_ix, "bf16", lambda x, i: _ix(x, [i]), randn(4, 3, dtype=bf16), ints(0, 4, 5)),
]

# -- index_put (accumulate=False needs distinct targets; accumulate=True sums duplicates)
_ip = aten.index_put.default
CASES += [
    case(_ip, "rows", lambda x, i, v: _ip(x, [i], v), randn(6, 3), perm_index(6, 4), randn(4, 3)),
    case(_ip, "rows-broadcast-value", lambda x, i, v: _ip(x, [i], v), randn(6, 3),
         perm_index(6, 3), randn(3)),
    case(_ip, "negative-indices", lambda x, i, v: _ip(x, [i], v), randn(6, 3),
         perm_index(6, 4) - 6, randn(4, 3)),
    case(_ip, "two-indices", lambda x, i, j, v: _ip(x, [i, j], v), randn(4, 5),
         torch.tensor([0, 1, 3, 3]), torch.tensor([4, 0, 2, -1]), randn(4)),
    case(_ip, "second-dim", lambda x, i, v: _ip(x, [None, i], v), randn(3, 6),
         perm_index(6, 2), randn(3, 2)),
    case(_ip, "0d-value", lambda x, i, v: _ip(x, [i], v), randn(5, 2), perm_index(5, 2),
         torch.tensor(-INF)),
    case(_ip, "accumulate-duplicates", lambda x, i, v: _ip(x, [i], v, True), randn(5, 3),
         torch.tensor([1, 3, 1, 1, -1]), randn(5, 3)),
    case(_ip, "accumulate-i64", lambda x, i, v: _ip(x, [i], v, True), ints(-9, 9, 5),
         ints(0, 5, 9), ints(-9, 9, 9)),
    case(_ip, "accumulate-two-indices", lambda x, i, j, v: _ip(x, [i, j], v, True), randn(3, 4),
         ints(0, 3, 8), ints(0, 4, 8), randn(8)),
    case(_ip, "bool-data", lambda x, i, v: _ip(x, [i], v), bools(6), perm_index(6, 3), bools(3)),
    case(_ip, "f16-noncontig", lambda x, i, v: _ip(x.t(), [i], v), randn(3, 5, dtype=f16),
         perm_index(5, 2), randn(2, 3, dtype=f16)),
    case(_ip, "empty-index", lambda x, i, v: _ip(x, [i], v), randn(4, 3), ints(0, 4, 0),
         randn(0, 3)),
]

# -- gather (index may be smaller than the input off the gather axis)
_g = aten.gather.default
CASES += [
    case(_g, "dim-1", lambda x, i: _g(x, 1, i), randn(3, 5), ints(0, 5, 3, 7)),
    case(_g, "dim-0-smaller-index", lambda x, i: _g(x, 0, i), randn(4, 5), ints(0, 4, 2, 3)),
    case(_g, "dim-neg-noncontig", lambda x, i: _g(x.permute(2, 1, 0), -1, i), randn(3, 4, 5),
         ints(0, 3, 5, 4, 2)),
    case(_g, "i64-data", lambda x, i: _g(x, 1, i), ints(-99, 99, 3, 4), ints(0, 4, 3, 4)),
    case(_g, "bool-data", lambda x, i: _g(x, 0, i), bools(3, 4), ints(0, 3, 3, 4)),
    case(_g, "f16", lambda x, i: _g(x, 1, i), randn(3, 9, dtype=f16), ints(0, 9, 3, 2)),
    case(_g, "empty-index", lambda x, i: _g(x, 1, i), randn(3, 4), ints(0, 4, 3, 0)),
    case(_g, "special", lambda x, i: _g(x, 1, i), special(4, 5), ints(0, 5, 4, 5)),
]

# -- scatter / scatter_add / scatter_reduce on any axis
_ss, _sv, _sa, _sr = (aten.scatter.src, aten.scatter.value, aten.scatter_add.default,
                      aten.scatter_reduce.two)
CASES += [
    case(_ss, "dim-1", lambda x, i, s: _ss(x, 1, i, s), randn(3, 6), perm_along((3, 4), 1, 6),
         randn(3, 4)),
    case(_ss, "dim-0-src-larger", lambda x, i, s: _ss(x, 0, i, s), randn(5, 4),
         perm_along((3, 2), 0, 5), randn(4, 4)),
    case(_ss, "dim-neg-3d", lambda x, i, s: _ss(x, -1, i, s), randn(2, 3, 5),
         perm_along((2, 3, 2), -1, 5), randn(2, 3, 2)),
    case(_ss, "i64", lambda x, i, s: _ss(x, 0, i, s), ints(-9, 9, 4, 3), perm_along((4, 3), 0, 4),
         ints(-9, 9, 4, 3)),
    case(_ss, "noncontig-self", lambda x, i, s: _ss(x.t(), 1, i, s), randn(5, 3),
         perm_along((3, 2), 1, 5), randn(3, 2)),
    case(_ss, "bf16", lambda x, i, s: _ss(x, 1, i, s), randn(2, 4, dtype=bf16),
         perm_along((2, 4), 1, 4), randn(2, 4, dtype=bf16)),
    case(_sv, "dim-1", lambda x, i: _sv(x, 1, i, -1.5), randn(3, 6), ints(0, 6, 3, 2)),
    case(_sv, "neg-inf", lambda x, i: _sv(x, 0, i, -INF), randn(4, 3), ints(0, 4, 2, 3)),
    case(_sv, "i64", lambda x, i: _sv(x, -1, i, 7), ints(-9, 9, 2, 5), ints(0, 5, 2, 3)),
    case(_sv, "bool", lambda x, i: _sv(x, 1, i, True), bools(3, 4, p=0.1), ints(0, 4, 3, 2)),
    case(_sa, "dim-1-duplicates", lambda x, i, s: _sa(x, 1, i, s), randn(3, 4), ints(0, 4, 3, 9),
         randn(3, 9)),
    case(_sa, "dim-0", lambda x, i, s: _sa(x, 0, i, s), randn(4, 3), ints(0, 4, 6, 2),
         randn(6, 3)),
    case(_sa, "i64", lambda x, i, s: _sa(x, -1, i, s), ints(-9, 9, 2, 5), ints(0, 5, 2, 8),
         ints(-9, 9, 2, 8)),
    case(_sa, "noncontig-src", lambda x, i, s: _sa(x, 1, i, s.t()), randn(3, 4), ints(0, 4, 3, 5),
         randn(5, 3)),
    case(_sa, "f16", lambda x, i, s: _sa(x, 0, i, s), randn(3, 4, dtype=f16), ints(0, 3, 5, 4),
         randn(5, 4, dtype=f16)),
]
for _red in ("sum", "prod", "mean", "amax", "amin"):
    for _incl in (True, False):
        _t = "self" if _incl else "noself"
        CASES += [
            case(_sr, f"{_red}-{_t}-dim-1", lambda x, i, s, r=_red, n=_incl: _sr(
                x, 1, i, s, r, include_self=n), randn(3, 5), ints(0, 5, 3, 8),
                 randn(3, 8) if _red != "prod" else randn(3, 8) * 0.5 + 1),
            case(_sr, f"{_red}-{_t}-dim-0-i64", lambda x, i, s, r=_red, n=_incl: _sr(
                x, 0, i, s, r, include_self=n), ints(-5, 5, 4, 3), ints(0, 4, 6, 3),
                 ints(-5, 5, 6, 3)),
        ]
    CASES.append(case(_sr, f"{_red}-self-dim-neg-special", lambda x, i, s, r=_red: _sr(
        x, -1, i, s, r), special(2, 4), ints(0, 4, 2, 6), special(2, 6)))

# -- masked_scatter: true positions take source values in order
_ms = aten.masked_scatter.default
CASES += [
    case(_ms, "same-shape", lambda x, m, s: _ms(x, m, s), randn(3, 4), bools(3, 4), randn(12)),
    case(_ms, "broadcast-mask", lambda x, m, s: _ms(x, m, s), randn(3, 4), bools(4), randn(3, 5)),
    case(_ms, "i64", lambda x, m, s: _ms(x, m, s), ints(-9, 9, 2, 5), bools(2, 5), ints(-9, 9, 10)),
    case(_ms, "noncontig", lambda x, m, s: _ms(x.t(), m, s), randn(4, 3), bools(3, 4),
         randn(20)),
    case(_ms, "all-false", lambda x, m, s: _ms(x, m, s), randn(3, 2), torch.zeros(3, 2, dtype=b8),
         randn(1)),
]

# -- embedding (padding_idx changes only the gradient) and embedding_bag
_e = aten.embedding.default
CASES += [
    case(_e, "2d-ids", lambda w, i: _e(w, i), randn(10, 4), ints(0, 10, 2, 5)),
    case(_e, "padding-idx", lambda w, i: _e(w, i, 0), randn(10, 4), ints(0, 10, 3, 3)),
    case(_e, "i32-ids", lambda w, i: _e(w, i), randn(7, 3), ints(0, 7, 6, dtype=i32)),
    case(_e, "f16-table", lambda w, i: _e(w, i), randn(7, 3, dtype=f16), ints(0, 7, 2, 2)),
    case(_e, "empty-ids", lambda w, i: _e(w, i), randn(7, 3), ints(0, 7, 2, 0)),
    case(_e, "noncontig-table", lambda w, i: _e(w.t(), i), randn(3, 7), ints(0, 7, 5)),
]
_eb = aten._embedding_bag.default
_ids, _offs = ints(0, 10, 9), torch.tensor([0, 2, 2, 6])
CASES += [
    case(_eb, "sum", lambda w, i, o: _eb(w, i, o, False, 0)[0], randn(10, 3), _ids, _offs),
    case(_eb, "mean", lambda w, i, o: _eb(w, i, o, False, 1)[0], randn(10, 3), _ids, _offs),
    case(_eb, "max", lambda w, i, o: _eb(w, i, o, False, 2)[0], distinct(10, 3), _ids, _offs),
    case(_eb, "per-sample-weights", lambda w, i, o, p: _eb(w, i, o, False, 0, False, p)[0],
         randn(10, 3), _ids, _offs, randn(9)),
    case(_eb, "include-last-offset", lambda w, i, o: _eb(w, i, o, False, 0, False, None, True)[0],
         randn(10, 3), _ids, torch.tensor([0, 2, 5, 9])),
    case(_eb, "padding-idx", lambda w, i, o: _eb(w, i, o, False, 1, False, None, False, 3)[0],
         randn(10, 3), torch.tensor([3, 1, 3, 3, 4, 5]), torch.tensor([0, 3, 4])),
]
_ebf = aten._embedding_bag_forward_only.default
CASES += [
    case(_ebf, "sum", lambda w, i, o: _ebf(w, i, o, False, 0)[0], randn(10, 3), _ids, _offs),
    case(_ebf, "mean", lambda w, i, o: _ebf(w, i, o, False, 1)[0], randn(10, 3), _ids, _offs),
    case(_ebf, "max", lambda w, i, o: _ebf(w, i, o, False, 2)[0], distinct(10, 3), _ids, _offs),
]

# -- _unsafe_index / _unsafe_index_put (what some decompositions emit; same semantics)
_ui, _uip = aten._unsafe_index.Tensor, aten._unsafe_index_put.default
CASES += [
    case(_ui, "one-index", lambda x, i: _ui(x, [i]), randn(5, 3), ints(-5, 5, 4)),
    case(_ui, "two-broadcast", lambda x, i, j: _ui(x, [i, j]), randn(5, 6), ints(0, 5, 3, 1),
         ints(0, 6, 4)),
    case(_ui, "second-dim", lambda x, i: _ui(x, [None, i]), ints(-9, 9, 3, 6), ints(0, 6, 2)),
    case(_uip, "rows", lambda x, i, v: _uip(x, [i], v), randn(6, 3), perm_index(6, 4),
         randn(4, 3)),
    case(_uip, "accumulate", lambda x, i, v: _uip(x, [i], v, True), randn(5), ints(0, 5, 8),
         randn(8)),
    case(_uip, "two-indices-i64", lambda x, i, j, v: _uip(x, [i, j], v), ints(-9, 9, 4, 4),
         torch.tensor([0, 2, 3]), torch.tensor([1, 1, -1]), ints(-9, 9, 3)),
]

# -- select_scatter / slice_scatter
_sls, _sels = aten.slice_scatter.default, aten.select_scatter.default
CASES += [
    case(_sels, "dim-0", lambda x, s: _sels(x, s, 0, 2), randn(4, 3), randn(3)),
    case(_sels, "neg-dim-neg-index", lambda x, s: _sels(x, s, -1, -1), randn(2, 3, 4), randn(2, 3)),
    case(_sels, "i64-noncontig", lambda x, s: _sels(x.t(), s, 1, 0), ints(-9, 9, 3, 4),
         ints(-9, 9, 4)),
    case(_sels, "bool", lambda x, s: _sels(x, s, 1, 1), bools(3, 2), bools(3)),
    case(_sls, "step-2", lambda x, s: _sls(x, s, 1, 0, 6, 2), randn(3, 6), randn(3, 3)),
    case(_sls, "neg-start-none-end", lambda x, s: _sls(x, s, 0, -2), randn(5, 3), randn(2, 3)),
    case(_sls, "neg-dim-middle", lambda x, s: _sls(x, s, -1, 1, 3), randn(2, 3, 5),
         randn(2, 3, 2)),
    case(_sls, "i32-end-past-size", lambda x, s: _sls(x, s, 0, 2, 100),
         ints(-9, 9, 4, 2, dtype=i32),
         ints(-9, 9, 2, 2, dtype=i32)),
    case(_sls, "empty-slice", lambda x, s: _sls(x, s, 1, 2, 2), randn(3, 4), randn(3, 0)),
]

# -- sort / argsort / topk (tie-free unless "stable")
_so, _sst = aten.sort.default, aten.sort.stable
CASES += [
    case(_so, "last-dim", lambda x: _so(x), distinct(3, 7)),
    case(_so, "dim-0-descending", lambda x: _so(x, 0, True), distinct(6, 3)),
    case(_so, "dim-neg-noncontig", lambda x: _so(x.permute(2, 0, 1), -2), distinct(3, 4, 5)),
    case(_so, "i64", lambda x: _so(x, 1), distinct(4, 9, dtype=i64)),
    case(_so, "i32-descending", lambda x: _so(x, 1, True), distinct(4, 9, dtype=i32)),
    case(_so, "f16", lambda x: _so(x, 1), distinct(3, 40, dtype=f16, step=1.0)),
    case(_so, "special-nan-last", lambda x: _so(x, 1),
         torch.tensor([[1.0, NAN, -INF, INF, 0.5, -2.0]])),
    case(_so, "special-descending", lambda x: _so(x, 1, True),
         torch.tensor([[1.0, NAN, -INF, INF, 0.5, -2.0]])),
    case(_so, "empty", lambda x: _so(x, 0), randn(0, 3)),
    case(_so, "size-1", lambda x: _so(x, 1), randn(4, 1)),
    case(_sst, "ties-stable", lambda x: _sst(x, stable=True, dim=1), ints(0, 3, 3, 10).float()),
    case(_sst, "ties-stable-descending", lambda x: _sst(x, stable=True, dim=0, descending=True),
         ints(0, 3, 10, 3)),
    case(_sst, "bool-ties", lambda x: _sst(x, stable=True, dim=-1), bools(2, 8)),
    case(aten.argsort.default, "dim-1", lambda x: aten.argsort.default(x, 1), distinct(4, 6)),
    case(aten.argsort.default, "descending-dim-0", lambda x: aten.argsort.default(x, 0, True),
         distinct(5, 3, dtype=i64)),
    case(aten.argsort.default, "noncontig", lambda x: aten.argsort.default(x.t()), distinct(5, 3)),
    case(aten.argsort.stable, "ties", lambda x: aten.argsort.stable(x, stable=True, dim=-1),
         ints(0, 3, 3, 10)),
    case(aten.argsort.stable, "ties-descending-dim-0", lambda x: aten.argsort.stable(
        x, stable=True, dim=0, descending=True), ints(0, 3, 8, 2).float()),
    case(aten.argsort.stable, "bool", lambda x: aten.argsort.stable(x, stable=True), bools(3, 7)),
]
_tk = aten.topk.default
CASES += [
    case(_tk, "largest", lambda x: _tk(x, 3), distinct(4, 9)),
    case(_tk, "smallest-dim-0", lambda x: _tk(x, 2, 0, False), distinct(6, 5)),
    case(_tk, "dim-neg-noncontig", lambda x: _tk(x.permute(0, 2, 1), 4, -2), distinct(2, 3, 7)),
    case(_tk, "k-equals-size", lambda x: _tk(x, 5, 1), distinct(3, 5)),
    case(_tk, "k-zero", lambda x: _tk(x, 0, 1), distinct(3, 5)),
    case(_tk, "i64", lambda x: _tk(x, 2, 1), distinct(3, 8, dtype=i64)),
    case(_tk, "i32-smallest", lambda x: _tk(x, 3, 1, False), distinct(3, 8, dtype=i32)),
    case(_tk, "f16", lambda x: _tk(x, 5, 1), distinct(2, 60, dtype=f16, step=1.0)),
    case(_tk, "bf16-smallest", lambda x: _tk(x, 2, 0, False), distinct(9, 2, dtype=bf16, step=1.0)),
    case(_tk, "special", lambda x: _tk(x, 3, 1), torch.tensor([[1.0, NAN, -INF, INF, 0.5, -2.0]])),
    case(_tk, "special-smallest", lambda x: _tk(x, 3, 1, False),
         torch.tensor([[1.0, NAN, -INF, INF, 0.5, -2.0]])),
    case(_tk, "f64-middle-dim", lambda x: _tk(x, 2, 1), distinct(3, 6, 2, dtype=f64)),
]

# -- one_hot (num_classes given: static shape)
_oh = aten.one_hot.default
CASES += [
    case(_oh, "1d", lambda i: _oh(i, 5), ints(0, 5, 7)),
    case(_oh, "2d", lambda i: _oh(i, 3), ints(0, 3, 2, 4)),
    case(_oh, "empty", lambda i: _oh(i, 4), ints(0, 4, 0)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
