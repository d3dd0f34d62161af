"""Where the rlx binary and librlx are: the one list of places, in order.

An installed package (``pip install ./python``) carries both inside itself,
``rlx/librlx.so`` and ``rlx/bin/rlx``, built by scikit-build-core from
``python/CMakeLists.txt``.  A source checkout used with ``PYTHONPATH=python``
finds them in the repository's ``build/``.  The environment overrides both
(``RLX_BIN``, ``RLX_LIB``).  This module imports nothing heavy: the runtime
and the exporter both ask it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
# the repository's build folder, for a source checkout (python/rlx/ -> repo/build)
CHECKOUT_BUILD = PACKAGE_DIR.parent.parent / "build"

BUNDLED_BINARY = PACKAGE_DIR / "bin" / "rlx"
BUNDLED_LIBRARY = PACKAGE_DIR / "librlx.so"


def _executable(p: Path) -> bool:
    return p.is_file() and os.access(p, os.X_OK)


def find_binary(error: type[Exception] = FileNotFoundError) -> str | None:
    """The rlx CLI: $RLX_BIN (which must be an executable, else ``error``),
    the package's own, the checkout's build/rlx, then ``rlx`` on PATH; None
    when there is none."""
    env = os.environ.get("RLX_BIN")
    if env:
        if not _executable(Path(env)):
            raise error(f"RLX_BIN={env} is not an executable file")
        return env
    for p in (BUNDLED_BINARY, CHECKOUT_BUILD / "rlx"):
        if _executable(p):
            return str(p)
    return shutil.which("rlx")


def find_library() -> str | None:
    """librlx.so: $RLX_LIB, the package's own, then the checkout's
    build/librlx.so; None when there is none."""
    env = os.environ.get("RLX_LIB")
    if env:
        return env
    for p in (BUNDLED_LIBRARY, CHECKOUT_BUILD / "librlx.so"):
        if p.is_file():
            return str(p)
    return None
