"""Running rlx models in-process: ``rlx.compile``, ``rlx.load``, ``rlx.Model``.

A ``Model`` owns one ``rlx_model`` and one ``rlx_compiled`` (immutable,
shared by every thread) and one ``rlx_session`` per calling thread, made on
the thread's first call and destroyed when the thread ends or the model is
closed: an rlx session belongs to one thread at a time, so two threads
calling one model run concurrently, each on its own session (and, for a
model with session state, each with its own state).

A call binds every input to the caller's memory — a contiguous CPU tensor or
array is bound where it lies, anything else is first copied to a contiguous
buffer — runs with the GIL released (ctypes releases it around every foreign
call), and copies the outputs out of the session's arena, whose views are
valid only until the session's next run.  Outputs come back as torch tensors
if any input was one, else as numpy arrays.

Errors are ``RlxError`` with rlx's own message (``rlx_last_error()``), which
names the culprit: the input, the axis, the symbol and its bounds.
"""

from __future__ import annotations

import ctypes
import enum
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import _capi, _paths
from ._capi import RLX_MAX_RANK

Status = enum.IntEnum("Status", {n: i for i, n in enumerate(_capi.STATUS_NAMES)})
Status.__doc__ = "rlx_status: rlx.Status.SHAPE is RLX_ERR_SHAPE, and so on."


