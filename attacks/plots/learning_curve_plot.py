"""The picture of a learning curve (attacks/audits/learning_curve.py), kept apart from its computation.

Uses matplotlib's object API (``Figure`` + ``FigureCanvasAgg``), never pyplot, so it is safe in Ray workers and threads.
"""
from __future__ import annotations

import io
from typing import TYPE_CHECKING

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from core.legends import legend_below

if TYPE_CHECKING:  # the drawing needs the result's type only, never the computation
    from attacks.audits.learning_curve import LearningCurve

FILE_PREFIX = "learning_curve_"  # a run's picture of its curve: epoch<NNN>_learning_curve_<attacker>.png under attacks/


def curve_png(curve: LearningCurve, title: str) -> bytes:
    """PNG of balanced test accuracy against the training records used, with 95 % interval bars, and the fitted
    saturation (dashed) with its interval (shaded) where the fit gives one."""
    records = [p.records for p in curve.points]
    accuracy = [p.accuracy for p in curve.points]
    below = [p.accuracy - p.ci_low for p in curve.points]
    above = [p.ci_high - p.accuracy for p in curve.points]
    fig = Figure(figsize=(4.8, 3.4))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.errorbar(records, accuracy, yerr=[below, above], marker="o", capsize=4, lw=1.5)
    fitted = curve.saturation
    if fitted.estimate is not None and fitted.ci_low is not None and fitted.ci_high is not None:
        ax.axhline(fitted.estimate, color="tab:red", ls="--", lw=1, label=f"saturation {fitted.estimate:.3f}")
        ax.axhspan(fitted.ci_low, fitted.ci_high, color="tab:red", alpha=0.12, label="its 95 % interval")
    ax.set_xticks(records, [f"{p.percent} %\n{p.records}" for p in curve.points])
    verdict = "still learning" if curve.still_learning else "last gain within the interval"
    ax.set(xlabel="training records", ylabel="balanced accuracy (95 % interval)",
           title=f"{curve.attacker}: {verdict}")
    if ax.get_legend_handles_labels()[0]:  # under the axes, where no point of the curve can be
        legend_below(ax, 8)
    ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()
