"""Farm work missing from a sweep's stored checkpoints: every (checkpoint, attacker) pair without its metric in MLflow
is attacked and logged, after a resume (the sweep) or for new attackers (``python -m platform.attack``), and the
strongest attacker is read again over the preset's privacy attackers."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict
from ray import tune

from attacks.attackers.registry import primary_metric
from core.files.structured import parse_json
from core.metric_names import attack_metric
from platform.results import tracking
from platform.results.store import Run, Store
from platform.run import storage as tune_storage
from platform.run.farm import SWEEP_STOP_HINT, FarmPlan, FarmScheduler, update_strongest
from trainables.shared.mechanism import EPOCH_FILE

CHECKPOINT_PREFIX = "checkpoint_"  # Tune's name for a trial's checkpoint folders


class CheckpointEpoch(BaseModel):
    """The epoch file every putlab checkpoint holds beside its state."""

    epoch: int


class TuneResult(BaseModel):
    """The part of a line of Tune's ``result.json`` the catch-up reads: the iteration and its checkpoint's folder."""

    model_config = ConfigDict(extra="allow")
    training_iteration: int
    checkpoint_dir_name: str | None = None


def recorded_checkpoints(run: Run) -> list[tuple[int, str]]:
    """(step, location) of every checkpoint of a trial, whether or not it is still there: those Tune's results beside
    them name (local or URI), then any other checkpoint folder by its own epoch file (a trial restored on another
    worker can lose the results its first worker reported); none when the trial's folder is gone."""
    last = run.data.tags.get(tracking.TAG_CHECKPOINT)
    if not last:
        return []
    trial_dir = tune_storage.parent(last)
    named = named_in_results(trial_dir)
    steps = {step for step, _ in named}
    unnamed = [(step, location) for step, location in folder_epochs(trial_dir, {loc for _, loc in named})
               if step not in steps]
    return sorted(named + unnamed)


def named_in_results(trial_dir: str) -> list[tuple[int, str]]:
    """(iteration, location) of each checkpoint a line of the trial's ``result.json`` names."""
    results = tune_storage.join(trial_dir, "result.json")
    if not tune_storage.exists(results):
        return []
    found = []
    for number, line in enumerate(tune_storage.read_text(results).splitlines(), 1):
        if not line.strip():
            continue
        result = parse_json(line, TuneResult, f"{results} (line {number})")
        name = result.checkpoint_dir_name
        if name:
            found.append((result.training_iteration, tune_storage.join(trial_dir, name)))
    return found


def folder_epochs(trial_dir: str, skip: set[str]) -> list[tuple[int, str]]:
    """(epoch, location) of each checkpoint folder in the trial's folder, but those in ``skip``, that holds an epoch
    file (read only for those: on remote storage each is a request)."""
    found = []
    for name in tune_storage.folders(trial_dir, CHECKPOINT_PREFIX):
        location = tune_storage.join(trial_dir, name)
        if location in skip:
            continue
        epoch_file = tune_storage.join(location, EPOCH_FILE)
        if tune_storage.exists(epoch_file):
            found.append((parse_json(tune_storage.read_text(epoch_file), CheckpointEpoch, epoch_file).epoch, location))
    return found


def checkpoints_of(run: Run) -> list[tuple[int, str]]:
    """(step, location) of every checkpoint of a trial that is still stored."""
    return [(step, location) for step, location in recorded_checkpoints(run)
            if tune_storage.exists(location, directory=True)]


def missing_checkpoints(runs: Iterable[Run]) -> list[str]:
    """The checkpoints the trials' runs recorded that are no longer stored: each checkpoint in a trial's results, or
    its last checkpoint (the run's tag) when the results are gone too."""
    missing = []
    for run in runs:
        last = run.data.tags.get(tracking.TAG_CHECKPOINT)
        recorded = [location for _, location in recorded_checkpoints(run)] or ([last] if last else [])
        missing += [location for location in recorded if not tune_storage.exists(location, directory=True)]
    return missing


def trial_config(checkpoint: str) -> dict[str, Any]:
    """The typed config Tune stored for the trial (``params.json`` beside its checkpoints)."""
    params = tune_storage.join(tune_storage.parent(checkpoint), "params.json")
    return parse_json(tune_storage.read_text(params), dict[str, Any], params)


def tune_checkpoint(location: str) -> tune.Checkpoint:
    """A Tune checkpoint on its own file system, which the farm task reads wherever it runs."""
    fs, path = tune_storage.filesystem(location)
    return tune.Checkpoint(path, filesystem=fs)


def attack_missing(store: Store, runs: Iterable[Run], plan: FarmPlan, attackers: tuple[str, ...] | None = None,
                   hint: str = SWEEP_STOP_HINT) -> tuple[int, int]:
    """Submit every (checkpoint, attacker) pair of the trials' ``runs`` not yet in MLflow, wait (``hint``: what Ctrl+C
    does then), log; returns (checkpoints attacked, failed)."""
    scheduler = FarmScheduler(store, plan)
    names = attackers or plan.attackers
    for run in runs:
        checkpoints = checkpoints_of(run)
        if not checkpoints:
            continue
        done = {a: {m.step for m in store.history(run.info.run_id, primary_metric(a))} for a in names}
        for step, location in checkpoints:
            missing = [a for a in names if step not in done[a]]
            if missing:
                scheduler.submit(run.info.run_id, step, trial_config(location), tune_checkpoint(location),
                                 missing, figures=step == checkpoints[-1][0])
    submitted = len(scheduler.pending)
    scheduler.drain(hint)
    refresh_strongest(store, runs, plan.privacy_attackers)
    return submitted, scheduler.failures


def refresh_strongest(store: Store, runs: Iterable[Run], privacy_attackers: tuple[str, ...]) -> None:
    """``attack/max/accuracy`` again at every step where a privacy attacker logged, over today's privacy attackers:
    an attacker that logged before it counted (or whose run was stopped before the maximum) counts now."""
    for run in runs:
        steps = {m.step for a in privacy_attackers
                 for m in store.history(run.info.run_id, attack_metric(a))}
        for step in sorted(steps):
            update_strongest(store, run.info.run_id, step, privacy_attackers)
