"""``python -m platform.reproduction``: the reproduction report, ``docs/reproduction.md`` and its figures, from the
studies' sweeps in MLflow.

Each study (platform/papers/, one module per paper) is one sweep command writing to its own experiment
``repro-<study>``; the report reads the newest sweep of each (a study run in parts, one sweep per seed: the parts of
the newest's plan joined, from the store and the committed snapshot; platform/papers/parts.py), evaluates every claim
of the four papers against it (the paper's number, putlab's with its seed band and test, the verdict, the row's data,
scale and caveat), and names the command that re-runs the row. Beside the report, each study's folder keeps the
sweep's figures and a snapshot of its runs (``study.json``, ``trials.csv``): a study the store lacks is read from its
snapshot, so the report regenerates anywhere; ``--snapshots`` reads the snapshots alone (no store, no sweep run): the
way to regenerate the committed report after its code changed. A snapshot file that is not what the report wrote is
refused in one line, before anything is written. ``--run`` first runs the sweeps of studies that have none yet
(``--rerun``: all of them again).
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from core.metric_names import STRONGEST_ATTACK
from core.quiet import silence
from platform.cli import guarded
from platform.errors import UsageError
from platform.figures.summary_figures import draw_summary
from platform.papers import snapshot
from platform.papers.catalogue import CLAIMS, STUDIES
from platform.papers.claim import Study
from platform.papers.markdown import render, tally
from platform.papers.parts import join, parts_of
from platform.papers.study_runs import StudyRuns
from platform.papers.verdicts import evaluate
from platform.plan.spec import get_preset, preset_of, resolve
from platform.results import tracking
from platform.results.comparison_grid import BASELINE
from platform.results.replicates import SEED
from platform.results.store import Run, Store
from platform.results.summary import read_summary, summary_of
from platform.run import preflight
from search_spaces import Preset

REPORT = Path("docs") / "reproduction.md"
FIGURES = "reproduction"  # folder beside the report


def study_sweeps(store: Store, study: Study) -> list[tuple[str, StudyRuns]]:
    """(parent run id, runs) of each of the study's sweeps in the store, newest first.

    A sweep still running or interrupted counts with the trials it finished; the report says so."""
    return [(parent.info.run_id, sweep_runs(store, parent)) for parent in sweep_parents(store, study)]


def sweep_parents(store: Store, study: Study, finished_only: bool = False) -> list[Run]:
    """The parent runs of the study's sweeps, newest first (``finished_only``: the finished ones)."""
    experiment = store.experiment_named(study.experiment)
    if experiment is None:
        return []
    done = " and attributes.status = 'FINISHED'" if finished_only else ""
    return store.runs([experiment.experiment_id],
                              where=f"tags.`{tracking.TAG_ROLE}` = 'sweep'{done}",
                              order_by=["attributes.start_time DESC"])


