"""Typed, validated configuration of one Cloak trial (the flat dict Tune passes in; docs/mechanisms.md#cloak)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from trainables.cloak.info import QUANTISATION_SIGMA
from trainables.typed_config import TypedConfig

TASKS = {"gt5": 2, "digit": 10}  # target task -> number of classes ("gt5": digit > 5)


@dataclass(frozen=True)
class CloakConfig(TypedConfig):
    """Every knob of a Cloak trial; grid axes are lam, T and M.

    ``lam`` weighs the target's cross-entropy against the noise term (loss = −log mean σ² + λ·CE), so a larger
    λ keeps more utility and adds less noise. ``T`` is an absolute threshold on σ (σ ≥ T: suppressed), so T ≥ M
    suppresses nothing. ``info_floor`` is the noise σ below which the information estimator
(:mod:`trainables.cloak.info`) counts a pixel as intact (default: 8-bit quantisation noise). ``lr`` trains the target and the farm's attackers; ``cloak_lr`` trains μ, ρ and μ_s.
    """

    kind = "cloak"
    infinite = frozenset({"T"})  # T = ∞: suppress nothing

    mechanism: str = "cloak"
    dataset: str = "mnist32"
    task: str = "gt5"
    lam: float = 1.0
    T: float = 1.0
    M: float = 1.5
    rho_init: float = -4.0
    seed: int = 0
    epochs: int = 6
    suppression_epochs: int = 2
    batch_size: int = 128
    cloak_lr: float = 0.1
    lr: float = 1e-3
    target_epochs: int = 8
    noise_draws: int = 3
    info_floor: float = QUANTISATION_SIGMA
    n_train: int | None = None
    n_test: int | None = None
    data_root: str = ""
    download: bool = False
    attack_epochs: int = 60  # each learned attacker's epoch cap; early stopping usually ends it sooner
    attack_patience: int = 10
    attack_search: str = "halving"
    checkpoint_every: int = 0
    threads: int = 1
    mia_references: int = 2  # reference models per network for the farm's RMIA and LiRA
    rmia_offline_a: float = 0.3  # RMIA's offline correction a, in [0, 1]
    samples_in_figure: int = 8
    kill_worker_after_epoch: int = -1

    @property
    def num_classes(self) -> int:
        """Classes of the target's task."""
        return TASKS[self.task]

    @property
    def perturbation_epochs(self) -> int:
        """The first epochs train μ and ρ; the last ``suppression_epochs`` of ``epochs`` train μ_s."""
        return self.epochs - self.suppression_epochs

    def checks(self) -> list[tuple[bool, str]]:
        """Range checks, each with a message naming the value."""
        return [
            (self.task in TASKS, f"task must be one of {', '.join(TASKS)} (got {self.task!r})"),
            (self.lam >= 0 and not math.isinf(self.lam), f"lam must be a finite value >= 0 (got {self.lam})"),
            (self.M > 0 and not math.isinf(self.M), f"M must be a finite value > 0 (got {self.M})"),
            (self.T > 0, f"T must be > 0 (got {self.T})"),
            (self.rho_init < 0, f"rho_init must be < 0 so that σ starts near 0 (got {self.rho_init})"),
            (self.epochs >= 1, f"epochs must be >= 1 (got {self.epochs})"),
            (0 <= self.suppression_epochs < self.epochs,
             f"suppression_epochs must be in [0, epochs) = [0, {self.epochs}) (got {self.suppression_epochs})"),
            (self.batch_size >= 1, f"batch_size must be >= 1 (got {self.batch_size})"),
            (self.cloak_lr > 0, f"cloak_lr must be > 0 (got {self.cloak_lr})"),
            (self.lr > 0, f"lr must be > 0 (got {self.lr})"),
            (self.target_epochs >= 1, f"target_epochs must be >= 1 (got {self.target_epochs})"),
            (self.noise_draws >= 1, f"noise_draws must be >= 1 (got {self.noise_draws})"),
            (self.info_floor > 0, f"info_floor must be > 0 (got {self.info_floor})"),
            (self.n_train is None or self.n_train >= 1, f"n_train must be >= 1 (got {self.n_train})"),
            (self.n_test is None or self.n_test >= 1, f"n_test must be >= 1 (got {self.n_test})"),
            (self.attack_epochs >= 1, f"attack_epochs must be >= 1 (got {self.attack_epochs})"),
            (self.attack_patience >= 1, f"attack_patience must be >= 1 (got {self.attack_patience})"),
            (self.attack_search in ("halving", "full"), f"attack_search must be halving or full (got {self.attack_search!r})"),
            (self.checkpoint_every >= 0, f"checkpoint_every must be >= 0 (0: last step only; got {self.checkpoint_every})"),
            (self.threads >= 1, f"threads must be >= 1 (got {self.threads})"),
            (self.mia_references >= 1, f"mia_references must be >= 1 (got {self.mia_references})"),
            (0 <= self.rmia_offline_a <= 1, f"rmia_offline_a must lie in [0, 1] (got {self.rmia_offline_a})"),
        ]
