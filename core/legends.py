"""Legends placed outside their axes, so that none covers a plotted point: beside a figure's one axes, or under a panel
of several, clear of its tick labels and x label. The figure's ``tight_layout``, called afterwards, makes room for them.
"""
from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.legend import Legend
from matplotlib.transforms import offset_copy

POINTS_PER_INCH = 72


def legend_right(ax: Axes, fontsize: float) -> Legend:
    """The axes' legend outside it, its top left corner beside the axes' top right one."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=fontsize)


def legend_below(ax: Axes, fontsize: float, columns: int = 2) -> Legend:
    """The axes' legend under it, below its x axis's tick labels and label, in ``columns`` columns; call it once the
    axes' limits and x label are set (it measures what the x axis takes below the axes)."""
    fig = ax.get_figure(root=True)
    x_axis = ax.xaxis.get_tightbbox(fig.canvas.get_renderer()) if fig is not None else None  # type: ignore[attr-defined]
    if fig is None or x_axis is None:
        raise ValueError("legend_below needs axes on a figure, their x axis shown")
    below = ax.get_window_extent().y0 - x_axis.y0  # pixels
    anchor = offset_copy(ax.transAxes, fig=fig, y=-below * POINTS_PER_INCH / fig.dpi, units="points")
    return ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=anchor, ncol=columns,
                     fontsize=fontsize)
