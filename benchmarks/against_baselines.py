"""A finished sweep's front against its comparison grids seed by seed: dominance, the paired difference from noise
at equal utility with its signed-rank test, and the operating points the releaser is asked to reach.

The sweep's own report compares the front's points (means over seeds) with each comparison grid's points (means over
seeds). Here every trial is compared with the grids' trials *of its own seed* (same data, same farm, same seed), so
the difference from noise is paired:

- **dominance**: the comparison points of the trial's seed that are at least as good on every axis of the front and
  better on one (utility, the strongest attacker, PSNR);
- **against noise**: the trial's strongest attacker minus noise's at the trial's utility, noise's curve of that seed
  interpolated along its front (as the report does); over the trials of front points with utility ≥ ``--min-utility``,
  the mean with its t interval and the Wilcoxon signed-rank p-value;
- **operating points** (the front's points, means over seeds): the best attacker reading among points at least as
  useful as a comparison point and no more distorted than it;
- **the baselines' hull, seed by seed**: each trial's margin against the hull of its own seed's comparison points and
  the constant release (> 0 inside, < 0 beyond; docs/metrics.md#the-baselines-hull), and per grid point the margins
  over its seeds with the signed-rank test of "beyond" (a mean below 0).

    PYTHONPATH=. .venv/bin/python benchmarks/against_baselines.py --tracking-uri sqlite:///mlflow.db putlab-amnist
    PYTHONPATH=. .venv/bin/python benchmarks/against_baselines.py --skip lam=0 amnist-game-20261127-210651
    PYTHONPATH=. .venv/bin/python benchmarks/against_baselines.py --grids-from putlab-anchored putlab-pose-3seeds
    PYTHONPATH=. .venv/bin/python benchmarks/against_baselines.py --grids-from SEEDS0-2-GRIDS SEEDS0-2 --with SEEDS3-5
"""
from __future__ import annotations

import argparse
import math
from dataclasses import replace

import numpy as np
import pandas as pd

from core.numbers import readable
from core.pareto_axis import Axis
from platform.papers.statistics import Measured, paired
from platform.plan.spec import preset_of
from platform.results.baseline_hull import (
    at_seed,
    below_every_corner,
    constant_corner,
    corners_of,
    joined,
    privacy_gap,
    standing,
)
from platform.results.comparison_grid import ComparisonCurve, comparison_grid_points, dominated_by, value_at_utility
from platform.results.replicates import SEED
from platform.results.store import Store
from platform.results.summary import SweepSummary, read_summary, usable_trials
from search_spaces import Preset

NOISE = "noise"
HULL = "hull/margin_at_seed"
GAP = "hull/privacy_gap_at_seed"


def seed_curve(curve: ComparisonCurve, seed: float, axes: list[Axis]) -> pd.DataFrame:
    """The comparison grid's points of one seed (its own front marked), named by their grid values."""
    trials = curve.trials
    if trials.empty or SEED not in trials:
        return pd.DataFrame()
    return comparison_grid_points(trials[trials[SEED] == seed], axes, curve.grid)


def per_trial(summary: SweepSummary) -> pd.DataFrame:
    """Every usable trial beside each comparison grid of its seed: that grid's privacy value and distortion at the
    trial's utility, and its points that dominate the trial."""
    axes = summary.axes
    trials = usable_trials(summary.trials, axes).assign(on_front=summary.front)
    rows = []
    for seed, group in trials.groupby(SEED):
        group = group.copy()
        for curve in summary.comparisons:
            points = seed_curve(curve, seed, axes)
            name = curve.grid.name
            if points.empty:
                continue
            utility = group[axes[0].metric].to_numpy(dtype=float)
            group[f"{name}/attack"] = value_at_utility(utility, points, axes, axes[1])
            if len(axes) > 2:
                group[f"{name}/distortion"] = value_at_utility(utility, points, axes, axes[2])
            group[f"{name}/dominated_by"] = dominated_by(group, points, axes)
        rows.append(group)
    return pd.concat(rows) if rows else pd.DataFrame()


def paired_against_noise(table: pd.DataFrame, axes: list[Axis], min_utility: float,
                         skip: dict[str, float]) -> Measured | None:
    """The front's trials with utility ≥ ``min_utility`` (less those at a ``skip`` value): privacy value minus noise's
    at equal utility, same seed."""
    column = f"{NOISE}/attack"
    if column not in table:
        return None
    kept = table["on_front"] & (table[axes[0].metric] >= min_utility)
    for key, value in skip.items():
        kept &= table[key] != value
    chosen = table[kept].dropna(subset=[column])
    return None if chosen.empty else paired(chosen[axes[1].metric] - chosen[column], chosen)


