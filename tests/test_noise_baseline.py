"""The Gaussian-noise baseline: its attacker falls with σ on real AMNIST, its trials stay off the mechanism's front and
hypervolume but are drawn on its figure and compared at equal utility (the smoke sweep that runs it end to end beside
the other baselines is in test_learnless_baselines.py)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from stores import RawStore

from attacks.attackers.deep import DeepAttacker
from core.pareto_axis import Axis
from platform.figures.front import draw_comparison_grid, front_figure
from platform.plan.comparison_grid import comparison_grid_spec, logged_spec
from platform.plan.seed_axis import with_seeds
from platform.plan.spec import resolve
from platform.publish import publish
from platform.results import tracking
from platform.results.comparison_grid import ComparisonGrid, attack_at_utility, comparison_grid_points, comparison_grid_table
from platform.results.summary import trials_table
from search_spaces import presets
from trainables.noise.mechanism import NoiseBaseline

AXES = [Axis("utility/accuracy", True, 0.0, 1.0), Axis("attack/max/accuracy", False, 1.0, 0.5)]
BASELINE = ComparisonGrid(presets()["noise"])  # what the amnist preset asks for (Preset.comparison_grids)
# (σ, utility, strongest attacker): each is on noise's own front
NOISE = [(0.0, 0.95, 0.90), (0.5, 0.80, 0.75), (2.0, 0.30, 0.60)]
# (λ, utility, strongest attacker): all three on the mechanism's front
TRIALS = [(1.0, 0.90, 0.70), (3.0, 0.50, 0.68), (0.0, 0.97, 0.95)]


def noise_front() -> pd.DataFrame:
    return pd.DataFrame({"sigma": [s for s, _, _ in NOISE], "utility/accuracy": [u for _, u, _ in NOISE],
                         "attack/max/accuracy": [a for _, _, a in NOISE], "pareto_front": True})


def test_noise_at_equal_utility_interpolates_along_its_front() -> None:
    at = attack_at_utility(np.array([0.9, 0.5, 0.8, 0.1, 0.97]), noise_front(), AXES)
    # by hand: 0.75 + 0.15·(0.9 − 0.8)/(0.95 − 0.8); 0.60 + 0.15·(0.5 − 0.3)/(0.8 − 0.3); a noise point itself;
    # below the noisiest point and above the least noisy one noise does not reach that utility: no comparison
    np.testing.assert_allclose(at[:3], [0.85, 0.66, 0.75])
    assert np.isnan(at[3]) and np.isnan(at[4])


def add_run(client: RawStore, exp_id: str, parent_id: str, name: str, params: dict, metrics: dict,
            tags: dict[str, str]) -> str:
    run = client.create_run(exp_id, run_name=name, tags={"mlflow.parentRunId": parent_id, tracking.TAG_PARENT: parent_id,
                                                        tracking.TAG_TRIAL: name} | tags)
    client.log_params(run.info.run_id, params)
    client.log_metrics(run.info.run_id, metrics, step=1)
    client.set_terminated(run.info.run_id, "FINISHED")
    return run.info.run_id


def test_baseline_trials_stay_off_the_front_but_are_drawn_and_compared(tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-amnist")
    parent_id, _ = client.start_parent(exp_id, "amnist-test", {"preset": "amnist"})
    for lam, utility, attack in TRIALS:
        add_run(client, exp_id, parent_id, f"alpha=1 lam={lam:g} adv_steps=1", {"alpha": 1.0, "lam": lam, "adv_steps": 1},
                {"utility/accuracy": utility, "attack/max/accuracy": attack}, {tracking.TAG_ROLE: "trial"})
    noise_ids = {add_run(client, exp_id, parent_id, f"sigma={sigma:g}", {"sigma": sigma},
                         {"utility/accuracy": utility, "attack/max/accuracy": attack},
                         {tracking.TAG_ROLE: "baseline", tracking.TAG_BASELINE: "noise"})
                 for sigma, utility, attack in NOISE}
    preset = replace(presets()["amnist"], front=replace(presets()["amnist"].front, axes=tuple(AXES)))  # the axes these runs log

    table = trials_table(client, exp_id, parent_id, preset.label_keys)
    assert len(table) == 3 and not set(table["run_id"]) & noise_ids  # the front's table holds the mechanism only
    summary = publish(client, parent_id, preset)
    assert summary.trials.equals(table)

    metrics = client.get_run(parent_id).data.metrics
    assert metrics["front/size"] == 3 and metrics["front/trials"] == 3
    # λ=1 beats noise (0.70 < 0.85), λ=3 does not (0.68 > 0.66), λ=0 is beyond noise's utility: 1 of the 2 compared
    assert metrics["front/beats_noise_share"] == 0.5 and metrics["front/noise_compared"] == 2
    assert metrics["front/noise_trials"] == 3
    for run_id in noise_ids:  # never tagged as front members or not
        assert tracking.TAG_FRONT not in client.get_run(run_id).data.tags

    paths = {a.path for a in client.list_artifacts(parent_id, "front")}
    assert {"front/front.csv", "front/front.png", "front/noise_baseline.csv"} <= paths
    front = pd.read_csv(client.download_artifacts(parent_id, "front/front.csv", str(tmp_path))).sort_values("lam")
    assert (BASELINE.at_utility, BASELINE.beats) == ("noise/attack_at_utility", "noise/beaten")  # the stored names
    np.testing.assert_allclose(front[BASELINE.at_utility].to_numpy(), [np.nan, 0.85, 0.66], equal_nan=True)
    np.testing.assert_array_equal(front[BASELINE.beats].to_numpy(), [np.nan, 1.0, 0.0])
    drawn = pd.read_csv(client.download_artifacts(parent_id, "front/noise_baseline.csv", str(tmp_path)))
    assert sorted(drawn["sigma"]) == [s for s, _, _ in NOISE]

    noise = comparison_grid_points(comparison_grid_table(client, exp_id, parent_id, BASELINE), AXES, BASELINE)
    points = summary.points
    fig = front_figure(points, AXES, points["pareto_front"].to_numpy(), "name")
    draw_comparison_grid(fig.axes[0], noise, AXES, BASELINE.title, BASELINE.axis)
    (curve,) = [line for line in fig.axes[0].get_lines() if line.get_label() == "Gaussian noise"]
    np.testing.assert_allclose(curve.get_xdata(), [u for _, u, _ in NOISE])  # in σ order
    np.testing.assert_allclose(curve.get_ydata(), [a for _, _, a in NOISE])
    assert "Gaussian noise" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def test_the_noise_grid_shares_the_sweeps_data_and_seeds() -> None:
    spec = resolve("amnist", "smoke", ["dataset=mnist32", "n_train=300"])
    noise = comparison_grid_spec(spec, BASELINE)
    assert noise.preset.name == "noise" and noise.grid == {"sigma": [0.0, 1.0]}
    assert {k: noise.config[k] for k in ("dataset", "n_train", "n_test", "attack_epochs")} == {
        "dataset": "mnist32", "n_train": 300, "n_test": 256, "attack_epochs": 1}
    replicated = comparison_grid_spec(with_seeds(spec, 2, "grid"), BASELINE)
    assert replicated.grid["seed"] == [0, 1] and replicated.preset.label_keys == ("sigma", "seed")
    assert len(replicated.grid_points()) == 4


def test_a_resumed_sweep_runs_the_noise_grid_it_logged(tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-amnist")
    ran = with_seeds(resolve("amnist", "smoke", ["n_train=300", "data_root="]), 2, "grid")
    parent_id, _ = client.start_parent(exp_id, "amnist-smoke-x", {"profile": ran.profile, "grid": ran.grid,
                                                                             "config": ran.config})
    resumed = resolve("amnist", None, [])  # the resume command names neither the profile nor the --set values
    logged = logged_spec(resumed, client.get_run(parent_id).data.params)
    assert comparison_grid_spec(logged, BASELINE) == comparison_grid_spec(ran, BASELINE)


@pytest.mark.slow  # four tuned deep attackers on 1,000 AMNIST images: about two minutes on 2 CPUs
def test_the_deep_attackers_accuracy_falls_with_sigma() -> None:
    accuracy = {}
    for sigma in (0.0, 0.5, 2.0, 8.0):
        mechanism = NoiseBaseline.create({"sigma": sigma, "n_train": 1000, "n_test": 500, "attack_epochs": 8,
                                          "attack_patience": 3})
        mechanism.setup()
        data = mechanism.farm_inputs().data  # the released splits exactly as the farm attacks them
        accuracy[sigma] = DeepAttacker(mechanism.cfg).run(data).metrics["accuracy"]
    assert accuracy[0.0] > 0.8, accuracy  # raw AMNIST: thickness is plain to see
    assert accuracy[0.0] > accuracy[0.5] > accuracy[2.0] > accuracy[8.0], accuracy
    # clipped noise keeps the ink mass: at σ = 2 the attacker still reads some (measured 0.63), at σ = 8 nearly none
    assert accuracy[2.0] < 0.72 and accuracy[8.0] < 0.6, accuracy
