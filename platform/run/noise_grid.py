"""The noise baseline's σ grid inside an image sweep (docs/metrics.md#the-noise-baseline-on-the-front).

A sweep of a preset with ``noise_baseline=True`` (amnist, amnist-privatizer) also runs the ``noise`` preset's σ grid
on the same data (data set, subset sizes, seeds, attacker budget) as a second Tune run after its own, attacked by the
same farm; its trials log into child runs of the same parent run, tagged as the baseline (``platform.results.noise_baseline``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from attacks.registry import REGISTRY
from platform.plan.spec import SweepSpec
from platform.results import tracking
from platform.results.noise_baseline import BASELINE
from platform.run import storage as tune_storage
from platform.run.farm import FarmPlan
from platform.run.progress import SweepProgress
from platform.run.trial_logger import MlflowTrialLogger
from platform.run.tuner import TUNER_STATE, build_tuner, restore_tuner


def tune_name(sweep: str) -> str:
    """The noise grid's Tune run beside the sweep's (a name no preset's ``--resume`` takes for its own)."""
    return f"baseline-noise-{sweep}"


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
