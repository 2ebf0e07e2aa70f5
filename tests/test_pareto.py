"""Pareto mask and front, exact hypervolume, and the front PNG (platform.results.pareto, front_plot)."""
from __future__ import annotations

import math
import time

import adjustText
import numpy as np
import pandas as pd
import pytest
from matplotlib.image import imread

from core.pareto_axis import Axis
from platform.figures.figure_parts import DPI, FIGSIZE
from platform.figures.front import plot_front
from platform.figures.fronts import fronts_by_figure, plot_fronts_by
from platform.results.front_groups import fronts_by, group_metrics
from platform.results.pareto import hypervolume, pareto_front, pareto_mask
from platform.results.replicates import point_table
from search_spaces import lambda_zero_anchor

UTIL = Axis("utility/accuracy", higher_is_better=True, bound=0.0, ideal=1.0)
ATTACK = Axis("attack/deep/accuracy", higher_is_better=False, bound=1.0, ideal=0.5)
AXES = (UTIL, ATTACK)

# name: (utility, attack accuracy)
POINTS = {
    "A": (0.95, 0.90),  # front: best utility
    "B": (0.90, 0.70),  # front
    "C": (0.80, 0.60),  # front
    "G": (0.80, 0.60),  # exact duplicate of C: kept as well
    "D": (0.60, 0.55),  # front: best privacy among complete rows
    "E": (0.85, 0.75),  # dominated by B on both axes
    "F": (0.90, 0.80),  # tie with B on utility, worse attack: dominated
    "M": (0.75, 0.60),  # tie with C on attack, worse utility: dominated
    "H": (0.60, 0.58),  # tie with D on utility, worse attack: dominated
    "K": (0.70, 0.80),  # dominated by C ...
    "L": (0.70, 0.80),  # ... and so is its duplicate
    "I": (np.nan, 0.50),  # NaN utility: never on the front, must not dominate D
    "J": (0.99, np.nan),  # NaN attack: never on the front, must not dominate A
}
FRONT = {"A", "B", "C", "G", "D"}


def _frame(points: dict[str, tuple[float, float]]) -> pd.DataFrame:
    """Build a trials frame with a name column and the two metric columns."""
    return pd.DataFrame(
        [(name, u, a) for name, (u, a) in points.items()],
        columns=["name", UTIL.metric, ATTACK.metric],
    )


def _brute_mask(costs: np.ndarray) -> np.ndarray:
    """Reference dominance test on a lower-is-better matrix, one row at a time."""
    valid = ~np.isnan(costs).any(axis=1)
    out = np.zeros(len(costs), dtype=bool)
    for i in np.flatnonzero(valid):
        others = costs[valid]
        dominated = ((others <= costs[i]).all(axis=1) & (others < costs[i]).any(axis=1)).any()
        out[i] = not dominated
    return out


def test_mask_hand_built_front() -> None:
    df = _frame(POINTS)
    mask = pareto_mask(df, AXES)
    assert mask.dtype == bool and mask.shape == (len(df),)
    assert set(df.loc[mask, "name"]) == FRONT


def test_mask_respects_directions() -> None:
    df = _frame(POINTS)
    # Negating a column and flipping its direction describes the same problem: same front.
    flipped = df.assign(**{ATTACK.metric: -df[ATTACK.metric]})
    neg_attack = Axis(ATTACK.metric, higher_is_better=True, bound=-1.0, ideal=-0.5)
    assert (pareto_mask(flipped, (UTIL, neg_attack)) == pareto_mask(df, AXES)).all()
    # Treating attack accuracy as higher-is-better changes the front: A (0.95, 0.90) dominates.
    wrong = Axis(ATTACK.metric, higher_is_better=True, bound=0.5, ideal=1.0)
    assert set(df.loc[pareto_mask(df, (UTIL, wrong)), "name"]) == {"A"}


def test_mask_matches_brute_force_with_ties_beyond_one_chunk() -> None:
    rng = np.random.default_rng(0)
    # 1500 rows (> one 1024-row chunk); coarse rounding makes many ties and duplicates.
    df = pd.DataFrame({UTIL.metric: rng.random(1500).round(1),
                       ATTACK.metric: rng.uniform(0.5, 1.0, 1500).round(1)})
    df.loc[rng.choice(1500, 50, replace=False), UTIL.metric] = np.nan
    costs = np.stack([-df[UTIL.metric].to_numpy(), df[ATTACK.metric].to_numpy()], axis=1)
    assert (pareto_mask(df, AXES) == _brute_mask(costs)).all()


