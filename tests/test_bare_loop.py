"""The game loops, the farm's attackers and the served release run without Ray or MLflow (as on a bare GPU machine).

``benchmarks/bench_gpu.py`` measures every mechanism that way on a GPU; these tests run its bare trial on the CPU,
so the path it takes stays working on machines without one.
"""
from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch
from conftest import REPO, benchmark_script

from search_spaces import presets
from trainables.shared.release_map import ReleaseMap

WORKER_MODULES = ("trainables.releaser.mechanism", "trainables.privatizer.mechanism", "trainables.cloak.mechanism",
                  "trainables.eco_releaser.mechanism", "trainables.membership.mechanism", "trainables.gmm.mechanism",
                  "trainables.shared.tune_loop", "attacks.farm.checkpoint", "search_spaces.amnist",
                  "search_spaces.amnist_privatizer", "search_spaces.cloak_mnist", "search_spaces.eco",
                  "search_spaces.eco_si", "search_spaces.adult_membership", "search_spaces.gmm")



def test_worker_code_imports_without_ray_or_mlflow() -> None:
    blocked = "import sys; sys.modules['ray'] = None; sys.modules['mlflow'] = None; "
    code = blocked + "; ".join(f"import {m}" for m in WORKER_MODULES)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("mechanism, attackers", [
    pytest.param("amnist", {"deep_raw", "thickness", "yeom", "rmia", "lira"},  # 26 s on 2 busy cores: under -m slow
                 marks=pytest.mark.slow),
    ("eco-si", {"side_info", "si_only"}),
])
def test_bare_trial_trains_attacks_and_serves_on_cpu(mechanism: str, attackers: set[str]) -> None:
    result = benchmark_script("bench_gpu").bare_trial(mechanism, "smoke", torch.device("cpu"))
    assert result.epochs >= 1 and len(result.epoch_train_s) == result.epochs
    assert set(result.attack_s) == attackers
    accuracies = {k: v for k, v in result.attack_metrics.items() if k.endswith("accuracy")}
    assert accuracies and all(0.0 <= v <= 1.0 for v in accuracies.values())
    assert all(math.isfinite(v) for v in result.attack_metrics.values())
    assert result.default_kernels_diff == 0.0  # CPU kernels are deterministic


def test_release_runs_with_deterministic_kernels_and_restores_the_flags() -> None:
    seen = []

    def apply(module: torch.nn.Module, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        seen.append((torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark))
        return module(x + torch.rand(x.shape, generator=generator))

    before = (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    served = ReleaseMap("probe", (3,), None, torch.nn.Linear(3, 3), apply)
    x = torch.randn(4, 3)
    assert torch.equal(served.release(x, seed=1), served.release(x, seed=1))
    assert not torch.equal(served.release(x, seed=1), served.release(x, seed=2))
    assert seen == [(True, False)] * 4
    assert (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark) == before


@pytest.mark.slow  # three games: 15 s on 2 busy cores: runs under -m slow (CI runs both)
def test_one_seeds_game_gives_the_same_weights_twice_and_another_seed_does_not() -> None:
    benchmark_script("bench_gpu")  # same_seed reads its config from there
    same_seed = benchmark_script("same_seed")
    preset = presets()["amnist"]
    config = preset.validate({**benchmark_script("bench_gpu").preset_config("amnist", "smoke", None), "alpha": 1.0,
                              "lam": 1000.0, "seed": 0, "threads": 1})
    first, again = same_seed.run_game(config, 0), same_seed.run_game(config, 1)
    assert same_seed.largest_difference(first, again) == 0.0
    other = same_seed.run_game(preset.validate({**config, "seed": 1}), 2)
    assert same_seed.largest_difference(first, other) > 0.01
