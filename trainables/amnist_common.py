"""What the AMNIST mechanisms with a generative release (the releaser and the privatizer) share: data, the game's
setup and warm start, figures, the deep attacker, the farm's released splits, serving, baselines and data counts.

U = digit, S = stroke thickness (thin 0, thick 1). A subclass names its releasing network (:attr:`AmnistGame.net`),
builds its players, trains an epoch, and says which of its networks the farm's membership attacks target.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import nn
from torch.nn import functional as F

from attacks.base import AttackInput, ReferenceData
from attacks.deep import DeepAttacker, RawTrainedDeepAttacker
from attacks.reference import ClassifierRecipe
from attacks.thickness import ThicknessAttacker
from attacks.tuning import AttackBudget
from core.data import AmnistSplit, default_data_root, load_amnist, load_amnist_population
from core.training import batches
from trainables.figures import digit_thickness, save_release_grid
from trainables.mechanism import Mechanism, pick_device
from trainables.release_map import ReleaseMap, release

FIGURE_FILE = "released.png"


def load_data(cfg: Any, device: torch.device) -> tuple[AmnistSplit, AmnistSplit]:
    """The trial's AMNIST train/test subsets, moved to ``device`` once for the whole trial."""
    train, test, _ = load_amnist(cfg.data_root or str(default_data_root()), n_train=cfg.n_train, n_test=cfg.n_test,
                                 seed=cfg.seed, download=cfg.download)
    return tuple(AmnistSplit(s.x.to(device), s.digit.to(device), s.thick.to(device)) for s in (train, test))


def load_population(cfg: Any, device: torch.device) -> AmnistSplit:
    """AMNIST training images outside the trial's subset (never seen by its networks), on ``device``."""
    pop = load_amnist_population(cfg.data_root or str(default_data_root()), n_train=cfg.n_train, seed=cfg.seed,
                                 download=cfg.download)
    return AmnistSplit(pop.x.to(device), pop.digit.to(device), pop.thick.to(device))


def amnist_reference(net: Callable[..., nn.Module], classes: int, width: int, epochs: int, cfg: Any,
                     train_x: torch.Tensor, labels: torch.Tensor, query_x: torch.Tensor | None,
                     cache_dir: str) -> ReferenceData | None:
    """Reference data for an AMNIST network: ``net(classes, width)`` trained ``epochs`` epochs with the trial's
    batch size and learning rate; None when the trial trains on all of AMNIST (no population left)."""
    if len(labels) < 2:
        return None
    recipe = ClassifierRecipe(partial(net, classes, width), max(epochs, 1), cfg.batch_size, cfg.lr)
    return ReferenceData(recipe, train_x, labels, query_x, cache_dir=cache_dir)


def baselines_for(cfg: Any) -> dict[str, float]:
    """Every attacker kind on unreleased images, and a tuned digit classifier: the PUT's two ends.

    The tuned digit classifier is the utility a data user gets from raw images; the deep attacker's raw
    accuracy is the calibration of the farm's learned attackers (``deep_raw`` applied to raw test images
    is the same fit, so it logs the same number); the thickness rule is exact on raw images by construction.
    """
    torch.set_num_threads(cfg.threads)
    train, test = load_data(cfg, pick_device())
    budget = AttackBudget.from_config(cfg.as_dict())
    raw = AttackInput(train.x, train.thick, test.x, test.thick, num_classes=2, train_u=train.digit, test_u=test.digit,
                      raw_train_x=train.x)
    thick = RawTrainedDeepAttacker(budget).run(raw)  # deep_raw's own fit, cached: the farm's deep_raw reuses it
    digit = DeepAttacker(budget).run(AttackInput(train.x, train.digit, test.x, test.digit, num_classes=10))
    rule = ThicknessAttacker(seed=cfg.seed).run(raw)
    metrics = {f"baseline/utility/{k}": digit.metrics[k] for k in ("accuracy", "accuracy/ci_low", "accuracy/ci_high")}
    for kind, result in (("deep", thick), ("deep_raw", thick), ("thickness", rule)):
        metrics |= {f"baseline/attack/{kind}/{k}": result.metrics[k] for k in ("accuracy", "accuracy/ci_low", "accuracy/ci_high")}
    return metrics


def counts_for(cfg: Any) -> dict[str, int]:
    """Image counts of the data a trial with this config trains and tests on (fails early if no data)."""
    _, _, counts = load_amnist(cfg.data_root or str(default_data_root()), n_train=cfg.n_train, n_test=cfg.n_test,
                               seed=cfg.seed, download=cfg.download)
    return counts


