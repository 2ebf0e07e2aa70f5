"""Publishing a sweep's results, as ``sweep`` and ``attack`` do when they end: the summary's tables, metrics and
figures and the figures the preset contributes (``search_spaces.SweepFigure``) on the parent run; for a sweep also the
terminal's table, the HTML report and where to look."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pandas as pd

from core.commands import command, python_module
from core.messages import first_line
from core.numbers import readable
from platform.figures.game_curves import FILE as GAME_FILE
from platform.figures.game_curves import plot_game_curves
from platform.figures.html_report import render_sweep, report_dir
from platform.figures.summary_figures import draw_summary
from platform.results import tracking
from platform.results.baseline_hull import format_hull
from platform.results.comparison_grid import format_comparison
from platform.results.game import read_game_curves
from platform.results.store import Store
from platform.results.summary import SweepSummary, format_summary, log_summary, read_summary
from platform.results.sweep_record import GAME_PATH, read_sweep_record, store_report
from platform.run.cost_estimate import remember
from platform.run.interrupts import SweepEnding
from platform.run.launch import CaughtUp, Ended, Sweep
from search_spaces import Preset, SweepFigure, SweepTrials


def publish(store: Store, parent_id: str, preset: Preset) -> SweepSummary:
    """Read the sweep's summary once, log it with its figures on the parent run, each trial's game curves on its run,
    draw and log the preset's own sweep figures, and return the summary.

    A sweep figure that raises costs only itself: the summary is already logged, the other figures still are, and
    ``error: sweep figure <name> failed: <exception>`` goes to stderr (one line each; the command's exit is unchanged).
    """
    summary = read_summary(store, parent_id, preset)
    with tempfile.TemporaryDirectory() as tmp:
        log_summary(store, parent_id, summary, draw_summary(summary, preset, Path(tmp)))
    log_game_curves(store, summary.trials)
    if preset.presentation.sweep_figures:
        table = summary.trials.assign(pareto_front=summary.front)
        trials = SweepTrials(table, histories(store, table, preset.presentation.sweep_history))
        for figure in preset.presentation.sweep_figures:
            try:
                draw_and_log(store, parent_id, figure, trials)
            except Exception as exc:  # noqa: BLE001 - a preset's figure must not cost the sweep its summary
                detail = first_line(f"{type(exc).__name__}: {exc}")
                print(f"error: sweep figure {figure_name(figure)} failed: {detail}", file=sys.stderr, flush=True)
    return summary


def log_game_curves(store: Store, trials: pd.DataFrame) -> int:
    """Draw the game curves of every trial (a row with ``run_id`` and ``name``) that has an in-game adversary and log
    them on its run as ``game/game_curves.png``; returns how many were drawn. A trial whose figure fails costs only
    itself (one line on stderr)."""
    drawn = 0
    if trials.empty:
        return drawn
    with tempfile.TemporaryDirectory() as tmp:
        for run_id, trial in zip(trials["run_id"], trials["name"], strict=True):
            try:
                game = read_game_curves(store, run_id, trial)
                if not game.has_game:
                    continue
                path = plot_game_curves(game, Path(tmp) / GAME_FILE)
                store.log_file(run_id, path, GAME_PATH)
                drawn += 1
            except Exception as exc:  # noqa: BLE001 - one trial's picture must not cost the sweep its report
                print(first_line(f"error: game curves of [{trial}] failed: {type(exc).__name__}: {exc}"),
                      file=sys.stderr, flush=True)
    return drawn


def render_stored_sweep(store: Store, parent_id: str, preset: Preset, summary: SweepSummary,
                        status: str | None = None) -> str:
    """The sweep's HTML report from the store (``status``: the one the sweep is about to end its run with; default the
    stored one)."""
    names = dict(zip(summary.trials["run_id"], summary.trials["name"], strict=True)) if not summary.trials.empty else {}
    with tempfile.TemporaryDirectory() as tmp:
        return render_sweep(read_sweep_record(store, parent_id, names, Path(tmp)), preset, summary, status)


def write_sweep_report(store: Store, parent_id: str, preset: Preset, summary: SweepSummary, tracking_uri: str,
                       path: Path | None = None, status: str | None = None) -> Path:
    """Build the sweep's report, write it (default ``<report_dir>/<sweep>.html``) and log it on the parent run."""
    name = store.run(parent_id).info.run_name
    html = render_stored_sweep(store, parent_id, preset, summary, status)
    return store_report(store, parent_id, html, path or report_dir(tracking_uri) / f"{name}.html")


def histories(store: Store, table: pd.DataFrame, metrics: tuple[str, ...]) -> dict[str, pd.DataFrame]:
    """run_id -> the per-step values of ``metrics`` on that trial's run (index: step, a column per metric)."""
    if not metrics or "run_id" not in table:
        return {}

    def history(run_id: str, name: str) -> pd.Series:
        return pd.Series({m.step: m.value for m in store.history(run_id, name)}, name=name, dtype=float)

    return {run_id: pd.concat([history(run_id, name) for name in metrics], axis=1).sort_index()
            for run_id in table["run_id"]}


