"""Launching a planned sweep: Ray and each trial's resources, the parent run, the trials the store already holds
copied, the plan's cost said up front, the raw-data reference points under way, then Tune's runs of the rest of the
grid and of its comparison grids, and the farm's catch-up."""
from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import ray

from core.commands import executable
from platform.plan.comparison_grid import comparison_grids
from platform.plan.spec import SweepSpec
from platform.plan.sweep_plan import SweepPlan
from platform.results import drivers, tracking
from platform.results.store import Store
from platform.run import preflight
from platform.run.catch_up import attack_missing
from platform.run.comparison_grid import comparison_grid_farm, run_baseline
from platform.run.cost_estimate import pace_params, planned_cost, process_age_s
from platform.run.farm import FarmPlan
from platform.run.front_curves import start_front_curves
from platform.run.grid_reuse import GridReuse, reuse_grids, reuse_own
from platform.run.interrupts import SweepEnding, resume_command
from platform.run.learning_curves import cancel_curves, collect_curves
from platform.run.progress import SweepProgress
from platform.run.speed_probe import probe_seconds
from platform.run.trial_logger import MlflowTrialLogger
from platform.run.tuner import build_tuner, cluster_kind, default_gpus_per_trial, init_ray, restore_tuner
from search_spaces import Preset


@dataclass(frozen=True)
class Sweep:
    """A launched sweep: its plan and spec (with each trial's threads), parent run, resources per trial, farm, baseline
    grids (none without) with what the store held of them, raw-data reference points under way (None when recorded
    already or the preset has none), and the data counts of its grid's first point (the learning curves' 200 % point
    reads them)."""

    plan: SweepPlan
    spec: SweepSpec
    store: Store
    exp_id: str
    parent_id: str
    resources: dict[str, float]
    farm: FarmPlan | None
    grids: tuple[GridReuse, ...]  # each comparison grid, its trials reused from the store left out
    raw_references: ray.ObjectRef | None
    planned: int  # the parent run's own plan (a resumed sweep keeps it)
    counts: dict[str, int]
    own: GridReuse | None = None  # the sweep's own grid, its trials reused from the store left out (None: not keyed)

    @property
    def own_trials(self) -> int:
        """The sweep's own trials its Tune run holds (:func:`own_left`)."""
        return own_left(self.planned, self.own)

    @property
    def tune_spec(self) -> SweepSpec:
        """What the sweep's own Tune run runs: the spec, less the points the store held."""
        return self.spec if self.own is None else self.own.left

    @property
    def comparison_grids(self) -> tuple[SweepSpec, ...]:
        """Each comparison grid's points left to run (none where the store held them all), in its order."""
        return tuple(grid.left for grid in self.grids)

    @property
    def comparison_trials(self) -> tuple[int, ...]:
        """Each comparison grid's trials left to run, in its order."""
        return tuple(grid.trials for grid in self.grids)


def own_left(planned: int, own: GridReuse | None) -> int:
    """A sweep's own trials left to its Tune run: the ``planned`` ones, less those the store held (``own``)."""
    return planned - (own.reused if own else 0)


