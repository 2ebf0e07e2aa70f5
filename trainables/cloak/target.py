"""Cloak's pre-trained target classifier (docs/mechanisms.md#cloak): LeNet-5 on MNIST padded to 32×32, tasks "digit > 5"
and the digit.

A target is trained once per (task, training settings) on the full MNIST training set and cached under
``<data_root>/targets/lenet5-<task>-<hash>.pt``; concurrent trials serialise on a lock file and the file is
written atomically (temporary file + rename), so every trial of every sweep reuses the same network.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

from core.content_cache import ContentCache
from core.data import load_mnist
from core.training import fit_classifier, predict_logits

PAD = 2  # 28×28 MNIST -> 32×32, as LeNet-5 expects
MNIST_TEST = 10_000  # the target's test set: all of MNIST's test images

TARGETS: ContentCache[dict] = ContentCache("lenet5-")  # <root>/targets/lenet5-<task>-<hash>.pt


def pad32(x: torch.Tensor) -> torch.Tensor:
    """[N,1,28,28] -> [N,1,32,32] with a zero border of 2 pixels."""
    return F.pad(x, (PAD, PAD, PAD, PAD))


def crop28(x: torch.Tensor) -> torch.Tensor:
    """The central 28×28 of [N,1,32,32] images (what the farm's attackers and the thickness labeler read)."""
    return x[..., PAD:-PAD, PAD:-PAD]


def task_labels(digits: torch.Tensor, task: str) -> torch.Tensor:
    """The target's labels: 1 where digit > 5 for "gt5", the digit itself for "digit"."""
    return (digits > 5).long() if task == "gt5" else digits.long()


class LeNet5(nn.Module):
    """LeNet-5 (ReLU, max-pooling): conv 6@5×5, pool, conv 16@5×5, pool, 120, 84, classes; input 1×32×32."""

    def __init__(self, num_classes: int) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(16 * 25, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                                  nn.Linear(84, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


@dataclass(frozen=True)
class TargetSettings:
    """What determines a target network; their hash names the cache file."""

    task: str
    num_classes: int
    epochs: int
    batch_size: int
    lr: float
    seed: int = 0

    def key(self) -> str:
        """``<task>-<12 hex digits of the settings' hash>``: the file ``<root>/targets/lenet5-<key>.pt``. The paper's
        fixed target, trained on the full MNIST training set, so not keyed by the code's version."""
        digest = hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:12]
        return f"{self.task}-{digest}"


@dataclass
class Target:
    """A trained target in eval mode with frozen weights, and its plain accuracy on the full MNIST test set."""

    model: LeNet5
    mnist_test_accuracy: float
    path: Path


def _train(root: Path, settings: TargetSettings, device: torch.device, download: bool) -> tuple[LeNet5, float]:
    """Fit LeNet-5 on the 60,000 MNIST training images; return it with its plain MNIST test accuracy."""
    mnist = load_mnist(root, download=download)
    x = pad32(mnist.train_images.unsqueeze(1).to(device, torch.float32).div_(255))
    y = task_labels(mnist.train_labels, settings.task).to(device)
    torch.manual_seed(settings.seed)
    model = LeNet5(settings.num_classes).to(device)
    gen = torch.Generator(device=device).manual_seed(settings.seed)
    fit_classifier(model, x, y, epochs=settings.epochs, batch_size=settings.batch_size, lr=settings.lr, generator=gen)
    x_test = pad32(mnist.test_images.unsqueeze(1).to(device, torch.float32).div_(255))
    y_test = task_labels(mnist.test_labels, settings.task).to(device)
    accuracy = float((predict_logits(model, x_test).argmax(1) == y_test).double().mean())
    return model.cpu(), accuracy


def load_target(root: Path, settings: TargetSettings, device: torch.device, download: bool = False) -> Target:
    """The cached target for ``settings`` (trained and cached on first use), frozen, in eval mode on ``device``."""
    def train() -> dict:
        model, accuracy = _train(root, settings, device, download)
        return {"state": model.state_dict(), "mnist_test_accuracy": accuracy, "settings": asdict(settings)}

    folder, key = root / "targets", settings.key()
    blob, _ = TARGETS.stored_or_computed(folder, key, train)  # one trainer per target; the others wait and read it
    model = LeNet5(settings.num_classes)
    model.load_state_dict(blob["state"])
    model.to(device).eval().requires_grad_(False)
    return Target(model, float(blob["mnist_test_accuracy"]), TARGETS.path(folder, key))
