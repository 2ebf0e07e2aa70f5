"""Learning curves of the front's strongest attackers (after a sweep's grid, and ``python -m platform.attack SWEEP
--learning-curve``).

Per front trial, the strongest privacy attacker at its last checkpoint (and, where that one is a rule with no tuned
family, the strongest that has one: more records may lift it above the rule) is refitted on 25 and 50 % of its training
records, and 200 % where the data set holds that many outside its test split, with the configuration its own search
chose there, its own reading at that checkpoint the 100 % point, in a Ray task (attacks/audits/learning_curve.py); each
curve and its fitted saturation are logged at that checkpoint's step, the highest of the point's saturations also
beside the privacy axis as ``attack/max/saturation`` (with ``/ci_low`` and ``/ci_high``), its picture under the run's
``attacks/``. A trial whose curve is already logged there is not run again. :func:`start_curves` submits the curves in
lanes (one Ray task each, ``run_lane``: its curves one after the other) and returns at once, so a sweep runs its
comparison grids meanwhile; :func:`collect_curves` waits and logs.
"""
from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import ray

from attacks.audits.learning_curve import CurvePoint, LearningCurve, run_lane
from attacks.plots.learning_curve_plot import FILE_PREFIX, curve_png
from core.attack_scores import winner
from core.classifier import Candidate
from core.metric_names import attack_metric
from core.numbers import readable
from platform.results.store import Run, Store
from platform.results.summary import SATURATION
from platform.run.catch_up import checkpoints_of, trial_config, tune_checkpoint
from platform.run.farm import FarmPlan, failure_line, metric_at, privacy_scores


@dataclass(frozen=True)
class CurveJob:
    """One trial's curve to draw: its run, last checkpoint (step and location), strongest attacker there and that
    attacker's records where the data set holds twice as many (the 200 % point; None: none drawn)."""

    run_id: str
    trial: str
    step: int
    location: str
    attacker: str
    budget: int | None = None
    full: CurvePoint | None = None
    chosen: Candidate | None = None


def doubled_budget(store: Store, run_id: str, step: int, attacker: str, available: int | None) -> int | None:
    """The attacker's records at ``step`` where ``available`` (records outside the test split) holds twice as many."""
    records = metric_at(store, run_id, attack_metric(attacker, "train_records"), step)
    return int(records) if records and available and 2 * records <= available else None


def curve_jobs(store: Store, runs: Iterable[Run], privacy_attackers: tuple[str, ...],
               available: int | None = None) -> list[CurveJob]:
    """A job per run with a checkpoint and a privacy attacker's accuracy at its last one, unless already drawn there
    (``available``: the records outside the test split, for the 200 % point)."""
    jobs = []
    for run in runs:
        checkpoints = checkpoints_of(run)
        if not checkpoints:
            print(f"[{run.info.run_name}] no stored checkpoint: no learning curve", flush=True)
            continue
        step, location = checkpoints[-1]
        scores = privacy_scores(store, run.info.run_id, step, privacy_attackers)
        if not scores:
            print(f"[{run.info.run_name}] checkpoint {step}: no privacy attacker's accuracy, no learning curve", flush=True)
            continue
        for attacker in curve_attackers(store, run.info.run_id, step, scores):
            if metric_at(store, run.info.run_id, attack_metric(attacker, "still_learning"), step) is None:
                budget = doubled_budget(store, run.info.run_id, step, attacker, available)
                full = logged_point(store, run.info.run_id, step, attacker)
                chosen = logged_choice(store, run.info.run_id, step, attacker)
                jobs.append(CurveJob(run.info.run_id, run.info.run_name, step, location, attacker, budget, full, chosen))
    return jobs


def curve_attackers(store: Store, run_id: str, step: int, scores: dict[str, float]) -> list[str]:
    """The strongest privacy attacker and, where it fits no tuned family (a rule such as the thickness labeler, whose
    reading cannot rise with records), the strongest that does: more records may lift a learner above the rule, so the
    point's saturation is the larger of the two curves' (:func:`saturation_of_point`)."""
    best = winner(scores)
    learners = {name: v for name, v in scores.items() if logged_choice(store, run_id, step, name) is not None}
    return [best] if not learners or best in learners else [best, winner(learners)]


def logged_values(store: Store, run_id: str, step: int, attacker: str, keys: tuple[str, ...]) -> list[float] | None:
    """The attacker's ``attack/<attacker>/<key>`` of each key at ``step``, in order; None where any was not logged."""
    values = [metric_at(store, run_id, attack_metric(attacker, key), step) for key in keys]
    return None if any(value is None for value in values) else [float(v) for v in values if v is not None]


def logged_choice(store: Store, run_id: str, step: int, attacker: str) -> Candidate | None:
    """The configuration the attacker's own search chose at ``step`` (its width, Adam step and augmentation), or None
    for an attacker with no tuned family."""
    values = logged_values(store, run_id, step, attacker, ("chosen_width", "chosen_lr", "chosen_augment"))
    return None if values is None else Candidate(int(values[0]), values[1], bool(values[2]))


def logged_point(store: Store, run_id: str, step: int, attacker: str) -> CurvePoint | None:
    """The attacker's own reading at ``step`` (accuracy, its interval and records) as the curve's 100 % point, so the
    curve does not fit it again; None where any of the four was not logged."""
    values = logged_values(store, run_id, step, attacker, ("accuracy", "accuracy/ci_low", "accuracy/ci_high",
                                                            "train_records"))
    return None if values is None else CurvePoint(1.0, int(values[3]), values[0], values[1], values[2])


