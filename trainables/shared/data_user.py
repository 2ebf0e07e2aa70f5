"""Utility as a data user sees it: a digit classifier trained afresh on the release, and one trained on raw images.

The image games' in-game utility nets co-adapt with the mechanism and can read an encoding no one else can; these two
cannot, so the image fronts' utility axis is the fresh one.
Both are the farm's tuned, early-stopped CNN family (attacks/attackers/deep.py) with U as the label.
"""
from __future__ import annotations

import torch

from attacks.attackers.deep import DeepAttacker, RawTrainedDeepAttacker
from attacks.base import AttackInput
from core.config import AttackBudget
from core.data import Split


def data_user_utility(released_train: torch.Tensor, released_test: torch.Tensor, train: Split, test: Split,
                      u_classes: int, budget: AttackBudget) -> dict[str, float]:
    """``utility/fresh_accuracy`` (fitted on the released training split, early-stopped on a validation part of it,
    scored on the released test split) and ``utility/fixed_accuracy`` (fitted on the raw training images, cached by
    their content like the farm's ``deep_raw``, applied unchanged to the released test split), with their intervals."""
    data = AttackInput(released_train, train.u, released_test, test.u, num_classes=u_classes, raw_train_x=train.x)
    fresh = DeepAttacker(budget, name="fresh_utility").run(data)
    fixed = RawTrainedDeepAttacker(budget, name="fixed_utility").run(data)
    return {f"utility/{kind}_accuracy{suffix}": result.metrics[f"accuracy{suffix}"]
            for kind, result in (("fresh", fresh), ("fixed", fixed)) for suffix in ("", "/ci_low", "/ci_high")}