class AmnistGame(Mechanism):
    """An AMNIST game whose releasing network maps images to images: Y = net(X, Z)."""

    figures: ClassVar[tuple[str, ...]] = (FIGURE_FILE,)

    @property
    def net(self) -> nn.Module:
        """The releasing network (its forward takes the images and a noise generator)."""
        raise NotImplementedError

    def setup(self) -> None:
        """The trial's AMNIST subsets on the device, the thickness prior P(S), fresh players, the game's generator."""
        self.train, self.test = load_data(self.cfg, self.device)
        self.prior = torch.bincount(self.train.thick, minlength=2).float() / len(self.train)
        self.build()
        self.gen = torch.Generator(device=self.device).manual_seed(self.cfg.seed)

    def begin(self, start: int) -> None:
        """A resumed game draws fresh noise per restart: the generator restarts at seed + epochs done."""
        if start:
            self.gen.manual_seed(self.cfg.seed + start)

    def pretrain_autoencoder(self, opt: torch.optim.Optimizer) -> None:
        """The releasing network as an autoencoder (Y ≈ X) for ``pretrain_epochs``.

        It is fitted with pixel-wise binary cross-entropy: on sparse MNIST strokes plain MSE through a sigmoid
        collapses to an all-black image, a flat local minimum the game cannot leave.
        """
        train = self.train
        for _ in range(self.cfg.pretrain_epochs):
            for idx in batches(len(train), self.cfg.batch_size, self.gen, train.x.device):
                loss = F.binary_cross_entropy(self.net(train.x[idx], self.gen), train.x[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()

    def release_test(self) -> torch.Tensor:
        """The released test split (kept for the checkpoint's figure)."""
        self.released_test = release(self.net, self.test.x, self.gen)
        return self.released_test

    def deep_attack(self) -> dict[str, float]:
        """A fresh deep thickness attacker fitted on the released training split, scored on the released test split."""
        t0 = time.perf_counter()
        released_train = release(self.net, self.train.x, self.gen)
        result = DeepAttacker(AttackBudget.from_config(self.cfg.as_dict())).run(
            AttackInput(released_train, self.train.thick, self.released_test, self.test.thick, num_classes=2))
        return result.logged() | {"time/attack_s": time.perf_counter() - t0}

    def figure_title(self, epoch: int) -> str:
        """The title of the checkpoint's original-vs-released figure."""
        raise NotImplementedError

    def write_figures(self, directory: Path, epoch: int) -> None:
        """The first ``samples_in_figure`` test images above their releases."""
        k, test = self.cfg.samples_in_figure, self.test
        save_release_grid(test.x[:k], self.released_test[:k], directory / FIGURE_FILE, self.figure_title(epoch),
                          digit_thickness(test.digit[:k], test.thick[:k]))

    def released_splits(self) -> tuple[AttackInput, AmnistSplit, torch.Tensor]:
        """The farm's released train/test splits (with digits and raw inputs), the population and its release.

        The noise is drawn afresh per checkpoint (seed + 1000 + epoch; the population's seed + 2000 + epoch).
        """
        cfg, device, epoch = self.cfg, self.device, self.epoch
        gen = torch.Generator(device=device).manual_seed(cfg.seed + 1000 + epoch)
        released_train, released_test = release(self.net, self.train.x, gen), release(self.net, self.test.x, gen)
        data = AttackInput(released_train, self.train.thick, released_test, self.test.thick, num_classes=2,
                           train_u=self.train.digit, test_u=self.test.digit, raw_train_x=self.train.x)
        population = load_population(cfg, device)
        pop_gen = torch.Generator(device=device).manual_seed(cfg.seed + 2000 + epoch)
        released_pop = release(self.net, population.x, pop_gen) if len(population) else population.x
        return data, population, released_pop

    def release_map(self) -> ReleaseMap:
        """The releasing network as a served map: 1×28×28 images in [0, 1] to released images."""
        return ReleaseMap(self.name, (1, 28, 28), (0.0, 1.0), self.net.eval(), release)

    @classmethod
    def raw_baselines(cls, config: dict) -> dict[str, float]:
        """Digit and thickness accuracy of fresh classifiers and attackers on unreleased images."""
        return baselines_for(cls.typed(config))

    @classmethod
    def data_counts(cls, config: dict) -> dict[str, int]:
        """Image counts of the data a trial with this config trains and tests on (fails early if no data)."""
        return counts_for(cls.typed(config))
