"""Publishing a sweep's results on its parent run, as ``sweep`` and ``attack`` do when they end: the summary's
tables, metrics and figures, and the preset's own sweep figures."""
from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from mlflow.tracking import MlflowClient

from platform.figures.information_plane import log_information_plane
from platform.figures.kl_boxes import log_kl_boxes
from platform.figures.summary_figures import draw_summary
from platform.results.summary import SweepSummary, log_summary, read_summary
from search_spaces import Preset

SWEEP_FIGURES: dict[str, Callable[[MlflowClient, str, pd.DataFrame], None]] = {
    "information_plane": log_information_plane,
    "kl_boxplots": log_kl_boxes,
}


def publish(client: MlflowClient, parent_id: str, preset: Preset) -> SweepSummary:
    """Read the sweep's summary once, log it with its figures on the parent run, and return it."""
    summary = read_summary(client, parent_id, preset)
    with tempfile.TemporaryDirectory() as tmp:
        log_summary(client, parent_id, summary, draw_summary(summary, preset, Path(tmp)))
    for figure in preset.sweep_figures:
        SWEEP_FIGURES[figure](client, parent_id, summary.trials.assign(pareto_front=summary.front))
    return summary
