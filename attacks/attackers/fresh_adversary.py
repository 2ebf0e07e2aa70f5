"""The α-MI paper's own attacker (its § III and § IV-C): "a distinct network, called attacker", with about the structure
of the game's adversary, trained once on the release. One network, no family, no validation split, no early stopping:
what the paper measured its privacy with, beside the farm's tuned attackers (docs/attacks.md#fresh_adversary).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from attacks.base import AttackInput, AttackResult
from attacks.spec import AttackerSpec, Need
from core.config import AttackBudget, Training, TrialConfig
from core.metrics import accuracy_metrics
from core.nets import game_classifier
from core.training import fit_classifier, predict_logits


@dataclass(frozen=True)
class FreshAdversary:
    """A fresh copy of the game's adversary architecture (:func:`core.nets.game_classifier` at the game's width, behind
    an input norm where the game's players have one), trained once like the adversary (Adam at the game's step and
    batch size, plain cross-entropy) on the whole released training split for ``epochs`` epochs, then scored once on
    the released test split."""

    width: int = 16
    input_norm: bool = False
    epochs: int = 60
    batch_size: int = 128
    lr: float = 1e-3
    seed: int = 0
    name: str = "fresh_adversary"

    @classmethod
    def of(cls, config: TrialConfig) -> FreshAdversary:
        """The trial's game settings: its players' width and input norm (where the mechanism's config has them, as
        the releaser's does), its step and batch size, and the attackers' epoch cap as the one training's length."""
        game, budget = Training.of(config), AttackBudget.of(config)
        return cls(getattr(config, "width", cls.width), getattr(config, "player_input_norm", cls.input_norm),
                   budget.attack_epochs, game.batch_size, game.lr, config.seed)

    def network(self, data: AttackInput) -> nn.Module:
        """A fresh network of the adversary's architecture for the release's images and classes, seeded."""
        torch.manual_seed(self.seed)
        channels, height, width = data.train_x.shape[1:]
        return game_classifier(data.num_classes, self.width, (channels, height, width), self.input_norm)

    def run(self, data: AttackInput) -> AttackResult:
        """Train the one network on the released training split, score it on the released test split."""
        model = self.network(data).to(data.train_x.device)
        generator = torch.Generator(device=data.train_x.device).manual_seed(self.seed)
        fit_classifier(model, data.train_x, data.train_s, epochs=self.epochs, batch_size=self.batch_size, lr=self.lr,
                       generator=generator)
        pred = predict_logits(model, data.test_x).argmax(1)
        return AttackResult(self.name, accuracy_metrics(pred, data.test_s, data.num_classes)
                            | {"train_records": float(len(data.train_x)), "epochs": float(self.epochs)})


SPECS = (
    AttackerSpec("fresh_adversary", lambda config, figures: FreshAdversary.of(config),
                 frozenset({Need.RELEASED, Need.AMNIST_DIGITS}),
                 summary="the α-MI paper's attacker: a copy of the game's adversary trained once on the release, untuned"),
)
