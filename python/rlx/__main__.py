"""``python3 -m rlx ARGS`` is the rlx CLI (``rlx verify DIR``, ``rlx bench DIR``, ...)."""

from ._cli import main

main()
