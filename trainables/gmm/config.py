"""Typed, validated configuration of one synthetic GMM privatizer point (the flat dict Tune passes in)."""
from __future__ import annotations

import math
from typing import Literal

from pydantic import Field

from core.config import Hidden, InnerSteps, LearningRate, Samples, Steps, TrialConfig, Unit


def joint_us(k: float, rho: float = 0.5, beta: float = 0.5) -> list[list[float]]:
    """P(U=u, S=s) as [[P(0,0), P(0,1)], [P(1,0), P(1,1)]] for codependence k
    (docs/mechanisms.md#the-gaussian-mixture-check-gmm); ValueError if invalid."""
    table = [[1 - beta - rho + k * rho * beta, (1 - k * rho) * beta],
             [(1 - k * beta) * rho, k * rho * beta]]
    if not all(math.isfinite(p) and p >= 0 for row in table for p in row):
        raise ValueError(f"k={k} gives a negative probability in the joint of U and S (rho={rho}, beta={beta})")
    return table


class PrivatizerGmmConfig(TrialConfig):
    """Every knob of a linear privatizer on the 2-D Gaussian mixture
    (docs/mechanisms.md#the-gaussian-mixture-check-gmm): k and alpha are the axes."""

    kind = "privatizer"

    dataset: Literal["gmm"] = Field("gmm", description="The synthetic Gaussian mixture the trial draws itself "
                                                       "(no registry entry).")
    k: Unit = Field(0.4, description="Codependence of U and S: 1 independent, 0 S = 1 − U.")
    alpha: Unit = Field(0.5, description="Weight of the secret term in the privatizer loss.")
    algorithm: int = Field(1, ge=1, le=3, description="1: all estimators learned; 2: utility φ pre-trained on raw data "
                           "and frozen (also P(u|q)); 3: utility φ and secret η both pre-trained on raw data and frozen "
                           "(also P(u|q), P(s|q)): only θ trains.")
    sigma: float = Field(0.05, gt=0, le=1e9, description="Std of X | U, S around [U, S].")
    n_samples: int = Field(2000, ge=2, le=10_000_000, description="Training set (X, U, S); the filter noise z is "
                                                                   "redrawn every step.")
    steps: Steps = Field(300, description="Privatizer (filter) updates.")
    estimator_steps: InnerSteps = Field(5, description="Estimator updates before each privatizer update; Algorithms 2 "
                                        "and 3 pre-train their frozen estimators on raw data for steps × estimator_steps "
                                        "updates first (the budget φ gets in Algorithm 1).")
    lr: LearningRate = Field(0.05, description="Adam step of the filter θ.")
    estimator_lr: LearningRate = Field(0.01, description="Adam step of the estimators (learned and pre-trained alike).")
    hidden: Hidden = Field(16, description="Width of the estimators' one hidden layer.")
    mc_samples: Samples = Field(20000, description="Monte-Carlo samples of the exact-density information estimates.")
    eval_samples: Samples = Field(5000, description="Fresh samples for the estimators' balanced accuracies.")
    report_every: int = Field(0, ge=0, le=1_000_000, description="Also report every this many steps (0: once at the end).")
