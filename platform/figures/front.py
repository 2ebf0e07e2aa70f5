"""PNG of a sweep's privacy-utility front, logged as an artifact on the sweep's parent run.

A front of two axes is drawn on them; a front with a third, distortion axis (the image presets' PSNR of the mean
squared error) is drawn on its first two with every point coloured by its distortion band, so a point that keeps
utility and hides the secret only by wrecking the image (a class's mean image in place of each image) shows as such;
the same plane without the colours, the two-axis front's staircase on it, is the two-axis view. The legend sits outside
the axes, to their right, and the labels are moved off every point (``labels.place_labels``), so that neither covers a
point.

Uses ``matplotlib.figure.Figure`` with ``FigureCanvasAgg`` directly rather than ``pyplot``, so it
never changes the process-wide backend or keeps figures alive in pyplot's registry.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from core.legends import legend_right
from core.numbers import readable
from core.pareto_axis import Axis
from platform.figures.figure_parts import (
    BAND_COLOURS,
    CHANCE,
    LEGEND_SIZE,
    SYMBOLS,
    axis_label,
    band_colours,
    band_labels,
    band_note,
    draw_bands,
    finish,
    new_figure,
    point_labels,
    save_png,
)
from platform.figures.labels import PointLabel
from platform.results.imputation import Imputation
from platform.results.summary import PRIVACY, SATURATION

BASELINE_STYLES = (("s", "-"), ("^", "--"), ("D", ":"), ("v", "-."))  # (marker, line) of each baseline in turn


def plot_front(
    df: pd.DataFrame,
    axes: Sequence[Axis],
    front_mask: np.ndarray,
    label_col: str | None,
    path: str | Path,
    baselines: Sequence[tuple[str, pd.DataFrame, str]] = (),
    imputation: Imputation | None = None,
    dominated: np.ndarray | None = None,
    seeds: pd.DataFrame | None = None,
) -> Path:
    """Draw the front with what stands beside it (``sweep_front_figure``) and save it as a PNG; returns the path
    written."""
    return save_png(sweep_front_figure(df, axes, front_mask, label_col, baselines, imputation, dominated, seeds), path)


def sweep_front_figure(
    df: pd.DataFrame,
    axes: Sequence[Axis],
    front_mask: np.ndarray,
    label_col: str | None,
    baselines: Sequence[tuple[str, pd.DataFrame, str]] = (),
    imputation: Imputation | None = None,
    dominated: np.ndarray | None = None,
    seeds: pd.DataFrame | None = None,
) -> Figure:
    """The front as a sweep's summary draws it. Two axes: ``draw_front``; three: ``draw_distortion`` (``dominated``:
    the rows some baseline point dominates on every axis, crossed out). ``baselines``: for each comparison grid, (name,
    its point table, the axis its curve follows), drawn on the same axes (``draw_comparison_grid``); ``imputation``:
    the privacy axis's imputation attacker as a reference line (``draw_imputation``); ``seeds``: the trials the points
    average, each drawn where it lies (``draw_seeds``). The legend and every label are placed last (``finish``)."""
    fig, ax = new_figure()
    if len(axes) > 2:
        labels = draw_distortion(ax, df, axes, front_mask, label_col, dominated)
    else:
        labels = draw_front(ax, df, axes, front_mask, label_col)
    if seeds is not None:
        draw_seeds(ax, seeds, axes)
    for style, (name, points, key) in enumerate(baselines):
        labels += draw_comparison_grid(ax, points, axes, name, key, style)
    if imputation is not None:
        draw_imputation(ax, imputation, axes)
    draw_saturation(ax, df, axes)
    finish(fig, ax, labels)
    return fig


def draw_seeds(ax: Axes, trials: pd.DataFrame, axes: Sequence[Axis]) -> None:
    """Each seed's own trial as a small hollow ring, and the legend redrawn to name it: a point that averages seeds
    far apart (one live release, one gone black) then shows where its seeds lie, not only their mean and spread."""
    ax_x, ax_y = axes[:2]
    if trials.empty or ax_x.metric not in trials or ax_y.metric not in trials:
        return
    x = trials[ax_x.metric].to_numpy(dtype=float, na_value=np.nan)
    y = trials[ax_y.metric].to_numpy(dtype=float, na_value=np.nan)
    shown = np.isfinite(x) & np.isfinite(y)
    if not shown.any():
        return
    ax.scatter(x[shown], y[shown], s=22, marker="o", facecolors="none", edgecolors="0.25", linewidths=0.7,
               zorder=3.2, label="one seed's trial")
    legend_right(ax, LEGEND_SIZE)


def draw_saturation(ax: Axes, df: pd.DataFrame, axes: Sequence[Axis]) -> None:
    """A red whisker from each point's privacy number to its fitted saturation (``attack/max/saturation``, where the
    front points' learning curves logged one), along whichever of the two drawn axes is the privacy one."""
    privacy = [i for i, axis in enumerate(axes[:2]) if axis.metric == PRIVACY]
    if not privacy or SATURATION not in df:
        return
    along = privacy[0]
    rows = df[df[SATURATION].notna()]
    if rows.empty:
        return
    measured = rows[PRIVACY].to_numpy(dtype=float)
    heading = rows[SATURATION].to_numpy(dtype=float)
    other = rows[axes[1 - along].metric].to_numpy(dtype=float)
    for fixed, start, end in zip(other, measured, heading, strict=True):
        ends = ([fixed, fixed], [start, end]) if along == 1 else ([start, end], [fixed, fixed])
        ax.plot(*ends, color="tab:red", linewidth=1.2, zorder=2.5)
    marker = (other, heading) if along == 1 else (heading, other)
    ax.scatter(*marker, marker="_" if along == 1 else "|", s=80, color="tab:red", zorder=2.6,
               label="saturation (fitted learning curve)")
    legend_right(ax, LEGEND_SIZE)