def sweep_runs(store: Store, parent: Run) -> StudyRuns:
    """One sweep's parent run and finished trials (its own and its comparison grids') as a study's runs."""
    params = parent.data.params
    preset = preset_of(params)
    summary = read_summary(store, parent.info.run_id, preset)
    table = finished_trials(summary.trials)
    start = parent.info.start_time
    return StudyRuns(parent.info.run_name, params.get("profile", ""), dict(parent.data.metrics), table,
                     preset.label_keys, parent.info.status, int(params.get("planned_trials", len(table))),
                     params.get("dataset", ""), {k.removeprefix("config."): v for k, v in params.items()
                                                 if k.startswith("config.")},
                     datetime.fromtimestamp(start / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M"),
                     tracking.active_minutes(parent), params.get("machine", "not recorded"),
                     finished_trials(summary.comparison_trials))


def finished_trials(table: pd.DataFrame) -> pd.DataFrame:
    """The trials that finished, their farm's attacks included: where a sweep's trials report the strongest attacker,
    one without it (a stopped sweep cancelled its attacks) is left for a later part to run."""
    if table.empty:
        return table
    done = table["status"] == "FINISHED"
    if STRONGEST_ATTACK in table:
        done &= table[STRONGEST_ATTACK].notna()
    return table[done].reset_index(drop=True)


def figures_parent(store: Store, found: list[tuple[str, StudyRuns]], runs: StudyRuns) -> tuple[str, bool]:
    """The parent run (of ``found``, newest first) whose figures the study shows, and whether it published its front:
    the newest of its joined parts that did, else its newest (a part stopped before publishing has no front, nor its
    trials' images)."""
    joined = {p.sweep for p in parts_of(runs)}
    parts = [run_id for run_id, sweep in found if sweep.sweep in joined] or [found[0][0]]
    return next(((run_id, True) for run_id in parts if published(store, run_id)), (parts[0], False))


def published(store: Store, parent_id: str) -> bool:
    """Whether the sweep published its front (a PNG under the parent's ``front/``)."""
    return any(path.endswith(".png") for path in store.files(parent_id, "front"))


def copy_figures(store: Store, parent_id: str, study: Study, out: Path, keep: bool = False) -> list[Path]:
    """The sweep's figures (PNGs under the parent's ``front/``), each front trial's last released-images figure
    (``released_<trial>.png``, where the mechanism draws one) and, beside them, one seed's baseline-grid releases
    (``baseline_<trial>.png``, e.g. Gaussian noise at each σ), copied to ``out/<study>/``; returns the folder's
    figures. ``keep``: the folder's images the sweep does not replace stay (a part that ran some of the study's points
    or no comparison grid), else the folder starts empty."""
    target = out / study.key
    if target.exists() and not keep:
        shutil.rmtree(target)
    target.mkdir(parents=True, exist_ok=True)
    copied = sorted(target.glob("*.png"))
    with tempfile.TemporaryDirectory() as tmp:
        for path in store.files(parent_id, "front"):
            if path.endswith(".png"):
                local = store.download(parent_id, path, tmp)
                copied.append(Path(shutil.copy(local, target / local.name)))
        exp_id = store.run(parent_id).info.experiment_id
        front = store.runs([exp_id], where=f"tags.`{tracking.TAG_PARENT}` = '{parent_id}' and "
                                           f"tags.`{tracking.TAG_FRONT}` = 'true'")
        baseline = one_seed(store.baseline_runs(exp_id, parent_id))
        for prefix, trials in (("released", front), ("baseline", baseline)):
            for trial in trials:
                stored = tracking.artifact_run(trial)  # a trial copied from an earlier sweep: its figures are there
                released = sorted(path for path in store.files(stored, "figures") if path.endswith("_released.png"))
                if released:
                    local = store.download(stored, released[-1], tmp)
                    name = re.sub(r"[^A-Za-z0-9.=-]+", "_", trial.info.run_name or trial.info.run_id)
                    copied.append(Path(shutil.copy(local, target / f"{prefix}_{name}.png")))
    return sorted(set(copied))


def rejoined(kept: StudyRuns, study: Study, folder: Path) -> tuple[StudyRuns, list[Path]]:
    """A committed snapshot as the report reads it, with its figures: a study of parts joined again by today's rules
    (its sweep-level numbers, front and trends drawn again, the snapshot saved again), one sweep as it was saved."""
    figures = sorted(folder.glob("*.png"))
    if len(kept.parts) < 2:
        return kept, figures
    runs, _ = join([kept])
    figures = draw_joined(runs, get_preset(study.preset), folder, figures)
    snapshot.save(runs, folder)
    return runs, figures


def draw_joined(runs: StudyRuns, preset: Preset, folder: Path, copied: list[Path]) -> list[Path]:
    """A study run in parts (or stopped before publishing): its front and trends drawn from the joined trials (every
    part's seeds) in place of the newest part's; returns the study's figures."""
    preset = replace(preset, label_keys=runs.label_keys)
    baseline = runs.baseline
    baselines = ({str(name): rows.drop(columns=BASELINE) for name, rows in baseline.groupby(BASELINE)}
                 if BASELINE in baseline else {})
    summary = summary_of(runs.trials, baselines, preset, runs.parent_metrics)
    for path in copied:
        if path.name.startswith(("front", "trends")):
            path.unlink()
    drawn = draw_summary(summary, preset, folder)
    return sorted({*(p for p in copied if p.exists()), *drawn})


def joins(runs: StudyRuns, kept: StudyRuns | None) -> bool:
    """Whether the study joins parts of its committed snapshot: then the store's images add to the snapshot's (a part
    may run some of the points, or no comparison grid), else they replace them."""
    return kept is not None and bool({p.sweep for p in parts_of(kept)} & {p.sweep for p in runs.parts})


def one_seed(trials: list[Run]) -> list[Run]:
    """The trials of the lowest seed among them (all of them when none records a seed)."""
    seeds = {t.data.params[SEED] for t in trials if SEED in t.data.params}
    lowest = min(seeds, key=float, default=None)
    return [t for t in trials if t.data.params.get(SEED) == lowest]


def plan_drift(study: Study, runs: StudyRuns) -> list[str]:
    """``key = ran (today value)`` for each config setting the study's sweep recorded that its command sets otherwise
    today (the seed aside; a setting added since, which the sweep could not record, is not compared)."""
    today = tracking.flatten("", resolve(study.preset, study.profile, study.overrides()).config)
    return [f"{key} = {runs.config[key]} (today {today[key]})"
            for key in sorted((runs.config.keys() & today.keys()) - {SEED}) if runs.config[key] != today[key]]


def plan_drifts(runs: dict[str, StudyRuns]) -> dict[str, list[str]]:
    """:func:`plan_drift` of every study the report shows."""
    return {study.key: plan_drift(study, runs[study.key]) for study in STUDIES if study.key in runs}


def run_study(study: Study, tracking_uri: str) -> None:
    """Run the study's sweep in a child process (its progress shows); a failure is a one-line UsageError."""
    print(f"study {study.key}: {study.command()}", flush=True)
    done = subprocess.run([sys.executable, *study.argv(), "--tracking-uri", tracking_uri], check=False)
    if done.returncode != 0:
        raise UsageError(f"study {study.key}: the sweep exited with {done.returncode}")


def run(argv: list[str] | None = None) -> int:
    """Run missing studies (with ``--run``), evaluate every claim, write the report; returns the exit code."""
    p = argparse.ArgumentParser(prog="python -m platform.reproduction",
                                description="The reproduction report from the studies' sweeps in MLflow, or from "
                                            "the snapshots committed beside it (--snapshots).")
    p.add_argument("--tracking-uri", help="MLflow tracking URI (default: sqlite:///<cwd>/mlflow.db)")
    p.add_argument("--run", action="store_true", help="first run the sweeps of studies that have none yet")
    p.add_argument("--rerun", action="store_true", help="first run every study's sweep again")
    p.add_argument("--only", help="comma-separated study keys to run (default: all)")
    p.add_argument("--out", help=f"report path in an existing folder (default {REPORT}; figures go to its folder)")
    p.add_argument("--snapshots", action="store_true",
                   help="regenerate from the studies' snapshots beside the report only: read no MLflow store, run "
                        "no sweep (the committed report after a change to its code)")
    args = p.parse_args(argv)
    silence()
    preflight.check_not_empty(args, "tracking_uri", "only", "out")
    if args.snapshots and (args.run or args.rerun or args.tracking_uri is not None):
        raise UsageError("--snapshots reads no store and runs no sweep: leave out --run, --rerun and --tracking-uri")
    if args.out is not None:
        preflight.check_out_file(Path(args.out))
    known = {s.key: s for s in STUDIES}
    only = [k.strip() for k in args.only.split(",")] if args.only else list(known)
    unknown = sorted(set(only) - set(known))
    if unknown:
        raise UsageError(f"unknown study {', '.join(unknown)}; known: {', '.join(known)}")
    tracking_uri = args.tracking_uri or f"sqlite:///{Path.cwd() / 'mlflow.db'}"
    # without --run it only reads the store; with --snapshots it reads none
    store = None if args.snapshots else Store.open(tracking_uri, create=args.run or args.rerun)
    if store is not None and (args.run or args.rerun):
        for key in only:
            if args.rerun or not sweep_parents(store, known[key], finished_only=True):
                run_study(known[key], tracking_uri)
    report = Path(args.out) if args.out else REPORT
    out = report.parent / FIGURES
    stored = {study.key: study_sweeps(store, study) if store is not None else [] for study in STUDIES}
    # every snapshot is read (and validated) before anything is written: the report falls back on it, or joins its parts
    saved = {study.key: snapshot.load(out / study.key) for study in STUDIES}
    if args.snapshots and all(kept is None for kept in saved.values()):
        raise UsageError(f"--snapshots: no study snapshot in {out} to read")
    runs: dict[str, StudyRuns] = {}
    figures: dict[str, list[Path]] = {}
    for study in STUDIES:
        found, kept = stored[study.key], saved[study.key]
        if found and store is not None:
            runs[study.key], left_out = join([r for _, r in found] + ([kept] if kept is not None else []))
            for line in left_out:
                print(f"study {study.key}: not joined: {line}")
            parent, fronted = figures_parent(store, found, runs[study.key])
            if kept is not None and runs[study.key].parts and not fronted:
                # no part in the store published its front (one stopped early): the snapshot's images stay
                figures[study.key] = sorted((out / study.key).glob("*.png"))
            else:
                figures[study.key] = copy_figures(store, parent, study, out, keep=joins(runs[study.key], kept))
            if runs[study.key].parts or not any(p.name.startswith("front") for p in figures[study.key]):
                # a study of parts, or one sweep stopped before it published its front: drawn from its trials
                preset = preset_of(store.run(found[0][0]).data.params)
                figures[study.key] = draw_joined(runs[study.key], preset, out / study.key, figures[study.key])
            snapshot.save(runs[study.key], out / study.key)
        elif kept is not None:
            runs[study.key], figures[study.key] = rejoined(kept, study, out / study.key)
    rows = evaluate(CLAIMS, runs)
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(render(rows, runs, figures, report, plan_drifts(runs)))
    print(f"report: {report} ({tally(rows).replace('**', '')})")
    missing = [s.key for s in STUDIES if s.key not in runs]
    if missing:
        print(f"studies without a sweep or a snapshot: {', '.join(missing)} (run them with --run)")
    stale = sorted(f.name for f in out.iterdir() if f.is_dir() and f.name not in runs) if out.is_dir() else []
    if stale:
        print(f"folders in {out} of studies the report does not show: {', '.join(stale)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one line on stderr and exit code 2."""
    return guarded(lambda: run(argv))


if __name__ == "__main__":
    sys.exit(main())
