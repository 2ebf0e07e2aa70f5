"""Pictures a trial writes next to its checkpoint (logged to MLflow by the driver)."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from core.image_grid import DPI, image_grid


def digit_thickness(digit: torch.Tensor, thick: torch.Tensor) -> list[str]:
    """Column captions of AMNIST images: the digit and its stroke thickness, e.g. '7 thick'."""
    return [f"{int(d)} {'thick' if int(t) else 'thin'}" for d, t in zip(digit.tolist(), thick.tolist(), strict=True)]


def save_release_grid(original: torch.Tensor, released: torch.Tensor, path: Path, title: str,
                      labels: Sequence[str] = ()) -> Path:
    """Two rows of images, originals above their releases, each column captioned with its ``labels`` entry
    (e.g. the digit and thickness the release should keep and hide), as a PNG."""
    fig = image_grid([original, released], title, ("original", "released"), [labels] if labels else ())
    fig.savefig(path, dpi=DPI)
    return path
