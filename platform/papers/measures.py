"""What a reproduction claim reads from a study's sweep: a parent metric, one grid point's metric over its seeds, the
best value on the front under a privacy budget, or the direction of a trend along a grid axis.

Pure computation on a :class:`StudyRuns` (the parent run's metrics and the trials table), no MLflow and no plotting,
so every measure is testable on a hand-made table. Intervals: over seeds (or trials), the Student t 95 % interval of
the mean; a sweep-level number (a parent metric) carries the 95 % interval it logged (``<metric>/ci_low|ci_high``),
and of a study run in parts it is the parts' mean with its t interval over them.
Every measured value keeps the samples it was computed from (``groups``, one per grid point) and how many seeds they
span, so the report can test a level by two one-sided t-tests (:func:`equivalence_p`) and count the seeds of the slice
a row tests. Directions come with a test: a trend is Spearman's rank correlation of every trial's value with the axis
(its two-sided p-value), a difference the Wilcoxon signed-rank test of the per-trial differences, each read at
``ALPHA``. A trial whose release collapsed (:class:`Release`) can be told apart from the rest.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np
import pandas as pd
from scipy import stats

from core.numbers import readable
from core.pareto_axis import Axis
from platform.results.comparison_grid import BASELINE, attack_at_utility
from platform.results.pareto import pareto_mask
from platform.results.replicates import SEED, point_index, point_keys

ALPHA = 0.05  # every test's level
MARGIN = 0.02  # the equivalence margin of a level (in the row's unit: accuracy, nats, ...)
CHANCE_TOLERANCE = 0.001  # a balanced accuracy this close to 1/classes is a constant prediction's
NEAR_COLLAPSE = 0.1  # a data user keeping less than this share of the way from chance to 1 reads a collapsed release
PROPORTION = re.compile(r"(accuracy|auc|share)(_within_\w+)?$")  # a metric's last name part that makes it a proportion
CUT = "cut to [0, 1]"  # what a band says when a proportion's t interval reached past 0 or 1

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


@dataclass(frozen=True)
class Measured:
    """A number putlab measured, with its interval (``low``–``high``; NaN when there is none) and how it was made.

    ``groups`` are the samples the value was computed from, one tuple per grid point (the seeds of a point, or the
    trials of a difference), and ``seeds`` how many seeds they span (0: a sweep-level number, not read from trials)."""

    value: float
    low: float = math.nan
    high: float = math.nan
    band: str = ""
    text: str = ""  # replaces the number when the measure is a statement (a trend's direction)
    unreached: bool = False  # no grid point meets the measure's budget (a published operating point not reached)
    p_value: float = math.nan  # a trend's or difference's two-sided test
    statistic: str = ""  # the test, as the report prints it
    seeds: int = 0
    groups: tuple[tuple[float, ...], ...] = ()

    def __str__(self) -> str:
        if self.text:
            return self.text
        shown = readable(self.value)
        if not (math.isnan(self.low) or math.isnan(self.high)):
            shown += f" [{readable(self.low)}, {readable(self.high)}]"
        return shown

    @property
    def has_band(self) -> bool:
        """Whether there is an interval."""
        return not (math.isnan(self.low) or math.isnan(self.high))


class Measure(Protocol):
    """Reads one number (or statement) from a study's runs; ``describe`` says what, in a few words."""

    def __call__(self, runs: StudyRuns) -> Measured: ...

    def describe(self) -> str: ...


def proportion(metric: str) -> bool:
    """Whether ``metric`` is a proportion (an accuracy, an AUC, a share), whose interval stays inside [0, 1]; a
    difference of two (``a − b``) is none."""
    return " − " not in metric and PROPORTION.search(metric.rsplit("/", 1)[-1]) is not None


def cut(low: float, high: float, metric: str) -> tuple[float, float, str]:
    """A proportion's interval cut to [0, 1], and the words the band adds when it was ("" when not)."""
    if not proportion(metric) or (not low < 0 and not high > 1):
        return low, high, ""
    return max(low, 0.0), min(high, 1.0), f", {CUT}"


def t_interval(values: Iterable[float]) -> tuple[float, float]:
    """The Student t 95 % interval of the mean of ``values`` (NaN with fewer than two; the mean when all are equal)."""
    x = np.asarray(list(values), dtype=float)
    if len(x) < 2:
        return math.nan, math.nan
    sem = float(stats.sem(x))
    if sem == 0:
        return float(x.mean()), float(x.mean())
    low, high = stats.t.interval(0.95, len(x) - 1, loc=float(x.mean()), scale=sem)
    return float(low), float(high)


