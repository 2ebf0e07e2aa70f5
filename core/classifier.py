"""The tuned, early-stopped classifier family every side fits: the deep attackers (attacks/attackers/deep.py), the data
user's digit classifiers and the digit prototype's (trainables/), each on its own labels.

A privacy number is a claim that no competent attacker does better, so the family is fitted the way a careful
adversary would fit it:

1. a validation split is carved from the *training* data it is given (the test split is never read while fitting or
   choosing);
2. inputs are standardised per feature with the statistics of the training part (see :class:`core.nets.Standardized`);
3. every configuration of the family (capacities × learning rates × with/without augmentation) is trained with early
   stopping on that validation split, its best-validation weights restored;
4. the configuration with the best validation balanced accuracy is the fit; a caller scores it once on its test split.

``attack_search="halving"`` spreads the epochs by successive halving (all configurations for a rung of epochs, the
better half goes on, ...), and the survivor trains to convergence; ``"full"`` trains every configuration to
convergence. Both choose on validation only. The family, its epochs and its search are the trial config's
:class:`core.config.AttackBudget`.

The default family's fits (a CNN for images) are addressed by content (:func:`fit_key`: the data's bytes, the labels,
the budget, the width and the code's version): a fit already made on the same data is read back, in this process or
from a folder on disk, instead of trained again.
"""
from __future__ import annotations

import itertools
import math
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

import torch
from torch import nn

from core.config import AttackBudget
from core.content_cache import ContentCache, content_key
from core.metrics import accuracy_metrics
from core.nets import SmallCNN, Standardized
from core.training import EarlyStoppedFit, EarlyStopping, FitLog, augmentation_for, predict_logits, validation_split

ModelBuilder = Callable[[int, int], nn.Module]  # (number of classes, width) -> a fresh network
FIT_CACHE = str(Path(tempfile.gettempdir()) / "putlab-deep-raw")  # default folder of the fits kept on disk
RAW_STD_FLOOR = 1.0  # the standardisation floor of a fit on raw data applied to releases (see raw_data_classifier)
FITS: ContentCache[TunedFit] = ContentCache("fit-", memory=4)  # in memory: a sweep's raw-data fits of S and U, and a few more


@dataclass(frozen=True)
class Candidate:
    """One configuration of the family."""

    width: int
    lr: float
    augment: bool

    @property
    def label(self) -> str:
        """Short name, e.g. ``w32_lr0.0003_aug``."""
        return f"w{self.width}_lr{self.lr:g}" + ("_aug" if self.augment else "")


@dataclass
class TunedFit:
    """The chosen network, its configuration, how its training ended, every candidate's validation score, and how many
    records the family was fitted on (training and validation parts together)."""

    model: nn.Module
    candidate: Candidate
    log: FitLog
    val_scores: dict[str, float]
    records: int


def family(budget: AttackBudget, base_width: int) -> list[Candidate]:
    """Every configuration of the family, in a fixed order (ties in validation go to the earlier one)."""
    widths = sorted({max(1, round(base_width * f)) for f in budget.attack_width_factors})
    return [Candidate(w, lr, aug) for w, lr, aug in itertools.product(widths, budget.attack_lrs, budget.attack_augment)]


def tune_classifier(build: ModelBuilder, x: torch.Tensor, y: torch.Tensor, num_classes: int,
                    budget: AttackBudget, base_width: int, std_floor: float = 0.01) -> TunedFit:
    """Fit the family on (x, y) with early stopping on a validation split of it; return the best on validation.

    ``x``/``y`` are the *training* data; nothing else is read. Per-step labels [N, T] need a network with logits
    [N, classes, T]. ``std_floor``: the input standardisation's floor (:meth:`core.nets.Standardized.statistics`).
    """
    train_idx, val_idx = validation_split(len(x), budget.attack_val_fraction, budget.seed)
    train_idx, val_idx = train_idx.to(x.device), val_idx.to(x.device)
    train, val = (x[train_idx], y[train_idx]), (x[val_idx], y[val_idx])
    mean, std = Standardized.statistics(train[0], std_floor)
    stopping = EarlyStopping(budget.attack_epochs, budget.attack_patience)
    fits: dict[Candidate, EarlyStoppedFit] = {}
    for i, cand in enumerate(family(budget, base_width)):
        torch.manual_seed(budget.seed + i)
        gen = torch.Generator(device=x.device).manual_seed(budget.seed + i)
        model = Standardized(build(num_classes, cand.width).to(x.device), mean, std)
        fits[cand] = EarlyStoppedFit(model, train, val, num_classes,
                                     stopping=stopping, batch_size=budget.attack_batch_size, lr=cand.lr, generator=gen,
                                     augment=augmentation_for(x) if cand.augment else None)
    alive = list(fits)
    if budget.attack_search == "halving":
        while len(alive) > 1:
            for cand in alive:
                fits[cand].run(budget.attack_rung_epochs)
            alive = sorted(alive, key=lambda c: fits[c].rank, reverse=True)[: math.ceil(len(alive) / 2)]
    for cand in alive:
        fits[cand].run()
    chosen = max(alive, key=lambda c: fits[c].rank)
    log = fits[chosen].finish()
    return TunedFit(fits[chosen].model, chosen, log, {c.label: fits[c].best for c in fits}, len(x))


