"""The ``rlx`` console script of the installed package: runs the rlx CLI the
package carries (``rlx/bin/rlx``), so ``rlx verify DIR`` works after
``pip install``."""

import os
import sys

from . import _paths


def main() -> None:
    path = _paths.find_binary()
    if path is None or os.path.realpath(path) == os.path.realpath(sys.argv[0]):
        sys.exit("rlx: the rlx binary is missing from the package (reinstall it)")
    os.execv(path, [path, *sys.argv[1:]])


if __name__ == "__main__":
    main()
