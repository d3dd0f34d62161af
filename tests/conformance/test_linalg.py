"""Conformance: linear algebra — factorizations, solves and decompositions.

LU (factor, unpack, solve with left/adjoint, det, slogdet, inv, solve with
vector and broadcast right-hand sides), Cholesky (lower, upper, the info
and partial factor of a matrix that is not positive-definite, solve,
inverse), triangular solves (upper/lower, left/right, unit diagonal, the
legacy triangular_solve), Householder QR (geqrf, householder_product,
ormqr from either side, qr in its three modes), Bunch-Kaufman LDL (factor,
solve), eigh and SVD, pinv (every overload), matrix_exp, matrix_sqrth and
polar; float32 and float64, batched, 0x0 and 1x1 matrices, empty batches,
wide and tall shapes, singular inputs.

Everything is compared as it is (values, pivots, info, the factors: rlx
picks LAPACK's pivots and reflector signs), except the vectors of eigh and
SVD, which are unique only up to sign: the cases compare them after the
graph itself puts each vector in a canonical sign (the sign of its sum), and
compare what the sign does not change (reconstructions, U^T U, the
singular values and eigenvalues). The completed columns of a full U are not
unique at all; only U^T U = I is compared for them.
"""

import subprocess

import numpy as np
import pytest
import torch

from cases import aten, case, case_id, f32, f64, randn, seed

seed("test_linalg")

CASES = []


def spd(*shape, dtype=f32):
    """Symmetric positive-definite matrices [*, n, n] (n the last dim)."""
    a = randn(*shape, dtype=f64)
    n = shape[-1]
    return (a @ a.mT / n + torch.eye(n, dtype=f64)).to(dtype)


def sym(*shape, dtype=f32):
    """Symmetric (indefinite) matrices."""
    a = randn(*shape, dtype=f64)
    return ((a + a.mT) / 2).to(dtype)


def tri(*shape, upper, dtype=f32):
    """Well-conditioned triangular matrices (diagonal of magnitude >= 1)."""
    a = randn(*shape, dtype=f64) * 0.5
    a = a.triu() if upper else a.tril()
    d = torch.diagonal(a, dim1=-2, dim2=-1)
    d += torch.sign(d) + (d == 0)
    return a.to(dtype)


def canon_cols(v):
    """Each column with the sign of its sum made positive (in the graph)."""
    return v * torch.where(v.sum(-2, keepdim=True) >= 0, 1.0, -1.0).to(v.dtype)


def canon_rows(v):
    return v * torch.where(v.sum(-1, keepdim=True) >= 0, 1.0, -1.0).to(v.dtype)


_E = torch.empty

