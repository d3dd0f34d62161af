"""What an rlx model server does, without Ray: ``rlx.serve`` wraps it in a
Ray Serve deployment, and the tests drive it in-process.

An ``Engine`` holds one loaded model (``rlx.load``) and one worker thread
that makes every rlx call, so a replica has one rlx session (rlx's own
thread pool does the parallel work) and the server's event loop never
blocks on a run.  It

- decodes a request body into one array per model input: JSON
  (``{"inputs": {"x": [[...]]}}`` by name, or ``{"inputs": [[...], ...]}``
  / a bare list by position, each converted to the input's dtype), an
  ``.npy`` body (one input) or an ``.npz`` body (several, keyed by input
  name or ``arr_0``, ``arr_1``, ... by position), and encodes outputs the
  same way (an ``.npy`` request to a model of several outputs gets ``.npz``);
- runs a batch of requests (``run``): requests whose inputs agree on
  everything but the batch axis are concatenated along axis 0, run at once
  (in chunks of at most the batch symbol's max) and the outputs split back;
  any request that cannot join a batch runs alone, and when a merged run
  fails each of its requests is run alone, so a bad request gets rlx's own
  message and never spoils the others;
- checks the model's parity at start (``Model.verify``) and runs a probe
  for health checks.

A model has a batch axis when one symbol is axis 0 of every input and of
every output and appears on no other axis, and it has no session state;
otherwise requests run one by one.  Batching assumes what the dynamic axis
promises: that rows do not depend on each other (true of inference-mode
networks; not of, say, a softmax over axis 0)."""

from __future__ import annotations

import io
import json
import logging
import math
import re
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._runtime import Model, RlxError, Status, load

log = logging.getLogger("rlx.serve")

JSON = "application/json"
NPY = "application/x-npy"
NPZ = "application/x-npz"
ENCODINGS = {JSON: "json", NPY: "npy", NPZ: "npz", "application/octet-stream": "npy"}

# HTTP status for an rlx error: the caller's mistake, too big, or the server's
_HTTP = {Status.INVALID_ARGUMENT: 400, Status.SHAPE: 400, Status.NOT_FOUND: 400,
         Status.UNSUPPORTED: 400, Status.FORMAT: 400, Status.OUT_OF_MEMORY: 503}


class RequestError(Exception):
    """A request the server refuses before rlx sees it: an HTTP status and a
    message naming what is wrong."""

    def __init__(self, message: str, http_status: int = 400):
        super().__init__(message)
        self.http_status = http_status


@dataclass(frozen=True)
class BatchAxis:
    symbol: str
    min: int
    max: int


@dataclass
class Result:
    """One request's outcome: its outputs (numpy, in program order) or the
    error, and how many requests shared the rlx call(s) that served it."""
    outputs: list | None = None
    error: Exception | None = None
    batch: int = 1


@dataclass
class Stats:
    calls: int = 0  # rlx runs, probes excluded
    requests: int = 0
    rows: int = 0
    max_requests_per_call: int = 0
    errors: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def as_dict(self) -> dict:
        with self.lock:
            return {k: getattr(self, k) for k in
                    ("calls", "requests", "rows", "max_requests_per_call", "errors")}


def batch_axis(m: Model) -> BatchAxis | None:
    """The model's batch axis, or None when requests must run one by one."""
    if not m.inputs or not m.outputs or m.states:
        return None
    sym = m.inputs[0].dim_names[0] if m.inputs[0].shape else None
    known = {s.name: s for s in m.symbols}
    if sym not in known:
        return None
    other = re.compile(rf"\b{re.escape(sym)}\b")
    for t in (*m.inputs, *m.outputs):
        if not t.shape or t.dim_names[0] != sym:
            return None
        if any(n is not None and other.search(n) for n in t.dim_names[1:]):
            return None
    s = known[sym]
    return BatchAxis(sym, s.min, s.max)


# --------------------------------------------------------------------------
# Decoding and encoding


