"""What a release of ECO windows scores: normalised errors, the per-hour α-MI against the hour's prior, accuracy
within an hour, and the floors of position and hour."""
from __future__ import annotations

import torch

from attacks.attackers.side_info import plug_in_bayes
from core.data.eco_files import HOURS
from core.metric_names import attack_metric
from core.metrics import balanced_accuracy
from trainables.eco_releaser.windows import EcoSplit
from trainables.shared.alpha_mi import alpha_mutual_information, renyi_entropy


def ne_energy(y: torch.Tensor, x: torch.Tensor, norm: tuple[float, float]) -> torch.Tensor:
    """Σ(X − Y)² / ΣX² in watts over the whole batch, from normalised sequences (releasing all zeros scores 1)."""
    mean, std = norm
    xw, yw = x * std + mean, y * std + mean
    return ((yw - xw) ** 2).sum() / (xw ** 2).sum()


def ne_variance(y: torch.Tensor, x: torch.Tensor, norm: tuple[float, float]) -> torch.Tensor:
    """Σ(X − Y)² / Σ(X − X̄)² with X̄ the batch's mean power (releasing that constant mean scores 1)."""
    mean, std = norm
    xw, yw = x * std + mean, y * std + mean
    return ((yw - xw) ** 2).sum() / ((xw - xw.mean()) ** 2).sum()


def hourly_prior(occupancy: torch.Tensor, hour: torch.Tensor) -> torch.Tensor:
    """P(S = s | hour of day) from labels and their hours [N, L]: [24, 2] (an hour never seen gets 1/2, 1/2)."""
    counts = torch.bincount(hour.flatten(), minlength=HOURS).double()
    occupied = torch.bincount(hour.flatten(), weights=occupancy.flatten().double(), minlength=HOURS)
    rate = torch.where(counts > 0, occupied / counts.clamp_min(1), torch.full_like(counts, 0.5)).float()
    return torch.stack([1 - rate, rate], 1)


def hourly_alpha_mi(logits: torch.Tensor, hour: torch.Tensor, prior: torch.Tensor, alpha: float) -> torch.Tensor:
    """Σ_h Î_α(S_h;Y) / Σ_h H_α(S_h) from the adversary's logits [N, 2, L], each step's hour of day [N, L] and the
    per-hour prior [24, 2].

    The hour of a label is public (a reading's timestamp), so leakage is measured against each hour's own
    prior, over all the steps at that hour: a release that reveals only the hour scores 0. Each hour's
    estimate is clamped at 0 (true α-MI is never negative): a releaser is rewarded for leaving the adversary
    uninformed, not for making it confidently wrong, which would only last until the adversary's next step.
    """
    post = logits.softmax(1).transpose(1, 2)  # [N, L, 2]
    mi, entropy = post.new_zeros(()), post.new_zeros(())
    for h in torch.unique(hour).tolist():
        mi = mi + alpha_mutual_information(post[hour == h], prior[h], alpha).clamp_min(0)
        entropy = entropy + renyi_entropy(prior[h], alpha)
    return mi / entropy.clamp_min(1e-12)


def within_hour_accuracy(pred: torch.Tensor, target: torch.Tensor, hour: torch.Tensor) -> float:
    """The mean over hours of day of the balanced accuracy among the labels at that hour (chance 1/2 at every hour,
    whatever the hour's prior)."""
    hours = torch.unique(hour).tolist()
    return sum(balanced_accuracy(pred[hour == h], target[hour == h], 2) for h in hours) / len(hours)


def position_floors(train: EcoSplit, test: EcoSplit) -> dict[str, float]:
    """Attackers that see no consumption: the plug-in Bayes rule on the step's position in its window
    (``position_only``) and on its hour of day (``hour_only``), each fitted on the training windows, pooled and within
    hours."""
    position = torch.arange(train.occupancy.shape[1], device=train.hour.device)
    metrics = {}
    for name, train_key, test_key in (("position_only", position.expand_as(train.hour), position.expand_as(test.hour)),
                                      ("hour_only", train.hour, test.hour)):
        pred = plug_in_bayes(train_key.reshape(-1, 1), train.occupancy.flatten(), test_key.reshape(-1, 1), 2)
        metrics[attack_metric(name)] = balanced_accuracy(pred, test.occupancy.flatten(), 2)
        metrics[attack_metric(name, "accuracy_within_hour")] = within_hour_accuracy(pred, test.occupancy.flatten(),
                                                                               test.hour.flatten())
    return metrics
