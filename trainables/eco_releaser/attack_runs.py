"""The attackers an ECO trial runs itself: the imputation attacker, and the deep LSTM attacker on a release."""
from __future__ import annotations

import torch

from attacks.attackers.deep import DeepAttacker
from attacks.attackers.tuning import tuned_result
from attacks.audits.imputation import ImputationAttacker
from attacks.base import AttackInput, AttackResult
from core.training import predict_logits
from trainables.eco_releaser.config import EcoConfig
from trainables.eco_releaser.nets import adversary_net
from trainables.eco_releaser.scores import within_hour_accuracy
from trainables.eco_releaser.windows import EcoSplit


def imputation_attack(cfg: EcoConfig, raw: AttackInput, train: EcoSplit, test: EcoSplit) -> AttackResult:
    """The best attacker that sees no consumption (:mod:`attacks.audits.imputation`): occupancy from the prior, the side
    information (which the farm's SI attackers are given), the hour of day (a reading's public timestamp) and the step's
    position in its window, alone, joined with SI and fitted within each hour; pooled (``accuracy``) and within hours
    (``accuracy_within_hour``, the front's axis)."""
    position = torch.arange(train.occupancy.shape[1], device=train.hour.device)
    public = {"hour": (train.hour, test.hour),
              "position": (position.expand_as(train.hour), position.expand_as(test.hour))}

    def within_hour(pred: torch.Tensor) -> dict[str, float]:
        return {"accuracy_within_hour": within_hour_accuracy(pred.flatten(), test.occupancy.flatten(),
                                                             test.hour.flatten())}

    return ImputationAttacker(cfg).run(raw, public, within_hour, strata=("hour", train.hour, test.hour))


def deep_attacker(cfg: EcoConfig) -> DeepAttacker:
    """The adversary's LSTM retrained from scratch as a tuned, early-stopped family (widths hidden and 2·hidden)."""
    return DeepAttacker(cfg, model=adversary_net(cfg), width=cfg.adversary_hidden)


def deep_attack(cfg: EcoConfig, train_x: torch.Tensor, train: EcoSplit, test_x: torch.Tensor,
                test: EcoSplit) -> dict[str, float]:
    """The tuned deep attacker fitted on (train_x, train's occupancy), scored once on test_x: its pooled metrics and
    ``accuracy_within_hour``, under ``attack/deep/``."""
    attacker = deep_attacker(cfg)
    fit = attacker.fit(train_x, train.occupancy, 2)
    logits = predict_logits(fit.model, test_x)
    pred = logits.argmax(1)
    result = tuned_result(attacker.name, fit, logits, test.occupancy, 2)
    result.metrics["accuracy_within_hour"] = within_hour_accuracy(pred, test.occupancy, test.hour)
    return result.logged()
