"""What a reproduction claim reads from a study's sweep: a parent metric, one grid point's metric over its seeds, the
best value under a budget, every point of a curve, the direction of a trend along a grid axis, or a paired difference
(against another grid value, or against a comparison grid at equal utility).

Pure computation on a :class:`~platform.papers.study_runs.StudyRuns`, no MLflow and no plotting, so every measure is
testable on a hand-made table; the intervals and tests are platform/papers/statistics.py's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import stats

from core.numbers import readable
from core.pareto_axis import Axis
from platform.papers.statistics import Measured, cut, over_seeds, paired, select_where, t_interval
from platform.papers.study_runs import StudyRuns, seed_count, sweep_numbers
from platform.results.comparison_grid import BASELINE, attack_at_utility
from platform.results.pareto import pareto_mask
from platform.results.replicates import SEED, point_index, point_keys


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
