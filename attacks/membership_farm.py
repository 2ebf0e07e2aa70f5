"""The farm's membership attackers: one registered attacker run against every network of a checkpoint.

Each attacker logs ``attack/<name>/<target>/<metric>`` per network and ``attack/<name>/<metric>`` as the
worst case (the largest value over networks, with that network's interval).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from attacks.base import CheckpointInputs, MembershipAttacker, MembershipTarget
from attacks.membership_stats import LOW_FPRS
from attacks.registry import REGISTRY, Registry
from attacks.spec import AttackerSpec

WORST_CASE = ("advantage", "advantage_max", "auc", *LOW_FPRS)


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


def skipped_targets(spec: AttackerSpec, targets: Sequence[MembershipTarget]) -> dict[str, str]:
    """The networks ``spec`` cannot attack, as ``<name>/<target>`` -> the reason (what it lacks)."""
    reasons = {t.name: spec.target_missing(t) for t in targets}
    return {f"{spec.name}/{t}": "needs " + "; ".join(n.value for n in lacks) for t, lacks in reasons.items() if lacks}


def run_membership(name: str, inputs: CheckpointInputs, figures: bool,
                   registry: Registry = REGISTRY) -> tuple[dict[str, float], dict[str, bytes]]:
    """Attacker ``name``, built from the inputs' config, against every network of the checkpoint that meets its needs
    (a population, for reference attacks)."""
    spec = registry[name]
    attacker = cast(MembershipAttacker, spec.build(inputs.config, figures))  # needs TARGETS: the entry builds one
    metrics: dict[str, float] = {}
    pngs: dict[str, bytes] = {}
    per_target = []
    for target in inputs.targets:
        if spec.target_missing(target):
            continue
        result = attacker.run_on_target(target)
        metrics.update(result.logged())
        per_target.append(result.metrics)
        pngs.update({png_name.replace("/", "_"): png for png_name, png in result.figures.items()})
    metrics.update({f"attack/{name}/{k}": v for k, v in worst_case(per_target).items()})
    return metrics, pngs