def best_within(points: pd.DataFrame, axes: list[Axis], utility: float, distortion: float) -> pd.Series | None:
    """The front point with the lowest privacy value among those at least as useful as ``utility`` and no more
    distorted than ``distortion`` (PSNR at least that)."""
    u_axis, p_axis = axes[:2]
    ok = points[u_axis.metric] >= utility
    if len(axes) > 2:
        ok &= points[axes[2].metric] >= distortion
    chosen = points[ok]
    return None if chosen.empty else chosen.sort_values(p_axis.metric).iloc[0]


def print_trials(table: pd.DataFrame, summary: SweepSummary, label_keys: tuple[str, ...]) -> None:
    """One line per trial: its values, noise's at its utility, and every comparison point of its seed dominating it."""
    axes = summary.axes
    names = [c.grid.name for c in summary.comparisons]
    print(f"per trial ({' / '.join(a.metric for a in axes)}); noise at the trial's utility, same seed:")
    for _, row in table.sort_values([SEED, *[k for k in label_keys if k in table]]).iterrows():
        label = " ".join(f"{k}={readable(row[k])}" for k in label_keys if k in row and not pd.isna(row[k]))
        values = " / ".join(readable(row[a.metric]) for a in axes)
        noise = row.get(f"{NOISE}/attack", math.nan)
        at = "noise does not reach it" if pd.isna(noise) else f"noise {readable(noise)} (Δ {row[axes[1].metric] - noise:+.3f})"
        dominated = "; ".join(f"{n}: {row[f'{n}/dominated_by']}" for n in names
                              if isinstance(row.get(f"{n}/dominated_by"), str) and row[f"{n}/dominated_by"])
        front = " front" if row["on_front"] else ""
        print(f"  seed {readable(row[SEED])} {label}{front}: {values}; {at}; dominated by: {dominated or 'none'}")


def hull_margins(table: pd.DataFrame, summary: SweepSummary, parent_metrics: dict[str, float]) -> pd.DataFrame:
    """Each trial's margin against the hull of its seed's comparison trials and the constant release, and its
    :func:`privacy_gap` (NaN where it is less useful than every corner)."""
    axes, constant = summary.axes, constant_corner(parent_metrics, summary.axes)
    margins, gaps = pd.Series(math.nan, index=table.index), pd.Series(math.nan, index=table.index)
    for seed, group in table.groupby(SEED):
        corners = joined(corners_of([(c.grid.name, at_seed(c.trials, seed)) for c in summary.comparisons
                                     if not c.trials.empty], axes), constant)
        for index, row in group.iterrows():
            point = np.array([float(row[a.metric]) for a in axes])
            if corners.names and not below_every_corner(point, corners, axes):
                margins[index] = standing(point, corners, axes).margin
                gaps[index] = privacy_gap(point, corners, axes)
    return pd.DataFrame({HULL: margins, GAP: gaps})


def print_hull(table: pd.DataFrame, label_keys: tuple[str, ...]) -> None:
    """Per grid point: its margin against its seed's hull at each seed, their mean and the test of "beyond"."""
    keys = [k for k in label_keys if k in table]
    print("the baselines' hull, seed by seed (margin > 0: inside, < 0: beyond; paired over seeds):")
    for values, group in table.dropna(subset=[HULL]).groupby(keys):
        label = " ".join(f"{k}={readable(v)}" for k, v in zip(keys, values if isinstance(values, tuple) else (values,),
                                                                strict=True))
        margins = group.sort_values(SEED)[HULL]
        found = paired(margins, group, what="seeds")
        beyond = int((margins < 0).sum())
        print(f"  {label}: {', '.join(f'{m:+.3f}' for m in margins)}; beyond at {beyond} of {len(margins)} seeds; "
              f"mean {found.value:+.3f} [{found.low:+.3f}, {found.high:+.3f}], {found.statistic}")
        gaps = group.sort_values(SEED)[GAP].dropna()
        if not gaps.empty:
            gap = paired(gaps, group, what="seeds")
            print(f"    privacy gap to the best mix as useful and as sharp (> 0: more private than every such mix): "
                  f"{', '.join(f'{g:+.3f}' for g in gaps)}; mean {gap.value:+.3f} [{gap.low:+.3f}, {gap.high:+.3f}], "
                  f"{gap.statistic}")


