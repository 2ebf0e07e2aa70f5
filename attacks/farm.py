"""The attack farm's worker entry point: every named attacker against one checkpoint (docs/attacks.md).

``run_farm`` runs as a Ray task scheduled by the driver, so attacks of earlier checkpoints overlap
with the training of later ones. The mechanism supplies ``load(config, checkpoint_dir)``, which
turns a checkpoint into released splits and the networks to test for membership.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import torch

from attacks.base import Attacker, CheckpointInputs
from attacks.deep import DeepAttacker, RawTrainedDeepAttacker
from attacks.membership_farm import MEMBERSHIP_ATTACKERS, run_membership
from attacks.side_info import SideInfoAttacker, SiOnlyAttacker
from attacks.thickness import ThicknessAttacker
from attacks.tuning import AttackBudget

if TYPE_CHECKING:  # a checkpoint is only read here, so the attackers run without Ray installed
    from ray import tune


ATTACKERS: dict[str, Callable[[AttackBudget], Attacker]] = {
    "deep": lambda b: DeepAttacker(b),
    "deep_raw": lambda b: RawTrainedDeepAttacker(b),
    "thickness": lambda b: ThicknessAttacker(seed=b.seed),
    "side_info": lambda b: SideInfoAttacker(b),
    "si_only": lambda b: SiOnlyAttacker(b),
}
KNOWN = (*ATTACKERS, *MEMBERSHIP_ATTACKERS)


@dataclass(frozen=True)
class FarmReport:
    """Metrics (shared names), PNG figures, seconds per attacker for one checkpoint, and the Ray node that ran it."""

    metrics: dict[str, float] = field(default_factory=dict)
    figures: dict[str, bytes] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    node_id: str = ""


def check_names(names: Sequence[str]) -> None:
    """Reject unknown attacker names with one line listing the known ones."""
    unknown = [n for n in names if n not in KNOWN]
    if unknown:
        raise ValueError(f"unknown attacker(s) {', '.join(unknown)}; known: {', '.join(KNOWN)}")


def run_farm(load: Callable[[dict, str], CheckpointInputs], config: dict, checkpoint: tune.Checkpoint,
             attackers: Sequence[str], figures: bool = True) -> FarmReport:
    """Load the checkpoint's release once (local or cloud storage), then run each named attacker on it.

    ``figures``: also draw the attackers' pictures (ROC curves), which cost more than some attacks.
    """
    check_names(attackers)
    torch.set_num_threads(int(config.get("threads", 1)))
    import ray  # run_farm is a Ray task; attack_inputs below also runs without Ray

    with checkpoint.as_directory() as directory:
        inputs = load(config, directory)
    return replace(attack_inputs(inputs, config, attackers, figures), node_id=ray.get_runtime_context().get_node_id())


def attack_inputs(inputs: CheckpointInputs, config: dict, attackers: Sequence[str],
                  figures: bool = True) -> FarmReport:
    """Run each named attacker on one checkpoint's loaded release, on the device its tensors live on.

    ``config`` is the trial's: it sets the learned attackers' budget and the membership attacks' reference models.
    """
    check_names(attackers)
    budget = AttackBudget.from_config(config)
    report = FarmReport()
    for name in attackers:
        t0 = time.perf_counter()
        if name in MEMBERSHIP_ATTACKERS:
            metrics, pngs = run_membership(name, inputs, config, figures)
            report.metrics.update(metrics)
            report.figures.update(pngs)
        else:
            result = ATTACKERS[name](budget).run(inputs.data)
            report.metrics.update(result.logged())
            report.figures.update(result.figures)
        report.seconds[name] = time.perf_counter() - t0
    return report
