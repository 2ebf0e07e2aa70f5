"""What RMIA and LiRA share: their settings, the reference models of a target, and scores to metrics."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from attacks.attackers.membership import roc_curve
from attacks.attackers.membership_stats import balanced_draw, membership_metrics, require_finite
from attacks.base import AttackResult, MembershipScores, MembershipTarget
from attacks.plots.roc_plot import roc_png
from core.config import MembershipAttacks
from core.reference_models import PopulationPlan, population_plan, reference_models
from core.training import predict_logits

DEFAULTS = MembershipAttacks()  # the trial config's defaults, for attackers built without a config


@dataclass(frozen=True)
class ReferenceSettings:
    """Reference-model attack settings: how many references, how many population samples z, seeds and output."""

    references: int = DEFAULTS.mia_references
    population_z: int = 2000
    seed: int = 0
    max_samples: int | None = None
    n_boot: int = 500
    figure: bool = False


def reference_settings(config: MembershipAttacks, figure: bool) -> ReferenceSettings:
    """Settings of the reference-model attackers from a trial config's ``mia_references`` and seed."""
    return ReferenceSettings(references=config.mia_references, seed=config.seed, figure=figure)


@dataclass(frozen=True)
class TargetView:
    """A target's checked logits on members, non-members and the population samples z, and its references' logits."""

    member: tuple[torch.Tensor, torch.Tensor]  # (target logits [N, C], reference logits [K, N, C])
    nonmember: tuple[torch.Tensor, torch.Tensor]
    z: tuple[torch.Tensor, torch.Tensor]
    member_y: torch.Tensor
    nonmember_y: torch.Tensor
    z_y: torch.Tensor


def _checked_logits(model: nn.Module, x: torch.Tensor, target: str, what: str) -> torch.Tensor:
    logits = predict_logits(model, x).double().cpu()
    require_finite(logits, target, what)
    return logits


def view(target: MembershipTarget, settings: ReferenceSettings) -> TargetView:
    """Train (or fetch) the target's reference models and query target and references on every sample."""
    ref = target.reference
    if ref is None:
        raise ValueError(f"membership target {target.name!r} has no population for reference models")
    train_size = ref.train_size or len(target.member_y)
    plan: PopulationPlan = population_plan(len(ref.y), train_size, settings.references, settings.population_z, settings.seed)
    refs = reference_models(ref.recipe, ref.inputs, ref.y, ref.cache_dir, plan, settings.seed)
    z_index = torch.as_tensor(plan.z, device=ref.queries.device)
    parts = {"member": target.member_x, "nonmember": target.nonmember_x, "z": ref.queries[z_index]}
    out = {}
    for part, x in parts.items():
        mine = _checked_logits(target.model, x, target.name, f"{part} logits")
        theirs = torch.stack([_checked_logits(m, x, target.name, f"reference {part} logits") for m in refs])
        out[part] = (mine, theirs)
    return TargetView(out["member"], out["nonmember"], out["z"], target.member_y.cpu(), target.nonmember_y.cpu(),
                      ref.y[z_index].cpu())


def true_class_probability(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """softmax(logits)[y] along the last axis, for [..., N, C] logits and [N] labels."""
    picked = logits.log_softmax(-1).gather(-1, y.expand(*logits.shape[:-1]).unsqueeze(-1)).squeeze(-1)
    return picked.exp()


def scores_result(name: str, members: np.ndarray, nonmembers: np.ndarray, settings: ReferenceSettings,
                  what: str) -> AttackResult:
    """Metrics (with intervals) of member / non-member scores on a balanced draw, the ROC picture if asked, and every
    record's score."""
    scores = MembershipScores(np.asarray(members, dtype=np.float64), np.asarray(nonmembers, dtype=np.float64))
    members, nonmembers = balanced_draw(scores.members, scores.nonmembers, settings.seed, settings.max_samples)
    metrics = membership_metrics(members, nonmembers, seed=settings.seed, n_boot=settings.n_boot)
    metrics["n_per_class"] = float(len(members))
    if not settings.figure:
        return AttackResult(name, metrics, scores=scores)
    fpr, tpr, _ = roc_curve(members, nonmembers)
    title = f"{name}: {what} membership ROC (n = {len(members)} per class)"
    return AttackResult(name, metrics, {f"roc_{name}.png": roc_png(fpr, tpr, metrics["auc"], title)}, scores)
