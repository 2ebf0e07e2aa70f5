"""Grids as lists of sub-grids (search_spaces.grids): the union of their products, one λ = 0 anchor, overrides."""
from __future__ import annotations

import math

import pytest

from platform.errors import UsageError
from platform.plan.seed_axis import with_seeds
from platform.plan.spec import resolve
from search_spaces import Profile
from search_spaces.amnist import PAPER_LAMBDAS, QUICK_LAMBDAS
from search_spaces.grids import axes, expand, per_value, sub_grids, with_axis

INF = math.inf


def _pairs(points: list[dict]) -> list[tuple[float, float]]:
    return [(p["alpha"], p["lam"]) for p in points]


def test_list_grid_expands_to_the_union_of_its_products() -> None:
    grid = [{"alpha": [1.0], "lam": [0.0, 1.0, 3.0], "k": [1]}, {"alpha": [INF, 2.0], "lam": [0.0, 0.5], "k": [1]}]
    points = expand(sub_grids(grid))
    assert sorted(_pairs(points)) == sorted([(1.0, 0.0), (1.0, 1.0), (1.0, 3.0),
                                             (INF, 0.0), (INF, 0.5), (2.0, 0.0), (2.0, 0.5)])
    assert all(p["k"] == 1 for p in points)
    assert axes(sub_grids(grid)) == {"alpha": [1.0, INF, 2.0], "lam": [0.0, 1.0, 3.0, 0.5], "k": [1]}
    # overlapping sub-grids: the union holds each point once; a plain dict is one sub-grid
    assert len(expand(sub_grids([{"a": [1, 2]}, {"a": [2, 3]}]))) == 3
    assert sub_grids({"a": [1, 2]}) == ({"a": [1, 2]},)


@pytest.mark.parametrize("grid,message", [
    ([], "at least one sub-grid"),
    ([{"a": [1]}, {"b": [1]}], "every sub-grid must name the same axes"),
    ([{"a": []}], "grid axis 'a' needs a non-empty list"),
    ({"a": "xy"}, "grid axis 'a' needs a non-empty list"),
    ([["a", 1]], "a sub-grid must be a dict"),
])
def test_malformed_grids_are_refused_when_the_profile_is_defined(grid, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Profile(description="", config={}, grid=grid, optuna_samples=1)


def test_amnist_quick_runs_each_alpha_at_its_own_lambdas_and_lambda_zero_once() -> None:
    spec = resolve("amnist", "quick", [])
    by_hand = {(1.0, 0.0)} | {(alpha, lam) for alpha, lams in QUICK_LAMBDAS.items() for lam in lams if lam != 0}
    assert sorted(_pairs(spec.grid_points())) == sorted(by_hand) and len(spec.grid_points()) == len(by_hand) <= 9
    assert spec.grid_param == per_value("alpha", "lam", QUICK_LAMBDAS, adv_steps=[1])  # what the parent run records


def test_amnist_fast_is_four_of_the_quick_grid_s_points_where_its_front_bends() -> None:
    fast, quick = (set(_pairs(resolve("amnist", p, []).grid_points())) for p in ("fast", "quick"))
    assert fast == {(1.0, 0.0), (1.0, 100.0), (1.0, 300.0), (INF, 100.0)} and fast < quick


def test_amnist_paper_has_seven_lambdas_per_alpha_and_one_anchor_per_adv_steps() -> None:
    assert sorted(PAPER_LAMBDAS) == [0.5, 1.0, 1.5, 2.0, 5.0, 10.0, INF]
    assert all(len(lams) == 7 and lams[0] == 0 and lams == sorted(lams) for lams in PAPER_LAMBDAS.values())
    points = resolve("amnist", "paper", []).grid_points()
    zeros = [(p["alpha"], p["adv_steps"]) for p in points if p["lam"] == 0]
    assert sorted(zeros) == [(1.0, 1), (1.0, 5)]
    assert len(points) == 2 + 2 * sum(len(lams) - 1 for lams in PAPER_LAMBDAS.values())


@pytest.mark.parametrize("seeds,overrides", [(2, []), (1, ["seed=4,5"])])
def test_one_lambda_zero_trial_per_seed(seeds: int, overrides: list[str]) -> None:
    spec = with_seeds(resolve("amnist", "quick", overrides), seeds, "grid")
    points = spec.grid_points()
    anchors = sorted(p["seed"] for p in points if p["lam"] == 0)
    assert anchors == sorted(spec.grid["seed"]) and len(anchors) == 2
    assert all(p["alpha"] == 1.0 for p in points if p["lam"] == 0)
    assert len(points) == 2 * len(resolve("amnist", "quick", []).grid_points())
    assert all(sub["seed"] == spec.grid["seed"] for sub in spec.grids)  # the seed axis is in every sub-grid


def test_an_override_replaces_the_axis_in_every_sub_grid() -> None:
    spec = resolve("amnist", "quick", ["lam=0,5", "epochs=2"])
    assert [sub["lam"] for sub in spec.grids] == [[0.0, 5.0], [0.0, 5.0]]
    assert [sub["alpha"] for sub in spec.grids] == [[1.0], [INF]]  # the other axes keep their per-α values
    assert sorted(_pairs(spec.grid_points())) == [(1.0, 0.0), (1.0, 5.0), (INF, 5.0)]
    assert spec.config["epochs"] == 2 and "lam" not in spec.config
    # sub-grids an override makes identical merge into one
    assert resolve("amnist", "quick", ["alpha=2", "lam=1"]).grids == ({"alpha": [2.0], "lam": [1.0], "adv_steps": [1]},)
    assert with_axis(({"a": [1]}, {"a": [2]}), "b", [0]) == ({"a": [1], "b": [0]}, {"a": [2], "b": [0]})


def test_a_bad_override_of_a_list_grid_is_one_line() -> None:
    with pytest.raises(UsageError, match=r"lam: must be in \[0, 1000000000\] \(got -1\)"):
        resolve("amnist", "quick", ["lam=1,-1"])