class RlxError(RuntimeError):
    """A failed rlx call: ``status`` is the ``rlx.Status``, the message rlx's
    ``rlx_last_error()`` (or, for a mistake caught in Python before rlx is
    called, one in the same style naming the input)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = Status(status)
        self.message = message


def _check(status: int, what: str = "") -> None:
    """Raises for a failed status, with the message of the call that just
    failed on this thread (read before any other rlx call can replace it)."""
    if status != _capi.RLX_OK:
        msg = _capi.lib().rlx_last_error().decode(errors="replace")
        if not msg:
            msg = _capi.lib().rlx_status_string(status).decode()
        raise RlxError(status, f"{what}{msg}")


@dataclass(frozen=True)
class TensorInfo:
    """A model input or output. ``shape`` is the example shape it was exported
    with; on a dynamic axis ``dim_names[d]`` is its symbol or expression
    ("batch", "2*seq") and the axis takes sizes in
    ``[min_shape[d], max_shape[d]]``; a static axis has ``dim_names[d]`` None."""
    name: str
    dtype: str
    shape: tuple[int, ...]
    dim_names: tuple[str | None, ...]
    min_shape: tuple[int, ...]
    max_shape: tuple[int, ...]

    @property
    def dynamic(self) -> bool:
        return any(n is not None for n in self.dim_names)

    def __str__(self) -> str:
        dims = ", ".join(n if n is not None else str(d) for n, d in zip(self.dim_names, self.shape))
        return f"{self.name} {self.dtype}[{dims}]"


@dataclass(frozen=True)
class SymbolInfo:
    """A shape symbol of a dynamic model: inclusive bounds and the example size."""
    name: str
    min: int
    max: int
    hint: int


class ParityReport(dict):
    """What ``Model.verify()`` returns: ``rlx verify --json``'s report (a dict:
    ``report["pass"]``, ``report["outputs"]``, ...), true when parity passed,
    with a one-line repr (the full report is what verify() printed)."""

    @property
    def passed(self) -> bool:
        return bool(self.get("pass"))

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        outs = self.get("outputs", [])
        bad = sum(not o.get("pass") for o in outs)
        return (f"<rlx parity {'PASS' if self.passed else 'FAIL'}: {len(outs)} output(s)"
                f"{f', {bad} failing' if bad else ''}>")


def _info(c: _capi.IoInfo) -> TensorInfo:
    r = c.rank
    names = tuple(None if c.dim_names[d] is None else c.dim_names[d].decode() for d in range(r))
    return TensorInfo(name=c.name.decode() if c.name else "", dtype=_capi.DTYPES[c.dtype],
                      shape=tuple(c.dims[:r]), dim_names=names, min_shape=tuple(c.dim_min[:r]),
                      max_shape=tuple(c.dim_max[:r]))


# --------------------------------------------------------------------------
# Inputs: the caller's memory as an rlx_tensor_view


_NUMPY_DTYPES = {np.dtype(k): v for k, v in (
    ("float32", "f32"), ("float16", "f16"), ("float64", "f64"), ("int64", "i64"),
    ("int32", "i32"), ("int16", "i16"), ("int8", "i8"), ("uint8", "u8"), ("bool", "bool"),
    ("uint16", "u16"), ("uint32", "u32"), ("uint64", "u64"))}


_NUMPY_BY_RLX = {v: k for k, v in _NUMPY_DTYPES.items()}
_TORCH_DTYPES: dict = {}  # torch.dtype -> rlx dtype, filled on first use
_TORCH_BY_RLX: dict = {}


def _torch_dtypes(torch) -> dict:
    if not _TORCH_DTYPES:
        _TORCH_BY_RLX.update({"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
                              "f64": torch.float64, "i64": torch.int64, "i32": torch.int32,
                              "i16": torch.int16, "i8": torch.int8, "u8": torch.uint8,
                              "bool": torch.bool, "u16": torch.uint16, "u32": torch.uint32,
                              "u64": torch.uint64})
        _TORCH_DTYPES.update({v: k for k, v in _TORCH_BY_RLX.items()})
    return _TORCH_DTYPES


def _is_tensor(x: Any) -> bool:
    torch = sys.modules.get("torch")  # a tensor exists only once torch is imported
    return torch is not None and isinstance(x, torch.Tensor)


def _bad(name: str, status: int, msg: str) -> RlxError:
    return RlxError(status, f"input '{name}': {msg}")


def _as_view(name: str, x: Any) -> tuple[_capi.TensorView, Any, bool]:
    """(view, the object that owns the memory, whether it is a copy).

    The memory is the caller's own when it is already a dense C-order block
    of a dtype rlx knows; else a contiguous copy, which the caller must keep
    alive until the run is over.  The dtype and shape are passed as they are:
    rlx refuses a wrong one with a message naming the input."""
    if _is_tensor(x):
        import torch
        if x.device.type != "cpu":
            raise _bad(name, Status.INVALID_ARGUMENT,
                       f"the tensor is on {x.device}; rlx runs on the CPU (pass x.cpu())")
        if x.layout != torch.strided:
            raise _bad(name, Status.INVALID_ARGUMENT,
                       f"a {x.layout} tensor; rlx takes dense (strided) tensors")
        dtype = _torch_dtypes(torch).get(x.dtype)
        if dtype is None:
            raise _bad(name, Status.UNSUPPORTED, f"dtype {x.dtype} is not one rlx handles")
        owner, copied = x, False
        if not x.is_contiguous():
            owner, copied = x.contiguous(), True
        ptr, shape = owner.data_ptr(), tuple(owner.shape)
    elif isinstance(x, np.ndarray):
        dtype = _NUMPY_DTYPES.get(x.dtype.newbyteorder("="))
        if dtype is None:
            raise _bad(name, Status.UNSUPPORTED, f"dtype {x.dtype} is not one rlx handles")
        owner, copied = x, False
        if not (x.flags.c_contiguous and x.flags.aligned and x.dtype.isnative):
            owner, copied = np.ascontiguousarray(x, dtype=x.dtype.newbyteorder("=")), True
        ptr, shape = owner.__array_interface__["data"][0], owner.shape
    else:
        raise _bad(name, Status.INVALID_ARGUMENT,
                   f"expected a torch.Tensor or numpy.ndarray, got {type(x).__name__}")
    v = _capi.TensorView()
    v.data = ptr or None
    v.dtype = _capi.DTYPES.index(dtype)
    v.rank = len(shape)  # rlx refuses a rank above RLX_MAX_RANK, naming the input
    for d, n in enumerate(shape[:RLX_MAX_RANK]):
        v.dims[d] = n
    return v, owner, copied


# --------------------------------------------------------------------------
# Outputs: copied out of the session's arena


def _output(view: _capi.TensorView, as_torch: bool):
    dtype = _capi.DTYPES[view.dtype]
    shape = tuple(view.dims[:view.rank])
    n = 1
    for d in shape:
        n *= d
    nbytes = n * _capi.DTYPE_SIZE[dtype]
    if as_torch:
        import torch
        _torch_dtypes(torch)
        out = torch.empty(shape, dtype=_TORCH_BY_RLX[dtype])
        if nbytes:
            ctypes.memmove(out.data_ptr(), view.data, nbytes)
        return out
    if dtype == "bf16":  # numpy has no bfloat16: widen exactly to float32
        bits = np.empty(shape, np.uint16)
        if nbytes:
            ctypes.memmove(bits.ctypes.data, view.data, nbytes)
        return (bits.astype(np.uint32) << 16).view(np.float32)
    out = np.empty(shape, _NUMPY_BY_RLX[dtype])
    if nbytes:
        ctypes.memmove(out.ctypes.data, view.data, nbytes)
    return out


# --------------------------------------------------------------------------
# The model

_MISSING = object()


class _ThreadSession:
    """One thread's session of a Model, kept in the model's threading.local:
    when the thread ends its locals go and this with them, destroying the
    session (``Model._drop``; nothing if the model is gone or closed, which
    destroyed it already). Holds the model weakly, so that sessions do not
    keep a model alive."""

    __slots__ = ("model", "handle")

    def __init__(self, model: "Model", handle: int):
        self.model = weakref.ref(model)
        self.handle = handle

    def __del__(self):
        m = self.model()
        if m is not None:
            try:
                m._drop(self.handle)
            except Exception:  # noqa: BLE001 - never raise from a finalizer (interpreter exit)
                pass


def _int_option(name: str, v, lo: int, hi: int) -> int:
    # ctypes would wrap an out-of-range value silently; rlx checks the range
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise RlxError(Status.INVALID_ARGUMENT,
                       f"{name}={v!r}: expected an integer in [{lo}, {hi}]")
    return v


class Model:
    """A compiled rlx model, callable in-process: ``m(x, ...)`` returns the
    model's output (one) or a tuple of its outputs (several), in program
    order.

    Inputs are positional or by name, one per model input (``m.inputs``),
    each a CPU ``torch.Tensor`` or a ``numpy.ndarray`` of the input's dtype
    and rank; a dynamic model takes any shape within its bounds.  Contiguous inputs are
    read in place, without a copy.  Outputs are torch tensors if any input
    was a tensor, else numpy arrays (a bf16 output, which numpy lacks, comes
    back widened to float32), and are the caller's own copies.

    One model may be called from several threads at once; the GIL is released
    while rlx runs.  ``close()`` (or ``with``) frees it at once; otherwise it
    is freed when collected."""

    def __init__(self, path, *, threads: int = 0, copy_weights: bool = False,
                 reference_kernels: bool = False, no_passes: bool = False, max_memory: int = 0,
                 _owned_dir: str | None = None):
        self._model = self._compiled = None
        self._owned_dir = _owned_dir
        self._lock = threading.RLock()  # reentrant: a finalizer may run while it is held
        self._live: set[int] = set()  # every session not yet destroyed
        self._busy = 0  # calls in flight
        self._closed = False
        self._finalized = False
        self._tls = threading.local()
        self.path = str(path)
        self.threads = threads
        self.reference_kernels = reference_kernels
        self.no_passes = no_passes
        self.export_summary: dict | None = None  # what rlx.export reported (rlx.compile only)
        p = Path(path)
        if p.is_file():
            raise RlxError(Status.INVALID_ARGUMENT,
                           f"{path} is a file: rlx.load opens an export directory (torch-ir.json, "
                           "weights.safetensors, ...); rlx has no single-file model.rlx format yet")
        _int_option("threads", threads, 0, _capi.RLX_MAX_THREADS)
        _int_option("max_memory", max_memory, 0, 2**63 - 1)
        try:
            self._open(p, threads, copy_weights, reference_kernels, no_passes, max_memory)
        except BaseException:
            self.close()  # what was made before the failure, now rather than when collected
            raise

    def _open(self, p: Path, threads, copy_weights, reference_kernels, no_passes, max_memory):
        lib = _capi.lib()
        lo = _capi.LoadOptions(size=ctypes.sizeof(_capi.LoadOptions),
                               copy_weights=int(bool(copy_weights)))
        handle = ctypes.c_void_p()
        _check(lib.rlx_model_load(os.fsencode(p), ctypes.byref(lo), ctypes.byref(handle)))
        self._model = handle.value
        co = _capi.CompileOptions()
        lib.rlx_compile_options_init(ctypes.byref(co))
        co.threads, co.max_memory = threads, max_memory
        co.reference_kernels, co.no_passes = int(bool(reference_kernels)), int(bool(no_passes))
        handle = ctypes.c_void_p()
        _check(lib.rlx_model_compile(self._model, ctypes.byref(co), ctypes.byref(handle)))
        self._compiled = handle.value
        self.inputs = tuple(self._io(lib.rlx_model_input_count, lib.rlx_model_input_info))
        self.outputs = tuple(self._io(lib.rlx_model_output_count, lib.rlx_model_output_info))
        syms = []
        for i in range(lib.rlx_model_symbol_count(self._model)):
            s = _capi.SymbolInfo()
            _check(lib.rlx_model_symbol_info(self._model, i, ctypes.byref(s)))
            syms.append(SymbolInfo(s.name.decode(), s.min, s.max, s.hint))
        self.symbols = tuple(syms)
        self._names = [i.name.encode() for i in self.inputs]

    def _io(self, count, info):
        for i in range(count(self._model)):
            c = _capi.IoInfo()
            _check(info(self._model, i, ctypes.byref(c)))
            yield _info(c)

    # ---- sessions

    def _acquire(self) -> int:
        """The calling thread's session, made on its first call."""
        with self._lock:
            if self._closed:
                raise RlxError(Status.INVALID_ARGUMENT, f"{self.path}: the model is closed")
            self._busy += 1
        mine = getattr(self._tls, "session", None)
        if mine is not None:
            return mine.handle
        handle = ctypes.c_void_p()
        try:
            _check(_capi.lib().rlx_session_create(self._compiled, ctypes.byref(handle)))
        except BaseException:
            self._release()
            raise
        with self._lock:
            self._live.add(handle.value)
        self._tls.session = _ThreadSession(self, handle.value)
        return handle.value

    def _release(self) -> None:
        with self._lock:
            self._busy -= 1
            last = self._closed and self._busy == 0
        if last:
            self._finalize()

    def _drop(self, handle: int) -> None:
        """A thread that had a session ended: destroy it, unless close() has."""
        with self._lock:
            if handle not in self._live:
                return
            self._live.discard(handle)
        _capi.lib().rlx_session_destroy(handle)

    def session_count(self) -> int:
        """Sessions this model holds now: one per thread that called it and
        has not ended."""
        with self._lock:
            return len(self._live)

    # ---- running

    def _arguments(self, args: tuple, kwargs: dict) -> list:
        """One argument per model input, from positions and then names."""
        n = len(self.inputs)
        names = [i.name for i in self.inputs]
        listed = ", ".join(names)
        if len(args) > n:
            raise RlxError(Status.INVALID_ARGUMENT,
                           f"the model takes {n} input(s) ({listed}), {len(args)} given")
        slots = list(args) + [_MISSING] * (n - len(args))
        for k, v in kwargs.items():
            if k not in names:
                raise RlxError(Status.NOT_FOUND,
                               f"the model has no input named '{k}' (inputs: {listed})")
            if slots[names.index(k)] is not _MISSING:
                raise RlxError(Status.INVALID_ARGUMENT, f"input '{k}' is given twice")
            slots[names.index(k)] = v
        missing = [names[i] for i, v in enumerate(slots) if v is _MISSING]
        if missing:
            raise RlxError(Status.INVALID_ARGUMENT,
                           f"the model takes {n} input(s) ({listed}), "
                           f"{n - len(missing)} given; {', '.join(repr(m) for m in missing)} "
                           f"{'is' if len(missing) == 1 else 'are'} missing")
        return slots

    def __call__(self, *args, **kwargs):
        """``m(x, y)`` or ``m(x, y=y)``: the model's inputs by position or by
        name (``m.inputs``); returns its output, or a tuple of its outputs."""
        args = self._arguments(args, kwargs)
        as_torch = any(_is_tensor(a) for a in args)
        views, owners, bound = [], [], []
        for info, a in zip(self.inputs, args):
            v, owner, copied = _as_view(info.name, a)
            views.append(v)
            owners.append(owner)  # alive until the run is over
            bound.append((info.name, v.data or 0, copied))
        self._tls.last_bound = bound
        lib = _capi.lib()
        s = self._acquire()
        try:
            for name, v in zip(self._names, views):
                _check(lib.rlx_session_bind_input(s, name, ctypes.byref(v)))
            _check(lib.rlx_session_run(s))
            outs = []
            for i in range(len(self.outputs)):
                v = _capi.TensorView()
                _check(lib.rlx_session_output(s, i, ctypes.byref(v)))
                outs.append(_output(v, as_torch))
        finally:
            self._release()
        del owners
        return outs[0] if len(outs) == 1 else tuple(outs)

    @property
    def states(self) -> list[TensorInfo]:
        """The program's session state (mutated buffers such as a KV cache,
        docs/design.md "State"): each calling thread's session has its own,
        kept from call to call."""
        lib = _capi.lib()
        return list(self._io(lib.rlx_model_state_count, lib.rlx_model_state_info))

    def reset_state(self) -> None:
        """Puts the calling thread's state back at its initial value."""
        s = self._acquire()
        try:
            _check(_capi.lib().rlx_session_reset_state(s))
        finally:
            self._release()

    def last_binding(self) -> list[tuple[str, int, bool]]:
        """For the last call on this thread: (input name, address bound, whether
        it was a copy) per input — a contiguous input is bound at its own
        address (``t.data_ptr()``, ``a.ctypes.data``)."""
        return list(getattr(self._tls, "last_bound", []))

    # ---- checking

    def verify(self, *cli_args: str, quiet: bool = False) -> ParityReport:
        """Runs ``rlx verify`` on the export directory (with this model's
        threads and kernel options), prints its parity report unless ``quiet``,
        and returns the report (a ``ParityReport``: the dict of `rlx verify
        --json`, ``report["pass"]``, per-output ``report["outputs"]``; true
        when parity passed).  ``cli_args`` are more
        `rlx verify` options (``"--localize"``, ``"--atol", "1e-3"``).
        Needs the reference data the exporter writes (reference.safetensors).
        Raises RlxError when rlx cannot check (exit 2: a missing reference,
        a bad file)."""
        binary = _paths.find_binary(lambda msg: RlxError(Status.NOT_FOUND, msg))
        if binary is None:
            raise RlxError(Status.NOT_FOUND, "no rlx binary found (the package's own, "
                           "$RLX_BIN, build/rlx, PATH)")
        cmd = [binary, "verify", self.path, "--threads", str(self.threads)]
        if self.reference_kernels:
            cmd.append("--reference-kernels")
        if self.no_passes:
            cmd.append("--no-passes")
        with tempfile.TemporaryDirectory(prefix="rlx-verify-") as d:
            report_path = Path(d) / "report.json"
            p = subprocess.run([*cmd, "--json", str(report_path), *map(str, cli_args)],
                               capture_output=True, text=True)
            report = (ParityReport(json.loads(report_path.read_text()))
                      if report_path.is_file() else None)
        if not quiet:
            sys.stdout.write(p.stdout)
            if p.returncode == 1 and p.stderr:
                sys.stdout.write(p.stderr)
        if p.returncode not in (0, 1) or report is None:
            msg = (p.stderr.strip() or p.stdout.strip() or f"rlx verify exited {p.returncode}")
            raise RlxError(Status.INVALID_ARGUMENT if p.returncode == 2 else
                           Status.INTERNAL, msg)
        return report

    # ---- lifetime

    def close(self) -> None:
        """Frees the sessions, the compiled model and the model (and the
        export directory rlx.compile made). Calls still running finish first;
        later calls raise RlxError. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            last = self._busy == 0
        if last:
            self._finalize()

    def _finalize(self) -> None:
        with self._lock:
            if self._finalized:
                return
            self._finalized = True
            live, self._live = self._live, set()
        lib = _capi.lib()
        for handle in live:
            lib.rlx_session_destroy(handle)
        if self._compiled:
            lib.rlx_compiled_destroy(self._compiled)
            self._compiled = None
        if self._model:
            lib.rlx_model_destroy(self._model)
            self._model = None
        if self._owned_dir:
            shutil.rmtree(self._owned_dir, ignore_errors=True)
            self._owned_dir = None

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        if getattr(self, "_lock", None) is None:  # __init__ failed before there was anything
            return
        try:
            self.close()  # also frees a half-built model whose load or compile raised
        except Exception:  # noqa: BLE001 - never raise from a finalizer (interpreter exit)
            pass

    def __repr__(self) -> str:
        state = " closed" if self._closed else ""
        ins = ", ".join(map(str, getattr(self, "inputs", ())))
        outs = ", ".join(map(str, getattr(self, "outputs", ())))
        return f"<rlx.Model {self.path!r}{state}: ({ins}) -> ({outs})>"


# --------------------------------------------------------------------------
# Entry points


def load(path, *, threads: int = 0, copy_weights: bool = False, reference_kernels: bool = False,
         no_passes: bool = False, max_memory: int = 0) -> Model:
    """Opens an rlx export directory (what ``python3 -m rlx.export`` or
    ``rlx.export_program`` writes: torch-ir.json, weights.safetensors and,
    for ``verify()``, reference.safetensors) and compiles it.

    rlx has no single-file model format yet: ``path`` is the directory (a
    file, such as a future ``model.rlx``, is refused with a message saying
    so).  ``threads``: 0 is one per core (rlx_compile_options.threads).
    Weights are mapped from the directory's files, which must not change
    while the model is alive; ``copy_weights=True`` reads them into memory.
    ``max_memory``: the most bytes a session's arena may take (0: no limit).
    Raises RlxError with rlx's message."""
    return Model(path, threads=threads, copy_weights=copy_weights,
                 reference_kernels=reference_kernels, no_passes=no_passes, max_memory=max_memory)


