"""A sweep's results as one :class:`SweepSummary`: its trials, the Pareto front over its points and the hypervolume (on
every axis of the preset, and on its first two alone), the per-group fronts, the comparison grids' comparisons and the
imputation attacker with each point's added leakage.
Every view (the terminal table, the parent run's metrics and CSVs, the HTML report, ``compare``, ``reproduction``)
reads this one object.

The table is read back from the MLflow child runs, so it covers every trial of the sweep,
including those finished before a ``--resume``, and can be rebuilt at any time.
"""
from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from core.image_quality import with_psnr_of_mse
from core.metric_names import CONFIDENT_SHARE, SATURATION, STRONGEST_ATTACK, STRONGEST_RECORDS, TOP_DECILE
from core.numbers import readable
from core.pareto_axis import Axis
from platform.results import tracking
from platform.results.baseline_hull import (
    BEYOND_SEEDS,
    MARGIN,
    TAG_HULL,
    Corners,
    beyond_by_seed,
    constant_corner,
    corners_of,
    hull_columns,
    hull_metrics,
    joined,
    unmixable,
    verdict,
)
from platform.results.comparison_grid import (
    BASELINE,
    ComparisonCurve,
    ComparisonGrid,
    compare_all,
    comparison_grid_table,
    comparison_metrics,
    curve_of,
)
from platform.results.front_groups import GroupFront, fronts_of, group_metrics
from platform.results.imputation import ADDED, TAG_SOURCE, Imputation, read_imputation
from platform.results.pareto import Volumes, hypervolume, pareto_mask, volumes_by
from platform.results.replicates import SEED, format_points, point_index, point_table, replicated
from platform.results.store import Store
from search_spaces import Preset

PRIVACY, RECORDS = STRONGEST_ATTACK, STRONGEST_RECORDS  # the farm's privacy axis and its data budget


@dataclass(frozen=True)
class SweepSummary:
    """All trials, the front's mask over them (a trial is on it when its point is), the front's hypervolume (raw and
    normalised; the mean over seeds), the per-point table (means over seeds, bands, ``pareto_front``) and the
    seed-to-seed spread (:func:`spread_metrics`; empty with one seed), all on ``axes``."""

    trials: pd.DataFrame
    front: pd.Series
    hypervolume: float
    hypervolume_normalised: float
    points: pd.DataFrame = field(default_factory=pd.DataFrame)
    spread: dict[str, float] = field(default_factory=dict)
    axes: list[Axis] = field(default_factory=list)  # the objectives of the front and hypervolume (``front_axes``)
    plane: tuple[float, float] = (float("nan"), float("nan"))  # the hypervolume on the first two axes (raw, normalised)
    groups: list[GroupFront] = field(default_factory=list)  # one front per value of the preset's ``front_by`` axis
    comparisons: tuple[ComparisonCurve, ...] = ()  # the preset's comparison grids (``Preset.comparison_grids``), their points
    compared: pd.DataFrame = field(default_factory=pd.DataFrame)  # the front beside every baseline
    imputation: Imputation | None = None  # the privacy axis's imputation attacker (points then hold ADDED)
    plane_front: pd.Series = field(default_factory=lambda: pd.Series(dtype=bool))  # the points' front on the first two axes
    hull: Corners | None = None  # the comparison points every per-record mix draws from (``compared`` holds the verdicts)

    @property
    def comparison_trials(self) -> pd.DataFrame:
        """Every baseline's trials, one row each, its baseline's name in :data:`~platform.results.comparison_grid.BASELINE`
        (what a reproduction row compares a mechanism with)."""
        tables = [c.trials.assign(**{BASELINE: c.grid.name}) for c in self.comparisons if not c.trials.empty]
        return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()

    @property
    def front_points(self) -> pd.DataFrame:
        """What ``front.csv`` holds: the front's points, with the baseline's privacy at their utility when it ran."""
        if not self.compared.empty:
            return self.compared
        return self.points[self.points["pareto_front"]] if not self.points.empty else self.points

    def metrics(self) -> dict[str, float]:
        """The parent run's ``front/*`` metrics: size, trials, hypervolume, seed spread, per-group and baseline figures."""
        metrics = {"front/size": float(self.points["pareto_front"].sum()) if self.front.any() else 0.0,
                   "front/trials": float(len(self.trials))}
        if self.front.any():
            metrics |= {"front/hypervolume": self.hypervolume, "front/hypervolume_normalised": self.hypervolume_normalised}
            if len(self.axes) > 2:  # the two-axis view's number beside the front's own
                metrics |= {"front/hypervolume_2d": self.plane[0], "front/hypervolume_2d_normalised": self.plane[1]}
            metrics |= self.spread | group_metrics(self.groups)
        for curve in self.comparisons:
            if not curve.points.empty:
                metrics |= comparison_metrics(self.compared, curve)
        if self.hull is not None:
            metrics |= hull_metrics(self.compared)
        added = self.front_points[ADDED].dropna() if ADDED in self.front_points else pd.Series(dtype=float)
        if len(added):
            metrics |= {"front/added_leakage_min": float(added.min()), "front/added_leakage_max": float(added.max())}
        return metrics


