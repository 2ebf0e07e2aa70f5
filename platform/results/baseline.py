"""A baseline preset's grid beside a sweep's front, as a preset asks with ``Preset.baseline`` (amnist: Gaussian
noise, docs/metrics.md#the-noise-baseline-on-the-front).

The baseline's trials (``platform.run.baseline_grid``) are child runs of the sweep's parent with role ``baseline``
and tag ``putlab.baseline=<its preset>``: the sweep's trials table, front and hypervolume never see them (they list
role ``trial`` only). Read back here, they become the grey curve of the front figure, and every front point is
compared with the baseline's privacy at equal (interpolated) utility. Stored names carry the baseline preset's name
(for ``noise``: ``front/beats_noise_share``, ``noise/attack_at_utility``, ``front/noise_baseline.csv``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from mlflow.tracking import MlflowClient

from platform.results import tracking
from platform.results.numbers import readable
from platform.results.pareto import Axis, pareto_mask
from platform.results.replicates import SEED, point_table
from search_spaces import Preset, presets


@dataclass(frozen=True)
class Baseline:
    """The baseline preset a sweep runs beside its own grid, and the names its results are stored under."""

    preset: Preset

    @classmethod
    def of(cls, preset: Preset) -> Baseline | None:
        """The baseline ``preset`` asks for (``Preset.baseline``), None without one."""
        return cls(presets()[preset.baseline]) if preset.baseline else None

    @property
    def name(self) -> str:
        """The baseline preset's name: its runs' ``putlab.baseline`` tag and the prefix of its stored names."""
        return self.preset.name

    @property
    def title(self) -> str:
        """Its curve's name on the front figure."""
        return self.preset.title or self.preset.name

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

    @property
    def beats(self) -> str:
        """front.csv column: 1 where the point is more private than the baseline at equal utility."""
        return f"{self.name}/beaten"


def baseline_table(client: MlflowClient, exp_id: str, parent_id: str, baseline: Baseline) -> pd.DataFrame:
    """One row per baseline trial of the sweep: run id, name, status, its grid's axes (and seed), latest metrics."""
    rows = []
    for run in tracking.baseline_runs(client, exp_id, parent_id, baseline.name):
        params = run.data.params
        row: dict[str, Any] = {"run_id": run.info.run_id, "name": run.info.run_name, "status": run.info.status}
        row |= {k: float(params[k]) for k in (*baseline.preset.label_keys, SEED) if k in params}
        rows.append(row | run.data.metrics)
    return pd.DataFrame(rows)


def baseline_points(table: pd.DataFrame, axes: list[Axis], baseline: Baseline) -> pd.DataFrame:
    """The finished baseline trials as points (means over seeds), with their own Pareto front marked
    (``pareto_front``): the curve a mechanism must beat. Empty when none reports every axis."""
    if table.empty or "status" not in table or any(a.metric not in table for a in axes):
        return pd.DataFrame()
    usable = table[table["status"] == "FINISHED"].dropna(subset=[a.metric for a in axes])
    if usable.empty:
        return pd.DataFrame()
    points = point_table(usable, axes, (*baseline.preset.label_keys, SEED))
    points["pareto_front"] = pareto_mask(points, axes)
    return points


def attack_at_utility(utility: np.ndarray, curve: pd.DataFrame, axes: list[Axis]) -> np.ndarray:
    """The baseline's privacy value (``axes[1]``) at each utility (``axes[0]``), linearly interpolated along its front.

    Below its least useful point it is that point's value (a baseline such as noise only gets more private as it
    loses utility, so this is generous to the mechanism); beyond its most useful one it is NaN: the baseline does not
    reach that utility at all."""
    u_axis, p_axis = axes
    front = curve[curve["pareto_front"]] if "pareto_front" in curve else curve
    if front.empty:
        return np.full(len(utility), np.nan)
    goodness = -np.asarray(u_axis.to_min(front[u_axis.metric].to_numpy(dtype=float)))  # higher: more useful
    order = np.argsort(goodness, kind="stable")
    known, values = goodness[order], front[p_axis.metric].to_numpy(dtype=float)[order]
    query = -np.asarray(u_axis.to_min(np.asarray(utility, dtype=float)))
    return np.where(query > known[-1], np.nan, np.interp(query, known, values))


