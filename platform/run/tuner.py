"""Ray start-up and the Tune run of a sweep: grid or Optuna search, resources, retries, resume."""
from __future__ import annotations

import os
from typing import Any

import ray
import torch
from ray import tune
from ray.tune import ProgressReporter
from ray.tune.search.basic_variant import BasicVariantGenerator
from ray.tune.search.optuna import OptunaSearch

from core.quiet import silence
from platform.errors import UsageError
from platform.plan.spec import SweepSpec
from platform.run import preflight
from platform.run import storage as tune_storage
from platform.run.resume_seal import StateSealer, verify_folder

TUNER_STATE = "tuner.pkl"


def init_ray(address: str | None, verbose: bool = False) -> None:
    """Connect to a cluster (``--address`` or RAY_ADDRESS, as under ``ray job submit``) or start a local one.

    An unreachable address is a UsageError within seconds. Without an address a new local Ray starts even when a
    ``ray start`` node runs on this machine (``address="local"``: plain ``ray.init()`` would join that node).
    Quiet unless ``verbose``: workers' output (e.g. their exit tracebacks at shutdown) stays in Ray's logs; trial
    failures still reach the user through Tune's error files, which the sweep names."""
    address = address or os.environ.get("RAY_ADDRESS")
    silence(verbose)
    kwargs: dict[str, Any] = {"logging_level": "WARNING", "log_to_driver": verbose}
    if address:
        preflight.check_ray_address(address)
        ray.init(address=address, **kwargs)  # resources belong to the cluster: ray.init(num_cpus=...) would raise
    else:
        # No workers started ahead of the first task (Ray's default starts one per CPU for a new driver): a sweep's
        # trials and farm tasks start their own, so those went unused; 4 CPU-seconds and 3.6 s of a smoke sweep.
        ray.init(address="local", num_cpus=os.cpu_count(), include_dashboard=False,
                 _system_config={"prestart_worker_first_driver": False}, **kwargs)


def default_gpus_per_trial() -> float:
    """A quarter GPU per trial when the cluster has GPUs (four small trials share one), else none."""
    return 0.25 if ray.cluster_resources().get("GPU", 0) > 0 else 0.0


def cluster_kind() -> str:
    """The cluster in words, as a sweep records it: nodes, CPUs, GPUs with their model, and the torch build with the
    CPU kernels it picks here (e.g. "1 node, 2 CPUs, no GPU, torch 2.14.1, CPU kernels AVX512"): a seed's game
    reproduces bit for bit only on the same build and kernels (docs/measurements.md#same-seed-same-release)."""
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    resources = ray.cluster_resources()
    cpus, gpus = int(resources.get("CPU", 0)), int(resources.get("GPU", 0))
    models = sorted({k.removeprefix("accelerator_type:") for k in resources if k.startswith("accelerator_type:")})
    return kind_in_words(len(nodes), cpus, gpus, models)


def kind_in_words(nodes: int, cpus: int, gpus: int, models: list[str]) -> str:
    """'1 node, 2 CPUs, no GPU, torch 2.14.1, CPU kernels AVX2': the machine a sweep records, this torch build's."""
    shown = f"{gpus} GPU{'s' * (gpus > 1)}" + (f" ({', '.join(models)})" if models else "") if gpus else "no GPU"
    build = f"torch {torch.__version__.split('+')[0]}, CPU kernels {torch.backends.cpu.get_cpu_capability()}"
    return f"{nodes} node{'s' * (nodes > 1)}, {cpus} CPUs, {shown}, {build}"


def find_sweep(storage: str, preset: str, name: str | None) -> str:
    """The Tune run to resume: ``name`` if given, else the newest run of ``preset`` under ``storage`` (path or URI)."""
    if name:
        if not tune_storage.exists(tune_storage.join(storage, name, TUNER_STATE)):
            raise UsageError(f"no resumable sweep {name!r} under {storage}")
        return name
    newest = tune_storage.newest(storage, f"{preset}-", TUNER_STATE)
    if newest is None:
        raise UsageError(f"no sweep of preset {preset!r} to resume under {storage}")
    return newest


def _optuna_param(spec: SweepSpec, key: str) -> Any:
    r = spec.preset.optuna[key]
    if r.integer:
        return tune.lograndint(int(r.low), int(r.high) + 1) if r.log else tune.randint(int(r.low), int(r.high) + 1)
    return tune.loguniform(r.low, r.high) if r.log else tune.uniform(r.low, r.high)


def build_tuner(spec: SweepSpec, *, search: str, samples: int | None, resources: dict[str, float],
                storage: str, name: str, callbacks: list, max_concurrent: int | None, max_failures: int,
                progress: ProgressReporter | None = None) -> tune.Tuner:
    """A fresh Tuner: one trial per grid point, or ``samples`` Optuna multi-objective suggestions; ``progress``
    reports on the terminal (see ``platform.run.progress``). Its state is sealed for ``--resume``
    (``platform.run.resume_seal``)."""
    trainable = tune.with_resources(spec.preset.trainable, resources)
    if search == "grid":
        # The exact list of distinct grid points (equivalent points already merged), run once each.
        points = [{k: p[k] for k in spec.grid} for p in spec.grid_points()]
        param_space = {**spec.config, **points[0]}  # each point then overrides these keys
        tune_config = tune.TuneConfig(num_samples=len(points), max_concurrent_trials=max_concurrent,
                                      search_alg=BasicVariantGenerator(points_to_evaluate=points))
    else:
        param_space = {**spec.config, **{k: _optuna_param(spec, k) for k in spec.grid}}
        objectives = spec.preset.front.objectives  # metrics the trial reports itself (the farm's come later)
        searcher = OptunaSearch(
            metric=[m for m, _ in objectives], mode=[mode for _, mode in objectives],
            seed=int(spec.config.get("seed", 0)),
        )
        tune_config = tune.TuneConfig(search_alg=searcher, max_concurrent_trials=max_concurrent,
                                      num_samples=samples or spec.preset.profiles[spec.profile].optuna_samples)
    sealer = StateSealer()
    run_config = tune.RunConfig(
        name=name,
        storage_path=storage,
        callbacks=[sealer, *callbacks],  # the seal first: it must not wait behind a callback's work
        failure_config=tune.FailureConfig(max_failures=max_failures),
        checkpoint_config=tune.CheckpointConfig(num_to_keep=None),  # the attack farm wants every checkpoint
        progress_reporter=progress,
        verbose=1 if progress is not None else 0,  # 1: only the reporter speaks (Tune's legacy path, core.quiet)
    )
    tuner = tune.Tuner(trainable, param_space=param_space, tune_config=tune_config, run_config=run_config)
    fs, folder = tune_storage.filesystem(tune_storage.join(storage, name))
    sealer.seal_folder(fs, folder)
    return tuner


def restore_tuner(spec: SweepSpec, resources: dict[str, float], location: str) -> tune.Tuner:
    """The interrupted Tuner at ``location`` (its Tune run's folder), once its seal proves the state is the sweep's own
    (nothing is unpickled before): finished trials stay finished, unfinished and errored ones continue."""
    fs, folder = tune_storage.filesystem(location)
    verify_folder(fs, folder)
    trainable = tune.with_resources(spec.preset.trainable, resources)
    return tune.Tuner.restore(location, trainable=trainable, resume_unfinished=True, resume_errored=True)