def equivalence_p(values: Iterable[float], level: float, margin: float = MARGIN) -> float:
    """Two one-sided t-tests (TOST) that the mean of ``values`` lies within ``margin`` of ``level``: the larger of the
    p-values of "mean > level − margin" and "mean < level + margin" (NaN with fewer than two values)."""
    x = np.asarray(list(values), dtype=float)
    if len(x) < 2:
        return math.nan
    if np.ptp(x) == 0:  # no spread: the t statistic is undefined, the mean is exact
        return 0.0 if abs(float(x[0]) - level) < margin else 1.0
    above = stats.ttest_1samp(x, level - margin, alternative="greater").pvalue
    below = stats.ttest_1samp(x, level + margin, alternative="less").pvalue
    return float(max(above, below))


def select_where(trials: pd.DataFrame, where: dict[str, float]) -> pd.DataFrame:
    """The trials whose grid values equal ``where`` (a float compare; ∞ matches ∞)."""
    mask = np.ones(len(trials), dtype=bool)
    for key, value in where.items():
        if key not in trials:
            return trials.iloc[0:0]
        mask &= np.isclose(trials[key].astype(float), value, rtol=1e-9, atol=0) | (
            np.isinf(trials[key].astype(float)) & np.isinf(value))
    return trials[mask]


def over_seeds(rows: pd.DataFrame, metric: str) -> Measured:
    """The mean of ``metric`` over the rows (one per seed) with its t interval, or one seed's logged interval."""
    if metric not in rows or rows[metric].count() == 0:
        return Measured(math.nan, text="not measured")
    values = rows[metric].dropna().astype(float)
    seeds, group = seed_count(rows.loc[values.index]), (tuple(values),)
    if len(values) > 1:
        low, high, note = cut(*t_interval(values), metric)
        shown = ", ".join(readable(v) for v in values)
        return Measured(float(values.mean()), low, high, f"95 % t interval over {len(values)} seeds ({shown}){note}",
                        seeds=seeds, groups=group)
    low, high = (rows.get(f"{metric}/{end}") for end in ("ci_low", "ci_high"))
    if low is not None and high is not None and low.notna().all() and high.notna().all():
        return Measured(float(values.iloc[0]), float(low.iloc[0]), float(high.iloc[0]), "95 % interval, one seed",
                        seeds=seeds, groups=group)
    return Measured(float(values.iloc[0]), band="one seed, no interval", seeds=seeds, groups=group)


def over_trials(values: pd.Series, trials: pd.DataFrame, what: str = "trials") -> Measured:
    """The mean of per-trial (or per-pair) ``values`` with its t interval (cut to [0, 1] where the series is named after a
    proportion); ``trials`` are the rows they came from."""
    values = values.dropna().astype(float)
    if values.empty:
        return Measured(math.nan, text="not measured")
    low, high, note = cut(*t_interval(values), str(values.name))
    return Measured(float(values.mean()), low, high, f"95 % t interval over {len(values)} {what}{note}",
                    seeds=seed_count(trials), groups=(tuple(values),))


@dataclass(frozen=True)
class ParentMetric:
    """A metric the sweep logged on its parent run (raw-data reference points, hypervolume, ...); of a study run in
    parts, the mean of the parts that logged it (as :func:`sweep_numbers` counts them) with its t interval, or, when
    every part logged the same number (a count of the data, say), that number with the parts' own interval, as one
    sweep's."""

    metric: str

    def __call__(self, runs: StudyRuns) -> Measured:
        logged = [(seeds, numbers) for seeds, numbers in sweep_numbers(runs.parts) if self.metric in numbers]
        values = [numbers[self.metric] for _, numbers in logged]
        if len(set(values)) > 1:  # a study run in parts: each sweep's number, their mean with its t interval
            low, high, note = cut(*t_interval(values), self.metric)
            return Measured(float(np.mean(values)), low, high, f"95 % t interval over {len(values)} sweeps{note}",
                            seeds=len({s for seeds, _ in logged for s in seeds}), groups=(tuple(values),))
        metrics = logged[0][1] if len(logged) == 1 else runs.parent_metrics
        value = metrics.get(self.metric)
        if value is None:
            return Measured(math.nan, text="not measured")
        low, high = (metrics.get(f"{self.metric}/{end}", math.nan) for end in ("ci_low", "ci_high"))
        return Measured(value, low, high, "95 % interval" if not math.isnan(low) else "")

    def describe(self) -> str:
        return f"`{self.metric}` (sweep)"


