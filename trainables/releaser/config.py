"""Typed, validated configuration of one α-MI releaser trial (the flat dict Tune passes in)."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from core.config import (
    AdvSteps,
    Alpha,
    AttackBudget,
    AttackerRecords,
    Checkpointing,
    Dataset,
    ImageData,
    LearningRate,
    MembershipAttacks,
    MembershipCanaries,
    NoiseChannels,
    PretrainEpochs,
    PrivacyWeight,
    Training,
    Weight,
    Width,
)


class ReleaserConfig(ImageData, Training, AttackBudget, AttackerRecords, Checkpointing, MembershipAttacks,
                      MembershipCanaries):
    """Every knob of an AMNIST α-MI releaser trial; grid axes are alpha, lam and adv_steps (docs/mechanisms.md#α-mi-releaser)."""

    kind = "releaser"
    retired_keys = frozenset({"mse_weight"})  # a per-pixel MSE's weight, until the distortion became E‖X − Y‖²

    dataset: Dataset = "amnist"
    alpha: Alpha = 1.0
    lam: PrivacyWeight = 0.0
    adv_steps: AdvSteps = 1
    squared_error_weight: Weight = Field(1.0, description="Weight of E‖X − Y‖² (each image's squared error summed "
                                                          "over its pixels) in the distortion; 1 is the paper's.")
    utility_ce_weight: Weight = Field(1.0, description="Weight of the utility net's cross-entropy in the distortion.")
    distortion_target: float | None = Field(None, gt=0, le=1e6, description="The constrained form: the E‖X − Y‖² "
                                            "(utility/squared_error's units) the releaser keeps to while λ·Î_α pushes "
                                            "for privacy. The squared error's weight becomes a Lagrange multiplier, "
                                            "started at squared_error_weight and moved by dual ascent after every "
                                            "releaser step (None: the fixed weight).")
    multiplier_lr: float = Field(0.05, gt=0, le=100, description="Dual ascent step of the distortion multiplier per "
                                                                 "unit of relative violation, (E‖X − Y‖² − target) / target.")
    multiplier_kp: float = Field(2.0, ge=0, le=100, description="Proportional term of the distortion multiplier per unit "
                                                                "of relative violation (0: pure dual ascent; it damps "
                                                                "the multiplier's swings).")
    releaser_lr: Annotated[LearningRate | None, Field(description="Adam step of the releaser alone (None: lr); a "
                                                                  "slower releaser steadies the game at large α·λ.")] = None
    clip_norm: float = Field(0.0, ge=0, le=1e6, description="Clip the releaser's gradient to this global norm before "
                                                            "each step (0: no clipping).")
    player_input_norm: bool = Field(False, description="Standardise the in-game adversary's and utility net's inputs "
                                                       "per pixel (batch statistics): a release dimmed to a tiny range "
                                                       "then hides nothing from them (the farm's attackers read it).")
    adversary_restart_every: int = Field(0, ge=0, le=10_000, description="Every this many epochs the in-game adversary "
                                         "restarts from fresh weights and trains adversary_restart_steps batches on the "
                                         "current release before the releaser moves again (0: never). A restarted "
                                         "adversary reads what a fresh attacker reads, so the releaser cannot keep "
                                         "fooling one that lags behind it.")
    adversary_restart_steps: int = Field(100, ge=1, le=100_000, description="Batches a restarted adversary trains on "
                                                                           "the current release before the game goes on.")
    noise_channels: NoiseChannels = 4
    width: Width = Field(16, description="Base channel width of the releaser's conv encoder-decoder.")
    latent: int = Field(0, ge=0, le=4_096, description="Dense units of a global code between the releaser's encoder "
                                                       "and decoder (the noise channels join it as values); 0: the "
                                                       "7×7 convolutional code alone, where each output pixel sees "
                                                       "only a patch of the input.")
    pretrain_epochs: PretrainEpochs = Field(1, description="Releaser as an autoencoder and the estimators on raw "
                                                           "images, before the game.")
