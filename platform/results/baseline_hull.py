"""What per-record mixes of the comparison releases reach, and where each front point stands against it
(docs/metrics.md#the-baselines-hull).

A release that gives each record, independently of its secret, comparison release i with probability p_i scores the
p-weighted mean of its parts' accuracies (a data user or an attacker who tells the parts apart, as anyone can tell a
noisy digit from a class's mean image, scores each part as its own) and has the p-weighted mean of their mean squared
errors. So the convex hull of the comparison points, on the scales mixes average (an accuracy as it is, a PSNR axis as
its MSE), is reached by releases that learn nothing. A front point is *inside* the hull by d ≥ 0 when some mix is at
least d better on the two accuracy axes (utility up, attacker down) and no more distorted, and *beyond* it by −d when
the best mix falls d short; one linear programme per point (scipy's ``linprog``). Pure computation on the summary's
tables, no MLflow.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import linprog

from core.image_quality import mse_of_psnr
from core.metric_names import PSNR_OF_MSE, SATURATION
from core.numbers import readable
from core.pareto_axis import Axis
from platform.results.replicates import SEED

MARGIN = "hull/margin"  # front.csv: d of the point against the hull (> 0 inside, < 0 beyond, -inf: no mix is as sharp)
MIX = "hull/mix"  # front.csv: the mix that reaches the margin, e.g. "64 % digit-prototype mix=0 + 36 % noise sigma=0"
AT_SATURATION = "hull/margin_at_saturation"  # front.csv: the margin with the point's attacker at its saturation estimate
BEYOND_SEEDS = "hull/beyond_seeds"  # front.csv: at how many of its seeds the point lies beyond the hull, e.g. "2 of 3"
TAG_HULL = "putlab.hull"  # a front trial's verdict, e.g. "beyond the baselines' hull by 0.017"


@dataclass(frozen=True)
class Corners:
    """The comparison points a mix draws from: their names and their values on the front's axes, [k, axes]."""

    names: tuple[str, ...]
    values: np.ndarray


@dataclass(frozen=True)
class Standing:
    """One point against the hull: its margin d and the mix that reaches it (weights by corner)."""

    margin: float
    weights: tuple[tuple[str, float], ...]

    @property
    def mix(self) -> str:
        """The mix in words, largest part first, e.g. ``64 % digit-prototype mix=0 + 36 % noise sigma=0``."""
        return " + ".join(f"{readable(100 * p)} % {name}" for name, p in self.weights)

    @property
    def verdict(self) -> str:
        """:func:`verdict` of its margin."""
        return verdict(self.margin)


def verdict(margin: float) -> str:
    """A margin in words: ``beyond the baselines' hull by 0.017``, ``inside the baselines' hull by 0.07``, or why no
    mix compares (NaN: not compared; −inf: no mix is as sharp)."""
    if np.isnan(margin):
        return "less useful than every baseline point: not compared (the hull holds no release that keeps less)"
    if margin == -np.inf:
        return "beyond the baselines' hull: no mix of them is as little distorted"
    return (f"inside the baselines' hull by {readable(margin)}" if margin >= 0 else
            f"beyond the baselines' hull by {readable(-margin)}")


def unmixable(axes: Sequence[Axis]) -> list[str]:
    """The axes whose values a per-record mix does not average (the hull needs none): neither an accuracy nor a PSNR."""
    return [a.metric for a in axes if a.metric != PSNR_OF_MSE and not a.metric.endswith("accuracy")]


def goodness(values: np.ndarray, axes: Sequence[Axis]) -> np.ndarray:
    """Rows of values [n, axes] on the scales mixes average, each signed so that higher is better: an accuracy as it
    is (an attacker's negated), a PSNR axis as its negated MSE."""
    out = np.asarray(values, dtype=float).copy()
    for j, axis in enumerate(axes):
        if axis.metric == PSNR_OF_MSE:
            out[:, j] = -mse_of_psnr(out[:, j])
        elif not axis.higher_is_better:
            out[:, j] = -out[:, j]
    return out


