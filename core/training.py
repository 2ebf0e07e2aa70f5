"""Batched supervised training and inference on tensors already on the device (no DataLoader)."""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from core.metrics import balanced_accuracy


def batches(n: int, batch_size: int, generator: torch.Generator, device: torch.device) -> list[torch.Tensor]:
    """A random permutation of range(n), cut into index batches (the last one may be short)."""
    perm = torch.randperm(n, generator=generator, device=generator.device).to(device)
    return list(perm.split(batch_size))


@torch.no_grad()
def predict_logits(model: nn.Module, x: torch.Tensor, batch_size: int = 1024) -> torch.Tensor:
    """Logits of ``model`` on all of ``x`` in eval mode, batched."""
    was_training = model.training
    model.eval()
    out = torch.cat([model(chunk) for chunk in x.split(batch_size)])
    model.train(was_training)
    return out


def fit_classifier(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    generator: torch.Generator,
    class_weights: torch.Tensor | None = None,
    on_epoch: Callable[[int, float], None] | None = None,
) -> nn.Module:
    """Train ``model`` with cross-entropy (optionally class-weighted, for imbalanced labels) and Adam."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for epoch in range(epochs):
        total = 0.0
        for idx in batches(len(x), batch_size, generator, x.device):
            loss = F.cross_entropy(model(x[idx]), y[idx], weight=class_weights)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        if on_epoch is not None:
            on_epoch(epoch, total / len(x))
    return model


def inverse_frequency_weights(y: torch.Tensor, num_classes: int) -> torch.Tensor:
    """Class weights ∝ 1/frequency so cross-entropy targets balanced accuracy."""
    counts = torch.bincount(y, minlength=num_classes).float().clamp_min(1)
    return counts.sum() / (num_classes * counts)


def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, num_classes: int) -> float:
    """Balanced accuracy of ``model`` on (x, y)."""
    return balanced_accuracy(predict_logits(model, x).argmax(1), y, num_classes)


def shift_images(x: torch.Tensor, generator: torch.Generator, max_shift: int = 2) -> torch.Tensor:
    """Each image [N, C, H, W] translated by its own random (dy, dx) in [−max_shift, max_shift], zero-filled.

    One padded gather for the whole batch (no per-sample loop): the augmentation suited to digits and faces.
    """
    n, _, h, w = x.shape
    shifts = torch.randint(-max_shift, max_shift + 1, (2, n), generator=generator, device=generator.device).to(x.device)
    padded = F.pad(x, (max_shift,) * 4)
    rows = (torch.arange(h, device=x.device) + max_shift - shifts[0][:, None])[:, None, :, None]
    cols = (torch.arange(w, device=x.device) + max_shift - shifts[1][:, None])[:, None, None, :]
    batch = torch.arange(n, device=x.device)[:, None, None, None]
    channel = torch.arange(x.shape[1], device=x.device)[None, :, None, None]
    return padded[batch, channel, rows, cols]


def jitter_features(x: torch.Tensor, generator: torch.Generator, scale: float = 0.05) -> torch.Tensor:
    """Gaussian jitter of ``scale`` × each feature's batch standard deviation: augmentation for sequences and tables."""
    noise = torch.randn(x.shape, generator=generator, device=generator.device).to(x.device)
    std = x.flatten(1).std(0).view(1, *x.shape[1:]) if len(x) > 1 else torch.ones_like(x[:1])
    return x + scale * std * noise


def augmentation_for(x: torch.Tensor) -> Callable[[torch.Tensor, torch.Generator], torch.Tensor]:
    """Random shifts for image batches [N, C, H, W], feature jitter for anything else."""
    return shift_images if x.dim() == 4 else jitter_features


@dataclass(frozen=True)
class EarlyStopping:
    """Train until validation balanced accuracy has not improved for ``patience`` epochs, or ``max_epochs``."""

    max_epochs: int = 30
    patience: int = 3
    min_delta: float = 1e-4

    def __post_init__(self) -> None:
        """Reject budgets that could not train at all."""
        if self.max_epochs < 1 or self.patience < 1:
            raise ValueError(f"early stopping needs max_epochs >= 1 and patience >= 1 (got {self.max_epochs}, {self.patience})")


@dataclass(frozen=True)
class FitLog:
    """How an early-stopped fit ended: epochs run, the best validation score and its epoch, and whether the cap hit."""

    epochs: int
    best_epoch: int
    best_val_accuracy: float
    capped: bool


