"""Sweep grids: one dict of axes, or a list of such dicts whose cross products are joined (as scikit-learn's
``ParameterGrid`` reads them), so that e.g. each α of the releaser gets its own λ values.

Every sub-grid names the same axes. An override of an axis replaces that axis in every sub-grid.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Grid = dict[str, list]
GridSpec = Grid | Sequence[Grid]  # what a profile writes: one grid, or a list of sub-grids


def sub_grids(grid: GridSpec) -> tuple[Grid, ...]:
    """The sub-grids of ``grid`` (one for a plain dict), identical ones once; a ValueError for an empty list, a
    sub-grid that is not a dict, an axis without values, or sub-grids naming different axes."""
    grids = [grid] if isinstance(grid, dict) else list(grid)
    if not grids:
        raise ValueError("a grid list needs at least one sub-grid")
    for sub in grids:
        if not isinstance(sub, dict):
            raise ValueError(f"a sub-grid must be a dict of axis -> values, got {sub!r}")
        for key, values in sub.items():
            if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
                raise ValueError(f"grid axis {key!r} needs a non-empty list of values, got {values!r}")
    names = [list(sub) for sub in grids]
    if any(sorted(n) != sorted(names[0]) for n in names):
        raise ValueError(f"every sub-grid must name the same axes; got {' vs '.join(map(str, dict.fromkeys(map(tuple, names))))}")
    unique = {repr(sorted(sub.items())): {k: list(v) for k, v in sub.items()} for sub in grids}
    return tuple(unique.values())


def axes(grids: Sequence[Grid]) -> Grid:
    """Each axis with every value it takes in any sub-grid (first-seen order, each once)."""
    out: dict[str, list] = {}
    for sub in grids:
        for key, values in sub.items():
            out[key] = list(dict.fromkeys([*out.get(key, []), *values]))
    return out


def expand(grids: Sequence[Grid]) -> list[dict[str, Any]]:
    """The union of the sub-grids' cross products (``ParameterGrid``'s order), each point once."""
    from sklearn.model_selection import ParameterGrid  # here: scikit-learn costs a second to import, presets need none

    unique = {repr(sorted(point.items())): point for point in ParameterGrid(list(grids))}
    return list(unique.values())


def with_axis(grids: Sequence[Grid], key: str, values: list) -> tuple[Grid, ...]:
    """The sub-grids with axis ``key`` set to ``values`` in every one of them (added where absent)."""
    return sub_grids([{**sub, key: list(values)} for sub in grids])


def per_value(outer: str, inner: str, lists: dict[Any, list], **shared: list) -> list[Grid]:
    """One sub-grid per value of axis ``outer``, each with its own list for axis ``inner`` and the ``shared`` axes,
    e.g. ``per_value("alpha", "lam", {1.0: [0, 1, 3], inf: [0, 0.3, 1]}, adv_steps=[1])``."""
    return [{outer: [value], inner: list(values), **shared} for value, values in lists.items()]