def test_front_sorted_by_first_axis() -> None:
    front = pareto_front(_frame(POINTS), AXES)
    assert set(front["name"]) == FRONT
    assert front[UTIL.metric].is_monotonic_increasing
    assert front["name"].iloc[0] == "D" and front["name"].iloc[-1] == "A"


def test_empty_and_all_nan() -> None:
    empty = _frame({})
    assert pareto_mask(empty, AXES).shape == (0,)
    assert hypervolume(empty, AXES) == 0.0
    nan_only = _frame({"I": POINTS["I"], "J": POINTS["J"]})
    assert not pareto_mask(nan_only, AXES).any()
    assert hypervolume(nan_only, AXES) == 0.0


def test_axis_rejects_ideal_not_better_than_bound() -> None:
    with pytest.raises(ValueError):
        Axis("utility/accuracy", higher_is_better=True, bound=1.0, ideal=0.0)
    with pytest.raises(ValueError):
        Axis("attack/deep/accuracy", higher_is_better=False, bound=0.5, ideal=0.5)


THREE = {"B": POINTS["B"], "C": POINTS["C"], "D": POINTS["D"]}


def test_hypervolume_hand_computed() -> None:
    # Region dominated by B (u=.90, a=.70), C (.80, .60), D (.60, .55) within u >= 0, a <= 1,
    # sliced along the attack axis (best utility available in each slice):
    #   a in [.55, .60): D's .60  -> .05 * .60 = .03
    #   a in [.60, .70): C's .80  -> .10 * .80 = .08
    #   a in [.70, 1.0]: B's .90  -> .30 * .90 = .27
    # total .38; the ideal box is (1 - 0) * (1 - .5) = .5, so normalised .76.
    df = _frame(THREE)
    assert hypervolume(df, AXES) == pytest.approx(0.38)
    assert hypervolume(df, AXES, normalised=True) == pytest.approx(0.76)
    # Dominated rows, duplicates and NaN rows add nothing.
    assert hypervolume(_frame(POINTS), AXES) == pytest.approx(
        hypervolume(_frame({k: POINTS[k] for k in FRONT}), AXES))
    # Row order does not matter.
    assert hypervolume(df.iloc[::-1], AXES) == pytest.approx(0.38)


@pytest.mark.parametrize("order", [1, -1])  # either axis first: sweeps differ by axis order
def test_points_outside_reference_box_add_nothing(order: int) -> None:
    axes = (Axis(UTIL.metric, higher_is_better=True, bound=0.5, ideal=1.0),
            Axis(ATTACK.metric, higher_is_better=False, bound=0.8, ideal=0.5))[::order]
    # Same slices as above with utility measured above .5 and attack capped at .8:
    #   .05 * .10 + .10 * .30 + .10 * .40 = .075
    base = hypervolume(_frame(THREE), axes)
    assert base == pytest.approx(0.075)
    # P is below the utility bound, Q beyond the attack bound (each better than every front
    # point on the other axis, so neither is dominated); R and S lie on a bound.
    for extra in [(0.45, 0.50), (0.99, 0.85), (0.99, 0.80), (0.50, 0.52)]:
        assert hypervolume(_frame(dict(THREE, X=extra)), axes) == pytest.approx(base), extra


def test_normalised_hypervolume_of_ideal_point_is_one() -> None:
    ideal = _frame({"ideal": (1.0, 0.5), "other": (0.7, 0.7)})
    assert hypervolume(ideal, AXES, normalised=True) == pytest.approx(1.0)
    third = Axis("utility/nmse", higher_is_better=False, bound=1.0, ideal=0.0)
    ideal3 = ideal.assign(**{third.metric: [0.0, 0.3]})
    assert hypervolume(ideal3, (*AXES, third), normalised=True) == pytest.approx(1.0)


def _monte_carlo(costs: np.ndarray, ref: np.ndarray, low: np.ndarray, n: int) -> float:
    """Estimate the volume of the box [low, ref] dominated by lower-is-better points."""
    rng = np.random.default_rng(1)
    samples = rng.uniform(low, ref, size=(n, len(ref)))
    hit = np.zeros(n, dtype=bool)
    for p in costs:  # a sample is dominated when some point is <= it on every axis
        hit |= (p <= samples).all(axis=1)
    return float(hit.mean() * np.prod(ref - low))


