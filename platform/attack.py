"""``python -m platform.attack <sweep>``: attack the stored checkpoints of an existing sweep again.

Adds the metrics of the named attackers to the same MLflow child runs, only where a checkpoint
lacks them (running it twice adds nothing), refreshes ``attack/max/accuracy``, and recomputes the
sweep's front. The sweep itself calls :func:`attack_missing` too, to catch up after a resume.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mlflow.tracking import MlflowClient
from ray import tune

from attacks.registry import check_names, primary_metric
from platform.cli import guarded
from platform.errors import UsageError
from platform.plan.spec import preset_of
from platform.publish import publish
from platform.results import tracking
from platform.results.pareto import Axis
from platform.results.summary import format_summary
from platform.run import preflight
from platform.run import storage as tune_storage
from platform.run.farm import FarmPlan, FarmScheduler
from platform.run.tuner import init_ray


def checkpoints_of(run) -> list[tuple[int, str]]:
    """(step, location) of every checkpoint of a trial, from the results Tune recorded beside them (local or URI)."""
    last = run.data.tags.get(tracking.TAG_CHECKPOINT)
    if not last:
        return []
    trial_dir = tune_storage.parent(last)
    results = tune_storage.join(trial_dir, "result.json")
    if not tune_storage.exists(results):
        return []
    found = []
    for line in tune_storage.read_text(results).splitlines():
        result = json.loads(line) if line.strip() else {}
        name = result.get("checkpoint_dir_name")
        if name and tune_storage.exists(tune_storage.join(trial_dir, name), directory=True):
            found.append((int(result["training_iteration"]), tune_storage.join(trial_dir, name)))
    return sorted(found)


def trial_config(checkpoint: str) -> dict:
    """The typed config Tune stored for the trial (``params.json`` beside its checkpoints)."""
    return json.loads(tune_storage.read_text(tune_storage.join(tune_storage.parent(checkpoint), "params.json")))


def tune_checkpoint(location: str) -> tune.Checkpoint:
    """A Tune checkpoint on its own file system, which the farm task reads wherever it runs."""
    fs, path = tune_storage.filesystem(location)
    return tune.Checkpoint(path, filesystem=fs)


def attack_missing(client: MlflowClient, exp_id: str, parent_id: str, plan: FarmPlan,
                   attackers: tuple[str, ...] | None = None) -> tuple[int, int]:
    """Submit every (checkpoint, attacker) pair not yet in MLflow, wait, log; returns (checkpoints attacked, failed)."""
    scheduler = FarmScheduler(client, plan)
    names = attackers or plan.attackers
    for run in tracking.child_runs(client, exp_id, parent_id):
        checkpoints = checkpoints_of(run)
        if not checkpoints:
            continue
        done = {a: {m.step for m in client.get_metric_history(run.info.run_id, primary_metric(a))} for a in names}
        for step, location in checkpoints:
            missing = [a for a in names if step not in done[a]]
            if missing:
                scheduler.submit(run.info.run_id, step, trial_config(location), tune_checkpoint(location),
                                 missing, figures=step == checkpoints[-1][0])
    submitted = len(scheduler.pending)
    scheduler.drain()
    return submitted, scheduler.failures


def run(argv: list[str] | None = None) -> int:
    """Re-attack a sweep; returns the exit code."""
    p = argparse.ArgumentParser(prog="python -m platform.attack", description=__doc__.splitlines()[0])
    p.add_argument("target", help="a sweep's parent run id, a sweep name, or an experiment name (its newest sweep)")
    p.add_argument("--attackers", help="comma-separated attackers (default: the preset's farm)")
    p.add_argument("--tracking-uri", help="MLflow tracking URI (default: sqlite:///<cwd>/mlflow.db)")
    p.add_argument("--address", help="Ray cluster address (default: RAY_ADDRESS, else a local Ray)")
    args = p.parse_args(argv)
    preflight.check_not_empty(args, "attackers", "tracking_uri", "address")
    tracking_uri = args.tracking_uri or f"sqlite:///{Path.cwd() / 'mlflow.db'}"
    client = tracking.connect(tracking_uri, create=False)
    exp_id, parent_id = tracking.find_sweep_parent(client, args.target)
    preset = preset_of(client.get_run(parent_id).data.params)
    attackers = tuple(a.strip() for a in args.attackers.split(",")) if args.attackers else None
    try:
        check_names(attackers or ())
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if preset.checkpoint_inputs is None:
        raise UsageError(f"preset {preset.name!r} has no checkpoints for the attack farm")
    init_ray(args.address)
    plan = FarmPlan(preset.checkpoint_inputs, preset.farm_attackers, preset.privacy_attackers, {"cpu": 1, "gpu": 0})
    done, failed = attack_missing(client, exp_id, parent_id, plan, attackers)
    print(f"attacked {done} checkpoint(s) of sweep run {parent_id}" + (f", {failed} failed" if failed else ""), flush=True)
    summary = publish(client, parent_id, preset)
    print(format_summary(summary, [Axis(**a) for a in preset.pareto_axes], preset.label_keys))
    if failed:
        print(f"error: {failed} checkpoint attack(s) failed (tag putlab.farm_error on their runs)", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one line on stderr and exit code 2."""
    return guarded(lambda: run(argv))


if __name__ == "__main__":
    sys.exit(main())
