"""What a reproduction study's sweep holds, as the measures read it: its parent run's metrics, one row per finished
trial, its comparison grids' trials, its data's provenance and scale, and, for a study run in parts, each part and
the sweep-level numbers the study counts of it."""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from platform.results.replicates import SEED, point_keys

STAND_IN, REAL, UNKNOWN = "synthetic stand-in", "real", "unknown"  # a study's data provenance


FRONT = "front/"  # the parent metrics of a sweep's Pareto front (hypervolume, shares beating a baseline, ...)


STAND_IN_FLAG = "data/synthetic"  # the parent metric a loader with a stand-in logs: 1 stand-in, 0 the real files


@dataclass(frozen=True)
class Part:
    """One sweep of a study run in parts (platform/papers/parts.py): its name, when it started (UTC), its minutes,
    machine and status, the trials it planned, the seeds and number of the trials the study keeps of it, and its parent
    run's metrics (a joined study reads a sweep-level number over its parts; empty in snapshots saved before)."""

    sweep: str
    started: str
    minutes: float
    machine: str
    status: str
    planned: int
    seeds: tuple[int, ...]
    trials: int
    metrics: dict[str, float] = field(default_factory=dict)


def sweep_numbers(parts: Iterable[Part]) -> list[tuple[tuple[int, ...], dict[str, float]]]:
    """The parts' sweep-level numbers as a joined study counts them, one set per seeds (oldest part first): a seed two
    parts ran (the second running the points the first missed) is measured once, the newest part's number; and a part
    that planned fewer points a seed than the study gives no ``front/`` number (its front is of those points only)."""
    parts = list(parts)
    per_seed = max((planned_per_seed(p) for p in parts), default=0)
    numbers: dict[tuple[int, ...] | str, tuple[tuple[int, ...], dict[str, float]]] = {}
    for part in parts:
        whole = planned_per_seed(part) >= per_seed
        own = {k: v for k, v in part.metrics.items() if whole or not k.startswith(FRONT)}
        key = part.seeds or part.sweep
        numbers[key] = (part.seeds, numbers.get(key, ((), {}))[1] | own)
    return list(numbers.values())


def planned_per_seed(part: Part) -> int:
    """The trials a part planned for each of its seeds."""
    return math.ceil(part.planned / max(1, len(part.seeds)))


@dataclass(frozen=True)
class StudyRuns:
    """A study's newest sweep (or its parts joined): its parent metrics, one row per finished trial, and how far the sweep
    got."""

    sweep: str
    profile: str
    parent_metrics: dict[str, float]
    trials: pd.DataFrame
    label_keys: tuple[str, ...] = ()  # the grid axes (a point is a trial's values of them, its seed aside)
    status: str = "FINISHED"  # the sweep's parent run: FINISHED, or RUNNING / KILLED / FAILED (its trials so far)
    planned: int = 0  # trials the sweep planned
    dataset: str = ""  # the data set's registry name, as the sweep logged it
    config: dict[str, str] = field(default_factory=dict)  # the sweep's logged config (``config.<key>`` params)
    started: str = ""  # when the sweep started, UTC (YYYY-MM-DD HH:MM)
    minutes: float = math.nan  # the sweep's wall time
    machine: str = ""  # the cluster it ran on, as the sweep logged it
    # the comparison grids' trials (e.g. Gaussian noise), each row's baseline named in column ``baseline`` (a snapshot
    # from before there could be several has no such column: its rows are the noise grid's)
    baseline: pd.DataFrame = field(default_factory=pd.DataFrame)
    parts: tuple[Part, ...] = ()  # the sweeps of a study run in parts, oldest first (empty: one sweep)

    @property
    def seeds(self) -> int:
        """How many seeds the sweep replicated every point over."""
        return seed_count(self.trials)

    @property
    def provenance(self) -> str:
        """Where the data came from, failing closed: a stand-in or the real files as the sweep's ``data/synthetic``
        flag says; without the flag, real only for a registered data set that has no stand-in (its loader reads
        nothing but the real files); otherwise unknown."""
        flag = self.parent_metrics.get(STAND_IN_FLAG)
        if flag is not None:
            return STAND_IN if flag == 1 else REAL if flag == 0 else UNKNOWN
        return REAL if has_stand_in(self.dataset) is False else UNKNOWN

    @property
    def data(self) -> str:
        """The data set, marked when the sweep ran on a synthetic stand-in rather than the paper's files, or when its
        provenance is unknown, so no reader takes a number on generated data for a reproduction of the real one."""
        shown, provenance = self.dataset or "unnamed data set", self.provenance
        if provenance == REAL:
            return shown
        return f"{shown} ({'provenance unknown' if provenance == UNKNOWN else STAND_IN})"

    @property
    def scale(self) -> str:
        """Training records and epochs (where the config has them), trials, grid points and seeds."""
        parts = []
        records = self.config.get("n_train")
        if records is not None:
            parts.append("all records" if records == "None" else f"{int(float(records)):,} records")
        if self.config.get("epochs") not in (None, "None"):
            parts.append(f"{self.config['epochs']} epochs")
        keys = point_keys(self.trials, self.label_keys)
        points = len(self.trials.groupby(keys)) if keys else len(self.trials) // max(self.seeds, 1)
        grid = f"{points} points × {self.seeds} seed{'s' * (self.seeds > 1)}"
        if points * self.seeds != len(self.trials):
            grid = f"{points} points, {self.seeds} seeds, not every seed at every point"
        parts.append(f"{len(self.trials)} trials ({grid})")
        return ", ".join(parts)


def has_stand_in(dataset: str) -> bool | None:
    """Whether the registered data set ``dataset`` can load a synthetic stand-in (None: no such data set)."""
    from core.data.registry import dataset_names, get_dataset  # the registry imports every data set's module

    return get_dataset(dataset).stand_in if dataset in dataset_names() else None


def seed_count(trials: pd.DataFrame) -> int:
    """How many seeds the trials span (1 when the table has no seed column, 0 when it is empty)."""
    if trials.empty:
        return 0
    return int(trials[SEED].nunique()) if SEED in trials else 1
