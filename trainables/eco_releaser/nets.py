"""Networks of the ECO releaser (docs/mechanisms.md#on-eco-smart-meter-days-eco-eco-si): the 4 × 64 LSTM releaser and
the LSTM classifiers of occupancy, over windows of L hours, and the adversary's factory."""
from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
from torch import nn
from torch.nn import functional as F

from core.data.eco_files import SI_FEATURES
from trainables.eco_releaser.config import EcoConfig


class LstmReleaser(nn.Module):
    """Y = R(X, Z): an LSTM over a window's hours whose input is [X ; SI ; uniform noise Z] per hour, one value out per hour.

    Input [N, L, features] (normalised consumption, then SI columns when the releaser sees SI); output
    [N, L, 1], the released normalised consumption. ``noise_dim`` = 0 makes it deterministic.
    """

    def __init__(self, features: int, noise_dim: int = 8, hidden: int = 64, layers: int = 4, bound: float = 8.0) -> None:
        super().__init__()
        self.noise_dim = noise_dim
        self.bound = bound
        self.lstm = nn.LSTM(features + noise_dim, hidden, layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        if self.noise_dim:
            z = torch.rand((*x.shape[:2], self.noise_dim), device=x.device, dtype=x.dtype, generator=generator)
            x = torch.cat([x, z], dim=2)
        # Bounded (±bound standard deviations): an unbounded release can hide nothing by blowing up its scale.
        return self.bound * torch.tanh(self.head(self.lstm(x)[0]) / self.bound)


class LstmClassifier(nn.Module):
    """Per-step classifier over a window of ``steps`` hours: [N, L, features] -> logits [N, classes, L] (class axis
    second, as cross-entropy expects).

    Bidirectional, since an attacker holds the whole released window (step t is judged with the steps
    after it too). Inputs are batch-normalised per (step, feature): a release can hide nothing in
    small deviations from its profile over the window or in its scale, which a shared normalisation would miss.
    """

    def __init__(self, features: int, num_classes: int = 2, hidden: int = 32, layers: int = 3, steps: int = 24) -> None:
        super().__init__()
        self.norm = nn.BatchNorm1d(steps * features)
        self.lstm = nn.LSTM(features, hidden, layers, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.flatten(1)
        if self.training and len(x) == 1:  # a lone last batch has no batch statistics: use the running ones
            n = self.norm
            flat = F.batch_norm(flat, n.running_mean, n.running_var, n.weight, n.bias, training=False, eps=n.eps)
        else:
            flat = self.norm(flat)
        x = flat.view(x.shape)
        return self.head(self.lstm(x)[0]).transpose(1, 2)


def adversary_net(cfg: EcoConfig) -> Callable[[int, int], LstmClassifier]:
    """The adversary's architecture as a (number of classes, hidden width) factory (the deep attacker tunes the width)."""
    return partial(lstm_classifier, 1 + SI_FEATURES * cfg.side_info, cfg.adversary_layers, cfg.window_hours)


def lstm_classifier(features: int, layers: int, steps: int, num_classes: int, hidden: int) -> LstmClassifier:
    """A fresh per-step LSTM classifier (module-level, so factories built from it pickle to Ray workers)."""
    return LstmClassifier(features, num_classes, hidden=hidden, layers=layers, steps=steps)