def compile(model, example_inputs, *, dynamic=None, threads: int = 0, out_dir=None,
            copy_weights: bool = False, reference_kernels: bool = False, max_memory: int = 0,
            **export_options) -> Model:
    """Exports ``model`` (a torch.nn.Module) on ``example_inputs`` with
    ``rlx.export_program``, compiles it and returns a callable ``rlx.Model``
    that runs it in-process::

        m = rlx.compile(model, (x,))
        y = m(x)          # torch in, torch out; numpy in, numpy out
        m.verify()        # parity against eager torch

    ``dynamic``: as export_program's (``["x:0:batch:1:32"]``, or torch's own
    ``dynamic_shapes``); the model then takes any size of those axes within
    the bounds.  ``threads``: 0 is one per core.  ``out_dir``: where the
    export directory goes (kept); by default a temporary directory, removed
    when the model is closed.  Other keywords go to export_program
    (``decomposition``, ``reference_shapes``, ``write_reference`` — verify()
    needs the reference — ...).  Raises rlx.ExportError when torch.export
    or the translation fails and RlxError when rlx cannot load or compile the
    program (an unsupported op: the message names it)."""
    from .export import export_program
    owned = None
    if out_dir is None:
        owned = out_dir = tempfile.mkdtemp(prefix="rlx-compile-")
    try:
        summary = export_program(model, example_inputs, out_dir, dynamic=dynamic, **export_options)
        m = Model(out_dir, threads=threads, copy_weights=copy_weights,
                  reference_kernels=reference_kernels, max_memory=max_memory, _owned_dir=owned)
    except BaseException:
        if owned:
            shutil.rmtree(owned, ignore_errors=True)
        raise
    m.export_summary = summary
    return m
