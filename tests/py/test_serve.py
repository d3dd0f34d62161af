"""Serving on Ray Serve (python/rlx/serve.py, python/rlx/_serving.py).

The first tests drive the server's engine in-process, without Ray:
decoding JSON / .npy / .npz bodies, batching along the dynamic batch axis
(merge, split back, chunks above the symbol's max, a bad request among good
ones), errors naming the input, the health probe, `serve run`'s argument
parsing.

`test_two_replicas_on_a_two_node_cluster` starts a local Ray cluster on
loopback, 127.0.0.2 (a head and one worker node, 1 CPU each, so the two
replicas of 1 CPU land one per node), deploys an MLP export with a dynamic batch 1..32,
sends 200 requests from 8 client threads (JSON and .npy, 1..4 rows each),
checks every response against eager torch, that batching happened and that
both replicas (on both nodes) served, and prints throughput and p50/p99
latency. It tears the cluster down even when it fails, and skips only when
ray cannot be imported (python/requirements-test.txt installs it).

Run: python3 -m pytest -q -s tests/py/test_serve.py
"""

import http.client
import io
import json
import os
import shutil
import socket
import tempfile
import threading
import time

import numpy as np
import pytest
import torch
from torch import nn

from conftest import REPO, rlx_binary

_lib = rlx_binary().parent / "librlx.so"
if "RLX_LIB" not in os.environ and _lib.is_file():
    os.environ["RLX_LIB"] = str(_lib)

import rlx  # noqa: E402
from rlx._serving import JSON, NPY, NPZ, Engine, RequestError  # noqa: E402


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(32, 128), nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class TwoInTwoOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x, y):
        h = self.fc(x + y)
        return h, h.sum(-1)


def _eager(model, *xs):
    with torch.no_grad():
        return model(*(torch.from_numpy(x) for x in xs))


def assert_parity(got: np.ndarray, want: torch.Tensor) -> None:
    """The project's f32 bar: max|d| <= 1e-4 + 1e-4 max|torch|."""
    w = want.double().numpy()
    assert got.shape == w.shape and got.dtype == np.float32
    err = float(np.abs(got.astype(np.float64) - w).max()) if w.size else 0.0
    assert err <= 1e-4 + 1e-4 * float(np.abs(w).max()), f"max|d| {err}"


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    torch.manual_seed(0)
    model = MLP().eval()
    d = tmp_path_factory.mktemp("serve") / "mlp"
    rlx.export_program(model, (torch.randn(4, 32),), d, dynamic=["x:0:batch:1:32"])
    return model, d


@pytest.fixture(scope="module")
def engine(mlp):
    e = Engine(mlp[1], threads=1)
    yield e
    e.close()


def _npy(a: np.ndarray) -> bytes:
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def _json(**inputs) -> bytes:
    return json.dumps({"inputs": {k: v.tolist() for k, v in inputs.items()}}).encode()


# --------------------------------------------------------------------------
# The engine, in-process


def test_batch_axis_and_parity_at_start(engine):
    assert (engine.batch.symbol, engine.batch.min, engine.batch.max) == ("batch", 1, 32)
    assert engine.parity["pass"] is True and engine.parity["outputs"]
    info = engine.info()
    assert info["inputs"][0]["dims"] == ["batch", None] and info["batch_axis"]["max"] == 32


def test_requests_are_merged_split_and_chunked(mlp, engine):
    model, _ = mlp
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((n, 32), dtype=np.float32) for n in (1, 3, 2, 30, 5)]
    before = engine.stats.as_dict()
    items = [engine.decode(_json(x=x), JSON)[0] for x in xs[:3]] + \
        [engine.decode(_npy(x), NPY)[0] for x in xs[3:]]
    results = engine.run(items)
    for x, r in zip(xs, results):
        assert r.error is None and r.batch == 5
        assert_parity(r.outputs[0], _eager(model, x))
    after = engine.stats.as_dict()
    # 41 rows > the symbol's max of 32: one batch of 5 requests in two rlx runs
    assert after["calls"] - before["calls"] == 2
    assert after["requests"] - before["requests"] == 5 and after["max_requests_per_call"] >= 5


