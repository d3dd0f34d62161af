"""The rlx command-line tool end to end: verify can fail, run writes outputs
that match PyTorch, inspect/bench/ops report, and the exporter's
auto-decompose loop works with the real binary."""

import json
import os
import shutil

import numpy as np
import pytest
import torch
from safetensors.numpy import load_file, save_file
from torch import nn

from conftest import REPO, run_rlx

import rlx  # noqa: E402

EXAMPLE = REPO / "examples" / "models" / "mnist_cnn"


def test_verify_fails_on_a_wrong_reference(rlx_bin, tmp_path):
    d = tmp_path / "m"
    shutil.copytree(EXAMPLE, d)
    ref = load_file(d / "reference.safetensors")
    ref["out::0"] = ref["out::0"].copy()
    ref["out::0"][1, 3] += 0.05  # one element off by far more than the tolerance
    save_file(ref, d / "reference.safetensors")
    r = run_rlx(rlx_bin, "verify", d, "--json", d / "v.json")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "parity: FAIL" in r.stdout and "max abs error" in r.stdout
    rep = json.loads((d / "v.json").read_text())
    assert not rep["pass"] and rep["outputs"][0]["mismatches"] == 1


def test_verify_fails_on_nan_output(rlx_bin, tmp_path):
    """A reference with NaN where rlx is finite must fail (the reference
    system's checker let all-NaN outputs pass)."""
    d = tmp_path / "m"
    shutil.copytree(EXAMPLE, d)
    ref = load_file(d / "reference.safetensors")
    ref["out::0"] = np.full_like(ref["out::0"], np.nan)
    save_file(ref, d / "reference.safetensors")
    r = run_rlx(rlx_bin, "verify", d)
    assert r.returncode == 1 and "non-finite" in r.stdout, r.stdout


def test_verify_thresholds_are_options(rlx_bin, tmp_path):
    d = tmp_path / "m"
    shutil.copytree(EXAMPLE, d)
    ref = load_file(d / "reference.safetensors")
    # max|ref| is about 2.4, so the default tolerance is about 1e-4 + 2.4e-4
    ref["out::0"] = ref["out::0"] + np.float32(1e-3)
    save_file(ref, d / "reference.safetensors")
    assert run_rlx(rlx_bin, "verify", d).returncode == 1
    assert run_rlx(rlx_bin, "verify", d, "--atol", "2e-3").returncode == 0


def test_float64_arbiter(rlx_bin, tmp_path):
    """The exporter stores a float64 run (out64::i); verify consults it only
    when rlx and torch disagree beyond tolerance, and passes rlx only when rlx
    is about as close to the float64 values as torch is."""
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 8))
    d = tmp_path / "m"
    rlx.export_program(m, (torch.randn(4, 16),), d, check=False)
    ref = load_file(d / "reference.safetensors")
    assert ref["out64::0"].dtype == np.float64
    assert np.abs(ref["out64::0"] - ref["out::0"]).max() < 1e-5
    assert run_rlx(rlx_bin, "verify", d).returncode == 0
    exact, torch_out = ref["out64::0"].copy(), ref["out::0"].copy()
    # torch 2e-3 off the float64 values (as on a badly conditioned model): rlx
    # differs from torch by far more than tolerance, yet rlx is right
    ref["out::0"] = torch_out + np.float32(2e-3)
    save_file(ref, d / "reference.safetensors")
    r = run_rlx(rlx_bin, "verify", d, "--json", d / "v.json")
    assert r.returncode == 0 and "float64 arbiter" in r.stdout, r.stdout
    o = json.loads((d / "v.json").read_text())["outputs"][0]
    assert o["arbitrated"] and o["pass"] and o["err64_torch"] > 1.9e-3 and o["err64_rlx"] < 1e-5
    # now the float64 values sit 3e-3 from rlx and torch is only 1e-3 from
    # them: rlx is the one that is off, and verify says so
    ref["out64::0"] = exact + 3e-3
    ref["out::0"] = (exact + 2e-3).astype(np.float32)
    save_file(ref, d / "reference.safetensors")
    r = run_rlx(rlx_bin, "verify", d)
    assert r.returncode == 1 and "against float64 rlx is" in r.stdout, r.stdout
    # the arbiter never rescues a non-finite mismatch
    ref["out::0"][0, 0] = np.nan
    save_file(ref, d / "reference.safetensors")
    r = run_rlx(rlx_bin, "verify", d)
    assert r.returncode == 1 and "non-finite" in r.stdout, r.stdout