def trials_table(store: Store, exp_id: str, parent_id: str, label_keys: tuple[str, ...]) -> pd.DataFrame:
    """One row per child run: ids, status, search-axis params and latest metrics."""
    rows = []
    for run in store.child_runs(exp_id, parent_id):
        row = {
            "trial_id": run.data.tags.get(tracking.TAG_TRIAL),
            "run_id": run.info.run_id,
            "name": run.info.run_name,
            "status": run.info.status,
        }
        row.update({k: float(run.data.params[k]) for k in label_keys if k in run.data.params})
        if SEED in run.data.params and SEED not in row:
            row[SEED] = pd.to_numeric(run.data.params[SEED], errors="coerce")
        row.update(with_psnr_of_mse(run.data.metrics))
        rows.append(row)
    table = pd.DataFrame(rows)
    order = list(dict.fromkeys([*label_keys, SEED] if SEED in table else label_keys))
    return table.sort_values(order).reset_index(drop=True) if not table.empty else table


def front_axes(axes: list[Axis], table: pd.DataFrame) -> list[Axis]:
    """The axes a sweep's front is computed on: the preset's, less any axis past the first two that no trial of the
    table reports (a sweep logged before its preset gained the distortion axis keeps its two-axis front)."""
    return [a for i, a in enumerate(axes) if i < 2 or (a.metric in table and table[a.metric].notna().any())]


def usable_trials(table: pd.DataFrame, axes: list[Axis]) -> pd.DataFrame:
    """The finished trials that report every axis (what fronts and hypervolumes are computed on)."""
    usable = table[table["status"] == "FINISHED"] if "status" in table else table
    return usable.dropna(subset=[a.metric for a in axes if a.metric in usable]) if not usable.empty else usable


def spread_metrics(trials: pd.DataFrame, points: pd.DataFrame, axes: list[Axis], seeds: Volumes,
                   of_means: tuple[float, float]) -> dict[str, float]:
    """What the parent run logs about the seed-to-seed spread of trials over more than one seed, from each seed's
    hypervolume (``seeds``) and that of the front of per-point means (``of_means``, raw and normalised).

    ``front/seeds``, ``front/points``; per axis ``front/seed_std/<metric>`` (mean over points of the std over seeds)
    and ``.../max`` (the largest); for raw and normalised hypervolume: ``/std`` (ddof = 1), ``/min``, ``/max``,
    ``/seed_<s>`` for each seed and ``/of_means``.
    """
    out = {"front/seeds": float(trials[SEED].nunique()), "front/points": float(len(points))}
    for axis in axes:
        stds = points[f"{axis.metric}/std"].dropna()
        out[f"front/seed_std/{axis.metric}"] = float(stds.mean())
        out[f"front/seed_std/{axis.metric}/max"] = float(stds.max())
    for name, per_seed, means in (("front/hypervolume", seeds.raw, of_means[0]),
                                  ("front/hypervolume_normalised", seeds.normalised, of_means[1])):
        out |= {f"{name}/std": float(per_seed.std(ddof=1)), f"{name}/min": float(per_seed.min()),
                f"{name}/max": float(per_seed.max()), f"{name}/of_means": means}
        out |= {f"{name}/seed_{seed:g}": float(value) for seed, value in per_seed.items()}
    return out


def summarise(table: pd.DataFrame, axes: list[Axis], label_keys: tuple[str, ...] = ()) -> SweepSummary:
    """Front of the per-point means (over seeds) and hypervolume (mean over seeds) of the finished trials that report
    every axis; a point is a configuration of ``label_keys`` other than the seed."""
    return summarise_usable(table, usable_trials(table, axes), axes, label_keys)


