"""Distortion as the image fronts' third objective: the three-objective front and hypervolume against hand-computed
values, the comparison with a baseline by dominance on every axis, the old two-axis stores still read, and the
figures that colour points by distortion band."""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.pareto_axis import Axis
from platform.figures.figure_parts import BAND_COLOURS, bands
from platform.figures.front import distortion_figure, draw_comparison_grid, draw_seeds
from platform.figures.summary_figures import draw_summary, seed_trials
from platform.results.comparison_grid import (
    ComparisonCurve,
    ComparisonGrid,
    compare_all,
    comparison_metrics,
    format_comparison,
)
from platform.results.pareto import hypervolume, pareto_mask
from platform.results.replicates import SEED
from platform.results.summary import front_axes, summarise
from search_spaces import PSNR_AXIS, presets

AMNIST = presets()["amnist"]
AXES = list(AMNIST.front.axes)  # fresh digit accuracy, strongest attacker, PSNR
U, P, D = (a.metric for a in AXES)
STROKE = ComparisonGrid(presets()["stroke-redraw"])


def points(rows: dict[str, tuple[float, float, float]]) -> pd.DataFrame:
    """A point table: name -> (utility, attacker, PSNR)."""
    return pd.DataFrame([{"name": name, U: u, P: p, D: d} for name, (u, p, d) in rows.items()])


# A, B, C: all three on the three-objective front; C (less useful and less private than B) only because its PSNR is
# the best, so on the first two axes alone B dominates it
TRIALS = {"A": (0.9, 0.8, 20.0), "B": (0.6, 0.6, 10.0), "C": (0.5, 0.7, 30.0)}


def test_the_amnist_fronts_have_psnr_as_their_third_objective() -> None:
    assert [a.metric for a in AXES] == ["utility/fresh_accuracy", "attack/max/accuracy", "utility/psnr_of_mse"]
    for name in ("amnist-privatizer", "noise", "stroke-redraw", "digit-prototype", "cloak-mnist"):
        assert presets()[name].front.axes[-1] == PSNR_AXIS, name
    assert AXES[2].higher_is_better and (AXES[2].bound, AXES[2].ideal) == (0.0, 60.0)


def test_three_objective_hypervolume_matches_a_hand_computed_value_and_not_the_two_axis_one() -> None:
    df = points(TRIALS)
    # each point dominates the box from the bounds (utility 0, attacker 1, PSNR 0) to itself: in gains, A 0.9 × 0.2 × 20,
    # B 0.6 × 0.4 × 10, C 0.5 × 0.3 × 30; their union by inclusion-exclusion:
    # 3.6 + 2.4 + 4.5 − (A∩B 0.6·0.2·10 + A∩C 0.5·0.2·20 + B∩C 0.5·0.3·10) + A∩B∩C 0.5·0.2·10 = 6.8
    assert hypervolume(df, AXES) == pytest.approx(6.8)
    assert hypervolume(df, AXES, normalised=True) == pytest.approx(6.8 / (1.0 * 0.5 * 60.0))
    # on the first two axes C lies inside B's box: 0.18 + 0.24 − 0.12
    assert hypervolume(df, AXES[:2]) == pytest.approx(0.30)
    assert list(pareto_mask(df, AXES)) == [True, True, True] and list(pareto_mask(df, AXES[:2])) == [True, True, False]

    table = df.assign(status="FINISHED", lam=[0.0, 1.0, 2.0])
    summary = summarise(table, AXES, ("lam",))
    metrics = summary.metrics()
    assert metrics["front/size"] == 3 and metrics["front/hypervolume"] == pytest.approx(6.8)
    assert metrics["front/hypervolume_normalised"] == pytest.approx(6.8 / 30)
    assert metrics["front/hypervolume_2d"] == pytest.approx(0.30)  # the two-axis view's number, beside it


