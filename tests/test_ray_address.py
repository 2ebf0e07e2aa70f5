"""An unreachable or malformed ``--address`` is one line and exit code 2 within seconds, for the sweep and for
``platform.attack`` (Ray itself would retry the address for minutes); a bad storage URI is refused the same way."""
from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, run_sweep, sweep_env
from stores import RawStore

from platform.errors import UsageError
from platform.run import preflight

UNREACHABLE = "127.0.0.1:1"  # nothing listens on port 1 of the loopback


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("address, message", [
    ("ray://127.0.0.1:1", "Ray cluster at ray://127.0.0.1:1 is unreachable: Connection refused"),
    ("http://127.0.0.1:8265", "Ray address 'http://127.0.0.1:8265' is not host:port, ray://host:port or auto"),
    ("head-node", "Ray address 'head-node' is not host:port"),
])
def test_bad_addresses_are_named(address: str, message: str) -> None:
    with pytest.raises(UsageError) as refused:
        preflight.check_ray_address(address)
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)


def test_a_port_that_is_not_ray_is_named_within_seconds() -> None:
    """A listener that never answers (or a dashboard's HTTP port) used to leave ray.init retrying for minutes."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        with pytest.raises(UsageError) as refused:
            preflight.check_ray_address(address, timeout=2)
    assert str(refused.value).startswith(f"{address} accepts connections but does not answer as a Ray cluster within 2 s")
    assert time.monotonic() - started < 10


def test_sweep_refuses_an_unreachable_address_in_one_line(workdir: Path) -> None:
    started = time.monotonic()
    out = run_sweep(workdir, "amnist", "--profile", "smoke", "--address", UNREACHABLE, timeout=120)
    assert out.returncode == 2 and out.stderr == f"error: Ray cluster at {UNREACHABLE} is unreachable: Connection refused\n"
    assert time.monotonic() - started < 60


def test_attack_refuses_an_unreachable_address_in_one_line(workdir: Path) -> None:
    client = RawStore.open(f"sqlite:///{workdir / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-amnist")
    client.start_parent(exp_id, "amnist-smoke-1", {"preset": "amnist"})
    address = f"127.0.0.1:{closed_port()}"
    out = subprocess.run([sys.executable, "-m", "platform.attack", "amnist-smoke-1", "--address", address,
                          "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}"],
                         cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr == f"error: Ray cluster at {address} is unreachable: Connection refused\n"


def test_storage_uri_pyarrow_cannot_open_is_one_line(workdir: Path) -> None:
    out = run_sweep(workdir, "amnist", "--profile", "smoke", "--storage", "nosuchfs://bucket/runs", timeout=120)
    assert out.returncode == 2 and out.stderr.startswith("error: storage nosuchfs://bucket/runs cannot be opened: ")
    assert len(out.stderr.strip().splitlines()) == 1
