"""End to end through real Ray Tune and a real sqlite MLflow store: runs, metrics, front, resume, retries."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import torch
from conftest import SharedSweep, assert_runs_as_printed, run_sweep, store, sweep_env

from search_spaces import presets
from trainables.shared.tune_loop import KILL_ENV

SHARED_METRICS = ("utility/accuracy", "attack/deep/accuracy", "train/loss_releaser", "train/loss_adversary",
                  "train/squared_error", "train/privacy_term", "leakage/normalised_alpha_mi", "utility/psnr",
                  "utility/ssim", "utility/fresh_accuracy", "utility/fixed_accuracy", "utility/squared_error",
                  "train/releaser_grad_norm")


def runs_by_role(workdir: Path) -> tuple[object, list]:
    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-amnist")
    runs = client.search_runs([exp.experiment_id])
    parents = [r for r in runs if r.data.tags.get("putlab.role") == "sweep"]
    assert len(parents) == 1
    return parents[0], [r for r in runs if r.data.tags.get("putlab.role") == "trial"]


def test_smoke_sweep_logs_runs_metrics_and_front(smoke_sweep: SharedSweep, tmp_path: Path) -> None:
    # the session's shared sweep: the smoke grid with the thickness attacker (the whole farm: test_farm)
    workdir, out = smoke_sweep.folder, smoke_sweep
    assert "Pareto front: " in out.stdout and "trials (*) on 3 objectives; hypervolume" in out.stdout
    assert "mlflow ui --backend-store-uri sqlite:///" in out.stdout
    assert "trials 3/3 done, 0 running, 0 failed" in out.stdout and "checkpoint 1: strongest attacker" in out.stdout
    for noise in ("Token authentication", "Configuration for experiment", "tensorboard", "operation took", "SystemExit"):
        assert noise not in out.stdout + out.stderr, noise
    mlflow_ui = next(line for line in out.stdout.splitlines() if line.startswith("MLflow: ")).removeprefix("MLflow: ")
    assert_runs_as_printed(mlflow_ui.split("  (experiment")[0], "--help", expect="--backend-store-uri")
    parent, children = runs_by_role(workdir)
    client = store(workdir)
    report = Path(next(line for line in out.stdout.splitlines() if line.startswith("report: ")).removeprefix("report: "))
    assert report == workdir / "reports" / f"{parent.info.run_name}.html" and report.stat().st_size > 10_000
    assert "<h2>Does the game settle?</h2>" in report.read_text(encoding="utf-8")
    assert "status FINISHED" in report.read_text()  # the status the run ends with, not RUNNING while it publishes
    assert "report/report.html" in [a.path for a in client.list_artifacts(parent.info.run_id, "report")]

    assert parent.info.status == "FINISHED"
    # the build and CPU kernels a seed's game reproduces on, beside the cluster
    kernels = torch.backends.cpu.get_cpu_capability()
    assert parent.data.params["machine"].endswith(f", torch {torch.__version__.split('+')[0]}, CPU kernels {kernels}")
    assert {"front/hypervolume", "front/hypervolume_2d", "front/size", "baseline/utility/accuracy",
            "baseline/attack/deep/accuracy", "data/amnist_test"} <= set(parent.data.metrics)
    assert parent.data.metrics["data/amnist_test"] == 4681 and parent.data.metrics["data/amnist_train"] == 28476
    assert {a.path for a in client.list_artifacts(parent.info.run_id, "front")} == {
        "front/trials.csv", "front/front.csv", "front/front.png", "front/front_2d.png", "front/trends.png",
        "front/front_by_alpha.csv", "front/front_by_alpha.png"}  # one front per α beside the joint one; the two-axis view
    assert {"front/hypervolume/alpha_2", "front/hypervolume/alpha_inf"} <= set(parent.data.metrics)

    # the smoke grid is a list: α = 2 at λ ∈ {0, 10}, α = ∞ at λ ∈ {0, 3}
    assert len(children) == 3 and {c.data.params["lam"] for c in children} == {"0.0", "10.0", "3.0"}
    for child in children:
        assert child.info.status == "FINISHED"
        assert child.data.tags["mlflow.parentRunId"] == parent.info.run_id
        # every α trains the same game at λ = 0, so that point runs once, as α = 1
        assert child.data.params["alpha"] == {"0.0": "1.0", "10.0": "2.0", "3.0": "inf"}[child.data.params["lam"]]
        assert child.data.params["mechanism"] == "releaser"
        assert set(SHARED_METRICS) <= set(child.data.metrics)
        assert 0.0 <= child.data.metrics["attack/deep/accuracy"] <= 1.0
        assert child.data.tags["putlab.pareto_front"] in ("true", "false")
        assert [a.path for a in client.list_artifacts(child.info.run_id, "figures")] == ["figures/epoch001_released.png"]
        assert [a.path for a in client.list_artifacts(child.info.run_id, "game")] == ["game/game_curves.png"]
        assert Path(child.data.tags["putlab.checkpoint"], "state.pt").exists()

    # one seed and recipe: the grid's trials share one warm start (none computes it when this machine already has it)
    computed = [1.0 - child.data.metrics["pretrain/cached"] for child in children]
    assert sum(computed) <= 1.0, computed

    trials_csv = client.download_artifacts(parent.info.run_id, "front/trials.csv", str(tmp_path))
    table = pd.read_csv(trials_csv)
    assert len(table) == 3 and table["pareto_front"].any()
    assert parent.data.metrics["front/size"] == table["pareto_front"].sum()


@pytest.mark.slow  # end to end, about a minute or more: runs under -m slow (CI runs both)
@pytest.mark.parametrize("search", ["optuna"])
def test_optuna_search_runs_and_builds_the_same_front(workdir: Path, search: str) -> None:
    out = run_sweep(workdir, "amnist", "--profile", "smoke", "--search", search, "--samples", "2",
                    "--attackers", "thickness")  # one quick attacker gives the front its privacy axis
    assert out.returncode == 0, out.stderr[-3000:]
    parent, children = runs_by_role(workdir)
    assert len(children) == 2 and "front/hypervolume" in parent.data.metrics
    ranges = presets()["amnist"].optuna  # Optuna draws every axis from the preset's own range
    for child in children:
        for axis in ("alpha", "lam"):
            assert ranges[axis].low <= float(child.data.params[axis]) <= ranges[axis].high


@pytest.mark.slow  # end to end, about a minute or more: runs under -m slow (CI runs both)
def test_a_killed_worker_is_retried_from_its_checkpoint_and_steps_reported_again_are_logged_once(workdir: Path) -> None:
    # Checkpoints at epochs 2 and 4; the worker dies after reporting epoch 3, restarts from epoch 2's checkpoint,
    # and reports epoch 3 again: MLflow must keep one entry per step, and the farm attacks each checkpoint once.
    out = run_sweep(workdir, "amnist", "--profile", "smoke", "--set", "lam=0", "--set", "epochs=4",
                    "--set", "checkpoint_every=2", "--attackers", "thickness", env={**sweep_env(), KILL_ENV: "3"})
    assert out.returncode == 0, out.stderr[-3000:]
    _, (child,) = runs_by_role(workdir)
    client = store(workdir)
    assert child.info.status == "FINISHED"
    assert [m.step for m in client.get_metric_history(child.info.run_id, "epoch")] == [1, 2, 3, 4]
    resumed = sorted((m.step, m.value) for m in client.get_metric_history(child.info.run_id, "train/resumed_from_epoch"))
    assert resumed == [(1, 0.0), (2, 0.0), (3, 0.0), (4, 2.0)]
    attacked = client.get_metric_history(child.info.run_id, "attack/thickness/accuracy")
    assert sorted(m.step for m in attacked) == [2, 4]
