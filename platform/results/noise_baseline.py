"""The Gaussian-noise baseline beside an image sweep's front (docs/metrics.md#the-noise-baseline-on-the-front).

The noise trials (``platform.run.noise_grid``) are child runs of the sweep's parent with role ``baseline`` and tag
``putlab.baseline=noise``: the sweep's trials table, front and hypervolume never see them (they list role ``trial``
only). Read back here, they become the grey "Gaussian noise" curve of the front figure, and every front point is
compared with noise's privacy at equal (interpolated) utility.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from mlflow.tracking import MlflowClient

from platform.results import tracking
from platform.results.numbers import readable
from platform.results.pareto import Axis, pareto_mask
from platform.results.replicates import SEED, point_table
from search_spaces.noise import PRESET as NOISE

BASELINE = "noise"  # the value of tracking.TAG_BASELINE on the noise trials' runs
LABEL = "Gaussian noise"  # the curve's name on the front figure
AT_UTILITY = "noise/attack_at_utility"  # front.csv column: noise's privacy value at the point's utility
BEATS = "noise/beaten"  # front.csv column: 1 where the point is more private than noise at equal utility


def baseline_table(client: MlflowClient, exp_id: str, parent_id: str) -> pd.DataFrame:
    """One row per noise trial of the sweep: run id, name, status, σ (and seed) and latest metrics."""
    rows = []
    for run in tracking.baseline_runs(client, exp_id, parent_id, BASELINE):
        params = run.data.params
        row: dict[str, Any] = {"run_id": run.info.run_id, "name": run.info.run_name, "status": run.info.status}
        row |= {k: float(params[k]) for k in (*NOISE.label_keys, SEED) if k in params}
        rows.append(row | run.data.metrics)
    return pd.DataFrame(rows)


def baseline_points(table: pd.DataFrame, axes: list[Axis]) -> pd.DataFrame:
    """The finished noise trials as points (means over seeds), with their own Pareto front marked
    (``pareto_front``): the curve a mechanism must beat. Empty when none reports every axis."""
    if table.empty or "status" not in table or any(a.metric not in table for a in axes):
        return pd.DataFrame()
    usable = table[table["status"] == "FINISHED"].dropna(subset=[a.metric for a in axes])
    if usable.empty:
        return pd.DataFrame()
    points = point_table(usable, axes, (*NOISE.label_keys, SEED))
    points["pareto_front"] = pareto_mask(points, axes)
    return points


def attack_at_utility(utility: np.ndarray, noise: pd.DataFrame, axes: list[Axis]) -> np.ndarray:
    """Noise's privacy value (``axes[1]``) at each utility (``axes[0]``), linearly interpolated along the noise front.

    Below the least useful noise point it is that point's value (more noise would only be more private, so this is
    generous to the mechanism); beyond the most useful one it is NaN: noise does not reach that utility at all."""
    u_axis, p_axis = axes
    front = noise[noise["pareto_front"]] if "pareto_front" in noise else noise
    if front.empty:
        return np.full(len(utility), np.nan)
    goodness = -np.asarray(u_axis.to_min(front[u_axis.metric].to_numpy(dtype=float)))  # higher: more useful
    order = np.argsort(goodness, kind="stable")
    known, values = goodness[order], front[p_axis.metric].to_numpy(dtype=float)[order]
    query = -np.asarray(u_axis.to_min(np.asarray(utility, dtype=float)))
    return np.where(query > known[-1], np.nan, np.interp(query, known, values))


def compare_front(points: pd.DataFrame, noise: pd.DataFrame, axes: list[Axis]) -> pd.DataFrame:
    """The mechanism's front points with noise's privacy value at their utility (:data:`AT_UTILITY`) and whether
    they beat it (:data:`BEATS`: 1 more private than noise, 0 not, NaN where noise does not reach that utility)."""
    if points.empty or noise.empty:
        return pd.DataFrame()
    front = points[points["pareto_front"]].copy()
    u_axis, p_axis = axes
    at = attack_at_utility(front[u_axis.metric].to_numpy(dtype=float), noise, axes)
    mine = np.asarray(p_axis.to_min(front[p_axis.metric].to_numpy(dtype=float)))
    beats = np.where(np.isnan(at), np.nan, (mine < np.asarray(p_axis.to_min(at))).astype(float))
    return front.assign(**{AT_UTILITY: at, BEATS: beats})


def comparison_metrics(compared: pd.DataFrame, noise: pd.DataFrame) -> dict[str, float]:
    """``front/noise_trials`` and, where any front point has a noise value at its utility, ``front/beats_noise_share``
    (the share of those points more private than noise) and ``front/noise_compared`` (how many)."""
    metrics = {"front/noise_trials": float(len(noise))}
    beaten = compared[BEATS].dropna() if BEATS in compared else pd.Series(dtype=float)
    if len(beaten):
        metrics |= {"front/beats_noise_share": float(beaten.mean()), "front/noise_compared": float(len(beaten))}
    return metrics


def finished_trials(table: pd.DataFrame) -> int:
    """How many noise trials of a :func:`baseline_table` finished."""
    return int((table["status"] == "FINISHED").sum()) if "status" in table else 0


def format_comparison(compared: pd.DataFrame, noise: pd.DataFrame, axes: list[Axis], finished: int) -> str:
    """For the terminal: each front point's utility and privacy beside noise's privacy at that utility (``finished``:
    how many noise trials finished, said when none of them reports both axes)."""
    u_axis, p_axis = axes
    if noise.empty:
        return ("noise baseline: no finished noise trial" if not finished else
                f"noise baseline: {finished} noise trial{'s' if finished > 1 else ''} finished; none reports both "
                f"{u_axis.metric} and {p_axis.metric}, so there is no noise curve to compare")
    curve = ", ".join(f"σ={readable(r['sigma'])}: {readable(r[u_axis.metric])} / {readable(r[p_axis.metric])}"
                      for _, r in noise.sort_values("sigma").iterrows())
    lines = [f"noise baseline ({u_axis.metric} / {p_axis.metric}): {curve}"]
    for _, row in compared.iterrows():
        at = row[AT_UTILITY]
        verdict = ("noise does not reach this utility" if np.isnan(at) else
                   f"noise {readable(at)} → {'beats' if row[BEATS] == 1 else 'does NOT beat'} noise")
        lines.append(f"  {row['name']}: {readable(row[u_axis.metric])} / {readable(row[p_axis.metric])}; {verdict}")
    share = comparison_metrics(compared, noise).get("front/beats_noise_share")
    if share is not None:
        lines.append(f"front points more private than noise at equal utility: {readable(100 * share)} %")
    return "\n".join(lines)
