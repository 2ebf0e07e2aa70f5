"""Typed, validated configuration of one α-MI releaser trial (the flat dict Tune passes in)."""
from __future__ import annotations

from pydantic import Field

from core.config import (
    AdvSteps,
    Alpha,
    AttackBudget,
    Checkpointing,
    Dataset,
    ImageData,
    MembershipAttacks,
    NoiseChannels,
    PretrainEpochs,
    PrivacyWeight,
    Training,
    Weight,
    Width,
)


class ReleaserConfig(ImageData, Training, AttackBudget, Checkpointing, MembershipAttacks):
    """Every knob of an AMNIST α-MI releaser trial; grid axes are alpha, lam and adv_steps (docs/mechanisms.md#α-mi-releaser)."""

    kind = "releaser"

    dataset: Dataset = "amnist"
    alpha: Alpha = 1.0
    lam: PrivacyWeight = 0.0
    adv_steps: AdvSteps = 1
    mse_weight: Weight = Field(10.0, description="Weight of ‖X − Y‖² in the distortion.")
    utility_ce_weight: Weight = Field(1.0, description="Weight of the utility net's cross-entropy in the distortion.")
    noise_channels: NoiseChannels = 4
    width: Width = Field(16, description="Base channel width of the releaser's conv encoder-decoder.")
    pretrain_epochs: PretrainEpochs = Field(1, description="Releaser as an autoencoder and the estimators on raw "
                                                           "images, before the game.")