def _from_json(info, value) -> Any:
    """A JSON value as an array of the input's dtype, refusing what would
    change silently (fractions or out-of-range values for an integer input)."""
    name = info.name
    if info.dtype == "bf16":  # numpy has no bfloat16: the model takes a torch tensor
        import torch
        try:
            return torch.tensor(value, dtype=torch.bfloat16)
        except (TypeError, ValueError, RuntimeError) as e:
            raise RequestError(f"input '{name}': not a nested list of numbers ({e})") from None
    try:
        a = np.asarray(value)
    except ValueError as e:  # ragged
        raise RequestError(f"input '{name}': not a rectangular nested list ({e})") from None
    if a.dtype.kind == "O" and all(isinstance(v, int) for v in a.flat):  # beyond 64 bits
        raise RequestError(f"input '{name}' is {info.dtype}: a value is out of its range")
    if a.dtype.kind not in "biuf":
        raise RequestError(f"input '{name}': expected numbers (nested lists), "
                           f"got {type(value).__name__} of {a.dtype}") from None
    want = _np_dtype(info.dtype)
    if want.kind in "iub" and a.dtype.kind == "f" and a.size:
        raise RequestError(f"input '{name}' is {info.dtype}: got non-integer numbers")
    if want.kind == "b" and a.size and a.dtype.kind != "b" and not np.isin(a, (0, 1)).all():
        raise RequestError(f"input '{name}' is bool: expected true/false or 0/1")
    if want.kind in "iu" and a.size:
        lim = np.iinfo(want)
        if a.min() < lim.min or a.max() > lim.max:
            raise RequestError(f"input '{name}' is {info.dtype}: a value is out of its range "
                               f"[{lim.min}, {lim.max}]")
    return a.astype(want)


