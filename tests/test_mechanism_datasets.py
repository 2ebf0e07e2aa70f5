"""The image mechanisms on a data set chosen by name: a CIFAR-10 written in its published layout, through the registry."""
from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from attacks.farm import check_needs
from attacks.registry import REGISTRY
from core.data import get_dataset
from trainables.privatizer.config import PrivatizerConfig
from trainables.privatizer.mechanism import Privatizer
from trainables.releaser.config import ReleaserConfig
from trainables.releaser.mechanism import Releaser
from trainables.tune_loop import epochs, write_checkpoint

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
    baselines = Releaser.raw_baselines(config)
    assert "baseline/attack/deep_raw/accuracy" in baselines and "baseline/attack/thickness/accuracy" not in baselines


@pytest.mark.parametrize("name, message", [("celebx", "unknown data set 'celebx'"),
                                           ("adult", "not an image data set with class labels")])
def test_a_data_set_the_mechanism_cannot_use_is_one_line(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        Releaser.data_counts({**TINY, "dataset": name})
    assert "\n" not in str(caught.value)
    assert get_dataset("cifar10").input_shape == (3, 32, 32)
