"""Information a per-feature Gaussian mechanism removes from an image, and the uniform-matched Gaussian noise
(docs/estimators.md#cloaks-information-removed).

Estimator (a per-feature Gaussian-channel bound): feature i passes through x_i -> x_i + n_i, n_i ~ N(0, σ_i² + σ_q²),
where σ_q = 1/(255·√12) is the quantisation noise already present in 8-bit pixels. For a feature of variance v_i
(over the training images) the channel carries at most I_i(σ_i) = ½·log(1 + v_i / (σ_i² + σ_q²)) nats (a Gaussian
input maximises it); with independent noise per feature, Σ_i I_i bounds I(X; X + N). Suppressed features carry 0;
constant features (v_i = 0, e.g. the zero padding) carry nothing with or without noise. σ_q is the documented floor that
keeps the raw input's information finite: the normaliser is Σ_i I_i(0), so

    information removed = 1 − Σ_{i kept} I_i(σ_i) / Σ_i I_i(0)   ∈ [0, 1].

The floor is a parameter (``info_floor`` in the trial config, default σ_q): the larger it is, the less the first, finest
grey levels count, and the less a small uniform noise is credited with removing. Shifts (μ, the suppression values μ_s)
carry no information about x and do not enter. The matched Gaussian noise adds one σ
to every pixel, chosen by bisection so that it removes the same share of information as the Cloak it is compared with.
"""
from __future__ import annotations

import math

import torch

QUANTISATION_SIGMA = 1.0 / (255 * math.sqrt(12))


def feature_variance(x: torch.Tensor) -> torch.Tensor:
    """Per-feature variance over the samples (dimension 0) of ``x``."""
    return x.double().var(dim=0, unbiased=False)


def feature_information(variance: torch.Tensor, sigma: torch.Tensor | float, floor: float = QUANTISATION_SIGMA,
                        ) -> torch.Tensor:
    """I_i(σ_i) = ½·log(1 + v_i / (σ_i² + floor²)) nats per feature."""
    sigma = torch.as_tensor(sigma, dtype=torch.float64, device=variance.device)
    return 0.5 * torch.log1p(variance.double() / (sigma.double() ** 2 + floor ** 2))


def information_removed(variance: torch.Tensor, sigma: torch.Tensor | float, keep: torch.Tensor | None = None,
                        floor: float = QUANTISATION_SIGMA) -> float:
    """Share of the input's information removed by noise σ (per feature or one value) and suppression (keep = 0)."""
    kept = feature_information(variance, sigma, floor)
    if keep is not None:
        kept = kept * keep.double()
    return float(1.0 - kept.sum() / feature_information(variance, 0.0, floor).sum())


def matching_gaussian_sigma(variance: torch.Tensor, removed: float, floor: float = QUANTISATION_SIGMA,
                            tol: float = 1e-6) -> float:
    """The one σ for all features whose information removed equals ``removed`` (bisection on log σ).

    Removal grows monotonically with σ from 0 (σ = 0) to 1 (σ → ∞); the search covers σ ∈ [1e-6, 1e6].
    """
    if not 0.0 <= removed < 1.0:
        raise ValueError(f"information removed must lie in [0, 1) for a finite Gaussian σ (got {removed})")
    lo, hi = math.log(1e-6), math.log(1e6)
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if information_removed(variance, math.exp(mid), floor=floor) < removed:
            lo = mid
        else:
            hi = mid
    return math.exp((lo + hi) / 2)