def summarise_usable(table: pd.DataFrame, usable: pd.DataFrame, axes: list[Axis], label_keys: tuple[str, ...]) -> SweepSummary:
    """:func:`summarise` of ``table`` whose ``usable_trials`` are known already."""
    if usable.empty or any(a.metric not in usable for a in axes):
        return SweepSummary(table, pd.Series(False, index=table.index), float("nan"), float("nan"), axes=axes)
    index, seeds = point_index(usable, label_keys), replicated(usable)
    points = point_table(usable, axes, label_keys)
    points["pareto_front"] = pareto_mask(points, axes)
    plane_front = pd.Series(pareto_mask(points, axes[:2]), index=points.index)  # what the two-axis views draw
    full, plane = volumes_by(usable, axes, SEED), volumes_by(usable, axes[:2], SEED)
    spread: dict[str, float] = {}
    if seeds:  # the spread over seeds, beside the hypervolume of the front of per-point means
        of_means = (hypervolume(points, axes), hypervolume(points, axes, normalised=True))
        spread = spread_metrics(usable, points, axes, full, of_means)
    mask = pd.Series(False, index=table.index)
    mask[usable.index] = points["pareto_front"].to_numpy()[index]
    return SweepSummary(table, mask, float(full.raw.mean()), float(full.normalised.mean()), points, spread, axes,
                        (float(plane.raw.mean()), float(plane.normalised.mean())), plane_front=plane_front)


def read_summary(store: Store, parent_id: str, preset: Preset) -> SweepSummary:
    """The sweep's summary, read from its child runs once (:func:`summary_of` its trials and baselines' trials)."""
    parent = store.run(parent_id)
    exp_id = parent.info.experiment_id
    table = trials_table(store, exp_id, parent_id, preset.label_keys)
    baselines = {grid.name: comparison_grid_table(store, exp_id, parent_id, grid) for grid in ComparisonGrid.all(preset)}
    return summary_of(table, baselines, preset, parent.data.metrics)


def summary_of(table: pd.DataFrame, baselines: Mapping[str, pd.DataFrame], preset: Preset,
               parent_metrics: Mapping[str, float]) -> SweepSummary:
    """A sweep's summary from its trials (over the preset's ``label_keys``: a point is a configuration over seeds),
    each comparison grid's trials by name and the parent's metrics: the front and hypervolume on :func:`front_axes`,
    the imputation attacker, the per-group fronts and the baselines' comparisons."""
    axes = front_axes(list(preset.front.axes), table)
    usable = usable_trials(table, axes)
    summary = summarise_usable(table, usable, axes, preset.label_keys)
    summary = with_imputation(summary, read_imputation(parent_metrics, axes))
    summary = replace(summary, groups=fronts_of(preset, usable, summary.points, axes) if summary.front.any() else [])
    curves = tuple(curve_of(baselines.get(grid.name, pd.DataFrame()), grid, axes) for grid in ComparisonGrid.all(preset))
    summary = replace(summary, comparisons=curves, compared=compare_all(summary.points, curves, axes))
    return with_hull(summary, usable, parent_metrics)


def with_hull(summary: SweepSummary, usable: pd.DataFrame, parent_metrics: Mapping[str, float]) -> SweepSummary:
    """The summary with each compared front point's standing against the baselines' hull (``platform.results.
    baseline_hull``: margin, mix, at saturation, per seed), the constant release among its corners where the raw-data
    reference points logged it; unchanged without comparison points or where an axis does not mix linearly."""
    axes, compared = summary.axes, summary.compared
    if compared.empty or unmixable(axes):
        return summary
    constant = constant_corner(parent_metrics, axes)
    corners = joined(corners_of([(c.grid.name, c.points) for c in summary.comparisons if not c.points.empty], axes),
                     constant)
    if not corners.names:
        return summary
    compared = compared.assign(**hull_columns(compared, corners, axes))
    compared[BEYOND_SEEDS] = beyond_by_seed(compared, usable, [(c.grid.name, c.trials) for c in summary.comparisons],
                                            axes, constant)
    return replace(summary, compared=compared, hull=corners)


def with_imputation(summary: SweepSummary, imputation: Imputation | None) -> SweepSummary:
    """The summary with the privacy axis's imputation attacker, and each point's added leakage over it (:data:`ADDED`)."""
    if imputation is None:
        return summary
    points = summary.points
    if not points.empty:
        points = points.assign(**{ADDED: imputation.added(points)})
    return replace(summary, points=points, imputation=imputation)


