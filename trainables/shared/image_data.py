"""The image data the image mechanisms release, and what it gives without a release: the config's registry entry and
its splits (the game's training and test subsets, the population outside them), the attacker records, the raw-data
reference points (every attacker and a tuned utility classifier on unreleased images, the constant release) and the
data counts a sweep checks before it starts.

The config's ``dataset`` names a registry entry (core/data/registry.py) with images and class labels for S and U: on
AMNIST (the default) U = digit and S = stroke thickness; on CIFAR-10, CelebA, Fashion-MNIST or MNIST 32×32 the
entry's own S and U.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attacks.attackers.deep import RawTrainedDeepAttacker
from attacks.attackers.registry import REGISTRY
from attacks.attackers.thickness import ThicknessAttacker
from attacks.audits.imputation import ImputationAttacker
from attacks.base import AttackInput, CheckpointInputs
from core.classifier import raw_data_classifier, scored_accuracy
from core.config import AttackerRecords, MembershipCanaries
from core.data import Dataset, Split, Splits, get_dataset
from core.image_quality import psnr_of_mse
from trainables.shared.canaries import check_canaries
from trainables.shared.mechanism import pick_device


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
    utility = scored_accuracy(raw_data_classifier(cfg).fit(train.x, train.u, u_classes), test.x, test.u, u_classes)
    secret = RawTrainedDeepAttacker(cfg).run(raw)
    results = {"deep": secret, "deep_raw": secret}
    if not REGISTRY["thickness"].missing(CheckpointInputs(raw)):  # its declared needs: AMNIST's digits only
        results["thickness"] = ThicknessAttacker(seed=cfg.seed).run(raw)
    metrics = {f"baseline/utility/{k}": utility[k] for k in ("accuracy", "accuracy/ci_low", "accuracy/ci_high")}
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