def launch(plan: SweepPlan, counts: dict[str, int], ending: SweepEnding) -> Sweep:
    """Start Ray, open the parent run (``ending`` can then record an interruption), say what it will cost, and start
    the raw-data reference points."""
    init_ray(plan.address, plan.verbose)
    spec, resources = with_resources(plan)
    store = Store(plan.tracking_uri)
    exp_id = store.ensure_experiment(plan.experiment)
    drivers.end_orphans(store, exp_id)  # sweeps of this host left RUNNING by a driver killed outright
    parent_id, reopened = store.start_parent(exp_id, plan.name, plan.parent_params(spec, cluster_kind()))
    store.set_tag(parent_id, drivers.TAG_DRIVER, drivers.this_driver())
    parent_run = store.run(parent_id)
    ending.attach(store, exp_id, parent_id, resume_command(plan.again, plan.name, dict(plan.options)),
                  tracking.active_minutes(parent_run) if reopened else 0.0)
    parent = parent_run.data
    params = parent.params
    grids = comparison_grids(spec, params, plan.comparison_grids)
    grid_trials = tuple(len(grid.grid_points()) for grid in grids)
    first_point = spec.grid_points()[0]
    planned = int(params["planned_trials"])  # a resumed sweep keeps its own plan
    for grid, count in zip(grids, grid_trials, strict=True):
        axes = "; ".join(f"{k} ∈ {{{', '.join(f'{v:g}' for v in grid.grid[k])}}}" for k in grid.preset.label_keys)
        print(f"{grid.preset.name} comparison grid: {count} trial{'s' if count > 1 else ''} after the sweep's own ({axes}), same "
              "data and farm; off: --no-comparison-grids", flush=True)
    reused = reuse_grids(store, exp_id, parent_id, grids, plan, resources)
    grid_trials = tuple(grid.trials for grid in reused)  # the trials the store did not hold
    own = reuse_own(store, exp_id, parent_id, spec, plan, resources)
    to_run = own_left(planned, own)
    if own is not None and to_run == 0:  # no Tune run of its own to resume: the same command copies them again
        ending.resume = [executable("python"), "-m", "platform.sweep", *sys.argv[1:]]
    like = pace_params(params)
    store.log_metrics(parent_id, {tracking.STARTUP_SECONDS: process_age_s(),
                                             tracking.PROBE_SECONDS: probe_seconds()})
    print(planned_cost(store, exp_id, spec, to_run, sum(grid_trials), plan.attackers, like).line(), flush=True)
    if not reopened:
        store.log_metrics(parent_id, {f"data/{k}": float(v) for k, v in counts.items()})
    farm = None
    if plan.attackers and spec.preset.checkpoint_inputs is not None:
        farm = FarmPlan.of(spec.preset.mechanism, spec.preset.checkpoint_inputs, plan.attackers,
                           spec.preset.farm.privacy, resources)
        if in_trial := sorted(set(plan.attackers) - set(farm.attackers)):
            print(f"{', '.join(in_trial)}: every {spec.preset.mechanism_name} trial fits it at each checkpoint itself; "
                  "the farm does not fit it again", flush=True)
    return Sweep(plan, spec, store, exp_id, parent_id, resources, farm, reused,
                 start_raw_references(parent.metrics, spec.preset, first_point, resources), planned, counts, own)


def with_resources(plan: SweepPlan) -> tuple[SweepSpec, dict[str, float]]:
    """The spec with each trial's threads, and each trial's CPUs and GPUs, checked against the cluster's."""
    gpus = default_gpus_per_trial() if plan.gpus_per_trial is None else plan.gpus_per_trial
    cpus = plan.spec.preset.profiles[plan.spec.profile].cpus_per_trial
    resources = {"cpu": cpus, "gpu": gpus}
    if plan.verbose:
        print(f"ray: {ray.cluster_resources()}; per trial {resources}", flush=True)
    preflight.check_resources(resources, ray.cluster_resources())
    return threaded(plan.spec), resources


def threaded(spec: SweepSpec) -> SweepSpec:
    """The spec with each trial's torch threads: one per CPU its profile gives a trial, at least one."""
    return replace(spec, config={**spec.config, "threads": max(1, int(spec.preset.profiles[spec.profile].cpus_per_trial))})


def start_raw_references(recorded: dict[str, float], preset: Preset, point: dict[str, Any],
                         resources: dict[str, float]) -> ray.ObjectRef | None:
    """The preset's raw-data reference points of a grid ``point`` as a Ray task beside the trials, unless the parent
    run's ``recorded`` metrics have them already."""
    if preset.raw_references is None or any(k.startswith("baseline/") for k in recorded):
        return None
    task = ray.remote(preset.raw_references).options(num_cpus=resources["cpu"], num_gpus=resources["gpu"])
    return task.remote(point)


def log_raw_references(sweep: Sweep) -> None:
    """The raw-data reference points on the parent run, once they are done (a Ctrl+C meanwhile cancels them)."""
    if sweep.raw_references is None:
        return
    try:
        ray.wait([sweep.raw_references])
    except KeyboardInterrupt:
        ray.cancel(sweep.raw_references, force=True)
        raise
    sweep.store.log_metrics(sweep.parent_id, ray.get(sweep.raw_references))


def keep_raw_references(sweep: Sweep) -> None:
    """What an interrupted sweep keeps of its raw-data reference points: logged when they are ready (a resumed sweep then
    skips them, a partial one reports them), else cancelled (a resumed sweep runs them again)."""
    if sweep.raw_references is None:
        return
    if ray.wait([sweep.raw_references], timeout=0)[0]:
        sweep.store.log_metrics(sweep.parent_id, ray.get(sweep.raw_references))
    else:
        ray.cancel(sweep.raw_references, force=True)


@dataclass(frozen=True)
class Ended:
    """How the trials of a sweep's own Tune run ended: how many raised, and how many ended (none where the store held
    every point, and no Tune run was needed)."""

    errors: int = 0
    terminated: int = 0


