"""Publishing a sweep's results on its parent run, as ``sweep`` and ``attack`` do when they end: the summary's
tables, metrics and figures, and the figures the preset contributes (``search_spaces.SweepFigure``)."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pandas as pd
from mlflow.tracking import MlflowClient

from platform.figures.summary_figures import draw_summary
from platform.results.summary import SweepSummary, log_summary, read_summary
from search_spaces import Preset, SweepFigure, SweepTrials


def publish(client: MlflowClient, parent_id: str, preset: Preset) -> SweepSummary:
    """Read the sweep's summary once, log it with its figures on the parent run, draw and log the preset's own sweep
    figures, and return the summary.

    A sweep figure that raises costs only itself: the summary is already logged, the other figures still are, and
    ``error: sweep figure <name> failed: <exception>`` goes to stderr (one line each; the command's exit is unchanged).
    """
    summary = read_summary(client, parent_id, preset)
    with tempfile.TemporaryDirectory() as tmp:
        log_summary(client, parent_id, summary, draw_summary(summary, preset, Path(tmp)))
    if preset.sweep_figures:
        table = summary.trials.assign(pareto_front=summary.front)
        trials = SweepTrials(table, histories(client, table, preset.sweep_history))
        for figure in preset.sweep_figures:
            try:
                draw_and_log(client, parent_id, figure, trials)
            except Exception as exc:  # noqa: BLE001 - a preset's figure must not cost the sweep its summary
                lines = str(exc).splitlines()
                detail = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
                print(f"error: sweep figure {figure_name(figure)} failed: {detail}", file=sys.stderr, flush=True)
    return summary


def histories(client: MlflowClient, table: pd.DataFrame, metrics: tuple[str, ...]) -> dict[str, pd.DataFrame]:
    """run_id -> the per-step values of ``metrics`` on that trial's run (index: step, a column per metric)."""
    if not metrics or "run_id" not in table:
        return {}

    def history(run_id: str, name: str) -> pd.Series:
        return pd.Series({m.step: m.value for m in client.get_metric_history(run_id, name)}, name=name, dtype=float)

    return {run_id: pd.concat([history(run_id, name) for name in metrics], axis=1).sort_index()
            for run_id in table["run_id"]}


def draw_and_log(client: MlflowClient, parent_id: str, figure: SweepFigure, trials: SweepTrials) -> None:
    """Draw ``figure`` into a fresh folder and log what it returns: files in the folder itself on the parent run under
    ``front/``, files in a subfolder named by a trial's run id on that run."""
    run_ids = set(trials.table["run_id"]) if "run_id" in trials.table else set()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp).resolve()
        for path in [Path(p).resolve() for p in figure(trials, folder)]:
            if path.parent == folder:
                client.log_artifact(parent_id, str(path), artifact_path="front")
            elif path.parent.parent == folder and path.parent.name in run_ids:
                client.log_artifact(path.parent.name, str(path))
            else:
                raise ValueError(f"returned {path}, neither in its folder nor in a trial's run-id subfolder of it")


def figure_name(figure: SweepFigure) -> str:
    """How an error names a figure: its module and qualified name, e.g. ``search_spaces.gmm.information_plane``."""
    name = getattr(figure, "__qualname__", None) or repr(figure)
    module = getattr(figure, "__module__", None)
    return f"{module}.{name}" if module else name
