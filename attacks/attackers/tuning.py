"""Tuned, converged attackers: a small family of configurations per attacker, chosen on validation only.

A privacy number is a claim that no competent attacker does better, so every learned attacker is
fitted the way a careful adversary would fit it:

1. a validation split is carved from the *released training* split (the test split is never read
   while fitting or choosing);
2. inputs are standardised per feature with the statistics of the attacker's training part (see
   :class:`core.nets.Standardized`);
3. every configuration of the family (capacities × learning rates × with/without augmentation) is
   trained with early stopping on that validation split, its best-validation weights restored;
4. the configuration with the best validation balanced accuracy is scored once on the test split.

``attack_search="halving"`` spreads the epochs by successive halving (all configurations for a rung
of epochs, the better half goes on, ...), and the survivor trains to convergence; ``"full"`` trains
every configuration to convergence. Both choose on validation only. The family, its epochs and its
search are the trial config's :class:`core.config.AttackBudget` (the validated config itself).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from attacks.base import AttackResult
from core.attack_scores import PER_RECORD
from core.config import AttackBudget
from core.metrics import balanced_accuracy, balanced_accuracy_interval
from core.nets import Standardized
from core.training import EarlyStoppedFit, EarlyStopping, FitLog, augmentation_for, validation_split

ModelBuilder = Callable[[int, int], nn.Module]  # (number of classes, width) -> a fresh network


@dataclass(frozen=True)
class Candidate:
    """One configuration of an attacker family."""

    width: int
    lr: float
    augment: bool

    @property
    def label(self) -> str:
        """Short name, e.g. ``w32_lr0.0003_aug``."""
        return f"w{self.width}_lr{self.lr:g}" + ("_aug" if self.augment else "")


@dataclass
class TunedFit:
    """The chosen network, its configuration, how its training ended, every candidate's validation score, and how many
    records the family was fitted on (training and validation parts together)."""

    model: nn.Module
    candidate: Candidate
    log: FitLog
    val_scores: dict[str, float]
    records: int


def family(budget: AttackBudget, base_width: int) -> list[Candidate]:
    """Every configuration of the family, in a fixed order (ties in validation go to the earlier one)."""
    widths = sorted({max(1, round(base_width * f)) for f in budget.attack_width_factors})
    return [Candidate(w, lr, aug) for w, lr, aug in itertools.product(widths, budget.attack_lrs, budget.attack_augment)]


def tune_classifier(build: ModelBuilder, x: torch.Tensor, y: torch.Tensor, num_classes: int,
                    budget: AttackBudget, base_width: int, std_floor: float = 0.01) -> TunedFit:
    """Fit the family on (x, y) with early stopping on a validation split of it; return the best on validation.

    ``x``/``y`` are the attacker's *training* data (released training split); nothing else is read.
    Per-step labels [N, T] need a network with logits [N, classes, T]. ``std_floor``: the input standardisation's
    floor (:meth:`core.nets.Standardized.statistics`).
    """
    train_idx, val_idx = validation_split(len(x), budget.attack_val_fraction, budget.seed)
    train_idx, val_idx = train_idx.to(x.device), val_idx.to(x.device)
    train, val = (x[train_idx], y[train_idx]), (x[val_idx], y[val_idx])
    mean, std = Standardized.statistics(train[0], std_floor)
    stopping = EarlyStopping(budget.attack_epochs, budget.attack_patience)
    fits: dict[Candidate, EarlyStoppedFit] = {}
    for i, cand in enumerate(family(budget, base_width)):
        torch.manual_seed(budget.seed + i)
        gen = torch.Generator(device=x.device).manual_seed(budget.seed + i)
        model = Standardized(build(num_classes, cand.width).to(x.device), mean, std)
        fits[cand] = EarlyStoppedFit(model, train, val, num_classes,
                                     stopping=stopping, batch_size=budget.attack_batch_size, lr=cand.lr, generator=gen,
                                     augment=augmentation_for(x) if cand.augment else None)
    alive = list(fits)
    if budget.attack_search == "halving":
        while len(alive) > 1:
            for cand in alive:
                fits[cand].run(budget.attack_rung_epochs)
            alive = sorted(alive, key=lambda c: fits[c].rank, reverse=True)[: math.ceil(len(alive) / 2)]
    for cand in alive:
        fits[cand].run()
    chosen = max(alive, key=lambda c: fits[c].rank)
    log = fits[chosen].finish()
    return TunedFit(fits[chosen].model, chosen, log, {c.label: fits[c].best for c in fits}, len(x))


def accuracy_metrics(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> dict[str, float]:
    """Balanced accuracy with its 95 % interval; per-step labels [N, T] also get ``accuracy_within_step``.

    ``accuracy_within_step`` is the mean over steps of each step's own balanced accuracy: chance is
    1/classes at every step, whatever the step's prior (e.g. occupancy by hour of the day). For per-step
    labels the interval treats the N·T labels as independent, so it is narrower than the truth.
    """
    low, high = balanced_accuracy_interval(pred, target, num_classes)
    metrics = {"accuracy": balanced_accuracy(pred.flatten(), target.flatten(), num_classes),
               "accuracy/ci_low": low, "accuracy/ci_high": high}
    if target.dim() == 2:
        steps = [balanced_accuracy(pred[:, t], target[:, t], num_classes) for t in range(target.shape[1])]
        metrics["accuracy_within_step"] = sum(steps) / len(steps)
    return metrics


def fit_metrics(fit: TunedFit) -> dict[str, float]:
    """What to log about the chosen attacker: validation score, epochs, whether the cap stopped it, its configuration,
    and its data budget (``train_records``: the records it was fitted on)."""
    return {"val_accuracy": fit.log.best_val_accuracy, "train_records": float(fit.records), "epochs": float(fit.log.epochs),
            "best_epoch": float(fit.log.best_epoch), "capped": float(fit.log.capped),
            "candidates": float(len(fit.val_scores)), "chosen_width": float(fit.candidate.width),
            "chosen_lr": fit.candidate.lr, "chosen_augment": float(fit.candidate.augment)}


TOP_SHARE = 0.1  # the most confident tenth of the test records
CONFIDENT = 0.9  # a record read right with at least this probability counts in confident_share


def per_record_metrics(logits: torch.Tensor, target: torch.Tensor) -> dict[str, float]:
    """How unevenly an attacker reads the test records, from its logits [N, classes] (or [N, classes, T] with target
    [N, T]): ``top_decile_accuracy``, its accuracy on the tenth of the records it is most confident about, and
    ``confident_share``, the share of records it reads right with probability ≥ 0.9. A release that publishes some records
    as they are and hides the rest shows in both where its average accuracy does not."""
    confidence, pred = torch.softmax(logits.float(), dim=1).max(1)
    confidence, right = confidence.flatten(), (pred.view(target.shape) == target).flatten().float()
    top = confidence.argsort(descending=True, stable=True)[: max(1, math.ceil(TOP_SHARE * len(confidence)))]
    top_decile, confident = float(right[top].mean()), float((right * (confidence >= CONFIDENT).float()).mean())
    return dict(zip(PER_RECORD, (top_decile, confident), strict=True))


def tuned_result(name: str, fit: TunedFit, logits: torch.Tensor, target: torch.Tensor,
                 num_classes: int) -> AttackResult:
    """An attacker's result from its logits on the test split (scored once): accuracy with its interval, the
    per-record view (:func:`per_record_metrics`) and how the chosen attacker was fitted."""
    pred = logits.argmax(1).view(target.shape)
    return AttackResult(name, accuracy_metrics(pred, target, num_classes) | per_record_metrics(logits, target)
                        | fit_metrics(fit))
