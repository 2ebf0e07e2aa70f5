"""Labels beside plotted points, placed so that none covers a point or another label (adjustText); a label moved off its
point is joined to it by a thin grey leader line."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from adjustText import adjust_text
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.transforms import Bbox

from core.legends import POINTS_PER_INCH

# adjustText stops after a second unless given a count of steps: a busy machine then lays crowded labels out otherwise
# and the same front draws another picture; at a fixed count it draws the same one (about 0.7 s on 2 busy cores)
LABEL_ITERATIONS = 1000
NO_MARKER = ("None", "none", "", " ")
MARKER_RADIUS = 5.0  # points: half the width a label keeps clear around a point (the largest marker drawn, 90 pt², is 9.5)


@dataclass(frozen=True)
class PointLabel:
    """A text to place beside the point (x, y), in data coordinates, in its colour and font size."""

    x: float
    y: float
    text: str
    colour: str = "black"
    size: float = 7.0


def plotted_points(ax: Axes) -> np.ndarray:
    """The data coordinates, (n, 2), of every point drawn on ``ax``: its scatter plots' points and the markers of its
    named lines (a line drawn without markers, and an error bar's caps, have none)."""
    found = [np.asarray(c.get_offsets(), dtype=float) for c in ax.collections if isinstance(c, PathCollection)]
    found += [np.asarray(line.get_xydata(), dtype=float) for line in ax.get_lines()
              if line.get_marker() not in NO_MARKER and not str(line.get_label()).startswith("_")]
    points = np.concatenate([f.reshape(-1, 2) for f in found]) if found else np.empty((0, 2))
    return points[np.isfinite(points).all(axis=1)]


def marker_boxes(ax: Axes, points: np.ndarray, radius: float = MARKER_RADIUS) -> list[Bbox]:
    """A square of ``radius`` points around each point, in data coordinates (as adjustText reads the boxes it avoids),
    at the axes' present layout."""
    pixels = radius * ax.figure.dpi / POINTS_PER_INCH
    to_data = ax.transData.inverted()
    return [Bbox(to_data.transform([centre - pixels, centre + pixels])) for centre in ax.transData.transform(points)]


def place_labels(ax: Axes, labels: Sequence[PointLabel]) -> None:
    """Draw the labels and move them off every plotted point's marker (``plotted_points``, ``marker_boxes``) and off
    each other; call it last, once the figure is laid out (the boxes are measured in its display coordinates)."""
    if not labels:
        return
    texts = [ax.text(label.x, label.y, label.text, fontsize=label.size, color=label.colour) for label in labels]
    boxes = marker_boxes(ax, plotted_points(ax))
    adjust_text(texts, objects=boxes or None, ax=ax, iter_lim=LABEL_ITERATIONS,  # adjustText reads no boxes as None
                arrowprops={"arrowstyle": "-", "color": "0.5", "linewidth": 0.5})