def curve_line(trial: str, step: int, curve: LearningCurve) -> str:
    """'[sigma=1] checkpoint 2: deep_raw at 25/50/100 % of 512 records 0.61, 0.66, 0.71 (± 0.04): still learning;
    saturation 0.78 [0.72, 0.9]'."""
    full = next(p for p in curve.points if p.percent == 100)
    last = curve.points[-1]
    each = ", ".join(readable(p.accuracy) for p in curve.points)
    verdict = "still learning" if curve.still_learning else "not still learning"
    fitted = curve.saturation
    logged = fitted.logged("s")
    heading = (f"saturation {readable(logged['s'])} [{readable(logged['s/ci_low'])}, {readable(logged['s/ci_high'])}]"
               if logged else f"no saturation estimate ({fitted.reason})")
    return (f"[{trial}] checkpoint {step}: {curve.attacker} at {'/'.join(str(p.percent) for p in curve.points)} % of "
            f"{full.records} records {each} (± {readable((last.ci_high - last.ci_low) / 2)}): {verdict}; {heading}")


def log_curve(store: Store, job: CurveJob, curve: LearningCurve) -> None:
    """The curve's metrics and the saturation beside the privacy axis (:data:`SATURATION`) at the checkpoint's
    step, and its picture as ``attacks/epoch<NNN>_learning_curve_<name>.png``."""
    store.log_metrics(job.run_id, curve.logged() | saturation_of_point(store, job, curve), step=job.step)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"epoch{job.step:03d}_{FILE_PREFIX}{curve.attacker}.png"
        path.write_bytes(curve_png(curve, f"{job.trial}, checkpoint {job.step}"))
        store.log_file(job.run_id, path, "attacks")
    print(curve_line(job.trial, job.step, curve), flush=True)


def saturation_of_point(store: Store, job: CurveJob, curve: LearningCurve) -> dict[str, float]:
    """The curve's saturation estimate as the point's (:data:`SATURATION`, with its interval), unless a curve of another
    attacker already logged a higher one at this checkpoint: the point's is the highest of its curves'."""
    mine = curve.saturation.logged(SATURATION)
    logged = metric_at(store, job.run_id, SATURATION, job.step)
    return {} if not mine or (logged is not None and logged >= mine[SATURATION]) else mine


Pending = dict[ray.ObjectRef, tuple[CurveJob, ...]]  # each lane's Ray task and the curves it draws, in order
def lanes(jobs: list[CurveJob], slots: int, beside: bool) -> list[tuple[CurveJob, ...]]:
    """``jobs`` dealt round-robin into as many lanes as the cluster has task ``slots``, one fewer when other work runs
    ``beside`` them (at least one): on 2 CPUs beside the comparison grids the curves run one after the other, so a
    grid trial always finds a CPU instead of waiting behind every curve."""
    count = min(len(jobs), max(1, slots - (1 if beside else 0)))
    return [tuple(jobs[i::count]) for i in range(count)]


def start_curves(store: Store, runs: Iterable[Run], plan: FarmPlan, available: int | None = None,
                 beside: bool = False) -> Pending:
    """Submit the jobs of :func:`curve_jobs` in :func:`lanes` (``available``: records outside the test split;
    ``beside``: other work runs meanwhile); returns the lanes under way without waiting for them."""
    cpu = plan.resources.get("cpu", 1)
    slots = int(ray.cluster_resources().get("CPU", 1) // cpu) if cpu else 1
    task = ray.remote(run_lane).options(num_cpus=cpu, num_gpus=plan.resources.get("gpu", 0))
    jobs = curve_jobs(store, runs, plan.privacy_attackers, available)
    return {task.remote(plan.load, [(trial_config(job.location), tune_checkpoint(job.location), job.attacker, job.budget,
                                     job.full, job.chosen) for job in lane]): lane for lane in lanes(jobs, slots, beside)}


def cancel_curves(pending: Pending) -> None:
    """Cancel the curves still under way (nothing of theirs is logged; a resumed sweep draws them again)."""
    for ref in pending:
        ray.cancel(ref, force=True)


def draw_curves(store: Store, runs: Iterable[Run], plan: FarmPlan, available: int | None = None) -> tuple[int, int]:
    """:func:`start_curves`, then :func:`collect_curves`; returns (curves drawn, failed)."""
    return collect_curves(store, start_curves(store, runs, plan, available))


def collect_curves(store: Store, pending: Pending) -> tuple[int, int]:
    """Wait for every lane under way and log its curves; returns (curves drawn, failed)."""
    drawn = failed = 0
    for ref, jobs in pending.items():
        try:
            results: list[LearningCurve | str] = ray.get(ref)
        except Exception as exc:  # noqa: BLE001 - a lane lost (e.g. its worker died): its curves are reported failed
            results = [failure_line(exc)] * len(jobs)
        for job, result in zip(jobs, results, strict=True):
            if isinstance(result, LearningCurve):
                try:
                    log_curve(store, job, result)
                    drawn += 1
                    continue
                except Exception as exc:  # noqa: BLE001 - one trial's failure is reported, the others are still logged
                    result = failure_line(exc)
            failed += 1
            print(f"learning curve failed on [{job.trial}] checkpoint {job.step} ({job.attacker}): {result}", flush=True)
    return drawn, failed
