"""Networks of the ECO releaser (DESIGN §3.1): the 4 × 64 LSTM releaser and the LSTM classifiers of occupancy."""
from __future__ import annotations

import torch
from torch import nn


class LstmReleaser(nn.Module):
    """Y = R(X, Z): an LSTM over the day's hours whose input is [X ; SI ; uniform noise Z] per hour, one value out per hour.

    Input [N, 24, features] (normalised consumption, then SI columns when the releaser sees SI); output
    [N, 24, 1], the released normalised consumption. ``noise_dim`` = 0 makes it deterministic.
    """

    def __init__(self, features: int, noise_dim: int = 8, hidden: int = 64, layers: int = 4) -> None:
        super().__init__()
        self.noise_dim = noise_dim
        self.lstm = nn.LSTM(features + noise_dim, hidden, layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        if self.noise_dim:
            z = torch.rand((*x.shape[:2], self.noise_dim), device=x.device, dtype=x.dtype, generator=generator)
            x = torch.cat([x, z], dim=2)
        return self.head(self.lstm(x)[0])


class LstmClassifier(nn.Module):
    """Per-hour classifier over a day: [N, 24, features] -> logits [N, classes, 24] (class axis second, as cross-entropy expects)."""

    def __init__(self, features: int, num_classes: int = 2, hidden: int = 32, layers: int = 3) -> None:
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, layers, batch_first=True)
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.lstm(x)[0]).transpose(1, 2)