def draw_imputation(ax: Axes, imputation: Imputation, axes: Sequence[Axis]) -> None:
    """The imputation attacker (what S the attacker guesses without the release) as a dotted line across the privacy
    axis, its 95 % interval shaded, and the legend redrawn to name it: the distance of a point from the line is the
    leakage its release adds."""
    ax_x, ax_y = axes[:2]
    if imputation.axis not in (ax_x.metric, ax_y.metric):
        return
    line, span = (ax.axhline, ax.axhspan) if imputation.axis == ax_y.metric else (ax.axvline, ax.axvspan)
    line(imputation.value, color="tab:purple", linestyle=":", linewidth=1.3, zorder=1.6,
         label=f"imputation attacker {readable(imputation.value)} ({imputation.source}, no release)")
    if imputation.low is not None and imputation.high is not None:
        span(imputation.low, imputation.high, color="tab:purple", alpha=0.08, linewidth=0, zorder=0.5)
    legend_right(ax, LEGEND_SIZE)


def draw_comparison_grid(ax: Axes, points: pd.DataFrame, axes: Sequence[Axis], label: str, key: str,
                         style: int = 0) -> list[PointLabel]:
    """A baseline's points (e.g. Gaussian noise at several σ) as a grey curve in ``key`` order, and the legend redrawn
    to name it; returns the label of each point, its ``key`` value, for ``finish`` to place. ``style`` picks its marker
    and line (one per baseline of a figure). With a third axis in ``axes`` each marker is filled with its point's
    distortion band (``bands``). A mechanism's point below and right of the curve is more private at equal utility."""
    if points.empty:
        return []
    ax_x, ax_y = axes[:2]
    marker, line = BASELINE_STYLES[style % len(BASELINE_STYLES)]
    shown = points.sort_values(key) if key in points else points
    x = shown[ax_x.metric].to_numpy(dtype=float, na_value=np.nan)
    y = shown[ax_y.metric].to_numpy(dtype=float, na_value=np.nan)
    ax.plot(x, y, color="0.45", linestyle=line, linewidth=1.2, marker=marker, markersize=5, label=label, zorder=1.8,
            markerfacecolor="0.45", markeredgecolor="0.2")
    if len(axes) > 2:
        ax.scatter(x, y, s=30, marker=marker, c=band_colours(shown, axes[2]), edgecolor="0.2", linewidth=0.8, zorder=1.9)
    legend_right(ax, LEGEND_SIZE)
    if key not in shown:
        return []
    return [PointLabel(px, py, f"{SYMBOLS.get(key, key)}={value:g}", "0.35", 6)
            for px, py, value in zip(x, y, shown[key], strict=True) if np.isfinite(px) and np.isfinite(py)]


def distortion_figure(df: pd.DataFrame, axes: Sequence[Axis], front_mask: np.ndarray, label_col: str | None,
                      dominated: np.ndarray | None = None) -> Figure:
    """A three-objective front alone (``draw_distortion``), its legend and labels placed (``finish``)."""
    fig, ax = new_figure()
    finish(fig, ax, draw_distortion(ax, df, axes, front_mask, label_col, dominated))
    return fig


