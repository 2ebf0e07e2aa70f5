"""Arimoto α-mutual information and the Rényi entropy that normalises it (docs/estimators.md#α-mutual-information).

The estimator plugs an adversary's posteriors P(s|y) into the Arimoto conditional entropy and
replaces E_Y by a (weighted) batch mean; α = 1 and α = ∞ use their exact limits.
"""
from __future__ import annotations

import math

import torch

_EPS = 1e-30  # tiny enough that p^α of a clamped zero is negligible even for α = 0.1


def _check_alpha(alpha: float) -> None:
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0 (got {alpha})")


def _expect(values: torch.Tensor, weights: torch.Tensor | None) -> torch.Tensor:
    """E_Y[values]: the batch mean, or a weighted sum when the weights P(y) are given."""
    if weights is None:
        return values.mean()
    return (values * weights).sum() / weights.sum()


def renyi_entropy(prior: torch.Tensor, alpha: float) -> torch.Tensor:
    """H_α(S) = 1/(1−α) log Σ_s P(s)^α in nats; Shannon at α = 1, min-entropy at α = ∞."""
    _check_alpha(alpha)
    p = prior.clamp_min(_EPS)
    if alpha == 1:
        return -(prior * p.log()).sum()
    if math.isinf(alpha):
        return -prior.max().clamp_min(_EPS).log()
    return torch.logsumexp(alpha * p.log(), dim=-1) / (1 - alpha)


def arimoto_conditional_entropy(
    posteriors: torch.Tensor, alpha: float, weights: torch.Tensor | None = None
) -> torch.Tensor:
    """H^A_α(S|Y) = α/(1−α) log E_Y[(Σ_s P(s|Y)^α)^{1/α}] with posteriors of shape [N, |S|]."""
    _check_alpha(alpha)
    p = posteriors.clamp_min(_EPS)
    if alpha == 1:
        return _expect(-(posteriors * p.log()).sum(dim=1), weights)
    if math.isinf(alpha):
        return -_expect(posteriors.max(dim=1).values, weights).clamp_min(_EPS).log()
    # (Σ_s p^α)^{1/α} computed in log space for stability at large α.
    norm = torch.exp(torch.logsumexp(alpha * p.log(), dim=1) / alpha)
    return alpha / (1 - alpha) * _expect(norm, weights).clamp_min(_EPS).log()


def alpha_mutual_information(
    posteriors: torch.Tensor,
    prior: torch.Tensor,
    alpha: float,
    weights: torch.Tensor | None = None,
) -> torch.Tensor:
    """Î_α(S;Y) = H_α(S) − H^A_α(S|Y): Shannon MI at α = 1, log(E[max P(s|Y)]/max P(s)) at α = ∞."""
    return renyi_entropy(prior, alpha) - arimoto_conditional_entropy(posteriors, alpha, weights)


def normalised_alpha_mi(posteriors: torch.Tensor, prior: torch.Tensor, alpha: float) -> torch.Tensor:
    """Î_α(S;Y) / H_α(S): the releaser's privacy term, comparable across α for a fixed λ."""
    return alpha_mutual_information(posteriors, prior, alpha) / renyi_entropy(prior, alpha).clamp_min(_EPS)


def leakage_alpha_mi(posteriors: torch.Tensor, alpha: float) -> torch.Tensor:
    """Î_α(S;Y) / H_α(S) as a leakage estimate, with P(s) taken as the batch-mean posterior E_Y[P(s|Y)].

    Posteriors and their mean form one valid joint law of (S, Y), and Arimoto's α-MI of a joint law is
    never negative, so this estimate lies in [0, 1]; it is 0 for posteriors that do not depend on Y.
    Against a fixed training prior instead, a miscalibrated adversary scores below 0 (uniform posteriors
    with an uneven prior), which reads as "less than no leakage". The training loss keeps the training
    prior (:func:`normalised_alpha_mi`): there the prior is a constant and the gradient is the game's.
    """
    prior = posteriors.mean(0)
    # clamp: only float rounding (≈1e-7) can take the exact value below 0
    return (alpha_mutual_information(posteriors, prior, alpha) / renyi_entropy(prior, alpha).clamp_min(_EPS)).clamp_min(0)
