"""Every claim's verdict by the rules the report states once in its header (platform/papers/markdown.py): a row read
from trials needs MIN_SEEDS seeds in its slice; a trend or a paired difference agrees only on a significant test in
the paper's direction; a value only when the paper's number lies inside the interval; a level only when two one-
sided tests show it within the margin; an operating point the grid never reached is not reached; any verdict a
collapsed seed changes is inconclusive; substitutes, stand-ins, unknown data and putlab's own rows carry none; a
quantity of the paper is counted at its first row."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pandas as pd

from core.numbers import readable
from platform.papers.catalogue import STUDIES
from platform.papers.claim import ABOVE, EXACT, LEVEL, OWN, SANITY, Claim, Study
from platform.papers.measures import AgainstBaseline, AxisDifference, Difference, Trend
from platform.papers.statistics import ALPHA, Measured, equivalence_p, smallest_p, t_interval
from platform.papers.study_runs import REAL, STAND_IN, UNKNOWN, StudyRuns
from platform.results.replicates import SEED, point_keys

MIN_SEEDS = 3  # a verdict read from trials needs at least this many seeds in the slice it tests


AGREES, DIFFERS, INCONCLUSIVE = "agrees", "differs", "inconclusive"


NOT_REACHED = "not reached"  # no grid point reaches the paper's operating point: the grid does not test the claim


COLLAPSED = "inconclusive (collapsed seed)"


FEW_SEEDS, NO_BAND, STAND_IN_ROW, OWN_ROW, NOTHING = "too few seeds", "no band", "stand-in", "putlab's own", "—"


UNKNOWN_DATA = "no verdict: data unknown"


SUBSTITUTE = "substitute: no verdict"  # the row measures another quantity or setting in place of the paper's


NOT_RUN = "not run"


SANITY_HOLDS, SANITY_FAILS = "sanity check: holds", "sanity check: FAILS"


SAME_AS = "counted in row {}"  # a quantity an earlier row tests already


UNDECIDED = (OWN_ROW, NOTHING, STAND_IN_ROW, UNKNOWN_DATA, SUBSTITUTE)  # no verdict, so none a collapsed seed carries


DIRECTIONAL = (Trend, Difference, AgainstBaseline, AxisDifference)  # measures read by their test's direction


PAIRED = (Difference, AgainstBaseline, AxisDifference)  # measures read by the signed-rank test of their pairs


@dataclass(frozen=True)
class Row:
    """One evaluated claim: its measurement, verdict, the level test behind a level's verdict, and the collapsed
    trials the measurement read (named ``seed s at key = value, ...``)."""

    claim: Claim
    measured: Measured
    verdict: str
    runs: StudyRuns | None = None  # the study's sweep, None when it did not run
    study: Study | None = None
    level_test: str = ""
    collapsed: tuple[str, ...] = ()

    @property
    def data(self) -> str:
        """Real, synthetic stand-in, unknown, or a substitute of the paper's data or setting; a study that did not
        run says what its command would run on."""
        if self.claim.needs:
            return f"not available: needs {self.claim.needs}"
        if self.runs is not None:
            provenance = self.runs.provenance
        else:
            provenance = STAND_IN if self.study is not None and self.study.stand_in else REAL
        if provenance != REAL:
            return provenance
        return f"substitute: {self.claim.substitute}" if self.claim.substitute else "real"


def verdict(claim: Claim, measured: Measured, runs: StudyRuns | None) -> str:
    """The row's verdict by the rules of ``HEADER``."""
    if runs is None:
        return NOT_RUN
    if claim.kind == OWN:
        return OWN_ROW
    if math.isnan(measured.value) and not measured.unreached:
        return NOTHING
    if claim.kind == SANITY:
        return NOTHING if claim.target is None else SANITY_HOLDS if holds(claim, measured) else SANITY_FAILS
    if runs.provenance == STAND_IN:
        return STAND_IN_ROW
    if runs.provenance == UNKNOWN:
        return UNKNOWN_DATA
    if claim.substitute:
        return SUBSTITUTE
    if 0 < measured.seeds < MIN_SEEDS:
        return FEW_SEEDS
    if isinstance(claim.measure, DIRECTIONAL) and claim.direction != LEVEL:
        if isinstance(claim.measure, PAIRED) and measured.groups and smallest_p(len(measured.groups[0])) >= ALPHA:
            return FEW_SEEDS  # too few pairs for the signed-rank test to reach significance either way
        return tested(claim.measure.expected, measured)
    return compared(claim, measured)


def tested(expected: int, measured: Measured) -> str:
    """A direction's verdict: the test's p-value and the sign."""
    if math.isnan(measured.p_value) or measured.p_value >= ALPHA or measured.value == 0:
        return INCONCLUSIVE
    return AGREES if math.copysign(1, measured.value) == expected else DIFFERS


def compared(claim: Claim, measured: Measured) -> str:
    """A value's verdict against the paper's number, as the claim's direction says."""
    if claim.target is None:
        return NOTHING
    if measured.unreached:
        return NOT_REACHED
    if claim.direction == EXACT:
        return AGREES if abs(measured.value - claim.target) <= claim.tolerance else DIFFERS
    if claim.direction == LEVEL:
        return leveled(claim, measured)
    if not measured.has_band:
        return NO_BAND
    low, high = measured.low - claim.tolerance, measured.high + claim.tolerance
    if claim.direction == ABOVE:
        return AGREES if low >= claim.target else DIFFERS if high < claim.target else INCONCLUSIVE
    return AGREES if low <= claim.target <= high else DIFFERS


