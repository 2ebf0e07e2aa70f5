"""Deep attacker: the adversary's architecture retrained from scratch on released data (DESIGN.md §4)."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from trainables.nets import SmallCNN
from trainables.training import evaluate, fit_classifier, inverse_frequency_weights


@dataclass(frozen=True)
class AttackInput:
    """Released training and test splits with the attribute the attacker wants to infer."""

    train_x: torch.Tensor
    train_s: torch.Tensor
    test_x: torch.Tensor
    test_s: torch.Tensor
    num_classes: int


@dataclass(frozen=True)
class AttackResult:
    """An attacker's metrics, named as logged (``attack/<name>/<metric>``)."""

    name: str
    metrics: dict[str, float] = field(default_factory=dict)

    def logged(self) -> dict[str, float]:
        """Metrics under their shared MLflow names."""
        return {f"attack/{self.name}/{k}": v for k, v in self.metrics.items()}


@dataclass(frozen=True)
class DeepAttacker:
    """Fresh SmallCNN fitted on the released training split, scored by balanced accuracy on the test split."""

    epochs: int = 3
    batch_size: int = 128
    lr: float = 1e-3
    seed: int = 0
    name: str = "deep"

    def run(self, data: AttackInput) -> AttackResult:
        """Train from scratch and score; class weights make the fit target balanced accuracy."""
        gen = torch.Generator(device=data.train_x.device).manual_seed(self.seed)
        torch.manual_seed(self.seed)
        model = SmallCNN(data.num_classes).to(data.train_x.device)
        fit_classifier(
            model, data.train_x, data.train_s,
            epochs=self.epochs, batch_size=self.batch_size, lr=self.lr, generator=gen,
            class_weights=inverse_frequency_weights(data.train_s, data.num_classes),
        )
        return AttackResult(self.name, {"accuracy": evaluate(model, data.test_x, data.test_s, data.num_classes)})