@dataclass(frozen=True)
class NotRun:
    """The measure of an experiment putlab cannot run: nothing measured, and what the paper's experiment reads."""

    what: str

    def __call__(self, runs: StudyRuns) -> Measured:
        return Measured(math.nan, text="not run")

    def describe(self) -> str:
        return self.what


@dataclass(frozen=True)
class PointMetric:
    """One grid point's metric (``where`` fixes the grid values), the mean over its seeds with its interval."""

    metric: str
    where: dict[str, float] = field(default_factory=dict)

    def __call__(self, runs: StudyRuns) -> Measured:
        return over_seeds(select_where(runs.trials, self.where), self.metric)

    def describe(self) -> str:
        at = ", ".join(f"{k} = {readable(v)}" for k, v in self.where.items())
        return f"`{self.metric}`" + (f" at {at}" if at else "")


@dataclass(frozen=True)
class BestUnder:
    """The best per-point mean of ``metric`` among points whose ``budget_metric`` mean is at most ``budget`` (e.g. the
    highest utility where the strongest attacker reads ≤ 0.6), with that point's interval over seeds."""

    metric: str
    budget_metric: str
    budget: float
    higher_is_better: bool = True
    where: dict[str, float] = field(default_factory=dict)  # only points with these grid values
    report: str | None = None  # read this metric at the chosen point instead of ``metric``

    def __call__(self, runs: StudyRuns) -> Measured:
        trials = select_where(runs.trials, self.where).reset_index(drop=True)
        if trials.empty or self.metric not in trials or self.budget_metric not in trials:
            return Measured(math.nan, text="not measured")  # no trial at the setting reaches nothing, nor fails to
        index = point_index(trials, runs.label_keys)
        means = trials[list(dict.fromkeys((self.metric, self.budget_metric)))].groupby(index).mean()
        eligible = means[means[self.budget_metric] <= self.budget].dropna()
        if eligible.empty:
            return Measured(math.nan, text=f"no point with {self.budget_metric} ≤ {readable(self.budget)}",
                            unreached=True, seeds=seed_count(trials))
        best = eligible[self.metric].idxmax() if self.higher_is_better else eligible[self.metric].idxmin()
        chosen = trials[index == best]
        found = over_seeds(chosen, self.report or self.metric)
        at = ", ".join(f"{k} = {readable(chosen[k].iloc[0])}" for k in point_keys(trials, runs.label_keys))
        return replace(found, band=f"{found.band}; at {at}" if at else found.band)

    def describe(self) -> str:
        best = "highest" if self.higher_is_better else "lowest"
        limits = [f"`{self.budget_metric}` ≤ {readable(self.budget)}"] if math.isfinite(self.budget) else []
        limits += [f"{k} = {readable(v)}" for k, v in self.where.items()]
        shown = f"{best} `{self.metric}`" + (f" where {', '.join(limits)}" if limits else "")
        return f"`{self.report}` at the point of {shown}" if self.report else shown


@dataclass(frozen=True)
class Trend:
    """Whether ``metric`` rises or falls along grid axis ``axis``, other axes fixed at ``where``: Spearman's ρ of every
    trial's value (each seed of each point) with the axis, and its p-value; the paper's direction is the sign
    ``expected``. The text shows the per-point means."""

    metric: str
    axis: str
    expected: int  # +1 rises, -1 falls
    where: dict[str, float] = field(default_factory=dict)

    def __call__(self, runs: StudyRuns) -> Measured:
        selected = select_where(runs.trials, self.where)
        if self.metric not in selected or self.axis not in selected:
            return Measured(math.nan, text="not measured")
        rows = selected[[self.axis, self.metric]].dropna().astype(float)
        seeds = seed_count(selected.loc[rows.index])
        means = rows.groupby(self.axis)[self.metric].mean()
        if len(means) < 3:  # two points make any difference a "trend"
            return Measured(math.nan, text=f"too few points ({len(means)}) with `{self.metric}`", seeds=seeds)
        if rows[self.metric].nunique() == 1:  # every trial alike: a reading that cannot move measures nothing
            return Measured(math.nan, text=f"every trial reads {readable(float(rows[self.metric].iloc[0]))}: no "
                            "measurement", seeds=seeds)
        rho, p = stats.spearmanr(rows[self.axis], rows[self.metric])
        word = "rises" if rho > 0 else "falls" if rho < 0 else "flat"
        values = ", ".join(f"{readable(a)}: {readable(v)}" for a, v in means.items())
        return Measured(float(rho), text=f"{word} ({values})", p_value=float(p), seeds=seeds,
                        statistic=f"Spearman ρ {readable(float(rho), 2)}, p = {float(p):.2g} over {len(rows)} trials")

    def describe(self) -> str:
        return f"`{self.metric}` along {self.axis}"


