"""Driver side of the attack farm: one Ray task per checkpoint, results logged into the trial's run.

Tasks are submitted as checkpoints arrive and collected whenever Tune's loop comes round, so attacks
of earlier checkpoints overlap with training of later ones where the cluster has room. After each
report the privacy axis ``attack/max/accuracy`` (the strongest attacker at that step) is refreshed, with that
attacker's 95 % interval. Pictures and the membership attacks' most exposed records go under the run's ``attacks/``.
"""
from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import ray
from ray import tune

from attacks.audits.exposure import CSV_FILE as EXPOSED_FILE
from attacks.audits.exposure import exposed_csv
from attacks.farm.checkpoint import FarmReport, run_farm
from core.attack_scores import Lookup, accuracies, strongest, winner
from core.messages import exception_line
from core.metric_names import STRONGEST_ATTACK, STRONGEST_RECORDS, attack_metric
from core.numbers import readable
from platform.results import tracking
from platform.results.store import Store
from platform.run.interrupts import stop_requested
from trainables.shared.mechanism import Mechanism

MAX_METRIC = STRONGEST_ATTACK
RECORDS_METRIC = STRONGEST_RECORDS
TAG_STRONGEST = "putlab.strongest_attacker"
TAG_CAPPED = "putlab.capped_attackers"
TAG_SKIPPED = "putlab.skipped_attackers"
DRAIN_POLL_S = 0.5  # how long drain waits in one call to Ray: a stop is seen within this
SWEEP_STOP_HINT = "Ctrl+C cancels them and stops the sweep; --resume runs them again"


@dataclass(frozen=True)
class FarmPlan:
    """What to run per checkpoint: the mechanism's loader, the attackers, which ones count for privacy, resources;
    ``requested``: the attackers the sweep named, before a mechanism's own (``trial_attackers``) were left out."""

    load: Callable
    attackers: tuple[str, ...]
    privacy_attackers: tuple[str, ...]
    resources: dict[str, float]
    requested: tuple[str, ...] = ()

    @classmethod
    def of(cls, mechanism: type[Mechanism], load: Callable, requested: Sequence[str], privacy_attackers: tuple[str, ...],
           resources: dict[str, float]) -> FarmPlan:
        """The farm on ``mechanism``'s checkpoints: ``requested`` less the attackers its trials fit themselves at every
        checkpoint (a second fit, on another release draw, would overwrite the trial's reading at the same step)."""
        attackers = tuple(a for a in requested if a not in mechanism.trial_attackers)
        return cls(load, attackers, privacy_attackers, resources, tuple(requested))


def metric_at(store: Store, run_id: str, key: str, step: int) -> float | None:
    """The last value of ``key`` logged at ``step`` in the run, if any."""
    values = store.at_step(run_id, key, step)
    return values[-1] if values else None


def logged_at(store: Store, run_id: str, step: int) -> Lookup:
    """The run's metrics at ``step`` as a lookup, each read from the store once."""
    return functools.cache(lambda key: metric_at(store, run_id, key, step))


def privacy_scores(store: Store, run_id: str, step: int, privacy_attackers: Sequence[str]) -> dict[str, float]:
    """The accuracy of every privacy attacker that logged one at ``step``."""
    return accuracies(logged_at(store, run_id, step), privacy_attackers)


def update_strongest(store: Store, run_id: str, step: int, privacy_attackers: Sequence[str]) -> dict[str, float]:
    """Log ``attack/max/accuracy`` at ``step`` with the winning attacker's 95 % interval
    (``attack/max/accuracy/ci_low|ci_high``, where it logged one), data budget (``attack/max/train_records``) and
    per-record view (``attack/max/top_decile_accuracy``, ``/confident_share``, where it gives confidences), each once per
    value, and tag the winner;
    returns every privacy attacker's accuracy at that step."""
    lookup = logged_at(store, run_id, step)
    scores, best = accuracies(lookup, privacy_attackers), strongest(lookup, privacy_attackers)
    if best is None:
        return scores
    changed = {k: v for k, v in best.as_strongest().items() if lookup(k) != v}
    if changed:
        store.log_metrics(run_id, changed, step=step)
    store.set_tag(run_id, TAG_STRONGEST, best.name)
    return scores


def strongest_line(trial: str, step: int, scores: dict[str, float]) -> str:
    """'[alpha=2 lam=1] checkpoint 4: strongest attacker thickness 0.812 (deep 0.75, thickness 0.812)'."""
    best = winner(scores)
    each = ", ".join(f"{a} {readable(v)}" for a, v in sorted(scores.items()))
    return f"[{trial}] checkpoint {step}: strongest attacker {best} {readable(scores[best])} ({each})"


def flag_capped(store: Store, run_id: str, step: int, attackers: Sequence[str]) -> list[str]:
    """Tag the run with the learned attackers that hit their epoch cap at ``step`` and say so in one line each.

    A capped attacker was still improving when it stopped, so its accuracy is a lower bound on leakage.
    """
    capped = [a for a in attackers if metric_at(store, run_id, attack_metric(a, "capped"), step) == 1.0]
    if capped:
        store.set_tag(run_id, TAG_CAPPED, ",".join(capped))
        run_name = store.run(run_id).info.run_name
        for name in capped:
            print(f"[{run_name}] step {step}: attacker {name} hit its epoch cap (attack_epochs); "
                  f"{attack_metric(name)} is a lower bound", flush=True)
    return capped