def standing(point: np.ndarray, corners: Corners, axes: Sequence[Axis]) -> Standing:
    """The largest d such that a mix of ``corners`` is at least d better than ``point`` on the first two axes and at
    least as good on every further one; -inf where no mix is as good on the further ones."""
    g_point, g_corners = goodness(point[None, :], axes)[0], goodness(corners.values, axes)
    k = len(corners.names)
    margin_rows = [np.append(-g_corners[:, j], 1.0) for j in range(2)]  # −Σ p g + t ≤ −g_point
    bound_rows = [np.append(-g_corners[:, j], 0.0) for j in range(2, len(axes))]  # −Σ p g ≤ −g_point
    solved = linprog(c=np.append(np.zeros(k), -1.0), A_ub=np.array(margin_rows + bound_rows), b_ub=-g_point,
                     A_eq=np.append(np.ones(k), 0.0)[None, :], b_eq=[1.0], bounds=[(0, None)] * k + [(None, None)],
                     method="highs")
    if solved.status == 2:  # infeasible: every mix is more distorted than the point
        return Standing(-np.inf, ())
    if not solved.success:
        raise RuntimeError(f"the hull's linear programme failed: {solved.message}")
    weights = sorted(((n, float(p)) for n, p in zip(corners.names, solved.x[:k], strict=True) if p > 1e-9),
                     key=lambda item: -item[1])
    return Standing(float(solved.x[-1]), tuple(weights))


def privacy_gap(point: np.ndarray, corners: Corners, axes: Sequence[Axis]) -> float:
    """How much less the point's privacy value is than the best mix's among the mixes at least as useful and no more
    distorted (> 0: the point is more private than every such mix; NaN: no mix is as useful and as sharp). The margin
    asks a mix to be better on utility and privacy at once, so near the top of the utility range, where no mix is much
    more useful, it stays near 0 whatever the privacy; this reads privacy alone."""
    g_point, g_corners = goodness(point[None, :], axes)[0], goodness(corners.values, axes)
    others = [0, *range(2, len(axes))]  # utility and distortion: the mix at least as good on each
    solved = linprog(c=-g_corners[:, 1], A_ub=np.array([-g_corners[:, j] for j in others]),
                     b_ub=-g_point[others], A_eq=np.ones((1, len(corners.names))), b_eq=[1.0],
                     bounds=[(0, None)] * len(corners.names), method="highs")
    return float(g_point[1] - g_corners[:, 1] @ solved.x) if solved.status == 0 else np.nan


def corners_of(curves_points: Sequence[tuple[str, pd.DataFrame]], axes: Sequence[Axis]) -> Corners:
    """Every comparison point with a value on each axis, named ``<baseline> <its name>``."""
    names, rows = [], []
    for baseline, points in curves_points:
        usable = points.dropna(subset=[a.metric for a in axes]) if all(a.metric in points for a in axes) else points[:0]
        for _, row in usable.iterrows():
            names.append(f"{baseline} {row.get('name', '')}".strip())
            rows.append([float(row[a.metric]) for a in axes])
    return Corners(tuple(names), np.array(rows, dtype=float).reshape(len(rows), len(axes)))


def below_every_corner(point: np.ndarray, corners: Corners, axes: Sequence[Axis]) -> bool:
    """Whether ``point`` is less useful than every corner: a release collapsed towards chance, which only a release
    keeping nothing (not among the baselines) would be compared with."""
    return bool(goodness(point[None, :], axes)[0, 0] < goodness(corners.values, axes)[:, 0].min())


CONSTANT = "baseline/constant"  # the parent's metrics of the release that keeps nothing (the raw-data reference points)


def constant_corner(parent_metrics: Mapping[str, float], axes: Sequence[Axis]) -> Corners:
    """The release that keeps nothing (every record as the training images' mean image: chance on both accuracy axes),
    as the sweep's raw-data reference points logged it; no corner where they did not (an older sweep) or an axis has
    no value for it."""
    names = ["utility", "attack", *(a.metric.rsplit("/", 1)[-1] for a in axes[2:])]
    values = [parent_metrics.get(f"{CONSTANT}/{name}") for name in names]
    if any(v is None for v in values):
        return Corners((), np.zeros((0, len(axes))))
    return Corners(("a constant release (the mean image)",), np.array([values], dtype=float))


def joined(*parts: Corners) -> Corners:
    """The corners of every part, in order."""
    kept = [p for p in parts if p.names]
    if not kept:
        return Corners((), np.zeros((0, 0)))
    return Corners(tuple(n for p in kept for n in p.names), np.concatenate([p.values for p in kept]))


