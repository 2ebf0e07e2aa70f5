"""The imputation attacker (docs/attacks.md#the-imputation-baseline): the best attacker that never sees the release.

An attribute attacker's accuracy means little alone: part of S can be guessed from what the attacker knows without
the release. The family here guesses S from exactly that, each member from one set of public features:

- ``prior``: none (the majority class of the attacker's training records; balanced accuracy 1/|S|, chance);
- ``utility``: the utility label U (``AttackInput.train_u``, public by design of the release, e.g. the digit);
- ``side_info``: the side information alone (the :class:`~attacks.attackers.side_info.SiOnlyAttacker`);
- any public per-label feature a mechanism names (ECO: the hour of day, the step's position in its window);
- ``side_info_and_<f>``: side information joined with each other feature;
- ``<member>_by_<stratum>``: with strata (ECO: the hour of day), each member fitted within each stratum, the Bayes
  rule for balanced accuracy within strata (ECO's ``accuracy_within_hour``).

Every member is the SI-only attacker's rule on its features (:meth:`SiOnlyAttacker.predict`): the exact plug-in Bayes
rule for balanced accuracy, argmax_s P̂(features | s) from training counts (an MLP past ``max_table_rows`` distinct
rows). For a discrete U this is the Bayes classifier, so ``utility`` reads exactly what U says about S. Members are fit
on the attacker's training records and scored once on the test records the release attackers are scored on; the
baseline of each metric is its best member (ties go to the member with fewer features, see :func:`simplest_best`).
A release attacker's accuracy above it is the leakage the release adds.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import torch

from attacks.attackers.side_info import SiOnlyAttacker, per_step
from attacks.base import AttackInput, AttackResult
from core.config import AttackBudget
from core.metrics import accuracy_metrics

NAME = "imputation"
PRIOR = "prior"
UTILITY = "utility"
SIDE_INFO = "side_info"
JOIN = "_and_"  # side_info_and_hour: side information joined with the hour (MLflow names take no "+")
BY = "_by_"  # side_info_by_hour: side information, its rule fitted within each hour

Scorer = Callable[[torch.Tensor], dict[str, float]]  # test predictions (shaped like test_s) -> extra metrics


def member_order(name: str) -> tuple[int, str]:
    """Simplest first: the prior, then members of one feature set, then joined or stratified ones (by name within each)."""
    return (0 if name == PRIOR else 1 + name.count(JOIN) + name.count(BY), name)


def simplest_best(scores: Mapping[str, float]) -> str:
    """The member with the highest score; among equal scores the one with the fewest features (:func:`member_order`).
    The driver names the winner from the logged scores with this same rule."""
    return max(sorted(scores, key=member_order), key=lambda name: scores[name])


def majority(train_s: torch.Tensor, n: int, num_classes: int) -> torch.Tensor:
    """``n`` predictions of the most frequent training class (ties: the lowest class index)."""
    label = int(torch.bincount(train_s.flatten(), minlength=num_classes).argmax())
    return torch.full((n,), label, dtype=torch.long, device=train_s.device)


@dataclass(frozen=True)
class ImputationAttacker:
    """The imputation family on what an :class:`AttackInput` gives without its released data (U, SI) and the public
    per-label features a mechanism adds; the released inputs are never read."""

    budget: AttackBudget = field(default_factory=AttackBudget)
    name: str = NAME

    def features(self, data: AttackInput,
                 public: Mapping[str, tuple[torch.Tensor, torch.Tensor]]) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        """Each public feature set as (train, test) rows, one row per label (per (sample, step) for labels [N, T]).

        ``public``: name -> (train, test) values shaped like ``train_s`` / ``test_s`` (one discrete value per label).
        """
        steps = data.train_s.shape[1] if data.train_s.dim() == 2 else 0

        def rows(values: torch.Tensor) -> torch.Tensor:  # per-sample values [N] or [N, d] -> one row per label
            values = values.float().reshape(len(values), -1)
            return per_step(values, steps, False) if steps else values

        found: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
        if data.train_u is not None and data.test_u is not None:
            found[UTILITY] = (rows(data.train_u), rows(data.test_u))
        if data.train_si is not None and data.test_si is not None:
            found[SIDE_INFO] = (rows(data.train_si), rows(data.test_si))
        for name, (train, test) in public.items():
            if train.shape != data.train_s.shape or test.shape != data.test_s.shape:
                raise ValueError(f"public feature {name!r} must have one value per label: train {tuple(train.shape)}, "
                                 f"test {tuple(test.shape)} against S {tuple(data.train_s.shape)}, "
                                 f"{tuple(data.test_s.shape)}")
            found[name] = (train.float().reshape(-1, 1), test.float().reshape(-1, 1))
        if SIDE_INFO in found:
            si_train, si_test = found[SIDE_INFO]
            for name, (train, test) in list(found.items()):
                if name != SIDE_INFO:
                    found[f"{SIDE_INFO}{JOIN}{name}"] = (torch.cat([si_train, train], 1), torch.cat([si_test, test], 1))
        return found

    def predictions(self, data: AttackInput, public: Mapping[str, tuple[torch.Tensor, torch.Tensor]] | None = None,
                    strata: tuple[str, torch.Tensor, torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
        """Each member's test predictions, shaped like ``test_s``, simplest member first.

        With ``strata`` (name, train and test values shaped like S, e.g. ECO's hour of day), every member whose features
        do not hold the stratum is also fitted within each stratum, as ``<member>_by_<name>``: the Bayes rule for the
        balanced accuracy within strata (``accuracy_within_hour``), which the pooled rule is not.
        """
        train_s, shape = data.train_s.flatten(), data.test_s.shape
        predicted = {PRIOR: majority(train_s, data.test_s.numel(), data.num_classes)}
        rule = SiOnlyAttacker(self.budget)
        for name, (train, test) in self.features(data, public or {}).items():
            predicted[name] = rule.predict(train, train_s, test, data.num_classes)
            if strata is not None and strata[0] not in name.split(JOIN):
                stratum, train_g, test_g = strata[0], strata[1].flatten(), strata[2].flatten()
                pred = predicted[name].clone()
                for g in torch.unique(test_g).tolist():
                    fit, scored = train_g == g, test_g == g
                    if fit.any():
                        pred[scored] = rule.predict(train[fit], train_s[fit], test[scored], data.num_classes)
                predicted[f"{name}{BY}{stratum}"] = pred
        return {name: predicted[name].view(shape) for name in sorted(predicted, key=member_order)}

    def run(self, data: AttackInput, public: Mapping[str, tuple[torch.Tensor, torch.Tensor]] | None = None,
            score: Scorer | None = None, strata: tuple[str, torch.Tensor, torch.Tensor] | None = None) -> AttackResult:
        """Every member's ``<member>/accuracy`` (and ``score``'s metrics), and per metric the best member's value as
        ``accuracy`` (with the winner's 95 % interval, ``accuracy/ci_low|ci_high``) and ``<metric>``."""
        members, keys = {}, ["accuracy"]
        for name, pred in self.predictions(data, public, strata).items():
            extra = score(pred) if score else {}
            members[name] = accuracy_metrics(pred, data.test_s, data.num_classes) | extra
            keys += [key for key in extra if key not in keys]
        metrics = {f"{name}/{key}": scores[key] for name, scores in members.items() for key in keys}
        for key in keys:
            best = simplest_best({name: scores[key] for name, scores in members.items()})
            metrics[key] = members[best][key]
            if key == "accuracy":
                metrics |= {f"accuracy/{b}": members[best][f"accuracy/{b}"] for b in ("ci_low", "ci_high")}
        return AttackResult(self.name, metrics)
