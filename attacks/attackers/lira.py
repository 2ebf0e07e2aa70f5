"""Offline LiRA with a fixed variance (Carlini et al., S&P 2022).

Signal: φ = log(p_y / (1 − p_y)), the logit-scaled confidence of the true label. Reference models
trained without x give φ_out(x) ~ N(μ_out(x), σ²): μ_out per sample, one global σ pooled over all
samples (with few references a per-sample variance is too noisy). The test is one-sided: x looks
like a member when φ lies far in the upper tail of the out distribution, Λ = Φ((φ − μ_out)/σ).
The score is the standardised (φ − μ_out)/σ itself, a monotone function of Λ with the same ROC,
which does not round to 1 for confident members (higher = member).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from attacks.attackers.membership import logit_confidence
from attacks.attackers.reference_attack import ReferenceSettings, reference_settings, scores_result, view
from attacks.base import AttackResult, MembershipTarget
from attacks.spec import AttackerSpec, Need
from core.config import MembershipAttacks


def global_sigma(refs_phi: np.ndarray) -> float:
    """One σ for all samples: pooled within-sample deviation of [K, N] reference φ (all of them when K = 1)."""
    refs_phi = np.asarray(refs_phi, float)
    k, n = refs_phi.shape
    if k == 1:
        return float(refs_phi.std())
    return float(np.sqrt(((refs_phi - refs_phi.mean(0)) ** 2).sum() / (n * (k - 1))))


def lira_scores(target_phi: np.ndarray, refs_phi: np.ndarray, sigma: float) -> np.ndarray:
    """(φ − μ_out)/σ per sample from the target's φ [N] and the references' φ [K, N]."""
    return (np.asarray(target_phi, float) - np.asarray(refs_phi, float).mean(0)) / max(sigma, 1e-12)


@dataclass(frozen=True)
class LiraAttacker:
    """Offline fixed-variance LiRA against one network; ``reference`` of the target supplies the population."""

    name: str = "lira"
    settings: ReferenceSettings = field(default_factory=ReferenceSettings)

    def run_on_target(self, target: MembershipTarget) -> AttackResult:
        """Score the target's members and non-members; metrics named ``<name>/<target>``."""
        v = view(target, self.settings)
        members = [logit_confidence(logits, v.member_y).numpy() for logits in v.member]
        nonmembers = [logit_confidence(logits, v.nonmember_y).numpy() for logits in v.nonmember]
        # σ from every audited sample's reference φ: none of them was in any reference's training set.
        sigma = global_sigma(np.concatenate([members[1], nonmembers[1]], axis=1))
        result = scores_result(f"{self.name}/{target.name}", lira_scores(members[0], members[1], sigma),
                               lira_scores(nonmembers[0], nonmembers[1], sigma), self.settings, "LiRA")
        return replace(result, metrics={**result.metrics, "sigma": sigma, "references": float(self.settings.references)})


SPECS = (
    AttackerSpec("lira",
                 lambda config, figures: LiraAttacker(settings=reference_settings(MembershipAttacks.of(config), figures)),
                 frozenset({Need.TARGETS, Need.REFERENCE}), primary_metric="auc",
                 summary="offline fixed-variance LiRA with reference models trained on a population"),
)
