"""The parts every sweep figure of a front is drawn with: its size and resolution, axis titles, short point labels
(α/λ/k for alpha/lam/adv_steps), an empty figure on the Agg canvas, the legend and labels placed last, the error bars
of a point table's bands, and the distortion bands a three-objective figure colours its points by.
"""
from __future__ import annotations

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
from core.pareto_axis import Axis
from platform.figures.labels import PointLabel, place_labels
from platform.results.replicates import band_columns

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


def axis_label(axis: Axis) -> str:
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


def new_figure() -> tuple[Figure, Axes]:
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


def error_bars(df: pd.DataFrame, metric: str, values: np.ndarray) -> np.ndarray | None:
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
    xerr, yerr = error_bars(df, ax_x.metric, x), error_bars(df, ax_y.metric, y)
    if (xerr is None and yerr is None) or not rows.any():
        return
    ax.errorbar(x[rows], y[rows], xerr=None if xerr is None else xerr[:, rows], yerr=None if yerr is None else yerr[:, rows],
                fmt="none", ecolor=colour, elinewidth=0.8, capsize=2, zorder=1.5)


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


def save_png(fig: Figure, path: str | Path) -> Path:
    """Write the figure as a PNG (making its folder); returns the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=DPI, format="png")
    return out