def smallest_p(pairs: int) -> float:
    """The smallest two-sided p-value the signed-rank test can give ``pairs`` pairs: every one on the same side."""
    return 2 / 2 ** pairs


def paired(diff: pd.Series, trials: pd.DataFrame, shown: str = "", what: str = "trials") -> Measured:
    """Per-trial differences: their mean with its t interval, the signed-rank test against 0 (a direction) and the
    two one-sided tests against 0 ± ``MARGIN`` (a level), and the text saying which of them holds."""
    found = over_trials(diff, trials, what)
    if math.isnan(found.value):
        return found
    p = float(stats.wilcoxon(diff).pvalue) if (diff != 0).any() else 1.0
    floor = smallest_p(len(diff))
    limit = f" (with {len(diff)} {what} it cannot go below p = {floor:.2g})" if floor >= ALPHA else ""
    level = equivalence_p(diff, 0.0)
    reading = (f"level within ±{readable(MARGIN)}" if level < ALPHA else
               ("higher" if found.value > 0 else "lower") if p < ALPHA else "neither shown different nor level")
    return replace(found, text=f"{shown or readable(found.value)}: {reading}", p_value=p,
                   statistic=f"Wilcoxon signed-rank p = {p:.2g}{limit}; equivalence (two one-sided t-tests, "
                             f"±{readable(MARGIN)}) p = {level:.2g}; over {len(diff)} {what}")


@dataclass(frozen=True)
class Difference:
    """``metric`` − ``other`` per trial (e.g. a mechanism against its noise baseline at equal accuracy, both of one
    seed), read as :func:`paired`; the paper's direction is the sign ``expected``."""

    metric: str
    other: str
    expected: int

    def __call__(self, runs: StudyRuns) -> Measured:
        trials = runs.trials
        if self.metric not in trials or self.other not in trials:
            return Measured(math.nan, text="not measured")
        diff = (trials[self.metric] - trials[self.other]).dropna()
        return paired(diff, trials.loc[diff.index]) if not diff.empty else Measured(math.nan, text="not measured")

    def describe(self) -> str:
        return f"`{self.metric}` − `{self.other}`, mean over trials"


@dataclass(frozen=True)
class AxisDifference:
    """``metric`` at ``axis`` = ``value`` minus ``metric`` at ``axis`` = ``baseline``, paired by the other grid values
    and the seed (e.g. Algorithm 2's gap minus Algorithm 1's at equal α), read as :func:`paired`; the paper's direction
    is the sign ``expected``."""

    metric: str
    axis: str
    value: float
    baseline: float
    where: dict[str, float] = field(default_factory=dict)
    expected: int = 1

    def __call__(self, runs: StudyRuns) -> Measured:
        trials = select_where(runs.trials, self.where)
        if self.metric not in trials or self.axis not in trials:
            return Measured(math.nan, text="not measured")
        pairs = [k for k in dict.fromkeys((*runs.label_keys, SEED)) if k != self.axis and k in trials]
        sides = [select_where(trials, {self.axis: v}).set_index(pairs)[self.metric] for v in (self.value, self.baseline)]
        diff = (sides[0] - sides[1]).dropna()
        if diff.empty:
            return Measured(math.nan, text="not measured")
        return paired(diff, trials, what="pairs")

    def describe(self) -> str:
        at = "".join(f", {k} = {readable(v)}" for k, v in self.where.items())
        return (f"`{self.metric}` at {self.axis} = {readable(self.value)} − at {self.axis} = {readable(self.baseline)}"
                f" (paired by grid point and seed{at})")


