"""What the image mechanisms with a generative release (the releaser and the privatizer) share: the data set from the
registry, the game's setup and warm start, figures, the deep attacker, the farm's released splits, serving, baselines
and data counts; and the releases that learn nothing (:class:`FixedRelease`: Gaussian noise, the stroke redraw, the
digit prototype), scored the same way.

The config's ``dataset`` names a registry entry (core/data/registry.py) with images and class labels for S and U: on
AMNIST (the default) U = digit and S = stroke thickness; on CIFAR-10, CelebA, Fashion-MNIST or MNIST 32×32 the
entry's own S and U. Networks take the entry's image shape and class counts. A subclass names its releasing network
(:attr:`ImageGame.net`), builds its players, trains an epoch, and says which of its networks the farm's membership
attacks target.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property, partial
from pathlib import Path
from typing import Any, ClassVar, Literal

import torch
from torch import nn
from torch.nn import functional as F

from attacks.attackers.deep import DeepAttacker, RawTrainedDeepAttacker
from attacks.attackers.registry import REGISTRY
from attacks.attackers.thickness import ThicknessAttacker
from attacks.audits.imputation import ImputationAttacker
from attacks.base import AttackInput, Canaries, CheckpointInputs, Deferred, MembershipTarget, ReferenceData
from attacks.farm.reference import ClassifierRecipe
from core.config import AttackerRecords, MembershipCanaries
from core.data import Dataset, Split, Splits, get_dataset
from core.image_quality import image_quality, psnr_of_mse
from core.nets import game_classifier
from core.training import batches
from trainables.shared.canaries import Planted, check_canaries, joined, plant
from trainables.shared.data_user import data_user_utility
from trainables.shared.figures import digit_thickness, save_release_grid
from trainables.shared.mechanism import Capability, Mechanism, pick_device
from trainables.shared.release_map import ReleaseMap, release
from trainables.shared.warm_start import WARM_START_DIR, rng_state, set_rng_state, stored_or_computed, warm_start_key

FIGURE_FILE = "released.png"


def image_dataset(cfg: Any) -> Dataset:
    """The registry entry the config names; a one-line ValueError unless it holds images labelled with classes of S and U."""
    dataset = get_dataset(cfg.dataset)
    if not dataset.is_image or dataset.private.classes is None or dataset.utility.classes is None:
        raise ValueError(f"dataset {cfg.dataset!r} is not an image data set with class labels for S and U "
                         "(the image mechanisms need one, e.g. amnist, mnist32, fashion_mnist, cifar10, celeba)")
    return dataset


def image_layout(cfg: Any) -> tuple[tuple[int, int, int], int, int]:
    """The (C, H, W) shape of the config's image set and how many classes S and U take (what sizes the networks)."""
    dataset = image_dataset(cfg)
    c, h, w = dataset.input_shape
    return (c, h, w), int(dataset.private.classes or 0), int(dataset.utility.classes or 0)


def load_splits(cfg: Any, population: bool = False) -> Splits:
    """The trial's train/test subsets of its data set (and the population outside them, when asked for)."""
    # an empty data_root is the registry's default folder
    return image_dataset(cfg).load(cfg.data_root, n_train=cfg.n_train, n_test=cfg.n_test, seed=cfg.seed,
                                   download=cfg.download, population=population)


def on_device(split: Split, device: torch.device) -> Split:
    """``split`` with its tensors on ``device``."""
    return Split(split.x.to(device), split.s.to(device), split.u.to(device))


def load_data(cfg: Any, device: torch.device) -> tuple[Split, Split]:
    """The trial's train/test subsets, moved to ``device`` once for the whole trial."""
    splits = load_splits(cfg)
    return on_device(splits.train, device), on_device(splits.test, device)


def load_population(cfg: Any, device: torch.device) -> Split:
    """Training samples outside the trial's subset (never seen by its networks), on ``device``."""
    population = load_splits(cfg, population=True).population
    assert population is not None  # asked for
    return on_device(population, device)


def attacker_records(cfg: Any, train: Split, outside: Callable[[], Split]) -> Split:
    """The records whose releases the attackers and the data user train on: the game's training split, then training
    records outside it (never seen by the game; ``outside()`` gives them, asked only when needed) up to
    ``attack_records``; a one-line ValueError if the set holds fewer."""
    wanted = AttackerRecords.of(cfg).attack_records
    if wanted is None or wanted <= len(train):
        return train
    population = outside()
    check_attack_records(cfg, len(train), len(population))
    extra = wanted - len(train)
    return Split(torch.cat([train.x, population.x[:extra]]), torch.cat([train.s, population.s[:extra]]),
                 torch.cat([train.u, population.u[:extra]]))


