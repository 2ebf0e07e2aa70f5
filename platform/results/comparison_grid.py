"""The baseline presets' grids beside a sweep's front, as a preset asks with ``Preset.comparison_grids`` (amnist: Gaussian
noise, the stroke redraw and the digit prototype; docs/metrics.md#baselines-on-the-front).

Each baseline's trials (``platform.run.comparison_grid``) are child runs of the sweep's parent with role ``baseline``
and tag ``putlab.baseline=<its preset>``: the sweep's trials table, front and hypervolume never see them (they list
role ``trial`` only). Read back here, each baseline becomes a curve of the front figure, and every front point is
compared with it twice: at equal utility (the baseline's privacy, and its distortion where the front has a distortion
axis, interpolated along its front on the first two axes: the point beats the baseline when it is more private and no
more distorted), and by dominance on every axis (a baseline point at least as good on all of them and better on one
dominates the front point, which is flagged with the name of every such point). Stored names carry the baseline
preset's name (for ``noise``: ``front/beats_noise_share``, ``noise/attack_at_utility``, ``noise/psnr_at_utility``,
``noise/dominated_by``, ``front/noise_baseline.csv``).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.image_quality import with_psnr_of_mse
from core.numbers import readable
from core.pareto_axis import Axis
from platform.results import tracking
from platform.results.pareto import dominating, pareto_mask
from platform.results.replicates import SEED, point_table
from platform.results.store import Store
from search_spaces import Preset, presets

BASELINE = "baseline"  # the column naming each trial's baseline in SweepSummary.comparison_trials
REUSED_FROM = "reused_from"  # the column naming the sweep a trial was reused from ("" where it ran in this sweep)


@dataclass(frozen=True)
class ComparisonGrid:
    """A baseline preset a sweep runs beside its own grid, and the names its results are stored under."""

    preset: Preset

    @classmethod
    def all(cls, preset: Preset) -> tuple[ComparisonGrid, ...]:
        """The baselines ``preset`` asks for (``Preset.comparison_grids``), in its order; none without."""
        known = presets()
        return tuple(cls(known[name]) for name in preset.comparison_grids)

    @property
    def name(self) -> str:
        """The baseline preset's name: its runs' ``putlab.baseline`` tag and the prefix of its stored names."""
        return self.preset.name

    @property
    def title(self) -> str:
        """Its curve's name on the front figure."""
        return self.preset.presentation.title or self.preset.name

    @property
    def axis(self) -> str:
        """The grid axis its curve follows on the front figure (its preset's first label key, e.g. σ)."""
        return self.preset.label_keys[0]

    @property
    def param(self) -> str:
        """The parent run's param saying whether the sweep runs the baseline."""
        return f"{self.name}_baseline"

    @property
    def at_utility(self) -> str:
        """front.csv column: the baseline's privacy value at the point's utility."""
        return f"{self.name}/attack_at_utility"

    def at(self, axis: Axis) -> str:
        """front.csv column: the baseline's value of ``axis`` at the point's utility (``noise/psnr_at_utility``)."""
        return f"{self.name}/{axis.metric.rsplit('/', 1)[-1]}_at_utility"

    @property
    def beats(self) -> str:
        """front.csv column: 1 where the point is more private than the baseline at equal utility and no more
        distorted, 0 where not, empty where the baseline does not reach its utility."""
        return f"{self.name}/beaten"

    @property
    def dominated_by(self) -> str:
        """front.csv column: the baseline's points that dominate the point on every axis ("; "-separated names)."""
        return f"{self.name}/dominated_by"


