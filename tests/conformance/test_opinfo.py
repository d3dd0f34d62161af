"""Conformance: a fixed subset of PyTorch's OpInfo samples (the CI part of opinfo.py).

Each test is one case of ``opinfo.py``: one OpInfo, one dtype (float32, int64,
bool where the OpInfo lists it), one of its first ``SAMPLES`` sample inputs,
exported with ``decomposition="high"`` and checked by ``rlx verify``.  A case
must pass, or be skipped with the runner's reason (eager torch rejects the
sample, torch.export cannot export it, a data-dependent or complex output);
``KNOWN_FAILURES`` names the cases that fail today, as strict xfails.
The list covers elementwise ops, reductions, indexing, shape ops,
nn.functional and the order statistics; ``python3 tests/conformance/opinfo.py
--all`` runs every OpInfo.  These cases do not go into results.json: that file
is keyed by ATen overload, and an OpInfo is a Python-level function.
"""

import pytest
from torch.testing._internal.common_methods_invocations import op_db

import opinfo

SAMPLES = 2

CI_OPINFOS = (
    # elementwise
    "add", "sub", "mul", "div.no_rounding_mode", "div.floor_rounding", "pow", "remainder",
    "abs", "exp", "log1p", "rsqrt", "sigmoid", "erf", "clamp", "where", "maximum",
    "bitwise_and", "eq", "isnan", "nan_to_num",
    # reductions and scans
    "sum", "mean", "amax", "argmax", "var", "logsumexp", "any", "cumsum",
    # order statistics, sorting, searching
    "sort", "topk", "median", "nanmedian", "kthvalue", "mode", "cummax", "cummin",
    "logcumsumexp", "searchsorted", "bucketize", "isin",
    # indexing
    "index_select", "gather", "scatter", "index_put", "take_along_dim", "masked_fill",
    # shape
    "cat", "reshape", "permute", "flip", "roll", "tril",
    # nn.functional and linear algebra
    "softmax", "nn.functional.gelu", "nn.functional.layer_norm", "nn.functional.conv2d",
    "nn.functional.linear", "nn.functional.max_pool2d", "nn.functional.embedding",
    "nn.functional.pad.constant", "matmul",
    # factorizations, solves and decompositions (linalg block: about 6 s); inv,
    # solve and cholesky go through the run-time info check, eigh's and svd's
    # vectors are compared up to sign (opinfo.py)
    "linalg.inv", "linalg.solve", "linalg.cholesky", "linalg.qr", "linalg.eigh", "linalg.svd",
    # issue 11: a uint64 output, index makers, histograms
    "argsort", "hash_tensor", "nonzero_static", "tril_indices", "histogram", "histogramdd",
)

# Cases known to fail, with the reason: strict, so a fix shows up as XPASS and
# the entry must go.  Keyed by the test id.  (None today: the topk and sort
# tie-order bugs were fixed with tests/conformance/test_sort_ties.py.)
KNOWN_FAILURES: dict[str, str] = {}

def _params():
    for op in opinfo.select(op_db, list(CI_OPINFOS)):
        oid = opinfo.opinfo_id(op)
        for dname, k, sample, why in opinfo.cases_of(op, SAMPLES):
            tid = f"{oid}/{dname}/{k}"
            marks = ([pytest.mark.xfail(reason=KNOWN_FAILURES[tid], strict=True)]
                     if tid in KNOWN_FAILURES else [])
            yield pytest.param(op, sample, why, id=tid, marks=marks)


@pytest.fixture(scope="session")
def registry(rlx_bin):
    return opinfo.rlx_registry(str(rlx_bin))


@pytest.mark.parametrize("op,sample,why", list(_params()))
def test_opinfo(op, sample, why, rlx_bin, registry, tmp_path):
    if sample is None:
        pytest.skip(why)
    status, reason, _ = opinfo.run_sample(op, sample, str(rlx_bin), registry, tmp_path)
    if status == "skip":
        pytest.skip(reason)
    assert status == "pass", f"[{status}] {opinfo.opinfo_id(op)}: {reason}"


def test_sign_alignment_rule():
    """The runner's sign rule: only the direct U / Vh / eigenvector outputs
    qualify, and aligning negates whole vectors, nothing else."""
    import numpy as np
    ir = {"nodes": [{"id": "s", "op": "aten._linalg_svd.default", "args": []},
                    {"id": "u", "op": "_getitem", "args": [{"ref": "s"}, {"int": 0}]},
                    {"id": "v", "op": "_getitem", "args": [{"ref": "s"}, {"int": 2}]},
                    {"id": "w", "op": "_getitem", "args": [{"ref": "s"}, {"int": 1}]},
                    {"id": "e", "op": "aten._linalg_eigh.default", "args": []},
                    {"id": "ev", "op": "_getitem", "args": [{"ref": "e"}, {"int": 1}]},
                    {"id": "m", "op": "aten.mul.Tensor", "args": [{"ref": "u"}, {"int": 2}]}],
          "outputs": [{"ref": r} for r in ("u", "w", "v", "ev", "m")]}
    assert opinfo.sign_ambiguous_outputs(ir) == {0: "columns", 2: "rows", 3: "columns"}
    want = np.array([[1.0, 2.0], [3.0, -4.0]])
    got = want * np.array([[-1.0, 1.0]])  # first column negated
    assert np.array_equal(opinfo.align_signs(got, want, "columns"), want)
    assert not np.array_equal(opinfo.align_signs(got, want, "rows"), want)
    assert np.array_equal(opinfo.align_signs(want * np.array([[1.0], [-1.0]]), want, "rows"), want)
