"""The farm's membership attackers: one registered attacker run against every network of a checkpoint.

Each attacker logs ``attack/<name>/<target>/<metric>`` per network and ``attack/<name>/<metric>`` as the
worst case (the largest value over networks, with that network's interval). Per network it also keeps the most
exposed training records (attacks/audits/exposure.py) and, where pictures are drawn, their gallery. A network with planted
canaries is also attacked on them alone: ``attack/<name>/<target>/canary/<metric>``, worst case
``attack/<name>/canary/<metric>``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from attacks.attackers.membership_stats import LOW_FPRS
from attacks.attackers.registry import REGISTRY, Registry
from attacks.audits.exposure import GALLERY_PREFIX, ExposedRecords, gallery_png, most_exposed
from attacks.base import CheckpointInputs, MembershipAttacker, MembershipTarget
from attacks.spec import AttackerSpec
from core.metric_names import attack_metric

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


@dataclass(frozen=True)
class MembershipRun:
    """One membership attacker on a checkpoint: its metrics, PNGs (ROC curves, galleries) and most exposed records."""

    metrics: dict[str, float] = field(default_factory=dict)
    figures: dict[str, bytes] = field(default_factory=dict)
    exposed: list[ExposedRecords] = field(default_factory=list)


def run_membership(name: str, inputs: CheckpointInputs, figures: bool,
                   registry: Registry = REGISTRY) -> MembershipRun:
    """Attacker ``name``, built from the inputs' config, against every network of the checkpoint that meets its needs
    (a population, for reference attacks) and against its canaries apart; per network also its most exposed training
    records and, with ``figures``, their gallery (image data)."""
    spec = registry[name]
    attacker = cast(MembershipAttacker, spec.build(inputs.config, figures))  # needs TARGETS: the entry builds one
    out = MembershipRun()
    per_target, per_canaries = [], []
    for target in inputs.targets:
        if spec.target_missing(target):
            continue
        result = attacker.run_on_target(target)
        out.metrics.update(result.logged())
        per_target.append(result.metrics)
        out.figures.update({png_name.replace("/", "_"): png for png_name, png in result.figures.items()})
        if result.scores is not None:
            records = most_exposed(name, target.name, result.scores, target.member_y)
            out.exposed.append(records)
            gallery = gallery_png(records, target.member_x) if figures else None
            if gallery is not None:
                out.figures[f"{GALLERY_PREFIX}{name}_{target.name}.png"] = gallery
        canaries = target.canary_target()
        if canaries is not None:
            result = attacker.run_on_target(canaries)
            out.metrics.update(result.logged())
            per_canaries.append(result.metrics)
            out.figures.update({png_name.replace("/", "_"): png for png_name, png in result.figures.items()})
    out.metrics.update({attack_metric(name, k): v for k, v in worst_case(per_target).items()})
    out.metrics.update({attack_metric(name, f"canary/{k}"): v for k, v in worst_case(per_canaries).items()})
    return out
