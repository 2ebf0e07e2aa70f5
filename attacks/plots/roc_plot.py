"""ROC pictures for membership attackers, kept apart from the attack maths (as TF Privacy does).

Uses matplotlib's object API (``Figure`` + ``FigureCanvasAgg``), never pyplot, so it is safe in
Ray workers and threads.
"""
from __future__ import annotations

import io

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from core.legends import legend_below


def roc_png(fpr: np.ndarray, tpr: np.ndarray, area: float, title: str) -> bytes:
    """PNG of a ROC curve on linear axes and on log-log axes (the low-FPR regime that matters)."""
    fpr = np.asarray(fpr, dtype=float)
    tpr = np.asarray(tpr, dtype=float)
    fig = Figure(figsize=(8.0, 3.8))
    FigureCanvasAgg(fig)
    linear, loglog = fig.subplots(1, 2)
    linear.plot(fpr, tpr, lw=1.5, label=f"attack (AUC = {area:.3f})")
    linear.plot([0, 1], [0, 1], "k--", lw=0.8, label="chance")
    linear.set(xlim=(0, 1), ylim=(0, 1), xlabel="false positive rate", ylabel="true positive rate", title="linear")
    # Log axes cannot show zero rates: start at the smallest positive FPR seen (or 1e-4).
    positive = fpr[fpr > 0]
    floor = min(float(positive.min()) if positive.size else 1e-4, 1e-2)
    keep = (fpr > 0) & (tpr > 0)
    loglog.plot(fpr[keep], tpr[keep], lw=1.5, label=f"attack (AUC = {area:.3f})")
    loglog.plot([floor, 1], [floor, 1], "k--", lw=0.8, label="chance")
    loglog.set(xscale="log", yscale="log", xlim=(floor, 1), ylim=(floor, 1),
               xlabel="false positive rate", ylabel="true positive rate", title="log-log (low FPR)")
    for ax in (linear, loglog):  # under each panel: inside, a curve below chance would run under it
        legend_below(ax, 8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()
