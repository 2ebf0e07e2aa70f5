"""Typed, validated configuration of one ECO α-MI releaser trial (the flat dict Tune passes in)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from trainables.typed_config import TypedConfig


@dataclass(frozen=True)
class EcoConfig(TypedConfig):
    """Every knob of an ECO releaser trial; grid axes are alpha, lam, adv_steps (and releaser_si in ``eco-si``).

    ``side_info``: the in-game adversary and the deep attacker see SI (weekday, month) next to the release.
    ``releaser_si`` = 1: the releaser sees SI too. ``data_root``: the real ECO folder; empty = the synthetic generator.
    """

    kind = "eco"
    infinite = frozenset({"alpha"})  # α = ∞ is the max-divergence end of the α range

    mechanism: str = "eco_releaser"
    dataset: str = "eco"
    alpha: float = 1.0
    lam: float = 0.0
    adv_steps: int = 1
    side_info: bool = False
    releaser_si: int = 0  # 0 / 1 (a number, so it can be a grid axis of the trials table)
    seed: int = 0
    data_seed: int = 0
    data_root: str = ""
    households: int = 5
    days: int = 245
    max_missing_hours: int = 2
    test_fraction: float = 0.25
    epochs: int = 20
    pretrain_epochs: int = 5
    batch_size: int = 64
    lr: float = 1e-3
    releaser_lr: float = 3e-4
    pretrain_lr: float = 3e-3
    clip_norm: float = 1.0
    noise_dim: int = 8
    releaser_hidden: int = 64
    releaser_layers: int = 4
    adversary_hidden: int = 32
    adversary_layers: int = 3
    attack_epochs: int = 60  # each learned attacker's epoch cap; early stopping usually ends it sooner
    attack_patience: int = 10
    attack_search: str = "halving"
    checkpoint_every: int = 5
    figure_days: int = 7
    threads: int = 1
    kill_worker_after_epoch: int = -1

    def checks(self) -> list[tuple[bool, str]]:
        """Range checks, each with a message naming the value."""
        return [
            (self.alpha > 0, f"alpha must be > 0 (got {self.alpha})"),
            (self.lam >= 0 and not math.isinf(self.lam), f"lam must be a finite value >= 0 (got {self.lam})"),
            (self.adv_steps >= 1, f"adv_steps (k) must be >= 1 (got {self.adv_steps})"),
            (self.releaser_si in (0, 1), f"releaser_si must be 0 or 1 (got {self.releaser_si})"),
            (1 <= self.households <= 5, f"households must be in 1..5 (got {self.households})"),
            (self.days >= 14, f"days must be >= 14 (got {self.days})"),
            (self.max_missing_hours >= 0, f"max_missing_hours must be >= 0 (got {self.max_missing_hours})"),
            (0 < self.test_fraction < 1, f"test_fraction must be in (0, 1) (got {self.test_fraction})"),
            (self.epochs >= 1, f"epochs must be >= 1 (got {self.epochs})"),
            (self.pretrain_epochs >= 0, f"pretrain_epochs must be >= 0 (got {self.pretrain_epochs})"),
            (self.batch_size >= 1, f"batch_size must be >= 1 (got {self.batch_size})"),
            (self.lr > 0, f"lr must be > 0 (got {self.lr})"),
            (self.releaser_lr > 0, f"releaser_lr must be > 0 (got {self.releaser_lr})"),
            (self.pretrain_lr > 0, f"pretrain_lr must be > 0 (got {self.pretrain_lr})"),
            (self.clip_norm > 0, f"clip_norm must be > 0 (got {self.clip_norm})"),
            (self.noise_dim >= 0, f"noise_dim must be >= 0 (got {self.noise_dim})"),
            (min(self.releaser_hidden, self.releaser_layers, self.adversary_hidden, self.adversary_layers) >= 1,
             "network sizes must be >= 1"),
            (self.attack_epochs >= 1, f"attack_epochs must be >= 1 (got {self.attack_epochs})"),
            (self.attack_patience >= 1, f"attack_patience must be >= 1 (got {self.attack_patience})"),
            (self.attack_search in ("halving", "full"), f"attack_search must be halving or full (got {self.attack_search!r})"),
            (self.checkpoint_every >= 1, f"checkpoint_every must be >= 1 (got {self.checkpoint_every})"),
            (self.figure_days >= 1, f"figure_days must be >= 1 (got {self.figure_days})"),
            (self.threads >= 1, f"threads must be >= 1 (got {self.threads})"),
        ]
