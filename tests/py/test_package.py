"""The Python package: rlx.compile / rlx.load running models in-process
through librlx's C API (python/rlx/_runtime.py), and `pip install ./python`
building librlx and the CLI into the wheel.

Most tests import the source checkout (conftest puts python/ first on
sys.path; librlx is the build's, beside $RLX_BIN or in build/). The last
ones install the package with pip into a virtual environment and use it from
there, with no path into the checkout: $RLX_PY_VENV names one to reuse (made
by a previous run: `python3 -m venv --system-site-packages V && V/bin/pip
install ./python`), else the test makes it (about 30 s: the wheel compiles
librlx).

Run: python3 -m pytest -q tests/py/test_package.py
"""

import ctypes
import gc
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from conftest import REPO, rlx_binary

# the checkout's librlx: the one beside the rlx binary the suite tests
_lib = rlx_binary().parent / "librlx.so"
if "RLX_LIB" not in os.environ and _lib.is_file():
    os.environ["RLX_LIB"] = str(_lib)

import rlx  # noqa: E402
from rlx import _capi  # noqa: E402


def assert_parity(got: torch.Tensor, want: torch.Tensor) -> None:
    """The project's f32 bar: cosine >= 0.99999, max|d| <= 1e-4 + 1e-4 max|torch|."""
    assert got.shape == want.shape and got.dtype == want.dtype
    g, w = got.double().flatten(), want.double().flatten()
    cos = float(g @ w / (g.norm() * w.norm()))
    err = float((g - w).abs().max())
    assert cos >= 0.99999, f"cosine {cos}"
    assert err <= 1e-4 + 1e-4 * float(w.abs().max()), f"max|d| {err}"


@pytest.fixture(scope="module")
def resnet():
    """torchvision resnet18 with random weights, compiled in-process."""
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 64, 64)
    m = rlx.compile(model, (x,))
    yield model, m
    m.close()


