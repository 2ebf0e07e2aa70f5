"""Typed, validated configuration of one AMNIST privatizer trial (the flat dict Tune passes in)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from trainables.typed_config import TypedConfig


@dataclass(frozen=True)
class PrivatizerConfig(TypedConfig):
    """Every knob of the AMNIST stochastic U-Net privatizer (docs/mechanisms.md#privatizer): the axes are alpha and algorithm."""

    kind = "privatizer"

    mechanism: str = "privatizer"
    dataset: str = "amnist"
    alpha: float = 0.5  # weight of the secret term of the privatizer loss, in [0, 1]
    algorithm: int = 1  # 1: all estimators learned; 2: the provider's raw-data digit classifier φ frozen, also P(u|q);
    # 3: φ and the raw-data thickness classifier η both frozen and applied to q
    estimator_steps: int = 1  # estimator updates (fresh batches) before each privatizer update
    seed: int = 0
    epochs: int = 3
    batch_size: int = 128
    lr: float = 1e-3
    width: int = 16
    noise_channels: int = 4
    pretrain_epochs: int = 1  # U-Net as an autoencoder and every estimator on raw images, before the game
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
            (math.isfinite(self.alpha) and 0 <= self.alpha <= 1, f"alpha must be in [0, 1] (got {self.alpha})"),
            (self.algorithm in (1, 2, 3), f"algorithm must be 1, 2 or 3 (got {self.algorithm})"),
            (self.estimator_steps >= 1, f"estimator_steps must be >= 1 (got {self.estimator_steps})"),
            (self.epochs >= 1, f"epochs must be >= 1 (got {self.epochs})"),
            (self.batch_size >= 1, f"batch_size must be >= 1 (got {self.batch_size})"),
            (math.isfinite(self.lr) and self.lr > 0, f"lr must be a finite value > 0 (got {self.lr})"),
            (self.width >= 1, f"width must be >= 1 (got {self.width})"),
            (self.noise_channels >= 0, f"noise_channels must be >= 0 (got {self.noise_channels})"),
            (self.pretrain_epochs >= 0, f"pretrain_epochs must be >= 0 (got {self.pretrain_epochs})"),
            (self.n_train is None or self.n_train >= 1, f"n_train must be >= 1 (got {self.n_train})"),
            (self.n_test is None or self.n_test >= 1, f"n_test must be >= 1 (got {self.n_test})"),
            (self.attack_epochs >= 1, f"attack_epochs must be >= 1 (got {self.attack_epochs})"),
            (self.attack_patience >= 1, f"attack_patience must be >= 1 (got {self.attack_patience})"),
            (self.attack_search in ("halving", "full"), f"attack_search must be halving or full (got {self.attack_search!r})"),
            (self.checkpoint_every >= 1, f"checkpoint_every must be >= 1 (got {self.checkpoint_every})"),
            (self.threads >= 1, f"threads must be >= 1 (got {self.threads})"),
            (self.mia_references >= 1, f"mia_references must be >= 1 (got {self.mia_references})"),
            (0 <= self.rmia_offline_a <= 1, f"rmia_offline_a must lie in [0, 1] (got {self.rmia_offline_a})"),
        ]
