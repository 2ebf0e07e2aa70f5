"""The mechanisms' data through the registry: the image mechanisms on a data set chosen by name (a CIFAR-10 written in its
published layout), and Cloak, ECO and the membership models on theirs."""
from __future__ import annotations

import importlib
import pickle
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from attacks.attackers.registry import REGISTRY
from attacks.farm.checkpoint import check_needs
from core.data import get_dataset, load_amnist
from core.data.adult_files import load_adult
from core.data.eco_files import split_days, window_days
from core.data.eco_synthetic import synthetic_eco
from core.data.registry import LoadRequest, Splits
from core.data.sets.adult import adult_records
from trainables.cloak.config import CloakConfig
from trainables.cloak.data import load_task_data as load_cloak_data
from trainables.cloak.mechanism import Cloak
from trainables.cloak.target import pad32
from trainables.eco_releaser.config import EcoConfig
from trainables.eco_releaser.mechanism import EcoReleaser
from trainables.eco_releaser.windows import load_data as load_eco_data
from trainables.membership.mechanism import Membership
from trainables.privatizer.config import PrivatizerConfig
from trainables.privatizer.mechanism import Privatizer
from trainables.releaser.config import ReleaserConfig
from trainables.releaser.mechanism import Releaser
from trainables.shared.tune_loop import epochs, write_checkpoint

NAMES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
TINY = {"epochs": 1, "pretrain_epochs": 1, "attack_epochs": 1, "width": 4, "batch_size": 16, "samples_in_figure": 4}


def write_batch(path: Path, pixels: np.ndarray, labels: list[int]) -> None:
    """One CIFAR-10 batch as published: a pickled dict of uint8 rows (3×32×32 each) and labels."""
    path.write_bytes(pickle.dumps({"batch_label": path.name, "labels": labels, "data": pixels.reshape(len(labels), -1),
                                   "filenames": [f"{i}.png" for i in range(len(labels))]}, protocol=2))


@pytest.fixture(scope="module")
def cifar(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 training and 20 test images: every class, so S (animal vs vehicle) and U (class) are both present."""
    root = tmp_path_factory.mktemp("cifar")
    folder = root / "cifar-10-batches-py"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for i in range(5):
        labels = [(i * 12 + j) % 10 for j in range(12)]
        write_batch(folder / f"data_batch_{i + 1}", rng.integers(0, 256, (12, 3, 32, 32), dtype=np.uint8), labels)
    write_batch(folder / "test_batch", rng.integers(0, 256, (20, 3, 32, 32), dtype=np.uint8), [j % 10 for j in range(20)])
    (folder / "batches.meta").write_bytes(pickle.dumps({"label_names": NAMES, "num_cases_per_batch": 12}, protocol=2))
    return root


@pytest.fixture()
def unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tiny files are not the published ones: the mechanisms read them through torchvision (the entry's default
    backend) with its MD5 checks off, as a user does with ``checksums=False`` for a hand-made subset."""
    monkeypatch.setitem(get_dataset("cifar10").options, "checksums", False)


@pytest.mark.parametrize("mechanism, config", [(Releaser, ReleaserConfig), (Privatizer, PrivatizerConfig)])
def test_image_mechanism_plays_on_cifar10_by_name(cifar: Path, mechanism: type, config: type, tmp_path: Path,
                                                  unchecked: None) -> None:
    settings = {**TINY, "dataset": "cifar10", "data_root": str(cifar)}
    played = mechanism(config.from_dict(settings), torch.device("cpu"))
    (outcome,) = list(epochs(played))
    assert 0.0 <= outcome.metrics["utility/accuracy"] <= 1.0 and "attack/deep/accuracy" in outcome.metrics
    assert "attack/thickness/accuracy" not in outcome.metrics  # AMNIST's rule has no meaning on CIFAR-10
    released = played.released_test
    assert released.shape == (20, 3, 32, 32) and released.min() >= 0.0 and released.max() <= 1.0
    write_checkpoint(played, tmp_path)
    farm = mechanism.checkpoint_inputs(settings, str(tmp_path))
    assert farm.data.num_classes == 2 and farm.data.train_x.shape[1:] == (3, 32, 32)
    assert farm.data.train_u is not None and set(farm.data.train_u.tolist()) == set(range(10))
    assert {t.name for t in farm.targets} == {"utility", "adversary"}
    skipped = check_needs([REGISTRY["thickness"], REGISTRY["deep"]], farm)  # the farm skips AMNIST's rule, says why
    assert list(skipped) == ["thickness"] and "AMNIST" in skipped["thickness"]
    served = mechanism.load_release(settings, str(tmp_path))
    assert served.input_shape == (3, 32, 32)


def test_counts_and_baselines_follow_the_entry(cifar: Path, unchecked: None) -> None:
    config = {**TINY, "dataset": "cifar10", "data_root": str(cifar)}
    counts = Releaser.data_counts(config)
    assert counts["train_available"] == 60 and counts["test_available"] == 20
    baselines = Releaser.raw_references(config)
    assert "baseline/attack/deep_raw/accuracy" in baselines and "baseline/attack/thickness/accuracy" not in baselines


@pytest.mark.parametrize("name, message", [("celebx", "unknown data set 'celebx'"),
                                           ("adult", "not an image data set with class labels")])
def test_a_data_set_the_mechanism_cannot_use_is_one_line(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        Releaser.data_counts({**TINY, "dataset": name})
    assert "\n" not in str(caught.value)
    assert get_dataset("cifar10").input_shape == (3, 32, 32)


# ---------------------------------------------------------------- Cloak, ECO and Adult: their data through the registry


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], list[LoadRequest]]:
    """``loads(name)``: the requests the registry entry ``name`` serves from now on (its loader wrapped to record them)."""

    def spy(name: str) -> list[LoadRequest]:
        entry, seen = get_dataset(name), []

        def loader(request: LoadRequest) -> Splits:
            seen.append(request)
            return entry.loader(request)

        wrapped = replace(entry, loader=loader)
        monkeypatch.setattr(importlib.import_module(f"core.data.sets.{name}"), "DATASET", wrapped)
        return seen

    return spy


