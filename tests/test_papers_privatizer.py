"""The privatizer paper's rows: its measures on hand-made trials tables, and the catalogue's consistency."""
from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats

from platform.papers import privatizer
from platform.papers.claim import KINDS, OWN, REPRODUCTION, SANITY
from platform.papers.study_runs import StudyRuns
from search_spaces import presets

LN2 = math.log(2)


def runs(rows: list[dict[str, float]], keys: tuple[str, ...] = ("k", "alpha", "algorithm")) -> StudyRuns:
    """A finished sweep holding ``rows`` as its trials."""
    return StudyRuns("gmm-quick-x", "quick", {}, pd.DataFrame(rows), label_keys=keys)


def trial(k: float, alpha: float, i_uxq: float, i_sq: float, bound: float, seed: int = 0, algorithm: int = 1,
          ) -> dict[str, float]:
    """One GMM trial's grid values and information terms (its gap follows from them)."""
    return {"k": k, "alpha": alpha, "algorithm": algorithm, "seed": seed, "leakage/i_uxq": i_uxq, "leakage/i_sq": i_sq,
            "leakage/bound_k": bound, "leakage/gap": i_uxq + i_sq - bound}


def t95(values: list[float]) -> tuple[float, float]:
    """The Student t 95 % interval of the mean, by its formula: mean ± t(0.975, n − 1) · sd / √n."""
    n, mean = len(values), sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
    return mean - half, mean + half


def test_bound_margin_is_the_smaller_slack_of_the_two_bounds() -> None:
    table = runs([trial(0.0, 0.25, 0.25 * LN2 + 0.01, 0.75 * LN2 - 0.01, LN2, seed=0),  # slacks +0.01, −0.01
                  trial(0.0, 0.25, 0.25 * LN2 - 0.03, 0.75 * LN2 + 0.02, LN2, seed=1),  # slacks −0.03, +0.02
                  trial(0.0, 0.5, 0.5 * LN2 + 0.02, 0.5 * LN2 + 0.03, LN2, seed=0),  # slacks +0.02, +0.03
                  trial(0.0, 0.5, 0.5 * LN2 + 0.04, 0.5 * LN2 + 0.01, LN2, seed=1),  # slacks +0.04, +0.01
                  trial(1.0, 0.5, 0.0, 0.0, 0.0)])
    measured = privatizer.BoundMargin({"k": 0.0})(table)
    # per α the smaller slack of each seed: α = 0.25 → −0.01, −0.03 (mean −0.02); α = 0.5 → 0.02, 0.01 (mean 0.015)
    quarter, half = t95([-0.01, -0.03]), t95([0.02, 0.01])
    assert measured.value == pytest.approx(-0.02)  # the lowest α's mean
    # the interval: the lowest lower end (α = 0.25's) to the lowest upper end (α = 0.5's, not the lowest α's)
    assert (measured.low, measured.high) == pytest.approx((min(quarter[0], half[0]), min(quarter[1], half[1])))
    assert measured.high == pytest.approx(half[1]) and measured.high < quarter[1]
    assert sorted(v for g in measured.groups for v in g) == pytest.approx([-0.03, -0.01, 0.01, 0.02])
    assert measured.band == "each α's mean over its seeds with its 95 % t interval; lowest at α = 0.25"
    assert math.isnan(privatizer.BoundMargin({"k": 0.4})(table).value)


@pytest.mark.parametrize("single", [0.25, 0.5])
def test_bound_margin_has_no_interval_where_an_alpha_has_one_seed(single: float) -> None:
    rows = [trial(0.0, a, a * LN2 + 0.01 * s, (1 - a) * LN2, LN2, seed=s) for a in (0.25, 0.5) for s in (0, 1)]
    table = runs([r for r in rows if not (r["alpha"] == single and r["seed"] == 1)])
    measured = privatizer.BoundMargin({"k": 0.0})(table)
    assert not math.isnan(measured.value) and math.isnan(measured.low) and math.isnan(measured.high)


