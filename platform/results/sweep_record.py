"""What a sweep's report shows beyond its summary, read from the store once into typed objects: the parent run (its
name, status, times, params and metrics), each trial's run (its tags, times and metrics, its figures, attack pictures,
exposed records and game curves, downloaded into a folder) and the registry versions made from its trials; and the
report written back beside the store and on the run. The figures room draws from these and never reads the store.
"""
from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from attacks.audits.exposure import CSV_FILE as EXPOSED_CSV
from platform.results import tracking
from platform.results.game import GameCurves, read_game_curves
from platform.results.store import Store

REPORT_PATH = "report"  # the report's folder among the parent run's artifacts
GAME_PATH = "game"  # a trial's game curves' folder among its artifacts


@dataclass(frozen=True)
class TrialRecord:
    """One trial's run as the report shows it."""

    run_id: str
    strongest: str  # the strongest attacker's tag, e.g. "deep"
    reused_sweep: str  # the sweep this trial was copied from (platform.run.grid_reuse), else ""
    start_ms: int | None
    end_ms: int | None
    metrics: Mapping[str, float]
    figure_pngs: tuple[Path, ...]  # the checkpoints' pictures (figures/)
    attack_pngs: tuple[Path, ...]  # the farm's pictures (attacks/): ROC curves, exposed records, learning curves
    exposed_csv: Path | None  # the last checkpoint's exposed records
    game: GameCurves
    game_pngs: tuple[Path, ...]


@dataclass(frozen=True)
class SweepRecord:
    """The sweep's parent run, its trials' runs by run id, its front's pictures and its registered points."""

    run_id: str
    name: str
    status: str
    start_ms: int
    end_ms: int | None
    params: Mapping[str, str]
    metrics: Mapping[str, float]
    active_minutes: float  # the minutes it worked (pauses of an interrupted sweep left out)
    span_minutes: float  # from its start to its end
    trials: Mapping[str, TrialRecord]
    front_pngs: tuple[Path, ...]
    registered: tuple[dict[str, str], ...]


def pngs(store: Store, run_id: str, folder: str, into: Path) -> tuple[Path, ...]:
    """The PNGs directly under ``folder`` of the run, downloaded into ``into`` (none if the folder is absent)."""
    names = [path for path in store.files(run_id, folder) if path.endswith(".png")]
    return tuple(store.download(run_id, name, into) for name in sorted(names))


def latest_file(store: Store, run_id: str, folder: str, suffix: str, into: Path) -> Path | None:
    """The run's last checkpoint's ``epoch<NNN>_<suffix>`` under ``folder``, downloaded into ``into`` (None if absent)."""
    found = [(int(m.group(1)), path) for path in store.files(run_id, folder)
             if (m := re.search(r"epoch(\d+)_" + re.escape(suffix) + "$", path))]
    return store.download(run_id, max(found)[1], into) if found else None


def registered_points(store: Store, names: Mapping[str, str]) -> tuple[dict[str, str], ...]:
    """The registry versions made from the trials ``names`` (run id -> trial name), each with its latest audit of the
    served point (``python -m platform.audit``), or "not audited"."""
    if not names:
        return ()
    quoted = ", ".join(f"'{run_id}'" for run_id in names)
    versions = store.model_versions(f"run_id IN ({quoted})")
    return tuple({"model": f"{v.name}/{v.version}", "trial": names.get(v.run_id or "", ""),
                  "audit": v.tags.get("audit", "not audited"),
                  "date": v.tags.get("audit/date", ""), "audited": v.tags.get("audit/attack_accuracy", ""),
                  "recorded": v.tags.get("audit/recorded", "")}
                 for v in sorted(versions, key=lambda v: (v.name, int(v.version))))


def trial_record(store: Store, run_id: str, trial: str, runs: Mapping, into: Path) -> TrialRecord:
    """The trial ``trial`` (its name in the summary) of run ``run_id``; its pictures from the run that keeps them (a
    trial copied from an earlier sweep keeps its figures there), downloaded into a folder of its own under ``into``
    (trials' files share names, e.g. ``attacks/epoch001_exposed.csv``)."""
    run = runs[run_id]
    stored = tracking.artifact_run(run)
    into = into / run_id
    into.mkdir(parents=True, exist_ok=True)
    return TrialRecord(run_id, run.data.tags.get("putlab.strongest_attacker", ""),
                       run.data.tags.get(tracking.TAG_REUSED_SWEEP, ""), run.info.start_time, run.info.end_time,
                       dict(run.data.metrics), pngs(store, stored, "figures", into), pngs(store, stored, "attacks", into),
                       latest_file(store, stored, "attacks", EXPOSED_CSV, into),
                       read_game_curves(store, run_id, trial), pngs(store, stored, GAME_PATH, into))


def read_sweep_record(store: Store, parent_id: str, trials: Mapping[str, str], into: Path) -> SweepRecord:
    """The sweep ``parent_id`` and its ``trials`` (run id -> the trial's name in the summary), their pictures downloaded
    into ``into``."""
    parent = store.run(parent_id)
    runs = {r.info.run_id: r for r in store.child_runs(parent.info.experiment_id, parent_id)}
    return SweepRecord(
        parent_id, parent.info.run_name or "", parent.info.status, parent.info.start_time, parent.info.end_time,
        dict(parent.data.params), dict(parent.data.metrics), tracking.active_minutes(parent),
        tracking.span_minutes(parent),
        {run_id: trial_record(store, run_id, name, runs, into) for run_id, name in trials.items()},
        pngs(store, parent_id, "front", into / "sweep"),
        registered_points(store, {r.info.run_id: r.info.run_name for r in runs.values()}))


def store_report(store: Store, run_id: str, html: str, path: Path) -> Path:
    """Write ``html`` to ``path`` and log it on run ``run_id`` as ``report/report.html``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        logged = Path(tmp) / "report.html"
        logged.write_text(html, encoding="utf-8")
        store.log_file(run_id, logged, REPORT_PATH)
    return path
