"""The information plane of the privatizer's Gaussian-mixture check (docs/mechanisms.md#the-gaussian-mixture-check-gmm),
drawn from the metrics its trials logged.

Each trial's trajectory (I(U;X|Q), I(S;Q)) over its reported steps, its final point, and the bound line
I(S;Q) + I(U;X|Q) = K: one panel per codependence k. The gmm preset draws it for the whole sweep and for each trial
alone (search_spaces/gmm.py). Plotting only: the numbers are the trials' logged metrics.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from core.legends import legend_below

X_METRIC, Y_METRIC, BOUND_METRIC = "leakage/i_uxq", "leakage/i_sq", "leakage/bound_k"
FIGURE = "information_plane.png"


def plot_information_plane(table: pd.DataFrame, paths: Mapping[str, pd.DataFrame], path: str | Path) -> Path | None:
    """PNG with one panel per k: trajectories (``paths``: run id -> per-step I(U;X|Q) and I(S;Q)), final points
    coloured by α, and x + y = K.

    None when the table has no finished trial with the information metrics.
    """
    needed = ["k", "alpha", X_METRIC, Y_METRIC, BOUND_METRIC]
    usable = table[table["status"] == "FINISHED"] if "status" in table else table
    if usable.empty or any(c not in usable for c in needed):
        return None
    usable = usable.dropna(subset=needed)
    ks = sorted(usable["k"].unique(), reverse=True)
    fig = Figure(figsize=(4.2 * len(ks), 4.0))
    FigureCanvasAgg(fig)
    cmap = colormaps["viridis"]
    for ax, k in zip(fig.subplots(1, len(ks), squeeze=False)[0], ks, strict=True):
        rows = usable[usable["k"] == k]
        bound = float(rows[BOUND_METRIC].mean())
        for _, row in rows.iterrows():
            colour = cmap(float(row["alpha"]))
            steps = paths.get(row["run_id"])
            steps = steps[[X_METRIC, Y_METRIC]].dropna() if steps is not None else None
            if steps is not None and len(steps) > 1:
                ax.plot(steps[X_METRIC], steps[Y_METRIC], color=colour, alpha=0.5, linewidth=1)
            ax.scatter(row[X_METRIC], row[Y_METRIC], color=colour, edgecolor="black", zorder=3,
                       label=f"α={row['alpha']:g}" + (f" alg {int(row['algorithm'])}" if "algorithm" in row else ""))
        top = max(bound, float(rows[[X_METRIC, Y_METRIC]].to_numpy().max()), 0.05) * 1.1
        ax.plot([0, bound], [bound, 0], "r--", label=f"bound K={bound:.3f}")
        ax.set_xlim(-0.02 * top, top)
        ax.set_ylim(-0.02 * top, top)
        ax.set_xlabel("I(U;X|Q) [nats]  (utility lost)")
        ax.set_ylabel("I(S;Q) [nats]  (secret leaked)")
        ax.set_title(f"k = {k:g}")
        legend_below(ax, 6, columns=3)  # under the panel: a point may lie anywhere on the plane
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return Path(path)

