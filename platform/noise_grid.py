"""The noise baseline's σ grid inside an image sweep (docs/metrics.md#the-noise-baseline-on-the-front).

A sweep of a preset with ``noise_baseline=True`` (amnist, amnist-privatizer) also runs the ``noise`` preset's σ grid
on the same data (data set, subset sizes, seeds, attacker budget) as a second Tune run after its own, attacked by the
same farm; its trials log into child runs of the same parent run, tagged as the baseline (``platform.noise_baseline``).
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from attacks.registry import REGISTRY
from platform import storage as tune_storage
from platform import tracking
from platform.farm_scheduler import FarmPlan
from platform.noise_baseline import BASELINE
from platform.progress import SweepProgress
from platform.replicates import SEED
from platform.sweep_config import SweepSpec, parse_value, validated
from platform.trial_logger import MlflowTrialLogger
from platform.tuning import TUNER_STATE, build_tuner, restore_tuner
from search_spaces import grids
from search_spaces.noise import PRESET as NOISE

PARAM = "noise_baseline"  # the parent run's param: whether the sweep runs the baseline


def tune_name(sweep: str) -> str:
    """The noise grid's Tune run beside the sweep's (a name no preset's ``--resume`` takes for its own)."""
    return f"baseline-noise-{sweep}"


def baseline_spec(spec: SweepSpec) -> SweepSpec:
    """The noise grid for ``spec``: the ``noise`` preset's σ grid of the same profile (else its default) with every
    config value the two share (data set, sizes, seed or seed axis, threads, attacker budget) taken from ``spec``."""
    profile = spec.profile if spec.profile in NOISE.profiles else NOISE.default_profile
    chosen = NOISE.profiles[profile]
    fields = set(NOISE.mechanism.config_class.model_fields)
    shared = {k: v for k, v in spec.config.items() if k in fields and k not in chosen.grid}
    config = {**NOISE.base, **chosen.config, **shared}
    noise_grids = grids.sub_grids(chosen.grid)
    preset = NOISE
    if SEED in spec.grid:
        config.pop(SEED, None)
        noise_grids = grids.with_axis(noise_grids, SEED, list(spec.grid[SEED]))
        preset = replace(NOISE, label_keys=(*NOISE.label_keys, SEED))
    typed = validated(preset, SweepSpec(preset, profile, config, noise_grids).product_points())
    axes = grids.axes(noise_grids)
    return SweepSpec(preset, profile, {k: v for k, v in typed[0].items() if k not in axes}, noise_grids)


def logged_value(text: str) -> Any:
    """A config value as the parent run logged it: a list as JSON (``tracking.flatten``), anything else as text."""
    return json.loads(text) if text.startswith("[") else parse_value(text)


def logged_spec(spec: SweepSpec, params: dict[str, str]) -> SweepSpec:
    """The sweep as its parent run logged it (profile, ``config.*`` and ``grid.*`` params): what a resumed sweep ran
    with, whatever profile and ``--set`` values the resume command names."""
    config = {k.removeprefix("config."): logged_value(v) for k, v in params.items() if k.startswith("config.")}
    # one grid is logged axis by axis (grid.<axis>), a list of sub-grids as one JSON param (grid)
    grid = json.loads(params["grid"]) if "grid" in params else {
        k.removeprefix("grid."): json.loads(v) for k, v in params.items() if k.startswith("grid.")}
    return replace(spec, profile=params.get("profile", spec.profile), config=config, grids=grids.sub_grids(grid))


def run_baseline(noise: SweepSpec, *, tracking_uri: str, exp_id: str, parent_id: str, storage: str, sweep: str,
                 farm: FarmPlan | None, resources: dict[str, float], max_concurrent: int | None, max_failures: int,
                 verbose: bool) -> Any:
    """Fit the noise grid's Tune run (restored when a resumed sweep already started it); returns Tune's results.

    Its trials log into child runs of ``parent_id`` tagged as the baseline; ``farm`` (the sweep's attackers and
    privacy attackers, less the membership attackers) attacks their checkpoints with the noise mechanism's loader."""
    name = tune_name(sweep)
    if tune_storage.exists(tune_storage.join(storage, name, TUNER_STATE)):
        tuner = restore_tuner(noise, resources, storage, name)
    else:
        load = noise.preset.checkpoint_inputs
        # the same farm, less the membership attackers: noise trains no network for them to test
        attackers = tuple(a for a in farm.attackers if not REGISTRY[a].per_target) if farm is not None else ()
        plan = None if farm is None or load is None or not attackers else replace(farm, load=load, attackers=attackers)
        logger = MlflowTrialLogger(tracking_uri, exp_id, parent_id, noise.preset.label_keys,
                                   noise.preset.checkpoint_figures, storage=storage, mechanism=noise.preset.mechanism_name,
                                   shown=tuple(m for m, _ in noise.preset.optuna_objectives), total_epochs=1, farm=plan,
                                   verbose=verbose, tags={tracking.TAG_ROLE: "baseline", tracking.TAG_BASELINE: BASELINE})
        points = len(noise.grid_points())
        tuner = build_tuner(noise, search="grid", samples=None, resources=resources, storage=storage,
                            name=name, callbacks=[logger], max_concurrent=max_concurrent, max_failures=max_failures,
                            progress=SweepProgress(points))
    return tuner.fit()
