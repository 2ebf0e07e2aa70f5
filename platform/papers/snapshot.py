"""A study's sweep as files beside the report (``study.json`` and ``trials.csv``), so the report can be regenerated,
and its verdict rules re-applied, on a machine whose MLflow store lacks the sweep."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd

from platform.papers.measures import StudyRuns

META, TRIALS, BASELINE = "study.json", "trials.csv", "baseline.csv"


def save(runs: StudyRuns, folder: Path) -> None:
    """Write the study's runs into ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    meta = {f.name: getattr(runs, f.name) for f in dataclasses.fields(runs) if f.name not in ("trials", "baseline")}
    meta["label_keys"] = list(runs.label_keys)
    (folder / META).write_text(json.dumps(meta, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    runs.trials.to_csv(folder / TRIALS, index=False)
    if not runs.baseline.empty:
        runs.baseline.to_csv(folder / BASELINE, index=False)


def load(folder: Path) -> StudyRuns | None:
    """The study's runs saved in ``folder``, or None when there are none."""
    if not (folder / META).exists():
        return None
    meta = json.loads((folder / META).read_text())
    meta["label_keys"] = tuple(meta["label_keys"])
    baseline = pd.read_csv(folder / BASELINE) if (folder / BASELINE).exists() else pd.DataFrame()
    return StudyRuns(trials=pd.read_csv(folder / TRIALS), baseline=baseline, **meta)
