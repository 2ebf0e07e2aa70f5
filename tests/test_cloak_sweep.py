"""The cloak-mnist preset end to end through the real CLI, Ray Tune and a sqlite MLflow store."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_sweep, store, sweep_env

from trainables.shared.tune_loop import KILL_ENV

TRIAL_METRICS = ("utility/accuracy", "utility/accuracy_zero_fill", "utility/raw_accuracy", "utility/accuracy_loss",
                 "leakage/info_removed", "leakage/suppression_ratio", "leakage/gaussian_sigma", "utility/gaussian_accuracy",
                 "fairness/demp_gap", "fairness/eo_gap", "train/loss", "train/ce", "leakage/info_removed_knn",
                 "leakage/mi_knn", "baseline/gaussian_equal_acc/sigma", "baseline/gaussian_equal_acc/utility/accuracy",
                 "baseline/gaussian_equal_acc/leakage/info_removed_knn",
                 "baseline/gaussian_equal_acc/attack/deep/accuracy", "utility/noisy_accuracy",
                 "leakage/noisy_info_removed_knn", "baseline/gaussian_equal_info/sigma",
                 "baseline/gaussian_equal_info/utility/accuracy", "baseline/gaussian_equal_info/leakage/info_removed_knn")
PARENT_METRICS = ("baseline/target/mnist_test_accuracy", "baseline/target/mnist_test_accuracy/ci_low",
                  "baseline/target/mnist_test_accuracy/ci_high")
FARM_METRICS = ("attack/deep/accuracy", "attack/deep_raw/accuracy", "attack/thickness/accuracy",
                "attack/yeom/advantage", "attack/yeom/target/auc", "attack/max/accuracy")


@pytest.mark.slow  # end to end, about a minute or more: runs under -m slow (CI runs both)
def test_smoke_sweep_logs_cloak_metrics_figures_and_attacks(workdir: Path) -> None:
    out = run_sweep(workdir, "cloak-mnist", "--profile", "smoke")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Pareto front:" in out.stdout and "baseline/target/mnist_test_accuracy" in out.stdout
    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-cloak-mnist")
    assert exp is not None
    runs = client.search_runs([exp.experiment_id])
    (parent,) = [r for r in runs if r.data.tags.get("putlab.role") == "sweep"]
    children = [r for r in runs if r.data.tags.get("putlab.role") == "trial"]

    assert parent.info.status == "FINISHED"
    assert {"baseline/utility/accuracy", "baseline/attack/deep/accuracy", "front/hypervolume", *PARENT_METRICS} <= set(
        parent.data.metrics)
    low, high = (parent.data.metrics[f"baseline/target/mnist_test_accuracy/{end}"] for end in ("ci_low", "ci_high"))
    assert low < parent.data.metrics["baseline/target/mnist_test_accuracy"] < high
    assert parent.data.metrics["baseline/target/mnist_test_accuracy"] > 0.9  # one epoch of LeNet-5 on "> 5"
    assert len(children) == 2 and {c.data.params["lam"] for c in children} == {"1.0", "100.0"}
    for child in children:
        m = child.data.metrics
        assert child.info.status == "FINISHED" and child.data.params["mechanism"] == "cloak"
        assert set(TRIAL_METRICS) | set(FARM_METRICS) <= set(m), sorted(m)
        assert 0.0 <= m["leakage/info_removed"] <= 1.0 and 0.0 <= m["leakage/suppression_ratio"] <= 1.0
        assert m["attack/max/accuracy"] == max(m[f"attack/{a}/accuracy"] for a in ("deep", "deep_raw", "thickness"))
        figures = {a.path for a in client.list_artifacts(child.info.run_id, "figures")}
        assert {"figures/epoch003_noise_map.png", "figures/epoch003_sifted.png"} <= figures, figures
        assert [s.step for s in client.get_metric_history(child.info.run_id, "train/phase")] == [1, 2, 3]
        assert [s.value for s in client.get_metric_history(child.info.run_id, "train/phase")] == [1.0, 1.0, 2.0]


def test_out_of_range_config_is_one_line_and_exit_2(workdir: Path) -> None:
    out = run_sweep(workdir, "cloak-mnist", "--set", "M=-1", timeout=120)
    assert out.returncode == 2, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "M: must be in (0, 1000000000] (got -1)" in lines[0], out.stderr
    assert not (workdir / "runs").exists()


@pytest.mark.slow  # end to end, about a minute or more: runs under -m slow (CI runs both)
def test_killed_worker_resumes_from_its_checkpoint(workdir: Path) -> None:
    out = run_sweep(workdir, "cloak-mnist", "--profile", "smoke", "--set", "lam=1", "--set", "checkpoint_every=1",
                    "--attackers", "none", env={**sweep_env(), KILL_ENV: "2"})
    assert out.returncode == 0, out.stderr[-3000:]
    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-cloak-mnist")
    assert exp is not None
    (child,) = [r for r in client.search_runs([exp.experiment_id]) if r.data.tags.get("putlab.role") == "trial"]
    assert child.info.status == "FINISHED"
    resumed = client.get_metric_history(child.info.run_id, "train/resumed_from_epoch")
    assert sorted((m.step, m.value) for m in resumed) == [(1, 0.0), (2, 0.0), (3, 2.0)]
    phases = client.get_metric_history(child.info.run_id, "train/phase")
    assert sorted((m.step, m.value) for m in phases) == [(1, 1.0), (2, 1.0), (3, 2.0)]