# -- LU
_lf = aten.linalg_lu_factor_ex.default
CASES += [
    case(_lf, "square", lambda a: _lf(a), randn(5, 5)),
    case(_lf, "batch-f64", lambda a: _lf(a), randn(2, 3, 4, 4, dtype=f64)),
    case(_lf, "wide", lambda a: _lf(a), randn(3, 6)),
    case(_lf, "tall", lambda a: _lf(a), randn(2, 6, 3)),
    case(_lf, "singular-info", lambda a: _lf(a), torch.tensor([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])),
    case(_lf, "1x1", lambda a: _lf(a), torch.tensor([[-3.0]])),
    case(_lf, "0x0", lambda a: _lf(a), _E(0, 0)),
    case(_lf, "empty-batch", lambda a: _lf(a), _E(0, 3, 3)),
]
_lu = aten.linalg_lu.default
CASES += [
    case(_lu, "square", lambda a: _lu(a), randn(2, 4, 4)),
    case(_lu, "wide-f64", lambda a: _lu(a), randn(3, 5, dtype=f64)),
    case(_lu, "tall", lambda a: _lu(a), randn(5, 2)),
]
_lun = aten.lu_unpack.default
CASES += [
    case(_lun, "both", lambda a: _lun(*torch.linalg.lu_factor(a)), randn(2, 4, 4),
         expect=[_lun, aten.linalg_lu_factor.default]),
    case(_lun, "both-ex", lambda a: _lun(*torch.linalg.lu_factor_ex(a)[:2]), randn(2, 4, 4),
         expect=[_lun, aten.linalg_lu_factor_ex.default]),
    case(_lun, "data-only", lambda a: _lun(*torch.linalg.lu_factor(a), True, False)[1:], randn(4, 3),
         expect=[_lun]),
    case(_lun, "pivots-only", lambda a: _lun(*torch.linalg.lu_factor(a), False, True)[0], randn(3, 5),
         expect=[_lun]),
]
_ls = aten.linalg_lu_solve.default
CASES += [
    case(_ls, "left", lambda a, b: _ls(*torch.linalg.lu_factor(a), b), randn(4, 4), randn(4, 3)),
    case(_ls, "right", lambda a, b: _ls(*torch.linalg.lu_factor(a), b, left=False), randn(2, 4, 4), randn(2, 3, 4)),
    case(_ls, "adjoint-f64", lambda a, b: _ls(*torch.linalg.lu_factor(a), b, adjoint=True),
         randn(3, 3, dtype=f64), randn(3, 2, dtype=f64)),
    case(_ls, "right-adjoint", lambda a, b: _ls(*torch.linalg.lu_factor(a), b, left=False, adjoint=True),
         randn(3, 3), randn(5, 3)),
    case(_ls, "broadcast", lambda a, b: _ls(*torch.linalg.lu_factor(a), b), randn(2, 1, 3, 3), randn(4, 3, 2)),
]
_det, _sld = aten._linalg_det.default, aten._linalg_slogdet.default
CASES += [
    case(_det, "batch", lambda a: _det(a), randn(3, 4, 4)),
    case(_det, "f64", lambda a: _det(a), randn(5, 5, dtype=f64)),
    case(_det, "singular", lambda a: _det(a)[0], torch.tensor([[1.0, 2], [2, 4]])),
    case(_det, "0x0", lambda a: _det(a)[0], _E(2, 0, 0)),
    case(_det, "1x1", lambda a: _det(a)[0], torch.tensor([[[-2.5]], [[4.0]]])),
    case(_sld, "batch", lambda a: _sld(a), randn(3, 4, 4)),
    case(_sld, "singular", lambda a: _sld(a)[:2], torch.tensor([[0.0, 0], [0, 1]])),
    case(_sld, "f64-negative", lambda a: _sld(a)[:2], torch.tensor([[0.0, 1], [1, 0]], dtype=f64)),
]
_inv = aten.linalg_inv_ex.default
CASES += [
    case(_inv, "batch", lambda a: _inv(a), randn(2, 4, 4)),
    case(_inv, "f64", lambda a: _inv(a)[0], randn(6, 6, dtype=f64)),
    case(_inv, "singular-info", lambda a: _inv(a)[1], torch.tensor([[1.0, 2], [2, 4]])),
    case(_inv, "0x0", lambda a: _inv(a), _E(0, 0)),
    case(aten.linalg_inv_ex.default, "high-linalg-inv", lambda a: torch.linalg.inv(a), randn(3, 3),
         decomposition="high", expect=[_inv, aten._linalg_check_errors.default]),
]
_sv = aten._linalg_solve_ex.default
CASES += [
    case(_sv, "matrix", lambda a, b: _sv(a, b), randn(4, 4), randn(4, 2)),
    case(_sv, "vector", lambda a, b: _sv(a, b)[0], randn(4, 4), randn(4)),
    case(_sv, "batched-vector", lambda a, b: _sv(a, b)[0], randn(2, 3, 3), randn(2, 3)),
    case(_sv, "right", lambda a, b: _sv(a, b, left=False)[0], randn(3, 3, dtype=f64), randn(2, 3, dtype=f64)),
    case(_sv, "broadcast", lambda a, b: _sv(a, b), randn(2, 1, 3, 3), randn(4, 3, 1)),
    case(_sv, "high-linalg-solve", lambda a, b: torch.linalg.solve(a, b), randn(3, 3), randn(3, 2),
         decomposition="high", expect=[_sv, aten._linalg_check_errors.default]),
]

