"""What every image mechanism shares, learned or not (:class:`ImageRelease`): its data from the registry
(:mod:`trainables.shared.image_data`), the scores of its release (distortion, the data user's classifiers, a fresh
deep attacker), its figure, the farm's released splits and serving; and the releases that learn nothing
(:class:`FixedRelease`: Gaussian noise, the stroke redraw, the digit prototype), scored the same way. The games
(the releaser and the privatizer) add their players in :mod:`trainables.shared.image_game`.

A subclass names its releasing network (:attr:`ImageRelease.net`) and says how the checkpoint's state holds it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import ClassVar

import torch
from torch import nn
from torch.nn import functional as F

from attacks.attackers.deep import DeepAttacker
from attacks.base import AttackInput, CheckpointInputs, Deferred
from core.config import MembershipCanaries
from core.data import Dataset, Split
from core.image_quality import image_quality
from trainables.shared.canaries import Planted, joined, plant
from trainables.shared.data_user import data_user_utility
from trainables.shared.figures import digit_thickness, save_release_grid
from trainables.shared.image_data import (
    attacker_records,
    baselines_for,
    counts_for,
    image_dataset,
    image_layout,
    load_data,
    load_population,
    load_splits,
)
from trainables.shared.mechanism import Capability, Mechanism
from trainables.shared.release_map import ReleaseMap, release

FIGURE_FILE = "released.png"


@dataclass(frozen=True)
class Released:
    """One checkpoint's releases for the farm: the attackers' splits (their training part over the attacker's records),
    the game's own training records as released (the membership attacks' members, canaries apart), the population and
    its release, and the member and non-member canaries as released (empty without canaries)."""

    data: AttackInput
    members_x: torch.Tensor
    population: Split
    population_x: Deferred  # the population's release, made when a reference-model attack first asks for it
    canary_members_x: torch.Tensor
    canary_nonmembers_x: torch.Tensor


class ImageRelease(Mechanism):
    """A release of an image data set by a network mapping images to images, Y = net(X, Z): the data, its splits, the
    scores every image release gets and the farm's released splits."""
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.SERVE, Capability.AUDIT, Capability.RAW_REFERENCE})
    trial_attackers: ClassVar[frozenset[str]] = frozenset({"deep"})  # a fresh deep attacker at every checkpoint

    figures: ClassVar[tuple[str, ...]] = (FIGURE_FILE,)

    @property
    def net(self) -> nn.Module:
        """The releasing network (its forward takes the images and a noise generator)."""
        raise NotImplementedError

    def setup(self) -> None:
        """The trial's subsets on the device (the member canaries joining the training split), the prior P(S), fresh
        players, the game's generator."""
        self.train, self.test = load_data(self.cfg, self.device)
        if MembershipCanaries.of(self.cfg).canaries:
            self.train = joined(self.train, self.planted.members)
        self.prior = torch.bincount(self.train.s, minlength=self.s_classes).float() / len(self.train)
        self.build()
        self.gen = torch.Generator(device=self.device).manual_seed(self.cfg.seed)

    @cached_property
    def attack_train(self) -> Split:
        """The records whose releases the attackers and the data user train on (:func:`attacker_records`)."""
        return attacker_records(self.cfg, self.train, lambda: self.population)

    @cached_property
    def planted(self) -> Planted:
        """The config's canaries (none by default), drawn from the training samples outside the game's split, and the
        samples left beside them (read once, on the device)."""
        cfg = self.cfg
        return plant(load_population(cfg, self.device), MembershipCanaries.of(cfg).canaries, cfg.seed,
                     (self.s_classes, self.u_classes), cfg.dataset)

    @property
    def population(self) -> Split:
        """Training samples outside the game's split and its canaries, on the device: what the attackers' extra records
        and the farm's reference models draw on."""
        return self.planted.rest

    def begin(self, start: int) -> None:
        """A resumed game draws fresh noise per restart: the generator restarts at seed + epochs done."""
        if start:
            self.gen.manual_seed(self.cfg.seed + start)

    @cached_property
    def dataset(self) -> Dataset:
        """The registry entry the config names (its image shape and the classes of S and U size the networks)."""
        return image_dataset(self.cfg)

    @cached_property
    def layout(self) -> tuple[tuple[int, int, int], int, int]:
        """(image shape (C, H, W), classes of S, classes of U): what sizes the networks (:func:`image_layout`)."""
        return image_layout(self.cfg)

    @property
    def shape(self) -> tuple[int, int, int]:
        """The data set's image shape (C, H, W)."""
        return self.layout[0]

    @property
    def s_classes(self) -> int:
        """How many values the private attribute S takes."""
        return self.layout[1]

    @property
    def u_classes(self) -> int:
        """How many values the utility attribute U takes."""
        return self.layout[2]

    def release_test(self) -> torch.Tensor:
        """The released test split (kept for the checkpoint's figure)."""
        self.released_test = release(self.net, self.test.x, self.gen)
        return self.released_test

    def deep_attack(self) -> dict[str, float]:
        """A fresh deep attacker of S fitted on the released training split, scored on the released test split."""
        t0 = time.perf_counter()
        records = self.attack_train
        released_train = release(self.net, records.x, self.gen)
        result = DeepAttacker(self.cfg).run(
            AttackInput(released_train, records.s, self.released_test, self.test.s, num_classes=self.s_classes))
        return result.logged() | {"time/attack_s": time.perf_counter() - t0}

    def data_user(self, released_train: torch.Tensor | None = None) -> dict[str, float]:
        """Digit accuracy of a classifier trained afresh on the release and of one trained on raw images
        (:func:`~trainables.shared.data_user.data_user_utility`): the utility a data user gets, which the in-game net overstates
        or understates once it co-adapts with the mechanism. ``released_train``: a release of the training split already
        drawn of :attr:`attack_train` (e.g. the one the attacker sees), else a fresh one."""
        t0 = time.perf_counter()
        records = self.attack_train
        released_train = release(self.net, records.x, self.gen) if released_train is None else released_train
        metrics = data_user_utility(released_train, self.released_test, records, self.test, self.u_classes, self.cfg)
        return metrics | {"time/data_user_s": time.perf_counter() - t0}

    def figure_title(self, epoch: int) -> str:
        """The title of the checkpoint's original-vs-released figure."""
        raise NotImplementedError

    def write_figures(self, directory: Path, epoch: int) -> None:
        """The first ``samples_in_figure`` test images above their releases."""
        k, test = self.cfg.samples_in_figure, self.test
        save_release_grid(test.x[:k], self.released_test[:k], directory / FIGURE_FILE, self.figure_title(epoch),
                          self.captions(test.u[:k], test.s[:k]))

    def captions(self, u: torch.Tensor, s: torch.Tensor) -> list[str]:
        """Column captions of the figure: digit and thickness on AMNIST, else the entry's U and S values."""
        if self.cfg.dataset == "amnist":
            return digit_thickness(u, s)
        names = self.dataset.utility.name, self.dataset.private.name
        return [f"{names[0]} {int(a)}\n{names[1]} {int(b)}" for a, b in zip(u.tolist(), s.tolist(), strict=True)]

    def released_splits(self) -> Released:
        """The farm's released splits (with U and raw inputs; the training part over :attr:`attack_train`), the game's
        training records as released, the population and its release.

        The noise is drawn afresh per checkpoint (seed + 1000 + epoch, the held-out canaries' after the test split's;
        the population's seed + 2000 + epoch).
        """
        cfg, device, epoch, records = self.cfg, self.device, self.epoch, self.attack_train
        gen = torch.Generator(device=device).manual_seed(cfg.seed + 1000 + epoch)
        released_train, released_test = release(self.net, records.x, gen), release(self.net, self.test.x, gen)
        data = AttackInput(released_train, records.s, released_test, self.test.s, num_classes=self.s_classes,
                           train_u=records.u, test_u=self.test.u, raw_train_x=records.x, dataset=cfg.dataset)
        population, net = self.population, self.net

        @cache
        def released_pop() -> torch.Tensor:
            pop_gen = torch.Generator(device=device).manual_seed(cfg.seed + 2000 + epoch)
            return release(net, population.x, pop_gen) if len(population) else population.x

        held_out = self.planted.nonmembers.x
        released_held_out = release(self.net, held_out, gen) if len(held_out) else held_out
        ordinary = len(self.train) - len(held_out)  # as many member canaries as held-out ones, at the split's end
        return Released(data, released_train[:ordinary], population, released_pop,
                        released_train[ordinary:len(self.train)], released_held_out)

    def release_map(self) -> ReleaseMap:
        """The releasing network as a served map: images of the data set's shape in [0, 1] to released images."""
        return ReleaseMap(self.name, self.shape, (0.0, 1.0), self.net.eval(), release)

    @classmethod
    def audit_input(cls, config: dict, records: int) -> AttackInput:
        """The first ``records`` training records outside the game's split (its population) to fit on and the test split
        to score on, unreleased, with U and the raw inputs: what an outside attacker of the served map holds."""
        cfg = cls.typed(config)
        splits = load_splits(cfg, population=True)
        population, test = splits.population, splits.test
        assert population is not None  # asked for
        if len(population) < records:
            raise ValueError(f"{cfg.dataset} holds {len(population)} training records outside the game's split, "
                             f"fewer than the {records} asked for")
        held = population.subset(torch.arange(records))
        return AttackInput(held.x, held.s, test.x, test.s, num_classes=image_layout(cfg)[1], train_u=held.u,
                           test_u=test.u, raw_train_x=held.x, dataset=cfg.dataset)

    @classmethod
    def raw_references(cls, config: dict) -> dict[str, float]:
        """U and S accuracy of fresh classifiers and attackers on unreleased images."""
        return baselines_for(cls.typed(config))

    @classmethod
    def data_counts(cls, config: dict) -> dict[str, int]:
        """Image counts of the data a trial with this config trains and tests on (fails early if no data)."""
        return counts_for(cls.typed(config))