class EarlyStoppedFit:
    """A classifier trained epoch by epoch on a training split, watched on a validation split.

    Keeps the best-validation weights; :meth:`finish` restores them. Epochs can be run in slices
    (:meth:`run`), which lets a tuner spread a budget over several configurations (successive halving).
    Validation is balanced accuracy, so imbalanced labels need no special care; training cross-entropy is
    class-weighted for the same reason. Patience counts epochs without progress; while the score has not left
    chance, a lower validation cross-entropy is progress too: a weak signal lowers the loss for many epochs before
    it flips a prediction, and a fit stopped there reads chance where the signal is learnable.
    """

    def __init__(self, model: nn.Module, train: tuple[torch.Tensor, torch.Tensor], val: tuple[torch.Tensor, torch.Tensor],
                 num_classes: int, *, stopping: EarlyStopping, batch_size: int, lr: float, generator: torch.Generator,
                 augment: Callable[[torch.Tensor, torch.Generator], torch.Tensor] | None = None) -> None:
        self.model, self.train, self.val, self.num_classes = model, train, val, num_classes
        self.stopping, self.batch_size, self.generator, self.augment = stopping, batch_size, generator, augment
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.weights = inverse_frequency_weights(train[1].flatten(), num_classes)
        self.epochs, self.best_epoch, self.best = 0, 0, -1.0
        self.progress_epoch, self.best_loss = 0, float("inf")  # the last epoch that improved the score or the loss
        self.best_state = copy.deepcopy(model.state_dict())

    @property
    def stopped(self) -> bool:
        """True once patience ran out or the epoch cap was reached."""
        return self.epochs >= self.stopping.max_epochs or self.epochs - self.progress_epoch >= self.stopping.patience

    @property
    def at_chance(self) -> bool:
        """True while the best validation score is no better than predicting one class (balanced accuracy 1/classes)."""
        return self.best <= 1 / self.num_classes + self.stopping.min_delta

    @property
    def rank(self) -> tuple[float, float]:
        """How a tuner ranks fits: by the best score; among fits still at chance, the lower validation loss first."""
        return self.best, -self.best_loss if self.at_chance else 0.0

    def run(self, epochs: int | None = None) -> float:
        """Up to ``epochs`` more epochs (default: until stopped); returns the best validation accuracy so far."""
        x, y = self.train
        done = 0
        while not self.stopped and (epochs is None or done < epochs):
            self.model.train()
            for idx in batches(len(x), self.batch_size, self.generator, x.device):
                xb = x[idx] if self.augment is None else self.augment(x[idx], self.generator)
                loss = F.cross_entropy(self.model(xb), y[idx], weight=self.weights)
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                self.opt.step()
            self.epochs += 1
            done += 1
            self.validate()
        return self.best

    def validate(self) -> None:
        """Score the epoch on the validation split; keep its weights when the score improved, and note progress."""
        vx, vy = self.val
        with torch.no_grad():
            logits = predict_logits(self.model, vx)
            loss = F.cross_entropy(logits, vy, weight=self.weights).item()
        score = balanced_accuracy(logits.argmax(1).flatten(), vy.flatten(), self.num_classes)
        if score > self.best + self.stopping.min_delta:
            self.best, self.best_epoch, self.progress_epoch = score, self.epochs, self.epochs
            self.best_state = copy.deepcopy(self.model.state_dict())
        elif self.at_chance and loss < self.best_loss - self.stopping.min_delta:
            self.progress_epoch = self.epochs
        self.best_loss = min(self.best_loss, loss)

    def finish(self) -> FitLog:
        """Restore the best-validation weights and say how training ended."""
        self.model.load_state_dict(self.best_state)
        self.model.eval()
        capped = self.epochs >= self.stopping.max_epochs and self.epochs - self.progress_epoch < self.stopping.patience
        return FitLog(self.epochs, self.best_epoch, self.best, capped)


def validation_split(n: int, fraction: float, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Index tensors (train, validation) of a seeded random split of range(n); validation gets round(fraction·n) ≥ 1."""
    if n < 2:
        raise ValueError(f"need at least 2 samples to carve a validation split (got {n})")
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    k = min(n - 1, max(1, round(fraction * n)))
    return perm[k:], perm[:k]
