"""Arithmetic (thickness-computing) attacker for AMNIST (docs/attacks.md#thickness).

It recomputes the thickness label from the released image with the labeler that made the labels,
using the public digit. Released images are sigmoid outputs, so almost no pixel is exactly zero:
the binarisation threshold is the one free parameter, chosen on the released training split.
The labeler's "normal" (neither thin nor thick) has no AMNIST counterpart; it is mapped to a random
thin/thick, to thin and to thick; the threshold and the mapping are chosen together on the released
training split, and only that choice is scored on the test split as ``accuracy`` (with its 95 % interval).
The three mappings' test accuracies are logged beside it as diagnostics, never as the score.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from attacks.base import AttackInput, AttackResult
from attacks.spec import AttackerSpec, Need
from core.data.amnist_labels import DEFAULT_NONZERO_THRESHOLD, NORMAL, THICK, THIN, thickness_labels
from core.metrics import accuracy_metrics, balanced_accuracy

# Half a grey level (what the labeler uses on raw images), then a grid over the [0, 1] pixel scale.
DEFAULT_THRESHOLDS: tuple[float, ...] = (DEFAULT_NONZERO_THRESHOLD, *(round(0.05 * k, 2) for k in range(1, 19)))


def map_normal(labels: torch.Tensor, generator: torch.Generator) -> dict[str, torch.Tensor]:
    """Binary thin(0)/thick(1) predictions from THIN/NORMAL/THICK labels, "normal" sent three ways."""
    coin = torch.randint(0, 2, labels.shape, generator=generator, device=labels.device)
    return {
        "random": torch.where(labels == THIN, 0, torch.where(labels == THICK, 1, coin)),
        "thin": (labels == THICK).long(),
        "thick": (labels != THIN).long(),
    }


@dataclass(frozen=True)
class ThicknessAttacker:
    """Labeler-based attacker: threshold and normal mapping fitted on released train images, scored on released test images."""

    name: str = "thickness"
    seed: int = 0
    thresholds: tuple[float, ...] = DEFAULT_THRESHOLDS

    def __post_init__(self) -> None:
        """Reject an empty threshold grid, which would leave nothing to fit."""
        if not self.thresholds:
            raise ValueError("ThicknessAttacker needs at least one candidate threshold")

    def fit(self, data: AttackInput) -> tuple[float, str]:
        """The (threshold, normal mapping) maximising training balanced accuracy (ties → smallest threshold, "thin").

        The random mapping's expected score is the mean of the other two, so it never wins in
        expectation and is left out of the fit to keep the choice deterministic.
        """
        if data.train_u is None:
            raise ValueError("thickness attacker needs the digits: set train_u and test_u")
        best, best_score = (0.0, "thin"), -1.0
        for tau in sorted(self.thresholds):
            labels = thickness_labels(data.train_x, data.train_u, nonzero_threshold=tau)
            for way, pred in (("thin", (labels == THICK).long()), ("thick", (labels != THIN).long())):
                score = balanced_accuracy(pred, data.train_s, 2)
                if score > best_score:
                    best, best_score = (float(tau), way), score
        return best

    def run(self, data: AttackInput) -> AttackResult:
        """Fit threshold and mapping on the training split, relabel the test split, score the chosen mapping once."""
        for x in (data.train_x, data.test_x):
            if tuple(x.shape[-2:]) != (28, 28) or x.dim() not in (3, 4) or (x.dim() == 4 and x.shape[1] != 1):
                raise ValueError("thickness attacker applies to AMNIST only: it reads 1×28×28 digits, "
                                 f"got inputs {list(x.shape)}")
        if data.train_u is None or data.test_u is None:
            raise ValueError("thickness attacker needs the digits: set train_u and test_u")
        if data.num_classes != 2:
            raise ValueError(f"thickness attacker predicts thin/thick, so num_classes must be 2, got {data.num_classes}")
        tau, chosen = self.fit(data)
        labels = thickness_labels(data.test_x, data.test_u, nonzero_threshold=tau)
        generator = torch.Generator(device=labels.device).manual_seed(self.seed)
        ways = map_normal(labels, generator)
        metrics = accuracy_metrics(ways[chosen], data.test_s, 2)
        metrics |= {f"accuracy_{way}": balanced_accuracy(pred, data.test_s, 2) for way, pred in ways.items()}
        metrics["threshold"] = tau
        metrics["train_records"] = float(len(data.train_x))
        metrics["normal_to_thick"] = float(chosen == "thick")
        metrics["normal_share"] = float((labels == NORMAL).float().mean())
        return AttackResult(self.name, metrics)


SPECS = (
    AttackerSpec("thickness", lambda config, figures: ThicknessAttacker(seed=config.seed),
                 frozenset({Need.RELEASED, Need.UTILITY, Need.AMNIST_DIGITS}),
                 summary="AMNIST's thickness labeler rerun on released images with the public digit"),
)
