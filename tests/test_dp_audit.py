"""The one-run ε audit (attacks.audits.dp_audit, trainables.membership.canary_audit;
docs/membership.md#the-empirical-ε-of-dp-sgd).

The bound is checked against a brute-force computation of the same theorem (the binomial's pmf summed directly, ε on a
fine grid) and one case by hand; the audit is checked on real DP-SGD on Adult: a DP-SGD with its noise off and no
clipping, still claiming ε = 1, must be caught (its lower bound above 1), and the correct DP-SGD at ε = 1 must not.
Every value quoted in a comment was measured with this code.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from attacks.audits.dp_audit import BETA, OneRunAudit, epsilon_lower, guess, p_value
from trainables.membership import canary_audit, dp_sgd
from trainables.membership.config import MembershipConfig
from trainables.membership.mechanism import evaluate_point

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # as a trial does (cfg.threads = 1)


# ---------------------------------------------------------------- the bound


def brute_force_p_values(epsilons: np.ndarray, delta: float, m: int, r: int, v: int) -> np.ndarray:
    """Theorem 3.1's p-value on a grid of ε from the binomial pmf summed term by term (no scipy tail functions)."""
    q = special.expit(epsilons)[:, None]
    k = np.arange(r + 1)
    log_comb = np.array([math.lgamma(r + 1) - math.lgamma(j + 1) - math.lgamma(r - j + 1) for j in k])
    with np.errstate(divide="ignore"):
        pmf = np.exp(log_comb + k * np.log(q) + (r - k) * np.log1p(-q))
    tail = pmf[:, v:].sum(axis=1)
    alpha = np.zeros(len(epsilons))
    for i in range(1, v + 1):
        alpha = np.maximum(alpha, pmf[:, v - i:v].sum(axis=1) / i)
    return np.minimum(1.0, tail + 2 * m * delta * alpha)


CASES = [  # (m, r, v, δ)
    (100, 100, 100, 0.0),
    (200, 100, 84, 1e-5),
    (200, 160, 131, 1e-5),
    (1000, 100, 90, 1e-5),
    (40, 40, 28, 1e-5),
    (10, 10, 10, 1e-2),  # δ large enough to matter: 2·m·δ·α is comparable to β
    (200, 100, 55, 1e-5),  # no better than chance at ε = 0: nothing rejected
]


@pytest.mark.parametrize(("m", "r", "v", "delta"), CASES)
def test_bound_matches_brute_force_on_a_grid(m: int, r: int, v: int, delta: float) -> None:
    grid = np.arange(0, 6, 1e-3)
    p = brute_force_p_values(grid, delta, m, r, v)
    np.testing.assert_allclose([p_value(e, delta, m, r, v) for e in grid[::250]], p[::250], rtol=1e-9, atol=1e-15)
    rejected = p <= BETA
    expected = grid[rejected].max() if rejected.any() else 0.0
    assert not rejected.any() or rejected[:rejected.argmin() or len(grid)].all()  # the rejected εs are [0, bound]
    assert expected - 1e-6 <= epsilon_lower(m, r, v, delta) < expected + 1e-3


def test_all_correct_guesses_without_delta_by_hand() -> None:
    # P[Binomial(100, q) ≥ 100] = q^100 = 0.05 at q = 0.05^(1/100) = 0.97049, so ε = log(q / (1 − q)) = 3.4930.
    q = 0.05 ** (1 / 100)
    assert epsilon_lower(100, 100, 100, 0.0) == pytest.approx(math.log(q / (1 - q)), abs=1e-5)
    assert math.log(q / (1 - q)) == pytest.approx(3.4930, abs=1e-4)
    # δ can only weaken the bound, and more guesses with the same accuracy strengthen it.
    assert epsilon_lower(200, 100, 100, 1e-5) < epsilon_lower(200, 100, 100, 0.0)
    assert epsilon_lower(200, 200, 180, 1e-5) > epsilon_lower(200, 100, 90, 1e-5) > epsilon_lower(200, 50, 45, 1e-5)
    assert epsilon_lower(200, 0, 0, 1e-5) == 0.0


