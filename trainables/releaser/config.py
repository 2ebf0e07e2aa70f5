"""Typed, validated configuration of one α-MI releaser trial (the flat dict Tune passes in)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from trainables.typed_config import TypedConfig


@dataclass(frozen=True)
class ReleaserConfig(TypedConfig):
    """Every knob of an AMNIST α-MI releaser trial; grid axes are alpha, lam and adv_steps (docs/mechanisms.md#α-mi-releaser)."""

    kind = "releaser"
    infinite = frozenset({"alpha"})  # α = ∞ is the max-divergence end of the α range

    mechanism: str = "releaser"
    dataset: str = "amnist"
    alpha: float = 1.0
    lam: float = 0.0
    adv_steps: int = 1
    seed: int = 0
    epochs: int = 3
    batch_size: int = 128
    lr: float = 1e-3
    mse_weight: float = 10.0
    utility_ce_weight: float = 1.0
    noise_channels: int = 4
    width: int = 16
    pretrain_epochs: int = 1
    n_train: int | None = None
    n_test: int | None = None
    data_root: str = ""
    download: bool = False
    attack_epochs: int = 60  # each learned attacker's epoch cap; early stopping usually ends it sooner
    attack_patience: int = 10
    attack_search: str = "halving"
    checkpoint_every: int = 1
    threads: int = 1
    mia_references: int = 2  # reference models per network for the farm's RMIA and LiRA
    rmia_offline_a: float = 0.3  # RMIA's offline correction a, in [0, 1]
    samples_in_figure: int = 8
    kill_worker_after_epoch: int = -1

    def checks(self) -> list[tuple[bool, str]]:
        """Range checks, each with a message naming the value."""
        return [
            (self.alpha > 0, f"alpha must be > 0 (got {self.alpha})"),
            (self.lam >= 0 and not math.isinf(self.lam), f"lam must be a finite value >= 0 (got {self.lam})"),
            (self.adv_steps >= 1, f"adv_steps (k) must be >= 1 (got {self.adv_steps})"),
            (self.epochs >= 1, f"epochs must be >= 1 (got {self.epochs})"),
            (self.batch_size >= 1, f"batch_size must be >= 1 (got {self.batch_size})"),
            (self.lr > 0, f"lr must be > 0 (got {self.lr})"),
            (self.pretrain_epochs >= 0, f"pretrain_epochs must be >= 0 (got {self.pretrain_epochs})"),
            (self.attack_epochs >= 1, f"attack_epochs must be >= 1 (got {self.attack_epochs})"),
            (self.attack_patience >= 1, f"attack_patience must be >= 1 (got {self.attack_patience})"),
            (self.attack_search in ("halving", "full"), f"attack_search must be halving or full (got {self.attack_search!r})"),
            (self.checkpoint_every >= 1, f"checkpoint_every must be >= 1 (got {self.checkpoint_every})"),
            (self.n_train is None or self.n_train >= 1, f"n_train must be >= 1 (got {self.n_train})"),
            (self.n_test is None or self.n_test >= 1, f"n_test must be >= 1 (got {self.n_test})"),
            (self.threads >= 1, f"threads must be >= 1 (got {self.threads})"),
            (self.mia_references >= 1, f"mia_references must be >= 1 (got {self.mia_references})"),
            (0 <= self.rmia_offline_a <= 1, f"rmia_offline_a must lie in [0, 1] (got {self.rmia_offline_a})"),
        ]
