"""The reproduction report's verdict rules, each applied to every row the way its header states it: a paired difference
by the signed-rank test, a collapsed seed whatever the verdict, one verdict per quantity of the paper, no verdict on a
substitute, proportions inside [0, 1], an operating point the grid never reached apart from a contradiction."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from platform.papers.catalogue import CLAIMS
from platform.papers.claim import ABOVE, LEVEL, OWN, REPRODUCTION, SANITY, Claim, Study
from platform.papers.collapse import Release
from platform.papers.measures import AxisDifference, BestUnder, Drop, EveryPoint, ParentMetric, PointMetric
from platform.papers.privatizer import OverTrials
from platform.papers.statistics import Measured, paired
from platform.papers.study_runs import Part, StudyRuns
from platform.papers.verdicts import evaluate, verdict

GAP = "leakage/gap"


def gmm(table: pd.DataFrame) -> StudyRuns:
    return StudyRuns("g", "quick", {"data/synthetic": 0.0}, table, ("k", "alpha", "seed"), dataset="gmm")


def amnist(table: pd.DataFrame, parent: dict[str, float] | None = None, parts: tuple[Part, ...] = ()) -> StudyRuns:
    return StudyRuns("a", "quick", parent or {}, table, ("alpha", "lam", "seed"), dataset="amnist", parts=parts)


def test_a_paired_difference_is_decided_by_the_signed_rank_test_not_a_t_interval():
    # row 64: the gap at k = 0.4 minus at k = 1, α = 0.8, paired by seed; three pairs, each +0.11 ± 0.01
    row = next(c for c in CLAIMS if isinstance(c.measure, AxisDifference) and c.measure.axis == "k")
    table = pd.DataFrame({"k": [0.4, 1.0] * 3, "alpha": 0.8, "seed": np.repeat([0, 1, 2], 2),
                          GAP: [0.13, 0.02, 0.12, 0.02, 0.12, 0.01]})
    measured = row.measure(gmm(table))
    assert measured.low > 0  # a t interval over the three pairs clears 0: it used to read "agrees"
    assert measured.p_value == pytest.approx(stats.wilcoxon([0.11, 0.10, 0.11]).pvalue) == 0.25
    assert "cannot go below p = 0.25" in measured.statistic
    assert verdict(row, measured, gmm(table)) == "too few seeds"  # no outcome of 3 pairs could have agreed
    eight = pd.DataFrame({"k": [0.4, 1.0] * 8, "alpha": 0.8, "seed": np.repeat(np.arange(8), 2),
                          GAP: [0.13, 0.02] * 8 + np.repeat(np.linspace(0, 0.01, 8), 2)})
    assert verdict(row, row.measure(gmm(eight)), gmm(eight)) == "agrees"  # p = 2/2⁸: significant
    assert all(c.direction != ABOVE for c in CLAIMS if isinstance(c.measure, AxisDifference))  # none read by interval


def test_a_release_that_lost_nearly_all_its_utility_counts_as_collapsed():
    # 10 digits: chance 0.1, the floor 0.1 + 0.1 · 0.9 = 0.19; 'digit > 5' (2 classes): 0.5 + 0.1 · 0.5 = 0.55
    table = pd.DataFrame({"utility/fresh_accuracy": [0.14, 0.189, 0.191, 0.52, 0.54],
                          "attack/deep/accuracy": [0.6, 0.7, 0.7, 0.7, 0.7]})
    assert Release("amnist", "utility/fresh_accuracy").collapsed(table).tolist() == [True, True, False, False, False]
    assert Release("mnist32", "utility/fresh_accuracy", utility_classes=2).collapsed(table).tolist() == [
        True, True, True, True, True]


def collapsed(values: list[float]) -> tuple[StudyRuns, Study]:
    """One point over len(values) seeds; seed 1's release collapsed (the digit at 0.1, every attacker at 0.5)."""
    seeds = range(len(values))
    table = pd.DataFrame({"alpha": 1.0, "lam": 300.0, "seed": list(seeds),
                          "utility/fresh_accuracy": [0.10 if s == 1 else 0.90 for s in seeds],
                          "attack/deep/accuracy": values, "attack/max/accuracy": values})
    return amnist(table), Study("amnist", "amnist", release=Release("amnist", "utility/fresh_accuracy"))


def test_a_collapsed_seed_cannot_carry_an_inconclusive_row_nor_too_few_seeds():
    above = Claim("alpha-mi", "Fig. 3", "", "more than 80 %", "amnist", PointMetric("attack/max/accuracy"), 0.8,
                  direction=ABOVE)
    four, study = collapsed([0.88, 0.50, 0.86, 0.87])
    assert verdict(above, above.measure(four), four) == "inconclusive"  # [0.49, 1]: seed 1 drags it across 0.8
    assert evaluate([above], {"amnist": four}, [study])[0].verdict == "inconclusive (collapsed seed)"  # else agrees
    three, study = collapsed([0.88, 0.50, 0.86])
    assert verdict(above, above.measure(three), three) == "inconclusive"
    assert evaluate([above], {"amnist": three}, [study])[0].verdict == "inconclusive (collapsed seed)"  # else 2 seeds
    own = replace(above, kind=OWN)
    assert evaluate([own], {"amnist": four}, [study])[0].verdict == "putlab's own"  # no verdict, none to carry


