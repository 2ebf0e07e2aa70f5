"""Deep attacker: the adversary's architecture retrained from scratch on released data (docs/attacks.md#deep)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from attacks.base import AttackInput, AttackResult
from trainables.metrics import balanced_accuracy
from trainables.nets import SmallCNN
from trainables.training import evaluate, fit_classifier, inverse_frequency_weights, predict_logits


def label_accuracies(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> dict[str, float]:
    """Balanced accuracy over all labels; for per-step labels [N, T] also ``accuracy_within_step``.

    ``accuracy_within_step`` is the mean over steps of each step's own balanced accuracy: chance is
    1/classes at every step, whatever the step's prior (e.g. occupancy by hour of the day).
    """
    metrics = {"accuracy": balanced_accuracy(pred.flatten(), target.flatten(), num_classes)}
    if target.dim() == 2:
        steps = [balanced_accuracy(pred[:, t], target[:, t], num_classes) for t in range(target.shape[1])]
        metrics["accuracy_within_step"] = sum(steps) / len(steps)
    return metrics


@dataclass(frozen=True)
class DeepAttacker:
    """Fresh network fitted on the released training split, scored by balanced accuracy on the test split.

    ``model`` builds the network from the number of classes (default: the AMNIST SmallCNN). Per-step
    labels [N, T] (e.g. hourly occupancy) need a network with logits [N, classes, T].
    """

    epochs: int = 3
    batch_size: int = 128
    lr: float = 1e-3
    seed: int = 0
    name: str = "deep"
    model: Callable[[int], nn.Module] = SmallCNN

    def run(self, data: AttackInput) -> AttackResult:
        """Train from scratch and score; class weights make the fit target balanced accuracy."""
        gen = torch.Generator(device=data.train_x.device).manual_seed(self.seed)
        torch.manual_seed(self.seed)
        model = self.model(data.num_classes).to(data.train_x.device)
        fit_classifier(
            model, data.train_x, data.train_s,
            epochs=self.epochs, batch_size=self.batch_size, lr=self.lr, generator=gen,
            class_weights=inverse_frequency_weights(data.train_s.flatten(), data.num_classes),
        )
        pred = predict_logits(model, data.test_x).argmax(1)
        return AttackResult(self.name, label_accuracies(pred, data.test_s, data.num_classes))


_RAW_MODELS: dict[tuple, SmallCNN] = {}


@dataclass(frozen=True)
class RawTrainedDeepAttacker:
    """Non-retrained attacker: a SmallCNN trained on raw (unreleased) images, applied unchanged to the release.

    Every checkpoint of a sweep shares the same raw training data, so the fitted model is cached
    per worker process, keyed by a fingerprint of the data and the training settings.
    """

    epochs: int = 3
    batch_size: int = 128
    lr: float = 1e-3
    seed: int = 0
    name: str = "deep_raw"

    def _model(self, x: torch.Tensor, s: torch.Tensor, num_classes: int) -> SmallCNN:
        key = (tuple(x.shape), float(x.sum()), float(s.sum()), str(x.device), num_classes,
               self.epochs, self.batch_size, self.lr, self.seed)
        if key not in _RAW_MODELS:
            gen = torch.Generator(device=x.device).manual_seed(self.seed)
            torch.manual_seed(self.seed)
            model = SmallCNN(num_classes).to(x.device)
            fit_classifier(model, x, s, epochs=self.epochs, batch_size=self.batch_size, lr=self.lr, generator=gen,
                           class_weights=inverse_frequency_weights(s, num_classes))
            _RAW_MODELS.clear()  # one data set per sweep: keep memory flat
            _RAW_MODELS[key] = model
        return _RAW_MODELS[key]

    def run(self, data: AttackInput) -> AttackResult:
        """Fit (or reuse) on raw training images, score on the released test split."""
        if data.raw_train_x is None:
            raise ValueError("deep_raw attacker needs the raw training inputs (AttackInput.raw_train_x)")
        model = self._model(data.raw_train_x, data.train_s, data.num_classes)
        return AttackResult(self.name, {"accuracy": evaluate(model, data.test_x, data.test_s, data.num_classes)})