def test_cloak_reads_its_data_set_through_the_registry(loads: Callable[[str], list[LoadRequest]]) -> None:
    seen = loads("mnist32")
    cfg = CloakConfig(n_train=50, n_test=20, seed=1)
    train, test = load_cloak_data(cfg, torch.device("cpu"))
    assert len(seen) == 1 and (seen[0].n_train, seen[0].n_test, seen[0].seed) == (50, 20, 1)
    # the same bytes as AMNIST read directly and padded to 32×32
    direct_train, direct_test, counts = load_amnist(n_train=50, n_test=20, seed=1)
    assert torch.equal(train.x, pad32(direct_train.x)) and torch.equal(test.x, pad32(direct_test.x))
    assert torch.equal(train.thick, direct_train.thick) and torch.equal(test.digit, direct_test.digit)
    assert Cloak.data_counts(cfg.as_dict()) == counts and len(seen) == 2


def test_eco_reads_its_data_set_through_the_registry(loads: Callable[[str], list[LoadRequest]]) -> None:
    seen = loads("eco")
    cfg = EcoConfig(households=2, days=28, window_stride_hours=6, data_seed=3)
    train, test, (mean, std) = load_eco_data(cfg, torch.device("cpu"))
    assert len(seen) == 1 and seen[0].options["window_stride_hours"] == 6 and seen[0].options["data_seed"] == 3
    # the same bytes as the synthetic days split and windowed directly
    days = synthetic_eco(2, 28, 3)
    train_idx, test_idx = split_days(days, cfg.test_fraction, 3)
    assert torch.equal(train.watts, window_days(days.subset(train_idx), 24, 6).consumption)
    assert torch.equal(test.occupancy, window_days(days.subset(test_idx), 24, 6).occupancy)
    assert (mean, std) == (float(days.consumption[train_idx].mean()), float(days.consumption[train_idx].std()))
    assert EcoReleaser.data_counts(cfg.as_dict())["eco_train_days"] == len(train_idx) and len(seen) == 2


def test_the_membership_models_read_adult_through_the_registry(loads: Callable[[str], list[LoadRequest]]) -> None:
    seen = loads("adult")
    counts = Membership.data_counts({"n": 500})
    assert len(seen) == 1 and seen[0].root is None  # the offline wheel: no data folder
    data = load_adult()
    assert counts == {"adult_train": len(data.train_x), "adult_test": len(data.test_x), "adult_dropped": data.n_dropped,
                      "members": 500, "nonmembers": 500}
    records = adult_records(get_dataset("adult").load())
    assert records.train_x.shape[1] == 104 and np.array_equal(records.train_x, data.train_x)  # every column, sex too
    with pytest.raises(TypeError, match="not a load of the adult data set"):
        adult_records(get_dataset("mnist32").load(n_train=2, n_test=2))
