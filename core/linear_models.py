"""Linear models of the membership experiments, fitted to a stack of training sets at once (Monte Carlo needs thousands).

Both minimise a mean loss plus (λ/2)·‖w‖² over θ = [w, b] (bias unpenalised) and then add output noise
N(0, σ²) to every parameter: ``linear`` is ridge regression on the 0/1 label in closed form (mean ½·squared error,
the paper's model), ``logistic`` is L2 logistic regression by full-batch gradient descent.
"""
from __future__ import annotations

import numpy as np

MODELS = ("linear", "logistic")


def design(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` with a trailing 1 (the bias column): (..., n, p_x) -> (..., n, p_x + 1)."""
    x = np.asarray(x, dtype=np.float64)
    return np.concatenate([x, np.ones((*x.shape[:-1], 1))], axis=-1)


def _penalty(p: int, lam: float) -> np.ndarray:
    """λ on the weights' diagonal, 0 on the bias."""
    diag = np.full(p, float(lam))
    diag[-1] = 0.0
    return np.diag(diag)


def fit_ridge(x: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """Closed-form ridge θ = (DᵀD/n + λI')⁻¹ Dᵀy/n per training set: x (..., n, p_x), y (..., n) -> (..., p_x + 1)."""
    d = design(x)
    n, p = d.shape[-2:]
    gram = np.swapaxes(d, -1, -2) @ d / n + _penalty(p, lam)
    rhs = np.swapaxes(d, -1, -2) @ np.asarray(y, dtype=np.float64)[..., None] / n
    return np.linalg.solve(gram, rhs)[..., 0]


def fit_logistic(x: np.ndarray, y: np.ndarray, lam: float, steps: int) -> np.ndarray:
    """L2 logistic regression by ``steps`` full-batch gradient steps from 0, per training set (deterministic).

    Step 1/L per set, L = λ + the top eigenvalue of DᵀD/(4n) (the log-loss Hessian's bound), so every set descends
    monotonically towards its own optimum.
    """
    d = design(x)
    y = np.asarray(y, dtype=np.float64)
    n, p = d.shape[-2:]
    dt = np.swapaxes(d, -1, -2)
    step = 1.0 / (0.25 * np.linalg.eigvalsh(dt @ d / n)[..., -1] + lam)
    decay = 1.0 - step[..., None] * np.diag(_penalty(p, lam))
    theta = np.zeros((*d.shape[:-2], p))
    for _ in range(steps):
        logits = (d @ theta[..., None])[..., 0]
        grad = (dt @ (1.0 / (1.0 + np.exp(-logits)) - y)[..., None])[..., 0] / n
        theta = decay * theta - step[..., None] * grad
    return theta


def fit(model: str, x: np.ndarray, y: np.ndarray, lam: float, sigma: float, rng: np.random.Generator,
        gd_steps: int) -> np.ndarray:
    """Train ``model`` on each training set of the stack, then release θ + N(0, σ²I) (noise drawn from ``rng``)."""
    if model == "linear":
        theta = fit_ridge(x, y, lam)
    elif model == "logistic":
        theta = fit_logistic(x, y, lam, gd_steps)
    else:
        raise ValueError(f"model must be one of {', '.join(MODELS)} (got {model!r})")
    return theta + rng.normal(0.0, sigma, size=theta.shape)


def scores(theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The model's raw output x·w + b (a regression value for ``linear``, a logit for ``logistic``)."""
    return np.asarray(x, dtype=np.float64) @ theta[:-1] + theta[-1]


def score_losses(readout: str, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-sample loss of raw outputs z: ½·squared error for a ``linear`` readout, log-loss for a ``logistic`` one."""
    if readout == "linear":
        return 0.5 * (np.asarray(y, dtype=np.float64) - z) ** 2
    return np.logaddexp(0.0, np.where(np.asarray(y) == 1, -z, z))


def score_predictions(readout: str, z: np.ndarray) -> np.ndarray:
    """0/1 predictions of raw outputs z: above ½ (``linear``) or above 0 (a logit)."""
    return (z > (0.5 if readout == "linear" else 0.0)).astype(np.int64)


def losses(model: str, theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-sample training loss (Yeom's membership signal): ½·squared error for ``linear``, log-loss for ``logistic``."""
    return score_losses(model, scores(theta, x), y)


def predict(model: str, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """0/1 predictions: regression value above ½ (``linear``) or logit above 0 (``logistic``)."""
    return score_predictions(model, scores(theta, x))


def two_class_logit(model: str, theta: np.ndarray) -> np.ndarray:
    """θ' with x·w' + b' the logit of class 1: the model as a two-class network for likelihood attacks (RMIA, LiRA).

    For ``linear`` this reads the regression value s as a Gaussian likelihood, p(y) ∝ exp(−(y − s)²), whose class-1
    logit is 2s − 1; ``logistic`` is already a logit.
    """
    if model == "logistic":
        return np.asarray(theta, dtype=np.float64)
    out = 2.0 * np.asarray(theta, dtype=np.float64)
    out[-1] -= 1.0
    return out
