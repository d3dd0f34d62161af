"""The model zoo as a pytest suite: each model is exported and must pass `rlx verify`.

CI runs the fast subset (tests/zoo/models.py, `fast=True`); `RLX_ZOO=full` runs every model.
Each model runs through `run_zoo.run_model` (the exporter in a child process of its own), so a
failure message carries the same cause `run_zoo.py` reports: unsupported ops, an exporter
exception, an rlx error, or the parity figures.  Set RLX_ZOO_LOCALIZE=1 to also localize a
parity failure to its node (slower: a second export with intermediates).

`test_zoo_model_dynamic_batch` is run_zoo's dynamic-batch pass (`run_zoo.dynamic_pass`): the
model exported with a dynamic batch axis must pass `rlx verify` at two batch sizes; a model
torch.export cannot export that way is skipped with torch's reason.  RLX_ZOO_DYNAMIC=0 leaves
it out.
"""

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import models  # noqa: E402
import run_zoo  # noqa: E402

SUBSET = "full" if os.environ.get("RLX_ZOO", "fast").lower() == "full" else "fast"
NAMES = [m.name for m in models.subset(SUBSET)]
DYNAMIC = os.environ.get("RLX_ZOO_DYNAMIC", "1") != "0"


@pytest.fixture(scope="session")
def rlx_bin():
    path = run_zoo.rlx_binary()
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"rlx binary not found at {path}: build first (cmake -B build && "
                    "cmake --build build) or set RLX_BIN")
    return path


def test_registry_is_complete():
    assert len(models.MODELS) >= 45
    fast = models.subset("fast")
    assert 8 <= len(fast) <= 14
    assert {m.source for m in fast} == {m.source for m in models.MODELS}
    for m in models.MODELS:
        assert m.source in ("torchvision", "transformers", "timm", "torch.nn"), m


@pytest.mark.parametrize("name", NAMES)
def test_zoo_model_verifies(rlx_bin, tmp_path, name):
    localize = os.environ.get("RLX_ZOO_LOCALIZE") == "1"
    rec = run_zoo.run_model(name, tmp_path, rlx_bin, localize=localize, keep=False,
                            dynamic=False)
    assert rec["status"] == "pass", run_zoo.result_line(rec)
    assert rec["outputs"] and all(o["pass"] for o in rec["outputs"]), rec["outputs"]
    assert rec["min_cosine"] >= 0.99999, rec


@pytest.mark.skipif(not DYNAMIC, reason="RLX_ZOO_DYNAMIC=0")
@pytest.mark.parametrize("name", NAMES)
def test_zoo_model_dynamic_batch(rlx_bin, tmp_path, name):
    d = run_zoo.dynamic_pass(name, tmp_path, rlx_bin)
    if d["status"] == "not exportable":
        pytest.skip(f"torch.export cannot export {name} with a dynamic batch: {d['detail']}")
    assert d["status"] == "pass", f"{name}: dynamic batch {d['reason']}: {d['detail']}"
    assert len(d["batches"]) == 2 and len(set(d["batches"])) == 2, d
