"""RMIA (Zarifzadeh et al., ICML 2024), offline: a pairwise likelihood ratio against population samples.

For a sample x and population samples z (never members), with p(·|θ) the attacked network's
probability of the true label and p(·) its average over reference models trained without x:
LR(x, z) = [p(x|θ) / p(x)] / [p(z|θ) / p(z)], and score(x) = share of z with LR(x, z) >= γ
(higher = member). Offline, the references never saw x, so p(x) is corrected towards what an
"in" model would give: p(x) ≈ ½((1 + a)·p_out(x) + (1 − a)), a in [0, 1] (the same for z).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import torch

from attacks.attackers.reference_attack import (
    DEFAULTS,
    ReferenceSettings,
    reference_settings,
    scores_result,
    true_class_probability,
    view,
)
from attacks.base import AttackResult, MembershipTarget
from attacks.spec import AttackerSpec, Need
from core.config import MembershipAttacks, TrialConfig


def rmia_scores(target_x: np.ndarray, refs_x: np.ndarray, target_z: np.ndarray, refs_z: np.ndarray,
                offline_a: float = DEFAULTS.rmia_offline_a, gamma: float = 1.0) -> np.ndarray:
    """Scores of samples x from p(x|θ) [N], reference p(x|θ_k) [K, N], and the same for z ([M], [K, M])."""
    if not 0 <= offline_a <= 1:
        raise ValueError(f"offline_a must lie in [0, 1] (got {offline_a})")
    if gamma <= 0:
        raise ValueError(f"gamma must be > 0 (got {gamma})")

    def ratio(target: np.ndarray, refs: np.ndarray) -> np.ndarray:
        p_out = np.asarray(refs, float).mean(0)
        return np.asarray(target, float) / np.maximum(0.5 * ((1 + offline_a) * p_out + (1 - offline_a)), 1e-300)

    ratio_x, ratio_z = ratio(target_x, refs_x), np.sort(ratio(target_z, refs_z))
    # LR >= γ  <=>  ratio_z <= ratio_x / γ (every ratio_z > 0): count with one sorted search.
    return np.searchsorted(ratio_z, ratio_x / gamma, side="right") / len(ratio_z)


@dataclass(frozen=True)
class RmiaAttacker:
    """Offline RMIA against one network; ``reference`` of the target supplies the population."""

    name: str = "rmia"
    offline_a: float = DEFAULTS.rmia_offline_a
    gamma: float = 1.0
    settings: ReferenceSettings = field(default_factory=ReferenceSettings)

    def run_on_target(self, target: MembershipTarget) -> AttackResult:
        """Score the target's members and non-members; metrics named ``<name>/<target>``."""
        v = view(target, self.settings)

        def probabilities(part: tuple[torch.Tensor, torch.Tensor], y: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
            return true_class_probability(part[0], y).numpy(), true_class_probability(part[1], y).numpy()

        z = probabilities(v.z, v.z_y)
        members = rmia_scores(*probabilities(v.member, v.member_y), *z, self.offline_a, self.gamma)
        nonmembers = rmia_scores(*probabilities(v.nonmember, v.nonmember_y), *z, self.offline_a, self.gamma)
        result = scores_result(f"{self.name}/{target.name}", members, nonmembers, self.settings, "RMIA")
        return replace(result, metrics={**result.metrics, "references": float(self.settings.references),
                                        "population_z": float(len(v.z_y))})


def _build(config: TrialConfig, figures: bool) -> RmiaAttacker:
    settings = MembershipAttacks.of(config)
    return RmiaAttacker(offline_a=settings.rmia_offline_a, settings=reference_settings(settings, figures))


SPECS = (
    AttackerSpec("rmia", _build, frozenset({Need.TARGETS, Need.REFERENCE}), primary_metric="auc",
                 summary="offline RMIA with reference models trained on a population"),
)