def test_one_quantity_of_the_paper_has_one_verdict_row_whichever_studies_measure_it():
    middle = [c for c in CLAIMS if c.item == "Fig. 3" and "≤ 60 %" in c.setting and "∞" not in c.setting]
    assert {c.study for c in middle} == {"amnist", "amnist-scale"} and {c.quantity for c in middle} == {"middle, α = 1"}
    full = [c for c in CLAIMS if c.item == "Fig. 3" and "lowest strongest-attacker" in c.setting and "∞" not in c.setting]
    assert len(full) == 3 and {c.quantity for c in full} == {"full privacy, α = 1"}
    digit = [c for c in CLAIMS if "digit accuracy at its most private point" in c.setting and "∞" not in c.setting]
    assert len(digit) == 3 and {(c.kind, c.quantity, c.published) for c in digit} == {
        (REPRODUCTION, "digit at full privacy, α = 1", digit[0].published)}  # the same row in each study
    # two studies reach the same point: the first row counts it, the second says where
    table = pd.DataFrame({"alpha": 1.0, "lam": [30.0, 300.0] * 3, "seed": np.repeat([0, 1, 2], 2),
                          "utility/fresh_accuracy": [0.95, 0.942, 0.96, 0.945, 0.95, 0.94],
                          "attack/max/accuracy": [0.70, 0.58, 0.72, 0.57, 0.71, 0.59]})
    first = Claim("alpha-mi", "Fig. 3", "", "kept", "amnist", BestUnder("utility/fresh_accuracy", "attack/max/accuracy",
                                                                         0.6), 0.9225, direction=ABOVE, quantity="m")
    rows = evaluate([first, replace(first, study="amnist-scale")], {"amnist": amnist(table), "amnist-scale": amnist(table)})
    assert [r.verdict for r in rows] == ["agrees", "counted in row 1"]
    unreached = replace(first, measure=BestUnder("utility/fresh_accuracy", "attack/max/accuracy", 0.5))
    rows = evaluate([unreached, replace(first, study="amnist-scale")], {"amnist": amnist(table),
                                                                         "amnist-scale": amnist(table)})
    assert [r.verdict for r in rows] == ["not reached", "counted in row 1"]  # not reaching it is a reading too


def test_a_substitute_row_never_reads_agrees():
    rows = [c for c in CLAIMS if c.substitute and c.kind == REPRODUCTION]
    assert len(rows) >= 6  # § 4.1's mixture, Cloak's 'digit > 5' attribute and MNIST, ρ_KL on a network's probes
    real = gmm(pd.DataFrame({"k": [0.4] * 3, "alpha": 0.1, "seed": [0, 1, 2], GAP: 0.0}))
    for claim in rows:
        target = 0.0 if claim.target is None else claim.target
        perfect = Measured(target, target - 0.01, target + 0.01, p_value=1e-6, seeds=3,
                           groups=((target,) * 3,))
        assert verdict(claim, perfect, real) == "substitute: no verdict", claim.setting
    sanity = [c for c in CLAIMS if c.substitute and c.kind == SANITY]
    assert sanity and all(verdict(c, Measured(0.0), real) == "sanity check: holds" for c in sanity)  # a check stays


@pytest.mark.parametrize("seeds", [2, 3, 5])
def test_an_interval_of_a_proportion_stays_inside_0_and_1(seeds: int):
    spread = np.array([0.99, 0.70, 0.995, 0.98, 0.999][:seeds])  # accuracies near 1 and one far below
    table = pd.DataFrame({"alpha": 1.0, "lam": 3.0, "seed": range(seeds), "utility/fresh_accuracy": spread,
                          "attack/max/accuracy": spread, "leakage/gap": spread - 0.5})
    study = amnist(table)
    for measure in (PointMetric("attack/max/accuracy"), OverTrials("utility/fresh_accuracy"),
                    BestUnder("utility/fresh_accuracy", "attack/max/accuracy", math.inf)):
        found = measure(study)
        assert 0.0 <= found.low <= found.value <= found.high <= 1.0
    parts = tuple(Part(f"s{s}", "", 1.0, "", "FINISHED", 1, (s,), 1, {"baseline/utility/accuracy": float(v)})
                  for s, v in enumerate(spread))
    pooled = ParentMetric("baseline/utility/accuracy")(amnist(table, parts=parts))
    assert 0.0 <= pooled.low <= pooled.high <= 1.0 and "cut to [0, 1]" in pooled.band
    gap = PointMetric("leakage/gap")(replace(study, trials=table.assign(**{"leakage/gap": spread})))  # nats: not cut
    assert gap.high > 1.0 and "cut" not in gap.band


