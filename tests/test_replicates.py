"""Replication over seeds on hand-made tables: per-point means and bands, hypervolume spread, error bars, the seed axis."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from matplotlib.container import ErrorbarContainer

from core.pareto_axis import Axis
from platform.errors import UsageError
from platform.figures.front import front_figure
from platform.figures.fronts import fronts_figure
from platform.plan.seed_axis import with_seeds
from platform.plan.spec import resolve
from platform.results.pareto import hypervolume
from platform.results.replicates import band_columns, point_table
from platform.results.summary import format_summary, summarise

UTIL = Axis("utility/accuracy", higher_is_better=True, bound=0.0, ideal=1.0)
ATTACK = Axis("attack/max/accuracy", higher_is_better=False, bound=1.0, ideal=0.5)
AXES = [UTIL, ATTACK]
KEYS = ("lam", "seed")
S = 0.1 / math.sqrt(2)  # sample std (ddof = 1) of two values 0.1 apart

# (lam, seed, status, utility, attack): points A (lam 1), B (lam 3), C (lam 9, dominated), D (lam 20, one seed).
ROWS = [
    (1.0, 0, "FINISHED", 0.8, 0.7), (1.0, 1, "FINISHED", 0.9, 0.8),
    (3.0, 0, "FINISHED", 0.6, 0.55), (3.0, 1, "FINISHED", 0.5, 0.6),
    (9.0, 0, "FINISHED", 0.4, 0.9), (9.0, 1, "FINISHED", 0.3, 0.9),
    (20.0, 0, "FINISHED", 0.2, 0.95),
    (30.0, 1, "FAILED", 0.99, 0.51),  # would dominate everything, but failed trials never count
]


def trials() -> pd.DataFrame:
    rows = []
    for lam, seed, status, util, attack in ROWS:
        rows.append({"run_id": f"r{lam:g}-{seed}", "name": f"lam={lam:g} seed={seed}", "status": status, "lam": lam,
                     "seed": float(seed), "utility/accuracy": util, "attack/max/accuracy": attack,
                     "utility/accuracy/ci_low": util - 0.05, "utility/accuracy/ci_high": util + 0.04,
                     "attack/max/accuracy/ci_low": attack - 0.03, "attack/max/accuracy/ci_high": attack + 0.02})
    return pd.DataFrame(rows)


def test_point_means_stds_and_bands_match_hand_computation() -> None:
    table = trials()
    points = point_table(table[table["status"] == "FINISHED"], AXES, KEYS).set_index("lam")
    assert list(points.index) == [1.0, 3.0, 9.0, 20.0]
    assert list(points["n_seeds"]) == [2, 2, 2, 1] and list(points["seeds"]) == ["0 1", "0 1", "0 1", "0"]
    assert list(points["name"]) == ["lam=1", "lam=3", "lam=9", "lam=20"]
    assert points.loc[1.0, "run_ids"] == "r1-0 r1-1"
    expected = {1.0: (0.85, S, 0.75, S), 3.0: (0.55, S, 0.575, S / 2), 9.0: (0.35, S, 0.9, 0.0)}
    for lam, (u, u_std, a, a_std) in expected.items():
        row = points.loc[lam]
        assert row["utility/accuracy"] == pytest.approx(u) and row["utility/accuracy/std"] == pytest.approx(u_std)
        assert row["attack/max/accuracy"] == pytest.approx(a) and row["attack/max/accuracy/std"] == pytest.approx(a_std)
        assert row["utility/accuracy/ci_low"] == pytest.approx(u - 0.05)  # the mean of the seeds' intervals
        low, high = band_columns("utility/accuracy")
        assert (row[low], row[high]) == pytest.approx((u - u_std, u + u_std))  # ± std over seeds
        low, high = band_columns("attack/max/accuracy")
        assert (row[low], row[high]) == pytest.approx((a - a_std, a + a_std))
    assert points.loc[1.0, "utility/accuracy/min"] == 0.8 and points.loc[1.0, "utility/accuracy/max"] == 0.9
    single = points.loc[20.0]  # one seed: the band is the logged 95 % interval
    assert math.isnan(single["utility/accuracy/std"])
    assert (single["utility/accuracy/band_low"], single["utility/accuracy/band_high"]) == pytest.approx((0.15, 0.24))
    assert (single["attack/max/accuracy/band_low"], single["attack/max/accuracy/band_high"]) == pytest.approx((0.92, 0.97))


def test_front_of_means_and_hypervolume_spread_over_seeds() -> None:
    table = trials()
    summary = summarise(table, AXES, KEYS)
    # By hand: seed 0's front A(.8,.7) B(.6,.55) covers .8*.3 + .6*.45 - .6*.3 = .33; seed 1's A(.9,.8) B(.5,.6)
    # covers .9*.2 + .5*.4 - .5*.2 = .28; the front of means A(.85,.75) B(.55,.575): .2125 + .23375 - .1375 = .30875.
    per_seed = {0: 0.33, 1: 0.28}
    for seed, hv in per_seed.items():
        assert hypervolume(table[(table["seed"] == seed) & (table["status"] == "FINISHED")], AXES) == pytest.approx(hv)
    assert summary.hypervolume == pytest.approx(0.305)
    assert summary.hypervolume_normalised == pytest.approx(0.305 / 0.5)
    spread = summary.spread
    assert spread["front/seeds"] == 2 and spread["front/points"] == 4
    assert spread["front/hypervolume/std"] == pytest.approx(0.05 / math.sqrt(2))
    assert (spread["front/hypervolume/min"], spread["front/hypervolume/max"]) == pytest.approx((0.28, 0.33))
    assert (spread["front/hypervolume/seed_0"], spread["front/hypervolume/seed_1"]) == pytest.approx((0.33, 0.28))
    assert spread["front/hypervolume_normalised/seed_0"] == pytest.approx(0.66)
    assert spread["front/hypervolume_normalised/std"] == pytest.approx(0.1 / math.sqrt(2))
    assert spread["front/hypervolume/of_means"] == pytest.approx(0.30875)
    assert spread["front/seed_std/utility/accuracy"] == pytest.approx(S)  # A, B, C each S; D has one seed
    assert spread["front/seed_std/attack/max/accuracy"] == pytest.approx((S + S / 2 + 0) / 3)
    assert spread["front/seed_std/attack/max/accuracy/max"] == pytest.approx(S)

    assert list(summary.points["pareto_front"]) == [True, True, False, False]
    on_front = set(table.loc[summary.front, "run_id"])
    assert on_front == {"r1-0", "r1-1", "r3-0", "r3-1"}  # each seed's trial of a front point
    text = format_summary(summary, KEYS)
    assert "0.850 ± 0.071" in text and "hypervolume over seeds: mean ± std 0.3050 ± 0.0354" in text


def test_one_seed_behaves_as_before_with_interval_bands() -> None:
    table = trials()
    table = table[table["seed"] == 0].drop(columns="seed").reset_index(drop=True)
    summary = summarise(table, AXES, ("lam",))
    assert summary.spread == {}
    assert summary.hypervolume == pytest.approx(0.33)
    assert list(summary.front) == [True, True, False, False]
    points = summary.points
    assert list(points["n_seeds"]) == [1, 1, 1, 1]
    assert list(points["utility/accuracy/band_low"]) == pytest.approx(list(table["utility/accuracy"] - 0.05))
    assert list(points["attack/max/accuracy/band_high"]) == pytest.approx(list(table["attack/max/accuracy"] + 0.02))


def _bars(container: ErrorbarContainer) -> tuple[list, list]:
    """(horizontal, vertical) bar segments of an errorbar container, each as ((x0, y0), (x1, y1))."""
    x_bars, y_bars = container.lines[2]  # matplotlib draws the x error bars first
    horizontal, vertical = [list(map(tuple, bars.get_segments())) for bars in (x_bars, y_bars)]
    assert all(math.isclose(a[1], b[1]) for a, b in horizontal) and all(math.isclose(a[0], b[0]) for a, b in vertical)
    return horizontal, vertical


def test_front_plot_draws_error_bars_on_both_axes() -> None:
    summary = summarise(trials(), AXES, KEYS)
    points = summary.points
    fig = front_figure(points, AXES, points["pareto_front"].to_numpy(), "name")
    (ax,) = fig.axes
    containers = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(containers) == 2  # points off the front, points on it
    assert ax.get_title() == "error bars: ± 1 std over seeds (95 % interval where a point has one seed)"
    horizontal, vertical = _bars(containers[1])
    assert sorted((round(a[0], 6), round(b[0], 6)) for a, b in horizontal) == [
        (round(0.55 - S, 6), round(0.55 + S, 6)), (round(0.85 - S, 6), round(0.85 + S, 6))]
    assert sorted((round(a[1], 6), round(b[1], 6)) for a, b in vertical) == [
        (round(0.575 - S / 2, 6), round(0.575 + S / 2, 6)), (round(0.75 - S, 6), round(0.75 + S, 6))]
    horizontal, _ = _bars(containers[0])  # off the front: C from its seeds, D from its interval
    assert sorted((round(a[0], 6), round(b[0], 6)) for a, b in horizontal) == [
        (0.15, 0.24), (round(0.35 - S, 6), round(0.35 + S, 6))]


def test_front_plot_without_bands_draws_none_and_compare_plot_draws_them() -> None:
    plain = trials()[["utility/accuracy", "attack/max/accuracy"]].head(3)
    fig = front_figure(plain, AXES, np.array([True, True, False]), None)
    assert not [c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)] and fig.axes[0].get_title() == ""
    single = summarise(trials().query("seed == 0").drop(columns="seed"), AXES, ("lam",))
    fig = front_figure(single.points, AXES, single.points["pareto_front"].to_numpy(), "name")
    assert fig.axes[0].get_title() == "error bars: 95 % intervals"
    no_intervals = summarise(trials().query("seed == 0").filter(regex="^(?!.*/ci_)"), AXES, ("lam",))
    fig = front_figure(no_intervals.points, AXES, no_intervals.points["pareto_front"].to_numpy(), "name")
    assert fig.axes[0].get_title() == ""  # nothing logged an interval: no bars to explain
    summary = summarise(trials(), AXES, KEYS)
    fig = fronts_figure([("seeds", summary.points, summary.points["pareto_front"].to_numpy()),
                         ("one seed", single.points, single.points["pareto_front"].to_numpy())], AXES)
    containers = [c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)]
    assert len(containers) == 2
    horizontal, vertical = _bars(containers[1])  # one seed: the logged intervals of A(.8,.7) and B(.6,.55)
    assert sorted((round(a[0], 6), round(b[0], 6)) for a, b in horizontal) == [(0.55, 0.64), (0.75, 0.84)]
    assert sorted((round(a[1], 6), round(b[1], 6)) for a, b in vertical) == [(0.52, 0.57), (0.67, 0.72)]


def test_seed_axis_from_seeds_or_a_seed_list() -> None:
    plain = resolve("amnist", "smoke", [])
    assert with_seeds(plain, 1, "grid") == plain
    spec = with_seeds(resolve("amnist", "smoke", ["seed=5"]), 3, "grid")
    assert spec.grid["seed"] == [5, 6, 7] and "seed" not in spec.config
    assert spec.preset.label_keys == ("alpha", "lam", "adv_steps", "seed")
    assert len(spec.grid_points()) == 3 * len(plain.grid_points())
    listed = with_seeds(resolve("amnist", "smoke", ["seed=5,6,7"]), 1, "grid")
    assert listed.grid == spec.grid and listed.config == spec.config and listed.preset.label_keys == spec.preset.label_keys


@pytest.mark.parametrize("overrides,seeds,search,message", [
    ([], 0, "grid", "--seeds must be >= 1 (got 0)"),
    ([], -2, "grid", "--seeds must be >= 1 (got -2)"),
    (["seed=0,1"], 2, "grid", "not both"),
    ([], 2, "optuna", "Optuna search runs each sampled point once"),
    (["seed=0,1"], 1, "optuna", "Optuna search runs each sampled point once"),
])
def test_seed_axis_refuses_bad_combinations(overrides: list[str], seeds: int, search: str, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        with_seeds(resolve("amnist", "smoke", overrides), seeds, search)
