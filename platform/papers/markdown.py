"""The reproduction report's verdicts and its Markdown: every claim against its study's measured value, with the
statistic behind the verdict, the row's data, scale and caveat, and the studies' figures.

The verdict rules are stated once, in ``HEADER`` (the report prints them): intervals are Student t 95 % intervals of
the mean over the seeds of the slice a row tests, which needs at least ``MIN_SEEDS`` of them; a trend or a difference
agrees only on a significant test in the paper's direction, a value only when the paper's number lies inside the
interval, a level only when two one-sided tests show it within the claim's margin; a verdict that changes when the
collapsed seeds are left out is inconclusive; a study whose data provenance is unknown gets no verdict; a quantity
tested by two rows is counted at the first.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from core.numbers import readable
from platform.papers.catalogue import PAPERS, STUDIES
from platform.papers.claim import ABOVE, EXACT, LEVEL, OWN, SANITY, Claim, Study
from platform.papers.measures import (
    ALPHA,
    MARGIN,
    NEAR_COLLAPSE,
    REAL,
    STAND_IN,
    UNKNOWN,
    AgainstBaseline,
    AxisDifference,
    Difference,
    Measured,
    Part,
    StudyRuns,
    Trend,
    equivalence_p,
    smallest_p,
    t_interval,
)
from platform.results.comparison_grid import BASELINE
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
PAIRED = "Wilcoxon signed-rank"  # how a paired difference's statistic names its test


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
        if PAIRED in measured.statistic and smallest_p(len(measured.groups[0])) >= ALPHA:
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


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


HEADER = [
    "# Reproduction report", "",
    "Generated by `python -m platform.reproduction` from the studies' sweeps; do not edit by hand. Each row: what the",
    "paper reports (its figure or table, its setting), what putlab measured (the mean over seeds with its 95 %",
    "interval), the statistic behind the verdict, and the row's data and scale; its caveat follows the table whatever",
    "the verdict. A privacy number from the farm's learned attackers is a lower bound on leakage.", "",
    "How a verdict is reached:", "",
    "- **Intervals**: a value read from trials is the mean over the seeds of the slice the row tests (one grid point, "
    "or the trials of a difference) with its Student t 95 % interval, mean ± t(0.975, n − 1) · s / √n; a sweep-level "
    "number (measured once, such as a raw-data reference) carries the 95 % interval it logged. Never the min–max of "
    "the seeds. The interval of a proportion (an accuracy, an AUC, a share) is cut to [0, 1], and its band says so.",
    f"- **{AGREES}** / **{DIFFERS}**: a row read from trials needs at least {MIN_SEEDS} seeds in the slice it tests. "
    f"A trend or a difference: its test at α = {ALPHA} (Spearman's rank correlation of every trial with the axis; the "
    "Wilcoxon signed-rank test of every paired difference, whatever pairs it: with n pairs it cannot go below "
    "p = 2/2ⁿ, so a row of fewer than 6 pairs reads too few seeds), significant in the paper's direction agrees, significant the "
    "other way differs. A value agrees when the paper's number lies inside the interval (a claim of \"more than\": "
    "when the whole interval clears it) and differs when it lies outside; a count agrees only when equal. A claim "
    "about any point of a curve is read at every point of it the grid runs, each tested. A level (\"at 50 %\", "
    "\"near chance\", \"gap 0\", \"level with\") agrees only when two one-sided t-tests at α = 0.05 put "
    "the mean within the margin of the paper's level "
    f"(± {readable(MARGIN)} in the row's unit) at every grid point the row reads, and differs when a point's interval "
    "lies wholly outside that margin: a difference a test did not find is never read as \"level\". A bound counts only "
    "at the points where it is informative (below 1).",
    f"- **{NOT_REACHED}**: no grid point reaches the paper's operating point (the budget the row reads under): the grid "
    "did not test the claim there, which is not a contradiction of it.",
    f"- **{INCONCLUSIVE}**: the test is not significant, the interval straddles the paper's threshold, or a level is "
    f"neither shown nor excluded. **{FEW_SEEDS}**: fewer than {MIN_SEEDS} seeds in the row's slice, or too few pairs "
    f"for the signed-rank test to reach p < {ALPHA}. **{NO_BAND}**: "
    "no interval to compare with.",
    "- **Collapsed seeds**: a trial's release collapsed when the data user's balanced accuracy on it keeps less than "
    f"{readable(NEAR_COLLAPSE)} of the way from chance (1/classes) to 1 (below 0.19 for the 10 digits: a release that "
    "lost nearly all of what it was to keep), or when every attacker's balanced accuracy on the secret reads chance "
    "within 0.001, which is what a constant prediction reads (a learned attacker on a genuinely private release "
    "scatters about chance by its test set's noise, ±0.03 on 1,000 records). The studies table names "
    "them, a row whose measurement reads one "
    f"names it, and any verdict that changes when they are left out (inconclusive and too few seeds included) reads "
    f"**{COLLAPSED}**.",
    f"- **{STAND_IN_ROW}**: the study ran on a synthetic stand-in of the paper's data; it tests the pipeline, never the "
    f"paper's numbers. **{UNKNOWN_DATA}**: the sweep did not say whether it read the real files or a stand-in (its "
    "data set has a stand-in and the sweep logged no `data/synthetic`, or the data set is not registered). "
    f"**{SUBSTITUTE}**: the row measures another quantity or setting in place of the paper's (named in its data "
    "column: another data set, another estimator, the network's outputs for its parameters, a mixture for faces); it "
    "stands beside the paper's number, and no verdict rests on it. "
    f"**{OWN_ROW}**: a measurement the paper does not contain, no verdict. **sanity check**: the row holds by "
    f"construction, or is a proven bound measured on data, and checks putlab's code, not the paper; it fails when its "
    f"interval excludes the value (for a bound: lies wholly on the wrong side of it). **{SAME_AS.format('N')}**: the "
    "paper's quantity (one point or trend of one figure) is measured by row N already, in this study or another, and "
    f"counted there. **{NOTHING}**: nothing to compare, or nothing measured (a reading every trial gives alike, such "
    "as an attacker at exactly 0.5 throughout, measures nothing). "
    "**not run**: the study has no sweep yet, or putlab lacks what the experiment needs (its data column says what: "
    "the paper's data set, its pre-trained networks); such a row shows what the table does not cover.",
    "- **Parts**: a study too long for one sitting runs its command once per seed, `--set seed=K` in place of "
    "`--seeds N` (same experiment), and a part stopped before its end counts with the trials it finished, their "
    "attacks included; the next part of that seed may run only the grid points still missing (`--set` on the grid "
    "axes, e.g. `--set adv_steps=5 --set lam=30,100`). The report "
    "joins every part of the newest sweep's plan, from the store and the committed snapshot, keeping of each the "
    "trials (grid point and seed) no newer part holds; the studies table names each part with its seeds (and how many "
    "of its trials count, when not all) and each comparison grid that ran whole at fewer seeds than the trials, and sums "
    "their minutes of work (a resumed sweep's commands, not the pauses "
    "between them). Its front and trends are drawn from the joined trials, "
    "its released images are those of the newest part that published its front, and of each point or comparison grid "
    "that part did not run, the images an older part left. A sweep-level number (a share of "
    "the front, a hypervolume, a raw-data reference point) is the mean over seeds of the parts' numbers (a seed two "
    "parts ran counts once, the newer part's), with its t interval; a number every part logged alike (a count of the "
    "data) reads as one sweep's, with the parts' own interval; a number from the front (`front/…`) "
    "counts only from a part that ran every point of its "
    "seed, and of a seed two parts ran whole, the newer's.",
    "- **Seeds and machines**: one seed gives the same release bit for bit on one torch build and one kind of CPU "
    "kernels, and another release on another: the game carries the kernels' rounding on "
    "([measurements](measurements.md#same-seed-same-release)). Parts run on different machines are draws like seeds, which is "
    "why no verdict rests on one seed's number; the studies table's machine names the build and kernels of the "
    "sweeps that recorded them.", "",
]


def render(rows: Sequence[Row], runs: dict[str, StudyRuns], figures: dict[str, list[Path]], report: Path,
           drift: Mapping[str, Sequence[str]] | None = None) -> str:
    """The report's Markdown: the verdict counts, the studies (``drift``: per study, the settings it ran that its
    command sets differently today), per paper a table of claims with every row's caveat, and the studies' figures."""
    lines = [*HEADER, tally(rows), "", *findings(rows), *studies_table(runs), *drift_notes(drift or {})]
    for paper in PAPERS:
        paper_rows = [(i, r) for i, r in enumerate(rows, 1) if r.claim.paper == paper.key]
        if not paper_rows:
            continue
        lines += [f"## {paper.title}", "",
                  "| # | figure / table | paper's setting | paper | putlab | interval · statistic | verdict | data | scale |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for i, row in paper_rows:
            c, m = row.claim, row.measured
            read = f"collapsed seed read: {'; '.join(row.collapsed)}" if row.collapsed else ""
            evidence = "; ".join(x for x in (m.band, m.statistic, row.level_test, read) if x)
            scale = row.runs.scale if row.runs is not None else "not run"
            lines.append("| " + " | ".join(_cell(x) for x in (
                str(i), c.item, c.setting, c.published, str(m), evidence, row.verdict, row.data, scale)) + " |")
        lines += ["", "What each row measures, and its caveat:", ""]
        lines += [f"{i}. {r.claim.measure.describe()}" + (f" ({r.claim.study})" if r.claim.study else "")
                  + (f". {r.claim.caveat}" if r.claim.caveat else "") for i, r in paper_rows]
        for key in dict.fromkeys(r.claim.study for _, r in paper_rows if r.claim.study):
            for path in sorted(figures.get(key, []), key=figure_rank):
                rel = path.relative_to(report.parent)
                lines += ["", f"![{key}: {path.stem.replace('_', ' ')}]({rel.as_posix()})"]
        lines.append("")
    return "\n".join(lines) + "\n"


def findings(rows: Sequence[Row]) -> list[str]:
    """The report's headline rows, each with what it reads and its verdict, as the summary at the top."""
    counted = SAME_AS.format("")
    lines = [f"- Row {i} ({row.claim.item}, study {row.claim.study}): {row.claim.setting}: **{row.measured}**, "
             f"{row.verdict}" + (f" ({row.measured.statistic})" if row.measured.statistic else "")
             for i, row in enumerate(rows, 1) if row.claim.headline and not row.verdict.startswith(counted)]
    return ["## What the report finds", "", *lines, ""] if lines else []


