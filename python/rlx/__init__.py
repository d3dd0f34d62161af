"""rlx: run PyTorch programs with the rlx C runtime.

In-process (librlx through its C API; ``rlx._runtime``)::

    m = rlx.compile(model, (x,))   # export, compile: a callable rlx.Model
    y = m(x)                       # torch in, torch out; numpy in, numpy out
    m.verify()                     # the parity report against eager torch

``rlx.load(dir)`` opens an export directory; errors are ``rlx.RlxError``
with rlx's message.

Exporting: ``export_program(model, example_inputs, out_dir, ...)`` writes an
rlx export directory (torch-ir.json, weights.safetensors,
reference.safetensors and, optionally, intermediates.safetensors);
``python3 -m rlx.export`` (or ``rlx-export``) is the same from the command
line.  See ``rlx.export`` for the options.  ``rlx.binary()`` is the path of
the rlx CLI (``rlx verify``, ``rlx bench``, ...).

Serving: ``rlx.serve.app(dir, replicas=2)`` is a Ray Serve application of an
export directory (needs ``ray[serve]``; docs/serving.md).
"""

__version__ = "0.1.0"
__all__ = ["compile", "load", "Model", "RlxError", "Status", "TensorInfo", "SymbolInfo",
           "ParityReport", "export_program", "ExportError", "binary", "library", "__version__"]

_RUNTIME = ("compile", "load", "Model", "RlxError", "Status", "TensorInfo", "SymbolInfo",
            "ParityReport")


def binary():
    """The rlx CLI this package uses (its own, $RLX_BIN, a checkout's
    build/rlx or PATH), or None."""
    from . import _paths
    return _paths.find_binary()


def library():
    """The path of librlx.so, loaded into this process on first use."""
    from . import _capi
    return _capi.library_path()


def __getattr__(name):
    # Imported lazily so that `python3 -m rlx.export` does not import the
    # module twice (and `import rlx` stays cheap until torch or librlx is needed).
    if name in ("export_program", "ExportError"):
        from . import export
        return getattr(export, name)
    if name == "serve":  # rlx.serve needs ray[serve]; imported only when asked for
        import importlib
        return importlib.import_module(".serve", __name__)
    if name in _RUNTIME:
        from . import _runtime
        return getattr(_runtime, name)
    raise AttributeError(f"module 'rlx' has no attribute {name!r}")
