"""The data set registry: one typed description per data set (shape, private S, utility U, side information, loader).

Every entry lives in its own module under ``core/data/sets/`` (its ``DATASET``) and is found there, as installed
packages' ``putlab.datasets`` entry points are (core.plugins), so adding a data set is adding one file
(docs/data.md#adding-a-data-set). Mechanisms and attacks read the shapes and class counts
from the entry instead of assuming 1×28×28 AMNIST.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from core.plugins import PluginKind


@dataclass(frozen=True)
class Attribute:
    """A labelled attribute: its name, its number of classes (None: a real-valued target) and its shape per sample."""

    name: str
    classes: int | None
    shape: tuple[int, ...] = ()  # () one label per sample; (24,) one per hour of an ECO day


@dataclass(frozen=True)
class Split:
    """One split: inputs x, private labels s, utility targets u, and side information si (None when the set has none)."""

    x: torch.Tensor
    s: torch.Tensor
    u: torch.Tensor
    si: torch.Tensor | None = None

    def __len__(self) -> int:
        """Number of samples."""
        return self.x.shape[0]

    def subset(self, index: torch.Tensor) -> Split:
        """The samples at ``index``."""
        return Split(self.x[index], self.s[index], self.u[index], None if self.si is None else self.si[index])


@dataclass(frozen=True)
class Splits:
    """What a load returns: train and test splits, the population (reference data never in train or test, when asked
    for) and counts; ``source``: the entry's own records the splits were cut from, for a mechanism built for that set
    (ECO's days and windows, Adult's encoded files; None for the image sets), read through the entry's typed accessor."""

    train: Split
    test: Split
    population: Split | None
    counts: dict[str, int]
    source: object = None


@dataclass(frozen=True)
class LoadRequest:
    """The arguments of one load, checked: data folder, subset sizes, seed, download, population, entry-specific options."""

    root: Path | None
    n_train: int | None
    n_test: int | None
    seed: int
    download: bool
    population: bool
    options: dict[str, Any] = field(default_factory=dict)


Loader = Callable[[LoadRequest], Splits]


@dataclass(frozen=True)
class Dataset:
    """A data set's description and its loader.

    ``input_shape`` is (C, H, W) for images and (features,) or (steps,) otherwise; ``side_information`` is the
    dimension of si (None: no side information); ``options`` names the entry-specific keyword arguments of
    :meth:`load` with their defaults; ``stand_in``: the loader generates a synthetic stand-in when given no data
    folder (its counts then say which it loaded: ``synthetic`` 1 or 0).
    """

    name: str
    description: str
    input_shape: tuple[int, ...]
    private: Attribute
    utility: Attribute
    loader: Loader
    side_information: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    stand_in: bool = False

    @property
    def is_image(self) -> bool:
        """Whether inputs are (C, H, W) images."""
        return len(self.input_shape) == 3

    def load(self, root: str | Path | None = None, *, n_train: int | None = None, n_test: int | None = None,
             seed: int = 0, download: bool = False, population: bool = False, **options: Any) -> Splits:
        """Train/test splits (at most n_train / n_test samples, drawn by seed), the population when asked for, and counts."""
        for key, n in (("n_train", n_train), ("n_test", n_test)):
            if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n <= 0):
                raise ValueError(f"{key} must be a positive int or None, got {n!r}")
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            known = ", ".join(sorted(self.options)) or "none"
            raise ValueError(f"data set {self.name!r} has no option {unknown[0]!r} (its options: {known})")
        request = LoadRequest(None if root in (None, "") else Path(root).expanduser().resolve(), n_train, n_test,
                              seed, download, population, {**self.options, **options})
        return self.loader(request)


DATASETS: PluginKind[Dataset] = PluginKind("data set", "core.data.sets", "DATASET", "putlab.datasets", Dataset,
                                           lambda dataset: dataset.name)


def datasets() -> dict[str, Dataset]:
    """Every data set by name: the modules of ``core.data.sets`` and the ``putlab.datasets`` entry points of installed
    packages (core.plugins); a name taken twice is a PluginClash."""
    return DATASETS.discover()


def dataset_names() -> list[str]:
    """The registered names, sorted."""
    return sorted(datasets())


def get_dataset(name: str) -> Dataset:
    """The entry registered as ``name``; an unknown name is a one-line ValueError listing the known ones."""
    known = datasets()
    if name not in known:
        raise ValueError(f"unknown data set {name!r}; known: {', '.join(sorted(known))}")
    return known[name]


def draw(n: int, limit: int | None, seed: int, stream: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sorted indices of at most ``limit`` of ``n`` samples drawn by (seed, stream), and the sorted rest."""
    everything = torch.arange(n)
    if limit is None or limit >= n:
        return everything, everything[:0]
    order = torch.randperm(n, generator=torch.Generator().manual_seed(2 * seed + stream))
    return order[:limit].sort().values, order[limit:].sort().values

