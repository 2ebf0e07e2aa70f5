"""The attack farm's worker entry point: every named attacker against one checkpoint (DESIGN §4).

``run_farm`` runs as a Ray task scheduled by the driver, so attacks of earlier checkpoints overlap
with the training of later ones. The mechanism supplies ``load(config, checkpoint_dir)``, which
turns a checkpoint into released splits and the networks to test for membership.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from attacks.base import Attacker, CheckpointInputs
from attacks.deep import DeepAttacker, RawTrainedDeepAttacker
from attacks.membership import YeomAttacker
from attacks.side_info import SideInfoAttacker, SiOnlyAttacker
from attacks.thickness import ThicknessAttacker

if TYPE_CHECKING:  # a checkpoint is only read here, so the attackers run without Ray installed
    from ray import tune

MEMBERSHIP = "yeom"


@dataclass(frozen=True)
class FarmSettings:
    """Training settings shared by the farm's learned attackers (taken from the trial config)."""

    epochs: int = 3
    batch_size: int = 128
    lr: float = 1e-3
    seed: int = 0

    @classmethod
    def from_config(cls, config: dict) -> "FarmSettings":
        """The attack_epochs / batch_size / lr / seed of a trial config."""
        return cls(int(config.get("attack_epochs", 3)), int(config.get("batch_size", 128)),
                   float(config.get("lr", 1e-3)), int(config.get("seed", 0)))


ATTACKERS: dict[str, Callable[[FarmSettings], Attacker]] = {
    "deep": lambda s: DeepAttacker(epochs=s.epochs, batch_size=s.batch_size, lr=s.lr, seed=s.seed),
    "deep_raw": lambda s: RawTrainedDeepAttacker(epochs=s.epochs, batch_size=s.batch_size, lr=s.lr, seed=s.seed),
    "thickness": lambda s: ThicknessAttacker(seed=s.seed),
    "side_info": lambda s: SideInfoAttacker(epochs=s.epochs, batch_size=s.batch_size, lr=s.lr, seed=s.seed),
    "si_only": lambda s: SiOnlyAttacker(seed=s.seed),
}
KNOWN = (*ATTACKERS, MEMBERSHIP)


@dataclass(frozen=True)
class FarmReport:
    """Metrics (shared names), PNG figures, and seconds per attacker for one checkpoint."""

    metrics: dict[str, float] = field(default_factory=dict)
    figures: dict[str, bytes] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def check_names(names: Sequence[str]) -> None:
    """Reject unknown attacker names with one line listing the known ones."""
    unknown = [n for n in names if n not in KNOWN]
    if unknown:
        raise ValueError(f"unknown attacker(s) {', '.join(unknown)}; known: {', '.join(KNOWN)}")


def membership(inputs: CheckpointInputs, seed: int, figures: bool) -> tuple[dict[str, float], dict[str, bytes]]:
    """Yeom's adversary against every network of the checkpoint; ``attack/yeom/*`` is the worst case."""
    metrics: dict[str, float] = {}
    pngs: dict[str, bytes] = {}
    for target in inputs.targets:
        result = YeomAttacker(name=f"{MEMBERSHIP}/{target.name}", seed=seed, figure=figures).run_on_model(
            target.model, target.member_x, target.member_y, target.nonmember_x, target.nonmember_y)
        metrics.update(result.logged())
        pngs.update({name.replace("/", "_"): png for name, png in result.figures.items()})
    for metric in ("advantage", "auc", "tpr_at_1pct_fpr"):
        values = [metrics[f"attack/{MEMBERSHIP}/{t.name}/{metric}"] for t in inputs.targets]
        if values:
            metrics[f"attack/{MEMBERSHIP}/{metric}"] = max(values)
    return metrics, pngs


def run_farm(load: Callable[[dict, str], CheckpointInputs], config: dict, checkpoint: tune.Checkpoint,
             attackers: Sequence[str], figures: bool = True) -> FarmReport:
    """Load the checkpoint's release once (local or cloud storage), then run each named attacker on it.

    ``figures``: also draw the attackers' pictures (ROC curves), which cost more than some attacks.
    """
    check_names(attackers)
    torch.set_num_threads(int(config.get("threads", 1)))
    with checkpoint.as_directory() as directory:
        inputs = load(config, directory)
    return attack_inputs(inputs, FarmSettings.from_config(config), attackers, figures)


def attack_inputs(inputs: CheckpointInputs, settings: FarmSettings, attackers: Sequence[str],
                  figures: bool = True) -> FarmReport:
    """Run each named attacker on one checkpoint's loaded release, on the device its tensors live on."""
    check_names(attackers)
    report = FarmReport()
    for name in attackers:
        t0 = time.perf_counter()
        if name == MEMBERSHIP:
            metrics, pngs = membership(inputs, settings.seed, figures)
            report.metrics.update(metrics)
            report.figures.update(pngs)
        else:
            result = ATTACKERS[name](settings).run(inputs.data)
            report.metrics.update(result.logged())
            report.figures.update(result.figures)
        report.seconds[name] = time.perf_counter() - t0
    return report