def check_attack_records(cfg: Any, n_train: int, n_population: int) -> None:
    """A one-line ValueError when the data set holds fewer training records than ``attack_records`` asks for."""
    wanted = AttackerRecords.of(cfg).attack_records
    if wanted is not None and n_train + n_population < wanted:
        raise ValueError(f"attack_records: {cfg.dataset} holds {n_train + n_population} training records "
                         f"({n_train} in the game's split), fewer than the {wanted} asked for")


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


def classifier_reference(classes: int, epochs: int, cfg: Any, shape: tuple[int, ...], train_x: torch.Tensor | Deferred,
                         labels: torch.Tensor, query_x: torch.Tensor | Deferred | None, cache_dir: str,
                         input_norm: bool = False) -> ReferenceData | None:
    """Reference data for a trial's classifier: a ``SmallCNN(classes, width)`` of the images' shape (behind an input
    norm when ``input_norm``, as the trial's players are) trained ``epochs`` epochs with the trial's batch size and
    learning rate; None when the trial trains on the whole set (no population). ``shape``: an image's (C, H, W)."""
    if len(labels) < 2:
        return None
    channels, height, width = shape
    net = partial(game_classifier, classes, cfg.width, (channels, height, width), input_norm)
    recipe = ClassifierRecipe(net, max(epochs, 1), cfg.batch_size, cfg.lr)
    return ReferenceData(recipe, train_x, labels, query_x, cache_dir=cache_dir)


def baselines_for(cfg: Any) -> dict[str, float]:
    """Every attacker kind on unreleased images, and a tuned utility classifier: the PUT's two ends.

    The tuned utility classifier is the utility a data user gets from raw images (the data user's fixed classifier is
    the same fit); the deep attacker's raw accuracy is the calibration of the farm's learned attackers (``deep_raw``
    applied to raw test images is the same fit, so it logs the same number); the thickness rule is exact on raw images
    by construction. The imputation attacker (:mod:`attacks.audits.imputation`) is the best guess of S from the public utility
    label alone (or the prior), on the same attacker records and test split: what the release's attackers must beat.
    """
    torch.set_num_threads(cfg.threads)
    train, test = load_data(cfg, pick_device())
    train = attacker_records(cfg, train, lambda: load_population(cfg, train.x.device))
    _, s_classes, u_classes = image_layout(cfg)
    raw = AttackInput(train.x, train.s, test.x, test.s, num_classes=s_classes, train_u=train.u,
                      test_u=test.u, raw_train_x=train.x, dataset=cfg.dataset)
    # both fits are stored by content: the trials' fixed utility classifier and the farm's deep_raw read them, so the
    # utility fit (every trial needs it) comes first
    utility = RawTrainedDeepAttacker(cfg, name="fixed_utility").run(
        AttackInput(train.x, train.u, test.x, test.u, num_classes=u_classes, raw_train_x=train.x))
    secret = RawTrainedDeepAttacker(cfg).run(raw)
    results = {"deep": secret, "deep_raw": secret}
    if not REGISTRY["thickness"].missing(CheckpointInputs(raw)):  # its declared needs: AMNIST's digits only
        results["thickness"] = ThicknessAttacker(seed=cfg.seed).run(raw)
    metrics = {f"baseline/utility/{k}": utility.metrics[k] for k in ("accuracy", "accuracy/ci_low", "accuracy/ci_high")}
    metrics |= constant_release(train.x, test.x, u_classes, s_classes)
    for kind, result in results.items():
        metrics |= {f"baseline/attack/{kind}/{k}": result.metrics[k] for k in ("accuracy", "accuracy/ci_low", "accuracy/ci_high")}
    return metrics | {f"baseline/{k}": v for k, v in ImputationAttacker(cfg).run(raw).logged().items()}


def constant_release(train_x: torch.Tensor, test_x: torch.Tensor, u_classes: int, s_classes: int) -> dict[str, float]:
    """The release that keeps nothing, every record released as the training images' mean image: any classifier of
    it reads chance, 1/classes in balanced accuracy, for the utility label and the secret alike, at the distortion of
    that mean against the test images (``baseline/constant/utility``, ``/attack``, ``/psnr_of_mse``: the corner of the
    baselines' hull that a release collapsed to chance is compared with)."""
    mse = float((test_x - train_x.mean(0, keepdim=True)).pow(2).mean())
    return {"baseline/constant/utility": 1 / u_classes, "baseline/constant/attack": 1 / s_classes,
            "baseline/constant/psnr_of_mse": psnr_of_mse(mse)}


