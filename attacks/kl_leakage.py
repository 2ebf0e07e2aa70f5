"""KL membership leakage of one record (docs/estimators.md#kl-membership-leakage).

ρ_KL = KL(p1||p0) + KL(p0||p1), with p1 / p0 the distributions of trained parameters with / without
the record, each approximated by a Gaussian fitted to Monte-Carlo retrainings. The reported ρ_KL is the
expectation of this over records: average :func:`monte_carlo_kl_leakage` over the records of interest.
Bounds: ρ_MI ≤ ρ_KL / 4 and the membership adversary's success (advantage) ≤ ½·sqrt(ρ_KL).
Worker-side code: never imports ``platform.*``.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch


def gaussian_kl(mu0: np.ndarray, cov0: np.ndarray, mu1: np.ndarray, cov1: np.ndarray) -> float:
    """KL(N(mu0, cov0) || N(mu1, cov1)) in nats, via solves and log-determinants (no explicit inverse)."""
    mu0, mu1 = np.atleast_1d(np.asarray(mu0, dtype=float)), np.atleast_1d(np.asarray(mu1, dtype=float))
    cov0, cov1 = np.atleast_2d(np.asarray(cov0, dtype=float)), np.atleast_2d(np.asarray(cov1, dtype=float))
    diff = mu1 - mu0
    trace = float(np.trace(np.linalg.solve(cov1, cov0)))
    mahalanobis = float(diff @ np.linalg.solve(cov1, diff))
    sign0, logdet0 = np.linalg.slogdet(cov0)
    sign1, logdet1 = np.linalg.slogdet(cov1)
    if sign0 <= 0 or sign1 <= 0:
        raise ValueError("covariances must be positive definite")
    return 0.5 * (trace + mahalanobis - mu0.size + logdet1 - logdet0)


def symmetric_kl(mu1: np.ndarray, cov1: np.ndarray, mu0: np.ndarray, cov0: np.ndarray) -> float:
    """KL(p1||p0) + KL(p0||p1) for Gaussians p1, p0: the leakage ρ_KL of one record."""
    return gaussian_kl(mu1, cov1, mu0, cov0) + gaussian_kl(mu0, cov0, mu1, cov1)


@dataclass(frozen=True)
class KlLeakage:
    """ρ_KL of a record with its two bounds: ρ_MI ≤ ρ_KL/4 and adversary success ≤ ½·sqrt(ρ_KL).

    ``success_bound`` is clipped at 1 (an advantage cannot exceed 1, so larger values say nothing).
    """

    rho_kl: float
    mi_bound: float
    success_bound: float
    n_runs: int

    @classmethod
    def from_rho(cls, rho_kl: float, n_runs: int) -> KlLeakage:
        """Derive both bounds from ρ_KL so they can never disagree with it."""
        rho_kl = float(rho_kl)
        return cls(rho_kl, rho_kl / 4, min(1.0, 0.5 * math.sqrt(max(rho_kl, 0.0))), n_runs)

    def logged(self, prefix: str = "leakage/kl") -> dict[str, float]:
        """Metrics under their shared MLflow names (docs/metrics.md#metric-names: ``leakage/<name>``)."""
        return {f"{prefix}/rho": self.rho_kl, f"{prefix}/mi_bound": self.mi_bound,
                f"{prefix}/success_bound": self.success_bound}


def _gaussian_fit(params: np.ndarray, ridge: float) -> tuple[np.ndarray, np.ndarray]:
    """Sample mean and sample covariance (+ ridge·I, so a deterministic fit stays invertible) of rows."""
    cov = np.atleast_2d(np.cov(params, rowvar=False)) + ridge * np.eye(params.shape[1])
    return params.mean(axis=0), cov


def monte_carlo_kl_leakage(fit: Callable[[np.ndarray, np.ndarray, int], np.ndarray], x: np.ndarray,
                           y: np.ndarray, record: int, n_runs: int, seed: int = 0,
                           ridge: float = 1e-6) -> KlLeakage:
    """ρ_KL of row ``record`` from ``n_runs`` retrainings with and without it, Gaussian-approximated.

    ``fit(x, y, run_seed)`` returns the flat parameter vector; all training randomness comes from
    ``run_seed``. Run i uses the same seed with and without the record (common random numbers):
    each set is still an i.i.d. sample of its own distribution, but the two Gaussians' estimation
    errors largely cancel, which removes the positive bias that independent runs leave in ρ_KL.
    """
    if n_runs < 2:
        raise ValueError("need n_runs >= 2 to estimate a covariance")
    keep = np.arange(len(x)) != record
    seeds = np.random.SeedSequence(seed).generate_state(n_runs)
    with_record = np.stack([np.ravel(fit(x, y, int(s))) for s in seeds])
    without = np.stack([np.ravel(fit(x[keep], y[keep], int(s))) for s in seeds])
    mu1, cov1 = _gaussian_fit(with_record, ridge)
    mu0, cov0 = _gaussian_fit(without, ridge)
    return KlLeakage.from_rho(symmetric_kl(mu1, cov1, mu0, cov0), n_runs)


def fit_logistic(x: np.ndarray, y: np.ndarray, seed: int, lam: float, sigma: float, epochs: int) -> np.ndarray:
    """L2-regularised logistic regression by full-batch GD, then output perturbation N(0, σ²): [w, b].

    Minimises mean log-loss + (λ/2)·||w||² (bias unpenalised) from zero with step 1/L, L the
    gradient's Lipschitz constant, so training is deterministic and the only randomness is the
    output noise drawn from ``seed`` and added to weights and bias alike (σ is the membership
    preset's "additive noise" axis).
    """
    xt = torch.as_tensor(np.asarray(x), dtype=torch.float64)
    yt = torch.as_tensor(np.asarray(y), dtype=torch.float64).ravel()
    design = torch.cat([xt, torch.ones(len(xt), 1, dtype=torch.float64)], dim=1)
    design_t = design.T.contiguous()
    n, p = design.shape
    # Log-loss Hessian <= DᵀD/(4n): its top eigenvalue gives the safe step. numpy's eigvalsh on this
    # tiny p×p matrix takes microseconds; torch's LAPACK call took ~16 ms on a busy 2-core machine.
    step = 1.0 / (0.25 * float(np.linalg.eigvalsh((design_t @ design / n).numpy())[-1]) + lam)
    penalty = torch.full((p,), float(lam), dtype=torch.float64)
    penalty[-1] = 0.0
    decay = 1.0 - step * penalty
    theta = torch.zeros(p, dtype=torch.float64)
    for _ in range(epochs):
        theta = decay * theta - (step / n) * (design_t @ (torch.sigmoid(design @ theta) - yt))
    return theta.numpy() + np.random.default_rng(seed).normal(0.0, sigma, size=p)
