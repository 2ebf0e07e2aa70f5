"""A study's sweep as files beside the report (``study.json`` and ``trials.csv``), so the report can be regenerated,
and its verdict rules re-applied, on a machine whose MLflow store lacks the sweep.

Both are read back through the validated readers of :mod:`core.files`: ``study.json`` against :class:`StudyFile`,
the tables against a schema whose columns ``study.json`` records (a table with columns stripped is refused, naming
them); a file that does not meet them is an :class:`~core.files.source.InputFileError`, one line naming it."""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.files.source import InputFileError
from core.files.structured import read_json
from core.files.tables import TableSchema, read_table
from platform.papers.parts import PART
from platform.papers.study_runs import Part, StudyRuns
from platform.results.comparison_grid import BASELINE as BASELINE_COLUMN

META, TRIALS, BASELINE = "study.json", "trials.csv", "baseline.csv"
IDENTITY = ("trial_id", "run_id", "name", "status")  # the columns every trials table has
BASELINE_IDENTITY = ("run_id", "name", "status")
TEXT = frozenset({*IDENTITY, PART})  # the text columns of a trials table (a joined study's names its parts); every
BASELINE_TEXT = frozenset({*BASELINE_IDENTITY, BASELINE_COLUMN, PART})  # other is a number; a baseline's rows name it
TABLES = ("trials", "baseline")


class StudyFile(BaseModel):
    """What ``study.json`` holds: the sweep's parent run as :class:`StudyRuns` has it (with the parts it was joined
    from, for a study run in parts), and the columns of its tables (``columns``, ``baseline_columns``; absent in
    snapshots saved before they were recorded, which then need only the identity and grid columns)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sweep: str
    profile: str
    parent_metrics: dict[str, float]
    label_keys: tuple[str, ...]
    status: Literal["RUNNING", "SCHEDULED", "FINISHED", "FAILED", "KILLED"]
    planned: int = Field(ge=0)
    dataset: str
    config: dict[str, str]
    started: str
    minutes: float
    machine: str
    parts: tuple[Part, ...] = ()
    columns: tuple[str, ...] | None = None
    baseline_columns: tuple[str, ...] | None = None

    @field_validator("config")
    @classmethod
    def _records_are_a_count(cls, config: dict[str, str]) -> dict[str, str]:
        """``n_train`` (the report's scale reads it as a count) is ``None`` or a finite number of records."""
        records = config.get("n_train", "None")
        try:
            finite = records == "None" or math.isfinite(float(records))
        except ValueError:
            finite = False
        if not finite:
            raise ValueError(f"n_train must be None or a number of records (got {records!r:.40})")
        return config


def save(runs: StudyRuns, folder: Path) -> None:
    """Write the study's runs into ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    trials = runs.trials if len(runs.trials.columns) else pd.DataFrame(columns=[*IDENTITY, *runs.label_keys])
    meta = {f.name: getattr(runs, f.name) for f in dataclasses.fields(runs) if f.name not in TABLES}
    meta["parts"] = [dataclasses.asdict(p) for p in runs.parts]
    meta |= {"label_keys": list(runs.label_keys), "columns": [str(c) for c in trials.columns]}
    if not runs.baseline.empty:
        meta["baseline_columns"] = [str(c) for c in runs.baseline.columns]
    (folder / META).write_text(json.dumps(meta, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    trials.to_csv(folder / TRIALS, index=False)
    if not runs.baseline.empty:
        runs.baseline.to_csv(folder / BASELINE, index=False)


def load(folder: Path) -> StudyRuns | None:
    """The study's runs saved in ``folder``, or None when there is no such folder; an InputFileError naming the folder
    when it is a file or holds no ``study.json`` (a checkout that lost a study), or the first file that is not what
    :func:`save` writes: off its schema, or a number inf or nan outside the grid axes (the only ones that may be)."""
    if not folder.exists():
        return None
    if not folder.is_dir():
        raise InputFileError(folder, "is a file, not a study's snapshot folder")
    if not (folder / META).exists():
        raise InputFileError(folder, f"holds no {META}: not a snapshot the report wrote")
    meta = read_json(folder / META, StudyFile)
    axes = frozenset(meta.label_keys)
    trials = read_table(folder / TRIALS, TableSchema(meta.columns or (*IDENTITY, *meta.label_keys), TEXT, axes))
    baseline = pd.DataFrame()
    if meta.baseline_columns is not None or (folder / BASELINE).exists():
        baseline = read_table(folder / BASELINE, TableSchema(meta.baseline_columns or BASELINE_IDENTITY,
                                                             BASELINE_TEXT, axes))
    return StudyRuns(trials=trials, baseline=baseline, parts=meta.parts,
                     **meta.model_dump(exclude={"columns", "baseline_columns", "parts"}))