@dataclass(frozen=True)
class ComparisonCurve:
    """One baseline beside a sweep: its trials (one row each), its points (means over seeds, empty when no trial
    reports every axis) and, of those, the ones on its front on the first two axes (what :func:`beside` interpolates
    along)."""

    grid: ComparisonGrid
    trials: pd.DataFrame
    points: pd.DataFrame
    plane_front: pd.DataFrame

    @property
    def finished(self) -> int:
        """How many of its trials finished (the terminal says so when none reports every axis)."""
        return int((self.trials["status"] == "FINISHED").sum()) if "status" in self.trials else 0

    @property
    def reuse_note(self) -> str:
        """Which of its trials were reused from an earlier sweep (``platform.run.grid_reuse``), e.g. '2 of 2 noise
        trials reused from sweep amnist-smoke-...: sigma=0, sigma=1'; "" when none was."""
        if REUSED_FROM not in self.trials:
            return ""
        reused = self.trials[self.trials[REUSED_FROM] != ""]
        if reused.empty:
            return ""
        name, sweeps = self.grid.name, ", ".join(sorted(set(reused[REUSED_FROM])))
        total = len(self.trials)
        return (f"{len(reused)} of {total} {name} trial{'s' if total > 1 else ''} reused from sweep {sweeps} (same "
                f"content key: data, seed, farm and code): {', '.join(sorted(map(str, reused['name'])))}")


def comparison_grid_table(store: Store, exp_id: str, parent_id: str, baseline: ComparisonGrid) -> pd.DataFrame:
    """One row per baseline trial of the sweep: run id, name, status, the sweep it was reused from ("" where it ran in
    this one), its grid's axes (and seed), latest metrics."""
    rows = []
    for run in store.baseline_runs(exp_id, parent_id, baseline.name):
        params = run.data.params
        row: dict[str, Any] = {"run_id": run.info.run_id, "name": run.info.run_name, "status": run.info.status,
                               REUSED_FROM: run.data.tags.get(tracking.TAG_REUSED_SWEEP, "")}
        row |= {k: float(params[k]) for k in (*baseline.preset.label_keys, SEED) if k in params}
        rows.append(row | with_psnr_of_mse(run.data.metrics))
    return pd.DataFrame(rows)


def comparison_grid_points(table: pd.DataFrame, axes: list[Axis], baseline: ComparisonGrid) -> pd.DataFrame:
    """The finished baseline trials as points (means over seeds), with their own Pareto front marked
    (``pareto_front``, on every axis) and the sweeps their trials were reused from (``reused_from``, "" for none):
    the curve a mechanism must beat. Empty when none reports every axis."""
    if table.empty or "status" not in table or any(a.metric not in table for a in axes):
        return pd.DataFrame()
    usable = table[table["status"] == "FINISHED"].dropna(subset=[a.metric for a in axes])
    if usable.empty:
        return pd.DataFrame()
    points = point_table(usable, axes, (*baseline.preset.label_keys, SEED))
    points["pareto_front"] = pareto_mask(points, axes)
    if REUSED_FROM in usable:
        sweep_of = dict(zip(usable["run_id"], usable[REUSED_FROM], strict=True))
        points[REUSED_FROM] = [" ".join(sorted({sweep_of[i] for i in ids.split()} - {""})) for ids in points["run_ids"]]
    return points


def curve_of(trials: pd.DataFrame, baseline: ComparisonGrid, axes: list[Axis]) -> ComparisonCurve:
    """The baseline's trials (:func:`comparison_grid_table`'s rows), its points, and their front on the first two
    axes."""
    points = comparison_grid_points(trials, axes, baseline)
    plane_front = points[pareto_mask(points, axes[:2])] if not points.empty else points
    return ComparisonCurve(baseline, trials, points, plane_front)


def attack_at_utility(utility: np.ndarray, curve: pd.DataFrame, axes: Sequence[Axis]) -> np.ndarray:
    """The baseline's privacy value (``axes[1]``) at each utility (``axes[0]``), linearly interpolated along its front
    on those two axes.

    Outside its front's range, below its least useful point or beyond its most useful one, it is NaN: the baseline
    does not reach that utility, so nothing is compared there (its least useful point's value would only bound the
    baseline's privacy there from above, and a release collapsed to chance would beat it)."""
    return value_at_utility(utility, curve, axes, axes[1])


def value_at_utility(utility: np.ndarray, curve: pd.DataFrame, axes: Sequence[Axis], axis: Axis) -> np.ndarray:
    """The baseline's value of ``axis`` at each utility (``axes[0]``), interpolated along its front on the first two
    axes as :func:`attack_at_utility` does."""
    return _value_along(utility, curve[pareto_mask(curve, axes[:2])] if not curve.empty else curve, axes, axis)


