"""The team's tracking server: scripts/tracking_server.sh starts a real PostgreSQL and a real ``mlflow server`` with
basic auth and served artifacts; a smoke sweep, platform.select, platform.attack and the release service work against
it with credentials from the environment (their artifacts through the server), and a request without them is refused
(401). platform.compare needs two sweeps, and reads a store as select does: test_seeds_sweep, test_privatizer_amnist."""
from __future__ import annotations

import importlib.util
import json
import secrets
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import REPO, run_sweep, sweep_env
from ray_nodes import free_ports
from serve_client import call, start_service, stop_service
from stores import RawStore

from platform.errors import UsageError
from platform.results.store import check_tracking_uri

SCRIPT = REPO / "scripts" / "tracking_server.sh"
SAMPLE = [[[0.5] * 28] * 28]


def test_a_missing_postgres_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)  # as on a machine without the extra
    with pytest.raises(UsageError) as refused:
        check_tracking_uri("postgresql+psycopg://mlflow@127.0.0.1/mlflow")
    assert str(refused.value) == ("the MLflow tracking URI needs the PostgreSQL driver psycopg, which is not installed: "
                                  "pip install -e '.[postgres]'")


def test_a_bad_auth_cache_setting_is_refused_before_anything_starts(tmp_path: Path) -> None:
    out = subprocess.run(["bash", str(SCRIPT), "start", str(tmp_path)], cwd=REPO, capture_output=True, text=True,
                         env=sweep_env() | {"MLFLOW_AUTH_CACHE_TTL": "soon"}, timeout=60)
    assert out.returncode == 2 and out.stderr == "error: MLFLOW_AUTH_CACHE_TTL must be a whole number of seconds (got 'soon')\n"
    assert list(tmp_path.iterdir()) == []  # no database, no secret, no server


@pytest.fixture(scope="module")
def server():
    """The script's server in a fresh folder under /tmp (the postgres user must be able to enter it) on free ports;
    stopped by the script (by PID) and removed at the end. Yields (URL, credentials, folder)."""
    folder = Path(tempfile.mkdtemp(prefix="putlab-tracking-", dir="/tmp"))
    mlflow_port, pg_port = free_ports(2)
    password = secrets.token_hex(16)
    env = sweep_env() | {"MLFLOW_PORT": str(mlflow_port), "PG_PORT": str(pg_port), "MLFLOW_ADMIN_PASSWORD": password}
    try:
        out = subprocess.run(["bash", str(SCRIPT), "start", str(folder)], cwd=REPO, env=env, capture_output=True,
                             text=True, timeout=900)  # the script bounds its own wait; a loaded machine is slow
        assert out.returncode == 0, (out.stdout[-3000:], out.stderr[-3000:])
        url = f"http://127.0.0.1:{mlflow_port}"
        assert f"MLflow tracking server on {url}" in out.stdout and "export MLFLOW_TRACKING_USERNAME=admin" in out.stdout
        yield url, {"MLFLOW_TRACKING_USERNAME": "admin", "MLFLOW_TRACKING_PASSWORD": password}, folder
    finally:
        stopped = subprocess.run(["bash", str(SCRIPT), "stop", str(folder)], cwd=REPO, env=env, capture_output=True,
                                 text=True, timeout=120)
        shutil.rmtree(folder, ignore_errors=True)
        assert stopped.returncode == 0, stopped.stderr


def cli(module: str, *args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.slow
def test_team_server_with_postgres_and_auth(server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url, credentials, folder = server
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{url}/api/2.0/mlflow/experiments/search?max_results=1", timeout=30)
    assert refused.value.code == 401
    assert urllib.request.urlopen(f"{url}/health", timeout=30).status == 200  # probes need no password

    anonymous = run_sweep(tmp_path, "amnist", "--profile", "smoke", "--tracking-uri", url, cwd=tmp_path)
    assert anonymous.returncode == 2 and len(anonymous.stderr.strip().splitlines()) == 1
    assert anonymous.stderr.startswith(f"error: MLflow tracking store {url} is unusable") and "401" in anonymous.stderr

    env = sweep_env() | credentials
    out = run_sweep(tmp_path, "amnist", "--profile", "smoke", "--set", "lam=0", "--attackers", "thickness",  # one trial
                    "--tracking-uri", url, env=env, cwd=tmp_path, timeout=900)  # beside another test process: past 300 s once
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"MLflow: open {url}/#/experiments/" in out.stdout and "mlflow ui" not in out.stdout

    selected = cli("platform.select", "putlab-amnist", "--max-attack", "1", "--sweep-budget", "--tracking-uri", url,
                   env=env, cwd=tmp_path)
    assert selected.returncode == 0, selected.stderr[-3000:]
    attacked = cli("platform.attack", "putlab-amnist", "--attackers", "thickness", "--tracking-uri", url, env=env, cwd=tmp_path)
    assert attacked.returncode == 0 and "attacked 0 checkpoint(s)" in attacked.stdout, attacked.stderr[-3000:]

    for key, value in credentials.items():
        monkeypatch.setenv(key, value)
    client = RawStore(url)
    (version,) = client.search_model_versions("name = 'putlab-amnist'")
    parent = next(r for r in client.search_runs([client.get_experiment_by_name("putlab-amnist").experiment_id])
                  if r.data.tags.get("putlab.role") == "sweep")
    assert parent.info.status == "FINISHED" and parent.info.artifact_uri.startswith("mlflow-artifacts:/")
    stored = list((folder / "artifacts").rglob("putlab_point.json"))  # artifacts went through the server into its folder
    assert len(stored) == 1 and json.loads(stored[0].read_text())["preset"] == "amnist"

    service, base = start_service(tmp_path, env, log_name="serve-team.log", tracking_uri=url)
    try:
        status, listed = call(f"{base}/points")
        assert status == 200 and [p["id"] for p in listed["points"]] == [f"putlab-amnist/{version.version}"]
        status, answer = call(f"{base}/points/putlab-amnist/{version.version}/release", {"inputs": [SAMPLE], "seed": 3})
        assert status == 200 and answer["shape"] == [1, 1, 28, 28]
    finally:
        stop_service(service)
