"""Typed, validated configuration of one AMNIST privatizer trial (the flat dict Tune passes in)."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from core.config import (
    AttackBudget,
    AttackerRecords,
    Checkpointing,
    Dataset,
    ImageData,
    InnerSteps,
    LearningRate,
    MembershipAttacks,
    MembershipCanaries,
    NoiseChannels,
    PretrainEpochs,
    Training,
    Unit,
    Width,
)


class PrivatizerConfig(ImageData, Training, AttackBudget, AttackerRecords, Checkpointing, MembershipAttacks,
                      MembershipCanaries):
    """Every knob of the AMNIST stochastic U-Net privatizer (docs/mechanisms.md#privatizer): the axes are alpha and algorithm."""

    kind = "privatizer"

    dataset: Dataset = "amnist"
    alpha: Unit = Field(0.5, description="Weight of the secret term of the privatizer loss.")
    algorithm: int = Field(1, ge=1, le=3, description="1: all estimators learned; 2: the provider's raw-data digit "
                                        "classifier φ frozen, also P(u|q); 3: φ and the raw-data thickness classifier η "
                                        "both frozen and applied to q.")
    estimator_steps: InnerSteps = Field(1, description="Estimator updates (fresh batches) before each privatizer update.")
    estimator_lr: Annotated[LearningRate | None, Field(description="Adam step of the learned estimators in the game "
                                                                   "(None: lr); faster than the U-Net's, they keep up "
                                                                   "with a release that dims instead of being fooled "
                                                                   "by it.")] = None
    width: Width = Field(16, description="Base channel width of the privatizer's U-Net.")
    noise_channels: NoiseChannels = 4
    pretrain_epochs: PretrainEpochs = Field(1, description="U-Net as an autoencoder and every estimator on raw images, "
                                                           "before the game.")