def test_three_objective_hypervolume_agrees_with_optunas_independent_one() -> None:
    from optuna._hypervolume import compute_hypervolume  # the WFG algorithm Optuna's multi-objective samplers use

    rng = np.random.default_rng(0)
    for n in (1, 5, 40):
        df = points({f"p{i}": (u, p, d) for i, (u, p, d) in enumerate(zip(rng.uniform(0, 1, n), rng.uniform(0.5, 1, n),
                                                                          rng.uniform(0, 60, n), strict=True))})
        costs = np.stack([-df[U], df[P], -df[D]], axis=1)  # Optuna minimises every objective
        expected = compute_hypervolume(costs, np.array([0.0, 1.0, 0.0]))
        assert hypervolume(df, AXES) == pytest.approx(expected, rel=1e-9), n


def test_a_store_without_the_distortion_keeps_its_two_axis_front() -> None:
    old = points(TRIALS).drop(columns=D).assign(status="FINISHED")
    assert front_axes(AXES, old) == AXES[:2]
    assert front_axes(AXES, old.assign(**{D: np.nan})) == AXES[:2]
    assert front_axes(AXES, points(TRIALS)) == AXES
    assert replace(AMNIST, comparison_grids="noise").comparison_grids == ("noise",)  # a preset naming one grid
    assert replace(AMNIST, comparison_grids=None).comparison_grids == ()


def curve_of(baseline: ComparisonGrid, trials: pd.DataFrame, points: pd.DataFrame) -> ComparisonCurve:
    """A comparison grid's curve as ``read_curve`` builds it, with its points' front on the first two axes."""
    return ComparisonCurve(baseline, trials, points, points[pareto_mask(points, AXES[:2])] if not points.empty else points)


# the stroke redraw's points: radius=1 and radius=1.5 each dominate A (as useful or more, more private, sharper);
# radius=2 is more useful and more private than B but blurrier, so it does not dominate B; C's PSNR beats them all
def compare_front(front: pd.DataFrame, curve: pd.DataFrame, axes: list[Axis], baseline: ComparisonGrid) -> pd.DataFrame:
    """The front beside one comparison grid, read the way the summary reads every grid (``compare_all``)."""
    return compare_all(front, [curve_of(baseline, curve, curve)], axes)


CURVE = points({"radius=1": (0.92, 0.75, 21.0), "radius=1.5": (0.91, 0.76, 20.5), "radius=2": (0.7, 0.55, 9.0)})
CURVE["radius"] = [1.0, 1.5, 2.0]


def test_a_baseline_point_that_dominates_a_front_point_is_flagged_and_one_that_does_not_is_not() -> None:
    front = points(TRIALS).assign(pareto_front=True)
    compared = compare_front(front, CURVE, AXES, STROKE).set_index("name")
    assert compared.loc["A", STROKE.dominated_by] == "radius=1; radius=1.5"  # every dominating point, by name
    assert compared.loc["B", STROKE.dominated_by] == ""  # radius=2 is better on two axes, not on PSNR
    assert compared.loc["C", STROKE.dominated_by] == ""
    # on the first two axes alone radius=2 would dominate B
    assert compare_front(front, CURVE, AXES[:2], STROKE).set_index("name").loc["B", STROKE.dominated_by] == "radius=2"

    curve = curve_of(STROKE, CURVE.assign(status="FINISHED"), CURVE)
    metrics = comparison_metrics(compared.reset_index(), curve)
    assert metrics["front/dominated_by_stroke-redraw"] == 1 and metrics["front/stroke-redraw_trials"] == 3
    text = format_comparison(compared.reset_index(), curve, AXES)
    assert "  A: 0.9 / 0.8 / 20; " in text
    assert "    dominated by stroke-redraw radius=1: 0.92 / 0.75 / 21" in text
    assert "    dominated by stroke-redraw radius=1.5: 0.91 / 0.76 / 20.5" in text
    assert "front points dominated by a stroke-redraw point on every axis: 1 of 3" in text