def test_guesses_take_the_highest_in_and_the_lowest_out() -> None:
    scores = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.0])
    included = np.array([True, True, False, True, False, False])
    assert guess(scores, included, 2, 2) == (4, 4)
    assert guess(scores, included, 3, 0) == (3, 2)
    assert guess(scores, included, 0, 3) == (3, 2)
    assert guess(np.zeros(4), np.array([False, True, True, False]), 1, 1) == (2, 1)  # ties: first in, last out
    with pytest.raises(ValueError, match="k_in \\+ k_out <= 6"):
        guess(scores, included, 4, 3)
    logged = OneRunAudit(200, 100, 100, 0.0).logged()
    assert logged == {"leakage/dp/epsilon_lower": pytest.approx(epsilon_lower(200, 100, 100, 0.0)),
                      "leakage/dp/audit_canaries": 200.0, "leakage/dp/audit_guesses": 100.0,
                      "leakage/dp/audit_correct": 100.0}


# ---------------------------------------------------------------- the audit of DP-SGD


def test_canaries_sit_on_distinct_axes_of_each_run() -> None:
    x, run = canary_audit.canary_inputs(90, 40, np.random.default_rng(0))
    assert x.shape == (90, 40) and run.tolist() == [0] * 40 + [1] * 40 + [2] * 10
    assert (np.count_nonzero(x, axis=1) == 1).all() and set(np.abs(x).max(axis=1)) == {canary_audit.CANARY_NORM}
    for k in range(3):
        axes = np.abs(x[run == k]).argmax(axis=1)
        assert len(set(axes)) == len(axes)  # one canary per axis within a run


def test_fixed_sampling_of_the_sets_own_size_is_the_trials_dp_sgd() -> None:
    # dp_sgd.Sampling draws the same lots and noise as the trial's own DP-SGD when it names the set's own size.
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(100, 5)), rng.integers(0, 2, size=100).astype(float)
    setting = dp_sgd.DpSgd(2.0, 1e-5, 1.0, 32, 3, 0.5, 1e-3)
    own = dp_sgd.train(x, y, setting, 7)
    fixed = dp_sgd.train(x, y, setting, 7, dp_sgd.Sampling(100, 100 / dp_sgd.lots(100, 32)))
    np.testing.assert_array_equal(own.theta, fixed.theta)
    assert fixed.noise_multiplier == own.noise_multiplier and math.isnan(fixed.epsilon)


def test_audit_is_only_for_dp_sgd() -> None:
    with pytest.raises(ValueError, match="audit_canaries: audits DP-SGD only"):
        MembershipConfig(model="logistic", audit_canaries=10)


# Over-fitted as in adult-dp's quick profile: 41 logistic parameters on 20 members; 200 canaries in 5 audit runs.
AUDITED = {"model": "dp_logistic", "n": 20, "p_x": 40, "kl_records": 0, "audit_canaries": 200, "epsilon": 1.0}


@pytest.mark.parametrize("seed", [0, 1])
def test_broken_dp_sgd_is_caught_and_correct_dp_sgd_is_not(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Measured (seeds 0-4): correct DP-SGD at ε = 1 (accountant: 0.9999): 60, 51, 53, 61, 53 of 100 guesses right,
    # lower bounds 0.05, 0, 0, 0.09, 0; noise off and clip 1e6 (never binding) while claiming ε = 1: 100 of 100 right
    # and a lower bound of 3.49 every time (the most 100 guesses on 200 canaries can show at δ = 1e-5).
    correct = evaluate_point(MembershipConfig(**AUDITED, seed=seed))
    claimed = correct["leakage/dp/epsilon"]
    assert 0.9 <= claimed <= 1.0
    assert correct["leakage/dp/audit_canaries"] == 200 and correct["leakage/dp/audit_guesses"] == 100
    assert correct["leakage/dp/epsilon_lower"] <= claimed  # holds with probability ≥ 95 % per seed by the theorem

    monkeypatch.setattr(dp_sgd, "noise_multiplier", lambda setting, n: 0.0)  # the accountant's σ, never applied
    broken = evaluate_point(MembershipConfig(**{**AUDITED, "clip": 1e6}, seed=seed))
    assert broken["leakage/dp/noise_multiplier"] == 0.0 and "leakage/dp/epsilon" not in broken
    assert broken["leakage/dp/audit_correct"] >= 95
    assert broken["leakage/dp/epsilon_lower"] > 1.0 + 1.0  # the claim refuted with a margin, at 95 % confidence