def test_a_bad_request_does_not_spoil_its_batch(mlp, engine):
    model, _ = mlp
    good = np.ones((2, 32), np.float32)
    results = engine.run([[good], [np.ones((2, 31), np.float32)], [good],
                          [np.ones((40, 32), np.float32)[:0]]])
    assert_parity(results[0].outputs[0], _eager(model, good))
    assert_parity(results[2].outputs[0], _eager(model, good))
    code, body = engine.error(results[1].error)
    assert code == 400 and "input 'x' axis 1 is 31" in json.loads(body)["error"]
    code, body = engine.error(results[3].error)
    assert code == 400 and "batch = 0 is outside its bounds [1, 32]" in json.loads(body)["error"]


@pytest.mark.parametrize("body, ctype, code, words", [
    (b'{"inputs": {"y": [[1.0]]}}', JSON, 400, "no input named 'y' (inputs: x)"),
    (b'{"inputs": {}}', JSON, 400, "'x' is missing"),
    (b'{"inputs": [[[1, 2]], [[3]]]}', JSON, 400, "takes 1 input(s) (x), 2 given"),
    (b'{"inputs": {"x": [[1, 2], [3]]}}', JSON, 400, "input 'x': not a rectangular"),
    (b'{"inputs": {"x": [["a"]]}}', JSON, 400, "input 'x': expected numbers"),
    (b'{"x": 1}', JSON, 400, 'expected {"inputs"'),
    (b"not json", JSON, 400, "not valid JSON"),
    (b"\x93NUMPY junk", NPY, 400, "not a valid .npy body"),
    (b"PK junk", NPZ, 400, "not a valid .npz body"),
    (b"{}", "text/plain", 415, "content type 'text/plain'"),
])
def test_bad_bodies_are_refused_naming_the_input(engine, body, ctype, code, words):
    with pytest.raises((RequestError, rlx.RlxError)) as e:
        engine.decode(body, ctype)
    got, payload = engine.error(e.value)
    assert got == code and words in json.loads(payload)["error"]


def test_wrong_rank_and_dtype_reach_rlx(engine):
    for body, ctype, words in [(_json(x=np.ones((32,), np.float32)), JSON, "input 'x'"),
                               (_npy(np.ones((2, 32), np.float64)), NPY, "input 'x'")]:
        r = engine.run([engine.decode(body, ctype)[0]])[0]
        code, payload = engine.error(r.error)
        assert code == 400 and words in json.loads(payload)["error"], payload


def test_json_integers_are_checked(tmp_path):
    class Emb(nn.Module):
        def __init__(self):
            super().__init__()
            self.e = nn.Embedding(10, 4)

        def forward(self, ids):
            return self.e(ids)

    rlx.export_program(Emb().eval(), (torch.zeros(2, 3, dtype=torch.long),), tmp_path,
                       dynamic=["ids:0:batch:1:8"])
    e = Engine(tmp_path, threads=1, verify=False)
    try:
        args, _ = e.decode(b'{"inputs": [[[1, 2, 3]]]}', JSON)
        assert args[0].dtype == np.int64 and e.run([args])[0].outputs[0].shape == (1, 3, 4)
        for body, words in [(b'{"inputs": [[[1.5, 2, 3]]]}', "is i64: got non-integer"),
                            (b'{"inputs": [[[1e30, 2, 3]]]}', "is i64: got non-integer"),
                            (b'{"inputs": [[[99999999999999999999, 2, 3]]]}', "out of its range")]:
            with pytest.raises(RequestError, match=words):
                e.decode(body, JSON)
    finally:
        e.close()


