"""Throughput and latency of the release service on loopback, against a bare in-process release of the same point.

Starts ``python -m serve`` on a free port over an MLflow store that already has a registered point (``platform.select``),
sends batches of real AMNIST test images at a few concurrency levels (one keep-alive connection per client thread),
and prints requests/s, samples/s and p50 / p99 latency; then times the same batch through the point's release map in
this process. Not a test: timings vary by machine and load.

    .venv/bin/python benchmarks/bench_serve.py --tracking-uri sqlite:///$PWD/mlflow.db [--point putlab-amnist/1]
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from core.data import load_amnist  # noqa: E402
from serve.auth import API_KEY_ENV  # noqa: E402
from serve.points import Registry, list_points, load_point  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_service(tracking_uri: str, port: int, cpus: int) -> subprocess.Popen:
    """``python -m serve`` in the background; returns once /health answers."""
    with open(Path(sys.argv[0]).with_suffix(".log").name, "w") as log:  # the server keeps its own descriptor
        server = subprocess.Popen([sys.executable, "-m", "serve", "--tracking-uri", tracking_uri, "--port", str(port),
                                   "--num-cpus", str(cpus)], cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(240):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return server
        except OSError:
            pass
        time.sleep(1)
    server.kill()
    raise SystemExit("the service did not come up; see bench_serve.log")


def client_run(port: int, path: str, body: bytes, headers: dict[str, str], n: int) -> list[float]:
    """n sequential requests on one keep-alive connection; their latencies in seconds."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    latencies = []
    for _ in range(n):
        t0 = time.perf_counter()
        conn.request("POST", path, body, headers)
        response = conn.getresponse()
        response.read()
        if response.status != 200:
            raise SystemExit(f"request failed with {response.status}")
        latencies.append(time.perf_counter() - t0)
    return latencies


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tracking-uri", default=f"sqlite:///{Path.cwd() / 'mlflow.db'}")
    p.add_argument("--point", help="name/version (default: the first registered point)")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--concurrency", default="1,4,16")
    p.add_argument("--requests", type=int, default=200, help="requests per concurrency level")
    p.add_argument("--cpus", type=int, default=2, help="CPUs of the service's local Ray")
    args = p.parse_args()

    client = Registry(args.tracking_uri)
    points = list_points(client)
    if not points:
        raise SystemExit("no registered point: run python -m platform.select <sweep> --max-attack ... first")
    info = points[args.point] if args.point else next(iter(points.values()))
    _, test, _ = load_amnist(n_train=64, n_test=args.batch, seed=0)
    x = test.x[: args.batch]
    key = os.environ.get(API_KEY_ENV)  # the service inherits it: send it, as a client of a keyed service would
    auth = {"authorization": f"Bearer {key}"} if key else {}
    protocols = {
        "json": (json.dumps({"inputs": x.tolist(), "seed": 1}).encode(), {"content-type": "application/json", **auth}),
        "binary": (x.numpy().tobytes(), {"content-type": "application/octet-stream", "x-putlab-seed": "1", **auth}),
    }
    path = f"/points/{info.point_id}/release"
    print(f"point {info.point_id} ({info.mechanism}), batch {args.batch}, "
          + ", ".join(f"{name} body {len(body) / 1024:.0f} KiB" for name, (body, _) in protocols.items()))

    port = free_port()
    server = start_service(args.tracking_uri, port, args.cpus)
    try:
        client_run(port, path, *protocols["json"], 5)  # load the point into the replica, warm up
        for name, (body, headers) in protocols.items():
            for level in (int(c) for c in args.concurrency.split(",")):
                per_client = max(1, args.requests // level)
                t0 = time.perf_counter()
                with ThreadPoolExecutor(level) as pool:
                    futures = [pool.submit(client_run, port, path, body, headers, per_client) for _ in range(level)]
                    runs = [future.result() for future in futures]
                wall = time.perf_counter() - t0
                lat = sorted(v for run in runs for v in run)
                p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))]
                print(f"{name:6s} concurrency {level:3d}: {len(lat) / wall:7.1f} req/s  "
                      f"{len(lat) * args.batch / wall:8.1f} samples/s  "
                      f"p50 {1000 * statistics.median(lat):7.1f} ms  p99 {1000 * p99:7.1f} ms")
    finally:
        server.terminate()
        server.wait(timeout=60)

    torch.set_num_threads(1)  # a replica has one CPU
    release_map = load_point(client, info, torch.device("cpu"))
    release_map.release(x, 1)
    times = []
    for _ in range(50):
        t0 = time.perf_counter()
        release_map.release(x, 1)
        times.append(time.perf_counter() - t0)
    bare = statistics.median(times)
    encode = time.perf_counter()
    json.loads(json.dumps({"outputs": release_map.release(x, 1).tolist()}))
    codec = time.perf_counter() - encode
    print(f"bare release in one process (1 thread): {1000 * bare:.2f} ms per batch; "
          f"JSON encode+decode of the answer alone: {1000 * codec:.2f} ms")


if __name__ == "__main__":
    main()
