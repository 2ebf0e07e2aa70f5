"""Where a learning curve is heading: a power law a − b·n^(−c) fitted to accuracy against training records, with a
95 % interval for its asymptote a (docs/attacks.md#is-the-attacker-still-learning).

The fit weights each point by its own standard error; the interval is a parametric bootstrap (the fitted curve plus
each point's noise, refitted). b ≥ 0 (more records never hurt on average) and c ∈ [C_MIN, C_MAX]: a smaller c would
let any rise, however small, extrapolate to an arbitrarily high asymptote. For each c on a fine grid the law is linear
in a and b, so every refit is a closed-form weighted regression; the point fit is then polished by scipy's
``curve_fit``. The estimate is capped at 1 and never below the last measured point less its noise; a curve too short,
or a fit that fails, gives no estimate and says why.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit

MIN_POINTS = 3  # a three-parameter law needs three points
C_GRID = np.linspace(0.25, 2.0, 176)  # the exponents c tried (steps of 0.01)
DRAWS = 2000  # bootstrap refits
Z95 = 1.959964


@dataclass(frozen=True)
class Saturation:
    """The fitted asymptote with its 95 % interval, or None with ``reason`` saying why there is no estimate."""

    estimate: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    reason: str = ""

    def logged(self, prefix: str) -> dict[str, float]:
        """``<prefix>``, ``<prefix>/ci_low`` and ``<prefix>/ci_high``; nothing without an estimate."""
        if self.estimate is None or self.ci_low is None or self.ci_high is None:
            return {}
        return {prefix: self.estimate, f"{prefix}/ci_low": self.ci_low, f"{prefix}/ci_high": self.ci_high}


def power_law(n: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
    """a − b·n^(−c)."""
    return a - b * np.power(n, -c)


def grid_fit(n: np.ndarray, ys: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(a, b, c) per row of ``ys`` [D, N]: for every c of :data:`C_GRID` the weighted least-squares a and b ≥ 0 in
    closed form, the c with the least weighted squared error kept; returns [D, 3]."""
    x = np.power(n[None, :], -C_GRID[:, None])  # [G, N]
    w = w / w.sum()
    x_mean = x @ w  # [G]
    y_mean = ys @ w  # [D]
    dx = x - x_mean[:, None]
    slope = ((ys - y_mean[:, None]) * w) @ dx.T / ((dx**2) @ w)[None, :]  # [D, G]: dy/dx = −b
    b = np.maximum(-slope, 0.0)
    a = y_mean[:, None] + b * x_mean[None, :]
    residual = ys[:, None, :] - (a[:, :, None] - b[:, :, None] * x[None, :, :])  # [D, G, N]
    best = np.argmin((residual**2) @ w, axis=1)
    rows = np.arange(len(ys))
    return np.stack([a[rows, best], b[rows, best], C_GRID[best]], axis=1)


def polish(n: np.ndarray, y: np.ndarray, sigma: np.ndarray | None, start: np.ndarray) -> np.ndarray:
    """``start`` refined by scipy's bounded least squares to machine precision (``start`` itself where that fails)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimizeWarning)
            params, _ = curve_fit(power_law, n, y, p0=np.clip(start, [-np.inf, 0, C_GRID[0]], [np.inf, np.inf, C_GRID[-1]]),
                                  sigma=sigma, absolute_sigma=True,
                                  bounds=([-np.inf, 0.0, C_GRID[0]], [np.inf, np.inf, C_GRID[-1]]),
                                  xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=10_000)
    except (RuntimeError, ValueError):
        return start
    chi = ((y - power_law(n, *params)) / (1.0 if sigma is None else sigma)) ** 2
    chi0 = ((y - power_law(n, *start)) / (1.0 if sigma is None else sigma)) ** 2
    return params if chi.sum() <= chi0.sum() else start


def fit_power_law(n: np.ndarray, y: np.ndarray, sigma: np.ndarray | None = None) -> np.ndarray:
    """(a, b, c) of the power law through the points (weighted by ``sigma``, their standard errors, where given)."""
    weights = np.ones_like(y) if sigma is None else 1.0 / sigma**2
    return polish(n, y, sigma, grid_fit(n, y[None, :], weights)[0])


def saturation(records: Sequence[float] | np.ndarray, accuracy: Sequence[float] | np.ndarray,
               half_widths: Sequence[float] | np.ndarray,
               seed: int = 0) -> Saturation:
    """The power law's asymptote for accuracies measured at ``records`` (ascending), each with the half-width of its
    95 % interval; noise-free points (half-widths 0) give the exact fit with a zero-width interval."""
    n, y, half = (np.asarray(v, float) for v in (records, accuracy, half_widths))
    distinct = len(set(n.tolist()))
    if distinct < MIN_POINTS:
        return Saturation(None, reason=f"{distinct} distinct record counts, a fit needs {MIN_POINTS}")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(half)) and np.all(half >= 0) and np.all(n > 0)):
        return Saturation(None, reason="a point's records, accuracy or interval is not a usable number")
    sigma = half / Z95 if np.all(half > 0) else None
    params = fit_power_law(n, y, sigma)
    if not np.all(np.isfinite(params)):
        return Saturation(None, reason="the power law did not fit")
    floor, cap = float(y[-1] - half[-1]), 1.0
    estimate = min(max(float(params[0]), floor), cap)
    if sigma is None:
        return Saturation(estimate, estimate, estimate)
    fitted = power_law(n, *params)
    draws = fitted[None, :] + np.random.default_rng(seed).normal(0.0, 1.0, (DRAWS, len(n))) * sigma[None, :]
    asymptotes = grid_fit(n, draws, 1.0 / sigma**2)[:, 0]
    low, high = (min(max(float(q), floor), cap) for q in np.quantile(asymptotes, [0.025, 0.975]))
    return Saturation(estimate, min(low, estimate), max(high, estimate))
