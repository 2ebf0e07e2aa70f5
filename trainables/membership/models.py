"""The membership point's models behind one interface: train a stack of training sets, score rows, read a loss.

``linear`` and ``logistic`` are core.linear_models' (closed form / full-batch GD); ``dp_logistic`` is the logistic
model trained by DP-SGD with Opacus (trainables.membership.dp_sgd); ``tanh_net`` the paper's fully connected tanh
network (trainables.membership.tanh_net). Every model releases θ + N(0, σ²) on each parameter.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from core import linear_models as lm
from trainables.membership import dp_sgd, tanh_net
from trainables.membership.config import MembershipConfig


@dataclass(frozen=True)
class ModelSpec:
    """What trains a point's model (the config's model fields, nothing about data or the Monte Carlo)."""

    model: str
    p_x: int
    lam: float
    sigma: float
    gd_steps: int
    dp: dp_sgd.DpSgd
    hidden: int
    layers: int
    net_lr: float
    init_seed: int

    @classmethod
    def of(cls, cfg: MembershipConfig) -> ModelSpec:
        """The model fields of ``cfg``."""
        dp = dp_sgd.DpSgd(cfg.epsilon, cfg.delta, cfg.clip, cfg.batch_size, cfg.sgd_epochs, cfg.sgd_lr, cfg.lam)
        return cls(cfg.model, cfg.p_x, cfg.lam, cfg.sigma, cfg.gd_steps, dp, cfg.hidden, cfg.layers, cfg.net_lr, cfg.seed)

    @property
    def readout(self) -> str:
        """How the model's output is read: ``linear`` (a regression value, ½·squared error) or ``logistic`` (a logit)."""
        return "linear" if self.model == "linear" else "logistic"

    @property
    def n_params(self) -> int:
        """Length of θ."""
        if self.model == "tanh_net":
            return tanh_net.n_params(self.p_x, self.hidden, self.layers)
        return self.p_x + 1


def fit(spec: ModelSpec, x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The model trained on each training set of the stack x (..., n, p_x), y (..., n), plus output noise from ``rng``.

    DP-SGD draws its lots and gradient noise from seeds taken from ``rng`` (one per training set).
    """
    if spec.model == "dp_logistic":
        return fit_dp(spec, x, y, rng)[0]
    if spec.model == "tanh_net":
        theta0 = tanh_net.initial(spec.p_x, spec.hidden, spec.layers, spec.init_seed)
        theta = tanh_net.fit(x, y, theta0, spec.hidden, spec.layers, spec.lam, spec.gd_steps, spec.net_lr)
        return theta + rng.normal(0.0, spec.sigma, size=theta.shape)
    return lm.fit(spec.model, x, y, spec.lam, spec.sigma, rng, spec.gd_steps)


def fit_dp(spec: ModelSpec, x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, list[dp_sgd.DpModel]]:
    """:func:`fit` for ``dp_logistic``, with each model's accounting (the ε its accountant reports)."""
    sets_x, sets_y = np.asarray(x).reshape(-1, *np.shape(x)[-2:]), np.asarray(y).reshape(-1, np.shape(y)[-1])
    seeds = rng.integers(0, 2**31 - 1, size=len(sets_x))
    models = [dp_sgd.train(sx, sy, spec.dp, int(s)) for sx, sy, s in zip(sets_x, sets_y, seeds, strict=True)]
    theta = np.stack([m.theta for m in models]).reshape(*np.shape(x)[:-2], spec.p_x + 1)
    return theta + rng.normal(0.0, spec.sigma, size=theta.shape), models


def scores(spec: ModelSpec, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The model's raw output on rows x (m, p_x) for θ (..., P) -> (..., m): a regression value or a logit."""
    if spec.model == "tanh_net":
        return tanh_net.logits(theta, x, spec.hidden, spec.layers)
    theta = np.asarray(theta, dtype=np.float64)
    return theta[..., :-1] @ np.asarray(x, dtype=np.float64).T + theta[..., -1:]


def losses(spec: ModelSpec, theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-sample training loss (Yeom's signal): ½·squared error for ``linear``, log-loss otherwise."""
    return lm.score_losses(spec.readout, scores(spec, theta, x), y)


def predict(spec: ModelSpec, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """0/1 predictions: regression value above ½ (``linear``) or logit above 0."""
    return lm.score_predictions(spec.readout, scores(spec, theta, x))


def network(spec: ModelSpec, theta: np.ndarray) -> nn.Module:
    """θ as the two-class network (logits (0, class-1 logit)) the farm's likelihood attacks read."""
    if spec.model == "tanh_net":
        net = tanh_net.TanhNet(spec.p_x, spec.hidden, spec.layers)
        net.theta.data = torch.as_tensor(theta, dtype=torch.float64)
        return net.eval()
    linear = LinearNet(spec.p_x)
    linear.theta.data = torch.from_numpy(lm.two_class_logit(spec.readout, theta))
    return linear.eval()


class LinearNet(nn.Module):
    """A linear model as a two-class network: logits (0, x·w + b) with θ = [w, b] its class-1 logit (lm.two_class_logit)."""

    def __init__(self, p: int) -> None:
        super().__init__()
        self.theta = nn.Parameter(torch.zeros(p + 1, dtype=torch.float64), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = x.to(torch.float64) @ self.theta[:-1] + self.theta[-1]
        return torch.stack([torch.zeros_like(z), z], dim=1)


@dataclass(frozen=True)
class PointRecipe:
    """Train a fresh model as a point does (its :class:`ModelSpec`): the farm's reference models."""

    spec: ModelSpec

    def build(self) -> nn.Module:
        """An untrained network (θ = 0)."""
        if self.spec.model == "tanh_net":
            return tanh_net.TanhNet(self.spec.p_x, self.spec.hidden, self.spec.layers)
        return LinearNet(self.spec.p_x)

    def __call__(self, x: torch.Tensor, y: torch.Tensor, seed: int) -> nn.Module:
        """The model fitted to (x, y), its training and output noise drawn from ``seed``."""
        theta = fit(self.spec, x.cpu().numpy(), y.cpu().numpy(), np.random.default_rng(seed))
        return network(self.spec, theta)
