"""``--seeds N``: replicate every grid point of a sweep over N seeds (the config's seed, seed + 1, ...).

``--set seed=0,1,2`` is the same thing spelled as a grid axis. Either way ``seed`` becomes a grid axis and a label
key, so trial names show it. Optuna search samples each point once: a seed axis there is refused.
"""
from __future__ import annotations

from dataclasses import replace

from platform.errors import UsageError
from platform.plan.spec import SweepSpec
from platform.results.replicates import SEED


def with_seeds(spec: SweepSpec, seeds: int, search: str) -> SweepSpec:
    """The spec with ``seed`` as a grid axis of ``seeds`` values from the config's seed (unchanged for 1 seed and
    no seed list); a UsageError for ``seeds`` < 1, for both ``--seeds`` and a seed list, and for Optuna search."""
    if seeds < 1:
        raise UsageError(f"--seeds must be >= 1 (got {seeds})")
    if seeds > 1:
        if SEED in spec.grid:
            raise UsageError(f"give either --seeds {seeds} or a seed list (--set seed=...), not both")
        if SEED not in spec.config:
            raise UsageError(f"preset {spec.preset.name!r} has no seed to replicate over")
        base = int(spec.config[SEED])
        spec = spec.with_axis(SEED, [base + i for i in range(seeds)])
    if SEED not in spec.grid:
        return spec
    if search != "grid":
        raise UsageError("--seeds and seed lists replicate grid points; Optuna search runs each sampled point once "
                         "(use --search grid)")
    return replace(spec, preset=replace(spec.preset, label_keys=(*spec.preset.label_keys, SEED)))
