"""MLflow tracking of a sweep: one parent run per sweep, one child run per Tune trial (docs/metrics.md).

All logging happens on the driver through an explicit ``MlflowClient`` (no global MLflow state),
so a sqlite store never sees concurrent writers and workers need no access to it.
"""
from __future__ import annotations

import http.client
import json
import math
import re
import time
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mlflow.entities import Metric, Param, Run
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from core import tracking_uri as uri_rules
from core.messages import first_line
from platform.errors import UsageError
from platform.results import empty_store

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


def check_tracking_uri(uri: str, create: bool = True) -> None:
    """A tracking URI MLflow can use (``core.tracking_uri``); without ``create``, one whose sqlite store exists."""
    try:
        uri_rules.check_tracking_uri(uri, create)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def connect(tracking_uri: str, create: bool = True) -> MlflowClient:
    """A client for ``tracking_uri``; an unreachable or unwritable store is a UsageError (checked quickly, no retries),
    and so is a missing sqlite store unless ``create`` (commands that only read a sweep never create a store)."""
    check_tracking_uri(tracking_uri, create)
    db = uri_rules.sqlite_path(tracking_uri)
    if create and db is not None:
        empty_store.create_store(db)
    if tracking_uri.startswith(("http://", "https://")):
        try:
            urllib.request.urlopen(tracking_uri.rstrip("/") + "/health", timeout=5).read()
        except (OSError, ValueError, http.client.HTTPException) as exc:  # refused, timed out, bad URL, broken reply
            raise UsageError(f"MLflow tracking store {tracking_uri} is unreachable: {exc}") from None
    client = MlflowClient(tracking_uri)
    try:
        client.search_experiments(max_results=1)
    except Exception as exc:  # noqa: BLE001 - each store backend (sqlite, PostgreSQL, HTTP, files) raises its own types
        raise UsageError(f"MLflow tracking store {tracking_uri} is unusable: {first_line(exc)}") from None
    return client


def experiment_id(client: MlflowClient, name: str) -> str:
    """The id of experiment ``name``, created if missing (before any trial runs: trials log into it), marked as a
    model-training experiment so the MLflow UI opens on its runs table."""
    found = client.get_experiment_by_name(name)
    if found is not None:
        if found.lifecycle_stage == "deleted":
            raise UsageError(f"MLflow experiment {name!r} is deleted; restore it or pick another --experiment")
        if TAG_EXPERIMENT_KIND not in found.tags:  # a kind the user chose in the UI is kept
            client.set_experiment_tag(found.experiment_id, TAG_EXPERIMENT_KIND, EXPERIMENT_KIND)
        return found.experiment_id
    return client.create_experiment(name, artifact_location=artifact_root(client.tracking_uri),
                                    tags={TAG_EXPERIMENT_KIND: EXPERIMENT_KIND})


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


def log_params(client: MlflowClient, run_id: str, params: Mapping[str, Any]) -> None:
    """Log flattened params in batches (MLflow caps a batch at 100 params)."""
    flat = [Param(k, v[:6000]) for k, v in flatten("", params).items()]
    for i in range(0, len(flat), 100):
        client.log_batch(run_id, params=flat[i:i + 100])


def numeric_metrics(result: Mapping[str, Any], prefixes: Iterable[str] = METRIC_PREFIXES) -> dict[str, float]:
    """The finite numeric entries of a result whose names follow the shared conventions."""
    prefixes = tuple(prefixes)
    return {
        key: float(value)
        for key, value in result.items()
        if key.startswith(prefixes) and isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    }


def log_metrics(client: MlflowClient, run_id: str, metrics: Mapping[str, float], step: int = 0) -> None:
    """Log a dict of metrics at one step."""
    now = int(time.time() * 1000)
    client.log_batch(run_id, metrics=[Metric(k, v, now, step) for k, v in metrics.items()])