def test_axis_difference_pairs_trials_by_their_other_grid_values_and_seed() -> None:
    table = runs([trial(0.4, a, 0.1 * a + d, 0.2, 0.19, seed=s, algorithm=alg)
                  for a in (0.1, 0.8) for s in (0, 1) for alg, d in ((1, 0.0), (2, 0.05 + 0.01 * s))])
    measured = privatizer.AxisDifference("leakage/gap", "algorithm", 2, 1)(table)
    # paired by α and seed, the differences are 0.05 (seed 0) and 0.06 (seed 1) at each α; pairing across α would
    # mix in ±0.07 (0.1 · (0.8 − 0.1))
    assert sorted(measured.groups[0]) == pytest.approx([0.05, 0.05, 0.06, 0.06])
    low, high = t95([0.05, 0.05, 0.06, 0.06])
    assert (measured.value, measured.low, measured.high) == pytest.approx((0.055, low, high))
    assert measured.band == "95 % t interval over 4 pairs"
    by_k = runs([trial(0.4, 0.8, 0.3, 0.2, 0.19, seed=0), trial(1.0, 0.8, 0.01, 0.0, 0.0, seed=0),
                 trial(1.0, 0.1, 0.5, 0.0, 0.0, seed=0)])
    assert privatizer.AxisDifference("leakage/gap", "k", 0.4, 1.0, {"alpha": 0.8})(by_k).value == pytest.approx(0.30)


def test_over_trials_spans_every_trial_at_the_grid_values() -> None:
    table = runs([trial(0.0, a, a * LN2, (1 - a) * LN2 + 1e-16, LN2, seed=s) for a in (0.1, 0.5) for s in (0, 1)]
                 + [trial(0.4, 0.1, 0.5, 0.5, 0.19)])  # another k: left out
    measured = privatizer.OverTrials("leakage/gap", {"k": 0.0})(table)
    assert measured.value == pytest.approx(0.0, abs=1e-12) and measured.band == "95 % t interval over 4 trials"
    assert len(measured.groups[0]) == 4 and measured.seeds == 2
    assert privatizer.OverTrials("leakage/missing")(table).text == "not measured"


def test_every_row_names_a_study_of_the_module_and_a_known_kind() -> None:
    studies = {s.key: s for s in privatizer.STUDIES}
    for claim in privatizer.CLAIMS:
        assert claim.paper == privatizer.PAPER.key and (claim.study in studies or claim.needs) and claim.kind in KINDS
        assert claim.kind != REPRODUCTION or claim.caveat  # every reproduction row says how putlab's setting differs
    assert {c.kind for c in privatizer.CLAIMS if c.study == "privatizer"} == {OWN}  # the paper has no MNIST experiment
    assert all(c.item.startswith("— (putlab") for c in privatizer.CLAIMS if c.study == "privatizer")


def test_the_gmm_study_runs_the_papers_codependences_and_alphas() -> None:
    gmm = next(s for s in privatizer.STUDIES if s.key == "gmm")
    grid = presets()[gmm.preset].profiles[gmm.profile].grid
    assert isinstance(grid, dict)  # one grid, not a list of sub-grids
    assert grid["k"] == [1.0, 0.4, 0.0]  # Fig. 6: I(U;S) = {0, 0.19, 0.69} nats
    assert {0.1, 0.5, 0.8} <= set(grid["alpha"])  # Fig. 6's α
    theorem = [c for c in privatizer.CLAIMS if c.item.startswith("Theorem 3.3")]
    assert {c.measure.where["k"] for c in theorem} == set(grid["k"])  # type: ignore[attr-defined]
    assert [c.kind for c in theorem] == [SANITY, REPRODUCTION, REPRODUCTION]  # k = 1: K = 0, nothing to bound


def test_the_algorithms_study_sweeps_all_three_at_k_04() -> None:
    study = next(s for s in privatizer.STUDIES if s.key == "gmm-algorithms")
    assert study.command().endswith("--set algorithm=1,2,3 --set k=0.4")
    assert {c.measure.value for c in privatizer.CLAIMS if c.study == study.key} == {2, 3}  # type: ignore[attr-defined]
