"""What a tuned attacker reports: its accuracy on the test split with the interval, how unevenly it reads the records,
and how the chosen member of its family was fitted (the family itself, fitted on validation only, is
:mod:`core.classifier`'s).
"""
from __future__ import annotations

import math

import torch

from attacks.base import AttackResult
from core.attack_scores import PER_RECORD
from core.classifier import TunedFit
from core.metrics import accuracy_metrics


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
