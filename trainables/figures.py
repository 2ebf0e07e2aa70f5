"""Pictures a trial writes next to its checkpoint (logged to MLflow by the driver)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
import torch  # noqa: E402


def save_release_grid(original: torch.Tensor, released: torch.Tensor, path: Path, title: str) -> Path:
    """Two rows of images, originals above their releases, as a PNG."""
    n = original.shape[0]
    fig = Figure(figsize=(1.1 * n, 2.6))
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, n, squeeze=False)
    for row, images in enumerate((original, released)):
        for col in range(n):
            ax = axes[row][col]
            ax.imshow(images[col].squeeze(0).detach().cpu().numpy(), cmap="gray", vmin=0, vmax=1)
            ax.set_xticks([])
            ax.set_yticks([])
        axes[row][0].set_ylabel(("original", "released")[row])
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path
