"""Utility as a data user sees it: a digit classifier trained afresh on the release, and one trained on raw images.

The image games' in-game utility nets co-adapt with the mechanism and can read an encoding no one else can; these two
cannot, so the image fronts' utility axis is the fresh one.
Both are the tuned, early-stopped family every side fits (core/classifier.py), with U as the label.
"""
from __future__ import annotations

import torch

from core.classifier import TunedClassifier, raw_data_classifier, scored_accuracy
from core.config import AttackBudget
from core.data import Split


def data_user_utility(released_train: torch.Tensor, released_test: torch.Tensor, train: Split, test: Split,
                      u_classes: int, budget: AttackBudget) -> dict[str, float]:
    """``utility/fresh_accuracy`` (fitted on the released training split, early-stopped on a validation part of it,
    scored on the released test split) and ``utility/fixed_accuracy`` (fitted on the raw training images, stored by
    their content like the farm's ``deep_raw``, applied unchanged to the released test split), with their intervals."""
    fresh = TunedClassifier(budget).fit(released_train, train.u, u_classes)
    fixed = raw_data_classifier(budget).fit(train.x, train.u, u_classes)
    return {f"utility/{kind}_accuracy{suffix}": scored[f"accuracy{suffix}"]
            for kind, scored in (("fresh", scored_accuracy(fresh, released_test, test.u, u_classes)),
                                 ("fixed", scored_accuracy(fixed, released_test, test.u, u_classes)))
            for suffix in ("", "/ci_low", "/ci_high")}
