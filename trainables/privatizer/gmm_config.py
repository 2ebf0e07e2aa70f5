"""Typed, validated configuration of one synthetic GMM privatizer point (the flat dict Tune passes in)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from trainables.typed_config import TypedConfig


def joint_us(k: float, rho: float = 0.5, beta: float = 0.5) -> list[list[float]]:
    """P(U=u, S=s) as [[P(0,0), P(0,1)], [P(1,0), P(1,1)]] for codependence k (docs/mechanisms.md#the-gaussian-mixture-check-gmm); ValueError if invalid."""
    table = [[1 - beta - rho + k * rho * beta, (1 - k * rho) * beta],
             [(1 - k * beta) * rho, k * rho * beta]]
    if not all(math.isfinite(p) and p >= 0 for row in table for p in row):
        raise ValueError(f"k={k} gives a negative probability in the joint of U and S (rho={rho}, beta={beta})")
    return table


@dataclass(frozen=True)
class PrivatizerGmmConfig(TypedConfig):
    """Every knob of a linear privatizer on the 2-D Gaussian mixture (docs/mechanisms.md#the-gaussian-mixture-check-gmm): k and alpha are the axes."""

    kind = "privatizer"

    mechanism: str = "privatizer"
    dataset: str = "gmm"
    k: float = 0.4  # codependence of U and S: 1 independent, 0 S = 1 - U
    alpha: float = 0.5  # weight of the secret term in the privatizer loss
    algorithm: int = 1  # 1: all estimators learned; 2: utility φ pre-trained on raw data and frozen (also P(u|q));
    # 3: utility φ and secret η both pre-trained on raw data and frozen (also P(u|q), P(s|q)): only θ trains
    sigma: float = 0.05  # std of X | U, S around [U, S]
    seed: int = 0
    n_samples: int = 2000  # training set (X, U, S); the filter noise z is redrawn every step
    steps: int = 300  # privatizer (filter) updates
    estimator_steps: int = 5  # estimator updates before each privatizer update; Algorithms 2 and 3 pre-train their
    # frozen estimators on raw data for steps × estimator_steps updates first (the budget φ gets in Algorithm 1)
    lr: float = 0.05  # Adam step of the filter θ
    estimator_lr: float = 0.01  # Adam step of the estimators (learned and pre-trained alike)
    hidden: int = 16  # width of the estimators' one hidden layer
    mc_samples: int = 20000  # Monte-Carlo samples of the exact-density information estimates
    eval_samples: int = 5000  # fresh samples for the estimators' balanced accuracies
    report_every: int = 0  # also report every this many steps (0: report once at the end)
    threads: int = 1

    def checks(self) -> list[tuple[bool, str]]:
        """Range checks, each with a message naming the value (an invalid joint of U, S raises here directly)."""
        joint_us(self.k)
        return [
            (math.isfinite(self.k) and 0 <= self.k <= 1, f"k must be in [0, 1] (got {self.k})"),
            (math.isfinite(self.alpha) and 0 <= self.alpha <= 1, f"alpha must be in [0, 1] (got {self.alpha})"),
            (self.algorithm in (1, 2, 3), f"algorithm must be 1, 2 or 3 (got {self.algorithm})"),
            (math.isfinite(self.sigma) and self.sigma > 0, f"sigma must be a finite value > 0 (got {self.sigma})"),
            (self.n_samples >= 2, f"n_samples must be >= 2 (got {self.n_samples})"),
            (self.steps >= 1, f"steps must be >= 1 (got {self.steps})"),
            (self.estimator_steps >= 1, f"estimator_steps must be >= 1 (got {self.estimator_steps})"),
            (math.isfinite(self.lr) and self.lr > 0, f"lr must be a finite value > 0 (got {self.lr})"),
            (math.isfinite(self.estimator_lr) and self.estimator_lr > 0,
             f"estimator_lr must be a finite value > 0 (got {self.estimator_lr})"),
            (self.hidden >= 1, f"hidden must be >= 1 (got {self.hidden})"),
            (self.mc_samples >= 100, f"mc_samples must be >= 100 (got {self.mc_samples})"),
            (self.eval_samples >= 100, f"eval_samples must be >= 100 (got {self.eval_samples})"),
            (self.report_every >= 0, f"report_every must be >= 0 (got {self.report_every})"),
            (self.threads >= 1, f"threads must be >= 1 (got {self.threads})"),
        ]
