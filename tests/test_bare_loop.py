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

from trainables.shared.release_map import ReleaseMap

WORKER_MODULES = ("trainables.releaser.mechanism", "trainables.privatizer.mechanism", "trainables.cloak.mechanism",
                  "trainables.eco.mechanism", "trainables.membership.mechanism", "trainables.privatizer.gmm",
                  "trainables.shared.tune_loop", "attacks.farm.checkpoint", "search_spaces.amnist",
                  "search_spaces.amnist_privatizer", "search_spaces.cloak_mnist", "search_spaces.eco",
                  "search_spaces.eco_si", "search_spaces.adult_membership", "search_spaces.gmm")



def test_worker_code_imports_without_ray_or_mlflow() -> None:
    blocked = "import sys; sys.modules['ray'] = None; sys.modules['mlflow'] = None; "
    code = blocked + "; ".join(f"import {m}" for m in WORKER_MODULES)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("mechanism, attackers", [
    ("amnist", {"deep_raw", "thickness", "yeom", "rmia", "lira"}),
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
