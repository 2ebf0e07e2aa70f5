"""The Gaussian-noise baselines: one σ on every pixel, found by bisection so that the target's accuracy under it equals
Cloak's (then scored by the same estimator and attacker), or so that the kNN information it removes equals that of
Cloak's noisy representation (then scored by the target's accuracy, the paper's comparison; docs/mechanisms.md#cloak)."""
from __future__ import annotations

import math
from collections.abc import Callable

import torch

SIGMA_RANGE = (1e-3, 10.0)  # the search's σ interval: from invisible noise to far past chance


def matching_sigma(falling_at: Callable[[float], float], value: float, steps: int = 10,
                   sigma_range: tuple[float, float] = SIGMA_RANGE) -> float:
    """The σ where ``falling_at(σ)``, a quantity that falls as σ grows (an accuracy, a share of information kept),
    equals ``value`` (bisection on log σ).

    A value at or above the lowest noise's gives the lower end; one below the highest noise's, the upper end.
    """
    lo, hi = math.log(sigma_range[0]), math.log(sigma_range[1])
    if value >= falling_at(sigma_range[0]):
        return sigma_range[0]
    if value <= falling_at(sigma_range[1]):
        return sigma_range[1]
    for _ in range(steps):
        mid = (lo + hi) / 2
        if falling_at(math.exp(mid)) > value:
            lo = mid
        else:
            hi = mid
    return math.exp((lo + hi) / 2)


def gaussian_release(x: torch.Tensor, sigma: float, generator: torch.Generator) -> torch.Tensor:
    """x + σ·e, e ~ N(0, I) drawn from ``generator``: the baseline's release."""
    return x + sigma * torch.randn(x.shape, generator=generator, device=x.device, dtype=x.dtype)
