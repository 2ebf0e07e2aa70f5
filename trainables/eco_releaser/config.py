"""Typed, validated configuration of one ECO α-MI releaser trial (the flat dict Tune passes in)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.config import (
    AdvSteps,
    Alpha,
    AttackBudget,
    BatchSize,
    CheckpointEvery,
    Checkpointing,
    Epochs,
    Hidden,
    Layers,
    LearningRate,
    LocalData,
    PretrainEpochs,
    PrivacyWeight,
    Seed,
    Training,
)


class EcoConfig(LocalData, Training, AttackBudget, Checkpointing):
    """Every knob of an ECO releaser trial; grid axes are alpha, lam, adv_steps (and releaser_si in ``eco-si``)."""

    kind = "eco"

    dataset: Literal["eco"] = Field("eco", description="The ECO smart-meter data (real files or the synthetic stand-in; "
                                                       "the only one it is built for).")
    alpha: Alpha = 1.0
    lam: PrivacyWeight = 0.0
    adv_steps: AdvSteps = 1
    side_info: bool = Field(False, description="The in-game adversary and the deep attacker see side information "
                                               "(weekday, month) next to the release.")
    releaser_si: int = Field(0, ge=0, le=1, description="1: the releaser sees the side information too (a number, so "
                                                        "it can be a grid axis).")
    data_seed: Seed = Field(0, description="Seed of the synthetic generator and of the train/test split.")
    data_root: str = Field("", description="The real ECO folder; empty = the synthetic generator.")
    households: int = Field(5, ge=1, le=5, description="Households used.")
    days: int = Field(245, ge=14, le=100_000, description="Days per household.")
    max_missing_hours: int = Field(2, ge=0, le=24, description="A day with at most this many missing hours keeps "
                                                               "them interpolated; others are dropped.")
    test_fraction: float = Field(0.25, gt=0, lt=1, description="Share of the days held out for testing.")
    window_hours: int = Field(24, ge=2, le=24 * 28, description="Hours per sequence (window of consecutive hours of one "
                                                                "household).")
    window_stride_hours: int = Field(2, ge=1, le=24 * 28, description="Hours between the starts of successive windows "
                                                                      "(2: the paper's 11,225 sequences; 24 with 24-hour "
                                                                      "windows: one per day, midnight to midnight).")
    epochs: Epochs = 20
    pretrain_epochs: PretrainEpochs = Field(5, description="Releaser pre-trained as an identity map before the game.")
    batch_size: BatchSize = 64
    releaser_lr: LearningRate = Field(3e-4, description="Adam step of the releaser in the game.")
    pretrain_lr: LearningRate = Field(3e-3, description="Adam step of the releaser's identity pre-training.")
    clip_norm: float = Field(1.0, gt=0, le=1e9, description="Gradient-norm clip of the releaser's game steps.")
    noise_dim: int = Field(8, ge=0, le=4_096, description="Noise inputs of the releaser per hour.")
    releaser_hidden: Hidden = Field(64, description="Hidden units of the releaser's LSTM.")
    releaser_layers: Layers = Field(4, description="Layers of the releaser's LSTM.")
    adversary_hidden: Hidden = Field(32, description="Hidden units of the adversary's LSTM (and the deep attacker's "
                                                     "base width).")
    adversary_layers: Layers = Field(3, description="Layers of the adversary's LSTM.")
    checkpoint_every: CheckpointEvery = 5
    figure_days: int = Field(7, ge=1, le=366, description="Days shown in each checkpoint's figure.")