def fit(sweep: Sweep, ending: SweepEnding) -> Ended | None:
    """Tune's run of the grid's points the store did not hold (restored on a resume), each trial logged into its child
    run and attacked by the farm as its checkpoints arrive; returns how its trials ended, None when interrupted."""
    plan, spec = sweep.plan, sweep.spec
    if sweep.own_trials == 0 and not plan.resumed:
        return Ended()
    if plan.resumed:
        tuner = restore_tuner(spec, sweep.resources, plan.location)
    else:
        logger = MlflowTrialLogger(plan.tracking_uri, sweep.exp_id, sweep.parent_id, spec.preset.label_keys,
                                   spec.preset.presentation.checkpoint_figures, storage=plan.storage,
                                   mechanism=spec.preset.mechanism_name,
                                   shown=tuple(m for m, _ in spec.preset.front.objectives),
                                   total_epochs=spec.config.get("epochs"), farm=sweep.farm, verbose=plan.verbose,
                                   content_key=sweep.own.key if sweep.own else None)
        tuner = build_tuner(sweep.tune_spec, search=plan.search, samples=plan.samples, resources=sweep.resources,
                            storage=plan.storage, name=plan.name, callbacks=[logger],
                            max_concurrent=plan.max_concurrent, max_failures=plan.max_failures,
                            progress=SweepProgress(sweep.own_trials))
    with ending.fitting():
        results = tuner.fit()
    if ending.signal is not None:
        keep_raw_references(sweep)
        return None
    return Ended(results.num_errors, results.num_terminated)


@dataclass(frozen=True)
class CaughtUp:
    """What ran after the grid: checkpoints whose farm work was missing (lost to an interruption, or failed and tried
    again), how many of those failed once more, and each comparison grid's Tune results (in ``Sweep.comparison_grids``'
    order; None for a grid whose every trial was reused)."""

    checkpoints: int
    farm_failures: int
    baseline_results: tuple[Any | None, ...] = ()
    curves: int = 0  # front points' learning curves drawn (platform.run.front_curves)
    curve_failures: int = 0


def catch_up(sweep: Sweep, ending: SweepEnding) -> CaughtUp | None:
    """Attack the checkpoints left without their farm metrics (an interruption, an attack that raised), start the front
    points' learning curves (``platform.run.front_curves``), then run the comparison grids one after the other, catching
    up on each one's checkpoints likewise, and collect the curves and the raw-data reference points; None when
    interrupted."""
    store, exp_id, parent_id = sweep.store, sweep.exp_id, sweep.parent_id
    runs = store.child_runs(exp_id, parent_id) if sweep.farm else []
    caught_up, failed = attack_missing(store, runs, sweep.farm) if sweep.farm else (0, 0)
    plan = sweep.plan
    curves = start_front_curves(store, parent_id, sweep.spec.preset, sweep.farm, runs, sweep.counts) \
        if plan.learning_curves and sweep.farm else {}
    results: dict[int, Any] = {}
    for index in run_order(sweep.comparison_grids, beside_curves=bool(curves)):
        grid = sweep.comparison_grids[index]
        with ending.fitting():
            results[index] = run_baseline(grid, key=sweep.grids[index].key, tracking_uri=plan.tracking_uri, exp_id=exp_id,
                                          parent_id=parent_id, storage=plan.storage, sweep=plan.name,
                                          farm=sweep.farm, resources=sweep.resources,
                                          max_concurrent=plan.max_concurrent, max_failures=plan.max_failures,
                                          verbose=plan.verbose)
        if ending.signal is not None:
            keep_raw_references(sweep)
            cancel_curves(curves)
            return None
        farm = comparison_grid_farm(grid, sweep.farm)
        if farm is not None:
            runs = store.baseline_runs(exp_id, parent_id, grid.preset.name)
            done, more_failed = attack_missing(store, runs, farm)
            caught_up, failed = caught_up + done, failed + more_failed
    if caught_up:
        print(f"attack farm: caught up on {caught_up} checkpoint(s)", flush=True)
    try:
        drawn, curve_failed = collect_curves(store, curves)
    except KeyboardInterrupt:
        cancel_curves(curves)
        raise
    log_raw_references(sweep)
    return CaughtUp(caught_up, failed, tuple(results[i] for i in sorted(results)), drawn, curve_failed)


def run_order(grids: Sequence[SweepSpec], beside_curves: bool) -> list[int]:
    """The order the comparison grids run in, as indices into ``grids``: as declared, except beside the learning curves,
    which hold a task slot until they end: then the grids of fewest trials first, so that a one-trial grid runs beside
    them (it leaves a slot idle either way) and the larger grids find every slot free (on 2 CPUs the default sweep's
    stroke-redraw and digit-prototype trials had each run alone after the noise grid, one CPU idle for 5.7 minutes)."""
    indices = list(range(len(grids)))
    return sorted(indices, key=lambda i: len(grids[i].grid_points())) if beside_curves else indices
