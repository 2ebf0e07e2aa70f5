"""What a sweep will cost, said before it starts: its trials, the farm's attackers per checkpoint, and minutes.

The minutes come from the newest finished sweep of the same preset, profile and farm in the same MLflow store (on a
local store, this machine): its minutes of work per trial (its resumes summed, the pauses between them left out),
times this sweep's trials. With no such sweep there is no estimate, and the progress line's ETA takes over from the
first finished trial.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlflow.tracking import MlflowClient

from platform.plan.spec import SweepSpec
from platform.results import tracking
from platform.results.clock import clock


@dataclass(frozen=True)
class Measured:
    """A finished sweep this one can be priced from: its name, trials (its own and its baselines') and wall seconds."""

    name: str
    trials: int
    wall_s: float


@dataclass(frozen=True)
class CostEstimate:
    """The plan (trials, the comparison grids' trials, attackers per checkpoint) and the wall time it should take."""

    trials: int
    baseline_trials: int
    attackers: tuple[str, ...]
    checkpoints_per_trial: int
    source: Measured | None

    @property
    def seconds(self) -> float | None:
        """Wall seconds at the measured sweep's pace per trial (None without one)."""
        if self.source is None:
            return None
        return self.source.wall_s / self.source.trials * (self.trials + self.baseline_trials)

    def line(self) -> str:
        """'cost: 9 trials + 11 baseline trials, 1 checkpoint each, 5 farm attackers per checkpoint; about 11:40 here
        (sweep X: 15 trials in 11:40)'."""
        baseline = f" + {self.baseline_trials} baseline trials" if self.baseline_trials else ""
        farm = (f"{len(self.attackers)} farm attackers per checkpoint ({', '.join(self.attackers)})" if self.attackers
                else "no farm attackers")
        plan = f"cost: {self.trials} trials{baseline}, {self.checkpoints_per_trial} checkpoint(s) each, {farm}"
        if self.source is None or self.seconds is None:
            return plan + "; no finished sweep of this preset, profile and farm in the store to estimate from (the ETA " \
                          "follows the first finished trial)"
        return (f"{plan}; about {clock(self.seconds)} here (sweep {self.source.name}: {self.source.trials} trials in "
                f"{clock(self.source.wall_s)})")


def planned_cost(client: MlflowClient, exp_id: str, spec: SweepSpec, planned: int, baseline_trials: int,
                 attackers: tuple[str, ...]) -> CostEstimate:
    """The sweep's plan and its expected wall time, priced from the newest finished sweep like it in the store."""
    epochs, every = spec.config.get("epochs"), spec.config.get("checkpoint_every") or 0
    checkpoints = 1 if not epochs else len({e for e in range(1, epochs + 1) if e == epochs or (every and e % every == 0)})
    like = {"preset": spec.preset.name, "profile": spec.profile} | tracking.flatten("attackers", attackers)
    return CostEstimate(planned, baseline_trials, attackers, checkpoints, last_finished(client, exp_id, like))


def last_finished(client: MlflowClient, exp_id: str, params: dict[str, str]) -> Measured | None:
    """The newest FINISHED sweep of ``exp_id`` whose parent run logged the same ``params`` (e.g. preset, profile,
    attackers), priced by its wall time over its finished trials."""
    wanted = " and ".join(f"params.`{k}` = '{v}'" for k, v in params.items())
    runs = client.search_runs([exp_id], filter_string=f"tags.`{tracking.TAG_ROLE}` = 'sweep' and "
                                                      f"attributes.status = 'FINISHED' and {wanted}",
                              order_by=["attributes.start_time DESC"], max_results=1)
    if not runs or not runs[0].info.end_time:
        return None
    parent = runs[0]
    trials = [*tracking.child_runs(client, exp_id, parent.info.run_id),
              *tracking.baseline_runs(client, exp_id, parent.info.run_id)]
    finished = sum(run.info.status == "FINISHED" for run in trials)
    if not finished:
        return None
    return Measured(parent.info.run_name, finished, tracking.active_minutes(parent) * 60)
