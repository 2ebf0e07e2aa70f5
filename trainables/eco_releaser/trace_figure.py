"""The 7-day original-vs-released trace of a test household, the ECO trial's figure."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from core.data.eco_files import EPOCH, HOURS
from core.legends import legend_right
from trainables.eco_releaser.windows import EcoSplit

FIGURE_FILE = "trace_7days.png"


def figure_rows(test: EcoSplit, days: int) -> torch.Tensor:
    """Test windows that start at midnight, of the first household from its first such window on, at most ``days``
    calendar days (its first test week); with 24-hour windows they tile those days."""
    w = test.windows
    house = torch.nonzero((w.household == w.household.min()) & (w.start % HOURS == 0)).flatten()
    order = house[torch.argsort(w.start[house])]
    return order[w.start[order] < w.start[order[0]] + days * HOURS]


def save_trace_figure(test: EcoSplit, released: torch.Tensor, norm: tuple[float, float], path: Path, title: str,
                      days: int = 7) -> Path:
    """Original vs released hourly power (W) of the midnight windows over ``days`` test days, occupied hours shaded, as a
    PNG."""
    rows = figure_rows(test, days)
    mean, std = norm
    original = test.watts[rows].flatten().cpu()
    out = (released[rows].squeeze(2) * std + mean).flatten().cpu()
    occupied = test.occupancy[rows].flatten().cpu()
    fig = Figure(figsize=(11, 3.2))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    hours = torch.arange(len(original))
    ax.fill_between(hours, 0, float(max(original.max(), out.max())), where=occupied.bool(), step="post",
                    color="tab:green", alpha=0.12, label="occupied")
    ax.step(hours, original, where="post", color="black", lw=1.0, label="original")
    ax.step(hours, out, where="post", color="tab:red", lw=1.0, label="released")
    dates = [EPOCH + dt.timedelta(hours=int(h)) for h in test.windows.start[rows]]
    ax.set_xticks(range(0, len(original), test.watts.shape[1]), [d.strftime("%a %d %b") for d in dates], fontsize=7)
    ax.set_ylabel("power (W)")
    legend_right(ax, 7)  # outside: the traces span the whole width
    ax.set_title(f"{title}, household {int(test.windows.household[rows[0]])}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path
