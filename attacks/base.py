"""The attack farm's one interface: typed inputs, typed results, and the attacker protocol.

Every attacker is fitted on a checkpoint's released training split and scored on its released test
split (docs/attacks.md#how-a-checkpoint-is-attacked), and returns its metrics under the shared names ``attack/<name>/<metric>``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np
import torch

from core.config import TrialConfig
from core.metric_names import attack_metric
from core.reference_models import Recipe


@dataclass(frozen=True)
class AttackInput:
    """Released splits with the private attribute S, plus what some attackers also see.

    ``train_u``/``test_u``: the utility attribute (e.g. the digit), public by design of the release.
    ``raw_train_x``: unreleased training inputs, for attackers trained on raw data (non-retrained).
    ``train_si``/``test_si``: side information, float [N, d] (e.g. one-hot weekday and month).
    ``dataset``: the registry name of the data set the splits come from ("" when not known).
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
    dataset: str = ""


@dataclass(frozen=True)
class MembershipScores:
    """A membership attacker's float64 score of every audited record (higher = member): ``members`` in the order of
    the target's ``member_x`` (its training records), ``nonmembers`` in the order of its ``nonmember_x``."""

    members: np.ndarray
    nonmembers: np.ndarray


@dataclass(frozen=True)
class AttackResult:
    """An attacker's metrics (named as logged) and optional PNG figures (file name -> bytes).

    ``scores``: a membership attacker's per-record scores (the farm turns them into the most exposed records).
    """

    name: str
    metrics: dict[str, float] = field(default_factory=dict)
    figures: dict[str, bytes] = field(default_factory=dict)
    scores: MembershipScores | None = None

    def logged(self) -> dict[str, float]:
        """Metrics under their shared MLflow names."""
        return {attack_metric(self.name, k): v for k, v in self.metrics.items()}


class Attacker(Protocol):
    """Anything with a name that turns an AttackInput into an AttackResult."""

    @property
    def name(self) -> str: ...  # read-only, so frozen dataclasses satisfy it

    def run(self, data: AttackInput) -> AttackResult: ...


Deferred = Callable[[], torch.Tensor]  # a tensor computed on first use (a population's release, which costs seconds)


@dataclass(frozen=True)
class ReferenceData:
    """What reference-model attacks (RMIA, LiRA) need besides the target: a recipe and a population pool.

    The population is disjoint from the target's members and from the audited non-members.
    ``train_x``: the population as the target's training saw its inputs (raw images for a network
    trained on raw data, released images for one trained on a release); ``query_x``: the same
    samples as the attack queries the target (defaults to ``train_x``). Either may be given as a
    function that computes it, called once when an attack first reads it (:attr:`inputs`, :attr:`queries`), so a
    farm whose attackers need no reference models never releases the population. ``train_size``: the
    target's training-set size (defaults to its member count). ``cache_dir``: where trained
    reference weights are kept across processes (none: in-process only).
    """

    recipe: Recipe
    train_x: torch.Tensor | Deferred
    y: torch.Tensor
    query_x: torch.Tensor | Deferred | None = None
    train_size: int | None = None
    cache_dir: str | None = None

    def _resolved(self, name: str) -> torch.Tensor:
        """The field ``name`` as a tensor, computed (and kept) on first use where it was deferred."""
        value = getattr(self, name)
        if callable(value):
            value = value()
            object.__setattr__(self, name, value)  # computed once: the dataclass is frozen to its users, not to itself
        return value

    @property
    def inputs(self) -> torch.Tensor:
        """The population as the target's training saw its inputs."""
        return self._resolved("train_x")

    @property
    def queries(self) -> torch.Tensor:
        """The population as the attacked network sees it."""
        return self.inputs if self.query_x is None else self._resolved("query_x")


@dataclass(frozen=True)
class Canaries:
    """Mislabelled records planted to audit one network (docs/membership.md#canaries): ``member_x`` were in its training
    data, ``nonmember_x`` were held out; ``*_y`` are the (wrong) labels they were planted with."""

    member_x: torch.Tensor
    member_y: torch.Tensor
    nonmember_x: torch.Tensor
    nonmember_y: torch.Tensor


@dataclass(frozen=True)
class MembershipTarget:
    """A network a trial trained, with the data it was trained on (members), held-out data, and reference data.

    ``canaries``: records planted in its training data and held out beside it, audited apart from the ordinary ones.
    """

    name: str
    model: torch.nn.Module
    member_x: torch.Tensor
    member_y: torch.Tensor
    nonmember_x: torch.Tensor
    nonmember_y: torch.Tensor
    reference: ReferenceData | None = None
    canaries: Canaries | None = None

    def canary_target(self) -> MembershipTarget | None:
        """The same network audited on its canaries alone, named ``<name>/canary``, with the same reference models as
        its ordinary records (trained on as many records); None without canaries."""
        if self.canaries is None:
            return None
        c, ref = self.canaries, self.reference
        reference = None if ref is None else replace(ref, train_size=ref.train_size or len(self.member_y))
        return MembershipTarget(f"{self.name}/canary", self.model, c.member_x, c.member_y, c.nonmember_x,
                                c.nonmember_y, reference)


class MembershipAttacker(Protocol):
    """Anything that attacks one network's membership: scores with "higher = member", metrics per target.

    What it needs (e.g. a population for reference models) is declared in its registry entry (attacks/spec.py).
    """

    @property
    def name(self) -> str: ...  # read-only, so frozen dataclasses satisfy it

    def run_on_target(self, target: MembershipTarget) -> AttackResult: ...


@dataclass(frozen=True)
class CheckpointInputs:
    """Everything the farm attacks for one checkpoint: its released splits, its trained networks, and the trial's
    validated config, which sets the attackers' budget and membership settings (default: every setting's default)."""

    data: AttackInput
    targets: tuple[MembershipTarget, ...] = ()
    config: TrialConfig = field(default_factory=TrialConfig)