class FixedRelease(ImageRelease):
    """A release with no game to play (a baseline): its one epoch scores the release as the learned image mechanisms'
    checkpoints are scored. Distortion against the raw test split, the data user's digit classifiers (trained afresh
    on the release, and trained on raw images) and, with ``attack``, a fresh deep attacker of S; the farm then attacks
    its released splits with the sweep's attackers. It trains no network the farm's membership attackers could test.
    Whatever it fits on raw data (the digit prototype's classifier) it fits in :meth:`pretrain`."""
    capabilities: ClassVar[frozenset[Capability]] = ImageRelease.capabilities | {Capability.FARM}

    @property
    def epochs(self) -> int:
        """One epoch: the release is scored (and checkpointed for the farm) once."""
        return 1

    def train_epoch(self) -> dict[str, float]:
        """Nothing to train."""
        return {}

    def evaluate(self, attack: bool) -> dict[str, float]:
        """``utility/mse``, the image quality (``utility/psnr``, ...), the data user's classifiers and (``attack``) a
        fresh deep attacker, all on one release of the attacker records and the test split."""
        records, test = self.attack_train, self.test
        released_test = self.release_test()
        released_train = release(self.net, records.x, self.gen)
        metrics = (self.data_user(released_train) | image_quality(released_test, test.x)
                   | {"utility/mse": F.mse_loss(released_test, test.x).item()})
        if attack:
            t0 = time.perf_counter()
            result = DeepAttacker(self.cfg).run(AttackInput(released_train, records.s, released_test, test.s,
                                                            num_classes=self.s_classes))
            metrics |= result.logged() | {"time/attack_s": time.perf_counter() - t0}
        return metrics

    def farm_inputs(self) -> CheckpointInputs:
        """The released splits exactly as the learned image mechanisms give them; no trained network to test for
        membership (the farm's membership attackers skip it, saying so)."""
        return CheckpointInputs(self.released_splits().data)