class TwoInOut(nn.Module):
    """Two inputs, two outputs; the batch axis of x is dynamic in `small`."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 8 * 8, 10)

    def forward(self, x, scale):
        logits = self.fc(torch.relu(self.conv(x)).flatten(1))
        return logits * scale, logits.softmax(-1)


@pytest.fixture(scope="module")
def small():
    torch.manual_seed(1)
    model = TwoInOut().eval()
    m = rlx.compile(model, (torch.randn(4, 3, 8, 8), torch.rand(1)),
                    dynamic=["x:0:batch:1:16"], threads=1)
    yield model, m
    m.close()


# --------------------------------------------------------------------------
# In-process runs


def test_torchvision_matches_eager(resnet, capsys):
    model, m = resnet
    torch.manual_seed(2)
    x = torch.randn(1, 3, 64, 64)  # not the example input
    y = m(x)
    assert isinstance(y, torch.Tensor)
    with torch.no_grad():
        assert_parity(y, model(x))
    report = m.verify()
    assert report["pass"] is True and report and report.passed
    assert repr(report) == "<rlx parity PASS: 1 output(s)>"
    assert "parity: PASS" in capsys.readouterr().out


def test_numpy_in_numpy_out(resnet):
    _, m = resnet
    x = torch.randn(1, 3, 64, 64)
    y = m(x.numpy())
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (1, 1000)
    np.testing.assert_array_equal(y, m(x).numpy())


def test_contiguous_inputs_are_not_copied(resnet):
    _, m = resnet
    x = torch.randn(1, 3, 64, 64)
    y = m(x)
    (name, ptr, copied), = m.last_binding()
    assert (name, ptr, copied) == ("x", x.data_ptr(), False)

    a = x.numpy()
    m(a)
    assert m.last_binding()[0][1:] == (a.ctypes.data, False)

    # channels-last is the same values in another order: copied, same result
    xcl = x.contiguous(memory_format=torch.channels_last)
    assert not xcl.is_contiguous()
    ycl = m(xcl)
    _, ptr, copied = m.last_binding()[0]
    assert copied and ptr != xcl.data_ptr()
    assert torch.equal(ycl, y)

    f = np.asfortranarray(a)
    np.testing.assert_array_equal(m(f), y.numpy())
    assert m.last_binding()[0][2] is True
    big = a.astype(">f4")  # non-native byte order
    np.testing.assert_array_equal(m(big), y.numpy())
    assert m.last_binding()[0][2] is True


def test_outputs_are_copies(small):
    _, m = small
    x, s = torch.randn(4, 3, 8, 8), torch.rand(1)
    a, _ = m(x, s)
    before = a.clone()
    m(torch.randn(4, 3, 8, 8), s)  # the next run rewrites the arena
    assert torch.equal(a, before)


def test_dynamic_batch(small):
    model, m = small
    assert m.inputs[0].dim_names[0] == "batch" and m.inputs[0].dynamic
    assert m.inputs[0].min_shape[0] == 1 and m.inputs[0].max_shape[0] == 16
    assert not m.inputs[1].dynamic
    assert [s.name for s in m.symbols] == ["batch"]
    assert [o.dtype for o in m.outputs] == ["f32", "f32"]
    for batch in (3, 16, 1):
        x, s = torch.randn(batch, 3, 8, 8), torch.rand(1)
        got = m(x, s)
        assert isinstance(got, tuple) and len(got) == 2
        with torch.no_grad():
            want = model(x, s)
        for g, w in zip(got, want):
            assert g.shape == (batch, 10)
            assert_parity(g, w)


def test_inputs_by_name(small):
    _, m = small
    x, s = torch.randn(4, 3, 8, 8), torch.rand(1)
    want = m(x, s)
    for got in (m(x, scale=s), m(scale=s, x=x)):
        assert all(torch.equal(g, w) for g, w in zip(got, want))


@pytest.mark.parametrize("case", ["dtype", "rank", "above_max", "static_axis", "count",
                                  "too_many", "non_tensor", "numpy_dtype", "unknown_name",
                                  "twice"])
def test_bad_inputs_raise_naming_the_input(small, case):
    _, m = small
    x, s = torch.randn(4, 3, 8, 8), torch.rand(1)
    kwargs = {"unknown_name": {"scale": s, "z": s}, "twice": {"x": x}}.get(case, {})
    args, status, words = {
        "dtype": ((x.double(), s), rlx.Status.SHAPE, ["input 'x'", "f32", "f64"]),
        "rank": ((x[0], s), rlx.Status.SHAPE, ["input 'x'"]),
        "above_max": ((torch.randn(17, 3, 8, 8), s), rlx.Status.SHAPE, ["'x'", "batch", "16"]),
        "static_axis": ((torch.randn(4, 3, 9, 8), s), rlx.Status.SHAPE, ["'x'"]),
        "count": ((x,), rlx.Status.INVALID_ARGUMENT, ["2 input", "'scale' is missing"]),
        "too_many": ((x, s, s), rlx.Status.INVALID_ARGUMENT, ["2 input", "(x, scale)", "3 given"]),
        "unknown_name": ((x,), rlx.Status.NOT_FOUND, ["no input named 'z'", "x, scale"]),
        "twice": ((x, s), rlx.Status.INVALID_ARGUMENT, ["input 'x' is given twice"]),
        "non_tensor": ((x, 0.5), rlx.Status.INVALID_ARGUMENT, ["input 'scale'", "float"]),
        "numpy_dtype": ((x.numpy().astype(np.complex64), s.numpy()), rlx.Status.UNSUPPORTED,
                        ["input 'x'", "complex64"]),
    }[case]
    with pytest.raises(rlx.RlxError) as e:
        m(*args, **kwargs)
    assert e.value.status == status
    for w in words:
        assert w in str(e.value), str(e.value)
    # the model (and its pooled session) is still usable
    assert m(x, s)[0].shape == (4, 10)


def test_two_threads_one_model(resnet):
    _, m = resnet
    torch.manual_seed(3)
    xs = [torch.randn(1, 3, 64, 64) for _ in range(4)]
    want = [m(x) for x in xs]
    got = {0: [], 1: []}
    errors = []
    start = threading.Barrier(2)

    counts = []

    def worker(k):
        try:
            start.wait()
            for _ in range(3):
                got[k].extend(m(x) for x in xs)
            start.wait()  # both threads have called, neither has ended
            counts.append(m.session_count())
            start.wait()
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in (0, 1):
        assert len(got[k]) == 12
        for i, y in enumerate(got[k]):
            assert torch.equal(y, want[i % 4])
    # a session per thread: the main thread's and the two workers'; a thread
    # that ends takes its session with it
    assert counts == [3, 3]
    assert m.session_count() == 1


def test_calls_release_the_gil():
    # ctypes releases the GIL around calls through a CDLL (not a PyDLL)
    lib = _capi.lib()
    assert not isinstance(lib, ctypes.PyDLL)
    assert not lib.rlx_session_run._flags_ & ctypes._FUNCFLAG_PYTHONAPI


# --------------------------------------------------------------------------
# rlx.load, lifetime


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("exp") / "two"
    torch.manual_seed(4)
    model = TwoInOut().eval()
    x, s = torch.randn(2, 3, 8, 8), torch.rand(1)
    rlx.export_program(model, (x, s), out)
    return model, out, (x, s)


def test_load_export_dir(export_dir, capsys):
    model, out, (x, s) = export_dir
    with rlx.load(out, threads=1) as m:
        assert [i.name for i in m.inputs] == ["x", "scale"]
        assert m.inputs[0].shape == (2, 3, 8, 8) and not m.inputs[0].dynamic
        with torch.no_grad():
            want = model(x, s)
        for g, w in zip(m(x, s), want):
            assert_parity(g, w)
        for g, w in zip(m(x.numpy(), s.numpy()), want):
            assert isinstance(g, np.ndarray)
            assert_parity(torch.from_numpy(g), w)
        assert m.verify(quiet=True)["pass"] is True
        assert capsys.readouterr().out == ""
    assert m.closed
    with pytest.raises(rlx.RlxError, match="closed"):
        m(x, s)
    m.close()  # idempotent


def test_verify_reports_a_failure(export_dir, tmp_path, capsys):
    from safetensors.torch import load_file, save_file
    _, out, _ = export_dir
    bad = tmp_path / "bad"
    bad.mkdir()
    for f in ("torch-ir.json", "weights.safetensors"):
        (bad / f).write_bytes((out / f).read_bytes())
    ref = load_file(str(out / "reference.safetensors"))
    ref["out::0"] = ref["out::0"] + 1  # eager torch "said" something else
    save_file(ref, str(bad / "reference.safetensors"))
    with rlx.load(bad) as m:
        report = m.verify()
    assert not report and report["pass"] is False
    assert not report["outputs"][0]["pass"] and report["outputs"][1]["pass"]
    assert repr(report) == "<rlx parity FAIL: 2 output(s), 1 failing>"
    assert "parity: FAIL" in capsys.readouterr().out


def test_load_errors(export_dir, tmp_path):
    _, out, _ = export_dir
    for kw in ({"threads": -1}, {"threads": 257}, {"threads": 1.5}, {"max_memory": -1}):
        with pytest.raises(rlx.RlxError, match=next(iter(kw))) as e:
            rlx.load(out, **kw)
        assert e.value.status == rlx.Status.INVALID_ARGUMENT
    with pytest.raises(rlx.RlxError) as e:
        rlx.load(out / "torch-ir.json")
    assert "export directory" in str(e.value) and "model.rlx" in str(e.value)
    with pytest.raises(rlx.RlxError) as e:
        rlx.load(tmp_path / "nowhere")
    assert e.value.status == rlx.Status.IO and "nowhere" in str(e.value)
    # no reference data: verify() raises with rlx verify's message
    bare = tmp_path / "bare"
    bare.mkdir()
    for f in ("torch-ir.json", "weights.safetensors"):
        (bare / f).write_bytes((out / f).read_bytes())
    with rlx.load(bare) as m:
        with pytest.raises(rlx.RlxError, match="reference"):
            m.verify(quiet=True)


def _weight_mappings(path: Path) -> int:
    return sum(str(path) in line for line in Path("/proc/self/maps").read_text().splitlines())


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def test_close_frees_everything(export_dir):
    """Closing unmaps the weights (the model is destroyed) and ends the
    sessions' worker threads (the sessions are destroyed)."""
    _, out, (x, s) = export_dir
    weights = (out / "weights.safetensors").resolve()
    base, threads = _weight_mappings(weights), _threads()
    for _ in range(20):
        m = rlx.load(out, threads=3)
        m(x, s)
        assert _weight_mappings(weights) > base and _threads() > threads
        m.close()
        assert _weight_mappings(weights) == base and _threads() == threads
    m = rlx.load(out, threads=3)
    m(x, s)
    del m  # collected: freed too
    gc.collect()
    assert _weight_mappings(weights) == base and _threads() == threads


