"""The Cloak paper's rows: its by-hand measure, its study's settings, and that every row reads a metric the cloak-mnist
sweep logs (the names its end-to-end test checks)."""
from __future__ import annotations

import math

import pandas as pd
import pytest
from test_cloak_sweep import FARM_METRICS, PARENT_METRICS, TRIAL_METRICS

from platform.papers import cloak
from platform.papers.claim import KINDS, OWN, REPRODUCTION
from platform.papers.measures import BestUnder, Difference, ParentMetric, Trend
from platform.papers.study_runs import StudyRuns
from trainables.cloak import evaluation


def _runs(trials: pd.DataFrame) -> StudyRuns:
    return StudyRuns("cloak-mnist-quick-x", "quick", {}, trials, ("lam", "T", "M"))


def _read(measure: object) -> set[str]:
    """The metric names a measure reads."""
    if isinstance(measure, ParentMetric | Trend):
        return {measure.metric}
    if isinstance(measure, BestUnder):
        return {measure.metric, measure.budget_metric}
    if isinstance(measure, Difference):
        return {measure.metric, measure.other}
    return set()


def test_by_hand_names_its_script_and_reads_no_number() -> None:
    measured = cloak.ByHand("benchmarks/x.py")(_runs(pd.DataFrame({"lam": [1.0]})))
    assert math.isnan(measured.value) and str(measured) == "not in the sweep: run `benchmarks/x.py`"
    assert cloak.ByHand("benchmarks/x.py").describe() == "`benchmarks/x.py` (by hand)"


def test_the_baselines_prefixes_are_the_trainables() -> None:
    assert (cloak.EQUAL_ACC, cloak.EQUAL_INFO) == (evaluation.EQUAL_ACC, evaluation.EQUAL_INFO)


def test_every_row_reads_a_metric_the_sweep_logs() -> None:
    logged = {*TRIAL_METRICS, *FARM_METRICS, *PARENT_METRICS}
    for claim in cloak.CLAIMS:
        assert claim.paper == cloak.PAPER.key and (claim.study in {s.key for s in cloak.STUDIES} or claim.needs)
        assert claim.kind in KINDS and claim.caveat, claim
        assert _read(claim.measure) <= logged, claim.item
        assert claim.kind != OWN or claim.published == "(not in the paper)", claim.item


def test_the_study_runs_the_papers_M_and_its_mnist_lambdas() -> None:
    (study,) = cloak.STUDIES
    argv = study.argv()
    assert "M=1.5" in argv and "--seeds" in argv
    lams = {float(v) for v in next(a for a in argv if a.startswith("lam=")).removeprefix("lam=").split(",")}
    assert {100.0, 200.0} <= lams and len(lams) >= 3  # Table 2's values, and enough points for a trend


def test_the_papers_comparison_reads_the_noisy_representation_at_equal_information() -> None:
    (claim,) = [c for c in cloak.CLAIMS if c.item.startswith("Fig. 2a") and not c.needs]
    assert claim.kind == REPRODUCTION
    trials = pd.DataFrame({"lam": [1.0, 1.0, 100.0, 100.0], "T": 1.0, "M": 1.5, "seed": [0, 1, 0, 1],
                           "utility/noisy_accuracy": [0.90, 0.92, 0.99, 0.98],
                           f"{cloak.EQUAL_INFO}/utility/accuracy": [0.80, 0.85, 0.99, 0.97]})
    assert claim.measure(_runs(trials)).value == pytest.approx(0.045)  # Cloak's accuracy ahead by 4.5 points on average
