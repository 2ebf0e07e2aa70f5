"""Deep attackers: a CNN family retrained on released data, and one trained on raw data applied to the release.

Both are tuned and early-stopped on a validation split of their training data (docs/attacks.md#deep):
the number they report is what a competent attacker of that kind reaches, not a fixed-epoch lower bound.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

import torch

from attacks.base import AttackInput, AttackResult
from attacks.spec import AttackerSpec, Need
from attacks.tuning import AttackBudget, Candidate, ModelBuilder, TunedFit, tune_classifier, tuned_result
from core.nets import SmallCNN, Standardized
from core.training import FitLog, predict_logits


@dataclass(frozen=True)
class DeepAttacker:
    """A family of fresh networks fitted on the released training split; the best on validation scores the test split.

    ``model`` builds a network from (number of classes, width); ``width`` is the family's base width
    (default: a SmallCNN sized for the images' (C, H, W), at width 16, so the family has widths 16 and 32).
    Per-step labels [N, T] (e.g. hourly occupancy) need a network with logits [N, classes, T].
    """

    budget: AttackBudget = field(default_factory=AttackBudget)
    name: str = "deep"
    model: ModelBuilder | None = None
    width: int = 16

    def fit(self, x: torch.Tensor, s: torch.Tensor, num_classes: int) -> TunedFit:
        """The tuned, early-stopped attacker on training data (x, s): nothing of the test split is read."""
        return tune_classifier(self.model or image_cnn(x), x, s, num_classes, self.budget, self.width)

    def run(self, data: AttackInput) -> AttackResult:
        """Tune on the released training split, then score the chosen network once on the released test split."""
        fit = self.fit(data.train_x, data.train_s, data.num_classes)
        pred = predict_logits(fit.model, data.test_x).argmax(1)
        return tuned_result(self.name, fit, pred, data.test_s, data.num_classes)


def image_cnn(x: torch.Tensor) -> ModelBuilder:
    """The default family's builder: SmallCNN for the (C, H, W) of images ``x`` [N, C, H, W]; other inputs need a model."""
    if x.dim() != 4:
        raise ValueError(f"the default deep attacker is a CNN for images [N, C, H, W], got inputs {list(x.shape)}; "
                         "give it a model for this data")
    channels, height, width = x.shape[1:]
    return partial(SmallCNN, in_shape=(channels, height, width))


_RAW_FITS: dict[str, TunedFit] = {}


def raw_fit_key(x: torch.Tensor, s: torch.Tensor, num_classes: int, budget: AttackBudget, width: int) -> str:
    """Content hash of the raw training data and the fit's settings: equal keys give equal fits."""
    digest = hashlib.sha256()
    for t in (x, s):
        digest.update(t.detach().cpu().contiguous().numpy().tobytes())
    digest.update(repr((tuple(x.shape), num_classes, budget, width)).encode())
    return digest.hexdigest()[:32]


@dataclass(frozen=True)
class RawTrainedDeepAttacker:
    """Non-retrained attacker: the tuned CNN family fitted on raw (unreleased) images, applied unchanged to the release.

    Every checkpoint of a sweep shares the same raw training data, so the fit is cached by a content hash
    of the data and the budget: in the worker process, and on disk under ``cache_dir`` (default: the
    system's temporary folder) so that every farm task on a machine trains it once.
    """

    budget: AttackBudget = field(default_factory=AttackBudget)
    name: str = "deep_raw"
    width: int = 16
    cache_dir: str = field(default_factory=lambda: str(Path(tempfile.gettempdir()) / "putlab-deep-raw"))

    def _fit(self, x: torch.Tensor, s: torch.Tensor, num_classes: int) -> TunedFit:
        key = raw_fit_key(x, s, num_classes, self.budget, self.width)
        if key in _RAW_FITS:
            return _RAW_FITS[key]
        path = Path(self.cache_dir) / f"{key}.pt"
        try:
            # plain tensors and numbers only (weights_only): the cache folder is shared, a planted pickle must not run
            blob = torch.load(path, map_location=x.device, weights_only=True)
            candidate, log = Candidate(**blob["candidate"]), FitLog(**blob["log"])
            shape = (1, *x.shape[1:])
            model = Standardized(image_cnn(x)(num_classes, candidate.width), torch.zeros(shape), torch.ones(shape)).to(x.device)
            model.load_state_dict(blob["state"])
            fit = TunedFit(model.eval(), candidate, log, blob["val_scores"])
        except Exception:  # noqa: BLE001 - missing, corrupt, or written by another putlab version: a cache miss, trained again
            fit = DeepAttacker(self.budget, self.name, image_cnn(x), self.width).fit(x, s, num_classes)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            torch.save({"state": fit.model.state_dict(), "candidate": asdict(fit.candidate), "log": asdict(fit.log),
                        "val_scores": fit.val_scores}, tmp)
            tmp.replace(path)  # atomic: a concurrent task reads the whole file or none
        _RAW_FITS.clear()  # one data set per sweep: keep memory flat
        _RAW_FITS[key] = fit
        return fit

    def run(self, data: AttackInput) -> AttackResult:
        """Fit (or reuse) on raw training images, score on the released test split."""
        if data.raw_train_x is None:
            raise ValueError("deep_raw attacker needs the raw training inputs (AttackInput.raw_train_x)")
        fit = self._fit(data.raw_train_x, data.train_s, data.num_classes)
        pred = predict_logits(fit.model, data.test_x).argmax(1)
        return tuned_result(self.name, fit, pred, data.test_s, data.num_classes)


SPECS = (
    AttackerSpec("deep", lambda config, figures: DeepAttacker(AttackBudget.from_config(config)), frozenset({Need.RELEASED}),
                 summary="the tuned CNN family retrained on the released training split"),
    AttackerSpec("deep_raw", lambda config, figures: RawTrainedDeepAttacker(AttackBudget.from_config(config)),
                 frozenset({Need.RELEASED, Need.RAW_TRAIN_X}),
                 summary="the tuned CNN family fitted on raw training inputs, applied unchanged to the release"),
)
