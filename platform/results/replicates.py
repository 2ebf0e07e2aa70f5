"""Replicates over seeds: per-point means and bands, and the per-point table the terminal shows with the front's spread.

A *point* is a trial's configuration without its seed (the preset's label keys other than ``seed``); the trials of
one point differ only in the seed. Pure computation on the trials table (one row per trial), no MLflow, no plotting.

Bands (the error bars of the front plot): with more than one seed, the point's mean ± one sample standard deviation
(ddof = 1) over its seeds; with one seed, the 95 % interval the trial logged as ``<metric>/ci_low|ci_high``.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.pareto_axis import Axis

SEED = "seed"
_SEED_IN_NAME = re.compile(rf"\s*\b{SEED}=\S+")


def without_seed(name: str) -> str:
    """A trial's name without its ``seed=...`` label: the name of its point."""
    return _SEED_IN_NAME.sub("", name)


def band_columns(metric: str) -> tuple[str, str]:
    """Columns of a point table holding the lower and upper end of ``metric``'s error bar."""
    return f"{metric}/band_low", f"{metric}/band_high"


def point_keys(trials: pd.DataFrame, label_keys: Sequence[str]) -> list[str]:
    """The label keys that name a point: every one but the seed, as far as the table has them."""
    return [k for k in label_keys if k != SEED and k in trials]


def replicated(trials: pd.DataFrame) -> bool:
    """Whether the trials span more than one seed."""
    return SEED in trials and trials[SEED].nunique() > 1


def point_index(trials: pd.DataFrame, label_keys: Sequence[str]) -> np.ndarray:
    """For each trial row, the row of its point in ``point_table`` (same keys, same order)."""
    keys = point_keys(trials, label_keys)
    if not keys:
        return np.arange(len(trials))
    return trials.groupby(keys, dropna=False, sort=True).ngroup().to_numpy()


def point_table(trials: pd.DataFrame, axes: Sequence[Axis], label_keys: Sequence[str]) -> pd.DataFrame:
    """One row per point: its keys and name, how many seeds it has (and which), the mean over seeds of every
    numeric metric (the logged ``ci_low``/``ci_high`` included), and per axis the std/min/max over seeds and the
    band ``<metric>/band_low|band_high`` (see the module docstring). Rows follow ``point_index``."""
    keys = point_keys(trials, label_keys)
    metrics = [c for c in trials.select_dtypes("number").columns if c not in (*keys, SEED)]
    index = point_index(trials, label_keys)
    rows = []
    for i in range(index.max() + 1 if len(index) else 0):
        group = trials[index == i]
        row: dict = {k: group[k].iloc[0] for k in keys}
        if "name" in group:
            row["name"] = without_seed(str(group["name"].iloc[0]))
        row["n_seeds"] = len(group)
        if SEED in group:
            row["seeds"] = " ".join(f"{s:g}" for s in group[SEED])
        if "run_id" in group:
            row["run_ids"] = " ".join(group["run_id"])
        row |= group[metrics].mean().to_dict()
        for axis in axes:
            row |= _axis_spread(group, axis.metric, row)
        rows.append(row)
    return pd.DataFrame(rows)


def _axis_spread(group: pd.DataFrame, metric: str, row: dict) -> dict[str, float]:
    """Std, min, max over the group's seeds and the band of one axis."""
    values = group[metric].astype(float)
    low, high = band_columns(metric)
    out = {f"{metric}/std": float("nan"), f"{metric}/min": values.min(), f"{metric}/max": values.max()}
    if values.count() > 1:
        std = float(values.std(ddof=1))
        out |= {f"{metric}/std": std, low: row[metric] - std, high: row[metric] + std}
    else:
        out |= {low: row.get(f"{metric}/ci_low", float("nan")), high: row.get(f"{metric}/ci_high", float("nan"))}
    return out


def _cell(row: pd.Series, metric: str) -> str:
    """A point's value for the terminal: mean ± std over its seeds, or with one seed the value and its band."""
    low, high = band_columns(metric)
    if row["n_seeds"] > 1:
        return f"{row[metric]:.3f} ± {row[f'{metric}/std']:.3f}"
    if np.isfinite(row[low]) and np.isfinite(row[high]):
        return f"{row[metric]:.3f} [{row[low]:.3f}, {row[high]:.3f}]"
    return f"{row[metric]:.3f}"


def format_points(points: pd.DataFrame, axes: Sequence[Axis], label_keys: Sequence[str], spread: dict[str, float],
                  hypervolume_mean: float) -> str:
    """The per-point table (mean ± std over seeds, front members starred) and the hypervolume's spread, for the terminal."""
    keys = [k for k in label_keys if k != SEED and k in points]
    shown = points[keys + ["n_seeds"]].copy()
    shown.insert(0, "front", points["pareto_front"].map({True: "*", False: ""}))
    for axis in axes:
        shown[axis.metric] = [_cell(row, axis.metric) for _, row in points.iterrows()]
    per_seed = ", ".join(f"{k.rsplit('_', 1)[1]}: {v:.4f}" for k, v in spread.items()
                         if k.startswith("front/hypervolume/seed_"))
    return "\n".join([
        f"per point over {int(spread['front/seeds'])} seeds (mean ± sample std; a point with one seed: [95 % interval]):",
        shown.to_string(index=False),
        f"hypervolume over seeds: mean ± std {hypervolume_mean:.4f} ± {spread['front/hypervolume/std']:.4f}"
        f" (min {spread['front/hypervolume/min']:.4f}, max {spread['front/hypervolume/max']:.4f}; per seed {per_seed});"
        f" of the per-point means {spread['front/hypervolume/of_means']:.4f}",
    ])
