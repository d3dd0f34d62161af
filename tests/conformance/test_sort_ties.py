"""Conformance: which index sort, argsort and topk return among equal elements.

torch's CPU kernels (aten/src/ATen/native/cpu/SortingKernel.cpp, TopKImpl.h)
leave ties where their algorithm puts them, and the indices show it:

- sort / argsort with stable=False (the default overloads, and sort.stable /
  argsort.stable with stable=False): libstdc++'s std::sort, except a 1-D
  ascending integer input of at least 32768 elements, which fbgemm's radix
  sort takes (stable); descending, bool and rank > 1 stay on std::sort;
- with stable=True: input order;
- topk(k) over a row of n: std::partial_sort when k * 64 <= n, else
  std::nth_element at k - 1 and (sorted=True) std::sort of the first k - 1.

So the inputs here are full of ties: small-range integers, all-equal rows
(the OpInfo samples' 8000 equal bools), NaN, rows past the insertion-sort
size (16), and McIlroy's adversary (order_killers.py), which drives
std::sort into heapsort and std::nth_element into heap select.
"""

import pytest
import torch

from cases import (INF, NAN, aten, bf16, bools, case, case_id, f16, f64, i16, i32, i64, ints, seed,
                   u8)
from order_killers import NTH_DISTINCT, SORT_TIES

seed("test_sort_ties")

CASES = []


def _nan_ties(rows, cols):
    """Small integers as floats with NaN and +-inf in them: ties of every kind."""
    x = ints(0, 4, rows, cols).float()
    x.view(-1)[::7] = NAN
    x.view(-1)[3::11] = INF
    x.view(-1)[5::13] = -INF
    return x


_so, _sst, _as, _ast = aten.sort.default, aten.sort.stable, aten.argsort.default, aten.argsort.stable
_killer = torch.tensor(SORT_TIES, dtype=i64)
CASES += [
    case(_so, "ties-f32", lambda x: _so(x, 1), ints(0, 3, 4, 40).float()),
    case(_so, "ties-f32-descending", lambda x: _so(x, 1, True), ints(0, 3, 4, 40).float()),
    case(_so, "ties-nan-inf", lambda x: _so(x, -1), _nan_ties(3, 50)),
    case(_so, "ties-nan-inf-descending", lambda x: _so(x, -1, True), _nan_ties(3, 50)),
    case(_so, "ties-dim-0", lambda x: _so(x, 0), ints(0, 5, 60, 3)),
    case(_so, "ties-i32", lambda x: _so(x, 1), ints(-2, 2, 3, 33, dtype=i32)),
    case(_so, "ties-i16", lambda x: _so(x, 1), ints(-2, 2, 3, 33, dtype=i16)),
    case(_so, "ties-u8", lambda x: _so(x, 1), ints(0, 3, 3, 33, dtype=u8)),
    case(_so, "ties-f16", lambda x: _so(x, 1), ints(0, 3, 2, 70).to(f16)),
    case(_so, "ties-bf16", lambda x: _so(x, 1, True), ints(0, 3, 2, 70).to(bf16)),
    case(_so, "ties-f64", lambda x: _so(x, 1), ints(0, 3, 2, 70).to(f64)),
    case(_so, "bool-all-equal", lambda x: _so(x), torch.zeros(8000, dtype=torch.bool)),
    case(_so, "bool-ties", lambda x: _so(x, 1), bools(3, 100)),
    case(_so, "all-equal-f32", lambda x: _so(x), torch.zeros(2, 3000)),
    case(_so, "heapsort-killer", lambda x: _so(x), _killer),
    case(_so, "heapsort-killer-f32", lambda x: _so(x), _killer.float()),
    # 1-D ascending ints of >= 32768 elements: fbgemm's radix sort (stable)
    case(_so, "radix-i64", lambda x: _so(x), ints(0, 50, 40000)),
    case(_so, "radix-i32-at-threshold", lambda x: _so(x), ints(0, 50, 32768, dtype=i32)),
    case(_so, "below-radix-i32", lambda x: _so(x), ints(0, 50, 32767, dtype=i32)),
    case(_so, "radix-descending-is-std-sort", lambda x: _so(x, 0, True), ints(0, 50, 40000)),
    case(_so, "radix-2d-is-std-sort", lambda x: _so(x), ints(0, 50, 1, 40000)),
    case(_so, "radix-bool-is-std-sort", lambda x: _so(x), bools(40000)),
    case(_sst, "unstable", lambda x: _sst(x, stable=False, dim=1), ints(0, 3, 3, 40).float()),
    case(_sst, "stable-none", lambda x: _sst(x, stable=None, dim=0, descending=True), ints(0, 3, 40, 3)),
    case(_sst, "stable-descending-nan", lambda x: _sst(x, stable=True, dim=-1, descending=True),
         _nan_ties(2, 30)),
    case(_as, "ties", lambda x: _as(x, 1), ints(0, 3, 4, 40)),
    case(_as, "bool-all-equal", lambda x: _as(x), torch.zeros(8000, dtype=torch.bool)),
    case(_as, "ties-descending-dim-0", lambda x: _as(x, 0, True), ints(0, 4, 50, 2).float()),
    case(_ast, "unstable", lambda x: _ast(x, stable=False, dim=-1), ints(0, 3, 2, 45)),
    case(_ast, "stable-ties", lambda x: _ast(x, stable=True, dim=-1, descending=True),
         ints(0, 3, 2, 45)),
    # an expanded axis has stride 0 in eager torch, whose sort then returns 0, 1, 2, ...;
    # a copy in between makes it an ordinary (std::sort) row of equal values
    case(_so, "expanded-axis", lambda x: _so(x.expand(3, 40), 1), ints(0, 3, 3, 1).float(),
         expect=[aten.sort.default, aten.expand.default]),
    case(_so, "expanded-new-axis", lambda x: _so(x.expand(50, 4), 0, True), ints(0, 3, 4),
         expect=[aten.sort.default, aten.expand.default]),
    case(_so, "expanded-then-transposed", lambda x: _so(x.expand(3, 40).t(), 0), ints(0, 3, 3, 1),
         expect=[aten.sort.default, aten.expand.default]),
    case(_as, "expanded-then-copied", lambda x: _as(x.expand(3, 40).clone(), 1), ints(0, 3, 3, 1),
         expect=[aten.argsort.default, aten.expand.default]),
    case(_so, "expanded-other-axis", lambda x: _so(x.expand(2, 40), 1), ints(0, 3, 1, 40),
         expect=[aten.sort.default, aten.expand.default]),
]