def _value_along(utility: np.ndarray, front: pd.DataFrame, axes: Sequence[Axis], axis: Axis) -> np.ndarray:
    """:func:`value_at_utility` along the baseline's ``front`` on the first two axes, already found."""
    u_axis = axes[0]
    if front.empty:
        return np.full(len(utility), np.nan)
    goodness = -np.asarray(u_axis.to_min(front[u_axis.metric].to_numpy(dtype=float)))  # higher: more useful
    order = np.argsort(goodness, kind="stable")
    known, values = goodness[order], front[axis.metric].to_numpy(dtype=float)[order]
    query = -np.asarray(u_axis.to_min(np.asarray(utility, dtype=float)))
    return np.where((query > known[-1]) | (query < known[0]), np.nan, np.interp(query, known, values))


def dominated_by(points: pd.DataFrame, curve: pd.DataFrame, axes: Sequence[Axis]) -> list[str]:
    """For each row of ``points``, the names of the ``curve`` points that dominate it on every axis, "; "-separated
    ("" where none does)."""
    matrix = dominating(curve, points, axes)
    names = curve["name"].astype(str).to_numpy() if "name" in curve else curve.index.astype(str).to_numpy()
    return ["; ".join(names[row]) for row in matrix.T]


def compare_all(points: pd.DataFrame, curves: Sequence[ComparisonCurve], axes: list[Axis]) -> pd.DataFrame:
    """The mechanism's front points beside every baseline that has points (:func:`beside`'s columns for each); empty
    when there are no front points or no such baseline."""
    with_points = [c for c in curves if not c.points.empty]
    if points.empty or not with_points:
        return pd.DataFrame()
    front = points[points["pareto_front"]] if "pareto_front" in points else points
    for curve in with_points:
        front = front.assign(**beside(front, curve, axes))
    return front


def beside(front: pd.DataFrame, curve: ComparisonCurve, axes: list[Axis]) -> dict[str, Any]:
    """The columns comparing ``front``'s points with a baseline's ``curve``: its privacy value at their utility
    (``baseline.at_utility``) and, for each further axis (the distortion), its value there too
    (``baseline.at(axis)``); its points that dominate them on every axis (``baseline.dominated_by``); and whether they
    beat it (``baseline.beats``: 1 strictly more private at equal utility and at least as good on every further axis
    there, 0 not, NaN where the baseline does not reach that utility). A point some baseline point dominates never
    beats it: that point's utility is at least the front point's, so the baseline at the front point's utility is at
    least as private."""
    baseline = curve.grid
    u_axis, p_axis = axes[:2]
    utility = front[u_axis.metric].to_numpy(dtype=float)
    columns: dict[str, Any] = {}
    better = np.ones(len(front), dtype=bool)
    for i, axis in enumerate(axes[1:]):
        at = _value_along(utility, curve.plane_front, axes, axis)
        mine, theirs = (np.asarray(axis.to_min(v)) for v in (front[axis.metric].to_numpy(dtype=float), at))
        better &= (mine < theirs) if i == 0 else (mine <= theirs)  # more private; no more distorted
        columns[baseline.at_utility if axis is p_axis else baseline.at(axis)] = at
    reached = ~np.isnan(columns[baseline.at_utility])
    columns[baseline.beats] = np.where(reached, better.astype(float), np.nan)
    columns[baseline.dominated_by] = dominated_by(front, curve.points, axes)
    return columns


def comparison_metrics(compared: pd.DataFrame, curve: ComparisonCurve) -> dict[str, float]:
    """``front/<baseline>_trials`` (its points), ``front/dominated_by_<baseline>`` (front points some point of it
    dominates) and, where any front point has a baseline value at its utility, ``front/beats_<baseline>_share`` (the
    share of those points that beat it, ``beside``) and ``front/<baseline>_compared``."""
    baseline = curve.grid
    name = baseline.name
    metrics = {f"front/{name}_trials": float(len(curve.points))}
    if baseline.dominated_by in compared:
        metrics[f"front/dominated_by_{name}"] = float((compared[baseline.dominated_by] != "").sum())
    beaten = compared[baseline.beats].dropna() if baseline.beats in compared else pd.Series(dtype=float)
    if len(beaten):
        metrics |= {f"front/beats_{name}_share": float(beaten.mean()), f"front/{name}_compared": float(len(beaten))}
    return metrics


