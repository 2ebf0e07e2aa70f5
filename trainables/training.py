"""Batched supervised training and inference on tensors already on the device (no DataLoader)."""
from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

from trainables.metrics import balanced_accuracy


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
