"""The attack farm's one interface: typed inputs, typed results, and the attacker protocol.

Every attacker is fitted on a checkpoint's released training split and scored on its released test
split (docs/attacks.md#how-a-checkpoint-is-attacked), and returns its metrics under the shared names ``attack/<name>/<metric>``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import torch


@dataclass(frozen=True)
class AttackInput:
    """Released splits with the private attribute S, plus what some attackers also see.

    ``train_u``/``test_u``: the utility attribute (e.g. the digit), public by design of the release.
    ``raw_train_x``: unreleased training inputs, for attackers trained on raw data (non-retrained).
    ``train_si``/``test_si``: side information, float [N, d] (e.g. one-hot weekday and month).
    """

    train_x: torch.Tensor
    train_s: torch.Tensor
    test_x: torch.Tensor
    test_s: torch.Tensor
    num_classes: int
    train_u: torch.Tensor | None = None
    test_u: torch.Tensor | None = None
    raw_train_x: torch.Tensor | None = None
    train_si: torch.Tensor | None = None
    test_si: torch.Tensor | None = None


@dataclass(frozen=True)
class AttackResult:
    """An attacker's metrics (named as logged) and optional PNG figures (file name -> bytes)."""

    name: str
    metrics: dict[str, float] = field(default_factory=dict)
    figures: dict[str, bytes] = field(default_factory=dict)

    def logged(self) -> dict[str, float]:
        """Metrics under their shared MLflow names."""
        return {f"attack/{self.name}/{k}": v for k, v in self.metrics.items()}


class Attacker(Protocol):
    """Anything with a name that turns an AttackInput into an AttackResult."""

    name: str

    def run(self, data: AttackInput) -> AttackResult: ...


@dataclass(frozen=True)
class MembershipTarget:
    """A network a trial trained, with the data it was trained on (members) and held-out data."""

    name: str
    model: torch.nn.Module
    member_x: torch.Tensor
    member_y: torch.Tensor
    nonmember_x: torch.Tensor
    nonmember_y: torch.Tensor


@dataclass(frozen=True)
class CheckpointInputs:
    """Everything the farm attacks for one checkpoint: its released splits and its trained networks."""

    data: AttackInput
    targets: tuple[MembershipTarget, ...] = ()
