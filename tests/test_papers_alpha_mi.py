"""The α-MI paper's rows: its measures on hand-made trial tables, and the catalogue's consistency with its studies."""
from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd
import pytest
from scipy import stats

from core.numbers import readable
from platform.papers import alpha_mi
from platform.papers.claim import DIRECTIONS, EXACT, KINDS, OWN, REPRODUCTION
from platform.papers.measures import BestUnder, ParentMetric
from platform.papers.study_runs import StudyRuns
from search_spaces import amnist, eco, eco_si

# two points per α (α = 1: λ 30 and 300; α = ∞: λ 300), two seeds each
TRIALS = pd.DataFrame({
    "alpha": [1.0, 1.0, 1.0, 1.0, math.inf, math.inf],
    "lam": [30.0, 30.0, 300.0, 300.0, 300.0, 300.0],
    "seed": [0, 1, 0, 1, 0, 1],
    "utility/fresh_accuracy": [0.95, 0.93, 0.80, 0.78, 0.60, 0.70],
    "attack/deep/accuracy": [0.61, 0.57, 0.55, 0.53, 0.50, 0.52],
    "attack/max/accuracy": [0.61, 0.57, 0.55, 0.53, 0.50, 0.52],  # the points are read with the strongest attacker
    "attack/thickness/accuracy": [0.52, 0.50, 0.60, 0.62, 0.56, 0.58],
    "utility/psnr": [20.0, 22.0, 12.0, 14.0, 8.0, 9.0],
    "utility/ssim": [0.8, 0.9, 0.4, 0.5, 0.2, 0.3],
})
RAW = {"baseline/attack/deep/accuracy": 0.90, "baseline/utility/accuracy": 0.96}


def runs(parent: dict[str, float] | None = None) -> StudyRuns:
    return StudyRuns("sweep-x", "quick", parent or {}, TRIALS, ("alpha", "lam", "seed"))


def test_gap_at_reads_the_difference_at_the_chosen_point():
    # the middle point: strongest ≤ 0.6 with the best fresh accuracy is α = 1, λ = 30 (deep mean 0.59)
    gap = alpha_mi.GapAt("attack/deep/accuracy", "attack/thickness/accuracy", alpha_mi.middle())(runs())
    # per-seed gaps 0.09 and 0.07: the Student t 95 % interval of their mean, 0.08 ± t(0.975, 1) · 0.01
    half = stats.t.ppf(0.975, 1) * 0.01
    assert gap.value == pytest.approx(0.08) and (gap.low, gap.high) == pytest.approx((0.08 - half, 0.08 + half))
    assert "alpha = 1, lam = 30" in gap.band
    # the most private point: α = ∞, λ = 300 (deep mean 0.51), where the thickness rule reads higher
    gap = alpha_mi.GapAt("attack/thickness/accuracy", "attack/deep/accuracy", alpha_mi.most_private())(runs())
    assert gap.value == pytest.approx(0.06) and "alpha = inf" in gap.band
    assert alpha_mi.GapAt("missing", "attack/deep/accuracy", alpha_mi.middle())(runs()).text == "not measured"


def test_the_per_alpha_points_stay_on_their_curve():
    assert alpha_mi.most_private(1.0, "utility/fresh_accuracy")(runs()).value == pytest.approx(0.79)
    assert alpha_mi.most_private(math.inf, "utility/fresh_accuracy")(runs()).value == pytest.approx(0.65)
    assert alpha_mi.middle(math.inf)(runs()).value == pytest.approx(0.65)


