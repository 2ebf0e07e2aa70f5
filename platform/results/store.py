"""The sweep store: the one gateway through which putlab's driver reads and writes MLflow (runs, metrics, artifacts
and the model registry); every other driver module takes a ``Store`` and never imports mlflow (import-linter).

Runs, metric points, experiments and model versions come back as MLflow's own read-only records (re-exported here).
All writes go through one explicit client on the driver (no global MLflow state), so a sqlite store never sees
concurrent writers and Ray workers need no access to it. A stop signal that arrives while the driver's main thread is
inside a store call takes effect when the call returns (:func:`defer_interrupt`): an interruption in the middle of a
write could leave its database connection holding sqlite's lock, and the sweep's own ending would then wait on it.
"""
from __future__ import annotations

import http.client
import re
import threading
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from mlflow.entities import Experiment, Metric, Param, Run
from mlflow.entities.model_registry import ModelVersion
from mlflow.exceptions import MlflowException
from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository
from mlflow.tracking import MlflowClient

from core import tracking_uri as uri_rules
from core.messages import first_line
from platform.errors import UsageError
from platform.results import empty_store, tracking
from platform.results.tracking import TAG_BASELINE, TAG_EXPERIMENT_KIND, TAG_NOTE, TAG_PARENT, TAG_ROLE, TAG_SWEEP

__all__ = ["Experiment", "Metric", "ModelVersion", "NotFound", "Run", "Store", "check_tracking_uri"]

BATCH = 1000  # MLflow's cap on the metrics of one batch write
PARAM_BATCH = 100  # ... and on its params


class NotFound(LookupError):
    """A run, experiment, registered model or version the store does not hold."""


class _MainThreadCalls:
    """The store calls in flight on the main thread (where Python runs signal handlers), and a deferred interrupt."""

    depth = 0
    interrupted = False


def defer_interrupt() -> bool:
    """For a signal handler about to raise KeyboardInterrupt: True where a store call is in flight on the main thread,
    which then raises it as the call returns; False where the handler raises it now."""
    if _MainThreadCalls.depth == 0:
        return False
    _MainThreadCalls.interrupted = True
    return True


