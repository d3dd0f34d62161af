"""rlx.serve: an rlx export directory as a Ray Serve deployment.

::

    from ray import serve
    import rlx.serve
    serve.run(rlx.serve.app("out/mlp", replicas=2))        # HTTP on :8000

or ``serve run rlx.serve:build_app path=out/mlp replicas=2`` from a shell.
Each replica loads the model (``rlx.load(path, threads=...)``) on its node,
checks its parity against the export's reference (``Model.verify``; logged,
and returned by GET /parity), and serves

==========  ================================================================
POST /      the model's inputs as JSON (``{"inputs": {"x": [[...]]}}``, or a
            list by position), an ``.npy`` body (``application/x-npy``: one
            input) or an ``.npz`` body (``application/x-npz``: inputs keyed
            by name, or ``arr_0``, ``arr_1``, ... by position); the outputs
            come back in the same encoding (``{"outputs": {name: [...]}}``;
            ``.npz`` keyed by output name when there are several).  A bad
            input is a 400 with rlx's message naming it (``{"error": ...,
            "status": "SHAPE"}``); headers ``X-Rlx-Replica`` and
            ``X-Rlx-Batch`` (how many requests shared the rlx run) say who
            served it and how.
GET /info   inputs, outputs, symbols, the batch axis, threads
GET /parity the parity report of the loaded model (``rlx verify --json``)
GET /stats  rlx runs, requests, rows and the largest batch, per replica
GET /health runs the model on zeros: 200, or 503 with the error
==========  ================================================================

Requests are batched with ``@serve.batch`` along the model's dynamic batch
axis (``rlx._serving``, "batch axis"): up to ``max_batch_size`` requests
waiting at most ``batch_wait_timeout_s`` are concatenated on axis 0, run
once (in chunks when the rows exceed the symbol's max) and split back.
Ray Serve's health check (``check_health``) runs the same probe as GET
/health and fails, so Serve replaces the replica, once the model no longer
runs.  Python callers can skip HTTP: ``handle.predict.remote(x)`` returns
the outputs as a list of numpy arrays, batched the same way.
"""

import asyncio
import json
import logging
import os
from typing import List, Optional

import numpy as np
import ray
from fastapi import FastAPI, Request
from fastapi.responses import Response
from ray import serve

from ._serving import Engine, RequestError, Result

__all__ = ["RlxServer", "app", "build_app", "default_threads", "RequestError"]

log = logging.getLogger("ray.serve")
_api = FastAPI(title="rlx", docs_url=None, redoc_url=None)