def compare_front(points: pd.DataFrame, curve: pd.DataFrame, axes: list[Axis], baseline: Baseline) -> pd.DataFrame:
    """The mechanism's front points with the baseline's privacy value at their utility (``baseline.at_utility``) and
    whether they beat it (``baseline.beats``: 1 more private, 0 not, NaN where the baseline does not reach that
    utility)."""
    if points.empty or curve.empty:
        return pd.DataFrame()
    front = points[points["pareto_front"]].copy()
    u_axis, p_axis = axes
    at = attack_at_utility(front[u_axis.metric].to_numpy(dtype=float), curve, axes)
    mine = np.asarray(p_axis.to_min(front[p_axis.metric].to_numpy(dtype=float)))
    beats = np.where(np.isnan(at), np.nan, (mine < np.asarray(p_axis.to_min(at))).astype(float))
    return front.assign(**{baseline.at_utility: at, baseline.beats: beats})


def comparison_metrics(compared: pd.DataFrame, curve: pd.DataFrame, baseline: Baseline) -> dict[str, float]:
    """``front/<baseline>_trials`` (its points) and, where any front point has a baseline value at its utility,
    ``front/beats_<baseline>_share`` (the share of those points more private) and ``front/<baseline>_compared``."""
    name = baseline.name
    metrics = {f"front/{name}_trials": float(len(curve))}
    beaten = compared[baseline.beats].dropna() if baseline.beats in compared else pd.Series(dtype=float)
    if len(beaten):
        metrics |= {f"front/beats_{name}_share": float(beaten.mean()), f"front/{name}_compared": float(len(beaten))}
    return metrics


def finished_trials(table: pd.DataFrame) -> int:
    """How many baseline trials of a :func:`baseline_table` finished."""
    return int((table["status"] == "FINISHED").sum()) if "status" in table else 0


def format_comparison(compared: pd.DataFrame, curve: pd.DataFrame, axes: list[Axis], finished: int,
                      baseline: Baseline) -> str:
    """For the terminal: each front point's utility and privacy beside the baseline's privacy at that utility
    (``finished``: how many baseline trials finished, said when none of them reports both axes)."""
    u_axis, p_axis = axes
    name, keys = baseline.name, baseline.preset.label_keys
    if curve.empty:
        return (f"{name} baseline: no finished {name} trial" if not finished else
                f"{name} baseline: {finished} {name} trial{'s' if finished > 1 else ''} finished; none reports both "
                f"{u_axis.metric} and {p_axis.metric}, so there is no {name} curve to compare")
    shown = ", ".join(f"{' '.join(f'{k}={readable(r[k])}' for k in keys)}: {readable(r[u_axis.metric])} / "
                      f"{readable(r[p_axis.metric])}" for _, r in curve.sort_values(list(keys)).iterrows())
    lines = [f"{name} baseline ({u_axis.metric} / {p_axis.metric}): {shown}"]
    for _, row in compared.iterrows():
        at = row[baseline.at_utility]
        verdict = (f"{name} does not reach this utility" if np.isnan(at) else
                   f"{name} {readable(at)} → {'beats' if row[baseline.beats] == 1 else 'does NOT beat'} {name}")
        lines.append(f"  {row['name']}: {readable(row[u_axis.metric])} / {readable(row[p_axis.metric])}; {verdict}")
    share = comparison_metrics(compared, curve, baseline).get(f"front/beats_{name}_share")
    if share is not None:
        lines.append(f"front points more private than {name} at equal utility: {readable(100 * share)} %")
    return "\n".join(lines)