@dataclass(frozen=True)
class EveryPoint:
    """``metric`` at every grid point with the grid values ``where`` and, per axis of ``among``, one of its values (e.g.
    every α of the paper's figure at one k), each point's seeds a group for a level; the value and interval are the
    point farthest from ``level``, the text lists every point's mean."""

    metric: str
    level: float = 0.0
    where: dict[str, float] = field(default_factory=dict)
    among: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def __call__(self, runs: StudyRuns) -> Measured:
        trials = select_where(runs.trials, self.where)
        for axis, values in self.among.items():
            trials = pd.concat([select_where(trials, {axis: v}) for v in values])
        trials = trials.reset_index(drop=True)
        if trials.empty or self.metric not in trials:
            return Measured(math.nan, text="not measured")
        index = point_index(trials, runs.label_keys)
        groups = {point: g[self.metric].dropna().astype(float) for point, g in trials.groupby(index)}
        means = {point: float(v.mean()) for point, v in groups.items()}
        far = max(means, key=lambda point: abs(means[point] - self.level))
        found = over_seeds(trials[index == far], self.metric)
        keys = [k for k in point_keys(trials, runs.label_keys) if trials[k].nunique() > 1]  # the axes that vary
        name = {point: ", ".join(f"{k} = {readable(trials.loc[index == point, k].iloc[0])}" for k in keys)
                for point in means}
        shown = "; ".join(f"{name[p]}: {readable(m)}" for p, m in means.items())
        text = f"farthest {found} at {name[far]} (every point: {shown})" if len(means) > 1 else ""
        return replace(found, text=text,
                       groups=tuple(tuple(v) for v in groups.values()), seeds=seed_count(trials))

    def describe(self) -> str:
        at = [f"{k} = {readable(v)}" for k, v in self.where.items()]
        at += [f"{k} ∈ {{{', '.join(readable(v) for v in values)}}}" for k, values in self.among.items()]
        return f"`{self.metric}` at every grid point" + (f" with {', '.join(at)}" if at else "")


@dataclass(frozen=True)
class Drop:
    """The largest fall of ``metric`` below the sweep's raw-data ``baseline`` (a parent metric) among points whose
    ``budget_metric`` mean is at most ``budget`` (e.g. how far the attacker falls while the distortion stays small)."""

    metric: str
    baseline: str
    budget_metric: str
    budget: float

    def __call__(self, runs: StudyRuns) -> Measured:
        raw = runs.parent_metrics.get(self.baseline)
        if raw is None:
            return Measured(math.nan, text="not measured")
        lowest = BestUnder(self.metric, self.budget_metric, self.budget, higher_is_better=False)(runs)
        if math.isnan(lowest.value):
            return lowest
        falls = tuple(tuple(raw - v for v in g) for g in lowest.groups)
        shown = ", ".join(readable(v) for g in falls for v in g)
        band = lowest.band.replace(f"({', '.join(readable(v) for g in lowest.groups for v in g)})", f"(falls {shown})", 1)
        return replace(lowest, value=raw - lowest.value, low=raw - lowest.high, high=raw - lowest.low, band=band,
                       groups=falls)

    def describe(self) -> str:
        return (f"`{self.baseline}` − lowest `{self.metric}` where `{self.budget_metric}` ≤ {readable(self.budget)}")


@dataclass(frozen=True)
class AgainstBaseline:
    """The mechanism's attacker minus the baseline's (e.g. Gaussian noise) at equal utility, trial by trial: each
    trial against the baseline curve of its own seed (interpolated along that curve's front, as the front figure
    draws it), read as :func:`paired`; trials outside the curve's utility (more useful than its most useful point, or
    less useful than its least) are left out. ``expected`` -1: the mechanism's attacker reads less (it is more
    private). ``baseline`` names the comparison grid (a preset's name: ``noise``, ``stroke-redraw``,
    ``digit-prototype``)."""

    utility: str
    privacy: str
    expected: int = -1
    where: dict[str, float] = field(default_factory=dict)
    baseline: str = "noise"

    def __call__(self, runs: StudyRuns) -> Measured:
        trials, base = select_where(runs.trials, self.where), runs.baseline
        if BASELINE in base:
            base = base[base[BASELINE] == self.baseline]
        needed = [self.utility, self.privacy]
        if base.empty or any(m not in trials or m not in base for m in needed):
            return Measured(math.nan, text="not measured")
        axes = [Axis(self.utility, True, 0.0, 1.0), Axis(self.privacy, False, 1.0, 0.5)]
        diff = pd.concat([self._per_trial(mine, _same_seed(base, mine), axes) for _, mine in _by_seed(trials)])
        diff = diff.dropna()
        if diff.empty:
            return Measured(math.nan, text="no trial within the baseline's utility range")
        shown = f"{readable(float(diff.mean()))} (attacker minus the baseline's at equal utility)"
        return paired(diff, trials.loc[diff.index], shown)

    def _per_trial(self, mine: pd.DataFrame, base: pd.DataFrame, axes: list[Axis]) -> pd.Series:
        """One seed's trials against that seed's baseline curve, indexed as the trials."""
        curve = base[base["status"] == "FINISHED"].dropna(subset=[a.metric for a in axes]) if "status" in base else base
        if curve.empty:
            return pd.Series(dtype=float)
        curve = curve.assign(pareto_front=pareto_mask(curve, axes))
        at = attack_at_utility(mine[self.utility].to_numpy(dtype=float), curve, axes)
        return pd.Series(mine[self.privacy].to_numpy(dtype=float) - at, index=mine.index)

    def describe(self) -> str:
        where = "".join(f", {k} = {readable(v)}" for k, v in self.where.items())
        return f"`{self.privacy}` − the baseline's at equal `{self.utility}`, per trial and seed{where}"


