"""A Ray cluster of three nodes on one machine: a head without CPUs and two one-CPU workers, each started with
``ray start`` in its own temp dir with a custom resource naming it. A smoke sweep on it, with its Tune storage given
as a ``file://`` URI (the code path of s3:// or gs:// storage, through pyarrow, on a folder every node shares), runs
trials and attack-farm tasks on both workers; one worker is killed (by PID) while it trains a trial, and the sweep
finishes on the other with every run logged once."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO
from ray_nodes import RayNode, cluster_env, start_head, start_worker, stop, temp_root
from stores import RawStore

pytestmark = pytest.mark.slow
LAMBDAS = ("0", "1", "2", "3")
EPOCHS = 3
NODES = ("a", "b")


@pytest.fixture()
def cluster():
    """(head, {"a": worker, "b": worker}, shared folder, node ids by name); every node stopped by PID at the end."""
    with temp_root() as root:
        env = cluster_env()
        nodes: list[RayNode] = []
        try:
            nodes.append(start_head(root / "head", env, num_cpus=0))
            workers = {}
            for name in NODES:
                workers[name] = start_worker(nodes[0], root / f"worker-{name}", num_cpus=1,
                                             resources={f"putlab_node_{name}": 1})
                nodes.append(workers[name])
            yield nodes[0], workers, root / "shared", node_ids(nodes[0])
        finally:
            for node in reversed(nodes):
                stop(node)


def node_ids(head: RayNode, timeout: float = 120) -> dict[str, str]:
    """Node id of each worker by name, read from the cluster (waits until both have joined)."""
    code = (f"import json, ray; ray.init(address={head.gcs_address!r}, logging_level='ERROR'); "
            "print(json.dumps({k.removeprefix('putlab_node_'): n['NodeID'] for n in ray.nodes() if n['Alive'] "
            "for k in n['Resources'] if k.startswith('putlab_node_')}))")
    deadline = time.monotonic() + timeout
    while True:
        out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=head.env, capture_output=True, text=True, timeout=120)
        found = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 and out.stdout.strip() else {}
        if set(found) == set(NODES) or time.monotonic() > deadline:
            assert set(found) == set(NODES), (out.stdout, out.stderr[-2000:])
            return found
        time.sleep(2)


def trials(client: RawStore) -> list:
    exp = client.get_experiment_by_name("putlab-amnist")
    return [r for r in client.search_runs([exp.experiment_id]) if r.data.tags.get("putlab.role") == "trial"] if exp else []


def victims(client: RawStore, node: str) -> list:
    """Once ``node`` has run farm tasks: the trials still training on it with a checkpoint written and at least one
    epoch to go (killing it then loses trials and attacks in flight)."""
    try:
        runs = trials(client)
    except Exception:  # noqa: BLE001 - the driver is writing the sqlite file right now: look again
        return []
    if not any(node in r.data.tags.get("putlab.farm_node_ids", "") for r in runs):
        return []
    return [r for r in runs if r.info.status == "RUNNING" and 1 <= r.data.metrics.get("epoch", 0) < EPOCHS
            and r.data.tags.get("putlab.node_id", "").split(",")[-1] == node]


def test_sweep_uses_both_workers_and_survives_losing_one(cluster, tmp_path: Path) -> None:
    head, workers, shared, ids = cluster
    storage = f"file://{shared}/runs"
    tracking_uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    sweep = [sys.executable, "-m", "platform.sweep", "amnist", "--profile", "smoke", "--set", "alpha=2",
             "--set", f"lam={','.join(LAMBDAS)}", "--set", f"epochs={EPOCHS}", "--attackers", "thickness",
             "--no-comparison-grids",  # the grids' trials are placed as the sweep's own are (what it checks)
             "--address", head.gcs_address,
             "--tracking-uri", tracking_uri, "--storage", storage]
    with (tmp_path / "sweep.log").open("w") as log:
        driver = subprocess.Popen(sweep, cwd=REPO, env=head.env, stdout=log, stderr=subprocess.STDOUT)
    client = RawStore(tracking_uri)
    deadline = time.monotonic() + 600
    while not (killed := victims(client, ids["b"])):
        assert driver.poll() is None, (tmp_path / "sweep.log").read_text()[-3000:]
        assert time.monotonic() < deadline, "worker b never trained a trial after running farm tasks"
        time.sleep(1)
    stop(workers["b"])  # mid-trial: its process group and every process naming its temp dir, by PID
    assert driver.wait(timeout=900) == 0, (tmp_path / "sweep.log").read_text()[-4000:]
    output = (tmp_path / "sweep.log").read_text()
    assert f"trials {len(LAMBDAS)}/{len(LAMBDAS)} done" in output and "worker failed; retrying from its last checkpoint" in output

    runs = trials(client)
    placement = {r.data.params["lam"]: r.data.tags["putlab.node_id"].split(",") for r in runs}
    farm = {r.data.params["lam"]: r.data.tags.get("putlab.farm_node_ids", "").split(",") for r in runs}
    name = {v: k for k, v in ids.items()}
    print("trial placement (lam: nodes in order):", {lam: [name[n] for n in nodes] for lam, nodes in placement.items()})
    print("farm placement (lam: nodes):", {lam: [name.get(n, n) for n in nodes] for lam, nodes in farm.items()})
    # No run lost, none duplicated: one FINISHED run per grid point, each epoch logged once.
    assert sorted(placement) == [f"{float(lam)}" for lam in LAMBDAS]
    assert len({r.data.tags["putlab.trial_id"] for r in runs}) == len(runs)
    for run in runs:
        assert run.info.status == "FINISHED"
        every_epoch = list(range(1, EPOCHS + 1))
        assert [m.step for m in client.get_metric_history(run.info.run_id, "epoch")] == every_epoch
        assert sorted(m.step for m in client.get_metric_history(run.info.run_id, "attack/thickness/accuracy")) == every_epoch
        location = run.data.tags["putlab.checkpoint"]
        assert location.startswith(storage + "/") and (Path(location.removeprefix("file://")) / "state.pt").is_file()
    # Both workers trained trials and ran farm tasks; the trial on b when it died moved to a and finished there.
    assert {n for nodes in placement.values() for n in nodes} == set(ids.values())
    assert {n for nodes in farm.values() for n in nodes} == set(ids.values())
    moved = [placement[v.data.params["lam"]] for v in killed]
    assert moved and all(nodes == [ids["b"], ids["a"]] for nodes in moved), moved

    # The checkpoints are read back through the storage URI: re-attacked on the surviving node, and registered.
    attacked = subprocess.run([sys.executable, "-m", "platform.attack", "putlab-amnist", "--attackers", "yeom",
                               "--address", head.gcs_address, "--tracking-uri", tracking_uri],
                              cwd=REPO, env=head.env, capture_output=True, text=True, timeout=600)
    assert attacked.returncode == 0, attacked.stderr[-3000:]
    assert f"attacked {EPOCHS * len(LAMBDAS)} checkpoint(s)" in attacked.stdout, attacked.stdout[-3000:]
    selected = subprocess.run([sys.executable, "-m", "platform.select", "putlab-amnist", "--max-attack", "1", "--sweep-budget",
                               "--tracking-uri", tracking_uri], cwd=REPO, env=head.env, capture_output=True, text=True,
                              timeout=300)
    assert selected.returncode == 0 and "registered putlab-amnist version 1" in selected.stdout, selected.stderr[-3000:]
