"""Deep attackers: a CNN family retrained on released data, and one trained on raw data applied to the release.

Both are tuned and early-stopped on a validation split of their training data (docs/attacks.md#deep):
the number they report is what a competent attacker of that kind reaches, not a fixed-epoch lower bound.
"""
from __future__ import annotations

import hashlib
import tempfile
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

import torch

from attacks.attackers.tuning import Candidate, ModelBuilder, TunedFit, tune_classifier, tuned_result
from attacks.base import AttackInput, AttackResult
from attacks.spec import AttackerSpec, Need
from core.atomic import save_atomically
from core.code_version import code_version
from core.config import AttackBudget
from core.nets import SmallCNN, Standardized
from core.training import FitLog, predict_logits

FIT_CACHE = str(Path(tempfile.gettempdir()) / "putlab-deep-raw")  # default folder of the fits kept on disk
RAW_STD_FLOOR = 1.0  # the raw-trained attacker's standardisation floor (see RawTrainedDeepAttacker)
MEMORY_FITS = 4  # fits kept in this process (the raw-data fits of a sweep's S and U, and a few more)
_FITS: OrderedDict[str, TunedFit] = OrderedDict()


def fit_key(x: torch.Tensor, s: torch.Tensor, num_classes: int, budget: AttackBudget, width: int,
            std_floor: float = 0.01) -> str:
    """Content hash of the training data, the fit's settings and the code's version: equal keys give equal fits."""
    digest = hashlib.sha256(code_version().encode())
    for t in (x, s):
        digest.update(t.detach().cpu().contiguous().numpy().tobytes())
    settings = (tuple(x.shape), num_classes, budget.budget_key(), width) + ((std_floor,) if std_floor != 0.01 else ())
    digest.update(repr(settings).encode())
    return digest.hexdigest()[:32]


def cached_fit(key: str, x: torch.Tensor, num_classes: int, folder: str) -> TunedFit | None:
    """The default family's fit stored under ``key`` (in this process, else on disk), or None."""
    if key in _FITS:
        return _FITS[key]
    try:
        # plain tensors and numbers only (weights_only): the cache folder is shared, a planted pickle must not run
        blob = torch.load(Path(folder) / f"{key}.pt", map_location=x.device, weights_only=True)
        candidate, log = Candidate(**blob["candidate"]), FitLog(**blob["log"])
        shape = (1, *x.shape[1:])
        model = Standardized(image_cnn(x)(num_classes, candidate.width), torch.zeros(shape), torch.ones(shape)).to(x.device)
        model.load_state_dict(blob["state"])
        fit = TunedFit(model.eval(), candidate, log, blob["val_scores"], len(x))
    except Exception:  # noqa: BLE001 - missing, corrupt, or written by another putlab version: a miss, trained again
        return None
    remember(key, fit)
    return fit


def store_fit(key: str, fit: TunedFit, folder: str) -> None:
    """Keep ``fit`` in this process and on disk (written atomically: a concurrent task reads all of it or nothing)."""
    save_atomically(Path(folder) / f"{key}.pt", {"state": fit.model.state_dict(), "candidate": asdict(fit.candidate),
                                                 "log": asdict(fit.log), "val_scores": fit.val_scores})
    remember(key, fit)


def remember(key: str, fit: TunedFit) -> None:
    """Keep ``fit`` among the last :data:`MEMORY_FITS` in this process."""
    _FITS[key] = fit
    _FITS.move_to_end(key)
    while len(_FITS) > MEMORY_FITS:
        _FITS.popitem(last=False)


