"""Evaluation metrics shared by trainables and attackers."""
from __future__ import annotations

import torch


def balanced_accuracy(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> float:
    """Mean per-class recall over the classes present in ``target`` (chance = 1/#classes)."""
    counts = torch.bincount(target, minlength=num_classes).double()
    hits = torch.bincount(target[pred == target], minlength=num_classes).double()
    present = counts > 0
    return float((hits[present] / counts[present]).mean())