_tk = aten.topk.default
_nth_killer = torch.tensor(NTH_DISTINCT, dtype=i64) // 3  # ties inside the adversary
CASES += [
    # k * 64 > n: nth_element, then std::sort of the first k - 1
    case(_tk, "ties-i64", lambda x: _tk(x, 3, 1), ints(0, 5, 4, 50)),
    case(_tk, "ties-i64-smallest", lambda x: _tk(x, 4, 1, False), ints(0, 5, 4, 50)),
    case(_tk, "ties-i64-unsorted", lambda x: _tk(x, 6, 1, True, False), ints(0, 5, 4, 50)),
    case(_tk, "ties-f32-dim-0", lambda x: _tk(x, 5, 0), ints(0, 4, 30, 3).float()),
    case(_tk, "ties-nan-inf", lambda x: _tk(x, 7, 1), _nan_ties(3, 40)),
    case(_tk, "ties-nan-inf-smallest", lambda x: _tk(x, 7, 1, False), _nan_ties(3, 40)),
    case(_tk, "all-equal-k-equals-size", lambda x: _tk(x, 20, 0), torch.zeros(20, dtype=i64)),
    case(_tk, "ties-i32", lambda x: _tk(x, 9, 1), ints(0, 3, 2, 40, dtype=i32)),
    case(_tk, "ties-f16", lambda x: _tk(x, 9, 1), ints(0, 3, 2, 40).to(f16)),
    case(_tk, "nth-killer", lambda x: _tk(x, 90), _nth_killer),
    case(_tk, "nth-killer-smallest", lambda x: _tk(x, 100, 0, False), _nth_killer),
    # k * 64 <= n: partial_sort (heap select, then heap sort)
    case(_tk, "partial-sort-i64", lambda x: _tk(x, 3, 1), ints(0, 5, 3, 192)),
    case(_tk, "partial-sort-smallest", lambda x: _tk(x, 2, 1, False), ints(0, 5, 3, 200)),
    case(_tk, "partial-sort-unsorted", lambda x: _tk(x, 4, 1, True, False), ints(0, 3, 2, 300)),
    case(_tk, "partial-sort-nan", lambda x: _tk(x, 3, -1), _nan_ties(2, 256)),
    case(_tk, "partial-sort-k-1", lambda x: _tk(x, 1, 1), ints(0, 2, 3, 64)),
    case(_tk, "just-above-partial-sort", lambda x: _tk(x, 3, 1), ints(0, 5, 3, 191)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
