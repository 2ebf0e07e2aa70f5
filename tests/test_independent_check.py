"""The independent strength check (``benchmarks/independent_check.py``) against the farm it checks, on real releases."""
from __future__ import annotations

import argparse

import pytest
import torch
from conftest import benchmark_script

from attacks.attackers.deep import DeepAttacker
from trainables.noise.mechanism import NoiseBaseline

# A farm weakened on purpose: its deep family cut to one member trained for one epoch.
WEAK_FARM = {"attack_epochs": 1, "attack_patience": 1, "attack_width_factors": (1.0,), "attack_lrs": (1e-3,),
             "attack_augment": (False,)}



def release(sigma: float, n_train: int = 1200):
    """The Gaussian-noise mechanism's release of ``n_train`` AMNIST training records and 600 test records."""
    mechanism = NoiseBaseline.create({"sigma": sigma, "n_train": n_train, "n_test": 600, "seed": 0, **WEAK_FARM})
    mechanism.setup()
    return mechanism.cfg, mechanism.farm_inputs().data


@pytest.mark.slow  # a farm and an independent attacker: 17 s on 2 busy cores: runs under -m slow (CI runs both)
def test_the_independent_check_beats_a_deliberately_weakened_farm() -> None:
    check = benchmark_script("independent_check")
    cfg, data = release(0.5)
    weak = DeepAttacker(cfg, cache_dir=None).run(data).metrics["accuracy"]
    strong = check.independent_accuracy(data.train_x, data.train_s, data.test_x, data.test_s, 0)
    assert strong.epochs > 1 and strong.interval[0] < strong.accuracy < strong.interval[1]
    assert strong.accuracy > 0.75 and strong.accuracy > weak + 0.05, (strong, weak)


def test_the_independent_check_reads_chance_where_the_release_holds_nothing() -> None:
    _, data = release(100.0, n_train=600)  # clipped to [0, 1]: every pixel a coin flip
    strong = benchmark_script("independent_check").independent_accuracy(data.train_x, data.train_s, data.test_x, data.test_s, 0)
    assert abs(strong.accuracy - 0.5) < 0.07


def test_records_take_counts_or_all_and_refuse_anything_else() -> None:
    records = benchmark_script("independent_check").records_list
    assert records("5000,12500,all") == ["5000", "12500", "all"]
    for bad in ("0", "5000,", "many", "-3"):
        with pytest.raises(argparse.ArgumentTypeError, match="record counts >= 1 or 'all'"):
            records(bad)


def test_rounding_keeps_what_an_image_file_of_that_many_bits_keeps() -> None:
    rounded = benchmark_script("independent_check").rounded
    x = torch.tensor([0.0, 0.5, 0.25 / 255, 0.75 / 255, 0.999, 1.2, -0.1])
    assert torch.equal(rounded(x, None), x)
    assert torch.allclose(rounded(x, 8), torch.tensor([0.0, 128 / 255, 0.0, 1 / 255, 1.0, 1.0, 0.0]))
    assert torch.allclose(rounded(x, 1), torch.tensor([0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0]))  # 0.5 rounds to even
