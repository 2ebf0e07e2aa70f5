"""Typed, validated configuration of one anchored releaser trial (the flat dict Tune passes in)."""
from __future__ import annotations

from pydantic import Field

from trainables.releaser.config import ReleaserConfig


class AnchoredConfig(ReleaserConfig):
    """The α-MI releaser's knobs, with the residual's bound and the adversaries the releaser replays
    (docs/mechanisms.md#anchored-releaser)."""

    kind = "anchored releaser"

    residual_bound: float = Field(1.0, gt=0, le=1, description="Largest change the learned residual makes to a pixel "
                                                               "of the digit prototype (Y = clip(prototype + "
                                                               "bound·tanh(r), 0, 1)); 1 lets it reach any image.")
    replay: int = Field(4, ge=0, le=64, description="Earlier in-game adversaries (each as it stood when it was "
                                                    "restarted) kept beside the current one: the releaser's privacy "
                                                    "term is their mean, so it cannot win by fooling the newest "
                                                    "adversary alone (0: the current one only).")
