"""The farm's deep attacker refitted at other stopping budgets (``benchmarks/farm_patience.py``), on a real release."""
from __future__ import annotations

import argparse

import pytest
from conftest import benchmark_script

from attacks.attackers.deep import DeepAttacker
from trainables.noise.mechanism import NoiseBaseline

BUDGET = {"attack_epochs": 6, "attack_patience": 2, "attack_width_factors": (1.0,), "attack_lrs": (1e-3,),
          "attack_augment": (False,), "attack_search": "full"}


def test_a_refit_at_the_trials_own_budget_is_the_farms_fit_and_another_budget_is_applied() -> None:
    mechanism = NoiseBaseline.create({"sigma": 0.5, "n_train": 600, "n_test": 300, "seed": 0, **BUDGET})
    mechanism.setup()
    data = mechanism.farm_inputs().data
    farm = DeepAttacker(mechanism.cfg, cache_dir=None).run(data).metrics
    refit = benchmark_script("farm_patience").refit
    same = refit(data, mechanism.cfg, patience=2, cap=6)
    assert same["accuracy"] == farm["accuracy"] and same["epochs"] == farm["epochs"]
    one = refit(data, mechanism.cfg, patience=1, cap=1)
    assert one["epochs"] == 1 and one["capped"] == 1.0


def test_budgets_take_patience_cap_pairs_and_refuse_anything_else() -> None:
    budgets = benchmark_script("farm_patience").budgets_list
    assert budgets("4/24,8/48") == [(4, 24), (8, 48)]
    for bad in ("4", "4/0", "4/24,", "a/b", "4/24/2"):
        with pytest.raises(argparse.ArgumentTypeError, match="patience/cap pairs"):
            budgets(bad)