def test_threads_that_end_take_their_sessions(export_dir):
    _, out, (x, s) = export_dir
    with rlx.load(out, threads=2) as m:
        m(x, s)
        base = _threads()
        for _ in range(10):
            t = threading.Thread(target=m, args=(x, s))
            t.start()
            t.join()
        gc.collect()
        assert m.session_count() == 1 and _threads() == base


def test_compile_temp_dir_removed_on_close():
    m = rlx.compile(TwoInOut().eval(), (torch.randn(2, 3, 8, 8), torch.rand(1)))
    path = Path(m.path)
    assert (path / "torch-ir.json").is_file()
    m.close()
    assert not path.exists()


# --------------------------------------------------------------------------
# pip install ./python


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A virtual environment with the package pip-installed from the checkout
    (over the system's packages, for torch): $RLX_PY_VENV, or made here."""
    given = os.environ.get("RLX_PY_VENV")
    if given:
        return Path(given)
    v = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(v)], check=True)
    env = {k: val for k, val in os.environ.items() if k not in ("PYTHONPATH", "RLX_BIN", "RLX_LIB")}
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
    p = subprocess.run([str(v / "bin" / "python"), "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", str(REPO / "python")],
                       capture_output=True, text=True, env=env, timeout=1200)
    assert p.returncode == 0, p.stdout + p.stderr
    return v


