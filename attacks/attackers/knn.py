"""k-nearest-neighbours attacker: S of a released test sample from the released training samples nearest to it.

A learning-free check beside the tuned networks: no training run can stop early or fail to converge. Features are
the flattened released sample, standardised with the training part's statistics; votes are weighted by inverse
class frequency (the vote that maximises balanced accuracy); k is chosen on a validation split of the released
training split, and only that k is scored once on the test split (docs/attacks.md#knn).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.nn import functional as F

from attacks.base import AttackInput, AttackResult
from attacks.spec import AttackerSpec, Need
from core.metrics import accuracy_metrics, balanced_accuracy
from core.nets import Standardized
from core.training import validation_split


def knn_predict(train_x: torch.Tensor, train_s: torch.Tensor, query_x: torch.Tensor, num_classes: int,
                ks: tuple[int, ...], chunk: int = 1024) -> dict[int, torch.Tensor]:
    """Class-balanced k-NN predictions of ``query_x`` [M, d] for every k in ``ks`` (labels [N] or per step [N, T])."""
    weight = 1.0 / torch.bincount(train_s.flatten(), minlength=num_classes).clamp_min(1).double()
    votes = F.one_hot(train_s, num_classes).double() * weight  # [N, (T,) C]
    k_max = min(max(ks), len(train_x))
    preds: dict[int, list[torch.Tensor]] = {k: [] for k in ks}
    for start in range(0, len(query_x), chunk):
        nearest = torch.cdist(query_x[start:start + chunk], train_x).topk(k_max, largest=False).indices  # by distance
        running = votes[nearest].cumsum(1)  # [m, k_max, (T,) C]: the vote of the first j+1 neighbours at j
        for k in ks:
            preds[k].append(running[:, min(k, k_max) - 1].argmax(-1))
    return {k: torch.cat(p) for k, p in preds.items()}


@dataclass(frozen=True)
class KnnAttacker:
    """k-NN on released samples; k from ``ks`` chosen on a validation split (ties: the smaller k)."""

    name: str = "knn"
    ks: tuple[int, ...] = (1, 3, 5, 9, 15, 25, 45)
    val_fraction: float = 0.2
    seed: int = 0

    def __post_init__(self) -> None:
        """Reject an empty or non-positive k grid."""
        if not self.ks or min(self.ks) < 1:
            raise ValueError(f"knn attacker needs k values >= 1 (got {self.ks})")

    def run(self, data: AttackInput) -> AttackResult:
        """Choose k on validation, then classify the released test split from the whole released training split."""
        x = data.train_x.flatten(1).float()
        fit_idx, val_idx = (i.to(x.device) for i in validation_split(len(x), self.val_fraction, self.seed))
        mean, std = Standardized.statistics(x[fit_idx])
        val_preds = knn_predict((x[fit_idx] - mean) / std, data.train_s[fit_idx], (x[val_idx] - mean) / std,
                                data.num_classes, self.ks)
        val_scores = {k: balanced_accuracy(p.flatten(), data.train_s[val_idx].flatten(), data.num_classes)
                      for k, p in val_preds.items()}
        k = max(sorted(val_scores), key=lambda c: val_scores[c])
        mean, std = Standardized.statistics(x)
        test = (data.test_x.flatten(1).float() - mean) / std
        pred = knn_predict((x - mean) / std, data.train_s, test, data.num_classes, (k,))[k]
        return AttackResult(self.name, accuracy_metrics(pred, data.test_s, data.num_classes)
                            | {"k": float(k), "val_accuracy": val_scores[k]})


SPECS = (
    AttackerSpec("knn", lambda config, figures: KnnAttacker(seed=config.seed), frozenset({Need.RELEASED}),
                 summary="class-balanced k nearest released training samples, k chosen on validation"),
)
