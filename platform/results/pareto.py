"""Pareto fronts and hypervolume over finished trials (docs/metrics.md#pareto-front).

Pure computation on a ``pandas.DataFrame`` with one row per trial and one column per metric; no
plotting, no MLflow. Every axis is mapped internally to "lower is better" (values of a
higher-is-better axis are negated), so dominance and hypervolume are written once.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd

from core.pareto_axis import Axis

# Rows of the pairwise dominance test handled at once: bounds memory at about
# _CHUNK * n_rows * n_axes booleans, whatever the number of trials.
_CHUNK = 1024


def _costs(df: pd.DataFrame, axes: Sequence[Axis]) -> np.ndarray:
    """Return the (rows, axes) matrix of lower-is-better values; NaN stays NaN."""
    if not axes:
        raise ValueError("at least one axis is required")
    cols = [ax.to_min(df[ax.metric].to_numpy(dtype=float, na_value=np.nan)) for ax in axes]
    return np.stack(cols, axis=1)


def _nondominated(costs: np.ndarray) -> np.ndarray:
    """Boolean mask of rows of a lower-is-better matrix not dominated by any other row.

    Rows with NaN are never kept and never dominate (NaN comparisons are False, and they are
    excluded as dominators explicitly). Exact duplicates do not dominate each other.
    """
    valid = ~np.isnan(costs).any(axis=1)
    pool = costs[valid]
    keep = np.zeros(len(costs), dtype=bool)
    kept_valid = np.ones(len(pool), dtype=bool)
    for start in range(0, len(pool), _CHUNK):
        block = pool[start:start + _CHUNK]  # candidates to test, shape (b, d)
        # le[i, j]: pool[j] at least as good as block[i] on all axes; lt: strictly better on one.
        le = (pool[None, :, :] <= block[:, None, :]).all(axis=2)
        lt = (pool[None, :, :] < block[:, None, :]).any(axis=2)
        kept_valid[start:start + _CHUNK] = ~(le & lt).any(axis=1)
    keep[valid] = kept_valid
    return keep


def dominating(by: pd.DataFrame, of: pd.DataFrame, axes: Sequence[Axis]) -> np.ndarray:
    """(rows of ``by``, rows of ``of``) booleans: whether each row of ``by`` dominates each row of ``of`` (at least as
    good on every axis, strictly better on one). A row with NaN on any axis neither dominates nor is dominated."""
    if by.empty or of.empty:
        return np.zeros((len(by), len(of)), dtype=bool)
    mine, theirs = _costs(by, axes), _costs(of, axes)
    le = (mine[:, None, :] <= theirs[None, :, :]).all(axis=2)
    lt = (mine[:, None, :] < theirs[None, :, :]).any(axis=2)
    valid = ~np.isnan(mine).any(axis=1)[:, None] & ~np.isnan(theirs).any(axis=1)[None, :]
    return le & lt & valid


def pareto_mask(df: pd.DataFrame, axes: Sequence[Axis]) -> np.ndarray:
    """Mark rows not dominated by any other row, so a sweep can tag its front members.

    Dominance: at least as good on every axis and strictly better on one, each axis in its own
    direction. Rows with NaN on any axis are never on the front; duplicates of a non-dominated
    point are all kept. Returns a numpy bool array aligned with ``df``'s rows.
    """
    return _nondominated(_costs(df, axes))


def pareto_front(df: pd.DataFrame, axes: Sequence[Axis]) -> pd.DataFrame:
    """Return the non-dominated rows sorted by ascending value of the first axis, for CSV/plots."""
    front = df[pareto_mask(df, axes)]
    return front.sort_values(axes[0].metric, kind="stable")


def _hv_2d(points: np.ndarray, ref: np.ndarray) -> float:
    """Exact 2-D hypervolume (lower is better) of points strictly inside the reference box.

    Sweep in ascending first coordinate: each point that improves the best second coordinate so
    far adds the rectangle [x, ref_x] x [y, best_y_so_far].
    """
    order = np.lexsort((points[:, 1], points[:, 0]))
    area, best_y = 0.0, ref[1]
    for x, y in points[order]:
        if y < best_y:
            area += (ref[0] - x) * (best_y - y)
            best_y = y
    return float(area)


def _hv(points: np.ndarray, ref: np.ndarray) -> float:
    """Exact hypervolume (lower is better) by slicing the last axis down to the 2-D sweep.

    Between consecutive distinct values of the last coordinate, the dominated region's
    cross-section is the (d-1)-D hypervolume of the points at or below the slice (dominated points
    add nothing to a union, so they need no filtering); O(n^(d-1) log n). Needs >= 1 point.
    """
    if points.shape[1] == 1:
        return float(ref[0] - points[:, 0].min())
    if points.shape[1] == 2:
        return _hv_2d(points, ref)
    last = points[:, -1]
    levels = np.append(np.unique(last), ref[-1])
    volume = 0.0
    for level, nxt in pairwise(levels):
        volume += (nxt - level) * _hv(points[last <= level, :-1], ref[:-1])
    return float(volume)


def hypervolume(df: pd.DataFrame, axes: Sequence[Axis], normalised: bool = False) -> float:
    """Volume dominated by the rows and bounded by each axis' ``bound``: one number per front.

    Exact for any number of axes (2-D sweep; slicing above). Rows with NaN, and rows not
    strictly better than the bound on every axis, contribute nothing. With ``normalised=True``
    the result is divided by the volume of the box between ``bound`` and ``ideal`` on each axis,
    so 1.0 means a point at the ideal corner (points beyond the ideal can exceed 1.0).
    """
    costs = _costs(df, axes)
    ref = np.array([ax.to_min(ax.bound) for ax in axes], dtype=float)
    inside = ~np.isnan(costs).any(axis=1) & (costs < ref).all(axis=1)
    points = costs[inside]
    points = points[_nondominated(points)]
    volume = _hv(points, ref) if len(points) else 0.0
    if normalised:
        volume /= float(np.prod([abs(ax.bound - ax.ideal) for ax in axes]))
    return volume


@dataclass(frozen=True)
class Volumes:
    """One hypervolume per group of rows (e.g. per seed), raw and normalised, indexed alike."""

    raw: pd.Series
    normalised: pd.Series


def volumes_by(df: pd.DataFrame, axes: Sequence[Axis], by: str) -> Volumes:
    """Each ``by`` group's own front's hypervolume (its rows alone), indexed by the group's value in increasing order;
    one entry where ``df`` has no ``by`` column or no rows."""
    return Volumes(_volumes(df, axes, by, normalised=False), _volumes(df, axes, by, normalised=True))


def _volumes(df: pd.DataFrame, axes: Sequence[Axis], by: str, normalised: bool) -> pd.Series:
    """One of :func:`volumes_by`'s two series."""
    if by not in df or df.empty:
        return pd.Series([hypervolume(df, axes, normalised=normalised)], dtype=float)
    return pd.Series({key: hypervolume(group, axes, normalised=normalised)
                      for key, group in df.groupby(by, sort=True)}, dtype=float)
