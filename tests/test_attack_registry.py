"""The attacker registry: declarations, one-line errors for unknown names and unmet needs, and skips with reasons."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from torch import nn

from attacks.attackers.membership import YeomAttacker
from attacks.attackers.reference_attack import ReferenceSettings
from attacks.attackers.registry import REGISTRY, Registry, check_names, primary_metric
from attacks.attackers.rmia import RmiaAttacker
from attacks.base import AttackInput, AttackResult, CheckpointInputs, MembershipTarget
from attacks.farm.checkpoint import attack_inputs
from attacks.spec import AttackerSpec, Need
from core.config import AttackBudget, MembershipAttacks, TrialConfig
from core.plugins import PluginClash


def released(n: int = 40, **extra: torch.Tensor) -> AttackInput:
    gen = torch.Generator().manual_seed(0)
    s = torch.randint(0, 2, (n,), generator=gen)
    return AttackInput(torch.rand(n, 4, generator=gen), s, torch.rand(n, 4, generator=gen), s.flip(0), 2, **extra)


def bare_target(name: str) -> MembershipTarget:
    """A small network with no population for reference models."""
    torch.manual_seed(0)
    x, y = torch.randn(30, 3), torch.randint(0, 2, (30,))
    return MembershipTarget(name, nn.Linear(3, 2).eval(), x[:15], y[:15], x[15:], y[15:])


@dataclass(frozen=True)
class Majority:
    """A toy plug-in: always the most frequent training class."""

    name: str = "majority"

    def run(self, data: AttackInput) -> AttackResult:
        guess = torch.bincount(data.train_s).argmax()
        return AttackResult(self.name, {"accuracy": float((data.test_s == guess).float().mean())})


def test_registry_knows_every_attacker_with_its_primary_metric() -> None:
    # found, not listed: every module of attacks/attackers/ with SPECS, in module-name order (membership.py is yeom's)
    assert list(REGISTRY)[:10] == ["deep", "deep_raw", "fresh_adversary", "knn", "lira", "yeom", "rmia", "side_info",
                                   "si_only", "thickness"]
    assert primary_metric("deep") == "attack/deep/accuracy" and primary_metric("rmia") == "attack/rmia/auc"
    assert all(REGISTRY[n].per_target for n in ("yeom", "rmia", "lira"))
    assert not any(REGISTRY[n].per_target for n in ("deep", "deep_raw", "thickness", "side_info", "si_only"))


def test_unknown_names_give_one_line_listing_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"^unknown attacker\(s\) laser, maser; known: deep, deep_raw, ") as err:
        check_names(["deep", "laser", "maser"])
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match=r"unknown attacker\(s\) laser; known: deep"):
        primary_metric("laser")
    with pytest.raises(ValueError) as err:  # found by the hostile-commands property test: "0\n0" split the error line
        REGISTRY.check_names(["0\n0"])
    assert str(err.value).startswith("unknown attacker(s) '0\\n0'; known: deep") and "\n" not in str(err.value)


def test_bad_declarations_are_refused() -> None:
    with pytest.raises(ValueError, match="one non-empty path segment"):
        AttackerSpec("a/b", lambda c, f: Majority(), frozenset())
    with pytest.raises(ValueError, match="must also need TARGETS"):
        AttackerSpec("r", lambda c, f: Majority(), frozenset({Need.REFERENCE}))
    spec = AttackerSpec("m", lambda c, f: Majority(), frozenset())
    with pytest.raises(PluginClash, match="registered twice"):
        Registry([spec, spec])


def test_the_farm_runs_any_registered_attacker() -> None:
    registry = Registry([AttackerSpec("majority", lambda config, figures: Majority(), frozenset({Need.RELEASED}))])
    report = attack_inputs(CheckpointInputs(released()), ["majority"], registry=registry)
    assert set(report.metrics) == {"attack/majority/accuracy"} and set(report.seconds) == {"majority"}


def test_an_unmet_data_need_is_one_line_before_anything_runs() -> None:
    with pytest.raises(ValueError, match=r"^attacker 'side_info' needs side information \(AttackInput.train_si") as err:
        attack_inputs(CheckpointInputs(released()), ["knn", "side_info"])
    assert "\n" not in str(err.value)
    empty = torch.empty(0, 4)
    bare = AttackInput(empty, torch.empty(0, dtype=torch.long), empty, torch.empty(0, dtype=torch.long), 2)
    with pytest.raises(ValueError, match="'deep' needs the released splits"):
        attack_inputs(CheckpointInputs(bare), ["deep"])


def test_membership_attackers_skip_checkpoints_and_networks_they_cannot_attack_with_a_reason() -> None:
    report = attack_inputs(CheckpointInputs(released()), ["yeom", "rmia"], figures=False)
    assert report.metrics == {} and report.seconds == {}
    assert report.skipped["yeom"].startswith("needs trained networks to test for membership")
    inputs = CheckpointInputs(released(), (bare_target("bare"),))
    report = attack_inputs(inputs, ["yeom", "rmia"], figures=False)
    assert "attack/yeom/bare/auc" in report.metrics and "attack/yeom/auc" in report.metrics
    assert not any(k.startswith("attack/rmia/") for k in report.metrics)
    assert report.skipped == {"rmia/bare": "needs a population for reference models (MembershipTarget.reference)"}


def test_built_attackers_follow_the_trial_config() -> None:
    yeom = REGISTRY["yeom"].build(TrialConfig(seed=3), False)
    assert yeom == YeomAttacker(seed=3, figure=False)
    rmia = REGISTRY["rmia"].build(MembershipAttacks(seed=2, mia_references=4, rmia_offline_a=0.5), True)
    assert (rmia.offline_a, rmia.settings.references, rmia.settings.seed, rmia.settings.figure) == (0.5, 4, 2, True)
    budget = AttackBudget(attack_epochs=7)
    assert REGISTRY["deep"].build(budget, True).budget is budget  # the validated config itself, not a copy
    # a config without a group gets the group's defaults (from the one model that declares them) and its own seed
    assert REGISTRY["deep"].build(TrialConfig(seed=5), True).budget == AttackBudget(seed=5)
    assert REGISTRY["rmia"].build(TrialConfig(seed=5), False) == RmiaAttacker(settings=ReferenceSettings(seed=5))


def test_attack_modules_import_neither_platform_nor_trainables() -> None:
    root = Path(__file__).resolve().parents[1] / "attacks"
    for path in root.rglob("*.py"):  # every room
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.split(".")[0] in ("platform", "trainables") for n in names), path.name