# -- Cholesky and triangular solves
_ch = aten.linalg_cholesky_ex.default
CASES += [
    case(_ch, "lower", lambda a: _ch(a), spd(2, 5, 5)),
    case(_ch, "upper-f64", lambda a: _ch(a, upper=True), spd(4, 4, dtype=f64)),
    case(_ch, "not-pd", lambda a: _ch(a), torch.tensor([[4.0, 2, 1], [2, 1, 3], [1, 3, 9]])),
    case(_ch, "not-pd-upper", lambda a: _ch(a, upper=True), torch.tensor([[4.0, 2, 1], [2, 1, 3], [1, 3, 9]])),
    case(_ch, "negative", lambda a: _ch(a), -torch.eye(3)),
    case(_ch, "0x0", lambda a: _ch(a), _E(0, 0)),
    case(_ch, "high-linalg-cholesky", lambda a: torch.linalg.cholesky(a), spd(3, 3), decomposition="high",
         expect=[_ch, aten._linalg_check_errors.default]),
]
_cs, _ci = aten.cholesky_solve.default, aten.cholesky_inverse.default
CASES += [
    case(_cs, "lower", lambda b, l: _cs(b, l), randn(4, 2), torch.linalg.cholesky(spd(4, 4))),
    case(_cs, "upper-broadcast", lambda b, u: _cs(b, u, True), randn(2, 3, 1),
         torch.linalg.cholesky(spd(3, 3), upper=True)),
    case(_ci, "lower", lambda l: _ci(l), torch.linalg.cholesky(spd(2, 4, 4))),
    case(_ci, "upper-f64", lambda u: _ci(u, True), torch.linalg.cholesky(spd(3, 3, dtype=f64), upper=True)),
]
_st, _ts = aten.linalg_solve_triangular.default, aten.triangular_solve.default
CASES += [
    case(_st, "upper-left", lambda a, b: _st(a, b, upper=True), tri(4, 4, upper=True), randn(4, 3)),
    case(_st, "lower-right", lambda a, b: _st(a, b, upper=False, left=False), tri(2, 3, 3, upper=False),
         randn(2, 5, 3)),
    case(_st, "unit-f64", lambda a, b: _st(a, b, upper=False, unitriangular=True), randn(4, 4, dtype=f64),
         randn(4, 2, dtype=f64)),
    case(_st, "broadcast", lambda a, b: _st(a, b, upper=True), tri(3, 3, upper=True), randn(2, 3, 2)),
    case(_ts, "transpose", lambda b, a: _ts(b, a, True, True), randn(3, 2), tri(3, 3, upper=True)),
    case(_ts, "lower-unit-batch", lambda b, a: _ts(b, a, False, False, True), randn(2, 3, 2), randn(3, 3)),
]

# -- Householder QR
_gq, _hp, _om, _qr = (aten.geqrf.default, aten.linalg_householder_product.default, aten.ormqr.default,
                      aten.linalg_qr.default)
CASES += [
    case(_gq, "tall", lambda a: _gq(a), randn(5, 3)),
    case(_gq, "wide-batch", lambda a: _gq(a), randn(2, 3, 5)),
    case(_gq, "f64", lambda a: _gq(a), randn(4, 4, dtype=f64)),
    case(_gq, "zero-column", lambda a: _gq(a), torch.tensor([[0.0, 1], [0, 2], [0, 3]])),
    case(_hp, "tall", lambda a, t: _hp(a, t), randn(5, 3), randn(3)),
    case(_hp, "short-tau-batch", lambda a, t: _hp(a, t), randn(2, 4, 4), randn(2, 2)),
    case(_om, "left", lambda a, t, c: _om(a, t, c), randn(4, 3), randn(3), randn(4, 2)),
    case(_om, "left-transpose", lambda a, t, c: _om(a, t, c, True, True), randn(4, 3), randn(3), randn(4, 2)),
    case(_om, "right", lambda a, t, c: _om(a, t, c, False), randn(3, 2), randn(2), randn(2, 3)),
    case(_om, "right-transpose-f64", lambda a, t, c: _om(a, t, c, False, True), randn(3, 2, dtype=f64),
         randn(2, dtype=f64), randn(4, 3, dtype=f64)),
    case(_qr, "reduced-tall", lambda a: _qr(a), randn(2, 5, 3)),
    case(_qr, "reduced-wide", lambda a: _qr(a), randn(3, 5)),
    case(_qr, "complete-tall", lambda a: _qr(a, "complete"), randn(5, 3)),
    case(_qr, "complete-wide-f64", lambda a: _qr(a, "complete"), randn(3, 4, dtype=f64)),
    case(_qr, "r", lambda a: _qr(a, "r")[1], randn(4, 3)),
]

