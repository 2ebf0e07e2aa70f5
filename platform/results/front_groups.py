"""Fronts per value of one grid axis (a preset's ``front_by``): e.g. one privacy-utility front per α, as the α-MI
releaser paper draws its curves, beside the sweep's joint front.

A point belongs to the group of value v when the grid runs it for the axis set to v: its own value, or a point the
preset's ``canonical`` maps there (the λ = 0 anchor stands for every α, so it starts every α's front). Pure
computation on the trials and point tables of ``platform.results.summary``; no MLflow, no plotting.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.pareto_axis import Axis
from platform.results.pareto import pareto_mask, volumes_by
from platform.results.replicates import SEED, point_keys
from search_spaces import Preset


@dataclass(frozen=True)
class GroupFront:
    """One value of the grouping axis: its points (``pareto_front`` recomputed among them) and the hypervolume of
    their front (raw and normalised; the mean over seeds)."""

    axis: str
    value: float
    points: pd.DataFrame
    hypervolume: float
    hypervolume_normalised: float

    @property
    def suffix(self) -> str:
        """The group in a metric name, e.g. ``alpha_1``, ``alpha_0.5``, ``alpha_inf`` (MLflow refuses "=")."""
        return f"{self.axis}_{self.value:g}"


def members(table: pd.DataFrame, axis: str, value: float, keys: Sequence[str],
            canonical: Callable[[dict], dict] | None) -> np.ndarray:
    """For each row of ``table`` (trials or points), whether it belongs to the group ``axis`` = ``value``."""
    out = []
    for row in table[list(keys)].to_dict("records"):
        wanted = {**row, axis: value}
        out.append((canonical(wanted) if canonical else wanted) == row)
    return np.array(out, dtype=bool)


def fronts_by(trials: pd.DataFrame, points: pd.DataFrame, axes: Sequence[Axis], axis: str,
              label_keys: Sequence[str], canonical: Callable[[dict], dict] | None = None) -> list[GroupFront]:
    """The front of each value of ``axis`` among the finished ``trials`` and their per-point ``points``
    (``replicates.point_table``), in increasing order of the value. A value whose points all belong to every group
    (e.g. α = 1 when it has nothing but the shared λ = 0 anchor) is no group of its own."""
    keys = point_keys(points, label_keys)
    if axis not in keys or points.empty:
        return []
    values = sorted(float(v) for v in points[axis].dropna().unique())
    masks = {v: members(points, axis, v, keys, canonical) for v in values}
    shared = np.logical_and.reduce(list(masks.values()))
    groups = []
    for value in values:
        if not (masks[value] & ~shared).any():
            continue
        own, rows = points[masks[value]].copy(), trials[members(trials, axis, value, keys, canonical)]
        own["pareto_front"] = pareto_mask(own, axes)
        volumes = volumes_by(rows, axes, SEED)
        groups.append(GroupFront(axis, value, own.reset_index(drop=True), float(volumes.raw.mean()),
                                 float(volumes.normalised.mean())))
    return groups


def fronts_of(preset: Preset, usable: pd.DataFrame, points: pd.DataFrame, axes: Sequence[Axis]) -> list[GroupFront]:
    """:func:`fronts_by` of the preset's ``front_by`` axis among a sweep's ``usable`` trials and their ``points``; none
    where the preset has no such axis."""
    if preset.front.by is None or points.empty:
        return []
    return fronts_by(usable, points, axes, preset.front.by, preset.label_keys, preset.canonical)


def group_metrics(groups: Sequence[GroupFront]) -> dict[str, float]:
    """What the parent run logs per group: ``front/hypervolume/<axis>_<value>`` and its normalised twin
    ``front/hypervolume_normalised/<axis>_<value>``, and ``front/size/<axis>_<value>`` (points on the group's front)."""
    out: dict[str, float] = {}
    for g in groups:
        out[f"front/hypervolume/{g.suffix}"] = g.hypervolume
        out[f"front/hypervolume_normalised/{g.suffix}"] = g.hypervolume_normalised
        out[f"front/size/{g.suffix}"] = float(g.points["pareto_front"].sum())
    return out


def value_text(value: float) -> str:
    """A group value for people: ``∞`` for infinity, else the shortest form (``0.5``, ``1``)."""
    return "∞" if math.isinf(value) and value > 0 else f"{value:g}"
