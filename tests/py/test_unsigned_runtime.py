"""The unsigned dtypes (uint16, uint32, uint64) end to end: exported with
their torch-ir tokens and safetensors names, checked by `rlx verify`, and run
in-process (rlx.compile) with torch and numpy inputs and outputs, including
uint64 values above 2^63 and hash_tensor's uint64 output.

Run: python3 -m pytest -q tests/py/test_unsigned_runtime.py
"""

import json
import os
import subprocess

import numpy as np
import pytest
import torch
from torch import nn

from conftest import rlx_binary

_lib = rlx_binary().parent / "librlx.so"
if "RLX_LIB" not in os.environ and _lib.is_file():
    os.environ["RLX_LIB"] = str(_lib)

import rlx  # noqa: E402
from rlx.export import export_program  # noqa: E402


class Mixed(nn.Module):
    """A uint64 weight, uint32/uint64 inputs, and outputs of every kind."""

    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.tensor([2**64 - 1, 2**63, 7], dtype=torch.uint64))

    def forward(self, a, b):
        m = torch.maximum(b, self.w)                         # unsigned order above 2^63
        s = torch.sort(b).values                             # likewise
        f = a.to(torch.float32) / 2                          # u32 -> f32
        h = torch.hash_tensor(f)                             # a uint64 output
        c = torch.bitwise_xor(a, torch.tensor(0xFFFF, dtype=torch.uint32))
        return m, s, f, h, c


def _inputs():
    a = torch.tensor([0, 1, 2**32 - 1], dtype=torch.uint32)
    b = torch.tensor([5, 2**63 + 1, 2**64 - 2], dtype=torch.uint64)
    return a, b


def test_export_tokens_and_verify(tmp_path):
    out = tmp_path / "m"
    export_program(Mixed(), _inputs(), out)
    ir = json.loads((out / "torch-ir.json").read_text())
    assert [i["dtype"] for i in ir["inputs"]] == ["u32", "u64"]
    assert [o["dtype"] for o in ir["outputs"]] == ["u64", "u64", "f32", "u64", "u32"]
    header = (out / "weights.safetensors").read_bytes()
    assert b'"U64"' in header[: 8 + int.from_bytes(header[:8], "little")]
    p = subprocess.run([str(rlx_binary()), "verify", str(out)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


def test_in_process_torch_and_numpy():
    m = rlx.compile(Mixed(), _inputs())
    try:
        want = Mixed()(*_inputs())
        got = m(*_inputs())
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and torch.equal(g, w)
        a, b = (t.numpy() for t in _inputs())
        got_np = m(a, b)
        assert got_np[0].dtype == np.uint64 and got_np[4].dtype == np.uint32
        assert got_np[0].tolist() == want[0].tolist() and got_np[3].tolist() == want[3].tolist()
    finally:
        m.close()


def test_wrong_unsigned_dtype_is_refused():
    m = rlx.compile(Mixed(), _inputs())
    try:
        a, b = _inputs()
        with pytest.raises(rlx.RlxError, match="u32|u64|dtype"):
            m(a.to(torch.int64), b)
    finally:
        m.close()
