"""An empirical ε lower bound from one training run (docs/membership.md#the-empirical-ε-of-dp-sgd).

Steinke, Nasr and Jagielski, "Privacy auditing with one (1) training run" (NeurIPS 2023), in our words. The auditor
draws m canaries, includes each one in the training set independently with probability ½ (S_i ∈ {in, out}), trains
once, and guesses from the trained model: "in" for some canaries, "out" for others, abstaining on the rest. Let r be
the number of guesses, fixed before training, and W the number of correct ones. If training is (ε, δ)-DP with respect
to adding or removing one canary, then for every v (their Theorem 3.1)

    P[W ≥ v] ≤ P[B ≥ v] + 2·m·δ·α,   α = max_{i = 1..v} P[v − i ≤ B < v] / i,   B ~ Binomial(r, e^ε / (1 + e^ε)):

with pure DP the count of correct guesses is no better than r coin flips that each land right with probability
e^ε / (1 + e^ε), and δ adds at most the 2·m·δ·α term. The right side is the p-value of the hypothesis "training is
(ε, δ)-DP" after observing v correct guesses. The **lower bound** is the largest ε whose p-value is at most β
(``BETA`` = 0.05): with probability at least 1 − β over the canaries' inclusion and training, the true ε is at least
that large, so a bound above the accountant's ε (at the same δ) refutes the accountant at confidence 1 − β. Nothing
is rejected (the bound is 0) when even ε = 0 leaves v correct guesses more likely than β.

:func:`epsilon_lower` finds that ε by bisection on the p-value (which grows with ε), as the paper's Algorithm 2 does;
:func:`guess` makes the paper's guesses from scores: "in" for the k+ highest, "out" for the k− lowest.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

BETA = 0.05  # 1 − confidence: the bound holds with probability ≥ 95 %
_TOLERANCE = 1e-6  # bisection's width in ε


def p_value(epsilon: float, delta: float, m: int, r: int, v: int) -> float:
    """Upper bound on P[≥ v correct of r guesses] on m canaries when training is (ε, δ)-DP (Theorem 3.1)."""
    if not 0 <= v <= r <= m:
        raise ValueError(f"need 0 <= correct ({v}) <= guesses ({r}) <= canaries ({m})")
    q = special.expit(epsilon)
    tail = float(stats.binom.sf(v - 1, r, q))  # P[B ≥ v]
    if delta == 0 or v == 0:
        return tail
    i = np.arange(1, v + 1)
    alpha = float(np.max((stats.binom.sf(v - i - 1, r, q) - tail) / i))  # P[v − i ≤ B < v] / i
    return min(1.0, tail + 2 * m * delta * alpha)


def epsilon_lower(m: int, r: int, v: int, delta: float, beta: float = BETA) -> float:
    """The largest ε whose (ε, δ)-DP claim v correct of r guesses on m canaries rejects at level β (0: none).

    Bisection between 0 and the first power of two whose p-value exceeds β; the result is within 1e-6 below the
    boundary, so it never overstates the bound.
    """
    if not 0 < beta < 1 or not 0 <= delta < 1:
        raise ValueError(f"need 0 < beta < 1 and 0 <= delta < 1 (got beta={beta}, delta={delta})")
    if p_value(0.0, delta, m, r, v) > beta:
        return 0.0
    low, high = 0.0, 1.0
    while p_value(high, delta, m, r, v) <= beta:
        low, high = high, 2 * high
        if high > 1e4:  # v = r with δ = 0 and β > 0 always ends; only absurd inputs get here
            return math.inf
    while high - low > _TOLERANCE:
        mid = (low + high) / 2
        low, high = (mid, high) if p_value(mid, delta, m, r, v) <= beta else (low, mid)
    return low


@dataclass(frozen=True)
class OneRunAudit:
    """One audit: m canaries, r guesses, v correct, and the ε lower bound at δ with confidence 1 − β."""

    canaries: int
    guesses: int
    correct: int
    delta: float
    beta: float = BETA

    @property
    def epsilon(self) -> float:
        """The ε lower bound (:func:`epsilon_lower`)."""
        return epsilon_lower(self.canaries, self.guesses, self.correct, self.delta, self.beta)

    def logged(self, prefix: str = "leakage/dp/") -> dict[str, float]:
        """``epsilon_lower`` and the counts it comes from, under ``prefix``."""
        return {f"{prefix}epsilon_lower": self.epsilon, f"{prefix}audit_canaries": float(self.canaries),
                f"{prefix}audit_guesses": float(self.guesses), f"{prefix}audit_correct": float(self.correct)}


def guess(scores: np.ndarray, included: np.ndarray, k_in: int, k_out: int) -> tuple[int, int]:
    """Guess "in" for the ``k_in`` highest scores and "out" for the ``k_out`` lowest; (guesses r, correct v).

    Ties keep the canaries' order (a stable sort), which does not depend on who is in. k_in and k_out must be chosen
    before seeing the scores (the bound holds for guesses fixed in number).
    """
    scores, included = np.asarray(scores, dtype=float), np.asarray(included, dtype=bool)
    if scores.shape != included.shape or scores.ndim != 1:
        raise ValueError(f"scores {scores.shape} and inclusions {included.shape} must be one vector each")
    if k_in < 0 or k_out < 0 or k_in + k_out > len(scores):
        raise ValueError(f"need k_in, k_out >= 0 and k_in + k_out <= {len(scores)} canaries (got {k_in}, {k_out})")
    order = np.argsort(-scores, kind="stable")
    correct = int(included[order[:k_in]].sum()) + int((~included[order[len(order) - k_out:]]).sum())
    return k_in + k_out, correct
