"""A sweep's results as one table, its Pareto front and hypervolume, logged on the parent run.

The table is read back from the MLflow child runs, so it covers every trial of the sweep,
including those finished before a ``--resume``, and can be rebuilt at any time.
"""
from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from mlflow.tracking import MlflowClient

from platform import tracking
from platform.front_groups import GroupFront, fronts_by, group_metrics
from platform.front_plot import plot_front, plot_fronts_by
from platform.information_plane import log_information_plane
from platform.kl_boxplot import log_kl_boxes
from platform.noise_baseline import LABEL, baseline_points, baseline_table, compare_front, comparison_metrics
from platform.numbers import readable
from platform.pareto import Axis, pareto_mask
from platform.replicates import SEED, format_points, hypervolume_by_seed, point_index, point_table, spread_metrics
from platform.trend_plot import plot_trends
from search_spaces import Preset


@dataclass(frozen=True)
class SweepSummary:
    """All trials, the front's mask over them (a trial is on it when its point is), the front's hypervolume (raw and
    normalised; the mean over seeds), the per-point table (means over seeds, bands, ``pareto_front``) and the
    seed-to-seed spread (``replicates.spread_metrics``; empty with one seed)."""

    trials: pd.DataFrame
    front: pd.Series
    hypervolume: float
    hypervolume_normalised: float
    points: pd.DataFrame = field(default_factory=pd.DataFrame)
    spread: dict[str, float] = field(default_factory=dict)


def trials_table(client: MlflowClient, exp_id: str, parent_id: str, label_keys: tuple[str, ...]) -> pd.DataFrame:
    """One row per child run: ids, status, search-axis params and latest metrics."""
    rows = []
    for run in tracking.child_runs(client, exp_id, parent_id):
        row = {
            "trial_id": run.data.tags.get(tracking.TAG_TRIAL),
            "run_id": run.info.run_id,
            "name": run.info.run_name,
            "status": run.info.status,
        }
        row.update({k: float(run.data.params[k]) for k in label_keys if k in run.data.params})
        if SEED in run.data.params and SEED not in row:
            row[SEED] = pd.to_numeric(run.data.params[SEED], errors="coerce")
        row.update(run.data.metrics)
        rows.append(row)
    table = pd.DataFrame(rows)
    order = list(dict.fromkeys([*label_keys, SEED] if SEED in table else label_keys))
    return table.sort_values(order).reset_index(drop=True) if not table.empty else table


def usable_trials(table: pd.DataFrame, axes: list[Axis]) -> pd.DataFrame:
    """The finished trials that report every axis (what fronts and hypervolumes are computed on)."""
    usable = table[table["status"] == "FINISHED"] if "status" in table else table
    return usable.dropna(subset=[a.metric for a in axes if a.metric in usable]) if not usable.empty else usable


def group_fronts(summary: SweepSummary, axes: list[Axis], preset: Preset) -> list[GroupFront]:
    """One front per value of the preset's ``front_by`` axis (``platform.front_groups``); none without one."""
    if preset.front_by is None or summary.points.empty:
        return []
    return fronts_by(usable_trials(summary.trials, axes), summary.points, axes, preset.front_by, preset.label_keys,
                     preset.canonical)


def summarise(table: pd.DataFrame, axes: list[Axis], label_keys: tuple[str, ...] = ()) -> SweepSummary:
    """Front of the per-point means (over seeds) and hypervolume (mean over seeds) of the finished trials that report
    every axis; a point is a configuration of ``label_keys`` other than the seed."""
    usable = usable_trials(table, axes)
    if usable.empty or any(a.metric not in usable for a in axes):
        return SweepSummary(table, pd.Series(False, index=table.index), float("nan"), float("nan"))
    points = point_table(usable, axes, label_keys)
    points["pareto_front"] = pareto_mask(points, axes)
    mask = pd.Series(False, index=table.index)
    mask[usable.index] = points["pareto_front"].to_numpy()[point_index(usable, label_keys)]
    return SweepSummary(table, mask, float(hypervolume_by_seed(usable, axes).mean()),
                        float(hypervolume_by_seed(usable, axes, normalised=True).mean()),
                        points, spread_metrics(usable, points, axes))


SWEEP_FIGURES: dict[str, Callable[[MlflowClient, str, pd.DataFrame], None]] = {
    "information_plane": log_information_plane,
    "kl_boxplots": log_kl_boxes,
}


