"""The paper's fully connected network (``layers`` hidden layers of ``hidden`` tanh units, one logit), trained on a
stack of training sets at once so that the Monte Carlo over training sets stays affordable.

Parameters travel as one flat vector θ per network (weights then bias, layer by layer), like the linear models' θ.
Training is deterministic given θ₀: full-batch Adam on the mean log-loss plus (λ/2)·‖weights‖² (biases
unpenalised). Adam is per coordinate, so descending the sum of the stack's losses trains every network on its own.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn


def shapes(p_x: int, hidden: int, layers: int) -> list[tuple[int, int]]:
    """(fan-in, fan-out) of each linear layer: p_x -> hidden (x layers) -> 1."""
    return [(p_x, hidden), *[(hidden, hidden)] * (layers - 1), (hidden, 1)]


def n_params(p_x: int, hidden: int, layers: int) -> int:
    """Length of θ (5 x 50 on 5 features: 10,551)."""
    return sum((fan_in + 1) * fan_out for fan_in, fan_out in shapes(p_x, hidden, layers))


def initial(p_x: int, hidden: int, layers: int, seed: int) -> np.ndarray:
    """θ₀ as PyTorch initialises a linear layer (weights and biases uniform in ±1/√fan-in), drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    parts = [rng.uniform(-1, 1, size=(fan_in + 1) * fan_out) / math.sqrt(fan_in)
             for fan_in, fan_out in shapes(p_x, hidden, layers)]
    return np.concatenate(parts)


def unflatten(theta: torch.Tensor, p_x: int, hidden: int, layers: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(W (..., fan-in, fan-out), b (..., fan-out)) per layer, views of θ (..., P)."""
    out, start = [], 0
    for fan_in, fan_out in shapes(p_x, hidden, layers):
        w = theta[..., start:start + fan_in * fan_out].reshape(*theta.shape[:-1], fan_in, fan_out)
        start += fan_in * fan_out
        out.append((w, theta[..., start:start + fan_out]))
        start += fan_out
    return out


def forward(theta: torch.Tensor, x: torch.Tensor, hidden: int, layers: int) -> torch.Tensor:
    """Logits (..., m) of the networks θ (..., P) on rows x (..., m, p_x) (x broadcasts over the stack)."""
    h = x
    params = unflatten(theta, x.shape[-1], hidden, layers)
    for i, (w, b) in enumerate(params):
        h = h @ w + b[..., None, :]
        if i < len(params) - 1:
            h = torch.tanh(h)
    return h[..., 0]


def logits(theta: np.ndarray, x: np.ndarray, hidden: int, layers: int) -> np.ndarray:
    """:func:`forward` on NumPy arrays, in float64."""
    with torch.no_grad():
        return forward(torch.as_tensor(theta, dtype=torch.float64), torch.as_tensor(x, dtype=torch.float64),
                       hidden, layers).numpy()


def fit(x: np.ndarray, y: np.ndarray, theta0: np.ndarray, hidden: int, layers: int, lam: float, steps: int,
        lr: float) -> np.ndarray:
    """Train from θ₀ on each training set of the stack x (..., n, p_x), y (..., n) -> θ (..., P)."""
    xt = torch.as_tensor(np.asarray(x), dtype=torch.float32)
    yt = torch.as_tensor(np.asarray(y), dtype=torch.float32)
    p_x = xt.shape[-1]
    theta = torch.as_tensor(theta0, dtype=torch.float32).expand(*xt.shape[:-2], -1).clone().requires_grad_(True)
    weights = torch.zeros(theta.shape[-1], dtype=torch.bool)  # which coordinates λ penalises
    start = 0
    for fan_in, fan_out in shapes(p_x, hidden, layers):
        weights[start:start + fan_in * fan_out] = True
        start += (fan_in + 1) * fan_out
    optimizer = torch.optim.Adam([theta], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.functional.binary_cross_entropy_with_logits(forward(theta, xt, hidden, layers), yt,
                                                              reduction="none").mean(-1)
        penalty = 0.5 * lam * (theta[..., weights] ** 2).sum(-1)
        (loss + penalty).sum().backward()
        optimizer.step()
    return theta.detach().to(torch.float64).numpy()


class TanhNet(nn.Module):
    """A trained θ as a two-class network: logits (0, z) with z the class-1 logit (for the farm's RMIA and LiRA)."""

    def __init__(self, p_x: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.hidden, self.layers = hidden, layers
        self.theta = nn.Parameter(torch.zeros(n_params(p_x, hidden, layers), dtype=torch.float64), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = forward(self.theta, x.to(torch.float64), self.hidden, self.layers)
        return torch.stack([torch.zeros_like(z), z], dim=1)
