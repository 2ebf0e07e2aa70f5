"""Trials reused from the store: a second sweep on the same data and farm does not run them again.

Every comparison-grid trial's run, and every trial of a sweep's own grid search whose mechanism is putlab's own code,
carries its content key (``putlab.content_key``, ``platform.plan.content_key``). Before a grid is scheduled, each
point's key is looked up among the FINISHED runs of the same role (``trial`` or ``baseline``) that report every axis
of the front, in the sweep's experiment first, then in every other of the store (another preset's sweep may have run
the same comparison trial); a match is copied into a new child run of this sweep (params, metric histories and tags,
less the source's run and parent identity), tagged ``putlab.reused_from`` (the run that computed it),
``putlab.reused_sweep`` and ``putlab.reused_artifacts`` (its figures are referenced there, not copied; the checkpoint
tag still names its checkpoint), and the point leaves the grid's Tune run. ``--no-reuse`` turns the look-up off.

A resumed sweep keeps what it copied: its copies are never looked up or copied twice, and a grid whose Tune run had
started keeps that run's points (Tune restores them) and copies nothing more.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import torch

from core.image_quality import with_psnr_of_mse
from platform.plan.content_key import GridKey, hashed
from platform.plan.spec import SweepSpec
from platform.plan.sweep_plan import SweepPlan
from platform.results import tracking
from platform.results.store import Run, Store
from platform.run import storage as tune_storage
from platform.run.comparison_grid import grid_started
from platform.run.trial_logger import trial_label

# whether a grid's points were looked up in the store: not with --no-reuse, nor once its Tune run has started
Lookup = Literal["looked up", "--no-reuse", "its Tune run continues"]
Role = Literal["trial", "baseline"]  # a sweep's own grid, or one of its comparison grids
# the source's identity, which its copy replaces with its own (the Tune trial id names the source's trial)
IDENTITY_TAGS = frozenset({"mlflow.parentRunId", "mlflow.runName", tracking.TAG_PARENT, tracking.TAG_TRIAL})


@dataclass(frozen=True)
class GridReuse:
    """A grid after the look-up: its key, the points left to run (``left``: the grid itself when nothing was reused,
    no sub-grid at all when everything was), the trials this sweep holds copies of, the sweeps they came from and
    whose grid it is (``role``: the sweep's own, or a comparison grid)."""

    grid: SweepSpec
    key: GridKey
    left: SweepSpec
    reused: int
    sweeps: tuple[str, ...]
    lookup: Lookup
    role: Role = "baseline"

    @property
    def trials(self) -> int:
        """The trials left to run."""
        return len(self.left.grid_points())

    def line(self) -> str:
        """'noise comparison grid: 2 of 2 trials reused from sweep amnist-smoke-...; 0 to run (--no-reuse runs them
        again)'; 'amnist's own grid: ...' for a sweep's own."""
        total = self.reused + self.trials
        whose = "own grid" if self.role == "trial" else "comparison grid"
        source = f" from sweep {', '.join(self.sweeps)}" if self.sweeps else ""
        why = ("--no-reuse runs them again" if self.reused else "none stored with the same data, seed, farm and code") \
            if self.lookup == "looked up" else self.lookup
        return (f"{self.grid.preset.name} {whose}: {self.reused} of {total} trial{'s' if total > 1 else ''} "
                f"reused{source}; {self.trials} to run ({why})")


def grid_key(grid: SweepSpec, attackers: tuple[str, ...], privacy_attackers: tuple[str, ...],
             resources: dict[str, float]) -> GridKey:
    """The grid's key, on the sweep's farm (``attackers`` as named, its preset's ``privacy_attackers``) and device."""
    kernels = torch.backends.cpu.get_cpu_capability()  # another CPU's kernels sum in another order: other numbers
    device = "gpu" if resources.get("gpu") else f"cpu ({kernels})"
    return GridKey(grid.preset.name, attackers, privacy_attackers, device)


def own_key(plan: SweepPlan, resources: dict[str, float]) -> GridKey | None:
    """The key of the sweep's own trials, None where they cannot have one: an Optuna search (its points are suggested
    as it goes) or a mechanism whose code lies outside what the key hashes (a preset file's, a plug-in's), whose edits
    no key would see."""
    preset = plan.spec.preset
    if plan.search != "grid" or plan.preset_file is not None or not hashed(preset.mechanism):
        return None
    return grid_key(plan.spec, plan.attackers, preset.farm.privacy, resources)


def reuse_own(store: Store, exp_id: str, parent_id: str, spec: SweepSpec, plan: SweepPlan,
              resources: dict[str, float]) -> GridReuse | None:
    """The sweep's own grid (``spec``, with its trials' threads) after :func:`reuse_grid`, looked up unless
    ``--no-reuse`` or a resume (whose Tune run keeps its points); one line. None where its trials have no key
    (:func:`own_key`)."""
    key = own_key(plan, resources)
    if key is None:
        return None
    lookup: Lookup = "its Tune run continues" if plan.resumed else "looked up" if plan.reuse else "--no-reuse"
    needed = tuple(axis.metric for axis in spec.preset.front.axes)
    found = reuse_grid(store, exp_id, parent_id, spec, key, needed, lookup, role="trial")
    print(found.line(), flush=True)
    return found


def reuse_grids(store: Store, exp_id: str, parent_id: str, grids: Sequence[SweepSpec], plan: SweepPlan,
                resources: dict[str, float]) -> tuple[GridReuse, ...]:
    """Each comparison grid of the sweep (``parent_id``) after :func:`reuse_grid`, looked up unless ``--no-reuse`` or
    its Tune run had started (a resumed sweep); one line each on the terminal."""
    preset = plan.spec.preset
    keys = [grid_key(grid, plan.attackers, preset.farm.privacy, resources) for grid in grids]
    needed = tuple(axis.metric for axis in preset.front.axes)
    found = tuple(reuse_grid(store, exp_id, parent_id, grid, key, needed, lookup(plan, grid))
                  for grid, key in zip(grids, keys, strict=True))
    for grid in found:
        print(grid.line(), flush=True)
    return found


def lookup(plan: SweepPlan, grid: SweepSpec) -> Lookup:
    """Whether ``grid``'s points are looked up in the store, or why not."""
    if grid_started(plan.storage, plan.name, grid.preset.name):
        return "its Tune run continues"
    return "looked up" if plan.reuse else "--no-reuse"


def trial_configs(grid: SweepSpec) -> list[dict[str, Any]]:
    """The config Tune hands each trial of ``grid`` (``platform.run.tuner.build_tuner``'s grid search)."""
    return [{**grid.config, **{k: point[k] for k in grid.grid}} for point in grid.grid_points()]


def reuse_grid(store: Store, exp_id: str, parent_id: str, grid: SweepSpec, key: GridKey,
               needed: tuple[str, ...], lookup: Lookup = "looked up", role: Role = "baseline") -> GridReuse:
    """Copy into the sweep (``parent_id``) the stored results of ``grid``'s points that report every ``needed``
    metric (where ``lookup`` says they are looked up), among the runs of ``role``, and leave the rest to run; copies
    it made before (an interrupted attempt) count as reused."""
    configs = trial_configs(grid)
    keys = [key.of(config) for config in configs]
    held = copies_held(store, exp_id, parent_id, grid.preset.name, role)
    names = {k: trial_label(config, grid.preset.label_keys) for config, k in zip(configs, keys, strict=True)}
    searched = searched_experiments(store, exp_id) if lookup == "looked up" else ()
    found = {k: run for k in keys if k not in held and searched
             and (run := stored_result(store, searched, parent_id, k, needed, role)) is not None}
    done = held | {k: copy_run(store, exp_id, parent_id, run, names[k]) for k, run in found.items()}
    left = [config for config, k in zip(configs, keys, strict=True) if k not in done]
    return GridReuse(grid, key, left_to_run(grid, left, len(configs)), len(keys) - len(left),
                     tuple(sorted({done[k] for k in keys if k in done})), lookup, role)


def copies_held(store: Store, exp_id: str, parent_id: str, baseline: str, role: Role = "baseline") -> dict[str, str]:
    """The sweep's finished copies of ``baseline``'s trials (of its own trials, for ``role`` trial): content key -> the
    sweep it came from. A copy left unfinished by an interruption is deleted (it is made again)."""
    runs = store.child_runs(exp_id, parent_id) if role == "trial" else \
        store.baseline_runs(exp_id, parent_id, baseline)
    copies = [r for r in runs if tracking.TAG_REUSED_FROM in r.data.tags]
    for run in copies:
        if run.info.status != "FINISHED":
            store.delete_run(run.info.run_id)
    return {r.data.tags[tracking.TAG_CONTENT_KEY]: r.data.tags[tracking.TAG_REUSED_SWEEP]
            for r in copies if r.info.status == "FINISHED"}


def searched_experiments(store: Store, exp_id: str) -> tuple[list[str], ...]:
    """Where a stored result is looked for, in order: the sweep's experiment, then every other one of the store."""
    others = [e.experiment_id for e in store.experiments() if e.experiment_id != exp_id]
    return ([exp_id], others) if others else ([exp_id],)


def stored_result(store: Store, searched: tuple[list[str], ...], parent_id: str, key: str,
                  needed: tuple[str, ...], role: Role = "baseline") -> Run | None:
    """The newest FINISHED run of ``role`` of another sweep, in the first of the ``searched`` experiment groups that
    holds one (:func:`searched_experiments`), with content ``key``, every ``needed`` metric and no failed checkpoint
    attack, and (a sweep's own trial: its point may be served, its learning curve drawn) its checkpoint still stored;
    None when the store holds none."""
    wanted = (f"tags.`{tracking.TAG_CONTENT_KEY}` = '{key}' and tags.`{tracking.TAG_ROLE}` = '{role}' "
              "and attributes.status = 'FINISHED'")
    runs = [run for ids in searched for run in store.runs(ids, where=wanted,
                                                                 order_by=["attributes.start_time DESC"], max_results=100)]
    return next((run for run in runs if run.data.tags.get(tracking.TAG_PARENT) != parent_id
                 and all(m in with_psnr_of_mse(run.data.metrics) for m in needed)
                 and tracking.TAG_FARM_ERROR not in run.data.tags
                 and (role == "baseline" or checkpoint_stored(run))), None)


def checkpoint_stored(run: Run) -> bool:
    """Whether the run's last checkpoint (its tag) is still in the storage."""
    location = run.data.tags.get(tracking.TAG_CHECKPOINT)
    return location is not None and tune_storage.exists(location, directory=True)


def copy_run(store: Store, exp_id: str, parent_id: str, source: Run, name: str) -> str:
    """A FINISHED copy of ``source`` as a child run of ``parent_id`` named as this sweep names the trial (``name``: with
    its seed where the sweep has several), its params, metric histories and tags, tagged with the run and sweep that
    computed it; returns that sweep's name."""
    tags = source.data.tags
    origin = tags.get(tracking.TAG_REUSED_FROM, source.info.run_id)  # a copy of a copy names the run that computed it
    sweep = tags.get(tracking.TAG_REUSED_SWEEP) or store.run(tags[tracking.TAG_PARENT]).info.run_name or ""
    copied = {k: v for k, v in tags.items() if k not in IDENTITY_TAGS} | {
        "mlflow.parentRunId": parent_id, tracking.TAG_PARENT: parent_id, tracking.TAG_REUSED_FROM: origin,
        tracking.TAG_REUSED_SWEEP: sweep,
        tracking.TAG_REUSED_ARTIFACTS: tags.get(tracking.TAG_REUSED_ARTIFACTS, source.info.artifact_uri)}
    run_id = store.new_run(exp_id, name, copied)
    store.log_params(run_id, source.data.params)
    store.log_history(run_id, [m for key in source.data.metrics for m in store.history(source.info.run_id, key)])
    store.end(run_id, "FINISHED")
    return sweep


def left_to_run(grid: SweepSpec, left: list[dict[str, Any]], total: int) -> SweepSpec:
    """``grid`` restricted to the trial configs ``left`` (one sub-grid per point; none when nothing is left)."""
    if len(left) == total:
        return grid
    return replace(grid, grids=tuple({k: [config[k]] for k in grid.grid} for config in left))
