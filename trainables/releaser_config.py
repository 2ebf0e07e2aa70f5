"""Typed, validated configuration of one α-MI releaser trial (the flat dict Tune passes in)."""
from __future__ import annotations

from pydantic import Field

from core.config import (Alpha, AttackBudget, Checkpointing, Dataset, ImageData, MembershipAttacks, Penalty, PretrainEpochs,
                         Training, Weight, Width)


class ReleaserConfig(ImageData, Training, AttackBudget, Checkpointing, MembershipAttacks):
    """Every knob of an AMNIST α-MI releaser trial; grid axes are alpha, lam and adv_steps (docs/mechanisms.md#α-mi-releaser)."""

    kind = "releaser"

    dataset: Dataset = "amnist"
    alpha: Alpha = 1.0
    lam: Penalty = Field(0.0, description="Weight λ of the α-MI privacy term against the distortion.")
    adv_steps: int = Field(1, ge=1, le=1_000, description="Adversary updates k per releaser update.")
    mse_weight: Weight = Field(10.0, description="Weight of ‖X − Y‖² in the distortion.")
    utility_ce_weight: Weight = Field(1.0, description="Weight of the utility net's cross-entropy in the distortion.")
    noise_channels: int = Field(4, ge=0, le=256, description="Noise channels fed to the releaser next to the image.")
    width: Width = Field(16, description="Base channel width of the releaser's U-Net.")
    pretrain_epochs: PretrainEpochs = Field(1, description="Releaser as an autoencoder and the estimators on raw "
                                                           "images, before the game.")
