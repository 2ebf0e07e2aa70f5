"""``python -m platform.compare SWEEP SWEEP ...``: several sweeps' PUT fronts on one plot, logged to MLflow.

Sweeps of different mechanisms (releaser, privatizer, Cloak) compare when their presets share the Pareto axes' metrics
(e.g. utility/accuracy against attack/max/accuracy). The comparison is a run of experiment ``putlab-comparisons``:
the overlaid fronts (PNG), every trial (CSV), each sweep's hypervolume against the same reference point, and an HTML
report of it all (``report/report.html``, also written to ``reports/`` beside the store).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd

from platform import tracking
from platform.cli import guarded
from platform.errors import UsageError
from platform.front_plot import plot_fronts
from platform.numbers import readable
from platform.pareto import Axis, hypervolume, pareto_mask
from platform.quiet import silence
from platform.report import render_comparison, report_dir, with_interval, write_report
from platform.sweep_config import get_preset
from platform.sweep_report import trials_table

EXPERIMENT = "putlab-comparisons"


def sweep_trials(client, target: str) -> tuple[str, pd.DataFrame, list[Axis]]:
    """(label, finished trials with both axes, axes) of one sweep."""
    exp_id, parent_id = tracking.find_sweep_parent(client, target)
    parent = client.get_run(parent_id)
    preset = get_preset(parent.data.params["preset"])
    axes = [Axis(**a) for a in preset.pareto_axes]
    table = trials_table(client, exp_id, parent_id, preset.label_keys)
    needed = [a.metric for a in axes]
    if table.empty or any(m not in table for m in needed):
        raise UsageError(f"sweep {parent.info.run_name} has no finished trial reporting {' and '.join(needed)}")
    table = table[table["status"] == "FINISHED"].dropna(subset=needed).reset_index(drop=True)
    return f"{preset.name} ({preset.mechanism}) {parent.info.run_name}", table.assign(sweep=parent.info.run_name), axes


def run(argv: list[str] | None = None) -> int:
    """Overlay the fronts, print each sweep's front size and hypervolume; returns the exit code."""
    p = argparse.ArgumentParser(prog="python -m platform.compare", description=__doc__.splitlines()[0])
    p.add_argument("sweeps", nargs="+", help="sweep parent run ids, sweep names or experiment names (newest sweep)")
    p.add_argument("--tracking-uri", help="MLflow tracking URI (default: sqlite:///<cwd>/mlflow.db)")
    args = p.parse_args(argv)
    silence()
    tracking_uri = args.tracking_uri or f"sqlite:///{Path.cwd() / 'mlflow.db'}"
    client = tracking.connect(tracking_uri)
    sweeps = [sweep_trials(client, s) for s in args.sweeps]
    axes = sweeps[0][2]
    for label, _, other in sweeps[1:]:
        if [a.metric for a in other] != [a.metric for a in axes]:
            raise UsageError(f"{label} has Pareto axes {[a.metric for a in other]}, not {[a.metric for a in axes]}")
    masks = [pareto_mask(table, axes) for _, table, _ in sweeps]
    lines = []
    metrics = {}
    summaries = []
    for i, ((label, table, _), mask) in enumerate(zip(sweeps, masks)):
        hv = hypervolume(table, axes, normalised=True)
        metrics[f"compare/{i}/hypervolume_normalised"] = hv
        lines.append(f"{label}: front {int(mask.sum())} of {len(table)} trials, hypervolume (normalised) {readable(hv)}")
        members = [{"name": row["name"], "axes": [with_interval(row, a.metric) for a in axes]}
                   for _, row in table[mask].iterrows()]
        summaries.append({"label": label, "trials": len(table), "front_size": int(mask.sum()), "hypervolume": hv,
                          "members": members})
    exp_id = tracking.experiment_id(client, EXPERIMENT)
    title = " vs ".join(t["sweep"].iloc[0] for _, t, _ in sweeps)
    run_ = client.create_run(exp_id, run_name=title)
    with tempfile.TemporaryDirectory() as tmp:
        plot_fronts([(label, table, mask) for (label, table, _), mask in zip(sweeps, masks)], axes,
                    Path(tmp) / "fronts.png", label_col="name")
        pd.concat([t.assign(pareto_front=m) for (_, t, _), m in zip(sweeps, masks)]).to_csv(Path(tmp) / "trials.csv", index=False)
        html = render_comparison(f"putlab comparison {title}", summaries, axes, Path(tmp) / "fronts.png")
        client.log_artifacts(run_.info.run_id, tmp, "comparison")
    report = write_report(client, run_.info.run_id, html, report_dir(tracking_uri) / f"compare-{run_.info.run_id}.html")
    tracking.log_params(client, run_.info.run_id, {f"sweep_{i}": label for i, (label, _, _) in enumerate(sweeps)})
    tracking.log_metrics(client, run_.info.run_id, metrics)
    client.set_terminated(run_.info.run_id)
    print("\n".join(lines))
    print(f"logged to experiment {EXPERIMENT}, run {run_.info.run_id} (comparison/fronts.png)")
    print(f"report: {report}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one line on stderr and exit code 2."""
    return guarded(lambda: run(argv))


if __name__ == "__main__":
    sys.exit(main())
