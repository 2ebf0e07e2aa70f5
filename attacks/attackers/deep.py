"""Deep attackers: a CNN family retrained on released data, and one trained on raw data applied to the release.

Both are the tuned, early-stopped family of :mod:`core.classifier`, fitted on a validation split of their training
data (docs/attacks.md#deep): the number they report is what a competent attacker of that kind reaches, not a
fixed-epoch lower bound.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from attacks.attackers.tuning import tuned_result
from attacks.base import AttackInput, AttackResult
from attacks.spec import AttackerSpec, Need
from core.classifier import FIT_CACHE, TunedClassifier, raw_data_classifier
from core.config import AttackBudget
from core.training import predict_logits


@dataclass(frozen=True)
class DeepAttacker(TunedClassifier):
    """The tuned classifier family (:class:`core.classifier.TunedClassifier`: its fields, ``fit`` and fit cache) fitted on
    the released training split with S as the label; the best on validation scores the test split once."""

    name: str = "deep"

    def run(self, data: AttackInput) -> AttackResult:
        """Tune on the released training split, then score the chosen network once on the released test split."""
        fit = self.fit(data.train_x, data.train_s, data.num_classes)
        return tuned_result(self.name, fit, predict_logits(fit.model, data.test_x), data.test_s, data.num_classes)


@dataclass(frozen=True)
class RawTrainedDeepAttacker:
    """Non-retrained attacker: the family fitted on raw (unreleased) images, applied unchanged to the release
    (:func:`core.classifier.raw_data_classifier`: stored by content, so every farm task on a machine trains it once)."""

    budget: AttackBudget = field(default_factory=AttackBudget)
    name: str = "deep_raw"
    width: int = 16
    cache_dir: str = FIT_CACHE

    def run(self, data: AttackInput) -> AttackResult:
        """Fit (or reuse) on raw training images, score on the released test split."""
        if data.raw_train_x is None:
            raise ValueError("deep_raw attacker needs the raw training inputs (AttackInput.raw_train_x)")
        fit = raw_data_classifier(self.budget, self.width, self.cache_dir).fit(data.raw_train_x, data.train_s,
                                                                               data.num_classes)
        return tuned_result(self.name, fit, predict_logits(fit.model, data.test_x), data.test_s, data.num_classes)


SPECS = (
    AttackerSpec("deep", lambda config, figures: DeepAttacker(AttackBudget.of(config)), frozenset({Need.RELEASED}),
                 summary="the tuned CNN family retrained on the released training split"),
    AttackerSpec("deep_raw", lambda config, figures: RawTrainedDeepAttacker(AttackBudget.of(config)),
                 frozenset({Need.RELEASED, Need.RAW_TRAIN_X}),
                 summary="the tuned CNN family fitted on raw training inputs, applied unchanged to the release"),
)
