"""The release service as tests start and call it: ``python -m serve`` on a free port, JSON requests and answers."""
from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import REPO
from ray_nodes import free_ports


def call(url: str, body: bytes | dict | None = None, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    """(status, JSON) of a GET (no body) or POST; 4xx answers are returned, not raised."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def start_service(workdir: Path, env: dict[str, str], *args: str, log_name: str = "serve.log",
                  tracking_uri: str | None = None) -> tuple[subprocess.Popen, str]:
    """``python -m serve`` on a free port (store: ``tracking_uri``, default the sqlite file in ``workdir``), once its
    /health answers: (process, base URL)."""
    (port,) = free_ports(1)
    log = workdir / log_name
    uri = tracking_uri or f"sqlite:///{workdir / 'mlflow.db'}"
    with log.open("w") as out:  # a file, not a pipe nobody reads: a full pipe would stall the server
        server = subprocess.Popen([sys.executable, "-m", "serve", "--tracking-uri", uri, "--port", str(port),
                                   "--num-cpus", "2", *args], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 240
    try:
        while time.time() < deadline and server.poll() is None:
            try:
                if call(f"{base}/health")[0] == 200:
                    return server, base
            except (OSError, ValueError):  # refused, reset or timed out (a busy machine), or not JSON yet
                pass
            time.sleep(2)
        pytest.fail(f"service did not come up: {log.read_text()[-3000:]}")
    except BaseException:  # pytest.fail's too: never leave a service (and its Ray) running behind a failed start
        stop_service(server)
        raise


def stop_service(server: subprocess.Popen) -> None:
    """Stop a service started by :func:`start_service` (its local Ray goes with it); killed if it takes over a minute."""
    server.terminate()
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=60)
