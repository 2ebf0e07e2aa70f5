"""``ray job submit`` as the README writes it: a real head started with ``ray start`` (own temp dir, free ports,
token auth), a smoke sweep submitted as a job with the project's interpreter, its MLflow runs read back; and a plain
sweep beside a running ``ray start`` node starts its own Ray instead of joining that node."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import REPO, run_sweep, store
from ray_nodes import RAY, cluster_env, start_head, stop, temp_root

pytestmark = pytest.mark.slow
PYTHON = REPO / ".venv" / "bin" / "python"


def trial_runs(workdir: Path) -> tuple[object, list]:
    client = store(workdir)
    runs = client.search_runs([client.get_experiment_by_name("putlab-amnist").experiment_id])
    (parent,) = [r for r in runs if r.data.tags.get("putlab.role") == "sweep"]
    return parent, [r for r in runs if r.data.tags.get("putlab.role") == "trial"]


@pytest.fixture()
def head():
    """A head with the dashboard (the job server), two CPUs, its temp dir ``<root>/ray``, stopped by PID at the end.
    Its environment has no PYTHONPATH, as a user's shell: the job finds putlab in its shipped working directory."""
    env = {k: v for k, v in cluster_env().items() if k != "PYTHONPATH"}
    with temp_root() as root:
        node = start_head(root / "ray", env, num_cpus=2, dashboard=True)
        try:
            yield node
        finally:
            stop(node)


def test_job_submit_runs_a_smoke_sweep_with_the_projects_python(head, tmp_path: Path) -> None:
    workdir = tmp_path / "job"
    workdir.mkdir()
    # The README's command: the working directory is shipped, the entrypoint is the checkout's own interpreter.
    submit = [str(RAY), "job", "submit", "--address", head.dashboard, "--working-dir", ".", "--",
              str(PYTHON), "-m", "platform.sweep", "amnist", "--profile", "smoke", "--attackers", "thickness",
              "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}", "--storage", str(workdir / "runs")]
    out = subprocess.run(submit, cwd=REPO, env=head.env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and "succeeded" in out.stdout, (out.stdout[-4000:], out.stderr[-3000:])
    assert "trials 3/3 done" in out.stdout and "Pareto front:" in out.stdout
    parent, children = trial_runs(workdir)
    assert parent.info.status == "FINISHED" and len(children) == 3
    for child in children:
        assert child.info.status == "FINISHED" and "attack/thickness/accuracy" in child.data.metrics
        assert len(child.data.tags["putlab.node_id"]) == 56  # the Ray node the trial ran on (the head's)
        assert Path(child.data.tags["putlab.checkpoint"]).is_relative_to(workdir / "runs")


def test_a_plain_sweep_beside_a_ray_start_node_starts_its_own_ray(head, tmp_path: Path) -> None:
    """Without --address a sweep runs on a Ray of its own even where ``ray.init()`` would find the node (here
    through RAY_TMPDIR, which points Ray's lookup at the node's temp dir): it used to join it and die."""
    env = head.env | {"RAY_TMPDIR": str(head.temp_dir.parent)}  # Ray looks for <RAY_TMPDIR>/ray/ray_current_cluster
    out = run_sweep(tmp_path, "amnist", "--profile", "smoke", "--set", "lam=0", "--attackers", "none", env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    _, (child,) = trial_runs(tmp_path)
    assert child.info.status == "FINISHED"