# -- LDL (Bunch-Kaufman)
_lff, _lds = aten.linalg_ldl_factor_ex.default, aten.linalg_ldl_solve.default
CASES += [
    case(_lff, "indefinite", lambda a: _lff(a), sym(6, 6)),
    case(_lff, "batch-f64", lambda a: _lff(a), sym(3, 4, 4, dtype=f64)),
    case(_lff, "2x2-blocks", lambda a: _lff(a), torch.tensor([[0.0, 1, 2], [1, 0, 3], [2, 3, 0]])),
    case(_lds, "solve", lambda a, b: _lds(*torch.linalg.ldl_factor(a), b), sym(5, 5), randn(5, 2),
         expect=[_lds, aten.linalg_ldl_factor.default]),
]

# -- eigh and SVD: vectors in a canonical sign, and what the sign does not change
_eh, _sd = aten._linalg_eigh.default, aten._linalg_svd.default


def _eigh_check(a, uplo="L"):
    w, v = _eh(a, uplo)
    return w, canon_cols(v), (v * w.unsqueeze(-2)) @ v.mT


def _svd_check(a, full=False):
    u, s, vh = _sd(a, full)
    k = s.shape[-1]
    uk = u[..., :k]
    return (s, canon_cols(uk), canon_rows(vh[..., :k, :]), (uk * s.unsqueeze(-2)) @ vh[..., :k, :],
            u.mT @ u, vh @ vh.mT)


CASES += [
    case(_eh, "lower", _eigh_check, sym(2, 5, 5)),
    case(_eh, "upper-f64", lambda a: _eigh_check(a, "U"), sym(4, 4, dtype=f64)),
    case(_eh, "values-only", lambda a: _eh(a, "L", False), sym(3, 3)),
    case(_eh, "1x1", _eigh_check, torch.tensor([[2.0]])),
    case(_sd, "tall", _svd_check, randn(6, 4)),
    case(_sd, "wide-batch", _svd_check, randn(2, 3, 5)),
    case(_sd, "full-tall", lambda a: _svd_check(a, True), randn(5, 3)),
    case(_sd, "full-wide-f64", lambda a: _svd_check(a, True), randn(2, 4, dtype=f64)),
    case(_sd, "values-only", lambda a: _sd(a, False, False)[1], randn(3, 4, 4)),
    case(_sd, "rank-deficient-values", lambda a: _sd(a, False, False)[1],
         torch.tensor([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]])),
    case(_sd, "0x0", lambda a: _sd(a)[1], _E(0, 0)),
]
_pv = aten.linalg_pinv
CASES += [
    case(_pv.atol_rtol_tensor, "default", lambda a: torch.linalg.pinv(a), randn(2, 4, 3), decomposition="high"),
    case(_pv.atol_rtol_tensor, "atol-tensor", lambda a, t: _pv.atol_rtol_tensor(a, atol=t), randn(2, 3, 3),
         torch.tensor([0.5, 0.1])),
    case(_pv.atol_rtol_tensor, "singular", lambda a: torch.linalg.pinv(a),
         torch.tensor([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]]), decomposition="high"),
    case(_pv.atol_rtol_float, "rtol", lambda a: _pv.atol_rtol_float(a, rtol=0.3), randn(4, 4, dtype=f64)),
    case(_pv.atol_rtol_float, "hermitian", lambda a: _pv.atol_rtol_float(a, hermitian=True), sym(4, 4)),
    case(_pv.default, "rcond", lambda a: _pv.default(a, 0.2), randn(3, 5)),
    case(_pv.atol_rtol_tensor, "empty", lambda a: torch.linalg.pinv(a), _E(2, 0, 3), decomposition="high"),
]
_me, _sq, _po = aten.linalg_matrix_exp.default, aten.linalg_matrix_sqrth.default, aten.linalg_polar.default
CASES += [
    case(_me, "small", lambda a: _me(a), randn(2, 4, 4, scale=0.1)),
    case(_me, "large-norm-f64", lambda a: _me(a), randn(5, 5, dtype=f64, scale=3)),
    case(_me, "1x1", lambda a: _me(a), torch.tensor([[1.5]])),
    case(_sq, "spd", lambda a: _sq(a), spd(2, 4, 4)),
    case(_po, "tall", lambda a: _po(a), randn(5, 3)),
    case(_po, "square-f64", lambda a: _po(a), randn(2, 4, 4, dtype=f64)),
]