def test_npz_by_name_and_position_and_no_batch_axis(tmp_path):
    torch.manual_seed(3)
    model = TwoInTwoOut().eval()
    rlx.export_program(model, (torch.randn(2, 8), torch.randn(2, 8)), tmp_path / "two",
                       dynamic=["x:0:batch:1:16", "y:0:batch"])
    rlx.export_program(model, (torch.randn(2, 8), torch.randn(2, 8)), tmp_path / "static")
    e = Engine(tmp_path / "two", threads=1)
    s = Engine(tmp_path / "static", threads=1, verify=False)
    try:
        assert e.batch.symbol == "batch" and s.batch is None
        x, y = np.ones((3, 8), np.float32), np.full((3, 8), 2, np.float32)
        for kw in ({"x": x, "y": y}, {"arr_0": x, "arr_1": y}):
            b = io.BytesIO()
            np.savez(b, **kw)
            args, enc = e.decode(b.getvalue(), NPZ)
            body, ctype = e.encode(e.run([args])[0].outputs, enc)
            assert ctype == NPZ
            with np.load(io.BytesIO(body)) as z:
                want = _eager(model, x, y)
                names = [o.name for o in e.model.outputs]
                assert_parity(z[names[0]], want[0])
                assert_parity(z[names[1]], want[1])
        # x and y disagreeing on the batch run alone, refused by rlx itself
        r = e.run([[x, y[:2]], [x, y]])
        assert r[0].error is not None and r[1].batch == 1 and r[1].error is None
        # the static model runs requests one by one
        r = s.run([[x[:2], y[:2]], [x[:2], y[:2]]])
        assert [q.batch for q in r] == [1, 1] and s.stats.as_dict()["calls"] == 2
    finally:
        e.close()
        s.close()


def test_probe_fails_once_the_model_no_longer_runs(mlp):
    e = Engine(mlp[1], threads=1, verify=False)
    e.probe()
    e.model.close()
    with pytest.raises(rlx.RlxError, match="closed"):
        e.probe()
    e.close()


def test_build_app_arguments(mlp):
    serve = pytest.importorskip("rlx.serve", reason="ray[serve] is not installed",
                                exc_type=ImportError)
    app = serve.build_app({"path": str(mlp[1]), "replicas": "2", "threads": "1",
                           "max_batch_size": "4", "verify": "false"})
    assert app is not None
    with pytest.raises(ValueError, match="unknown argument 'replica'"):
        serve.build_app({"path": str(mlp[1]), "replica": "2"})


# --------------------------------------------------------------------------
# Two replicas on a two-node local Ray cluster


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post(conn, body: bytes, ctype: str):
    t0 = time.perf_counter()
    conn.request("POST", "/", body=body, headers={"Content-Type": ctype})
    r = conn.getresponse()
    data = r.read()
    return r.status, dict(r.getheaders()), data, time.perf_counter() - t0


def _get(port: int, path: str):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


REQUESTS, CLIENTS = 200, 8


def _load(port: int, model) -> dict:
    """REQUESTS requests from CLIENTS threads; every response checked."""
    rng = np.random.default_rng(7)
    work = [rng.standard_normal((int(rng.integers(1, 5)), 32), dtype=np.float32)
            for _ in range(REQUESTS)]
    lat, replicas, nodes, batches, failures = [], set(), set(), [], []
    lock = threading.Lock()
    next_i = iter(range(REQUESTS))

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            while True:
                with lock:
                    i = next(next_i, None)
                if i is None:
                    return
                x, use_json = work[i], i % 2 == 0
                body = _json(x=x) if use_json else _npy(x)
                code, headers, data, dt = _post(conn, body, JSON if use_json else NPY)
                try:
                    assert code == 200, data[:300]
                    y = (np.asarray(json.loads(data)["outputs"]["linear_1"], np.float32)
                         if use_json else np.load(io.BytesIO(data)))
                    assert_parity(y, _eager(model, x))
                except AssertionError as e:
                    with lock:
                        failures.append(f"request {i}: {e}")
                with lock:
                    lat.append(dt)
                    replicas.add(headers.get("X-Rlx-Replica") or headers.get("x-rlx-replica"))
                    nodes.add(headers.get("X-Rlx-Node") or headers.get("x-rlx-node"))
                    batches.append(int(headers.get("X-Rlx-Batch") or headers.get("x-rlx-batch")))
        finally:
            conn.close()

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    wall = time.perf_counter() - t0
    assert not any(t.is_alive() for t in threads), "clients still running after 120 s"
    lat.sort()
    return {"wall": wall, "lat": lat, "replicas": replicas, "nodes": nodes, "batches": batches,
            "failures": failures}