@dataclass(frozen=True)
class DeepAttacker:
    """A family of fresh networks fitted on the released training split; the best on validation scores the test split.

    ``model`` builds a network from (number of classes, width); ``width`` is the family's base width
    (default: a SmallCNN sized for the images' (C, H, W), at width 16, so the family has widths 16 and 32).
    Per-step labels [N, T] (e.g. hourly occupancy) need a network with logits [N, classes, T].

    The default family's fits are content-addressed (:func:`fit_key`): a fit already made on the same data with the
    same budget (e.g. on raw images, which an identity release gives back byte for byte) is read from ``cache_dir``
    instead of trained again; ``store`` keeps this attacker's own fits there (the raw-data fits every checkpoint of a
    sweep shares). Fitting is deterministic for a given budget and seed, so a read fit is the one training would give.
    """

    budget: AttackBudget = field(default_factory=AttackBudget)
    name: str = "deep"
    model: ModelBuilder | None = None
    width: int = 16
    cache_dir: str | None = FIT_CACHE
    store: bool = False
    std_floor: float = 0.01  # the input standardisation's floor (Standardized.statistics)

    def fit(self, x: torch.Tensor, s: torch.Tensor, num_classes: int) -> TunedFit:
        """The tuned, early-stopped attacker on training data (x, s): nothing of the test split is read."""
        if self.model is not None or self.cache_dir is None:
            return tune_classifier(self.model or image_cnn(x), x, s, num_classes, self.budget, self.width,
                                   self.std_floor)
        key = fit_key(x, s, num_classes, self.budget, self.width, self.std_floor)
        fit = cached_fit(key, x, num_classes, self.cache_dir)
        if fit is None:
            fit = tune_classifier(image_cnn(x), x, s, num_classes, self.budget, self.width, self.std_floor)
            if self.store:
                store_fit(key, fit, self.cache_dir)
        return fit

    def run(self, data: AttackInput) -> AttackResult:
        """Tune on the released training split, then score the chosen network once on the released test split."""
        fit = self.fit(data.train_x, data.train_s, data.num_classes)
        return tuned_result(self.name, fit, predict_logits(fit.model, data.test_x), data.test_s, data.num_classes)


def image_cnn(x: torch.Tensor) -> ModelBuilder:
    """The default family's builder: SmallCNN for the (C, H, W) of images ``x`` [N, C, H, W]; other inputs need a model."""
    if x.dim() != 4:
        raise ValueError(f"the default deep attacker is a CNN for images [N, C, H, W], got inputs {list(x.shape)}; "
                         "give it a model for this data")
    channels, height, width = x.shape[1:]
    return partial(SmallCNN, in_shape=(channels, height, width))


@dataclass(frozen=True)
class RawTrainedDeepAttacker:
    """Non-retrained attacker: the tuned CNN family fitted on raw (unreleased) images, applied unchanged to the release.

    Every checkpoint of a sweep shares the same raw training data, so the fit is stored by content (see
    :class:`DeepAttacker`) in ``cache_dir`` (default: the system's temporary folder): every farm task on a machine
    trains it once. It reads data it was not trained on, so its input standardisation scales no pixel up more than
    the average one (``std_floor`` 1): with the retrained attackers' 1 % floor, the pixels black in every raw image
    (a fifth of MNIST's) were divided by 0.002, and noise of 0.01 on them turned every prediction into one class.
    """

    budget: AttackBudget = field(default_factory=AttackBudget)
    name: str = "deep_raw"
    width: int = 16
    cache_dir: str = FIT_CACHE

    def run(self, data: AttackInput) -> AttackResult:
        """Fit (or reuse) on raw training images, score on the released test split."""
        if data.raw_train_x is None:
            raise ValueError("deep_raw attacker needs the raw training inputs (AttackInput.raw_train_x)")
        fit = DeepAttacker(self.budget, self.name, None, self.width, self.cache_dir, store=True,
                           std_floor=RAW_STD_FLOOR).fit(data.raw_train_x, data.train_s, data.num_classes)
        return tuned_result(self.name, fit, predict_logits(fit.model, data.test_x), data.test_s, data.num_classes)


SPECS = (
    AttackerSpec("deep", lambda config, figures: DeepAttacker(AttackBudget.of(config)), frozenset({Need.RELEASED}),
                 summary="the tuned CNN family retrained on the released training split"),
    AttackerSpec("deep_raw", lambda config, figures: RawTrainedDeepAttacker(AttackBudget.of(config)),
                 frozenset({Need.RELEASED, Need.RAW_TRAIN_X}),
                 summary="the tuned CNN family fitted on raw training inputs, applied unchanged to the release"),
)