@pytest.mark.parametrize("n_axes", [2, 3])
def test_hypervolume_matches_monte_carlo(n_axes: int) -> None:
    rng = np.random.default_rng(42)
    axes = [UTIL, ATTACK, Axis("utility/nmse", higher_is_better=False, bound=1.0, ideal=0.0)]
    axes = axes[:n_axes]
    df = pd.DataFrame({UTIL.metric: rng.uniform(0.0, 1.0, 40),
                       ATTACK.metric: rng.uniform(0.5, 1.1, 40),  # some beyond the bound
                       "utility/nmse": rng.uniform(0.0, 1.0, 40)})
    costs = np.stack([-df[UTIL.metric], df[ATTACK.metric], df["utility/nmse"]], axis=1)
    ref = np.array([-UTIL.bound, ATTACK.bound, 1.0])[:n_axes]
    low = np.array([-1.0, 0.5, 0.0])[:n_axes]  # the ideal corner; every point is beyond it
    estimate = _monte_carlo(costs[:, :n_axes], ref, low, 200_000)
    assert hypervolume(df, axes) == pytest.approx(estimate, rel=0.01)


def test_hypervolume_3d_inclusion_exclusion() -> None:
    # Lower-is-better points (.2,.5,.5) and (.5,.2,.2) under ref (1,1,1):
    # .8*.5*.5 + .5*.8*.8 - (overlap from corner (.5,.5,.5)) .5**3 = .2 + .32 - .125 = .395
    axes = [Axis(m, higher_is_better=False, bound=1.0, ideal=0.0) for m in "xyz"]
    df = pd.DataFrame({"x": [0.2, 0.5], "y": [0.5, 0.2], "z": [0.5, 0.2]})
    assert hypervolume(df, axes) == pytest.approx(0.395)


def test_plot_writes_readable_png(tmp_path) -> None:
    df = _frame(POINTS)
    df["label"] = [f"α={i} λ=10 k=1" for i in range(len(df))]
    df.loc[0, "label"] = None  # a missing label is skipped, not drawn as "None"
    axes = (ATTACK, UTIL)  # privacy horizontal, utility vertical; chance line at x = .5
    out = plot_front(df, axes, pareto_mask(df, axes), "label", tmp_path / "sub" / "front.png")
    assert out == tmp_path / "sub" / "front.png"
    assert out.stat().st_size > 1000
    image = imread(out)
    assert image.shape[:2] == (round(FIGSIZE[1] * DPI), round(FIGSIZE[0] * DPI))
    assert not math.isclose(float(image[..., :3].std()), 0.0)  # something was drawn


def test_plot_rejects_bad_inputs(tmp_path) -> None:
    df = _frame(THREE)
    with pytest.raises(ValueError):
        plot_front(df, AXES, np.ones(len(df) + 1, dtype=bool), None, tmp_path / "x.png")
    with pytest.raises(ValueError):
        plot_front(df, (UTIL,), np.ones(len(df), dtype=bool), None, tmp_path / "x.png")


# Fronts per α (platform.results.front_groups): (alpha, lam) -> (utility, attack accuracy); the λ = 0 anchor runs as α = 1
PER_ALPHA = {
    (1.0, 0.0): (0.95, 0.90),  # the anchor: in every α's group
    (1.0, 1.0): (0.90, 0.70),
    (1.0, 3.0): (0.60, 0.75),  # dominated by (1, 1)
    (math.inf, 0.3): (0.85, 0.80),  # on α = ∞'s front, dominated by (1, 1) in the joint one
    (math.inf, 1.0): (0.50, 0.55),
}


def _per_alpha(points: dict[tuple[float, float], tuple[float, float]]) -> pd.DataFrame:
    rows = [{"alpha": a, "lam": lam, "adv_steps": 1.0, "name": f"alpha={a:g} lam={lam:g} adv_steps=1",
             UTIL.metric: u, ATTACK.metric: acc} for (a, lam), (u, acc) in points.items()]
    return pd.DataFrame(rows)


def _fronts(points: dict) -> list:
    table = _per_alpha(points)
    return fronts_by(table, table, AXES, "alpha", ("alpha", "lam", "adv_steps"), lambda_zero_anchor)