def draw_distortion(ax: Axes, df: pd.DataFrame, axes: Sequence[Axis], front_mask: np.ndarray, label_col: str | None,
                    dominated: np.ndarray | None = None) -> list[PointLabel]:
    """A three-objective front on its first two axes: every point coloured by its band on the third (``bands``), the
    front's members (``front_mask``, on all three axes) large with a black edge, the rows ``dominated`` marks (some
    baseline point is at least as good on all three) crossed out in red. A dashed chance line on an axis whose ideal is
    0.5; error bars where ``df`` has band columns. Returns the front members' labels from ``label_col`` (none without)."""
    mask = np.asarray(front_mask, dtype=bool)
    if mask.shape != (len(df),):
        raise ValueError(f"front_mask has shape {mask.shape}, expected ({len(df)},)")
    ax_x, ax_y, ax_d = axes[:3]
    x = df[ax_x.metric].to_numpy(dtype=float, na_value=np.nan)
    y = df[ax_y.metric].to_numpy(dtype=float, na_value=np.nan)
    colours = np.array(band_colours(df, ax_d), dtype=object)

    draw_bands(ax, df, axes[:2], ~mask, "0.75")
    draw_bands(ax, df, axes[:2], mask, "0.3")
    ax.scatter(x[~mask], y[~mask], s=18, c=list(colours[~mask]), alpha=0.7, zorder=1)
    ax.scatter(x[mask], y[mask], s=48, c=list(colours[mask]), edgecolor="black", linewidth=1.0, zorder=3)
    for colour, text in zip(BAND_COLOURS, band_labels(ax_d), strict=True):  # legend entries (nothing drawn)
        ax.plot([], [], linestyle="", marker="o", markersize=7, markerfacecolor=colour, markeredgecolor="0.3", label=text)
    ax.plot([], [], linestyle="", marker="o", markersize=7, markerfacecolor="white", markeredgecolor="black",
            label="Pareto front (all three axes)")
    hit = mask & (np.zeros(len(df), dtype=bool) if dominated is None else np.asarray(dominated, dtype=bool))
    if hit.any():
        ax.scatter(x[hit], y[hit], s=90, marker="x", color="tab:red", linewidth=1.5, zorder=3.5,
                   label="dominated by a baseline point")
    for axis, line in ((ax_x, ax.axvline), (ax_y, ax.axhline)):
        if axis.ideal == CHANCE:
            line(CHANCE, color="tab:red", linestyle="--", linewidth=1, label="chance (0.5)")
    note = band_note([df])
    ax.set_title(f"colour: {ax_d.metric} band" + (f"; {note}" if note else ""), fontsize=8)
    ax.set_xlabel(axis_label(ax_x))
    ax.set_ylabel(axis_label(ax_y))
    ax.grid(True, alpha=0.3)
    return [] if label_col is None else point_labels(x[mask], y[mask], df[label_col].to_numpy()[mask])


def front_figure(df: pd.DataFrame, axes: Sequence[Axis], front_mask: np.ndarray, label_col: str | None) -> Figure:
    """A two-axis front alone (``draw_front``), its legend and labels placed (``finish``)."""
    fig, ax = new_figure()
    finish(fig, ax, draw_front(ax, df, axes, front_mask, label_col))
    return fig


def draw_front(ax: Axes, df: pd.DataFrame, axes: Sequence[Axis], front_mask: np.ndarray,
               label_col: str | None) -> list[PointLabel]:
    """Draw all trials (grey) and the Pareto front (step line) on two axes; returns the front points' labels.

    ``axes[0]`` is the horizontal axis, ``axes[1]`` the vertical one; ``front_mask`` is aligned
    with ``df``'s rows (e.g. from ``pareto_mask``). The step line runs from the front point best
    on the horizontal axis to the worst, holding each point's vertical value until the next, so
    it traces the boundary of the region the front dominates. ``label_col`` names a column whose
    values label front points (e.g. "α=2 λ=10 k=1"; none without). A dashed chance line is drawn on any axis
    whose ideal is 0.5. Where ``df`` has band columns (a point table from ``replicates.point_table``) every point
    gets error bars on both axes: grey off the front, blue on it.
    """
    if len(axes) != 2:
        raise ValueError(f"plot_front draws exactly 2 axes, got {len(axes)}")
    mask = np.asarray(front_mask, dtype=bool)
    if mask.shape != (len(df),):
        raise ValueError(f"front_mask has shape {mask.shape}, expected ({len(df)},)")
    ax_x, ax_y = axes
    x = df[ax_x.metric].to_numpy(dtype=float, na_value=np.nan)
    y = df[ax_y.metric].to_numpy(dtype=float, na_value=np.nan)

    ax.scatter(x, y, s=14, color="0.65", label="trials", zorder=1)
    draw_bands(ax, df, axes, ~mask, "0.75")
    draw_bands(ax, df, axes, mask, "tab:blue")
    ax.set_title(band_note([df]) or "", fontsize=8)

    order = np.argsort(ax_x.to_min(x[mask]), kind="stable")
    fx, fy = x[mask][order], y[mask][order]
    ax.step(fx, fy, where="post", color="tab:blue", linewidth=1.5, zorder=2)
    ax.scatter(fx, fy, s=36, color="tab:blue", edgecolor="black", label="Pareto front", zorder=3)
    if ax_x.ideal == CHANCE:
        ax.axvline(CHANCE, color="tab:red", linestyle="--", linewidth=1, label="chance (0.5)")
    if ax_y.ideal == CHANCE:
        ax.axhline(CHANCE, color="tab:red", linestyle="--", linewidth=1, label="chance (0.5)")

    ax.set_xlabel(axis_label(ax_x))
    ax.set_ylabel(axis_label(ax_y))
    ax.grid(True, alpha=0.3)
    return [] if label_col is None else point_labels(fx, fy, df[label_col].to_numpy()[mask][order])


