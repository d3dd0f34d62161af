"""Conformance: miscellaneous ops (issue 11) — ldexp, narrow_copy, addmv,
dist, _trilinear / bilinear, resize, segment_reduce, grid_sampler_3d, batch
norm in training mode with its running-statistics update, and torch_nn's
chunked linear_cross_entropy.

Batch norm's functional forms are called directly, so the updated running
mean and variance (which torch.export otherwise turns into input mutations
that a program drops) are outputs compared with torch's.
"""

import pytest
import torch
import torch.nn.modules.linear_cross_entropy  # noqa: F401  (registers the torch_nn ops)

from cases import INF, NAN, aten, case, case_id, f64, i64, ints, randn, seed, uniform

seed("test_misc_ops")

_ld = aten.ldexp.Tensor
CASES = [
    case(_ld, "f32-int-exp", lambda x, e: _ld(x, e), randn(4, 5), ints(-130, 130, 4, 5)),
    case(_ld, "f32-broadcast", lambda x, e: _ld(x, e), randn(3, 1), uniform(-4, 4, 6)),
    case(_ld, "f32-edges", lambda x, e: _ld(x, e), torch.tensor([0.0, -0.0, 1.0, INF, NAN, 3e38])[:, None],
         torch.tensor([0, 1, -1, 200, -200])[None, :]),
    case(_ld, "f64", lambda x, e: _ld(x, e), randn(5, dtype=f64), ints(-1100, 1100, 5)),
    case(_ld, "i64-self", lambda x, e: _ld(x, e), ints(-9, 9, 6), ints(-3, 4, 6)),
    case(_ld, "bool", lambda x, e: _ld(x, e), ints(0, 2, 5).bool(), ints(0, 2, 5).bool()),
]

_nc = aten.narrow_copy.default
CASES += [
    case(_nc, "dim1", lambda x: _nc(x, 1, 2, 3), randn(4, 6, 3)),
    case(_nc, "neg-dim-neg-start", lambda x: _nc(x, -1, -3, 2), randn(4, 6)),
    case(_nc, "empty-length", lambda x: _nc(x, 0, 4, 0), randn(4, 2)),
    case(_nc, "i64", lambda x: _nc(x, 0, 1, 2), ints(-5, 5, 3, 3)),
]

_mv = aten.addmv.default
CASES += [
    case(_mv, "f32", lambda s, m, v: _mv(s, m, v), randn(5), randn(5, 7), randn(7)),
    case(_mv, "alpha-beta", lambda s, m, v: _mv(s, m, v, beta=0.25, alpha=-1.5), randn(5), randn(5, 7), randn(7)),
    case(_mv, "self-broadcast", lambda s, m, v: _mv(s, m, v, beta=2.0), randn(1), randn(6, 3), randn(3)),
    case(_mv, "self-0d", lambda s, m, v: _mv(s, m, v), randn(), randn(4, 3), randn(3)),
    # beta = 0: torch ignores self, NaN included
    case(_mv, "beta0-nan-self", lambda s, m, v: _mv(s, m, v, beta=0.0), torch.full((4,), NAN), randn(4, 3), randn(3)),
    case(_mv, "f64", lambda s, m, v: _mv(s, m, v, alpha=0.5), randn(3, dtype=f64), randn(3, 8, dtype=f64),
         randn(8, dtype=f64)),
    case(_mv, "i64", lambda s, m, v: _mv(s, m, v, beta=2, alpha=3), ints(-5, 5, 4), ints(-5, 5, 4, 6), ints(-5, 5, 6)),
    case(_mv, "empty-k", lambda s, m, v: _mv(s, m, v), randn(3), randn(3, 0), randn(0)),
]

_di = aten.dist.default
CASES += [case(_di, f"p{p}", lambda a, b, p=p: _di(a, b, p), randn(3, 4), randn(3, 4))
          for p in (2, 1, 3.5, 0.5, 0, INF, -INF)]
CASES += [
    case(_di, "broadcast", lambda a, b: _di(a, b), randn(4, 5), randn(5)),
    case(_di, "0d", lambda a, b: _di(a, b, 3), randn(), randn()),
    case(_di, "f64", lambda a, b: _di(a, b, 4), randn(6, dtype=f64), randn(6, dtype=f64)),
    case(_di, "with-zeros", lambda a, b: _di(a, b, 0), torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 0.0, 3.0])),
]

