"""Typed, validated configuration of one digit prototype baseline trial (the flat dict Tune passes in)."""
from __future__ import annotations

from pydantic import Field

from core.config import AttackBudget, AttackerRecords, Dataset, ImageData


class DigitPrototypeConfig(ImageData, AttackBudget, AttackerRecords):
    """The data, the share of the raw image mixed back into the prototype, and the budget of the learned classifiers
    (the one that predicts each image's class, and those that score the release; docs/mechanisms.md#digit-prototype-baseline)."""

    kind = "digit prototype"

    dataset: Dataset = "amnist"
    mix: float = Field(0.0, ge=0, le=1, description="Share t of the raw image in the release Y = (1 − t)·prototype + "
                                                    "t·X (0: the prototype alone; 1: the raw image).")
    verbatim: float = Field(0.0, ge=0, le=1, description="Probability that a record is released as it is instead of as "
                                                         "its prototype, drawn per record and independently of its "
                                                         "secret (a per-record mix of the two releases; 0: none).")
    pose_bins: int = Field(0, ge=0, le=4, description="Bins of each pose feature (the centroid's row and column, the "
                                                      "slant, the width), by the training records' quantiles within "
                                                      "each digit: the release is the mean of the training records "
                                                      "sharing the digit and all four bins (0: the digit alone).")