def test_fronts_per_alpha_share_the_lambda_zero_anchor() -> None:
    groups = _fronts(PER_ALPHA)
    assert [g.value for g in groups] == [1.0, math.inf]
    fronts = {g.value: {(r.alpha, r.lam) for r in g.points.itertuples() if r.pareto_front} for g in groups}
    members = {g.value: {(r.alpha, r.lam) for r in g.points.itertuples()} for g in groups}
    assert members == {1.0: {(1.0, 0.0), (1.0, 1.0), (1.0, 3.0)}, math.inf: {(1.0, 0.0), (math.inf, 0.3), (math.inf, 1.0)}}
    assert fronts == {1.0: {(1.0, 0.0), (1.0, 1.0)}, math.inf: members[math.inf]}
    # by hand: the union of the boxes [0, u] x [acc, 1] of each front
    hv = {1.0: 0.95 * 0.10 + 0.90 * 0.30 - 0.90 * 0.10, math.inf: 0.50 * 0.25 + 0.85 * 0.10 + 0.95 * 0.10}
    assert {g.value: g.hypervolume for g in groups} == pytest.approx(hv)
    assert {g.value: g.hypervolume_normalised for g in groups} == pytest.approx({k: v / 0.5 for k, v in hv.items()})
    metrics = group_metrics(groups)
    assert metrics["front/hypervolume/alpha_inf"] == pytest.approx(hv[math.inf])
    assert metrics["front/hypervolume_normalised/alpha_1"] == pytest.approx(hv[1.0] / 0.5)
    assert metrics["front/size/alpha_1"] == 2 and metrics["front/size/alpha_inf"] == 3


def test_a_value_holding_only_the_shared_anchor_is_no_group_and_seeds_average() -> None:
    points = {k: v for k, v in PER_ALPHA.items() if k[0] != 1.0 or k[1] == 0.0} | {(2.0, 1.0): (0.7, 0.6)}
    assert [g.value for g in _fronts(points)] == [2.0, math.inf]
    # two seeds: the group's hypervolume is the mean of each seed's own front's
    one, two = _per_alpha(points).assign(seed=0), _per_alpha(points).assign(seed=1)
    two[UTIL.metric] = two[UTIL.metric] - 0.1
    trials = pd.concat([one, two], ignore_index=True)
    keys = ("alpha", "lam", "adv_steps", "seed")
    groups = fronts_by(trials, point_table(trials, AXES, keys), AXES, "alpha", keys, lambda_zero_anchor)
    rows = trials[trials["alpha"] != math.inf]
    by_seed = [hypervolume(rows[rows["seed"] == s], AXES) for s in (0, 1)]
    assert groups[0].value == 2.0 and groups[0].hypervolume == pytest.approx(sum(by_seed) / 2)


def test_fronts_by_figure_draws_one_front_per_alpha_and_the_joint_front(tmp_path) -> None:
    groups = _fronts(PER_ALPHA)
    points = _per_alpha(PER_ALPHA)
    joint = points[pareto_mask(points, AXES)]
    fig = fronts_by_figure(groups, joint, AXES)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[:2] == ["α = 1", "α = ∞"] and "joint front" in legend
    labels = sorted(t.get_text() for t in fig.axes[0].texts)
    assert labels == ["λ=0", "λ=0.3", "λ=1", "λ=1"]  # front points; the anchor labelled once; k=1 shared, so dropped
    out = plot_fronts_by(groups, joint, AXES, tmp_path / "front_by_alpha.png")
    assert imread(out).shape[:2] == (round(FIGSIZE[1] * DPI), round(FIGSIZE[0] * DPI))


def test_a_front_draws_the_same_picture_on_a_slow_machine(tmp_path, monkeypatch) -> None:
    rng = np.random.default_rng(0)
    crowded = {f"t{i}": (0.9 + 0.01 * rng.random(), 0.9 + 0.01 * rng.random()) for i in range(80)}
    df = _frame(crowded | {"far": (0.1, 0.5)})  # more labels than their corner holds: the layout never settles
    df["label"] = [f"α={i} λ=1000 k=1" for i in range(len(df))]
    axes = (ATTACK, UTIL)
    fast = plot_front(df, axes, pareto_mask(df, axes), "label", tmp_path / "fast.png").read_bytes()
    steps = adjustText.iterate

    def slow(*args, **kwargs):
        time.sleep(0.001)  # a busy machine: each step of the label layout takes longer
        return steps(*args, **kwargs)

    monkeypatch.setattr(adjustText, "iterate", slow)
    assert plot_front(df, axes, pareto_mask(df, axes), "label", tmp_path / "slow.png").read_bytes() == fast