def _npz_members(body: bytes, limit: int) -> dict:
    try:
        with zipfile.ZipFile(io.BytesIO(body)) as z:
            for i in z.infolist():  # declared sizes bound what zipfile will inflate
                if i.file_size > limit:
                    raise RequestError(f".npz member {i.filename} is {i.file_size} bytes "
                                       f"unpacked, above the server's limit of {limit}", 413)
        with np.load(io.BytesIO(body), allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except RequestError:
        raise
    except Exception as e:  # noqa: BLE001 - any malformed archive is the caller's
        raise RequestError(f"not a valid .npz body: {e}") from None


def _npy(body: bytes) -> np.ndarray:
    try:
        a = np.load(io.BytesIO(body), allow_pickle=False)
    except Exception as e:  # noqa: BLE001
        raise RequestError(f"not a valid .npy body: {e}") from None
    if not isinstance(a, np.ndarray):
        raise RequestError("an .npy body must hold one array (send .npz for several)")
    return a


def _json_args(m: Model, body: bytes) -> tuple[tuple, dict]:
    try:
        obj = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise RequestError(f"not valid JSON: {e}") from None
    if isinstance(obj, dict):
        if "inputs" not in obj:
            raise RequestError('expected {"inputs": {name: nested list}} or {"inputs": '
                               '[nested list, ...]}')
        obj = obj["inputs"]
    if isinstance(obj, dict):
        return (), obj
    if isinstance(obj, list):  # always by position: [x] for a one-input model
        return tuple(obj), {}
    raise RequestError('"inputs" must be an object (by name) or a list (by position)')


# --------------------------------------------------------------------------
# The engine


class Engine:
    """One model and the thread that runs it.  ``threads``: rlx's threads
    (0: one per core); ``batching=False`` runs requests one by one even when
    the model has a batch axis; ``verify``: check parity at start (the report
    is ``self.parity``), raising when it fails and ``require_parity``;
    ``max_body_bytes`` bounds a request (and each unpacked .npz member)."""

    def __init__(self, path, *, threads: int = 0, batching: bool = True, verify: bool = True,
                 require_parity: bool = False, max_body_bytes: int = 256 << 20,
                 name: str = "rlx"):
        self.path = str(path)
        self.name = name
        self.max_body_bytes = max_body_bytes
        self.model = load(path, threads=threads)
        self.threads = threads
        self.batch = batch_axis(self.model) if batching else None
        self.stats = Stats()
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rlx-run")
        self.parity: dict = {"pass": None, "skipped": "verify=False"}
        if verify:
            self.parity = self._verify()
            if require_parity and not self.parity.get("pass"):
                self.close()
                raise RuntimeError(f"{self.path}: parity failed, refusing to serve "
                                   f"({json.dumps(self.parity)[:400]})")
        log.info("%s: serving %s (%s threads; %s)", name, self.model, threads or "all",
                 f"batching along '{self.batch.symbol}' (1..{self.batch.max} rows per run)"
                 if self.batch else "one request per run")

    def _verify(self) -> dict:
        t0 = time.perf_counter()
        try:
            rep = dict(self.model.verify(quiet=True))
        except RlxError as e:
            log.warning("%s: parity not checked: %s", self.name, e)
            return {"pass": None, "error": str(e)}
        rep["verify_s"] = round(time.perf_counter() - t0, 3)
        worst = max((o.get("max_abs_err", 0.0) for o in rep.get("outputs", [])), default=0.0)
        (log.info if rep.get("pass") else log.error)(
            "%s: parity %s against eager torch: %d output(s), worst max|d| %.3g (%s)", self.name,
            "PASS" if rep.get("pass") else "FAIL", len(rep.get("outputs", [])), worst, self.path)
        return rep

    def info(self) -> dict:
        """What GET /info returns: the model's inputs, outputs and symbols."""
        def t(i):
            return {"name": i.name, "dtype": i.dtype, "shape": list(i.shape),
                    "dims": list(i.dim_names), "min": list(i.min_shape), "max": list(i.max_shape)}
        m = self.model
        return {"path": self.path, "inputs": [t(i) for i in m.inputs],
                "outputs": [t(o) for o in m.outputs],
                "symbols": [{"name": s.name, "min": s.min, "max": s.max} for s in m.symbols],
                "batch_axis": vars(self.batch) if self.batch else None,
                "threads": self.threads}

    # ---- requests

    def decode(self, body: bytes, content_type: str | None) -> tuple[list, str]:
        """(one array per model input, the encoding: "json", "npy" or "npz").
        Raises RequestError, or RlxError (a missing, extra or unknown input,
        in rlx.Model's words)."""
        if len(body) > self.max_body_bytes:
            raise RequestError(f"the body is {len(body)} bytes, above the server's limit of "
                               f"{self.max_body_bytes}", 413)
        ctype = (content_type or JSON).split(";")[0].strip().lower()
        enc = ENCODINGS.get(ctype)
        if enc is None:
            raise RequestError(f"content type {ctype!r}: send {JSON}, {NPY} or {NPZ}", 415)
        m = self.model
        if enc == "json":
            args, kwargs = _json_args(m, body)
            slots = m._arguments(args, kwargs)
            return [_from_json(i, v) for i, v in zip(m.inputs, slots)], enc
        if enc == "npy":
            return m._arguments((_npy(body),), {}), enc
        members = _npz_members(body, self.max_body_bytes)
        names = [i.name for i in m.inputs]
        positional = [f"arr_{k}" for k in range(len(members))]
        if sorted(members) == sorted(positional) and not set(members) & set(names):
            return m._arguments(tuple(members[k] for k in positional), {}), enc
        return m._arguments((), members), enc

    def encode(self, outputs: list, enc: str) -> tuple[bytes, str]:
        names = [o.name or f"output{k}" for k, o in enumerate(self.model.outputs)]
        if enc == "json":
            body = {"outputs": {n: np.asarray(o).tolist() for n, o in zip(names, outputs)}}
            return json.dumps(body).encode(), JSON
        buf = io.BytesIO()
        if enc == "npy" and len(outputs) == 1:
            np.save(buf, np.asarray(outputs[0]), allow_pickle=False)
            return buf.getvalue(), NPY
        np.savez(buf, **{n: np.asarray(o) for n, o in zip(names, outputs)})
        return buf.getvalue(), NPZ

    @staticmethod
    def error(e: Exception) -> tuple[int, bytes]:
        """(HTTP status, JSON body) for a refused or failed request."""
        if isinstance(e, RequestError):
            code, status = e.http_status, None
        elif isinstance(e, RlxError):
            code, status = _HTTP.get(e.status, 500), e.status.name
        else:
            code, status = 500, None
        body = {"error": str(e)}
        if status:
            body["status"] = status
        return code, json.dumps(body).encode()

    # ---- running (on self.executor's thread)

    def _call(self, args: list) -> list:
        out = self.model(*args)
        return list(out) if isinstance(out, tuple) else [out]

    def _count(self, calls: int, requests: int, rows: int, failed: bool = False) -> None:
        with self.stats.lock:
            s = self.stats
            s.calls += calls
            s.requests += requests
            s.rows += rows
            s.max_requests_per_call = max(s.max_requests_per_call, requests)
            s.errors += failed

    def _one(self, args: list) -> Result:
        rows = args[0].shape[0] if self.batch and getattr(args[0], "ndim", 0) else 1
        try:
            outs = self._call(args)
        except RlxError as e:
            self._count(1, 1, rows, failed=True)
            return Result(error=e)
        self._count(1, 1, rows)
        return Result(outputs=[_np(o) for o in outs])

    def _key(self, args: list):
        """What requests must share to run as one batch, or None (alone)."""
        if self.batch is None:
            return None
        n = None
        key = []
        for a in args:
            shape = tuple(a.shape)
            if not shape or (n is not None and shape[0] != n) or shape[0] == 0:
                return None
            n = shape[0]
            key.append((str(a.dtype), shape[1:]))
        return tuple(key)

    def _cat(self, parts: list):
        if isinstance(parts[0], np.ndarray):
            return np.concatenate(parts, axis=0)
        import torch
        return torch.cat(parts, dim=0)

    def _group(self, items: list, idx: list, results: list) -> None:
        rows = [items[i][0].shape[0] for i in idx]
        total = sum(rows)
        merged = [self._cat([items[i][k] for i in idx]) for k in range(len(items[idx[0]]))]
        nchunks = math.ceil(total / self.batch.max)
        bounds = [total * c // nchunks for c in range(nchunks + 1)]
        try:
            chunks = []
            for lo, hi in zip(bounds, bounds[1:]):
                chunks.append(self._call([a[lo:hi] for a in merged]))
            outs = [np.concatenate([_np(c[k]) for c in chunks], axis=0)
                    for k in range(len(chunks[0]))]
            if any(o.shape[0] != total for o in outs):
                raise RlxError(Status.INTERNAL, "an output's axis 0 is not the batch")
        except RlxError:
            for i in idx:  # each alone: a bad one gets its own message, the rest their outputs
                results[i] = self._one(items[i])
            return
        self._count(nchunks, len(idx), total)  # a chunked batch counts as one of len(idx)
        off = 0
        for i, n in zip(idx, rows):
            results[i] = Result(outputs=[o[off:off + n] for o in outs], batch=len(idx))
            off += n

    def run(self, items: list[list]) -> list[Result]:
        """Runs a batch of requests (each: one array per input, from decode);
        one Result per request, in order.  Call on the executor's thread."""
        results: list = [None] * len(items)
        groups: dict = {}
        for i, args in enumerate(items):
            key = self._key(args)
            if key is None:
                results[i] = self._one(args)
            else:
                groups.setdefault(key, []).append(i)
        for idx in groups.values():
            if len(idx) == 1 and items[idx[0]][0].shape[0] <= self.batch.max:
                results[idx[0]] = self._one(items[idx[0]])
            else:
                self._group(items, idx, results)
        return results

    def probe(self) -> None:
        """Runs the model once on zeros of the example shapes; raises when it
        cannot (a closed or broken model).  Call on the executor's thread."""
        args = []
        for i in self.model.inputs:
            if i.dtype == "bf16":
                import torch
                args.append(torch.zeros(i.shape, dtype=torch.bfloat16))
            else:
                args.append(np.zeros(i.shape, dtype=_np_dtype(i.dtype)))
        self._call(args)

    def close(self) -> None:
        self.executor.shutdown(wait=True)
        self.model.close()


def _np(x) -> np.ndarray:
    """An output as numpy (a torch one, from bf16 inputs, widened if bf16)."""
    if isinstance(x, np.ndarray):
        return x
    return (x.float() if str(x.dtype) == "torch.bfloat16" else x).numpy()


def _np_dtype(d: str) -> np.dtype:
    return np.dtype({"f32": "float32", "f16": "float16", "f64": "float64", "i64": "int64",
                     "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8",
                     "bool": "bool", "u16": "uint16", "u32": "uint32", "u64": "uint64"}[d])