def figure_rank(path: Path) -> tuple[int, str]:
    """The order a study's figures are shown in: the sweep's own (front, trends), its releases, the baseline's."""
    return (path.name.startswith("released_") + 2 * path.name.startswith("baseline_"), path.name)


def tally(rows: Sequence[Row]) -> str:
    """One line counting the rows by verdict."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    return f"**{len(rows)} rows**: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def drift_notes(drift: Mapping[str, Sequence[str]]) -> list[str]:
    """One line per study whose sweep ran settings its command no longer gives: its rows measure what it ran."""
    lines = [f"- **{key}** ran {', '.join(settings)}: its rows measure the plan it ran, not the one its command runs "
             "today; run it again to measure that." for key, settings in drift.items() if settings]
    return ["Studies that ran under an earlier plan (the settings they recorded that their command now sets "
            "otherwise):", "", *lines, ""] if lines else []


def part_label(part: Part) -> str:
    """A part of a study as the studies table names it: its sweep, its seeds, and how many of its planned trials the
    study keeps when not all."""
    seeds = f"seed{'s' * (len(part.seeds) > 1)} {', '.join(map(str, part.seeds))}"
    counted = f", {part.trials} of {part.planned} trials" if part.trials < part.planned else ""
    return f"{part.sweep} ({seeds}{counted})"


def grid_seeds(runs: StudyRuns) -> str:
    """`` (<grid> at seeds …)`` for each comparison grid that ran whole at fewer seeds than the study's trials (a seed
    where it ran fewer trials than at its fullest is not counted), else nothing."""
    if runs.baseline.empty or SEED not in runs.baseline or SEED not in runs.trials:
        return ""
    seeds = runs.trials[SEED].nunique()
    names = runs.baseline.get(BASELINE, pd.Series("comparison grids", index=runs.baseline.index))
    short = []
    for grid, table in runs.baseline.groupby(names):
        counts = table.groupby(SEED).size()
        whole = sorted(int(s) for s in counts.index[counts == counts.max()])
        if len(whole) < seeds:
            short.append(f"{grid} at seed{'s' * (len(whole) > 1)} {', '.join(map(str, whole))}")
    return f" ({'; '.join(short)} only)" if short else ""


def studies_table(runs: dict[str, StudyRuns], studies: Sequence[Study] = STUDIES) -> list[str]:
    """The studies: which sweep, when, on what machine, how long, at what scale, on what data, which seeds' releases
    collapsed, and the command."""
    lines = ["## Studies", "",
             "| study | sweep | ran (UTC) | machine | minutes | scale | data | collapsed releases | command |",
             "|---|---|---|---|---|---|---|---|---|"]
    for study in studies:
        r = runs.get(study.key)
        if r is None:
            lines.append(f"| {study.key} | not run | | | | | | | `{study.command()}` |")
            continue
        state = "" if r.status == "FINISHED" else (f" ({r.status.lower()}: {len(r.trials)} of {r.planned} trials, "
                                                   f"{len(r.baseline)} comparison-grid trials)")
        sweep = " + ".join(part_label(p) for p in r.parts) or r.sweep
        state += grid_seeds(r)
        minutes = "" if math.isnan(r.minutes) else f"{r.minutes:.0f}"
        collapsed = "; ".join(trial_name(r, i) for i in collapsed_trials(r, study)) or (
            "none" if study.release is not None else "—")
        lines.append(f"| {study.key} | {sweep}{state} | {r.started} | {r.machine} | {minutes} | {r.scale} | {r.data} "
                     f"| {collapsed} | `{study.command()}` |")
    return [*lines, ""]