def draw_and_log(store: Store, parent_id: str, figure: SweepFigure, trials: SweepTrials) -> None:
    """Draw ``figure`` into a fresh folder and log what it returns: files in the folder itself on the parent run under
    ``front/``, files in a subfolder named by a trial's run id on that run."""
    run_ids = set(trials.table["run_id"]) if "run_id" in trials.table else set()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp).resolve()
        for path in [Path(p).resolve() for p in figure(trials, folder)]:
            if path.parent == folder:
                store.log_file(parent_id, path, "front")
            elif path.parent.parent == folder and path.parent.name in run_ids:
                store.log_file(path.parent.name, path)
            else:
                raise ValueError(f"returned {path}, neither in its folder nor in a trial's run-id subfolder of it")


def figure_name(figure: SweepFigure) -> str:
    """How an error names a figure: its module and qualified name, e.g. ``search_spaces.gmm.information_plane``."""
    name = getattr(figure, "__qualname__", None) or repr(figure)
    module = getattr(figure, "__module__", None)
    return f"{module}.{name}" if module else name


def publish_sweep(sweep: Sweep, results: Ended, caught_up: CaughtUp, ending: SweepEnding) -> int:
    """The sweep's last step: the summary on the parent run, the terminal's table, the report and where to look; the
    parent run FINISHED when every planned trial finished and every checkpoint was attacked, else the sweep says it is
    incomplete (KILLED). The report states that final status: the run ends after it, so
    a Ctrl+C while publishing leaves the sweep KILLED and ``--resume`` publishes it again."""
    store, parent_id, preset = sweep.store, sweep.parent_id, sweep.spec.preset
    print(f"sweep {sweep.plan.name}: publishing its summary, figures and report", flush=True)
    summary = publish(store, parent_id, preset)
    tell(sweep, summary)
    complete = finished(sweep, results, caught_up)
    report = write_sweep_report(store, parent_id, preset, summary, sweep.plan.tracking_uri,
                                status="FINISHED" if complete else "KILLED")
    print(f"report: {report}", flush=True)
    print(where_to_look(sweep), flush=True)
    if caught_up.curve_failures:
        print(f"error: {caught_up.curve_failures} learning curve(s) failed (the lines above say why; "
              f"{python_module('platform.attack', sweep.plan.name, '--learning-curve')} draws them again)",
              file=sys.stderr, flush=True)
    if caught_up.farm_failures:
        print(f"error: {caught_up.farm_failures} checkpoint attack(s) failed (tag putlab.farm_error on their runs; "
              "--resume tries them again)", file=sys.stderr, flush=True)
    if not complete:
        return ending.interrupted(f"{sweep.plan.name} incomplete")
    ending.close("FINISHED")
    remember(store, sweep.exp_id, parent_id)  # the next sweep like it is priced from this one's minutes
    return 0


def finished(sweep: Sweep, results: Ended, caught_up: CaughtUp) -> bool:
    """Whether every planned trial (and baseline-grid trial) finished and every checkpoint was attacked."""
    complete = results.errors == 0 and results.terminated >= sweep.own_trials and caught_up.farm_failures == 0
    for trials, grid_results in zip(sweep.comparison_trials, caught_up.baseline_results, strict=True):
        complete &= grid_results is None or (grid_results.num_errors == 0 and grid_results.num_terminated >= trials)
    return complete


def tell(sweep: Sweep, summary: SweepSummary) -> None:
    """The trials table and front, the front beside each comparison grid it ran, and the raw-data reference points."""
    preset = sweep.spec.preset
    print(format_summary(summary, preset.label_keys))
    ran = {grid.preset.name for grid in sweep.comparison_grids}
    for curve in summary.comparisons:
        if curve.grid.name in ran:
            print(format_comparison(summary.compared, curve, summary.axes))
    if summary.hull is not None:
        print(format_hull(summary.compared, summary.hull, summary.axes))
    if preset.raw_references is not None:
        metrics = sweep.store.run(sweep.parent_id).data.metrics
        shown = (f"{k} {readable(v)}" for k, v in sorted(metrics.items()) if k.startswith("baseline/"))
        print("raw-data reference points: " + ", ".join(shown))


def where_to_look(sweep: Sweep) -> str:
    """How to open the sweep in MLflow: a tracking server is its own UI; a local store needs ``mlflow ui``."""
    uri, exp_id, name = sweep.plan.tracking_uri, sweep.exp_id, sweep.plan.name
    experiment = sweep.store.experiment(exp_id).name
    if uri.startswith(("http://", "https://")):
        return (f"MLflow: open {tracking.ui_url(uri, exp_id)}  (experiment {experiment}; the front's trials: "
                f"expand run {name})")
    return (f"MLflow: {command('mlflow', 'ui', '--backend-store-uri', uri, '--workers', '1')}  "
            f"(experiment {experiment}, run {name})\n"
            f"       then open {tracking.ui_url(uri, exp_id)}  (the front's trials: expand run {name})")
