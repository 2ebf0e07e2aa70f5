"""The report's statistics, stated once: a measured value with the samples it came from, the Student t 95 % interval of
a mean (a proportion's cut to [0, 1]), two one-sided t-tests for a level, and the Wilcoxon signed-rank test of
paired differences with the smallest p it can give n pairs."""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import pandas as pd
from scipy import stats

from core.numbers import readable
from platform.papers.study_runs import StudyRuns, seed_count

ALPHA = 0.05  # every test's level


MARGIN = 0.02  # the equivalence margin of a level (in the row's unit: accuracy, nats, ...)


PROPORTION = re.compile(r"(accuracy|auc|share)(_within_\w+)?$")  # a metric's last name part that makes it a proportion


CUT = "cut to [0, 1]"  # what a band says when a proportion's t interval reached past 0 or 1


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
