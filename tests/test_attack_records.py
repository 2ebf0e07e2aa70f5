"""The attackers' data budget: releases of more records than the game trained on, members kept apart, logged beside
every number."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from attacks.attackers.deep import DeepAttacker
from attacks.attackers.thickness import ThicknessAttacker
from core.config_errors import ConfigError
from trainables.noise.mechanism import NoiseBaseline
from trainables.releaser.config import ReleaserConfig
from trainables.releaser.mechanism import Releaser

SMALL = {"n_train": 200, "n_test": 100, "attack_epochs": 1, "attack_patience": 1}


def rows_in(rows: torch.Tensor, pool: torch.Tensor) -> torch.Tensor:
    """For each image of ``rows``, whether the same image occurs in ``pool``."""
    return (rows.flatten(1)[:, None, :] == pool.flatten(1)[None, :, :]).all(-1).any(1)


def test_fewer_records_than_the_game_trained_on_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"attack_records: must be at least n_train \(200\)"):
        ReleaserConfig(n_train=200, attack_records=100)


def test_attackers_train_on_the_games_records_then_records_it_never_saw() -> None:
    mechanism = NoiseBaseline.create({"sigma": 0.3, **SMALL, "attack_records": 500})
    mechanism.setup()
    records, train = mechanism.attack_train, mechanism.train
    assert len(records) == 500 and torch.equal(records.x[:200], train.x) and torch.equal(records.s[:200], train.s)
    assert not rows_in(records.x[200:], train.x).any()  # the extra records are outside the game's training split
    assert not rows_in(records.x[200:], mechanism.test.x).any()  # and never the test split the attackers are scored on
    data = mechanism.farm_inputs().data
    assert len(data.train_x) == 500 and torch.equal(data.raw_train_x, records.x) and torch.equal(data.train_u, records.u)
    assert DeepAttacker(mechanism.cfg).run(data).metrics["train_records"] == 500.0
    assert ThicknessAttacker().run(data).metrics["train_records"] == 500.0


def test_without_a_budget_the_attackers_see_the_games_split_only() -> None:
    mechanism = NoiseBaseline.create({"sigma": 0.3, **SMALL})
    mechanism.setup()
    assert mechanism.attack_train is mechanism.train


def test_membership_members_stay_the_games_own_records(tmp_path: Path) -> None:
    mechanism = Releaser.create({"alpha": 1.0, "lam": 1.0, **SMALL, "pretrain_epochs": 0, "epochs": 1, "width": 4,
                                 "attack_records": 450})
    mechanism.setup()
    mechanism.checkpoint_dir = str(tmp_path / "trial" / "checkpoint_000001")
    inputs = mechanism.farm_inputs()
    assert len(inputs.data.train_x) == 450
    for target in inputs.targets:  # members: exactly the 200 released records the game trained on
        assert len(target.member_x) == 200 and torch.equal(target.member_x, inputs.data.train_x[:200])


def test_a_budget_beyond_the_data_set_is_one_line() -> None:
    mechanism = NoiseBaseline.create({"sigma": 0.3, **SMALL, "attack_records": 10_000_000})
    mechanism.setup()
    with pytest.raises(ValueError, match=r"^attack_records: amnist holds \d+ training records \(200 in the game's split\)"):
        _ = mechanism.attack_train
