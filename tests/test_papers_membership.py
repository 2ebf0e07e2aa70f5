"""The membership paper's rows: Theorem 1's check on hand-made trial tables, and the catalogue against the presets it
runs (every figure's rows, the paper's settings, the metrics a trial logs)."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from attacks.audits.kl_leakage import KlLeakage
from platform.papers import membership
from platform.papers.claim import KINDS, OWN, REPRODUCTION, SANITY
from platform.papers.measures import Trend
from platform.papers.membership import ADVANTAGE, RHO_MEAN, WithinBound, success_bound
from platform.papers.study_runs import StudyRuns
from platform.plan.spec import resolve
from trainables.membership.config import MembershipConfig
from trainables.membership.mechanism import evaluate_point

# Three points of two seeds. n = 10: ρ's upper end (4 + 6) / 2 = 5 clips the bound at 1, so the point is vacuous (not
# informative, counted neither way). n = 100: low end (0.1 + 0.14) / 2 = 0.12 above ½·√0.02 = 0.0707 at ρ's upper end:
# past. n = 1000: ρ's mean is below 0 (bound 0) but its upper end (0 + 0.01) / 2 gives ½·√0.005 = 0.035 < 1
# (informative) ≥ the low end 0: within. So the bound is informative at 2 of the 3 points.
TRIALS = pd.DataFrame({
    "n": [10, 10, 100, 100, 1000, 1000],
    "seed": [0, 1, 0, 1, 0, 1],
    ADVANTAGE: [0.5, 0.3, 0.2, 0.2, 0.02, 0.0],
    f"{ADVANTAGE}/ci_low": [0.1, 0.1, 0.1, 0.14, 0.0, 0.0],
    RHO_MEAN: [3.0, 5.0, 0.01, 0.03, -0.01, 0.0],
    f"{RHO_MEAN}/ci_high": [4.0, 6.0, 0.02, 0.02, 0.0, 0.01],
})


def runs(trials: pd.DataFrame) -> StudyRuns:
    return StudyRuns("adult-membership-x", "paper-n", {}, trials, ("n", "lam", "p_x", "sigma", "seed"))


def test_within_bound_counts_the_points_whose_advantage_interval_clears_the_bound() -> None:
    measured = WithinBound()(runs(TRIALS))
    assert (measured.value, measured.low, measured.high) == (1.0, 1.0, 1.0)
    assert measured.text.startswith("informative at 2 of 3 points, past the bound at 1 (")
    assert "n = 10: 0.4 vs 1 (vacuous);" in measured.text and "n = 100: 0.2 vs 0.0707 (past)" in measured.text
    assert "n = 1000: 0.01 vs 0" in measured.text and measured.text.count("(past)") == 1


def test_within_bound_at_every_point_reads_zero() -> None:
    lower = TRIALS.assign(**{f"{ADVANTAGE}/ci_low": [0.1, 0.1, 0.05, 0.05, 0.0, 0.0]})
    measured = WithinBound()(runs(lower))
    assert measured.value == 0.0
    assert measured.text.startswith("informative at 2 of 3 points, within the bound at every one (")


def test_within_bound_needs_the_intervals() -> None:
    assert WithinBound()(runs(TRIALS.drop(columns=f"{RHO_MEAN}/ci_high"))).text == "not measured"
    assert math.isnan(WithinBound()(runs(TRIALS.iloc[0:0])).value)


@pytest.mark.parametrize("rho", [-0.3, 0.0, 0.02, 1.0, 4.0, 9.0])
def test_the_bound_is_the_one_the_trials_log(rho: float) -> None:
    assert success_bound(pd.Series([rho]))[0] == pytest.approx(KlLeakage.from_rho(rho, 10).success_bound)


def test_a_trial_logs_what_the_rows_read() -> None:
    metrics = evaluate_point(MembershipConfig(n=30, lam=0.0, kl_records=3, mc_runs=12))
    needed = {ADVANTAGE, f"{ADVANTAGE}/ci_low", RHO_MEAN, f"{RHO_MEAN}/ci_high", membership.ADULT_RHO}
    assert needed <= set(metrics)


# The paper's figures: the study, the grid axis and the other axes as its captions fix them.
FIGURES = {
    "Fig. 1": ("adult-n", "n", {"lam": 0.0, "p_x": 5, "sigma": 0.0, "model": "linear"}),
    "Fig. 2": ("adult-net", "n", {"lam": 0.0, "p_x": 5, "sigma": 0.0, "model": "tanh_net"}),
    "Fig. 3": ("adult-lam", "lam", {"n": 10, "p_x": 5, "sigma": 0.0, "model": "linear"}),
    "Fig. 4": ("adult-p_x", "p_x", {"n": 10, "lam": 1e-6, "sigma": 0.0, "model": "linear"}),
    "Fig. 5": ("adult-sigma", "sigma", {"n": 30, "lam": 0.0, "p_x": 5, "model": "linear"}),
}
STUDIES = {s.key: s for s in membership.STUDIES}


@pytest.mark.parametrize("item", FIGURES)
def test_every_figure_has_its_leakage_advantage_and_bound_rows_in_its_setting(item: str) -> None:
    study, axis, fixed = FIGURES[item]
    rows = [c for c in membership.CLAIMS if c.item.startswith(item) and c.study == study and c.kind == REPRODUCTION]
    trends = {c.measure.metric for c in rows if isinstance(c.measure, Trend) and c.measure.axis == axis}
    assert {RHO_MEAN, membership.ADULT_RHO, ADVANTAGE} <= trends
    # the paper draws ρ_KL as a line, the mean over records: that row carries the verdict (the first of its
    # quantity), the median beside it is counted in it
    rho_rows = [c.measure.metric for c in rows if c.quantity == "ρ_KL" and isinstance(c.measure, Trend)]
    assert rho_rows == [RHO_MEAN, membership.ADULT_RHO]
    # Theorem 1 is proven and the figures demonstrate Theorems 2–4: the bound on each figure's trials is a sanity check
    bound = [c for c in membership.CLAIMS if isinstance(c.measure, WithinBound) and c.study == study]
    assert [(c.target, c.kind, c.item) for c in bound] == [(0.0, SANITY, "Theorem 1")] and item in bound[0].setting
    spec = resolve("adult-membership", STUDIES[study].profile, [])
    assert list(spec.grid) == [axis] and len(spec.grid[axis]) >= 4
    assert {k: spec.config[k] for k in fixed} == fixed


def test_the_catalogue_is_consistent() -> None:
    for claim in membership.CLAIMS:
        assert claim.paper == membership.PAPER.key and claim.study in STUDIES and claim.kind in KINDS
        assert claim.caveat, claim
        if isinstance(claim.measure, Trend):
            study = STUDIES[claim.study]
            assert claim.measure.axis in resolve(study.preset, study.profile, []).grid, claim
    assert all(c.kind == OWN for c in membership.CLAIMS if c.study in ("adult-dp", "adult-n-probes"))
    assert {c.study for c in membership.CLAIMS} == set(STUDIES)
