"""The stroke redraw baseline: binarise, thin every stroke to its skeleton, redraw it with one pen, blur; nothing
learned (docs/mechanisms.md#stroke-redraw-baseline).

Stroke thickness is what AMNIST hides, and a skeleton has none: the redraw gives every digit the same pen, so an
attacker keeps only what the skeleton's shape and length say of the thickness. It is deterministic and runs per image
on the CPU (scikit-image's skeletonisation, scipy's dilation and blur, the whole batch at once where they can).
"""
from __future__ import annotations

import math

import numpy as np
import torch
from scipy import ndimage
from skimage.morphology import skeletonize
from torch import nn

from trainables.shared.image_data import counts_for, image_layout
from trainables.shared.image_release import FixedRelease
from trainables.stroke_redraw.config import StrokeRedrawConfig


def disk(radius: float) -> np.ndarray:
    """The footprint of a pen of any real radius: the pixels within Euclidean distance ``radius`` of the centre."""
    reach = math.floor(radius)
    rows, cols = np.mgrid[-reach:reach + 1, -reach:reach + 1]
    return rows ** 2 + cols ** 2 <= radius ** 2 + 1e-9


def redraw(images: np.ndarray, threshold: float, radius: float, blur: float) -> np.ndarray:
    """Grayscale images [N, H, W] in [0, 1] with every stroke redrawn: pixels above ``threshold`` are ink, each
    image's ink is thinned to its skeleton (scikit-image), the skeletons are drawn with a disk of ``radius`` and
    blurred with a Gaussian of standard deviation ``blur`` (pixels). Returns float32 images in [0, 1]."""
    skeletons = np.stack([skeletonize(ink) for ink in images > threshold]) if len(images) else images > threshold
    drawn = ndimage.binary_dilation(skeletons, structure=disk(radius)[None]).astype(np.float32)
    return ndimage.gaussian_filter(drawn, sigma=(0.0, blur, blur)) if blur > 0 else drawn


def check_grayscale(cfg: StrokeRedrawConfig) -> None:
    """A one-line ValueError unless the config's data set holds single-channel images (strokes on a background)."""
    channels = image_layout(cfg)[0][0]
    if channels != 1:
        raise ValueError(f"the stroke redraw needs grayscale images; dataset {cfg.dataset!r} has {channels} channels "
                         "(use amnist, mnist32 or fashion_mnist)")


class StrokeRedraw(nn.Module):
    """The redraw as a fixed map Y = redraw(X) of single-channel images; its knobs are untrained parameters."""

    def __init__(self, threshold: float, radius: float, blur: float) -> None:
        super().__init__()
        # parameters rather than plain numbers: they are saved with the checkpoint and move with .to()
        self.knobs = nn.Parameter(torch.tensor([threshold, radius, blur], dtype=torch.float64), requires_grad=False)

    def forward(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """The redrawn images (``generator`` unused: the redraw is deterministic)."""
        threshold, radius, blur = self.knobs.tolist()
        drawn = redraw(x[:, 0].detach().cpu().numpy(), threshold, radius, blur)
        return torch.from_numpy(drawn).unsqueeze(1).to(device=x.device, dtype=x.dtype)


class StrokeRedrawBaseline(FixedRelease):
    """Every stroke of the config's grayscale image set redrawn at one width, scored like the learned image mechanisms."""

    name = "stroke-redraw"
    config_class = StrokeRedrawConfig
    trainable_name = "train_stroke_redraw"
    cfg: StrokeRedrawConfig

    @property
    def net(self) -> StrokeRedraw:
        return self.redraw

    @property
    def knobs(self) -> tuple[float, float, float]:
        """The config's (threshold, radius, blur)."""
        return self.cfg.threshold, self.cfg.radius, self.cfg.blur

    def build(self) -> None:
        check_grayscale(self.cfg)
        self.redraw = StrokeRedraw(*self.knobs).to(self.device)

    def state(self) -> dict:
        return {"redraw": self.redraw.state_dict()}

    def load_state(self, state: dict) -> None:
        self.redraw.load_state_dict(state["redraw"])
        held = tuple(self.redraw.knobs.tolist())
        if not np.allclose(held, self.knobs, rtol=1e-6, atol=1e-9):
            raise ValueError(f"the checkpoint holds (threshold, radius, blur) = {held}, the config {self.knobs}")

    def figure_title(self, epoch: int) -> str:
        threshold, radius, blur = self.knobs
        return f"stroke redraw: threshold {threshold:g}, radius {radius:g}, blur {blur:g}"

    @classmethod
    def data_counts(cls, config: dict) -> dict[str, int]:
        """Image counts of the data (:func:`~trainables.shared.image_data.counts_for`), once the set is known to be grayscale."""
        cfg = cls.typed(config)
        check_grayscale(cfg)
        return counts_for(cfg)

