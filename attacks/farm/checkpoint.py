"""The attack farm's worker entry point: every named attacker against one checkpoint (docs/attacks.md).

``run_farm`` runs as a Ray task scheduled by the driver, so attacks of earlier checkpoints overlap
with the training of later ones. The mechanism supplies ``load(config, checkpoint_dir)``, which
validates the trial's config once and turns a checkpoint into released splits, the networks to test
for membership and that validated config, from which the attackers are built. Attackers come from
the registry (attacks/attackers/registry.py): the farm reads their declarations, never their names.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, cast

from attacks.attackers.registry import REGISTRY, Registry, check_names
from attacks.audits.exposure import ExposedRecords
from attacks.base import Attacker, CheckpointInputs
from attacks.farm.membership_farm import run_membership, skipped_targets
from attacks.spec import SKIPPED_WHEN_ABSENT, AttackerSpec

if TYPE_CHECKING:  # a checkpoint is only read here, so the attackers run without Ray installed
    from ray import tune

@dataclass(frozen=True)
class FarmReport:
    """Metrics (shared names), PNG figures, seconds per attacker for one checkpoint, and the Ray node that ran it.

    ``skipped``: ``<name>`` (or ``<name>/<target>``) -> why that attacker did not run there (e.g. no population).
    ``exposed``: each membership attacker's most exposed training records per network (the driver logs them as CSV;
    their galleries, for image data, are among ``figures``).
    """

    metrics: dict[str, float] = field(default_factory=dict)
    figures: dict[str, bytes] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    node_id: str = ""
    skipped: dict[str, str] = field(default_factory=dict)
    exposed: list[ExposedRecords] = field(default_factory=list)


def run_farm(load: Callable[[dict, str], CheckpointInputs], config: dict, checkpoint: tune.Checkpoint,
             attackers: Sequence[str], figures: bool = True) -> FarmReport:
    """Load the checkpoint's release once (local or cloud storage), then run each named attacker on it.

    ``config`` is the trial's config as Tune stored it: ``load`` (the mechanism's ``checkpoint_inputs``) validates it,
    sets torch's threads from it, and hands it on typed in the inputs. ``figures``: also draw the attackers' pictures
    (ROC curves), which cost more than some attacks.
    """
    check_names(attackers)
    import ray  # run_farm is a Ray task; called outside one it must not start Ray (the runtime context would)

    with checkpoint.as_directory() as directory:
        inputs = load(config, directory)
    node_id = ray.get_runtime_context().get_node_id() if ray.is_initialized() else ""
    return replace(attack_inputs(inputs, attackers, figures), node_id=node_id)


def check_needs(specs: Sequence[AttackerSpec], inputs: CheckpointInputs) -> dict[str, str]:
    """Attackers to skip, with why (no network to test); a one-line ValueError for a need the preset cannot meet."""
    skipped = {}
    for spec in specs:
        lacks = spec.missing(inputs)
        fatal = [need.value for need in lacks if need not in SKIPPED_WHEN_ABSENT]
        if fatal:
            raise ValueError(f"attacker {spec.name!r} needs {'; '.join(fatal)}, which this checkpoint does not provide")
        if lacks:
            skipped[spec.name] = "needs " + "; ".join(need.value for need in lacks)
    return skipped


def attack_inputs(inputs: CheckpointInputs, attackers: Sequence[str], figures: bool = True,
                  registry: Registry = REGISTRY) -> FarmReport:
    """Run each named attacker of ``registry`` on one checkpoint's loaded release, on the device its tensors live on.

    The inputs' validated config is the trial's: it sets the learned attackers' budget and the membership attacks'
    reference models. Every attacker's needs are checked before any runs.
    """
    registry.check_names(attackers)
    specs = [registry[name] for name in attackers]
    report = FarmReport(skipped=check_needs(specs, inputs))
    for spec in specs:
        if spec.name in report.skipped:
            continue
        t0 = time.perf_counter()
        if spec.per_target:
            run = run_membership(spec.name, inputs, figures, registry)
            report.metrics.update(run.metrics)
            report.figures.update(run.figures)
            report.exposed.extend(run.exposed)
            report.skipped.update(skipped_targets(spec, inputs.targets))
        else:
            attacker = cast(Attacker, spec.build(inputs.config, figures))  # not per_target: the entry builds an Attacker
            result = attacker.run(inputs.data)
            report.metrics.update(result.logged())
            report.figures.update(result.figures)
        report.seconds[spec.name] = time.perf_counter() - t0
    return report