def _run_installed(venv, tmp_path, code, *args):
    env = {k: val for k, val in os.environ.items() if k not in ("PYTHONPATH", "RLX_BIN", "RLX_LIB")}
    env["PATH"] = f"{venv / 'bin'}:{env.get('PATH', '')}"
    return subprocess.run([str(venv / "bin" / "python"), "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)


def test_pip_install_builds_librlx_into_the_package(venv, tmp_path):
    p = _run_installed(venv, tmp_path, """
        import os, sys, sysconfig
        import rlx
        pkg = os.path.dirname(rlx.__file__)
        site = sysconfig.get_paths()["platlib"]
        print(pkg, rlx.library(), rlx.binary(), site, sep="\\n")
    """)
    assert p.returncode == 0, p.stderr
    pkg, lib, binary, site = p.stdout.split()
    assert Path(pkg).parent == Path(site) and Path(site).is_relative_to(venv)
    assert Path(lib) == Path(pkg) / "librlx.so"
    assert Path(binary) == Path(pkg) / "bin" / "rlx"
    assert not Path(lib).is_relative_to(REPO)
    py = str(venv / "bin" / "python")
    for cmd in ([str(venv / "bin" / "rlx"), "ops"], [py, "-m", "rlx", "ops"],
                [str(venv / "bin" / "rlx-export"), "--help"], [py, "-m", "rlx.export", "--help"]):
        q = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
        assert q.returncode == 0, q.stderr


def test_installed_three_lines(venv, tmp_path):
    """The README's example, in the installed package: a torchvision model
    in-process against eager, and its parity report."""
    p = _run_installed(venv, tmp_path, """
        import torch, torchvision, rlx
        torch.manual_seed(0)
        model = torchvision.models.resnet18(weights=None).eval()
        x = torch.randn(1, 3, 64, 64)
        m = rlx.compile(model, (x,))
        y = m(x)
        with torch.no_grad():
            want = model(x)
        g, w = y.double().flatten(), want.double().flatten()
        cos = float(g @ w / (g.norm() * w.norm()))
        err = float((g - w).abs().max())
        assert cos >= 0.99999 and err <= 1e-4 + 1e-4 * float(w.abs().max()), (cos, err)
        assert m.verify()["pass"]
        print("installed", rlx.__file__, cos, err)
    """)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "parity: PASS" in p.stdout and "installed" in p.stdout


class _Counter(nn.Module):
    """A stateful module: each call adds 1 to a buffer (session state)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("n", torch.zeros(3))

    def forward(self, x):
        self.n.add_(1.0)
        return x * self.n


def test_state_per_thread_and_reset(tmp_path):
    x = torch.ones(2, 3)
    with rlx.compile(_Counter(), (x,), out_dir=tmp_path / "counter", threads=1) as m:
        assert [s.name for s in m.states] == ["n"] and m.states[0].shape == (3,)
        assert torch.equal(m(x), torch.full((2, 3), 1.0))
        assert torch.equal(m(x), torch.full((2, 3), 2.0))  # the state persists
        got = []
        t = threading.Thread(target=lambda: got.append(m(x)))  # another thread: its own state
        t.start()
        t.join()
        assert torch.equal(got[0], torch.full((2, 3), 1.0))
        m.reset_state()
        assert torch.equal(m(x), torch.full((2, 3), 1.0))
