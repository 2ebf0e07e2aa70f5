"""What an attacker declares to the farm: its name, what it needs, its primary metric, and how a trial config builds it.

The farm reads only these declarations (docs/attacks.md#adding-an-attacker): it never knows an attacker by name.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from attacks.base import Attacker, AttackInput, CheckpointInputs, MembershipAttacker, MembershipTarget
from core.config import TrialConfig


class Need(Enum):
    """Something an attacker reads besides its own settings; the value says where it comes from."""

    RELEASED = "the released splits (non-empty AttackInput.train_x and test_x)"
    RAW_TRAIN_X = "the raw training inputs (AttackInput.raw_train_x)"
    UTILITY = "the utility attribute (AttackInput.train_u and test_u)"
    SIDE_INFO = "side information (AttackInput.train_si and test_si)"
    TARGETS = "trained networks to test for membership (CheckpointInputs.targets)"
    REFERENCE = "a population for reference models (MembershipTarget.reference)"
    AMNIST_DIGITS = "AMNIST's 1×28×28 digit images with the digit as utility attribute (AttackInput.dataset amnist)"


_DATA_CHECKS: dict[Need, Callable[[AttackInput], bool]] = {
    Need.RELEASED: lambda d: len(d.train_x) > 0 and len(d.test_x) > 0,
    Need.RAW_TRAIN_X: lambda d: d.raw_train_x is not None,
    Need.UTILITY: lambda d: d.train_u is not None and d.test_u is not None,
    Need.SIDE_INFO: lambda d: d.train_si is not None and d.test_si is not None,
    Need.AMNIST_DIGITS: lambda d: (d.dataset in ("", "amnist") and tuple(d.train_x.shape[1:]) == (1, 28, 28)
                                   and d.train_u is not None),
}

# Per network: a checkpoint without them is skipped with the reason recorded; any other unmet need is an error.
# An attacker made for one data set (AMNIST_DIGITS) is skipped, with the reason recorded, on a release of another.
SKIPPED_WHEN_ABSENT = frozenset({Need.TARGETS, Need.REFERENCE, Need.AMNIST_DIGITS})

Builder = Callable[[TrialConfig, bool], "Attacker | MembershipAttacker"]


@dataclass(frozen=True)
class AttackerSpec:
    """One attacker as the farm sees it.

    ``build(config, figures)`` makes the attacker from the trial's validated config (its budget or membership settings,
    e.g. ``AttackBudget.of(config)``) and whether to draw pictures. An attacker that needs ``TARGETS`` is a membership
    attacker (``run_on_target`` on every network of a checkpoint); any other is run once on the released splits
    (``run``).
    ``primary_metric``: the metric whose presence means the attacker ran on a checkpoint (``attack/<name>/<metric>``);
    ``higher_leaks``: whether a larger value of it means more leakage.
    """

    name: str
    build: Builder
    needs: frozenset[Need]
    primary_metric: str = "accuracy"
    higher_leaks: bool = True
    summary: str = ""

    def __post_init__(self) -> None:
        """Names become metric paths, so they must be one non-empty path segment; a reference implies targets."""
        if not self.name or "/" in self.name or self.name != self.name.strip():
            raise ValueError(f"attacker name must be one non-empty path segment without spaces (got {self.name!r})")
        if Need.REFERENCE in self.needs and Need.TARGETS not in self.needs:
            raise ValueError(f"attacker {self.name!r} needs a reference population, so it must also need TARGETS")

    @property
    def per_target(self) -> bool:
        """True for a membership attacker, run against each trained network of a checkpoint."""
        return Need.TARGETS in self.needs

    def missing(self, inputs: CheckpointInputs) -> list[Need]:
        """The needs of this attacker that a checkpoint's inputs do not meet (checked before it runs)."""
        gone = [need for need, met in _DATA_CHECKS.items() if need in self.needs and not met(inputs.data)]
        if self.per_target and not inputs.targets:
            gone.append(Need.TARGETS)
        return gone

    def target_missing(self, target: MembershipTarget) -> list[Need]:
        """The needs of this membership attacker that one network does not meet (a population, where it needs one)."""
        return [Need.REFERENCE] if Need.REFERENCE in self.needs and target.reference is None else []
