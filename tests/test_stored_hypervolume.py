"""The hypervolume a sweep logs on its parent run equals the one recomputed, independently, from its stored trials.

A real sqlite store: an amnist sweep's trials are child runs, ``platform.publish.publish`` logs ``front/hypervolume``
on the parent; the test reads the child runs back with a plain ``RawStore`` and computes the 2-D hypervolume by
inclusion-exclusion (not putlab's sweep), per seed, and compares.
"""
from __future__ import annotations

import math
from itertools import combinations

import pytest
from stores import RawStore

from platform.publish import publish
from platform.results import tracking
from search_spaces import presets

UTILITY, ATTACK = "utility/fresh_accuracy", "attack/max/accuracy"  # amnist's axes: utility up from 0, attack down from 1
U_BOUND, A_BOUND, U_IDEAL, A_IDEAL = 0.0, 1.0, 1.0, 0.5

# (alpha, lam, utility, attack) per seed. Seed 0 by hand, axes bounded by utility 0 and attack 1, each trial
# dominating the box [0, u] x [a, 1]: (0.6, 0.7) lies inside (0.7, 0.6)'s box and adds nothing; the staircase of the
# other three, by attack: [0.55, 0.6) at width 0.5, [0.6, 0.8) at 0.7, [0.8, 1] at 0.9 ->
# 0.05 * 0.5 + 0.2 * 0.7 + 0.2 * 0.9 = 0.025 + 0.14 + 0.18 = 0.345 (normalised by the box 1 x 0.5: 0.69).
SEED_0 = [(2.0, 0.0, 0.90, 0.80), (2.0, 10.0, 0.70, 0.60), (2.0, 30.0, 0.60, 0.70), (math.inf, 3.0, 0.50, 0.55)]
SEED_0_BY_HAND = 0.345
SEED_1 = [(2.0, 0.0, 0.88, 0.82), (2.0, 10.0, 0.72, 0.58), (2.0, 30.0, 0.65, 0.66), (math.inf, 3.0, 0.40, 0.56)]


def hypervolume_2d(points: list[tuple[float, float]]) -> float:
    """Area of the union of the boxes [U_BOUND, u] x [a, A_BOUND], by inclusion-exclusion over every subset (the
    boxes share a corner, so a subset's intersection is [U_BOUND, min u] x [max a, A_BOUND])."""
    inside = [(u, a) for u, a in points if u > U_BOUND and a < A_BOUND]
    area = 0.0
    for k in range(1, len(inside) + 1):
        for subset in combinations(inside, k):
            area += (-1) ** (k + 1) * (min(u for u, _ in subset) - U_BOUND) * (A_BOUND - max(a for _, a in subset))
    return area


def add_trial(client: RawStore, exp_id: str, parent_id: str, alpha: float, lam: float, metrics: dict[str, float],
              seed: int | None = None, status: str = "FINISHED") -> None:
    """One trial's child run, as the sweep's trial logger leaves it."""
    name = f"alpha={alpha:g} lam={lam:g} adv_steps=1" + (f" seed={seed}" if seed is not None else "")
    run = client.create_run(exp_id, run_name=name, tags={"mlflow.parentRunId": parent_id, tracking.TAG_PARENT: parent_id,
                                                          tracking.TAG_TRIAL: name, tracking.TAG_ROLE: "trial"})
    params = {"alpha": alpha, "lam": lam, "adv_steps": 1} | ({"seed": seed} if seed is not None else {})
    client.log_params(run.info.run_id, params)
    client.log_metrics(run.info.run_id, metrics, step=4)
    client.set_terminated(run.info.run_id, status)


def make_sweep(client: RawStore, name: str, seeds: dict[int | None, list[tuple[float, float, float, float]]]) -> str:
    """A published amnist sweep with the given trials per seed, plus two trials the hypervolume must leave out: a
    failed one that would dominate every other, and a finished one without the attack axis."""
    exp_id = client.ensure_experiment("putlab-amnist")
    parent_id, _ = client.start_parent(exp_id, name, {"preset": "amnist", "profile": "quick"})
    for seed, trials in seeds.items():
        for alpha, lam, utility, attack in trials:
            add_trial(client, exp_id, parent_id, alpha, lam, {UTILITY: utility, ATTACK: attack}, seed)
        add_trial(client, exp_id, parent_id, math.inf, 100.0, {UTILITY: 0.99, ATTACK: 0.51}, seed, status="FAILED")
        add_trial(client, exp_id, parent_id, math.inf, 300.0, {UTILITY: 0.95}, seed)
    publish(client, parent_id, presets()["amnist"])
    client.set_terminated(parent_id, "FINISHED")
    return parent_id