def test_two_replicas_on_a_two_node_cluster(mlp, monkeypatch):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'ray[serve]')")
    import ray
    from ray import serve
    from ray.cluster_utils import Cluster

    import rlx.serve as rlx_serve

    model, export_dir = mlp
    # what the replicas' worker processes need to import rlx from this checkout
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "python"), *filter(None, [os.environ.get("PYTHONPATH")])])
    os.environ.setdefault("RLX_BIN", str(rlx_binary()))
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # Serve's proxy (on the head) sends to its own node's replica until that
    # one is full; spread the load over both, as a balancer over per-node
    # proxies would (docs/serving.md)
    os.environ["RAY_SERVE_PROXY_PREFER_LOCAL_NODE_ROUTING"] = "0"
    temp = tempfile.mkdtemp(prefix="rlxray")  # short: Ray's socket paths must fit 107 bytes
    # Ray 2.60 writes the cluster's address to its default temp dir
    # ($RAY_TMPDIR/ray, else /tmp/ray) whatever temp_dir the head was given,
    # and fails where that directory does not exist: point it at ours
    monkeypatch.setenv("RAY_TMPDIR", temp)
    os.makedirs(os.path.join(temp, "ray"), exist_ok=True)
    # 127.0.0.2, loopback all the same: ray.init rewrites 127.0.0.1 and
    # "localhost" in an address to the machine's outward IP, where a node
    # bound to 127.0.0.1 is not listening
    ip = "127.0.0.2"
    node = dict(num_cpus=1, node_ip_address=ip, object_store_memory=80 << 20)
    port = _free_port()
    cluster = None
    try:
        cluster = Cluster(initialize_head=True, head_node_args=dict(
            node, include_dashboard=False, temp_dir=temp))
        cluster.add_node(**node)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False, _node_ip_address=ip)
        serve.start(proxy_location="HeadOnly", http_options={"host": "127.0.0.1", "port": port})
        t0 = time.perf_counter()
        serve.run(rlx_serve.app(export_dir, replicas=2, max_batch_size=8,
                                batch_wait_timeout_s=0.005, max_constructor_retry_count=1),
                  name="mlp", route_prefix="/")
        print(f"\nserve: 2 replicas up in {time.perf_counter() - t0:.1f} s")

        code, parity = _get(port, "/parity")
        assert code == 200 and parity["pass"] is True, parity
        code, health = _get(port, "/health")
        assert code == 200 and health["healthy"] is True

        # bad requests: a 400 naming the input, and the replicas keep serving
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        code, _, data, _ = _post(conn, _json(x=np.ones((2, 31), np.float32)), JSON)
        assert code == 400 and "input 'x' axis 1 is 31" in json.loads(data)["error"]
        code, _, data, _ = _post(conn, b'{"inputs": {"z": [[1]]}}', JSON)
        assert code == 400 and "no input named 'z'" in json.loads(data)["error"]
        code, _, data, _ = _post(conn, _npy(np.ones((40, 32), np.float32)), NPY)
        assert code == 200 and np.load(io.BytesIO(data)).shape == (40, 10)  # split in two runs
        conn.close()
        x = np.full((3, 32), 0.25, np.float32)  # Python callers: a handle, no HTTP
        (y,) = serve.get_app_handle("mlp").predict.remote(x).result(timeout_s=60)
        assert_parity(y, _eager(model, x))

        r = _load(port, model)
        assert not r["failures"], r["failures"][:5]
        lat = r["lat"]
        assert len(lat) == REQUESTS
        p50, p99 = lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))]
        print(f"serve: {REQUESTS} requests from {CLIENTS} clients in {r['wall']:.2f} s: "
              f"{REQUESTS / r['wall']:.0f} req/s, p50 {p50 * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms; "
              f"requests per rlx run: max {max(r['batches'])}, "
              f"mean {sum(r['batches']) / len(r['batches']):.2f}")
        assert len(r["replicas"]) == 2, f"replicas that answered: {r['replicas']}"
        assert len(r["nodes"]) == 2, f"nodes that answered: {r['nodes']}"
        assert max(r["batches"]) > 1, "no rlx run served more than one request"
    finally:
        if ray.is_initialized():
            try:
                serve.shutdown()
            except Exception:  # noqa: BLE001 - best effort; the cluster goes next
                pass
            ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
