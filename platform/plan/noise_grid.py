"""The noise baseline's σ grid planned beside an image sweep's own: the ``noise`` preset's grid on the sweep's data,
and the grid a resumed sweep logged (run by ``platform.run.noise_grid``, compared by ``platform.results.noise_baseline``).
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from platform.plan.spec import SweepSpec, parse_value, validated
from platform.results.replicates import SEED
from search_spaces import grids
from search_spaces.noise import PRESET as NOISE

PARAM = "noise_baseline"  # the parent run's param: whether the sweep runs the baseline


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
