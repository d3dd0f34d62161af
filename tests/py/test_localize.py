"""The localizer on real models (issue 4): a fault planted at a known node
must be named exactly, and a NaN planted at a known node must be reported as
the culprit with its consumers as propagators.

The faults come from test-only switches in librlx (src/runtime/kernels.c):
RLX_TEST_INJECT_FAULT=<label> makes the default kernel of that node wrong
(the reference kernels stay right), RLX_TEST_INJECT_NAN=<label> writes a NaN
into that node's output in every mode."""

import json
import os

import pytest

from conftest import REPO, run_rlx

import rlx  # noqa: E402
from test_models import load


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    model, inputs = load("tiny_llama")
    out = tmp_path_factory.mktemp("loc") / "tiny_llama"
    rlx.export_program(model, inputs, out, intermediates=True, check=False)
    return out


@pytest.fixture(scope="module")
def cnn_dir(tmp_path_factory):
    model, inputs = load("resnet18", size=64)
    out = tmp_path_factory.mktemp("loc") / "resnet18"
    rlx.export_program(model, inputs, out, intermediates=True, check=False)
    return out


def verify_localize(rlx_bin, d, **env):
    e = dict(os.environ, **env)
    import subprocess
    r = subprocess.run([str(rlx_bin), "verify", str(d), "--localize", "--json", str(d / "loc.json")],
                       capture_output=True, text=True, env=e, timeout=600)
    return r, json.loads((d / "loc.json").read_text()) if (d / "loc.json").exists() else None


def consumers(d, node):
    ir = json.loads((d / "torch-ir.json").read_text())

    def refs(a):
        if "ref" in a:
            yield a["ref"]
        for x in a.get("list", []):
            yield from refs(x)
    return {n["id"] for n in ir["nodes"] if any(node in refs(a) for a in n["args"])}


def test_clean_model_has_no_culprit(rlx_bin, llama_dir):
    r, rep = verify_localize(rlx_bin, llama_dir)
    assert r.returncode == 0, r.stdout + r.stderr
    assert rep["localize"]["compared"] > 100 and rep["localize"]["culprits"] == []


@pytest.mark.parametrize("node", ["linear_3", "mul_11", "scaled_dot_product_attention_1"])
def test_wrong_kernel_is_named(rlx_bin, llama_dir, node):
    r, rep = verify_localize(rlx_bin, llama_dir, RLX_TEST_INJECT_FAULT=node)
    assert r.returncode == 1, r.stdout + r.stderr
    assert rep["kernel_at_fault"]["node"] == node, r.stdout
    assert rep["localize"]["culprits"] == []  # the reference kernels are right


@pytest.mark.parametrize("node", ["rsqrt_2", "silu"])
def test_nan_culprit_and_propagators(rlx_bin, llama_dir, node):
    r, rep = verify_localize(rlx_bin, llama_dir, RLX_TEST_INJECT_NAN=node)
    assert r.returncode == 1, r.stdout + r.stderr
    culprits = [c["node"] for c in rep["localize"]["culprits"]]
    assert culprits == [node], r.stdout
    props = {p["node"] for p in rep["localize"]["propagators"]}
    direct = consumers(llama_dir, node)
    assert direct and direct <= props, (direct, props)
    assert all(p["from"] for p in rep["localize"]["propagators"])


def test_nan_in_a_cnn(rlx_bin, cnn_dir):
    node = "relu_5"
    r, rep = verify_localize(rlx_bin, cnn_dir, RLX_TEST_INJECT_NAN=node)
    assert [c["node"] for c in rep["localize"]["culprits"]] == [node], r.stdout
    assert consumers(cnn_dir, node) <= {p["node"] for p in rep["localize"]["propagators"]}


def test_culprit_of_a_multi_output_node(rlx_bin, cnn_dir):
    """max_pool2d_with_indices returns a tuple that FX reads through getitem:
    the report names the tuple's producer and its input, not just the getitem."""
    r, rep = verify_localize(rlx_bin, cnn_dir, RLX_TEST_INJECT_NAN="max_pool2d_with_indices")
    c = rep["localize"]["culprits"]
    assert len(c) == 1 and c[0]["op"] == "_getitem", r.stdout
    assert c[0]["output_of"] == "max_pool2d_with_indices", r.stdout
    assert "output 0 of node 'max_pool2d_with_indices' (aten.max_pool2d_with_indices" in r.stdout
    assert "inputs: relu f32[1, 64, 32, 32]" in r.stdout


def test_wrong_conv_kernel_in_a_cnn(rlx_bin, cnn_dir):
    r, rep = verify_localize(rlx_bin, cnn_dir, RLX_TEST_INJECT_FAULT="conv2d_7")
    assert r.returncode == 1 and rep["kernel_at_fault"]["node"] == "conv2d_7", r.stdout


def test_debug_nans_names_the_culprit(rlx_bin, llama_dir):
    import subprocess
    r = subprocess.run([str(rlx_bin), "verify", str(llama_dir)], capture_output=True, text=True,
                       env=dict(os.environ, RLX_DEBUG_NANS="1", RLX_TEST_INJECT_NAN="rsqrt_1"))
    assert "node 'rsqrt_1'" in r.stderr and "culprit" in r.stderr, r.stderr
    assert "propagated" in r.stderr
    r = subprocess.run([str(rlx_bin), "verify", str(llama_dir)], capture_output=True, text=True,
                       env=dict(os.environ, RLX_DEBUG_NANS="abort", RLX_TEST_INJECT_NAN="rsqrt_1"))
    assert r.returncode == 2 and "RLX_DEBUG_NANS=abort" in r.stderr


def test_localize_without_intermediates_says_so(rlx_bin):
    r = run_rlx(rlx_bin, "verify", REPO / "examples" / "models" / "mnist_cnn", "--localize")
    assert r.returncode == 0 and "no intermediates.safetensors" in r.stdout
