"""What a sweep will cost, said before it starts: its trials, the farm's attackers per checkpoint, and minutes.

The minutes come from the newest finished sweep like it, one whose pace depends on the same things
(:func:`pace_params`: preset, profile, grid, farm, learning curves, comparison grids, config and machine): in the same MLflow
store, else in this machine's cost ledger (``platform.results.cost_ledger``, where every finished sweep adds itself).
Its minutes of work per trial (its resumes summed, the pauses between them left out) times this sweep's trials, scaled
by how much slower or faster the machine runs the same training steps now than when it started
(``platform.run.speed_probe``). With no such sweep there is no estimate, and the progress line's ETA takes over from
the first finished trial.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from platform.plan.comparison_grid import comparison_grids
from platform.plan.spec import SweepSpec
from platform.plan.sweep_plan import SweepPlan
from platform.results import cost_ledger, tracking
from platform.results.clock import clock
from platform.results.cost_ledger import Measured
from platform.results.store import Run, Store
from platform.run.speed_probe import probe_seconds, speed_ratio
from platform.run.tuner import kind_in_words

# what a sweep's pace depends on, and each <grid>_baseline: the grid too, as a one-point sweep's fixed costs (the
# raw-data reference points, publishing) make its pace per trial no price of a sweep of three
PACE = ("preset", "profile", "grid", "attackers", "learning_curves", "config", "machine")


@dataclass(frozen=True)
class CostEstimate:
    """The plan (trials, the comparison grids' trials, attackers per checkpoint) and the wall time it should take."""

    trials: int
    baseline_trials: int
    attackers: tuple[str, ...]
    checkpoints_per_trial: int
    source: Measured | None
    probe_s: float = 0.0  # the machine's speed now (platform.run.speed_probe; 0: not timed)

    @property
    def slower(self) -> float | None:
        """How much longer the same work takes now than when the measured sweep ran (None where either was not timed)."""
        return None if self.source is None else speed_ratio(self.probe_s, self.source.probe_s)

    @property
    def seconds(self) -> float | None:
        """Wall seconds at the measured sweep's pace per trial, scaled by the machine's speed now against then (None
        without a measured sweep)."""
        if self.source is None:
            return None
        then = self.source.startup_s + self.source.wall_s / self.source.trials * (self.trials + self.baseline_trials)
        return then * (self.slower or 1.0)

    def line(self) -> str:
        """'cost: 9 trials + 11 baseline trials, 1 checkpoint each, 5 farm attackers per checkpoint; about 11:40 here
        (sweep X in this store: 15 trials in 11:40)'."""
        baseline = f" + {self.baseline_trials} baseline trials" if self.baseline_trials else ""
        farm = (f"{len(self.attackers)} farm attackers per checkpoint ({', '.join(self.attackers)})" if self.attackers
                else "no farm attackers")
        plan = f"cost: {self.trials} trials{baseline}, {self.checkpoints_per_trial} checkpoint(s) each, {farm}"
        if self.source is None or self.seconds is None:
            return plan + "; no finished sweep like it (preset, profile, grid, farm, config, machine) in the store " \
                          "or on this machine to estimate from (the ETA follows the first finished trial)"
        return f"{plan}; {self.price()}"

    def price(self) -> str:
        """'about 11:40 here (sweep X on this store: 15 trials in 11:40; this machine 3 % slower now than then)'; ''
        without a measured sweep."""
        if self.source is None or self.seconds is None:
            return ""
        speed = "" if self.slower is None else \
            f"; this machine {round(abs(self.slower - 1) * 100)} % {'slower' if self.slower >= 1 else 'faster'} now than then"
        return (f"about {clock(self.seconds)} here (sweep {self.source.name} on {self.source.where}: "
                f"{self.source.trials} trials in {clock(self.source.wall_s)}{speed})")


def machine_kind() -> str:
    """This machine as a local sweep's parent run records it (``platform.run.tuner.cluster_kind`` on a Ray of one node
    with every CPU), found without starting Ray; GPUs by count and torch's names of them."""
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return kind_in_words(1, os.cpu_count() or 0, gpus, sorted({torch.cuda.get_device_name(i) for i in range(gpus)}))


def pace_params(params: Mapping[str, Any]) -> dict[str, str]:
    """Of a sweep's parent-run params (``SweepPlan.parent_params``), those its pace depends on, as MLflow logs them."""
    kept = {k: v for k, v in params.items() if k.split(".", 1)[0] in PACE or k.endswith("_baseline")}
    return tracking.flatten("", kept)


def remember(store: Store, exp_id: str, parent_id: str) -> None:
    """Add a finished sweep (its parent run closed, its minutes of work logged) to this machine's cost ledger."""
    parent = store.run(parent_id)
    if finished := trials_run(store, exp_id, parent_id):
        cost_ledger.record(pace_params(parent.data.params), measured(parent, finished, "this machine"))


def estimate(store: Store, exp_id: str | None, plan: SweepPlan, spec: SweepSpec, machine: str) -> CostEstimate:
    """The plan of a new sweep (``spec``: with each trial's threads) and its expected wall time on ``machine``
    (``exp_id``: the store's experiment of the sweep, None while it has none)."""
    params = plan.parent_params(spec, machine)
    grids = comparison_grids(spec, tracking.flatten("", params), plan.comparison_grids)
    baseline_trials = sum(len(grid.grid_points()) for grid in grids)
    return planned_cost(store, exp_id, spec, plan.planned, baseline_trials, plan.attackers, pace_params(params))


def planned_cost(store: Store, exp_id: str | None, spec: SweepSpec, planned: int, baseline_trials: int,
                 attackers: tuple[str, ...], like: Mapping[str, str]) -> CostEstimate:
    """The sweep's plan and its expected wall time, priced from the newest finished sweep ``like`` it in the store,
    else in this machine's ledger."""
    epochs, every = spec.config.get("epochs"), spec.config.get("checkpoint_every") or 0
    checkpoints = 1 if not epochs else len({e for e in range(1, epochs + 1) if e == epochs or (every and e % every == 0)})
    source = (last_finished(store, exp_id, like) if exp_id else None) or cost_ledger.newest(like)
    return CostEstimate(planned, baseline_trials, attackers, checkpoints, source, probe_seconds() if source else 0.0)


def last_finished(store: Store, exp_id: str, like: Mapping[str, str]) -> Measured | None:
    """The newest FINISHED sweep of ``exp_id`` whose parent run logged the same ``like`` params, priced by its wall
    time over its finished trials (the config's params compared here: a filter of them all would be too long)."""
    wanted = " and ".join(f"params.`{k}` = '{v}'" for k, v in like.items() if not k.startswith("config.") and "'" not in v)
    runs = store.runs([exp_id], where=f"tags.`{tracking.TAG_ROLE}` = 'sweep' and "
                                                      f"attributes.status = 'FINISHED' and {wanted}",
                              order_by=["attributes.start_time DESC"], max_results=50)
    parent = next((r for r in runs if r.info.end_time and same_params(r.data.params, like)), None)
    if parent is None:
        return None
    finished = trials_run(store, exp_id, parent.info.run_id)
    if not finished:
        return None
    return measured(parent, finished, "this store")


def measured(parent: Run, trials: int, where: str) -> Measured:
    """A finished sweep's parent run as a price: its minutes of work and its last command's start-up."""
    startup = parent.data.metrics.get(tracking.STARTUP_SECONDS, 0.0)
    probe = parent.data.metrics.get(tracking.PROBE_SECONDS, 0.0)
    return Measured(parent.info.run_name, trials, tracking.active_minutes(parent) * 60, where, startup, probe)


def process_age_s() -> float:
    """Seconds since this process started (from Linux's /proc; 0 where there is none): a command's start-up, logged
    on its parent run as ``sweep/startup_s``."""
    try:
        ticks = float(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])  # field 22, its start time
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    return max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))


def trials_run(store: Store, exp_id: str, parent_id: str) -> int:
    """A sweep's trials and comparison trials that it ran and finished (those copied from an earlier sweep took it no
    time: platform.run.grid_reuse)."""
    trials = [*store.child_runs(exp_id, parent_id), *store.baseline_runs(exp_id, parent_id)]
    return sum(run.info.status == "FINISHED" and tracking.TAG_REUSED_FROM not in run.data.tags for run in trials)


def same_params(logged: Mapping[str, str], like: Mapping[str, str]) -> bool:
    """Whether a parent run ``logged`` every param of ``like`` with the same value and no other config param."""
    config = {k for k in logged if k.startswith("config.")}
    return all(logged.get(k) == v for k, v in like.items()) and config <= set(like)
