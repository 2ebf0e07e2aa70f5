"""Typed, validated configuration of one Cloak trial (the flat dict Tune passes in; docs/mechanisms.md#cloak)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from pydantic import Field

from core.config import (
    AttackBudget,
    Checkpointing,
    Count,
    Epochs,
    ImageData,
    LearningRate,
    MembershipAttacks,
    Penalty,
    PositiveOrInf,
    Training,
)
from core.config_errors import problem
from trainables.cloak.info import QUANTISATION_SIGMA
from trainables.cloak.knn_info import KNN_DIMS, KNN_NEIGHBOURS

TASKS = {"gt5": 2, "digit": 10}  # target task -> number of classes ("gt5": digit > 5)


class CloakConfig(ImageData, Training, AttackBudget, Checkpointing, MembershipAttacks):
    """Every knob of a Cloak trial; grid axes are lam, T and M.

    ``lam`` weighs the target's cross-entropy against the noise term (loss = −log mean σ² + λ·CE), so a larger
    λ keeps more utility and adds less noise. ``T`` is an absolute threshold on σ (σ ≥ T: suppressed), so T ≥ M
    suppresses nothing. ``info_floor`` is the noise σ below which the information estimator
    (:mod:`trainables.cloak.info`) counts a pixel as intact (default: 8-bit quantisation noise). ``lr`` trains the
    target and the farm's attackers; ``cloak_lr`` trains μ, ρ and μ_s.
    """

    kind = "cloak"

    dataset: Literal["mnist32"] = Field("mnist32", description="Cloak's data set: AMNIST digits padded to 32×32 "
                                                               "(the only one it is built for).")
    task: Literal[tuple(TASKS)] = Field(  # type: ignore[valid-type]
        "gt5", description="Target task: gt5 (digit > 5) or digit.")
    lam: Penalty = Field(1.0, description="Weight λ of the target's cross-entropy against the noise term; a larger λ "
                                          "keeps more utility and adds less noise.")
    T: PositiveOrInf = Field(1.0, description="Threshold on σ: pixels with σ ≥ T are suppressed (inf: none).")
    M: float = Field(1.5, gt=0, le=1e9, description="Largest noise σ: σ = (1 + tanh ρ)/2 · M.")
    rho_init: float = Field(-4.0, ge=-1e9, lt=0, description="Initial ρ; < 0 so that σ starts near 0.")
    epochs: Epochs = 6
    suppression_epochs: int = Field(2, ge=0, le=10_000, description="The last epochs, which train the suppressed "
                                                                    "pixels' values μ_s; must be < epochs.")
    cloak_lr: LearningRate = Field(0.1, description="Adam step of μ, ρ and μ_s.")
    target_epochs: Epochs = Field(8, description="Training epochs of the cached target classifier.")
    noise_draws: Count = Field(3, description="Noise draws per image when measuring utility.")
    info_floor: float = Field(QUANTISATION_SIGMA, gt=0, le=1e9, description="Noise σ below which the information "
                              "estimator counts a pixel as intact (default: 8-bit quantisation noise).")
    knn_dims: int = Field(KNN_DIMS, ge=1, le=1024, description="Principal components of the images the kNN (KSG) "
                          "information estimator reads.")
    knn_neighbours: int = Field(KNN_NEIGHBOURS, ge=1, le=100, description="Neighbours k of the kNN (KSG) estimator.")
    baseline_attack: bool = Field(True, description="On checkpoint epochs, retrain the deep attacker on the Gaussian "
                                                    "baseline at Cloak's accuracy.")
    checkpoint_every: int = Field(0, ge=0, le=1_000_000, description="Checkpoint every this many steps (0: the last "
                                                                     "step only).")

    @property
    def num_classes(self) -> int:
        """Classes of the target's task."""
        return TASKS[self.task]

    @property
    def perturbation_epochs(self) -> int:
        """The first epochs train μ and ρ; the last ``suppression_epochs`` of ``epochs`` train μ_s."""
        return self.epochs - self.suppression_epochs

    def problems(self) -> Iterator[str]:
        """Suppression takes the last epochs, and at least one epoch is left for μ and ρ."""
        yield from super().problems()
        if self.suppression_epochs >= self.epochs:
            yield problem("suppression_epochs", f"must be in [0, epochs) = [0, {self.epochs})", self.suppression_epochs)
