"""AMNIST's thickness labels, and the MNIST splits they label (docs/data.md#annotated-mnist); the data set's registry
entry is core/data/sets/amnist.py.

The labeler counts the non-zero pixels w in one row per digit; w below a per-digit bound is thin,
above it thick, otherwise normal. AMNIST drops the normal images, leaving a binary private
attribute (thickness) next to the utility attribute (digit). The same labeler is the arithmetic
attacker's tool on released images, so it accepts float images as well as uint8 ones.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from .mnist import load_mnist

# Labeler parameters per digit 0-9: the row that is measured, and the mean and range of its width.
LINE = (14, 20, 11, 18, 10, 20, 7, 22, 10, 22)
MEAN = (8, 4, 5, 5, 8, 8, 5, 4, 9, 4)
RANGE = (2, 1, 2, 2, 2, 6, 2, 0, 2, 0)
# Bounds as the original labeler computes them: int() truncates toward zero.
LOWER = tuple(int(m - r / 2) for m, r in zip(MEAN, RANGE, strict=True))
UPPER = tuple(int(m + r / 2) for m, r in zip(MEAN, RANGE, strict=True))

THIN, NORMAL, THICK = 0, 1, 2

# A float pixel counts as non-zero above half a grey level, so x/255 of a uint8 image gives the
# same labels as the image itself, and a releaser's faint noise does not make every pixel count.
DEFAULT_NONZERO_THRESHOLD = 0.5 / 255


def thickness_labels(
    images: torch.Tensor, digits: torch.Tensor, *, nonzero_threshold: float = DEFAULT_NONZERO_THRESHOLD
) -> torch.Tensor:
    """THIN / NORMAL / THICK per image from the width of its digit's row, vectorised over the batch.

    ``images``: uint8 [N,28,28] (0..255), or float [N,28,28] / [N,1,28,28] on the [0,1] scale.
    A pixel is non-zero when it exceeds ``nonzero_threshold`` on the [0,1] scale (integer images
    are compared against ``nonzero_threshold * 255``, so the default means pixel >= 1).
    """
    if images.dim() == 4 and images.shape[1] == 1:
        images = images[:, 0]
    if images.dim() != 3 or tuple(images.shape[1:]) != (28, 28):
        raise ValueError(f"images must be [N,28,28] or [N,1,28,28], got {list(images.shape)}")
    if digits.shape != (images.shape[0],):
        raise ValueError(f"digits must be [{images.shape[0]}] to match the images, got {list(digits.shape)}")
    digits = digits.to(device=images.device, dtype=torch.long)
    if digits.numel() and (int(digits.min()) < 0 or int(digits.max()) > 9):
        raise ValueError("digits must lie in 0..9")
    threshold = nonzero_threshold if images.is_floating_point() else nonzero_threshold * 255
    line = torch.tensor(LINE, device=images.device)
    lower = torch.tensor(LOWER, device=images.device)[digits]
    upper = torch.tensor(UPPER, device=images.device)[digits]
    rows = images[torch.arange(images.shape[0], device=images.device), line[digits]]  # [N, 28]
    width = (rows > threshold).sum(dim=1)
    labels = torch.full_like(digits, NORMAL)
    labels[width < lower] = THIN
    labels[width > upper] = THICK
    return labels


@dataclass
class AmnistSplit:
    """One AMNIST split: images x float32 [N,1,28,28] in [0,1], digit int64 [N], thick int64 [N] (0 thin, 1 thick)."""

    x: torch.Tensor
    digit: torch.Tensor
    thick: torch.Tensor

    def __len__(self) -> int:
        """Number of images."""
        return self.x.shape[0]


def _drawn(labels: torch.Tensor, limit: int | None, seed: int, split_index: int) -> tuple[torch.Tensor, torch.Tensor]:
    """MNIST indices of the AMNIST images a trial uses (at most ``limit``, drawn by seed) and of the ones it leaves out."""
    keep = torch.nonzero(labels != NORMAL).squeeze(1)
    if limit is None or limit >= len(keep):
        return keep, keep[:0]
    # One stream per (seed, split): the test subset does not depend on n_train.
    generator = torch.Generator().manual_seed(2 * seed + split_index)
    order = torch.randperm(len(keep), generator=generator)
    return keep[order[:limit]].sort().values, keep[order[limit:]].sort().values


def _split(images: torch.Tensor, digits: torch.Tensor, labels: torch.Tensor, index: torch.Tensor) -> AmnistSplit:
    """The AMNIST split of the given MNIST indices: [0, 1] float images, digits and thin/thick labels."""
    return AmnistSplit(
        x=images[index].unsqueeze(1).to(torch.float32).div_(255),
        digit=digits[index].clone(),
        thick=(labels[index] == THICK).long(),
    )


def load_amnist_population(root: str | Path | None = None, *, n_train: int | None = None, seed: int = 0,
                           download: bool = False) -> AmnistSplit:
    """The AMNIST training images that :func:`load_amnist` leaves out of its ``n_train`` subset (empty without a limit).

    Never members of a trial's networks and disjoint from its test split (MNIST's test set): the
    population that membership attacks train their reference models on.
    """
    mnist = load_mnist(root, download=download)
    labels = thickness_labels(mnist.train_images, mnist.train_labels)
    _, rest = _drawn(labels, n_train, seed, 0)
    return _split(mnist.train_images, mnist.train_labels, labels, rest)


def load_mnist_test_population(root: str | Path | None = None, *, n_test: int | None = None, seed: int = 0,
                               download: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """MNIST test images (float [N,1,28,28] in [0, 1]) and digits outside the AMNIST test subset :func:`load_amnist` draws.

    For networks trained on all of MNIST's training set, the only data never seen in training and never
    audited as a non-member: the population of their membership attacks (normal-thickness images included).
    """
    mnist = load_mnist(root, download=download)
    used, _ = _drawn(thickness_labels(mnist.test_images, mnist.test_labels), n_test, seed, 1)
    rest = torch.ones(len(mnist.test_labels), dtype=torch.bool)
    rest[used] = False
    return mnist.test_images[rest].unsqueeze(1).to(torch.float32).div_(255), mnist.test_labels[rest].clone()


def load_amnist(
    root: str | Path | None = None,
    *,
    n_train: int | None = None,
    n_test: int | None = None,
    seed: int = 0,
    download: bool = False,
) -> tuple[AmnistSplit, AmnistSplit, dict[str, int]]:
    """AMNIST train and test splits (at most n_train / n_test images, drawn by seed) and their counts."""
    for name, n in (("n_train", n_train), ("n_test", n_test)):
        if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n <= 0):
            raise ValueError(f"{name} must be a positive int or None, got {n!r}")
    mnist = load_mnist(root, download=download)
    counts = {"mnist_train": len(mnist.train_labels), "mnist_test": len(mnist.test_labels)}
    splits = []
    for split_index, (name, images, digits, limit) in enumerate(
        (("train", mnist.train_images, mnist.train_labels, n_train),
         ("test", mnist.test_images, mnist.test_labels, n_test))
    ):
        labels = thickness_labels(images, digits)
        keep, _ = _drawn(labels, limit, seed, split_index)
        counts[f"amnist_{name}"] = int((labels != NORMAL).sum())
        split = _split(images, digits, labels, keep)
        splits.append(split)
        counts[name] = len(split)
        counts[f"{name}_thin"] = int((split.thick == 0).sum())
        counts[f"{name}_thick"] = int((split.thick == 1).sum())
    train, test = splits
    ordered = ("mnist_train", "mnist_test", "amnist_train", "amnist_test", "train", "test",
               "train_thin", "train_thick", "test_thin", "test_thick")
    return train, test, {key: counts[key] for key in ordered}
