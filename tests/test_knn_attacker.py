"""The k-NN attacker, added through the registry only: it finds S where X carries it and stays at chance where not."""
from __future__ import annotations

import pytest
import torch

from attacks.attackers.knn import KnnAttacker
from attacks.base import AttackInput, CheckpointInputs
from attacks.farm.checkpoint import attack_inputs
from core.config import TrialConfig


def images(n: int, s: torch.Tensor, signal: float, seed: int) -> torch.Tensor:
    """AMNIST-like [n, 1, 8, 8] images: noise, plus a faint thick stroke (three middle columns) where S = 1."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(n, 1, 8, 8, generator=gen) * 0.5
    x[:, :, :, 3:6] += signal * s.view(-1, 1, 1, 1).float()
    return x


def split(signal: float, n_train: int = 600, n_test: int = 400) -> AttackInput:
    gen = torch.Generator().manual_seed(7)
    train_s, test_s = torch.randint(0, 2, (n_train,), generator=gen), torch.randint(0, 2, (n_test,), generator=gen)
    return AttackInput(images(n_train, train_s, signal, 1), train_s, images(n_test, test_s, signal, 2), test_s, num_classes=2)


def test_knn_through_the_farm_beats_chance_where_x_carries_s() -> None:
    report = attack_inputs(CheckpointInputs(split(signal=0.1), config=TrialConfig(seed=0)), ["knn"])
    assert report.metrics["attack/knn/accuracy"] > 0.9
    assert report.metrics["attack/knn/accuracy/ci_low"] > 0.85
    assert report.metrics["attack/knn/k"] in KnnAttacker().ks
    assert set(report.seconds) == {"knn"} and not report.skipped


def test_knn_stays_at_chance_where_s_is_independent_of_x() -> None:
    metrics = KnnAttacker().run(split(signal=0.0)).metrics
    assert abs(metrics["accuracy"] - 0.5) < 0.08
    assert metrics["accuracy/ci_low"] < 0.5 < metrics["accuracy/ci_high"]


def test_knn_predicts_per_step_labels() -> None:
    data = split(signal=0.1)
    per_step = AttackInput(data.train_x, torch.stack([data.train_s, 1 - data.train_s], 1), data.test_x,
                           torch.stack([data.test_s, 1 - data.test_s], 1), num_classes=2)
    metrics = KnnAttacker().run(per_step).metrics
    assert metrics["accuracy"] > 0.9 and metrics["accuracy_within_step"] > 0.9


def test_knn_rejects_an_empty_k_grid() -> None:
    with pytest.raises(ValueError, match="k values >= 1"):
        KnnAttacker(ks=())