def report_skipped(store: Store, run_id: str, step: int, skipped: dict[str, str]) -> None:
    """Tag the run with the attackers (or attacker/network pairs) the farm skipped; say why once per run and set."""
    if not skipped:
        return
    run = store.run(run_id)
    names = ",".join(sorted(skipped))
    if run.data.tags.get(TAG_SKIPPED) == names:
        return
    store.set_tag(run_id, TAG_SKIPPED, names)
    for name, reason in sorted(skipped.items()):
        print(f"[{run.info.run_name}] step {step}: attacker {name} skipped: {reason}", flush=True)


def failure_line(exc: BaseException) -> str:
    """What failed, in one line: a task's own exception (Ray wraps it in a RayTaskError whose text names only the task,
    its process and node, e.g. ``RayTaskError(CheckpointError): ray::run_farm() (pid=1, ip=…)``), else ``exc``."""
    cause = exc.cause if isinstance(exc, ray.exceptions.RayTaskError) and exc.cause is not None else exc
    return exception_line(cause)


class FarmScheduler:
    """Submits ``run_farm`` tasks and logs their reports; never lets a failed attack stop the sweep."""

    def __init__(self, store: Store, plan: FarmPlan) -> None:
        self.store = store
        self.plan = plan
        self.pending: dict[ray.ObjectRef, tuple[str, int, tuple[str, ...]]] = {}
        self.failures = 0  # checkpoint attacks that raised (tagged on their runs)
        self._task = ray.remote(run_farm)

    def submit(self, run_id: str, step: int, config: dict, checkpoint: tune.Checkpoint,
               attackers: Sequence[str] | None = None, figures: bool = True) -> None:
        """Attack one checkpoint (all of the plan's attackers, or the ones given), with pictures or not."""
        names = tuple(attackers or self.plan.attackers)
        options = {"num_cpus": self.plan.resources.get("cpu", 1), "num_gpus": self.plan.resources.get("gpu", 0)}
        ref = self._task.options(**options).remote(self.plan.load, config, checkpoint, names, figures)
        self.pending[ref] = (run_id, step, names)

    def poll(self, timeout: float | None = 0) -> int:
        """Log every report that is ready (waiting up to ``timeout`` for the first); returns how many."""
        if not self.pending:
            return 0
        ready, _ = ray.wait(list(self.pending), num_returns=1, timeout=timeout)
        if ready:
            ready, _ = ray.wait(list(self.pending), num_returns=len(self.pending), timeout=0)
        for ref in ready:
            run_id, step, names = self.pending.pop(ref)
            try:
                self._log(run_id, step, ray.get(ref))
            except Exception as exc:  # noqa: BLE001 - an attacker's failure is reported, the sweep goes on
                message = failure_line(exc)
                self.failures += 1
                self.store.set_tag(run_id, tracking.TAG_FARM_ERROR, message)
                print(f"attack farm failed on run {run_id} step {step} ({', '.join(names)}): {message}", flush=True)
        return len(ready)

    def drain(self, hint: str = SWEEP_STOP_HINT) -> None:
        """Wait for every submitted attack and log it, saying how many and what Ctrl+C does (``hint``); a stop
        (:func:`~platform.run.interrupts.stop_requested`, or KeyboardInterrupt) cancels the attacks still in flight:
        their metrics stay missing, which is what a resumed sweep's catch-up (``platform.run.catch_up``) attacks."""
        if self.pending:
            print(f"attack farm: waiting for {len(self.pending)} checkpoint attack(s) to finish ({hint})", flush=True)
        try:
            while self.pending and not stop_requested():
                self.poll(timeout=DRAIN_POLL_S)
        except KeyboardInterrupt:
            self.cancel()
            raise
        self.cancel()

    def cancel(self) -> None:
        """Cancel every attack still in flight (Ray kills the tasks' workers: nothing of theirs is logged)."""
        if self.pending:
            print(f"attack farm: cancelled {len(self.pending)} checkpoint attack(s)", flush=True)
        for ref in self.pending:
            ray.cancel(ref, force=True)
        self.pending.clear()

    def _log(self, run_id: str, step: int, report: FarmReport) -> None:
        self.store.log_metrics(run_id, report.metrics, step=step)
        self.store.tag_node(run_id, tracking.TAG_FARM_NODES, report.node_id)
        self.store.log_metrics(run_id, {f"time/farm/{k}_s": v for k, v in report.seconds.items()}, step=step)
        with tempfile.TemporaryDirectory() as tmp:
            for name, png in report.figures.items():
                path = Path(tmp) / f"epoch{step:03d}_{name}"
                path.write_bytes(png)
                self.store.log_file(run_id, path, "attacks")
            if report.exposed:
                path = Path(tmp) / f"epoch{step:03d}_{EXPOSED_FILE}"
                path.write_text(exposed_csv(report.exposed), encoding="utf-8")
                self.store.log_file(run_id, path, "attacks")
        scores = update_strongest(self.store, run_id, step, self.plan.privacy_attackers)
        if scores:
            print(strongest_line(self.store.run(run_id).info.run_name, step, scores), flush=True)
        flag_capped(self.store, run_id, step, self.plan.privacy_attackers)
        report_skipped(self.store, run_id, step, report.skipped)