def default_threads(replicas: int) -> int:
    """rlx threads for a replica: its node's CPUs (as Ray counts them: ``ray
    start --num-cpus``, else the machine's) divided by the deployment's
    replicas, at least 1 — right when the replicas share one machine; on a
    cluster of several, pass ``threads`` (and ``num_cpus``) per replica."""
    cores = 0
    try:
        me = ray.get_runtime_context().get_node_id()
        cores = next(int(n["Resources"].get("CPU", 0)) for n in ray.nodes()
                     if n["NodeID"] == me)
    except (StopIteration, RuntimeError, KeyError):
        pass
    cores = cores or len(os.sched_getaffinity(0))
    return max(1, cores // max(1, replicas))


@serve.deployment(name="rlx", max_ongoing_requests=32, health_check_period_s=10,
                  health_check_timeout_s=30)
@serve.ingress(_api)
class RlxServer:
    """One replica: an ``Engine`` (the model, its worker thread, decoding and
    batching) behind the routes above.  Arguments as ``app``'s."""

    def __init__(self, path: str, *, replicas: int = 1, threads: Optional[int] = None,
                 max_batch_size: int = 16, batch_wait_timeout_s: float = 0.005,
                 batching: bool = True, verify: bool = True, require_parity: bool = False,
                 max_body_bytes: int = 256 << 20):
        ctx = serve.get_replica_context()
        self.replica = ctx.replica_id.unique_id
        self.node = ray.get_runtime_context().get_node_id()
        threads = threads or default_threads(ctx.world_size or replicas)
        self.engine = Engine(path, threads=threads, batching=batching, verify=verify,
                             require_parity=require_parity, max_body_bytes=max_body_bytes,
                             name=f"rlx replica {self.replica}")
        self._batched.set_max_batch_size(max_batch_size)
        self._batched.set_batch_wait_timeout_s(batch_wait_timeout_s)

    # ---- running

    async def _on_worker(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self.engine.executor, fn, *args)

    @serve.batch(max_batch_size=16, batch_wait_timeout_s=0.005)
    async def _batched(self, items: List[list]) -> List[Result]:
        return await self._on_worker(self.engine.run, items)

    async def _run(self, args: list) -> Result:
        if self.engine.batch is None:
            return (await self._on_worker(self.engine.run, [args]))[0]
        return await self._batched(args)

    def _headers(self, r: Optional[Result] = None) -> dict:
        h = {"X-Rlx-Replica": self.replica, "X-Rlx-Node": self.node}
        if r is not None:
            h["X-Rlx-Batch"] = str(r.batch)
        return h

    def _error(self, e: Exception, r: Optional[Result] = None) -> Response:
        code, body = self.engine.error(e)
        if code >= 500:
            log.error("rlx: request failed: %s", e)
        return Response(body, status_code=code, media_type="application/json",
                        headers=self._headers(r))

    @_api.post("/")
    async def infer(self, request: Request) -> Response:
        try:
            body = await request.body()
            args, enc = self.engine.decode(body, request.headers.get("content-type"))
        except Exception as e:  # noqa: BLE001 - RequestError, RlxError, or a bug: never the replica
            return self._error(e)
        try:
            r = await self._run(args)
            if r.error is not None:
                return self._error(r.error, r)
            payload, ctype = self.engine.encode(r.outputs, enc)
        except Exception as e:  # noqa: BLE001
            return self._error(e)
        return Response(payload, media_type=ctype, headers=self._headers(r))

    async def predict(self, *inputs, **named) -> List[np.ndarray]:
        """For a DeploymentHandle: the model's inputs (numpy arrays or CPU
        torch tensors, by position or name) -> its outputs, numpy, batched
        like HTTP requests.  Raises RlxError for a bad input."""
        r = await self._run(self.engine.model._arguments(inputs, named))
        if r.error is not None:
            raise r.error
        return r.outputs

    # ---- looking

    @_api.get("/info")
    async def info(self) -> Response:
        return self._json({**self.engine.info(), "replica": self.replica, "node": self.node})

    @_api.get("/parity")
    async def parity(self) -> Response:
        return self._json({**self.engine.parity, "replica": self.replica})

    @_api.get("/stats")
    async def stats(self) -> Response:
        return self._json({**self.engine.stats.as_dict(), "replica": self.replica,
                           "node": self.node})

    @_api.get("/health")
    async def health(self) -> Response:
        try:
            await self._on_worker(self.engine.probe)
        except Exception as e:  # noqa: BLE001
            return self._json({"healthy": False, "error": str(e), "replica": self.replica}, 503)
        return self._json({"healthy": True, "replica": self.replica})

    def _json(self, obj: dict, code: int = 200) -> Response:
        return Response(json.dumps(obj), status_code=code, media_type="application/json",
                        headers=self._headers())

    async def check_health(self) -> None:
        """Ray Serve's health check: raises (and Serve replaces the replica)
        once the model no longer runs."""
        await self._on_worker(self.engine.probe)


def app(path, *, replicas: int = 2, threads: Optional[int] = None, num_cpus: Optional[float] = None,
        max_batch_size: int = 16, batch_wait_timeout_s: float = 0.005,
        max_ongoing_requests: Optional[int] = None, batching: bool = True, verify: bool = True,
        require_parity: bool = False, max_body_bytes: int = 256 << 20, name: str = "rlx",
        **options):
    """A Ray Serve application serving the rlx export directory ``path``
    (which must exist at that path on every node that runs a replica, or be
    shipped there with a runtime_env) with ``replicas`` replicas.

    ``threads``: rlx threads per replica (default: ``num_cpus`` when given,
    else ``default_threads``: the node's CPUs ÷ replicas).  ``num_cpus``:
    CPUs each replica reserves in Ray (Serve's default is 1), which is what
    places replicas on nodes.  ``max_batch_size``, ``batch_wait_timeout_s``:
    ``@serve.batch``'s knobs, in requests and seconds; ``max_ongoing_requests``
    (default twice ``max_batch_size``) must be at least ``max_batch_size`` for
    batches to fill.  ``verify``: check parity at replica start (the report
    at GET /parity), and with ``require_parity`` refuse to start when it
    fails.  Other keywords are Serve deployment options
    (``health_check_period_s``, ``ray_actor_options``, ...).  Returns what
    ``serve.run`` takes."""
    opts = {"name": name, "num_replicas": replicas,
            "max_ongoing_requests": max_ongoing_requests or max(8, 2 * max_batch_size),
            **options}
    if num_cpus is not None:
        opts["ray_actor_options"] = {**opts.get("ray_actor_options", {}), "num_cpus": num_cpus}
        if threads is None and num_cpus >= 1:
            threads = int(num_cpus)
    return RlxServer.options(**opts).bind(
        os.fspath(path), replicas=replicas, threads=threads, max_batch_size=max_batch_size,
        batch_wait_timeout_s=batch_wait_timeout_s, batching=batching, verify=verify,
        require_parity=require_parity, max_body_bytes=max_body_bytes)


_ARG_TYPES = {"replicas": int, "threads": int, "num_cpus": float, "max_batch_size": int,
              "batch_wait_timeout_s": float, "max_ongoing_requests": int, "max_body_bytes": int,
              "batching": "bool", "verify": "bool", "require_parity": "bool", "name": str}


def build_app(args: dict):
    """For ``serve run rlx.serve:build_app path=DIR [replicas=2] [threads=N]
    ...`` (and a Serve config file's ``import_path``): ``app``'s arguments
    as strings."""
    args = dict(args)
    if "path" not in args:
        raise ValueError("rlx.serve:build_app needs path=EXPORT_DIR")
    path = args.pop("path")
    kw = {}
    for k, v in args.items():
        t = _ARG_TYPES.get(k)
        if t is None:
            raise ValueError(f"rlx.serve:build_app: unknown argument {k!r} "
                             f"(known: path, {', '.join(_ARG_TYPES)})")
        if t == "bool":
            kw[k] = v if isinstance(v, bool) else str(v).lower() in ("1", "true", "yes", "on")
        else:
            kw[k] = t(v)
    return app(path, **kw)

