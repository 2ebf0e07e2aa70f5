"""A baseline preset's grid run beside a sweep (docs/metrics.md#baselines-on-the-front).

A sweep of a preset with baselines (amnist and amnist-privatizer: the ``noise`` preset's σ grid, the
``stroke-redraw`` preset's pen radii and the ``digit-prototype`` preset's mixes) also runs each grid on the same data
(data set, subset sizes, seeds, attacker budget) as a Tune run of its own after the sweep's, attacked by the same
farm; its trials log into child runs of the same parent run, tagged with the baseline's name
(``platform.results.comparison_grid``) and their content key. Points whose results an earlier sweep stored under the
same key are copied instead and leave the grid (``platform.run.grid_reuse``).
"""
from __future__ import annotations

from typing import Any

from attacks.attackers.registry import REGISTRY
from platform.plan.content_key import GridKey
from platform.plan.spec import SweepSpec
from platform.results import tracking
from platform.run import storage as tune_storage
from platform.run.farm import FarmPlan
from platform.run.progress import SweepProgress
from platform.run.trial_logger import MlflowTrialLogger
from platform.run.tuner import TUNER_STATE, build_tuner, restore_tuner


def tune_name(sweep: str, baseline: str) -> str:
    """The comparison grid's Tune run beside the sweep's (a name no preset's ``--resume`` takes for its own)."""
    return f"baseline-{baseline}-{sweep}"


def grid_started(storage: str, sweep: str, baseline: str) -> bool:
    """Whether the comparison grid's Tune run beside ``sweep`` has started (a resumed sweep restores it)."""
    return tune_storage.exists(tune_storage.join(storage, tune_name(sweep, baseline), TUNER_STATE))


def comparison_grid_farm(grid: SweepSpec, farm: FarmPlan | None) -> FarmPlan | None:
    """The sweep's farm on the baseline's checkpoints (its mechanism's loader), less the membership attackers unless
    the baseline's own farm runs them (noise trains no network) and the attackers its trials fit themselves; None when
    nothing is left to attack."""
    load = grid.preset.checkpoint_inputs
    if farm is None or load is None:
        return None
    own = grid.preset.farm.attackers
    named = tuple(a for a in farm.requested or farm.attackers if not REGISTRY[a].per_target or a in own)
    grid_farm = FarmPlan.of(grid.preset.mechanism, load, named, farm.privacy_attackers, farm.resources)
    return grid_farm if grid_farm.attackers else None


def run_baseline(grid: SweepSpec, *, key: GridKey, tracking_uri: str, exp_id: str, parent_id: str, storage: str,
                 sweep: str, farm: FarmPlan | None, resources: dict[str, float], max_concurrent: int | None,
                 max_failures: int, verbose: bool) -> Any | None:
    """Fit the comparison grid's Tune run (restored when a resumed sweep already started it); returns Tune's results,
    None when ``grid`` has no point left to run (``platform.run.grid_reuse`` reused them all).

    Its trials log into child runs of ``parent_id`` tagged as the baseline and with their content ``key``; ``farm``
    (the sweep's attackers and privacy attackers, less the membership attackers its own farm leaves out) attacks
    their checkpoints with its mechanism's loader."""
    if not grid.grid_points():
        return None
    name = tune_name(sweep, grid.preset.name)
    location = tune_storage.join(storage, name)
    if grid_started(storage, sweep, grid.preset.name):
        tuner = restore_tuner(grid, resources, location)
    else:
        logger = MlflowTrialLogger(tracking_uri, exp_id, parent_id, grid.preset.label_keys,
                                   grid.preset.presentation.checkpoint_figures, storage=storage,
                                   mechanism=grid.preset.mechanism_name,
                                   shown=tuple(m for m, _ in grid.preset.front.objectives), total_epochs=1,
                                   farm=comparison_grid_farm(grid, farm),
                                   verbose=verbose, tags={tracking.TAG_ROLE: "baseline", tracking.TAG_BASELINE: grid.preset.name},
                                   content_key=key)
        points = len(grid.grid_points())
        tuner = build_tuner(grid, search="grid", samples=None, resources=resources, storage=storage,
                            name=name, callbacks=[logger], max_concurrent=max_concurrent, max_failures=max_failures,
                            progress=SweepProgress(points))
    return tuner.fit()
