"""ctypes declarations of include/rlx.h, and librlx loaded once.

Only what the Python runtime (``_runtime.py``) calls is declared.  The
structs mirror rlx.h field for field; ``check_layout`` compares their sizes
with what the C compiler's layout rules give on this ABI, so a field added to
rlx.h without a change here fails loudly at load rather than corrupting
memory.  Every call goes through ``ctypes.CDLL``, which releases the GIL for
the duration of the foreign call: other Python threads run while rlx does.
"""

from __future__ import annotations

import ctypes
import threading
from ctypes import POINTER, Structure, c_char_p, c_int, c_int32, c_int64, c_size_t, c_void_p

from . import _paths

RLX_MAX_RANK = 8
RLX_MAX_THREADS = 256

# rlx_status, in rlx.h's order
STATUS_NAMES = ("OK", "INVALID_ARGUMENT", "IO", "FORMAT", "UNSUPPORTED", "SHAPE", "NOT_FOUND",
                "OUT_OF_MEMORY", "RUNTIME", "INTERNAL")
RLX_OK = 0

# rlx_dtype, in the order of RLX_DTYPE_LIST (checked against rlx_dtype_name at load)
DTYPES = ("f32", "f16", "bf16", "f64", "i64", "i32", "i16", "i8", "u8", "bool", "u16", "u32", "u64")
DTYPE_SIZE = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i64": 8, "i32": 4, "i16": 2, "i8": 1,
              "u8": 1, "bool": 1, "u16": 2, "u32": 4, "u64": 8}


class TensorView(Structure):  # rlx_tensor_view
    _fields_ = [("data", c_void_p), ("dtype", c_int), ("rank", c_int32),
                ("dims", c_int64 * RLX_MAX_RANK)]


class IoInfo(Structure):  # rlx_io_info
    _fields_ = [("name", c_char_p), ("dtype", c_int), ("rank", c_int32),
                ("dims", c_int64 * RLX_MAX_RANK), ("dim_names", c_char_p * RLX_MAX_RANK),
                ("dim_min", c_int64 * RLX_MAX_RANK), ("dim_max", c_int64 * RLX_MAX_RANK)]


class SymbolInfo(Structure):  # rlx_symbol_info
    _fields_ = [("name", c_char_p), ("min", c_int64), ("max", c_int64), ("hint", c_int64)]


class LoadOptions(Structure):  # rlx_load_options
    _fields_ = [("size", c_size_t), ("verbose", c_int), ("copy_weights", c_int)]


class CompileOptions(Structure):  # rlx_compile_options
    _fields_ = [("size", c_size_t), ("device", c_int), ("threads", c_int),
                ("reference_kernels", c_int), ("no_passes", c_int), ("max_memory", c_size_t)]


_P = c_void_p  # opaque handles: rlx_model *, rlx_compiled *, rlx_session *

# name: (restype, argtypes)
_PROTOTYPES = {
    "rlx_status_string": (c_char_p, [c_int]),
    "rlx_last_error": (c_char_p, []),
    "rlx_dtype_name": (c_char_p, [c_int]),
    "rlx_model_load": (c_int, [c_char_p, POINTER(LoadOptions), POINTER(_P)]),
    "rlx_model_destroy": (None, [_P]),
    "rlx_model_input_count": (c_int, [_P]),
    "rlx_model_output_count": (c_int, [_P]),
    "rlx_model_input_info": (c_int, [_P, c_int, POINTER(IoInfo)]),
    "rlx_model_output_info": (c_int, [_P, c_int, POINTER(IoInfo)]),
    "rlx_model_symbol_count": (c_int, [_P]),
    "rlx_model_symbol_info": (c_int, [_P, c_int, POINTER(SymbolInfo)]),
    "rlx_compile_options_init": (None, [POINTER(CompileOptions)]),
    "rlx_model_compile": (c_int, [_P, POINTER(CompileOptions), POINTER(_P)]),
    "rlx_compiled_destroy": (None, [_P]),
    "rlx_session_create": (c_int, [_P, POINTER(_P)]),
    "rlx_session_destroy": (None, [_P]),
    "rlx_session_bind_input": (c_int, [_P, c_char_p, POINTER(TensorView)]),
    "rlx_session_reshape": (c_int, [_P]),
    "rlx_session_run": (c_int, [_P]),
    "rlx_session_output": (c_int, [_P, c_int, POINTER(TensorView)]),
    "rlx_model_state_count": (c_int, [_P]),
    "rlx_model_state_info": (c_int, [_P, c_int, POINTER(IoInfo)]),
    "rlx_session_reset_state": (c_int, [_P]),
}

_lib = None
_lib_path = None
_lock = threading.Lock()


class LibraryNotFound(OSError):
    pass


def _check_layout(lib) -> None:
    # rlx_compile_options_init writes the struct's size into its size field:
    # the C side's sizeof, to compare with ctypes' layout of the same struct.
    # A buffer larger than the struct, in case librlx's is the larger one.
    buf = (ctypes.c_char * 1024)()
    lib.rlx_compile_options_init(ctypes.cast(buf, POINTER(CompileOptions)))
    size = c_size_t.from_buffer(buf).value
    if size != ctypes.sizeof(CompileOptions):
        raise OSError(f"{_lib_path}: rlx_compile_options is {size} bytes in librlx and "
                      f"{ctypes.sizeof(CompileOptions)} in rlx/_capi.py: rebuild the package")
    for i, name in enumerate(DTYPES):
        got = lib.rlx_dtype_name(i).decode()
        if got != name:
            raise OSError(f"{_lib_path}: dtype {i} is '{got}' in librlx and '{name}' in "
                          "rlx/_capi.py: rebuild the package")


def lib():
    """librlx, loaded on first use (``_paths.find_library``)."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        path = _paths.find_library()
        if path is None:
            raise LibraryNotFound(
                "librlx.so not found: install the package (pip install ./python builds it into "
                f"the wheel), build the checkout (cmake -B build && cmake --build build: "
                f"{_paths.CHECKOUT_BUILD}/librlx.so) or set RLX_LIB")
        handle = ctypes.CDLL(path)
        for name, (res, args) in _PROTOTYPES.items():
            fn = getattr(handle, name)
            fn.restype, fn.argtypes = res, args
        _lib_path = path
        _check_layout(handle)
        _lib = handle
        return _lib


def library_path() -> str:
    """The path of the librlx this process loaded."""
    lib()
    return _lib_path

