"""Real Ray nodes for cluster tests, started with ``ray start --block`` as a user would start them.

Each node gets its own ``--temp-dir`` and free ports, and token authentication with a token of its own
(``RAY_AUTH_TOKEN``, so ``~/.ray/auth_token`` is never read or written). A node runs in its own process group;
:func:`stop` ends that group and every process still naming the node's temp dir, by PID, never with ``ray stop``
(which stops every Ray process on the machine).
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from conftest import REPO, sweep_env

RAY = REPO / ".venv" / "bin" / "ray"


@dataclass
class RayNode:
    """One ``ray start --block`` process and what a client needs to reach it."""

    process: subprocess.Popen
    temp_dir: Path
    gcs_address: str
    dashboard: str | None
    env: dict[str, str]


def free_ports(n: int) -> list[int]:
    """``n`` distinct ports free on 127.0.0.1 right now."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@contextmanager
def temp_root() -> Iterator[Path]:
    """A short folder under /tmp for nodes' temp dirs (Ray's socket paths must stay under 108 characters), removed
    afterwards."""
    root = Path(tempfile.mkdtemp(prefix="putlab-ray-", dir="/tmp"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def cluster_env() -> dict[str, str]:
    """The environment of a test cluster and its clients: putlab's, plus token auth with a fresh token."""
    return sweep_env() | {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
                          "RAY_USAGE_STATS_ENABLED": "0"}


def _node_ports(ports: list[int]) -> list[str]:
    """A node's own ports as ``ray start`` options, from six free ones (drawn in one call with the head's, so no two
    components get the same: ports drawn in separate calls may repeat once the first call's sockets close)."""
    manager, objects, metrics, agent, agent_grpc, runtime_env = ports
    return ["--node-manager-port", str(manager), "--object-manager-port", str(objects),
            "--metrics-export-port", str(metrics), "--dashboard-agent-listen-port", str(agent),
            "--dashboard-agent-grpc-port", str(agent_grpc), "--runtime-env-agent-port", str(runtime_env)]


def _start(args: list[str], temp_dir: Path, env: dict[str, str], timeout: float) -> subprocess.Popen:
    """``ray start --block ARGS`` in a new session; returns once the node has written its address file."""
    temp_dir.mkdir(parents=True, exist_ok=True)
    log = (temp_dir.parent / f"{temp_dir.name}.log").open("w")
    process = subprocess.Popen([str(RAY), "start", "--block", "--temp-dir", str(temp_dir), "--disable-usage-stats", *args],
                               cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + timeout
    while not (temp_dir / "ray_current_cluster").exists():
        if process.poll() is not None or time.monotonic() > deadline:
            stop_process_group(process, temp_dir)
            raise RuntimeError(f"ray start failed: {(temp_dir.parent / f'{temp_dir.name}.log').read_text()[-3000:]}")
        time.sleep(0.5)
    return process


def start_head(temp_dir: Path, env: dict[str, str], num_cpus: int, resources: dict[str, float] | None = None,
               dashboard: bool = False, timeout: float = 120) -> RayNode:
    """A head node on free ports (with the dashboard and its job server when ``dashboard``)."""
    gcs, client, dash, *node = free_ports(9)
    args = ["--head", "--node-ip-address", "127.0.0.1", "--port", str(gcs), "--ray-client-server-port", str(client),
            "--num-cpus", str(num_cpus), "--num-gpus", "0", "--resources", json.dumps(resources or {}),
            "--include-dashboard", str(dashboard).lower(), *_node_ports(node)]
    if dashboard:
        args += ["--dashboard-host", "127.0.0.1", "--dashboard-port", str(dash)]
    process = _start(args, temp_dir, env, timeout)
    return RayNode(process, temp_dir, f"127.0.0.1:{gcs}", f"http://127.0.0.1:{dash}" if dashboard else None, env)


def start_worker(head: RayNode, temp_dir: Path, num_cpus: int, resources: dict[str, float] | None = None,
                 timeout: float = 120) -> RayNode:
    """A worker node joining ``head``, with its own temp dir (Ray 2.60 allows one per node)."""
    args = ["--address", head.gcs_address, "--node-ip-address", "127.0.0.1", "--num-cpus", str(num_cpus),
            "--num-gpus", "0", "--resources", json.dumps(resources or {}), *_node_ports(free_ports(6))]
    process = _start(args, temp_dir, head.env, timeout)
    return RayNode(process, temp_dir, head.gcs_address, None, head.env)


def pids_naming(text: str) -> list[int]:
    """PIDs of this user's processes whose command line contains ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def stop_process_group(process: subprocess.Popen, temp_dir: Path) -> None:
    """End the node at once, as a lost machine would: SIGKILL to its process group, then to any process left whose
    command line names its temp dir (none was seen; the sweep is a safeguard). Ray's own graceful stop takes ~15 s."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    time.sleep(1)
    for pid in pids_naming(str(temp_dir)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def stop(node: RayNode) -> None:
    """Stop one node by PID (see :func:`stop_process_group`)."""
    stop_process_group(node.process, node.temp_dir)