def test_beating_a_baseline_at_equal_utility_respects_the_distortion() -> None:
    # F and G are as useful and as private; the baseline at their utility 0.8 reads, halfway between its two points,
    # attacker 0.65 and PSNR 15 dB. Both are more private; F is blurrier (8 dB), G sharper (25 dB): only G beats it.
    front = points({"F": (0.8, 0.60, 8.0), "G": (0.8, 0.60, 25.0)}).assign(pareto_front=True)
    curve = points({"radius=1": (0.9, 0.70, 21.0), "radius=2": (0.7, 0.60, 9.0)}).assign(radius=[1.0, 2.0])
    compared = compare_front(front, curve, AXES, STROKE).set_index("name")
    np.testing.assert_allclose(compared[STROKE.at_utility], [0.65, 0.65])
    np.testing.assert_allclose(compared[STROKE.at(AXES[2])], [15.0, 15.0])
    assert STROKE.at(AXES[2]) == "stroke-redraw/psnr_of_mse_at_utility"
    assert compared.loc["F", STROKE.beats] == 0.0 and compared.loc["G", STROKE.beats] == 1.0
    assert set(compared[STROKE.dominated_by]) == {""}  # neither is dominated: F loses at equal utility, not outright
    two_axis = compare_front(front, curve, AXES[:2], STROKE).set_index("name")
    assert list(two_axis[STROKE.beats]) == [1.0, 1.0]  # the control: without the distortion both would beat it
    metrics = comparison_metrics(compared.reset_index(), curve_of(STROKE, curve, curve))
    assert metrics["front/beats_stroke-redraw_share"] == 0.5 and metrics["front/stroke-redraw_compared"] == 2


def test_a_release_collapsed_below_the_baseline_s_utility_is_compared_with_nothing() -> None:
    # K went black (digit at chance, attacker at 50 %): more private than the baseline's least useful point, but the
    # baseline never ran at K's utility, so K neither beats it nor counts in the share; L is compared as before
    front = points({"K": (0.1, 0.50, 9.6), "L": (0.8, 0.60, 25.0)}).assign(pareto_front=True)
    curve = points({"radius=1": (0.9, 0.70, 21.0), "radius=2": (0.7, 0.60, 9.0)}).assign(radius=[1.0, 2.0])
    compared = compare_front(front, curve, AXES, STROKE).set_index("name")
    assert np.isnan(compared.loc["K", STROKE.at_utility]) and np.isnan(compared.loc["K", STROKE.beats])
    assert compared.loc["L", STROKE.beats] == 1.0
    metrics = comparison_metrics(compared.reset_index(), curve_of(STROKE, curve, curve))
    assert metrics["front/beats_stroke-redraw_share"] == 1.0 and metrics["front/stroke-redraw_compared"] == 1
    text = format_comparison(compared.reset_index(), curve_of(STROKE, curve, curve), AXES)
    assert ("  K: 0.1 / 0.5 / 9.6; every stroke-redraw point has more utility/fresh_accuracy than this one (the least "
            "reads 0.7): nothing to compare at equal utility/fresh_accuracy") in text


def test_the_front_is_compared_with_every_baseline_at_once() -> None:
    front = points(TRIALS).assign(pareto_front=True)
    noise, prototype = ComparisonGrid(presets()["noise"]), ComparisonGrid(presets()["digit-prototype"])
    corner = points({"mix=0": (0.95, 0.58, 12.8)}).assign(mix=[0.0])  # the prototype: useful, private, blurry
    curves = [curve_of(STROKE, CURVE, CURVE),
              curve_of(noise, pd.DataFrame(), pd.DataFrame()),  # no finished trial: left out
              curve_of(prototype, corner, corner)]
    compared = compare_all(front, curves, AXES).set_index("name")
    assert compared.loc["A", STROKE.dominated_by] == "radius=1; radius=1.5"
    # the prototype is more useful and more private than every trial, and sharper than B (10 dB) alone: it dominates B;
    # A (20 dB) and C (30 dB) are sharper
    assert list(compared[prototype.dominated_by]) == ["", "mix=0", ""]
    assert noise.dominated_by not in compared


