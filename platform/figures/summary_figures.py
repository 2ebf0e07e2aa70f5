"""The pictures of a sweep's summary: its front (with its comparison grids' curves and the imputation attacker's line;
with a distortion axis, coloured by distortion band, and the two-axis view beside it), the per-group fronts and the
trends of its metrics over the grid's axes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from platform.figures.front import plot_front
from platform.figures.fronts import plot_fronts_by
from platform.figures.trends import plot_trends
from platform.results.summary import SweepSummary
from search_spaces import Preset


def comparison_curves(summary: SweepSummary) -> list[tuple[str, pd.DataFrame, str]]:
    """What the front figures draw of each baseline with points: its title, its points and the axis its curve follows."""
    return [(c.grid.title, c.points, c.grid.axis) for c in summary.comparisons if not c.points.empty]


def dominated(summary: SweepSummary) -> np.ndarray:
    """For each point of the summary, whether some baseline point dominates it on every axis (front points only: the
    comparison keeps the points' index)."""
    compared, found = summary.compared, np.zeros(len(summary.points), dtype=bool)
    for column in (c.grid.dominated_by for c in summary.comparisons):
        if column in compared:
            found |= summary.points.index.isin(compared.index[compared[column] != ""])
    return found


def seed_trials(summary: SweepSummary) -> pd.DataFrame | None:
    """The trials the front figures draw one by one beside their points: all of them where some point averages more
    than one seed, else None (each point is then its one trial)."""
    points = summary.points
    return summary.trials if "n_seeds" in points and (points["n_seeds"] > 1).any() else None


def draw_summary(summary: SweepSummary, preset: Preset, folder: Path) -> list[Path]:
    """``front.png`` (when there is a front; with a distortion axis, coloured by band, and ``front_2d.png``, the
    two-axis view; each seed's trial drawn beside points that average seeds), ``front_by_<axis>.png`` (two groups or
    more) and ``trends.png`` in ``folder``; returns the files drawn."""
    axes, points = summary.axes, summary.points
    seeds = seed_trials(summary)
    drawn = []
    if len(summary.groups) > 1:
        drawn.append(folder / f"front_by_{summary.groups[0].axis}.png")
        plot_fronts_by(summary.groups, points[summary.plane_front], axes, drawn[-1])
    if summary.front.any():
        drawn.append(folder / "front.png")
        plot_front(points, axes, points["pareto_front"].to_numpy(), "name", drawn[-1],
                   baselines=comparison_curves(summary), imputation=summary.imputation, dominated=dominated(summary),
                   seeds=seeds)
        if len(axes) > 2:
            drawn.append(folder / "front_2d.png")
            plot_front(points, axes[:2], summary.plane_front.to_numpy(), "name", drawn[-1],
                       baselines=comparison_curves(summary), imputation=summary.imputation, seeds=seeds)
    drawn.append(folder / "trends.png")
    plot_trends(summary.trials.assign(pareto_front=summary.front), preset.label_keys,
                preset.presentation.trend_metrics or tuple(a.metric for a in axes), drawn[-1])
    return [path for path in drawn if path.exists()]