@contextmanager
def _uninterrupted() -> Iterator[None]:
    """One store call, never cut by an interrupt on the main thread: a deferred one is raised as it returns."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _MainThreadCalls.depth += 1
    try:
        yield
    finally:
        _MainThreadCalls.depth -= 1
        if _MainThreadCalls.depth == 0 and _MainThreadCalls.interrupted:
            _MainThreadCalls.interrupted = False
            raise KeyboardInterrupt


class _Guarded:
    """An MlflowClient whose every method call is :func:`_uninterrupted`."""

    def __init__(self, client: MlflowClient) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            with _uninterrupted():
                return attribute(*args, **kwargs)
        return call


def check_tracking_uri(uri: str, create: bool = True) -> None:
    """A tracking URI MLflow can use (``core.tracking_uri``); without ``create``, one whose sqlite store exists."""
    try:
        uri_rules.check_tracking_uri(uri, create)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


class Store:
    """One MLflow tracking store (and its model registry), by URI."""

    def __init__(self, tracking_uri: str) -> None:
        self.tracking_uri = tracking_uri
        self._client = cast(MlflowClient, _Guarded(MlflowClient(tracking_uri)))

    @classmethod
    def open(cls, tracking_uri: str, create: bool = True) -> Store:
        """The store at ``tracking_uri``; an unreachable or unwritable store is a UsageError (checked quickly, no
        retries), and so is a missing sqlite store unless ``create`` (commands that only read never create one)."""
        check_tracking_uri(tracking_uri, create)
        db = uri_rules.sqlite_path(tracking_uri)
        if create and db is not None:
            empty_store.create_store(db)
        if tracking_uri.startswith(("http://", "https://")):
            try:
                urllib.request.urlopen(tracking_uri.rstrip("/") + "/health", timeout=5).read()
            except (OSError, ValueError, http.client.HTTPException) as exc:  # refused, timed out, bad URL, broken reply
                raise UsageError(f"MLflow tracking store {tracking_uri} is unreachable: {exc}") from None
        store = cls(tracking_uri)
        try:
            store.experiments(max_results=1)
        except Exception as exc:  # noqa: BLE001 - each store backend (sqlite, PostgreSQL, HTTP, files) raises its own
            raise UsageError(f"MLflow tracking store {tracking_uri} is unusable: {first_line(exc)}") from None
        return store

    # experiments
    def experiments(self, max_results: int = 1000) -> list[Experiment]:
        return list(self._client.search_experiments(max_results=max_results))

    def experiment(self, exp_id: str) -> Experiment:
        return self._client.get_experiment(exp_id)

    def experiment_named(self, name: str) -> Experiment | None:
        return self._client.get_experiment_by_name(name)

    def new_experiment(self, name: str, artifact_location: str | None, tags: Mapping[str, str]) -> str:
        return self._client.create_experiment(name, artifact_location=artifact_location, tags=dict(tags))

    def set_experiment_tag(self, exp_id: str, key: str, value: str) -> None:
        self._client.set_experiment_tag(exp_id, key, value)

    # runs
    def run(self, run_id: str) -> Run:
        """The run ``run_id``; NotFound where the store holds none."""
        try:
            return self._client.get_run(run_id)
        except MlflowException as exc:
            raise NotFound(first_line(exc)) from None

    def runs(self, exp_ids: Sequence[str], where: str = "", order_by: Sequence[str] | None = None,
             max_results: int = 10000) -> list[Run]:
        """The runs of the experiments matching MLflow's filter ``where``."""
        return list(self._client.search_runs(list(exp_ids), filter_string=where, order_by=list(order_by) if order_by else None,
                                             max_results=max_results))

    def new_run(self, exp_id: str, name: str, tags: Mapping[str, str] | None = None) -> str:
        """A new running run; its id."""
        return self._client.create_run(exp_id, run_name=name, tags=dict(tags or {})).info.run_id

    def reopen(self, run_id: str) -> None:
        self._client.update_run(run_id, status="RUNNING")

    def end(self, run_id: str, status: str = "FINISHED") -> None:
        self._client.set_terminated(run_id, status)

    def delete_run(self, run_id: str) -> None:
        self._client.delete_run(run_id)

    def set_tag(self, run_id: str, key: str, value: str) -> None:
        self._client.set_tag(run_id, key, value)

    # metrics and params
    def log_metric(self, run_id: str, key: str, value: float, step: int = 0) -> None:
        self._client.log_metric(run_id, key, value, step=step)

    def log_metrics(self, run_id: str, metrics: Mapping[str, float], step: int = 0) -> None:
        """A dict of metrics at one step."""
        now = int(time.time() * 1000)
        self.log_history(run_id, [Metric(k, v, now, step) for k, v in metrics.items()])

    def log_history(self, run_id: str, points: Sequence[Metric]) -> None:
        """Metric points as given (key, value, timestamp, step), in MLflow's batches."""
        for i in range(0, len(points), BATCH):
            self._client.log_batch(run_id, metrics=list(points[i:i + BATCH]))

    def log_params(self, run_id: str, params: Mapping[str, Any]) -> None:
        """Params flattened (``tracking.flatten``: nested as dotted names, values as strings), in MLflow's batches
        (values cut to its 6,000 characters)."""
        flat = [Param(k, v[:6000]) for k, v in tracking.flatten("", params).items()]
        for i in range(0, len(flat), PARAM_BATCH):
            self._client.log_batch(run_id, params=flat[i:i + PARAM_BATCH])

    def history(self, run_id: str, key: str) -> list[Metric]:
        """Every logged point of metric ``key`` of the run."""
        return list(self._client.get_metric_history(run_id, key))

    def at_step(self, run_id: str, key: str, step: int) -> list[float]:
        """The values of metric ``key`` logged at ``step`` (in logging order)."""
        return [m.value for m in self.history(run_id, key) if m.step == step]

    # artifacts
    def log_file(self, run_id: str, path: Path, folder: str | None = None) -> None:
        self._client.log_artifact(run_id, str(path), artifact_path=folder)

    def log_folder(self, run_id: str, local: Path | str, folder: str) -> None:
        self._client.log_artifacts(run_id, str(local), folder)

    def files(self, run_id: str, folder: str) -> list[str]:
        """The paths of the run's artifacts directly in ``folder``."""
        return [a.path for a in self._client.list_artifacts(run_id, folder)]

    def download(self, run_id: str, path: str, into: Path | str) -> Path:
        return Path(self._client.download_artifacts(run_id, path, str(into)))

    def delete_files(self, run_id: str, folder: str) -> None:
        get_artifact_repository(self.run(run_id).info.artifact_uri).delete_artifacts(folder)

    # the model registry
    def model_versions(self, where: str = "") -> list[ModelVersion]:
        return list(self._client.search_model_versions(where))

    def model_version(self, name: str, version: str) -> ModelVersion:
        """Version ``version`` of registered model ``name``; NotFound where there is none."""
        try:
            return self._client.get_model_version(name, version)
        except MlflowException as exc:
            raise NotFound(first_line(exc)) from None

    def ensure_model(self, name: str, tags: Mapping[str, str], description: str) -> None:
        """Registered model ``name``, created where missing."""
        try:
            self._client.get_registered_model(name)
        except MlflowException:
            self._client.create_registered_model(name, tags=dict(tags), description=description)

    def register(self, name: str, run_id: str, folder: str, tags: Mapping[str, str], description: str) -> ModelVersion:
        """A new version of model ``name`` from the run's artifact ``folder``."""
        return self._client.create_model_version(name, source=f"runs:/{run_id}/{folder}", run_id=run_id,
                                                 tags=dict(tags), description=description)

    def set_version_tag(self, version: ModelVersion, key: str, value: str) -> None:
        self._client.set_model_version_tag(version.name, version.version, key, value)

    # a sweep's layout (``platform.results.tracking``): one parent run per sweep, one child run per trial
    def ensure_experiment(self, name: str) -> str:
        """The id of experiment ``name``, created if missing (before any trial runs: trials log into it), marked as a
        model-training experiment so the MLflow UI opens on its runs table."""
        found = self.experiment_named(name)
        if found is not None:
            if found.lifecycle_stage == "deleted":
                raise UsageError(f"MLflow experiment {name!r} is deleted; restore it or pick another --experiment")
            if TAG_EXPERIMENT_KIND not in found.tags:  # a kind the user chose in the UI is kept
                self.set_experiment_tag(found.experiment_id, TAG_EXPERIMENT_KIND, tracking.EXPERIMENT_KIND)
            return found.experiment_id
        return self.new_experiment(name, tracking.artifact_root(self.tracking_uri),
                                   {TAG_EXPERIMENT_KIND: tracking.EXPERIMENT_KIND})

    def find_parent(self, exp_id: str, sweep: str) -> str | None:
        """The parent run of sweep ``sweep`` in the experiment, if one exists. The name is matched here, not in
        MLflow's filter, which cannot hold every string (a quote or a backslash breaks it)."""
        parents = self.runs([exp_id], f"tags.`{TAG_ROLE}` = 'sweep'")
        return next((run.info.run_id for run in parents if run.data.tags.get(TAG_SWEEP) == sweep), None)

    def start_parent(self, exp_id: str, sweep: str, params: Mapping[str, Any]) -> tuple[str, bool]:
        """Create the sweep's parent run, or reopen it when resuming; returns (run id, reopened)."""
        existing = self.find_parent(exp_id, sweep)
        if existing is not None:
            self.reopen(existing)
            return existing, True
        run_id = self.new_run(exp_id, sweep, {TAG_SWEEP: sweep, TAG_ROLE: "sweep", TAG_NOTE: tracking.sweep_note(sweep)})
        self.log_params(run_id, params)
        return run_id, False

    def child_runs(self, exp_id: str, parent_id: str) -> list[Run]:
        """All child (trial) runs of a sweep's parent run."""
        return self.runs([exp_id], f"tags.`{TAG_PARENT}` = '{parent_id}' and tags.`{TAG_ROLE}` = 'trial'")

    def baseline_runs(self, exp_id: str, parent_id: str, baseline: str | None = None) -> list[Run]:
        """The baseline trials' runs of a sweep (role ``baseline``; those of ``baseline`` only, when given): children
        of the parent run that its front and hypervolume leave out."""
        only = f" and tags.`{TAG_BASELINE}` = '{baseline}'" if baseline else ""
        return self.runs([exp_id], f"tags.`{TAG_PARENT}` = '{parent_id}' and tags.`{TAG_ROLE}` = 'baseline'{only}")

    def tag_node(self, run_id: str, tag: str, node_id: str | None) -> None:
        """Add Ray node ``node_id`` to the run's comma-separated ``tag`` (kept in order of first appearance)."""
        if not node_id:
            return
        nodes = [n for n in self.run(run_id).data.tags.get(tag, "").split(",") if n]
        if node_id not in nodes:
            self.set_tag(run_id, tag, ",".join([*nodes, node_id]))

    def find_sweep(self, target: str) -> tuple[str, str]:
        """(experiment id, parent run id) for a parent run id, a sweep name, or an experiment name (its newest
        sweep)."""
        if re.fullmatch(r"[0-9a-f]{32}", target):
            try:
                run = self.run(target)
            except NotFound:
                raise UsageError(f"no MLflow run with id {target}") from None
            if run.data.tags.get(TAG_ROLE) != "sweep":
                raise UsageError(f"run {target} is not a sweep's parent run")
            return run.info.experiment_id, target
        for exp in self.experiments():
            parent = self.find_parent(exp.experiment_id, target)
            if parent:
                return exp.experiment_id, parent
        named = self.experiment_named(target)
        if named is None:
            raise UsageError(f"{target!r} is neither a sweep run id, a sweep name nor an experiment name")
        runs = self.runs([named.experiment_id], f"tags.`{TAG_ROLE}` = 'sweep'", order_by=["attributes.start_time DESC"],
                         max_results=1)
        if not runs:
            raise UsageError(f"experiment {target!r} has no sweep")
        return named.experiment_id, runs[0].info.run_id
