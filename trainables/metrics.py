"""Evaluation metrics shared by trainables and attackers."""
from __future__ import annotations

import torch


def balanced_accuracy(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> float:
    """Mean per-class recall over the classes present in ``target`` (chance = 1/#classes)."""
    counts = torch.bincount(target, minlength=num_classes).double()
    hits = torch.bincount(target[pred == target], minlength=num_classes).double()
    present = counts > 0
    return float((hits[present] / counts[present]).mean())


def fairness_gaps(pred: torch.Tensor, target: torch.Tensor, group: torch.Tensor, num_classes: int) -> dict[str, float]:
    """ΔDemP and ΔEO of predictions between two groups (0 and 1), one-vs-rest over the predicted class c.

    demp_gap = max_c |P(ŷ=c | g=0) − P(ŷ=c | g=1)|; eo_gap = max_{y, c} |P(ŷ=c | y, g=0) − P(ŷ=c | y, g=1)|.
    For two classes both reduce to the usual definitions on ŷ = 1. Labels y absent from a group are skipped.
    """
    onehot = torch.nn.functional.one_hot(pred.long(), num_classes).double()

    def rates(mask: torch.Tensor) -> torch.Tensor:
        return onehot[mask].mean(0)

    demp = float((rates(group == 0) - rates(group == 1)).abs().max())
    eo = 0.0
    for y in range(num_classes):
        a, b = (target == y) & (group == 0), (target == y) & (group == 1)
        if a.any() and b.any():
            eo = max(eo, float((rates(a) - rates(b)).abs().max()))
    return {"demp_gap": demp, "eo_gap": eo}
