"""A Tune callback, run on the driver, that mirrors every trial into an MLflow child run.

Idempotent across ``--resume``: a trial's run is found again by its trial id, metrics are only
logged for steps beyond what the run already holds, and a finished run is never logged twice.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from ray import tune

from core.numbers import readable
from platform.plan.content_key import GridKey
from platform.results import tracking
from platform.results.clock import clock
from platform.results.store import Store
from platform.run import storage as tune_storage
from platform.run.farm import FarmPlan, FarmScheduler


def trial_label(config: dict[str, Any], keys: tuple[str, ...]) -> str:
    """A short human name for a trial from its search-axis values, e.g. 'alpha=2 lam=0.0001 adv_steps=1'."""
    return " ".join(f"{k}={readable(config[k])}" if isinstance(config.get(k), float) else f"{k}={config.get(k)}"
                    for k in keys)


class MlflowTrialLogger(tune.Callback):
    """Child run per trial: params at start, metrics per result, figures per checkpoint, status at end."""

    def __init__(self, tracking_uri: str, experiment_id: str, parent_run_id: str, label_keys: tuple[str, ...],
                 figures: tuple[str, ...], shown: tuple[str, ...], total_epochs: int | None = None,
                 farm: FarmPlan | None = None, verbose: bool = False, storage: str = "", mechanism: str = "",
                 tags: dict[str, str] | None = None, content_key: GridKey | None = None) -> None:
        self.tags = tags or {}  # set on every trial run over the defaults (e.g. a baseline's role and kind)
        self.content_key = content_key  # a comparison grid's: each trial run is tagged with its content key
        self.tracking_uri = tracking_uri
        self.mechanism = mechanism  # logged beside the trial config (the preset names the mechanism, not the config)
        self.storage = storage  # the sweep's Tune storage (path or URI): checkpoint tags are locations on it
        self.verbose = verbose
        self.shown = shown
        self.farm = farm
        self.experiment_id = experiment_id
        self.parent_run_id = parent_run_id
        self.label_keys = label_keys
        self.figures = figures
        self.total_epochs = total_epochs
        self._store: Store | None = None
        self._scheduler: FarmScheduler | None = None
        self._runs: dict[str, tuple[str, int]] = {}  # trial id -> (run id, last logged step)
        self._started: dict[str, float] = {}
        self._nodes: dict[str, str] = {}  # trial id -> the Ray node of its last result

    def __getstate__(self) -> dict:
        """Tune pickles callbacks with the experiment state: keep only the configuration."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_store", "_scheduler", "_runs", "_started", "_nodes")}

    def __setstate__(self, state: dict) -> None:
        defaults: dict[str, Any] = {"storage": "", "tags": {}, "content_key": None}  # what one pickled before them lacks
        self.__dict__.update(defaults | state, _store=None, _scheduler=None, _runs={}, _started={}, _nodes={})

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store(self.tracking_uri)
        return self._store

    @property
    def scheduler(self) -> FarmScheduler | None:
        if self._scheduler is None and self.farm is not None:
            self._scheduler = FarmScheduler(self.store, self.farm)
        return self._scheduler

    def _run(self, trial: Any) -> tuple[str, int]:
        """(run id, last logged step) of the trial's child run, creating the run the first time."""
        if trial.trial_id in self._runs:
            return self._runs[trial.trial_id]
        found = self.store.runs(
            [self.experiment_id],
            where=(f"tags.`{tracking.TAG_PARENT}` = '{self.parent_run_id}' "
                           f"and tags.`{tracking.TAG_TRIAL}` = '{trial.trial_id}'"),
            max_results=1,
        )
        if found:
            run_id = found[0].info.run_id
            if found[0].info.status != "RUNNING":  # an interrupted or failed trial continues on --resume
                self.store.reopen(run_id)
            history = self.store.history(run_id, "epoch")
            last = max((m.step for m in history), default=0)
        else:
            tags = {
                "mlflow.parentRunId": self.parent_run_id,
                tracking.TAG_PARENT: self.parent_run_id,
                tracking.TAG_TRIAL: trial.trial_id,
                tracking.TAG_ROLE: "trial",
            } | self.tags
            if self.content_key is not None:
                tags[tracking.TAG_CONTENT_KEY] = self.content_key.of(trial.config)
            run_id, last = self.store.new_run(self.experiment_id, trial_label(trial.config, self.label_keys), tags), 0
            self.store.log_params(run_id, trial.config | ({"mechanism": self.mechanism} if self.mechanism else {}))
        self._runs[trial.trial_id] = (run_id, last)
        return run_id, last

    def on_trial_start(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        self._run(trial)
        self._started[trial.trial_id] = time.time()
        if self.verbose:
            print(f"[{trial_label(trial.config, self.label_keys)}] started ({trial.trial_id})", flush=True)

    def on_trial_result(self, iteration: int, trials: list, trial: Any, result: dict, **info: Any) -> None:
        run_id, last = self._run(trial)
        step = int(result.get("training_iteration", 0))
        if step <= last:
            return
        metrics = tracking.numeric_metrics(result)
        self.store.log_metrics(run_id, metrics, step=step)
        node = result.get("node_id")
        if node and self._nodes.get(trial.trial_id) != node:  # the run's tags are read only when the node changes
            self.store.tag_node(run_id, tracking.TAG_NODE, node)
            self._nodes[trial.trial_id] = node
        self._runs[trial.trial_id] = (run_id, step)
        of = f"/{self.total_epochs}" if self.total_epochs else ""
        if not self.verbose:
            return
        shown = "  ".join(f"{k} {readable(metrics[k])}" for k in self.shown if k in metrics)
        print(f"[{trial_label(trial.config, self.label_keys)}] step {step}{of}  {shown}", flush=True)

    def on_checkpoint(self, iteration: int, trials: list, trial: Any, checkpoint: tune.Checkpoint, **info: Any) -> None:
        run_id, _ = self._run(trial)
        step = int(trial.last_result.get("training_iteration", 0))
        self.store.set_tag(run_id, tracking.TAG_CHECKPOINT, tune_storage.location(self.storage, checkpoint.path))
        with checkpoint.as_directory() as directory:
            for name in self.figures:
                src = Path(directory) / name
                if src.exists():
                    with tempfile.TemporaryDirectory() as tmp:
                        dst = Path(tmp) / f"epoch{step:03d}_{name}"
                        dst.write_bytes(src.read_bytes())
                        self.store.log_file(run_id, dst, "figures")
        if self.scheduler is not None:
            last = self.total_epochs is None or step >= self.total_epochs
            self.scheduler.submit(run_id, step, trial.config, checkpoint, figures=last)

    def on_step_end(self, iteration: int, trials: list, **info: Any) -> None:
        if self._scheduler is not None:
            self._scheduler.poll(timeout=0)

    def on_experiment_end(self, trials: list, **info: Any) -> None:
        if self._scheduler is not None:
            self._scheduler.drain()

    def on_trial_complete(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        run_id, _ = self._run(trial)
        self.store.end(run_id, "FINISHED")
        took = time.time() - self._started.get(trial.trial_id, time.time())
        print(f"[{trial_label(trial.config, self.label_keys)}] finished in {clock(took)}", flush=True)

    def on_trial_error(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        run_id, _ = self._run(trial)
        self.store.end(run_id, "FAILED")
        print(f"[{trial_label(trial.config, self.label_keys)}] FAILED: see {trial.error_file}", flush=True)

    def on_trial_recover(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        print(f"[{trial_label(trial.config, self.label_keys)}] worker failed; retrying from its last checkpoint", flush=True)