def print_operating_points(summary: SweepSummary) -> None:
    """For each comparison point, the best front point at least as useful and no more distorted."""
    axes, front = summary.axes, summary.front_points
    print("operating points (means over seeds): the most private front point at least as useful and as sharp as")
    for curve in summary.comparisons:
        for _, point in curve.points.iterrows():
            distortion = float(point[axes[2].metric]) if len(axes) > 2 else math.nan
            best = best_within(front, axes, float(point[axes[0].metric]), distortion)
            mine = "none" if best is None else f"{best['name']}: " + " / ".join(readable(best[a.metric]) for a in axes)
            theirs = " / ".join(readable(point[a.metric]) for a in axes)
            print(f"  {curve.grid.name} {point.get('name', '')} ({theirs}) → {mine}")


def part(client: Store, sweep: str, grids_from: str | None) -> tuple[Preset, SweepSummary, pd.DataFrame]:
    """One sweep's summary (with another sweep's comparison grids where ``grids_from`` names one) and its trials beside
    the comparison grids of their seed, with their margins against the hull of that seed."""
    _, parent_id = client.find_sweep(sweep)
    parent = client.run(parent_id).data
    preset = preset_of(parent.params)
    summary = read_summary(client, parent_id, preset)
    if grids_from:
        _, other_id = client.find_sweep(grids_from)
        other = read_summary(client, other_id, preset_of(client.run(other_id).data.params))
        summary = replace(summary, comparisons=other.comparisons)
    table = per_trial(summary)
    if table.empty:
        raise SystemExit(f"{sweep}: no finished trial reports every axis of the front")
    return preset, summary, table.join(hull_margins(table, summary, parent.metrics))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sweep", help="a sweep's name, its parent run id, or an experiment (its newest sweep)")
    parser.add_argument("--tracking-uri", default="sqlite:///mlflow.db")
    parser.add_argument("--min-utility", type=float, default=0.80,
                        help="the paired test reads front trials at least this useful (default 0.80)")
    parser.add_argument("--grids-from", metavar="SWEEP",
                        help="compare with the comparison grids of this other sweep in the store (same data, seeds and "
                             "farm), for a sweep run with --no-comparison-grids")
    parser.add_argument("--with", dest="parts", action="append", default=[], metavar="SWEEP",
                        help="join the trials of another sweep of the same preset at other seeds (run with its own "
                             "comparison grids), each against its own seed's grids; repeatable")
    parser.add_argument("--skip", action="append", default=[], metavar="KEY=VALUE",
                        help="leave trials at this grid value out of the paired test, e.g. lam=0 (the identity anchor)")
    args = parser.parse_args()
    try:
        skip = {key: float(value) for key, value in (item.split("=", 1) for item in args.skip)}
    except ValueError:
        parser.error(f"--skip takes KEY=NUMBER, got {args.skip}")
    client = Store.open(args.tracking_uri, create=False)
    preset, summary, table = part(client, args.sweep, args.grids_from)
    table = pd.concat([table] + [part(client, sweep, None)[2] for sweep in args.parts])
    if table.duplicated(subset=[SEED, *[k for k in preset.label_keys if k in table]]).any():
        raise SystemExit("--with: two sweeps hold a trial of the same seed and grid point; join sweeps of other seeds")
    print_trials(table, summary, preset.label_keys)
    dominated = [c for c in table.columns if c.endswith("/dominated_by")]
    front = table[table["on_front"]]
    flagged = front[dominated].apply(lambda r: any(isinstance(v, str) and v for v in r), axis=1)
    print(f"front trials dominated by a comparison point of their seed: {int(flagged.sum())} of {len(front)}")
    against = paired_against_noise(table, summary.axes, args.min_utility, skip)
    if against is None:
        print(f"against noise: no front trial with {summary.axes[0].metric} ≥ {args.min_utility} that noise reaches")
    else:
        left_out = "".join(f", {k} ≠ {readable(v)}" for k, v in skip.items())
        print(f"against noise at equal utility (front trials with {summary.axes[0].metric} ≥ {args.min_utility}{left_out}): "
              f"mean {against.value:+.3f} [{against.low:+.3f}, {against.high:+.3f}], {against.statistic}")
    print_operating_points(summary)
    print_hull(table, preset.label_keys)

if __name__ == "__main__":
    main()