def test_image_quality_shows_psnr_and_ssim_at_the_point():
    measured = alpha_mi.ImageQuality(alpha_mi.most_private(1.0))(runs())
    # α = 1, λ = 300: PSNR 12 and 14 (mean 13, sd √2), SSIM 0.4 and 0.5 (mean 0.45, sd 0.1/√2); t intervals of the mean
    psnr, ssim = stats.t.ppf(0.975, 1) * math.sqrt(2) / math.sqrt(2), stats.t.ppf(0.975, 1) * 0.1 / 2
    assert measured.value == pytest.approx(13.0) and (measured.low, measured.high) == pytest.approx((13 - psnr, 13 + psnr))
    assert measured.text == (f"PSNR 13 [{readable(13 - psnr)}, {readable(13 + psnr)}] dB, "
                             f"SSIM 0.45 [{readable(0.45 - ssim)}, {readable(0.45 + ssim)}]")
    unreached = alpha_mi.ImageQuality(alpha_mi.BestUnder("utility/fresh_accuracy", "attack/deep/accuracy", 0.4))(runs())
    assert unreached.unreached and math.isnan(unreached.value)


def test_kept_fall_is_the_attackers_fall_where_utility_stays_near_raw():
    fall = alpha_mi.KeptFall("attack/deep/accuracy", "baseline/attack/deep/accuracy", "utility/fresh_accuracy",
                             "baseline/utility/accuracy", 0.05)
    measured = fall(runs(RAW))  # only α = 1, λ = 30 keeps the digit within 0.05 (0.94 against 0.96): 0.90 − 0.59
    half = stats.t.ppf(0.975, 1) * 0.02  # per-seed falls 0.29 and 0.33: sd 0.02·√2, over √2 seeds
    assert measured.value == pytest.approx(0.31) and (measured.low, measured.high) == pytest.approx((0.31 - half,
                                                                                                     0.31 + half))
    assert sorted(measured.groups[0]) == pytest.approx([0.29, 0.33])
    wider = replace(fall, loss=0.2)(runs(RAW))  # now α = 1, λ = 300 too (0.79), where the attacker falls further
    assert wider.value == pytest.approx(0.36)
    assert fall(runs()).text == "not measured"


def test_every_row_names_a_study_of_the_paper_and_a_known_kind():
    studies = {s.key for s in alpha_mi.STUDIES}
    for claim in alpha_mi.CLAIMS:
        assert claim.paper == alpha_mi.PAPER.key and claim.study in studies and claim.kind in KINDS
        assert claim.direction in DIRECTIONS and claim.caveat
        count = isinstance(claim.measure, ParentMetric) and claim.measure.metric.startswith("data/")
        assert (claim.direction == EXACT) == count, claim  # a count is met exactly, and only a count
        assert claim.kind == REPRODUCTION or claim.target is None  # own rows carry no verdict


def test_the_per_alpha_rows_follow_the_studies_quick_grids():
    assert set(alpha_mi.AMNIST_ALPHAS) == set(amnist.QUICK_LAMBDAS)
    for alphas, preset in ((alpha_mi.ECO_ALPHAS, eco.PRESET), (alpha_mi.ECO_SI_ALPHAS, eco_si.PRESET)):
        grid = preset.profiles["quick"].grid
        assert isinstance(grid, dict) and set(alphas) == set(grid["alpha"])
    fig3 = [c for c in alpha_mi.CLAIMS if c.item == "Fig. 3" and c.kind == REPRODUCTION and c.study == "amnist"]
    # per α: the middle point with the paper's attacker and with the strongest, the most private point, its accuracy
    assert len(fig3) == 4 * len(alpha_mi.AMNIST_ALPHAS)
    for alpha in alpha_mi.AMNIST_ALPHAS:
        rows = [c.measure for c in fig3 if isinstance(c.measure, BestUnder) and c.measure.where == {"alpha": alpha}]
        assert len(rows) == 4 and {m.budget_metric for m in rows} == {alpha_mi.PAPERS_ATTACKER, alpha_mi.MAX_ATTACK}


def test_rows_on_the_eco_stand_in_say_so_and_the_within_hour_row_is_putlabs_own():
    for claim in alpha_mi.CLAIMS:
        if claim.study in ("eco", "eco-si"):
            assert "synthetic stand-in" in claim.caveat
    within = [c for c in alpha_mi.CLAIMS if "within hours" in c.setting]
    assert len(within) == 1 and within[0].kind == OWN and "not the paper's metric" in within[0].caveat
