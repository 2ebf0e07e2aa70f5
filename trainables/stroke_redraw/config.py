"""Typed, validated configuration of one stroke redraw baseline trial (the flat dict Tune passes in)."""
from __future__ import annotations

from pydantic import Field

from core.config import AttackBudget, AttackerRecords, Dataset, ImageData


class StrokeRedrawConfig(ImageData, AttackBudget, AttackerRecords):
    """The data, the redraw's three knobs (binarising threshold, pen radius, blur) and the budget of the learned
    classifiers that score the release (docs/mechanisms.md#stroke-redraw-baseline); nothing is trained but those."""

    kind = "stroke redraw"

    dataset: Dataset = "amnist"
    threshold: float = Field(0.5, gt=0, lt=1, description="Pixels above it are ink (pixels in [0, 1]) before the "
                                                          "strokes are thinned to their one-pixel skeleton.")
    radius: float = Field(1.0, ge=0, le=5, description="Radius in pixels of the disk the skeleton is redrawn with "
                                                       "(0: the skeleton itself; 1: a plus; 1.5: a 3×3 square).")
    blur: float = Field(0.5, ge=0, le=5, description="Standard deviation in pixels of the Gaussian blur over the "
                                                     "redrawn strokes (0: none).")