def counts_for(cfg: Any) -> dict[str, int]:
    """Image counts of the data a trial with this config trains and tests on, and the records its attackers train on
    (``attacker_records``, the member canaries included); fails early if there is no data or too little for
    ``canaries`` and ``attack_records``. ``attacker_records_max``: every training record outside the test split an
    attacker could release (the game's split and the records it never saw, less the held-out canaries);
    ``attacker_records_outside``: those the game never saw (what an outside auditor of the served map holds)."""
    wanted, canaries = AttackerRecords.of(cfg).attack_records, MembershipCanaries.of(cfg).canaries
    splits = load_splits(cfg, population=True)
    n_train = len(splits.train) + canaries
    outside = len(splits.population) - 2 * canaries if splits.population is not None else 0
    if wanted is not None or canaries > 0:
        check_canaries(canaries, outside + 2 * canaries, cfg.dataset)
        check_attack_records(cfg, n_train, outside)
    return splits.counts | {"attacker_records": max(n_train, wanted or 0), "attacker_records_max": n_train + outside,
                            "attacker_records_outside": outside}


class ImageGame(Mechanism):
    """A game on an image data set whose releasing network maps images to images: Y = net(X, Z)."""
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.SERVE, Capability.AUDIT, Capability.RAW_REFERENCE})
    trial_attackers: ClassVar[frozenset[str]] = frozenset({"deep"})  # a fresh deep attacker at every checkpoint

    figures: ClassVar[tuple[str, ...]] = (FIGURE_FILE,)
    game_knobs: ClassVar[frozenset[str]] = frozenset()  # config keys its warm start never reads (λ, α, ...)
    game_state: ClassVar[frozenset[str]] = frozenset()  # keys of state() the warm start leaves as the config set them
    warm_start_dir: str | None = WARM_START_DIR  # where shared warm starts are stored (None: each trial computes its own)

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

    def shared_warm_start(self, fit: Callable[[], None]) -> None:
        """``fit`` (the warm start) once per (data, seed, recipe): the state it leaves (:meth:`state` and the generators)
        is read from :attr:`warm_start_dir` when a trial already stored it, else computed and stored there
        (:mod:`trainables.shared.warm_start`). Logs ``pretrain/cached``: 1 when read, 0 when computed."""
        if self.warm_start_dir is None:
            fit()
            return
        key = warm_start_key(self.name, self.cfg.as_dict(), self.game_knobs, (self.train.x, self.train.s, self.train.u),
                             self.device)
        path = Path(self.warm_start_dir) / f"warm-start-{self.name}-{key}.pt"

        def computed() -> dict:
            fit()
            return self.warm_state()

        state, cached = stored_or_computed(path, computed)
        if cached:
            self.load_state(state["models"])
            set_rng_state(self.gen, state["rng"])
        self.pretrain_metrics = {"pretrain/cached": float(cached)}

    def warm_state(self) -> dict:
        """What a warm start leaves behind: the networks and optimisers (:meth:`state`) and the generators' states."""
        models = {k: v for k, v in self.state().items() if k not in self.game_state}
        return {"models": models, "rng": rng_state(self.gen)}

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

    def membership_target(self, name: str, model: nn.Module, released: Released, task: Literal["s", "u"],
                          reference: ReferenceData | None) -> MembershipTarget:
        """A network the game trained on its split's ``task`` labels as the farm's membership target: its ordinary
        training records as released against the released test split, its canaries (if any) apart."""
        labels, ordinary = getattr(self.train, task), len(released.members_x)
        canaries = Canaries(released.canary_members_x, labels[ordinary:], released.canary_nonmembers_x,
                            getattr(self.planted.nonmembers, task)) if len(released.canary_nonmembers_x) else None
        return MembershipTarget(name, model, released.members_x, labels[:ordinary], released.data.test_x,
                                getattr(self.test, task), reference, canaries)

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
    def raw_baselines(cls, config: dict) -> dict[str, float]:
        """U and S accuracy of fresh classifiers and attackers on unreleased images."""
        return baselines_for(cls.typed(config))

    @classmethod
    def data_counts(cls, config: dict) -> dict[str, int]:
        """Image counts of the data a trial with this config trains and tests on (fails early if no data)."""
        return counts_for(cls.typed(config))


class FixedRelease(ImageGame):
    """A release with no game to play (a baseline): its one epoch scores the release as the learned image mechanisms'
    checkpoints are scored. Distortion against the raw test split, the data user's digit classifiers (trained afresh
    on the release, and trained on raw images) and, with ``attack``, a fresh deep attacker of S; the farm then attacks
    its released splits with the sweep's attackers. It trains no network the farm's membership attackers could test.
    Whatever it fits on raw data (the digit prototype's classifier) it fits in :meth:`pretrain`."""
    capabilities: ClassVar[frozenset[Capability]] = ImageGame.capabilities | {Capability.FARM}

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
