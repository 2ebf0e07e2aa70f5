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

import re
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from core.legends import legend_right
from core.metric_names import PSNR, PSNR_OF_MSE
from core.numbers import readable
from core.pareto_axis import Axis
from platform.figures.labels import PointLabel, place_labels
from platform.results.front_groups import GroupFront, value_text
from platform.results.imputation import Imputation
from platform.results.pareto import pareto_mask
from platform.results.replicates import band_columns
from platform.results.summary import PRIVACY, SATURATION

FIGSIZE = (9.0, 4.8)  # inches; at DPI this is 1080 x 576 pixels: the axes and, to their right, the legend
DPI = 120
LEGEND_SIZE = 7  # points
CHANCE = 0.5  # an axis whose ideal is this value is an attacker's balanced accuracy
# The distortion bands a three-objective figure colours points by: edges on the third axis (PSNR in dB: below 12 dB a
# digit is mostly another image, e.g. its class's mean image reads 12.6; a one-width redraw of its strokes 15.6), and one
# colour per band from the worst to the best.
BAND_EDGES = (12.0, 15.0, 20.0)
BAND_COLOURS = tuple(colormaps["viridis"](v) for v in (0.0, 0.35, 0.65, 0.92))
NO_BAND = "0.7"  # a point without a value on the third axis
BASELINE_STYLES = (("s", "-"), ("^", "--"), ("D", ":"), ("v", "-."))  # (marker, line) of each baseline in turn


def _label(axis: Axis) -> str:
    """Axis title: the metric name and its direction."""
    return f"{axis.metric} ({'higher' if axis.higher_is_better else 'lower'} is better)"


SYMBOLS = {"alpha": "α", "lam": "λ", "adv_steps": "k", "sigma": "σ", "radius": "r", "mix": "t"}


def short_labels(labels: Sequence[str]) -> list[str]:
    """Trial names made short for a plot: settings shared by every label dropped, α/λ/k for alpha/lam/adv_steps."""
    tokens = [str(label).split() for label in labels]
    shared = set.intersection(*(set(t) for t in tokens)) if tokens else set()
    short = []
    for parts in tokens:
        kept = [p for p in parts if p not in shared] or parts
        pairs = (p.partition("=") for p in kept)
        short.append(" ".join(SYMBOLS.get(k, k) + sep + ("∞" if v == "inf" else v) for k, sep, v in pairs))
    return short


def point_labels(xs: Sequence[float], ys: Sequence[float], names: Sequence[object],
                 colours: Sequence[str] | None = None) -> list[PointLabel]:
    """The labels of points named ``names`` (see ``short_labels``; a missing name gets none); points of one colour that
    coincide share a label ("... (+2 identical)")."""
    colours = colours or ["black"] * len(names)
    texts = short_labels([str(t) if pd.notna(t) else "" for t in names])
    at_point: dict[tuple[float, float, str], list[str]] = {}
    for text, px, py, colour in zip(texts, xs, ys, colours, strict=True):
        if text and np.isfinite(px) and np.isfinite(py):
            at_point.setdefault((float(px), float(py), colour), []).append(str(text))
    return [PointLabel(px, py, found[0] if len(found) == 1 else f"{found[0]} (+{len(found) - 1} identical)", colour)
            for (px, py, colour), found in at_point.items()]


def _figure() -> tuple[Figure, Axes]:
    """An empty figure of :data:`FIGSIZE` at :data:`DPI` on the Agg canvas, and its one axes."""
    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def finish(fig: Figure, ax: Axes, labels: Sequence[PointLabel]) -> None:
    """The axes' legend outside it on the right, the figure laid out around both, then the labels placed (last:
    ``place_labels`` works in the final layout)."""
    legend_right(ax, LEGEND_SIZE)
    fig.tight_layout()
    place_labels(ax, labels)


def _error(df: pd.DataFrame, metric: str, values: np.ndarray) -> np.ndarray | None:
    """(2, n) distances from each value down and up to its band (``replicates.band_columns``); None without bands."""
    low, high = band_columns(metric)
    if low not in df or high not in df:
        return None
    lows = df[low].to_numpy(dtype=float, na_value=np.nan)
    highs = df[high].to_numpy(dtype=float, na_value=np.nan)
    return np.clip(np.stack([values - lows, highs - values]), 0.0, None)  # NaN (no band) draws no bar


def band_note(tables: Sequence[pd.DataFrame]) -> str | None:
    """What the error bars are, for the plot's title: None when no table has bands."""
    with_bands = [df for df in tables if df.filter(regex="/band_(low|high)$").notna().to_numpy().any()]
    if not with_bands:
        return None
    if any("n_seeds" in df and (df["n_seeds"] > 1).any() for df in with_bands):
        return "error bars: ± 1 std over seeds (95 % interval where a point has one seed)"
    return "error bars: 95 % intervals"


