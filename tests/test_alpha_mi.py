"""The α-MI estimator against hand-computed values for a small discrete channel (docs/estimators.md#α-mutual-information)."""
import math

import pytest
import torch

from trainables.shared.alpha_mi import (
    alpha_mutual_information,
    arimoto_conditional_entropy,
    normalised_alpha_mi,
    renyi_entropy,
)

# Joint P(s, y): rows s ∈ {0, 1}, columns y ∈ {0, 1}. P(s) = (0.6, 0.4), P(y) = (0.5, 0.5).
JOINT = torch.tensor([[0.4, 0.2], [0.1, 0.3]], dtype=torch.float64)
PRIOR = JOINT.sum(1)
P_Y = JOINT.sum(0)
POSTERIORS = (JOINT / P_Y).T  # row y: P(s | y)

# Worked by hand (natural logs):
#  α = 1/2: −[log((√.4+√.1)² + (√.2+√.3)²) − log((√.6+√.4)²)] = −log(1.88990/1.97980) = 0.046471
#  α = 1:   Σ P(s,y) log P(s,y)/(P(s)P(y)) = .4 log(4/3) + .2 log(2/3) + .1 log(1/2) + .3 log(3/2) = 0.086305
#  α = 2:   2·log[(√.17 + √.13) / √.52] = 2·log(0.772871/0.721110) = 0.138626
#  α = ∞:   log[(max(.4,.1) + max(.2,.3)) / max(.6,.4)] = log(0.7/0.6) = 0.154151
HAND = {0.5: 0.046471, 1.0: 0.086305, 2.0: 0.138626, math.inf: 0.154151}


@pytest.mark.parametrize("alpha", sorted(HAND))
def test_alpha_mi_matches_hand_computed_channel(alpha: float) -> None:
    got = alpha_mutual_information(POSTERIORS, PRIOR, alpha, weights=P_Y)
    assert got.item() == pytest.approx(HAND[alpha], abs=2e-6)


@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0, 10.0, math.inf])
def test_batch_mean_estimator_equals_weighted_form(alpha: float) -> None:
    # A batch holding each y in proportion to P(y) must give the same value with a plain mean.
    batch = POSTERIORS.repeat_interleave(torch.tensor([3, 3]), dim=0)
    assert alpha_mutual_information(batch, PRIOR, alpha).item() == pytest.approx(
        alpha_mutual_information(POSTERIORS, PRIOR, alpha, weights=P_Y).item(), abs=1e-9
    )


@pytest.mark.parametrize("alpha", [0.3, 0.5, 1.0, 2.0, 5.0, math.inf])
def test_independent_s_and_y_give_zero(alpha: float) -> None:
    prior = torch.tensor([0.7, 0.2, 0.1], dtype=torch.float64)
    posteriors = prior.expand(5, 3)
    assert alpha_mutual_information(posteriors, prior, alpha).item() == pytest.approx(0.0, abs=1e-9)


def test_limits_are_continuous() -> None:
    # The exact α = 1 and α = ∞ branches agree with the general formula near those points.
    near_one = alpha_mutual_information(POSTERIORS, PRIOR, 1 + 1e-4, weights=P_Y).item()
    assert near_one == pytest.approx(HAND[1.0], abs=1e-4)
    large = alpha_mutual_information(POSTERIORS, PRIOR, 2000.0, weights=P_Y).item()
    assert large == pytest.approx(HAND[math.inf], abs=1e-3)


def test_alpha_mi_is_monotone_in_alpha_here() -> None:
    values = [alpha_mutual_information(POSTERIORS, PRIOR, a, weights=P_Y).item() for a in (0.5, 1, 2, math.inf)]
    assert values == sorted(values)


def test_renyi_entropy_values() -> None:
    uniform = torch.full((4,), 0.25, dtype=torch.float64)
    for alpha in (0.5, 1.0, 3.0, math.inf):
        assert renyi_entropy(uniform, alpha).item() == pytest.approx(math.log(4))
    assert renyi_entropy(PRIOR, 2.0).item() == pytest.approx(-math.log(0.52))
    assert renyi_entropy(PRIOR, math.inf).item() == pytest.approx(-math.log(0.6))


def test_normalised_term_is_one_for_a_perfect_adversary() -> None:
    prior = torch.tensor([0.6, 0.4], dtype=torch.float64)
    onehot = torch.tensor([[1.0, 0.0]] * 3 + [[0.0, 1.0]] * 2, dtype=torch.float64)
    for alpha in (0.5, 1.0, 2.0, math.inf):
        assert normalised_alpha_mi(onehot, prior, alpha).item() == pytest.approx(1.0, abs=1e-6)


def test_gradient_flows_to_posteriors() -> None:
    logits = torch.randn(8, 2, dtype=torch.float64, requires_grad=True)
    for alpha in (0.5, 1.0, 2.0, math.inf):
        logits.grad = None
        arimoto_conditional_entropy(logits.softmax(1), alpha).backward()
        assert torch.isfinite(logits.grad).all() and logits.grad.abs().sum() > 0


@pytest.mark.parametrize("alpha", [0.0, -1.0, float("nan")])
def test_rejects_non_positive_alpha(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha must be > 0"):
        renyi_entropy(PRIOR, alpha)
