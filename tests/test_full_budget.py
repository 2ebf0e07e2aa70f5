"""A chosen point's privacy at the full budget (platform/run/full_budget.py, ``python -m platform.select``)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_sweep, store, sweep_env

from platform.audit import audit_records
from platform.errors import UsageError
from platform.plan.spec import resolve
from platform.run.full_budget import FullBudget, budget

SWEEP = {"attack/max/accuracy": 0.7, "attack/max/accuracy/ci_low": 0.65, "attack/max/accuracy/ci_high": 0.75,
         "attack/max/train_records": 5000.0, "attack/deep/accuracy": 0.7, "utility/fresh_accuracy": 0.9}


def test_the_full_budget_number_is_the_points_privacy_and_the_sweeps_stands_beside_it() -> None:
    full = FullBudget("deep", 0.82, 0.8, 0.84, 28476)
    assert full.registered(SWEEP) == {
        "attack/max/accuracy": 0.82, "attack/max/accuracy/ci_low": 0.8, "attack/max/accuracy/ci_high": 0.84,
        "attack/max/train_records": 28476.0,
        "attack/max/sweep_accuracy": 0.7, "attack/max/sweep_accuracy/ci_low": 0.65,
        "attack/max/sweep_accuracy/ci_high": 0.75, "attack/max/sweep_train_records": 5000.0,
        "attack/deep/accuracy": 0.7, "utility/fresh_accuracy": 0.9}
    # an interval the attacker did not log is not carried over from the sweep's number
    assert "attack/max/accuracy/ci_low" not in FullBudget("deep", 0.82, None, None, 28476).registered(SWEEP)
    assert full.line(SWEEP) == ("attack/max/accuracy at the full budget: deep 0.82 [0.8, 0.84] on 28,476 released "
                                "records (the sweep's: 0.7 on 5,000)")


def select(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "platform.select", "putlab-noise", "--trial", "sigma=1",
           "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}", *args]
    return subprocess.run(cmd, cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=1800)


def test_the_default_budget_is_every_record_outside_the_test_split() -> None:
    """Without --attack-records the refit trains on all 28,476 AMNIST training records (the noise preset's smoke
    config, as the end-to-end test below selects it); given, the number asked."""
    spec = resolve("noise", "smoke", ["sigma=1"])
    config = spec.grid_points()[0]
    assert budget(spec.preset, config, None) == 28476
    assert budget(spec.preset, config, 1000) == 1000


@pytest.mark.slow  # a smoke sweep, then its attacker refitted twice: about a minute
def test_select_registers_the_full_budget_number(workdir: Path) -> None:
    """The noise preset's smoke sweep (its farm trains on the release of 512 records), σ = 1 selected twice with more
    records than the sweep's: the refit's number is registered as the point's privacy, with the sweep's beside it, and
    another budget registers another number. The refit runs each privacy attacker that scored the trial (here the
    in-trial deep one and thickness). The default budget, all 28,476 AMNIST training records, is the test above: the
    same path, a fit of about two minutes on 2 cores."""
    out = run_sweep(workdir, "noise", "--profile", "smoke", "--set", "sigma=1", "--attackers", "thickness",
                    timeout=900)  # the point it selects
    assert out.returncode == 0, out.stderr[-3000:]
    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-noise")
    assert exp is not None
    (trial,) = [r for r in client.search_runs([exp.experiment_id]) if r.info.run_name == "sigma=1"]
    logged = trial.data.metrics

    full = select(workdir, "--attack-records", "2000")
    assert full.returncode == 0, full.stderr[-3000:]
    read = re.search(r"attack/max/accuracy at the full budget: (\w+) ([\d.]+) \[[\d.]+, [\d.]+\] on 2,000 released "
                     r"records \(the sweep's: ([\d.]+) on 512\)", full.stdout)
    assert read, full.stdout
    assert "attacking the chosen checkpoint with deep, thickness trained on the release of 2,000 records" in full.stdout
    first = client.get_model_version("putlab-noise", "1").tags
    assert first["metric.attack/max/train_records"] == "2000"
    assert float(first["metric.attack/max/accuracy"]) == pytest.approx(float(read.group(2)), abs=5e-4)
    assert float(first["metric.attack/max/sweep_accuracy"]) == pytest.approx(logged["attack/max/accuracy"], rel=1e-5)
    assert first["metric.attack/max/sweep_train_records"] == "512" == f"{logged['attack/max/train_records']:.0f}"
    point = json.loads(Path(client.download_artifacts(trial.info.run_id, next(
        a.path for a in client.list_artifacts(trial.info.run_id, "operating_point")))).joinpath("putlab_point.json").read_text())
    assert point["metrics"]["attack/max/accuracy"] == pytest.approx(float(first["metric.attack/max/accuracy"]), rel=1e-5)

    fewer = select(workdir, "--attack-records", "1000")
    assert fewer.returncode == 0, fewer.stderr[-3000:]
    second = client.get_model_version("putlab-noise", "2").tags
    assert second["metric.attack/max/train_records"] == "1000"
    assert second["metric.attack/max/accuracy"] != first["metric.attack/max/accuracy"]
    assert second["metric.attack/max/sweep_accuracy"] == first["metric.attack/max/sweep_accuracy"]


@pytest.mark.slow  # reads AMNIST's whole training set: over 20 s on 2 busy cores
def test_the_audit_fits_on_every_record_the_game_never_saw_when_the_point_counts_more(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A point registered at the full budget (28,476 AMNIST records, 512 of them the game's own): the audit's default
    lowers it to the 27,964 the game never saw, and says so; asked for 28,476 with --records, it refuses."""
    spec = resolve("amnist", "smoke", [])
    config = spec.grid_points()[0]
    held = audit_records(spec.preset, config, 28476, asked=False)
    assert len(held.train_x) == 28476 - 512
    assert "the audit fits on all 27,964 records the game never saw" in capsys.readouterr().out
    with pytest.raises(UsageError, match="fewer than the 28476 asked for"):
        audit_records(spec.preset, config, 28476, asked=True)