def _by_seed(trials: pd.DataFrame) -> list[tuple[float, pd.DataFrame]]:
    """The trials grouped by seed (one group when the table has no seed column)."""
    return list(trials.groupby(SEED)) if SEED in trials else [(math.nan, trials)]


def _same_seed(base: pd.DataFrame, mine: pd.DataFrame) -> pd.DataFrame:
    """The baseline trials of the seed of ``mine`` (all of them when either table has no seed column)."""
    if SEED not in base or SEED not in mine:
        return base
    return base[base[SEED] == mine[SEED].iloc[0]]


ATTACKER = re.compile(r"^attack/(?!max/)[^/]+/accuracy$")  # one attacker's balanced accuracy on the secret


@dataclass(frozen=True)
class Release:
    """How to tell a trial whose release collapsed: the data user's balanced accuracy on the release (``utility``;
    None where utility is no accuracy) keeps less than ``NEAR_COLLAPSE`` of the way from chance to 1 (a digit read at
    0.14 by a 10-class data user has lost 96 % of what it could read: the release is near-collapsed, and what it hides
    says nothing of a mechanism that keeps the digit), or every attacker's balanced accuracy on the secret (each
    ``attack/<name>/accuracy`` but the strongest-of) reads chance.

    Chance is 1/classes, what a constant prediction reads in balanced accuracy whatever the class counts; the classes
    are the registered data set's (its private attribute's, and its utility's unless the data user's task has its
    own, ``utility_classes``). "Reads chance" is within ``CHANCE_TOLERANCE``: a classifier that learns nothing from a
    genuinely private release still scatters about chance by its test set's sampling noise (±0.03 on 1,000 records),
    so a reading that exact is a constant prediction, and a release no network reads anything from."""

    dataset: str
    utility: str | None = None
    utility_classes: int | None = None

    def collapsed(self, trials: pd.DataFrame) -> pd.Series:
        """For each trial, whether its release collapsed."""
        from core.data.registry import get_dataset  # the registry imports every data set's module

        entry = get_dataset(self.dataset)
        useless = pd.Series(False, index=trials.index)
        if self.utility is not None and self.utility in trials:
            classes = self.utility_classes or entry.utility.classes
            assert classes is not None, f"{self.dataset}'s utility is no classification"
            useless = near_chance(trials[self.utility], classes)
        secret = entry.private.classes
        assert secret is not None, f"{self.dataset}'s secret is no classification"
        attackers = [c for c in trials.columns if ATTACKER.match(c)]
        hidden = pd.Series(bool(attackers), index=trials.index)
        for column in attackers:
            hidden &= at_chance(trials[column], secret)
        return useless | hidden


def near_chance(accuracy: pd.Series, classes: int) -> pd.Series:
    """Whether each balanced accuracy keeps less than ``NEAR_COLLAPSE`` of the way from chance (1/classes) to 1; NaN
    reads no."""
    chance = 1 / classes
    return accuracy.astype(float) < chance + NEAR_COLLAPSE * (1 - chance)


def at_chance(accuracy: pd.Series, classes: int) -> pd.Series:
    """Whether each balanced accuracy reads chance (1/classes, within ``CHANCE_TOLERANCE``); NaN reads no."""
    return (accuracy.astype(float) - 1 / classes).abs() <= CHANCE_TOLERANCE
