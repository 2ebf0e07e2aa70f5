"""Trend plots of a sweep: each metric against each grid axis, averaged over the other axes.

One panel per (metric, axis); axis values sit at evenly spaced positions labelled with their values,
so log-spaced grids and α = ∞ plot cleanly; the legend sits under the panels, covering none. Plotting only: the
numbers come from the trials table.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from core.legends import legend_below
from core.numbers import readable


def trend_table(table: pd.DataFrame, key: str, metric: str) -> pd.DataFrame:
    """Mean, min and max of ``metric`` per value of grid axis ``key`` over finished trials (every row when the table
    has no ``status`` column)."""
    finished = table[table["status"] == "FINISHED"] if "status" in table else table
    usable = finished.dropna(subset=[key, metric])
    return usable.groupby(key)[metric].agg(["mean", "min", "max"]).sort_index()


def _tick(value: float) -> str:
    return "∞" if math.isinf(value) else readable(value)


def plot_trends(table: pd.DataFrame, keys: Sequence[str], metrics: Sequence[str], path: str | Path) -> Path | None:
    """PNG of every metric against every axis that varies; None when no axis varies."""
    keys = [k for k in keys if k in table and table[k].nunique() > 1]
    metrics = [m for m in metrics if m in table]
    if not keys or not metrics:
        return None
    fig = Figure(figsize=(3.2 * len(keys), 2.6 * len(metrics)))
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(metrics), len(keys), squeeze=False)
    for row, metric in enumerate(metrics):
        for col, key in enumerate(keys):
            ax = axes[row][col]
            trend = trend_table(table, key, metric)
            positions = range(len(trend))
            ax.plot(positions, trend["mean"], marker="o", color="tab:blue", label="mean over other axes")
            ax.fill_between(positions, trend["min"], trend["max"], color="tab:blue", alpha=0.15, label="min–max")
            ax.set_xticks(list(positions), [_tick(v) for v in trend.index])
            if (trend["min"] > 0).all() and trend["max"].max() > 100 * trend["min"].min():
                ax.set_yscale("log")  # e.g. KL leakage spans orders of magnitude
            ax.set_xlabel(key)
            ax.grid(alpha=0.3)
            if col == 0:
                ax.set_ylabel(metric, fontsize=8)
    legend_below(axes[-1][0], 7)  # one legend for every panel, under the first of the last row
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return Path(path)
