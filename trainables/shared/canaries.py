"""Canaries (docs/membership.md#canaries): mislabelled records planted in an image game's training data, so the farm's
membership attackers can be scored on the records a network is most likely to memorise (Aerni et al., CCS 2024).

2N records are drawn (by the trial's seed) from the training records outside the game's split, and each is relabelled
to another class of S and of U, drawn uniformly from the other classes. The first N join the game's training data
(members), the other N are held out (non-members); neither half is in the population the reference models and the
attackers' extra records come from.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from core.data import Split


@dataclass(frozen=True)
class Planted:
    """A trial's canaries with their planted (wrong) labels: ``members`` train, ``nonmembers`` are held out; ``rest``:
    the records outside the game's split that are neither (the population)."""

    members: Split
    nonmembers: Split
    rest: Split


def check_canaries(n: int, outside: int, dataset: str) -> None:
    """A one-line ValueError unless the records outside the game's split hold the 2N canaries."""
    if 2 * n > outside:
        raise ValueError(f"canaries: {dataset} holds {outside} training records outside n_train, fewer than the "
                         f"{2 * n} that {n} canaries need (as many members as non-members): set a smaller n_train or "
                         "fewer canaries")


def mislabelled(labels: torch.Tensor, classes: int, generator: torch.Generator) -> torch.Tensor:
    """Each label moved to another of ``classes`` classes, uniformly among the other ones."""
    shift = torch.randint(1, classes, labels.shape, generator=generator).to(labels.device)
    return (labels + shift) % classes


def plant(outside: Split, n: int, seed: int, classes: tuple[int, int], dataset: str = "") -> Planted:
    """``n`` member and ``n`` non-member canaries drawn from ``outside`` by ``seed``, relabelled among ``classes``
    (of S, of U); ``n`` = 0 plants none and leaves ``outside`` whole."""
    check_canaries(n, len(outside), dataset)
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(outside), generator=generator).to(outside.x.device)
    drawn = outside.subset(order[:2 * n])
    canaries = Split(drawn.x, mislabelled(drawn.s, classes[0], generator), mislabelled(drawn.u, classes[1], generator))
    rest = outside if n == 0 else outside.subset(order[2 * n:].sort().values)
    first = torch.arange(n, device=outside.x.device)
    return Planted(canaries.subset(first), canaries.subset(first + n), rest)


def joined(train: Split, canaries: Split) -> Split:
    """The game's training split with the member canaries after it (what the game trains on)."""
    return Split(torch.cat([train.x, canaries.x]), torch.cat([train.s, canaries.s]), torch.cat([train.u, canaries.u]))
