"""Learning curves of the front's strongest attackers (``python -m platform.attack SWEEP --learning-curve``).

Per front trial, the strongest privacy attacker at its last checkpoint is refitted on 25, 50 and 100 % of its training
records in a Ray task (attacks/audits/learning_curve.py); the curve is logged at that checkpoint's step, its picture under
the run's ``attacks/``. A trial whose curve is already logged there is not run again.
"""
from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import ray
from mlflow.entities import Run
from mlflow.tracking import MlflowClient

from attacks.audits.learning_curve import LearningCurve, run_curve
from attacks.plots.learning_curve_plot import FILE_PREFIX, curve_png
from core.numbers import readable
from platform.results import tracking
from platform.run.catch_up import checkpoints_of, trial_config, tune_checkpoint
from platform.run.farm import FarmPlan, failure_line, metric_at, privacy_scores


@dataclass(frozen=True)
class CurveJob:
    """One trial's curve to draw: its run, last checkpoint (step and location) and strongest attacker there."""

    run_id: str
    trial: str
    step: int
    location: str
    attacker: str


def curve_jobs(client: MlflowClient, runs: Iterable[Run], privacy_attackers: tuple[str, ...]) -> list[CurveJob]:
    """A job per run with a checkpoint and a privacy attacker's accuracy at its last one, unless already drawn there."""
    jobs = []
    for run in runs:
        checkpoints = checkpoints_of(run)
        if not checkpoints:
            print(f"[{run.info.run_name}] no stored checkpoint: no learning curve", flush=True)
            continue
        step, location = checkpoints[-1]
        scores = privacy_scores(client, run.info.run_id, step, privacy_attackers)
        if not scores:
            print(f"[{run.info.run_name}] checkpoint {step}: no privacy attacker's accuracy, no learning curve", flush=True)
            continue
        winner = max(scores, key=scores.__getitem__)
        if metric_at(client, run.info.run_id, f"attack/{winner}/still_learning", step) is None:
            jobs.append(CurveJob(run.info.run_id, run.info.run_name, step, location, winner))
    return jobs


def curve_line(trial: str, step: int, curve: LearningCurve) -> str:
    """'[sigma=1] checkpoint 2: deep_raw at 25/50/100 % of 512 records 0.61, 0.66, 0.71 (± 0.04): still learning'."""
    full = curve.points[-1]
    each = ", ".join(readable(p.accuracy) for p in curve.points)
    verdict = "still learning" if curve.still_learning else "not still learning"
    return (f"[{trial}] checkpoint {step}: {curve.attacker} at {'/'.join(str(p.percent) for p in curve.points)} % of "
            f"{full.records} records {each} (± {readable((full.ci_high - full.ci_low) / 2)}): {verdict}")


def log_curve(client: MlflowClient, job: CurveJob, curve: LearningCurve) -> None:
    """The curve's metrics at the checkpoint's step and its picture as ``attacks/epoch<NNN>_learning_curve_<name>.png``."""
    tracking.log_metrics(client, job.run_id, curve.logged(), step=job.step)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"epoch{job.step:03d}_{FILE_PREFIX}{curve.attacker}.png"
        path.write_bytes(curve_png(curve, f"{job.trial}, checkpoint {job.step}"))
        client.log_artifact(job.run_id, str(path), artifact_path="attacks")
    print(curve_line(job.trial, job.step, curve), flush=True)


def draw_curves(client: MlflowClient, runs: Iterable[Run], plan: FarmPlan) -> tuple[int, int]:
    """Run every job of :func:`curve_jobs` as a Ray task, wait, log; returns (curves drawn, failed)."""
    task = ray.remote(run_curve).options(num_cpus=plan.resources.get("cpu", 1), num_gpus=plan.resources.get("gpu", 0))
    pending = {task.remote(plan.load, trial_config(job.location), tune_checkpoint(job.location), job.attacker): job
               for job in curve_jobs(client, runs, plan.privacy_attackers)}
    failed = 0
    for ref, job in pending.items():
        try:
            log_curve(client, job, ray.get(ref))
        except Exception as exc:  # noqa: BLE001 - one trial's failure is reported, the others are still logged
            failed += 1
            print(f"learning curve failed on [{job.trial}] checkpoint {job.step} ({job.attacker}): "
                  f"{failure_line(exc)}", flush=True)
    return len(pending) - failed, failed