_bl = torch.nn.functional.bilinear
_tri = aten._trilinear.default
CASES += [
    case(_tri, "bilinear", lambda a, w, b, bias: _bl(a, b, w, bias), randn(6, 4), randn(5, 4, 3), randn(6, 3),
         randn(5), decomposition="high"),
    case(_tri, "bilinear-no-bias", lambda a, w, b: _bl(a, b, w), randn(6, 4), randn(2, 4, 3), randn(6, 3),
         decomposition="high"),
    case(_tri, "bilinear-3d", lambda a, w, b: _bl(a, b, w), randn(2, 3, 4), randn(5, 4, 2), randn(2, 3, 2),
         decomposition="high"),
    case(_tri, "bilinear-empty", lambda a, w, b: _bl(a, b, w), randn(0, 4), randn(5, 4, 2), randn(0, 2),
         decomposition="high"),
    # another expand/sum pattern: out[i, k] = sum_j a[i, j] b[j, k] c[k]
    case(_tri, "general", lambda a, b, c: _tri(a, b, c, [2], [0], [0, 1], [1]), randn(3, 4), randn(4, 5), randn(5)),
    case(_tri, "no-sum", lambda a, b, c: _tri(a, b, c, [], [0], [1], []), randn(3, 4), randn(4), randn(3)),
]

_rs = aten.resize.default
CASES += [
    case(_rs, "same-numel", lambda x: _rs(x.clone(), [4, 3]), randn(3, 4)),
    case(_rs, "shrink", lambda x: _rs(x.clone(), [2, 2]), randn(3, 4)),
    case(_rs, "to-0d", lambda x: _rs(x.clone(), []), randn(3)),
    case(_rs, "grow-refused", lambda x: _rs(x.clone(), [5, 5]), randn(3, 4),
         refuses="torch leaves the new elements uninitialized"),
]

# -- segment_reduce: lengths (made offsets) and offsets, every reduction, initial, axis
_sr = aten.segment_reduce.default
_len = torch.tensor([0, 1, 2, 2, 3])
_seg_data = torch.tensor([1.5, -2.0, NAN, 4.0, 0.25, -1.0, 3.0, 2.0])
for _red in ("sum", "mean", "max", "min", "prod"):
    CASES += [
        case(_sr, f"{_red}-lengths", lambda x, l, r=_red: _sr(x, r, lengths=l), randn(8), _len),
        case(_sr, f"{_red}-lengths-initial", lambda x, l, r=_red: _sr(x, r, lengths=l, initial=2.5), randn(8), _len),
        case(_sr, f"{_red}-offsets-2d", lambda x, o, r=_red: _sr(x, r, offsets=o),
             randn(6, 3), torch.tensor([1, 1, 4, 6])),
        case(_sr, f"{_red}-nan", lambda x, l, r=_red: _sr(x, r, lengths=l), _seg_data, torch.tensor([3, 0, 5])),
    ]
CASES += [
    case(_sr, "axis1-row-lengths", lambda x, l: _sr(x, "sum", lengths=l, axis=1), randn(3, 4, 2),
         torch.tensor([[1, 3], [2, 2], [4, 0]])),
    case(_sr, "unsafe-short", lambda x, l: _sr(x, "mean", lengths=l, unsafe=True), randn(7), torch.tensor([2, 3])),
    case(_sr, "f64", lambda x, l: _sr(x, "prod", lengths=l, initial=-1), randn(6, dtype=f64), torch.tensor([4, 0, 2])),
    case(_sr, "i32-lengths", lambda x, l: _sr(x, "max", lengths=l), randn(5), torch.tensor([2, 3], dtype=torch.int32)),
]

# -- batch norm, training: y, save_mean, save_invstd, new running mean / var
_bnf = aten._native_batch_norm_legit_functional.default
_bnu = aten._batch_norm_with_update_functional.default


def _stats(c, dtype=torch.float32):
    return randn(c, dtype=dtype), uniform(0.5, 2, c, dtype=dtype)


CASES += [
    case(_bnf, "train-4d", lambda x, w, b, m, v: _bnf(x, w, b, m, v, True, 0.1, 1e-5),
         randn(3, 4, 5, 6, scale=3), randn(4), randn(4), *_stats(4)),
    case(_bnf, "train-2d-momentum", lambda x, w, b, m, v: _bnf(x, w, b, m, v, True, 0.7, 1e-3),
         randn(9, 5), randn(5), randn(5), *_stats(5)),
    case(_bnf, "train-no-affine", lambda x, m, v: _bnf(x, None, None, m, v, True, 0.1, 1e-5),
         randn(2, 3, 7), *_stats(3)),
    # (one element per channel, where eager's variance update is NaN, does not
    # export: torch's fake-tensor rule divides by n - 1 = 0)
    case(_bnf, "eval", lambda x, w, b, m, v: _bnf(x, w, b, m, v, False, 0.1, 1e-5),
         randn(2, 3, 4), randn(3), randn(3), *_stats(3)),
    case(_bnf, "train-f64", lambda x, w, b, m, v: _bnf(x, w, b, m, v, True, 0.2, 1e-5),
         randn(4, 3, 5, dtype=f64), randn(3, dtype=f64), randn(3, dtype=f64), *_stats(3, f64)),
    case(_bnu, "train", lambda x, w, b, m, v: _bnu(x, w, b, m, v, 0.1, 1e-5)[:3] + _bnu(x, w, b, m, v, 0.1, 1e-5)[4:],
         randn(4, 3, 2, 2), randn(3), randn(3), *_stats(3)),
]



