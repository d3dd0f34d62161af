"""rlx: export PyTorch programs for the rlx C runtime.

``export_program(model, example_inputs, out_dir, ...)`` writes an rlx export
directory (torch-ir.json, weights.safetensors, reference.safetensors and,
optionally, intermediates.safetensors); ``python3 -m rlx.export`` is the same
from the command line.  See ``rlx.export`` for the options.
"""

__version__ = "0.1.0"
__all__ = ["export_program", "ExportError", "__version__"]


def __getattr__(name):
    # Imported lazily so that `python3 -m rlx.export` does not import the
    # module twice (and `import rlx` stays cheap until torch is needed).
    if name in ("export_program", "ExportError"):
        from . import export
        return getattr(export, name)
    raise AttributeError(f"module 'rlx' has no attribute {name!r}")
