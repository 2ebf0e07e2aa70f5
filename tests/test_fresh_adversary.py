"""The α-MI paper's attacker: the game's adversary architecture trained once on the release, untuned, in the farm."""
from __future__ import annotations

import pytest
import torch
from conftest import SharedSweep, store

from attacks.attackers.fresh_adversary import FreshAdversary
from attacks.attackers.registry import REGISTRY, primary_metric
from attacks.base import AttackInput, CheckpointInputs
from attacks.farm.checkpoint import check_needs
from core.nets import InputNorm, game_classifier
from trainables.releaser.config import ReleaserConfig


def release(n: int, signal: float, seed: int = 0) -> AttackInput:
    """AMNIST-shaped images whose centre is brighter for S = 1 by ``signal``, the digit as the public utility."""
    gen = torch.Generator().manual_seed(seed)
    s = torch.arange(n) % 2
    x = torch.rand(n, 1, 28, 28, generator=gen) * 0.3
    x[s == 1, :, 10:18, 10:18] += signal
    u = torch.randint(0, 10, (n,), generator=gen)
    half = n // 2
    return AttackInput(x[:half], s[:half], x[half:], s[half:], num_classes=2, train_u=u[:half], test_u=u[half:],
                       dataset="amnist")


def test_it_is_the_games_adversary_built_from_the_trials_settings() -> None:
    cfg = ReleaserConfig(width=8, player_input_norm=True, lr=3e-3, batch_size=32, attack_epochs=5, seed=4)
    attacker = REGISTRY["fresh_adversary"].build(cfg, False)
    assert attacker == FreshAdversary(width=8, input_norm=True, epochs=5, batch_size=32, lr=3e-3, seed=4)
    assert primary_metric("fresh_adversary") == "attack/fresh_adversary/accuracy"
    # the architecture the releaser gives its adversary: game_classifier(S classes, width, shape, player_input_norm)
    network, adversary = attacker.network(release(40, 0.5)), game_classifier(2, 8, (1, 28, 28), True)
    assert isinstance(network, InputNorm)
    assert {k: v.shape for k, v in network.state_dict().items()} == {
        k: v.shape for k, v in adversary.state_dict().items()}


def test_trained_once_it_reads_a_leaky_release_and_not_a_private_one() -> None:
    attacker = FreshAdversary(width=8, epochs=4, batch_size=32)
    leaky = attacker.run(release(400, 0.5))
    assert leaky.metrics["accuracy"] > 0.9
    # one training on the whole released training split: no validation split held out, no family, no early stopping
    assert leaky.metrics["train_records"] == 200 and leaky.metrics["epochs"] == 4
    assert not {"val_accuracy", "candidates", "best_epoch"} & set(leaky.metrics)
    private = attacker.run(release(400, 0.0))
    assert abs(private.metrics["accuracy"] - 0.5) < 0.12  # nothing to read: chance within the test noise (n = 200)
    assert attacker.run(release(400, 0.5)).metrics == leaky.metrics  # one seed, one result


def test_the_farm_skips_it_on_data_that_is_not_amnist() -> None:
    eco_like = AttackInput(torch.rand(20, 24), torch.randint(0, 2, (20, 24)), torch.rand(20, 24),
                           torch.randint(0, 2, (20, 24)), num_classes=2, dataset="eco")
    skipped = check_needs([REGISTRY["fresh_adversary"]], CheckpointInputs(eco_like))
    assert list(skipped) == ["fresh_adversary"] and "AMNIST" in skipped["fresh_adversary"]


@pytest.mark.slow  # end to end through Ray, MLflow and the farm: the session's farm sweep, about a minute
def test_a_sweep_runs_it_on_every_checkpoint(farm_sweep: SharedSweep) -> None:
    client = store(farm_sweep.folder)
    exp = client.get_experiment_by_name("putlab-amnist")
    (trial,) = client.search_runs([exp.experiment_id], filter_string="tags.`putlab.role` = 'trial'")
    read = client.get_metric_history(trial.info.run_id, "attack/fresh_adversary/accuracy")
    assert sorted(m.step for m in read) == [1, 2] and all(0.0 <= m.value <= 1.0 for m in read)  # both checkpoints
    assert trial.data.metrics["attack/fresh_adversary/epochs"] == 1  # the smoke profile's attack_epochs, trained once
