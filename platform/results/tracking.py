"""MLflow tracking of a sweep: one parent run per sweep, one child run per Tune trial (docs/metrics.md).

The tags and metric names that lay a sweep out in the store, and the pure helpers over them; the store itself (the
only code that talks to MLflow, and the sweep-level look-ups) is ``platform.results.store``.
"""
from __future__ import annotations

import json
import math
import urllib.parse
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from platform.results.store import Run

TAG_SWEEP = "putlab.sweep"
TAG_ROLE = "putlab.role"
TAG_PARENT = "putlab.parent_run_id"
TAG_TRIAL = "putlab.trial_id"
TAG_CHECKPOINT = "putlab.checkpoint"
TAG_FRONT = "putlab.pareto_front"
TAG_NODE = "putlab.node_id"  # the Ray node a trial reported from (comma-separated when it moved after a failure)
TAG_FARM_NODES = "putlab.farm_node_ids"  # the Ray nodes that ran the trial's attack-farm tasks
TAG_FARM_ERROR = "putlab.farm_error"  # a checkpoint attack of the trial failed: the line that says why
TAG_BASELINE = "putlab.baseline"  # a baseline's trial runs (role "baseline"): which baseline, e.g. "noise"
TAG_CONTENT_KEY = "putlab.content_key"  # a trial's content key (platform.plan.content_key)
TAG_REUSED_FROM = "putlab.reused_from"  # a run copied from an earlier sweep's (platform.run.grid_reuse): its run id
TAG_REUSED_SWEEP = "putlab.reused_sweep"  # ... and that run's sweep
TAG_REUSED_ARTIFACTS = "putlab.reused_artifacts"  # ... and its artifacts (figures), referenced, not copied
# MLflow 3's UI opens an experiment on its GenAI overview (traces) unless told otherwise. The experiment-kind tag
# says "model training" where the UI reads it; the URL of ``ui_url`` (workflowType=machine_learning) always does.
TAG_EXPERIMENT_KIND = "mlflow.experimentKind"
EXPERIMENT_KIND = "custom_model_development"
TAG_NOTE = "mlflow.note.content"  # a run's description in the UI
# the minutes a sweep's commands worked on it, summed over its resumes (the pauses between them left out)
ACTIVE_MINUTES = "sweep/active_minutes"
STARTUP_SECONDS = "sweep/startup_s"  # its last command's seconds from its start to its open parent run
PROBE_SECONDS = "sweep/probe_s"  # the machine's speed as its last command started (platform.run.speed_probe)
METRIC_PREFIXES = ("utility/", "attack/", "train/", "leakage/", "fairness/", "time/", "baseline/", "pretrain/", "epoch")


def ui_url(tracking_uri: str, exp_id: str, front_only: bool = True) -> str:
    """The MLflow UI page of the experiment's runs table (not the GenAI overview), filtered to the Pareto front.

    A sqlite store is served by ``mlflow ui`` on 127.0.0.1:5000; an HTTP store is its own UI."""
    base = tracking_uri.rstrip("/") if tracking_uri.startswith(("http://", "https://")) else "http://127.0.0.1:5000"
    query = {"workflowType": "machine_learning"}
    if front_only:
        query["searchFilter"] = f"tags.`{TAG_FRONT}` = 'true'"
    return f"{base}/#/experiments/{exp_id}/runs?{urllib.parse.urlencode(query)}"


def artifact_root(tracking_uri: str) -> str | None:
    """``mlruns/`` beside a sqlite store, whatever the working directory (None: the server's default)."""
    if not tracking_uri.startswith("sqlite:///"):
        return None
    return (Path(tracking_uri.removeprefix("sqlite:///")).resolve().parent / "mlruns").as_uri()


def flatten(prefix: str, value: Any) -> dict[str, str]:
    """Nested dicts as dotted MLflow params; values as strings (inf stays 'inf')."""
    if isinstance(value, Mapping):
        out: dict[str, str] = {}
        for k, v in value.items():
            out.update(flatten(f"{prefix}.{k}" if prefix else str(k), v))
        return out
    if isinstance(value, (list, tuple)):
        return {prefix: json.dumps(list(value))}
    return {prefix: str(value)}


def numeric_metrics(result: Mapping[str, Any], prefixes: Iterable[str] = METRIC_PREFIXES) -> dict[str, float]:
    """The finite numeric entries of a result whose names follow the shared conventions."""
    prefixes = tuple(prefixes)
    return {
        key: float(value)
        for key, value in result.items()
        if key.startswith(prefixes) and isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    }


def active_minutes(run: Run) -> float:
    """The minutes a sweep's parent ``run`` has worked: its logged ``ACTIVE_MINUTES``, else (a sweep from before they
    were logged) its span from start to its last end, pauses included; NaN while it has never ended."""
    logged = run.data.metrics.get(ACTIVE_MINUTES)
    return span_minutes(run) if logged is None else logged


def span_minutes(run: Run) -> float:
    """The minutes from a run's start to its last end, pauses included; NaN while it has never ended."""
    return (run.info.end_time - run.info.start_time) / 60_000 if run.info.end_time else math.nan


def sweep_note(sweep: str) -> str:
    """The parent run's description in the MLflow UI: where the front is and how to see it among the trials."""
    return (f"Sweep {sweep}. The Pareto front: Artifacts → front/front.png (all trials in front/trials.csv, the whole "
            f"sweep in report/report.html). Among the trials: expand this run in the runs table and filter with "
            f"tags.`{TAG_FRONT}` = 'true'; the chart view plots the front's two metrics against each other.")


def artifact_run(run: Run) -> str:
    """The run whose artifacts are ``run``'s: the one it was copied from (``platform.run.grid_reuse``), else itself."""
    return run.data.tags.get(TAG_REUSED_FROM, run.info.run_id)


