"""Pictures a trial writes next to its checkpoint (logged to MLflow by the driver)."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def digit_thickness(digit: torch.Tensor, thick: torch.Tensor) -> list[str]:
    """Column captions of AMNIST images: the digit and its stroke thickness, e.g. '7 thick'."""
    return [f"{int(d)} {'thick' if int(t) else 'thin'}" for d, t in zip(digit.tolist(), thick.tolist(), strict=True)]


def save_release_grid(original: torch.Tensor, released: torch.Tensor, path: Path, title: str,
                      labels: Sequence[str] = ()) -> Path:
    """Two rows of images, originals above their releases, each column captioned with its ``labels`` entry
    (e.g. the digit and thickness the release should keep and hide), as a PNG."""
    n = original.shape[0]
    fig = Figure(figsize=(1.1 * n, 2.6))
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, n, squeeze=False)
    for row, images in enumerate((original, released)):
        for col in range(n):
            ax = axes[row][col]
            image = images[col].detach().cpu()
            if image.shape[0] == 1:  # grey: one channel
                ax.imshow(image[0].numpy(), cmap="gray", vmin=0, vmax=1)
            else:  # colour: channels last, as matplotlib draws them
                ax.imshow(image.permute(1, 2, 0).clamp(0, 1).numpy())
            ax.set_xticks([])
            ax.set_yticks([])
        axes[row][0].set_ylabel(("original", "released")[row])
    for col, label in enumerate(labels[:n]):
        axes[0][col].set_title(label, fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path