def tag_node(client: MlflowClient, run_id: str, tag: str, node_id: str | None) -> None:
    """Add Ray node ``node_id`` to the run's comma-separated ``tag`` (kept in order of first appearance)."""
    if not node_id:
        return
    nodes = [n for n in client.get_run(run_id).data.tags.get(tag, "").split(",") if n]
    if node_id not in nodes:
        client.set_tag(run_id, tag, ",".join([*nodes, node_id]))


def find_parent(client: MlflowClient, exp_id: str, sweep: str) -> str | None:
    """The parent run of sweep ``sweep`` in the experiment, if one exists. The name is matched here, not in MLflow's
    filter, which cannot hold every string (a quote or a backslash breaks it)."""
    parents = client.search_runs([exp_id], filter_string=f"tags.`{TAG_ROLE}` = 'sweep'", max_results=10000)
    return next((run.info.run_id for run in parents if run.data.tags.get(TAG_SWEEP) == sweep), None)


def start_parent(client: MlflowClient, exp_id: str, sweep: str, params: Mapping[str, Any]) -> tuple[str, bool]:
    """Create the sweep's parent run, or reopen it when resuming; returns (run id, reopened)."""
    existing = find_parent(client, exp_id, sweep)
    if existing is not None:
        client.update_run(existing, status="RUNNING")
        return existing, True
    run = client.create_run(exp_id, run_name=sweep, tags={TAG_SWEEP: sweep, TAG_ROLE: "sweep", TAG_NOTE: sweep_note(sweep)})
    log_params(client, run.info.run_id, params)
    return run.info.run_id, False


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


def child_runs(client: MlflowClient, exp_id: str, parent_id: str) -> list:
    """All child (trial) runs of a sweep's parent run."""
    return client.search_runs(
        [exp_id], filter_string=f"tags.`{TAG_PARENT}` = '{parent_id}' and tags.`{TAG_ROLE}` = 'trial'", max_results=10000
    )


def artifact_run(run: Run) -> str:
    """The run whose artifacts are ``run``'s: the one it was copied from (``platform.run.grid_reuse``), else itself."""
    return run.data.tags.get(TAG_REUSED_FROM, run.info.run_id)


def baseline_runs(client: MlflowClient, exp_id: str, parent_id: str, baseline: str | None = None) -> list:
    """The baseline trials' runs of a sweep (role ``baseline``; those of ``baseline`` only, when given): children of
    the parent run that its front and hypervolume leave out."""
    only = f" and tags.`{TAG_BASELINE}` = '{baseline}'" if baseline else ""
    return client.search_runs(
        [exp_id], filter_string=f"tags.`{TAG_PARENT}` = '{parent_id}' and tags.`{TAG_ROLE}` = 'baseline'{only}",
        max_results=10000)


def find_sweep_parent(client: MlflowClient, target: str) -> tuple[str, str]:
    """(experiment id, parent run id) for a parent run id, a sweep name, or an experiment name (its newest sweep)."""
    if re.fullmatch(r"[0-9a-f]{32}", target):
        try:
            run = client.get_run(target)
        except MlflowException:
            raise UsageError(f"no MLflow run with id {target}") from None
        if run.data.tags.get(TAG_ROLE) != "sweep":
            raise UsageError(f"run {target} is not a sweep's parent run")
        return run.info.experiment_id, target
    for exp in client.search_experiments():
        parent = find_parent(client, exp.experiment_id, target)
        if parent:
            return exp.experiment_id, parent
    named = client.get_experiment_by_name(target)
    if named is None:
        raise UsageError(f"{target!r} is neither a sweep run id, a sweep name nor an experiment name")
    runs = client.search_runs([named.experiment_id], filter_string=f"tags.`{TAG_ROLE}` = 'sweep'",
                              order_by=["attributes.start_time DESC"], max_results=1)
    if not runs:
        raise UsageError(f"experiment {target!r} has no sweep")
    return named.experiment_id, runs[0].info.run_id
