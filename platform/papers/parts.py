"""A study run in parts: sweeps of one plan, each over its own seeds or trials, joined into the study's runs.

A study too long for one sitting runs its command once per seed (``--set seed=K`` in place of ``--seeds N``), and a
part stopped before its end lands with the trials it finished: the next part runs what is missing. :func:`join` takes
the study's sources newest first (the sweeps in the store, then the committed snapshot) and keeps, of every part whose
plan is the newest's (profile, data set, grid axes and config, the seed aside), the trials no newer part holds: a trial
(its grid point and seed; a baseline's trial: its baseline, name and seed) is never counted twice, and a part of
another plan is left out with the reason. A sweep-level number (a parent metric) of the joined study is its parts'
mean, a seed that two parts ran counted once (the newer's number) and a part of some of a seed's points giving no
front number; the report reads it over the parts that logged it, with its t interval. Pure computation on :class:`StudyRuns`,
no MLflow.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pandas as pd

from platform.papers.statistics import t_interval
from platform.papers.study_runs import Part, StudyRuns, planned_per_seed, sweep_numbers
from platform.results.comparison_grid import BASELINE
from platform.results.replicates import SEED, without_seed

CI_ENDS = ("/ci_low", "/ci_high")
PART = "sweep"  # the column of a joined study's tables naming the part each row came from


@dataclass(frozen=True)
class Taken:
    """A part and the rows of its trials and baseline trials that the study keeps."""

    part: Part
    trials: pd.DataFrame
    baseline: pd.DataFrame


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
    """The sweeps the runs were joined from (oldest first), or the one sweep they are."""
    if runs.parts:
        return runs.parts
    return (Part(runs.sweep, runs.started, runs.minutes, runs.machine, runs.status, runs.planned,
                 _seeds(runs.trials), len(runs.trials), dict(runs.parent_metrics)),)


def plan_difference(newest: StudyRuns, other: StudyRuns) -> str | None:
    """Why ``other`` is not a part of ``newest``'s plan (the first difference found), or None when it is."""
    checks = (("profile", newest.profile, other.profile), ("data set", newest.dataset, other.dataset),
              ("data", newest.provenance, other.provenance), ("grid axes", _axes(newest), _axes(other)))
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
    """The study's runs from its sources, newest first, and one line per part left out, or trimmed, and why.

    The newest source is kept whole; an older part of its plan adds the trials no newer part holds. A single part
    comes back as it is (its seed column added)."""
    newest, *older = [with_seed_column(s) for s in sources]
    axes = _axes(newest)
    taken = [_take(newest, part) for part in reversed(parts_of(newest))]  # newest first
    notes = []
    for source in older:
        reason = plan_difference(newest, source)
        for part in reversed(parts_of(source)):
            if any(part.sweep == t.part.sweep for t in taken):
                continue  # the same sweep, read from the store and from the snapshot
            if reason is not None:
                notes.append(f"{part.sweep}: {reason}")
                continue
            whole = _take(source, part)
            kept = _unheld(whole, taken, axes)
            dropped = len(whole.trials) + len(whole.baseline) - len(kept.trials) - len(kept.baseline)
            if kept.trials.empty and kept.baseline.empty:
                notes.append(f"{part.sweep}: every trial is a newer part's")
                continue
            if dropped:
                notes.append(f"{part.sweep}: {dropped} of its trials are a newer part's, left out")
            taken.append(kept)
    if len(taken) == 1:
        return newest, notes
    return _joined(newest, taken), notes


def _take(source: StudyRuns, part: Part) -> Taken:
    """The part's rows of the source's tables (all of them when the source is one sweep), marked with the part."""
    def rows(table: pd.DataFrame) -> pd.DataFrame:
        if table.empty:
            return table
        mine = table[table[PART] == part.sweep] if PART in table else table
        return mine.assign(**{PART: part.sweep})
    return Taken(part, rows(source.trials), rows(source.baseline))


