"""MLflow tracking of a sweep: one parent run per sweep, one child run per Tune trial (docs/metrics.md).

The tags and metric names that lay a sweep out in the store, and the look-ups built on them; the store itself (the
only code that talks to MLflow) is ``platform.results.store``.
"""
from __future__ import annotations

import json
import math
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from platform.errors import UsageError
from platform.results.store import NotFound, Run, Store

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


def experiment_id(store: Store, name: str) -> str:
    """The id of experiment ``name``, created if missing (before any trial runs: trials log into it), marked as a
    model-training experiment so the MLflow UI opens on its runs table."""
    found = store.experiment_named(name)
    if found is not None:
        if found.lifecycle_stage == "deleted":
            raise UsageError(f"MLflow experiment {name!r} is deleted; restore it or pick another --experiment")
        if TAG_EXPERIMENT_KIND not in found.tags:  # a kind the user chose in the UI is kept
            store.set_experiment_tag(found.experiment_id, TAG_EXPERIMENT_KIND, EXPERIMENT_KIND)
        return found.experiment_id
    return store.new_experiment(name, artifact_root(store.tracking_uri), {TAG_EXPERIMENT_KIND: EXPERIMENT_KIND})


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


def log_params(store: Store, run_id: str, params: Mapping[str, Any]) -> None:
    """Log nested params flattened (``flatten``)."""
    store.log_params(run_id, flatten("", params))


def numeric_metrics(result: Mapping[str, Any], prefixes: Iterable[str] = METRIC_PREFIXES) -> dict[str, float]:
    """The finite numeric entries of a result whose names follow the shared conventions."""
    prefixes = tuple(prefixes)
    return {
        key: float(value)
        for key, value in result.items()
        if key.startswith(prefixes) and isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    }


def tag_node(store: Store, run_id: str, tag: str, node_id: str | None) -> None:
    """Add Ray node ``node_id`` to the run's comma-separated ``tag`` (kept in order of first appearance)."""
    if not node_id:
        return
    nodes = [n for n in store.run(run_id).data.tags.get(tag, "").split(",") if n]
    if node_id not in nodes:
        store.set_tag(run_id, tag, ",".join([*nodes, node_id]))


def find_parent(store: Store, exp_id: str, sweep: str) -> str | None:
    """The parent run of sweep ``sweep`` in the experiment, if one exists. The name is matched here, not in MLflow's
    filter, which cannot hold every string (a quote or a backslash breaks it)."""
    parents = store.runs([exp_id], f"tags.`{TAG_ROLE}` = 'sweep'")
    return next((run.info.run_id for run in parents if run.data.tags.get(TAG_SWEEP) == sweep), None)


def start_parent(store: Store, exp_id: str, sweep: str, params: Mapping[str, Any]) -> tuple[str, bool]:
    """Create the sweep's parent run, or reopen it when resuming; returns (run id, reopened)."""
    existing = find_parent(store, exp_id, sweep)
    if existing is not None:
        store.reopen(existing)
        return existing, True
    run_id = store.new_run(exp_id, sweep, {TAG_SWEEP: sweep, TAG_ROLE: "sweep", TAG_NOTE: sweep_note(sweep)})
    log_params(store, run_id, params)
    return run_id, False


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


def child_runs(store: Store, exp_id: str, parent_id: str) -> list[Run]:
    """All child (trial) runs of a sweep's parent run."""
    return store.runs([exp_id], f"tags.`{TAG_PARENT}` = '{parent_id}' and tags.`{TAG_ROLE}` = 'trial'")


def artifact_run(run: Run) -> str:
    """The run whose artifacts are ``run``'s: the one it was copied from (``platform.run.grid_reuse``), else itself."""
    return run.data.tags.get(TAG_REUSED_FROM, run.info.run_id)


def baseline_runs(store: Store, exp_id: str, parent_id: str, baseline: str | None = None) -> list[Run]:
    """The baseline trials' runs of a sweep (role ``baseline``; those of ``baseline`` only, when given): children of
    the parent run that its front and hypervolume leave out."""
    only = f" and tags.`{TAG_BASELINE}` = '{baseline}'" if baseline else ""
    return store.runs([exp_id], f"tags.`{TAG_PARENT}` = '{parent_id}' and tags.`{TAG_ROLE}` = 'baseline'{only}")


def find_sweep_parent(store: Store, target: str) -> tuple[str, str]:
    """(experiment id, parent run id) for a parent run id, a sweep name, or an experiment name (its newest sweep)."""
    if re.fullmatch(r"[0-9a-f]{32}", target):
        try:
            run = store.run(target)
        except NotFound:
            raise UsageError(f"no MLflow run with id {target}") from None
        if run.data.tags.get(TAG_ROLE) != "sweep":
            raise UsageError(f"run {target} is not a sweep's parent run")
        return run.info.experiment_id, target
    for exp in store.experiments():
        parent = find_parent(store, exp.experiment_id, target)
        if parent:
            return exp.experiment_id, parent
    named = store.experiment_named(target)
    if named is None:
        raise UsageError(f"{target!r} is neither a sweep run id, a sweep name nor an experiment name")
    runs = store.runs([named.experiment_id], f"tags.`{TAG_ROLE}` = 'sweep'", order_by=["attributes.start_time DESC"],
                      max_results=1)
    if not runs:
        raise UsageError(f"experiment {target!r} has no sweep")
    return named.experiment_id, runs[0].info.run_id
