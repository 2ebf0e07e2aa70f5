"""The farm's membership attackers: a registry (name -> attacker) run against every network of a checkpoint.

Each attacker logs ``attack/<name>/<target>/<metric>`` per network and ``attack/<name>/<metric>`` as the
worst case (the largest value over networks, with that network's interval).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from attacks.base import CheckpointInputs, MembershipAttacker
from attacks.lira import LiraAttacker
from attacks.membership import YeomAttacker
from attacks.membership_stats import LOW_FPRS
from attacks.reference_attack import ReferenceSettings
from attacks.rmia import RmiaAttacker

WORST_CASE = ("advantage", "advantage_max", "auc", *LOW_FPRS)


@dataclass(frozen=True)
class MembershipSettings:
    """The trial-config knobs of the membership attackers (defaults where a config lacks them)."""

    seed: int = 0
    references: int = 2
    offline_a: float = 0.3

    @classmethod
    def from_config(cls, config: dict) -> "MembershipSettings":
        """seed, mia_references and rmia_offline_a of a trial config."""
        return cls(int(config.get("seed", 0)), int(config.get("mia_references", 2)), float(config.get("rmia_offline_a", 0.3)))

    def reference(self, figure: bool) -> ReferenceSettings:
        """Settings of the reference-model attackers."""
        return ReferenceSettings(references=self.references, seed=self.seed, figure=figure)


MEMBERSHIP_ATTACKERS: dict[str, Callable[[MembershipSettings, bool], MembershipAttacker]] = {
    "yeom": lambda s, figure: YeomAttacker(seed=s.seed, figure=figure),
    "rmia": lambda s, figure: RmiaAttacker(offline_a=s.offline_a, settings=s.reference(figure)),
    "lira": lambda s, figure: LiraAttacker(settings=s.reference(figure)),
}


def worst_case(per_target: list[dict[str, float]]) -> dict[str, float]:
    """The largest value of each metric over networks, with that network's interval; unmeasurable TPRs stay out."""
    out: dict[str, float] = {}
    for metric in WORST_CASE:
        have = [m for m in per_target if metric in m]
        if metric in LOW_FPRS and per_target:
            out[f"{metric}_measurable"] = float(bool(have))
        if have:
            best = max(have, key=lambda m: m[metric])
            out.update({k: best[k] for k in (metric, f"{metric}/ci_low", f"{metric}/ci_high") if k in best})
    return out


def run_membership(name: str, inputs: CheckpointInputs, config: dict, figures: bool) -> tuple[dict[str, float], dict[str, bytes]]:
    """Attacker ``name`` against every network of the checkpoint (those with a population, for reference attacks)."""
    attacker = MEMBERSHIP_ATTACKERS[name](MembershipSettings.from_config(config), figures)
    metrics: dict[str, float] = {}
    pngs: dict[str, bytes] = {}
    per_target = []
    for target in inputs.targets:
        if attacker.needs_reference and target.reference is None:
            continue
        result = attacker.run_on_target(target)
        metrics.update(result.logged())
        per_target.append(result.metrics)
        pngs.update({png_name.replace("/", "_"): png for png_name, png in result.figures.items()})
    metrics.update({f"attack/{name}/{k}": v for k, v in worst_case(per_target).items()})
    return metrics, pngs
