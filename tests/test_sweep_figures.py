"""A preset's own sweep figures (``Preset.presentation.sweep_figures``) as ``platform.publish.publish`` draws and logs
them on a real sqlite MLflow store: parent-run files under ``front/``, per-trial files on their runs, the declared metric
histories handed over, and a figure that raises costing only itself."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from stores import RawStore

from platform.publish import publish
from platform.results import tracking
from search_spaces import Preset, SweepTrials, presets

# (alpha, per-step (I(U;X|Q), I(S;Q)) at steps 1, 2, 3): the gmm preset's metrics, as two trials log them
TRIALS = [(0.1, [(0.02, 0.40), (0.03, 0.20), (0.05, 0.15)]), (0.9, [(0.01, 0.40), (0.10, 0.10), (0.16, 0.04)])]
seen: list[SweepTrials] = []


def with_figures(preset: Preset, **drawn: object) -> Preset:
    """``preset`` with its presentation's sweep figures (and histories) replaced."""
    return replace(preset, presentation=replace(preset.presentation, **drawn))


def own_figure(trials: SweepTrials, folder: Path) -> list[Path]:
    """A study's figure: one file for the sweep, one for its first trial."""
    seen.append(trials)
    first = trials.table["run_id"].iloc[0]
    (folder / first).mkdir()
    (folder / "own.png").write_bytes(b"the sweep")
    (folder / first / "own_trial.png").write_bytes(b"one trial")
    return [folder / "own.png", folder / first / "own_trial.png"]


def broken_figure(trials: SweepTrials, folder: Path) -> list[Path]:
    raise RuntimeError("no ink\nsecond line")


@pytest.fixture()
def sweep(tmp_path: Path) -> tuple[RawStore, str, list[str]]:
    """A finished gmm sweep in the store: parent run and two trials with per-step information metrics."""
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-gmm")
    parent_id, _ = client.start_parent(exp_id, "gmm-figures", {"preset": "gmm"})
    run_ids = []
    for alpha, steps in TRIALS:
        run = client.create_run(exp_id, run_name=f"k=0.4 alpha={alpha:g}",
                                tags={"mlflow.parentRunId": parent_id, tracking.TAG_PARENT: parent_id,
                                      tracking.TAG_TRIAL: f"t{alpha}", tracking.TAG_ROLE: "trial"})
        run_id = run.info.run_id
        client.log_params(run_id, {"k": 0.4, "alpha": alpha, "algorithm": 1})
        for step, (i_uxq, i_sq) in enumerate(steps, start=1):
            client.log_metrics(run_id, {"leakage/i_uxq": i_uxq, "leakage/i_sq": i_sq, "leakage/bound_k": 0.19},
                                 step=step)
        client.log_metrics(run_id, {"utility/accuracy": 1 - alpha / 2, "attack/estimator/accuracy": 1 - alpha / 3},
                             step=3)
        client.set_terminated(run_id, "FINISHED")
        run_ids.append(run_id)
    return client, parent_id, run_ids


def artifacts(client: RawStore, run_id: str, path: str | None = None) -> set[str]:
    return {a.path for a in client.list_artifacts(run_id, path)}


def test_a_presets_own_figure_is_drawn_from_the_trials_and_logged(sweep: tuple[RawStore, str, list[str]]) -> None:
    client, parent_id, run_ids = sweep
    seen.clear()
    preset = with_figures(presets()["gmm"], sweep_figures=(own_figure,), sweep_history=("leakage/i_sq",))
    publish(client, parent_id, preset)
    assert artifacts(client, parent_id, "front") >= {"front/own.png", "front/trials.csv", "front/trends.png"}
    assert "own_trial.png" in artifacts(client, run_ids[0]) and "own_trial.png" not in artifacts(client, run_ids[1])
    (trials,) = seen
    assert list(trials.table["run_id"]) == run_ids and "pareto_front" in trials.table
    assert trials.table["leakage/i_sq"].tolist() == [0.15, 0.04]  # the latest values
    # only the declared metric's history, per step, for every trial
    assert list(trials.histories) == run_ids
    expected = pd.DataFrame({"leakage/i_sq": [0.40, 0.10, 0.04]}, index=[1, 2, 3])
    pd.testing.assert_frame_equal(trials.histories[run_ids[1]], expected, check_index_type=False)


def test_a_figure_that_raises_is_one_line_and_costs_only_itself(sweep: tuple[RawStore, str, list[str]],
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    client, parent_id, _ = sweep
    preset = with_figures(presets()["gmm"], sweep_figures=(broken_figure, own_figure))
    summary = publish(client, parent_id, preset)
    assert len(summary.trials) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(r"error: sweep figure \S*broken_figure failed: RuntimeError: no ink\n", err), err
    assert artifacts(client, parent_id, "front") >= {"front/trials.csv", "front/front.csv", "front/own.png"}
    assert client.get_run(parent_id).data.metrics["front/trials"] == 2


def test_a_file_outside_the_figures_folder_is_refused(sweep: tuple[RawStore, str, list[str]], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    client, parent_id, _ = sweep

    def stray(trials: SweepTrials, folder: Path) -> list[Path]:
        (tmp_path / "stray.png").write_bytes(b"elsewhere")
        return [tmp_path / "stray.png"]

    publish(client, parent_id, with_figures(presets()["gmm"], sweep_figures=(stray,)))
    err = capsys.readouterr().err
    assert re.fullmatch(r"error: sweep figure \S*stray failed: ValueError: returned \S*stray\.png, neither in its "
                        r"folder nor in a trial's run-id subfolder of it\n", err), err
    assert "front/stray.png" not in artifacts(client, parent_id, "front")


def test_gmm_preset_draws_the_information_plane_on_the_parent_and_each_trial(
        sweep: tuple[RawStore, str, list[str]]) -> None:
    client, parent_id, run_ids = sweep
    publish(client, parent_id, presets()["gmm"])
    assert "front/information_plane.png" in artifacts(client, parent_id, "front")
    for run_id in run_ids:
        assert "information_plane.png" in artifacts(client, run_id)
