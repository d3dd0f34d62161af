"""Shared fixtures for the end-to-end tests: the rlx binary and helpers that
export a model and run `rlx verify` on it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))


def rlx_binary() -> Path:
    path = Path(os.environ.get("RLX_BIN", REPO / "build" / "rlx"))
    return path


@pytest.fixture(scope="session")
def rlx_bin():
    path = rlx_binary()
    if not path.is_file():
        pytest.fail(f"rlx binary not found at {path}: build first (cmake -B build && cmake --build build)"
                    " or set RLX_BIN")
    return path


def run_rlx(rlx_bin, *args, timeout=600, env=None):
    return subprocess.run([str(rlx_bin), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env)