# -- torch_nn's chunked linear + cross-entropy ops, called directly (loss only:
# the gradient outputs are empty when their compute flags are false)

_lce = torch.ops.torch_nn._linear_cross_entropy_batch_chunked.default
_lcen = torch.ops.torch_nn._linear_cross_entropy_batch_chunked_no_reduction.default


def _lce_call(x, w, t, b=None, cw=None, reduction="mean", ignore=-100):
    return _lce(x, w, t, b, cw, reduction, ignore, 0.0, 2, "compact", torch.float32, True, False, False, False)[0]


_tgt = torch.tensor([0, 3, 2, -100, 1, 3, 3])
CASES += [
    case(_lce, "mean", lambda x, w, t: _lce_call(x, w, t), randn(7, 5), randn(4, 5), _tgt),
    case(_lce, "sum-bias-weight", lambda x, w, t, b, cw: _lce_call(x, w, t, b, cw, "sum"), randn(7, 5), randn(4, 5),
         _tgt, randn(4), uniform(0.5, 2, 4)),
    case(_lce, "mean-weight-ignore-in-range", lambda x, w, t, cw: _lce_call(x, w, t, None, cw, "mean", 3),
         randn(7, 5), randn(4, 5), _tgt.clamp(min=0), uniform(0.5, 2, 4)),
    case(_lce, "all-ignored-nan", lambda x, w, t: _lce_call(x, w, t), randn(3, 5), randn(4, 5),
         torch.tensor([-100, -100, -100])),
    case(_lce, "prob-target", lambda x, w, t, cw: _lce_call(x, w, t, None, cw), randn(6, 5), randn(4, 5),
         torch.softmax(randn(6, 4), 1), uniform(0.5, 2, 4)),
    case(_lcen, "none", lambda x, w, t, b: _lcen(x, w, t, b, None, -100, 2, "compact", torch.float32),
         randn(7, 5), randn(4, 5), _tgt, randn(4)),
    case(_lcen, "none-weight", lambda x, w, t, cw: _lcen(x, w, t, None, cw, -100, 3, "compact", torch.float32),
         randn(7, 5, scale=4), randn(4, 5), _tgt, uniform(0.5, 2, 4)),
]

# -- grid_sampler_3d: trilinear and nearest, every padding, both corner rules;
# the grid reaches past [-1, 1] so padding decides taps
_gs3 = aten.grid_sampler_3d.default
for _mode in (0, 1):
    for _pad in (0, 1, 2):
        for _ac in (False, True):
            CASES.append(case(_gs3, f"mode{_mode}-pad{_pad}-{'ac' if _ac else 'noac'}",
                              lambda x, g, m=_mode, p=_pad, a=_ac: _gs3(x, g, m, p, a),
                              randn(2, 3, 4, 5, 6), uniform(-1.3, 1.3, 2, 3, 2, 4, 3)))
CASES += [
    case(_gs3, "f64", lambda x, g: _gs3(x, g, 0, 0, False), randn(1, 2, 3, 3, 3, dtype=f64),
         uniform(-1.1, 1.1, 1, 2, 2, 2, 3, dtype=f64)),
    # NaN and inf grid values: torch's scalar 3-D clip puts them on the last voxel
    *[case(_gs3, f"grid-edges-mode{m}-pad{p}", lambda x, g, m=m, p=p: _gs3(x, g, m, p, False), randn(1, 1, 2, 3, 4),
           torch.tensor([[[[[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0], [INF, 0.0, 0.0], [NAN, 0.5, -0.5],
                            [-INF, 1e20, 0.1]]]]]))
      for m in (0, 1) for p in (0, 1, 2)],
    case(aten.grid_sampler.default, "3d", lambda x, g: aten.grid_sampler.default(x, g, 0, 1, True),
         randn(1, 2, 3, 4, 5), uniform(-1, 1, 1, 2, 3, 2, 3)),
]

# -- the handlers registered for symbolic shapes, at a dynamic batch
CASES += [
    case(_ld, "dynamic", lambda x, e: _ld(x, e), randn(5, 3), ints(-4, 4, 5, 3), dynamic=[(0, 0, "B"), (1, 0, "B")]),
    case(_mv, "dynamic", lambda s, m, v: _mv(s, m, v, beta=0.5), randn(6), randn(6, 4), randn(4),
         dynamic=[(0, 0, "M"), (1, 0, "M")]),
    case(_nc, "dynamic", lambda x: _nc(x, 1, 1, 2), randn(4, 5), dynamic=[(0, 0, "B")]),
    case(_gs3, "dynamic", lambda x, g: _gs3(x, g, 0, 0, True), randn(2, 2, 3, 3, 3), uniform(-1, 1, 2, 2, 2, 2, 3),
         dynamic=[(0, 0, "B"), (1, 0, "B")]),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