def log_summary(client: MlflowClient, parent_id: str, summary: SweepSummary, axes: list[Axis], preset: Preset) -> None:
    """Trials CSV, front CSV and PNG, trend PNG, the preset's own sweep figures and the hypervolume on the parent;
    with a ``front_by`` axis also one front per value of it (``front_by_<axis>.png`` and ``.csv``, hypervolume per
    value); with a noise baseline its curve on the front and the comparison at equal utility; front members tagged."""
    trend_keys, trend_metrics = preset.label_keys, preset.trend_metrics
    table = summary.trials.assign(pareto_front=summary.front)
    groups = group_fronts(summary, axes, preset) if summary.front.any() else []
    noise = noise_points(client, parent_id, axes)
    compared = compare_front(summary.points, noise, axes)
    with tempfile.TemporaryDirectory() as tmp:
        if groups:
            log_group_fronts(client, parent_id, groups, summary.points, axes, Path(tmp))
        table.to_csv(Path(tmp) / "trials.csv", index=False)
        points = summary.points
        front = compared if not compared.empty else points[points["pareto_front"]] if not points.empty else points
        front.to_csv(Path(tmp) / "front.csv", index=False)
        if summary.spread:
            points.to_csv(Path(tmp) / "points.csv", index=False)
        if not noise.empty:
            noise.to_csv(Path(tmp) / "noise_baseline.csv", index=False)
        if summary.front.any():
            plot_front(points, axes, points["pareto_front"].to_numpy(), "name", Path(tmp) / "front.png",
                       baseline=(LABEL, noise) if not noise.empty else None)
        plot_trends(table, trend_keys, trend_metrics or tuple(a.metric for a in axes), Path(tmp) / "trends.png")
        for name in ("trials.csv", "front.csv", "points.csv", "noise_baseline.csv", "front.png", "trends.png"):
            if (Path(tmp) / name).exists():
                client.log_artifact(parent_id, str(Path(tmp) / name), artifact_path="front")
    for figure in preset.sweep_figures:
        SWEEP_FIGURES[figure](client, parent_id, table)
    metrics = {"front/size": float(summary.points["pareto_front"].sum()) if summary.front.any() else 0.0,
               "front/trials": float(len(table))}
    if summary.front.any():
        metrics |= {"front/hypervolume": summary.hypervolume, "front/hypervolume_normalised": summary.hypervolume_normalised}
        metrics |= summary.spread | group_metrics(groups)
    if not noise.empty:
        metrics |= comparison_metrics(compared, noise)
    step = len(client.get_metric_history(parent_id, "front/trials"))  # each recomputation is a new step
    tracking.log_metrics(client, parent_id, metrics, step=step)
    for run_id, on_front in zip(table["run_id"], table["pareto_front"], strict=True):
        client.set_tag(run_id, tracking.TAG_FRONT, "true" if on_front else "false")


def log_group_fronts(client: MlflowClient, parent_id: str, groups: list[GroupFront], points: pd.DataFrame,
                     axes: list[Axis], tmp: Path) -> None:
    """The per-value fronts on the parent run: ``front/front_by_<axis>.csv`` (every group's points, the shared ones
    in each group, with the group's value and front flag) and, for two groups or more, the figure beside the joint
    front ``front/front_by_<axis>.png``."""
    axis = groups[0].axis
    rows = pd.concat([g.points.assign(**{f"front_by/{axis}": g.value}) for g in groups], ignore_index=True)
    rows.to_csv(tmp / f"front_by_{axis}.csv", index=False)
    client.log_artifact(parent_id, str(tmp / f"front_by_{axis}.csv"), artifact_path="front")
    if len(groups) > 1:
        plot_fronts_by(groups, points, axes, tmp / f"front_by_{axis}.png")
        client.log_artifact(parent_id, str(tmp / f"front_by_{axis}.png"), artifact_path="front")


def noise_points(client: MlflowClient, parent_id: str, axes: list[Axis]) -> pd.DataFrame:
    """The sweep's noise-baseline points (``platform.noise_baseline``); empty when it ran none."""
    return baseline_points(baseline_table(client, client.get_run(parent_id).info.experiment_id, parent_id), axes)


def format_summary(summary: SweepSummary, axes: list[Axis], label_keys: tuple[str, ...]) -> str:
    """The trials table (front members starred) and the hypervolume, for the terminal."""
    if summary.trials.empty:
        return "no trials finished"
    cols = [c for c in (*label_keys, "status", *[a.metric for a in axes]) if c in summary.trials]
    shown = summary.trials[cols].copy()
    shown.insert(0, "front", summary.front.map({True: "*", False: ""}))
    lines = [shown.to_string(index=False, float_format=readable)]
    lines.append(f"Pareto front: {int(summary.front.sum())} of {len(shown)} trials (*); "
                 f"hypervolume {readable(summary.hypervolume)} (normalised {readable(summary.hypervolume_normalised)})")
    if summary.spread:
        lines.append(format_points(summary.points, axes, label_keys, summary.spread, summary.hypervolume))
    return "\n".join(lines)