def log_summary(store: Store, parent_id: str, summary: SweepSummary, figures: list[Path]) -> None:
    """The summary on the parent run: ``front/`` trials, front, points, per-group and baseline CSVs beside ``figures``
    (already drawn), the ``front/*`` metrics (each recomputation a new step), and front members tagged."""
    table = summary.trials.assign(pareto_front=summary.front)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        table.to_csv(folder / "trials.csv", index=False)
        summary.front_points.to_csv(folder / "front.csv", index=False)
        if summary.spread:
            summary.points.to_csv(folder / "points.csv", index=False)
        for curve in summary.comparisons:
            if not curve.points.empty:
                curve.points.to_csv(folder / f"{curve.grid.name}_baseline.csv", index=False)
        if summary.groups:
            axis = summary.groups[0].axis
            rows = pd.concat([g.points.assign(**{f"front_by/{axis}": g.value}) for g in summary.groups], ignore_index=True)
            rows.to_csv(folder / f"front_by_{axis}.csv", index=False)
        for path in [*sorted(folder.glob("*.csv")), *figures]:
            store.log_file(parent_id, path, "front")
    step = len(store.history(parent_id, "front/trials"))  # each recomputation is a new step
    store.log_metrics(parent_id, summary.metrics(), step=step)
    for run_id, on_front in zip(table["run_id"], table["pareto_front"], strict=True):
        store.set_tag(run_id, tracking.TAG_FRONT, "true" if on_front else "false")
    if summary.hull is not None:
        for _, row in summary.compared.iterrows():
            for run_id in str(row.get("run_ids", "")).split():
                store.set_tag(run_id, TAG_HULL, verdict(float(row[MARGIN])))
    if summary.imputation is not None:
        store.set_tag(parent_id, TAG_SOURCE, summary.imputation.source)


def saturation_note(trials: pd.DataFrame) -> str:
    """What the saturation column says, with the records the strongest attackers trained on."""
    records = trials[RECORDS].dropna().unique() if RECORDS in trials else []
    budget = f"the release of {', '.join(f'{r:,.0f}' for r in sorted(records))} records" if len(records) else "its records"
    return (f"{PRIVACY} is what the strongest attacker reached trained on {budget}: a lower bound on leakage. "
            "saturation: where it is heading with more released records (a power law fitted to its learning curve, "
            f"front points; its 95 % interval in {SATURATION}/ci_low and /ci_high)")


def format_summary(summary: SweepSummary, label_keys: tuple[str, ...]) -> str:
    """The trials table (front members starred) and the hypervolume, for the terminal."""
    if summary.trials.empty:
        return "no trials finished"
    axes = summary.axes
    cols = [c for c in (*label_keys, "status", *[a.metric for a in axes]) if c in summary.trials]
    shown = summary.trials[cols].copy()
    shown.insert(0, "front", summary.front.map({True: "*", False: ""}))
    if summary.imputation is not None:
        shown["added"] = summary.imputation.added(summary.trials)
    if SATURATION in summary.trials:
        shown["saturation"] = summary.trials[SATURATION]
    for view, column in ((TOP_DECILE, "top_decile"), (CONFIDENT_SHARE, "confident")):
        if view in summary.trials:
            shown[column] = summary.trials[view]
    lines = [shown.to_string(index=False, float_format=readable)]
    if SATURATION in summary.trials:
        lines.append(saturation_note(summary.trials))
    if TOP_DECILE in summary.trials:
        lines.append("top_decile: the strongest attacker's accuracy on the tenth of the records it is most sure of; "
                     "confident: the share of records it reads right with probability ≥ 0.9 (empty where it gives no "
                     "probabilities): a release that publishes some records as they are shows here, not in its average")
    lines.append(f"Pareto front: {int(summary.front.sum())} of {len(shown)} trials (*) on {len(axes)} objectives; "
                 f"hypervolume {readable(summary.hypervolume)} (normalised {readable(summary.hypervolume_normalised)})")
    if len(axes) > 2:
        lines.append(f"  on {axes[0].metric} and {axes[1].metric} alone: hypervolume {readable(summary.plane[0])} "
                     f"(normalised {readable(summary.plane[1])})")
    if summary.imputation is not None:
        lines.append(summary.imputation.line(summary.front_points) + " (column added)")
    if summary.spread:
        lines.append(format_points(summary.points, axes, label_keys, summary.spread, summary.hypervolume))
    return "\n".join(lines)