def test_an_operating_point_the_grid_never_reached_reads_not_reached_not_differs():
    table = pd.DataFrame({"alpha": 1.0, "lam": [30.0, 300.0] * 3, "seed": np.repeat([0, 1, 2], 2),
                          "utility/fresh_accuracy": 0.9, "attack/max/accuracy": [0.9, 0.8] * 3,
                          "attack/deep/accuracy": [0.9, 0.8] * 3, "attack/thickness/accuracy": [0.7, 0.6] * 3})
    study = amnist(table)
    for claim in CLAIMS:
        if claim.study == "amnist" and claim.kind == REPRODUCTION and claim.target is not None:
            measured = claim.measure(study)
            if measured.unreached:
                assert verdict(claim, measured, study) == "not reached", claim.setting
    assert any(c.measure(study).unreached for c in CLAIMS if c.study == "amnist" and c.kind == REPRODUCTION)


def test_any_point_of_a_curve_is_read_at_every_point():
    row = next(c for c in CLAIMS if isinstance(c.measure, EveryPoint) and c.measure.where == {"k": 1.0})
    assert row.direction == LEVEL and row.measure.among == {"alpha": (0.1, 0.5, 0.8)}
    alphas = [0.0, 0.1, 0.5, 0.8, 1.0]
    gaps = np.array([0.4, 0.004, -0.003, 0.002, 0.5])  # α = 0 and 1 seek no bound: off it, and not read
    table = pd.DataFrame({"k": 1.0, "alpha": alphas * 3, "seed": np.repeat([0, 1, 2], 5),
                          GAP: np.tile(gaps, 3) + np.repeat([0.001, -0.001, 0.0], 5)})
    assert verdict(row, row.measure(gmm(table)), gmm(table)) == "agrees"
    one_off = table.assign(**{GAP: np.where(table["alpha"] == 0.5, 0.1, table[GAP])})  # the middle α misses
    measured = row.measure(gmm(one_off))
    assert "alpha = 0.5" in measured.text and verdict(row, measured, gmm(one_off)) == "differs"


def test_a_fall_shows_the_falls_it_was_computed_from():
    table = pd.DataFrame({"alpha": 1.0, "lam": 3.0, "seed": [0, 1, 2], "ne": 0.1, "attack": [0.75, 0.76, 0.73]})
    fall = Drop("attack", "raw", "ne", 0.26)(amnist(table, {"raw": 0.98}))
    assert fall.value == pytest.approx(0.98 - np.mean([0.75, 0.76, 0.73]))
    assert "(falls 0.23, 0.22, 0.25)" in fall.band and "0.75" not in fall.band


def test_the_summary_at_the_top_states_the_report_s_own_findings(tmp_path):
    from platform.papers.markdown import render

    headline = [c for c in CLAIMS if c.headline]
    assert {c.study for c in headline} >= {"amnist", "amnist-scale"}
    table = pd.DataFrame({"alpha": 1.0, "lam": [30.0, 300.0] * 3, "adv_steps": 1.0, "seed": np.repeat([0, 1, 2], 2),
                          "utility/fresh_accuracy": 0.9, "attack/max/accuracy": [0.9, 0.8] * 3,
                          "attack/fresh_adversary/accuracy": [0.9, 0.8] * 3})
    found = {"amnist": amnist(table), "amnist-scale": amnist(table)}
    text = render(evaluate(CLAIMS, found), found, {}, tmp_path / "r.md")
    summary = text.split("## What the report finds", 1)[1].split("## Studies", 1)[0]
    assert "- Row 5 (Fig. 3, study amnist)" in summary and "not reached" in summary
    assert "counted in row" not in summary  # a quantity another row counts is stated once


def test_paired_says_when_too_few_pairs_can_show_nothing():
    few = paired(pd.Series([0.1, 0.12, 0.11, 0.1, 0.13]), pd.DataFrame({"seed": range(5)}))
    assert "cannot go below p = 0.062" in few.statistic and few.text.endswith("neither shown different nor level")
    six = paired(pd.Series([0.1, 0.12, 0.11, 0.1, 0.13, 0.12]), pd.DataFrame({"seed": range(6)}))
    assert "cannot go below" not in six.statistic and six.text.endswith("higher")


def test_an_experiment_putlab_cannot_run_has_its_row_saying_what_it_needs(tmp_path):
    missing = [c for c in CLAIMS if c.needs]
    items = {(c.paper, c.item) for c in missing}
    assert {("privatizer", "§ 5.1, Table 1"), ("privatizer", "§ 5.2, Table 2"), ("privatizer", "§ 5.3, Fig. 5"),
            ("cloak", "Fig. 2a"), ("cloak", "Fig. 2d"), ("cloak", "Fig. 4")} <= items
    rows = evaluate(missing, {})
    assert {r.verdict for r in rows} == {"not run"} and all(r.data.startswith("not available: needs the ") for r in rows)
    assert all(not c.study and c.published and c.caveat for c in missing)
