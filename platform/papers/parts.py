"""A study run in parts: sweeps of one plan, each over its own seeds, joined into the study's runs.

A study too long for one sitting runs its command once per seed (``--set seed=K`` in place of ``--seeds N``), on one
machine or several, each part landing by its snapshot. :func:`join` takes the study's sources newest first (the sweeps in
the store, then the committed snapshot) and keeps every part whose plan is the newest's (profile, data set, grid axes
and config, the seed aside) and whose seeds no newer part holds: a part is never split, a seed never counted twice,
and a part of another plan is left out with the reason. Pure computation on :class:`StudyRuns`, no MLflow.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from platform.papers.measures import Part, StudyRuns
from platform.results.replicates import SEED


def with_seed_column(runs: StudyRuns) -> StudyRuns:
    """The runs with a ``seed`` column in their tables: a one-seed sweep (``--set seed=K``) logs its seed in its
    config only."""
    seed = runs.config.get(SEED)
    if seed is None:
        return runs
    tables = {name: table if table.empty or SEED in table else table.assign(**{SEED: int(float(seed))})
              for name, table in (("trials", runs.trials), ("baseline", runs.baseline))}
    return replace(runs, **tables)


def parts_of(runs: StudyRuns) -> tuple[Part, ...]:
    """The sweeps the runs were joined from, or the one sweep they are."""
    if runs.parts:
        return runs.parts
    seeds = tuple(sorted(int(s) for s in runs.trials[SEED].unique())) if SEED in runs.trials else ()
    return (Part(runs.sweep, runs.started, runs.minutes, runs.machine, runs.status, runs.planned, seeds),)


def plan_difference(newest: StudyRuns, other: StudyRuns) -> str | None:
    """Why ``other`` is not a part of ``newest``'s plan (the first difference found), or None when it is."""
    checks = (("profile", newest.profile, other.profile), ("data set", newest.dataset, other.dataset),
              ("data", newest.provenance, other.provenance),
              ("grid axes", _axes(newest), _axes(other)))
    for what, mine, theirs in checks:
        if mine != theirs:
            return f"{what} {theirs!r}, not {mine!r}"
    keys = sorted((set(newest.config) | set(other.config)) - {SEED})
    differing = [k for k in keys if newest.config.get(k) != other.config.get(k)]
    if differing:
        k = differing[0]
        return f"config {k} = {other.config.get(k)!r}, not {newest.config.get(k)!r}"
    return None


def join(sources: Sequence[StudyRuns]) -> tuple[StudyRuns, list[str]]:
    """The study's runs from its sources, newest first, and one line per source or part left out (why).

    The newest source is always kept whole; an older part joins when its plan is the newest's and none of its seeds is
    taken. A single part comes back as it is (its seed column added)."""
    newest, *older = [with_seed_column(s) for s in sources]
    taken: list[tuple[Part, StudyRuns]] = [(part, newest) for part in reversed(parts_of(newest))]  # newest first
    left_out = []
    for source in older:
        reason = plan_difference(newest, source)
        for part in reversed(parts_of(source)):
            seeds = {s for p, _ in taken for s in p.seeds}
            if any(part.sweep == p.sweep for p, _ in taken):
                continue  # the same sweep, read from the store and from the snapshot
            why = reason or ("no seed recorded" if not part.seeds else
                             f"seeds {sorted(seeds & set(part.seeds))} are a newer part's" if seeds & set(part.seeds)
                             else None)
            if why is None:
                taken.append((part, source))
            else:
                left_out.append(f"{part.sweep}: {why}")
    if len(taken) == 1:
        return newest, left_out
    return _joined(newest, taken), left_out


def _joined(newest: StudyRuns, taken: list[tuple[Part, StudyRuns]]) -> StudyRuns:
    """The taken parts as one study: their trials and baseline rows (each part's seeds), oldest part first."""
    read = {ps[0].sweep: i for i, ps in enumerate(taken)}  # newest first; a tie in started (same minute) goes by it
    taken = sorted(taken, key=lambda ps: (ps[0].started, -read[ps[0].sweep]))
    parts = tuple(part for part, _ in taken)
    trials = pd.concat([_rows(source.trials, part) for part, source in taken], ignore_index=True)
    baselines = [_rows(source.baseline, part) for part, source in taken if not source.baseline.empty]
    minutes = sum(p.minutes for p in parts)
    unfinished = [p.status for p in parts if p.status != "FINISHED"]
    return replace(newest, sweep=" + ".join(p.sweep for p in parts), trials=trials,
                   baseline=pd.concat(baselines, ignore_index=True) if baselines else pd.DataFrame(),
                   label_keys=_axes(newest) + (SEED,), status=unfinished[0] if unfinished else "FINISHED",
                   planned=sum(p.planned for p in parts), started=parts[0].started,
                   minutes=minutes if math.isfinite(minutes) else math.nan,
                   machine="; ".join(dict.fromkeys(p.machine for p in parts)), parts=parts)


def _rows(table: pd.DataFrame, part: Part) -> pd.DataFrame:
    """The rows of ``table`` that belong to ``part`` (its seeds)."""
    if table.empty or SEED not in table:
        return table
    return table[table[SEED].astype(int).isin(part.seeds)]


def _axes(runs: StudyRuns) -> tuple[str, ...]:
    """The grid axes of a point, the seed aside."""
    return tuple(k for k in runs.label_keys if k != SEED)
