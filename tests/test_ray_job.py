"""``ray job submit`` as the README writes it: a real head started with ``ray start`` from the project's environment
(own temp dir, free ports, token auth), the README's ``ray job submit -- python -m platform.sweep amnist`` with a
bare ``python`` (a smoke profile and its own store appended), its MLflow runs read back; and a plain sweep beside a
running ``ray start`` node starts its own Ray instead of joining that node."""
from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, run_sweep, store
from ray_nodes import cluster_env, start_head, stop, temp_root
from readme_commands import readme_commands

pytestmark = pytest.mark.slow
VENV = REPO / ".venv"


def trial_runs(workdir: Path) -> tuple[object, list]:
    client = store(workdir)
    runs = client.search_runs([client.get_experiment_by_name("putlab-amnist").experiment_id])
    (parent,) = [r for r in runs if r.data.tags.get("putlab.role") == "sweep"]
    return parent, [r for r in runs if r.data.tags.get("putlab.role") == "trial"]


def activated(env: dict[str, str]) -> dict[str, str]:
    """``env`` as ``source .venv/bin/activate`` leaves it: the project's ``bin`` first on PATH, no PYTHONPATH."""
    env = {k: v for k, v in env.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return env | {"VIRTUAL_ENV": str(VENV), "PATH": f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"}


@pytest.fixture()
def head():
    """A head as the README starts it: in the repository root, from the project's environment, with the dashboard
    (the job server) and two CPUs; its temp dir ``<root>/ray``, stopped by PID at the end."""
    with temp_root() as root:
        node = start_head(root / "ray", activated(cluster_env()), num_cpus=2, dashboard=True)
        try:
            yield node
        finally:
            stop(node)


def test_job_submit_runs_the_readmes_bare_command(head, tmp_path: Path) -> None:
    """The job's bare ``python`` is the head's, the project's: it imports Ray and putlab's ``platform``, no
    ``--working-dir`` or interpreter path needed."""
    (line,) = [c for c in readme_commands() if c.startswith("ray job submit")]
    assert line == "ray job submit -- python -m platform.sweep amnist", line
    workdir = tmp_path / "job"
    workdir.mkdir()
    submit = [*shlex.split(line), "--profile", "smoke", "--set", "lam=0", "--attackers", "thickness",  # one trial
              "--no-comparison-grids",  # the grids' trials are Ray tasks of the same job (test_interrupts runs them)
              "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}", "--storage", str(workdir / "runs")]
    env = head.env | {"RAY_ADDRESS": head.dashboard}  # the README's submitting terminal: activated, RAY_ADDRESS set
    out = subprocess.run(submit, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and "succeeded" in out.stdout, (out.stdout[-4000:], out.stderr[-3000:])
    assert "trials 1/1 done" in out.stdout and "Pareto front:" in out.stdout
    parent, children = trial_runs(workdir)
    assert parent.info.status == "FINISHED" and len(children) == 1
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