def test_run_writes_npy_matching_torch(rlx_bin, tmp_path):
    x = np.random.default_rng(0).standard_normal((4, 1, 28, 28)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    r = run_rlx(rlx_bin, "run", EXAMPLE, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    got = np.load(tmp_path / "o" / "out_0.npy")
    # eager torch on the same weights
    import importlib.util
    spec = importlib.util.spec_from_file_location("lenet", REPO / "tests" / "models" / "lenet.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model, _ = mod.get_model()
    w = load_file(EXAMPLE / "weights.safetensors")
    model.load_state_dict({k: torch.from_numpy(v) for k, v in w.items()})
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_run_rejects_wrong_input_shape(rlx_bin, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((2, 1, 28, 28), np.float32))
    r = run_rlx(rlx_bin, "run", EXAMPLE, "--input", f"x={tmp_path / 'x.npy'}")
    assert r.returncode == 2 and "'x'" in r.stderr and "[4, 1, 28, 28]" in r.stderr, r.stderr


class GroupedMM(nn.Module):
    """transformers' grouped matmul with the offsets as an input (rlx reads them at run time)."""
    def forward(self, x, w, offs):
        return torch.ops.transformers.grouped_mm_fallback(x, w, offs)


def test_run_grouped_mm_bad_offsets_is_an_error(rlx_bin, tmp_path):
    """Offsets that decrease or pass the input's rows are data: `rlx run` must refuse them with
    an error naming the node and the entry (exit 2), never crash or read out of bounds."""
    pytest.importorskip("transformers.integrations.moe")
    out = tmp_path / "gmm"
    x, w, offs = torch.randn(6, 4), torch.randn(3, 4, 5), torch.tensor([2, 2, 5], dtype=torch.int32)
    s = rlx.export_program(GroupedMM(), (x, w, offs), out, decomposition="aten", check=False)
    assert "transformers.grouped_mm_fallback.default" in dict(s["op_histogram"])
    np.save(tmp_path / "x.npy", x.numpy())
    np.save(tmp_path / "w.npy", w.numpy())
    ok = np.array([1, 3, 6], np.int32)
    for name, offsets, want in (("good", ok, None),
                                ("decreasing", np.array([3, 1, 6], np.int32),
                                 "offsets[1] = 1 follows 3"),
                                ("past-rows", np.array([1, 3, 7], np.int32),
                                 "offsets[2] = 7 is past the 6 rows")):
        np.save(tmp_path / f"{name}.npy", offsets)
        r = run_rlx(rlx_bin, "run", out, "--input", f"x={tmp_path / 'x.npy'}", "--input",
                    f"w={tmp_path / 'w.npy'}", "--input", f"offs={tmp_path / name}.npy",
                    "--output-dir", tmp_path / name)
        if want is None:
            assert r.returncode == 0, r.stderr
            got = np.load(tmp_path / name / "out_0.npy")
            ref = torch.ops.transformers.grouped_mm_fallback(x, w, torch.from_numpy(ok)).numpy()
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
        else:
            assert r.returncode == 2, r.stdout + r.stderr
            assert "grouped_mm_fallback" in r.stderr and want in r.stderr, r.stderr


def test_inspect_bench_ops(rlx_bin):
    r = run_rlx(rlx_bin, "inspect", EXAMPLE)
    assert r.returncode == 0 and "aten.conv2d.default" in r.stdout and "conv" in r.stdout
    r = run_rlx(rlx_bin, "bench", EXAMPLE, "--iters", "3", "--warmup", "1")
    assert r.returncode == 0 and "median" in r.stdout and "p90" in r.stdout
    r = run_rlx(rlx_bin, "ops")
    assert r.returncode == 0 and "aten.scaled_dot_product_attention" in r.stdout
    assert "\n  transformers.grouped_mm_fallback\n" in r.stdout  # a library's custom op


def test_usage_errors_exit_2(rlx_bin):
    assert run_rlx(rlx_bin).returncode == 2
    assert run_rlx(rlx_bin, "frobnicate").returncode == 2
    r = run_rlx(rlx_bin, "verify", "/nonexistent/dir")
    assert r.returncode == 2 and "/nonexistent/dir" in r.stderr


class Shrinks(nn.Module):
    """Two ops rlx has no handler for (hardshrink, addcmul) that torch can decompose."""
    def forward(self, x):
        return torch.nn.functional.hardshrink(x, 0.3) * 2 + torch.addcmul(x, x, x, value=0.5)


def test_auto_decompose_loop_with_real_binary(rlx_bin, tmp_path, monkeypatch):
    """hardshrink and addcmul have no rlx handler and survive the "aten" export
    (no decompositions): the exporter must learn that from `rlx inspect
    --check` and re-export with torch's own decompositions of those ops."""
    monkeypatch.setenv("RLX_BIN", str(rlx_bin))
    out = tmp_path / "shrinks"
    s = rlx.export_program(Shrinks(), (torch.randn(3, 5),), out, decomposition="aten", check=True)
    assert s["check"] == "passed", s["check_message"]
    assert s["auto_decomposed_ops"], s
    r = run_rlx(rlx_bin, "verify", out)
    assert r.returncode == 0, r.stdout + r.stderr


def test_unsupported_ops_reported_together(rlx_bin, tmp_path, monkeypatch):
    monkeypatch.setenv("RLX_BIN", str(rlx_bin))
    out = tmp_path / "shrinks"
    s = rlx.export_program(Shrinks(), (torch.randn(3, 5),), out, decomposition="aten", check=False)
    assert s["check"] == "disabled"
    r = run_rlx(rlx_bin, "inspect", out, "--check")
    assert r.returncode == 2
    assert "does not yet support 2 op(s)" in r.stderr and "aten.hardshrink" in r.stderr and "aten.addcmul" in r.stderr


def test_inspect_dot_renders_with_graphviz(rlx_bin, tmp_path):
    """--dot FILE.dot writes Graphviz text; FILE.svg / .png renders it with `dot`
    when Graphviz is installed, and says how to get it when not."""
    import shutil
    model = REPO / "examples" / "models" / "mnist_cnn"
    r = run_rlx(rlx_bin, "inspect", model, "--dot", tmp_path / "g.dot")
    assert r.returncode == 0 and (tmp_path / "g.dot").read_text().startswith("digraph")
    svg = tmp_path / "g.svg"
    r = run_rlx(rlx_bin, "inspect", model, "--dot", svg)
    assert (tmp_path / "g.svg.dot").read_text().startswith("digraph")
    if shutil.which("dot"):
        assert r.returncode == 0, r.stderr
        assert "<svg" in svg.read_text() and "conv" in svg.read_text()
        png = tmp_path / "g.png"
        assert run_rlx(rlx_bin, "inspect", model, "--dot", png).returncode == 0
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert r.returncode == 2 and "Graphviz's `dot` is not on PATH" in r.stderr
    env = dict(os.environ, PATH="/nonexistent")
    r = run_rlx(rlx_bin, "inspect", model, "--dot", tmp_path / "h.svg", env=env)
    assert r.returncode == 2 and "apt-get install graphviz" in r.stderr