def test_bands_colour_each_psnr_and_the_figures_draw_the_front_on_three_axes_and_on_two(tmp_path: Path) -> None:
    psnr = np.array([5.0, 11.99, 12.0, 14.0, 16.0, 25.0, math.nan])
    np.testing.assert_array_equal(bands(psnr, AXES[2]), [0, 0, 1, 1, 2, 3, -1])
    df = points(TRIALS).assign(pareto_front=True)
    fig = distortion_figure(df, AXES, np.ones(3, dtype=bool), "name", dominated=np.array([True, False, False]))
    draw_comparison_grid(fig.axes[0], CURVE, AXES, "stroke redraw", "radius")
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[:4] == ["PSNR < 12 dB", "PSNR 12–15 dB", "PSNR 15–20 dB", "PSNR ≥ 20 dB"]
    assert {"Pareto front (all three axes)", "dominated by a baseline point", "stroke redraw"} <= set(legend)
    # each point's face is its band's colour: A 20 dB (best band), B 10 dB (worst), C 30 dB (best)
    front_faces = next(c for c in fig.axes[0].collections if len(c.get_offsets()) == 3).get_facecolors()
    np.testing.assert_allclose(front_faces[:, :3], [BAND_COLOURS[3][:3], BAND_COLOURS[0][:3], BAND_COLOURS[3][:3]])

    table = df.drop(columns="pareto_front").assign(status="FINISHED", alpha=1.0, lam=[0.0, 1.0, 2.0], adv_steps=1)
    summary = summarise(table, AXES, AMNIST.label_keys)
    summary = replace(summary, comparisons=(curve_of(STROKE, CURVE, CURVE),),
                      compared=compare_all(summary.points, [curve_of(STROKE, CURVE, CURVE)], AXES))
    drawn = draw_summary(summary, AMNIST, tmp_path)
    assert [p.name for p in drawn] == ["front.png", "front_2d.png", "trends.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in drawn)


def test_a_point_averaging_a_live_and_a_black_seed_draws_each_seed_where_it_lies(tmp_path: Path) -> None:
    # λ=300 averages a live seed (0.93, 0.93) and a black one (0.10, 0.50): its mean (0.515, 0.715) is no release at
    # all, so the figure must also draw both seeds' own trials; λ=0 has its two seeds close together
    table = pd.DataFrame([
        {"name": "λ=0", "lam": 0.0, SEED: 0, U: 0.97, P: 0.96, D: 26.0},
        {"name": "λ=0", "lam": 0.0, SEED: 1, U: 0.98, P: 0.97, D: 26.5},
        {"name": "λ=300", "lam": 300.0, SEED: 0, U: 0.93, P: 0.93, D: 14.0},
        {"name": "λ=300", "lam": 300.0, SEED: 1, U: 0.10, P: 0.50, D: 9.6},
    ]).assign(status="FINISHED", alpha=1.0, adv_steps=1)
    summary = summarise(table, AXES, AMNIST.label_keys)
    np.testing.assert_allclose(summary.points.set_index("lam").loc[300.0, [U, P]].to_numpy(float), [0.515, 0.715])
    seeds = seed_trials(summary)
    assert seeds is not None and len(seeds) == 4
    fig = distortion_figure(summary.points, AXES, summary.points["pareto_front"].to_numpy(), "name")
    draw_seeds(fig.axes[0], seeds, AXES)
    rings = [c for c in fig.axes[0].collections if c.get_label() == "one seed's trial"]
    assert len(rings) == 1
    drawn = {tuple(np.round(xy, 3)) for xy in rings[0].get_offsets()}
    assert drawn == {(0.97, 0.96), (0.98, 0.97), (0.93, 0.93), (0.10, 0.50)}
    assert "one seed's trial" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    # one seed a point: the points are the trials, and nothing is drawn twice
    assert seed_trials(summarise(table[table[SEED] == 0], AXES, AMNIST.label_keys)) is None
    assert [p.name for p in draw_summary(summary, AMNIST, tmp_path)] == ["front.png", "front_2d.png", "trends.png"]
