"""A baseline preset's grid planned beside a sweep's own (``Preset.comparison_grids``; amnist: the ``noise`` preset's σ grid, ...)
on the sweep's data, and the grid a resumed sweep logged (run by ``platform.run.comparison_grid``, compared by
``platform.results.comparison_grid``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import TypeAdapter

from core.files.structured import parse_json
from platform.plan.spec import SweepSpec, parse_value, validated
from platform.results.comparison_grid import ComparisonGrid
from platform.results.replicates import SEED
from search_spaces import grids

# a grid, or a list of sub-grids (search_spaces.grids), as the parent run logged it
GRIDS: TypeAdapter[dict[str, list[Any]] | list[dict[str, list[Any]]]] = TypeAdapter(
    dict[str, list[Any]] | list[dict[str, list[Any]]])


def comparison_grid_spec(spec: SweepSpec, baseline: ComparisonGrid) -> SweepSpec:
    """The baseline's grid for ``spec``: its preset's grid at the same profile (else its default) with every config
    value the two share (data set, sizes, seed or seed axis, threads, attacker budget) taken from ``spec``."""
    base = baseline.preset
    profile = spec.profile if spec.profile in base.profiles else base.default_profile
    chosen = base.profiles[profile]
    fields = set(base.mechanism.config_class.model_fields)
    shared = {k: v for k, v in spec.config.items() if k in fields and k not in chosen.grid}
    config = {**base.base, **chosen.config, **shared}
    base_grids = grids.sub_grids(chosen.grid)
    if SEED in spec.grid:
        config.pop(SEED, None)
        base_grids = grids.with_axis(base_grids, SEED, list(spec.grid[SEED]))
        base = replace(base, label_keys=(*base.label_keys, SEED))
    typed = validated(base, SweepSpec(base, profile, config, base_grids).product_points())
    axes = grids.axes(base_grids)
    return SweepSpec(base, profile, {k: v for k, v in typed[0].items() if k not in axes}, base_grids)


def comparison_grids(spec: SweepSpec, params: dict[str, str], grids: tuple[ComparisonGrid, ...]) -> tuple[SweepSpec, ...]:
    """Those of the preset's comparison ``grids`` the parent run says the sweep runs (``<baseline>_baseline`` params),
    on the grid it logged: a sweep recorded before its preset gained a baseline runs only those it recorded."""
    ran = [b for b in grids if params.get(b.param) == "True"]
    return tuple(comparison_grid_spec(logged_spec(spec, params), baseline) for baseline in ran)


def logged_value(text: str) -> Any:
    """A config value as the parent run logged it: a list as JSON (``tracking.flatten``), anything else as text."""
    return parse_json(text, list[Any], "a recorded config list") if text.startswith("[") else parse_value(text)


def logged_spec(spec: SweepSpec, params: dict[str, str]) -> SweepSpec:
    """The sweep as its parent run logged it (profile, ``config.*`` and ``grid.*`` params): what a resumed sweep ran
    with, whatever profile and ``--set`` values the resume command names."""
    config = {k.removeprefix("config."): logged_value(v) for k, v in params.items() if k.startswith("config.")}
    # one grid is logged axis by axis (grid.<axis>), a list of sub-grids as one JSON param (grid)
    grid = parse_json(params["grid"], GRIDS, "the sweep's recorded param 'grid'") if "grid" in params else {
        k.removeprefix("grid."): parse_json(v, list[Any], f"the sweep's recorded param {k!r}")
        for k, v in params.items() if k.startswith("grid.")}
    return replace(spec, profile=params.get("profile", spec.profile), config=config, grids=grids.sub_grids(grid))