def image_cnn(x: torch.Tensor) -> ModelBuilder:
    """The default family's builder: SmallCNN for the (C, H, W) of images ``x`` [N, C, H, W]; other inputs need a model."""
    if x.dim() != 4:
        raise ValueError(f"the default deep attacker is a CNN for images [N, C, H, W], got inputs {list(x.shape)}; "
                         "give it a model for this data")
    channels, height, width = x.shape[1:]
    return partial(SmallCNN, in_shape=(channels, height, width))


def fit_key(x: torch.Tensor, s: torch.Tensor, num_classes: int, budget: AttackBudget, width: int,
            std_floor: float = 0.01) -> str:
    """Content hash of the training data, the fit's settings and the code's version: equal keys give equal fits."""
    return content_key((num_classes, budget.budget_key(), width, std_floor), (x, s))


def cached_fit(key: str, x: torch.Tensor, num_classes: int, folder: str) -> TunedFit | None:
    """The default family's fit stored under ``key`` (in this process, else on disk), or None."""
    kept = FITS.recall(key)
    if kept is not None:
        return kept
    blob = FITS.read(folder, key, map_location=x.device)
    if blob is None:
        return None
    try:
        candidate, log = Candidate(**blob["candidate"]), FitLog(**blob["log"])
        shape = (1, *x.shape[1:])
        model = Standardized(image_cnn(x)(num_classes, candidate.width), torch.zeros(shape), torch.ones(shape)).to(x.device)
        model.load_state_dict(blob["state"])
        fit = TunedFit(model.eval(), candidate, log, blob["val_scores"], len(x))
    except Exception:  # noqa: BLE001 - stored by another putlab version: a miss, trained again
        return None
    FITS.keep(key, fit)
    return fit


def store_fit(key: str, fit: TunedFit, folder: str) -> None:
    """Keep ``fit`` in this process and on disk (written atomically: a concurrent task reads all of it or nothing)."""
    FITS.write(folder, key, {"state": fit.model.state_dict(), "candidate": asdict(fit.candidate), "log": asdict(fit.log),
                             "val_scores": fit.val_scores})
    FITS.keep(key, fit)


@dataclass(frozen=True)
class TunedClassifier:
    """The family fitted on one training set: ``model`` builds a network from (number of classes, width), default a
    SmallCNN for the images' (C, H, W) at base ``width`` 16 (so widths 16 and 32). The default family's fits are read
    from ``cache_dir`` by content; ``store`` also keeps this classifier's own fits there (fits every trial of a sweep
    shares, such as those on raw images). Fitting is deterministic for a given budget and seed, so a read fit is the one
    training would give."""

    budget: AttackBudget = field(default_factory=AttackBudget)
    model: ModelBuilder | None = None
    width: int = 16
    cache_dir: str | None = FIT_CACHE
    store: bool = False
    std_floor: float = 0.01  # the input standardisation's floor (Standardized.statistics)

    def fit(self, x: torch.Tensor, y: torch.Tensor, num_classes: int) -> TunedFit:
        """The tuned, early-stopped family on training data (x, y): nothing of a test split is read."""
        if self.model is not None or self.cache_dir is None:
            return tune_classifier(self.model or image_cnn(x), x, y, num_classes, self.budget, self.width,
                                   self.std_floor)
        key = fit_key(x, y, num_classes, self.budget, self.width, self.std_floor)
        fit = cached_fit(key, x, num_classes, self.cache_dir)
        if fit is None:
            fit = tune_classifier(image_cnn(x), x, y, num_classes, self.budget, self.width, self.std_floor)
            if self.store:
                store_fit(key, fit, self.cache_dir)
        return fit


def raw_data_classifier(budget: AttackBudget, width: int = 16, cache_dir: str = FIT_CACHE) -> TunedClassifier:
    """The family fitted on raw (unreleased) images, stored by content (every trial on a machine shares it) and applied
    unchanged to releases: it reads data it was not trained on, so its input standardisation scales no pixel up more
    than the average one (``std_floor`` 1; with a 1 % floor, the pixels black in every raw image, a fifth of MNIST's,
    were divided by 0.002, and noise of 0.01 on them turned every prediction into one class)."""
    return TunedClassifier(budget, None, width, cache_dir, store=True, std_floor=RAW_STD_FLOOR)


def scored_accuracy(fit: TunedFit, x: torch.Tensor, y: torch.Tensor, num_classes: int) -> dict[str, float]:
    """The fit scored once on a test split (x, y): :func:`accuracy_metrics` of its predictions."""
    return accuracy_metrics(predict_logits(fit.model, x).argmax(1).view(y.shape), y, num_classes)