def leveled(claim: Claim, measured: Measured) -> str:
    """A level's verdict over the groups (grid points) the value was read from: agrees when two one-sided t-tests put
    every group's mean within the margin of the paper's level, differs when a group's 95 % interval lies wholly
    outside it, otherwise inconclusive (a test that found no difference shows no level)."""
    assert claim.target is not None
    if not measured.groups or any(len(g) < 2 for g in measured.groups):
        return NO_BAND
    lower, upper = claim.target - claim.margin, claim.target + claim.margin
    if any(high < lower or low > upper for low, high in map(t_interval, measured.groups)):
        return DIFFERS
    if all(equivalence_p(g, claim.target, claim.margin) < ALPHA for g in measured.groups):
        return AGREES
    return INCONCLUSIVE


def level_test(claim: Claim, measured: Measured) -> str:
    """The two one-sided tests behind a level's verdict, as the report prints them (the largest p over groups)."""
    if claim.direction != LEVEL or claim.target is None or not measured.groups:
        return ""
    p = max(equivalence_p(g, claim.target, claim.margin) for g in measured.groups)
    where = f" (the largest of {len(measured.groups)} points)" if len(measured.groups) > 1 else ""
    return (f"level {readable(claim.target)} ± {readable(claim.margin)}: two one-sided t-tests p = {p:.2g}{where}"
            if not math.isnan(p) else "")


def holds(claim: Claim, measured: Measured) -> bool:
    """Whether a sanity check (a row with a target) holds: the value equals the target up to rounding (1e-9, or the
    paper's printed precision), or the paper's number lies inside the interval; a bound (``above``) holds unless its
    interval lies wholly on the wrong side (an estimate of a quantity that is 0 by construction straddles 0)."""
    assert claim.target is not None
    close = max(1e-9 * max(1.0, abs(claim.target)), claim.tolerance)
    return abs(measured.value - claim.target) <= close or compared(claim, measured) in (AGREES, INCONCLUSIVE)


def evaluate(claims: Sequence[Claim], runs: dict[str, StudyRuns], studies: Sequence[Study] = STUDIES) -> list[Row]:
    """Every claim against its study's runs (a study without a sweep: "not run"), its verdict checked against the
    collapsed seeds it reads, and a quantity of the paper an earlier row measured (in any study) counted there."""
    by_key = {s.key: s for s in studies}
    first: dict[tuple[str, str, str], int] = {}
    rows = []
    for number, claim in enumerate(claims, 1):
        study, study_runs = by_key.get(claim.study), runs.get(claim.study)
        if claim.needs:
            rows.append(Row(claim, Measured(math.nan, text="not run"), NOT_RUN, None, None))
            continue
        if study_runs is None:
            rows.append(Row(claim, Measured(math.nan, text="not run"), NOT_RUN, None, study))
            continue
        measured = claim.measure(study_runs)
        found = verdict(claim, measured, study_runs)
        read = collapsed_read(claim, measured, study_runs, study)
        if read and found not in UNDECIDED and without_collapsed(claim, study_runs, study) != found:
            found = COLLAPSED
        key = (claim.paper, claim.item, claim.quantity)
        if claim.quantity and key in first:
            found = SAME_AS.format(first[key])
        elif claim.quantity and (measured.unreached or not math.isnan(measured.value)):  # nothing measured counts nothing
            first[key] = number
        rows.append(Row(claim, measured, found, study_runs, study, level_test(claim, measured),
                        tuple(trial_name(study_runs, i) for i in read)))
    return rows


def collapsed_trials(runs: StudyRuns, study: Study | None) -> pd.Index:
    """The index of the study's trials whose release collapsed (none when the study has no release rule)."""
    if study is None or study.release is None or runs.trials.empty:
        return runs.trials.index[:0]
    mask = study.release.collapsed(runs.trials)
    return runs.trials.index[mask.to_numpy()]


def collapsed_read(claim: Claim, measured: Measured, runs: StudyRuns, study: Study | None) -> list:
    """The collapsed trials the row's measurement reads: those whose removal alone changes it."""
    seen = _fingerprint(measured)
    return [i for i in collapsed_trials(runs, study)
            if _fingerprint(claim.measure(_without(runs, [i]))) != seen]


def without_collapsed(claim: Claim, runs: StudyRuns, study: Study | None) -> str:
    """The row's verdict with every collapsed trial of its study left out."""
    clean = _without(runs, list(collapsed_trials(runs, study)))
    return verdict(claim, claim.measure(clean), clean)


def _without(runs: StudyRuns, index: list) -> StudyRuns:
    return replace(runs, trials=runs.trials.drop(index=index))


def _fingerprint(measured: Measured) -> str:
    """Everything a row shows of a measurement (NaN equal to NaN)."""
    return repr((str(measured), measured.band, measured.statistic, measured.value, measured.low, measured.high))


def trial_name(runs: StudyRuns, index: object) -> str:
    """``seed 1 at lam = 300, ...``: one trial by its seed and grid values."""
    trial = runs.trials.loc[index]
    at = ", ".join(f"{k} = {readable(trial[k])}" for k in point_keys(runs.trials, runs.label_keys))
    seed = f"seed {readable(trial[SEED])}" if SEED in trial else "the trial"
    return f"{seed} at {at}" if at else seed
