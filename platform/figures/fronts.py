"""Several fronts on one figure: sweeps overlaid (``platform.compare``), and one front per value of a grid axis with the
joint front over them (a preset's ``Front.by``, e.g. one per α), each sweep or group in its own colour.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from core.pareto_axis import Axis
from platform.figures.figure_parts import (
    CHANCE,
    SYMBOLS,
    axis_label,
    band_note,
    draw_bands,
    finish,
    new_figure,
    point_labels,
    save_png,
    short_labels,
)
from platform.figures.labels import PointLabel
from platform.results.front_groups import GroupFront, value_text
from platform.results.pareto import pareto_mask


def plot_fronts(sweeps: Sequence[tuple[str, pd.DataFrame, np.ndarray]], axes: Sequence[Axis], path: str | Path,
                label_col: str | None = None) -> Path:
    """Draw the overlaid fronts (``fronts_figure``) and save them as a PNG; returns the path written."""
    return save_png(fronts_figure(sweeps, axes, label_col), path)


def fronts_figure(sweeps: Sequence[tuple[str, pd.DataFrame, np.ndarray]], axes: Sequence[Axis],
                  label_col: str | None = None) -> Figure:
    """Several sweeps' fronts on the same axes (``draw_fronts``), their legend and labels placed (``finish``)."""
    fig, ax = new_figure()
    finish(fig, ax, draw_fronts(ax, sweeps, axes, label_col))
    return fig


def draw_fronts(ax: Axes, sweeps: Sequence[tuple[str, pd.DataFrame, np.ndarray]], axes: Sequence[Axis],
                label_col: str | None = None) -> list[PointLabel]:
    """Several sweeps' trials (faint) and fronts (step lines) on the same two axes, one colour per sweep; front points
    get error bars where the tables have band columns. Given more axes, the fronts drawn are those of the first two (a
    staircase is a two-axis front), and the title says so. Returns every sweep's front points' labels from
    ``label_col`` in their sweep's colour (none without), to be placed in one pass, so they avoid each other too."""
    plane = len(axes) > 2
    if plane:
        axes = axes[:2]
        sweeps = [(label, df, pareto_mask(df, axes)) for label, df, _ in sweeps]
    ax_x, ax_y = axes
    labels: list[PointLabel] = []
    for i, (label, df, mask) in enumerate(sweeps):
        colour = f"C{i}"
        x = df[ax_x.metric].to_numpy(dtype=float, na_value=np.nan)
        y = df[ax_y.metric].to_numpy(dtype=float, na_value=np.nan)
        ax.scatter(x, y, s=12, color=colour, alpha=0.3, zorder=1)
        order = np.argsort(ax_x.to_min(x[mask]), kind="stable")
        ax.step(x[mask][order], y[mask][order], where="post", color=colour, linewidth=1.5, zorder=2)
        ax.scatter(x[mask][order], y[mask][order], s=30, color=colour, edgecolor="black", label=label, zorder=3)
        draw_bands(ax, df, axes, np.asarray(mask, dtype=bool), colour)
        if label_col is not None:
            labels += point_labels(x[mask], y[mask], df[label_col].to_numpy()[mask], [colour] * int(np.sum(mask)))
    notes = ["fronts on these two axes alone"] if plane else []
    ax.set_title("; ".join([*notes, *filter(None, [band_note([df for _, df, _ in sweeps])])]), fontsize=8)
    if ax_y.ideal == CHANCE:
        ax.axhline(CHANCE, color="tab:red", linestyle="--", linewidth=1, label="chance (0.5)")
    ax.set_xlabel(axis_label(ax_x))
    ax.set_ylabel(axis_label(ax_y))
    ax.grid(True, alpha=0.3)
    return labels


def plot_fronts_by(groups: Sequence[GroupFront], joint: pd.DataFrame, axes: Sequence[Axis], path: str | Path) -> Path:
    """Draw one front per group (``fronts_by_figure``) and save it as a PNG; returns the path written."""
    return save_png(fronts_by_figure(groups, joint, axes), path)


def fronts_by_figure(groups: Sequence[GroupFront], joint: pd.DataFrame, axes: Sequence[Axis]) -> Figure:
    """Each group's points and front in its own colour (``draw_fronts``), labelled by the other axes (a point shared
    by every group, such as the λ = 0 anchor, once), and the joint front ``joint`` (its points, on the first two axes:
    ``SweepSummary.plane_front``) dashed in black over them; with more than two axes, every front on the first two."""
    if not groups:
        raise ValueError("fronts_by_figure needs at least one group")
    symbol = SYMBOLS.get(groups[0].axis, groups[0].axis)
    own_token = re.compile(rf"\s*\b{re.escape(groups[0].axis)}=\S+")
    names = [str(name) for group in groups for name in group.points["name"]]
    short = dict(zip(names, short_labels([own_token.sub("", name).strip() for name in names]), strict=True))
    labelled: set[str] = set()
    sweeps = []
    for group in groups:
        df = group.points.copy()
        df["label"] = [short[str(name)] if str(name) not in labelled else "" for name in df["name"]]
        labelled |= {str(name) for name in df["name"]}
        sweeps.append((f"{symbol} = {value_text(group.value)}", df, df["pareto_front"].to_numpy(dtype=bool)))
    fig, ax = new_figure()
    labels = draw_fronts(ax, sweeps, axes, "label")
    if not joint.empty:
        ax_x, ax_y = axes[:2]
        on = joint.iloc[np.argsort(ax_x.to_min(joint[ax_x.metric].to_numpy(dtype=float)), kind="stable")]
        ax.step(on[ax_x.metric], on[ax_y.metric], where="post", color="black", linestyle="--", linewidth=1,
                label="joint front", zorder=2.5)
    ax.set_title(f"one front per {symbol}" + (f"; {ax.get_title()}" if ax.get_title() else ""), fontsize=8)
    finish(fig, ax, labels)
    return fig
