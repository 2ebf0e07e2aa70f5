"""Typed, validated configuration of one Gaussian-noise baseline trial (the flat dict Tune passes in)."""
from __future__ import annotations

from pydantic import Field

from core.config import AttackBudget, AttackerRecords, Dataset, ImageData


class NoiseConfig(ImageData, AttackBudget, AttackerRecords):
    """The data, the noise level σ (the grid axis) and the budget of the learned classifiers that score the release
    (docs/mechanisms.md#gaussian-noise-baseline); nothing is trained but those classifiers."""

    kind = "noise"

    dataset: Dataset = "amnist"
    sigma: float = Field(0.5, ge=0, le=100, description="Standard deviation σ of the Gaussian noise added to every "
                                                        "pixel (pixels in [0, 1]; the release is clipped to [0, 1]).")
