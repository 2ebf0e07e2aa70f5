"""Side-information attackers (docs/attacks.md#side_info): released data + SI, and SI alone as the floor.

SI is any float [N, d] (e.g. one-hot weekday and month for ECO). The SI-only floor is exact when
SI takes few distinct values: the plug-in Bayes rule for balanced accuracy, read off a count table.
Per-step labels S [N, T] (e.g. a day's hourly occupancy) are attacked one (sample, step) row at a
time: the sample's released x and SI, plus the step as a one-hot.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from attacks.attackers.tuning import tuned_result
from attacks.base import AttackInput, AttackResult
from attacks.spec import AttackerSpec, Need
from core.classifier import tune_classifier
from core.config import AttackBudget
from core.metrics import accuracy_metrics, balanced_accuracy
from core.training import predict_logits


def require_si(data: AttackInput, name: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Both splits' SI as float tensors, or a one-line ValueError: these attackers mean nothing without it."""
    if data.train_si is None or data.test_si is None:
        raise ValueError(f"{name} attacker needs side information: set train_si and test_si")
    return data.train_si.float(), data.test_si.float()


def standardise(train: torch.Tensor, test: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Both splits scaled by the training mean and std (constant features only centred), for a well-posed MLP fit."""
    mean, std = train.mean(0), train.std(0)
    std = torch.where(std > 1e-6, std, torch.ones_like(std))
    return (train - mean) / std, (test - mean) / std


def per_step(features: torch.Tensor, steps: int, position: bool) -> torch.Tensor:
    """Each sample's features repeated for its ``steps`` labels [N·T, d], with the step one-hot appended if ``position``."""
    rows = features.flatten(1).repeat_interleave(steps, 0)
    if not position:
        return rows
    onehot = torch.eye(steps, device=features.device).repeat(len(features), 1)
    return torch.cat([rows, onehot], 1)


class Mlp(nn.Sequential):
    """Two hidden layers of ``hidden`` units: the side-information attacker's network on features [N, d]."""

    def __init__(self, features: int, num_classes: int, hidden: int) -> None:
        super().__init__(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, num_classes))


@dataclass(frozen=True)
class MlpBuilder:
    """Picklable (num_classes, width) -> Mlp factory for a fixed number of input features."""

    features: int

    def __call__(self, num_classes: int, width: int) -> Mlp:
        return Mlp(self.features, num_classes, width)


def plug_in_bayes(
    train_si: torch.Tensor, train_s: torch.Tensor, test_si: torch.Tensor, num_classes: int
) -> torch.Tensor:
    """Test predictions of the balanced-accuracy Bayes rule argmax_s P̂(si | s) = P̂(s | si) / P̂(s), from training counts.

    Classes absent from training are never predicted; ties go to the lowest class index. A test row
    never seen in training has P̂(si | s) = 0 for every s; it goes to the rarest training class,
    which is what add-one smoothing of the counts gives such a row (1 / (n_s + R) is largest for the
    smallest n_s): with fewer samples, a class is the likelier to have left a value unobserved.
    """
    rows_all, inverse = torch.unique(torch.cat([train_si, test_si]), dim=0, return_inverse=True)
    train_id, test_id = inverse[: len(train_si)], inverse[len(train_si):]
    counts = torch.bincount(train_id * num_classes + train_s, minlength=len(rows_all) * num_classes)
    counts = counts.view(len(rows_all), num_classes).double()
    class_n = counts.sum(0)
    present = class_n > 0
    likelihood = torch.where(present, counts / class_n.clamp_min(1), torch.full_like(counts, -1.0))
    pred = likelihood.argmax(1)
    rarest = torch.where(present, class_n, torch.full_like(class_n, float("inf"))).argmin()
    pred[counts.sum(1) == 0] = rarest
    return pred[test_id]


@dataclass(frozen=True)
class SideInfoAttacker:
    """MLP on [flattened released x ; SI], fitted on the released training split, scored on the test split."""

    budget: AttackBudget = field(default_factory=AttackBudget)
    name: str = "side_info"
    hidden: int = 64

    def run(self, data: AttackInput) -> AttackResult:
        """Tune an MLP family on released data joined with SI (and the step, for per-step labels); score the test split once."""
        train_si, test_si = require_si(data, self.name)
        train_f = torch.cat([data.train_x.flatten(1).float(), train_si], dim=1)
        test_f = torch.cat([data.test_x.flatten(1).float(), test_si], dim=1)
        if data.train_s.dim() == 2:
            steps = data.train_s.shape[1]
            train_f, test_f = per_step(train_f, steps, True), per_step(test_f, steps, True)
        train_f, test_f = standardise(train_f, test_f)
        fit = tune_classifier(MlpBuilder(train_f.shape[1]), train_f, data.train_s.flatten(), data.num_classes,
                              self.budget, self.hidden)
        return tuned_result(self.name, fit, predict_logits(fit.model, test_f), data.test_s, data.num_classes)


@dataclass(frozen=True)
class SiOnlyAttacker:
    """The floor: S predicted from SI alone (exact count table for few distinct SI rows, else an MLP)."""

    budget: AttackBudget = field(default_factory=AttackBudget)
    name: str = "si_only"
    hidden: int = 64
    max_table_rows: int = 4096

    def predict(self, train_si: torch.Tensor, train_s: torch.Tensor, test_si: torch.Tensor, num_classes: int) -> torch.Tensor:
        """Test predictions: plug-in Bayes when train+test SI has at most ``max_table_rows`` distinct rows, else the tuned MLP."""
        if len(torch.unique(torch.cat([train_si, test_si]), dim=0)) <= self.max_table_rows:
            return plug_in_bayes(train_si, train_s, test_si, num_classes)
        train_f, test_f = standardise(train_si, test_si)
        fit = tune_classifier(MlpBuilder(train_f.shape[1]), train_f, train_s, num_classes, self.budget, self.hidden)
        return predict_logits(fit.model, test_f).argmax(1)

    def run(self, data: AttackInput) -> AttackResult:
        """Test balanced accuracy from SI alone; per-step labels also get ``accuracy_with_position`` (SI and the step)."""
        train_si, test_si = require_si(data, self.name)
        if data.train_s.dim() == 1:
            pred = self.predict(train_si, data.train_s, test_si, data.num_classes)
            return AttackResult(self.name, accuracy_metrics(pred, data.test_s, data.num_classes))
        steps, train_s = data.train_s.shape[1], data.train_s.flatten()
        pred = self.predict(per_step(train_si, steps, False), train_s, per_step(test_si, steps, False), data.num_classes)
        metrics = accuracy_metrics(pred.view(data.test_s.shape), data.test_s, data.num_classes)
        pred = self.predict(per_step(train_si, steps, True), train_s, per_step(test_si, steps, True), data.num_classes)
        metrics["accuracy_with_position"] = balanced_accuracy(pred, data.test_s.flatten(), data.num_classes)
        return AttackResult(self.name, metrics)


SPECS = (
    AttackerSpec("side_info", lambda config, figures: SideInfoAttacker(AttackBudget.of(config)),
                 frozenset({Need.RELEASED, Need.SIDE_INFO}), summary="a tuned MLP on released data joined with side information"),
    AttackerSpec("si_only", lambda config, figures: SiOnlyAttacker(AttackBudget.of(config)),
                 frozenset({Need.SIDE_INFO}), summary="the floor: the private attribute from side information alone"),
)