def point_text(row: pd.Series, axes: Sequence[Axis]) -> str:
    """A point's values on the axes, e.g. ``0.95 / 0.83 / 16.1``."""
    return " / ".join(readable(row[a.metric]) for a in axes)


def outside_line(row: pd.Series, curve: ComparisonCurve, u_axis: Axis) -> str:
    """Why a front point has no baseline value at its utility: its utility lies above or below every point of the
    baseline's front on the first two axes (one point, or two, span no range to interpolate in)."""
    name, values = curve.grid.name, curve.plane_front[u_axis.metric].astype(float)
    mine = float(np.asarray(u_axis.to_min(row[u_axis.metric])))
    if mine < float(np.asarray(u_axis.to_min(values)).min()):
        best = values.max() if u_axis.higher_is_better else values.min()
        return (f"no {name} point reaches this {u_axis.metric} (its best reads {readable(best)}): nothing to compare "
                f"at equal {u_axis.metric}")
    worst = values.min() if u_axis.higher_is_better else values.max()
    return (f"every {name} point has more {u_axis.metric} than this one (the least reads {readable(worst)}): nothing "
            f"to compare at equal {u_axis.metric}")


def format_comparison(compared: pd.DataFrame, curve: ComparisonCurve, axes: list[Axis]) -> str:
    """For the terminal: the baseline's points, then each front point's values beside the baseline's privacy at its
    utility, and every baseline point that dominates it."""
    baseline, points = curve.grid, curve.points
    u_axis, p_axis = axes[:2]
    name, keys = baseline.name, baseline.preset.label_keys
    shown_axes = " / ".join(a.metric for a in axes)
    if points.empty:
        return (f"{name} baseline: no finished {name} trial" if not curve.finished else
                f"{name} baseline: {curve.finished} {name} trial{'s' if curve.finished > 1 else ''} finished; none "
                f"reports every one of {', '.join(a.metric for a in axes)}, so there is no {name} curve to compare")
    order = [k for k in keys if k in points]
    shown = ", ".join(f"{' '.join(f'{k}={readable(r[k])}' for k in order)}: {point_text(r, axes)}"
                      for _, r in points.sort_values(order).iterrows())
    lines = [f"{name} baseline ({shown_axes}): {shown}", *filter(None, [curve.reuse_note])]
    by_name = points.set_index(points["name"].astype(str)) if "name" in points else points
    for _, row in compared.iterrows():
        at = row[baseline.at_utility]
        theirs = " / ".join(readable(row[baseline.at(a)]) for a in axes[2:])
        verdict = (outside_line(row, curve, u_axis) if np.isnan(at) else
                   f"{name} {' / '.join(filter(None, [readable(at), theirs]))} at this {u_axis.metric} → "
                   f"{'beats' if row[baseline.beats] == 1 else 'does NOT beat'} {name}")
        lines.append(f"  {row['name']}: {point_text(row, axes)}; {verdict}")
        for dominator in filter(None, str(row[baseline.dominated_by]).split("; ")):
            lines.append(f"    dominated by {name} {dominator}: {point_text(by_name.loc[dominator], axes)}")
    metrics = comparison_metrics(compared, curve)
    share = metrics.get(f"front/beats_{name}_share")
    if share is not None:
        further = "".join(f" and no worse on {a.metric}" for a in axes[2:])
        lines.append(f"front points more private than {name} at equal {u_axis.metric} ({p_axis.metric}){further}: "
                     f"{readable(100 * share)} %")
    if metrics.get(f"front/dominated_by_{name}"):
        lines.append(f"front points dominated by a {name} point on every axis: "
                     f"{int(metrics[f'front/dominated_by_{name}'])} of {len(compared)}")
    return "\n".join(lines)