def draw_bands(ax, df: pd.DataFrame, axes: Sequence[Axis], rows: np.ndarray, colour: str) -> None:
    """Error bars on both axes for the chosen rows of a point table, where it has band columns."""
    ax_x, ax_y = axes
    x = df[ax_x.metric].to_numpy(dtype=float, na_value=np.nan)
    y = df[ax_y.metric].to_numpy(dtype=float, na_value=np.nan)
    xerr, yerr = _error(df, ax_x.metric, x), _error(df, ax_y.metric, y)
    if (xerr is None and yerr is None) or not rows.any():
        return
    ax.errorbar(x[rows], y[rows], xerr=None if xerr is None else xerr[:, rows], yerr=None if yerr is None else yerr[:, rows],
                fmt="none", ecolor=colour, elinewidth=0.8, capsize=2, zorder=1.5)


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
    return _save(sweep_front_figure(df, axes, front_mask, label_col, baselines, imputation, dominated, seeds), path)


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
    fig, ax = _figure()
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


def bands(values: np.ndarray, axis: Axis) -> np.ndarray:
    """Each value's distortion band on ``axis``: 0 the worst (a higher-is-better axis: below the first of
    :data:`BAND_EDGES`) to ``len(BAND_EDGES)`` the best; -1 where there is no value."""
    found = np.digitize(values, BAND_EDGES)
    found = found if axis.higher_is_better else len(BAND_EDGES) - found
    return np.where(np.isnan(values), -1, found)


def band_colours(df: pd.DataFrame, axis: Axis) -> list:
    """The colour of each row's distortion band on ``axis`` (grey without a value)."""
    values = df[axis.metric].to_numpy(dtype=float, na_value=np.nan) if axis.metric in df else np.full(len(df), np.nan)
    return [BAND_COLOURS[b] if b >= 0 else NO_BAND for b in bands(values, axis)]


def band_labels(axis: Axis) -> list[str]:
    """The legend's name of each band, worst first, e.g. ``PSNR < 12 dB`` … ``PSNR ≥ 20 dB``."""
    name, unit = ("PSNR", " dB") if axis.metric in (PSNR, PSNR_OF_MSE) else (axis.metric, "")
    edges = BAND_EDGES if axis.higher_is_better else BAND_EDGES[::-1]
    low, high = ("<", "≥") if axis.higher_is_better else (">", "≤")
    inner = [f"{name} {a:g}–{b:g}{unit}" for a, b in pairwise(edges)]
    return [f"{name} {low} {edges[0]:g}{unit}", *inner, f"{name} {high} {edges[-1]:g}{unit}"]


def distortion_figure(df: pd.DataFrame, axes: Sequence[Axis], front_mask: np.ndarray, label_col: str | None,
                      dominated: np.ndarray | None = None) -> Figure:
    """A three-objective front alone (``draw_distortion``), its legend and labels placed (``finish``)."""
    fig, ax = _figure()
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
    ax.set_xlabel(_label(ax_x))
    ax.set_ylabel(_label(ax_y))
    ax.grid(True, alpha=0.3)
    return [] if label_col is None else point_labels(x[mask], y[mask], df[label_col].to_numpy()[mask])


def front_figure(df: pd.DataFrame, axes: Sequence[Axis], front_mask: np.ndarray, label_col: str | None) -> Figure:
    """A two-axis front alone (``draw_front``), its legend and labels placed (``finish``)."""
    fig, ax = _figure()
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

    ax.set_xlabel(_label(ax_x))
    ax.set_ylabel(_label(ax_y))
    ax.grid(True, alpha=0.3)
    return [] if label_col is None else point_labels(fx, fy, df[label_col].to_numpy()[mask][order])


def _save(fig: Figure, path: str | Path) -> Path:
    """Write the figure as a PNG (making its folder); returns the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=DPI, format="png")
    return out


def plot_fronts(sweeps: Sequence[tuple[str, pd.DataFrame, np.ndarray]], axes: Sequence[Axis], path: str | Path,
                label_col: str | None = None) -> Path:
    """Draw the overlaid fronts (``fronts_figure``) and save them as a PNG; returns the path written."""
    return _save(fronts_figure(sweeps, axes, label_col), path)


def fronts_figure(sweeps: Sequence[tuple[str, pd.DataFrame, np.ndarray]], axes: Sequence[Axis],
                  label_col: str | None = None) -> Figure:
    """Several sweeps' fronts on the same axes (``draw_fronts``), their legend and labels placed (``finish``)."""
    fig, ax = _figure()
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
    ax.set_xlabel(_label(ax_x))
    ax.set_ylabel(_label(ax_y))
    ax.grid(True, alpha=0.3)
    return labels


def plot_fronts_by(groups: Sequence[GroupFront], joint: pd.DataFrame, axes: Sequence[Axis], path: str | Path) -> Path:
    """Draw one front per group (``fronts_by_figure``) and save it as a PNG; returns the path written."""
    return _save(fronts_by_figure(groups, joint, axes), path)


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
    fig, ax = _figure()
    labels = draw_fronts(ax, sweeps, axes, "label")
    if not joint.empty:
        ax_x, ax_y = axes[:2]
        on = joint.iloc[np.argsort(ax_x.to_min(joint[ax_x.metric].to_numpy(dtype=float)), kind="stable")]
        ax.step(on[ax_x.metric], on[ax_y.metric], where="post", color="black", linestyle="--", linewidth=1,
                label="joint front", zorder=2.5)
    ax.set_title(f"one front per {symbol}" + (f"; {ax.get_title()}" if ax.get_title() else ""), fontsize=8)
    finish(fig, ax, labels)
    return fig