def stored_points(client: RawStore, parent_id: str) -> dict[str | None, list[tuple[float, float]]]:
    """(utility, attack) of the parent's finished children that report both axes, by their seed param (None: none)."""
    exp_id = client.get_run(parent_id).info.experiment_id
    by_seed: dict[str | None, list[tuple[float, float]]] = {}
    for run in client.search_runs([exp_id], filter_string=f"tags.mlflow.parentRunId = '{parent_id}'"):
        metrics = run.data.metrics
        if run.info.status == "FINISHED" and UTILITY in metrics and ATTACK in metrics:
            by_seed.setdefault(run.data.params.get("seed"), []).append((metrics[UTILITY], metrics[ATTACK]))
    return by_seed


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> RawStore:
    return RawStore.open(f"sqlite:///{tmp_path_factory.mktemp('hypervolume') / 'mlflow.db'}")


def test_the_hand_computed_case() -> None:
    assert hypervolume_2d([(u, a) for *_, u, a in SEED_0]) == pytest.approx(SEED_0_BY_HAND)
    assert hypervolume_2d([(0.5, 0.5)]) == pytest.approx(0.25) and hypervolume_2d([(0.5, 1.0), (0.0, 0.5)]) == 0.0


def test_one_seed_logged_hypervolume_is_the_stored_trials_front(store: RawStore) -> None:
    parent_id = make_sweep(store, "amnist-one-seed", {None: SEED_0})
    (points,) = stored_points(store, parent_id).values()
    assert len(points) == 4  # the failed trial and the one without the attack axis are not among them
    logged = store.get_run(parent_id).data.metrics
    assert logged["front/hypervolume"] == pytest.approx(hypervolume_2d(points)) == pytest.approx(SEED_0_BY_HAND)
    box = (U_IDEAL - U_BOUND) * (A_BOUND - A_IDEAL)
    assert logged["front/hypervolume_normalised"] == pytest.approx(SEED_0_BY_HAND / box)
    assert logged["front/trials"] == 6 and logged["front/size"] == 3  # every trial in the table; (0.6, 0.7) is dominated
    counted = hypervolume_2d([*points, (0.99, 0.51)])  # control: counting the failed trial changes the number
    assert counted > SEED_0_BY_HAND + 0.1


def test_two_seeds_logged_hypervolume_is_the_mean_of_each_seeds_own(store: RawStore) -> None:
    parent_id = make_sweep(store, "amnist-two-seeds", {0: SEED_0, 1: SEED_1})
    stored = stored_points(store, parent_id)
    assert sorted(stored) == ["0", "1"] and all(len(points) == 4 for points in stored.values())
    per_seed = {seed: hypervolume_2d(points) for seed, points in stored.items()}
    logged = store.get_run(parent_id).data.metrics
    assert logged["front/hypervolume"] == pytest.approx((per_seed["0"] + per_seed["1"]) / 2)
    assert logged["front/hypervolume/seed_0"] == pytest.approx(per_seed["0"]) == pytest.approx(SEED_0_BY_HAND)
    assert logged["front/hypervolume/seed_1"] == pytest.approx(per_seed["1"])
    assert logged["front/hypervolume_normalised"] == pytest.approx(logged["front/hypervolume"] / 0.5)
    # controls: the other readings of "the front's hypervolume" give other numbers here, so the test tells them apart
    pooled = hypervolume_2d(stored["0"] + stored["1"])  # one front over both seeds' trials
    means = hypervolume_2d([((u0 + u1) / 2, (a0 + a1) / 2) for (*_, u0, a0), (*_, u1, a1) in zip(SEED_0, SEED_1, strict=True)])
    assert min(abs(logged["front/hypervolume"] - other) for other in (pooled, means, per_seed["1"])) > 1e-3
    assert logged["front/hypervolume/of_means"] == pytest.approx(means)