def _unheld(whole: Taken, taken: Sequence[Taken], axes: tuple[str, ...]) -> Taken:
    """``whole`` with the trials a taken part already holds left out; its part's seeds and trial count updated."""
    held_trials = {k for t in taken for k in _trial_keys(t.trials, axes)}
    held_baseline = {k for t in taken for k in _baseline_keys(t.baseline)}
    trials = whole.trials[[k not in held_trials for k in _trial_keys(whole.trials, axes)]]
    baseline = whole.baseline[[k not in held_baseline for k in _baseline_keys(whole.baseline)]]
    return Taken(replace(whole.part, seeds=_seeds(trials), trials=len(trials)), trials, baseline)


def _joined(newest: StudyRuns, taken: list[Taken]) -> StudyRuns:
    """The taken parts as one study, oldest part first (a tie in their start minute: the order they were read); it
    planned the most any part planned per seed (its planned trials over its seeds), for each seed; finished when it
    holds that many trials."""
    read = {t.part.sweep: i for i, t in enumerate(taken)}
    taken = sorted(taken, key=lambda t: (t.part.started, -read[t.part.sweep]))
    parts = tuple(t.part for t in taken)
    baselines = [t.baseline for t in taken if not t.baseline.empty]
    minutes = sum(p.minutes for p in parts)
    unfinished = [p.status for p in parts if p.status != "FINISHED"]
    per_seed = max(planned_per_seed(p) for p in parts)
    planned = per_seed * len({s for p in parts for s in p.seeds})
    trials = pd.concat([t.trials for t in taken], ignore_index=True)
    return replace(newest, sweep=" + ".join(p.sweep for p in parts), trials=trials,
                   parent_metrics=newest.parent_metrics | _mean_metrics(parts),
                   baseline=pd.concat(baselines, ignore_index=True) if baselines else pd.DataFrame(),
                   label_keys=_axes(newest) + (SEED,),
                   status="FINISHED" if len(trials) >= planned or not unfinished else unfinished[-1], planned=planned,
                   started=parts[0].started, minutes=minutes if math.isfinite(minutes) else math.nan,
                   machine="; ".join(dict.fromkeys(p.machine for p in parts)), parts=parts)


def _mean_metrics(parts: tuple[Part, ...]) -> dict[str, float]:
    """Each parent metric's mean over the parts that logged it, as :func:`sweep_numbers` counts them (a raw-data
    reference point: its mean over their seeds), so no part's number stands for the study's; its ``/ci_low`` and
    ``/ci_high`` are the t interval of that mean where two or more parts logged it and differ (a mean of intervals is
    no interval), else the mean of the parts' own intervals (equal values, at a ceiling say, leave the t interval no
    width)."""
    logged = pd.DataFrame([numbers for _, numbers in sweep_numbers(parts)])
    if logged.empty:
        return {}
    means = {str(k): float(v) for k, v in logged.mean().items() if not math.isnan(v)}
    for key in [k for k in means if not k.endswith(CI_ENDS)]:
        values = logged[key].dropna()
        if values.nunique() > 1 and f"{key}/ci_low" in means:
            means[f"{key}/ci_low"], means[f"{key}/ci_high"] = t_interval(values)
    return means


def _trial_keys(table: pd.DataFrame, axes: tuple[str, ...]) -> list[tuple]:
    """Each trial's identity: its grid point and seed."""
    columns = [c for c in (*axes, SEED) if c in table]
    return [tuple(row) for row in table[columns].itertuples(index=False)] if not table.empty else []


def _baseline_keys(table: pd.DataFrame) -> list[tuple]:
    """Each baseline trial's identity: its baseline, its name without the seed, and its seed."""
    if table.empty:
        return []
    return list(zip(table.get(BASELINE, pd.Series("", index=table.index)), table["name"].map(without_seed),
                    table.get(SEED, pd.Series(0, index=table.index)), strict=True))


def _seeds(trials: pd.DataFrame) -> tuple[int, ...]:
    """The seeds a trials table holds."""
    return tuple(sorted(int(s) for s in trials[SEED].unique())) if SEED in trials else ()


def _axes(runs: StudyRuns) -> tuple[str, ...]:
    """The grid axes of a point, the seed aside."""
    return tuple(k for k in runs.label_keys if k != SEED)
