"""The sweep store: the one gateway through which putlab's driver reads and writes MLflow (runs, metrics, artifacts
and the model registry); every other driver module takes a ``Store`` and never imports mlflow (import-linter).

Runs, metric points, experiments and model versions come back as MLflow's own read-only records (re-exported here).
All writes go through one explicit client on the driver (no global MLflow state), so a sqlite store never sees
concurrent writers and Ray workers need no access to it.
"""
from __future__ import annotations

import http.client
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from mlflow.entities import Experiment, Metric, Param, Run
from mlflow.entities.model_registry import ModelVersion
from mlflow.exceptions import MlflowException
from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository
from mlflow.tracking import MlflowClient

from core import tracking_uri as uri_rules
from core.messages import first_line
from platform.errors import UsageError
from platform.results import empty_store

__all__ = ["Experiment", "Metric", "ModelVersion", "NotFound", "Run", "Store", "check_tracking_uri"]

BATCH = 1000  # MLflow's cap on the metrics of one batch write
PARAM_BATCH = 100  # ... and on its params


class NotFound(LookupError):
    """A run, experiment, registered model or version the store does not hold."""


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
        self._client = MlflowClient(tracking_uri)

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

    def log_params(self, run_id: str, params: Mapping[str, str]) -> None:
        """String params, in MLflow's batches (values cut to its 6,000 characters)."""
        flat = [Param(k, v[:6000]) for k, v in params.items()]
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
