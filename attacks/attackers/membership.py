"""Membership inference: Yeom's loss-threshold adversary and exact ROC tools (docs/membership.md).

Scores follow one convention throughout: a higher score means "member". For a loss attack the
score is ``-loss``. Every score is float64 (low-FPR metrics read the extreme tail, where float32
ties the records of a confident network). Worker-side code: never imports ``platform.*``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from attacks.attackers.membership_stats import balanced_draw, membership_metrics, require_finite
from attacks.base import AttackResult, MembershipScores, MembershipTarget
from attacks.plots.roc_plot import roc_png
from attacks.spec import AttackerSpec, Need
from core.training import predict_logits


def logit_confidence(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """φ = log(p_y / (1 − p_y)) = z_y − logsumexp_{j≠y} z_j along the last axis, exact even where p_y rounds to 1."""
    labels = y.expand(*logits.shape[:-1]).unsqueeze(-1)
    true = logits.gather(-1, labels).squeeze(-1)
    others = logits.scatter(-1, labels, float("-inf")).logsumexp(-1)
    return true - others


def per_sample_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch_size: int = 1024) -> torch.Tensor:
    """Cross-entropy of each sample under ``model`` (eval mode, no grad, batched), in float64: the attack's signal.

    Computed as softplus(−φ) = log(1 + e^−φ) from the float64 logits (φ: :func:`logit_confidence`), which equals
    −log p_y and keeps the losses of a confident network apart: in float32, and even as log-softmax in float64,
    1 − p_y rounds away and near-zero losses tie (4.94e-7 and 5.53e-7 both become 4.77e-7 in float32).
    """
    logits = predict_logits(model, x, batch_size).double()
    return F.softplus(-logit_confidence(logits, y.to(logits.device)))


def roc_curve(member_scores: np.ndarray | torch.Tensor,
              nonmember_scores: np.ndarray | torch.Tensor) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact ROC (fpr, tpr, thresholds) of "member iff score >= threshold" over every distinct score.

    Thresholds run from +inf (nothing flagged, the point (0, 0)) down to the smallest score (all
    flagged, (1, 1)); tied scores move together, so ties give one diagonal step, not a staircase.
    """
    members = np.asarray(member_scores, dtype=float).ravel()
    nonmembers = np.asarray(nonmember_scores, dtype=float).ravel()
    scores = np.concatenate([members, nonmembers])
    is_member = np.concatenate([np.ones(members.size), np.zeros(nonmembers.size)])
    order = np.argsort(-scores, kind="stable")
    scores, is_member = scores[order], is_member[order]
    # Last index of each run of equal scores: the cumulative counts there are the counts at that threshold.
    last = np.flatnonzero(np.r_[np.diff(scores) != 0, True])
    tp = np.cumsum(is_member)[last]
    fp = (last + 1) - tp
    tpr = np.r_[0.0, tp / members.size]
    fpr = np.r_[0.0, fp / nonmembers.size]
    thresholds = np.r_[np.inf, scores[last]]
    return fpr, tpr, thresholds


def auc(fpr: np.ndarray, tpr: np.ndarray) -> float:
    """Area under the ROC curve by the trapezoid rule (ties count one half, as Mann-Whitney's U)."""
    fpr = np.asarray(fpr, dtype=float)
    tpr = np.asarray(tpr, dtype=float)
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))


@dataclass(frozen=True)
class YeomAttacker:
    """Yeom et al.'s threshold adversary: "member" when the per-sample loss is below τ (score = −loss).

    ``advantage`` is TPR − FPR at τ on a balanced member / non-member draw. On a balanced draw
    2·P(correct) − 1 = TPR − FPR exactly, and the sign is kept on purpose: a negative value means τ
    sits on the wrong side (members look *worse* than non-members), which an absolute value would
    hide as leakage. ``advantage_max`` is the best TPR − FPR over all thresholds (never below 0,
    since the ROC contains (0, 0)). Every metric carries a 95 % bootstrap interval.
    """

    name: str = "yeom"
    seed: int = 0
    max_samples: int | None = None
    figure: bool = True  # the ROC PNG costs more than the attack itself; the farm draws it once per trial
    n_boot: int = 500

    def run_on_losses(self, member_losses: np.ndarray | torch.Tensor, nonmember_losses: np.ndarray | torch.Tensor,
                      threshold: float | None = None, target: str = "") -> AttackResult:
        """Attack given per-sample losses; τ = ``threshold`` or the mean member (training) loss."""
        member_losses = require_finite(member_losses, target or self.name, "member losses")
        nonmember_losses = require_finite(nonmember_losses, target or self.name, "non-member losses")
        # τ from all members: the adversary is assumed to know the model's average training loss.
        tau = float(member_losses.mean()) if threshold is None else float(threshold)
        members, nonmembers = balanced_draw(member_losses, nonmember_losses, self.seed, self.max_samples)
        metrics = membership_metrics(-members, -nonmembers, seed=self.seed, n_boot=self.n_boot, threshold=-tau)
        for suffix in ("", "/ci_low", "/ci_high"):
            metrics[f"accuracy{suffix}"] = (1.0 + metrics[f"advantage{suffix}"]) / 2
        metrics.update({"threshold": tau, "n_per_class": float(len(members))})
        scores = MembershipScores(-member_losses, -nonmember_losses)
        if not self.figure:
            return AttackResult(self.name, metrics, scores=scores)
        fpr, tpr, _ = roc_curve(-members, -nonmembers)
        title = f"{self.name}: loss-threshold membership ROC (n = {len(members)} per class)"
        return AttackResult(self.name, metrics, {f"roc_{self.name}.png": roc_png(fpr, tpr, metrics["auc"], title)},
                            scores)

    def run_on_model(self, model: nn.Module, member_x: torch.Tensor, member_y: torch.Tensor,
                     nonmember_x: torch.Tensor, nonmember_y: torch.Tensor, target: str = "") -> AttackResult:
        """Attack a trained network: its per-sample losses on members (training data) vs non-members."""
        return self.run_on_losses(per_sample_loss(model, member_x, member_y),
                                  per_sample_loss(model, nonmember_x, nonmember_y), target=target)

    def run_on_target(self, target: MembershipTarget) -> AttackResult:
        """The farm's entry point: attack one network of a checkpoint (metrics named ``<name>/<target>``)."""
        attacker = replace(self, name=f"{self.name}/{target.name}")
        return attacker.run_on_model(target.model, target.member_x, target.member_y, target.nonmember_x,
                                     target.nonmember_y, target=target.name)


SPECS = (
    AttackerSpec("yeom", lambda config, figures: YeomAttacker(seed=config.seed, figure=figures),
                 frozenset({Need.TARGETS}), primary_metric="auc",
                 summary="loss threshold at the mean training loss, against every trained network"),
)