def hull_columns(front: pd.DataFrame, corners: Corners, axes: Sequence[Axis]) -> dict[str, list]:
    """``hull/margin`` and ``hull/mix`` of each front point and, where its saturation is logged, the margin with its
    attacker there (``hull/margin_at_saturation``; NaN elsewhere)."""
    margins, mixes, saturated = [], [], []
    for _, row in front.iterrows():
        point = np.array([float(row[a.metric]) for a in axes])
        found = None if below_every_corner(point, corners, axes) else standing(point, corners, axes)
        margins.append(np.nan if found is None else found.margin)
        mixes.append("" if found is None else found.mix)
        estimate = row.get(SATURATION, np.nan)
        at = point.copy()
        at[1] = estimate
        saturated.append(standing(at, corners, axes).margin if found is not None and np.isfinite(estimate) else np.nan)
    return {MARGIN: margins, MIX: mixes, AT_SATURATION: saturated}


def beyond_by_seed(front: pd.DataFrame, trials: pd.DataFrame, baseline_trials: Sequence[tuple[str, pd.DataFrame]],
                   axes: Sequence[Axis], constant: Corners) -> list[str]:
    """For each front point with trials at more than one seed, ``k of n``: at how many of its seeds it lies beyond
    the hull of that seed's comparison trials (a baseline without that seed: all its trials) and the ``constant``
    corner; "" for one seed."""
    out = []
    for _, row in front.iterrows():
        mine = trials[trials["run_id"].isin(str(row.get("run_ids", "")).split())] if "run_id" in trials else trials[:0]
        if SEED not in mine or mine[SEED].nunique() < 2:
            out.append("")
            continue
        beyond, compared = 0, 0
        for seed, group in mine.groupby(SEED):
            corners = joined(corners_of([(name, at_seed(table, seed)) for name, table in baseline_trials], axes), constant)
            point = group[[a.metric for a in axes]].astype(float).mean().to_numpy()
            if corners.names and not below_every_corner(point, corners, axes):
                compared += 1
                beyond += standing(point, corners, axes).margin < 0
        out.append(f"{beyond} of {compared}" if compared else "")
    return out


def at_seed(table: pd.DataFrame, seed: float) -> pd.DataFrame:
    """A baseline's finished trials at ``seed`` (all of them where it has none there)."""
    finished = table[table["status"] == "FINISHED"] if "status" in table else table
    if SEED not in finished:
        return finished
    same = finished[finished[SEED] == seed]
    return same if not same.empty else finished


def hull_metrics(front: pd.DataFrame) -> dict[str, float]:
    """``front/hull_compared`` (front points with a margin: not less useful than every baseline point) and, where any,
    ``front/beyond_hull`` (of those, how many lie beyond it) and ``front/hull_margin_min`` (the margin of the point
    furthest beyond it, or least inside)."""
    if MARGIN not in front:
        return {}
    margins = front[MARGIN].astype(float).dropna()
    if margins.empty:
        return {"front/hull_compared": 0.0}
    return {"front/hull_compared": float(len(margins)), "front/beyond_hull": float((margins < 0).sum()),
            "front/hull_margin_min": float(margins.min())}


def format_hull(front: pd.DataFrame, corners: Corners, axes: Sequence[Axis]) -> str:
    """For the terminal: each front point's standing against the hull, with the mix that reaches it."""
    lines = [f"the baselines' hull, every per-record mix of {len(corners.names)} learnless releases "
             f"({', '.join(corners.names)}) on {' / '.join(a.metric for a in axes)}, each axis mixed as it averages:"]
    for _, row in front.iterrows():
        text = f"  {row['name']}: {verdict(float(row[MARGIN]))}"
        text += f" (the nearest mix: {row[MIX]})" if row[MIX] else ""
        if np.isfinite(row.get(AT_SATURATION, np.nan)):
            text += f"; at its attacker's saturation estimate: {verdict(float(row[AT_SATURATION]))}"
        if row.get(BEYOND_SEEDS):
            text += f"; beyond it at {row[BEYOND_SEEDS]} seeds"
        lines.append(text)
    metrics = hull_metrics(front)
    lines.append(f"front points beyond the baselines' hull: {int(metrics.get('front/beyond_hull', 0))} of "
                 f"{int(metrics['front/hull_compared'])} compared")
    return "\n".join(lines)
