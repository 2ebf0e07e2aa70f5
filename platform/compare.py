"""``python -m platform.compare SWEEP SWEEP ...``: several sweeps' PUT fronts on one plot, logged to MLflow.

Sweeps of different mechanisms (releaser, privatizer, noise) compare when their presets share the Pareto axes' metrics
(e.g. utility/accuracy against attack/max/accuracy). The comparison is a run of experiment ``putlab-comparisons``:
the overlaid fronts (PNG, with error bars), every trial (CSV) and each sweep's hypervolume against the same reference
point. A sweep replicated over seeds enters as its per-point means (bars: ± std over seeds) and its hypervolume as the
mean over seeds with its std; otherwise the bars are the trials' logged 95 % intervals. An HTML report of it all is
logged as ``report/report.html`` and written to ``reports/`` beside the store.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pandas as pd

from core.numbers import readable
from core.pareto_axis import Axis
from core.quiet import silence
from platform.cli import guarded
from platform.errors import UsageError
from platform.figures.fronts import plot_fronts
from platform.figures.html_report import render_comparison, report_dir
from platform.figures.report_tables import with_interval
from platform.plan.spec import preset_of
from platform.results import drivers
from platform.results.store import Store
from platform.results.summary import SweepSummary, read_summary, summarise, usable_trials
from platform.results.sweep_record import store_report
from platform.run import preflight

EXPERIMENT = "putlab-comparisons"


def sweep_parents(store: Store, targets: list[str]) -> list[tuple[str, str]]:
    """(experiment id, parent run id) of each target; one sweep named twice (e.g. by name and by id) is a UsageError."""
    found: dict[str, str] = {}
    parents = []
    for target in targets:
        exp_id, parent_id = drivers.sweep_of(store, target)
        if parent_id in found:
            raise UsageError(f"{target!r} and {found[parent_id]!r} are the same sweep (run {parent_id}): "
                             "compare different sweeps")
        found[parent_id] = target
        parents.append((exp_id, parent_id))
    return parents


def sweep_summary(store: Store, parent_id: str) -> tuple[str, SweepSummary, tuple[str, ...]]:
    """(label, summary, label keys) of one sweep, whose trials carry its name (``sweep``); one without a finished trial
    reporting every axis is a UsageError."""
    parent = store.run(parent_id)
    preset = preset_of(parent.data.params)
    summary = read_summary(store, parent_id, preset)
    if summary.points.empty:
        needed = " and ".join(a.metric for a in summary.axes)
        raise UsageError(f"sweep {parent.info.run_name} has no finished trial reporting {needed}")
    trials = summary.trials.assign(sweep=parent.info.run_name)
    return f"{preset.name} ({preset.mechanism_name}) {parent.info.run_name}", replace(summary, trials=trials), preset.label_keys


def shared_axes(sweeps: list[tuple[str, SweepSummary, tuple[str, ...]]]) -> list[Axis]:
    """The axes every sweep's front is on; where some have a distortion axis and others not (a sweep logged before its
    preset gained one), the first two, which all must share (else a UsageError)."""
    axes = sweeps[0][1].axes
    for label, summary, _ in sweeps[1:]:
        if [a.metric for a in summary.axes[:2]] != [a.metric for a in axes[:2]]:
            raise UsageError(f"{label} has Pareto axes {[a.metric for a in summary.axes]}, not {[a.metric for a in axes]}")
    same = all([a.metric for a in s.axes] == [a.metric for a in axes] for _, s, _ in sweeps)
    return axes if same else axes[:2]


def run(argv: list[str] | None = None) -> int:
    """Overlay the fronts, print each sweep's front size and hypervolume; returns the exit code."""
    p = argparse.ArgumentParser(prog="python -m platform.compare", description=__doc__.splitlines()[0])
    p.add_argument("sweeps", nargs="+", help="two or more: sweep parent run ids, sweep names or experiment names "
                                             "(newest sweep)")
    p.add_argument("--tracking-uri", help="MLflow tracking URI (default: sqlite:///<cwd>/mlflow.db)")
    args = p.parse_args(argv)
    silence()
    preflight.check_not_empty(args, "tracking_uri")
    if len(args.sweeps) < 2:
        raise UsageError(f"give at least two sweeps to compare (got one: {args.sweeps[0]!r})")
    tracking_uri = args.tracking_uri or f"sqlite:///{Path.cwd() / 'mlflow.db'}"
    store = Store.open(tracking_uri, create=False)
    sweeps = [sweep_summary(store, parent_id) for _, parent_id in sweep_parents(store, args.sweeps)]
    axes = shared_axes(sweeps)
    if any(len(s.axes) != len(axes) for _, s, _ in sweeps):
        print(f"the sweeps do not all have a distortion axis: compared on {axes[0].metric} and {axes[1].metric} alone")
        sweeps = [(label, summarise(s.trials, axes, keys), keys) for label, s, keys in sweeps]
    lines = []
    metrics = {}
    summaries = []
    for i, (label, summary, _) in enumerate(sweeps):
        hv = summary.hypervolume_normalised
        metrics[f"compare/{i}/hypervolume_normalised"] = hv
        finished = len(usable_trials(summary.trials, axes))
        front = f"front {int(summary.front.sum())} of {finished} trials"
        if summary.spread:
            std = summary.spread["front/hypervolume_normalised/std"]
            metrics[f"compare/{i}/hypervolume_normalised/std"] = std
            seeds = int(summary.spread["front/seeds"])
            lines.append(f"{label}: {front} ({int(summary.points['pareto_front'].sum())} of {len(summary.points)} points, "
                         f"{seeds} seeds), hypervolume (normalised) {readable(hv)} ± {readable(std)} (mean ± std over seeds)")
        else:
            lines.append(f"{label}: {front}, hypervolume (normalised) {readable(hv)}")
        on_front = summary.points[summary.points["pareto_front"]]
        members = [{"name": row["name"], "axes": [with_interval(row, a.metric) for a in axes]} for _, row in on_front.iterrows()]
        summaries.append({"label": label, "trials": finished, "front_size": len(on_front), "hypervolume": hv,
                          "members": members})
    exp_id = store.ensure_experiment(EXPERIMENT)
    title = " vs ".join(s.trials["sweep"].iloc[0] for _, s, _ in sweeps)
    run_id = store.new_run(exp_id, title)
    with tempfile.TemporaryDirectory() as tmp:
        plot_fronts([(label, s.points, s.points["pareto_front"].to_numpy()) for label, s, _ in sweeps], axes,
                    Path(tmp) / "fronts.png", label_col="name")
        trials = pd.concat([usable_trials(s.trials.assign(pareto_front=s.front), axes) for _, s, _ in sweeps])
        trials.to_csv(Path(tmp) / "trials.csv", index=False)
        html = render_comparison(f"putlab comparison {title}", summaries, axes, Path(tmp) / "fronts.png")
        store.log_folder(run_id, tmp, "comparison")
    report = store_report(store, run_id, html, report_dir(tracking_uri) / f"compare-{run_id}.html")
    store.log_params(run_id, {f"sweep_{i}": label for i, (label, _, _) in enumerate(sweeps)})
    store.log_metrics(run_id, metrics)
    store.end(run_id)
    print("\n".join(lines))
    print(f"logged to experiment {EXPERIMENT}, run {run_id} (comparison/fronts.png)")
    print(f"report: {report}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one line on stderr and exit code 2."""
    return guarded(lambda: run(argv))


if __name__ == "__main__":
    sys.exit(main())
