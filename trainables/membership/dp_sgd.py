"""L2 logistic regression trained by DP-SGD with Opacus (docs/membership.md#dp-sgd-models).

Opacus' PrivacyEngine does the private part: Poisson-sampled lots of expected size ``batch_size``, per-sample gradients
clipped to ``clip``, Gaussian noise of std noise_multiplier·clip, and its accountant (PRV, Opacus' default). The noise
multiplier is the one ``make_private_with_epsilon`` would pick for the target (ε, δ): Opacus' own
``get_noise_multiplier`` with the same sample rate and epochs, computed once per setting and cached, because the Monte
Carlo of ρ_KL trains hundreds of models with the same setting. ε = ∞ trains the same SGD (same lots, steps and
step size) without clipping or noise: the matching non-private model.

The one-run audit (trainables.membership.canary_audit) trains on the members plus a random half of its canaries, so its
training set's size is random; :class:`Sampling` fixes its sample rate, noise and gradient divisor in advance, those of
the trial it audits, so that adding or removing one canary changes nothing but that canary's record.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

ACCOUNTANT = "prv"


@dataclass(frozen=True)
class DpSgd:
    """A DP-SGD setting: target (ε, δ), clipping norm, expected lot size, epochs, SGD step and L2 penalty."""

    epsilon: float
    delta: float
    clip: float
    batch_size: int
    epochs: int
    lr: float
    lam: float


@dataclass(frozen=True)
class DpModel:
    """A trained model θ = [w, b], the ε its accountant reports at δ (inf without DP) and the noise multiplier."""

    theta: np.ndarray
    epsilon: float
    noise_multiplier: float


@dataclass(frozen=True)
class Sampling:
    """Lots fixed before the training set is drawn: the sample rate 1/lots(n) and noise multiplier of DP-SGD on ``n``
    records, with lots of ``lot_size`` records on average (the divisor of a lot's summed gradient)."""

    n: int
    lot_size: float


def lots(n: int, batch_size: int) -> int:
    """Lots per epoch: Opacus' sample rate is 1/lots (a lot of expected size ≈ batch_size)."""
    return math.ceil(n / min(batch_size, n))


@lru_cache(maxsize=64)
def noise_multiplier(setting: DpSgd, n: int) -> float:
    """σ/clip that Opacus' accountant calibrates to reach the target ε at δ after ``epochs`` epochs on n records."""
    from opacus.accountants.utils import get_noise_multiplier

    # The RDP bound inside PRV's domain search ("Optimal order is the largest alpha") and, at sample rate 1, PRV's
    # log(1 - q) = -inf: both expected.
    with warnings.catch_warnings(), np.errstate(divide="ignore"):
        warnings.filterwarnings("ignore", message="Optimal order is the largest alpha")
        return float(get_noise_multiplier(target_epsilon=setting.epsilon, target_delta=setting.delta,
                                          sample_rate=1 / lots(n, setting.batch_size), epochs=setting.epochs,
                                          accountant=ACCOUNTANT))


def train(x: np.ndarray, y: np.ndarray, setting: DpSgd, seed: int, sampling: Sampling | None = None) -> DpModel:
    """DP-SGD on one training set x (n, p_x), y (n) from θ = 0; lots and noise drawn from ``seed``.

    ``sampling`` fixes the lots in advance (the audit's runs; None: those of n records). Such a run asks no accountant
    (its privacy is that of ``sampling.n`` records): its ``epsilon`` is nan.
    """
    from opacus import PrivacyEngine
    from opacus.data_loader import DPDataLoader

    n, p_x = x.shape
    nominal = n if sampling is None else sampling.n
    generator = torch.Generator().manual_seed(seed)
    linear = nn.Linear(p_x, 1)  # Opacus wraps this very module: its parameters are the trained ones
    nn.init.zeros_(linear.weight)
    nn.init.zeros_(linear.bias)
    model: nn.Module = linear
    optimizer = torch.optim.SGD([{"params": [linear.weight], "weight_decay": setting.lam},
                                 {"params": [linear.bias], "weight_decay": 0.0}], lr=setting.lr)
    data = TensorDataset(torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32))
    per_epoch = lots(nominal, setting.batch_size)
    batch = min(setting.batch_size, n) if sampling is None else math.ceil(n / per_epoch)
    loader = DataLoader(data, batch_size=batch, shuffle=True, generator=generator)
    engine, sigma = None, 0.0
    if math.isfinite(setting.epsilon):
        sigma = noise_multiplier(setting, nominal)
        if sampling is not None:  # Poisson lots at rate 1 / lots(sampling.n), whatever this set's size
            loader = DPDataLoader(data, sample_rate=1 / per_epoch, generator=generator)
        with warnings.catch_warnings():  # "secure RNG turned off": the noise is seeded on purpose (reproducible points)
            warnings.filterwarnings("ignore", message="Secure RNG turned off")
            engine = PrivacyEngine(accountant=ACCOUNTANT)
            model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                           noise_multiplier=sigma, max_grad_norm=setting.clip,
                                                           noise_generator=generator, poisson_sampling=sampling is None)
        if sampling is not None:
            optimizer.expected_batch_size = sampling.lot_size
    with warnings.catch_warnings():  # Opacus' hooks on a model whose inputs need no gradient: as intended
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        for _ in range(setting.epochs):
            for xb, yb in loader:
                optimizer.zero_grad()
                nn.functional.binary_cross_entropy_with_logits(model(xb)[:, 0], yb).backward()
                optimizer.step()
    theta = np.concatenate([linear.weight.detach().double().numpy()[0], linear.bias.detach().double().numpy()])
    if sampling is not None:
        return DpModel(theta, math.nan, sigma)
    with warnings.catch_warnings(), np.errstate(divide="ignore"):
        warnings.filterwarnings("ignore", message="Optimal order is the largest alpha")
        # σ = 0 (noise off) has no finite ε, and the accountant's arithmetic overflows on it
        spent = math.inf if engine is None or sigma == 0 else float(engine.get_epsilon(setting.delta))
    return DpModel(theta, spent, sigma)
