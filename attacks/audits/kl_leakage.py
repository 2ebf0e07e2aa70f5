"""KL membership leakage of one record, estimated without the plug-in bias (docs/membership.md#kl-membership-leakage).

ρ_KL = KL(p1||p0) + KL(p0||p1), with p1 / p0 the distributions of trained parameters over random training sets
with / without the record (and the training noise), each approximated by a Gaussian fitted to independent Monte-Carlo
runs. The reported ρ_KL is its expectation over records: :meth:`KlLeakage.from_records`.
Bounds: ρ_MI ≤ ρ_KL / 4 and the membership adversary's success (advantage) ≤ ½·sqrt(ρ_KL).
Worker-side code: never imports ``platform.*``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from core.metrics import Z95


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
    """KL(p1||p0) + KL(p0||p1) for known Gaussians p1, p0 (the log-determinants cancel): ρ_KL of one record."""
    return gaussian_kl(mu1, cov1, mu0, cov0) + gaussian_kl(mu0, cov0, mu1, cov1)


def gaussian_fit(params: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sample mean and unbiased sample covariance (ddof 1) of the rows of ``params`` (runs × parameters)."""
    params = np.asarray(params, dtype=np.float64)
    return params.mean(axis=0), np.atleast_2d(np.cov(params, rowvar=False))


def unbiased_symmetric_kl(with_record: np.ndarray, without: np.ndarray) -> float:
    """ρ_KL of two Gaussian laws from independent samples of each (rows = runs): unbiased, so it can fall below 0.

    With n runs of p parameters, E[S⁻¹] = (n−1)/(n−p−2)·Σ⁻¹ and E[(m1−m0)(m1−m0)ᵀ] = ΔΔᵀ + Σ1/n1 + Σ0/n0, so each
    trace term tr(S_a⁻¹S_b) is scaled by c_a = (n_a−p−2)/(n_a−1), and each Mahalanobis term c_a·Δ̂ᵀS_a⁻¹Δ̂ loses the
    means' own spread (the corrected trace over n_b, plus p/n_a). The log-determinants cancel in the symmetric sum.
    """
    sets = (np.asarray(with_record, dtype=np.float64), np.asarray(without, dtype=np.float64))
    p = sets[0].shape[1]
    runs = [len(s) for s in sets]
    if min(runs) <= p + 2:
        raise ValueError(f"the Gaussian KL estimate needs more than p + 2 = {p + 2} Monte-Carlo runs per side for "
                         f"p = {p} parameters (got {min(runs)})")
    (m1, s1), (m0, s0) = gaussian_fit(sets[0]), gaussian_fit(sets[1])
    c1, c0 = ((n - p - 2) / (n - 1) for n in runs)
    n1, n0 = runs
    diff = m1 - m0
    trace_10 = c0 * float(np.trace(np.linalg.solve(s0, s1)))  # unbiased tr(Σ0⁻¹Σ1)
    trace_01 = c1 * float(np.trace(np.linalg.solve(s1, s0)))
    maha_0 = c0 * float(diff @ np.linalg.solve(s0, diff)) - trace_10 / n1 - p / n0  # unbiased ΔᵀΣ0⁻¹Δ
    maha_1 = c1 * float(diff @ np.linalg.solve(s1, diff)) - trace_01 / n0 - p / n1
    return 0.5 * (trace_10 + trace_01 - 2 * p + maha_0 + maha_1)


def box_stats(values: np.ndarray) -> dict[str, float]:
    """Quartiles and 1.5·IQR whiskers (clipped to the data, as matplotlib draws them) of per-record values."""
    values = np.sort(np.asarray(values, dtype=np.float64))
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    low, high = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    return {"q1": float(q1), "median": float(median), "q3": float(q3),
            "whislo": float(values[values >= low].min()), "whishi": float(values[values <= high].max())}


@dataclass(frozen=True)
class KlLeakage:
    """ρ_KL with its two bounds (ρ_MI ≤ ρ_KL/4, adversary success ≤ ½·sqrt(ρ_KL)) and its spread over records.

    ``success_bound`` is clipped to [0, 1] (an advantage cannot exceed 1; an unbiased ρ may fall below 0).
    ``interval`` is the 95 % normal interval of the mean over records (absent for one record); ``boxes`` the box-plot
    statistics of the per-record values.
    """

    rho_kl: float
    mi_bound: float
    success_bound: float
    n_runs: int
    interval: tuple[float, float] | None = None
    boxes: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_rho(cls, rho_kl: float, n_runs: int) -> KlLeakage:
        """Derive both bounds from ρ_KL so they can never disagree with it."""
        rho_kl = float(rho_kl)
        return cls(rho_kl, rho_kl / 4, min(1.0, 0.5 * math.sqrt(max(rho_kl, 0.0))), n_runs)

    @classmethod
    def from_records(cls, per_record: np.ndarray, n_runs: int) -> KlLeakage:
        """ρ_KL as the mean over records' estimates, with its interval and box-plot statistics."""
        per_record = np.asarray(per_record, dtype=np.float64)
        mean = float(per_record.mean())
        half = Z95 * float(per_record.std(ddof=1)) / math.sqrt(len(per_record)) if len(per_record) > 1 else None
        base = cls.from_rho(mean, n_runs)
        return cls(base.rho_kl, base.mi_bound, base.success_bound, n_runs,
                   None if half is None else (mean - half, mean + half), box_stats(per_record))

    def logged(self, prefix: str = "leakage/kl") -> dict[str, float]:
        """Metrics under their shared MLflow names (docs/metrics.md#metric-names: ``leakage/<name>``)."""
        out = {f"{prefix}/rho": self.rho_kl, f"{prefix}/mi_bound": self.mi_bound,
               f"{prefix}/success_bound": self.success_bound}
        if self.interval is not None:
            out |= {f"{prefix}/rho/ci_low": self.interval[0], f"{prefix}/rho/ci_high": self.interval[1]}
        return out | {f"{prefix}/rho/{name}": value for name, value in self.boxes.items()}
