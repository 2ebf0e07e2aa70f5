"""The pictures of a sweep's summary: its front (with its baseline grid's curve and the imputation baseline's line),
the per-group fronts and the trends of its metrics over the grid's axes."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from platform.figures.front import plot_front, plot_fronts_by
from platform.figures.trends import plot_trends
from platform.results.pareto import Axis
from platform.results.summary import SweepSummary
from search_spaces import Preset


def baseline_curve(summary: SweepSummary) -> tuple[str, pd.DataFrame, str] | None:
    """What the front figure draws of the baseline: its title, its points and the axis its curve follows."""
    if summary.baseline is None or summary.curve.empty:
        return None
    return summary.baseline.title, summary.curve, summary.baseline.axis


def draw_summary(summary: SweepSummary, preset: Preset, folder: Path) -> list[Path]:
    """``front.png`` (when there is a front), ``front_by_<axis>.png`` (two groups or more) and ``trends.png`` in
    ``folder``; returns the files drawn."""
    axes = [Axis(**a) for a in preset.pareto_axes]
    points = summary.points
    drawn = []
    if len(summary.groups) > 1:
        drawn.append(folder / f"front_by_{summary.groups[0].axis}.png")
        plot_fronts_by(summary.groups, points, axes, drawn[-1])
    if summary.front.any():
        drawn.append(folder / "front.png")
        plot_front(points, axes, points["pareto_front"].to_numpy(), "name", drawn[-1],
                   baseline=baseline_curve(summary), imputation=summary.imputation)
    drawn.append(folder / "trends.png")
    plot_trends(summary.trials.assign(pareto_front=summary.front), preset.label_keys,
                preset.trend_metrics or tuple(a.metric for a in axes), drawn[-1])
    return [path for path in drawn if path.exists()]
