"""Grids of images as matplotlib figures: trials' release grids and the membership attacks' exposed-records gallery.

Uses matplotlib's object API (``Figure`` + ``FigureCanvasAgg``), never pyplot, so it is safe in Ray workers and threads.
"""
from __future__ import annotations

import io
from collections.abc import Sequence

import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

DPI = 100


def is_image_batch(x: torch.Tensor) -> bool:
    """Whether ``x`` is a batch of grey or colour images, [N, 1 or 3, H, W] (tabular rows are not)."""
    return x.ndim == 4 and x.shape[1] in (1, 3)


def image_grid(rows: Sequence[torch.Tensor], title: str, row_labels: Sequence[str] = (),
               captions: Sequence[Sequence[str]] = ()) -> Figure:
    """One row of images per entry of ``rows`` ([n, C, H, W] each, values in [0, 1]; a short row leaves blanks),
    each row named by its ``row_labels`` entry and each image captioned by ``captions[row][col]``."""
    n = max(len(r) for r in rows)
    fig = Figure(figsize=(1.1 * n, 1.3 * len(rows) + 0.3 * len(captions)))
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(rows), n, squeeze=False)
    for row, images in enumerate(rows):
        for col in range(n):
            ax = axes[row][col]
            ax.set_xticks([])
            ax.set_yticks([])
            if col >= len(images):
                ax.set_axis_off()
                continue
            image = images[col].detach().cpu().float()
            if image.shape[0] == 1:  # grey: one channel
                ax.imshow(image[0].numpy(), cmap="gray", vmin=0, vmax=1)
            else:  # colour: channels last, as matplotlib draws them
                ax.imshow(image.permute(1, 2, 0).clamp(0, 1).numpy())
        if row < len(row_labels):
            axes[row][0].set_ylabel(row_labels[row])
    for row, texts in enumerate(captions):
        for col, text in enumerate(list(texts)[:n]):
            axes[row][col].set_title(text, fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()