# -- constant inputs are folded at compile time (the kernel runs in the fold pass)
_W = spd(3, 3)
CASES += [case(_inv, "constant-folded", lambda x: torch.linalg.inv_ex(_W)[0] @ x, randn(3, 2))]

# -- symbolic batch axes ("dyn": exported with a dynamic axis, verified at the
# example and at other bindings); a symbolic matrix side is refused, naming the node
CASES += [
    case(_inv, "dyn-batch", lambda a: _inv(a), randn(3, 4, 4), dynamic=[(0, 0, "B")]),
    case(_det, "dyn-batch", lambda a: _det(a)[0], randn(2, 3, 3, 3), dynamic=[(0, 1, "B")]),
    case(_sv, "dyn-batch-broadcast", lambda a, b: _sv(a, b)[0], randn(3, 3), randn(4, 3, 2),
         dynamic=[(1, 0, "B")]),
    case(_sv, "dyn-batch-vector", lambda a, b: _sv(a, b)[0], randn(2, 3, 3), randn(2, 3),
         dynamic=[(0, 0, "B"), (1, 0, "B")]),
    case(_ch, "dyn-batch", lambda a: _ch(a), spd(3, 4, 4), dynamic=[(0, 0, "B")]),
    case(_qr, "dyn-batch", lambda a: _qr(a), randn(3, 5, 3), dynamic=[(0, 0, "B")]),
    case(_sd, "dyn-batch", _svd_check, randn(3, 4, 3), dynamic=[(0, 0, "B")]),
    case(_pv.atol_rtol_tensor, "dyn-batch", lambda a: torch.linalg.pinv(a), randn(3, 4, 3),
         decomposition="high", dynamic=[(0, 0, "B")]),
    case(_lf, "dyn-side-refused", lambda a: _lf(a), randn(3, 5), dynamic=[(0, 1, "N")],
         refuses="symbolic matrix side"),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)


def test_check_errors_at_run_time(rlx_bin, tmp_path):
    """torch.linalg.inv raises on a singular matrix (_linalg_check_errors):
    an exported inv runs on invertible inputs and refuses a singular one at
    run time, exit 2, naming the node and the zero pivot."""
    import json
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    from rlx.export import export_program

    class Inv(torch.nn.Module):
        def forward(self, a):
            return torch.linalg.inv(a)

    export_program(Inv(), (randn(3, 3),), tmp_path, decomposition="high", check=False)
    ir = json.loads((tmp_path / "torch-ir.json").read_text())
    assert [e["id"] for e in ir["inputs"]] == ["a"]
    good, bad = tmp_path / "good.npy", tmp_path / "bad.npy"
    np.save(good, np.eye(3, dtype=np.float32) * 2)
    np.save(bad, np.array([[1, 2, 3], [2, 4, 6], [0, 0, 1]], dtype=np.float32))
    p = subprocess.run([str(rlx_bin), "run", str(tmp_path), "--input", f"a={good}", "--output-dir",
                        str(tmp_path / "o")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert np.allclose(np.load(tmp_path / "o" / "out_0.npy"), np.eye(3) / 2)
    p = subprocess.run([str(rlx_bin), "run", str(tmp_path), "--input", f"a={bad}", "--output-dir",
                        str(tmp_path / "o2")], capture_output=True, text=True)
    assert p.returncode == 2
    assert "singular" in p.stderr and "linalg_inv_ex" in p.stderr, p.stderr
