"""Ctrl+C (or SIGTERM) on a real sweep is recorded as an interruption (exit 130, KILLED runs, the resume command), and resumes."""
from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, store, sweep_env


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupt_marks_the_sweep_killed_and_resume_finishes_it(workdir: Path, sig: signal.Signals) -> None:
    args = ["gmm", "--profile", "smoke", "--set", "report_every=10", "--set", "steps=400", "-v",
            "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}", "--storage", str(workdir / "runs")]
    proc = subprocess.Popen([sys.executable, "-m", "platform.sweep", *args], cwd=REPO, env=sweep_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    seen = []
    for line in proc.stdout:  # wait until a trial has reported its first result
        seen.append(line)
        if " step " in line or time.time() > deadline:
            break
    assert " step " in seen[-1], "".join(seen)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 130, err[-3000:]

    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-gmm")
    runs = client.search_runs([exp.experiment_id])
    (parent,) = [r for r in runs if r.data.tags.get("putlab.role") == "sweep"]
    children = [r for r in runs if r.data.tags.get("putlab.role") == "trial"]
    assert parent.info.status == "KILLED"
    assert children and {c.info.status for c in children} <= {"KILLED", "FINISHED"}
    assert "KILLED" in {c.info.status for c in children}  # the interrupted trial is not passed off as finished
    hint = [line for line in err.splitlines() if "continue with:" in line]
    assert hint, err[-3000:]
    command = shlex.split(hint[-1].split("continue with:", 1)[1])
    assert Path(command[0]).name.startswith("python") and (REPO / command[0]).exists()  # pasteable: the venv's python
    assert command[1:6] == ["-m", "platform.sweep", "gmm", "--resume", parent.info.run_name]

    resumed = subprocess.run(command, cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    runs = client.search_runs([exp.experiment_id])
    assert {r.info.status for r in runs} == {"FINISHED"}
    assert len([r for r in runs if r.data.tags.get("putlab.role") == "trial"]) == 2  # no duplicate, none lost
