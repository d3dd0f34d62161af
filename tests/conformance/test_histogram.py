"""Conformance: torch.histogram and torch.histogramdd (bin counts and bin tensors).

The edges of a bin count are torch's linspace over the range (given, or the
data's); an element's bin is the last edge at or below it, the last bin
taking its right edge, so values on the edges, at the ends and just outside
are in every case; NaN is skipped when a range is given (without one torch
refuses).  Weights, density, f64, every layout of histogramdd's overloads
(1, 2 and 3 dims, given edge tensors, uneven edges) and an empty input.
"""

import pytest
import torch

from cases import NAN, aten, case, case_id, f64, ints, randn, seed, uniform

seed("test_histogram")

CASES = []

_hc, _ht = aten.histogram.bin_ct, aten.histogram.bins_tensor
_on_edges = torch.tensor([0.0, 0.1, 0.2, 0.30000001, 0.5, 0.7, 0.9, 1.0, -0.0001, 1.0001, 0.25, 0.75])
CASES += [
    case(_hc, "default-100-bins", lambda x: _hc(x), randn(6, 50)),
    case(_hc, "bins-7", lambda x: _hc(x, 7), uniform(-3, 5, 40)),
    case(_hc, "range-edges", lambda x: _hc(x, 10, range=[0.0, 1.0]), _on_edges),
    case(_hc, "range-nan-skipped", lambda x: _hc(x, 4, range=[-1.0, 1.0]),
         torch.tensor([NAN, 0.5, -1.0, 1.0, 2.0, NAN])),
    case(_hc, "weight", lambda x, w: _hc(x, 5, weight=w), uniform(-1, 1, 4, 6), uniform(0, 2, 4, 6)),
    case(_hc, "density", lambda x: _hc(x, 9, density=True), randn(80)),
    case(_hc, "weight-density-range", lambda x, w: _hc(x, 6, range=[-2.0, 2.0], weight=w, density=True),
         randn(30), uniform(0, 1, 30)),
    case(_hc, "all-equal-widens", lambda x: _hc(x, 4), torch.full((5,), 3.0)),
    case(_hc, "empty-0-1", lambda x: _hc(x, 3), randn(0)),
    case(_hc, "f64", lambda x: _hc(x, 13), randn(64, dtype=f64)),
    case(_hc, "ints-as-float-on-edges", lambda x: _hc(x, 8), ints(0, 9, 50).float()),
    case(_ht, "uneven-edges", lambda x, b: _ht(x, b), uniform(-1, 4, 40), torch.tensor([-0.5, 0.0, 0.1, 2.0, 3.5])),
    case(_ht, "values-on-edges", lambda x, b: _ht(x, b), torch.tensor([0.0, 1.0, 2.0, 3.0, 2.5, -1.0, 4.0]),
         torch.tensor([0.0, 1.0, 2.0, 3.0])),
    case(_ht, "weight-density", lambda x, b, w: _ht(x, b, weight=w, density=True), uniform(0, 3, 25),
         torch.tensor([0.0, 0.5, 2.0, 3.0]), uniform(0, 1, 25)),
]

_be, _bc, _bt = aten._histogramdd_bin_edges.default, aten._histogramdd_from_bin_cts.default, \
    aten._histogramdd_from_bin_tensors.default
CASES += [
    case(_bc, "2d", lambda x: _bc(x, [3, 4]), randn(50, 2)),
    case(_be, "2d-edges", lambda x: _be(x, [3, 4]), randn(50, 2)),
    case(_bc, "3d-range-weight", lambda x, w: _bc(x, [2, 3, 2], range=[-1.0, 1.0, 0.0, 2.0, -2.0, 2.0],
                                                  weight=w), randn(4, 20, 3), uniform(0, 1, 4, 20)),
    case(_bc, "density", lambda x: _bc(x, [5, 2], density=True), uniform(-1, 1, 60, 2)),
    case(_be, "range", lambda x: _be(x, [4, 4], range=[0.0, 1.0, -3.0, 3.0]), randn(10, 2)),
    case(_bt, "tensors", lambda x, a, b: _bt(x, [a, b]), uniform(0, 4, 30, 2),
         torch.tensor([0.0, 1.0, 1.5, 4.0]), torch.tensor([0.0, 2.0, 4.0])),
    case(_bt, "tensors-weight-density", lambda x, a, w: _bt(x, [a], weight=w, density=True),
         uniform(0, 4, 30, 1), torch.tensor([0.0, 1.0, 2.5, 4.0]), uniform(0, 1, 30)),
    case(_bc, "f64", lambda x: _bc(x, [3, 3]), randn(40, 2, dtype=f64)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
